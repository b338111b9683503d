"""What every language's PII pack shares: the pattern recognizer class, the language-neutral recognizers
(e-mail, URL, IPv4/IPv6, card numbers) and `PiiLanguage`, the record the detector reads a pack from.

Why shared: an e-mail address, a URL, an IP address or a card number is written the same way in Korean and in
Japanese text, so its pattern, its boundaries and its check (Luhn, address ranges) exist once; only the context
words that lift a weak match over the threshold, and the recognizer's name (`ko_email`, `ja_email`), are the
language's. Boundaries are `(?<![0-9])`/`(?![0-9])` rather than `\\b`: Hangul, kana and kanji are word
characters, so `\\b` fails inside `010-1234-5678로` or `03-1234-5678まで`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import regex
from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer

from corpora.pii import validators as v

FLAGS = regex.DOTALL | regex.MULTILINE

D = "[0-9]"
LB = r"(?<![0-9A-Za-z])(?<![0-9A-Za-z][-.])"  # not inside a longer number / alphanumeric code
LA = r"(?![0-9])(?![-.][0-9])"

# Score bands: >= 0.85 shape is near-unique; ~0.5 likely; <= 0.35 needs context (threshold 0.4 by default).
SURE, LIKELY, WEAK = 0.85, 0.5, 0.3

EMAIL_RX = (r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]{1,63}"
            r"(?:\.[A-Za-z0-9-]{1,63}){0,5}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])")
URL_RX = (r"(?<![A-Za-z0-9])(?:(?:https?|ftp)://|www\.)[A-Za-z0-9\-._~:/?#@!$&'*+,;=%]{2,2000}"
          r"(?<![.,;:!?'])")
IPV4_RX = r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9])(?!\.[0-9])"
IPV6_RX = (r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|"
           r"[0-9A-Fa-f]{1,4})(?![0-9A-Fa-f:])")
# ISO/IEC 7812 card numbers: 16 digits in groups of four (Visa, Mastercard, JCB, ...) or American Express's 4-6-5.
CARD16_RX = LB + rf"{D}{{4}}[- ]?{D}{{4}}[- ]?{D}{{4}}[- ]?{D}{{4}}" + LA
AMEX_RX = LB + rf"3[47]{D}{{2}}[- ]?{D}{{6}}[- ]?{D}{{5}}" + LA


class PiiPatternRecognizer(PatternRecognizer):
    """A presidio PatternRecognizer plus a `rescore` hook (checksums) and a `trigger` for the fast scanner.

    Presidio's validate_result can only keep (score 1.0) or discard; identifiers need a third outcome, "shape is
    right, checksum is not: keep with a low score", hence `rescore`. `fold`, when given, maps the text to one of
    the same length before matching (the Japanese pack folds full-width digits: `engine.PiiDetector` folds once
    per document, and this keeps presidio's own engine, which calls `analyze` on the raw text, equal to it).
    """

    def __init__(self, entity: str, name: str, patterns: list[Pattern], context: list[str],
                 trigger: str = "digit", rescore: Callable[[str], float] | None = None,
                 context_after: bool = False, negative_context: tuple[str, ...] = (),
                 context_window: int | None = None, min_run_digits: int = 1, lead_chars: int = 3,
                 negative_context_after: bool = False, *, language: str,
                 fold: Callable[[str], str] | None = None, trigger_pattern: re.Pattern[str] | None = None,
                 starts: re.Pattern[str] | None = None):
        super().__init__(supported_entity=entity, name=name, supported_language=language, patterns=patterns,
                         context=context, global_regex_flags=FLAGS)
        self.trigger = trigger
        self._rescore = rescore
        self.context_after = context_after
        self.negative_context = negative_context  # words on the same line before the match that demote it
        self.context_window = context_window  # characters before the match searched for context words
        # Fewest digits any match has in the run of digits/separators ([0-9 .()+:-]) where it starts: lets
        # the fast scanner skip years and counts. Must hold for every pattern (the benchmark checks findings).
        self.min_run_digits = min_run_digits
        # Characters a match may start before its digit run (a region name: `경기북부 12-…`); the fast scanner
        # widens its windows by this much.
        self.lead_chars = lead_chars
        self.fold = fold
        # For the triggers `label` (a value after its label, on its line or the next) and `label_table` (a label
        # heading a table column): the label, so that the fast scanner looks only after one, or only in a text
        # that has a table and one.
        self.trigger_pattern = trigger_pattern
        # Where a match of any of its patterns can start, when that is much rarer than "anywhere" (a Hangul word's
        # first syllable, for Korean addresses): the fast scanner then tries each pattern only there, instead of
        # letting sre try every position of a window and of the match-length tail after it.
        self.starts = starts
        for p in self.patterns:  # compile once, with the flags presidio will use
            p.compiled_regex = regex.compile(p.regex, flags=FLAGS)
            p.compiled_with_flags = FLAGS

    def rescore(self, matched: str, score: float) -> float:
        if self._rescore is None:
            return score
        s = self._rescore(matched)
        return score if s < 0 else s

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):  # noqa: D102
        if self.fold is not None:
            text = self.fold(text)
        out = []
        for r in super().analyze(text, entities, nlp_artifacts, regex_flags):
            r.score = self.rescore(text[r.start:r.end], r.score)
            if r.score > 0:
                out.append(r)
        return out


def pattern(name: str, rx: str, score: float) -> Pattern:
    return Pattern(name=name, regex=rx, score=score)


def _ip4(t: str) -> float:
    return -1.0 if v.ipv4_ok(t) else 0.0


def _ip6(t: str) -> float:
    return -1.0 if v.ipv6_ok(t) else 0.0


def _card(t: str) -> float:
    return 0.0 if v.placeholder_digits(t) else (1.0 if v.luhn_ok(t) else WEAK)


def card_recognizer(language: str, context: list[str],
                    fold: Callable[[str], str] | None = None) -> PiiPatternRecognizer:
    """CARD: 16 digits (or Amex's 15) with a Luhn check (1.0; a failed check keeps the match at WEAK, so a
    context word such as カード or 카드 still carries it)."""
    return PiiPatternRecognizer("CARD", f"{language}_card", [
        pattern("card16", CARD16_RX, 0.6),
        pattern("amex", AMEX_RX, 0.6),
    ], context, rescore=_card, min_run_digits=15, language=language, fold=fold)


def email_recognizer(language: str, context: list[str],
                     fold: Callable[[str], str] | None = None) -> PiiPatternRecognizer:
    return PiiPatternRecognizer("EMAIL", f"{language}_email", [pattern("email", EMAIL_RX, 1.0)], context,
                                trigger="@", language=language, fold=fold)


def url_recognizer(language: str, context: list[str],
                   fold: Callable[[str], str] | None = None) -> PiiPatternRecognizer:
    return PiiPatternRecognizer("URL", f"{language}_url", [pattern("url", URL_RX, 0.6)], context, trigger="url",
                                language=language, fold=fold)


def ip_recognizers(language: str, context: list[str], context_v6: list[str],
                   fold: Callable[[str], str] | None = None) -> list[PiiPatternRecognizer]:
    """IPv4 (dotted quad, each part 0-255 without a leading zero) and IPv6 (what `ipaddress` accepts)."""
    return [
        PiiPatternRecognizer("IP", f"{language}_ip", [pattern("ipv4", IPV4_RX, 0.6)], context, rescore=_ip4,
                             min_run_digits=4, language=language, fold=fold),
        PiiPatternRecognizer("IP", f"{language}_ipv6", [pattern("ipv6", IPV6_RX, 0.6)], context_v6,
                             trigger="colon", rescore=_ip6, language=language, fold=fold),
    ]


@dataclass(frozen=True)
class PiiLanguage:
    """One language's PII pack, as the detector (`engine.PiiDetector`) reads it.

    - `build_recognizers`: every recognizer of the language, in a fixed order (the order only matters for
      ties; see resolve.py); `engine.build_recognizers` keeps the requested types.
    - `address_trigger`: where an address can be near (the fast path scans address patterns only within
      `engine.ADDR_LEFT` characters before a match of it).
    - `script`: recognizers that are not patterns (the MeCab name finders) run only on a text it matches.
    - `fold`: a same-length rewrite applied to each text before detection (None: the text as given), so that
      offsets into the folded text are offsets into the original.
    - `stdlib_patterns`: names of recognizers whose patterns the fast path may run on stdlib `re`.
    """

    code: str
    build_recognizers: Callable[[], Sequence[EntityRecognizer]]
    address_trigger: re.Pattern[str]
    script: re.Pattern[str]
    fold: Callable[[str], str] | None = None
    stdlib_patterns: frozenset[str] = field(default_factory=frozenset)
