"""Helpers of the curation tests (filter, dedup, decontaminate): doc shards and hand-built stage contexts."""

from __future__ import annotations

import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, shard_name, write_docs
from pipeline.recipe import DEFAULT_LANGUAGE
from pipeline.stage import Stage, StageContext, StageInput, StageResult


def docs_of(texts: Iterable[str], source: str = "web", start: int = 0) -> list[Doc]:
    return [Doc(doc_id(source, "fixture", start + i), t, source, meta_json({"i": start + i}))
            for i, t in enumerate(texts)]


def write_shards(folder: Path, shards: list[list[Doc]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, docs in enumerate(shards):
        write_docs(folder / shard_name(i), docs)
    return folder


def read_all(folder: Path) -> list[Doc]:
    return [d for p in list_shards(folder) for d in iter_docs(p)]


def run_stage(stage: Stage, params: dict[str, Any], inp: str, up: Path, out: Path, workers: int = 1,
              sources: list[Any] | None = None, seed: int = 42, language: str = DEFAULT_LANGUAGE) -> StageResult:
    """Run `stage` on one input folder as the runner would: its params get the recipe's `language` as a recipe
    gives it to every stage that has the field (pipeline.recipe), unless `params` names one."""
    out.mkdir(parents=True, exist_ok=True)
    recipe = types.SimpleNamespace(seed=seed, sources=sources or [])
    if "language" in stage.params_model.model_fields:
        params = {"language": language, **params}
    ctx = StageContext(out_dir=out, params=stage.params_model.model_validate(params),
                       inputs={inp: StageInput(inp, up, {"meta": {}})}, recipe=recipe, workers=workers)
    res = stage.run(ctx)
    assert res.funnel is not None and res.funnel.problems() == [], res.funnel.problems()
    for name, f in res.by_source.items():
        assert f.problems() == [], (name, f.problems())
    return res


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
