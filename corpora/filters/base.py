"""What every filter shares: a per-document view that computes lines and words once, and the filter base.

A filter's `check` returns None (keep) or a short code naming the failing check; the stage uses the filter's
`name` as the drop reason and keeps the codes as per-check statistics. A `Transform` edits the text (removes
boilerplate lines, short sentences) and may fail the document too.

A filter declares its thresholds (its knobs) in its own class, as a nested `Knobs` model: each knob's type,
bounds, description and citation, and its default where the value is the same for every language. A knob without
a default is a language's: every language pack states it (`Language.default_thresholds`). The filter stage's
params (`corpora.filters.params.Thresholds`) are assembled from the knobs of the registered filters
(`corpora.filters.registry`), so adding a filter is its module and one registry line.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, Field

from corpora.lang.base import Language
from pipeline.stage import StageParams

Frac = Annotated[float, Field(ge=0.0, le=1.0)]
NGramFracs = dict[Annotated[int, Field(ge=1, le=50)], Frac]


class FilterKnobs(StageParams):
    """Base of a filter's `Knobs`: pydantic fields (bounds with `Field(ge=..., le=...)`, a `description` citing
    where the value comes from). `None` conventionally disables a check."""

    # (low, high) knob pairs: low may not be larger than high when both are set (a recipe error otherwise)
    ordered: ClassVar[tuple[tuple[str, str], ...]] = ()


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
    # the filter's thresholds; a subclass declares its own nested `class Knobs(FilterKnobs)` and `th: Knobs`
    Knobs: ClassVar[type[FilterKnobs]] = FilterKnobs
    th: FilterKnobs

    def __init__(self, th: BaseModel, lang: Language):
        """`th`: the stage's thresholds (`Thresholds`, already validated), of which the filter keeps its knobs."""
        self.th = self.Knobs.model_construct(**{k: getattr(th, k) for k in self.Knobs.model_fields})
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
