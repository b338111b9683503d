"""Script check: the share of the language's script (Hangul) among all letters.

Stands in for a language-ID score (FineWeb-2 filters on GlotLID confidence): offline, with no LID model, the
script share separates Korean text from English/Chinese/Japanese pages, and costs one regex pass.
"""

from __future__ import annotations

from corpora.filters.base import DocView, Filter


class ScriptFilter(Filter):
    name = "script"

    def enabled(self) -> bool:
        return self.th.min_script_ratio is not None

    def check(self, v: DocView) -> str | None:
        if self.th.min_script_ratio is None:
            return None
        letters = self.lang.letter_count(v.text)
        if letters == 0:
            return "no_letters"
        if self.lang.script_count(v.text) / letters < self.th.min_script_ratio:
            return "low_script_ratio"
        return None
