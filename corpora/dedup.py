"""Exact and near-duplicate removal: normalized-text hashes and MinHash-LSH over character n-grams.

Why numpy + xxhash and not `datasketch`: datasketch hashes each shingle with a Python-level sha1 call and
its LSH index keeps every key in Python dicts; here the n-gram hashes of a whole document come from a few
vectorized numpy operations over its code points (a polynomial rolling hash, then a 64-bit mixer), and the
banding is a sort per band. No extra dependency, and the parameter choice (bands x rows for a Jaccard
threshold) is the same false-positive/false-negative area minimization datasketch uses.

Survivor = first occurrence in (shard order, row order): the smallest document key of each connected component
of the duplicate graph, so the result does not depend on the number of workers or of hash partitions. The global
step never holds the corpus: each shard's hashes are written sorted, then one task per (band, hash range) merges
the slices of every shard's file in that range and emits duplicate edges, and the components are computed over
the edges alone.

Candidate pairs are verified (`verified_run_edges`) before they become edges: a band collision is evidence, not
proof, and at 1 GB three pairs at a 5-gram Jaccard of 0.47-0.58 collided in a band by chance (docs/scaling.md).
The check compares b-bit minwise hashes (the lowest 8 bits of each signature slot, Li & König 2010), which cost
128 bytes a document on disk, the size of its band hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np
import xxhash


@cache
def _bmp_alnum() -> np.ndarray:
    """`str.isalnum` of every code point of the Basic Multilingual Plane (64 KB, ~13 ms to build per process)."""
    return np.array([chr(c).isalnum() for c in range(0x10000)])


def exact_key(text: str) -> int:
    r"""64-bit hash of the text with case, whitespace and punctuation ignored: of its lower-cased alphanumerics
    (UTF-32). One text's `exact_keys`."""
    return exact_keys([text])[0]


