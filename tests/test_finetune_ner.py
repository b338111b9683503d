"""KLUE-NER: the official TSV reader, subword/character alignment, predictions back to characters, `klue score ner`
and `klue finetune ner` with a tiny model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from finetune.cli import score
from finetune.data import load_task_data
from finetune.registry import get_task
from finetune.score import score_file
from finetune.tasks.base import IGNORE_INDEX, DataError
from finetune.tasks.ner import NER_LABELS, fill_spaces
from testkit.finetune import FX, fixture_texts, run_finetune, shared_data_run, write_jsonl
from testkit.finetune_fixtures import task_fixtures, tiny_fixture
from testkit.tiny_model import train_wordpiece

GOLD = FX / "ner" / "klue-ner-v1.1_dev.tsv"
TAG = {name: i for i, name in enumerate(NER_LABELS)}


task, gold = task_fixtures("ner", GOLD)


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(fixture_texts())


# ---- reading ----------------------------------------------------------------------------------------------

def test_reader_skips_the_comment_lines_and_keeps_spaces_as_characters(task, gold):
    assert len(gold) == 60 and gold[0]["guid"] == "klue-ner-v1_dev_00000-synthetic"
    first = gold[0]
    header = GOLD.read_text(encoding="utf-8").splitlines()[5]
    assert header.startswith("## klue-ner-v1_dev_00000-synthetic\t<")
    # the characters spell the header sentence without its <entity:TYPE> marks, spaces included
    assert first["text"] == "최수진씨는 올해 봄에 서울역에서 푸른 은행 관계자를 만났다."
    tags = [NER_LABELS[t] for t in first["tags"]]
    assert tags[:4] == ["B-PS", "I-PS", "I-PS", "O"]
    # a space inside an entity is I-XX in the official files ("올해 봄", "푸른 은행"), O outside
    assert first["text"][6:10] == "올해 봄" and tags[6:10] == ["B-DT", "I-DT", "I-DT", "I-DT"]
    assert tags[5] == "O" and len(tags) == len(first["text"])


@pytest.mark.parametrize(("body", "message"), [
    ("## g1\tab\na\tO\nb\tO\tX\n", r"bad.tsv:3: expected 2 tab-separated fields, got 3"),
    ("## g1\tab\na\tO\nb\tB-XX\n", r"bad.tsv:3: field NE_TAG has unknown tag 'B-XX'"),
    ("## g1\tab\nab\tO\n", r"bad.tsv:2: field CHAR should be exactly one character, got 'ab'"),
    ("a\tO\n", r"bad.tsv:1: a data row before any '## GUID<TAB>SENTENCE' header"),
    ("## g1\tab\na\tO\n## g2\tc\nc\tO\n", r"bad.tsv:3: a '##' line inside a sentence"),
    ("## 컬럼명 : CHAR\tNE_TAG\n", r"bad.tsv: no sentences"),
])
def test_malformed_tsv_names_the_line_and_the_field(task, tmp_path, body, message):
    bad = tmp_path / "bad.tsv"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        task.read_file(bad)


def test_dev_split_is_the_guid_hash_split(task):
    data = load_task_data(task, FX)
    assert data.source["split"] == "dev-split" and "not comparable" in data.source["note"]
    assert len(data.train) + len(data.select) + len(data.eval) == 60 and data.eval
    assert not {e["guid"] for e in data.train} & {e["guid"] for e in data.eval}


def test_hf_copy_gives_the_same_examples(task, gold, tmp_path):
    """The HF `klue`/`ner` config: `tokens` (characters, spaces included) and ClassLabel `ner_tags` in HF's order;
    no guid (rows are named by split and position)."""
    from datasets import ClassLabel, Dataset, DatasetDict, Features, Sequence, Value

    hf_names = ["B-DT", "I-DT", "B-LC", "I-LC", "B-OG", "I-OG", "B-PS", "I-PS", "B-QT", "I-QT", "B-TI", "I-TI", "O"]
    rows = [{"sentence": e["text"], "tokens": list(e["text"]),
             "ner_tags": [hf_names.index(NER_LABELS[t]) for t in e["tags"]]} for e in gold]
    features = Features({"sentence": Value("string"), "tokens": Sequence(Value("string")),
                         "ner_tags": Sequence(ClassLabel(names=hf_names))})
    ds = Dataset.from_list(rows, features=features)
    DatasetDict({"train": ds, "validation": ds}).save_to_disk(str(tmp_path / "klue" / "ner"))
    hf = load_task_data(task, tmp_path / "klue", split="official")
    assert hf.source["format"] == "hf-datasets"
    assert [(e["text"], e["tags"]) for e in hf.eval] == [(e["text"], e["tags"]) for e in gold]
    assert hf.eval[0]["guid"] == "ner-hf-validation-00000"


# ---- features and predictions -----------------------------------------------------------------------------

def test_each_subword_takes_the_tag_of_its_first_character(task, gold, tokenizer):
    ex = gold[0]
    (feat,) = task.encode([ex], tokenizer, 128)
    tokens = tokenizer.convert_ids_to_tokens(feat["input_ids"])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert feat["labels"][0] == feat["labels"][-1] == IGNORE_INDEX  # special tokens are not trained
    for tok, label, span in zip(tokens[1:-1], feat["labels"][1:-1], feat["_spans"][1:-1], strict=True):
        c0, c1 = span
        assert ex["text"][c0:c1] == tok.removeprefix("##")  # the span is the subword's own characters
        assert label == ex["tags"][c0]
    assert " " not in "".join(ex["text"][s[0]:s[1]] for s in feat["_spans"] if s)  # spaces are never tokens


def test_a_word_with_unk_keeps_each_subwords_own_first_character(task):
    """Departure from KLUE-baseline: there every subword of a word holding an [UNK] takes the tag of the word's
    first character; with offsets, the subword `김민수` after `偉,` keeps its own B-PS."""
    tok = train_wordpiece(["김민수 씨 , 가 나 다"], vocab_size=60)
    text = "偉,김민수씨"
    tags = ["O", "O", "B-PS", "I-PS", "I-PS", "O"]
    (feat,) = task.encode([{"guid": "g", "text": text, "tags": [TAG[t] for t in tags]}], tok, 32)
    tokens = tok.convert_ids_to_tokens(feat["input_ids"])
    assert tokens[1] == "[UNK]" and feat["_spans"][1] == (0, 1)
    at_kim = next(j for j, s in enumerate(feat["_spans"]) if s and s[0] == 2)
    assert feat["labels"][at_kim] == TAG["B-PS"]


def test_predictions_go_back_to_characters():
    task = get_task("ner")
    text = "ab cd e"
    ex = {"guid": "g", "text": text, "tags": [TAG["O"]] * len(text)}
    # subwords: "ab" (B-PS), "c" (I-PS), "d" (O); "e" was cut by truncation; the row is padded with -100
    feat = {"example_index": 0, "_spans": [None, (0, 2), (3, 4), (4, 5), None]}
    row = [[TAG["O"], TAG["B-PS"], TAG["I-PS"], TAG["O"], TAG["O"], IGNORE_INDEX, IGNORE_INDEX]]
    (rec,) = task.predictions(row, [feat], [ex])
    # first character of a subword: its label; the rest: the matching I- label; the space between two
    # characters of one entity: I-PS; characters no subword covers: O
    assert rec == {"guid": "g", "tags": ["B-PS", "I-PS", "I-PS", "I-PS", "O", "O", "O"]}


def test_fill_spaces_follows_the_gold_convention():
    assert fill_spaces("a b", ["B-LC", "O", "I-LC"]) == ["B-LC", "I-LC", "I-LC"]
    assert fill_spaces("a b", ["B-LC", "O", "B-LC"]) == ["B-LC", "O", "B-LC"]  # a new entity starts after it
    assert fill_spaces("a b", ["B-LC", "O", "I-PS"]) == ["B-LC", "O", "I-PS"]  # another type
    assert fill_spaces(" a", ["I-PS", "B-PS"]) == ["O", "B-PS"]


# ---- scoring ----------------------------------------------------------------------------------------------

def _records(gold, tags_of) -> list[dict]:
    return [{"guid": g["guid"], "tags": tags_of(g)} for g in gold]


def test_perfect_and_all_o_predictions(gold, tmp_path):
    perfect = write_jsonl(tmp_path / "p.jsonl", _records(gold, lambda g: [NER_LABELS[t] for t in g["tags"]]))
    m = score_file("ner", GOLD, perfect)["metrics"]
    assert m == {"entity_macro_f1": pytest.approx(100.0), "character_macro_f1": pytest.approx(100.0),
                 "character_macro_f1_without_o": pytest.approx(100.0)}
    all_o = write_jsonl(tmp_path / "o.jsonl", _records(gold, lambda g: ["O"] * len(g["text"])))
    m = score_file("ner", GOLD, all_o)["metrics"]
    # spaces are not scored; over the other characters O has tp = #gold O, fp = #gold entity characters, and
    # every entity label (all 12 occur in the fixture) scores 0
    scored = [NER_LABELS[t] for g in gold for ch, t in zip(g["text"], g["tags"], strict=True) if ch != " "]
    assert set(scored) == set(NER_LABELS)
    n_o, n_ent = scored.count("O"), sum(t != "O" for t in scored)
    assert m["character_macro_f1"] == pytest.approx(2 * n_o / (2 * n_o + n_ent) / 13 * 100)
    assert m["character_macro_f1_without_o"] == 0.0 and m["entity_macro_f1"] == 0.0


def test_tags_on_spaces_are_not_scored(gold, tmp_path):
    def noisy(g):
        return [("B-QT" if ch == " " else NER_LABELS[t]) for ch, t in zip(g["text"], g["tags"], strict=True)]

    m = score_file("ner", GOLD, write_jsonl(tmp_path / "s.jsonl", _records(gold, noisy)))["metrics"]
    assert m["entity_macro_f1"] == pytest.approx(100.0) and m["character_macro_f1"] == pytest.approx(100.0)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: {**r, "tags": r["tags"][:-1]},
     r"p.jsonl:1: field 'tags' has 32 tags but sentence klue-ner-v1_dev_00000-synthetic has 33 characters"),
    (lambda r: {**r, "tags": ["B-XX", *r["tags"][1:]]}, r"p.jsonl:1: field 'tags'\[0\] = 'B-XX' is not a KLUE-NER tag"),
    (lambda r: {"guid": r["guid"]}, r"p.jsonl:1 \(guid klue-ner-v1_dev_00000-synthetic\): missing field 'tags'"),
    (lambda r: {**r, "tags": "B-PS I-PS"}, r"p.jsonl:1: field 'tags' should be list"),
])
def test_malformed_or_misaligned_records_name_file_line_and_field(gold, tmp_path, edit, message):
    recs = _records(gold, lambda g: [NER_LABELS[t] for t in g["tags"]])
    with pytest.raises(DataError, match=message):
        score_file("ner", GOLD, write_jsonl(tmp_path / "p.jsonl", [edit(recs[0]), *recs[1:]]))


def test_klue_score_ner_cli(gold, tmp_path):
    recs = _records(gold, lambda g: [NER_LABELS[t] for t in g["tags"]])
    res = CliRunner().invoke(score, ["ner", "--gold", str(GOLD), "--pred", str(write_jsonl(tmp_path / "p.jsonl", recs))])
    assert res.exit_code == 0, res.output
    assert "entity_macro_f1 100.00  character_macro_f1 100.00  character_macro_f1_without_o 100.00  n=60" in res.output
    bad = write_jsonl(tmp_path / "b.jsonl", [{**recs[0], "tags": recs[0]["tags"] + ["O"]}])
    res = CliRunner().invoke(score, ["ner", "--gold", str(GOLD), "--pred", str(bad)])
    assert res.exit_code != 0 and "b.jsonl:1: field 'tags' has 34 tags" in res.output


# ---- training ---------------------------------------------------------------------------------------------

# a small vocabulary keeps subwords near single syllables, so entity ends fall on subword boundaries
tiny = tiny_fixture("ner", vocab_size=200)


def test_finetune_ner_trains_evaluates_and_scores(tiny, tmp_path):
    args = ["ner", "--model", str(tiny), "--data-dir", str(FX), "--max-steps", "60", "--epochs", "20",
            "--batch-size", "8", "--lr", "3e-3", "--no-save-model",
            "--hp", "ner.patience=null"]  # the whole 60 steps: the all-O start outlasts NER's patience of 5 checks
    run_finetune([*args, "--output", str(tmp_path / "a")])
    summary = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert summary["data"]["split"] == "dev-split" and summary["main_metric"] == "character_macro_f1"
    assert summary["hyperparams"]["max_length"] == 510 and summary["hyperparams"]["warmup_ratio"] == 0.0
    run = json.loads((tmp_path / "a" / "seed-42" / "metrics.json").read_text())
    preds = tmp_path / "a" / "seed-42" / "predictions.jsonl"
    scored = score_file("ner", GOLD, preds, allow_subset=True)
    assert scored["n_scored"] == summary["data"]["n_eval"]
    for key in ("entity_macro_f1", "character_macro_f1", "character_macro_f1_without_o"):
        assert scored["metrics"][key] == pytest.approx(run["metrics"][key], abs=1e-6)
    # 60 steps on template sentences find most entities (all-O predictions score entity F1 0)
    assert run["metrics"]["entity_macro_f1"] > 60 and run["metrics"]["character_macro_f1"] > 85
    # evaluation in batches of 3 sentences padded to different lengths gives the same predictions
    run_finetune([*args, "--output", str(tmp_path / "b"), "--hp", "ner.eval_batch_size=3"])
    assert (tmp_path / "b" / "seed-42" / "predictions.jsonl").read_bytes() == preds.read_bytes()


@pytest.mark.shared_data
def test_ner_on_the_shared_dev_file(shared_data, tmp_path):
    klue = shared_data / "klue"
    dev = klue / "ner" / "klue-ner-v1.1_dev.tsv"
    texts = [e["text"] for e in get_task("ner").read_file(dev)[:3000]]
    run, scored = shared_data_run("ner", klue, dev, texts, tmp_path / "ner", steps=8, n_train=256, n_eval=128,
                                  batch=16)
    assert run["unk_rate"] < 0.05 and set(scored["metrics"]) == set(run["metrics"])
