"""FineWeb quality heuristics (Penedo et al. 2024) with FineWeb-2's Korean thresholds.

Share of lines ending in terminal punctuation, share of short lines, characters in duplicated lines, and
newlines per word. A line may end its punctuation with closing quotes or brackets (다." counts as ended).
"""

from __future__ import annotations

from corpora.filters.base import DocView, Filter, find_duplicates

_CLOSERS = "\"'”’」』)]›»"


class FineWebQualityFilter(Filter):
    name = "fineweb_quality"

    def check(self, v: DocView) -> str | None:
        th = self.th
        lines = v.lines
        if not lines:
            return "empty"
        if th.line_punct_thr is not None:
            stops = self.lang.terminal_punctuation
            ended = sum(1 for ln in lines if ln.rstrip().rstrip(_CLOSERS).endswith(stops))
            if ended / len(lines) < th.line_punct_thr:
                return "line_punct_ratio"
        if th.short_line_thr is not None:
            short = sum(1 for ln in lines if len(ln) <= th.short_line_length)
            if short / len(lines) > th.short_line_thr:
                return "short_line_ratio"
        text = v.text
        if th.char_dup_ratio is not None:
            body = len(text) - text.count("\n")
            if body and find_duplicates(lines)[1] / body > th.char_dup_ratio:
                return "char_dup_ratio"
        if th.new_line_ratio is not None:
            n_words = len(v.words)
            if n_words and text.count("\n") / n_words > th.new_line_ratio:
                return "list_ratio"
        return None
