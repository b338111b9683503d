"""The fine-tuning part of a model card: the finetune stage's runs -> the results table and `model-index` entries,
which `FinetuneStage.card_facts` contributes to the card (pipeline/release/card.py) as its `evaluation`.

The table is `finetune.results`' own (`load_runs` / `table_of` / `to_markdown` over the stage's run folders):
the pretrained row, random init, the floors, Δ with the Multi-Bootstrap's interval and p (Holm-adjusted), the
suite's published rows, and its notes († dev split, ‡ capped sample, the departure footnotes, § generated data),
narrowed to the columns this run has. The `model-index` holds the pretrained row only: each task's official metrics (KLUE-baseline's names, the
mean over the seeds, as in the run's metrics.json), on the suite's Hub dataset and config, the split named and
marked. Tasks whose data is generated (§) stay out of it: their scores say nothing about the benchmark.
"""

from __future__ import annotations

from typing import Any

from finetune.registry import ALL_TASKS
from finetune.results import MINIMAL_POINTS, load_runs, table_of, to_markdown
from finetune.verdict import verdict
from pipeline.release.facts import Evaluation
from pipeline.stage import StageInput

# suite -> (Hub dataset id, pretty name); task -> (suite, dataset config, Hub task type)
HUB_DATASETS = {"klue": ("klue/klue", "KLUE"), "jglue": ("shunk031/JGLUE", "JGLUE")}
HUB_TASKS = {
    "ynat": ("klue", "ynat", "text-classification"), "sts": ("klue", "sts", "text-classification"),
    "nli": ("klue", "nli", "text-classification"), "ner": ("klue", "ner", "token-classification"),
    "re": ("klue", "re", "text-classification"), "dp": ("klue", "dp", "token-classification"),
    "mrc": ("klue", "mrc", "question-answering"), "dst": ("klue", "wos", "text-generation"),
    "jsts": ("jglue", "JSTS", "sentence-similarity"), "jnli": ("jglue", "JNLI", "text-classification"),
    "jsquad": ("jglue", "JSQuAD", "question-answering"),
    "jcommonsenseqa": ("jglue", "JCommonsenseQA", "multiple-choice"),
}
DEV_SPLIT, CAPPED = "†", "‡"


def evaluation(finetune: StageInput) -> Evaluation | None:
    """The card's evaluation from a finished finetune stage folder; None when it fine-tuned nothing."""
    rel = finetune.meta.get("runs") or []
    if not rel:
        return None
    runs = load_runs([finetune.path / r for r in rel])
    params = finetune.manifest.get("params") or {}
    generated = set(params.get("generated") or [])
    table = table_of(list(zip(runs, [finetune.path / r for r in rel], strict=True)), generated=generated,
                     margin=float(params.get("equivalence_margin") or MINIMAL_POINTS))
    ours = [r for r in runs if not r.get("random_init") and not r.get("floor")]
    label = ours[0]["label"] if ours else None
    baseline = next((r["label"] for r in runs if r.get("random_init")), None)
    lines = verdict(table, label, baseline) if label else []
    md = [_intro(runs, generated), "", _markdown(table)]
    if lines:
        md += ["What the table says (each task's main metric; Multi-Bootstrap, Holm's correction over the tasks):", "",
               *(f"- {line}" for line in lines)]
    return Evaluation("\n".join(md), eval_results([r for r in ours if r["task"] not in generated]),
                      _limitations(ours, generated))


