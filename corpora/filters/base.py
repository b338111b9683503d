"""What every filter shares: a per-document view that computes lines and words once, and the filter base.

A filter's `check` returns None (keep) or a short code naming the failing check; the stage uses the filter's
`name` as the drop reason and keeps the codes as per-check statistics. A `Transform` edits the text (removes
boilerplate lines, short sentences) and may fail the document too.
"""

from __future__ import annotations

from typing import ClassVar

from corpora.filters.params import Thresholds
from corpora.lang.base import Language


class DocView:
    """One text and the splits several filters need, computed on first use."""

    __slots__ = ("text", "lang", "_lines", "_words")

    def __init__(self, text: str, lang: Language):
        self.text = text
        self.lang = lang
        self._lines: list[str] | None = None
        self._words: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """Non-empty lines."""
        if self._lines is None:
            self._lines = [ln for ln in self.text.split("\n") if ln.strip()]
        return self._lines

    @property
    def words(self) -> list[str]:
        if self._words is None:
            self._words = self.lang.split_words(self.text)
        return self._words


class Filter:
    name: ClassVar[str]
    transform: ClassVar[bool] = False

    def __init__(self, th: Thresholds, lang: Language):
        self.th = th
        self.lang = lang

    def enabled(self) -> bool:
        return True

    def check(self, v: DocView) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError


class Transform(Filter):
    transform: ClassVar[bool] = True

    def apply(self, text: str) -> tuple[str, str | None]:  # pragma: no cover - abstract
        """(edited text, failing check code or None)."""
        raise NotImplementedError


def find_duplicates(items: list[str]) -> tuple[int, int]:
    """(number of repeated items, characters in the repeats), as Gopher counts them."""
    seen: set[str] = set()
    n = chars = 0
    for x in items:
        if x in seen:
            n += 1
            chars += len(x)
        else:
            seen.add(x)
    return n, chars
