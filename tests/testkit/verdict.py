"""Run folders for the verdict's tests: a `klue finetune` run's metrics.json and each seed's predictions.jsonl on
the fixture's real evaluation examples, with chosen examples right and the rest wrong, so a comparison's
Multi-Bootstrap has real per-example statistics to resample and every score is known by construction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from finetune.data import load_task_data
from finetune.registry import get_task
from testkit.finetune import FX


def eval_data(task_name: str) -> Any:
    """The fixture's `TaskData` of a classification task (YNAT, NLI)."""
    return load_task_data(get_task(task_name, data_dir=FX), FX)


def write_run(folder: Path, task_name: str, label: str, right: dict[int, int], *, random_init: bool = False,
              pretrain_seed: int | None = None) -> dict[str, Any]:
    """A run folder whose seed s predicts the first `right[s]` evaluation examples correctly and every other one
    as the next label in the task's order (wrong); returns its metrics.json record."""
    task = get_task(task_name, data_dir=FX)
    data = eval_data(task_name)
    per_seed = {}
    for seed, n_right in right.items():
        preds = [{"guid": e["guid"], "label": task.labels[e["label"] if i < n_right else
                                                          (e["label"] + 1) % len(task.labels)]}
                 for i, e in enumerate(data.eval)]
        seed_dir = folder / f"seed-{seed}"
        seed_dir.mkdir(parents=True)
        (seed_dir / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
        per_seed[str(seed)] = task.compute_metrics(preds, data.eval)
    main = task.main_metric
    values = [m[main] for m in per_seed.values()]
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    run = {"task": task.name, "label": label, "main_metric": main, "metric_names": list(task.metric_names),
           "mean": {main: mean}, "std": {main: std}, "seeds": list(right), "per_seed": per_seed,
           "random_init": random_init, "data": data.source, "pretrain_seed": pretrain_seed}
    (folder / "metrics.json").write_text(json.dumps(run), encoding="utf-8")
    return run


def write_floor(folder: Path, task_name: str, label: str, score: float) -> dict[str, Any]:
    """A floor's metrics.json: one score, no seeds (the layout `finetune.floors` writes)."""
    task = get_task(task_name, data_dir=FX)
    run = {"task": task.name, "label": label, "main_metric": task.main_metric, "floor": {"method": label},
           "mean": {task.main_metric: score}, "std": {task.main_metric: 0.0}, "seeds": [], "per_seed": {},
           "random_init": False, "data": eval_data(task_name).source}
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(run), encoding="utf-8")
    return run
