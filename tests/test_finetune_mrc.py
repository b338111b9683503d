"""KLUE-MRC: the official metrics and their quirks, the SQuAD-layout readers (KLUE-MRC, KorQuAD, the HF copy),
the split by article, windows over long passages and their aggregation back to one answer, `klue score mrc`,
the sliding-window floor and `klue finetune mrc` with a tiny model."""

from __future__ import annotations

import json
import math
import random
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from finetune.cli import score
from finetune.data import load_task_data
from finetune.floors import mrc_floor_predictions, run_mrc_floor, sliding_window_answer, word_key
from finetune.metrics import mrc_em_and_rouge_w, mrc_normalize, mrc_rouge_w, mrc_scores
from finetune.registry import get_task
from finetune.score import score_file
from finetune.tasks.base import DataError
from finetune.tasks.mrc import best_answer, max_context_flags
from testkit.finetune import FX, run_finetune, shared_data_run, write_jsonl
from testkit.finetune_fixtures import task_fixtures, tiny_fixture
from testkit.tiny_model import train_wordpiece

GOLD = FX / "mrc" / "klue-mrc-v1.1_dev.json"

# The official layout (KLUE-MRC v1.1): one article, one passage, an answerable and an unanswerable question.
OFFICIAL = {"version": "v1.1", "data": [{
    "title": "한빛전자 창립", "source": "acrofan", "news_category": "경제",
    "paragraphs": [{
        "context": "한빛전자는 1987년 부산에서 문을 열었다. 창업자는 김민수이다.",
        "qas": [
            {"question": "한빛전자가 문을 연 해는?", "answers": [{"answer_start": 6, "text": "1987년"}],
             "guid": "klue-mrc-v1_dev_01891", "question_type": 1, "is_impossible": False},
            {"question": "한빛전자의 직원 수는?", "answers": [],
             "plausible_answers": [{"answer_start": 33, "text": "김민수"}],
             "guid": "klue-mrc-v1_dev_01892", "question_type": 3, "is_impossible": True},
        ]}]}]}
# KorQuAD 1.0: the same layout, ids in `id`, no is_impossible / question_type.
KORQUAD = {"version": "KorQuAD_v1.0_dev", "data": [
    {"title": "부산", "paragraphs": [{"context": "부산은 대한민국 제2의 도시이다.", "qas": [
        {"answers": [{"text": "부산", "answer_start": 0}], "id": "6548850-0-0", "question": "대한민국 제2의 도시는?"}]}]},
    {"title": "대전", "paragraphs": [{"context": "대전에는 엑스포 공원이 있다.", "qas": [
        {"answers": [{"text": "엑스포 공원", "answer_start": 5}], "id": "6548851-0-0", "question": "대전에 있는 공원은?"}]}]},
]}


