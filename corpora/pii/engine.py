"""The offline PII analyzer: presidio's AnalyzerEngine with no NLP model, and a faster detector that runs the
very same recognizers, for each language that has a PII pack (`Language.pii`: Korean, Japanese).

`build_analyzer` wires presidio fully offline: a `NoOpNlpEngine` (no spaCy model, nothing downloaded), a
registry holding only the language's recognizers, and `KoreanContextEnhancer` (context words by substring,
since there are no lemmas; Japanese, which writes no spaces between words either, uses it as it is). It is the
reference implementation and the benchmark baseline.

A language's pack is a `common.PiiLanguage` in its folder (`corpora.lang.ko.pii`, `corpora.lang.ja.pii`), named
with its light facts (types, locale, key packages) by its `Language.pii`; nothing else here is language-specific.

`PiiDetector.detect` gives the same findings faster: a pattern is run only where it can start (near digits for
number patterns, near administrative-unit words for addresses, and only when '@' / '://' / ':' occur for
e-mail / URL / IPv6; within those windows, only at a recognizer's `starts` where it names them), on patterns
compiled once; number recognizers needing more digits than the longest digit
run of a text are skipped outright; results are plain tuples rather than RecognizerResults (presidio's
de-duplication and our context rule are applied to them step for step, in the same order); and the address and
plate patterns run on stdlib `re` where that is faster. It enforces a per-document time limit (regex timeouts on
long texts and checks between recognizers) so pathological input raises `DocTimeout` instead of hanging.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from functools import cached_property

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerRegistry, RecognizerResult
from presidio_analyzer.nlp_engine import NoOpNlpEngine

from corpora.pii.common import PiiLanguage, PiiPatternRecognizer
from corpora.pii.context import KoreanContextEnhancer
from corpora.pii.resolve import Span, resolve_overlaps
from corpora.pii.types import (  # noqa: F401  (ALL_TYPES, KNOWN_TYPES, STRUCTURED_TYPES: re-exported)
    ALL_TYPES,
    KNOWN_TYPES,
    STRUCTURED_TYPES,
    known_types,
    language_types,
    pack_facts,
)
from pipeline.registry import RegistryError, import_target

DEFAULT_THRESHOLD = 0.4

# Where a number pattern can start: a run of digits and separators, widened by a few characters for a
# leading '(' / '+' / passport letters. Matches are at most MAX_MATCH characters long.
# stdlib `re` for the triggers: these simple scans run 4-5x faster there than in `regex`.
_DIGIT_RUN = re.compile("[0-9][0-9\\-\u2010-\u2013\u2212. ()+:]*")  # hyphens and dashes: see recognizers.HY
_NO_DIGITS = str.maketrans("", "", "0123456789")
LEFT, RIGHT, MAX_MATCH = 3, 3, 96
WINDOW_COST = 200  # characters a full regex scan covers in the time one windowed finditer call costs
ADDR_LEFT, ADDR_MAX = 24, 160
# A label-anchored value starts at most this many characters after its label's trigger match ends: the gap to the
# value (a colon, spaces, a particle, a table cell boundary: <= 44), a longer form of the label than the trigger
# matched (`계좌` of `계좌 : 하나은행`), or the line break of a form field.
LABEL_REACH = 80
# Triggers whose matches lie in one run of digits and separators (so `min_run_digits` holds): a text whose longest
# run is shorter skips them without a scan.
DIGIT_BOUND = frozenset({"digit", "label", "label_table"})


class DocTimeout(Exception):
    """A document took longer than the per-document limit."""


_packs: dict[str, PiiLanguage] = {}  # language code -> its PII pack, imported on first use


def pii_language(language: str) -> PiiLanguage:
    """The PII pack of `language` (`Language.pii.pack`, imported on first use: the Japanese one needs the `ja`
    extra, unidic-lite); a ValueError naming the languages that have one."""
    pack = _packs.get(language)
    if pack is None:
        target = pack_facts(language).pack  # the error message that lists the languages with a pack
        try:
            pack = import_target(target)
        except (ImportError, AttributeError) as e:
            raise RegistryError(f"the PII pack of language {language!r} is declared as {target} but cannot be "
                                f"imported: {type(e).__name__}: {e}") from None
        if not isinstance(pack, PiiLanguage) or pack.code != language:
            raise RegistryError(f"{target} is not the PiiLanguage of language {language!r}")
        _packs[language] = pack
    return pack


def build_recognizers(types: list[str] | tuple[str, ...] | None = None, *,
                      language: str) -> list[EntityRecognizer]:
    """The recognizers of `types` for `language` (default: the language's default types; its optional types
    only when named)."""
    default, _ = language_types(language)
    if types is None:
        types = default
    known = known_types(language)
    unknown = set(types) - set(known)
    if unknown:
        raise ValueError(f"unknown PII types {sorted(unknown)} for language {language!r}; known: {list(known)}")
    recs = list(pii_language(language).build_recognizers())
    return [r for r in recs if r.supported_entities[0] in types]


def build_analyzer(recognizers: list[EntityRecognizer] | None = None,
                   threshold: float = DEFAULT_THRESHOLD, *, language: str) -> AnalyzerEngine:
    """A presidio AnalyzerEngine for `language` that loads no model and touches no network. It analyzes the
    text as given: for Japanese, its pattern recognizers fold full-width digits themselves, but context words
    are looked up in the raw text (`PiiDetector` folds first, so its context sees ＴＥＬ as TEL)."""
    recognizers = recognizers if recognizers is not None else build_recognizers(language=language)
    registry = RecognizerRegistry(recognizers=list(recognizers), supported_languages=[language])
    nlp = NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    return AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[language],
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


# `re` runs the address and plate patterns ~4x faster than `regex` (the digit patterns are faster in `regex`);
# `re` has no timeout, so it is used only on spans short enough that a bounded pattern cannot run long.
# Which recognizers: each pack's `stdlib_patterns` (Korean: ko_address, ko_vehicle).
RE_MAX_CHARS = 20_000
# `regex` reads \s as Unicode White_Space, `re` as str.isspace() (which adds \x1c-\x1f): spell out regex's set.
_REGEX_SPACE = "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
NO_TIMEOUT_CHARS = 5_000  # below this, bounded patterns finish in microseconds: skip the timeout bookkeeping


def _stdlib_copy(rx: str) -> re.Pattern | None:
    """`rx` compiled by `re` with `regex`'s meaning of \\s, or None where that rewrite would not be exact."""
    if "\\\\" in rx:
        return None  # an escaped backslash: a plain text replace of \\s would not be exact
    in_class = escaped = False
    for i, c in enumerate(rx):
        if escaped:
            escaped = False
            if c == "s" and in_class:
                return None  # \s inside [...]: the substitution below would nest a class
            continue
        if c == "\\":
            escaped = True
        elif c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class and rx[i - 1] != "[":
            in_class = False
    try:
        return re.compile(rx.replace(r"\s", _REGEX_SPACE), re.DOTALL | re.MULTILINE)
    except re.error:
        return None  # a construct only `regex` knows (e.g. variable-width look-behind)


