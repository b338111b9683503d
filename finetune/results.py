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
ablation), with the same Welch test. `--curves` also draws OUT_PREFIX.png: each task's main metric at every
evaluation of every seed (when a model leaves a plateau matters as much as where it ends).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from finetune.data import write_json
from finetune.records import TaskEntry
from finetune.registry import ALL_TASKS, SUITES
from pipeline import io

PUBLISHED_SOURCES: dict[str, str] = {
    "klue": "KLUE README, Baseline Scores table (github.com/KLUE-benchmark/KLUE, README.md @ 0106de0); dev set",
    "jglue": "JGLUE README, dev-set table (github.com/yahoojapan/JGLUE, README.md @ 6f071c0, v1.3); ×100",
}
PUBLISHED_SOURCE = PUBLISHED_SOURCES["klue"]
ALPHA = 0.05  # the verdict's significance level for Welch's p
# What "minimal" means for an ablation's Δ: a 95 % interval inside ±1 point of the task's main metric. The KLUE
# paper calls the PII replacement's cost "minimal degradation" without a number, and issue 36 proposed ±1 point:
# our operationalisation of the paper's words, not a number from it, so it is named wherever it is used.
MINIMAL_POINTS = 1.0
GENERATED = "§"  # marks a task whose data here is generated (†, ‡: dev split, capped sample)
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"  # a row's departure footnote number


def run_departures(run: dict[str, Any]) -> list[str]:
    """What a run (its metrics.json) did otherwise than its suite's baseline (KLUE-baseline's `run_all.sh` values
    for the task, JGLUE's for a JGLUE task: the task's `defaults`): every hyperparameter that differs
    (`finetune.tasks.base.departures`), a step cap, extra evaluations, a precision other than fp32, and a max
    length lowered to fit the model's positions. A floor (no model trained) has none."""
    from finetune.registry import task_class
    from finetune.tasks.base import departures

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


def build_table(runs: list[dict[str, Any]], pairs: list[tuple[str, str]] | None = None,
                baseline_of: dict[str, str] | None = None, generated: Collection[str] = ()) -> dict[str, Any]:
    """Rows: each run label (ours), then the published baselines. A cell is mean, std, seeds and whether the
    evaluation used a dev split. `pairs`: (A, B) row labels to compare besides each row against random init.
    `baseline_of`: the one random-init row a row is compared with (an ablation arm with the random init of its
    own vocabulary); a row it does not name is compared with every random-init row. `generated`: tasks whose
    data is generated, not the suite's: their columns are listed under "generated" (marked § in the table)."""
    suites = suites_of(runs)
    columns = [col for s in suites for col in suite_columns(SUITES[s])]
    published: dict[str, dict[str, float]] = {}  # a model in two suites (XLM-R) is one row
    for s in suites:
        for model, scores in suite_published(SUITES[s]).items():
            published.setdefault(model, {}).update(scores)
    rows: dict[str, dict[str, Any]] = {}
    row_runs: dict[str, list[dict[str, Any]]] = {}
    baselines: list[str] = []  # rows of randomly initialised models
    seen: set[tuple[str, str]] = set()
    for run in runs:
        if (run["label"], run["task"]) in seen:  # one would silently replace the other's cells
            raise ValueError(f"two {run['task']} runs are labelled {run['label']!r}: give them different labels")
        seen.add((run["label"], run["task"]))
        row = rows.setdefault(run["label"], {})
        row_runs.setdefault(run["label"], []).append(run)
        if run.get("random_init") and run["label"] not in baselines:
            baselines.append(run["label"])
        for task, metric, col in columns:
            if run["task"] != task:
                continue
            data = run["data"]
            row[col] = {"mean": run["mean"].get(metric), "std": run["std"].get(metric), "seeds": len(run["seeds"]),
                        "dev_split": data.get("split") == "dev-split", "n_eval": data.get("n_eval"),
                        "n_train": data.get("n_train"),
                        "capped": any(data.get(f"n_{k}", 0) < data.get(f"n_{k}_available", 0)
                                      for k in ("train", "eval"))}
    marks, notes = departure_notes(row_runs)
    for a, b in pairs or []:
        missing = [x for x in (a, b) if x not in rows]
        if missing:
            raise ValueError(f"--compare {a},{b}: no run labelled {missing[0]!r} (labels: {', '.join(rows)})")
    return {
        "suites": suites,
        "columns": [c for _, _, c in columns],
        "main_columns": [c for task, metric, c in columns if metric == ALL_TASKS[task].main_metric],
        "generated": [c for task, _, c in columns if task in generated and task in {r["task"] for r in runs}],
        "ours": rows,
        # row label -> footnote number, and the footnotes: rows whose runs departed from the baseline's defaults
        "departure_marks": marks,
        "departure_notes": notes,
        "vs_random_init": [compare(rows[m], rows[b], m, b) for b in baselines for m in rows
                           if m not in baselines and (baseline_of or {}).get(m, b) == b],
        # a pair already compared against random init is not repeated
        "between_arms": [compare(rows[a], rows[b], a, b) for a, b in pairs or []
                         if not (b in baselines and a not in baselines)],
        "baseline_of": dict(baseline_of or {}),
        "published": {m: {c: v.get(c) for _, _, c in columns} for m, v in published.items()},
        "published_source": "; ".join(PUBLISHED_SOURCES[s] for s in suites),
    }