def _write(path: Path, obj: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


task, gold = task_fixtures("mrc", GOLD)


# ---- metrics ----------------------------------------------------------------------------------------------

def test_normalisation_lowercases_drops_ascii_punctuation_and_collapses_spaces():
    assert mrc_normalize("  The  \"Seoul\",\n시청 ") == "the seoul 시청"
    # Korean quotes and brackets are not ASCII punctuation, and the official quote pattern does not match them
    # on their own: they stay, so 《서울》 and 서울 do not match
    assert mrc_normalize("《서울》") == "《서울》" and mrc_normalize("〈논어〉") == "〈논어〉"
    assert mrc_normalize("‘서울’") == "‘서울’"
    assert mrc_em_and_rouge_w("서울", ["《서울》"])[0] == 0.0
    # ... because the pattern is one of '"《》<>〈〉 followed by the literal text ()‘’: only that matches
    assert mrc_normalize("가《()‘’나") == "가 나"
    assert mrc_normalize("가()‘’나") == "가‘’나"  # without the leading class character: punctuation step only


def test_rouge_w_is_the_f1_of_the_longest_common_substring():
    assert mrc_rouge_w("서울특별시", "서울시") == pytest.approx(0.5)  # "서울": P 2/5, R 2/3
    # a substring, not a subsequence: "ab" (or "cd") of "abXcd" vs "abcd" gives P 2/5, R 2/4 (a subsequence: 0.89)
    assert mrc_rouge_w("abXcd", "abcd") == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    assert mrc_rouge_w("", "서울") == 0.0 and mrc_rouge_w("부산", "서울") == 0.0
    assert mrc_rouge_w("", "") == 1.0 and mrc_rouge_w("서울", "") == 0.0


def test_rouge_w_substring_is_exact_also_for_long_gold_answers():
    """difflib's autojunk (on in the official call) ignores characters that are over 1% of a 200+ character
    gold answer; with it off the substring is the true one."""
    long_gold = "가나" * 150
    assert SequenceMatcher(None, "나가나가", long_gold).find_longest_match(0, 4, 0, 300).size == 0  # official
    assert mrc_rouge_w("나가나가", long_gold) == pytest.approx(2 * 1.0 * (4 / 300) / (1 + 4 / 300))
    rng = random.Random(0)
    for _ in range(200):  # against a brute-force longest common substring
        a = "".join(rng.choice("가나다") for _ in range(rng.randint(1, 12)))
        b = "".join(rng.choice("가나다") for _ in range(rng.randint(1, 12)))
        lcs = max((k for i in range(len(a)) for k in range(1, len(a) - i + 1) if a[i:i + k] in b), default=0)
        p, r = lcs / len(a), lcs / len(b)
        assert mrc_rouge_w(a, b) == pytest.approx(0.0 if lcs == 0 else 2 * p * r / (p + r))


def test_scores_take_the_max_over_gold_answers():
    assert mrc_em_and_rouge_w("1991", ["1991년", "1991"]) == (1.0, 1.0)
    em, rouge = mrc_em_and_rouge_w("1991년도", ["1991년", "1991"])
    assert em == 0.0 and rouge == pytest.approx(10 / 11)  # vs "1991년": P 5/6, R 1 (vs "1991": 0.8)
    assert mrc_em_and_rouge_w("1991년.", ["1991년"]) == (1.0, 1.0)  # normalised before comparing


def test_unanswerable_questions_score_only_an_empty_prediction():
    assert mrc_em_and_rouge_w("", []) == (1.0, 1.0)
    assert mrc_em_and_rouge_w("김민수", []) == (0.0, 0.0)
    assert mrc_em_and_rouge_w("?!", []) == (1.0, 1.0)  # normalises to ""
    # the same rule for an answer that normalises to "" (official quirk kept)
    assert mrc_em_and_rouge_w("", ["!!!"]) == (1.0, 1.0) and mrc_em_and_rouge_w("네", ["!!!"]) == (0.0, 0.0)
    # an empty prediction on an answerable question scores 0
    assert mrc_em_and_rouge_w("", ["서울"]) == (0.0, 0.0)


def test_scores_per_question_type():
    preds = ["서울특별시", "1991년", "", "부산"]
    golds = [["서울시"], ["1991년"], [], []]
    m = mrc_scores(preds, golds, [1, 2, 3, 3])
    assert m["exact_match"] == pytest.approx(50.0) and m["rouge_w"] == pytest.approx((0.5 + 1 + 1 + 0) / 4 * 100)
    assert (m["exact_match_type1"], m["rouge_w_type1"], m["n_type1"]) == (0.0, pytest.approx(50.0), 1)
    assert (m["exact_match_type2"], m["rouge_w_type2"], m["n_type2"]) == (100.0, 100.0, 1)
    assert (m["exact_match_type3"], m["rouge_w_type3"], m["n_type3"]) == (50.0, 50.0, 2)
    one_type = mrc_scores(["서울"], [["서울"]], [2])
    assert one_type["exact_match_type1"] is None and one_type["n_type1"] == 0  # a type without questions
    assert set(mrc_scores(["서울"], [["서울"]], [None])) == {"exact_match", "rouge_w"}  # KorQuAD: no types


# ---- reading ----------------------------------------------------------------------------------------------

def test_official_reader_keeps_unanswerable_questions_and_types(task, tmp_path):
    ans, unans = task.read_file(_write(tmp_path / "klue-mrc-v1.1_dev.json", OFFICIAL))
    context = OFFICIAL["data"][0]["paragraphs"][0]["context"]
    assert ans == {"guid": "klue-mrc-v1_dev_01891", "title": "한빛전자 창립", "context": context,
                   "question": "한빛전자가 문을 연 해는?", "answers": [{"text": "1987년", "answer_start": 6}],
                   "is_impossible": False, "question_type": 1}
    # no answers (plausible_answers are not gold answers), so the gold answer is ""
    assert unans["is_impossible"] and unans["answers"] == [] and unans["question_type"] == 3
    m = task.compute_metrics([{"guid": ans["guid"], "answer": "1987년"}, {"guid": unans["guid"], "answer": ""}],
                             [ans, unans])
    assert m["exact_match"] == 100.0 and m["n_type3"] == 1 and m["exact_match_type3"] == 100.0


def test_korquad_layout_is_accepted(task, tmp_path):
    examples = task.read_file(_write(tmp_path / "korquad-v1.0_dev.json", KORQUAD))
    assert [e["guid"] for e in examples] == ["6548850-0-0", "6548851-0-0"]
    assert all(e["question_type"] is None and not e["is_impossible"] for e in examples)
    assert examples[1]["answers"] == [{"text": "엑스포 공원", "answer_start": 5}]


def _edit(edit) -> dict:
    data = json.loads(json.dumps(OFFICIAL))
    edit(data["data"][0]["paragraphs"][0]["qas"])
    return data


@pytest.mark.parametrize(("edit", "message"), [
    (lambda q: q[0]["answers"][0].update(answer_start=7),
     r"data\[0\]\.paragraphs\[0\]\.qas\[0\] \(guid klue-mrc-v1_dev_01891\): answers\[0\]: answer '1987년' is not "
     r"at answer_start 7 of the context \(found '987년 '\)"),
    (lambda q: q[0].update(answers=[]), r"qas\[0\] \(guid klue-mrc-v1_dev_01891\): an answerable question"),
    (lambda q: q[1].update(question_type=4), r"qas\[1\] \(guid klue-mrc-v1_dev_01892\): field 'question_type'"),
    (lambda q: q[0].pop("guid"), r"qas\[0\]: missing field 'guid'"),
    (lambda q: q[0]["answers"][0].update(answer_start="6"), r"answers\[0\]: field 'answer_start' should be int"),
    (lambda q: q[0].update(is_impossible="no"), r"field 'is_impossible' should be true or false"),
])
def test_malformed_records_name_the_question_and_the_field(task, tmp_path, edit, message):
    with pytest.raises(DataError, match=message):
        task.read_file(_write(tmp_path / "bad.json", _edit(edit)))


def test_a_file_that_is_not_squad_layout_is_an_error(task, tmp_path):
    with pytest.raises(DataError, match=r"l.json: expected a SQuAD-layout object"):
        task.read_file(_write(tmp_path / "l.json", [OFFICIAL]))


def test_hf_copy_gives_the_same_examples(task, gold, tmp_path):
    """HF `klue`/`mrc`: one row per question, `answers` a dict of lists."""
    from datasets import Dataset, DatasetDict, Features, Sequence, Value

    features = Features({"title": Value("string"), "context": Value("string"), "news_category": Value("string"),
                         "source": Value("string"), "guid": Value("string"), "is_impossible": Value("bool"),
                         "question_type": Value("int32"), "question": Value("string"),
                         "answers": {"answer_start": Sequence(Value("int32")), "text": Sequence(Value("string"))}})
    rows = [{"title": e["title"], "context": e["context"], "news_category": "", "source": "synthetic",
             "guid": e["guid"], "is_impossible": e["is_impossible"], "question_type": e["question_type"],
             "question": e["question"], "answers": {"answer_start": [a["answer_start"] for a in e["answers"]],
                                                    "text": [a["text"] for a in e["answers"]]}} for e in gold]
    ds = Dataset.from_list(rows, features=features)
    DatasetDict({"train": ds, "validation": ds}).save_to_disk(str(tmp_path / "klue" / "mrc"))
    hf = load_task_data(task, tmp_path / "klue", split="official")
    assert hf.source["format"] == "hf-datasets" and hf.eval == gold


def test_dev_split_keeps_each_article_on_one_side(task, gold, tmp_path):
    data = load_task_data(task, FX)
    assert data.source["split"] == "dev-split" and "split by article (title) hash" in data.source["note"]
    assert len(data.train) + len(data.select) + len(data.eval) == len(gold) == 120 and data.eval
    train_titles, eval_titles = {e["title"] for e in data.train}, {e["title"] for e in data.eval}
    assert not train_titles & eval_titles
    assert all(sum(e["title"] == t for e in data.eval) == 3 for t in eval_titles)  # whole articles
    # the same split whatever the order of the articles in the file
    body = json.loads(GOLD.read_text(encoding="utf-8"))
    body["data"].reverse()
    _write(tmp_path / "mrc" / GOLD.name, body)
    again = load_task_data(task, tmp_path)
    assert {e["guid"] for e in again.eval} == {e["guid"] for e in data.eval}


def test_the_klue_file_is_preferred_to_korquad_beside_it(task, tmp_path):
    body = GOLD.read_text(encoding="utf-8")
    (tmp_path / "mrc").mkdir()
    (tmp_path / "mrc" / "korquad-v1.0_dev.json").write_text(body, encoding="utf-8")
    assert Path(load_task_data(task, tmp_path).source["dev"]).name == "korquad-v1.0_dev.json"
    (tmp_path / "mrc" / "klue-mrc-v1.1_dev.json").write_text(body, encoding="utf-8")
    assert Path(load_task_data(task, tmp_path).source["dev"]).name == "klue-mrc-v1.1_dev.json"


# ---- windows ----------------------------------------------------------------------------------------------

FILLER = "가람은 작은 마을에서 자랐다. "
LONG_CONTEXT = FILLER + "그는 마을에서 1991년에 부산에서 태어났다. " + "마을에는 강이 흐른다. " * 3
QUESTION = "가람이 태어난 해는?"


@pytest.fixture(scope="module")
def small_tok():
    # "1991년에" splits into 1 ##9 ##9 ##1 ##년 ##에, so the answer "1991년" ends inside the word
    # (72: the floor of this alphabet, 63 tokens, and 9 merges: "가람", "태어", ... as below)
    return train_wordpiece([LONG_CONTEXT.replace("1991년에", "1991년 에"), QUESTION, "에 에 에"], vocab_size=72)


@pytest.fixture()
def small_task():
    t = get_task("mrc")
    t.doc_stride = 8
    return t


def _long_example(task):
    start = LONG_CONTEXT.index("1991년")
    return task.parse_record({"guid": "long", "question": QUESTION, "context": LONG_CONTEXT,
                              "answers": [{"text": "1991년", "answer_start": start}]}, "x")


def test_windows_start_every_doc_stride_tokens_and_the_answer_is_in_the_second(small_task, small_tok):
    ex = _long_example(small_task)
    feats = small_task.encode([ex], small_tok, 24)
    # 24 = [CLS] + 7 question tokens + [SEP] + 14 passage tokens + [SEP]; windows start every 8 passage tokens
    assert len(small_tok.tokenize(QUESTION)) == 7 and len(small_tok.tokenize(LONG_CONTEXT)) == 38
    assert len(feats) == 4 and all(f["example_index"] == 0 for f in feats)
    firsts = [next(o for o in f["_offsets"] if o) for f in feats]
    passage_tokens = small_tok(LONG_CONTEXT, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    assert firsts == [tuple(passage_tokens[k]) for k in (0, 8, 16, 24)]
    assert sum(o is not None for o in feats[-1]["_offsets"]) == 14  # the last window reaches the end exactly
    # the answer (passage tokens 12..16: 1 ##9 ##9 ##1 ##년, then ##에) lies whole only in the second window
    labels = [(f["start_positions"], f["end_positions"]) for f in feats]
    assert labels[0] == labels[2] == labels[3] == (0, 0)
    s, e = labels[1]
    assert (s, e) == (9 + 4, 9 + 8)
    assert LONG_CONTEXT[feats[1]["_offsets"][s][0]:feats[1]["_offsets"][e][1]] == "1991년"
    assert small_tok.convert_ids_to_tokens(feats[1]["input_ids"][s:e + 1]) == ["1", "##9", "##9", "##1", "##년"]


def test_unanswerable_questions_point_at_the_first_token(small_task, small_tok):
    ex = small_task.parse_record({"guid": "u", "question": QUESTION, "context": LONG_CONTEXT, "answers": [],
                                  "is_impossible": True, "question_type": 3}, "x")
    assert {(f["start_positions"], f["end_positions"]) for f in small_task.encode([ex], small_tok, 24)} == {(0, 0)}


def test_max_context_goes_to_the_more_central_window():
    # windows over tokens 0..7 and 4..11: token 5 is more central in the first, 6 in the second
    assert max_context_flags([0, 4], [8, 8]) == [[True] * 6 + [False] * 2, [False] * 2 + [True] * 6]
    # token 3 of windows 0..4 and 2..6 scores 1 in both: the first window keeps it
    assert max_context_flags([0, 2], [5, 5]) == [[True, True, True, True, False], [False, False, True, True, True]]


def test_predictions_aggregate_windows_back_to_exact_characters(small_task, small_tok):
    ex = _long_example(small_task)
    feats = small_task.encode([ex], small_tok, 24)
    s, e = feats[1]["start_positions"], feats[1]["end_positions"]
    width = max(len(f["input_ids"]) for f in feats) + 3
    out = np.full((len(feats), width, 2), -100.0, dtype=np.float32)  # rows padded like the trainer's
    for i, f in enumerate(feats):
        out[i, :len(f["input_ids"])] = 0.0
        out[i, 0] = 1.0  # null score 2 in every window
    out[1, s, 0] = out[1, e, 1] = 2.0  # the span scores 4 > 2: answered, exactly the characters "1991년"
    out[3, 20, 0] = out[3, 20, 1] = 1.9  # a weaker span in another window
    out[2, 9, 0] = out[2, 9, 1] = 5.0  # a stronger one whose start has more context in window 1: not a candidate
    assert not feats[2]["_max_context"][9] and feats[1]["_max_context"][17]
    (rec,) = small_task.predictions(out, feats, [ex])
    assert rec == {"guid": "long", "answer": "1991년", "best_span": "1991년"}
    # the null score is the smallest over the windows: with 2.5 everywhere but 1.0 in one window the span wins
    out[:, 0] = 1.25
    out[3, 0] = 0.5
    assert small_task.predictions(out, feats, [ex])[0]["answer"] == "1991년"
    # a null score of 5 everywhere beats the span's 4 by more than the threshold 0: unanswerable
    out[:, 0] = 2.5
    assert small_task.predictions(out, feats, [ex])[0] == {"guid": "long", "answer": "", "best_span": "1991년"}
    # a difference of exactly 0 still answers (the null wins only when strictly above)
    out[:, 0] = 2.0
    assert small_task.predictions(out, feats, [ex])[0]["answer"] == "1991년"


def _window(offsets, max_ctx=None):
    return {"input_ids": [0] * len(offsets), "_offsets": offsets,
            "_max_context": max_ctx if max_ctx is not None else [o is not None for o in offsets]}


def test_span_rules_length_order_max_context_and_no_valid_span():
    context = "가나다라"
    feat = _window([None, (0, 1), (1, 2), (2, 3), (3, 4)])  # position 0 is [CLS], then one token a character
    low = -9.0
    # the best pair (1, 3) is 3 tokens long: with at most 2 the best valid candidate is (1, 1) (score -4, first
    # in the legacy order among the ties)
    logits = np.array([[low, low], [5, low], [low, low], [low, 5], [low, low]])
    assert best_answer(context, [(feat, logits)], max_answer_length=3) == "가나다"
    assert best_answer(context, [(feat, logits)], max_answer_length=2) == "가"
    # a start that is not max context in this window is no candidate: the next start (2) pairs with end 3
    no_ctx = _window(feat["_offsets"], [False, False, True, True, True])
    assert best_answer(context, [(no_ctx, logits)]) == "나다"
    # an end before the start is no candidate
    backwards = np.array([[low, low], [low, 5], [low, low], [5, low], [low, low]])
    assert best_answer(context, [(feat, backwards)]) == "다"
    # no valid span at all (only special tokens): "" (the legacy code would answer the text "empty")
    assert best_answer(context, [(_window([None, None, None]), np.full((3, 2), -1.0))]) == ""
    # equal scores: the earlier window wins
    a, b = _window([None, (0, 2)]), _window([None, (2, 4)])
    same = np.array([[low, low], [1.0, 1.0]])
    assert best_answer(context, [(a, same), (b, same)]) == "가나"
    assert best_answer(context, [(b, same), (a, same)]) == "다라"


def test_forced_scores_count_the_best_span_where_the_model_abstained(task):
    golds = [{"guid": "a", "answers": [{"text": "서울", "answer_start": 0}], "question_type": None},
             {"guid": "b", "answers": [{"text": "1987년", "answer_start": 0}], "question_type": None}]
    preds = [{"guid": "a", "answer": "", "best_span": "서울"}, {"guid": "b", "answer": "1987년", "best_span": "1987년"}]
    m = task.compute_metrics(preds, golds)
    assert (m["exact_match"], m["exact_match_forced"], m["rouge_w_forced"]) == (50.0, 100.0, 100.0)
    # a prediction file without best_span (another system's) is scored officially only
    assert "exact_match_forced" not in task.compute_metrics([{"guid": p["guid"], "answer": p["answer"]}
                                                              for p in preds], golds)


# ---- scoring ----------------------------------------------------------------------------------------------

def _perfect(gold):
    return [{"guid": g["guid"], "answer": g["answers"][0]["text"] if g["answers"] else ""} for g in gold]


def test_klue_score_mrc(gold, tmp_path):
    res = CliRunner().invoke(score, ["mrc", "--gold", str(GOLD), "--pred",
                                     str(write_jsonl(tmp_path / "p.jsonl", _perfect(gold)))])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("mrc  exact_match 100.00  rouge_w 100.00  exact_match_type1 100.00")
    assert "n_type3 40" in res.output and res.output.strip().endswith("n=120")
    # answering every unanswerable question with a span: type 3 drops to 0, the total by a third
    wrong = [{**p, "answer": p["answer"] or "한빛전자"} for p in _perfect(gold)]
    m = score_file("mrc", GOLD, write_jsonl(tmp_path / "w.jsonl", wrong))["metrics"]
    assert m["exact_match_type3"] == 0.0 and m["exact_match"] == pytest.approx(200 / 3)
    assert m["exact_match_type2"] == 100.0  # "1991년" and "1991" are both gold for type 2


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: {"guid": r["guid"]}, r"p.jsonl:2 \(guid klue-mrc-v1_dev_00000-2\): missing field 'answer'"),
    (lambda r: {**r, "answer": None}, r"p.jsonl:2: field 'answer' should be str, got None"),
    (lambda r: {**r, "answer": ["1991년"]}, r"p.jsonl:2: field 'answer' should be str"),
    (lambda r: {**r, "guid": 7}, r"p.jsonl:2: field 'guid' should be str"),
])
def test_malformed_predictions_name_file_line_and_field(gold, tmp_path, edit, message):
    recs = _perfect(gold)
    with pytest.raises(DataError, match=message):
        score_file("mrc", GOLD, write_jsonl(tmp_path / "p.jsonl", [recs[0], edit(recs[1]), *recs[2:]]))


