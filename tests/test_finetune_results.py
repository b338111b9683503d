"""The results table: our runs grouped by label beside the published baselines, with dev-split (†) and
capped-sample (‡) runs marked so nobody mistakes them for comparable dev scores."""

from __future__ import annotations

import json

import pytest

from finetune.results import PUBLISHED, build_table, main, to_markdown


def _run(task: str, label: str, mean: dict, std: dict, seeds: list[int], *, split: str = "official",
         n_train: int = 100, n_train_available: int = 100, n_eval: int = 50, n_eval_available: int = 50,
         hp: dict | None = None, max_steps: int | None = None) -> dict:
    """A run's metrics.json; its hyperparameters the task's baseline defaults, changed by `hp`."""
    from finetune.registry import task_class

    defaults = task_class(task).defaults
    return {"task": task, "label": label, "mean": mean, "std": std, "seeds": seeds,
            "data": {"split": split, "n_train": n_train, "n_train_available": n_train_available,
                     "n_eval": n_eval, "n_eval_available": n_eval_available},
            "hyperparams": defaults.replace(**(hp or {})).model_dump(), "max_steps": max_steps,
            "max_length_used": defaults.max_length}


def test_rows_group_by_label_and_mark_split_and_capped_runs():
    runs = [
        _run("ynat", "tiny", {"macro_f1": 60.0}, {"macro_f1": 1.5}, [1, 2, 3]),
        _run("nli", "tiny", {"accuracy": 40.0}, {"accuracy": 0.0}, [1], n_train=30, n_train_available=100),
        _run("sts", "tiny", {"pearsonr": 20.0, "f1": 50.0}, {"pearsonr": 0.0, "f1": 0.0}, [1], split="dev-split"),
        _run("ynat", "random", {"macro_f1": 30.0}, {"macro_f1": 0.0}, [1]),
    ]
    table = build_table(runs)
    assert list(table["ours"]) == ["tiny", "random"]
    tiny = table["ours"]["tiny"]
    assert tiny["YNAT F1"]["seeds"] == 3 and not tiny["YNAT F1"]["capped"] and not tiny["YNAT F1"]["dev_split"]
    assert tiny["NLI Acc"]["capped"] and tiny["STS r"]["dev_split"] and "RE F1" not in tiny

    md = to_markdown(table)
    tiny_line = next(line for line in md.splitlines() if line.startswith("| tiny |"))
    cells = [c.strip() for c in tiny_line.strip("|").split("|")]
    # model, YNAT F1, STS r, STS F1, NLI Acc, NER entity F1, NER char F1, NER char F1 w/o O, RE F1, RE AUPRC,
    # DP UAS, DP LAS, MRC EM, MRC ROUGE, DST JGA, DST slot F1
    assert cells == ["tiny", "60.00 ± 1.50", "20.00 †", "50.00 †", "40.00 ‡", "–", "–", "–", "–", "–", "–", "–",
                     "–", "–", "–", "–"]
    random_line = next(line for line in md.splitlines() if line.startswith("| random |"))
    assert "30.00" in random_line and "±" not in random_line  # one seed: no std shown
    assert "† evaluated on a split of the dev file" in md and "‡ trained and/or evaluated on a capped" in md
    assert sum("(published)" in line for line in md.splitlines()) == len(PUBLISHED)


def test_no_footnotes_without_marked_cells():
    md = to_markdown(build_table([_run("nli", "full", {"accuracy": 41.0}, {"accuracy": 0.0}, [1])]))
    assert "†" not in md and "‡" not in md


def test_main_writes_markdown_and_json(tmp_path, capsys):
    run_dir = tmp_path / "nli-run"
    run_dir.mkdir()
    (run_dir / "metrics.json").write_text(json.dumps(
        _run("nli", "tiny", {"accuracy": 41.25}, {"accuracy": 0.5}, [1, 2], n_eval=10, n_eval_available=20)))
    main([str(tmp_path / "table"), str(run_dir)])
    table = json.loads((tmp_path / "table.json").read_text())
    assert table["ours"]["tiny"]["NLI Acc"]["mean"] == 41.25 and table["ours"]["tiny"]["NLI Acc"]["capped"]
    md = (tmp_path / "table.md").read_text()
    assert "41.25 ± 0.50 ‡" in md and capsys.readouterr().out == md + "\n"


