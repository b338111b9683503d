"""The JGLUE tasks (JSTS, JNLI, JSQuAD, JCommonsenseQA): readers of the v1.3 layouts and their errors, the metrics
as JGLUE computes them, the multiple-choice head, `klue finetune` with a tiny model, `klue score`, the registry
entries, and the shared v1.3 files when $KLUE_DATA_DIR/ja/jglue is there."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from finetune.cli import finetune, score
from finetune.data import load_task_data
from finetune.metrics import (
    jsquad_char_f1,
    jsquad_em_and_f1,
    jsquad_normalize,
    jsquad_scores,
    pearson_r,
    spearman_r,
)
from finetune.records import DataError, read_records
from finetune.registry import ALL_TASKS, JGLUE_TASKS, TASKS, get_task, resolve_name, task_list_text
from finetune.score import score_file
from finetune.tasks.base import Task
from finetune.tasks.jnli import JNLI_LABELS
from testkit.finetune import jglue_texts, write_jsonl
from testkit.tiny_model import build_tiny_model

FXJ = Path(__file__).parent / "fixtures" / "jglue"
GOLD = {"jsts": FXJ / "jsts-v1.3" / "valid-v1.3.json", "jnli": FXJ / "jnli-v1.3" / "valid-v1.3.json",
        "jsquad": FXJ / "jsquad-v1.3" / "valid-v1.3.json",
        "jcommonsenseqa": FXJ / "jcommonsenseqa-v1.3" / "valid-v1.3.json"}
JGLUE_NAMES = ["jsts", "jnli", "jsquad", "jcommonsenseqa"]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-jglue"), jglue_texts())


def _run(args: list[str]) -> None:
    res = CliRunner().invoke(finetune, [*args, "--quiet"], catch_exceptions=False)
    assert res.exit_code == 0, res.output


# ---- reading ----------------------------------------------------------------------------------------------

def test_readers_give_the_exact_examples_of_each_layout():
    jsts = get_task("jsts").read_file(GOLD["jsts"])
    assert len(jsts) == 16 and jsts[0] == {"guid": "0", "sentence1": "犬が公園を走っています。",
                                           "sentence2": "公園で犬が駆けています。", "label": 4.9}
    jnli_task = get_task("jnli")
    jnli = jnli_task.read_file(GOLD["jnli"])
    assert jnli[1] == {"guid": "1", "premise": "男性が公園で犬と走っています。", "hypothesis": "男性は家で寝ています。",
                       "label": jnli_task.labels.index("contradiction"), "image": "500"}
    jcqa = get_task("jcqa").read_file(GOLD["jcommonsenseqa"])
    assert jcqa[0] == {"guid": "60", "question": "「果物」の仲間を選んでください。",
                       "choices": ["みかん", "バス", "白", "バイオリン", "くま"], "label": 0}
    jsquad = get_task("jsquad").read_file(GOLD["jsquad"])
    context = "桜島 [SEP] 桜島は鹿児島県にある活火山である。現在も噴火を続けており、火山灰が市街地に降ることがある。"
    assert jsquad[0] == {"guid": "a100p0q0", "title": "桜島", "context": context, "question": "桜島はどこの県にあるか。",
                         "answers": [{"text": "鹿児島県", "answer_start": 12}, {"text": "鹿児島県", "answer_start": 12},
                                     {"text": "鹿児島", "answer_start": 12}],
                         "is_impossible": False, "question_type": None}
    # the title prefix stays and answer_start counts it
    assert context[12:16] == "鹿児島県" and context.startswith("桜島 [SEP] ")


def test_a_json_list_copy_reads_the_same_and_names_records(tmp_path):
    records = _lines(GOLD["jnli"])
    as_list = tmp_path / "valid-v1.3.json"
    as_list.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    task = get_task("jnli")
    assert task.read_file(as_list) == task.read_file(GOLD["jnli"])
    assert [w for w, _ in read_records(as_list)][:2] == [f"{as_list}: record 0", f"{as_list}: record 1"]
    assert [w for w, _ in read_records(GOLD["jnli"])][:2] == [f"{GOLD['jnli']}:1", f"{GOLD['jnli']}:2"]
    bad = records[:2] + [{**records[2], "label": "maybe"}]
    as_list.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataError, match=r"valid-v1\.3\.json: record 2 \(sentence_pair_id 2\): unknown label 'maybe'"):
        task.read_file(as_list)


GOOD = {
    "jsts": {"sentence_pair_id": "7", "yjcaptions_id": "1-2-3", "sentence1": "犬がいます。", "sentence2": "猫がいます。",
             "label": 1.5},
    "jnli": {"sentence_pair_id": "7", "yjcaptions_id": "1-2-3", "sentence1": "犬がいます。", "sentence2": "動物がいます。",
             "label": "entailment"},
    "jcommonsenseqa": {"q_id": 7, "question": "果物はどれ？", "choice0": "りんご", "choice1": "バス", "choice2": "赤",
                       "choice3": "笛", "choice4": "ぞう", "label": 0},
}


@pytest.mark.parametrize(("task", "change", "message"), [
    ("jsts", {"label": None}, r"bad\.json:2 \(sentence_pair_id 7\): missing field 'label'"),
    ("jsts", {"label": 5.5}, r"bad\.json:2 \(sentence_pair_id 7\): field 'label' = 5\.5 is outside 0\.\.5"),
    ("jsts", {"label": "4.0"}, r"bad\.json:2 \(sentence_pair_id 7\): field 'label' should be int or float"),
    ("jsts", {"sentence2": None}, r"bad\.json:2 \(sentence_pair_id 7\): missing field 'sentence2'"),
    ("jsts", {"sentence_pair_id": None}, r"bad\.json:2: missing field 'sentence_pair_id'"),
    ("jnli", {"label": "entails"}, r"bad\.json:2 \(sentence_pair_id 7\): unknown label 'entails' \(expected one of"),
    ("jnli", {"sentence1": 3}, r"bad\.json:2 \(sentence_pair_id 7\): field 'sentence1' should be str, got 3"),
    ("jnli", {"sentence_pair_id": ""}, r"bad\.json:2: field 'sentence_pair_id' is empty"),
    ("jcommonsenseqa", {"label": 5}, r"bad\.json:2 \(q_id 7\): field 'label' = 5 is not a choice index \(0 to 4\)"),
    ("jcommonsenseqa", {"label": True}, r"bad\.json:2 \(q_id 7\): field 'label' should be int, got True"),
    ("jcommonsenseqa", {"choice3": None}, r"bad\.json:2 \(q_id 7\): missing field 'choice3'"),
    ("jcommonsenseqa", {"q_id": 7.5}, r"bad\.json:2: field 'q_id' should be str or int, got 7\.5"),
])
def test_malformed_records_name_the_file_line_and_field(tmp_path, task, change, message):
    rec = {k: v for k, v in {**GOOD[task], **change}.items() if v is not None}
    path = _write_lines(tmp_path / "bad.json", [GOOD[task], rec])
    with pytest.raises(DataError, match=message):
        get_task(task).read_file(path)


def test_broken_json_lines_and_empty_files(tmp_path):
    path = _write_lines(tmp_path / "bad.json", [GOOD["jnli"], GOOD["jnli"], '{"sentence_pair_id": "9", "label'])
    with pytest.raises(DataError, match=r"bad\.json:3: invalid JSON"):
        get_task("jnli").read_file(path)
    (tmp_path / "empty.json").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"empty\.json: no records"):
        get_task("jsts").read_file(tmp_path / "empty.json")
    with pytest.raises(DataError, match=r"nothing\.json: file not found"):
        get_task("jsts").read_file(tmp_path / "nothing.json")


def _squad(qa: dict, context: str = "富士 [SEP] 富士山は静岡県にある。") -> dict:
    return {"data": [{"title": "富士", "paragraphs": [{"context": context, "qas": [qa]}]}]}


@pytest.mark.parametrize(("qa", "message"), [
    ({"id": "q1", "question": "どこにある？", "answers": [{"text": "静岡県", "answer_start": 5}], "is_impossible": False},
     r"data\[0\]\.paragraphs\[0\]\.qas\[0\] \(guid q1\): answers\[0\]: answer '静岡県' is not at answer_start 5 "
     r"of the context \(found 'EP\]'\)"),
    ({"id": "q1", "question": "どこにある？", "answers": [], "is_impossible": True},
     r"qas\[0\] \(guid q1\): field 'is_impossible' is true or 'answers' is empty"),
    ({"id": "q1", "question": "どこにある？", "answers": [], "is_impossible": False},
     r"qas\[0\] \(guid q1\): an answerable question \(is_impossible false\) without answers"),
    ({"id": "q1", "answers": [{"text": "静岡県", "answer_start": 8}]}, r"qas\[0\] \(guid q1\).*: missing field 'question'"),
])
def test_jsquad_reader_errors_name_the_question_and_field(tmp_path, qa, message):
    path = tmp_path / "valid-v1.3.json"
    path.write_text(json.dumps(_squad(qa), ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        get_task("jsquad").read_file(path)


def test_jnli_label_order_and_the_hf_copy_give_the_same_examples(tmp_path):
    """JGLUE's baseline ids are run_glue.py's sorted train labels; the HF copy (shunk031/JGLUE) has its own
    ClassLabel order, mapped back by name."""
    from datasets import ClassLabel, Dataset, DatasetDict, Features, Value

    task = get_task("jnli")
    assert task.labels == sorted(task.labels) == ["contradiction", "entailment", "neutral"]
    records = _lines(GOLD["jnli"])
    hf_names = ["entailment", "contradiction", "neutral"]
    features = Features({"sentence_pair_id": Value("string"), "yjcaptions_id": Value("string"),
                         "sentence1": Value("string"), "sentence2": Value("string"),
                         "label": ClassLabel(names=hf_names)})
    rows = {k: [r[k] for r in records] for k in ("sentence_pair_id", "yjcaptions_id", "sentence1", "sentence2")}
    rows["label"] = [hf_names.index(r["label"]) for r in records]
    DatasetDict({"validation": Dataset.from_dict(rows, features=features)}).save_to_disk(str(tmp_path / "JNLI"))
    from_hf = load_task_data(task, tmp_path)
    official = load_task_data(task, FXJ)
    assert from_hf.train == official.train and from_hf.eval == official.eval
    assert from_hf.source["format"] == "hf-datasets" and from_hf.source["split"] == "dev-split"


# ---- data location and the dev split ----------------------------------------------------------------------

def test_data_dir_is_the_jglue_folder_or_one_task_folder():
    for name in JGLUE_NAMES:
        task = get_task(name)
        data = load_task_data(task, FXJ)
        alone = load_task_data(task, FXJ / task.files.subdir)
        assert data.eval == alone.eval and data.source["dev"] == alone.source["dev"] == str(GOLD[name])
    jsts = load_task_data(get_task("jsts"), FXJ)
    assert jsts.source["split"] == "official" and jsts.source["train"].endswith("jsts-v1.3/train-v1.3.json")
    with pytest.raises(DataError, match="split 'official' needs a jnli train file"):
        load_task_data(get_task("jnli"), FXJ, split="official")


def test_without_a_train_file_the_dev_file_is_split_by_image_and_jsquad_by_article():
    jnli = load_task_data(get_task("jnli"), FXJ)
    assert jnli.source["split"] == "dev-split" and jnli.source["split_by"] == "image (yjcaptions_id)"
    assert "split by image (yjcaptions_id) hash" in jnli.source["note"] and "not comparable" in jnli.source["note"]
    assert len(jnli.train) + len(jnli.select) + len(jnli.eval) == 60 and jnli.eval
    # pairs of one image share its captions: all of them land on one side (on the real file, see below)
    assert {e["image"] for e in jnli.train}.isdisjoint(e["image"] for e in jnli.eval)
    jsquad = load_task_data(get_task("jsquad"), FXJ)
    assert jsquad.source["split_by"] == "article (title)" and "split by article (title) hash" in jsquad.source["note"]
    assert {e["title"] for e in jsquad.train}.isdisjoint(e["title"] for e in jsquad.eval)
    assert len(jsquad.train) + len(jsquad.select) + len(jsquad.eval) == 13 and jsquad.eval


# ---- metrics ----------------------------------------------------------------------------------------------

def test_pearson_and_spearman_on_four_pairs():
    preds, labels = [0.5, 1.0, 4.0, 4.5], [1.0, 2.0, 3.0, 5.0]
    # deviations: (-2, -1.5, 1.5, 2) and (-1.75, -0.75, 0.25, 2.25): sums 9.5, 12.5, 8.75
    assert pearson_r(preds, labels) == pytest.approx(100 * 9.5 / math.sqrt(12.5 * 8.75))
    assert spearman_r(preds, labels) == pytest.approx(100.0)  # the same order
    # a tie gets the average rank: ranks (1.5, 1.5, 3, 4) against (1, 2, 3, 4) -> 4.5 / sqrt(4.5 * 5)
    assert spearman_r([1.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]) == pytest.approx(100 * 4.5 / math.sqrt(22.5))
    assert math.isnan(spearman_r([2.0, 2.0, 2.0, 2.0], labels)) and math.isnan(spearman_r([1.0], [2.0]))
    task = get_task("jsts")
    golds = [{"guid": str(i), "label": v} for i, v in enumerate(labels)]
    m = task.compute_metrics([{"guid": str(i), "score": p} for i, p in enumerate(preds)], golds)
    assert set(m) == {"pearsonr", "spearmanr"} and m["spearmanr"] == pytest.approx(100.0)


def test_jsquad_normalisation_is_jglues_patched_squad_one():
    assert jsquad_normalize("東京駅。") == "東京駅" and jsquad_normalize("東京駅。。") == "東京駅"
    assert jsquad_normalize("。東京。") == "。東京"  # only trailing full stops
    assert jsquad_normalize("東京、") == "東京、" and jsquad_normalize("「東京」") == "「東京」"  # punctuation kept
    assert jsquad_normalize("東京. ") == "東京." and jsquad_normalize("東京。 ") == "東京。"  # 。 then a space stays
    assert jsquad_normalize("  285   km/h ") == "285 km/h" and jsquad_normalize("ＡＢＣ") == "ａｂｃ"
    assert jsquad_normalize("The Answer") == "the answer"  # no article removal (the patch replaced it)


def test_character_f1_and_the_max_over_gold_answers():
    # 5 shared characters; P 5/5, R 5/10
    assert jsquad_char_f1("小笠原諸島", "小笠原諸島を除く日本") == pytest.approx(2 / 3)
    # against "小笠原": P 3/5, R 3/3 -> 0.75, the better of the two
    assert jsquad_em_and_f1("小笠原諸島", ["小笠原諸島を除く日本", "小笠原"]) == (0.0, pytest.approx(0.75))
    assert jsquad_em_and_f1("小笠原諸島。", ["小笠原諸島を除く日本", "小笠原諸島"]) == (1.0, 1.0)
    # spaces are characters: "285 km/h" has 8, "285km/h" 7, all shared -> P 1, R 7/8
    assert jsquad_char_f1("285km/h", "285 km/h") == pytest.approx(14 / 15)
    assert jsquad_char_f1("京東", "東京") == 1.0 and jsquad_em_and_f1("京東", ["東京"])[0] == 0.0  # a multiset
    assert jsquad_char_f1("ああ", "あ") == pytest.approx(2 / 3)  # repeated characters count once per match
    assert jsquad_char_f1("", "東京") == 0.0 and jsquad_char_f1("大阪", "東京") == 0.0
    # gold answers that normalise to "" are dropped; none left -> the answer ""
    assert jsquad_em_and_f1("", ["。"]) == (1.0, 1.0) and jsquad_em_and_f1("東京", ["。", "東京"]) == (1.0, 1.0)
    m = jsquad_scores(["小笠原諸島", "雨季", "大阪"], [["小笠原諸島を除く日本", "小笠原"], ["雨季", "雨季"], ["東京"]])
    assert m == {"exact_match": pytest.approx(100 / 3), "f1": pytest.approx((0.75 + 1 + 0) / 3 * 100)}


# ---- the multiple-choice head -----------------------------------------------------------------------------

def test_multiple_choice_features_collator_and_model_shapes(tiny):
    import torch
    from transformers import AutoTokenizer

    from finetune.trainer import input_length, length_order, unk_rate

    task = get_task("jcqa")
    tok = AutoTokenizer.from_pretrained(tiny)
    examples = task.read_file(GOLD["jcommonsenseqa"])[:3]
    feats = task.encode(examples, tok, 16)
    assert [f["labels"] for f in feats] == [e["label"] for e in examples]
    assert all(len(f["input_ids"]) == len(f["attention_mask"]) == 5 for f in feats)
    first = tok.convert_ids_to_tokens(feats[0]["input_ids"][1])
    assert first[0] == "[CLS]" and first[-1] == "[SEP]" and first.count("[SEP]") == 2  # (question, choice1)
    assert tok.decode(feats[0]["input_ids"][1], skip_special_tokens=True).replace(" ", "").endswith("バス")
    assert input_length(feats[0]) == max(len(x) for x in feats[0]["input_ids"])
    assert 0.0 <= unk_rate(feats, tok) < 1.0 and sorted(length_order(feats)) == [0, 1, 2]

    batch = task.collator(tok)([{k: v for k, v in f.items() if k != "example_index"} for f in feats])
    longest = max(input_length(f) for f in feats)
    assert batch["input_ids"].shape == batch["attention_mask"].shape == (3, 5, longest)
    assert batch["labels"].tolist() == [e["label"] for e in examples] and batch["labels"].dtype == torch.long
    for i, f in enumerate(feats):  # each (question, choice) pair in its own row, padded and masked after its end
        for j, ids in enumerate(f["input_ids"]):
            assert batch["input_ids"][i, j, :len(ids)].tolist() == ids
            assert (batch["input_ids"][i, j, len(ids):] == tok.pad_token_id).all()
            assert batch["attention_mask"][i, j].tolist() == [1] * len(ids) + [0] * (longest - len(ids))

    model = task.build_model(tiny, tok, random_init=False)
    assert type(model).__name__ == "RobertaForMultipleChoice"
    out = model(**batch)
    assert out.logits.shape == (3, 5) and out.loss.ndim == 0
    logits = task.eval_outputs(model, batch)
    assert logits.shape == (3, 5)
    preds = task.predictions(logits.detach().numpy(), feats, examples)
    assert [p["guid"] for p in preds] == ["60", "61", "62"] and all(0 <= p["label"] < 5 for p in preds)
    fresh = task.build_model(tiny, tok, random_init=True)
    a, b = model.roberta.embeddings.word_embeddings.weight, fresh.roberta.embeddings.word_embeddings.weight
    assert a.shape == b.shape and not torch.equal(a, b)
    with pytest.raises(ValueError, match="different numbers of choices"):
        task.collator(tok)([{"input_ids": [[0, 2]] * 5, "attention_mask": [[1, 1]] * 5},
                            {"input_ids": [[0, 2]] * 4, "attention_mask": [[1, 1]] * 4}])


# ---- klue finetune, end to end ----------------------------------------------------------------------------

@pytest.mark.parametrize("task", JGLUE_NAMES)
def test_finetune_writes_predictions_that_klue_score_scores_the_same(tiny, tmp_path, task):
    out = tmp_path / task
    extra = ["--max-length", "40"] if task == "jsquad" else []
    _run([task, "--model", str(tiny), "--data-dir", str(FXJ), "--output", str(out), "--max-steps", "4",
          "--batch-size", "8", "--lr", "1e-3", *extra])
    summary = json.loads((out / "metrics.json").read_text())
    t = get_task(task)
    assert summary["task"] == task and set(t.metric_names) <= set(summary["mean"])
    assert summary["data"]["split"] == ("dev-split" if task in ("jnli", "jsquad") else "official")
    preds = [json.loads(line) for line in (out / "seed-42" / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == summary["data"]["n_eval"]
    run = json.loads((out / "seed-42" / "metrics.json").read_text())
    scored = score_file(task, GOLD[task], out / "seed-42" / "predictions.jsonl", allow_subset=True)
    for key in t.metric_names:
        a, b = scored["metrics"][key], run["metrics"][key]
        assert (b is None and (a is None or math.isnan(a))) or math.isclose(a, b, abs_tol=1e-6)
    if task == "jsquad":  # never abstains: every question gets a span of its context
        gold = {e["guid"]: e for e in t.read_file(GOLD[task])}
        assert all(p["answer"] and p["answer"] in gold[p["guid"]]["context"] for p in preds)
    if task == "jcommonsenseqa":
        from transformers import AutoModelForMultipleChoice

        assert all(isinstance(p["label"], int) for p in preds)
        saved = AutoModelForMultipleChoice.from_pretrained(out / "seed-42" / "model")
        assert (out / "seed-42" / "model" / "model.safetensors").is_file() and saved.num_parameters() > 0


def test_multiple_choice_fits_its_training_questions(tiny, tmp_path):
    """Evaluated on its own training file, the head must get well above chance (20%). Every question offers one
    word of each kind, so no choice is right on its own: only the (question, choice) pairs tell, and a collator
    or label that put choices out of line with their label would leave the model at chance."""
    import shutil

    folder = tmp_path / "data" / "jcommonsenseqa-v1.3"
    folder.mkdir(parents=True)
    train = FXJ / "jcommonsenseqa-v1.3" / "train-v1.3.json"
    shutil.copy(train, folder / "train-v1.3.json")
    shutil.copy(train, folder / "valid-v1.3.json")
    out = tmp_path / "jcqa"
    # KLUE-baseline's protocol: the model trains on all 60 questions it is scored on, and the checkpoint is chosen
    # on them (the default would hold 6 out and choose on those 6 alone: a test of the selection split, not this)
    _run(["jcqa", "--model", str(tiny), "--data-dir", str(tmp_path / "data"), "--output", str(out), "--epochs", "20",
          "--lr", "2e-3", "--batch-size", "8", "--no-save-model", "--protocol", "klue-baseline"])
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["data"]["n_eval"] == 60 and summary["mean"]["accuracy"] >= 50.0


# ---- klue score -------------------------------------------------------------------------------------------

def test_perfect_predictions_score_full_marks(tmp_path):
    recs = {
        "jsts": [{"guid": r["sentence_pair_id"], "score": r["label"]} for r in _lines(GOLD["jsts"])],
        "jnli": [{"guid": r["sentence_pair_id"], "label": r["label"]} for r in _lines(GOLD["jnli"])],
        "jcommonsenseqa": [{"guid": r["q_id"], "label": r["label"]} for r in _lines(GOLD["jcommonsenseqa"])],
        "jsquad": [{"guid": e["guid"], "answer": e["answers"][-1]["text"]}
                   for e in get_task("jsquad").read_file(GOLD["jsquad"])],
    }
    expected = {"jsts": {"pearsonr": 100.0, "spearmanr": 100.0}, "jnli": {"accuracy": 100.0},
                "jcommonsenseqa": {"accuracy": 100.0}, "jsquad": {"exact_match": 100.0, "f1": 100.0}}
    for task, records in recs.items():
        res = score_file(task, GOLD[task], write_jsonl(tmp_path / f"{task}.jsonl", records))
        assert res["metrics"] == pytest.approx(expected[task]) and not res["subset"], task
    # JCommonsenseQA guids may be the integer q_id (as in the data) or its string; the alias works too
    as_str = [{**r, "guid": str(r["guid"])} for r in recs["jcommonsenseqa"]]
    assert score_file("jcqa", GOLD["jcommonsenseqa"], write_jsonl(tmp_path / "s.jsonl", as_str))["metrics"] == {
        "accuracy": 100.0}


def test_constant_and_partial_predictions(tmp_path):
    gold = _lines(GOLD["jnli"])
    const = write_jsonl(tmp_path / "c.jsonl", [{"guid": r["sentence_pair_id"], "label": "neutral"} for r in gold])
    share = sum(r["label"] == "neutral" for r in gold) / len(gold)
    assert score_file("jnli", GOLD["jnli"], const)["metrics"]["accuracy"] == pytest.approx(100 * share)
    qa = get_task("jsquad").read_file(GOLD["jsquad"])
    preds = write_jsonl(tmp_path / "q.jsonl", [{"guid": qa[0]["guid"], "answer": "鹿児島県。"},
                                                {"guid": qa[1]["guid"], "answer": "火山"}])
    res = score_file("jsquad", GOLD["jsquad"], preds, allow_subset=True)
    # "火山" vs "火山灰": P 1, R 2/3 -> 0.8
    assert res["subset"] and res["n_scored"] == 2
    assert res["metrics"] == {"exact_match": pytest.approx(50.0), "f1": pytest.approx((1 + 0.8) / 2 * 100)}


@pytest.mark.parametrize(("task", "record", "message"), [
    ("jcommonsenseqa", {"guid": 60, "label": 5}, r"p\.jsonl:1: field 'label' = 5 is not a choice index"),
    ("jcommonsenseqa", {"guid": 60, "label": "choice0"}, r"p\.jsonl:1: field 'label' should be int"),
    ("jnli", {"guid": "0", "label": "entails"}, r"p\.jsonl:1: unknown label 'entails'"),
    ("jsts", {"guid": "0", "score": None}, r"p\.jsonl:1: field 'score' should be int or float"),
    ("jsquad", {"guid": "a100p0q0", "text": "鹿児島県"}, r"p\.jsonl:1 \(guid a100p0q0\): missing field 'answer'"),
    ("jsquad", {"guid": "nope", "answer": "x"}, r"1 guid\(s\) not in the gold file"),
])
def test_bad_prediction_records_name_the_line_and_field(tmp_path, task, record, message):
    with pytest.raises(DataError, match=message):
        score_file(task, GOLD[task], write_jsonl(tmp_path / "p.jsonl", [record]), allow_subset=True)


def test_score_cli_and_duplicate_q_ids(tmp_path):
    gold = _lines(GOLD["jcommonsenseqa"])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"guid": r["q_id"], "label": 0} for r in gold])
    res = CliRunner().invoke(score, ["jcqa", "--gold", str(GOLD["jcommonsenseqa"]), "--pred", str(preds)])
    share = sum(r["label"] == 0 for r in gold) / len(gold)
    assert res.exit_code == 0 and res.output.startswith(f"jcommonsenseqa  accuracy {100 * share:.2f}  n=20")
    twice = write_jsonl(tmp_path / "t.jsonl", [{"guid": 60, "label": 0}, {"guid": "60", "label": 1}])
    with pytest.raises(DataError, match=r"t\.jsonl:2: guid '60' is predicted twice"):
        score_file("jcqa", GOLD["jcommonsenseqa"], twice, allow_subset=True)


# ---- registry ---------------------------------------------------------------------------------------------

def test_registry_names_columns_and_published_scores():
    assert [resolve_name(n) for n in ("jsts", "JNLI", "jsquad", "jcqa", "jcommonsenseqa")] == [
        "jsts", "jnli", "jsquad", "jcommonsenseqa", "jcommonsenseqa"]
    assert list(JGLUE_TASKS) == JGLUE_NAMES and not set(JGLUE_TASKS) & set(TASKS)  # not part of `all`
    assert set(ALL_TASKS) == set(TASKS) | set(JGLUE_TASKS)
    for name, entry in JGLUE_TASKS.items():
        assert entry.main_metric in entry.metrics and all(c.metric in entry.metrics for c in entry.columns), name
        assert get_task(name).name == name
    assert [line.split()[0] for line in task_list_text("jglue").splitlines()] == JGLUE_NAMES
    col = {(n, c.metric): c.published for n, e in JGLUE_TASKS.items() for c in e.columns}
    # spot checks against the JGLUE README dev table (@ 6f071c0), ×100
    assert col["jsts", "pearsonr"]["Tohoku BERT-base"] == 90.9 and col["jsts", "spearmanr"]["XLM-R-base"] == 83.1
    assert col["jnli", "accuracy"]["Waseda RoBERTa-large (s512)"] == 93.4
    assert col["jsquad", "exact_match"]["Tohoku BERT-base"] == 87.1 and col["jsquad", "f1"]["NICT BERT-base"] == 94.7
    assert "XLM-R-base" not in col["jsquad", "f1"] and "XLM-R-large" not in col["jsquad", "exact_match"]
    assert col["jcommonsenseqa", "accuracy"]["Waseda RoBERTa-large (s128)"] == 90.7
    assert get_task("jsquad").defaults.max_length == 384 and get_task("jcqa").defaults.batch_size == 64


# ---- the shared JGLUE v1.3 files ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jglue_dir() -> Path:
    root = os.environ.get("KLUE_DATA_DIR")
    if not root:
        pytest.skip("KLUE_DATA_DIR is not set: the shared-data checks need $KLUE_DATA_DIR/ja/jglue")
    d = Path(root) / "ja" / "jglue"
    if not d.is_dir():
        pytest.skip(f"{d} is missing ($KLUE_DATA_DIR/ja/jglue): no shared JGLUE v1.3 files")
    return d


def _shared(jglue_dir: Path, task: str) -> tuple[Task, Path]:
    t = get_task(task)
    folder = jglue_dir / t.files.subdir
    if not folder.is_dir():
        pytest.skip(f"the shared JGLUE folder {folder} is missing (set KLUE_DATA_DIR to the shared data)")
    return t, folder


@pytest.mark.shared_data
@pytest.mark.parametrize(("task", "n_dev", "split"), [
    ("jsts", 1457, "official"), ("jnli", 2434, "dev-split"), ("jsquad", 4442, "dev-split"),
    ("jcommonsenseqa", 1119, "official")])
def test_shared_files_counts_and_split_note(jglue_dir, task, n_dev, split):
    t, folder = _shared(jglue_dir, task)
    data = load_task_data(t, jglue_dir)
    src = data.source
    assert src["dev"] == str(folder / "valid-v1.3.json") and src["split"] == split
    if split == "official":
        assert src["n_eval"] == n_dev and "official train file" in src["note"]
        assert src["n_train"] + src["n_select"] == {"jsts": 12451, "jcommonsenseqa": 8939}[task]
    else:
        assert src["n_train"] + src["n_select"] + src["n_eval"] == n_dev and src["train"] is None
        assert "no train file used" in src["note"] and "not comparable with published dev scores" in src["note"]
        assert 0.15 < src["n_eval"] / n_dev < 0.35
    if task == "jnli":
        assert src["split_by"] == "image (yjcaptions_id)" and data.eval[0]["guid"].isdigit()
        # split by pair, 392 of 473 evaluation pairs shared a caption with a training pair; by image, 4 of 472
        seen = {x for e in data.train for x in (e["premise"], e["hypothesis"])}
        assert sum(e["premise"] in seen or e["hypothesis"] in seen for e in data.eval) <= 0.02 * len(data.eval)
    if task == "jsquad":
        assert src["split_by"] == "article (title)"
        titles = [{e["title"] for e in part} for part in (data.train, data.select, data.eval)]
        # whole articles on one side each: training, selection (what chooses the checkpoint) and evaluation
        assert not (titles[0] & titles[2] or titles[1] & titles[2] or titles[0] & titles[1])
        assert len(titles[0] | titles[1] | titles[2]) == 59
        assert all(e["context"].startswith(e["title"] + " [SEP] ") for e in data.eval)
        assert all(len(e["answers"]) in (2, 3) for e in data.train + data.select + data.eval)
    if task == "jcommonsenseqa":
        assert all(len(e["choices"]) == 5 for e in data.eval) and data.eval[0]["guid"] == "8939"


@pytest.mark.shared_data
def test_shared_jnli_labels_and_scoring_a_constant_file(jglue_dir, tmp_path):
    t, folder = _shared(jglue_dir, "jnli")
    gold = folder / "valid-v1.3.json"
    examples = t.read_file(gold)
    counts = np.bincount([e["label"] for e in examples], minlength=3)
    assert dict(zip(JNLI_LABELS, counts.tolist(), strict=True)) == {
        "contradiction": 735, "entailment": 349, "neutral": 1350}
    preds = write_jsonl(tmp_path / "p.jsonl", [{"guid": e["guid"], "label": "neutral"} for e in examples])
    assert score_file("jnli", gold, preds)["metrics"]["accuracy"] == pytest.approx(100 * 1350 / 2434)
