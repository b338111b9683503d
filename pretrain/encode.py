"""Corpus shards -> token shards on disk: the input format of MLM pretraining.

One Parquet document shard becomes, per split (`train`, `eval`), three flat files:
  `<split>/<stem>.tokens`  the documents' token ids back to back, each document followed by `[SEP]`
                           (RoBERTa FULL-SENTENCES: the separator marks the document boundary inside a packed
                           sample), raw little-endian uint16 when the vocabulary fits, else uint32;
  `<split>/<stem>.docs.npy` int64 offsets of every document start, plus the end (n_docs + 1 entries);
  `<split>/<stem>.words`   (optional) uint8, 1 where a token starts an eojeol (whitespace-separated word), for
                           whole-word masking.
Raw arrays rather than Arrow or .pt: `numpy.memmap` reads any sample without loading a shard, and nothing
here is ever unpickled.

Eojeol starts come from the tokenizer's character offsets against the raw text (a token starts a word when
whitespace separates it from the previous token), not from `word_ids()`: the BERT pre-tokenizer splits at
punctuation, so `word_ids()` would cut "서울시는," into two words.

Held-out documents (for the evaluation loss) are chosen by a hash of (seed, document id), so the split does
not depend on shard sizes or the number of workers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from corpora.shards import Doc, iter_docs
from pipeline import io
from pipeline.stage import Funnel

SPLITS = ("train", "eval")
EMPTY_REASON = "empty_after_tokenization"
_BATCH = 256  # documents per tokenizer call: large enough for the Rust batch path, small in memory


def token_dtype(vocab_size: int) -> np.dtype:
    """uint16 when every id fits (vocab <= 65,536), else uint32."""
    return np.dtype("<u2") if vocab_size <= 1 << 16 else np.dtype("<u4")


def is_held_out(doc_id: str, seed: int, fraction: float) -> bool:
    """Deterministic per-document coin: True for about `fraction` of ids."""
    if fraction <= 0:
        return False
    h = xxhash.xxh64_intdigest(f"{seed}\x1f{doc_id}".encode())
    return (h / 2**64) < fraction


def word_starts(text: str, offsets: list[tuple[int, int]]) -> np.ndarray:
    """1 where a token begins an eojeol: the first token, or whitespace between it and the previous token."""
    out = np.zeros(len(offsets), dtype=np.uint8)
    prev_end = 0
    for i, (s, e) in enumerate(offsets):
        if i == 0 or (s > prev_end and any(c.isspace() for c in text[prev_end:s])):
            out[i] = 1
        prev_end = max(prev_end, e)
    return out


@dataclass
class ShardTask:
    """Everything one worker needs to encode one document shard (picklable)."""

    shard: Path
    out_dir: Path
    tokenizer_dir: Path
    seed: int
    eval_fraction: float
    word_info: bool


@dataclass
class ShardResult:
    stem: str
    funnel: Funnel
    by_source: dict[str, Funnel]
    tokens: dict[str, int] = field(default_factory=dict)  # split -> tokens written (incl. [SEP])
    docs: dict[str, int] = field(default_factory=dict)  # split -> documents written


_TOKENIZERS: dict[str, Any] = {}


def load_tokenizer(tokenizer_dir: Path) -> Any:
    """The stage-3 tokenizer, loaded once per process (workers are forked)."""
    key = str(tokenizer_dir)
    if key not in _TOKENIZERS:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tokenizer_dir)
        if not tok.is_fast:
            raise ValueError(f"{tokenizer_dir}: a fast tokenizer is required (character offsets for eojeols)")
        _TOKENIZERS[key] = tok
    return _TOKENIZERS[key]


class _SplitWriter:
    """Appends one split's arrays to temp files; `close` renames them into place (atomic per file)."""

    def __init__(self, folder: Path, stem: str, dtype: np.dtype, word_info: bool):
        folder.mkdir(parents=True, exist_ok=True)
        self.paths = {"tokens": folder / f"{stem}.tokens", "docs": folder / f"{stem}.docs.npy"}
        if word_info:
            self.paths["words"] = folder / f"{stem}.words"
        self._files = contextlib.ExitStack()  # one atomic file per output, renamed on close
        self.f_tok = self._files.enter_context(io.atomic_file(self.paths["tokens"], "wb"))
        self.f_words = self._files.enter_context(io.atomic_file(self.paths["words"], "wb")) if word_info else None
        self.dtype = dtype
        self.starts: list[int] = [0]
        self.n_tokens = 0

    def add(self, ids: np.ndarray, words: np.ndarray | None) -> None:
        self.f_tok.write(ids.astype(self.dtype, copy=False).tobytes())
        if self.f_words is not None:
            assert words is not None
            self.f_words.write(words.tobytes())
        self.n_tokens += len(ids)
        self.starts.append(self.n_tokens)

    def close(self) -> None:
        f = self._files.enter_context(io.atomic_file(self.paths["docs"], "wb"))
        np.save(f, np.asarray(self.starts, dtype=np.int64), allow_pickle=False)
        self._files.close()


def _batches(docs: Iterator[Doc], n: int) -> Iterator[list[Doc]]:
    batch: list[Doc] = []
    for d in docs:
        batch.append(d)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def encode_shard(task: ShardTask) -> ShardResult:
    """Tokenize one document shard into its train/eval token files. Top-level so a process pool can run it."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tok = load_tokenizer(task.tokenizer_dir)
    sep = tok.sep_token_id
    dtype = token_dtype(len(tok))
    stem = task.shard.name.removesuffix(".parquet")
    writers = {s: _SplitWriter(task.out_dir / s, stem, dtype, task.word_info) for s in SPLITS}
    funnel = Funnel()
    by_source: dict[str, Funnel] = {}
    docs = dict.fromkeys(SPLITS, 0)
    try:
        for batch in _batches(iter_docs(task.shard), _BATCH):
            enc = tok([d.text for d in batch], add_special_tokens=False,
                      return_offsets_mapping=task.word_info, return_attention_mask=False,
                      verbose=False)  # documents are longer than model_max_length on purpose: they get packed
            for j, d in enumerate(batch):
                ids = enc["input_ids"][j]
                src = by_source.setdefault(d.source, Funnel())
                if not ids:
                    funnel.drop(EMPTY_REASON, len(d.text))
                    src.drop(EMPTY_REASON, len(d.text))
                    continue
                funnel.keep(len(d.text))
                src.keep(len(d.text))
                arr = np.asarray([*ids, sep], dtype=np.int64)
                words = None
                if task.word_info:
                    words = np.append(word_starts(d.text, enc["offset_mapping"][j]), np.uint8(1))
                split = "eval" if is_held_out(d.id, task.seed, task.eval_fraction) else "train"
                writers[split].add(arr, words)
                docs[split] += 1
    finally:
        for w in writers.values():
            w.close()
    return ShardResult(stem, funnel, by_source, {s: writers[s].n_tokens for s in SPLITS}, docs)


def write_index(out_dir: Path, results: list[ShardResult], *, vocab_size: int, word_info: bool,
                special_ids: dict[str, int]) -> dict[str, Any]:
    """`index.json`: the shard list with token counts per split, in shard order; what `data.TokenStream` reads."""
    index = {
        "format": "klue-token-shards/1",
        "dtype": token_dtype(vocab_size).str,
        "vocab_size": vocab_size,
        "word_info": word_info,
        "special_ids": special_ids,
        "splits": {
            s: [{"stem": r.stem, "tokens": r.tokens[s], "docs": r.docs[s]} for r in results] for s in SPLITS
        },
    }
    io.write_json(out_dir / "index.json", index, indent=1, ensure_ascii=True)
    return index
