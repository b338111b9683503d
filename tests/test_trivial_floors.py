"""The trivial floors (a constant learnt from the training labels at most): their prediction records on
hand-built examples, scored by each task's official metric to values computed by hand here, and their runs on
the repository fixtures, scored by `klue score` to the same metrics, with what metrics.json says of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finetune.data import json_safe, load_task_data
from finetune.floors import (
    FLOORS,
    NO_MODEL,
    TRIVIAL,
    attach_predictions,
    first_window_answer,
    floors_for,
    main,
    most_frequent,
    run_any_floor,
    trivial_floor,
    trivial_floor_predictions,
)
from finetune.registry import get_task
from finetune.score import score_file
from finetune.tasks.dp import DEP_LABELS
from finetune.tasks.ner import NER_LABELS
from testkit.finetune import FX, FXJ


def _labelled(task_name: str, labels: list) -> list[dict]:
    """Examples with only what the majority floors and the metrics read: a guid and the gold label (an index in
    the task's label order; JCommonsenseQA: the answer position)."""
    task = get_task(task_name)
    return [{"guid": f"g{i}", "label": y if isinstance(y, int) else task.labels.index(y)}
            for i, y in enumerate(labels)]


def _score(task_name: str, name: str, train: list[dict], evals: list[dict]) -> tuple[list[dict], dict]:
    task = get_task(task_name)
    preds = trivial_floor_predictions(task, name, train, evals)
    return preds, task.compute_metrics(preds, evals)


# ---- the registry -----------------------------------------------------------------------------------------

def test_floors_of_each_task_no_model_first_and_aliases_resolved():
    assert floors_for("ynat") == ["no-model", "majority"]
    assert floors_for("re") == ["majority"] and floors_for("ner") == ["all-o"]
    assert floors_for("dp") == ["right-attach", "left-attach"]
    assert floors_for("mrc") == ["no-model", "no-answer", "first-window"]
    assert floors_for("wos") == floors_for("dst") == ["no-model", "none-state"]
    assert floors_for("jcqa") == ["majority"] and floors_for("sts") == ["no-model"] and floors_for("jsquad") == []
    assert trivial_floor("jcqa", "majority").label == "majority-position floor"
    with pytest.raises(ValueError, match=r"dp: no trivial floor 'all-o' \(its floors: right-attach, left-attach\)"):
        trivial_floor("dp", "all-o")
    # only the previous-state floor reads the evaluation examples' gold
    assert [t for t, (_, rec) in FLOORS.items() if rec["reads_gold"]] == ["dst"]
    assert not any(f.reads_gold for floors in TRIVIAL.values() for f in floors)


def test_most_frequent_breaks_ties_by_label_order():
    assert most_frequent([2, 1, 2, 1], 3) == 1  # 1 and 2 twice each: the first in label order
    assert most_frequent([2, 2, 0], 3) == 2 and most_frequent([], 3) == 0


# ---- majority class -------------------------------------------------------------------------------------

def test_ynat_majority_is_the_training_majority_scored_by_macro_f1():
    train = _labelled("ynat", ["정치", "경제", "정치", "경제", "정치"])  # 정치 3, 경제 2
    evals = _labelled("ynat", ["정치", "정치", "경제", "경제", "스포츠"])
    preds, metrics = _score("ynat", "majority", train, evals)
    assert preds == [{"guid": f"g{i}", "label": "정치"} for i in range(5)]
    # classes in gold or predictions: 정치 (P 2/5, R 1: F1 4/7), 경제 0, 스포츠 0 -> macro 4/21
    assert metrics["macro_f1"] == pytest.approx(100 * 4 / 21)


def test_nli_majority_comes_from_train_not_from_the_evaluation_examples():
    train = _labelled("nli", ["neutral", "neutral", "entailment", "neutral", "contradiction"])
    evals = _labelled("nli", ["entailment", "neutral", "entailment", "entailment", "neutral"])  # eval's: entailment
    preds, metrics = _score("nli", "majority", train, evals)
    assert {p["label"] for p in preds} == {"neutral"}
    assert metrics == {"accuracy": 40.0}  # 2 of 5 neutral


def test_a_tie_goes_to_the_first_label_of_the_tasks_order_not_the_first_seen():
    train = ["entailment", "entailment", "contradiction", "contradiction"]  # a tie; entailment seen first
    # KLUE-NLI's order is entailment, contradiction, neutral; JNLI's contradiction, entailment, neutral
    assert _score("nli", "majority", _labelled("nli", train), _labelled("nli", ["neutral"]))[0][0]["label"] == "entailment"
    assert _score("jnli", "majority", _labelled("jnli", train), _labelled("jnli", ["neutral"]))[0][0]["label"] \
        == "contradiction"


def test_re_majority_writes_one_hot_probs_and_is_scored_with_auprc():
    labels = get_task("re").labels
    train = _labelled("re", ["per:title", "no_relation", "per:title"])
    evals = _labelled("re", ["per:title", "no_relation", "org:founded", "no_relation"])
    preds, metrics = _score("re", "majority", train, evals)
    k = labels.index("per:title")
    assert all(p["label"] == "per:title" and len(p["probs"]) == len(labels) == 30 and p["probs"][k] == 1.0
               and sum(p["probs"]) == 1.0 for p in preds)
    # micro F1 over the relations (no_relation left out): TP 1, FP 3 (every other pair is predicted per:title),
    # FN 1 (org:founded): P 1/4, R 1/2, F1 1/3
    assert metrics["micro_f1"] == pytest.approx(100 / 3)
    # AUPRC: each of the 3 gold classes has tied scores, one PR point (R 1, P = its share) and the (0, 1) end:
    # trapezoid (1 + share) / 2 -> (0.625 + 0.75 + 0.625) / 3 = 2/3
    assert metrics["auprc"] == pytest.approx(100 * 2 / 3)
    # when no_relation is the majority, micro F1 is 0: nothing is predicted of the classes it counts
    _, metrics = _score("re", "majority", _labelled("re", ["no_relation", "no_relation", "per:title"]), evals)
    assert metrics["micro_f1"] == 0.0


def test_jcommonsenseqa_majority_answer_position():
    preds, metrics = _score("jcommonsenseqa", "majority", _labelled("jcommonsenseqa", [2, 2, 0, 1]),
                            _labelled("jcommonsenseqa", [2, 0, 2, 4]))
    assert [p["label"] for p in preds] == [2, 2, 2, 2] and metrics == {"accuracy": 50.0}
    preds, _ = _score("jcommonsenseqa", "majority", _labelled("jcommonsenseqa", [3, 1, 3, 1]),
                      _labelled("jcommonsenseqa", [0]))
    assert preds[0]["label"] == 1  # a tie: the first position


# ---- NER, DP ----------------------------------------------------------------------------------------------

def test_ner_all_o():
    def ex(guid: str, text: str, tags: list[str]) -> dict:
        return {"guid": guid, "text": text, "tags": [NER_LABELS.index(t) for t in tags]}

    evals = [ex("a", "철수 왔다", ["B-PS", "I-PS", "O", "O", "O"]), ex("b", "오늘", ["B-DT", "I-DT"])]
    preds, metrics = _score("ner", "all-o", [], evals)
    assert preds == [{"guid": "a", "tags": ["O"] * 5}, {"guid": "b", "tags": ["O"] * 2}]
    assert metrics["entity_macro_f1"] == 0.0  # PS and DT in gold, no entity predicted
    # 6 scored characters (the space is not): O has P 2/6, R 1, F1 1/2; B-/I-PS and B-/I-DT are gold only: 0;
    # the 8 labels absent from both sides score 1 (the official fixed label set, zero_division 1)
    assert metrics["character_macro_f1"] == pytest.approx(100 * 8.5 / 13)
    assert metrics["character_macro_f1_without_o"] == pytest.approx(100 * 8 / 12)


def _dp(guid: str, heads: list[int], deprels: list[str]) -> dict:
    return {"guid": guid, "words": [f"w{i}" for i in range(len(heads))], "heads": heads,
            "deprels": [DEP_LABELS.index(d) for d in deprels]}


DP_TRAIN = [_dp("t0", [3, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]), _dp("t1", [2, 0], ["NP_SBJ", "VP"]),
            _dp("t2", [2, 0], ["NP_OBJ", "VNP"])]  # ROOT: VP 2, VNP 1; others: NP_SBJ 2, NP_OBJ 2 (tie: NP_SBJ first)
DP_EVAL = [_dp("e0", [2, 4, 4, 0], ["NP_MOD", "NP_SBJ", "NP_AJT", "VP"])]


def test_dp_right_attach():
    preds, metrics = _score("dp", "right-attach", DP_TRAIN, DP_EVAL)
    assert preds == [{"guid": "e0", "heads": [2, 3, 4, 0], "deprels": ["NP_SBJ", "NP_SBJ", "NP_SBJ", "VP"]}]
    # heads right for words 1, 3, 4: UAS 3/4. Macro over head positions {0, 2, 3, 4}: F1 1, 1, 0 (3 is never
    # gold), 2/3 (4: gold twice, predicted once, right) -> 2/3
    assert metrics["uas_micro_f1"] == 75.0
    assert metrics["uas_macro_f1"] == pytest.approx(100 * 2 / 3)
    # LAS: word 4 alone has head and label right: 1/4. Macro over the classes NP_MOD, NP_SBJ, NP_AJT, VP and the
    # wrong-head filler (word 2): only VP scores (F1 1) -> 1/5
    assert metrics["las_micro_f1"] == 25.0 and metrics["las_macro_f1"] == pytest.approx(20.0)


def test_dp_left_attach():
    preds, metrics = _score("dp", "left-attach", DP_TRAIN, DP_EVAL)
    assert preds == [{"guid": "e0", "heads": [0, 1, 2, 3], "deprels": ["VP", "NP_SBJ", "NP_SBJ", "NP_SBJ"]}]
    assert metrics == {"uas_macro_f1": 0.0, "las_macro_f1": 0.0, "uas_micro_f1": 0.0, "las_micro_f1": 0.0}
    one_word = [_dp("x", [0], ["VP"])]
    assert attach_predictions(DP_TRAIN, one_word, right=True) == attach_predictions(DP_TRAIN, one_word, right=False) \
        == [{"guid": "x", "heads": [0], "deprels": ["VP"]}]


# ---- MRC, DST ---------------------------------------------------------------------------------------------

SEOUL = "서울은 한국의 수도이다. 인구가 많다."


def _mrc(guid: str, context: str, answer: str | None, qtype: int) -> dict:
    answers = [] if answer is None else [{"text": answer, "answer_start": context.index(answer)}]
    return {"guid": guid, "title": "", "context": context, "question": "?", "answers": answers,
            "is_impossible": answer is None, "question_type": qtype}


MRC_EVAL = [_mrc("q0", SEOUL, "서울은 한국의 수도이다", 1), _mrc("q1", SEOUL, "한국", 1), _mrc("q2", "가 나 다 라", "라", 2),
            _mrc("q3", SEOUL, None, 3)]


def test_mrc_no_answer_scores_the_unanswerable_share():
    preds, metrics = _score("mrc", "no-answer", [], MRC_EVAL)
    assert preds == [{"guid": f"q{i}", "answer": ""} for i in range(4)]
    assert metrics["exact_match"] == metrics["rouge_w"] == 25.0  # 1 of 4 unanswerable
    assert metrics["exact_match_type3"] == 100.0 and metrics["exact_match_type1"] == metrics["rouge_w_type2"] == 0.0


def test_mrc_first_window():
    preds, metrics = _score("mrc", "first-window", [], MRC_EVAL)
    assert [p["answer"] for p in preds] == ["서울은 한국의 수도이다."] * 2 + ["가 나 다", "서울은 한국의 수도이다."]
    # normalised "서울은 한국의 수도이다" (12 characters): q0 EM 1; q1 "한국": P 2/12, R 1, F1 2/7; q2 0; q3 (no
    # answer) 0 -> EM 1/4, ROUGE-W (1 + 2/7) / 4 = 9/28
    assert metrics["exact_match"] == 25.0 and metrics["rouge_w"] == pytest.approx(100 * 9 / 28)
    assert first_window_answer("  가  나 다 라", 2) == "가  나" and first_window_answer(" ", 3) == ""


def test_dst_none_state_scores_the_empty_gold_turns():
    states = [[], ["관광-지역-서울 중앙"], ["관광-지역-서울 중앙"], []]
    evals = [{"guid": f"d-{k}", "dialogue_guid": "d", "turn": k, "state": s,
              "previous_state": states[k - 1] if k else []} for k, s in enumerate(states)]
    preds, metrics = _score("dst", "none-state", [], evals)
    assert preds == [{"guid": "d", "turn": k, "state": []} for k in range(4)]
    # an empty prediction is right (JGA) and scores turn F1 1 exactly on the 2 turns with an empty gold state
    assert metrics == {"joint_goal_acc": 50.0, "slot_micro_f1": 50.0}


# ---- runs on the fixtures ---------------------------------------------------------------------------------

FOLDERS = {"ynat": FX, "nli": FX, "re": FX, "ner": FX, "dp": FX, "mrc": FX, "dst": FX, "jnli": FXJ,
           "jcommonsenseqa": FXJ}
RUNS = [(task, name) for task in FOLDERS for name in floors_for(task)]


@pytest.mark.parametrize(("task_name", "name"), RUNS)
def test_every_floor_runs_on_the_fixture_and_scores_like_klue_score(task_name, name, tmp_path):
    folder, out = FOLDERS[task_name], tmp_path / "a"
    summary = run_any_floor(task_name, name, folder, out)
    task = get_task(task_name, data_dir=folder)
    data = load_task_data(task, folder)
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [task.prediction_key(p) for p in preds] == [str(e["guid"]) for e in data.eval]
    scored = score_file(task_name, Path(data.source["dev"]), out / "predictions.jsonl", allow_subset=True)
    written = json.loads((out / "metrics.json").read_text())
    assert json_safe(scored["metrics"]) == written["metrics"] == json_safe(summary["metrics"])  # NaN: null
    floor = written["floor"]
    assert floor["name"] == name and floor["kind"] == ("no-model" if name == NO_MODEL else "trivial")
    assert floor["reads_gold"] is (task_name == "dst" and name == NO_MODEL)
    label = FLOORS[task_name][0] if name == NO_MODEL else trivial_floor(task_name, name).label
    assert written["label"] == label and written["seeds"] == [] and written["data"] == data.source
    m = summary["metrics"]
    if name == "no-answer":  # exactly the questions without a gold answer
        assert m["exact_match"] == pytest.approx(100 * sum(not e["answers"] for e in data.eval) / len(data.eval))
    if name == "none-state":  # exactly the turns with an empty gold state
        assert m["joint_goal_acc"] == pytest.approx(100 * sum(not e["state"] for e in data.eval) / len(data.eval))
    if name == "all-o":
        assert m["entity_macro_f1"] == 0.0
    again = tmp_path / "b"
    run_any_floor(task_name, name, folder, again)
    for f in ("predictions.jsonl", "metrics.json", "summary.txt"):
        assert (again / f).read_bytes() == (out / f).read_bytes()  # deterministic


def test_cli_runs_every_floor_of_a_task_into_its_own_folder(tmp_path, capsys):
    main(["mrc", "--floor", "all", "--data-dir", str(FX), "--output", str(tmp_path)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first-window", "no-answer", "no-model"]
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[1] for line in lines] == ["sliding-window floor", "no-answer floor", "first-window floor"]
    main(["ner", "--data-dir", str(FX), "--output", str(tmp_path / "ner")])  # NER has no no-model floor: all-O
    assert json.loads((tmp_path / "ner" / "metrics.json").read_text())["floor"]["name"] == "all-o"
    with pytest.raises(SystemExit):
        main(["ner", "--floor", "majority", "--data-dir", str(FX), "--output", str(tmp_path / "x")])
    assert "--floor majority: ner has the floors all-o (or all)" in capsys.readouterr().err
