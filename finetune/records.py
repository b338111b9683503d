"""The leaf of the fine-tuning framework: the plain record types every other module passes around, the one
error type for unusable files, and the readers that turn files into records with file and line in every error.

Why a leaf: `finetune.data` (finding and splitting data), `finetune.tasks.base` (what a task is) and
`finetune.registry` (which tasks exist) all need these, and each of them needs some of the others; with the
shared vocabulary here, the imports run one way only: `records` <- `tasks.base` <- `tasks.*`, `records` <- `data`,
`records` <- `registry` (which names task classes by import string and reads their `entry`). This module imports
nothing from the project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Example = dict[str, Any]  # always has "guid"; the rest is task-specific
Feature = dict[str, Any]  # model inputs + "labels" + "example_index"; keys starting with "_" never reach the model


class DataError(ValueError):
    """A data or predictions file that cannot be used; the message names the file, the record and the problem."""


@dataclass(frozen=True)
class Column:
    """One column of the results table: a metric key of the task, the column title its suite's README uses, and
    the published dev scores of that README by model (`finetune.tasks.base.klue_published`: KLUE's "Baseline
    Scores", KLUE-benchmark/KLUE README.md @ 0106de0; `finetune.tasks.jglue.jglue_published`: JGLUE's dev table).
    A column with no published scores (a value we report beside an official one) shows "–" in published rows."""

    metric: str
    title: str
    published: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskEntry:
    """What reports and `--task-list` need to know about a task: each task class declares its own as `entry`,
    beside the metrics it computes (`finetune.tasks.<task>`); `finetune.registry` reads it from there."""

    title: str
    metrics: tuple[str, ...]  # KLUE-baseline metric keys, in report order
    main_metric: str  # the one that selects the checkpoint (KLUE-baseline's --metric_key)
    columns: tuple[Column, ...] = ()  # results-table columns, in table order


def require(rec: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """A field of a record with the right type, or a `DataError` that says which record and what is wrong."""
    if not isinstance(rec, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    if key not in rec:
        guid = rec.get("guid")
        raise DataError(f"{where}{f' (guid {guid})' if guid else ''}: missing field {key!r}")
    value = rec[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise DataError(f"{where}: field {key!r} should be {' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    return value


def load_json(path: Path) -> Any:
    """A JSON file, or a `DataError` naming the file and, for a syntax error, its line and column."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e})") from e
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e


def read_head_file(directory: Path, name: str, fmt: str, version: int, what: str) -> dict[str, Any]:
    """The JSON that describes a custom head's checkpoint (DP's parser.json, DST's tracker.json), checked for its
    format and version: a folder of another kind fails with a message naming the file, not a KeyError later."""
    d = Path(directory)
    try:
        meta: dict[str, Any] = json.loads((d / name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{d}: no {name}: not a {what} checkpoint") from None
    if meta.get("format") != fmt or meta.get("version") != version:
        raise ValueError(f"{d / name}: format {meta.get('format')!r} version {meta.get('version')!r}, "
                         f"expected {fmt!r} version {version}")
    return meta


def load_json_list(path: Path) -> list:
    """An official KLUE JSON file (one list of records), with the line and column of a syntax error."""
    data = load_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    return data


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSON-lines file; errors name the line."""
    path = Path(path)
    out = []
    try:
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    out.append((n, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise DataError(f"{path}:{n}: invalid JSON ({e.msg} at column {e.colno})") from e
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e})") from e
    return out


def read_records(path: Path) -> list[tuple[str, Any]]:
    """(where, record) for every record of a data file that is either one JSON list or JSON lines, so task
    readers name each record the same way whatever the layout: `"PATH: record I"` in a list (as
    `Task.read_file` does for KLUE), `"PATH:LINE"` in JSON lines.

    Why both: JGLUE's JSTS, JNLI and JCommonsenseQA files are JSON *lines* although they end in `.json`
    (yahoojapan/JGLUE `datasets/*-v1.3/*.json`), while a converted copy may be a list. The first non-blank
    character decides: `[` is a list, anything else is read line by line (a syntax error names the line). A
    file without any record is a `DataError`: it is never a task with zero examples."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as f:
            head = f.read(4096).lstrip()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e})") from e
    out: list[tuple[str, Any]]
    if head.startswith("["):
        out = [(f"{path}: record {i}", rec) for i, rec in enumerate(load_json_list(path))]
    else:
        out = [(f"{path}:{line}", rec) for line, rec in read_jsonl(path)]
    if not out:
        raise DataError(f"{path}: no records (expected a JSON list or one JSON object per line)")
    return out


