"""`klue gc --weights`: a finished run's model weights and checkpoints removed, its results kept. The folders stay
finished under their keys: a rerun is cached (and passes `--verify`), the suite's table and verdict are the same
numbers (the predictions stay, so the Multi-Bootstrap resamples as before), `klue merge` carries the pruned
folders into another workdir and a whole copy restores them; a stage that would build on the removed weights is
refused with the reason. On the two-stage graph of the fine-tuning tests (a tiny model, the real finetune stage),
two pretraining replicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from finetune.report import _suite_table
from pipeline.cli import main
from pipeline.manifest import PRUNED, read_manifest
from pipeline.recipe import load_recipe
from pipeline.release.export import export_run
from pipeline.runner import Runner, StageFailed
from pipeline.stage import ArmOutput
from pipeline.stages import stage_registry
from pipeline.workdir import WorkdirError, merge_stage_folders
from testkit import finetune_stages
from testkit.finetune import FX

SPEC = "testkit.finetune_stages:REGISTRY"
REG = stage_registry(finetune_stages.REGISTRY)


def _recipe(tmp_path: Path, max_steps: int = 2) -> Path:
    raw = {"name": "rep", "stages": {
        "pretrain": {"seeds": [1, 2]},
        "finetune": {"tasks": ["nli"], "data_dir": str(FX), "seeds": [1, 2], "vs_random_init": True,
                     "max_steps": max_steps, "max_eval_examples": 30, "threads": 1, "floors": False}}}
    path = tmp_path / f"r{max_steps}.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _run(recipe: Path, wd: Path, verify: bool = False, until: str | None = None) -> Runner:
    runner = Runner(load_recipe(recipe, registry=REG), wd, REG, verify=verify, until=until)
    runner.run()
    return runner


def _table(runner: Runner) -> dict:
    outputs = [ArmOutput((a,), s["finetune"].path, s["finetune"].manifest) for a, s in runner.arm_stages.items()]
    built = _suite_table(outputs)  # not `suite_table`: its per-process cache would hand back the first table
    assert built is not None
    return built[0]


def _weights(wd: Path) -> list[str]:
    return sorted(p.relative_to(wd).as_posix() for stage in ("pretrain", "finetune")
                  for p in (wd / stage).rglob("*.safetensors"))


def _gc(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["gc", *args, "--registry", SPEC], catch_exceptions=False)
    return res.exit_code, res.output


def test_gc_weights_keeps_a_run_cached_verifiable_mergeable_and_refuses_to_build_on_what_it_removed(tmp_path):
    wd = tmp_path / "w"
    recipe = _recipe(tmp_path)
    first = _run(recipe, wd)
    table = _table(first)
    heavy = _weights(wd)
    # the 2 pretraining replicates' final weights (the finetune stage saves no model: its folders are results only)
    assert heavy == sorted(f"pretrain/{s['pretrain'].path.name}/final/model.safetensors"
                           for s in first.arm_stages.values())
    kept_before = {p: p.read_bytes() for stage in ("pretrain", "finetune") for p in (wd / stage).rglob("*")
                   if p.is_file() and p.relative_to(wd).as_posix() not in heavy and p.name != "manifest.json"}

    code, out = _gc(str(wd), "--weights")
    assert code == 0, out
    assert "weights in 2 folders the last run uses" in out and "rerun with --yes" in out
    assert _weights(wd) == heavy  # listing removes nothing
    code, out = _gc(str(wd), "--weights", "--yes")
    assert code == 0, out
    assert f"removed {len(heavy)} weight files from 2 folders" in out
    assert _weights(wd) == []
    # everything else byte for byte, and each manifest names what went, still listing it with its sha256
    assert {p: p.read_bytes() for p in kept_before} == kept_before
    for outcome in (s["pretrain"] for s in first.arm_stages.values()):
        manifest = read_manifest(outcome.path)
        assert manifest is not None
        rel = outcome.path.relative_to(wd).as_posix()
        gone = sorted(w[len(rel) + 1:] for w in heavy if w.startswith(rel + "/"))
        assert manifest[PRUNED]["files"] == gone and set(gone) <= set(manifest["files"])
        assert manifest[PRUNED]["bytes"] == sum(manifest["files"][f]["bytes"] for f in gone)
    code, out = _gc(str(wd), "--weights")
    assert "weights in 0 folders" in out

    # the same recipe again, every file checked: all cached, the same table (intervals and p included)
    again = _run(recipe, wd, verify=True)
    assert {o.status for s in again.arm_stages.values() for o in s.values()} == {"skipped"}
    assert json.dumps(_table(again), sort_keys=True) == json.dumps(table, sort_keys=True)

    # an export of the removed weights: refused, saying why
    with pytest.raises(WorkdirError, match=r"its weights \(1 file\) were removed by `klue gc --weights` at .*"
                                           r"--force pretrain"):
        export_run(wd, tmp_path / "out", arm="pretrain_seed=1")
    assert not (tmp_path / "out").exists()

    # a fine-tuning that would start from the removed weights: refused, saying why and what to do
    with pytest.raises(StageFailed) as failed:
        _run(_recipe(tmp_path, max_steps=3), wd)
    assert failed.value.stage == "finetune"
    assert "its input pretrain" in failed.value.message and "removed by `klue gc --weights`" in failed.value.message
    assert "--force pretrain" in failed.value.message

    # the pruned folders merge into a fresh workdir, where the run is cached as here
    other = tmp_path / "other"
    merged = merge_stage_folders([wd], other)
    assert {how for _, _, how in merged} == {"linked"}
    assert {o.status for s in _run(recipe, other, verify=True).arm_stages.values() for o in s.values()} == {"skipped"}
    # and a whole copy of the same keys (pretraining rerun elsewhere: the same bytes) gives them their weights back
    whole = tmp_path / "whole"
    _run(recipe, whole, until="pretrain")
    restored = merge_stage_folders([whole], wd)
    assert [how for _, _, how in restored] == ["restored"] * 2
    assert _weights(wd) == heavy and all(PRUNED not in (read_manifest(o.path) or {})
                                         for s in first.arm_stages.values() for o in s.values())
    assert _run(_recipe(tmp_path, max_steps=3), wd).arm_stages  # now it trains


def test_a_prune_killed_after_its_manifest_is_finished_by_the_next(tmp_path):
    from pipeline.manifest import file_table, write_manifest
    from pipeline.workdir import prune_weights

    folder = tmp_path / "pretrain" / "0123456789abcdef"
    (folder / "final").mkdir(parents=True)
    (folder / "final" / "model.safetensors").write_bytes(b"w" * 100)
    (folder / "summary.json").write_text("{}\n")
    manifest = {"key": "0123456789abcdef" + "0" * 48, "files": file_table(folder)}
    # the manifest says the weights went, but the kill came before the unlink
    write_manifest(folder, {**manifest, PRUNED: {"files": ["final/model.safetensors"], "bytes": 100, "at": "t"}})
    marked = read_manifest(folder)
    assert marked is not None
    assert prune_weights(folder, marked, ("final/*.safetensors",)) == (1, 100)
    assert not (folder / "final").exists() and (folder / "summary.json").is_file()
    assert read_manifest(folder)[PRUNED]["files"] == ["final/model.safetensors"]  # type: ignore[index]
