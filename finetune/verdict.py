"""The verdict: what a results table (`finetune.results.build_table`) says, in sentences, on each task's main
metric. It reads the table's own numbers (its cells and Δ rows) and computes nothing else, so the verdict and
the table can never disagree.

The rules, each a reviewer's first question:
- **Beat / lost** need Holm's adjusted p < ALPHA (the family: the tasks of one comparison, named in the line)
  and a difference of that sign. Before correction, eight tasks at 0.05 give one false "win" in three tries.
- **Equivalent** ("no difference") needs the two one-sided tests to show the difference within ± the margin
  (the recipe's `equivalence_margin`); a difference neither shown nor bounded is "not separated", never "no
  difference" (absence of evidence is not evidence of absence).
- **Pretraining variance.** With one pretraining run per arm, every interval holds the fine-tuning seeds and
  the evaluation sample only, and the verdict says so (MultiBERTs, Sellam et al. 2021).
- **Floors.** Every task where a floor (a constant, or a model-free predictor: `finetune.floors`) scores at or
  above the model is named: such a "win" over random init says nothing about language.
- **Main metric first.** Other metrics are secondary: in the table, not in the verdict.
"""

from __future__ import annotations

from typing import Any

from finetune.results import ALPHA, GENERATED, delta_text, marked, suite_names
from pipeline.plots import Figure, ForestRow, forest


def _main_cells(comp: dict[str, Any], cols: list[str]) -> list[tuple[str, dict[str, Any]]]:
    return [(c, comp["cells"][c]) for c in cols if c in comp["cells"]]


def _sorted(cells: list[tuple[str, dict[str, Any]]]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The main-metric cells of one comparison by outcome: beat, lost, equivalent, not separated, untested."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {k: [] for k in ("beat", "lost", "equivalent", "open",
                                                                         "untested")}
    for c, x in cells:
        if x.get("p_holm") is None:
            out["untested"].append((c, x))
        elif x["p_holm"] < ALPHA:
            out["beat" if x["diff"] > 0 else "lost"].append((c, x))
        elif x.get("equivalent"):
            out["equivalent"].append((c, x))
        else:
            out["open"].append((c, x))
    return out


def _listing(table: dict[str, Any], cells: list[tuple[str, dict[str, Any]]]) -> str:
    return ", ".join(f"{marked(table, c)} {delta_text(x)}" + (f" ({x['_note']})" if x.get("_note") else "")
                     for c, x in cells)


def _replicates_note(table: dict[str, Any], comp: dict[str, Any], cells: list[tuple[str, dict[str, Any]]]
                     ) -> list[str]:
    """What the comparison's intervals hold: with one pretraining run on a pretrained side, no pretraining
    variance, said plainly. A random-init side's replicates are its init seeds, not pretraining runs."""
    sides = [i for i, label in enumerate((comp["model"], comp["baseline"]))
             if label not in table.get("random_init_rows", [])]
    counts = {x["replicates"][i] for _, x in cells if x.get("replicates") for i in sides}
    if not counts:
        return []
    runs = min((r for _, x in cells if x.get("runs") for r in x["runs"]), default=0)
    # a bootstrap of k values has (k - 1) / k of their sample variance: at 2 seeds half of it
    few = (f" With {runs} run{'s' if runs != 1 else ''} on a side, drawing them understates their spread (a "
           f"bootstrap of k values has (k - 1)/k of their variance); MultiBERTs drew from 25 seeds."
           if 0 < runs < 5 else "")
    if 1 in counts:
        return ["One pretraining run per arm: the intervals hold the fine-tuning seeds and the evaluation sample, "
                "not the pretraining seed's variance (MultiBERTs: that alone moves scores by points); "
                "stages.pretrain.seeds adds replicates." + few]
    return [f"The intervals hold pretraining variance ({min(counts)}+ pretraining runs an arm), fine-tuning seeds "
            "and the evaluation sample (Multi-Bootstrap)." + few]


def verdict(table: dict[str, Any], model: str, baseline: str | None) -> list[str]:
    """What the table says about row `model` against row `baseline` (its random init) and against every floor
    row, on each task's main metric (module doc)."""
    row = table["ours"].get(model) or {}
    cols = [c for c in table.get("main_columns", []) if (row.get(c) or {}).get("mean") is not None]
    comp = next((d for d in table.get("vs_random_init", []) if (d["model"], d["baseline"]) == (model, baseline)),
                None)
    return (_vs_baseline(table, comp, cols, floored(table, model, cols)) if comp else []) + vs_floors(table, model,
                                                                                                       cols)


