"""Run the collect stage by hand on test sources and check its accounting (shared by the reader and
bad-input tests)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from corpora.readers import REASONS
from corpora.sources import SourceSpec
from corpora.stages.collect import CollectParams, CollectStage
from pipeline.stage import Funnel, StageContext


def quarantine(out: Path, source: str) -> list[dict]:
    f = out / "quarantine" / f"{source}.jsonl"
    recs = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()] if f.exists() else []
    assert all(r["reason"] in REASONS for r in recs)  # every code is documented
    return recs


def run_collect(out: Path, sources: list[dict], workers: int = 1, **params):
    """Collect `sources` into `out`; asserts that every funnel reconciles, that the per-source funnels add up
    to the total, and that every quarantined record is in a quarantine file (and only those)."""
    out.mkdir(parents=True)
    recipe = SimpleNamespace(seed=1, sources=[SourceSpec(**s) for s in sources])
    ctx = StageContext(out_dir=out, params=CollectParams(**params), inputs={}, recipe=recipe, workers=workers)
    res = CollectStage().run(ctx)
    assert res.funnel.problems() == []
    total = Funnel()
    for f in res.by_source.values():
        assert f.problems() == []
        total.add(f)
    assert total.to_json() == res.funnel.to_json()
    n_quarantined = sum(len(quarantine(out, s["name"])) for s in sources)
    assert n_quarantined == res.funnel.quarantined
    return res, out
