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
import json
import operator
import os
import re
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from pathlib import Path
from typing import Any, cast

import numpy as np
import xxhash

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
        """One document's tokens (with its [SEP])."""
        self.add_docs(ids, words, np.array([len(ids)], dtype=np.int64))

    def add_docs(self, ids: np.ndarray, words: np.ndarray | None, doc_lens: np.ndarray) -> None:
        """Several documents' tokens back to back, `doc_lens` tokens each (with their [SEP]s)."""
        self.f_tok.write(ids.astype(self.dtype, copy=False).tobytes())
        if self.f_words is not None:
            assert words is not None
            self.f_words.write(words.astype(np.uint8, copy=False).tobytes())
        self.starts.extend((self.n_tokens + np.cumsum(doc_lens)).tolist())
        self.n_tokens += len(ids)

    def close(self) -> None:
        f = self._files.enter_context(io.atomic_file(self.paths["docs"], "wb"))
        np.save(f, np.asarray(self.starts, dtype=np.int64), allow_pickle=False)
        self._files.close()


_WHITESPACE: np.ndarray | None = None


def _whitespace_table() -> np.ndarray:
    """bool per code point: `str.isspace()` (the test of `word_starts`), for the whole of Unicode at once (built
    once per process, ~0.1 s; 29 code points are whitespace)."""
    global _WHITESPACE
    if _WHITESPACE is None:
        t = np.zeros(0x110000, dtype=bool)
        t[[c for c in range(0x110000) if chr(c).isspace()]] = True
        _WHITESPACE = t
    return _WHITESPACE


