"""Web boilerplate lines (copyright notices, reporter e-mail lines, share/login buttons, "▶" link lines).

Removes the lines; fails the document when the removed lines were more than `max_boilerplate_frac` of its
characters (what is left is then a scrap of a navigation page, not a text).
"""

from __future__ import annotations

import re

from corpora.filters.base import DocView, Transform
from corpora.filters.params import Thresholds
from corpora.lang.base import Language


class BoilerplateFilter(Transform):
    name = "boilerplate"

    def __init__(self, th: Thresholds, lang: Language):
        super().__init__(th, lang)
        pats = lang.boilerplate_patterns
        # one pass over the whole text first: most documents have no boilerplate at all. Case-insensitive and
        # multi-line, so it matches wherever any single-line pattern matches (a superset), never fewer.
        self._any = re.compile("|".join(f"(?:{p.pattern})" for p in pats), re.I | re.M) if pats else None

    def apply(self, text: str) -> tuple[str, str | None]:
        if self._any is None or self._any.search(text) is None:
            return text, None
        lines = text.split("\n")
        kept = [ln for ln in lines if not self.lang.is_boilerplate_line(ln)]
        if len(kept) == len(lines):
            return text, None
        out = "\n".join(kept).strip("\n")
        frac = 1.0 - len(out) / len(text) if text else 0.0
        if self.th.max_boilerplate_frac is not None and frac > self.th.max_boilerplate_frac:
            return out, "mostly_boilerplate"
        return out, None

    def check(self, v: DocView) -> str | None:
        return self.apply(v.text)[1]