class _Plan:
    """What the fast path needs of one pattern recognizer, looked up once instead of per document."""

    __slots__ = ("idx", "name", "entity", "trigger", "trigger_rx", "min_digits", "lead", "patterns", "limit",
                 "rescore", "starts")

    def __init__(self, rec: PiiPatternRecognizer, idx: int, stdlib_patterns: frozenset[str]):
        self.idx, self.name = idx, rec.name
        self.entity = rec.supported_entities[0]
        self.trigger, self.min_digits, self.lead = rec.trigger, rec.min_run_digits, max(LEFT, rec.lead_chars)
        self.trigger_rx = rec.trigger_pattern
        self.limit = ADDR_MAX if rec.trigger == "address" else MAX_MATCH
        self.rescore = rec.rescore
        self.starts = rec.starts
        self.patterns = [(p.compiled_regex, _stdlib_copy(p.regex) if rec.name in stdlib_patterns else None,
                          p.score, p.name) for p in rec.patterns]


def _dedup(results: list[tuple]) -> list[tuple]:
    """presidio's `EntityRecognizer.remove_duplicates` on (entity, start, end, score, recognizer index, enhanced)
    tuples, in the same output order (so ties downstream resolve the same way).

    Written out because building RecognizerResults and their hashes cost more than the rest of the fast path on
    PII-dense text; tests compare it with presidio's on random inputs."""
    if len(results) < 2:
        return [r for r in results if r[3] != 0]
    first: dict[tuple, tuple] = {}
    for r in results:  # set() semantics: equal = same (entity, start, end, score); the first one stays
        first.setdefault(r[:4], r)
    items = sorted(first.values(), key=lambda x: (x[0], x[1], x[1] - x[2], -x[3]))
    out: list[tuple] = []
    active: list[tuple] = []
    entity = None
    for r in items:
        if r[0] != entity:
            entity, active = r[0], []
        if r[3] == 0:
            continue
        active = [f for f in active if f[2] >= r[1]]
        if any(r[1] >= f[1] and r[2] <= f[2] and r[3] <= f[3] for f in active):
            continue
        out.append(r)
        active.append(r)
    out.sort(key=lambda x: (-x[3], x[1], x[1] - x[2]))
    return out


