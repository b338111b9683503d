"""The curation stages: filter (normalize + quality filters), dedup (exact + MinHash), decontaminate.

Each reads the upstream doc shards and writes shards of the same names (one output per input, possibly
empty), splitting work by shard with `ctx.map`, so outputs never depend on the number of workers. Every
document is either kept or dropped with one reason; characters removed from kept documents (normalization,
boilerplate lines, short or contaminated sentences) are booked under their own reason so chars reconcile.
Audit files beside the shards: `dropped-NNNNN.jsonl` (id, source, reason, check or benchmarks),
`clusters-NNNNN.jsonl` for dedup (id, reason, kept_id), and `samples.jsonl` (a few dropped texts per reason).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from corpora.filters.params import FilterParams
from corpora.shards import Doc, atomic_path, iter_docs, list_shards, meta_json, write_docs
from pipeline.filehash import file_digests
from pipeline.stage import Funnel, Stage, StageContext, StageParams, StageResult, json_line

EXCERPT = 500


# ---------------------------------------------------------------------------------------------- helpers
@dataclass
class ShardReport:
    """What one shard's worker returns; merged in shard order by the stage."""

    funnel: Funnel = field(default_factory=Funnel)
    by_source: dict[str, Funnel] = field(default_factory=dict)
    counters: dict[str, Counter] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def source(self, name: str) -> Funnel:
        f = self.by_source.get(name)
        if f is None:
            f = self.by_source[name] = Funnel()
        return f

    def keep(self, src: str, n: int, removed: dict[str, int] | None = None) -> None:
        for f in (self.funnel, self.source(src)):
            f.keep(n)
            for reason, k in (removed or {}).items():
                if k:
                    f.chars_in += k
                    f.chars_dropped[reason] += k

    def drop(self, src: str, reason: str, n: int) -> None:
        self.funnel.drop(reason, n)
        self.source(src).drop(reason, n)

    def count(self, table: str, key: str, n: int = 1) -> None:
        self.counters.setdefault(table, Counter())[key] += n

    def sample(self, reason: str, k: int, rec: dict[str, Any]) -> None:
        lst = self.samples.setdefault(reason, [])
        if len(lst) < k:
            lst.append(rec)


def merge(reports: list[ShardReport], k: int) -> ShardReport:
    out = ShardReport()
    for r in reports:
        out.funnel.add(r.funnel)
        for s, f in sorted(r.by_source.items()):
            out.source(s).add(f)
        for t, c in r.counters.items():
            out.counters.setdefault(t, Counter()).update(c)
        for reason, lst in r.samples.items():
            for rec in lst:
                out.sample(reason, k, rec)
    return out


class JsonlWriter:
    """Deterministic JSON lines, written to a temp name and renamed on close."""

    def __init__(self, path: Path):
        self.path = path
        self.tmp = atomic_path(path)
        self.f = open(self.tmp, "w", encoding="utf-8")

    def write(self, obj: Any) -> None:
        self.f.write(json_line(obj))

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.path)


def write_jsonl(path: Path, rows: list[Any]) -> None:
    w = JsonlWriter(path)
    for r in rows:
        w.write(r)
    w.close()


def shard_suffix(shard: Path) -> str:
    return shard.name[len("shard-") : -len(".parquet")]


def write_samples(out_dir: Path, samples: dict[str, list[dict[str, Any]]]) -> None:
    write_jsonl(out_dir / "samples.jsonl", [dict(rec, reason=r) for r in sorted(samples) for rec in samples[r]])


def result(rep: ShardReport, meta: dict[str, Any]) -> StageResult:
    by_source = {s: rep.by_source[s] for s in sorted(rep.by_source)}
    return StageResult(funnel=rep.funnel, by_source=by_source, meta=meta)


# ---------------------------------------------------------------------------------------------- filter
def _filter_shard(task: tuple[Path, Path, FilterParams, dict[str, int]]) -> ShardReport:
    from corpora.filters import FilterChain

    in_path, out_dir, params, source_min = task
    rep = ShardReport()
    chains: dict[str, FilterChain] = {}
    audit = JsonlWriter(out_dir / f"dropped-{shard_suffix(in_path)}.jsonl")
    would_fail, checks = rep.counters["would_fail"], rep.counters["checks"] = Counter(), Counter()

    def kept():
        for d in iter_docs(in_path):
            chain = chains.get(d.source)
            if chain is None:
                chain = chains[d.source] = FilterChain(params, d.source, source_min.get(d.source))
            o = chain(d.text)
            for name, check in o.fails:
                would_fail[name] += 1
                checks[name, check] += 1
            if o.reason is None:
                rep.keep(d.source, len(o.text), o.removed)
                yield d if o.text == d.text else Doc(d.id, o.text, d.source, d.meta)
            else:
                rep.drop(d.source, o.reason, len(d.text))
                rep.count("first_fail", f"{o.reason}.{o.check}")
                audit.write({"id": d.id, "source": d.source, "reason": o.reason, "check": o.check})
                rep.sample(o.reason, params.samples_per_reason,
                           {"id": d.id, "source": d.source, "check": o.check, "text": d.text[:EXCERPT]})

    write_docs(out_dir / in_path.name, kept())
    audit.close()
    rep.counters["checks"] = Counter({f"{n}.{c}": k for (n, c), k in checks.items()})
    return rep


