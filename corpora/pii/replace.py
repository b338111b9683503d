"""Replacing detected spans: placeholder tokens, surrogates, or dropping PII-dense documents.

Replacement only touches characters inside spans; everything between spans is copied verbatim, which is what
makes the `pii: [on, off]` arms differ only in replaced spans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from corpora.pii.resolve import Span


def placeholder_token(type_: str) -> str:
    """The token a type is replaced with in placeholder mode; the vocab stage reserves these."""
    return f"[{type_}]"


@dataclass
class DiffCounts:
    """What a replacement changed, per type: the diff report."""

    docs_changed: int = 0
    spans: Counter = field(default_factory=Counter)
    chars: Counter = field(default_factory=Counter)  # original characters replaced
    docs_by_type: Counter = field(default_factory=Counter)

    def add(self, other: DiffCounts) -> None:
        self.docs_changed += other.docs_changed
        self.spans.update(other.spans)
        self.chars.update(other.chars)
        self.docs_by_type.update(other.docs_by_type)

    def to_json(self) -> dict:
        return {"docs_changed": self.docs_changed, "chars_changed": sum(self.chars.values()),
                "spans_changed": sum(self.spans.values()),
                "per_type": {t: {"spans": self.spans[t], "chars": self.chars[t], "docs": self.docs_by_type[t]}
                             for t in sorted(self.spans)}}


def select(spans: Iterable[Span], types: Iterable[str] | None) -> list[Span]:
    keep = None if types is None else set(types)
    return [s for s in spans if keep is None or s.type in keep]


def density(text: str, spans: list[Span]) -> float:
    """Share of the document's characters inside PII spans."""
    return sum(s.end - s.start for s in spans) / max(1, len(text))


# What a substitute sees of the text after a span: enough for the longest particle it reads (으로, 라고).
AFTER_CHARS = 4
Substitute = Callable[[Span, str, str], str]


def replace_spans(text: str, spans: list[Span], substitute: Substitute, diff: DiffCounts | None = None) -> str:
    """`text` with each span replaced by `substitute(span, original, after)`, `after` the next `AFTER_CHARS`
    characters of `text` (a surrogate may have to agree with the particle there). Spans must not overlap."""
    out = []
    pos = 0
    types_here = set()
    for s in sorted(spans, key=lambda s: s.start):
        if s.start < pos:
            raise ValueError(f"overlapping spans at {s.start} (previous ends at {pos})")
        if s.end > len(text):
            raise ValueError(f"span {s.start}-{s.end} beyond the text (length {len(text)})")
        out.append(text[pos:s.start])
        out.append(substitute(s, text[s.start:s.end], text[s.end:s.end + AFTER_CHARS]))
        pos = s.end
        if diff is not None:
            diff.spans[s.type] += 1
            diff.chars[s.type] += s.end - s.start
            types_here.add(s.type)
    out.append(text[pos:])
    if diff is not None and spans:
        diff.docs_changed += 1
        diff.docs_by_type.update(types_here)
    return "".join(out)


def placeholder_substitute(span: Span, original: str, after: str = "") -> str:
    return placeholder_token(span.type)


def surrogate_substitute(surrogates: Callable[[str, str, str], str]) -> Substitute:
    """A substitute calling `surrogates(type, original, after)` (a `DocSurrogates`)."""
    return lambda span, original, after: surrogates(span.type, original, after)