def compare(model: dict[str, Any], baseline: dict[str, Any], model_label: str, baseline_label: str
            ) -> dict[str, Any]:
    """Per column: mean difference (model - baseline), Welch's t-test p-value over the seeds and the difference's
    95 % confidence interval (`welch_interval`).

    Why a test: with a tiny model the seed-to-seed spread is often as large as the gain, and a table of means
    alone invites reading noise as an effect. Why an interval: "no significant difference" is not "no difference";
    the interval says how large a difference the seeds still allow (an ablation's "minimal degradation" is a
    claim about its bounds). p and the interval are None when either side has fewer than two seeds.
    """
    from scipy.stats import ttest_ind_from_stats

    cells: dict[str, Any] = {}
    for col, a in model.items():
        b = baseline.get(col)
        if b is None or a["mean"] is None or b["mean"] is None:
            continue
        p, ci = None, None
        if a["seeds"] > 1 and b["seeds"] > 1 and (a["std"] or b["std"]):
            p = float(ttest_ind_from_stats(a["mean"], a["std"], a["seeds"], b["mean"], b["std"], b["seeds"],
                                           equal_var=False).pvalue)
            ci = welch_interval(a["mean"] - b["mean"], a["std"], a["seeds"], b["std"], b["seeds"])
        cells[col] = {"diff": a["mean"] - b["mean"], "p": p, "ci95": ci}
    return {"model": model_label, "baseline": baseline_label, "cells": cells}


def welch_interval(diff: float, std_a: float, n_a: int, std_b: float, n_b: int, level: float = 0.95
                   ) -> list[float]:
    """The `level` confidence interval of a difference of two means with unequal variances: diff ± t * se, se² =
    s_a²/n_a + s_b²/n_b, t the Student quantile at the Welch-Satterthwaite degrees of freedom (the interval that
    goes with the p of `scipy.stats.ttest_ind(..., equal_var=False)`, computed from the summary statistics, which
    is all a table keeps; `ttest_ind_from_stats`, which gives the p, returns no interval, hence by hand). Stds are
    sample stds (ddof=1), as `finetune.trainer` records them."""
    from scipy.stats import t

    va, vb = std_a**2 / n_a, std_b**2 / n_b
    se = (va + vb) ** 0.5
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = float(t.ppf(0.5 + level / 2, df)) * se
    return [diff - half, diff + half]


def delta_text(cell: dict[str, Any]) -> str:
    """A Δ cell: `+2.30 [-0.51, +5.11] (p=0.062)`; the difference alone where the seeds allow no test."""
    text = f"{cell['diff']:+.2f}"
    if cell.get("ci95") is not None:
        text += f" [{cell['ci95'][0]:+.2f}, {cell['ci95'][1]:+.2f}]"
    return text + ("" if cell["p"] is None else f" (p={cell['p']:.2g})")


def marked(table: dict[str, Any], col: str) -> str:
    """A column's title, with the generated-data mark when its task's data is not the suite's."""
    return f"{col} {GENERATED}" if col in table.get("generated", ()) else col


def to_markdown(table: dict[str, Any]) -> str:
    cols = table["columns"]
    lines = ["| model | " + " | ".join(marked(table, c) for c in cols) + " |", "|---|" + "---:|" * len(cols)]
    any_split = any_capped = False
    for label, row in table["ours"].items():
        cells = []
        for c in cols:
            cell = row.get(c)
            if cell is None or cell["mean"] is None:
                cells.append("–")
                continue
            text = f"{cell['mean']:.2f}" + (f" ± {cell['std']:.2f}" if cell["seeds"] > 1 else "")
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
        notes.append("Δ rows: difference of the means [its 95 % confidence interval]; p from Welch's t-test over "
                     "the seeds (two-sided).")
    if any_split:
        notes.append("† evaluated on a split of the dev file, trained on the rest (KLUE: 20% by guid hash, MRC by "
                     "article; JNLI by image, JSQuAD by article; metrics.json of the run says which): not "
                     "comparable with the published dev scores.")
    if any_capped:
        notes.append("‡ trained and/or evaluated on a capped sample of the examples (fixed guid-hash sample; "
                     "metrics.json of the run gives n_train and n_eval).")
    notes += table.get("departure_notes", [])
    if any(c in cols for c in table.get("generated", ())):
        notes.append(f"{GENERATED} the task's data here is generated, not {_suite_names(table)}'s (the embedded "
                     "default's MRC and WoS): its scores say nothing about the benchmark and are not comparable "
                     "with the published rows.")
    return "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"


