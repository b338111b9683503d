"""Results tables (markdown and JSON): our runs beside the published baselines of their suite.

The columns and the published numbers are declared by each task next to its metrics (the `Column`s of its
`entry` in `finetune/tasks/<task>.py`: metric key, README column title, published dev scores by model), in
registry order, one block per suite (`finetune.registry.SUITES`): a table has the columns of the suites its runs belong to, and
the published rows of those suites. KLUE's numbers are the "Baseline Scores" table of the KLUE README
(https://github.com/KLUE-benchmark/KLUE, README.md at commit 0106de0161790bb1501a6c5832f733dc22d747ef), which the
paper (arXiv 2105.09680) reports as dev-set results; JGLUE's are the dev-set table of the JGLUE README
(github.com/yahoojapan/JGLUE @ 6f071c0). Runs evaluated on a split of a dev file are marked (†), because they
are not comparable with those; tasks whose data is generated here (the embedded default's MRC and WoS) are
marked (§), and their scores say nothing about the benchmark.

Usage: python -m finetune.results OUT_PREFIX RUN_DIR [RUN_DIR ...] [--compare LABEL_A,LABEL_B ...] [--curves]
(each RUN_DIR holds the metrics.json that `klue finetune` writes; runs are grouped into rows by their label).
Every row is compared with each random-init row; `--compare A,B` adds the row "Δ A − B" (two arms of an
ablation), resampled the same way (the Multi-Bootstrap of `finetune.stats` over the runs' predictions, Holm's
correction over each row's main metrics, `--margin` for the equivalence tests). `--curves` also draws OUT_PREFIX.png: each task's main metric at every
evaluation of every seed (when a model leaves a plateau matters as much as where it ends).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from finetune.data import write_json
from finetune.evidence import compare_arms, gather
from finetune.records import TaskEntry
from finetune.registry import ALL_TASKS, SUITES, task_class
from finetune.stats import holm
from finetune.tasks.base import departures
from pipeline import io
from pipeline.plots import panels

PUBLISHED_SOURCES: dict[str, str] = {
    "klue": "KLUE README, Baseline Scores table (github.com/KLUE-benchmark/KLUE, README.md @ 0106de0); dev set",
    "jglue": "JGLUE README, dev-set table (github.com/yahoojapan/JGLUE, README.md @ 6f071c0, v1.3); ×100",
}
PUBLISHED_SOURCE = PUBLISHED_SOURCES["klue"]
ALPHA = 0.05  # the verdicts' significance level (Holm-adjusted p) and the TOST's
# The default equivalence margin (a recipe's `equivalence_margin`): two rows are "equivalent" on a task when the
# two one-sided tests show their difference within ±1 point of the main metric. The KLUE paper calls the PII
# replacement's cost "minimal degradation" without a number, and issue 36 proposed ±1 point: our
# operationalisation of the paper's words, not a number from it, so it is named wherever it is used.
MINIMAL_POINTS = 1.0
GENERATED = "§"  # marks a task whose data here is generated (†, ‡: dev split, capped sample)
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"  # a row's departure footnote number


def run_departures(run: dict[str, Any]) -> list[str]:
    """What a run (its metrics.json) did otherwise than its suite's baseline (KLUE-baseline's `run_all.sh` values
    for the task, JGLUE's for a JGLUE task: the task's `defaults`): every hyperparameter that differs
    (`finetune.tasks.base.departures`), a step cap, extra evaluations, a precision other than fp32, a max
    length lowered to fit the model's positions, MRC on KorQuAD's data, and the checkpoint protocol (`finetune.data`): "klue-baseline"
    chooses the checkpoint on the split it reports (KLUE-baseline reports test, we only have dev), and the default
    "selection-split" trains on what the selection split leaves of train. A run that recorded no protocol (its
    metrics.json predates the option) is not marked for it. A floor (no model trained) has none."""
    if run.get("floor"):
        return []
    recorded = run.get("hyperparams")
    if not isinstance(recorded, dict):
        return ["hyperparameters not recorded"]
    defaults = task_class(run["task"]).defaults
    out = departures(recorded, defaults)
    if run.get("max_steps") is not None and run.get("steps_capped", True):  # a run that recorded no answer: named
        out.append(f"max_steps {run['max_steps']} (a cap on optimiser steps; baseline: whole epochs)")
    if run.get("eval_every"):
        out.append(f"eval_every {run['eval_every']} (extra evaluations; baseline: {defaults.evals_per_epoch} an epoch)")
    if run.get("precision", "fp32") != "fp32":
        out.append(f"{run['precision']} autocast (baseline: fp32)")
    used = run.get("max_length_used")
    if isinstance(used, int) and used < recorded.get("max_length", used):
        out.append(f"max length {used} (the model's positions; asked: {recorded['max_length']})")
    data: dict[str, Any] = run["data"] if isinstance(run.get("data"), dict) else {}
    if data.get("protocol") == "klue-baseline":
        out.append("checkpoint chosen on the reported split (protocol klue-baseline)")
    elif data.get("protocol") == "selection-split" and isinstance(data.get("selection_fraction"), (int, float)):
        share = round(100 * data["selection_fraction"], 1)
        out.append(f"trained on {100 - share:g} % of train; {share:g} % selects the checkpoint")
    if run["task"] == "mrc" and "korquad" in Path(str(data.get("dev") or "")).name.lower():
        # the shared folder has no KLUE-MRC file (`MrcTask.files` falls back to KorQuAD's): other data, no
        # unanswerable questions, and the published MRC column is KLUE-MRC's
        out.append("KorQuAD 1.0 data, not KLUE-MRC (no unanswerable questions; not comparable with the published "
                   "MRC scores)")
    return out


def departure_notes(rows_runs: dict[str, list[dict[str, Any]]]) -> tuple[dict[str, int], list[str]]:
    """Footnote numbers for the rows whose runs departed from the baseline (rows with the same departures share
    one) and the footnotes: what every task of the row set otherwise, then what single tasks did."""
    marks: dict[str, int] = {}
    notes: list[str] = []
    texts: dict[str, int] = {}
    for label, runs in rows_runs.items():
        per_task = {run["task"]: run_departures(run) for run in runs if not run.get("floor")}
        if not any(per_task.values()):
            continue
        common = [d for d in next(iter(per_task.values())) if all(d in v for v in per_task.values())]
        parts = []
        if common:
            parts.append(("every task: " if len(per_task) > 1 else f"{_task_title(next(iter(per_task)))}: ")
                         + "; ".join(common))
        for task, deps in per_task.items():
            rest = [d for d in deps if d not in common]
            if rest:
                parts.append(f"{_task_title(task)}: " + "; ".join(rest))
        text = " — ".join(parts)
        if text not in texts:
            texts[text] = len(texts) + 1
            notes.append(f"{superscript(texts[text])} departs from KLUE-baseline's defaults (run_all.sh, base/small; "
                         f"JGLUE's for a JGLUE task; finetune/README.md, \"Departures\"): {text}.")
        marks[label] = texts[text]
    return marks, notes


def superscript(n: int) -> str:
    return "".join(SUPERSCRIPTS[int(d)] for d in str(n))


def _task_title(task: str) -> str:
    return {"dst": "DST", "jcommonsenseqa": "JCQA"}.get(task, task.upper())


def suite_columns(tasks: Mapping[str, TaskEntry]) -> list[tuple[str, str, str]]:
    """(task, metric, column title) in table order: every task's declared columns, tasks in registry order."""
    return [(task, c.metric, c.title) for task, e in tasks.items() for c in e.columns]