def _floor_scores(table: dict[str, Any], cols: list[str]) -> list[tuple[str, str, float]]:
    """(floor row, column, its score) for every floor row with a score in one of `cols`."""
    return [(floor, c, value) for floor in table.get("floors", []) for c in cols
            if (value := ((table["ours"].get(floor) or {}).get(c) or {}).get("mean")) is not None]


def floored(table: dict[str, Any], model: str, cols: list[str]) -> set[str]:
    """The columns where some floor scores at or above row `model`."""
    ours = table["ours"][model]
    return {c for _, c, value in _floor_scores(table, cols) if value >= ours[c]["mean"]}


def _vs_baseline(table: dict[str, Any], comp: dict[str, Any], cols: list[str], under: set[str]) -> list[str]:
    """The lines against random init. An equivalence on a task where a floor scores at or above the model is
    equivalence in learning nothing (both at zero, say): said on that cell, not left to read as "pretraining
    costs nothing there"."""
    cells = _main_cells(comp, cols)
    if not cells:
        return []
    by = _sorted(cells)
    by["equivalent"] = [(c, {**x, "_note": "at or below a floor: equivalent in learning nothing"} if c in under
                         else x) for c, x in by["equivalent"]]
    tested = [c for c, x in cells if x.get("p_holm") is not None]
    raw = [x["diff"] > 0 for _, x in cells if x.get("p") is not None and x["p"] < ALPHA]
    margin = table.get("margin")
    lines = [f"Pretraining beat random init on {len(by['beat'])} of {len(tested)} tested tasks and lost on "
             f"{len(by['lost'])} (main metrics; Multi-Bootstrap, Holm's correction over these {len(tested)} tasks, "
             f"p < {ALPHA}; before correction {sum(raw)} beat and {len(raw) - sum(raw)} lost at p < {ALPHA})."]
    for key, text in (("beat", "Beat random init"), ("lost", "Lost to random init"),
                      ("equivalent", f"Equivalent to random init within ±{margin:g} points (TOST p < {ALPHA})"),
                      ("open", f"Not separated from random init (no difference shown, none within ±{margin:g} "
                               "points shown either)"),
                      ("untested", "Untested (no per-example predictions to resample)")):
        if by[key]:
            lines.append(f"{text}: {_listing(table, by[key])}.")
    return lines + _replicates_note(table, comp, cells)


def vs_floors(table: dict[str, Any], model: str, cols: list[str]) -> list[str]:
    """Every task where a floor row scores at or above the model's mean, naming the floor; else one line."""
    ours = table["ours"][model]
    scores = _floor_scores(table, cols)
    scored = {c for _, c, _ in scores}
    found = [f"{marked(table, c)} ({floor} {value:.2f} ≥ {ours[c]['mean']:.2f})"
             for floor, c, value in scores if value >= ours[c]["mean"]]
    if found:
        return ["A floor scores at or above the model on: " + ", ".join(found) + "."]
    if scored:
        return [f"The model scores above every floor on every task that has one ({len(scored)})."]
    return []


