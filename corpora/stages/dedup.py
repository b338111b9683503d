"""The dedup stage: exact (normalized-text hash) and near (MinHash-LSH over character n-grams) duplicates.
Writes shards of the same names as its input, `clusters-NNNNN.jsonl` (id, reason, kept_id) and `samples.jsonl`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import Field, model_validator

from corpora.dedup import (
    ROW_BITS,
    band_hashes_many,
    bbit_signature,
    component_roots,
    exact_keys,
    hash_ranges,
    minhash_many,
    optimal_bands,
    partition_runs,
    run_edges,
    shingle_hashes_many,
    sorted_columns,
    verified_run_edges,
)
from corpora.shards import DOC_SCHEMA, ROW_GROUP, list_shards, meta_json, row_groups, write_doc_tables
from corpora.stages.common import EXCERPT, ShardReport, merge, result, shard_suffix, write_samples
from pipeline.io import JsonlWriter
from pipeline.stage import Stage, StageContext, StageParams, StageResult


class DedupParams(StageParams):
    """MinHash-LSH settings; defaults as FineWeb-2's Korean run (5-grams, 0.8 Jaccard, 128 permutations, and
    bands x rows chosen to minimise false positives plus negatives at that threshold)."""

    exact: bool = True
    near: bool = True
    ngram: int = Field(5, ge=1, le=64, description="character n-gram (shingle) size for MinHash")
    threshold: float = Field(0.8, gt=0.0, lt=1.0, description="Jaccard similarity treated as a near duplicate")
    num_perm: int = Field(128, ge=8, le=1024)
    bands: int | None = Field(None, ge=1, description="LSH bands; default: optimal for threshold and num_perm")
    rows: int | None = Field(None, ge=1)
    seed: int | None = Field(None, description="MinHash seed; default: the recipe seed")
    verify: bool = Field(True, description=(
        "keep a band collision as a near duplicate only if its b-bit MinHash estimate of the Jaccard (Li & König, "
        "WWW 2010; corpora.dedup.bbit_jaccard) reaches `threshold`: LSH alone admits pairs below it by chance "
        "(three at 0.47-0.58 in the 1 GB scale corpus, docs/scaling.md); false: unverified LSH, as datatrove "
        "and dedup version 1 (the same output)"))

    @model_validator(mode="after")
    def _bands(self) -> DedupParams:
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both bands and rows, or neither")
        if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands*rows={self.bands * self.rows} exceeds num_perm={self.num_perm}")
        return self

    def band_rows(self) -> tuple[int, int]:
        if self.bands is not None and self.rows is not None:
            return self.bands, self.rows
        return optimal_bands(self.threshold, self.num_perm)


# Documents per hash range in the global step: each (band, range) task holds about this many (hash, key) pairs,
# 16 bytes each, ~4x that while sorting: ~130 MB. The count changes no output (tests vary it), only peak memory.
PARTITION_DOCS = 2_000_000


# Documents whose shingles are hashed in one numpy pass (`shingle_hashes_many`): a few MB of code points at most.
SIGNATURE_BATCH = 256


def _files(work: Path, stem: str) -> dict[str, Path]:
    return {k: work / f"{k}-{stem}.npy" for k in ("ids", "exact", "exact_rows", "bands", "band_rows", "bbits")}


def batch_signatures(texts: list[str], params: DedupParams, bands: int, rows: int, seed: int
                     ) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Phase 1's computation for a batch of documents (at most SIGNATURE_BATCH): their exact keys, their LSH band
    hashes (docs x bands uint64; docs x 0 without `near`) and their b-bit signatures (docs x num_perm uint8 with
    `near` and `verify`, else docs x 0)."""
    keys = exact_keys(texts)
    if not params.near:
        return keys, np.zeros((len(texts), 0), np.uint64), np.zeros((len(texts), 0), np.uint8)
    sigs = minhash_many(shingle_hashes_many(texts, params.ngram), params.num_perm, seed)
    bbits = bbit_signature(sigs) if params.verify else np.zeros((len(texts), 0), np.uint8)
    return keys, band_hashes_many(sigs, bands, rows), bbits


