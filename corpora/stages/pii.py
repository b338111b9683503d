"""The `pii` stage: replace (placeholder / surrogate) or drop the spans `pii_detect` found; forked by variants.

Output: document shards with the same names, ids and order as the input (minus the ids whose detection
failed), texts with spans replaced; `diff.json` is the diff report (docs, chars and spans changed per type).
With `enabled: false` the input shards are byte-copied, so `pii: [on, off]` arms differ only inside replaced
spans and share `decontaminate` and `pii_detect` by key.

Documents that the `toxicity` stage names in its `drop_ids.json` (only with its `action: drop`) are left out of
every arm, on or off, with the reason code `toxicity`: this is the stage that writes the corpus the tokenizer
reads. Without that file (the default) nothing changes, byte for byte.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Literal

import pyarrow.parquet as pq
from pydantic import Field

from corpora.lang import LanguageCode
from corpora.pii.replace import (
    DiffCounts,
    density,
    placeholder_substitute,
    placeholder_token,
    replace_spans,
    select,
    surrogate_substitute,
)
from corpora.pii.spans import FAILED_FILE, read_spans, spans_name
from corpora.pii.surrogates import DocSurrogates
from corpora.pii.types import KNOWN_TYPES, default_types
from corpora.shards import Doc, iter_docs, list_shards, write_docs
from corpora.toxicity.scores import DROP_FILE as TOXICITY_DROP_FILE
from corpora.toxicity.scores import DROP_REASON as TOXICITY_REASON
from pipeline import io
from pipeline.plots import md_table
from pipeline.stage import (
    ArmOutput,
    Funnel,
    FunnelSum,
    ReportSection,
    Stage,
    StageContext,
    StageParams,
    StageResult,
)

DIFF_FILE = "diff.json"


class PiiReplaceParams(StageParams):
    enabled: bool = True
    mode: Literal["placeholder", "surrogate", "drop"] = "placeholder"
    types: list[str] | None = Field(default=None, description="PII types to replace; None: all detected types")
    drop_density: float = Field(default=0.1, gt=0, le=1,
                                description="drop mode: drop documents whose PII characters exceed this share")
    seed: int | None = Field(default=None, description="surrogate seed; None: the recipe seed")
    language: LanguageCode = Field(description="surrogate mode: fake values in this language's formats")

    def model_post_init(self, __context) -> None:
        if self.types is not None:
            unknown = sorted(set(self.types) - set(KNOWN_TYPES))
            if unknown:
                raise ValueError(f"pii.types: unknown PII types {unknown}; known: {list(KNOWN_TYPES)}")


def _replace_shard(task: tuple) -> dict:
    in_path, spans_path, out_path, params, seed, failed, toxic = task
    p = PiiReplaceParams(**params)
    failed = set(failed)
    toxic = set(toxic)
    funnel = Funnel()
    by_source: dict[str, Funnel] = {}
    diff = DiffCounts()
    left_out = failed | toxic
    if not p.enabled and not left_out & set(pq.read_table(in_path, columns=["id"]).column("id").to_pylist()):
        # the off arm: the input shard byte for byte (counted while streaming, never held in memory)
        with io.atomic_path(out_path) as tmp:
            shutil.copyfile(in_path, tmp)
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
            if d.id in toxic:
                funnel.drop(TOXICITY_REASON, n)
                src.drop(TOXICITY_REASON, n)
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
                   else surrogate_substitute(DocSurrogates(seed, d.id, p.language)))
            yield Doc(d.id, replace_spans(d.text, spans, sub, diff), d.source, d.meta)

    write_docs(Path(out_path), docs())
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
            "diff_raw": _raw(diff)}


def _raw(diff) -> dict:
    return {"docs_changed": diff.docs_changed, "spans": dict(diff.spans), "chars": dict(diff.chars),
            "docs_by_type": dict(diff.docs_by_type)}


class PiiReplaceStage(Stage[PiiReplaceParams]):
    """Replace (or drop) detected PII; `enabled: false` passes the corpus through byte-identical."""

    name = "pii"
    # 2: business-number surrogates follow the layout rules; optional types. 3: Korean surrogate names and
    # addresses end in the final sound the particle after them needs (surrogate bytes change; placeholder and
    # drop modes do not)
    version = "3"
    inputs = ("decontaminate", "pii_detect", "toxicity")
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished
    variant_field = "enabled"

    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        """What each arm's text lost to replacement: spans, documents and characters changed per type, arms
        side by side (the `pii: [on, off]` ablation's difference, since everything else is shared)."""
        rows = [(o, o.meta["report"]) for o in outputs if isinstance(o.meta.get("report"), dict)
                and "per_type" in o.meta["report"]]
        if not rows:
            return None
        types = sorted({t for _, r in rows for t in r["per_type"]})

        def cell(r: dict, t: str) -> str:
            c = r["per_type"].get(t)
            return "0" if not c else f"{c['spans']} spans, {c['docs']} docs, {c['chars']} chars"

        header = ["type", *(f"{o.label} ({'replaced: ' + r.get('mode', '') if r.get('enabled') else 'kept'})"
                            for o, r in rows)]
        body = [[t, *(cell(r, t) for _, r in rows)] for t in types]
        body.append(["**total**", *(f"{r['spans_changed']} spans, {r['docs_changed']} docs, "
                                    f"{r['chars_changed']} chars" for _, r in rows)])
        return ReportSection("PII replaced, per arm", "\n".join(md_table(header, body)))

    def run(self, ctx: StageContext[PiiReplaceParams]) -> StageResult:

        p = ctx.params
        seed = p.seed if p.seed is not None else ctx.seed
        det_dir = ctx.inputs["pii_detect"].path
        failed_file = det_dir / FAILED_FILE
        failed = json.loads(failed_file.read_text(encoding="utf-8")) if failed_file.exists() else []
        tox = ctx.inputs.get("toxicity")  # absent in contexts built by hand for the PII stages alone
        tox_file = tox.path / TOXICITY_DROP_FILE if tox is not None else None
        toxic = json.loads(tox_file.read_text(encoding="utf-8")) if tox_file and tox_file.exists() else []
        shards = list_shards(ctx.inputs["decontaminate"].path)
        tasks = []
        for s in shards:
            sp = det_dir / spans_name(s)
            if p.enabled and not sp.exists():
                raise FileNotFoundError(f"{sp}: no PII spans for input shard {s.name}; was pii_detect run on the "
                                        "same decontaminate output?")
            tasks.append((str(s), str(sp), str(ctx.out_dir / s.name), p.model_dump(), seed, failed, toxic))
        funnels = FunnelSum()
        diff = DiffCounts()
        for res in ctx.map(_replace_shard, tasks, desc="pii"):
            funnels.add(res)
            r = res["diff_raw"]
            diff.add(DiffCounts(r["docs_changed"], Counter(r["spans"]), Counter(r["chars"]),
                                Counter(r["docs_by_type"])))
        report = {"enabled": p.enabled, "mode": p.mode, **diff.to_json()}
        io.write_json(ctx.out_dir / DIFF_FILE, report, indent=1)
        # all detected types: pii_detect records them (older outputs lack the key: the language's default types)
        detected = ctx.inputs["pii_detect"].meta.get("report", {}).get("types", list(default_types(p.language)))
        types = p.types if p.types is not None else detected
        tokens = sorted(placeholder_token(t) for t in types) if p.enabled and p.mode == "placeholder" else []
        return StageResult(funnel=funnels.funnel, by_source=funnels.by_source,
                           meta={"placeholder_tokens": tokens, "report": report})
