"""The two PII stages: `pii_detect` (stand-off spans, run once) and `pii` (replacement, forked by variants).

Detection output, per input shard `shard-NNNNN.parquet`, is `spans-NNNNN.parquet`: one row per span with
columns `id, start, end, type, score, recognizer` (character offsets into the document text, end exclusive),
rows in document order then by start. Documents without PII have no rows. Documents whose detection failed or
hit the per-document time limit are quarantined (quarantine/pii_detect.jsonl) and listed in `failed_ids.json`;
the replace stage leaves them out of both arms (passing them through unredacted would leak PII).

Replacement output: document shards with the same names, ids and order as the input (minus failed ids), texts
with spans replaced; `diff.json` is the diff report (docs, chars and spans changed per type). With
`enabled: false` the input shards are byte-copied, so `pii: [on, off]` arms differ only inside replaced spans
and share `decontaminate` and `pii_detect` by key.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import ClassVar, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import Field

from corpora.shards import Doc, QuarantineWriter, atomic_path, iter_docs, list_shards, write_docs
from pipeline.stage import Funnel, Stage, StageContext, StageParams, StageResult, funnels_from_tallies, tally

SPAN_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("start", pa.int32(), nullable=False),
    pa.field("end", pa.int32(), nullable=False),
    pa.field("type", pa.string(), nullable=False),
    pa.field("score", pa.float32(), nullable=False),
    pa.field("recognizer", pa.string(), nullable=False),
])
FAILED_FILE = "failed_ids.json"
DIFF_FILE = "diff.json"


def spans_name(shard: Path) -> str:
    return shard.name.replace("shard-", "spans-", 1)


def write_spans(path: Path, cols: list[list]) -> None:
    """Write span columns (id, start, end, type, score, recognizer) atomically."""
    tmp = atomic_path(path)
    table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, SPAN_SCHEMA, strict=True)],
                                 schema=SPAN_SCHEMA)
    pq.write_table(table, tmp, compression="zstd", write_statistics=False)
    os.replace(tmp, path)


def read_spans(path: Path):
    """{doc id: [Span, ...]} for one spans shard (a shard's worth, never the corpus)."""
    from corpora.pii.resolve import Span

    out: dict[str, list] = {}
    t = pq.read_table(path).to_pydict()
    for i, s, e, ty, sc, r in zip(t["id"], t["start"], t["end"], t["type"], t["score"], t["recognizer"],
                                  strict=True):
        out.setdefault(i, []).append(Span(s, e, ty, round(float(sc), 4), r))
    return out


def _write_json(path: Path, obj) -> None:
    tmp = atomic_path(path)
    tmp.write_text(json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------------- detect
class PiiDetectParams(StageParams):
    threshold: float = Field(default=0.4, ge=0, le=1, description="minimum score of a kept span")
    doc_timeout_s: float = Field(default=60.0, gt=0, description="per-document time limit; over it: quarantine")


_detector_cache: dict = {}


def _detector(threshold: float, timeout: float):
    from corpora.pii.engine import PiiDetector

    key = (threshold, timeout)
    if key not in _detector_cache:
        _detector_cache.clear()
        _detector_cache[key] = PiiDetector(threshold=threshold, doc_timeout_s=timeout)
    return _detector_cache[key]


def _detect_shard(task: tuple[str, str, float, float]) -> dict:
    """Worker: detect spans in one shard, write its spans file; return counts and failures.

    Kept lean on purpose (it was 20% of the stage's time next to detection): reads only the columns it needs, in
    Arrow batches, and counts kept documents per source in plain ints, building Funnels once per shard."""
    from corpora.pii.engine import DocTimeout

    in_path, out_path, threshold, timeout = task
    detect = _detector(threshold, timeout).detect
    ids: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    types: list[str] = []
    scores: list[float] = []
    recognizers: list[str] = []
    kept: dict[str, list[int]] = {}  # source -> [docs, chars]
    quarantined: dict[str, list[int]] = {}
    docs_with_pii = 0
    failed = []
    pf = pq.ParquetFile(in_path)
    for rb in pf.iter_batches(batch_size=1024, columns=["id", "text", "source"]):
        cols = rb.to_pydict()
        for doc_id, text, source in zip(cols["id"], cols["text"], cols["source"], strict=True):
            try:
                spans = detect(text)
            except Exception as e:  # noqa: BLE001 - one bad document must not stop the corpus; it is quarantined
                reason = "pii_timeout" if isinstance(e, DocTimeout) else "pii_error"
                detail = str(e) if isinstance(e, DocTimeout) else f"{type(e).__name__}: {e}"
                failed.append({"id": doc_id, "source": source, "reason": reason, "detail": detail,
                               "excerpt": text[:200]})
                tally(quarantined, source, text)
                continue
            tally(kept, source, text)
            if spans:
                docs_with_pii += 1
                for sp in spans:
                    ids.append(doc_id)
                    starts.append(sp.start)
                    ends.append(sp.end)
                    types.append(sp.type)
                    scores.append(sp.score)
                    recognizers.append(sp.recognizer)
    write_spans(Path(out_path), [ids, starts, ends, types, scores, recognizers])
    funnel, by_source = funnels_from_tallies(kept, quarantined)
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
            "per_type": dict(Counter(types)), "docs_with_pii": docs_with_pii, "failed": failed,
            "shard": Path(in_path).name}


class PiiDetectStage(Stage):
    """Detect Korean PII spans once; store them stand-off for every replacement arm to share."""

    name: ClassVar[str] = "pii_detect"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("decontaminate",)
    params_model: ClassVar[type[StageParams]] = PiiDetectParams

    def run(self, ctx: StageContext) -> StageResult:
        p: PiiDetectParams = ctx.params  # type: ignore[assignment]
        shards = list_shards(ctx.inputs["decontaminate"].path)
        tasks = [(str(s), str(ctx.out_dir / spans_name(s)), p.threshold, p.doc_timeout_s) for s in shards]
        funnel = Funnel()
        by_source: dict[str, Funnel] = {}
        per_type: Counter = Counter()
        docs_with_pii = 0
        failed_ids = []
        with QuarantineWriter(ctx.out_dir / "quarantine" / "pii_detect.jsonl") as q:
            for res in ctx.map(_detect_shard, tasks, desc="pii_detect"):
                funnel.add(Funnel.from_json(res["funnel"]))
                for k, v in res["by_source"].items():
                    by_source.setdefault(k, Funnel()).add(Funnel.from_json(v))
                per_type.update(res["per_type"])
                docs_with_pii += res["docs_with_pii"]
                for f in res["failed"]:
                    q.add(source=f["source"], file=res["shard"], location=f["id"], reason=f["reason"],
                          detail=f["detail"], excerpt=f["excerpt"])
                    failed_ids.append(f["id"])
        _write_json(ctx.out_dir / FAILED_FILE, sorted(failed_ids))
        report = {"spans_per_type": dict(sorted(per_type.items())), "spans": sum(per_type.values()),
                  "docs": funnel.docs_in, "docs_with_pii": docs_with_pii, "docs_failed": len(failed_ids)}
        return StageResult(funnel=funnel, by_source=by_source, meta={"report": report})


# --------------------------------------------------------------------------------------------------- replace
class PiiReplaceParams(StageParams):
    enabled: bool = True
    mode: Literal["placeholder", "surrogate", "drop"] = "placeholder"
    types: list[str] | None = Field(default=None, description="PII types to replace; None: all detected types")
    drop_density: float = Field(default=0.1, gt=0, le=1,
                                description="drop mode: drop documents whose PII characters exceed this share")
    seed: int | None = Field(default=None, description="surrogate seed; None: the recipe seed")

    def model_post_init(self, __context) -> None:
        if self.types is not None:
            from corpora.pii.types import ALL_TYPES

            unknown = sorted(set(self.types) - set(ALL_TYPES))
            if unknown:
                raise ValueError(f"pii.types: unknown PII types {unknown}; known: {list(ALL_TYPES)}")


def _replace_shard(task: tuple) -> dict:
    from corpora.pii.replace import (
        DiffCounts,
        density,
        placeholder_substitute,
        replace_spans,
        select,
        surrogate_substitute,
    )
    from corpora.pii.surrogates import DocSurrogates

    in_path, spans_path, out_path, params, seed, failed = task
    p = PiiReplaceParams(**params)
    failed = set(failed)
    funnel = Funnel()
    by_source: dict[str, Funnel] = {}
    diff = DiffCounts()
    if not p.enabled and not failed & set(pq.read_table(in_path, columns=["id"]).column("id").to_pylist()):
        # the off arm: the input shard byte for byte (counted while streaming, never held in memory)
        tmp = atomic_path(Path(out_path))
        shutil.copyfile(in_path, tmp)
        os.replace(tmp, out_path)
        for d in iter_docs(Path(in_path)):
            funnel.keep(len(d.text))
            by_source.setdefault(d.source, Funnel()).keep(len(d.text))
        return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
                "diff_raw": _raw(diff)}
    spans_by_id = read_spans(Path(spans_path)) if p.enabled else {}

    def docs():
        for d in iter_docs(Path(in_path)):
            src = by_source.setdefault(d.source, Funnel())
            n = len(d.text)
            if d.id in failed:
                funnel.quarantine(n)
                src.quarantine(n)
                continue
            spans = select(spans_by_id.get(d.id, []), p.types) if p.enabled else []
            if p.mode == "drop" and spans and density(d.text, spans) > p.drop_density:
                funnel.drop("pii_density", n)
                src.drop("pii_density", n)
                diff.docs_changed += 1
                for s in spans:
                    diff.spans[s.type] += 1
                    diff.chars[s.type] += s.end - s.start
                diff.docs_by_type.update({s.type for s in spans})
                continue
            funnel.keep(n)
            src.keep(n)
            if not spans or p.mode == "drop":
                yield d
                continue
            sub = (placeholder_substitute if p.mode == "placeholder"
                   else surrogate_substitute(DocSurrogates(seed, d.id)))
            yield Doc(d.id, replace_spans(d.text, spans, sub, diff), d.source, d.meta)

    write_docs(Path(out_path), docs())
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
            "diff_raw": _raw(diff)}


