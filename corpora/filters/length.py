"""Length in characters and in words (eojeols): drops empty scraps and pathological giants."""

from __future__ import annotations

from pydantic import Field

from corpora.filters.base import DocView, Filter, FilterKnobs


class LengthFilter(Filter):
    name = "length"

    class Knobs(FilterKnobs):
        # ours: drop near-empty documents and pathological giants; short-text sources override (per_source).
        min_chars: int | None = Field(30, ge=0, description="fewest characters (ours; short-text sources lower it)")
        max_chars: int | None = Field(1_000_000, ge=1, description="most characters (ours: pathological giants)")
        min_words: int | None = Field(None, ge=0, description="fewest words (the language's words; off by default)")
        max_words: int | None = Field(None, ge=1, description="most words (the language's words; off by default)")
        ordered = (("min_chars", "max_chars"), ("min_words", "max_words"))

    th: Knobs

    def check(self, v: DocView) -> str | None:
        th = self.th
        n = len(v.text)
        if th.min_chars is not None and n < th.min_chars:
            return "too_few_chars"
        if th.max_chars is not None and n > th.max_chars:
            return "too_many_chars"
        if th.min_words is not None or th.max_words is not None:
            w = len(v.words)
            if th.min_words is not None and w < th.min_words:
                return "too_few_words"
            if th.max_words is not None and w > th.max_words:
                return "too_many_words"
        return None