def _dedup_signatures(task: tuple[Path, Path, DedupParams, int, int, int]) -> int:
    """Phase 1, per shard: ids, and the exact keys and each LSH band's hashes, each sorted (with their rows), and
    with `verify` the b-bit signatures (docs x num_perm uint8, in row order: phase 2 reads a candidate's row)."""
    in_path, work, params, bands, rows, seed = task
    ids: list[str] = []
    keys: list[int] = []
    sigs: list[np.ndarray] = [np.zeros((0, bands), np.uint64)]
    bbits: list[np.ndarray] = [np.zeros((0, params.num_perm if params.near and params.verify else 0), np.uint8)]
    # only the two columns it reads, as lists (a `Doc` per row was an eighth of this phase's profile on short documents)
    for rb in pq.ParquetFile(in_path).iter_batches(batch_size=SIGNATURE_BATCH, columns=["id", "text"]):
        if not rb.num_rows:
            continue
        ids += rb.column(0).to_pylist()
        k, b, v = batch_signatures(rb.column(1).to_pylist(), params, bands, rows, seed)
        keys += k
        if params.near:
            sigs.append(b)
        bbits.append(v)
    f = _files(work, shard_suffix(in_path))
    np.save(f["bbits"], np.concatenate(bbits))
    np.save(f["ids"], np.array(ids, dtype=str) if ids else np.zeros(0, dtype="U1"))
    ex, ex_rows = sorted_columns(np.array(keys, dtype=np.uint64))
    np.save(f["exact"], ex)
    np.save(f["exact_rows"], ex_rows)
    band_mat = np.concatenate(sigs) if params.near else np.zeros((len(ids), bands), dtype=np.uint64)
    bh, br = sorted_columns(band_mat)
    np.save(f["bands"], bh)
    np.save(f["band_rows"], br)
    return len(ids)


def _dedup_edges(task: tuple[list[tuple[int, str, str, str]], int, int, int, str | None, float | None, str]
                 ) -> tuple[int, int]:
    """Phase 2, per (band, hash range): duplicate edges from the slices of every shard's sorted file; with a
    `threshold`, each candidate verified against the b-bit signatures (memory-mapped: only candidates' rows are
    read). Returns (edges, candidates rejected)."""
    files, band, lo, hi, exclude_path, threshold, out = task
    shards = [(si, np.load(h, mmap_mode="r")[band], np.load(r, mmap_mode="r")[band]) for si, h, r, _ in files]
    exclude = np.load(exclude_path) if exclude_path else None
    h, k = partition_runs(shards, lo, hi, exclude)
    if threshold is None:
        first, member = run_edges(h, k)
        rejected = 0
    else:
        signatures = {si: np.load(s, mmap_mode="r") for si, _, _, s in files}
        first, member, rejected = verified_run_edges(h, k, signatures, threshold)
    np.save(out, np.stack([first, member]))
    return len(first), rejected


