"""Fidelity and efficiency of an exported (MeCab-free) tokenizer on evaluation texts.

Per eojeol (whitespace-separated word of the normalized text), with special tokens left out:
- `morpheme_aligned`: share of eojeols all of whose token boundaries fall on MeCab morpheme boundaries (as
  `tokenizer/mecab.py` cuts them, i.e. including the cuts around punctuation and placeholders that any
  BERT-style tokenizer makes). An eojeol kept whole counts as aligned.
- `tokens_per_eojeol`, `tokens_per_char` (characters without whitespace): efficiency; fewer is shorter input.
- `unk_rate`: [UNK] tokens / tokens; `eojeols_with_unk`: share of eojeols with at least one [UNK].
- `vocab_coverage`: share of the learned (non-reserved) vocabulary that occurs at least once on the texts.

Texts come from KLUE dev files read by `read_texts` (no datasets/pandas needed for these small files):
NLI / STS json (premise+hypothesis, sentence1+sentence2), YNAT json (title), RE json (sentence),
KorQuAD/SQuAD json (contexts and questions), NER / DP tsv (the sentence of each `## id<TAB>sentence` header
line, entity tags `<text:TAG>` removed), anything else: one text per non-empty line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

METRICS = ("morpheme_aligned", "tokens_per_eojeol", "tokens_per_char", "unk_rate", "eojeols_with_unk",
           "vocab_coverage")
_TSV_HEADER = re.compile(r"^## \S+\t(.+)$")  # "## klue-ner-v1_dev_00000-wikitree<TAB>sentence"
_NER_TAG = re.compile(r"<([^<>:]+):[A-Z]{2}>")
_JSON_FIELDS = ("premise", "hypothesis", "sentence1", "sentence2", "title", "sentence")


def read_texts(path: str | Path, limit: int | None = None) -> list[str]:
    """Texts of one evaluation file (see module docstring for the formats)."""
    path = Path(path)
    out: list[str] = []
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not valid JSON (line {e.lineno}): {e.msg}") from e
        out = list(_json_texts(data, path))
    elif path.suffix == ".tsv":
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _TSV_HEADER.match(line)
            if m:
                out.append(_NER_TAG.sub(r"\1", m.group(1)))
    else:
        out = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if not out:
        raise ValueError(f"{path}: no texts found (supported: KLUE json/tsv dev files, or one text per line)")
    return out[:limit] if limit else out


def _json_texts(data: Any, path: Path) -> Iterator[str]:
    if isinstance(data, dict) and "data" in data:  # SQuAD / KorQuAD
        for art in data["data"]:
            for para in art.get("paragraphs", []):
                yield para["context"]
                for qa in para.get("qas", []):
                    yield qa["question"]
        return
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of records or a SQuAD-style object")
    for i, rec in enumerate(data):
        fields = [rec[f] for f in _JSON_FIELDS if isinstance(rec, dict) and isinstance(rec.get(f), str)]
        if not fields:
            raise ValueError(f"{path}: record {i} has none of the text fields {_JSON_FIELDS}")
        yield from fields


def evaluate(tokenizer_dir: str | Path, texts: Iterable[str], batch_size: int = 1024) -> dict[str, Any]:
    """The metrics of one exported tokenizer (loaded with AutoTokenizer, as a user would) on `texts`."""
    from transformers import AutoTokenizer

    from tokenizer.mecab import Pretokenizer, has_no_isolated, normalize_line, unit_starts

    hf = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    backend = hf.backend_tokenizer
    vocab = hf.get_vocab()
    reserved = set(hf.all_special_tokens) | set(hf.get_added_vocab())
    unk_id = hf.unk_token_id
    # Added tokens are whole tokens; those without punctuation cannot be protected (and are rare in Korean text).
    pt = Pretokenizer("mecab", protected=[t for t in hf.get_added_vocab() if t and not has_no_isolated(t)])
    counts = dict(eojeols=0, chars=0, tokens=0, unk=0, eojeols_unk=0, aligned=0)
    used: set[int] = set()

    def flush(batch: list[str]) -> None:
        for e, enc in zip(batch, backend.encode_batch(batch, add_special_tokens=False), strict=True):
            ids = enc.ids
            counts["eojeols"] += 1
            counts["chars"] += len(e)
            counts["tokens"] += len(ids)
            n_unk = ids.count(unk_id)
            counts["unk"] += n_unk
            counts["eojeols_unk"] += n_unk > 0
            used.update(ids)
            starts = {s for s, _ in enc.offsets[1:]} - {0}
            counts["aligned"] += starts <= unit_starts(pt.eojeol_units(e))

    batch: list[str] = []
    for text in texts:
        for line in text.split("\n"):
            batch.extend(normalize_line(line).split())
            if len(batch) >= batch_size:
                flush(batch)
                batch = []
    if batch:
        flush(batch)
    learned = [i for t, i in vocab.items() if t not in reserved]
    e, n = max(counts["eojeols"], 1), max(counts["tokens"], 1)
    return {
        "morpheme_aligned": counts["aligned"] / e,
        "tokens_per_eojeol": counts["tokens"] / e,
        "tokens_per_char": counts["tokens"] / max(counts["chars"], 1),
        "unk_rate": counts["unk"] / n,
        "eojeols_with_unk": counts["eojeols_unk"] / e,
        "vocab_coverage": len(used.intersection(learned)) / max(len(learned), 1),
        "counts": counts,
        "vocab_size": len(vocab),
    }


def report(tokenizer_dirs: dict[str, str | Path], text_files: list[str | Path],
           max_texts_per_file: int | None = None) -> dict[str, Any]:
    """Metrics of several tokenizers (label -> folder) on the same texts, side by side."""
    texts: list[str] = []
    for f in text_files:
        texts.extend(read_texts(f, max_texts_per_file))
    return {
        "texts": [str(f) for f in text_files],
        "n_texts": len(texts),
        "tokenizers": {label: evaluate(d, texts) for label, d in tokenizer_dirs.items()},
    }


def to_markdown(rep: dict[str, Any]) -> str:
    labels = list(rep["tokenizers"])
    lines = [f"Fidelity on {rep['n_texts']} texts from: {', '.join(Path(t).name for t in rep['texts'])}", "",
             "| metric | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for m in METRICS + ("vocab_size",):
        vals = [rep["tokenizers"][lab][m] for lab in labels]
        fmt = (lambda v: f"{v:.4f}") if m != "vocab_size" else str
        lines.append(f"| {m} | " + " | ".join(fmt(v) for v in vals) + " |")
    return "\n".join(lines) + "\n"
