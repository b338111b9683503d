"""KLUE-DP: the official TSV reader, eojeol features, the biaffine parser (masking, safetensors round trip),
`klue score dp` and `klue finetune dp` with a tiny model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from finetune.cli import score
from finetune.data import load_task_data
from finetune.registry import get_task
from finetune.score import score_file
from finetune.tasks.base import IGNORE_INDEX, DataError
from finetune.tasks.dp import DEP_LABELS, POS_LABELS
from testkit.finetune import FX, fixture_texts, run_finetune, shared_data_run, write_jsonl
from testkit.finetune_fixtures import task_fixtures, tiny_fixture, tiny_tokenizer_fixture
from testkit.tiny_model import train_wordpiece

GOLD = FX / "dp" / "klue-dp-v1.1_dev.tsv"


task, gold = task_fixtures("dp", GOLD)
tiny = tiny_fixture("dp")
tokenizer = tiny_tokenizer_fixture()


# ---- reading ----------------------------------------------------------------------------------------------

def test_reader_takes_the_last_pos_tag_and_official_label_ids(gold):
    assert len(gold) == 60
    ex = gold[0]
    assert ex["guid"] == "klue-dp-v1_dev_00000_synthetic"
    assert ex["words"] == GOLD.read_text(encoding="utf-8").splitlines()[5].split("\t")[1].split(" ")
    # POS "NNP+JX" -> JX, "VV+EP+EF+SF" -> SF; DEPREL ids in KLUE-baseline's get_dep_labels order
    assert [POS_LABELS[p] for p in ex["pos"]] == ["JX", "JKB", "JKO", "SF"]
    assert ex["heads"] == [4, 4, 4, 0]
    assert [DEP_LABELS[d] for d in ex["deprels"]] == ["NP_SBJ", "NP_AJT", "NP_OBJ", "VP"]
    assert len(DEP_LABELS) == 38 and DEP_LABELS[15] == "VP_CMP" and len(POS_LABELS) == 45


ROW2 = "2\tB\tb\tNNG\t0\tVP\n"


@pytest.mark.parametrize(("body", "message"), [
    ("## g\tA B\n1\tA\ta\tNNG\t3\tNP\n" + ROW2, r"bad.tsv:2: field HEAD is '3', expected an eojeol index in 0..2"),
    ("## g\tA B\n1\tA\ta\tNNG\tx\tNP\n" + ROW2, r"bad.tsv:2: field HEAD is 'x'"),
    ("## g\tA B\n1\tA\ta\tNNG\t2\tNP\n3\tB\tb\tNNG\t0\tVP\n", r"bad.tsv:3: field INDEX is '3', expected 2"),
    ("## g\tA B\n1\tA\ta\tNNG\t2\tNP_XX\n" + ROW2, r"bad.tsv:2: field DEPREL has unknown label 'NP_XX'"),
    ("## g\tA B\n1\tA\ta\tNNG+QQ\t2\tNP\n" + ROW2, r"bad.tsv:2: field POS 'NNG\+QQ': its last tag 'QQ' is not"),
    ("## g\tA B\n1\tA\ta\tNNG\t2\n" + ROW2, r"bad.tsv:2: expected 6 tab-separated fields, got 5"),
])
def test_malformed_tsv_names_the_line_and_the_field(task, tmp_path, body, message):
    bad = tmp_path / "bad.tsv"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        task.read_file(bad)


def test_hf_copy_gives_the_same_examples(task, gold, tmp_path):
    from datasets import Dataset, DatasetDict, Features, Sequence, Value

    rows = []
    for e in gold:
        n = len(e["words"])
        rows.append({"sentence": " ".join(e["words"]), "index": list(range(1, n + 1)), "word_form": e["words"],
                     "lemma": e["words"], "pos": [POS_LABELS[p] for p in e["pos"]], "head": e["heads"],
                     "deprel": [DEP_LABELS[d] for d in e["deprels"]]})
    features = Features({"sentence": Value("string"), "index": Sequence(Value("int32")),
                         "word_form": Sequence(Value("string")), "lemma": Sequence(Value("string")),
                         "pos": Sequence(Value("string")), "head": Sequence(Value("int32")),
                         "deprel": Sequence(Value("string"))})
    ds = Dataset.from_list(rows, features=features)
    DatasetDict({"train": ds, "validation": ds}).save_to_disk(str(tmp_path / "klue" / "dp"))
    hf = load_task_data(task, tmp_path / "klue", split="official")
    assert [{k: v for k, v in e.items() if k != "guid"} for e in hf.eval] == \
           [{k: v for k, v in e.items() if k != "guid"} for e in gold]
    assert hf.eval[0]["guid"] == "dp-hf-validation-00000"
    assert load_task_data(task, FX).source["split"] == "dev-split"  # the fixture, like the shared data: dev only


# ---- features ---------------------------------------------------------------------------------------------

def test_features_point_at_the_first_and_last_subword_of_each_eojeol(task, gold, tokenizer):
    for ex in gold[:5]:
        (f,) = task.encode([ex], tokenizer, 128)
        tokens = tokenizer.convert_ids_to_tokens(f["input_ids"])
        assert len(f["word_first"]) == len(ex["words"])
        for word, a, b in zip(ex["words"], f["word_first"], f["word_last"], strict=True):
            assert "".join(t.removeprefix("##") for t in tokens[a:b + 1]) == word
        assert f["heads"] == ex["heads"] and f["pos_ids"] == ex["pos"] and f["deprels"] == ex["deprels"]


def test_truncation_drops_eojeols_and_heads_that_point_at_them(task, tokenizer):
    ex = {"guid": "g", "words": ["가방을", "정하나는", "샀다."], "pos": [20, 24, 35], "heads": [3, 3, 0],
          "deprels": [5, 3, 2]}
    full = task.encode([ex], tokenizer, 64)[0]
    cut = len(full["input_ids"]) - 1 - (full["word_last"][2] - full["word_first"][2] + 1)  # no room for word 3
    (f,) = task.encode([ex], tokenizer, cut + 1)
    assert len(f["word_first"]) == 2
    assert f["heads"] == [IGNORE_INDEX, IGNORE_INDEX]  # both heads were the cut-off eojeol
    out = np.array([[[0, 1], [1, 3]]])
    (rec,) = task.predictions(out, [f], [ex])
    assert rec == {"guid": "g", "heads": [0, 1, 0], "deprels": ["NP_AJT", "NP_SBJ", "NP"]}  # cut eojeol: 0, NP


def test_an_eojeol_without_subwords_becomes_unk(task, tokenizer):
    from tokenizers import normalizers

    tok = train_wordpiece(fixture_texts())
    tok.backend_tokenizer.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace("§", "")])
    ex = {"guid": "g", "words": ["가방을", "§", "샀다."], "pos": [20, 42, 35], "heads": [3, 3, 0],
          "deprels": [5, 3, 2]}
    (f,) = task.encode([ex], tok, 64)
    tokens = tok.convert_ids_to_tokens(f["input_ids"])
    assert len(f["word_first"]) == 3 and tokens[f["word_first"][1]] == "[UNK]"


# ---- the parser -------------------------------------------------------------------------------------------

def _batch(task, tokenizer, examples):
    feats = task.encode(examples, tokenizer, 128)
    return task.collator(tokenizer)([{k: v for k, v in f.items() if k != "example_index"} for f in feats])


def test_collator_pads_word_fields(task, gold, tokenizer):
    b = _batch(task, tokenizer, [gold[0], gold[3]])  # 4 and 5 eojeols
    assert b["word_mask"].tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    assert b["heads"][0, 4].item() == IGNORE_INDEX and b["pos_ids"][0, 4].item() == len(POS_LABELS)
    assert b["input_ids"].shape[0] == 2 and (b["attention_mask"][0] == 0).sum() > 0


def test_label_scorer_is_the_baselines_bilinear_form():
    """`Bilinear` computes F.bilinear(l, r, U, bias) + W_l l + W_r r (KLUE-baseline's `BiLinear`) by matrix products."""
    import torch
    import torch.nn.functional as F

    from finetune.dp_model import Bilinear

    torch.manual_seed(0)
    m = Bilinear(6, 6, 4)
    torch.nn.init.normal_(m.bias)
    left, right = torch.randn(2, 3, 6), torch.randn(2, 3, 6)
    lf, rf = left.reshape(-1, 6), right.reshape(-1, 6)
    expected = F.bilinear(lf, rf, m.U, m.bias) + F.linear(lf, m.W_l) + F.linear(rf, m.W_r)
    assert torch.allclose(m(left, right), expected.reshape(2, 3, 4), atol=1e-5)


def test_parser_loss_predictions_masking_and_safetensors_round_trip(task, gold, tiny, tokenizer, tmp_path):
    import torch

    from finetune.dp_model import DependencyParser

    torch.manual_seed(0)
    model = task.build_model(tiny, tokenizer, random_init=False)
    batch = _batch(task, tokenizer, [gold[0], gold[3], gold[2]])
    model.train()
    out = model(**batch)
    assert torch.isfinite(out.loss) and out.pred_heads is None
    out.loss.backward()
    assert model.arc_scorer.U.grad is not None and model.encoder.get_input_embeddings().weight.grad is not None

    model.eval()
    with torch.no_grad():
        model.arc_scorer.b.fill_(-1e4)  # every real arc score negative: padding (masked) must still never win
        out = model(**batch)
    lengths = batch["word_mask"].sum(1).tolist()
    for row, n in zip(out.pred_heads.tolist(), lengths, strict=True):
        assert all(0 <= h <= n for h in row[:n]) and all(h == IGNORE_INDEX for h in row[n:])
    assert out.arc_scores.shape == (3, 5, 6)

    model.save_pretrained(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["config.json", "model.safetensors", "parser.json"]
    meta = json.loads((tmp_path / "m" / "parser.json").read_text())
    assert meta["format"] == "klue-pipeline/dependency-parser" and meta["labels"] == DEP_LABELS
    from safetensors import safe_open

    with safe_open(str(tmp_path / "m" / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert any(k.startswith("encoder.") for k in keys) and "arc_scorer.U" in keys and "label_scorer.U" in keys
    loaded = DependencyParser.from_pretrained(tmp_path / "m").eval()
    with torch.no_grad():
        again = loaded(**batch)
    assert torch.equal(again.pred_heads, out.pred_heads) and torch.allclose(again.arc_scores, out.arc_scores)
    with pytest.raises(ValueError, match="safetensors only"):
        model.save_pretrained(tmp_path / "p", safe_serialization=False)


# ---- scoring ----------------------------------------------------------------------------------------------

def _perfect(gold) -> list[dict]:
    return [{"guid": g["guid"], "heads": g["heads"], "deprels": [DEP_LABELS[d] for d in g["deprels"]]} for g in gold]


def test_perfect_and_all_root_predictions(gold, tmp_path):
    m = score_file("dp", GOLD, write_jsonl(tmp_path / "p.jsonl", _perfect(gold)))["metrics"]
    assert all(v == pytest.approx(100.0) for v in m.values()) and len(m) == 4
    roots = [{"guid": g["guid"], "heads": [0] * len(g["heads"]), "deprels": ["VP"] * len(g["heads"])} for g in gold]
    m = score_file("dp", GOLD, write_jsonl(tmp_path / "r.jsonl", roots))["metrics"]
    n_words = sum(len(g["heads"]) for g in gold)
    assert m["uas_micro_f1"] == pytest.approx(100 * len(gold) / n_words)  # one ROOT per sentence
    assert m["las_micro_f1"] == pytest.approx(100 * len(gold) / n_words)  # the ROOT words are all VP


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: {**r, "heads": r["heads"][:-1], "deprels": r["deprels"][:-1]},
     r"p.jsonl:1: field 'heads' has 3 entries but sentence klue-dp-v1_dev_00000_synthetic has 4 eojeols"),
    (lambda r: {**r, "heads": [9, *r["heads"][1:]]},
     r"p.jsonl:1: field 'heads'\[0\] = 9 is out of range: sentence klue-dp-v1_dev_00000_synthetic has 4 eojeols"),
    (lambda r: {**r, "heads": [-1, *r["heads"][1:]]}, r"p.jsonl:1: field 'heads'\[0\] = -1 should be an eojeol"),
    (lambda r: {**r, "heads": [True, *r["heads"][1:]]}, r"p.jsonl:1: field 'heads'\[0\] = True should be"),
    (lambda r: {**r, "deprels": ["NP_XX", *r["deprels"][1:]]}, r"p.jsonl:1: field 'deprels'\[0\] = 'NP_XX' is not"),
    (lambda r: {**r, "deprels": r["deprels"][:-1]}, r"p.jsonl:1: fields 'heads' \(4\) and 'deprels' \(3\) differ"),
    (lambda r: {"guid": r["guid"], "heads": r["heads"]}, r"p.jsonl:1 \(guid .*\): missing field 'deprels'"),
])
def test_malformed_or_misaligned_records_name_file_line_and_field(gold, tmp_path, edit, message):
    recs = _perfect(gold)
    with pytest.raises(DataError, match=message):
        score_file("dp", GOLD, write_jsonl(tmp_path / "p.jsonl", [edit(recs[0]), *recs[1:]]))


def test_klue_score_dp_cli(gold, tmp_path):
    res = CliRunner().invoke(score, ["dp", "--gold", str(GOLD), "--pred", str(write_jsonl(tmp_path / "p.jsonl",
                                                                                           _perfect(gold))),
                                     "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["metrics"]["las_macro_f1"] == pytest.approx(100.0)


# ---- training ---------------------------------------------------------------------------------------------

def test_finetune_dp_trains_saves_and_reloads(task, tiny, tmp_path):
    import torch
    from transformers import AutoTokenizer

    from finetune.data import load_task_data
    from finetune.dp_model import DependencyParser

    args = ["dp", "--model", str(tiny), "--data-dir", str(FX), "--max-steps", "30", "--batch-size", "8",
            "--lr", "1e-3"]
    run_finetune([*args, "--output", str(tmp_path / "a")])
    summary = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert summary["main_metric"] == "las_macro_f1" and summary["data"]["split"] == "dev-split"
    assert summary["hyperparams"]["epochs"] == 10 and summary["hyperparams"]["max_length"] == 256
    run = json.loads((tmp_path / "a" / "seed-42" / "metrics.json").read_text())
    preds = tmp_path / "a" / "seed-42" / "predictions.jsonl"
    scored = score_file("dp", GOLD, preds, allow_subset=True)
    for key in task.metric_names:
        assert scored["metrics"][key] == pytest.approx(run["metrics"][key], abs=1e-6)
    # five fixed sentence shapes: 30 steps put most heads right (27 of the 33 words, 81.8, with the fixture's
    # tokenizer; all-ROOT predictions score about 24). The bound leaves two words for another CPU's rounding.
    assert run["metrics"]["uas_micro_f1"] > 75 and run["metrics"]["las_micro_f1"] > 75

    # the saved checkpoint is safetensors + JSON only, and predicts exactly what the run reported
    saved = tmp_path / "a" / "seed-42" / "model"
    assert not list(saved.glob("*.bin")) and not list(saved.glob("*.pt"))
    model = DependencyParser.from_pretrained(saved).eval()
    tok = AutoTokenizer.from_pretrained(saved)
    evals = load_task_data(task, FX).eval
    feats = task.encode(evals, tok, 256)
    batch = task.collator(tok)([{k: v for k, v in f.items() if k != "example_index"} for f in feats])
    with torch.no_grad():
        outputs = task.eval_outputs(model, batch).numpy()
    assert task.predictions(outputs, feats, evals) == [json.loads(x) for x in preds.read_text().splitlines()]

    # evaluation in batches of 3 sentences of different lengths gives the same predictions
    run_finetune([*args, "--output", str(tmp_path / "b"), "--no-save-model", "--hp", "dp.eval_batch_size=3"])
    assert (tmp_path / "b" / "seed-42" / "predictions.jsonl").read_bytes() == preds.read_bytes()


@pytest.mark.shared_data
def test_dp_on_the_shared_dev_file(shared_data, tmp_path):
    klue = shared_data / "klue"
    dev = klue / "dp" / "klue-dp-v1.1_dev.tsv"
    texts = [" ".join(e["words"]) for e in get_task("dp").read_file(dev)]
    run, scored = shared_data_run("dp", klue, dev, texts, tmp_path / "dp", steps=8, n_train=256, n_eval=128,
                                  batch=16)
    assert run["unk_rate"] < 0.05 and set(scored["metrics"]) == set(run["metrics"])
