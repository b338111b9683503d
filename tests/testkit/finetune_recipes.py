"""The finetune stage's tests' recipe and run helpers (tests/test_finetune_stage.py, tests/test_finetune_devices.py):
a recipe of the fixture tasks, a run of it with the test registry, and a stage folder's files to compare."""

from __future__ import annotations

from pathlib import Path

import yaml

from pipeline.recipe import load_recipe
from pipeline.runner import Runner
from pipeline.stages import stage_registry
from testkit import finetune_stages
from testkit.finetune import FX

REG = stage_registry(finetune_stages.REGISTRY)


def recipe(tmp_path: Path, finetune: dict | None = None, variants: dict | None = None, name: str = "r") -> Path:
    section = {"tasks": ["ynat", "nli"], "data_dir": str(FX), "seeds": [1, 2], "vs_random_init": True,
               "max_steps": 3, "max_eval_examples": 30, "threads": 1, **(finetune or {})}
    raw = {"name": "ft", "stages": {"finetune": section}, **({"variants": variants} if variants else {})}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def run(path: Path, workdir: Path) -> Runner:
    runner = Runner(load_recipe(path, registry=REG), workdir, REG)
    runner.run()
    return runner


def unit_files(folder: Path) -> dict[str, bytes]:
    """Every file of the stage folder but the manifest (timings) and the units' timing.json (wall times)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", "timing.json")}