def batch_word_starts(texts: list[str], lens: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """`word_starts` of a whole tokenizer batch at once, without a Python loop per token: `starts`/`ends` are
    the character offsets of every token of the batch, document after document (`lens` tokens each).

    The same rule on one concatenated text: offsets shifted by each document's start, a prefix count of
    whitespace characters (so "whitespace in text[prev_end:s]" is one subtraction), `prev_end` a running maximum
    of the ends (an earlier document's ends never exceed this document's start, so the maximum stays inside
    the document for every token but its first, which starts a word anyway)."""
    n = len(starts)
    out = np.zeros(n, dtype=np.uint8)
    if n == 0:
        return out
    char_lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    base = np.repeat(np.cumsum(char_lens) - char_lens, lens)
    s, e = starts + base, ends + base
    cp = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    cum = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(_whitespace_table()[cp], out=cum[1:])
    prev_end = np.empty(n, dtype=np.int64)
    prev_end[0] = 0
    np.maximum.accumulate(e[:-1], out=prev_end[1:])
    out[cum[s] > cum[prev_end]] = 1
    firsts = (np.cumsum(lens) - lens)[lens > 0]
    out[firsts] = 1
    return out


# Python whitespace that the Rust tokenizer does not treat as a word break: BertNormalizer's `clean_text` deletes
# these control characters (VT, FF, the information separators, NEL), so "a\x0bb" is one word to it but two
# `str.split()` chunks. A batch with one of them is encoded whole (`_encode_whole`).
_UNSAFE_SPACE = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
_ID = np.dtype("<i4")  # token ids in the chunk cache


class BatchEncoder:
    """Token ids and eojeol starts of a batch of texts, with the stage's tokenizer, as flat numpy arrays.

    Why a cache of whole eojeols in front of the Rust tokenizer (hand-written; `tokenizers` has no such cache):
    its cost is ~4 us per eojeol (normalization with alignment tracking, pre-tokenization, WordPiece with a
    string allocation per candidate piece), while a corpus repeats its eojeols over and over (the 0.1 GB
    scale corpus: 3.5 M eojeols per 36 MB shard, 0.37 M distinct; Zipf's law says the same of any corpus). So
    each `str.split()` chunk of a text (an eojeol) is encoded once, with the other new chunks of the batch in
    one `encode(..., is_pretokenized=True)` call (`word_ids` says which chunk each token came from), and
    looked up afterwards.

    Exact, not approximate: with BertNormalizer (per-character: control characters deleted, whitespace made a
    space, CJK padded; no lower-casing or accent stripping), BertPreTokenizer (splits at whitespace first) and a
    WordPiece/BPE model (each pre-token on its own), and added tokens that hold no whitespace and strip
    nothing, a text's tokens are its whitespace-separated chunks' tokens in order, and every `str.isspace()`
    character is a break to the tokenizer too except `_UNSAFE_SPACE` (so such a batch is encoded whole). And an
    eojeol start (`word_starts`) is then exactly the first token of each chunk that has tokens: whitespace lies
    between it and every earlier token, and none lies inside a chunk. Any other tokenizer (Metaspace's ▁ on
    the first word only, lower-casing, ...) is encoded whole, as are batches with `_UNSAFE_SPACE`. Checked
    (issue 49) against transformers' `tok(text)` + `word_starts`: every `str.isspace()` character between and
    around words, CJK, placeholders, emoji, zero-width characters, and the 0.1 GB scale corpus's shards (the
    same bytes; `bench/stage_floors.py` compares them).

    The cache holds at most `max_entries` chunks (~200 bytes each: ~100 MB full); when a batch's new chunks overflow
    it, it is emptied and refills with the chunks in use (outputs never depend on it, only speed).
    """

    def __init__(self, tok: Any, word_info: bool, max_entries: int = 1 << 19):
        from tokenizers import Tokenizer

        # a private copy: transformers sets truncation/padding on its backend per call
        self.backend = Tokenizer.from_str(tok.backend_tokenizer.to_str())
        self.backend.no_truncation()
        self.backend.no_padding()
        self.word_info = word_info
        self.max_entries = max_entries
        self.chunked = chunk_safe(json.loads(self.backend.to_str()))
        self.cache: dict[str, bytes] = {}  # chunk -> its token ids, little-endian int32

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """(ids of every token, document after document; their eojeol-start flags, or None without word_info;
        tokens per document)."""
        if self.chunked and not any(_UNSAFE_SPACE.search(t) for t in texts):
            return self._encode_chunks(texts)
        return self._encode_whole(texts)

    def _encode_chunks(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        chunk_lists = [t.split() for t in texts]
        flat = list(chain.from_iterable(chunk_lists))
        cache = self.cache
        entries = list(map(cache.get, flat))
        if None in entries:  # new chunks: encode them all in one call (C-level loops only, no Python per chunk)
            new = list(dict.fromkeys(compress(flat, map(operator.is_, entries, repeat(None)))))
            if len(cache) + len(new) > self.max_entries:
                cache.clear()
                new = list(dict.fromkeys(flat))
            enc = self.backend.encode(new, is_pretokenized=True, add_special_tokens=False)
            buf = np.asarray(enc.ids, dtype=_ID).tobytes()
            ends = np.cumsum(np.bincount(np.asarray(enc.word_ids, dtype=np.int64), minlength=len(new)))
            ends *= _ID.itemsize
            starts = np.concatenate([[0], ends[:-1]])
            cache.update(zip(new, map(buf.__getitem__, map(slice, starts.tolist(), ends.tolist())), strict=True))
            entries = list(map(cache.__getitem__, flat))
        # each entry is its chunk's ids as raw bytes: the batch's ids are one join, no Python int per token
        found = cast(list[bytes], entries)  # every chunk is in the cache by now
        ids = np.frombuffer(b"".join(found), dtype=_ID)
        per_chunk = np.fromiter(map(len, found), dtype=np.int64, count=len(found)) // _ID.itemsize
        cum = np.zeros(len(entries) + 1, dtype=np.int64)
        np.cumsum(per_chunk, out=cum[1:])
        chunk_end = np.cumsum(np.fromiter(map(len, chunk_lists), dtype=np.int64, count=len(texts)))
        n_chunks = np.diff(chunk_end, prepend=0)
        lens = cum[chunk_end] - cum[chunk_end - n_chunks]
        words = None
        if self.word_info:
            words = np.zeros(len(ids), dtype=np.uint8)
            words[cum[:-1][per_chunk > 0]] = 1
        return ids, words, lens

    def _encode_whole(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        encs = self.backend.encode_batch(texts, add_special_tokens=False)
        lens = np.fromiter(map(len, encs), dtype=np.int64, count=len(encs))
        total = int(lens.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encs), dtype=np.int64, count=total)
        words = None
        if self.word_info:
            off = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encs)),
                              dtype=np.int64, count=2 * total).reshape(total, 2)
            words = batch_word_starts(texts, lens, off[:, 0], off[:, 1])
        return ids, words, lens