def arms_verdict(table: dict[str, Any]) -> list[str]:
    """What each Δ row between arms (`between_arms`: an ablation's arms, and their random inits) says on each
    task's main metric: the differences, where they differ (Holm), where they are equivalent within the table's
    margin (TOST), and where neither is shown.

    Where the table compares each arm with its own random init (`baseline_of`), equivalence counts only on the
    tasks on which at least one of the two arms beat its random init (Holm): on a task neither arm learned past
    fresh weights, equivalence bounds nothing that pretraining on the arms' data did, and the line names those
    tasks apart. It also says how much of each difference the two arms' random inits already show: what the
    arm's vocabulary does before any pretraining."""
    deltas = {(d["model"], d["baseline"]): d for d in table.get("between_arms", [])}
    vs = {(d["model"], d["baseline"]): d for d in table.get("vs_random_init", [])}
    own = table.get("baseline_of") or {}
    margin = table.get("margin")
    lines = []
    for d in table.get("between_arms", []):
        cells = _main_cells(d, table.get("main_columns", []))
        if not cells:
            continue
        by = _sorted(cells)
        learned = _beat_random_init([vs[m, own[m]] for m in (d["model"], d["baseline"]) if (m, own.get(m)) in vs])
        line = f"{d['model']} − {d['baseline']}: {_listing(table, cells)}."
        tested = [c for c, x in cells if x.get("p_holm") is not None]
        if tested:
            differ = [marked(table, c) for c, _ in by["beat"] + by["lost"]]
            line += (f" Differs (Holm over {len(tested)} tasks, p < {ALPHA}) on: {', '.join(differ) or 'none'}.")
            counted = [c for c in tested if learned is None or c in learned]
            equivalent = [marked(table, c) for c, _ in by["equivalent"] if c in counted]
            where = " where an arm beat its random init" if learned is not None else ""
            if counted:
                line += (f" Equivalent within ±{margin:g} point{'s' if margin != 1 else ''} (TOST p < {ALPHA}) on "
                         f"{len(equivalent)} of {len(counted)} tasks{where}"
                         + (f" ({', '.join(equivalent)})" if equivalent else "") + ".")
            idle = [marked(table, c) for c in tested if learned is not None and c not in learned]
            if idle:
                line += (f" Neither arm beat its random init on {', '.join(idle)}: equivalence there bounds nothing "
                         "that pretraining did.")
            vocab = deltas.get((own.get(d["model"], ""), own.get(d["baseline"], "")))
            significant = [c for c, _ in by["beat"] + by["lost"]]
            if vocab is not None:
                shares = [f"{marked(table, c)} {vocab['cells'][c]['diff']:+.2f} of {d['cells'][c]['diff']:+.2f}"
                          for c in significant if c in vocab["cells"]]
                if shares:
                    line += " Of the differences, the random inits (the vocabulary alone) show " + \
                        ", ".join(shares) + "."
        lines.append(line)
    notes = [n for d in table.get("between_arms", []) for n in _replicates_note(
        table, d, _main_cells(d, table.get("main_columns", [])))]
    return lines + list(dict.fromkeys(notes))


def _beat_random_init(rows: list[dict[str, Any]]) -> set[str] | None:
    """The columns on which any of these Δ-against-own-random-init rows is ahead (Holm p < ALPHA); None without
    rows for both arms (nothing known about what either learned)."""
    if len(rows) < 2:
        return None
    return {c for d in rows for c, x in d["cells"].items()
            if x.get("p_holm") is not None and x["p_holm"] < ALPHA and x.get("diff", 0) > 0}


def generated_note(table: dict[str, Any]) -> str | None:
    """The footnote of a verdict that names a task of generated data (its main column is marked)."""
    shown = [c for c in table.get("main_columns", []) if c in table.get("generated", ())]
    if not shown:
        return None
    names = suite_names(table)
    return f"{GENERATED} generated data, not {names}'s ({', '.join(shown)}): these scores say nothing about {names}."


def forest_rows(table: dict[str, Any], comp: dict[str, Any]) -> list[Any]:
    """The forest plot's rows of one comparison: each main metric's difference and interval; against random init,
    each floor's score minus the random init's mean as a mark (a floor right of the model's point beats it)."""
    rows = []
    baseline = table["ours"].get(comp["baseline"]) or {}
    vs_random = comp["baseline"] in table.get("random_init_rows", [])
    for c, x in _main_cells(comp, table.get("main_columns", [])):
        marks = {}
        if vs_random and (baseline.get(c) or {}).get("mean") is not None:
            for floor in table.get("floors", []):
                value = ((table["ours"].get(floor) or {}).get(c) or {}).get("mean")
                if value is not None:
                    marks[floor] = value - baseline[c]["mean"]
        ci = x.get("ci95")
        rows.append(ForestRow(marked(table, c), x["diff"], None if ci is None else (ci[0], ci[1]), marks))
    return rows


def forest_figure(table: dict[str, Any]) -> Any:
    """The verdict's forest plot (`pipeline.plots.forest`): one panel per comparison of the table; None without
    one."""
    panels = [(f"{d['model']} − {d['baseline']}", forest_rows(table, d))
              for d in table.get("vs_random_init", []) + table.get("between_arms", [])]
    panels = [(title, rows) for title, rows in panels if rows]
    if not panels:
        return None
    return Figure("verdict-forest.png", forest(panels, margin=table.get("margin"),
                                               xlabel="difference, points of the main metric"),
                  f"Each comparison's difference per task with its 95 % Multi-Bootstrap interval (hollow: untested); "
                  f"shaded: ±{table.get('margin'):g} points, the equivalence margin; crosses: each floor minus the "
                  "random init.")
