"""Plain text: one document per line, per blank-line separated block, or per file."""

from __future__ import annotations

from collections.abc import Iterator

from corpora.readers.records import Bad, DecodeFailure, ReadOptions, Record, SourceFile, Span, decode
from corpora.readers.streams import (
    BOM,
    CHUNK,
    EXCERPT_BYTES,
    STREAM_ERRORS,
    StreamError,
    is_compressed,
    iter_lines,
    open_binary,
    open_range,
)
from corpora.sources import SourceSpec


def read_text(spec: SourceSpec, src: SourceFile, opts: ReadOptions,
              span: Span | None = None) -> Iterator[Record | Bad]:
    """The records of a file, or of one `span` of it (lines and blocks only: a split file is never compressed
    and never `unit: file`)."""
    compressed = is_compressed(src.path)
    at = (0, 0) if span is None else (span.before, span.start)
    with open_binary(src.path) if span is None else open_range(src.path, span.start, span.end) as f:
        try:
            if spec.unit == "line":
                yield from _lines(spec, f, opts, compressed, at)
            elif spec.unit == "block":
                yield from _blocks(spec, f, opts, compressed, at)
            else:
                yield from _whole(spec, f, opts, compressed)
        except StreamError as e:
            yield truncated(e)


def truncated(e: StreamError) -> Bad:
    """The rest of a broken .gz/.zst file, as one record: EOFError means it ends early, anything else that
    the data is corrupt (or not compressed at all)."""
    reason = "truncated_stream" if isinstance(e.cause, EOFError) else "corrupt_stream"
    return Bad(reason, f"line {e.line} (byte {e.offset})",
               f"compressed stream broke off ({e}); the records before line {e.line} were kept, the rest of "
               "the file is this one quarantined record")


def _lines(spec: SourceSpec, f, opts: ReadOptions, compressed: bool,
           at: tuple[int, int]) -> Iterator[Record | Bad]:
    for ln in iter_lines(f, opts.max_doc_bytes, compressed=compressed, first_line=at[0], first_offset=at[1]):
        loc = f"line {ln.number}"
        if ln.data is None:
            yield Bad("too_long", loc, f"line of {ln.size} bytes exceeds max_doc_bytes={opts.max_doc_bytes}",
                      ln.head)
            continue
        text = decode(ln.data, spec.encoding, spec.name)
        if isinstance(text, DecodeFailure):
            yield Bad(text.reason, loc, text.detail, text.excerpt)
            continue
        yield Record(ln.number, text, {"line": ln.number})


def _blocks(spec: SourceSpec, f, opts: ReadOptions, compressed: bool,
            at: tuple[int, int]) -> Iterator[Record | Bad]:
    """Blocks are runs of non-blank lines; the whole block is one record (quarantined whole if one of its
    lines does not decode, so a document is never silently shortened). A blank line resets all state, which is
    why a split file's pieces start right after one (`corpora.readers.ranges`)."""
    start = 0
    last = 0
    size = 0
    parts: list[str] = []
    failure: tuple[int, DecodeFailure] | None = None
    over = False
    head = b""

    def flush() -> Record | Bad:
        loc = f"line {start}"
        if over:
            return Bad("too_long", loc, f"block of lines {start}-{last} ({size} bytes) exceeds "
                       f"max_doc_bytes={opts.max_doc_bytes}", head)
        if failure is not None:
            line, fail = failure
            return Bad(fail.reason, loc, f"block of lines {start}-{last}: line {line}: {fail.detail}",
                       fail.excerpt)
        return Record(start, "\n".join(parts), {"line": start})

    for ln in iter_lines(f, opts.max_doc_bytes, compressed=compressed, first_line=at[0], first_offset=at[1]):
        if ln.data is not None and not ln.data.strip():
            if start:
                yield flush()
                start, size, parts, failure, over = 0, 0, [], None, False
            continue
        if not start:
            start, head = ln.number, ln.head
        last = ln.number
        size += ln.size
        if over or ln.data is None or size > opts.max_doc_bytes:
            over, parts = True, []
            continue
        if failure is not None:
            continue
        text = decode(ln.data, spec.encoding, spec.name)
        if isinstance(text, DecodeFailure):
            failure, parts = (ln.number, text), []
            continue
        parts.append(text)
    if start:
        yield flush()


def _whole(spec: SourceSpec, f, opts: ReadOptions, compressed: bool) -> Iterator[Record | Bad]:
    parts: list[bytes] = []
    size = 0
    head = b""
    errors = STREAM_ERRORS if compressed else ()
    while True:
        try:
            chunk = f.read(CHUNK)
        except errors as e:
            reason = "truncated_stream" if isinstance(e, EOFError) else "corrupt_stream"
            yield Bad(reason, f"byte {size}", f"compressed stream broke off ({type(e).__name__}: "
                      f"{e}); the file is one document, so all of it is quarantined", head)
            return
        if not chunk:
            break
        if not head:
            head = chunk[:EXCERPT_BYTES]
        size += len(chunk)
        if size <= opts.max_doc_bytes + len(BOM):
            parts.append(chunk)
        else:
            parts = []
    if size == 0:
        return
    if size > opts.max_doc_bytes + len(BOM):
        yield Bad("too_long", "file", f"file of {size} bytes exceeds max_doc_bytes={opts.max_doc_bytes}",
                  head)
        return
    data = b"".join(parts)
    if data.startswith(BOM):
        data = data[len(BOM):]
        if not data:
            return
    text = decode(data, spec.encoding, spec.name)
    if isinstance(text, DecodeFailure):
        yield Bad(text.reason, f"byte {text.position}", text.detail, text.excerpt)
        return
    yield Record(0, text.replace("\r\n", "\n"), {})
