"""What the verdict's Multi-Bootstrap costs on the shared dev sets (issue 48), against recomputing the task's own
metric code on each resample (the baseline the per-example statistics replace).

    KLUE_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python bench/verdict.py [--tasks ynat,ner] [--runs 3]

Per task: the evaluation split `klue finetune TASK` scores (the whole dev file, or its reported 20 %), predictions
made from gold with every third example changed (the time does not depend on what is right), `--runs` identical
runs a side, 2,000 draws (`finetune.stats.N_BOOT`). Reported: the statistics' build time, the Multi-Bootstrap's
time, and one `compute_metrics` call times the number of metric evaluations a naive bootstrap makes (2,000 draws x
runs x 2 sides). Report the CPU model and the load with the numbers (`lscpu`, `uptime`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the project before bench/ (whose finetune.py would shadow the package)


def predictions(task, golds):  # type: ignore[no-untyped-def]
    """Gold-derived predictions, every third example wrong."""
    if task.name == "ner":
        from finetune.tasks.ner import NER_LABELS

        return [{"guid": g["guid"], "tags": [NER_LABELS[x] if i % 3 else "O" for x in g["tags"]]}
                for i, g in enumerate(golds)]
    return [{"guid": g["guid"], "label": task.labels[(g["label"] + (i % 3 == 0)) % len(task.labels)]}
            for i, g in enumerate(golds)]


def main() -> None:
    from finetune.data import load_task_data
    from finetune.registry import get_task
    from finetune.stats import N_BOOT, multi_bootstrap

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="ynat,ner", help="classification tasks or ner")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = Path(os.environ.get("KLUE_DATA_DIR", "../shared/data")) / "klue"
    for name in args.tasks.split(","):
        task = get_task(name, data_dir=root)
        golds = load_task_data(task, root).eval
        preds = predictions(task, golds)
        t0 = time.perf_counter()
        stats = task.main_metric_stats(preds, golds)
        built = time.perf_counter() - t0
        arm = [[stats.values] * args.runs]
        t0 = time.perf_counter()
        multi_bootstrap(arm, arm, stats.score)
        boot = time.perf_counter() - t0
        task.compute_metrics(preds, golds)  # once first: the metric code imports sklearn / seqeval on first use
        t0 = time.perf_counter()
        task.compute_metrics(preds, golds)
        naive = (time.perf_counter() - t0) * N_BOOT * args.runs * 2
        print(f"{name}: {len(golds)} examples, {stats.values.shape[1]} statistics; build {built:.2f} s, "
              f"Multi-Bootstrap {boot:.2f} s ({N_BOOT} draws, {args.runs} runs a side); "
              f"recomputing the metric instead: ~{naive:.0f} s")


if __name__ == "__main__":
    main()
