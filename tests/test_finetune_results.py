"""The results table: our runs grouped by label beside the published baselines, with dev-split (†) and
capped-sample (‡) runs marked so nobody mistakes them for comparable dev scores."""

from __future__ import annotations

import json

from finetune.results import PUBLISHED, build_table, main, to_markdown


def _run(task: str, label: str, mean: dict, std: dict, seeds: list[int], *, split: str = "official",
         n_train: int = 100, n_train_available: int = 100, n_eval: int = 50, n_eval_available: int = 50) -> dict:
    return {"task": task, "label": label, "mean": mean, "std": std, "seeds": seeds,
            "data": {"split": split, "n_train": n_train, "n_train_available": n_train_available,
                     "n_eval": n_eval, "n_eval_available": n_eval_available}}


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
    # model, YNAT F1, STS r, STS F1, NLI Acc, RE F1, RE AUPRC
    assert cells == ["tiny", "60.00 ± 1.50", "20.00 †", "50.00 †", "40.00 ‡", "–", "–"]
    random_line = next(line for line in md.splitlines() if line.startswith("| random |"))
    assert "30.00" in random_line and "±" not in random_line  # one seed: no std shown
    assert "† evaluated on a 20% guid-hash split" in md and "‡ trained and/or evaluated on a capped" in md
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