def test_without_predictions_a_difference_row_gives_the_difference_only():
    """A table of summaries alone (no per-example predictions to resample): Δ cells are the difference of the
    means, untested; the comparison itself is in tests/test_verdict.py."""
    runs = [
        {**_run("ynat", "tiny", {"macro_f1": 60.0}, {"macro_f1": 1.0}, [1, 2, 3]), "random_init": False},
        {**_run("ynat", "random init", {"macro_f1": 40.0}, {"macro_f1": 1.0}, [1, 2, 3]), "random_init": True},
        {**_run("sts", "tiny", {"pearsonr": 20.0, "f1": 10.0}, {"pearsonr": 0.0, "f1": 0.0}, [1]),
         "random_init": False},
        {**_run("sts", "random init", {"pearsonr": 25.0, "f1": 12.0}, {"pearsonr": 2.0, "f1": 0.0}, [1, 2]),
         "random_init": True},
    ]
    table = build_table(runs)
    (d,) = table["vs_random_init"]
    assert (d["model"], d["baseline"]) == ("tiny", "random init")
    ynat, sts, sts_f1 = d["cells"]["YNAT F1"], d["cells"]["STS r"], d["cells"]["STS F1"]
    assert ynat == {"diff": 20.0, "p": None, "ci95": None} and sts["diff"] == -5.0
    assert sts_f1["secondary"] and sts_f1["p"] is None  # not a main metric: never tested
    assert d["family"] == []
    md = to_markdown(table)
    delta = next(line for line in md.splitlines() if line.startswith("| Δ tiny − random init |"))
    assert [c.strip() for c in delta.strip("|").split("|")][1:4] == ["+20.00", "-5.00", "-2.00"]
    assert "Multi-Bootstrap" in md


def test_no_difference_row_without_a_random_init_run():
    table = build_table([_run("nli", "a", {"accuracy": 41.0}, {"accuracy": 0.0}, [1]),
                         _run("nli", "b", {"accuracy": 40.0}, {"accuracy": 0.0}, [1])])
    assert table["vs_random_init"] == [] and "Δ" not in to_markdown(table)


def test_each_task_declares_its_columns_and_published_scores():
    from finetune.registry import TASKS
    from finetune.results import COLUMNS

    # registry order, each task's declared columns; every column names one of the task's metrics
    assert [c for _, _, c in COLUMNS] == ["YNAT F1", "STS r", "STS F1", "NLI Acc", "NER entity F1", "NER char F1",
                                         "NER char F1 w/o O", "RE F1", "RE AUPRC", "DP UAS", "DP LAS", "MRC EM",
                                         "MRC ROUGE", "DST JGA", "DST slot F1"]
    assert all(metric in TASKS[task].metrics for task, metric, _ in COLUMNS)
    # spot checks against the KLUE README table (@ 0106de0)
    assert PUBLISHED["KLUE-RoBERTa-base"]["NER entity F1"] == 85.13
    assert PUBLISHED["KLUE-RoBERTa-base"]["NER char F1"] == 91.52
    assert PUBLISHED["KLUE-RoBERTa-large"]["DP UAS"] == 93.32 and PUBLISHED["mBERT-base"]["DP LAS"] == 86.66
    assert PUBLISHED["XLM-R-base"]["RE AUPRC"] == 54.98 and PUBLISHED["koELECTRA-base"]["YNAT F1"] == 84.59
    assert PUBLISHED["KLUE-RoBERTa-base"]["MRC EM"] == 68.52 and PUBLISHED["KLUE-RoBERTa-large"]["MRC ROUGE"] == 81.43
    assert PUBLISHED["XLM-R-base"]["MRC EM"] == 27.48 and PUBLISHED["mBERT-base"]["MRC ROUGE"] == 55.92
    assert PUBLISHED["KLUE-RoBERTa-large"]["DST JGA"] == 50.49 and PUBLISHED["mBERT-base"]["DST slot F1"] == 88.63


