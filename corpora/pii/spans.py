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
import pyarrow.parquet as pq

from pipeline import io

if TYPE_CHECKING:
    from corpora.pii.resolve import Span

SPAN_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("start", pa.int32(), nullable=False),
    pa.field("end", pa.int32(), nullable=False),
    pa.field("type", pa.string(), nullable=False),
    pa.field("score", pa.float32(), nullable=False),
    pa.field("recognizer", pa.string(), nullable=False),
])
FAILED_FILE = "failed_ids.json"


def spans_name(shard: Path) -> str:
    return shard.name.replace("shard-", "spans-", 1)


def write_spans(path: Path, cols: list[list[Any]]) -> None:
    """Write span columns (id, start, end, type, score, recognizer) atomically."""
    table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, SPAN_SCHEMA, strict=True)],
                                 schema=SPAN_SCHEMA)
    with io.atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False)


def read_spans(path: Path) -> dict[str, list[Span]]:
    """{doc id: [Span, ...]} for one spans shard (a shard's worth, never the corpus)."""
    from corpora.pii.resolve import Span

    out: dict[str, list[Span]] = {}
    t = pq.read_table(path).to_pydict()
    for i, s, e, ty, sc, r in zip(t["id"], t["start"], t["end"], t["type"], t["score"], t["recognizer"],
                                  strict=True):
        out.setdefault(i, []).append(Span(s, e, ty, round(float(sc), 4), r))
    return out