def exact_keys(texts: list[str]) -> list[int]:
    r"""`exact_key` of each text: a 64-bit hash of its lower-cased alphanumerics (UTF-32), so that case, whitespace
    and punctuation are ignored.

    `str.isalnum` is exactly what `re.sub(r"[\W_]+", "", ...)` keeps (sre's Unicode `\w` is `isalnum` or `_`). It
    is applied by a table lookup over the code points (numpy) rather than a Python call per character (19 against
    65 µs per document of the 0.1 GB scale corpus, issue 49), once over the texts joined: on documents of a few
    hundred characters the numpy calls of one text cost more than their work (0.54 of the time per document on the
    shared corpus; docs/scaling.md, "The scale corpus against real text"). A text beyond the BMP takes the
    per-character path, which hashes the same bytes. Only the equality of keys matters (which documents are exact
    duplicates), so the UTF-32 bytes (dedup version 2; UTF-8 before) change no output."""
    lows = [t.lower() for t in texts]
    cp = np.frombuffer("".join(lows).encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum(np.fromiter(map(len, lows), dtype=np.int64, count=len(lows)))
    beyond = cp > 0xFFFF
    keep = _bmp_alnum()[np.where(beyond, 0, cp)]  # code point 0 is not alphanumeric
    kept_ends = np.concatenate([[0], np.cumsum(keep)])[ends]  # alphanumerics up to each text's end
    kept = memoryview(cp[keep].tobytes())
    big_ends = np.concatenate([[0], np.cumsum(beyond)])[ends].tolist() if beyond.any() else None
    keys = []
    start = 0
    for i, end in enumerate(kept_ends.tolist()):
        if big_ends is not None and big_ends[i] > (big_ends[i - 1] if i else 0):
            keys.append(xxhash.xxh3_64_intdigest("".join(filter(str.isalnum, lows[i])).encode("utf-32-le")))
        else:
            keys.append(xxhash.xxh3_64_intdigest(kept[4 * start : 4 * end]))
        start = end
    return keys


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer (wrapping uint64 arithmetic): spreads polynomial hashes over 64 bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def shingle_hashes(text: str, n: int) -> np.ndarray:
    """32-bit hashes of every character n-gram of the text (whitespace runs collapsed to one space)."""
    return shingle_hashes_many([text], n)[0]


def shingle_hashes_many(texts: list[str], n: int) -> list[np.ndarray]:
    """`shingle_hashes` of each text, computed in one pass over the texts joined (the windows that straddle two
    texts are computed and dropped): the dozen numpy calls per text cost more than their arithmetic on texts of a
    few hundred characters, so a batch of 256 takes 0.3 of the time of one call per text (issue 49). The values
    are those of one text alone (tests compare them)."""
    # `str.split()` and `strip()` use the whitespace of sre's Unicode `\s` (Py_UNICODE_ISSPACE): the same string as
    # `re.sub(r"\s+", " ", text.strip())` at a third of its cost; a text shorter than n is one shingle, padded
    # with code point 0
    ts = [" ".join(t.split()) for t in texts]
    ts = [t + "\0" * (n - len(t)) if len(t) < n else t for t in ts]
    cp = np.frombuffer("".join(ts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    m = len(cp) - n + 1
    h = np.zeros(m, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)  # FNV prime: any odd 64-bit constant works before the mixer
    with np.errstate(over="ignore"):
        for j in range(n):
            h *= mult
            h += cp[j : j + m]
        h = _mix64(h) >> np.uint64(32)
    out = []
    start = 0
    for t in ts:
        out.append(h[start : start + len(t) - n + 1])
        start += len(t)
    return out


@cache
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of the hash family x -> (a*x + b) mod 2^32, a odd: one pseudo-permutation per signature slot."""
    rng = np.random.RandomState(seed % (1 << 32))
    a = (rng.randint(0, 1 << 32, size=num_perm, dtype=np.uint64) | np.uint64(1)).astype(np.uint32)
    b = rng.randint(0, 1 << 32, size=num_perm, dtype=np.uint64).astype(np.uint32)
    return a, b


def minhash(hashes: np.ndarray, num_perm: int, seed: int, chunk: int = 8192) -> np.ndarray:
    """MinHash signature (uint32[num_perm]) of a set of 32-bit shingle hashes.

    Why mod 2^32 and not datasketch's mod (2^61 - 1): wrapping uint32 multiply-add is 3.5x faster in numpy
    (no 64-bit modulo), and the shingle hashes are already mixed, so the estimate stays unbiased (measured:
    mean error -0.01, sd 0.034 at 128 slots, the sd the binomial bound predicts). The products are laid out
    (slot, shingle), so each slot's minimum is a reduction over contiguous memory (0.77 of the cost of the
    (shingle, slot) layout on this corpus's documents); `chunk` shingles at a time bound the temporary array.
    """
    a, b = permutations(num_perm, seed)
    h = hashes.astype(np.uint32)
    sig = np.full(num_perm, 0xFFFFFFFF, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for s in range(0, len(h), chunk):
            v = np.multiply.outer(a, h[s : s + chunk])
            v += b[:, None]
            np.minimum(sig, v.min(axis=1), out=sig)
    return sig


def minhash_many(hashes: list[np.ndarray], num_perm: int, seed: int, chunk: int = 16384) -> np.ndarray:
    """`minhash` of each set, as the rows of one (sets, num_perm) uint32 matrix, several sets in one numpy pass:
    their shingles side by side, each slot's minimum per set by `np.minimum.reduceat` over the set's columns. A
    short document has a hundred shingles, where the dozen numpy calls of one `minhash` cost more than their
    arithmetic: on the shared corpus (207 bytes a document) they were about half of dedup's time (a profile;
    issue 49, "The scale corpus against real text"). A group holds at most `chunk` shingles (a (num_perm, chunk)
    uint32 temporary: 8 MB at 128 slots; 16,384 was the fastest of 1,024-65,536 on both corpora); a larger set goes
    alone through `minhash`. The minima are of the same values, so the signatures are those of `minhash` (tests).
    One matrix, not an array per set, so that the band hashes and b-bit signatures of a batch are taken from it in
    a few calls too (`band_hashes_many`, `bbit_signature`)."""
    a, b = permutations(num_perm, seed)
    out = np.empty((len(hashes), num_perm), dtype=np.uint32)
    group: list[int] = []
    size = 0

    def flush() -> None:
        h = np.concatenate([hashes[i] for i in group]).astype(np.uint32)
        starts = np.cumsum([0] + [len(hashes[i]) for i in group[:-1]])
        with np.errstate(over="ignore"):
            v = np.multiply.outer(a, h)
            v += b[:, None]
        out[group] = np.minimum.reduceat(v, starts, axis=1).T  # (num_perm, sets) -> a row per set

    for i, h in enumerate(hashes):
        if len(h) == 0 or len(h) > chunk:  # reduceat needs a non-empty segment; a large set bounds its own memory
            out[i] = minhash(h, num_perm, seed)
            continue
        if size + len(h) > chunk:
            flush()
            group, size = [], 0
        group.append(i)
        size += len(h)
    if group:
        flush()
    return out


def band_hashes(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit hash per LSH band (band index mixed in, so equal rows in different bands never collide): the
    xxh3 of the band's `rows` slots (their uint32 bytes), seeded with the band's index. One signature's
    `band_hashes_many`."""
    return band_hashes_many(sig[None, :], bands, rows)[0]


def band_hashes_many(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """`band_hashes` of each row of `sigs` (sets x slots, uint32), as a (sets, bands) uint64 matrix.

    xxh3 has no vectorized form in the `xxhash` package, so it is one call per (set, band); but on slices of one
    bytes object of the whole matrix instead of a numpy slice and `tobytes` per band, and with no array per set
    (those were ~60 % of this step's time on the shared corpus's short documents; issue 49). The bytes hashed are
    the band's slots in memory order, as before, so the hashes are the same (tests)."""
    n = len(sigs)
    width = 4 * rows  # bytes of one band
    step = width * bands  # bytes of one set's bands
    buf = memoryview(np.ascontiguousarray(sigs[:, : bands * rows], dtype=np.uint32).tobytes())
    h = xxhash.xxh3_64_intdigest
    flat = np.fromiter((h(buf[o + i * width : o + (i + 1) * width], seed=i)
                        for o in range(0, n * step, step) for i in range(bands)), dtype=np.uint64, count=n * bands)
    return flat.reshape(n, bands)


# b-bit minwise hashing (Li & König, "b-Bit Minwise Hashing", WWW 2010): the lowest b bits of each slot. Eight bits
# make a document's verification signature 128 bytes at 128 slots, the size of its band files beside it.
BBITS = 8


def bbit_signature(sig: np.ndarray, b: int = BBITS) -> np.ndarray:
    """The lowest `b` bits (b <= 8) of each MinHash slot, as uint8: the signature the verification reads (of one
    signature, or of each row of a matrix of them)."""
    return (sig & np.uint32((1 << b) - 1)).astype(np.uint8)


def bbit_jaccard(x: np.ndarray, y: np.ndarray, b: int = BBITS) -> np.ndarray:
    """Estimated Jaccard from two b-bit signatures (the last axis; broadcasts, so one member is checked against
    several leaders at once): with E the share of equal slots, J = (E - 2^-b) / (1 - 2^-b).

    Li & König's estimator for sets that are small against the hash space (their r1, r2 -> 0 limit): two
    different minima agree in their low b bits with probability 2^-b, which the correction removes. Its standard
    error at 128 slots is about that of the full 32-bit estimate (0.035 at J = 0.8), so pairs far below the
    threshold, the LSH false positives, are rejected; pairs near it are decided as by a coin, as the LSH S-curve
    already decides them. The band that made two documents candidates has all its rows equal, which lifts the
    estimate slightly (toward keeping an edge: version 1's behaviour)."""
    e = (x == y).mean(axis=-1)
    c = 2.0 ** -b
    return (e - c) / (1 - c)


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


# --- the global step, range-partitioned (datatrove's MinhashDedupBuckets design) -----------------------------
# A document is named by its key `shard << 32 | row`: ordering keys is (shard, row) order, so "the smallest key of
# a cluster" is its first occurrence, and a key is known inside a shard's task without global offsets.

ROW_BITS = 32
HASH_SPACE = 1 << 64


def doc_keys(shard: int, rows: np.ndarray) -> np.ndarray:
    return (np.uint64(shard) << np.uint64(ROW_BITS)) | rows.astype(np.uint64)


def sorted_columns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of `values` (n,) or (n, B): the values sorted (B, n) and the rows they came from (B, n), ties
    in row order. One shard's file for the partitioned merge."""
    v = (values[:, None] if values.ndim == 1 else values).T
    order = np.argsort(v, axis=1, kind="stable")
    return np.take_along_axis(v, order, axis=1), order.astype(np.uint32)


def hash_ranges(partitions: int) -> list[tuple[int, int]]:
    """`partitions` contiguous ranges [lo, hi) covering the uint64 hash space."""
    bounds = [HASH_SPACE * i // partitions for i in range(partitions + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _run_members(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted hashes `h`: (index of its run's first element, index) of every element that is not the first
    of its run of equal hashes, in input order (so grouped by run)."""
    if len(h) < 2:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    new_run = np.concatenate([[True], h[1:] != h[:-1]])
    run_first = np.flatnonzero(new_run)
    run_of = np.cumsum(new_run) - 1
    members = np.flatnonzero(~new_run)
    return run_first[run_of[members]], members


def run_edges(h: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For hashes `h` with keys `k`, sorted by (hash, key): (first key of each run of equal hashes, member) for
    every other member, i.e. each run as a star around its smallest key."""
    lead, members = _run_members(h)
    return k[lead], k[members]


def gather_rows(keys: np.ndarray, per_shard: Mapping[int, np.ndarray]) -> np.ndarray:
    """Rows `keys` (sorted) of per-shard matrices (shard index -> (rows, width), typically memory-mapped, so only
    the rows asked for are read), stacked in key order."""
    shard = keys >> np.uint64(ROW_BITS)
    rows = (keys & np.uint64((1 << ROW_BITS) - 1)).astype(np.intp)
    cut = np.flatnonzero(np.diff(shard)) + 1
    parts = [np.asarray(per_shard[int(shard[g[0]])][rows[g]]) for g in np.split(np.arange(len(keys)), cut)
             if len(g)]
    return np.concatenate(parts)


def verified_run_edges(h: np.ndarray, k: np.ndarray, signatures: Mapping[int, np.ndarray], threshold: float,
                       b: int = BBITS) -> tuple[np.ndarray, np.ndarray, int]:
    """`run_edges` with each candidate pair verified: an edge only where the b-bit estimate of its Jaccard
    (`bbit_jaccard`, from `signatures`: shard index -> (rows, num_perm) uint8) is at least `threshold`. Returns
    (leaders, members, rejected): `rejected` counts the run members left with no edge, i.e. today's candidate
    edges (run_edges's) that verification removed without a replacement.

    A run's star cannot simply lose its failed spokes: in a run [a, b, c] where a is unrelated and b ~ c, both
    spokes fail, yet b and c are duplicates. So each run is clustered by leaders, deterministically: its members
    in key order, each joins the first leader (in the order they became leaders) it verifies against, or becomes
    a leader; edges are leader - member. The first key is the first leader, so every member is first compared to
    it in one vectorized step over all runs (a run is usually a pair: that is the whole work); only those that
    fail it go through the loop, run by run, each compared to the run's other leaders at once. Bound: at most
    members x leaders comparisons of num_perm bytes per run (n(n-1)/2 for a run of n documents no two of which
    verify; a templated run of thousands of true duplicates has one leader, so n - 1), and memory of one run's
    signatures. The result depends only on the run's keys and signatures, not on how the hash space is
    partitioned or on the worker count."""
    lead, members = _run_members(h)
    if not len(members):
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64), 0
    keys, inv = np.unique(np.concatenate([k[lead], k[members]]), return_inverse=True)
    sig = gather_rows(keys, signatures)
    li, mi = inv[: len(lead)], inv[len(lead):]
    ok = bbit_jaccard(sig[li], sig[mi], b) >= threshold
    firsts, others = [k[lead[ok]]], [k[members[ok]]]
    failed = np.flatnonzero(~ok)
    rejected = 0
    if len(failed):
        cut = np.flatnonzero(np.diff(lead[failed])) + 1  # members are grouped by run: split where the run changes
        for group in np.split(failed, cut):
            leaders = np.empty(len(group), dtype=np.intp)  # rows of `sig`: the run's leaders after its first key
            n_leaders = 0
            got_l, got_m = [], []
            for j in group.tolist():
                m = mi[j]
                if n_leaders:
                    hit = np.flatnonzero(bbit_jaccard(sig[leaders[:n_leaders]], sig[m], b) >= threshold)
                    if len(hit):
                        got_l.append(keys[leaders[hit[0]]])
                        got_m.append(keys[m])
                        continue
                leaders[n_leaders] = m
                n_leaders += 1
            rejected += n_leaders
            firsts.append(np.array(got_l, dtype=np.uint64))
            others.append(np.array(got_m, dtype=np.uint64))
    return np.concatenate(firsts), np.concatenate(others), rejected


def partition_runs(shards: list[tuple[int, np.ndarray, np.ndarray]], lo: int, hi: int,
                   exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The hashes in [lo, hi) of one band and their keys, sorted by (hash, key): `shards` holds (shard index,
    sorted hashes, their rows) per shard, typically memory-mapped, so only the slices in range are read; keys in
    the sorted array `exclude` (exact duplicates, which take no part in near dedup) are left out. A run of equal
    hashes is never split between two ranges."""
    lo_u = np.uint64(lo)
    hs, ks = [], []
    for shard, hashes, rows in shards:
        a = int(np.searchsorted(hashes, lo_u, side="left"))
        b = len(hashes) if hi >= HASH_SPACE else int(np.searchsorted(hashes, np.uint64(hi), side="left"))
        if a == b:
            continue
        h = np.asarray(hashes[a:b])
        k = doc_keys(shard, np.asarray(rows[a:b]))
        if exclude is not None and len(exclude):
            pos = np.searchsorted(exclude, k)
            keep = (pos >= len(exclude)) | (exclude[np.minimum(pos, len(exclude) - 1)] != k)
            h, k = h[keep], k[keep]
        hs.append(h)
        ks.append(k)
    if not hs:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    h, k = np.concatenate(hs), np.concatenate(ks)
    order = np.lexsort((k, h))
    return h[order], k[order]


def component_roots(first: np.ndarray, member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Connected components of the duplicate graph (scipy's, on the documents that have an edge only: memory
    grows with the duplicates, not the corpus): (node keys, the smallest key of each node's component)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if not len(first):
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    nodes, inv = np.unique(np.concatenate([first, member]), return_inverse=True)
    m = len(first)
    graph = coo_matrix((np.ones(m, dtype=np.int8), (inv[:m], inv[m:])), shape=(len(nodes), len(nodes)))
    n_comp, labels = connected_components(graph, directed=False)
    root = np.full(n_comp, np.iinfo(np.uint64).max, dtype=np.uint64)
    np.minimum.at(root, labels, nodes)
    return nodes, root[labels]