def test_ner_and_dp_dev_split_runs_are_marked_and_unpublished_columns_show_a_dash():
    runs = [_run("ner", "tiny", {"entity_macro_f1": 30.0, "character_macro_f1": 70.0,
                                 "character_macro_f1_without_o": 40.0},
                 {"entity_macro_f1": 0.0, "character_macro_f1": 0.0, "character_macro_f1_without_o": 0.0}, [1],
                 split="dev-split"),
            _run("dp", "tiny", {"uas_macro_f1": 50.0, "las_macro_f1": 20.0, "uas_micro_f1": 60.0, "las_micro_f1": 30.0},
                 {"uas_macro_f1": 0.0, "las_macro_f1": 0.0, "uas_micro_f1": 0.0, "las_micro_f1": 0.0}, [1],
                 split="dev-split")]
    md = to_markdown(build_table(runs))
    tiny_line = next(line for line in md.splitlines() if line.startswith("| tiny |"))
    cells = [c.strip() for c in tiny_line.strip("|").split("|")]
    assert cells[5:8] == ["30.00 †", "70.00 †", "40.00 †"] and cells[10:12] == ["50.00 †", "20.00 †"]
    published = next(line for line in md.splitlines() if line.startswith("| KLUE-RoBERTa-large (published) |"))
    cells = [c.strip() for c in published.strip("|").split("|")]
    assert cells[5:8] == ["85.79", "91.77", "–"] and cells[10:] == ["93.32", "88.72", "76.78", "81.43", "50.49", "92.11"]
    assert "† evaluated on a split of the dev file" in md


def test_compare_adds_a_difference_row_between_two_arms(tmp_path, capsys):
    """Two arms' NLI run folders with real predictions on the fixture's 30 evaluation pairs: the command line's
    `--compare` row resamples them (Multi-Bootstrap), a 10-example gap at every seed is a clear difference."""
    from testkit.verdict import write_run

    dirs = []
    for label, right in (("mecab", {1: 25, 2: 24, 3: 25}), ("none", {1: 14, 2: 15, 3: 15})):
        write_run(tmp_path / label, "nli", label, right)
        dirs.append(str(tmp_path / label))
    main([str(tmp_path / "table"), *dirs, "--compare", "mecab,none"])
    table = json.loads((tmp_path / "table.json").read_text())
    (d,) = table["between_arms"]
    assert (d["model"], d["baseline"]) == ("mecab", "none") and table["vs_random_init"] == []
    cell = d["cells"]["NLI Acc"]
    assert cell["diff"] == pytest.approx(100 * (74 - 44) / 90) and cell["p"] < 0.01 and cell["ci95"][0] > 0
    assert cell["replicates"] == [1, 1] and cell["runs"] == [3, 3] and table["evidence_problems"] == []
    assert any(line.startswith("| Δ mecab − none | ") for line in (tmp_path / "table.md").read_text().splitlines())
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "t2"), *dirs, "--compare", "mecab,nonee"])
    assert "no run labelled 'nonee'" in capsys.readouterr().err
    # a folder without its predictions is named under the table, and its cell is left untested
    (tmp_path / "none" / "seed-2" / "predictions.jsonl").unlink()
    main([str(tmp_path / "t3"), *dirs, "--compare", "mecab,none"])
    md = (tmp_path / "t3.md").read_text()
    assert "Not resampled (none, nli:" in md and "seed-2/predictions.jsonl: no predictions" in md
    assert json.loads((tmp_path / "t3.json").read_text())["between_arms"][0]["cells"]["NLI Acc"]["p"] is None


def test_compare_against_a_random_init_row_is_not_repeated():
    runs = [{**_run("mrc", "pretrained", {"rouge_w": 9.0}, {"rouge_w": 1.0}, [1, 2, 3]), "random_init": False},
            {**_run("mrc", "random", {"rouge_w": 8.0}, {"rouge_w": 1.0}, [1, 2, 3]), "random_init": True}]
    table = build_table(runs, [("pretrained", "random")])
    assert [(d["model"], d["baseline"]) for d in table["vs_random_init"]] == [("pretrained", "random")]
    assert table["between_arms"] == []
    assert sum(line.startswith("| Δ pretrained − random |") for line in to_markdown(table).splitlines()) == 1


