"""Scoring logic on hand-made cases, and (with the shared data) the quality bars of issue 3."""

from __future__ import annotations

import pytest

from corpora.pii.engine import STRUCTURED_TYPES
from corpora.pii.evaluate import evaluate_file, klue_sentences, read_gold, score, structured_false_positives


def test_score_overlap_matching_one_to_one():
    gold = [[(0, 5, "PHONE"), (10, 13, "PERSON"), (20, 25, "AGE")]]
    pred = [[(1, 5, "PHONE"), (0, 2, "PHONE"), (10, 13, "EMAIL")]]
    r = score(gold, pred)
    assert r["per_type"]["PHONE"] == {"precision": 0.5, "recall": 1.0, "f1": 0.6667, "support": 1, "predicted": 2,
                                      "tp": 1, "exact": 0, "targeted": True}
    assert r["per_type"]["PERSON"]["recall"] == 0.0 and r["per_type"]["EMAIL"]["precision"] == 0.0
    assert r["untargeted_gold"] == {"AGE": 1}
    assert r["overall"]["support"] == 2 and r["overall"]["predicted"] == 3  # AGE left out


def test_read_gold_names_bad_records(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text('{"text": "abc", "spans": [{"label": "X", "start": 1, "end": 9}]}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"g.jsonl:1: span 1-9"):
        read_gold(p)


@pytest.mark.shared_data
def test_quality_on_dev_set(shared_data):
    r = evaluate_file(shared_data / "pii" / "ko_pii_eval_corpus.jsonl")
    per = r["per_type"]
    for t in STRUCTURED_TYPES:
        assert per[t]["recall"] >= 0.97 or per[t]["support"] < 10 and per[t]["recall"] >= 0.9, (t, per[t])
    assert r["structured"]["recall"] >= 0.97
    assert per["PERSON"]["recall"] >= 0.90 and per["ADDRESS"]["recall"] >= 0.85
    assert r["overall"]["precision"] >= 0.90


@pytest.mark.shared_data
def test_structured_false_positives_on_klue(shared_data):
    sents = klue_sentences(shared_data)
    sample = sents["ner"][:2000] + sents["nli"][:2000]
    r = structured_false_positives(sample)
    assert r["rate"] <= 0.005, r["examples"]
