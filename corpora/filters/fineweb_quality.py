"""FineWeb quality heuristics (Penedo et al. 2024) with FineWeb-2's Korean thresholds.

Share of lines ending in terminal punctuation, share of short lines, characters in duplicated lines, and
newlines per word. A line may end its punctuation with closing quotes or brackets (다." counts as ended).
"""

from __future__ import annotations

from pydantic import Field

from corpora.filters.base import DocView, Filter, FilterKnobs, Frac, find_duplicates

_CLOSERS = "\"'”’」』)]›»"


class FineWebQualityFilter(Filter):
    name = "fineweb_quality"

    class Knobs(FilterKnobs):
        # The language's (no default): FineWeb-2's per-language line_punct_thr and new_line_ratio (the latter per
        # its word, rescaled to the language's), cited in each language pack. short_line_thr is disabled (999 in
        # fineweb-2-pipeline.py); char_duplicates_ratio 0.1 (fineweb-2-pipeline.py).
        line_punct_thr: Frac | None = Field(
            description="least share of lines ending in terminal punctuation (FineWeb-2, per language)")
        short_line_thr: Frac | None = Field(
            None, description="most share of short lines (disabled: 999 in fineweb-2-pipeline.py)")
        short_line_length: int = Field(
            30, ge=1, description="a line of at most this many characters is short (FineWeb default)")
        char_dup_ratio: Frac | None = Field(
            0.1, description="most share of characters in duplicated lines (fineweb-2-pipeline.py)")
        new_line_ratio: float | None = Field(
            ge=0, description="most newlines per word (FineWeb-2, per language, rescaled to the language's words)")

    th: Knobs

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