def verdict(table: dict[str, Any], model: str, baseline: str | None, floor: str = "floor") -> list[str]:
    """What the table says about row `model`, in plain sentences: on each task's main metric, where it beat
    row `baseline` (its random init), where it lost and where the difference is within the seed-to-seed noise
    (Welch's p of the table's Δ row against ALPHA), and where row `floor` (no model) still scores above it.

    The numbers are the table's own (its means, Δ and p): the verdict reads the table, it computes nothing
    else. "Beat" needs a positive Δ and "lost" a negative one at p < ALPHA; the rest is no significant
    difference, or untested when the table has no p (one seed, or no spread over the seeds).
    """
    row = table["ours"].get(model) or {}
    cols = [c for c in table.get("main_columns", []) if (row.get(c) or {}).get("mean") is not None]
    comp = next((d for d in table.get("vs_random_init", []) if (d["model"], d["baseline"]) == (model, baseline)),
                None)
    return (_vs_baseline(table, comp, cols) if comp else []) + _vs_floor(table, model, floor, cols)


def _vs_baseline(table: dict[str, Any], comp: dict[str, Any], cols: list[str]) -> list[str]:
    """The verdict's lines against random init: the count, then the wins, losses, ties and untested."""
    cells = [(c, comp["cells"][c]) for c in cols if c in comp["cells"]]
    if not cells:
        return []

    def group(keep: Any) -> str:
        return ", ".join(f"{marked(table, c)} {delta_text(x)}" for c, x in cells if keep(x["diff"], x["p"]))

    significant = [x for _, x in cells if x["p"] is not None and x["p"] < ALPHA]
    lines = [f"Pretraining beat random init on {sum(x['diff'] > 0 for _, x in cells)} of {len(cells)} tasks "
             f"(p < {ALPHA} on {sum(x['diff'] > 0 for x in significant)})."]
    for text, keep in (
            (f"Beat random init (p < {ALPHA})", lambda d, p: p is not None and p < ALPHA and d > 0),
            (f"Lost to random init (p < {ALPHA})", lambda d, p: p is not None and p < ALPHA and d < 0),
            (f"No significant difference from random init (p >= {ALPHA})",
             lambda d, p: p is not None and (p >= ALPHA or d == 0)),
            ("Untested against random init (one seed, or no spread over the seeds)", lambda d, p: p is None)):
        found = group(keep)
        if found:
            lines.append(f"{text}: {found}.")
    return lines


