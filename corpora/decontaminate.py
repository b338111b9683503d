"""Benchmark decontamination: find documents that share a word n-gram with an evaluation text.

Words are the language's match words (`Language.match_words`), the same on both sides: for Korean `\\w+` runs
(eojeols without their punctuation), NFKC-normalized and case-folded, so "흘렸다." in a document matches "흘렸다"
in KLUE-DP and NFC text matches NFKC KLUE-NER; for Japanese, MeCab tokens. Benchmark texts give
all their n-grams (default n = 13, as GPT-3 and Dolma); a text shorter than n gives itself as one k-gram
when it has at least `min_words` words, and is skipped (counted) below that. N-gram hashes are xxhash word
hashes combined by a vectorized polynomial rolling hash, looked up in a sorted numpy array with a bitmask of
the benchmarks each n-gram came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xxhash

from corpora.dedup import _mix64
from corpora.lang.base import Language

_P = np.uint64(0x9E3779B97F4A7C15)
_LEN_SALT = np.uint64(0xD6E8FEB86659FD93)
_BITS_SIZE = 1 << 24
_BITS_MASK = np.uint64(_BITS_SIZE - 1)


def word_spans(text: str, lang: Language) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(uint64 hashes of the language's match words, their character spans in `text`); word by word, so
    slower than `word_hashes`: used only to locate the matches in a contaminated document."""
    pairs = lang.match_word_spans(text)
    h = xxhash.xxh3_64_intdigest
    return np.array([h(w.encode()) for w, _ in pairs], dtype=np.uint64), [span for _, span in pairs]


def word_hashes(text: str, lang: Language) -> np.ndarray:
    """Hashes of the language's match words (`Language.match_words`: normalized, without punctuation)."""
    words = lang.match_words(text)
    # C-level loops (map), not a list comprehension: 1.5x faster, the same hashes
    return np.fromiter(map(xxhash.xxh3_64_intdigest, map(str.encode, words)), dtype=np.uint64, count=len(words))


def _rolling(words: np.ndarray, lengths: Iterable[int]) -> Iterable[tuple[int, np.ndarray]]:
    """(m, keys of every m-gram) for each wanted m, built incrementally: h_{m+1}(i) = h_m(i) * P + w[i+m]."""
    want = sorted(set(lengths))
    if not want or len(words) == 0:
        return
    h = words.copy()
    with np.errstate(over="ignore"):
        for m in range(1, want[-1] + 1):
            if m > 1:
                h = h[:-1] * _P + words[m - 1 :]
            if len(h) == 0:
                return
            if m in want:
                yield m, _mix64(h + np.uint64(m) * _LEN_SALT)