def test_each_arm_is_compared_with_the_random_init_of_its_own_vocabulary():
    """Two ablation arms, each with a random init of its own vocabulary, and a floor: with `baseline_of` an arm's
    Δ row is against its own random init only; the floor, which it does not name, against both."""
    def run(label: str, value: float, random_init: bool = False) -> dict:
        return {**_run("nli", label, {"accuracy": value}, {"accuracy": 1.0}, [1, 2, 3]), "random_init": random_init}

    runs = [run("on", 40.0), run("random init (on)", 36.0, True), run("off", 39.0), run("random init (off)", 35.0, True),
            {**_run("nli", "floor", {"accuracy": 46.0}, {"accuracy": 0.0}, [0]), "random_init": False}]
    table = build_table(runs, [("off", "on")], baseline_of={"on": "random init (on)", "off": "random init (off)"})
    assert sorted((d["model"], d["baseline"]) for d in table["vs_random_init"]) == [
        ("floor", "random init (off)"), ("floor", "random init (on)"),
        ("off", "random init (off)"), ("on", "random init (on)")]
    assert table["vs_random_init"][0]["cells"]["NLI Acc"]["diff"] == pytest.approx(4.0)
    assert [(d["model"], d["baseline"]) for d in table["between_arms"]] == [("off", "on")]
    # without it, every row meets every random init (the command line's table of unrelated runs)
    assert len(build_table(runs)["vs_random_init"]) == 6


def test_a_missing_or_broken_run_is_named(tmp_path, capsys):
    (tmp_path / "half").mkdir()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "t"), str(tmp_path / "half")])
    assert f"{tmp_path / 'half' / 'metrics.json'}: no such file" in capsys.readouterr().err
    (tmp_path / "half" / "metrics.json").write_text("{not json")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "t"), str(tmp_path / "half")])
    assert "metrics.json: not JSON" in capsys.readouterr().err


def test_jglue_runs_get_jglue_columns_and_published_rows_only():
    """A table of JGLUE runs has the JGLUE suite's columns and JGLUE's published rows, and no KLUE column."""
    runs = [_run("jnli", "ja-tiny", {"accuracy": 60.0}, {"accuracy": 1.0}, [1, 2, 3], split="dev-split"),
            _run("jsts", "ja-tiny", {"pearsonr": 30.0, "spearmanr": 28.0}, {"pearsonr": 2.0, "spearmanr": 2.0},
                 [1, 2, 3]),
            {**_run("jnli", "random init", {"accuracy": 50.0}, {"accuracy": 1.0}, [1, 2, 3], split="dev-split"),
             "random_init": True}]
    table = build_table(runs)
    assert table["suites"] == ["jglue"]
    assert table["columns"] == ["JSTS Pearson", "JSTS Spearman", "JNLI Acc", "JSQuAD EM", "JSQuAD F1", "JCQA Acc"]
    assert "Tohoku BERT-base" in table["published"] and "KLUE-RoBERTa-base" not in table["published"]
    assert table["published"]["XLM-R-base"] == {"JSTS Pearson": 87.7, "JSTS Spearman": 83.1, "JNLI Acc": 89.8,
                                                "JSQuAD EM": None, "JSQuAD F1": None, "JCQA Acc": 68.7}
    (delta,) = table["vs_random_init"]
    assert delta["cells"]["JNLI Acc"]["diff"] == 10.0 and delta["cells"]["JNLI Acc"]["p"] is None  # no evidence
    md = to_markdown(table)
    assert "JGLUE README" in md and "KLUE README" not in md
    assert next(line for line in md.splitlines() if line.startswith("| ja-tiny |")).count("†") == 1


def test_a_table_of_both_suites_keeps_one_row_per_published_model():
    runs = [_run("ynat", "m", {"macro_f1": 60.0}, {"macro_f1": 0.0}, [1]),
            _run("jnli", "m", {"accuracy": 60.0}, {"accuracy": 0.0}, [1])]
    table = build_table(runs)
    assert table["suites"] == ["klue", "jglue"] and table["columns"][0] == "YNAT F1"
    xlmr = table["published"]["XLM-R-base"]
    assert xlmr["YNAT F1"] == 83.52 and xlmr["JNLI Acc"] == 89.8  # KLUE's and JGLUE's numbers, one row


def test_a_run_of_an_unknown_task_is_named():
    with pytest.raises(ValueError, match="task 'squad' is in no suite"):
        build_table([{**_run("jsquad", "m", {"f1": 1.0}, {"f1": 0.0}, [1]), "task": "squad"}])


