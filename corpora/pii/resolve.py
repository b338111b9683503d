"""Stand-off spans and deterministic overlap resolution.

Recognizers overlap on purpose (a fax number is also phone-shaped; a resident number is also corporate-shaped;
an account may sit inside an address). Exactly one span may own each character, chosen greedily by score, then
by type priority (the more specific type wins a tie), then by length, then by position: a total order, so the
result never depends on recognizer order or worker count.
"""

from __future__ import annotations

from dataclasses import dataclass

# Higher wins a score tie: specific types over the generic shapes they resemble.
TYPE_PRIORITY = {
    "FAX": 9, "RRN": 8, "FRN": 8, "CORP_REG": 7, "BUSINESS_REG": 7, "DRIVER_LICENSE": 7, "CARD": 6,
    "EMAIL": 6, "URL": 5, "IP": 5, "PASSPORT": 5, "VEHICLE": 4, "PHONE": 4, "ACCOUNT": 3,
    "MEDICAL_INSURANCE": 2, "ADDRESS": 1, "PERSON": 1,
}


@dataclass(frozen=True)
class Span:
    """One detected PII span: character offsets into the document text, end exclusive."""

    start: int
    end: int
    type: str
    score: float
    recognizer: str

    def to_json(self) -> dict:
        """The span for `klue pii detect`'s output; `recognizer` is its reason (`ko_labelled_driver_license`: a
        value found after its label, whatever its shape)."""
        return {"start": self.start, "end": self.end, "type": self.type, "score": self.score,
                "recognizer": self.recognizer}


def _key(s: Span) -> tuple:
    return (-s.score, -TYPE_PRIORITY.get(s.type, 0), -(s.end - s.start), s.start, s.type, s.recognizer)


def resolve_overlaps(spans: list[Span]) -> list[Span]:
    """Keep a non-overlapping subset, greedily by (score, type priority, length, start); sorted by start."""
    kept: list[Span] = []
    taken: list[tuple[int, int]] = []
    for s in sorted(spans, key=_key):
        if s.end <= s.start:
            continue
        if any(s.start < e and b < s.end for b, e in taken):
            continue
        kept.append(s)
        taken.append((s.start, s.end))
    return sorted(kept, key=lambda s: (s.start, s.end))
