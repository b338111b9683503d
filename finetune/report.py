"""The fine-tuning suite's part of the run report: the table across arms, its section and its verdict.

`klue report` asks the `finetune` stage (`FinetuneStage.report_section`, `verdict`, `verdict_figures`) for these;
they are built here, beside the results tables (`finetune.results`) and the verdict's rules (`finetune.verdict`),
from the stage folders' manifests and the runs' metrics.json files. One table (`suite_table`) serves the section,
the verdict and the forest plot, so the three always show the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Set
from pathlib import Path
from typing import Any

from finetune.registry import ALL_TASKS
from finetune.results import MINIMAL_POINTS, table_of, to_markdown
from finetune.verdict import arms_verdict, forest_figure, generated_note, verdict
from pipeline.plots import DotPanel, Figure, dot_panels, md_table
from pipeline.stage import ArmOutput, ReportSection

# The variant `pipeline.recipe` makes of `stages.pretrain.seeds` (`PretrainStage.replicates`: "<stage>_<param>")
REPLICATE_VARIANT = "pretrain_seed"


def row_arm(output: ArmOutput) -> str:
    """The table row an output belongs to: its arm's name without the replicate (`pii=on,pretrain_seed=2` ->
    `pii=on`; `pretrain_seed=2` alone -> `default`): replicates of one arm are one row."""
    names = [",".join(part for part in arm.split(",") if not part.startswith(f"{REPLICATE_VARIANT}="))
             for arm in output.arms]
    return ", ".join(dict.fromkeys(n or "default" for n in names))


def _row_label(init: str, arms: str, several: bool) -> str:
    name = arms if several else "pretrained"
    if init == "pretrained":
        return name
    return f"random init ({arms})" if several else "random init"


# suite_table's results by the outputs' folders and labels: the report asks for the table three times (section,
# verdict, forest plot), and a finished stage folder never changes (its name is its key)
_TABLES: dict[tuple[tuple[str, str], ...], tuple[dict[str, Any], list[dict[str, Any]]] | None] = {}


def suite_table(outputs: list[ArmOutput]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """`_suite_table`, computed once per set of stage folders in a process."""
    key = tuple((str(o.path), o.label) for o in outputs)
    if key not in _TABLES:
        _TABLES[key] = _suite_table(outputs)
    return _TABLES[key]


def _suite_table(outputs: list[ArmOutput]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The suite's table across arms (`finetune.results.table_of`) and the runs it was built from: each arm's
    pretrained row, its random-init row, the floors (once each: they depend on the data only; rows under their own
    labels), Δ between the first arm and each other one, between the arms' random inits, and of each arm against
    its own random init, at the first arm's `equivalence_margin`. One table for the report's section and its
    verdict, so the two always show the same numbers. None without tasks."""
    outputs = [o for o in outputs if o.meta.get("tasks")]
    if not outputs:
        return None
    arms = list(dict.fromkeys(row_arm(o) for o in outputs))
    several = len(arms) > 1
    runs: list[tuple[dict[str, Any], Path]] = []
    floors_seen: set[tuple[str, str]] = set()
    for o in outputs:
        for task, inits in o.meta["tasks"].items():
            for init, cell in inits.items():
                path = o.path / cell["metrics"]
                run = json.loads(path.read_text(encoding="utf-8"))
                if init.startswith("floor"):
                    if (task, init) in floors_seen:
                        continue  # data only: the same for every arm
                    floors_seen.add((task, init))
                else:  # a replicate's runs join its arm's row (`pretrain_seed` in their metrics.json)
                    run["label"] = _row_label(init, row_arm(o), several)
                runs.append((run, path.parent))
    runs.sort(key=lambda pair: bool(pair[0].get("floor")))  # the models' rows first, the floors under them
    labels = list(dict.fromkeys(_row_label("pretrained", arm, several) for arm in arms))
    pairs = [(a, labels[0]) for a in labels[1:]]
    # and the arms' random inits against each other: what the vocabulary alone does, before any pretraining
    seen = {run["label"] for run, _ in runs}
    randoms = [r for r in dict.fromkeys(_row_label("random-init", arm, several) for arm in arms) if r in seen]
    pairs += [(r, randoms[0]) for r in randoms[1:]]
    # each arm against the random init of its own vocabulary, not the other arms'
    own = {_row_label("pretrained", arm, several): _row_label("random-init", arm, several) for arm in arms}
    params = [o.manifest.get("params") or {} for o in outputs]
    generated = {t for p in params for t in p.get("generated") or []}
    margin = float(params[0].get("equivalence_margin") or MINIMAL_POINTS)
    return table_of(runs, pairs, baseline_of=own, generated=generated, margin=margin), [r for r, _ in runs]


