"""Length in characters and in words (eojeols): drops empty scraps and pathological giants."""

from __future__ import annotations

from corpora.filters.base import DocView, Filter


class LengthFilter(Filter):
    name = "length"

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
