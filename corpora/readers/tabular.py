"""CSV and TSV: the first row is the header (or `columns:` names the columns of a file without one); `text_columns` are joined with a newline into the document.

Lines are decoded with `surrogateescape` before the csv module sees them, so that a record with bad bytes is
still parsed as one record (quoted newlines included) and then quarantined whole, by row number. A physical
line longer than `max_doc_bytes` is quarantined without being handed to the csv module; if it sat inside a
quoted field, the record it belonged to is cut there (we cannot know the quote state of bytes we never hold).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator

from corpora.readers.records import Bad, DecodeFailure, ReadOptions, Record, SourceFile, decode
from corpora.readers.streams import StreamError, is_compressed, iter_lines, open_binary
from corpora.readers.text import truncated
from corpora.sources import SourceSpec

_ESCAPED = re.compile("[\udc80-\udcff]")


def read_csv(spec: SourceSpec, src: SourceFile, opts: ReadOptions) -> Iterator[Record | Bad]:
    delimiter = "," if spec.format == "csv" else "\t"
    quoted = spec.quoted if spec.quoted is not None else spec.format == "csv"
    # the csv module's default field limit (128 KiB) is far below max_doc_bytes; process-wide, but the same
    # for every collect task
    csv.field_size_limit(max(opts.max_doc_bytes, csv.field_size_limit()))
    pending: list[Bad] = []
    line_no = [0]

    def lines(f) -> Iterator[str]:
        for ln in iter_lines(f, opts.max_doc_bytes, keep_ends=True, compressed=is_compressed(src.path)):
            line_no[0] = ln.number
            if ln.data is None:
                pending.append(Bad("too_long", f"line {ln.number}", f"line of {ln.size} bytes exceeds "
                                   f"max_doc_bytes={opts.max_doc_bytes}", ln.head))
                continue
            yield ln.data.decode(spec.encoding, "surrogateescape")

    with open_binary(src.path) as f:
        reader = csv.reader(lines(f), delimiter=delimiter,
                            quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
        header: list[str] | None = None
        text_idx: list[int] = []
        field_idx: dict[str, int] = {}
        if spec.columns is not None:  # a file without a header row: every row is data
            header = list(spec.columns)
            text_idx = _columns(spec, src, header, spec.text_columns)
            field_idx = dict(zip(spec.meta_fields, _columns(spec, src, header, spec.meta_fields), strict=True))
        row_no = 0
        prev_end = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                yield from pending
                pending.clear()
                row_no += 1
                yield Bad("bad_csv", f"row {row_no} (line {prev_end + 1})", str(e))
                prev_end = line_no[0]
                continue
            except StreamError as e:
                yield from pending
                yield truncated(e)
                return
            yield from pending
            pending.clear()
            start, prev_end = prev_end + 1, line_no[0]
            if header is None:
                header = row
                text_idx = _columns(spec, src, header, spec.text_columns)
                field_idx = dict(zip(spec.meta_fields, _columns(spec, src, header, spec.meta_fields),
                                     strict=True))
                continue
            row_no += 1
            loc = f"row {row_no} (line {start})"
            if not row:
                yield Record(row_no, "", {"row": row_no, "line": start})  # blank line: dropped as empty
                continue
            if any(_ESCAPED.search(v) for v in row):
                raw = delimiter.join(row).encode(spec.encoding, "surrogateescape")
                fail = decode(raw, spec.encoding, spec.name)
                assert isinstance(fail, DecodeFailure)
                yield Bad(fail.reason, loc, fail.detail, fail.excerpt)
                continue
            if len(row) != len(header):
                yield Bad("ragged_row", loc, f"{len(row)} fields where the header has {len(header)}",
                          delimiter.join(row))
                continue
            text = "\n".join(row[i] for i in text_idx).replace("\r\n", "\n")
            fields = {k: row[i] for k, i in field_idx.items()} or None
            yield Record(row_no, text, {"row": row_no, "line": start}, fields)
        yield from pending


def _columns(spec: SourceSpec, src: SourceFile, header: list[str], names: list[str]) -> list[int]:
    missing = [c for c in names if c not in header]
    if missing:
        raise ValueError(f"source {spec.name!r}: {src.path}: header {header[:20]} lacks column(s) {missing} "
                         "(set text_columns / meta_fields to names in the first row, or name the columns of a file "
                         "without a header row with `columns:`)")
    return [header.index(c) for c in names]
