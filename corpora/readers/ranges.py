"""Splitting one large input file into pieces (`Span`s) that several workers read, each exactly as the
whole-file read would read those bytes.

Why it is safe, per format:

- text `unit: line` and JSON lines: a piece starts right after a b"\\n" and ends right after one (the last at
  the end of the file). The readers split lines on that byte before decoding, in every accepted encoding
  (`SourceSpec.encoding` refuses UTF-16/32), so a piece holds exactly the whole file's lines for those bytes;
  the number of lines ahead of it (a count of b"\\n", `count_newlines`) continues the line numbers, and a BOM
  is only stripped at byte 0.
- text `unit: block`: a piece starts right after a blank line (whitespace only, not over `max_doc_bytes`),
  where the block reader has no state left (`corpora.readers.text._blocks`).
- Parquet: pieces are runs of whole row groups; `before` is the rows of the row groups ahead of it.

Read whole, never split: CSV/TSV (a quoted field may hold newlines, and the header is state), compressed
files (.gz/.zst: no random access), `unit: file` (one document), Arrow IPC files and saved datasets, files
that look binary (one `binary_file` record for the whole file), files not larger than `split_bytes`, and
(the caller's rule) sources with `max_docs`, which are read in file order until they have their documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from corpora.readers.records import ReadOptions, SourceFile, Span
from corpora.readers.streams import CHUNK, is_compressed, sniff_binary
from corpora.sources import SourceSpec

COUNT_CHUNK = 1 << 22


def split_kind(spec: SourceSpec, src: SourceFile, split_bytes: int | None, opts: ReadOptions) -> str | None:
    """How a file is split: "lines", "blocks", "row_groups", or None when it is read whole (module docstring)."""
    if split_bytes is None or spec.max_docs is not None or src.path.is_dir():
        return None
    if src.path.stat().st_size <= split_bytes:
        return None
    if spec.format in ("parquet", "hf_dataset"):
        return "row_groups" if spec.format == "parquet" or src.kind == "parquet" else None
    if spec.format not in ("text", "jsonl") or is_compressed(src.path):
        return None
    if spec.format == "text" and spec.unit == "file":
        return None
    if sniff_binary(src.path, spec.encoding, opts.binary_ratio):
        return None
    return "blocks" if spec.format == "text" and spec.unit == "block" else "lines"


def byte_cuts(path: Path, split_bytes: int, blocks: bool, limit: int) -> list[int]:
    """Offsets where the pieces of a text/JSON-lines file start (the first is 0), about `split_bytes` apart.

    Each is the first line start (blocks: the end of the first blank line) at or after the previous cut plus
    `split_bytes`; a cut at the end of the file is dropped. Reads only around the cuts (a blank line may be
    far off in a file with few of them)."""
    size = path.stat().st_size
    cuts = [0]
    with open(path, "rb", buffering=CHUNK) as f:
        pos = split_bytes
        while pos < size:
            cut = _next_cut(f, pos, blocks, limit)
            if cut >= size:
                break
            cuts.append(cut)
            pos = cut + split_bytes
    return cuts


def _next_cut(f: BinaryIO, pos: int, blocks: bool, limit: int) -> int:
    f.seek(pos - 1)
    _read_line(f)  # to the first line start at or after pos
    while blocks:
        n, blank = _read_line(f)
        if n == 0 or (blank and n - 1 <= limit):  # n counts the b"\n" (a last line without one is never a cut)
            break
    return f.tell()


def _read_line(f: BinaryIO) -> tuple[int, bool]:
    """Read to just after the next b"\\n" (or the end): (bytes read, whether they were all whitespace)."""
    n = 0
    blank = True
    while True:
        chunk = f.readline(CHUNK)
        n += len(chunk)
        blank = blank and not chunk.strip()
        if not chunk or chunk.endswith(b"\n"):
            return n, blank


def count_newlines(job: tuple[str, int, int]) -> int:
    """b"\\n" bytes in [start, end) of a file: the lines of a piece that ends with one (a `ctx.map` task, so
    the pieces of a large file are counted in parallel)."""
    path, start, end = job
    n = 0
    with open(path, "rb", buffering=0) as f:
        f.seek(start)
        left = end - start
        while left > 0:
            data = f.read(min(COUNT_CHUNK, left))
            if not data:
                raise ValueError(f"{path}: ends before byte {end} (it changed while being read?)")
            n += data.count(b"\n")
            left -= len(data)
    return n


def line_spans(cuts: list[int], size: int, lines: list[int]) -> list[Span]:
    """Spans from the cuts and the newline count of every piece but the last."""
    ends = [*cuts[1:], size]
    before = [0]
    for n in lines:
        before.append(before[-1] + n)
    return [Span(a, b, k) for a, b, k in zip(cuts, ends, before, strict=True)]


def row_group_spans(spec: SourceSpec, path: Path, split_bytes: int) -> list[Span] | None:
    """Runs of whole row groups of about `split_bytes` (compressed), or None when the file is read whole: an
    unreadable footer or missing columns (the whole-file read reports those exactly as without splitting), or a
    single piece."""
    try:
        pf = pq.ParquetFile(path)
        meta = pf.metadata
        names = set(pf.schema_arrow.names)
    except (pa.ArrowException, OSError):
        return None
    if any(c not in names for c in [spec.text_field, *spec.meta_fields]):
        return None
    spans: list[Span] = []
    start = before = rows = size = 0
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        rows += rg.num_rows
        size += sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
        if size >= split_bytes or i == meta.num_row_groups - 1:
            spans.append(Span(start, i + 1, before))
            start, before, size = i + 1, rows, 0
    return spans if len(spans) > 1 else None