def suite_published(tasks: Mapping[str, TaskEntry]) -> dict[str, dict[str, float]]:
    """model -> {column title: published score}, models in the order the columns first name them."""
    out: dict[str, dict[str, float]] = {}
    for e in tasks.values():
        for c in e.columns:
            for model, value in c.published.items():
                out.setdefault(model, {})[c.title] = value
    return out


# The KLUE suite's, for callers that want the default table's layout.
COLUMNS: list[tuple[str, str, str]] = suite_columns(SUITES["klue"])
PUBLISHED: dict[str, dict[str, float]] = suite_published(SUITES["klue"])


def suites_of(runs: list[dict[str, Any]]) -> list[str]:
    """The suites the runs' tasks belong to, in registry order; KLUE when there is no run. An unknown task is
    an error naming it."""
    names = []
    for run in runs:
        suite = next((s for s, tasks in SUITES.items() if run.get("task") in tasks), None)
        if suite is None:
            raise ValueError(f"run {run.get('label')!r}: task {run.get('task')!r} is in no suite "
                             f"({', '.join(SUITES)})")
        names.append(suite)
    return [s for s in SUITES if s in names] or ["klue"]


def load_runs(run_dirs: list[Path]) -> list[dict[str, Any]]:
    runs = []
    for d in run_dirs:
        path = Path(d) / "metrics.json" if Path(d).is_dir() else Path(d)
        if not path.is_file():
            raise ValueError(f"{path}: no such file (a run folder holds the metrics.json that `klue finetune` "
                             "writes when all its seeds are done)")
        try:
            runs.append(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    return runs


def _runs_by_cell(runs: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(label, task) -> its runs: one, or one per pretraining replicate (`pretrain_seed`, each named once). Two
    runs of one cell that are not distinct replicates would silently replace each other's scores: refused."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in runs:
        cell = cells.setdefault((run["label"], run["task"]), [])
        seeds = [r.get("pretrain_seed") for r in cell] + [run.get("pretrain_seed")]
        if cell and (None in seeds or len(set(seeds)) < len(seeds)):
            raise ValueError(f"two {run['task']} runs are labelled {run['label']!r}: give them different labels "
                             "(or, for pretraining replicates, different `pretrain_seed`s)")
        cell.append(run)
    return cells


def _cell(runs: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """A table cell from a cell's runs: mean and sample std over every (pretraining replicate x fine-tuning seed)
    run with a defined score, how many runs that is (`seeds`) and how many had none (`failed`: a NaN score, named,
    never silently dropped from n), and with several pretraining replicates, the std of their means (`spread`:
    the pretraining seed's share of the variance). A floor (no seeds) is its one score."""
    import numpy as np

    first = runs[0]
    data = first["data"]
    base = {"dev_split": data.get("split") == "dev-split", "n_eval": data.get("n_eval"),
            "n_train": data.get("n_train"),
            "capped": any(data.get(f"n_{k}", 0) < data.get(f"n_{k}_available", 0) for k in ("train", "eval"))}
    if not first["seeds"]:
        return {**base, "mean": first["mean"].get(metric), "std": None, "seeds": 0, "failed": 0, "replicates": 0}
    if len(runs) == 1 and "per_seed" not in first:  # a summary alone (no per-seed scores): as it says
        return {**base, "mean": first["mean"].get(metric), "std": first["std"].get(metric),
                "seeds": len(first["seeds"]), "failed": 0, "replicates": 1}
    per_replicate: list[list[float]] = []
    failed = 0
    for run in runs:
        values = [(run.get("per_seed") or {}).get(str(s), {}).get(metric) for s in run["seeds"]]
        defined = [float(v) for v in values if v is not None and np.isfinite(v)]
        failed += len(values) - len(defined)
        if run.get("random_init") and run.get("init_seed") is None:  # each seed draws its own initial weights
            per_replicate += [[v] for v in defined]
        elif defined:
            per_replicate.append(defined)
    flat = [v for rep in per_replicate for v in rep]
    if not flat:
        return {**base, "mean": None, "std": None, "seeds": 0, "failed": failed, "replicates": 0}
    pretrained = [run for run in runs if not run.get("random_init")]
    spread = (float(np.std([np.mean(r) for r in per_replicate], ddof=1))
              if len(pretrained) > 1 and len(per_replicate) > 1 else None)
    return {**base, "mean": float(np.mean(flat)), "std": float(np.std(flat, ddof=1)) if len(flat) > 1 else 0.0,
            "seeds": len(flat), "failed": failed, "replicates": len(per_replicate), "spread": spread}


def build_table(runs: list[dict[str, Any]], pairs: list[tuple[str, str]] | None = None,
                baseline_of: dict[str, str] | None = None, generated: Collection[str] = (),
                evidence: Mapping[tuple[str, str], Any] | None = None, margin: float = MINIMAL_POINTS
                ) -> dict[str, Any]:
    """Rows: each run label (ours), then the published baselines. A cell is mean, std, runs and whether the
    evaluation used a dev split (`_cell`). `pairs`: (A, B) row labels to compare besides each row against random
    init. `baseline_of`: the one random-init row a row is compared with (an ablation arm with the random init of
    its own vocabulary); a row it does not name is compared with every random-init row. `generated`: tasks whose
    data is generated, not the suite's: their columns are listed under "generated" (marked § in the table).
    `evidence`: (label, task) -> `finetune.evidence.ArmEvidence`, what the comparisons resample (`compare`);
    `margin`: the equivalence margin of the comparisons, in points of the main metric."""
    suites = suites_of(runs)
    columns = [col for s in suites for col in suite_columns(SUITES[s])]
    published: dict[str, dict[str, float]] = {}  # a model in two suites (XLM-R) is one row
    for s in suites:
        for model, scores in suite_published(SUITES[s]).items():
            published.setdefault(model, {}).update(scores)
    rows: dict[str, dict[str, Any]] = {}
    row_runs: dict[str, list[dict[str, Any]]] = {}
    baselines: list[str] = []  # rows of randomly initialised models
    for (label, task), cell_runs in _runs_by_cell(runs).items():
        row = rows.setdefault(label, {})
        row_runs.setdefault(label, []).extend(cell_runs)
        if cell_runs[0].get("random_init") and label not in baselines:
            baselines.append(label)
        for t, metric, col in columns:
            if t == task:
                row[col] = _cell(cell_runs, metric)
    marks, notes = departure_notes(row_runs)
    for a, b in pairs or []:
        missing = [x for x in (a, b) if x not in rows]
        if missing:
            raise ValueError(f"--compare {a},{b}: no run labelled {missing[0]!r} (labels: {', '.join(rows)})")
    main_of = {c: task for task, metric, c in columns if metric == ALL_TASKS[task].main_metric}
    floors = [label for label, rs in row_runs.items() if all(r.get("floor") for r in rs)]

    def comp(a: str, b: str) -> dict[str, Any]:
        return compare(rows[a], rows[b], a, b, main_of, evidence or {}, margin)

    return {
        "suites": suites,
        "columns": [c for _, _, c in columns],
        "main_columns": list(main_of),
        "generated": [c for task, _, c in columns if task in generated and task in {r["task"] for r in runs}],
        "ours": rows,
        "random_init_rows": baselines,
        "floors": floors,
        # row label -> footnote number, and the footnotes: rows whose runs departed from the baseline's defaults
        "departure_marks": marks,
        "departure_notes": notes,
        "margin": margin,
        # floors are not compared: the verdict names where one is at or above a model (`finetune.verdict`)
        "vs_random_init": [comp(m, b) for b in baselines for m in rows
                           if m not in baselines and m not in floors and (baseline_of or {}).get(m, b) == b],
        # a pair already compared against random init is not repeated
        "between_arms": [comp(a, b) for a, b in pairs or [] if not (b in baselines and a not in baselines)],
        "baseline_of": dict(baseline_of or {}),
        "published": {m: {c: v.get(c) for _, _, c in columns} for m, v in published.items()},
        "published_source": "; ".join(PUBLISHED_SOURCES[s] for s in suites),
    }


def table_of(runs: list[tuple[dict[str, Any], Path]], pairs: list[tuple[str, str]] | None = None,
             baseline_of: dict[str, str] | None = None, generated: Collection[str] = (),
             margin: float = MINIMAL_POINTS) -> dict[str, Any]:
    """`build_table` of (metrics.json record, its folder) pairs, with the comparisons' evidence read from the runs'
    predictions (`finetune.evidence.gather`); cells whose evidence could not be read are named under
    `evidence_problems` (the table says so under it)."""
    evidence, problems = gather(runs)
    table = build_table([run for run, _ in runs], pairs, baseline_of, generated, evidence, margin)
    table["evidence_problems"] = problems
    return table


def compare(model: dict[str, Any], baseline: dict[str, Any], model_label: str, baseline_label: str,
            main_of: Mapping[str, str], evidence: Mapping[tuple[str, str], Any], margin: float) -> dict[str, Any]:
    """Per column, the difference of the means (model - baseline). On each task's main metric, where both rows
    have their runs' per-example statistics (`evidence`), the Multi-Bootstrap of MultiBERTs (`finetune.stats`):
    its 95 % interval, two-sided p, Holm's adjusted p over the main metrics of this comparison (the family: the
    tasks both rows have; `holm`), and the two one-sided tests at `margin`. Secondary metrics get the difference
    only: the verdict speaks of main metrics, and testing every column would multiply the family.

    Why not Welch's t over fine-tuning seeds (this table's test until 2026-12): it sees neither the evaluation
    sample nor the pretraining seed, and a cell with one seed, or no spread, could not be tested at all."""
    cells: dict[str, Any] = {}
    for col, a in model.items():
        b = baseline.get(col)
        if b is None or a["mean"] is None or b["mean"] is None:
            continue
        cell: dict[str, Any] = {"diff": a["mean"] - b["mean"], "p": None, "ci95": None}
        task = main_of.get(col)
        if task is None:
            cell["secondary"] = True
        elif (model_label, task) in evidence and (baseline_label, task) in evidence:
            found = compare_arms(evidence[model_label, task], evidence[baseline_label, task], margin=margin)
            if found is not None:
                cell.update(diff=found.diff, ci95=list(found.ci), p=found.p, p_equivalence=found.p_equivalence,
                            equivalent=found.equivalent, margin=margin, replicates=list(found.replicates),
                            runs=list(found.runs), n_boot=found.n_boot)
        cells[col] = cell
    family = [c for c in cells if cells[c]["p"] is not None]
    for c, adjusted in zip(family, holm([cells[c]["p"] for c in family]), strict=True):
        cells[c]["p_holm"] = adjusted
    return {"model": model_label, "baseline": baseline_label, "cells": cells, "family": family}


def delta_text(cell: dict[str, Any]) -> str:
    """A Δ cell: `+2.30 [-0.51, +5.11] (p=0.012, Holm 0.048)`; the difference alone where nothing was tested."""
    text = f"{cell['diff']:+.2f}"
    if cell.get("ci95") is not None:
        text += f" [{cell['ci95'][0]:+.2f}, {cell['ci95'][1]:+.2f}]"
    if cell["p"] is None:
        return text
    holm = cell.get("p_holm")
    return text + f" (p={cell['p']:.2g}" + ("" if holm is None or holm == cell["p"] else f", Holm {holm:.2g}") + ")"


def marked(table: dict[str, Any], col: str) -> str:
    """A column's title, with the generated-data mark when its task's data is not the suite's."""
    return f"{col} {GENERATED}" if col in table.get("generated", ()) else col


def to_markdown(table: dict[str, Any]) -> str:
    cols = table["columns"]
    lines = ["| model | " + " | ".join(marked(table, c) for c in cols) + " |", "|---|" + "---:|" * len(cols)]
    any_split = any_capped = any_failed = any_spread = False
    for label, row in table["ours"].items():
        cells = []
        for c in cols:
            cell = row.get(c)
            if cell is None or cell["mean"] is None:
                cells.append("–")
                continue
            text = f"{cell['mean']:.2f}" + (f" ± {cell['std']:.2f}" if cell["seeds"] > 1 else "")
            if cell.get("spread") is not None:
                text += f" (pt {cell['spread']:.2f})"
                any_spread = True
            if cell.get("failed"):
                text += f" (n={cell['seeds']} of {cell['seeds'] + cell['failed']})"
                any_failed = True
            if cell["dev_split"]:
                text += " †"
                any_split = True
            if cell.get("capped"):
                text += " ‡"
                any_capped = True
            cells.append(text)
        mark = table.get("departure_marks", {}).get(label)
        lines.append(f"| {label}{' ' + superscript(mark) if mark else ''} | " + " | ".join(cells) + " |")
    for d in table.get("vs_random_init", []) + table.get("between_arms", []):
        cells = []
        for c in cols:
            cell = d["cells"].get(c)
            if cell is None:
                cells.append("–")
            else:
                cells.append(delta_text(cell))
        lines.append(f"| Δ {d['model']} − {d['baseline']} | " + " | ".join(cells) + " |")
    for model, row in table["published"].items():
        lines.append(f"| {model} (published) | "
                     + " | ".join("–" if row.get(c) is None else f"{row[c]:.2f}" for c in cols) + " |")
    notes = [f"Published rows: {table['published_source']}."]
    if table.get("vs_random_init") or table.get("between_arms"):
        notes.append("Δ rows: difference of the means; on each task's main metric, [its 95 % interval] and the "
                     "two-sided p of the Multi-Bootstrap (Sellam et al. 2021: pretraining replicates, fine-tuning "
                     "seeds and evaluation examples resampled together; finetune/stats.py), with Holm's adjusted p "
                     "over the main metrics of the row. Secondary metrics: the difference of the means only.")
    for problem in table.get("evidence_problems", []):
        notes.append(f"Not resampled ({problem}): its Δ cells show the difference only.")
    if any_spread:
        notes.append("(pt s): the cell's runs come from several pretraining runs (`stages.pretrain.seeds`); s is the "
                     "sample std of the pretraining runs' means (each over its fine-tuning seeds), the pretraining "
                     "seed's share of the ± beside it.")
    if any_failed:
        notes.append("(n=a of b): b runs, of which only a have a defined score (a NaN score, e.g. a constant STS "
                     "prediction, is left out of the mean and of every comparison).")
    if any_split:
        notes.append("† evaluated on a split of the dev file, trained on the rest (KLUE: 20% by guid hash, MRC by "
                     "article; JNLI by image, JSQuAD by article; metrics.json of the run says which): not "
                     "comparable with the published dev scores.")
    if any_capped:
        notes.append("‡ trained and/or evaluated on a capped sample of the examples (fixed guid-hash sample; "
                     "metrics.json of the run gives n_train and n_eval).")
    notes += table.get("departure_notes", [])
    if any(c in cols for c in table.get("generated", ())):
        notes.append(f"{GENERATED} the task's data here is generated, not {suite_names(table)}'s (the embedded "
                     "default's MRC and WoS): its scores say nothing about the benchmark and are not comparable "
                     "with the published rows.")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"


def suite_names(table: dict[str, Any]) -> str:
    return "/".join(s.upper() for s in table.get("suites", ["klue"]))


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m finetune.results", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="output prefix: OUT.md and OUT.json")
    ap.add_argument("runs", type=Path, nargs="+", help="run folders (or their metrics.json)")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL_A,LABEL_B",
                    help="also the row Δ A − B, resampled (repeatable)")
    ap.add_argument("--margin", type=float, default=MINIMAL_POINTS,
                    help="equivalence margin, points of a task's main metric (default: %(default)s)")
    ap.add_argument("--curves", action="store_true",
                    help="also OUT.png: each task's main metric at every evaluation, a line per label and seed")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    pairs = []
    for spec in args.compare:
        a, sep, b = spec.partition(",")
        if not sep or not a.strip() or not b.strip():
            ap.error(f"--compare {spec!r}: expected LABEL_A,LABEL_B")
        pairs.append((a.strip(), b.strip()))
    try:
        print(write_results(args.out, args.runs, pairs, curves=args.curves, margin=args.margin))
    except ValueError as e:
        ap.error(str(e))


def write_results(out: Path, run_dirs: list[Path], pairs: list[tuple[str, str]] | None = None,
                  curves: bool = False, generated: Collection[str] = (), margin: float = MINIMAL_POINTS) -> str:
    """`out`.json and `out`.md from the runs' metrics.json files (and with `curves`, `out`.png: `plot_curves`);
    returns the markdown. `generated`: tasks whose data is generated (marked §)."""
    runs = load_runs(run_dirs)
    folders = [Path(d) if Path(d).is_dir() else Path(d).parent for d in run_dirs]
    table = table_of(list(zip(runs, folders, strict=True)), pairs, generated=generated, margin=margin)
    md = to_markdown(table)
    drawn = learning_curves(run_dirs, runs) if curves else {}
    if curves and not drawn:
        raise ValueError("--curves: no run has an evaluation history to plot (floors only)")
    write_json(out.with_suffix(".json"), table)
    io.write_text(out.with_suffix(".md"), md)
    if drawn:
        io.write_bytes(out.with_suffix(".png"), plot_curves(drawn))
    return md


def learning_curves(run_dirs: list[Path], runs: list[dict[str, Any]]
                    ) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """{"task main_metric": {"label, seed s": [(step, score)]}} for the runs (`load_runs(run_dirs)`) in
    `run_dirs`: every evaluation of every seed, read from the `history` of the seed's own metrics.json
    (`RUN_DIR/seed-S/metrics.json`, one entry per epoch and at the last step), which the run's metrics.json does
    not repeat. A floor (`python -m finetune.floors`) is a level line under its own label across the steps of its
    task's panel."""
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    floors: list[tuple[str, str, float]] = []
    for d, run in zip(run_dirs, runs, strict=True):
        folder = Path(d) if Path(d).is_dir() else Path(d).parent
        name = f"{run['task']} {run['main_metric']}"
        panel = out.setdefault(name, {})
        if run.get("floor"):  # nothing trained: a level line across the panel's steps
            floors.append((name, run["label"], float(run["mean"][run["main_metric"]])))
            continue
        for seed in run["seeds"]:
            path = folder / f"seed-{seed}" / "metrics.json"
            try:
                history = json.loads(path.read_text(encoding="utf-8"))["history"]
                panel[f"{run['label']}, seed {seed}"] = [(float(h["step"]), float(h[run["main_metric"]]))
                                                         for h in history]
            except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}: no evaluation history to plot ({type(e).__name__}: {e})") from None
    for name, label, score in floors:
        steps = [x for points in out[name].values() for x, _ in points]
        if steps:
            out[name][label] = [(min(steps), score), (max(steps), score)]
    return {name: panel for name, panel in out.items() if panel}


def plot_curves(curves: dict[str, dict[str, list[tuple[float, float]]]]) -> bytes:
    """One panel per task: its main metric against the optimiser step, a line per (label, seed); PNG bytes,
    the same for the same curves (`pipeline.plots`)."""
    groups = {series: series.rsplit(", seed ", 1)[0] for panel in curves.values() for series in panel}
    return panels(list(curves.items()), xlabel="optimiser step", groups=groups)


if __name__ == "__main__":
    main()
