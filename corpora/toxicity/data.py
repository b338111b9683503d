"""BEEP! files: news comments labelled hate / offensive / none (Moon, Cho and Lee, "BEEP! Korean Corpus of Online
News Comments for Toxic Speech Detection", SocialNLP 2020, arXiv 2005.12503; CC BY-SA 4.0).

The shared copy (`$KLUE_DATA_DIR/toxicity/beep_{train,dev}.tsv`) is the release's tab-separated layout: a header
`comments, contain_gender_bias, bias, hate`, then one comment a line, no quoting (a comment never holds a tab or a
newline). Only `comments` (the text) and `hate` (the label) are read; other columns may be absent. Parsed by
hand rather than with `csv`, because the file has no quoting convention to follow and a damaged row must stop the
run with its file and line (a `csv` reader would silently join lines at a stray quote).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from corpora.lang import get_language

LABELS = ("hate", "offensive", "none")  # BEEP!'s `hate` column: hate speech, offensive but not hate, neither
TOXIC = ("hate", "offensive")  # the binary view: toxic = hate ∪ offensive
TEXT_COLUMN = "comments"
LABEL_COLUMN = "hate"


@dataclass(frozen=True)
class Example:
    text: str  # NFC, as the corpus stages normalize Korean
    label: str  # one of LABELS
    line: int  # 1-based line in its file (the header is line 1)


def split_path(data: Path, split: str) -> Path:
    """`data` itself when it is a file, else `data/beep_<split>.tsv` (the shared layout)."""
    return data if data.is_file() else data / f"beep_{split}.tsv"


def read_beep(path: Path) -> list[Example]:
    """Every labelled comment of a BEEP! TSV. A malformed row is a `ValueError` naming the file and line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise ValueError(f"{path}: empty file; expected a header with columns {TEXT_COLUMN!r} and {LABEL_COLUMN!r}")
    header = _decode(path, 1, lines[0]).split("\t")
    missing = [c for c in (TEXT_COLUMN, LABEL_COLUMN) if c not in header]
    if missing:
        raise ValueError(f"{path}:1: header {header} lacks column(s) {missing}; expected a BEEP! TSV "
                         f"(comments, contain_gender_bias, bias, hate)")
    ti, li = header.index(TEXT_COLUMN), header.index(LABEL_COLUMN)
    out = []
    for lineno, b in enumerate(lines[1:], 2):
        line = _decode(path, lineno, b).removesuffix("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise ValueError(f"{path}:{lineno}: expected {len(header)} tab-separated fields ({', '.join(header)}), "
                             f"got {len(fields)}: {line[:80]!r}")
        text, label = unicodedata.normalize("NFC", fields[ti]).strip(), fields[li].strip()
        if label not in LABELS:
            raise ValueError(f"{path}:{lineno}: label {label!r} in column {LABEL_COLUMN!r} is not one of {LABELS}")
        if not text:
            raise ValueError(f"{path}:{lineno}: empty comment")
        out.append(Example(text, label, lineno))
    if not out:
        raise ValueError(f"{path}: no labelled rows after the header")
    return out


def read_background(path: Path, n: int, *, language: str, min_chars: int = 10) -> list[str]:
    """The first `n` sentences of at least `min_chars` characters of a UTF-8 text file, in file order (NFC), to
    train on as `none` (`model.train`). Read line by line: only what is needed is read."""
    lang = get_language(language)
    out: list[str] = []
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    with f:
        for lineno, b in enumerate(f, 1):
            line = unicodedata.normalize("NFC", _decode(Path(path), lineno, b.rstrip(b"\r\n")))
            for s in lang.split_sentences(line):
                if len(s) >= min_chars:
                    out.append(s)
                    if len(out) == n:
                        return out
    if not out:
        raise ValueError(f"{path}: no sentence of at least {min_chars} characters")
    return out


def label_counts(examples: list[Example]) -> dict[str, int]:
    c = Counter(e.label for e in examples)
    return {lab: c.get(lab, 0) for lab in LABELS}


def _decode(path: Path, lineno: int, b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}:{lineno}: not UTF-8 ({e.reason} at byte {e.start} of the line)") from None