def chunk_safe(cfg: dict[str, Any]) -> bool:
    """Whether a tokenizer (its tokenizer.json) tokenizes a text as its whitespace-separated chunks one by one
    (the conditions in `BatchEncoder`)."""
    norm, pre, model = cfg.get("normalizer") or {}, cfg.get("pre_tokenizer") or {}, cfg.get("model") or {}
    if norm.get("type") != "BertNormalizer" or norm.get("lowercase") or norm.get("strip_accents"):
        return False
    if pre.get("type") != "BertPreTokenizer" or model.get("type") not in ("WordPiece", "BPE"):
        return False
    return all(not (t.get("lstrip") or t.get("rstrip") or t.get("single_word"))
               and not any(ch.isspace() for ch in t.get("content", "")) for t in cfg.get("added_tokens") or [])


def encode_shard(task: ShardTask) -> ShardResult:
    """Tokenize one document shard into its train/eval token files. Top-level so a process pool can run it.

    A batch of documents at a time: Arrow columns of the shard (no `Doc` per document), ids and eojeol starts
    of the whole batch as numpy arrays (`BatchEncoder`), and one write per split per batch. The same bytes as
    transformers' `tok(text)` one document at a time, with `word_starts` on its offsets."""
    import pyarrow.parquet as pq

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tok = load_tokenizer(task.tokenizer_dir)
    encode = _encoder(task.tokenizer_dir, task.word_info)
    sep = tok.sep_token_id
    dtype = token_dtype(len(tok))
    stem = task.shard.name.removesuffix(".parquet")
    writers = {s: _SplitWriter(task.out_dir / s, stem, dtype, task.word_info) for s in SPLITS}
    funnel = Funnel()
    by_source: dict[str, Funnel] = {}
    docs = dict.fromkeys(SPLITS, 0)
    try:
        for rb in pq.ParquetFile(task.shard).iter_batches(batch_size=_BATCH, columns=["id", "text", "source"]):
            ids_col, texts, sources = (rb.column(c).to_pylist() for c in ("id", "text", "source"))
            # documents are longer than model_max_length on purpose (they get packed): no truncation here
            ids, words, lens = encode(texts)
            held = np.zeros(len(texts), dtype=bool)
            for j, (doc_id, text, source) in enumerate(zip(ids_col, texts, sources, strict=True)):
                src = by_source.setdefault(source, Funnel())
                if not lens[j]:
                    funnel.drop(EMPTY_REASON, len(text))
                    src.drop(EMPTY_REASON, len(text))
                    continue
                funnel.keep(len(text))
                src.keep(len(text))
                held[j] = is_held_out(doc_id, task.seed, task.eval_fraction)
            kept = lens > 0
            ends = np.cumsum(lens)[kept]  # each kept document's [SEP] goes after its last token
            ids = np.insert(ids, ends, sep)
            if words is not None:
                words = np.insert(words, ends, np.uint8(1))
            doc_lens = lens[kept] + 1
            in_eval = np.repeat(held[kept], doc_lens)
            for split, doc_mask, tok_mask in (("train", ~held[kept], ~in_eval), ("eval", held[kept], in_eval)):
                if doc_mask.any():
                    writers[split].add_docs(ids[tok_mask], None if words is None else words[tok_mask],
                                            doc_lens[doc_mask])
                    docs[split] += int(doc_mask.sum())
    finally:
        for w in writers.values():
            w.close()
    return ShardResult(stem, funnel, by_source, {s: writers[s].n_tokens for s in SPLITS}, docs)


_ENCODERS: dict[tuple[str, bool], BatchEncoder] = {}


def _encoder(tokenizer_dir: Path, word_info: bool) -> BatchEncoder:
    """One `BatchEncoder` per process and tokenizer, so its cache lives across the shards a worker encodes."""
    key = (str(tokenizer_dir), word_info)
    if key not in _ENCODERS:
        _ENCODERS.clear()
        _ENCODERS[key] = BatchEncoder(load_tokenizer(tokenizer_dir), word_info)
    return _ENCODERS[key]


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