def _raw(diff) -> dict:
    return {"docs_changed": diff.docs_changed, "spans": dict(diff.spans), "chars": dict(diff.chars),
            "docs_by_type": dict(diff.docs_by_type)}


class PiiReplaceStage(Stage):
    """Replace (or drop) detected PII; `enabled: false` passes the corpus through byte-identical."""

    name: ClassVar[str] = "pii"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("decontaminate", "pii_detect")
    params_model: ClassVar[type[StageParams]] = PiiReplaceParams
    variant_field: ClassVar[str] = "enabled"

    def run(self, ctx: StageContext) -> StageResult:
        from corpora.pii.replace import DiffCounts, placeholder_token
        from corpora.pii.types import ALL_TYPES

        p: PiiReplaceParams = ctx.params  # type: ignore[assignment]
        seed = p.seed if p.seed is not None else ctx.seed
        det_dir = ctx.inputs["pii_detect"].path
        failed_file = det_dir / FAILED_FILE
        failed = json.loads(failed_file.read_text(encoding="utf-8")) if failed_file.exists() else []
        shards = list_shards(ctx.inputs["decontaminate"].path)
        tasks = []
        for s in shards:
            sp = det_dir / spans_name(s)
            if p.enabled and not sp.exists():
                raise FileNotFoundError(f"{sp}: no PII spans for input shard {s.name}; was pii_detect run on the "
                                        "same decontaminate output?")
            tasks.append((str(s), str(sp), str(ctx.out_dir / s.name), p.model_dump(), seed, failed))
        funnel = Funnel()
        by_source: dict[str, Funnel] = {}
        diff = DiffCounts()
        for res in ctx.map(_replace_shard, tasks, desc="pii"):
            funnel.add(Funnel.from_json(res["funnel"]))
            for k, v in res["by_source"].items():
                by_source.setdefault(k, Funnel()).add(Funnel.from_json(v))
            r = res["diff_raw"]
            diff.add(DiffCounts(r["docs_changed"], Counter(r["spans"]), Counter(r["chars"]),
                                Counter(r["docs_by_type"])))
        report = {"enabled": p.enabled, "mode": p.mode, **diff.to_json()}
        _write_json(ctx.out_dir / DIFF_FILE, report)
        types = p.types if p.types is not None else list(ALL_TYPES)
        tokens = sorted(placeholder_token(t) for t in types) if p.enabled and p.mode == "placeholder" else []
        return StageResult(funnel=funnel, by_source=by_source, meta={"placeholder_tokens": tokens, "report": report})