class FilterStage(Stage):
    """Normalize every document, remove boilerplate lines and (per source) short sentences, then apply the
    length, script, Gopher and FineWeb filters in `order`; the first failing filter names the drop reason."""

    name: ClassVar[str] = "filter"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("collect",)
    params_model: ClassVar[type[StageParams]] = FilterParams

    def fingerprint(self, ctx: StageContext) -> dict[str, Any]:
        # sources' min_sentence_chars change this stage's output but are not part of its params
        return {"min_sentence_chars": _source_min(ctx)}

    def run(self, ctx: StageContext) -> StageResult:
        params: FilterParams = ctx.params  # type: ignore[assignment]
        shards = list_shards(ctx.inputs["collect"].path)
        src_min = _source_min(ctx)
        tasks = [(p, ctx.out_dir, params, src_min) for p in shards]
        rep = merge(list(ctx.map(_filter_shard, tasks, desc="filter")), params.samples_per_reason)
        write_samples(ctx.out_dir, rep.samples)
        meta = {
            "report": {
                "order": list(params.order),
                "would_fail": dict(sorted(rep.counters.get("would_fail", Counter()).items())),
                "checks": dict(sorted(rep.counters.get("checks", Counter()).items())),
                "first_fail": dict(sorted(rep.counters.get("first_fail", Counter()).items())),
                "thresholds": {s: params.thresholds_for(s).model_dump(mode="json", exclude_defaults=True)
                               for s in sorted(params.per_source)},
            },
            "shards": len(shards),
        }
        return result(rep, meta)


def _source_min(ctx: StageContext) -> dict[str, int]:
    sources = getattr(ctx.recipe, "sources", None) or []
    return {s.name: s.min_sentence_chars for s in sources if getattr(s, "min_sentence_chars", None)}


# ---------------------------------------------------------------------------------------------- dedup
class DedupParams(StageParams):
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
        if self.bands is not None and self.bands * self.rows > self.num_perm:
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


class DedupStage(Stage):
    """Exact (normalized-text hash) and near (MinHash-LSH over character n-grams) duplicates; the first
    occurrence in (shard, row) order survives. Phase 1 signatures per shard (parallel), phase 2 banding and
    union-find in one process, phase 3 writes the shards (parallel)."""

    name: ClassVar[str] = "dedup"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("filter",)
    params_model: ClassVar[type[StageParams]] = DedupParams

    def run(self, ctx: StageContext) -> StageResult:
        from corpora.dedup import exact_roots, near_duplicate_roots

        params: DedupParams = ctx.params  # type: ignore[assignment]
        shards = list_shards(ctx.inputs["filter"].path)
        bands, rows = params.band_rows()
        seed = params.seed if params.seed is not None else int(getattr(ctx.recipe, "seed", 0))
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


# ---------------------------------------------------------------------------------------------- decontaminate
class BenchmarkFile(StageParams):
    path: str
    name: str | None = Field(None, description="name in reports; default: the file name without extension")
    format: Literal["auto", "nli", "sts", "ynat", "re", "ner", "dp", "squad", "wos", "jsonl"] = "auto"

    def resolved(self) -> Path:
        p = os.path.expandvars(self.path)
        if "$" in p:
            raise ValueError(f"benchmark path {self.path!r}: environment variable not set ({p})")
        return Path(p)

    def label(self) -> str:
        return self.name or Path(self.path).name.rsplit(".", 1)[0]


class DecontaminateParams(StageParams):
    benchmarks: list[BenchmarkFile] = Field(default_factory=list)
    n: int = Field(13, ge=1, le=64, description="word n-gram length")
    min_words: int = Field(5, ge=1, description="benchmark texts shorter than n match whole if at least this long")
    mode: Literal["drop", "flag", "sentences"] = "drop"
    language: str = "ko"

    @field_validator("benchmarks")
    @classmethod
    def _unique(cls, v: list[BenchmarkFile]) -> list[BenchmarkFile]:
        names = [b.label() for b in v]
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise ValueError(f"benchmark names must be unique; repeated: {dup} (set `name:`)")
        return v

    @model_validator(mode="after")
    def _n(self) -> DecontaminateParams:
        if self.min_words > self.n:
            raise ValueError(f"min_words={self.min_words} is larger than n={self.n}")
        return self


