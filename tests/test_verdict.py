"""The verdict on real run folders (finetune/verdict.py over finetune/results.py's table): per-seed predictions on
the fixture's evaluation examples, resampled by the Multi-Bootstrap. What is checked: beat / lost need Holm's
adjusted p (a raw p < 0.05 that Holm does not keep is "not separated", and counted apart); "equivalent" needs
the two one-sided tests; every floor at or above the model is named; one pretraining run is said plainly and
pretraining replicates make cells of several runs with their spread; a seed without a defined score is counted,
not dropped; the forest plot draws every comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from finetune.results import build_table, table_of, to_markdown
from finetune.verdict import arms_verdict, forest_figure, verdict
from testkit.verdict import write_floor, write_run


def _table(tmp_path: Path, spec: dict[tuple[str, str], dict[int, int]], floors: dict[tuple[str, str], float] | None = None,
           pairs: list[tuple[str, str]] | None = None, baseline_of: dict[str, str] | None = None,
           margin: float = 1.0) -> dict:
    runs = []
    for (task, label), right in spec.items():
        folder = tmp_path / label.replace(" ", "_") / task
        run = write_run(folder, task, label, right, random_init=label.startswith("random init"))
        runs.append((run, folder))
    for (task, label), score in (floors or {}).items():
        folder = tmp_path / "floors" / task / label.replace(" ", "_")
        runs.append((write_floor(folder, task, label, score), folder))
    return table_of(runs, pairs, baseline_of=baseline_of, margin=margin)


def test_holm_equivalence_and_floors_in_the_verdict_against_random_init(tmp_path):
    """NLI: pretrained right on 25 of 30 pairs, random init on 5: beaten after Holm. YNAT: right on the first 24
    of 56 titles against the first 20, so the two differ on 4 examples (where only the pretrained model is right,
    each one raises its macro F1) and a draw holds none of them with probability (52/56)^56 = 0.016: raw
    p = 0.031, but Holm over the three tasks doubles it (the second smallest p): 0.063, not separated. RE: the
    same predictions on both sides, Δ 0 on every draw: equivalent within ±1 (TOST p = 1/2001). A
    majority-class floor above the YNAT model is named, the NLI floor below it is not."""
    table = _table(tmp_path, {
        ("ynat", "pretrained"): {1: 24, 2: 24, 3: 24}, ("ynat", "random init"): {1: 20, 2: 20, 3: 20},
        ("nli", "pretrained"): {1: 25, 2: 25, 3: 25}, ("nli", "random init"): {1: 5, 2: 5, 3: 5},
        ("re", "pretrained"): {1: 10, 2: 10, 3: 10}, ("re", "random init"): {1: 10, 2: 10, 3: 10}},
        floors={("ynat", "majority-class floor"): 99.0, ("nli", "majority-class floor"): 20.0,
                ("re", "majority-class floor"): 99.0})
    (comp,) = table["vs_random_init"]
    ynat, re_ = comp["cells"]["YNAT F1"], comp["cells"]["RE F1"]
    assert ynat["p"] == pytest.approx(2 * (52 / 56) ** 56, abs=0.008) and ynat["p"] < 0.05 <= ynat["p_holm"]
    assert ynat["p_holm"] == pytest.approx(2 * ynat["p"])
    assert comp["cells"]["NLI Acc"]["p"] == pytest.approx(2 / 2001)  # no draw at or below 0
    assert re_["diff"] == 0.0 and re_["p"] == 1.0 and re_["equivalent"]
    assert re_["p_equivalence"] == pytest.approx(1 / 2001)
    assert comp["family"] == ["YNAT F1", "NLI Acc", "RE F1"]
    lines = verdict(table, "pretrained", "random init")
    assert lines[0] == ("Pretraining beat random init on 1 of 3 tested tasks and lost on 0 (main metrics; "
                        "Multi-Bootstrap, Holm's correction over these 3 tasks, p < 0.05; before correction 2 beat and "
                        "0 lost at p < 0.05).")
    assert lines[1].startswith("Beat random init: NLI Acc +66.67 [")
    # a floor above both: the equivalence is in learning nothing, and the cell says so
    assert lines[2] == ("Equivalent to random init within ±1 points (TOST p < 0.05): RE F1 +0.00 [+0.00, +0.00] "
                        "(p=1) (at or below a floor: equivalent in learning nothing).")
    assert lines[3].startswith("Not separated from random init (no difference shown, none within ±1 points shown "
                               "either): YNAT F1 +") and ", Holm 0.0" in lines[3]
    assert lines[4].startswith("One pretraining run per arm: the intervals hold the fine-tuning seeds and the "
                               "evaluation sample, not the pretraining seed's variance")
    # three runs a side: drawing them understates their spread, and the line says by how much
    assert lines[4].endswith("With 3 runs on a side, drawing them understates their spread (a bootstrap of k values "
                             "has (k - 1)/k of their variance); MultiBERTs drew from 25 seeds.")
    assert lines[5].startswith("A floor scores at or above the model on: YNAT F1 (majority-class floor 99.00 ≥ ")
    assert "RE F1 (majority-class floor 99.00 ≥ " in lines[5] and "NLI" not in lines[5]


def test_a_loss_and_the_arms_verdict_with_the_vocabulary_share(tmp_path):
    """Two arms and their random inits on NLI: the arms differ by 10 examples at every seed (lost, Holm over one
    task is p itself), and their random inits by 4 of those: the line says how much the vocabulary alone shows.
    YNAT: neither arm beat its random init, so equivalence there is not counted, and the line says so."""
    spec = {("nli", "on"): {1: 25, 2: 25, 3: 25}, ("nli", "off"): {1: 15, 2: 15, 3: 15},
            ("nli", "random init (on)"): {1: 19, 2: 19, 3: 19}, ("nli", "random init (off)"): {1: 15, 2: 15, 3: 15},
            ("ynat", "on"): {1: 20, 2: 20, 3: 20}, ("ynat", "off"): {1: 20, 2: 20, 3: 20},
            ("ynat", "random init (on)"): {1: 20, 2: 20, 3: 20},
            ("ynat", "random init (off)"): {1: 20, 2: 20, 3: 20}}
    table = _table(tmp_path, spec, pairs=[("off", "on"), ("random init (off)", "random init (on)")],
                   baseline_of={"on": "random init (on)", "off": "random init (off)"})
    first, second, note = arms_verdict(table)
    assert first.startswith("off − on: YNAT F1 +0.00 [+0.00, +0.00] (p=1), NLI Acc -33.33 [")
    assert "Differs (Holm over 2 tasks, p < 0.05) on: NLI Acc." in first
    assert "Equivalent within ±1 point (TOST p < 0.05) on 0 of 1 tasks where an arm beat its random init." in first
    assert "Neither arm beat its random init on YNAT F1: equivalence there bounds nothing" in first
    assert first.endswith("the random inits (the vocabulary alone) show NLI Acc -13.33 of -33.33.")
    assert second.startswith("random init (off) − random init (on): YNAT F1 +0.00") and "vocabulary" not in second
    assert note.startswith("One pretraining run per arm")
    lost = verdict(table, "off", "random init (off)")
    assert lost[0].startswith("Pretraining beat random init on 0 of 2 tested tasks and lost on 0")
    on = verdict(table, "on", "random init (on)")
    assert on[1].startswith("Beat random init: NLI Acc +20.00 [")


def test_lost_to_random_init(tmp_path):
    table = _table(tmp_path, {("nli", "pretrained"): {1: 5, 2: 6, 3: 5},
                              ("nli", "random init"): {1: 25, 2: 25, 3: 24}})
    lines = verdict(table, "pretrained", "random init")
    assert lines[0].startswith("Pretraining beat random init on 0 of 1 tested tasks and lost on 1")
    assert lines[1].startswith("Lost to random init: NLI Acc -64.44 [")


def test_pretraining_replicates_are_one_cell_with_their_spread_and_the_verdict_says_what_the_interval_holds(
        tmp_path):
    runs = []
    for seed, right in ((1, 20), (2, 26), (3, 23)):
        folder = tmp_path / f"pretrain-{seed}"
        runs.append((write_run(folder, "nli", "pretrained", {1: right, 2: right - 1}, pretrain_seed=seed), folder))
    folder = tmp_path / "random"
    runs.append((write_run(folder, "nli", "random init", {1: 12, 2: 13, 3: 12, 4: 12, 5: 13, 6: 12},
                           random_init=True), folder))
    table = table_of(runs)
    cell = table["ours"]["pretrained"]["NLI Acc"]
    assert cell["seeds"] == 6 and cell["replicates"] == 3
    # replicate means 19.5, 25.5, 22.5 of 30: std 3 examples = 10 points
    assert cell["spread"] == pytest.approx(10.0)
    assert "| pretrained | – | – | " not in to_markdown(table) and " (pt 10.00)" in to_markdown(table)
    random_cell = table["ours"]["random init"]["NLI Acc"]
    assert random_cell["replicates"] == 6 and random_cell.get("spread") is None  # init seeds, not pretraining runs
    (comp,) = table["vs_random_init"]
    assert comp["cells"]["NLI Acc"]["replicates"] == [3, 6] and comp["cells"]["NLI Acc"]["runs"] == [6, 6]
    lines = verdict(table, "pretrained", "random init")
    assert lines[2] == ("The intervals hold pretraining variance (3+ pretraining runs an arm), fine-tuning seeds and "
                        "the evaluation sample (Multi-Bootstrap).")
    # two runs of one cell that are not distinct pretraining replicates: refused
    with pytest.raises(ValueError, match="different `pretrain_seed`s"):
        build_table([runs[0][0], {**runs[1][0], "pretrain_seed": 1}])


def test_a_seed_without_a_score_is_counted_not_dropped():
    run = {"task": "sts", "label": "tiny", "main_metric": "pearsonr", "seeds": [1, 2, 3],
           "mean": {"pearsonr": 30.0}, "std": {"pearsonr": 2.0},
           "per_seed": {"1": {"pearsonr": 28.0, "f1": 50.0}, "2": {"pearsonr": None, "f1": 0.0},
                        "3": {"pearsonr": 32.0, "f1": 52.0}},
           "data": {"split": "official", "n_eval": 10, "n_eval_available": 10}}
    table = build_table([run])
    cell = table["ours"]["tiny"]["STS r"]
    assert (cell["mean"], cell["seeds"], cell["failed"]) == (30.0, 2, 1)
    md = to_markdown(table)
    assert "30.00 ± 2.83 (n=2 of 3)" in md and "only a have a defined score" in md
    assert table["ours"]["tiny"]["STS F1"]["seeds"] == 3  # F1 is defined on every seed


def test_the_forest_plot_draws_every_comparison_and_is_the_same_bytes_twice(tmp_path):
    table = _table(tmp_path, {("nli", "pretrained"): {1: 19, 2: 19}, ("nli", "random init"): {1: 15, 2: 15}},
                   floors={("nli", "majority-class floor"): 40.0})
    figure = forest_figure(table)
    assert figure.name == "verdict-forest.png" and figure.png.startswith(b"\x89PNG")
    assert "±1 points, the equivalence margin" in figure.caption
    assert forest_figure(table).png == figure.png
    from finetune.verdict import forest_rows

    (row,) = forest_rows(table, table["vs_random_init"][0])
    assert row.label == "NLI Acc" and row.diff == pytest.approx(100 * 4 / 30)
    assert row.marks == {"majority-class floor": pytest.approx(40.0 - 50.0)}  # the floor minus random init's 50.00
    assert forest_figure(build_table([])) is None
