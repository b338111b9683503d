"""Fidelity and efficiency of an exported (MeCab-free) tokenizer on evaluation texts.

Per eojeol (whitespace-separated word of the normalized text), with special tokens left out:
- `morpheme_aligned`: share of eojeols all of whose token boundaries fall on MeCab morpheme boundaries (as
  `tokenizer/mecab.py` cuts them, i.e. including the cuts around punctuation and placeholders that any
  BERT-style tokenizer makes). An eojeol kept whole counts as aligned.
- `tokens_per_eojeol`, `tokens_per_char` (characters without whitespace): efficiency; fewer is shorter input.
- `unk_rate`: [UNK] tokens / tokens; `eojeols_with_unk`: share of eojeols with at least one [UNK].
- `vocab_coverage`: share of the learned (non-reserved) vocabulary that occurs at least once on the texts.

Texts come from benchmark files read by `read_texts` (no datasets/pandas needed for these small files): json in
the layouts `corpora.benchmarks` reads (KLUE NLI / STS / YNAT / RE / MRC / WoS, JGLUE's JSON lines), NER / DP tsv (the sentence of each `## id<TAB>sentence` header
line, entity tags `<text:TAG>` removed), anything else: one text per non-empty line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpora.benchmarks import iter_texts
from corpora.lang import get_language
from tokenizer.mecab import Pretokenizer, has_no_isolated, normalize_line, unit_starts

METRICS = ("morpheme_aligned", "tokens_per_eojeol", "tokens_per_char", "unk_rate", "eojeols_with_unk",
           "vocab_coverage")
_TSV_HEADER = re.compile(r"^## \S+\t(.+)$")  # "## klue-ner-v1_dev_00000-wikitree<TAB>sentence"
_NER_TAG = re.compile(r"<([^<>:]+):[A-Z]{2}>")


def read_texts(path: str | Path, limit: int | None = None) -> list[str]:
    """Texts of one evaluation file (see module docstring for the formats)."""
    path = Path(path)
    out: list[str] = []
    if path.suffix == ".json":  # the benchmark layouts, read as decontamination reads them (JGLUE's too)

        out = list(iter_texts(path))
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


def evaluate(tokenizer_dir: str | Path, texts: Iterable[str], batch_size: int = 1024, *,
             language: str) -> dict[str, Any]:
    """The metrics of one exported tokenizer (loaded with AutoTokenizer, as a user would) on `texts`.

    For a language without spaces (Japanese) a whitespace chunk is a whole clause or line, so the unit of the
    per-word metrics is the morpheme instead (`_unspaced_counts`): `morpheme_aligned` is the share of
    morphemes with no token boundary inside (a token may still span several, as a Korean eojeol kept whole),
    `tokens_per_eojeol` is tokens per morpheme, `eojeols_with_unk` the share of morphemes where an [UNK]
    starts."""
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    backend = hf.backend_tokenizer
    vocab = hf.get_vocab()
    reserved = set(hf.all_special_tokens) | set(hf.get_added_vocab())
    unk_id = hf.unk_token_id
    # Added tokens are whole tokens; those without punctuation cannot be protected (and are rare in Korean text).
    pt = Pretokenizer("mecab", protected=[t for t in hf.get_added_vocab() if t and not has_no_isolated(t)],
                      language=language)
    spaced = get_language(language).whitespace_words
    counts = dict(eojeols=0, chars=0, tokens=0, unk=0, eojeols_unk=0, aligned=0)
    used: set[int] = set()

    def flush(batch: list[str]) -> None:
        if not spaced:
            _unspaced_counts(batch, backend.encode_batch(batch, add_special_tokens=False), pt, unk_id, counts, used)
            return
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


def _unspaced_counts(chunks: list[str], encodings: list[Any], pt: Any, unk_id: int, counts: dict[str, int],
                     used: set[int]) -> None:
    """`evaluate`'s counts with the morpheme as the unit (a language without spaces)."""
    import bisect

    for chunk, enc in zip(chunks, encodings, strict=True):
        bounds = [0, *sorted(unit_starts(pt.eojeol_units(chunk))), len(chunk)]
        # token starts inside the chunk (byte-fallback pieces of one character share its offsets)
        starts = sorted({a for a, _ in enc.offsets} - {0})
        unk_at = sorted(a for (a, _), i in zip(enc.offsets, enc.ids, strict=True) if i == unk_id)
        for a, b in zip(bounds, bounds[1:], strict=False):
            counts["eojeols"] += 1
            i = bisect.bisect_right(starts, a)
            counts["aligned"] += not (i < len(starts) and starts[i] < b)
            j = bisect.bisect_left(unk_at, a)
            counts["eojeols_unk"] += j < len(unk_at) and unk_at[j] < b
        counts["chars"] += len(chunk)
        counts["tokens"] += len(enc.ids)
        counts["unk"] += len(unk_at)
        used.update(enc.ids)


def report(tokenizer_dirs: dict[str, str | Path], text_files: list[str | Path],
           max_texts_per_file: int | None = None, *, language: str) -> dict[str, Any]:
    """Metrics of several tokenizers (label -> folder) on the same texts, side by side."""
    texts: list[str] = []
    for f in text_files:
        texts.extend(read_texts(f, max_texts_per_file))
    return {
        "texts": [str(f) for f in text_files],
        "n_texts": len(texts),
        "tokenizers": {label: evaluate(d, texts, language=language) for label, d in tokenizer_dirs.items()},
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
