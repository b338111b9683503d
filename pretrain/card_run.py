"""The model card of a pretraining checkpoint (`klue export-checkpoint`, pretrain/export.py): where its facts live
in a workdir, `run.json` (the recipe's snapshot, its arms and each arm's stage folders) and the stage folders'
manifests, for a pretraining folder finished or still running; the card is pipeline/release/card.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.manifest import environment, read_manifest, upstream
from pipeline.release.facts import hardware_recorded, model_name, sources_of
from pipeline.stage import StageInput
from pipeline.workdir import WorkdirError, read_run


def pretrain_upstream(run_dir: Path) -> tuple[dict[str, StageInput], dict[str, Any] | None, str | None]:
    """For a pretraining folder (done, or `.partial` while it runs): its upstream stage folders, the recipe
    snapshot and the arm of the workdir's run.json whose `encode` folder is this run's, when there is one.
    The inputs come from the folder's manifest, or from `train_config.json` (encode_dir, tokenizer_dir) before
    it has one; a run made outside a workdir (tests, a copied folder) has none: ({}, None, None)."""
    run_dir = run_dir.resolve()  # `arms/<arm>/pretrain` is a link: its workdir is the target's
    manifest = read_manifest(run_dir)
    inputs: dict[str, StageInput] = {}
    if manifest is not None:
        inputs = {s.name: s for s in upstream({"pretrain": StageInput("pretrain", run_dir, manifest)}).values()
                  if s.name != "pretrain"}
    else:
        try:
            cfg = json.loads((run_dir / "train_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cfg = {}
        for name, folder in (("encode", cfg.get("encode_dir")), ("vocab", cfg.get("tokenizer_dir"))):
            if not folder:
                continue
            path = Path(folder) if name == "encode" else Path(folder).parent
            m = read_manifest(path)
            if m is not None and m.get("stage") == name:
                inputs[name] = StageInput(name, path, m)
        inputs = upstream(inputs) if inputs else {}
    if "encode" not in inputs:
        return inputs, None, None
    workdir = inputs["encode"].path.parent.parent
    try:
        run = read_run(workdir)
    except WorkdirError:
        return inputs, None, None
    def using(stage: str, folder: Path) -> list[dict[str, Any]]:
        folder, root = folder.resolve(), workdir.resolve()
        rel = folder.relative_to(root).as_posix() if folder.is_relative_to(root) else None
        return [a for a in run["arms"] if any(s.get("stage") == stage and s.get("path") == rel
                                              for s in a.get("stages", []))]

    # arms that differ only in pretraining share `encode`: the pretrain folder names the arm when it is done
    arms = using("pretrain", run_dir) or using("encode", inputs["encode"].path)
    if not arms:
        return inputs, None, None
    return inputs, run.get("recipe"), arms[0]["name"] if len(arms) == 1 else None


def checkpoint_facts(run_dir: Path, state: dict[str, Any], train: dict[str, Any],
                     model_dir: Path) -> tuple[dict[str, StageInput], dict[str, Any]]:
    """The card of checkpoint `state` (its train_state.json) of the pretraining run in `run_dir`, exported to
    `model_dir`: the upstream stage folders of the run's workdir when it is one (`pretrain_upstream`), and the
    facts `write_model_card` takes besides: its step and tokens, the losses logged up to it (metrics.jsonl)."""
    step = int(state["step"])
    rows = []
    if (run_dir / "metrics.jsonl").is_file():
        rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
                if line.strip()]
    rows = [r for r in rows if r.get("step", 0) <= step]
    losses = [r for r in rows if "loss" in r]
    evals = [r for r in rows if "eval_loss" in r]
    rates = [r["tokens_per_s"] for r in losses if r.get("tokens_per_s")]
    final = _json(run_dir / "summary.json")
    summary = {"steps": step, "tokens_seen": state.get("tokens"), "world_size": state.get("world_size"),
               "first_loss": losses[0]["loss"] if losses else None,
               "last_loss": losses[-1]["loss"] if losses else None,
               "eval_loss": evals[-1]["eval_loss"] if evals else None,
               "eval_mask_loss": evals[-1].get("eval_mask_loss") if evals else None,
               "eval_order_gain": evals[-1].get("eval_order_gain") if evals else None,
               "tokens_per_s": sum(rates) / len(rates) if rates else None,
               "epochs": losses[-1].get("epoch") if losses else None,
               "params": final.get("params") or _stored_parameters(model_dir),
               "mixed_precision": final.get("mixed_precision"), "precision": final.get("precision"),
               "precision_why": final.get("precision_why")}
    stages, recipe, arm = pretrain_upstream(run_dir)
    manifest = read_manifest(run_dir) or {}
    name = model_name(f"{(recipe or {}).get('name', run_dir.name)}-step-{step}") if recipe else None
    return stages, {"name": name, "recipe": (recipe or {}).get("name"),
                    "sources": sources_of((recipe or {}).get("sources") or []), "train": train, "summary": summary,
                    "hardware": hardware_recorded(manifest.get("meta") or {}, final, manifest),
                    "arm": arm if arm != "default" else None,
                    "checkpoint": {"step": step, "tokens": state.get("tokens") or 0},
                    "provenance": {"klue-pipeline": environment()["klue_version"]}}


def _stored_parameters(model_dir: Path) -> int | None:
    """Parameters stored in a model folder's safetensors (tied tensors are stored once, as they count once)."""
    from safetensors import safe_open

    path = model_dir / "model.safetensors"
    if not path.is_file():
        return None
    with safe_open(str(path), framework="pt") as f:
        total = 0
        for k in f.keys():  # noqa: SIM118 - a safetensors handle, not a dict
            n = 1
            for d in f.get_slice(k).get_shape():
                n *= d
            total += n
    return total


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
