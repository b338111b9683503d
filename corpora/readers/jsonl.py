"""JSON lines (optionally .gz/.zst): one object a line, the document text in `text_field`."""

from __future__ import annotations

import json
from collections.abc import Iterator

from corpora.readers.records import Bad, DecodeFailure, ReadOptions, Record, SourceFile, decode
from corpora.readers.streams import StreamError, is_compressed, iter_lines, open_binary
from corpora.readers.text import truncated
from corpora.sources import SourceSpec


def read_jsonl(spec: SourceSpec, src: SourceFile, opts: ReadOptions) -> Iterator[Record | Bad]:
    with open_binary(src.path) as f:
        try:
            for ln in iter_lines(f, opts.max_doc_bytes, compressed=is_compressed(src.path)):
                yield _record(spec, ln.number, ln.data, ln.size, ln.head, opts)
        except StreamError as e:
            yield truncated(e)


def _record(spec: SourceSpec, number: int, data: bytes | None, size: int, head: bytes,
            opts: ReadOptions) -> Record | Bad:
    loc = f"line {number}"
    if data is None:
        return Bad("too_long", loc, f"line of {size} bytes exceeds max_doc_bytes={opts.max_doc_bytes}", head)
    line = decode(data, spec.encoding, spec.name)
    if isinstance(line, DecodeFailure):
        return Bad(line.reason, loc, line.detail, line.excerpt)
    if not line.strip():
        return Record(number, "", {"line": number})  # a blank line: counted, then dropped as empty
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        return Bad("bad_json", loc, f"{e.msg} (column {e.colno})", line)
    if not isinstance(obj, dict):
        return Bad("not_object", loc, f"a JSON {type(obj).__name__} where an object was expected", line)
    field = spec.text_field
    if field not in obj:
        return Bad("missing_text", loc, f"no field {field!r}; fields: {', '.join(sorted(obj))[:150]}", line)
    text = obj[field]
    if text is None:
        return Bad("null_text", loc, f"field {field!r} is null", line)
    if not isinstance(text, str):
        return Bad("non_string_text", loc, f"field {field!r} is a JSON {type(text).__name__}, not a string",
                   line)
    fields = {k: obj[k] for k in spec.meta_fields if k in obj} if spec.meta_fields else None
    return Record(number, text, {"line": number}, fields)
