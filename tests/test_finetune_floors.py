"""The TF-IDF + linear floors of the sentence-level tasks: fitted on the run's training split, scored by the
task's official metric on its evaluation split, in the prediction format `klue score` reads."""

from __future__ import annotations

import json

import pytest

from finetune.data import load_task_data
from finetune.floors import FLOORS, run_floor, tfidf_floor_predictions
from finetune.registry import get_task
from finetune.score import score_file
from testkit.finetune import FX


def _examples(task_name: str, rows: list[tuple]) -> list[dict]:
    task = get_task(task_name)
    if task_name == "ynat":
        return [{"guid": f"g{i}", "title": t, "label": task.labels.index(y)} for i, (t, y) in enumerate(rows)]
    return [{"guid": f"g{i}", "sentence1": a, "sentence2": b, "label": y} for i, (a, b, y) in enumerate(rows)]


def test_the_classifier_learns_topic_words_and_predicts_label_names():
    train = _examples("ynat", [("국회 선거 여당", "정치"), ("국회 야당 대표", "정치"), ("대통령 선거 국회", "정치"),
                               ("축구 선수 골", "스포츠"), ("야구 선수 감독", "스포츠"), ("축구 감독 경기", "스포츠")] * 2)
    evals = _examples("ynat", [("여당 국회 토론", "정치"), ("축구 경기 선수", "스포츠")])
    preds = tfidf_floor_predictions(get_task("ynat"), train, evals)
    assert preds == [{"guid": "g0", "label": "정치"}, {"guid": "g1", "label": "스포츠"}]


def test_sts_regression_follows_overlap_and_stays_in_range():
    pairs = [("오늘 날씨가 맑다", "오늘 날씨가 맑다", 5.0), ("오늘 날씨가 맑다", "내일 시험이 있다", 0.0),
             ("기차가 늦게 왔다", "기차가 늦게 왔다", 5.0), ("기차가 늦게 왔다", "고양이가 잔다", 0.0),
             ("책을 읽었다", "책을 읽었다", 5.0), ("책을 읽었다", "밥을 먹었다", 1.0)] * 2
    evals = _examples("sts", [("날씨가 맑다", "날씨가 맑다", 5.0), ("날씨가 맑다", "시험이 있다", 0.0)])
    preds = tfidf_floor_predictions(get_task("sts"), _examples("sts", pairs), evals)
    assert [p["guid"] for p in preds] == ["g0", "g1"]
    assert 0.0 <= preds[1]["score"] < preds[0]["score"] <= 5.0


@pytest.mark.parametrize("task", ["ynat", "nli", "sts"])
def test_floor_run_scores_like_klue_score_on_the_same_split(task, tmp_path):
    out = tmp_path / task
    summary = run_floor(task, FX, out, split="auto")
    assert summary["label"] == FLOORS[task][0] and summary["seeds"] == []
    data = load_task_data(get_task(task, data_dir=FX), FX, split="auto")
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["guid"] for p in preds] == [e["guid"] for e in data.eval]
    gold = next((FX / get_task(task).files.subdir).glob(get_task(task).files.dev_glob))
    scored = score_file(task, gold, out / "predictions.jsonl", allow_subset=True)
    assert scored["metrics"] == pytest.approx(summary["metrics"])
    again = tmp_path / "again"
    run_floor(task, FX, again, split="auto")
    assert (again / "metrics.json").read_bytes() == (out / "metrics.json").read_bytes()  # deterministic
