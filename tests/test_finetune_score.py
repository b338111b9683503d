"""`klue score`: predictions files against official gold files, and the errors for mismatched files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from finetune.cli import score
from finetune.registry import get_task
from finetune.score import score_file
from finetune.tasks.base import DataError

FX = Path(__file__).parent / "fixtures" / "finetune"
GOLD = {
    "ynat": FX / "ynat" / "ynat-v1.1_dev.json",
    "nli": FX / "nli" / "klue-nli-v1.1_dev.json",
    "sts": FX / "sts" / "klue-sts-v1.1_dev.json",
    "re": FX / "re" / "klue-re-v1.1_dev.json",
}


def _gold(task: str) -> list[dict]:
    return json.loads(GOLD[task].read_text(encoding="utf-8"))


def _write(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_perfect_and_constant_classification_predictions(tmp_path):
    gold = _gold("nli")
    perfect = _write(tmp_path / "p.jsonl", [{"guid": g["guid"], "label": g["gold_label"]} for g in gold])
    assert score_file("nli", GOLD["nli"], perfect)["metrics"] == {"accuracy": pytest.approx(100.0)}
    const = _write(tmp_path / "c.jsonl", [{"guid": g["guid"], "label": "entailment"} for g in gold])
    n_ent = sum(g["gold_label"] == "entailment" for g in gold)
    assert score_file("nli", GOLD["nli"], const)["metrics"]["accuracy"] == pytest.approx(100 * n_ent / len(gold))


def test_ynat_constant_prediction_macro_f1(tmp_path):
    gold = _gold("ynat")
    preds = _write(tmp_path / "p.jsonl", [{"guid": g["guid"], "label": "정치"} for g in gold])
    share = sum(g["label"] == "정치" for g in gold) / len(gold)  # precision of 정치; its recall is 1
    expected = 2 * share / (1 + share) / 7 * 100  # the six other topics score 0
    assert score_file("ynat", GOLD["ynat"], preds)["metrics"]["macro_f1"] == pytest.approx(expected)


def test_sts_scores_against_real_label(tmp_path):
    gold = _gold("sts")
    preds = _write(tmp_path / "p.jsonl", [{"guid": g["guid"], "score": g["labels"]["real-label"]} for g in gold])
    m = score_file("sts", GOLD["sts"], preds)["metrics"]
    assert m["pearsonr"] == pytest.approx(100.0) and m["f1"] == pytest.approx(100.0)


def test_re_with_and_without_probs(tmp_path):
    task = get_task("re", FX)
    gold = _gold("re")
    recs = []
    for g in gold:
        probs = [0.0] * 30
        probs[task.labels.index(g["label"])] = 1.0
        recs.append({"guid": g["guid"], "label": g["label"], "probs": probs})
    m = score_file("re", GOLD["re"], _write(tmp_path / "p.jsonl", recs))["metrics"]
    assert m["micro_f1"] == pytest.approx(100.0) and m["auprc"] == pytest.approx(100.0)
    # the fixture uses 4 of 30 labels: the other 26 have no PR curve and are listed, not averaged in
    assert len(m["auprc_classes_absent_from_gold"]) == 26
    no_probs = _write(tmp_path / "n.jsonl", [{k: r[k] for k in ("guid", "label")} for r in recs])
    assert score_file("re", GOLD["re"], no_probs)["metrics"]["auprc"] is None
    short = _write(tmp_path / "s.jsonl", [{**recs[0], "probs": [1.0]}] + recs[1:])
    with pytest.raises(DataError, match=r"s.jsonl:1: probs must be a list of 30"):
        score_file("re", GOLD["re"], short)


def test_guid_mismatches_are_errors(tmp_path):
    gold = _gold("nli")
    recs = [{"guid": g["guid"], "label": g["gold_label"]} for g in gold]
    with pytest.raises(DataError, match=r"1 gold guid\(s\) have no prediction: klue-nli-v1_dev_00029"):
        score_file("nli", GOLD["nli"], _write(tmp_path / "a.jsonl", recs[:-1]))
    with pytest.raises(DataError, match=r"not in the gold file.*nope"):
        score_file("nli", GOLD["nli"], _write(tmp_path / "b.jsonl", recs + [{"guid": "nope", "label": "neutral"}]))
    with pytest.raises(DataError, match=r"c.jsonl:31: guid 'klue-nli-v1_dev_00000' is predicted twice"):
        score_file("nli", GOLD["nli"], _write(tmp_path / "c.jsonl", recs + recs[:1]))
    with pytest.raises(DataError, match=r"d.jsonl:1: unknown label 'yes'"):
        score_file("nli", GOLD["nli"], _write(tmp_path / "d.jsonl", [{**recs[0], "label": "yes"}] + recs[1:]))
    bad = tmp_path / "e.jsonl"
    bad.write_text(json.dumps(recs[0]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"e.jsonl:2: invalid JSON"):
        score_file("nli", GOLD["nli"], bad)
    subset = score_file("nli", GOLD["nli"], _write(tmp_path / "f.jsonl", recs[:10]), allow_subset=True)
    assert subset["subset"] and subset["n_scored"] == 10 and subset["metrics"]["accuracy"] == pytest.approx(100.0)


def test_cli_text_json_and_error_output(tmp_path):
    gold = _gold("sts")
    preds = _write(tmp_path / "p.jsonl", [{"guid": g["guid"], "score": 2.5} for g in gold])
    runner = CliRunner()
    res = runner.invoke(score, ["sts", "--gold", str(GOLD["sts"]), "--pred", str(preds), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["metrics"]["pearsonr"] is None  # constant predictions: r undefined, written as null
    assert out["metrics"]["f1"] == 0.0
    res = runner.invoke(score, ["sts", "--gold", str(GOLD["sts"]), "--pred", str(preds)])
    assert res.exit_code == 0 and "pearsonr n/a" in res.output and "n=80" in res.output
    res = runner.invoke(score, ["sts", "--gold", str(GOLD["sts"]), "--pred", str(_write(tmp_path / "x.jsonl", []))])
    assert res.exit_code != 0 and "no predictions" in res.output
    res = runner.invoke(score, ["pos", "--gold", str(GOLD["sts"]), "--pred", str(preds)])
    assert res.exit_code != 0 and "unknown task 'pos'" in res.output  # (wos is a task now: DST)
