"""The languages: one folder each (`corpora/lang/<code>/`), one registry entry each (`LANGUAGES`).

A language's folder holds everything that differs by language: its `Language` (`__init__.py`: normalization,
script test, words, sentences, boilerplate, filter thresholds, morphemes, the model card's example, the name of
its evaluation suite), its PII pack (`pii/`: recognizers; `Language.pii`, a `PackFacts`, names it and states its
light facts) and its surrogates. Korean (`ko/`) and Japanese (`ja/`) are the two; docs/new-language.md lists
the pieces. Nothing below the recipe assumes a language: every function takes the one it runs.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from corpora.lang.base import Language, PackFacts
from pipeline.registry import Registry, RegistryError


def _check(code: str, lang: Language) -> None:
    if not isinstance(lang, Language) or lang.code != code:
        raise RegistryError(f"language {code!r} is registered as {lang!r}, a Language whose code is not {code!r}")


# code -> "module:attr" of its `Language`, imported on first use (listing the codes imports no language)
LANGUAGES: Registry[Language] = Registry("language", {"ko": "corpora.lang.ko:KOREAN",
                                                     "ja": "corpora.lang.ja:JAPANESE"}, check=_check)


def get_language(code: str) -> Language:
    """The `Language` for an ISO 639-1 code; a `RegistryError` (a ValueError) for one that has no folder yet."""
    return LANGUAGES.get(code)


def known_language(code: str) -> str:
    """`code` itself when a language folder has it; a `RegistryError` (a ValueError) naming the known ones."""
    LANGUAGES.get(code)
    return code


# The type of every stage's `language` param (the recipe's top-level `language:` fills it in): validated once, here.
LanguageCode = Annotated[str, AfterValidator(known_language)]

__all__ = ["LANGUAGES", "Language", "LanguageCode", "PackFacts", "get_language", "known_language"]
