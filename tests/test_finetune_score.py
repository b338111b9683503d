"""`klue score`: predictions files against official gold files, and the errors for mismatched files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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


def _official_auprc(probs: np.ndarray, labels: np.ndarray, classes: list[int]) -> float:
    """KLUE-baseline's `klue_re_auprc` (functional.py @ 8a03c94), over the given classes: one-vs-rest
    `precision_recall_curve` of each class's probability, `auc`, the uniform mean, ×100."""
    from sklearn.metrics import auc, precision_recall_curve

    onehot = np.eye(probs.shape[1])[labels]
    scores = []
    for c in classes:
        precision, recall, _ = precision_recall_curve(onehot[:, c], probs[:, c])
        scores.append(auc(recall, precision))
    return float(np.average(scores) * 100.0)


def _near_flat(n: int, seed: int = 0) -> np.ndarray:
    """The softmax of an untrained head: logits within 1e-5 of each other, probabilities equal to 6 decimals."""
    logits = np.random.default_rng(seed).normal(scale=1e-5, size=(n, 30))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    return probs / probs.sum(axis=1, keepdims=True)


def _re_records(gold: list[dict], probs: np.ndarray, labels: list[str]) -> list[dict]:
    return [{"guid": g["guid"], "label": labels[int(p.argmax())], "probs": [float(x) for x in p]}
            for g, p in zip(gold, probs, strict=True)]


def test_re_auprc_of_a_near_flat_softmax_is_the_official_formula_on_the_full_precision(tmp_path):
    """`klue score re` scores the probabilities as written: a near-flat softmax (what a barely trained head gives)
    equals KLUE-baseline's formula on the raw probabilities, and rounding them to 6 decimals, as predictions files
    once were, turns them into ties and changes the score: the full precision is what makes it right."""
    task = get_task("re", FX)
    gold = _gold("re")
    labels = np.array([task.labels.index(g["label"]) for g in gold])
    present = sorted(set(labels.tolist()))  # the fixture's classes; absent ones are left out (finetune.metrics)
    probs = _near_flat(len(gold))
    m = score_file("re", GOLD["re"], _write(tmp_path / "p.jsonl", _re_records(gold, probs, task.labels)))["metrics"]
    assert m["auprc"] == pytest.approx(_official_auprc(probs, labels, present), abs=1e-6)
    rounded = np.round(probs, 6)
    assert len(np.unique(rounded)) <= 3  # three values left for 2,400 probabilities: ties everywhere
    m6 = score_file("re", GOLD["re"], _write(tmp_path / "r.jsonl", _re_records(gold, rounded, task.labels)))["metrics"]
    assert m6["auprc"] == pytest.approx(_official_auprc(rounded, labels, present), abs=1e-6)
    assert abs(m6["auprc"] - m["auprc"]) > 5  # what the rounding did to the old predictions files


def test_re_auprc_of_tied_probabilities_is_pinned(tmp_path):
    """Equal probabilities everywhere: each class's PR curve is the two points (recall 1, its prevalence) and
    (0, 1), area (1 + prevalence) / 2, and the prevalences of k classes in gold sum to 1, so the score is
    100 (1 + 1/k) / 2 exactly, whatever the gold: 62.5 for the fixture's 4 relations (51.67 on the official dev
    set's 30). Ties are scored as KLUE-baseline scores them; only rounding must not create them."""
    task = get_task("re", FX)
    gold = _gold("re")
    k = len({g["label"] for g in gold})
    probs = np.full((len(gold), 30), 1 / 30)
    m = score_file("re", GOLD["re"], _write(tmp_path / "t.jsonl", _re_records(gold, probs, task.labels)))["metrics"]
    assert k == 4 and m["auprc"] == pytest.approx(100 * (1 + 1 / k) / 2, abs=1e-9)


def test_re_auprc_equals_klue_baseline_on_the_official_dev_set(shared_data, tmp_path):
    """On the shared KLUE-RE v1.1 dev file every one of the 30 classes occurs, so the score is KLUE-baseline's
    `klue_re_auprc` over all 30, to 1e-6, for a near-flat softmax and for the exact tie."""
    task = get_task("re", shared_data / "klue")
    dev = next((shared_data / "klue" / "re").glob(task.files.dev_glob))
    gold = json.loads(dev.read_text(encoding="utf-8"))
    labels = np.array([task.labels.index(g["label"]) for g in gold])
    assert len(set(labels.tolist())) == 30
    for name, probs in (("flat", _near_flat(len(gold), seed=1)), ("tie", np.full((len(gold), 30), 1 / 30))):
        path = _write(tmp_path / f"{name}.jsonl", _re_records(gold, probs, task.labels))
        m = score_file("re", dev, path)["metrics"]
        assert m["auprc"] == pytest.approx(_official_auprc(probs, labels, list(range(30))), abs=1e-6), name
        assert "auprc_classes_absent_from_gold" not in m
    assert m["auprc"] == pytest.approx(100 * (1 + 1 / 30) / 2, abs=1e-6)


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
