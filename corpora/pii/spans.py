"""The stand-off PII span files that `pii_detect` writes and `pii` (and `klue pii`, the benches) read.

Per input shard `shard-NNNNN.parquet`, `spans-NNNNN.parquet`: one row per span with columns
`id, start, end, type, score, recognizer` (character offsets into the document text, end exclusive), rows in
document order then by start. Documents without PII have no rows. `failed_ids.json` lists the documents whose
detection failed or timed out (quarantined; the replace stage leaves them out of both arms).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from corpora.pii.resolve import Span
from corpora.standoff import StandoffFile

if TYPE_CHECKING:
    from corpora.pii.resolve import Span

SPANS = StandoffFile("spans", [
    ("start", pa.int32()),
    ("end", pa.int32()),
    ("type", pa.string()),
    ("score", pa.float32()),
    ("recognizer", pa.string()),
])
SPAN_SCHEMA = SPANS.schema
FAILED_FILE = "failed_ids.json"


def spans_name(shard: Path) -> str:
    return SPANS.name(shard)


def write_spans(path: Path, cols: list[list[Any]]) -> None:
    """Write span columns (id, start, end, type, score, recognizer) atomically."""
    SPANS.write(path, cols)


def read_spans(path: Path) -> dict[str, list[Span]]:
    """{doc id: [Span, ...]} for one spans shard (a shard's worth, never the corpus)."""
    out: dict[str, list[Span]] = {}
    for i, s, e, ty, sc, r in zip(*SPANS.read(path), strict=True):
        out.setdefault(i, []).append(Span(s, e, ty, round(float(sc), 4), r))
    return out
