"""Readers for every raw format a recipe source may have: text, JSON lines, CSV/TSV, Parquet, saved datasets.

A reader streams one `SourceFile` and yields `Record`s (decoded text with its locator) and `Bad`s (damaged
records, for the quarantine), never holding more than one record (at most `max_doc_bytes`) at a time.
Text-like files are sniffed first: a binary file is one `binary_file` record, not thousands of broken lines.
"""

from __future__ import annotations

from collections.abc import Generator

from corpora.readers.columnar import read_columnar
from corpora.readers.jsonl import read_jsonl
from corpora.readers.paths import resolve_source, source_files_on_disk, source_path, source_root
from corpora.readers.records import REASONS, Bad, ReadOptions, Record, SourceFile, Span
from corpora.readers.streams import EXCERPT_BYTES, STREAM_ERRORS, is_compressed, open_binary, sniff_binary
from corpora.readers.tabular import read_csv
from corpora.readers.text import read_text
from corpora.sources import SourceSpec

__all__ = ["REASONS", "Bad", "ReadOptions", "Record", "SourceFile", "Span", "read_file", "resolve_source",
           "source_files_on_disk", "source_path", "source_root"]


def read_file(spec: SourceSpec, src: SourceFile, opts: ReadOptions,
              span: Span | None = None) -> Generator[Record | Bad, None, None]:
    """Records of one file of `spec`, in file order; with a `span`, those of that piece of a split file
    (`corpora.readers.ranges`, which only splits files that the binary sniff passed: a piece is not sniffed)."""
    if spec.format in ("parquet", "hf_dataset"):
        kind = src.kind if src.kind != "file" else "parquet"
        yield from read_columnar(spec, SourceFile(src.path, src.rel, kind), opts, span)
        return
    why = None if span is not None else sniff_binary(src.path, spec.encoding, opts.binary_ratio)
    if why:
        yield Bad("binary_file", "file", f"not a text file: {why}", _head(src))
        return
    if spec.format == "text":
        yield from read_text(spec, src, opts, span)
    elif spec.format == "jsonl":
        yield from read_jsonl(spec, src, opts, span)
    else:
        yield from read_csv(spec, src, opts)


def _head(src: SourceFile) -> bytes:
    errors = STREAM_ERRORS if is_compressed(src.path) else ()
    try:
        with open_binary(src.path) as f:
            return f.read(EXCERPT_BYTES)
    except errors:
        return b""
