"""The offline Korean PII analyzer: presidio's AnalyzerEngine with no NLP model, and a faster detector that
runs the very same recognizers.

`build_analyzer` wires presidio fully offline: a `NoOpNlpEngine` (no spaCy model, nothing downloaded), a
registry holding only the Korean recognizers, and `KoreanContextEnhancer` (context words by substring, since
there are no lemmas). It is the reference implementation and the benchmark baseline.

`PiiDetector.detect` gives the same findings faster: a pattern is run only where it can start (near digits for
number patterns, near administrative-unit words for addresses, and only when '@' / '://' / ':' occur for
e-mail / URL / IPv6), on patterns compiled once; and it enforces a per-document time limit (regex timeouts and
checks between recognizers) so pathological input raises `DocTimeout` instead of hanging.
"""

from __future__ import annotations

import re
import time
from functools import cached_property

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerRegistry, RecognizerResult
from presidio_analyzer.nlp_engine import NoOpNlpEngine

from corpora.pii.context import KoreanContextEnhancer
from corpora.pii.names import MecabPersonRecognizer
from corpora.pii.recognizers import LANG, SIDO, KoPatternRecognizer, build_pattern_recognizers
from corpora.pii.resolve import Span, resolve_overlaps
from corpora.pii.types import ALL_TYPES, STRUCTURED_TYPES  # noqa: F401  (STRUCTURED_TYPES re-exported)

DEFAULT_THRESHOLD = 0.4

# Where a number pattern can start: a run of digits and separators, widened by a few characters for a
# leading '(' / '+' / passport letters. Matches are at most MAX_MATCH characters long.
# stdlib `re` for the triggers: these simple scans run 4-5x faster there than in `regex`.
_DIGIT_RUN = re.compile(r"[0-9][0-9\-. ()+:]*")
_ADDR_TRIGGER = re.compile(rf"(?:[시군구]\s|{SIDO})")
_HANGUL = re.compile(r"[가-힣]")
_NO_DIGITS = str.maketrans("", "", "0123456789")
LEFT, RIGHT, MAX_MATCH = 3, 3, 96
WINDOW_COST = 200  # characters a full regex scan covers in the time one windowed finditer call costs
ADDR_LEFT, ADDR_MAX = 24, 160


class DocTimeout(Exception):
    """A document took longer than the per-document limit."""


def build_recognizers(types: list[str] | tuple[str, ...] | None = None) -> list[EntityRecognizer]:
    recs: list[EntityRecognizer] = [*build_pattern_recognizers(), MecabPersonRecognizer()]
    if types is not None:
        unknown = set(types) - set(ALL_TYPES)
        if unknown:
            raise ValueError(f"unknown PII types {sorted(unknown)}; known: {list(ALL_TYPES)}")
        recs = [r for r in recs if r.supported_entities[0] in types]
    return recs


def build_analyzer(recognizers: list[EntityRecognizer] | None = None,
                   threshold: float = DEFAULT_THRESHOLD) -> AnalyzerEngine:
    """A presidio AnalyzerEngine for Korean that loads no model and touches no network."""
    recognizers = recognizers if recognizers is not None else build_recognizers()
    registry = RecognizerRegistry(recognizers=list(recognizers), supported_languages=[LANG])
    nlp = NoOpNlpEngine(models=[{"lang_code": LANG, "model_name": "none"}])
    return AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[LANG],
                          context_aware_enhancer=KoreanContextEnhancer(), default_score_threshold=threshold)