def _dedup_write(task: tuple[Path, Path, int, np.ndarray, np.ndarray, list[str], np.ndarray, np.ndarray]
                 ) -> ShardReport:
    """Phase 3, per shard: the survivors, and the audit of the others (sparse inputs: only the duplicates and
    the survivors that absorbed one are named).

    The survivors move as Arrow tables (a filter per record batch, `row_groups` to re-cut them as `write_docs`
    does: the same bytes), and only the duplicates and the survivors whose meta changes become Python objects:
    this phase, a `Doc` per row then `write_docs`, was a quarter of dedup's profile on the shared corpus's short
    documents (issue 49)."""
    in_path, out_dir, n, dup_rows, dup_status, dup_root_ids, root_rows, root_counts = task
    status = np.zeros(n, dtype=np.int8)
    status[dup_rows] = dup_status
    root_of = dict(zip(dup_rows.tolist(), dup_root_ids, strict=True))
    dup_counts = np.zeros(n, dtype=np.int64)
    dup_counts[root_rows] = root_counts
    rep = ShardReport()
    audit = JsonlWriter(out_dir / f"clusters-{shard_suffix(in_path)}.jsonl")
    reasons = {1: "exact_duplicate", 2: "near_duplicate"}

    def kept() -> Iterator[pa.Table]:
        start = 0
        for rb in pq.ParquetFile(in_path).iter_batches(batch_size=ROW_GROUP, columns=DOC_SCHEMA.names):
            rows = rb.num_rows
            st = status[start : start + rows]
            ids, texts, sources = rb.column(0), rb.column(1), rb.column(2)
            for j in np.flatnonzero(st).tolist():  # the duplicates, in row order
                d_id, text, src, why = ids[j].as_py(), texts[j].as_py(), sources[j].as_py(), reasons[int(st[j])]
                rep.drop(src, why, len(text))
                audit.write({"id": d_id, "source": src, "reason": why, "kept_id": root_of[start + j]})
                rep.sample(why, 5, {"id": d_id, "kept_id": root_of[start + j], "text": text[:EXCERPT]})
            keep = st == 0
            t = pa.Table.from_batches([rb]).filter(pa.array(keep))
            sizes = dup_counts[start : start + rows][keep]
            if sizes.any():  # keep the cluster size, as FineWeb-2 does, so a later stage may re-weight
                roots = np.flatnonzero(sizes)
                metas = t.column(3).combine_chunks()
                new = []
                for j in roots.tolist():
                    meta = json.loads(metas[j].as_py())
                    meta["dup_cluster_size"] = int(sizes[j]) + 1
                    new.append(meta_json(meta))
                mask = np.zeros(t.num_rows, dtype=bool)
                mask[roots] = True
                t = t.set_column(3, DOC_SCHEMA.field(3), pc.replace_with_mask(metas, pa.array(mask),
                                                                                pa.array(new, pa.string())))
            # the funnel by source: characters are code points, as `len(str)` counts them
            chars = np.asarray(pc.utf8_length(t.column(1).combine_chunks()), dtype=np.int64)
            src = t.column(2).combine_chunks().dictionary_encode()
            codes = np.asarray(src.indices)
            for k, name in enumerate(src.dictionary.to_pylist()):
                mine = codes == k
                rep.keep(name, int(chars[mine].sum()), docs=int(mine.sum()))
            yield t
            start += rows

    write_doc_tables(out_dir / in_path.name, row_groups(kept()))
    audit.close()
    return rep


