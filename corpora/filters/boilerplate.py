"""Web boilerplate lines (copyright notices, reporter e-mail lines, share/login buttons, "▶" link lines).

Removes the lines; fails the document when the removed lines were more than `max_boilerplate_frac` of its
characters (what is left is then a scrap of a navigation page, not a text).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from corpora.filters.base import DocView, FilterKnobs, Frac, Transform
from corpora.lang.base import Language


class BoilerplateFilter(Transform):
    name = "boilerplate"

    class Knobs(FilterKnobs):
        # ours: drop the document when over half of its characters were boilerplate lines.
        max_boilerplate_frac: Frac | None = Field(
            0.5, description="most share of the characters in removed boilerplate lines (ours)")

    th: Knobs

    def __init__(self, th: BaseModel, lang: Language):
        super().__init__(th, lang)
        pats = lang.boilerplate_patterns
        # one pass over the whole text first: most documents have no boilerplate at all. Case-insensitive and
        # multi-line, so it matches wherever any single-line pattern matches (a superset), never fewer.
        # Two regexes, not one: the branches anchored at a line start (`^...`) as one `^(?:...)`, which fails at
        # once everywhere but at line starts, and the others, whose first characters `re` can then scan for;
        # one alternation of both is tried branch by branch at every character, 3x slower. Either matches
        # exactly where the single alternation does.
        branches = [b for p in pats for b in _top_level_branches(p.pattern)]
        anchored = [b[1:] for b in branches if b.startswith("^")]
        free = [b for b in branches if not b.startswith("^")]
        self._any = [re.compile(rx, re.I | re.M) for rx in (
            "|".join(f"(?:{b})" for b in free) if free else None,
            "^(?:" + "|".join(f"(?:{b})" for b in anchored) + ")" if anchored else None) if rx is not None]

    def apply(self, text: str) -> tuple[str, str | None]:
        if all(rx.search(text) is None for rx in self._any):
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


def _top_level_branches(pattern: str) -> list[str]:
    """The alternatives of a regex's top-level `|` (outside groups and character classes), as strings.

    Hand-written (the `re` module has no public parser): it only has to skip escapes, `[...]` classes and
    parentheses; the branches joined by `|` are the pattern itself, so nothing else can change."""
    out: list[str] = []
    depth, start, i, in_class = 0, 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                i += 1
            if pattern[i + 1:i + 2] == "]":  # a literal ] first in a class
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    assert "|".join(out) == pattern
    return out
