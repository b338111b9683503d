"""The PII types this package detects, per language. A light module: recipe validation and the replace stage
need the names without importing presidio (whose import pulls in transformers, seconds per process)."""

from __future__ import annotations

from dataclasses import dataclass

ALL_TYPES = ("PERSON", "PHONE", "FAX", "RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT",
             "CARD", "ACCOUNT", "MEDICAL_INSURANCE", "VEHICLE", "EMAIL", "URL", "IP", "ADDRESS")
STRUCTURED_TYPES = ("PHONE", "FAX", "RRN", "FRN", "EMAIL", "URL", "IP", "CARD", "ACCOUNT", "PASSPORT",
                    "DRIVER_LICENSE", "BUSINESS_REG", "CORP_REG")
# Off by default (an ablation may want them; `pii_detect: {optional_types: [...]}`): 5-digit postal codes in an
# address context, dates of birth (labelled, or followed by 생), ages (`34세`, `만 18세 이상`, `60대 후반`).
# The names are the shared evaluation file's labels.
OPTIONAL_TYPES = ("POSTAL_CODE", "DT_BIRTH", "AGE")

# Japanese (corpora/pii/ja): the types shared with Korean where the thing is the same (a phone number, an
# address, a name), and two of its own: MY_NUMBER (個人番号, 12 digits with a check digit; it encodes nothing,
# unlike a resident registration number, and the law gives it its own category, 特定個人情報) and
# CORPORATE_NUMBER (法人番号, 13 digits, the tax agency's number of a legal entity, and 会社法人等番号, the
# commercial registry's 12 digits). Postal codes are on by default here: seven digits name a block of streets
# (a Korean postal code names a district), and `〒` marks them unambiguously.
JA_TYPES = ("PERSON", "PHONE", "FAX", "MY_NUMBER", "CORPORATE_NUMBER", "POSTAL_CODE", "CARD", "EMAIL", "URL", "IP",
            "ADDRESS")
# The structured identifiers of the evaluation's `structured` row (postal codes are left out, as in Korean).
JA_STRUCTURED_TYPES = ("PHONE", "FAX", "MY_NUMBER", "CORPORATE_NUMBER", "CARD", "EMAIL", "URL", "IP")


@dataclass(frozen=True)
class PackFacts:
    """What the light parts of the pipeline (recipe validation, the replace stage, stage keys, the CLI) need of a
    language's PII pack without importing it (a pack imports presidio). The pack itself (`engine.PII_LANGUAGES`)
    holds the recognizers; everything else that differs by language is here, so no module outside the packs
    branches on a language code.

    - `types`, `optional`: what the pack detects by default, and only when named in `optional_types`.
    - `faker_locale`: Faker's locale for the surrogates of names, e-mails and addresses.
    - `surrogates`: "module:function" of the pack's own surrogates for the types whose format or grammar is its
      own (`(type, original, rng, faker, after) -> str | None`, `after` the text right after the span; None: the
      shared rules of `surrogates.py`).
    - `key_packages`: the distributions whose versions are part of the `pii_detect` stage's key (data the pack
      reads at run time: a MeCab dictionary, python-stdnum's checks).
    - `presidio_region`, `presidio_recognizers`: for the baseline of presidio's shipped recognizers, the phone
      region its PhoneRecognizer must be given and the country-specific recognizer classes it ships.
    """

    types: tuple[str, ...]
    faker_locale: str
    presidio_region: str
    optional: tuple[str, ...] = ()
    surrogates: str | None = None
    key_packages: tuple[str, ...] = ()
    presidio_recognizers: tuple[str, ...] = ()


PACKS: dict[str, PackFacts] = {
    "ko": PackFacts(ALL_TYPES, "ko_KR", "KR", optional=OPTIONAL_TYPES,
                    surrogates="corpora.pii.ko_surrogates:surrogate",  # names fit the particle after them
                    presidio_recognizers=("KrRrnRecognizer", "KrFrnRecognizer", "KrBrnRecognizer",
                                          "KrDriverLicenseRecognizer", "KrPassportRecognizer")),
    "ja": PackFacts(JA_TYPES, "ja_JP", "JP", surrogates="corpora.pii.ja.surrogates:surrogate",
                    key_packages=("mecab-python3", "unidic-lite", "python-stdnum")),
}
# Every type some language can emit: what the replace stage (language-blind) accepts in `types`.
KNOWN_TYPES = ALL_TYPES + OPTIONAL_TYPES + tuple(
    t for p in PACKS.values() for t in p.types + p.optional if t not in ALL_TYPES + OPTIONAL_TYPES)


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


def default_types(language: str = "ko") -> tuple[str, ...]:
    return language_types(language)[0]


def known_types(language: str = "ko") -> tuple[str, ...]:
    """The types `language`'s recognizers can emit (default and optional)."""
    default, optional = language_types(language)
    return default + optional
