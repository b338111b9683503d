"""What a comparison resamples: each run's per-example statistics of its task's main metric, read back from the
run's predictions and the gold evaluation examples, grouped into pretraining replicates (`finetune.stats`).

A table row's cell for one task is an *arm*: its pretraining replicates, each with its fine-tuning runs. A
pretrained row has one replicate per pretraining seed (`pretrain_seed` in the run's metrics.json; one replicate
when the run names none: a single pretraining run), each fine-tuned with every seed in the run's `seeds`. A
random init is a replicate per init: one per replicate's seed (`init_seed`, fine-tuned with every seed), or, where
the weights came from the fine-tuning seed itself (one pretraining run), one per seed.

The bootstrap unit is the task's `split_key` (the guid; an MRC article, a WoS dialogue, a JNLI image): the same
unit that keeps examples together when a split is carved, for the same reason (examples sharing it are not
independent). A seed whose metric is undefined on the whole evaluation set (NaN: a constant STS prediction) is
left out of the arm; the table's cell counts it (`finetune.results`: "n=2 of 3").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finetune.data import load_task_data
from finetune.records import DataError, Example, read_jsonl
from finetune.registry import get_task
from finetune.stats import Comparison, ScoreFn, grouped, multi_bootstrap


@dataclass
class ArmEvidence:
    """One arm of one task: per pretraining replicate, per fine-tuning run, its (units x statistics) array."""

    task: str
    units: list[str]
    score: ScoreFn
    replicates: list[list[np.ndarray]]


def run_stats(task: Any, preds: list[dict[str, Any]], golds: list[Example], where: str) -> Any:
    """The `ExampleStats` of the main metric for one run's predictions, in gold order: every gold example of the
    evaluation split must be predicted (a partial file would compare different examples)."""
    by_key = {task.prediction_key(p): p for p in preds}
    missing = [g["guid"] for g in golds if g["guid"] not in by_key]
    if missing:
        raise DataError(f"{where}: {len(missing)} evaluation example(s) have no prediction, e.g. {missing[0]!r}")
    stats = task.main_metric_stats([by_key[g["guid"]] for g in golds], golds)
    if stats is None:
        raise DataError(f"{where}: task {task.name!r} declares no per-example statistics (Task.main_metric_stats)")
    return stats


def arm_evidence(runs: list[tuple[dict[str, Any], Path]], golds: list[Example]) -> ArmEvidence:
    """The arm of one table cell from its runs (metrics.json records with their folders, one per pretraining
    replicate of a pretrained row, one for a random-init row) and the task's evaluation examples."""
    task = get_task(runs[0][0]["task"])
    units = [task.split_key(g) for g in golds]
    members: dict[str, list[np.ndarray]] = {}  # replicate -> its runs, in order
    score = None
    for run, folder in runs:
        # a random init whose weights came from its fine-tuning seed: every seed its own init; from a replicate's
        # seed (`init_seed`): one init, fine-tuned with every seed
        own_init = run.get("random_init") and run.get("init_seed") is None
        for seed in run["seeds"]:
            path = folder / f"seed-{seed}" / "predictions.jsonl"
            if not path.is_file():
                raise DataError(f"{path}: no predictions (a comparison recomputes the metric on resampled examples)")
            stats = run_stats(task, [rec for _, rec in read_jsonl(path)], golds, str(path))
            score = stats.score
            if not math.isfinite(stats.total()):
                continue
            replicate = f"init {seed}" if own_init else f"{folder}:{run.get('pretrain_seed')}"
            members.setdefault(replicate, []).append(grouped(stats.values, units))
    if score is None:
        raise DataError(f"{task.name}: no fine-tuning runs to compare")
    return ArmEvidence(task.name, list(dict.fromkeys(units)), score, list(members.values()))


def compare_arms(a: ArmEvidence, b: ArmEvidence, margin: float | None = None, seed: int = 0) -> Comparison | None:
    """The Multi-Bootstrap of A against B, or None when a side has no defined run left."""
    if a.units != b.units:
        raise DataError(f"{a.task}: the two rows were evaluated on different examples; they cannot be compared")
    if not a.replicates or not b.replicates:
        return None
    return multi_bootstrap(a.replicates, b.replicates, a.score, seed=seed, margin=margin)


def eval_examples(run: dict[str, Any]) -> list[Example]:
    """A run's evaluation examples, read again from the files its metrics.json names (`data`: the dev file, the
    split and its caps), as `finetune.data.load_task_data` chose them."""
    source = run.get("data") or {}
    where = source.get("path") if source.get("format") == "hf-datasets" else source.get("dev")
    if not where:
        raise DataError(f"{run.get('task')} run {run.get('label')!r}: metrics.json names no data files")
    root = Path(where) if source.get("format") == "hf-datasets" else Path(where).parent
    task = get_task(run["task"], data_dir=root)
    data = load_task_data(task, root, split=source.get("split", "auto"), eval_fraction=source.get("eval_fraction")
                          or 0.2, max_eval=source.get("n_eval"))
    return data.eval


def gather(runs: list[tuple[dict[str, Any], Path]], golds: dict[str, list[Example]] | None = None
           ) -> tuple[dict[tuple[str, str], ArmEvidence], list[str]]:
    """Every trained table cell's arm, (label, task) -> `ArmEvidence`, from (metrics.json record, folder) pairs;
    floors train nothing and have none. `golds`: task -> its evaluation examples where the caller has them (the
    stage), else they are read again from the files each run names (`eval_examples`). A cell whose evidence
    cannot be read (predictions or data files gone) is left out and named in the returned problems: its
    comparisons show the difference only, marked untested."""
    cells: dict[tuple[str, str], list[tuple[dict[str, Any], Path]]] = {}
    for run, folder in runs:
        if not run.get("floor"):
            cells.setdefault((run["label"], run["task"]), []).append((run, folder))
    read: dict[str, list[Example]] = dict(golds or {})
    out: dict[tuple[str, str], ArmEvidence] = {}
    problems: list[str] = []
    for (label, task), members in cells.items():
        try:
            key = task if golds and task in golds else json.dumps([task, members[0][0].get("data")], sort_keys=True)
            if key not in read:
                read[key] = eval_examples(members[0][0])
            out[label, task] = arm_evidence(members, read[key])
        except DataError as e:
            problems.append(f"{label}, {task}: {e}")
    return out, problems
