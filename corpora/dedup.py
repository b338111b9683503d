"""Exact and near-duplicate removal: normalized-text hashes and MinHash-LSH over character n-grams.

Why numpy + xxhash and not `datasketch`: datasketch hashes each shingle with a Python-level sha1 call and
its LSH index keeps every key in Python dicts; here the n-gram hashes of a whole document come from a few
vectorized numpy operations over its code points (a polynomial rolling hash, then a 64-bit mixer), and the
banding is a sort per band. No extra dependency, and the parameter choice (bands x rows for a Jaccard
threshold) is the same false-positive/false-negative area minimization datasketch uses.

Survivor = first occurrence in (shard order, row order): union-find whose root is always the smallest global
index, so the result does not depend on the number of workers.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import xxhash

_NON_WORD = re.compile(r"[\W_]+")
_SPACE = re.compile(r"\s+")


def exact_key(text: str) -> int:
    """64-bit hash of the text with case, whitespace and punctuation ignored."""
    return xxhash.xxh3_64_intdigest(_NON_WORD.sub("", text.lower()).encode())


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer (wrapping uint64 arithmetic): spreads polynomial hashes over 64 bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def shingle_hashes(text: str, n: int) -> np.ndarray:
    """32-bit hashes of every character n-gram of the text (whitespace runs collapsed to one space)."""
    t = _SPACE.sub(" ", text.strip())
    cp = np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if len(cp) < n:
        cp = np.concatenate([cp, np.zeros(n - len(cp), dtype=np.uint64)])  # a short text is one padded shingle
    m = len(cp) - n + 1
    h = np.zeros(m, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)  # FNV prime: any odd 64-bit constant works before the mixer
    with np.errstate(over="ignore"):
        for j in range(n):
            h = h * mult + cp[j : j + m]
        return _mix64(h) >> np.uint64(32)


@cache
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of the hash family x -> (a*x + b) mod 2^32, a odd: one pseudo-permutation per signature slot."""
    rng = np.random.RandomState(seed % (1 << 32))
    a = (rng.randint(0, 1 << 32, size=num_perm, dtype=np.uint64) | np.uint64(1)).astype(np.uint32)
    b = rng.randint(0, 1 << 32, size=num_perm, dtype=np.uint64).astype(np.uint32)
    return a, b


def minhash(hashes: np.ndarray, num_perm: int, seed: int, chunk: int = 4096) -> np.ndarray:
    """MinHash signature (uint32[num_perm]) of a set of 32-bit shingle hashes.

    Why mod 2^32 and not datasketch's mod (2^61 - 1): wrapping uint32 multiply-add is 3.5x faster in numpy
    (no 64-bit modulo), and the shingle hashes are already mixed, so the estimate stays unbiased (measured:
    mean error -0.01, sd 0.034 at 128 slots, the sd the binomial bound predicts).
    """
    a, b = permutations(num_perm, seed)
    h = hashes.astype(np.uint32)
    sig = np.full(num_perm, 0xFFFFFFFF, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for s in range(0, len(h), chunk):
            v = h[s : s + chunk, None] * a
            v += b
            np.minimum(sig, v.min(axis=0), out=sig)
    return sig


def band_hashes(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit hash per LSH band (band index mixed in, so equal rows in different bands never collide)."""
    parts = sig[: bands * rows].reshape(bands, rows)
    return np.array([xxhash.xxh3_64_intdigest(parts[i].tobytes(), seed=i) for i in range(bands)], dtype=np.uint64)


@cache
def optimal_bands(threshold: float, num_perm: int, fp_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) minimizing the weighted false-positive + false-negative area of the LSH S-curve
    around the Jaccard threshold (the method of datasketch's `_optimal_param`; the integrals by the
    trapezoid rule on a fine grid rather than scipy.integrate.quad, whose import alone takes ~1.5 s)."""
    best, best_err = (1, num_perm), float("inf")
    lo = np.linspace(0.0, threshold, 1001)
    hi = np.linspace(threshold, 1.0, 1001)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = np.trapezoid(1 - (1 - lo**r) ** b, lo)
            fn = np.trapezoid((1 - hi**r) ** b, hi)
            err = float(fp_weight * fp + (1 - fp_weight) * fn)
            if err < best_err:
                best, best_err = (b, r), err
    return best


def doc_signature(text: str, ngram: int, num_perm: int, bands: int, rows: int, seed: int) -> np.ndarray:
    return band_hashes(minhash(shingle_hashes(text, ngram), num_perm, seed), bands, rows)


class UnionFind:
    """Union-find over 0..n-1 whose root is always the smallest member (= first occurrence)."""

    def __init__(self, n: int):
        self.parent = np.arange(n, dtype=np.int64)

    def find(self, x: int) -> int:
        p = self.parent
        root = x
        while p[root] != root:
            root = int(p[root])
        while p[x] != root:  # path compression
            p[x], x = root, int(p[x])
        return root

    def union(self, x: int, y: int) -> None:
        rx, ry = self.find(x), self.find(y)
        if rx != ry:
            lo, hi = (rx, ry) if rx < ry else (ry, rx)
            self.parent[hi] = lo


def near_duplicate_roots(bands: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """For docs × bands hashes, the cluster root (smallest index) of each doc; only rows where `candidates`
    is True take part (exact duplicates are already resolved)."""
    n = len(bands)
    uf = UnionFind(n)
    idx = np.flatnonzero(candidates)
    for j in range(bands.shape[1] if n else 0):
        col = bands[idx, j]
        order = np.argsort(col, kind="stable")
        sc = col[order]
        if len(sc) < 2:
            continue
        same = sc[1:] == sc[:-1]
        if not same.any():
            continue
        # runs of equal band hashes: union every member with the run's first (smallest index, stable sort)
        starts = np.flatnonzero(np.concatenate([[True], ~same]))
        run_id = np.cumsum(np.concatenate([[True], ~same])) - 1
        members = np.flatnonzero(np.concatenate([[False], same]))
        firsts = idx[order[starts[run_id[members]]]]
        for a, b in zip(firsts.tolist(), idx[order[members]].tolist(), strict=True):
            uf.union(a, b)
    roots = np.empty(n, dtype=np.int64)
    for i in range(n):
        roots[i] = uf.find(i)
    return roots


def exact_roots(keys: np.ndarray) -> np.ndarray:
    """Index of the first document with the same exact key, for every document."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first[inverse]
