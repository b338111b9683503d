"""The dedup stage: exact (normalized-text hash) and near (MinHash-LSH over character n-grams) duplicates.
Writes shards of the same names as its input, `clusters-NNNNN.jsonl` (id, reason, kept_id) and `samples.jsonl`."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from pydantic import Field, model_validator

from corpora.shards import Doc, iter_docs, list_shards, meta_json, write_docs
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

    @model_validator(mode="after")
    def _bands(self) -> DedupParams:
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both bands and rows, or neither")
        if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands*rows={self.bands * self.rows} exceeds num_perm={self.num_perm}")
        return self

    def band_rows(self) -> tuple[int, int]:
        from corpora.dedup import optimal_bands

        if self.bands is not None and self.rows is not None:
            return self.bands, self.rows
        return optimal_bands(self.threshold, self.num_perm)


def _dedup_signatures(task: tuple[Path, Path, DedupParams, int, int, int]) -> int:
    from corpora.dedup import doc_signature, exact_key

    in_path, work, params, bands, rows, seed = task
    ids: list[str] = []
    keys: list[int] = []
    sigs: list[np.ndarray] = []
    for d in iter_docs(in_path):
        ids.append(d.id)
        keys.append(exact_key(d.text))
        if params.near:
            sigs.append(doc_signature(d.text, params.ngram, params.num_perm, bands, rows, seed))
    stem = shard_suffix(in_path)
    np.save(work / f"ids-{stem}.npy", np.array(ids, dtype=str) if ids else np.zeros(0, dtype="U1"))
    np.save(work / f"keys-{stem}.npy", np.array(keys, dtype=np.uint64))
    np.save(work / f"bands-{stem}.npy", np.stack(sigs) if sigs else np.zeros((len(ids), bands), dtype=np.uint64))
    return len(ids)


def _dedup_write(task: tuple[Path, Path, np.ndarray, np.ndarray, np.ndarray]) -> ShardReport:
    in_path, out_dir, status, root_ids, dup_counts = task
    rep = ShardReport()
    audit = JsonlWriter(out_dir / f"clusters-{shard_suffix(in_path)}.jsonl")
    reasons = {1: "exact_duplicate", 2: "near_duplicate"}

    def kept():
        for i, d in enumerate(iter_docs(in_path)):
            st = int(status[i])
            if st == 0:
                rep.keep(d.source, len(d.text))
                size = int(dup_counts[i])
                if size:  # keep the cluster size, as FineWeb-2 does, so a later stage may re-weight
                    meta = d.meta_dict()
                    meta["dup_cluster_size"] = size + 1
                    d = Doc(d.id, d.text, d.source, meta_json(meta))
                yield d
            else:
                rep.drop(d.source, reasons[st], len(d.text))
                audit.write({"id": d.id, "source": d.source, "reason": reasons[st], "kept_id": str(root_ids[i])})
                rep.sample(reasons[st], 5, {"id": d.id, "kept_id": str(root_ids[i]), "text": d.text[:EXCERPT]})

    write_docs(out_dir / in_path.name, kept())
    audit.close()
    return rep


class DedupStage(Stage[DedupParams]):
    """Exact (normalized-text hash) and near (MinHash-LSH over character n-grams) duplicates; the first
    occurrence in (shard, row) order survives. Phase 1 signatures per shard (parallel), phase 2 banding and
    union-find in one process, phase 3 writes the shards (parallel)."""

    name = "dedup"
    version = "1"
    inputs = ("filter",)

    def run(self, ctx: StageContext[DedupParams]) -> StageResult:
        from corpora.dedup import exact_roots, near_duplicate_roots

        params = ctx.params
        shards = list_shards(ctx.inputs["filter"].path)
        bands, rows = params.band_rows()
        seed = params.seed if params.seed is not None else int(ctx.recipe.seed)
        work = ctx.out_dir / "_work"
        work.mkdir(exist_ok=True)
        counts = list(ctx.map(_dedup_signatures, [(p, work, params, bands, rows, seed) for p in shards],
                              desc="dedup: signatures"))
        stems = [shard_suffix(p) for p in shards]
        # phase 2: global indices in (shard, row) order
        keys = np.concatenate([np.load(work / f"keys-{s}.npy") for s in stems]) if stems else np.zeros(0, np.uint64)
        n = len(keys)
        status = np.zeros(n, dtype=np.int8)
        roots = np.arange(n, dtype=np.int64)
        if params.exact and n:
            ex = exact_roots(keys)
            status[ex != roots] = 1
            roots = ex
        if params.near and n:
            band_mat = np.concatenate([np.load(work / f"bands-{s}.npy") for s in stems])
            near = near_duplicate_roots(band_mat, status == 0)
            is_near = (status == 0) & (near != np.arange(n))
            status[is_near] = 2
            roots = np.where(is_near, near, roots)
            del band_mat
        # ids of the survivors that absorbed a duplicate (memory: only those)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        root_id = np.empty(n, dtype=object)
        dup = np.flatnonzero(status > 0)
        needed = np.unique(roots[dup])
        id_of: dict[int, str] = {}
        for si, s in enumerate(stems):
            lo, hi = offsets[si], offsets[si + 1]
            sel = needed[(needed >= lo) & (needed < hi)]
            if len(sel):
                ids = np.load(work / f"ids-{s}.npy", mmap_mode="r")
                id_of.update({int(g): str(ids[g - lo]) for g in sel})
        root_id[dup] = [id_of[int(r)] for r in roots[dup]]
        dup_counts = np.bincount(roots[dup], minlength=n) if n else np.zeros(0, dtype=np.int64)
        tasks = [(p, ctx.out_dir, *(a[offsets[i]:offsets[i + 1]] for a in (status, root_id, dup_counts)))
                 for i, p in enumerate(shards)]
        rep = merge(list(ctx.map(_dedup_write, tasks, desc="dedup: write")), 5)
        shutil.rmtree(work)
        write_samples(ctx.out_dir, rep.samples)
        clusters = len(needed)
        meta = {"report": {"bands": bands, "rows": rows, "ngram": params.ngram, "threshold": params.threshold,
                           "num_perm": params.num_perm, "exact_duplicates": int((status == 1).sum()),
                           "near_duplicates": int((status == 2).sum()), "clusters": clusters}}
        return result(rep, meta)
