"""The Korean PII pack: the recognizers of `patterns.py` and `names.py` (MeCab, mecab-ko-dic),
wired for the detector. The Korean rules themselves live in those two modules (their history and tests);
this module is what `Language.pii.pack` of `corpora.lang.ko` names."""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer

from corpora.lang.ko.pii.names import MecabPersonRecognizer
from corpora.lang.ko.pii.patterns import LANG, SIDO_NAMES, SIDO_SUFFIX, build_pattern_recognizers
from corpora.pii.common import PiiLanguage

# An address pattern starts at most a few words before a 시·군·구 word or a 시·도 name: `(?:[시군구]\s|SIDO)`,
# written as alternatives that each open with a literal, so that sre scans for their first characters in C
# rather than trying the alternation at every position (3-4x faster; the same matches).
ADDR_TRIGGER = re.compile("|".join([*(rf"{c}\s" for c in "시군구"), *(name + SIDO_SUFFIX for name in SIDO_NAMES)]))
HANGUL = re.compile(r"[가-힣]")


def build_recognizers() -> list[EntityRecognizer]:
    """Every Korean recognizer, in the order ties are resolved by (patterns first, then names)."""
    return [*build_pattern_recognizers(), MecabPersonRecognizer()]


KOREAN = PiiLanguage(code=LANG, build_recognizers=build_recognizers, address_trigger=ADDR_TRIGGER, script=HANGUL,
                     stdlib_patterns=frozenset({"ko_address", "ko_vehicle"}))