@dataclass
class BenchmarkIndex:
    """Sorted n-gram keys of all benchmark texts and, per key, a bitmask of the benchmarks holding it."""

    n: int
    min_words: int
    names: list[str] = field(default_factory=list)
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    owners: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    lengths: list[int] = field(default_factory=list)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    _bits: np.ndarray | None = None  # presence bitmap on the keys' low bits: a cheap pre-filter before the search

    @classmethod
    def build(cls, benchmarks: Iterable[tuple[str, Iterable[str]]], n: int = 13, min_words: int = 8, *,
              lang: Language) -> BenchmarkIndex:
        idx = cls(n=n, min_words=min_words)
        all_keys: list[np.ndarray] = []
        all_owner: list[np.ndarray] = []
        lengths: set[int] = set()
        for b, (name, texts) in enumerate(benchmarks):
            if b >= 64:
                raise ValueError("at most 64 benchmark files per decontamination stage")
            idx.names.append(name)
            st = {"texts": 0, "ngrams": 0, "short_whole": 0, "too_short": 0}
            for text in texts:
                st["texts"] += 1
                w = word_hashes(text, lang)
                k = len(w)
                if k >= n:
                    m = n
                elif k >= min_words:
                    m = k
                    st["short_whole"] += 1
                else:
                    st["too_short"] += 1
                    continue
                for _, keys in _rolling(w, [m]):
                    all_keys.append(keys)
                    all_owner.append(np.full(len(keys), 1 << b, dtype=np.uint64))
                    st["ngrams"] += len(keys)
                lengths.add(m)
            idx.stats[name] = st
        if all_keys:
            keys = np.concatenate(all_keys)
            owner = np.concatenate(all_owner)
            order = np.argsort(keys, kind="stable")
            keys, owner = keys[order], owner[order]
            uniq, start = np.unique(keys, return_index=True)
            idx.keys = uniq
            idx.owners = np.bitwise_or.reduceat(owner, start) if len(owner) else owner
        idx.lengths = sorted(lengths)
        return idx

    def save(self, path: Path) -> None:
        np.savez(path, keys=self.keys, owners=self.owners, lengths=np.array(self.lengths, dtype=np.int64),
                 n=self.n, min_words=self.min_words)

    @classmethod
    def load(cls, path: Path, names: list[str]) -> BenchmarkIndex:
        with np.load(path) as z:
            return cls(n=int(z["n"]), min_words=int(z["min_words"]), names=list(names), keys=z["keys"],
                       owners=z["owners"], lengths=[int(x) for x in z["lengths"]])

    def matches(self, words: np.ndarray) -> tuple[int, list[tuple[int, int]]]:
        """(bitmask of benchmarks hit, [(first word index, length)] of every matching n-gram)."""
        mask = 0
        found: list[tuple[int, int]] = []
        if len(self.keys) == 0 or len(words) < self.lengths[0]:
            return 0, found
        bits = self._bit_table()
        for m, q in _rolling(words, self.lengths):
            at, keys = self._hits(q, np.flatnonzero(bits[(q & _BITS_MASK).astype(np.intp)]))
            if len(at):
                mask |= int(np.bitwise_or.reduce(self.owners[keys]))
                found.extend((int(i), m) for i in at)
        return mask, found

    def _bit_table(self) -> np.ndarray:
        """A bit per key-hash bucket: most n-grams are ruled out by one lookup before the binary search."""
        if self._bits is None:
            self._bits = np.zeros(_BITS_SIZE, dtype=bool)
            self._bits[(self.keys & _BITS_MASK).astype(np.intp)] = True
        return self._bits

    def _hits(self, q: np.ndarray, maybe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of the candidate positions `maybe` of the n-gram keys `q`, those whose key is in the index, and the
        index rows they match."""
        if len(maybe) == 0:
            return maybe, maybe
        qm = q[maybe]
        pos = np.searchsorted(self.keys, qm)
        pos[pos == len(self.keys)] = 0
        hit = self.keys[pos] == qm
        return maybe[hit], pos[hit]

    def masks(self, docs: list[np.ndarray]) -> list[int]:
        """`matches(words)[0]` of each document's word hashes, for many documents at once.

        Why: `matches` costs ~25 numpy calls per n-gram length (a benchmark index holds every length from
        `min_words` to `n`), ~0.5 ms per document whatever its size; here the calls are per batch. The documents'
        words are concatenated and rolled once: an m-gram's key depends only on its own m words, so every
        m-gram inside one document has the key `matches` gives it, and the m-grams that straddle two documents
        are left out."""
        out = np.zeros(len(docs), dtype=np.uint64)
        if len(self.keys) == 0 or not docs:
            return [0] * len(docs)
        lens = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        words = np.concatenate(docs) if int(lens.sum()) else np.zeros(0, dtype=np.uint64)
        doc_of = np.repeat(np.arange(len(docs)), lens)
        bits = self._bit_table()
        for m, q in _rolling(words, self.lengths):
            inside = doc_of[: len(q)] == doc_of[m - 1 :]  # the m-gram at i ends in the document it starts in
            at, keys = self._hits(q, np.flatnonzero(bits[(q & _BITS_MASK).astype(np.intp)] & inside))
            if len(at):
                np.bitwise_or.at(out, doc_of[at], self.owners[keys])
        return [int(x) for x in out]

    def benchmark_names(self, mask: int) -> list[str]:
        return [nm for b, nm in enumerate(self.names) if mask >> b & 1]
