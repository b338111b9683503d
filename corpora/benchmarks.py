"""Evaluation texts of benchmark files, for decontamination: which strings a model will be tested on.

The format is detected from the KLUE file layouts (or given): NLI json (premise, hypothesis), STS json
(sentence1, sentence2), YNAT json (title), RE json (sentence), NER tsv (character-per-line -> sentences),
DP tsv (word forms -> sentences), SQuAD/KorQuAD/KLUE-MRC json (context, question), WoS json (dialogue turns),
and plain jsonl with a `text` field; JGLUE's files too (yahoojapan/JGLUE v1.3): JSTS and JNLI are JSON *lines*
in a .json file (sentence1, sentence2), JCommonsenseQA JSON lines (question, choice0..4), JSQuAD SQuAD json
whose contexts start with "<title> [SEP] " (the prefix is not text a model reads as the passage: dropped). A file
that fits none is an error naming the file and what was found.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

BenchmarkFormat = Literal["auto", "nli", "sts", "ynat", "re", "ner", "dp", "squad", "wos", "jsonl", "mcqa"]

_JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "nli": ("premise", "hypothesis"),
    "sts": ("sentence1", "sentence2"),
    "re": ("sentence",),
    "ynat": ("title",),
    "mcqa": ("question", "choice0", "choice1", "choice2", "choice3", "choice4"),  # JCommonsenseQA
}


class BenchmarkFormatError(ValueError):
    pass


def detect_format(path: Path) -> str:
    """Guess the layout from the file's first bytes / first record."""
    path = Path(path)
    if path.suffix == ".tsv":
        head = _head_comments(path)
        if "NE_TAG" in head:
            return "ner"
        if "DEPREL" in head or "WORD_FORM" in head:
            return "dp"
        raise BenchmarkFormatError(f"{path}: a .tsv without the KLUE NER (NE_TAG) or DP (DEPREL) header comments")
    if path.suffix == ".jsonl":
        return "jsonl"
    data = _load_json(path)
    return _json_format(path, data)


def iter_texts(path: Path, fmt: str = "auto") -> Iterator[str]:
    """Every evaluation text of a benchmark file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file not found: {path}")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "ner":
        yield from _ner_sentences(path)
    elif fmt == "dp":
        yield from _dp_sentences(path)
    elif fmt == "jsonl":
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if line.strip():
                    try:
                        yield json.loads(line)["text"]
                    except (json.JSONDecodeError, KeyError, TypeError) as e:
                        raise BenchmarkFormatError(f"{path}:{i}: expected a JSON object with 'text' ({e})") from e
    else:
        data = _load_json(path)
        if fmt in _JSON_FIELDS:
            for rec in _records(path, data):
                for k in _JSON_FIELDS[fmt]:
                    if isinstance(rec.get(k), str):
                        yield rec[k]
        elif fmt == "squad":
            for art in data["data"]:
                prefix = f"{art.get('title', '')} [SEP] "  # JSQuAD's
                for para in art.get("paragraphs", []):
                    ctx = para["context"]
                    yield ctx[len(prefix):] if ctx.startswith(prefix) else ctx
                    for qa in para.get("qas", []):
                        yield qa["question"]
        elif fmt == "wos":
            for dia in _records(path, data):
                for turn in dia.get("dialogue", []):
                    if isinstance(turn.get("text"), str):
                        yield turn["text"]
        else:
            raise BenchmarkFormatError(f"{path}: unknown benchmark format {fmt!r}")


def _head_comments(path: Path, max_lines: int = 20) -> str:
    lines = []
    with open(path, encoding="utf-8") as f:
        for _ in range(max_lines):
            line = f.readline()
            if not line.startswith("##"):
                break
            lines.append(line)
    return "".join(lines)


def _load_json(path: Path) -> Any:
    """A JSON document, or the list of records of a JSON-lines file named .json (JGLUE's)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if not (e.msg == "Extra data" and e.lineno > 1):
            raise BenchmarkFormatError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from e
    records = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise BenchmarkFormatError(f"{path}:{i}: JSON lines, but this line is not JSON ({e.msg})") from e
    return records


def _records(path: Path, data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise BenchmarkFormatError(f"{path}: expected a JSON list of records")
    return [r for r in data if isinstance(r, dict)]


def _json_format(path: Path, data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("data"), list) and data["data"] and \
            isinstance(data["data"][0], dict) and "paragraphs" in data["data"][0]:
        return "squad"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        keys = set(data[0])
        if "dialogue" in keys:
            return "wos"
        for fmt, fields in _JSON_FIELDS.items():  # order matters: RE records have `sentence` only
            if set(fields) <= keys:
                return fmt
        raise BenchmarkFormatError(f"{path}: JSON records with keys {sorted(keys)} match no known benchmark layout")
    kind = type(data).__name__
    hint = " (this looks like an ontology or label list, not evaluation texts)" if isinstance(data, dict) else ""
    raise BenchmarkFormatError(f"{path}: JSON {kind} matches no known benchmark layout{hint}")


def _ner_sentences(path: Path) -> Iterator[str]:
    """KLUE-NER: one character per line (CHAR<TAB>TAG), sentences separated by blank lines."""
    chars: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("##"):
                continue
            line = line.rstrip("\n")
            if not line.strip("\t"):
                if line == "" and chars:
                    yield "".join(chars).strip()
                    chars = []
                elif line:  # a space character's line can be "\t" + tag only after rstrip; keep the space
                    chars.append(" ")
                continue
            chars.append(line.split("\t", 1)[0] or " ")
    if chars:
        yield "".join(chars).strip()


def _dp_sentences(path: Path) -> Iterator[str]:
    """KLUE-DP: '## id<TAB>sentence' headers, then one word per line; the header holds the raw sentence."""
    words: list[str] = []
    header: str | None = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                parts = line[3:].split("\t", 1)
                if len(parts) == 2 and parts[0].startswith("klue-dp"):
                    header = parts[1]
                continue
            if not line.strip():
                if header or words:
                    yield header if header else " ".join(words)
                header, words = None, []
                continue
            cols = line.split("\t")
            if len(cols) > 1:
                words.append(cols[1])
    if header or words:
        yield header if header else " ".join(words)