@dataclass
class TsvSentence:
    """One sentence of an official KLUE TSV file (NER, DP): its `## guid<TAB>text` header and its data rows,
    each with the line number it came from, so every later error can name the line."""

    guid: str
    text: str
    header_line: int
    rows: list[list[str]]
    lines: list[int]


def read_tsv_sentences(path: Path, n_columns: int) -> list[TsvSentence]:
    """The sentences of an official KLUE TSV file (`klue-ner-v1.1_*.tsv`, `klue-dp-v1.1_*.tsv`).

    Layout of those files: a few `## ...` comment lines at the top (separators, column names), then one block
    per sentence, blocks separated by one blank line. A block is `## GUID<TAB>SENTENCE` followed by one
    tab-separated row of `n_columns` fields per unit (a character for NER, an eojeol for DP). Within a block the
    last `##` line is the sentence header and earlier ones are file comments, which is how KLUE-baseline reads
    them too (`klue_ner.py` keeps the last `##` line of a block; `klue_dp.py` takes the `##` lines with two
    tab-separated fields). A data row is split on tabs only: NER's space character is the row `" <TAB>O"`, so
    rows are never stripped. A block without a header, a header without rows, or a row with the wrong number of
    fields is a `DataError` naming the file and line.
    """
    path = Path(path)
    try:
        raw = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e})") from e
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[TsvSentence] = []
    header: tuple[int, str] | None = None  # (line number, text) of the last `##` line of the current block
    current: TsvSentence | None = None

    def close(n: int) -> None:
        nonlocal header, current
        if current is None and header is not None and _is_sentence_header(header[1]):
            raise DataError(f"{path}:{header[0]}: sentence header without any data rows before line {n}")
        if current is not None:
            out.append(current)
        header, current = None, None

    for n, line in enumerate(lines, 1):
        line = line.removesuffix("\r")
        if line == "":
            close(n)
            continue
        if line.startswith("##"):
            if current is not None:
                raise DataError(f"{path}:{n}: a '##' line inside a sentence (a blank line must end the sentence "
                                f"that starts at line {current.header_line})")
            header = (n, line)
            continue
        if current is None:
            if header is None or not _is_sentence_header(header[1]):
                raise DataError(f"{path}:{n}: a data row before any '## GUID<TAB>SENTENCE' header")
            guid, _, text = header[1][2:].partition("\t")
            current = TsvSentence(guid=guid.strip(), text=text, header_line=header[0], rows=[], lines=[])
        fields = line.split("\t")
        if len(fields) != n_columns:
            raise DataError(f"{path}:{n}: expected {n_columns} tab-separated fields, got {len(fields)}: {line!r}")
        current.rows.append(fields)
        current.lines.append(n)
    close(len(lines) + 1)
    if not out:
        raise DataError(f"{path}: no sentences (expected '## GUID<TAB>SENTENCE' blocks)")
    return out


def _is_sentence_header(line: str) -> bool:
    """`## GUID<TAB>...` with a guid that has no spaces; the comment lines at the top of the official files
    (`## 컬럼명 : CHAR<TAB>NE_TAG`) have a tab too, but spaces before it."""
    guid, tab, _ = line[2:].partition("\t")
    guid = guid.strip()
    return bool(tab) and bool(guid) and not any(c.isspace() for c in guid)