def finetune_section(outputs: list[ArmOutput]) -> ReportSection | None:
    """The suite's table across arms (`suite_table`) with the suite's published rows, and a chart of every
    task's main metric."""
    built = suite_table(outputs)
    if built is None:
        return None
    table, runs = built
    md = ["Official metrics of each task, mean ± std over the runs (each seed a separate fine-tuning run; with "
          "several pretraining runs, every pretraining x fine-tuning seed). Δ rows: the Multi-Bootstrap's difference "
          "[95 % interval] (p, Holm's adjusted p) on each task's main metric. The floors train no network "
          "(finetune/floors.py).", "",
          to_markdown(table), *grid_markdown(outputs)]
    generated = {t for o in outputs for t in (o.manifest.get("params") or {}).get("generated") or []}
    fig = Figure("finetune.png", dot_panels(finetune_panels(runs, generated), group_label="pretraining seed"),
                 "Every run's main metric per task and row of the table (a dot a run, coloured by its pretraining "
                 "seed; bar: the row's mean; dashed: the floors).")
    return ReportSection("Fine-tuning", "\n".join(md), [fig])


def finetune_panels(runs: list[dict[str, Any]], generated: Set[str] = frozenset()) -> list[DotPanel]:
    """`dot_panels`' panels from the table's runs (`suite_table`): per task in registry order, each model row's runs
    (every fine-tuning seed of every pretraining replicate, its main metric; a run whose score is not a number is
    left out, as the table's n leaves it) and each floor as a line. § marks a task on generated data."""
    present = {run["task"] for run in runs}
    panels = []
    for t in (t for t in ALL_TASKS if t in present):
        main = ALL_TASKS[t].main_metric
        rows: dict[str, list[tuple[float, str]]] = {}
        lines: dict[str, float] = {}
        for run in (r for r in runs if r["task"] == t):
            if run.get("floor"):
                if (value := _defined((run.get("mean") or {}).get(main))) is not None:
                    lines[run["label"].removesuffix(" floor")] = value
                continue
            group = "–" if run.get("pretrain_seed") is None else str(run["pretrain_seed"])
            for _, scores in sorted((run.get("per_seed") or {}).items(), key=lambda kv: int(kv[0])):
                if (value := _defined(scores.get(main))) is not None:
                    rows.setdefault(run["label"], []).append((value, group))
        if not rows and not lines:
            continue  # summaries without per-seed scores and no floor: nothing to draw (the table has them)
        column = next(c.title for c in ALL_TASKS[t].columns if c.metric == main)
        panels.append(DotPanel(f"{t.upper()}{' §' if t in generated else ''}", column, list(rows.items()), lines))
    return panels


def _defined(value: Any) -> float | None:
    """A score as a float, or None where it is missing or not a number (metrics.json writes NaN as null)."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def grid_markdown(outputs: list[ArmOutput]) -> list[str]:
    """The whole learning-rate grid of every arm (`lr_grid`): per task, init and rate, the mean selection score
    that chose (or did not choose) it and the reported score, which chose nothing; empty without a grid."""
    rows = []
    for o in outputs:
        for task, inits in (o.meta.get("tasks") or {}).items():
            for init, cell in inits.items():
                for g in cell.get("grid") or []:
                    rows.append([o.label, task, init, f"{g['learning_rate']:g}",
                                 "–" if g["selection"] is None else f"{g['selection']:.2f}",
                                 "–" if g["reported"] is None else f"{g['reported']:.2f}",
                                 "chosen" if g["chosen"] else ""])
    if not rows:
        return []
    return ["", "Learning-rate grid: each (task, init) picks the rate with the best mean score on its selection "
            "split (carved from train; the reported split chose nothing). Every rate's reported score is shown "
            "too, for the record.", "",
            *md_table(["arm", "task", "init", "lr", "selection (main metric)", "reported (main metric)", ""], rows)]


def finetune_verdict(outputs: list[ArmOutput]) -> list[str]:
    """Per arm, what its row of the suite's table says against its own random init and the floors
    (`finetune.verdict.verdict`, on each task's main metric), then between the arms, and the footnote of the
    generated tasks."""
    built = suite_table(outputs)
    if built is None:
        return []
    table, _ = built
    arms = list(dict.fromkeys(row_arm(o) for o in outputs if o.meta.get("tasks")))
    several = len(arms) > 1
    rows, lines = set(table["ours"]), []
    for arm in arms:
        baseline = _row_label("random-init", arm, several)
        found = verdict(table, _row_label("pretrained", arm, several), baseline if baseline in rows else None)
        lines += [f"{arm}: {line}" if several else line for line in found]
    lines += arms_verdict(table)
    note = generated_note(table)
    return lines + [note] if lines and note else lines


def finetune_figures(outputs: list[ArmOutput]) -> list[Any]:
    """The verdict's forest plot of the suite's table (`finetune.verdict.forest_figure`), if it has one."""
    built = suite_table(outputs)
    figure = forest_figure(built[0]) if built is not None else None
    return [figure] if figure is not None else []
