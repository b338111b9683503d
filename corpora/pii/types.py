"""The PII types this package detects, per language. A light module: recipe validation and the replace stage
need the names without importing presidio (whose import pulls in transformers, seconds per process)."""

from __future__ import annotations

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

# language -> (types detected by default, types detected only when named in `optional_types`)
TYPES_BY_LANGUAGE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ko": (ALL_TYPES, OPTIONAL_TYPES),
    "ja": (JA_TYPES, ()),
}
# Every type some language can emit: what the replace stage (language-blind) accepts in `types`.
KNOWN_TYPES = ALL_TYPES + OPTIONAL_TYPES + tuple(
    t for default, optional in TYPES_BY_LANGUAGE.values() for t in default + optional
    if t not in ALL_TYPES + OPTIONAL_TYPES)


def language_types(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(default types, optional types) of `language`; a ValueError naming the languages that have PII packs."""
    try:
        return TYPES_BY_LANGUAGE[language]
    except KeyError:
        raise ValueError(f"no PII recognizers for language {language!r}; languages with a PII pack: "
                         f"{', '.join(TYPES_BY_LANGUAGE)}") from None


def default_types(language: str = "ko") -> tuple[str, ...]:
    return language_types(language)[0]


def known_types(language: str = "ko") -> tuple[str, ...]:
    """The types `language`'s recognizers can emit (default and optional)."""
    default, optional = language_types(language)
    return default + optional