def _decon_shard(task: tuple[Path, Path, Path, list[str], DecontaminateParams]) -> ShardReport:
    from corpora.decontaminate import BenchmarkIndex, word_hashes, word_spans
    from corpora.lang import get_language

    in_path, out_dir, index_path, names, params = task
    index = BenchmarkIndex.load(index_path, names)
    lang = get_language(params.language)
    rep = ShardReport()
    audit = JsonlWriter(out_dir / f"dropped-{shard_suffix(in_path)}.jsonl")

    def kept():
        for d in iter_docs(in_path):
            mask, found = index.matches(word_hashes(d.text))
            if not mask:
                rep.keep(d.source, len(d.text))
                yield d
                continue
            hit = index.benchmark_names(mask)
            for b in hit:
                rep.count("docs_per_benchmark", b)
            if params.mode == "flag":
                meta = d.meta_dict()
                meta["contamination"] = hit
                rep.keep(d.source, len(d.text))
                yield Doc(d.id, d.text, d.source, meta_json(meta))
                continue
            if params.mode == "sentences":
                words, spans = word_spans(d.text)
                found = index.matches(words)[1]
                covered = [(spans[i][0], spans[i + m - 1][1]) for i, m in found]
                sents = [(a, b) for a, b in lang.sentence_spans(d.text)
                         if not any(a < ce and cs < b for cs, ce in covered)]
                # (no located match: word-by-word normalization differs from the whole-text one; drop)
                if sents and covered:
                    text = "\n".join(d.text[a:b] for a, b in sents)
                    rep.keep(d.source, len(text), {"contaminated_sentences": len(d.text) - len(text)})
                    rep.count("edited_docs", "sentences")
                    yield Doc(d.id, text, d.source, d.meta)
                    continue
            rep.drop(d.source, "contaminated", len(d.text))
            audit.write({"id": d.id, "source": d.source, "reason": "contaminated", "benchmarks": hit})
            rep.sample("contaminated", 5, {"id": d.id, "benchmarks": hit, "text": d.text[:EXCERPT]})

    write_docs(out_dir / in_path.name, kept())
    audit.close()
    return rep


class DecontaminateStage(Stage):
    """Drop (or flag, or cut the sentences of) documents sharing a word n-gram with a benchmark text."""

    name: ClassVar[str] = "decontaminate"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("dedup",)
    params_model: ClassVar[type[StageParams]] = DecontaminateParams

    def fingerprint(self, ctx: StageContext) -> dict[str, Any]:
        # content, not path or mtime: the same benchmark files elsewhere (another machine, a re-provisioned
        # copy) give the same key; a missing file is None here and a clear error in run()
        paths = {b.label(): b.resolved() for b in ctx.params.benchmarks}  # type: ignore[attr-defined]
        digests = file_digests(p for p in paths.values() if p.is_file())
        return {label: digests.get(p) for label, p in paths.items()}

    def run(self, ctx: StageContext) -> StageResult:
        from corpora.benchmarks import iter_texts
        from corpora.decontaminate import BenchmarkIndex

        params: DecontaminateParams = ctx.params  # type: ignore[assignment]
        for b in params.benchmarks:
            if not b.resolved().is_file():
                raise FileNotFoundError(f"decontaminate: benchmark {b.label()!r}: file not found: {b.resolved()}")
        index = BenchmarkIndex.build(((b.label(), iter_texts(b.resolved(), b.format)) for b in params.benchmarks),
                                     n=params.n, min_words=params.min_words)
        work = ctx.out_dir / "_work"
        work.mkdir(exist_ok=True)
        index_path = work / "index.npz"
        index.save(index_path)
        shards = list_shards(ctx.inputs["dedup"].path)
        tasks = [(p, ctx.out_dir, index_path, index.names, params) for p in shards]
        rep = merge(list(ctx.map(_decon_shard, tasks, desc="decontaminate")), 5)
        shutil.rmtree(work)
        write_samples(ctx.out_dir, rep.samples)
        per = rep.counters.get("docs_per_benchmark", Counter())
        meta = {"report": {
            "mode": params.mode, "n": params.n, "min_words": params.min_words, "ngrams": int(len(index.keys)),
            "benchmarks": {nm: {**index.stats[nm], "docs": int(per.get(nm, 0))} for nm in index.names},
            "edited_docs": int(rep.counters.get("edited_docs", Counter()).get("sentences", 0)),
        }}
        return result(rep, meta)
