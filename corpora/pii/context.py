"""Context words for Korean, without a language model.

Presidio's default LemmaContextAwareEnhancer compares the lemmas of the words around a match with the
recognizer's context words; with no spaCy Korean model (and a blank pipeline leaves lemmas empty) that finds
nothing. Korean attaches particles to words (`계좌번호는`, `연락처:`), so a substring test on a window of
characters before the match (and, for recognizers that ask for it, after) is both simpler and more accurate
than any whitespace tokenization.
"""

from __future__ import annotations

import copy
import re

from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer

_MARKUP = re.compile(r"<[^<>\n]{0,80}>")
PREFIX_CHARS = 24
SUFFIX_CHARS = 12


class KoreanContextEnhancer(ContextAwareEnhancer):
    """Raise a match's score by `factor` (at least to `min_score`) when a context word occurs nearby."""

    def __init__(self, factor: float = 0.35, min_score: float = 0.45, prefix_chars: int = PREFIX_CHARS,
                 suffix_chars: int = SUFFIX_CHARS):
        super().__init__(context_similarity_factor=factor, min_score_with_context_similarity=min_score,
                         context_prefix_count=prefix_chars, context_suffix_count=suffix_chars)

    def enhance_using_context(self, text, raw_results, nlp_artifacts, recognizers, context=None):  # noqa: D102
        by_id = {r.id: r for r in recognizers}
        out = []
        for res in raw_results:
            md = res.recognition_metadata or {}
            rec = by_id.get(md.get(RecognizerResult.RECOGNIZER_IDENTIFIER_KEY))
            kind, score, word = self.context_effect(text, res.start, res.end, res.score, rec,
                                                    bool(md.get(RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY)),
                                                    context)
            if kind == "negative":
                res = copy.copy(res)
                res.score = score
            elif kind == "positive":
                res = copy.copy(res)
                res.recognition_metadata = dict(res.recognition_metadata)
                res.score = score
                res.recognition_metadata[RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY] = True
                if res.analysis_explanation is not None:
                    res.analysis_explanation = copy.copy(res.analysis_explanation)
                    res.analysis_explanation.set_supportive_context_word(word)
                    res.analysis_explanation.set_improved_score(res.score)
            out.append(res)
        return out

    def context_effect(self, text: str, start: int, end: int, score: float, rec: EntityRecognizer | None,
                       enhanced: bool, context: list[str] | None = None) -> tuple[str, float, str]:
        """(kind, new score, context word) for one match: kind '' (unchanged), 'negative' or 'positive'.

        The single place the rule lives: presidio's path (above) and the fast detector (engine.py) both call it,
        so they cannot drift apart."""
        neg = getattr(rec, "negative_context", ())
        if neg:
            line = text[text.rfind("\n", 0, start) + 1:start]
            if any(w in line[-self.context_prefix_count:] for w in neg):
                return "negative", round(score * 0.3, 4), ""
        if rec is None or not rec.context or score >= self.MAX_SCORE or enhanced:
            return "", score, ""
        word = find_context_word(text, start, end, rec,
                                 getattr(rec, "context_window", None) or self.context_prefix_count,
                                 self.context_suffix_count, extra=context)
        if not word:
            return "", score, ""
        return "positive", min(self.MAX_SCORE, max(score + self.context_similarity_factor,
                                                   self.min_score_with_context_similarity)), word


_TH = re.compile(r"<th(?:\s[^<>]{0,80})?>(.{0,80}?)</th>", re.DOTALL)


def column_header(text: str, start: int) -> str:
    """The header of the HTML table column whose cell holds `start` (a `<td>` of a table whose first row has
    `<th>` cells), or ''. A value in a table has its label there, not on its line."""
    td = text.rfind("<td", max(0, start - 200), start)
    if td < 0 or text.rfind("</td>", td, start) >= 0:
        return ""
    row = text.rfind("<tr", 0, td)
    table = text.rfind("<table", 0, row) if row >= 0 else -1
    if table < 0:
        return ""
    head_row = text.find("<tr", table, row + 1)
    if head_row < 0 or head_row == row:
        return ""
    head_end = text.find("</tr>", head_row)
    if text.find("<td", head_row, head_end) >= 0:
        return ""  # a first row with data cells (a key-value table: `<th>성명</th><td>…</td>`) is no header row
    cells = _TH.findall(text, head_row, head_end)
    col = text.count("<td", row, td) + text.count("<th", row, td)
    return _MARKUP.sub("", cells[col]) if col < len(cells) else ""


def find_context_word(text: str, start: int, end: int, rec: EntityRecognizer, prefix_chars: int,
                      suffix_chars: int, extra: list[str] | None = None) -> str:
    """The first context word of `rec` found in the window around [start, end), or ''."""
    # same line only: a label on the previous line belongs to the previous value ...
    line_start = text.rfind("\n", 0, start) + 1
    window = text[max(0, start - prefix_chars, line_start):start]
    if line_start > 0 and not _MARKUP.sub("", text[line_start:start]).strip():
        # ... unless the value opens its line (only spaces or markup before it): then the line above is its
        # label, as in forms and tables flattened to text (`건강보험증 번호\n1-2345678901`)
        prev = line_start - 1
        window = text[max(0, prev - prefix_chars, text.rfind("\n", 0, prev) + 1):prev] + "\n" + window
    header = column_header(text, start)
    if header:
        window = header + "\n" + window
    if getattr(rec, "context_after", False):
        window += " " + text[end:end + suffix_chars]
    lowered = window.lower()
    for w in rec.context:
        if w.lower() in lowered:
            return w
    for w in extra or ():
        if w.lower() in lowered:
            return w
    return ""