class DedupStage(Stage[DedupParams]):
    """Exact (normalized-text hash) and near (MinHash-LSH over character n-grams) duplicates; the first
    occurrence in (shard, row) order survives. Phase 1: signatures per shard, written sorted (parallel); phase 2:
    one task per (band, hash range) emits duplicate edges by merging every shard's slice of that range, each
    candidate pair verified by its b-bit signatures unless `verify: false` (parallel), then connected components
    over the edges (memory grows with the duplicates, not the corpus); phase 3 writes the shards (parallel)."""

    name = "dedup"
    version = "2"  # 2: candidate pairs verified by their b-bit signatures (`verify`)
    inputs = ("filter",)
    shard_resume = True  # a rerun after a kill runs only the tasks of each phase that had not finished

    def run(self, ctx: StageContext[DedupParams]) -> StageResult:
        params = ctx.params
        shards = list_shards(ctx.inputs["filter"].path)
        bands, rows = params.band_rows()
        seed = params.seed if params.seed is not None else int(ctx.recipe.seed)
        # under the runner's journal (shard-level resume), the phases' files live beside the task records until
        # the stage is published, so a rerun after a kill finds every file a recorded task wrote
        work = ctx.journal / "work" if ctx.journal is not None else ctx.out_dir / "_work"
        work.mkdir(parents=True, exist_ok=True)
        counts = list(ctx.map(_dedup_signatures, [(p, work, params, bands, rows, seed) for p in shards],
                              desc="dedup: signatures"))
        files = [_files(work, shard_suffix(p)) for p in shards]
        ranges = hash_ranges(max(1, -(-sum(counts) // PARTITION_DOCS)))
        empty = np.zeros(0, np.uint64)

        rejected = 0

        def edges(kind: str, n_bands: int, exclude: str | None, threshold: float | None, desc: str
                  ) -> tuple[np.ndarray, np.ndarray]:
            nonlocal rejected
            shard_files = [(si, str(f[kind]), str(f["exact_rows" if kind == "exact" else "band_rows"]),
                            str(f["bbits"])) for si, f in enumerate(files)]
            tasks = [(shard_files, b, lo, hi, exclude, threshold, str(work / f"edges-{kind}-{b}-{r}.npy"))
                     for b in range(n_bands) for r, (lo, hi) in enumerate(ranges)]
            rejected += sum(int(res[1]) for res in ctx.map(_dedup_edges, tasks, desc=desc))
            e = [np.load(t[-1]) for t in tasks]
            return (np.concatenate([x[0] for x in e]), np.concatenate([x[1] for x in e])) if e else (empty, empty)

        # phase 2: exact duplicates (each run of equal keys: its first key survives), then near duplicates among
        # the rest: connected components over the (verified) band edges, the smallest key of each survives
        ex_root, ex_dup = edges("exact", 1, None, None, "dedup: exact") if params.exact else (empty, empty)
        near_dup, near_root = empty, empty
        if params.near:
            exclude = work / "exact-duplicates.npy"
            np.save(exclude, np.sort(ex_dup))
            threshold = params.threshold if params.verify else None
            nodes, roots = component_roots(*edges("bands", bands, str(exclude), threshold, "dedup: near"))
            moved = nodes != roots
            near_dup, near_root = nodes[moved], roots[moved]
        dup = np.concatenate([ex_dup, near_dup])
        dup_status = np.concatenate([np.ones(len(ex_dup), np.int8), np.full(len(near_dup), 2, np.int8)])
        dup_root = np.concatenate([ex_root, near_root])
        # ids of the survivors that absorbed a duplicate (memory: only those)
        needed, root_counts = np.unique(dup_root, return_counts=True)
        needed_ids: list[str] = []
        shard_of_needed = needed >> np.uint64(ROW_BITS)
        for si, f in enumerate(files):
            sel = needed[shard_of_needed == si] & np.uint64((1 << ROW_BITS) - 1)
            if len(sel):
                ids = np.load(f["ids"], mmap_mode="r")
                needed_ids.extend(str(ids[int(r)]) for r in sel)
        root_ids: list[str] = [needed_ids[i] for i in np.searchsorted(needed, dup_root).tolist()]
        shard_of_dup = dup >> np.uint64(ROW_BITS)
        row_mask = np.uint64((1 << ROW_BITS) - 1)
        tasks = []
        for si, p in enumerate(shards):
            d_sel = np.flatnonzero(shard_of_dup == si)
            r_sel = np.flatnonzero(shard_of_needed == si)
            tasks.append((p, ctx.out_dir, counts[si], (dup[d_sel] & row_mask).astype(np.int64), dup_status[d_sel],
                          [root_ids[i] for i in d_sel], (needed[r_sel] & row_mask).astype(np.int64),
                          root_counts[r_sel]))
        rep = merge(list(ctx.map(_dedup_write, tasks, desc="dedup: write")), 5)
        if ctx.journal is None:
            shutil.rmtree(work)
        write_samples(ctx.out_dir, rep.samples)
        meta = {"report": {"bands": bands, "rows": rows, "ngram": params.ngram, "threshold": params.threshold,
                           "num_perm": params.num_perm, "exact_duplicates": len(ex_dup),
                           "near_duplicates": len(near_dup), "clusters": len(needed), "verify": params.verify,
                           "rejected_candidates": rejected}}
        return result(rep, meta)
