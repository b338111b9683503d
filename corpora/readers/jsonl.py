"""JSON lines (optionally .gz/.zst): one object a line, the document text in `text_field`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpora.readers.records import Bad, DecodeFailure, ReadOptions, Record, SourceFile, Span, decode
from corpora.readers.streams import StreamError, is_compressed, iter_lines, open_binary, open_range
from corpora.readers.text import truncated
from corpora.sources import SourceSpec


def read_jsonl(spec: SourceSpec, src: SourceFile, opts: ReadOptions,
               span: Span | None = None) -> Iterator[Record | Bad]:
    """The records of a file, or of one `span` of it (a split file is never compressed)."""
    first_line, first_offset = (0, 0) if span is None else (span.before, span.start)
    with open_binary(src.path) if span is None else open_range(src.path, span.start, span.end) as f:
        try:
            for ln in iter_lines(f, opts.max_doc_bytes, compressed=is_compressed(src.path), first_line=first_line,
                                 first_offset=first_offset):
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
    if "." in field:
        try:
            text = _nested_text(obj, field.split("."))
        except _NoPath as e:
            return Bad("missing_text", loc, str(e), line)
    elif field not in obj:
        return Bad("missing_text", loc, f"no field {field!r}; fields: {', '.join(sorted(obj))[:150]}", line)
    else:
        text = obj[field]
    if text is None:
        return Bad("null_text", loc, f"field {field!r} is null", line)
    if not isinstance(text, str):
        return Bad("non_string_text", loc, f"field {field!r} is a JSON {type(text).__name__}, not a string",
                   line)
    fields = {k: obj[k] for k in spec.meta_fields if k in obj} if spec.meta_fields else None
    return Record(number, text, {"line": number}, fields)


class _NoPath(LookupError):
    """A step of a dotted `text_field` that the record lacks (its message names the step)."""


def _nested_text(obj: Any, parts: list[str], at: str = "") -> Any:
    """The strings at a dotted path (`*`: every item of a list) joined with a newline; a non-string leaf is
    returned as it is (the caller names its type); a missing step raises `_NoPath`."""
    head, rest = parts[0], parts[1:]
    here = f"{at}.{head}" if at else head
    if head == "*":
        if not isinstance(obj, list):
            raise _NoPath(f"{at or 'the record'} is a JSON {type(obj).__name__}, not a list")
        vals = [_nested_text(x, rest, f"{at}[{i}]") if rest else x for i, x in enumerate(obj)]
    else:
        if not isinstance(obj, dict) or head not in obj:
            raise _NoPath(f"no field {here!r}")
        vals = [_nested_text(obj[head], rest, here) if rest else obj[head]]
    for v in vals:
        if not isinstance(v, str):
            return v
    return "\n".join(vals)


def iter_text_records(path: str | Path, text_field: str = "text") -> Iterator[dict]:
    """The records of a plain JSON-lines file for the one-file commands (`klue pii detect`, `klue toxicity
    score`), blank lines skipped. Unlike a recipe source, which quarantines a bad line and goes on, a bad line
    stops the command: `ValueError` naming the file and line (not JSON, or no string field `text_field`)."""
    with open(path, encoding="utf-8") as fin:
        for lineno, line in enumerate(fin, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg})") from e
            if not isinstance(rec, dict) or not isinstance(rec.get(text_field), str):
                raise ValueError(f"{path}:{lineno}: record has no string field {text_field!r} (use --text-field)")
            yield rec