def _merge(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in windows:
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def to_spans(results: list[RecognizerResult]) -> list[Span]:
    spans = [Span(r.start, r.end, r.entity_type, round(float(r.score), 4),
                  (r.recognition_metadata or {}).get(RecognizerResult.RECOGNIZER_NAME_KEY, ""))
             for r in results]
    return resolve_overlaps(spans)


class PiiDetector:
    """Detect Korean PII spans in a text. Build once per process (MeCab and compiled patterns are reused)."""

    def __init__(self, types: list[str] | tuple[str, ...] | None = None, threshold: float = DEFAULT_THRESHOLD,
                 doc_timeout_s: float | None = None):
        self.recognizers = build_recognizers(types)
        self.entities = sorted({r.supported_entities[0] for r in self.recognizers})
        self.threshold = threshold
        self.doc_timeout_s = doc_timeout_s
        self.enhancer = KoreanContextEnhancer()
        for r in self.recognizers:
            r.load()

    @cached_property
    def analyzer(self) -> AnalyzerEngine:
        """Presidio's engine over the same recognizer objects (reference and benchmark baseline)."""
        return build_analyzer(self.recognizers, self.threshold)

    # -- fast path -------------------------------------------------------------------------------------------
    def detect(self, text: str) -> list[Span]:
        deadline = None if self.doc_timeout_s is None else time.monotonic() + self.doc_timeout_s
        windows: dict[tuple[str, int], list[tuple[int, int]] | None] = {}
        runs: list[tuple[int, int, int]] = []  # digit runs (start, end, digits), filled on first use
        raw: list[RecognizerResult] = []
        for rec in self.recognizers:
            _check(deadline)
            if isinstance(rec, KoPatternRecognizer):
                trig = (rec.trigger, rec.min_run_digits)
                if trig not in windows:
                    windows[trig] = self._windows(rec.trigger, text, rec.min_run_digits, runs)
                w = windows[trig]
                if w:
                    raw.extend(self._scan(rec, text, w, deadline))
            elif _HANGUL.search(text):
                raw.extend(self._with_id(rec, rec.analyze(text, self.entities, None)))
        _check(deadline)
        res = self.enhancer.enhance_using_context(text, raw, None, self.recognizers)
        res = [r for r in res if r.score >= self.threshold]
        res = EntityRecognizer.remove_duplicates(res)
        return to_spans(res)

    def detect_presidio(self, texts: list[str]) -> list[list[Span]]:
        """The same detection through presidio's BatchAnalyzerEngine (slow path, for the benchmark/tests)."""
        from presidio_analyzer import BatchAnalyzerEngine

        batch = BatchAnalyzerEngine(analyzer_engine=self.analyzer)
        out = batch.analyze_iterator(texts, language=LANG, score_threshold=self.threshold)
        return [to_spans(list(r)) for r in out]

    @staticmethod
    def _with_id(rec: EntityRecognizer, results: list[RecognizerResult]) -> list[RecognizerResult]:
        for r in results:
            md = r.recognition_metadata if r.recognition_metadata is not None else {}
            md.setdefault(RecognizerResult.RECOGNIZER_NAME_KEY, rec.name)
            md.setdefault(RecognizerResult.RECOGNIZER_IDENTIFIER_KEY, rec.id)
            r.recognition_metadata = md
        return results

    @staticmethod
    def _windows(trigger: str, text: str, min_digits: int, runs: list) -> list[tuple[int, int]] | None:
        """Intervals where a match of a pattern with this trigger can START (None/[]: nowhere).

        For number patterns: around runs of digits and separators holding at least `min_digits` digits
        (a match starts in a run that holds at least that many of its digits; see `min_run_digits`)."""
        n = len(text)
        if trigger == "digit":
            if not runs:
                runs.extend((m.start(), m.end(), len(m.group()) - len(m.group().translate(_NO_DIGITS)))
                            for m in _DIGIT_RUN.finditer(text))
                if not runs:
                    runs.append((0, 0, 0))
            return _merge([(max(0, s - LEFT), min(n, e + RIGHT)) for s, e, k in runs if k >= min_digits])
        if trigger == "address":
            return _merge([(max(0, m.start() - ADDR_LEFT), min(n, m.end())) for m in _ADDR_TRIGGER.finditer(text)])
        whole = [(0, n)]
        if trigger == "@":
            return whole if "@" in text else None
        if trigger == "url":
            return whole if ("://" in text or "www." in text) else None
        if trigger == "colon":
            return whole if text.count(":") >= 2 else None
        return whole

    @staticmethod
    def _scan(rec: KoPatternRecognizer, text: str, windows: list[tuple[int, int]],
              deadline: float | None) -> list[RecognizerResult]:
        """Presidio's PatternRecognizer.analyze restricted to `windows`, with identical results."""
        n = len(text)
        results = []
        md = {RecognizerResult.RECOGNIZER_NAME_KEY: rec.name, RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: rec.id}
        limit = ADDR_MAX if rec.trigger == "address" else MAX_MATCH
        if len(windows) * WINDOW_COST > n:
            windows = [(0, n)]  # many small windows cost more in Python than one scan costs in C
        for pat in rec.patterns:
            rx = pat.compiled_regex
            last_end = 0
            for ws, we in windows:
                start = max(ws, last_end)
                if start >= we:
                    continue
                endpos = n if (we == n and ws == 0) else min(n, we + limit)
                timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
                entity = rec.supported_entities[0]
                try:
                    for m in rx.finditer(text, start, endpos, timeout=timeout):
                        if m.start() >= we:
                            break
                        if m.end() == m.start():
                            continue
                        last_end = m.end()
                        # one metadata dict shared by this recognizer's results: nothing mutates it in place
                        # (the context enhancer copies before it writes)
                        results.append(RecognizerResult(entity, m.start(), m.end(), pat.score,
                                                        recognition_metadata=md))
                except TimeoutError as e:
                    raise DocTimeout(f"pattern {rec.name}/{pat.name} exceeded the per-document time limit") from e
        results = EntityRecognizer.remove_duplicates(results)
        out = []
        for r in results:
            r.score = rec.rescore(text[r.start:r.end], r.score)
            if r.score > 0:
                out.append(r)
        return out


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise DocTimeout("document exceeded the per-document time limit")