def eval_results(runs: list[dict[str, Any]]) -> list[Any]:
    """One `huggingface_hub.EvalResult` per (task, official metric) of the pretrained runs: the mean over the
    seeds, exactly as metrics.json holds it."""
    from huggingface_hub import EvalResult

    out = []
    for run in runs:
        task = run["task"]
        suite, config, task_type = HUB_TASKS[task]
        dataset, pretty = HUB_DATASETS[suite]
        data = run.get("data") or {}
        split, marks = "validation", ""
        if data.get("split") == "dev-split":
            frac = data.get("eval_fraction") or 0.2
            split = f"validation ({frac:.0%} of it; trained on the other {1 - frac:.0%})"
            marks += f" {DEV_SPLIT}"
        if any(data.get(f"n_{k}", 0) < data.get(f"n_{k}_available", 0) for k in ("train", "eval")):
            marks += f" {CAPPED}"
        titles = {c.metric: c.title for c in ALL_TASKS[task].columns}
        seeds = len(run.get("seeds") or [])
        for metric in run.get("metric_names") or list(run["mean"]):
            value = run["mean"].get(metric)
            if value is None:
                continue
            std = (run.get("std") or {}).get(metric)
            spread = (f", mean of {seeds} seeds" + (f" (std {std:.2f})" if std is not None else "")) if seeds > 1 \
                else ", 1 seed"
            out.append(EvalResult(
                task_type=task_type, task_name=ALL_TASKS[task].title, dataset_type=dataset,
                dataset_name=f"{pretty} {config}", dataset_config=config, dataset_split=split,
                metric_type=metric, metric_value=value, metric_name=f"{titles.get(metric, metric)}{marks}{spread}"))
    return out


def _intro(runs: list[dict[str, Any]], generated: set[str]) -> str:
    tasks = list(dict.fromkeys(r["task"] for r in runs))
    seeds = max((len(r.get("seeds") or []) for r in runs if not r.get("floor")), default=0)
    inits = "against random init of the same shape" if any(r.get("random_init") for r in runs) else ""
    floor = "and the no-model floor" if any(r.get("floor") for r in runs) else ""
    against = " ".join(x for x in (inits, floor) if x)
    text = (f"Fine-tuned by the run's `finetune` stage on {len(tasks)} task{'s' if len(tasks) > 1 else ''} "
            f"({', '.join(tasks)}), {seeds} seed{'s' if seeds > 1 else ''} each"
            + (f", {against}" if against else "") + "; official metrics as KLUE-baseline computes them, on the "
            "dev sets (scores x 100). The metadata's `model-index` holds the pretrained row: each task's metrics, "
            f"mean over the seeds, with the split named; {DEV_SPLIT} and {CAPPED} in a metric's name are the table's "
            "marks, explained under it.")
    shown = [t for t in tasks if t in generated]
    if shown:
        text += f" {', '.join(shown)}: generated data, not the benchmark's (§), left out of the `model-index`."
    return text


def _markdown(table: dict[str, Any]) -> str:
    """`finetune.results.to_markdown` of the table, narrowed to the columns some row of ours has a score in."""
    cols = [c for c in table["columns"] if any((row.get(c) or {}).get("mean") is not None
                                               for row in table["ours"].values())]
    return to_markdown({**table, "columns": cols})


def _limitations(ours: list[dict[str, Any]], generated: set[str]) -> list[str]:
    """What the fine-tuning runs' own records say limits their scores."""
    out = []
    split = [r["task"] for r in ours if (r.get("data") or {}).get("split") == "dev-split"]
    if split:
        out.append(f"{', '.join(split)}: trained and scored on two parts of the dev file ({DEV_SPLIT}); not "
                   "comparable with the published rows.")
    sizes: dict[str, list[str]] = {}  # "48 train / 24 eval examples" -> the capped tasks of that size
    for r in ours:
        data = r.get("data") or {}
        if any(data.get(f"n_{k}", 0) < data.get(f"n_{k}_available", 0) for k in ("train", "eval")):
            sizes.setdefault(f"{data.get('n_train')} train / {data.get('n_eval')} eval examples", []).append(r["task"])
    if sizes:
        groups = [f"{', '.join(tasks)} ({size})" for size, tasks in sizes.items()]
        out.append(f"Capped samples ({CAPPED}): {'; '.join(groups)}; the scores carry the noise of small sets.")
    steps = sorted({r["max_steps"] for r in ours if r.get("max_steps")})
    if steps:
        out.append(f"Fine-tuning was capped at {', '.join(map(str, steps))} optimiser steps per run, far short of "
                   "KLUE-baseline's epochs.")
    shown = [r["task"] for r in ours if r["task"] in generated]
    if shown:
        out.append(f"{', '.join(shown)}: scored on generated data; the scores say nothing about the benchmark.")
    return out