def _run_with_history(root, name: str, label: str, curves: dict[int, list[tuple[int, float]]]):
    """A run folder as `klue finetune` leaves it: the run's metrics.json and each seed's, with its history."""
    run_dir = root / name
    for seed, points in curves.items():
        (run_dir / f"seed-{seed}").mkdir(parents=True)
        (run_dir / f"seed-{seed}" / "metrics.json").write_text(json.dumps(
            {"seed": seed, "history": [{"step": s, "epoch": s / 100, "joint_goal_acc": 0.0, "slot_micro_f1": f1}
                                       for s, f1 in points]}))
    run = _run("dst", label, {"slot_micro_f1": curves[1][-1][1]}, {"slot_micro_f1": 0.0}, list(curves))
    (run_dir / "metrics.json").write_text(json.dumps({**run, "main_metric": "slot_micro_f1"}))
    return run_dir


def test_curves_draw_every_evaluation_of_every_seed(tmp_path, capsys):
    from finetune.results import learning_curves, load_runs

    a = _run_with_history(tmp_path, "a", "tiny", {1: [(100, 0.0), (200, 13.5)], 2: [(100, 4.0), (200, 20.0)]})
    b = _run_with_history(tmp_path, "b", "random init", {1: [(100, 0.0), (200, 7.0)]})
    floor = tmp_path / "floor"
    floor.mkdir()
    (floor / "metrics.json").write_text(json.dumps({**_run("dst", "floor", {"slot_micro_f1": 82.5}, {}, []),
                                                    "main_metric": "slot_micro_f1", "floor": {"method": "m"}}))
    dirs = [a, b / "metrics.json", floor]
    assert learning_curves(dirs, load_runs(dirs)) == {"dst slot_micro_f1": {
        "tiny, seed 1": [(100.0, 0.0), (200.0, 13.5)], "tiny, seed 2": [(100.0, 4.0), (200.0, 20.0)],
        "random init, seed 1": [(100.0, 0.0), (200.0, 7.0)], "floor": [(100.0, 82.5), (200.0, 82.5)]}}
    assert learning_curves([floor], load_runs([floor])) == {}  # a floor alone has no steps to span
    with pytest.raises(SystemExit):
        main([str(tmp_path / "f"), str(floor), "--curves"])
    assert "--curves: no run has an evaluation history to plot" in capsys.readouterr().err
    assert not list(tmp_path.glob("f.*"))  # nothing written
    main([str(tmp_path / "t"), str(a), str(b), "--curves"])
    png = (tmp_path / "t.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    main([str(tmp_path / "u"), str(a), str(b), "--curves"])
    assert (tmp_path / "u.png").read_bytes() == png  # the same curves, the same bytes
    main([str(tmp_path / "v"), str(a), "--curves"])
    assert (tmp_path / "v.png").read_bytes() != png
    main([str(tmp_path / "w"), str(a)])
    assert not (tmp_path / "w.png").exists()  # only when asked
    capsys.readouterr()

    (b / "seed-1" / "metrics.json").write_text(json.dumps({"seed": 1}))
    with pytest.raises(SystemExit):
        main([str(tmp_path / "x"), str(a), str(b), "--curves"])
    assert f"{b / 'seed-1' / 'metrics.json'}: no evaluation history to plot" in capsys.readouterr().err


def test_two_runs_of_one_task_under_one_label_are_refused():
    runs = [_run("nli", "tiny", {"accuracy": 41.0}, {"accuracy": 0.0}, [1]),
            _run("nli", "tiny", {"accuracy": 35.0}, {"accuracy": 0.0}, [1])]
    with pytest.raises(ValueError, match="two nli runs are labelled 'tiny': give them different labels"):
        build_table(runs)
    runs[1]["task"] = "ynat"  # one row, one cell per task
    assert list(build_table(runs)["ours"]) == ["tiny"]


def test_a_row_with_a_departure_is_marked_and_named_and_a_baseline_row_is_not():
    """The marks come from what each run's metrics.json records: its hyperparameters against the task's baseline
    defaults (KLUE-baseline's run_all.sh), a step cap, extra evaluations, a max length lowered to the model."""
    runs = [
        _run("ynat", "baseline", {"macro_f1": 80.0}, {"macro_f1": 1.0}, [1, 2]),
        _run("nli", "baseline", {"accuracy": 70.0}, {"accuracy": 1.0}, [1, 2]),
        _run("ynat", "tuned", {"macro_f1": 81.0}, {"macro_f1": 1.0}, [1, 2],
             hp={"learning_rate": 1e-3, "pooling": "mean", "group_by_length": True}, max_steps=150),
        _run("nli", "tuned", {"accuracy": 71.0}, {"accuracy": 1.0}, [1, 2],
             hp={"learning_rate": 1e-3, "pooling": "mean", "group_by_length": True, "patience": None},
             max_steps=150),
        _run("ynat", "same as tuned", {"macro_f1": 79.0}, {"macro_f1": 1.0}, [1, 2],
             hp={"learning_rate": 1e-3, "pooling": "mean", "group_by_length": True}, max_steps=150),
        _run("ynat", "cadence", {"macro_f1": 79.0}, {"macro_f1": 1.0}, [1, 2], hp={"evals_per_epoch": 1}),
        {**_run("ynat", "TF-IDF floor", {"macro_f1": 50.0}, {"macro_f1": 0.0}, [0]), "floor": True},
    ]
    table = build_table(runs)
    assert table["departure_marks"] == {"tuned": 1, "same as tuned": 2, "cadence": 3}
    lines = to_markdown(table).splitlines()
    rows = {line.split(" | ")[0][2:]: line for line in lines if line.startswith("| ")}
    assert "baseline" in rows and "tuned ¹" in rows and "same as tuned ²" in rows and "cadence ³" in rows
    assert "TF-IDF floor" in rows  # a floor trains nothing: nothing to depart from
    notes = [line for line in lines if line and line[0] in "¹²³"]
    assert notes[0].startswith("¹ departs from KLUE-baseline's defaults") and notes[0].endswith(
        "every task: learning_rate 0.001 (baseline: 5e-05); group_by_length on (baseline: off); pooling mean "
        "(baseline: cls); max_steps 150 (a cap on optimiser steps; baseline: whole epochs) — NLI: patience none "
        "(baseline: 5).")
    assert notes[1].endswith(": YNAT: learning_rate 0.001 (baseline: 5e-05); group_by_length on (baseline: off); "
                             "pooling mean (baseline: cls); max_steps 150 (a cap on optimiser steps; baseline: "
                             "whole epochs).")
    assert notes[2].endswith(": YNAT: evals_per_epoch 1 (baseline: 4).")
    # a step cap that cut nothing (the run's epochs ended first) is not a departure
    uncut = {**_run("ynat", "uncut", {"macro_f1": 1.0}, {"macro_f1": 0.0}, [1], max_steps=1000), "steps_capped": False}
    assert build_table([uncut])["departure_marks"] == {}
    # a max length the model's positions lowered is named too, and a run that recorded no hyperparameters
    short = {**_run("re", "short", {"micro_f1": 1.0}, {"micro_f1": 0.0}, [1]), "max_length_used": 128}
    old = {k: v for k, v in _run("sts", "old", {"pearsonr": 1.0}, {"pearsonr": 0.0}, [1]).items() if k != "hyperparams"}
    notes = build_table([short, old])["departure_notes"]
    assert notes[0].endswith(": RE: max length 128 (the model's positions; asked: 256).")
    assert notes[1].endswith(": STS: hyperparameters not recorded.")


def test_mrc_on_korquad_data_is_marked_as_such():
    """The shared folder's MRC file is KorQuAD 1.0 (no KLUE-MRC file could be obtained): a run on it is another
    benchmark than the published KLUE-MRC column, and its row's footnote says so; a KLUE-MRC run is not marked."""
    from finetune.results import run_departures

    run = _run("mrc", "tiny", {"rouge_w": 20.0}, {"rouge_w": 1.0}, [1])
    run["data"]["dev"] = "/data/klue/mrc/korquad-v1.0_dev.json"
    assert run_departures(run)[-1].startswith("KorQuAD 1.0 data, not KLUE-MRC")
    assert "KorQuAD 1.0 data, not KLUE-MRC" in to_markdown(build_table([run]))
    run["data"]["dev"] = "/data/klue/mrc/klue-mrc-v1.1_dev.json"
    assert not any("KorQuAD" in d for d in run_departures(run))