class PiiDetector:
    """Detect PII spans of one language in a text. Build once per process (MeCab and compiled patterns are
    reused)."""

    def __init__(self, types: list[str] | tuple[str, ...] | None = None, threshold: float = DEFAULT_THRESHOLD,
                 doc_timeout_s: float | None = None, *, language: str):
        self.language = language
        self.pack = pii_language(language)
        self.recognizers = build_recognizers(types, language=language)
        self.entities = sorted({r.supported_entities[0] for r in self.recognizers})
        self.threshold = threshold
        self.doc_timeout_s = doc_timeout_s
        self.enhancer = KoreanContextEnhancer()
        for r in self.recognizers:
            r.load()
        plans = [_Plan(r, i, self.pack.stdlib_patterns) if isinstance(r, PiiPatternRecognizer) else r
                 for i, r in enumerate(self.recognizers)]
        # the recognizers worth trying on a text whose longest digit run holds d digits (d capped at the largest min_run_digits),
        # in recognizer order: number patterns that need more digits are skipped without a per-document test
        top = max((p.min_digits for p in plans if isinstance(p, _Plan) and p.trigger in DIGIT_BOUND), default=0)
        self._plans_by_digits = [[p for p in plans if not (isinstance(p, _Plan) and p.trigger in DIGIT_BOUND
                                                           and p.min_digits > d)] for d in range(top + 1)]
        self._names = [r.name for r in self.recognizers]
        self._index = {r.name: i for i, r in enumerate(self.recognizers)}

    @cached_property
    def analyzer(self) -> AnalyzerEngine:
        """Presidio's engine over the same recognizer objects (reference and benchmark baseline)."""
        return build_analyzer(self.recognizers, self.threshold, language=self.language)

    # -- fast path -------------------------------------------------------------------------------------------
    def detect(self, text: str) -> list[Span]:
        """presidio's AnalyzerEngine.analyze + to_spans, step for step, on plain tuples
        (entity, start, end, score, recognizer index, enhanced by context). Offsets are into `text` (a pack's
        `fold` keeps every character's position)."""
        deadline = None if self.doc_timeout_s is None else time.monotonic() + self.doc_timeout_s
        if self.pack.fold is not None:
            text = self.pack.fold(text)
        n = len(text)
        windows: dict[tuple[str, int, int], list[tuple[int, int]] | None] = {}
        # digit runs (start, end, digits)
        runs = [(m.start(), m.end(), len(g) - len(g.translate(_NO_DIGITS)))
                for m in _DIGIT_RUN.finditer(text) for g in (m.group(),)]
        max_digits = max((k for _, _, k in runs), default=0)
        plans = self._plans_by_digits[min(max_digits, len(self._plans_by_digits) - 1)]
        raw: list[tuple] = []
        for plan in plans:
            _check(deadline)
            if isinstance(plan, _Plan):
                trig = plan.trigger
                if trig == "digit":
                    if n < WINDOW_COST:
                        w = [(0, n)]  # one window or more: _scan would scan the whole text anyway
                    else:
                        # around runs of digits and separators holding at least `min_digits` digits (a match
                        # starts in a run holding that many of its digits; see `min_run_digits`)
                        key = (trig, plan.min_digits, plan.lead)
                        if key not in windows:
                            windows[key] = _merge([(max(0, s - plan.lead), min(n, e + RIGHT))
                                                   for s, e, k in runs if k >= plan.min_digits])
                        w = windows[key] or []
                elif plan.trigger_rx is not None:  # label, label_table: this recognizer's own label
                    w = _label_windows(trig, plan.trigger_rx, text) or []
                else:
                    key = (trig, 0, 0)
                    if key not in windows:
                        windows[key] = self._windows(trig, text)
                    w = windows[key] or []
                if w:
                    raw.extend(self._scan(plan, text, w, deadline))
            elif self.pack.script.search(text):
                i = self._index[plan.name]
                raw.extend((r.entity_type, r.start, r.end, r.score, i,
                            bool((r.recognition_metadata or {}).get(RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY)))
                           for r in plan.analyze(text, self.entities, None))
        _check(deadline)
        if not raw:
            return []
        effect = self.enhancer.context_effect
        recs = self.recognizers
        kept = []
        threshold = self.threshold
        for r in raw:
            kind, score, _ = effect(text, r[1], r[2], r[3], recs[r[4]], r[5])
            if kind == "positive":
                r = (r[0], r[1], r[2], score, r[4], True)
            elif kind == "negative":
                r = (r[0], r[1], r[2], score, r[4], r[5])
            if r[3] >= threshold:
                kept.append(r)
        names = self._names
        return resolve_overlaps([Span(r[1], r[2], r[0], round(float(r[3]), 4), names[r[4]]) for r in _dedup(kept)])

    def detect_presidio(self, texts: list[str]) -> list[list[Span]]:
        """The same detection through presidio's BatchAnalyzerEngine (slow path, for the benchmark/tests)."""
        from presidio_analyzer import BatchAnalyzerEngine

        batch = BatchAnalyzerEngine(analyzer_engine=self.analyzer)
        fold = self.pack.fold
        if fold is not None:  # as `detect` does, so that context words are looked up in the same text
            texts = [fold(t) for t in texts]
        out = batch.analyze_iterator(texts, language=self.language, score_threshold=self.threshold)
        return [to_spans(list(r)) for r in out]

    def _windows(self, trigger: str, text: str) -> list[tuple[int, int]] | None:
        """Intervals where a match of a pattern with this (non-digit) trigger can START (None/[]: nowhere)."""
        n = len(text)
        if trigger == "address":
            return _merge([(max(0, m.start() - ADDR_LEFT), min(n, m.end()))
                           for m in self.pack.address_trigger.finditer(text)])
        whole = [(0, n)]
        if trigger == "@":
            return whole if "@" in text else None
        if trigger == "url":
            return whole if ("://" in text or "www." in text) else None
        if trigger == "colon":
            return whole if text.count(":") >= 2 else None
        return whole

    @staticmethod
    def _scan(plan: _Plan, text: str, windows: list[tuple[int, int]], deadline: float | None) -> list[tuple]:
        """Presidio's PatternRecognizer.analyze (then `rescore`) restricted to `windows`, with identical results."""
        n = len(text)
        results = []
        limit = plan.limit
        if len(windows) * WINDOW_COST > n:
            windows = [(0, n)]  # many small windows cost more in Python than one scan costs in C
        entity, idx = plan.entity, plan.idx
        timed = deadline is not None and n > NO_TIMEOUT_CHARS
        starts = plan.starts
        for rx, rx_std, score, pname in plan.patterns:
            last_end = 0
            for ws, we in windows:
                start = max(ws, last_end)
                if start >= we:
                    continue
                endpos = n if (we == n and ws == 0) else min(n, we + limit)
                try:
                    if rx_std is not None and endpos - start <= RE_MAX_CHARS:
                        it = (rx_std.finditer(text, start, endpos) if starts is None
                              else _matches_at(rx_std, starts, text, start, we, endpos))
                    elif timed and deadline is not None:
                        it = rx.finditer(text, start, endpos, timeout=max(0.001, deadline - time.monotonic()))
                    else:
                        it = rx.finditer(text, start, endpos)
                    for m in it:
                        s, e = m.span()
                        if s >= we:
                            break
                        if e == s:
                            continue
                        last_end = e
                        results.append((entity, s, e, score, idx, False))
                except TimeoutError as err:
                    raise DocTimeout(f"pattern {plan.name}/{pname} exceeded the per-document time limit") from err
        if not results:
            return results
        out = []
        rescore = plan.rescore
        for r in _dedup(results):
            sc = rescore(text[r[1]:r[2]], r[3])
            if sc > 0:
                out.append(r if sc == r[3] else (entity, r[1], r[2], sc, idx, False))
        return out


def _matches_at(rx: re.Pattern[str], starts: re.Pattern[str], text: str, start: int, stop: int,
                endpos: int) -> Iterator[re.Match[str]]:
    """What `rx.finditer(text, start, endpos)` yields before `stop`, when `rx` can only match where `starts`
    does: `rx.match` at each such position, from the end of the last match on. sre would otherwise try `rx` at
    every position up to `endpos`, the window's match-length tail included."""
    end = start
    for s in starts.finditer(text, start, stop):
        p = s.start()
        if p < end:
            continue
        m = rx.match(text, p, endpos)
        if m is not None and m.end() > p:
            yield m
            end = m.end()


def _label_windows(trigger: str, label: re.Pattern[str], text: str) -> list[tuple[int, int]] | None:
    """Where a label-anchored match can START: within LABEL_REACH characters after one of its labels (`label`),
    or anywhere in a text holding a table cell and one of its labels (`label_table`: the label heads a column)."""
    if trigger == "label_table":
        return [(0, len(text))] if "<td" in text and label.search(text) else None
    return _merge([(m.start(), min(len(text), m.end() + LABEL_REACH)) for m in label.finditer(text)])


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise DocTimeout("document exceeded the per-document time limit")
