"""The PII types detected, per language: a view of the languages' `Language.pii` (`corpora.lang.LANGUAGES`;
each language states its types in its own folder, `corpora/lang/<code>/__init__.py`). A light module: recipe
validation and the replace stage need the names without importing presidio (whose import pulls in transformers,
seconds per process)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from corpora.lang import LANGUAGES
from corpora.lang.base import PackFacts
from corpora.lang.ko import PII_OPTIONAL_TYPES, PII_STRUCTURED_TYPES, PII_TYPES

# The Korean pack's lists under the names the callers written before the language folders use (the replace
# stage's fallback, the evaluation's tests); the lists themselves are corpora/lang/ko/__init__.py's.
ALL_TYPES = PII_TYPES
STRUCTURED_TYPES = PII_STRUCTURED_TYPES
OPTIONAL_TYPES = PII_OPTIONAL_TYPES


class _Packs(Mapping[str, PackFacts]):
    """language code -> the facts of its PII pack, for every registered language that has one (in registry order;
    iterating imports each language's `__init__`, which is light)."""

    def __getitem__(self, code: str) -> PackFacts:
        facts = LANGUAGES.get(code).pii if code in LANGUAGES else None
        if facts is None:
            raise KeyError(code)
        return facts

    def __iter__(self) -> Iterator[str]:
        return (code for code, lang in LANGUAGES.items() if lang.pii is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


PACKS: Mapping[str, PackFacts] = _Packs()
# Every type some language can emit: what the replace stage (language-blind) accepts in `types`.
KNOWN_TYPES = tuple(dict.fromkeys(t for p in PACKS.values() for t in p.types + p.optional))


def pack_facts(language: str) -> PackFacts:
    """The facts of `language`'s PII pack; a ValueError naming the languages that have one."""
    try:
        return PACKS[language]
    except KeyError:
        raise ValueError(f"no PII recognizers for language {language!r}; languages with a PII pack: "
                         f"{', '.join(PACKS)}") from None


def owner(type_: str, language: str) -> PackFacts:
    """The pack whose format `type_` has: `language`'s own, else the first pack that detects it (a
    MY_NUMBER in a Korean run is still a Japanese number)."""
    facts = pack_facts(language)
    if type_ in facts.types + facts.optional:
        return facts
    return next((p for p in PACKS.values() if type_ in p.types + p.optional), facts)


def language_types(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(default types, optional types) of `language`; a ValueError naming the languages that have PII packs."""
    facts = pack_facts(language)
    return facts.types, facts.optional


def default_types(language: str) -> tuple[str, ...]:
    return language_types(language)[0]


def known_types(language: str) -> tuple[str, ...]:
    """The types `language`'s recognizers can emit (default and optional)."""
    default, optional = language_types(language)
    return default + optional


def structured_types() -> tuple[str, ...]:
    """The structured identifiers of every language with a PII pack (the evaluation's `structured` row: each
    detector targets only its own language's, so each language's row is its own), in registry order."""
    return tuple(dict.fromkeys(t for p in PACKS.values() for t in p.structured))


__all__ = ["ALL_TYPES", "KNOWN_TYPES", "OPTIONAL_TYPES", "PACKS", "STRUCTURED_TYPES", "PackFacts", "default_types",
           "known_types", "language_types", "owner", "pack_facts", "structured_types"]
