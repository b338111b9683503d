"""The `pii_detect` stage: PII spans (of the recipe's `language`: Korean or Japanese), detected once and stored stand-off (`corpora.pii.spans`) for every
replacement arm to share. Documents whose detection failed or hit the per-document time limit are quarantined
(quarantine/pii_detect.jsonl) and listed in `failed_ids.json`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

import pyarrow.parquet as pq
from pydantic import Field, field_validator, model_validator

from corpora.lang import LanguageCode
from corpora.pii.spans import FAILED_FILE, spans_name, write_spans
from corpora.pii.types import language_types, pack_facts
from corpora.shards import QuarantineWriter, list_shards
from pipeline import io
from pipeline.plots import Figure, bars, md_table
from pipeline.stage import (
    ArmOutput,
    FunnelSum,
    ReportSection,
    Stage,
    StageContext,
    StageParams,
    StageResult,
    shard_funnels,
    tally,
)
from pipeline.versions import package_versions


class PiiDetectParams(StageParams):
    """Presidio's score threshold and a per-document time limit (a pathological document must not stall a
    worker: it is quarantined instead). `language` (the recipe's top-level `language:`) picks the PII pack."""

    threshold: float = Field(default=0.4, ge=0, le=1, description="minimum score of a kept span")
    doc_timeout_s: float = Field(default=60.0, gt=0, description="per-document time limit; over it: quarantine")
    optional_types: list[Literal["POSTAL_CODE", "DT_BIRTH", "AGE"]] = Field(
        default_factory=list, description="types detected only when named here (corpora/pii/types.py)")
    language: LanguageCode = Field(description="the PII pack: the language's `pii` (corpora/lang/<code>/)")

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        language_types(v)  # a language of the curation stages may still lack PII recognizers
        return v

    @model_validator(mode="after")
    def _optional_types_exist(self) -> PiiDetectParams:
        default, optional = language_types(self.language)
        missing = [t for t in self.optional_types if t not in optional and t not in default]
        if missing:
            raise ValueError(f"optional_types {missing} have no recognizer for language {self.language!r} "
                             f"(its optional types: {list(optional) or 'none'})")
        return self

    @property
    def types(self) -> tuple[str, ...]:
        default, optional = language_types(self.language)
        return default + tuple(t for t in optional if t in self.optional_types)


_detector_cache: dict = {}


def _detector(threshold: float, timeout: float, types: tuple[str, ...], language: str):
    # lazy: presidio and spaCy (corpora.pii.engine)
    from corpora.pii.engine import PiiDetector

    key = (threshold, timeout, types, language)
    if key not in _detector_cache:
        _detector_cache.clear()
        _detector_cache[key] = PiiDetector(types=types, threshold=threshold, doc_timeout_s=timeout,
                                           language=language)
    return _detector_cache[key]


def _detect_shard(task: tuple[str, str, float, float, tuple[str, ...], str]) -> dict:
    """Worker: detect spans in one shard, write its spans file; return counts and failures.

    Kept lean on purpose (it was 20% of the stage's time next to detection): reads only the columns it needs, in
    Arrow batches, and counts kept documents per source in plain ints, building Funnels once per shard."""
    # lazy: presidio and spaCy (corpora.pii.engine)
    from corpora.pii.engine import DocTimeout

    in_path, out_path, threshold, timeout, detect_types, language = task
    detect = _detector(threshold, timeout, detect_types, language).detect
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
    return {**shard_funnels(kept, quarantined), "per_type": dict(Counter(types)), "docs_with_pii": docs_with_pii,
            "failed": failed, "shard": Path(in_path).name}


class PiiDetectStage(Stage[PiiDetectParams]):
    """Detect PII spans once; store them stand-off for every replacement arm to share."""

    name = "pii_detect"
    # 2: addresses with detail and reference parts, licence/RRN/corporate printed forms, more names;
    # 3: identifiers after their label in any shape (ko_labelled_*), key-value tables have no header row;
    # 4: Korean representative numbers that also read as a year range (`1588-1673`) are phones when an assigned
    # block has a phone word, an e-mail or a call to call beside it (ko_phone_representative, issue 49)
    version = "4"
    inputs = ("decontaminate",)
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished

    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        """Spans found per type (a chart and a table), per folder: detection is shared by the arms of a PII
        ablation (stand-off spans), so there is usually one column."""
        rows = [(o, o.meta["report"]) for o in outputs if isinstance(o.meta.get("report"), dict)
                and "spans_per_type" in o.meta["report"]]
        if not rows:
            return None
        types = sorted({t for _, r in rows for t in r["spans_per_type"]})
        counts = {o.label: [r["spans_per_type"].get(t, 0) for t in types] for o, r in rows}
        table = md_table(["type", *counts], [[t, *(str(v[i]) for v in counts.values())] for i, t in enumerate(types)]
                         + [["**documents with PII**", *(f"{r['docs_with_pii']} of {r['docs']}" for _, r in rows)]])
        md = ["Detected spans by type (presidio with the language's recognizers, threshold "
              f"{rows[0][0].manifest.get('params', {}).get('threshold')}); language "
              f"{rows[0][1].get('language')}.", "", *table]
        fig = Figure("pii_types.png", bars(types, counts, ylabel="spans", horizontal=True),
                     "PII spans detected per type.")
        return ReportSection("PII detected", "\n".join(md), [fig] if types else [])

    def fingerprint(self, ctx: StageContext[PiiDetectParams]) -> dict:
        """The versions of the data a pack reads at run time (`PackFacts.key_packages`: Japanese names come from
        MeCab's UniDic tags and its numbers from python-stdnum's checks) are part of the key; a pack that
        names none (Korean) keys as before."""
        packages = pack_facts(ctx.params.language).key_packages
        return package_versions(*packages) if packages else {}

    def run(self, ctx: StageContext[PiiDetectParams]) -> StageResult:
        p = ctx.params
        shards = list_shards(ctx.inputs["decontaminate"].path)
        tasks = [(str(s), str(ctx.out_dir / spans_name(s)), p.threshold, p.doc_timeout_s, p.types, p.language)
                 for s in shards]
        funnels = FunnelSum()
        per_type: Counter = Counter()
        docs_with_pii = 0
        failed_ids = []
        with QuarantineWriter(ctx.out_dir / "quarantine" / "pii_detect.jsonl") as q:
            for res in ctx.map(_detect_shard, tasks, desc="pii_detect"):
                funnels.add(res)
                per_type.update(res["per_type"])
                docs_with_pii += res["docs_with_pii"]
                for f in res["failed"]:
                    q.add(source=f["source"], file=res["shard"], location=f["id"], reason=f["reason"],
                          detail=f["detail"], excerpt=f["excerpt"])
                    failed_ids.append(f["id"])
        io.write_json(ctx.out_dir / FAILED_FILE, sorted(failed_ids), indent=1)
        report = {"language": p.language, "types": list(p.types), "spans_per_type": dict(sorted(per_type.items())), "spans": sum(per_type.values()),
                  "docs": funnels.funnel.docs_in, "docs_with_pii": docs_with_pii, "docs_failed": len(failed_ids)}
        return StageResult(funnel=funnels.funnel, by_source=funnels.by_source, meta={"report": report})