def test_missing_unknown_and_duplicate_guids_are_errors(gold, tmp_path):
    recs = _perfect(gold)
    with pytest.raises(DataError, match=r"1 gold guid\(s\) have no prediction"):
        score_file("mrc", GOLD, write_jsonl(tmp_path / "a.jsonl", recs[1:]))
    assert score_file("mrc", GOLD, tmp_path / "a.jsonl", allow_subset=True)["n_scored"] == 119
    with pytest.raises(DataError, match=r"b.jsonl:121: guid 'klue-mrc-v1_dev_00000-1' is predicted twice"):
        score_file("mrc", GOLD, write_jsonl(tmp_path / "b.jsonl", [*recs, recs[0]]))
    with pytest.raises(DataError, match=r"1 guid\(s\) not in the gold file"):
        score_file("mrc", GOLD, write_jsonl(tmp_path / "c.jsonl", [*recs, {"guid": "nope", "answer": ""}]))


# ---- floor ------------------------------------------------------------------------------------------------

def test_sliding_window_floor_picks_the_span_beside_the_question_words():
    context = "오늘 회의는 아주 길었고 모두 지쳤다. 철수는 어제 부산에서 영희를 만났다."
    # two words either side of "부산에서" hold the question's 철수, 어제 and 영희 (particles aside); those of
    # "지쳤다." only two of them: "부산" wins, without its particle
    assert sliding_window_answer("철수가 어제 영희를 만난 곳은?", context, max_words=1, window=2) == "부산"
    # with the default window (as many words as the question has, 5) "모두" sees the same three words to its
    # right and comes first: the floor is a floor
    assert sliding_window_answer("철수가 어제 영희를 만난 곳은?", context, max_words=1) == "모두"
    assert word_key("부산에서,") == "부산" and word_key("Seoul.") == "seoul"
    assert sliding_window_answer("", context) == "" and sliding_window_answer("철수", "철수") == ""


