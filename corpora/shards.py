"""Document shards (Parquet) and quarantine files: the records every corpus stage reads and writes.

A document shard is a Parquet file with the columns `id, text, source, meta` (meta: provenance as a JSON
string), written atomically (temp file, then rename) with fixed writer settings so the same documents give
byte-identical files. Stand-off annotations (PII spans, morpheme boundaries) live in separate files keyed by
`id`; they never rewrite these shards.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import io

DOC_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("meta", pa.string(), nullable=False),
    ]
)

SHARD_GLOB = "shard-*.parquet"
ROW_GROUP = 4096  # rows per row group of a shard: `write_docs`'s default, which every shard is written with


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    source: str
    meta: str  # JSON string: provenance (file, line, licence, ...) and anything stages add

    def meta_dict(self) -> dict[str, Any]:
        return json.loads(self.meta)


def doc_id(source: str, rel_path: str, index: int | str) -> str:
    """Stable id: hash of (source name, file path relative to the source root, record index)."""
    h = hashlib.sha256(f"{source}\x1f{rel_path}\x1f{index}".encode()).hexdigest()
    return h[:24]


def meta_json(meta: dict[str, Any]) -> str:
    return json.dumps(meta, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.parquet"


def write_docs(path: Path, docs: Iterable[Doc], row_group_size: int = ROW_GROUP) -> int:
    """Write documents to a Parquet shard atomically; returns the number written.

    Streams in row groups, so memory is bounded by the row group, not the shard.
    """
    n = 0
    with io.atomic_path(path) as tmp:
        writer = _writer(tmp)
        try:
            batch: list[Doc] = []
            for d in docs:
                batch.append(d)
                if len(batch) >= row_group_size:
                    writer.write_table(_table(batch))
                    n += len(batch)
                    batch = []
            if batch or n == 0:
                writer.write_table(_table(batch))
                n += len(batch)
        finally:
            writer.close()
    return n


def write_doc_tables(path: Path, tables: Iterable[pa.Table]) -> int:
    """Write a shard atomically from Arrow tables of `DOC_SCHEMA`, one row group each; returns the rows written.

    For shards re-cut from other shards' rows (collect's split files) without a round trip through `Doc`s:
    with the tables `write_docs` would have made (the same rows per row group, contiguous columns), the bytes
    are the same as its."""
    n = 0
    with io.atomic_path(path) as tmp:
        writer = _writer(tmp)
        try:
            for t in tables:
                writer.write_table(t)
                n += t.num_rows
        finally:
            writer.close()
    return n


def row_groups(tables: Iterable[pa.Table]) -> Iterator[pa.Table]:
    """The rows of `tables` (of `DOC_SCHEMA`'s columns) re-cut into the row groups `write_docs` makes: tables of
    ROW_GROUP rows (the last may be shorter; one empty table when there are no rows, as `write_docs` writes), each
    contiguous and typed exactly as `DOC_SCHEMA`, so that `write_doc_tables` of them writes `write_docs`'s bytes
    (tests) for stages that move rows as Arrow tables, never as `Doc`s."""
    buf: list[pa.Table] = []
    n = 0
    made = False
    for t in tables:
        while t.num_rows:
            take = min(ROW_GROUP - n, t.num_rows)
            buf.append(t.slice(0, take))
            n += take
            t = t.slice(take)
            if n == ROW_GROUP:
                yield _contiguous(buf)
                buf, n, made = [], 0, True
    if buf or not made:
        yield _contiguous(buf) if buf else _table([])


def _contiguous(parts: list[pa.Table]) -> pa.Table:
    t = pa.concat_tables(parts).combine_chunks()
    return pa.Table.from_arrays([t.column(i).combine_chunks() for i in range(t.num_columns)], schema=DOC_SCHEMA)


def _writer(path: Path) -> pq.ParquetWriter:
    # Fixed settings (no statistics timestamps, fixed compression) for byte-identical output.
    return pq.ParquetWriter(path, DOC_SCHEMA, compression="zstd", write_statistics=False)


def _table(batch: list[Doc]) -> pa.Table:
    return pa.Table.from_arrays(
        [_strings([d.id for d in batch]), _strings([d.text for d in batch]),
         _strings([d.source for d in batch]), _strings([d.meta for d in batch])],
        schema=DOC_SCHEMA,
    )


def _strings(values: list[str]) -> pa.Array:
    """A non-null Arrow string array of `values`, built from its two buffers (offsets, UTF-8 bytes).

    Why not `pa.array(values)`: for a Python list it first asks whether the list is a pandas object, which
    imports pandas (~1.1 CPU s in every process that writes a shard; no stage uses pandas). The array is the
    same (same offsets and bytes, no validity bitmap), so the Parquet bytes are too. Over 2 GiB of text in one
    row group (int32 offsets overflow) goes through `pa.array`, which splits it."""
    data = list(map(str.encode, values))
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=offsets[1:])
    if offsets[-1] >= 2**31:
        return pa.array(values, type=pa.string())
    return pa.StringArray.from_buffers(len(data), pa.py_buffer(offsets.astype(np.int32)),
                                       pa.py_buffer(b"".join(data)), null_count=0)


def iter_docs(path: Path, batch_size: int = 1024) -> Iterator[Doc]:
    """Stream documents of one shard in order, a record batch at a time."""
    pf = pq.ParquetFile(path)
    for rb in pf.iter_batches(batch_size=batch_size, columns=["id", "text", "source", "meta"]):
        cols = rb.to_pydict()
        for i in range(rb.num_rows):
            yield Doc(cols["id"][i], cols["text"][i], cols["source"][i], cols["meta"][i])


def list_shards(folder: Path) -> list[Path]:
    """Document shards of a stage folder, in shard order."""
    return sorted(folder.glob(SHARD_GLOB))


def count_docs(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


class QuarantineWriter:
    """Append-only JSON-lines file of records a stage could not process.

    Each record names where the damage is (source, file, line or byte offset) and why, and keeps a short
    excerpt of the raw bytes or text so a person can look at it. Written to a temp path and renamed on close.
    """

    def __init__(self, path: Path):
        self.path = path
        self._cm = io.atomic_file(path, "w")
        self._f = self._cm.__enter__()
        self.count = 0

    def add(self, *, source: str, file: str, reason: str, location: str | int | None = None,
            detail: str = "", excerpt: str | bytes = "") -> None:
        if isinstance(excerpt, bytes):
            excerpt = excerpt[:200].decode("utf-8", errors="backslashreplace")
        rec = {"source": source, "file": file, "location": location, "reason": reason, "detail": detail,
               "excerpt": excerpt[:200]}
        self._f.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
        self.count += 1

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def __enter__(self) -> QuarantineWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        # Kept on an error too (unlike other writers): the records written so far say what went wrong.
        self.close()
