"""Parquet files, Arrow IPC files and datasets saved with `datasets.save_to_disk`, read a batch at a time.

Rows are numbered from 0 (the index `dataset[i]` would use). No hub access: only local folders are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from corpora.readers.records import Bad, ReadOptions, Record, SourceFile, Span
from corpora.sources import SourceSpec

BATCH = 1024
_ARROW_ERRORS = (pa.ArrowException, OSError)


def read_columnar(spec: SourceSpec, src: SourceFile, opts: ReadOptions,
                  span: Span | None = None) -> Iterator[Record | Bad]:
    """The records of a file, or (Parquet) of the row groups of one `span`, numbered as in the whole file."""
    columns = [spec.text_field, *[c for c in spec.meta_fields if c != spec.text_field]]
    try:
        names, batches = _open(src, columns, None if span is None else range(span.start, span.end))
    except _ARROW_ERRORS as e:
        yield Bad("corrupt_file", "file", f"cannot read {src.kind} file: {type(e).__name__}: {e}")
        return
    missing = [c for c in columns if c not in names]
    if missing:
        raise ValueError(f"source {spec.name!r}: {src.path}: no column(s) {missing}; columns: {names[:20]} "
                         "(set text_field / meta_fields)")
    row = 0 if span is None else span.before
    try:
        for batch in batches:
            for i, text in enumerate(batch[spec.text_field]):
                n = row + i
                yield _record(spec, n, text, {c: batch[c][i] for c in spec.meta_fields})
            row += len(batch[spec.text_field])
    except _ARROW_ERRORS as e:
        yield Bad("corrupt_file", f"row {row}", f"{type(e).__name__}: {e}; rows before {row} were kept, "
                  "the rest of the file is this one quarantined record")


def _record(spec: SourceSpec, n: int, text: Any, fields: dict[str, Any]) -> Record | Bad:
    loc = f"row {n}"
    if text is None:
        return Bad("null_text", loc, f"column {spec.text_field!r} is null")
    if not isinstance(text, str):
        return Bad("non_string_text", loc,
                   f"column {spec.text_field!r} holds {type(text).__name__}, not text", repr(text)[:200])
    return Record(n, text, {"row": n}, {k: _jsonable(v) for k, v in fields.items()} or None)


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, str | int | float | bool):
        return v
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)  # dates, decimals, bytes: their string form keeps meta JSON


def _open(src: SourceFile, columns: list[str],
          row_groups: range | None = None) -> tuple[list[str], Iterable[dict[str, list]]]:
    """Column names and an iterator of {column: values} batches (only the columns asked for; of `row_groups`
    only, for a piece of a split Parquet file)."""
    if src.kind == "hf_disk":
        import datasets  # heavy; only for this format

        ds = datasets.load_from_disk(str(src.path))
        if not isinstance(ds, datasets.Dataset):
            raise ValueError(f"{src.path} holds a DatasetDict; point the source at the folder above it")
        names = list(ds.column_names)
        present = [c for c in columns if c in names]
        return names, ds.select_columns(present).iter(batch_size=BATCH)
    if src.kind == "parquet":
        pf = pq.ParquetFile(src.path)
        names = pf.schema_arrow.names
        present = [c for c in columns if c in names]
        groups = None if row_groups is None else list(row_groups)
        return names, (rb.to_pydict() for rb in pf.iter_batches(batch_size=BATCH, columns=present,
                                                                row_groups=groups))
    source = pa.memory_map(str(src.path))
    try:
        reader = pa.ipc.open_stream(source)  # what `datasets` writes
        names = reader.schema.names
        gen: Iterable[pa.RecordBatch] = reader
    except pa.ArrowInvalid:
        source.seek(0)
        freader = pa.ipc.open_file(source)
        names = freader.schema.names
        gen = (freader.get_batch(i) for i in range(freader.num_record_batches))
    present = [c for c in columns if c in names]
    return names, (rb.select(present).to_pydict() for rb in gen)