def test_floor_runs_on_the_same_evaluation_split_and_scores_like_klue_score(gold, tmp_path):
    out = tmp_path / "floor"
    summary = run_mrc_floor(FX, out)
    data = load_task_data(get_task("mrc", FX), FX)
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["guid"] for p in preds] == [e["guid"] for e in data.eval]
    assert preds == mrc_floor_predictions(data.eval)
    scored = score_file("mrc", GOLD, out / "predictions.jsonl", allow_subset=True)["metrics"]
    assert scored == summary["metrics"] and summary["data"] == data.source
    # it never abstains: unanswerable questions score 0
    assert scored["exact_match_type3"] == 0.0 and all(p["answer"] for p in preds)
    from finetune.results import build_table, load_runs

    row = build_table(load_runs([out]))["ours"]["sliding-window floor"]
    assert row["MRC ROUGE"]["mean"] == pytest.approx(scored["rouge_w"]) and row["MRC ROUGE"]["dev_split"]


@pytest.mark.shared_data
def test_the_floor_is_the_same_in_every_process(shared_data, tmp_path):
    """Python gives each process its own str hash seed, so its own set order: the floor's scores were summed in
    that order, and 500 KLUE-MRC questions scored 6.80 / 6.60 / 7.00 EM under hash seeds 0, 1 and 2. Three
    processes must write the same bytes."""
    import os
    import subprocess
    import sys

    outs = []
    for seed in ("0", "1", "2"):
        out = tmp_path / f"seed-{seed}"
        subprocess.run([sys.executable, "-m", "finetune.floors", "mrc", "--data-dir", str(shared_data / "klue"),
                        "--output", str(out), "--max-eval-examples", "500"], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": seed})
        outs.append((out / "predictions.jsonl").read_bytes())
    assert outs[0].count(b"\n") == 500 and outs[1] == outs[0] and outs[2] == outs[0]


# ---- training ---------------------------------------------------------------------------------------------

tiny = tiny_fixture("mrc", vocab_size=300)


def test_finetune_mrc_trains_evaluates_and_scores(tiny, tmp_path):
    args = ["mrc", "--model", str(tiny), "--data-dir", str(FX), "--max-steps", "40", "--epochs", "20",
            "--batch-size", "8", "--lr", "2e-3", "--no-save-model"]
    run_finetune([*args, "--output", str(tmp_path / "a")])
    summary = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert summary["main_metric"] == "rouge_w" and summary["data"]["split"] == "dev-split"
    hp = summary["hyperparams"]
    assert (hp["max_length"], hp["warmup_ratio"]) == (510, 0.0)
    assert get_task("mrc").defaults.learning_rate == 3e-5 and get_task("mrc").defaults.batch_size == 16
    assert get_task("mrc").defaults.epochs == 5
    run = json.loads((tmp_path / "a" / "seed-42" / "metrics.json").read_text())
    assert run["max_length"] == 256  # the tiny model's positions cap 510
    preds = tmp_path / "a" / "seed-42" / "predictions.jsonl"
    scored = score_file("mrc", GOLD, preds, allow_subset=True)
    assert scored["n_scored"] == summary["data"]["n_eval"]
    for key, value in run["metrics"].items():
        assert scored["metrics"][key] == (pytest.approx(value, abs=1e-6) if isinstance(value, float) else value)
    assert {"exact_match_type3", "rouge_w_type1", "n_type2", "exact_match_forced", "rouge_w_forced"} <= set(run["metrics"])
    # 40 steps learn the template: spans for the answerable questions, "" for the unanswerable ones (the floor
    # gets neither; an always-empty answer would score 0 on types 1 and 2)
    m = run["metrics"]
    assert m["exact_match_type1"] >= 80 and m["exact_match_type2"] >= 80 and m["exact_match_type3"] >= 80
    assert all(isinstance(json.loads(line)["answer"], str) for line in preds.read_text().splitlines())
    # evaluation in batches of 3 padded to other lengths gives the same predictions
    run_finetune([*args, "--output", str(tmp_path / "b"), "--hp", "mrc.eval_batch_size=3"])
    assert (tmp_path / "b" / "seed-42" / "predictions.jsonl").read_bytes() == preds.read_bytes()


def test_saved_checkpoint_is_a_question_answering_model(tiny, tmp_path):
    run_finetune(["mrc", "--model", str(tiny), "--data-dir", str(FX), "--output", str(tmp_path / "s"),
                  "--max-steps", "1", "--batch-size", "4", "--max-train-examples", "8", "--max-eval-examples", "4"])
    from transformers import AutoModelForQuestionAnswering

    model = AutoModelForQuestionAnswering.from_pretrained(tmp_path / "s" / "seed-42" / "model")
    assert model.qa_outputs.out_features == 2
    assert math.isfinite(json.loads((tmp_path / "s" / "seed-42" / "metrics.json").read_text())["metrics"]["rouge_w"])


@pytest.mark.shared_data
def test_mrc_on_the_shared_korquad_file(shared_data, tmp_path):
    klue = shared_data / "klue"
    task = get_task("mrc", klue)
    examples = task.read_file(klue / "mrc" / "korquad-v1.0_dev.json")
    assert len(examples) == 5774 and all(e["question_type"] is None for e in examples)
    texts = list(dict.fromkeys(e["context"] for e in examples[:1500])) + [e["question"] for e in examples[:1500]]
    run, scored = shared_data_run("mrc", klue, klue / "mrc" / "korquad-v1.0_dev.json", texts, tmp_path / "mrc",
                                  steps=4, n_train=64, n_eval=32, batch=8)
    assert "article" in run["summary"]["data"]["note"]
    # KorQuAD has no question types: the totals only, official and never abstaining
    assert set(scored["metrics"]) == {"exact_match", "rouge_w", "exact_match_forced", "rouge_w_forced"}