def arms_verdict(table: dict[str, Any], bound: float = MINIMAL_POINTS) -> list[str]:
    """What each Δ row between arms (`between_arms`: an ablation's arms, and their random inits) says on each
    task's main metric: the differences with their 95 % intervals, where they differ at p < ALPHA, and on how many
    tasks the interval lies within ±`bound` points, i.e. where the seeds rule out more than a minimal
    difference. An interval wider than that is not evidence of an effect, only of too few seeds to bound one.

    Where the table compares each arm with its own random init (`baseline_of`), the count covers only the tasks on
    which at least one of the two arms beat its random init at p < ALPHA: on a task that neither arm learned past
    fresh weights (both at 0, or both at chance), a narrow interval says nothing about what pretraining on the
    arms' data did, and the line names those tasks apart. It also says how much of each significant difference
    the two arms' random inits already show: what the arm's vocabulary does before any pretraining."""
    deltas = {(d["model"], d["baseline"]): d for d in table.get("between_arms", [])}
    vs = {(d["model"], d["baseline"]): d for d in table.get("vs_random_init", [])}
    own = table.get("baseline_of") or {}
    lines = []
    for d in table.get("between_arms", []):
        cells = [(c, d["cells"][c]) for c in table.get("main_columns", []) if c in d["cells"]]
        if not cells:
            continue
        tested = [(c, x) for c, x in cells if x.get("ci95") is not None]
        significant = [c for c, x in tested if x["p"] is not None and x["p"] < ALPHA]
        differ = [marked(table, c) for c in significant]
        learned = _beat_random_init([vs[m, own[m]] for m in (d["model"], d["baseline"]) if (m, own.get(m)) in vs])
        counted = [(c, x) for c, x in tested if learned is None or c in learned]
        bounded = [marked(table, c) for c, x in counted if -bound <= x["ci95"][0] and x["ci95"][1] <= bound]
        line = (f"{d['model']} − {d['baseline']}: " + ", ".join(f"{marked(table, c)} {delta_text(x)}" for c, x in cells)
                + f". Differs at p < {ALPHA} on: {', '.join(differ) or 'none'}.")
        if counted:
            where = " where an arm beat its random init" if learned is not None else ""
            line += (f" The 95 % interval lies within ±{bound:g} point{'s' if bound != 1 else ''} on {len(bounded)} of "
                     f"{len(counted)} tasks{where}" + (f" ({', '.join(bounded)})" if bounded else "") + ".")
        idle = [marked(table, c) for c, _ in tested if learned is not None and c not in learned]
        if idle:
            line += (f" Neither arm beat its random init on {', '.join(idle)}: the interval there bounds nothing that "
                     "pretraining did.")
        vocab = deltas.get((own.get(d["model"], ""), own.get(d["baseline"], "")))
        if vocab is not None:
            shares = [f"{marked(table, c)} {vocab['cells'][c]['diff']:+.2f} of {x['diff']:+.2f}"
                      for c, x in cells if c in significant and c in vocab["cells"]]
            if shares:
                line += " Of the significant differences, the random inits (the vocabulary alone) show " + \
                    ", ".join(shares) + "."
        lines.append(line)
    return lines


def _beat_random_init(rows: list[dict[str, Any]]) -> set[str] | None:
    """The columns on which any of these Δ-against-own-random-init rows is ahead at p < ALPHA; None without rows
    for both arms (nothing known about what either learned)."""
    if len(rows) < 2:
        return None
    return {c for d in rows for c, x in d["cells"].items()
            if x.get("p") is not None and x["p"] < ALPHA and x.get("diff", 0) > 0}


def _vs_floor(table: dict[str, Any], model: str, floor: str, cols: list[str]) -> list[str]:
    """The verdict's line against the no-model floor: where it still scores above the model's mean."""
    ours, floors = table["ours"][model], table["ours"].get(floor) or {}
    scored = [c for c in cols if (floors.get(c) or {}).get("mean") is not None]
    above = [c for c in scored if floors[c]["mean"] > ours[c]["mean"]]
    if above:
        return ["The no-model floor still scores above the pretrained model on " + ", ".join(
            f"{marked(table, c)} (floor {floors[c]['mean']:.2f}, pretrained {ours[c]['mean']:.2f})"
            for c in above) + "."]
    if scored:
        return [f"The pretrained model scores above the no-model floor on every task that has one ({len(scored)})."]
    return []


def generated_note(table: dict[str, Any]) -> str | None:
    """The footnote of a verdict that names a task of generated data (its main column is marked)."""
    shown = [c for c in table.get("main_columns", []) if c in table.get("generated", ())]
    if not shown:
        return None
    names = _suite_names(table)
    return f"{GENERATED} generated data, not {names}'s ({', '.join(shown)}): these scores say nothing about {names}."


def _suite_names(table: dict[str, Any]) -> str:
    return "/".join(s.upper() for s in table.get("suites", ["klue"]))


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m finetune.results", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="output prefix: OUT.md and OUT.json")
    ap.add_argument("runs", type=Path, nargs="+", help="run folders (or their metrics.json)")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL_A,LABEL_B",
                    help="also the row Δ A − B with Welch's p (repeatable)")
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
        print(write_results(args.out, args.runs, pairs, curves=args.curves))
    except ValueError as e:
        ap.error(str(e))


def write_results(out: Path, run_dirs: list[Path], pairs: list[tuple[str, str]] | None = None,
                  curves: bool = False, generated: Collection[str] = ()) -> str:
    """`out`.json and `out`.md from the runs' metrics.json files (and with `curves`, `out`.png: `plot_curves`);
    returns the markdown. `generated`: tasks whose data is generated (marked §)."""
    runs = load_runs(run_dirs)
    table = build_table(runs, pairs, generated=generated)
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
    from pipeline.plots import panels

    groups = {series: series.rsplit(", seed ", 1)[0] for panel in curves.values() for series in panel}
    return panels(list(curves.items()), xlabel="optimiser step", groups=groups)


if __name__ == "__main__":
    main()
