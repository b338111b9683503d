"""What a reader yields: a document's text with its locator, or a damaged record for the quarantine.

Readers only parse and decode. Judging the decoded text (empty, binary, too long) happens in one place,
`corpora.stages.collect.check_text`, so every format applies the same rules.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# Reason codes of quarantined records (collect stage). `empty` is a drop, not a quarantine.
REASONS = {
    "invalid_utf8": "bytes that are not UTF-8 (and not CP949 either)",
    "legacy_encoding": "not UTF-8 but valid CP949/EUC-KR: the source probably needs `encoding: cp949`",
    "decode_error": "bytes invalid in the source's declared encoding",
    "binary_file": "the file is not text (NUL bytes / undecodable start); quarantined as one record",
    "binary": "a record whose text is mostly control characters",
    "too_long": "a record larger than max_doc_bytes (skipped while reading, never held whole)",
    "truncated_stream": "a .gz/.zst file ends early; what came before is kept, the rest is one record",
    "corrupt_stream": "a .gz/.zst file with corrupt data (or not compressed); handled like truncated_stream",
    "corrupt_file": "a Parquet/Arrow file that cannot be (fully) read; rows before the damage are kept",
    "bad_json": "a JSON line that does not parse",
    "not_object": "a JSON line whose value is not an object",
    "missing_text": "the text field is absent",
    "null_text": "the text field is null",
    "non_string_text": "the text field is not a string",
    "invalid_unicode": "text with lone surrogates (from JSON \\ud800 escapes); cannot be stored as UTF-8",
    "ragged_row": "a CSV/TSV row whose field count differs from the header",
    "bad_csv": "a CSV/TSV record the csv module rejects",
}

HANGUL = re.compile("[\uac00-\ud7a3]")


@dataclass(frozen=True)
class SourceFile:
    """One unit of reading: a file, or (hf_dataset) a saved dataset folder. `rel` is relative to the source
    root, with forward slashes; it goes into ids and provenance."""

    path: Path
    rel: str
    kind: Literal["file", "parquet", "arrow", "hf_disk"] = "file"


@dataclass(frozen=True)
class ReadOptions:
    max_doc_bytes: int = 10 * 2**20
    binary_ratio: float = 0.3


@dataclass(frozen=True)
class Span:
    """A piece of a split file (`corpora.readers.ranges`): bytes [start, end) holding whole lines (text,
    JSON lines) or row groups [start, end) (Parquet), with `before` lines or rows ahead of it in the file, so
    its records get the indices and line numbers the whole-file read gives them."""

    start: int
    end: int
    before: int


@dataclass(frozen=True)
class Record:
    index: int | str  # record index for the stable id (line number, row number, ...)
    text: str
    where: dict[str, Any]  # provenance locator: {"line": 3}, {"row": 5, "line": 7}, {"row": 12}
    fields: dict[str, Any] | None = None  # values of the source's meta_fields


@dataclass(frozen=True)
class Bad:
    reason: str
    location: str  # "line 12", "row 5 (line 7)", "file", ...
    detail: str
    excerpt: str | bytes = ""
    chars: int = 0  # characters of the record's text when one was decoded, else 0


@dataclass(frozen=True)
class DecodeFailure:
    reason: str
    detail: str
    position: int = 0
    excerpt: bytes = field(default=b"", repr=False)


def decode(data: bytes, encoding: str, source: str) -> str | DecodeFailure:
    """Strictly decode one record's bytes; on failure say why, and whether CP949 would have worked."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        return explain(data, encoding, e, source)


def explain(data: bytes, encoding: str, e: UnicodeDecodeError, source: str) -> DecodeFailure:
    bad = data[e.start:e.start + 4]
    where = f"byte {e.start} of the record ({bad!r}...)"
    excerpt = data[max(0, e.start - 60):e.start + 140]
    if codecs.lookup(encoding).name == "utf-8":
        try:
            alt = data.decode("cp949")
        except UnicodeDecodeError:
            alt = None
        if alt is not None and HANGUL.search(alt):
            return DecodeFailure(
                "legacy_encoding",
                f"not valid UTF-8 at {where}, but the record decodes as CP949/EUC-KR Korean; if the file is "
                f"in that encoding, set `encoding: cp949` on source {source!r}",
                e.start, excerpt)
        return DecodeFailure("invalid_utf8", f"not valid UTF-8 at {where}: {e.reason}", e.start, excerpt)
    return DecodeFailure("decode_error", f"not valid {encoding} at {where}: {e.reason}", e.start, excerpt)
