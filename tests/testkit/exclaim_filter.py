"""A fixture filter, not a product one: what a new filter's module looks like. It declares its one knob (type,
bounds, default, description) in its own class; registered with one line in `corpora/filters/registry.py`
(`tests/test_filter_knobs.py` adds that line in a subprocess), the filter stage validates and runs it."""

from __future__ import annotations

from pydantic import Field

from corpora.filters.base import DocView, Filter, FilterKnobs


class ExclaimFilter(Filter):
    name = "exclaim"

    class Knobs(FilterKnobs):
        max_exclaim_ratio: float | None = Field(
            None, ge=0.0, le=1.0, description="most exclamation marks per character (a fixture: off by default)")

    th: Knobs

    def enabled(self) -> bool:
        return self.th.max_exclaim_ratio is not None

    def check(self, v: DocView) -> str | None:
        limit = self.th.max_exclaim_ratio
        if limit is not None and v.text and (v.text.count("!") + v.text.count("！")) / len(v.text) > limit:
            return "too_many_exclaims"
        return None
