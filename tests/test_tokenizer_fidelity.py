"""The fidelity report on a hand-made vocabulary, with every number computed by hand; the text readers."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tokenizer.export import export_tokenizer
from tokenizer.fidelity import evaluate, read_texts, to_markdown
from tokenizer.train import SPECIAL_TOKENS, TrainedVocab

LEARNED = ["아버지", "##가", "가", "##방", "##에", "학교", "##에서", ".", "책", "##을"]


@pytest.fixture(scope="module")
def hand_tokenizer(tmp_path_factory):
    d = tmp_path_factory.mktemp("hand")
    export_tokenizer(TrainedVocab("wordpiece", SPECIAL_TOKENS + LEARNED, None, len(SPECIAL_TOKENS)), d)
    return d


def test_numbers_by_hand(hand_tokenizer):
    # eojeol     tokens                 token starts  MeCab unit starts    aligned
    # 아버지가    아버지 ##가             {3}           {3} 아버지/가          yes
    # 가방에      가 ##방 ##에            {1, 2}        {2} 가방/에            no
    # 학교에서    학교 ##에서             {2}           {2} 학교/에서          yes
    # 놀았다.     [UNK] .                {3}           {1, 2, 3} 놀/았/다/.   yes
    # 15 characters, 9 tokens, 1 [UNK]; learned tokens used: 8 of 10 (책, ##을 unused)
    m = evaluate(hand_tokenizer, ["아버지가 가방에", "학교에서 놀았다."], language="ko")
    assert m["counts"] == dict(eojeols=4, chars=15, tokens=9, unk=1, eojeols_unk=1, aligned=3)
    assert m["morpheme_aligned"] == pytest.approx(3 / 4)
    assert m["tokens_per_eojeol"] == pytest.approx(9 / 4)
    assert m["tokens_per_char"] == pytest.approx(9 / 15)
    assert m["unk_rate"] == pytest.approx(1 / 9)
    assert m["eojeols_with_unk"] == pytest.approx(1 / 4)
    assert m["vocab_coverage"] == pytest.approx(8 / 10)


def test_readers(fixtures_dir, tmp_path):
    fx = fixtures_dir / "tokenizer"
    assert read_texts(fx / "nli_dev.json") == ["아버지가 가방에 들어가신다.", "학교에서 공부한다.",
                                               "우리는 도서관에서 책을 읽었다.", "책을 읽었다."]
    assert read_texts(fx / "ner_dev.tsv") == ["아버지가 서울에 갔다.", "학교에서 공부한다."]
    assert read_texts(fx / "corpus.txt", limit=2) == ["아버지가 방에 들어가신다.", "아버지 가방에 들어가신다."]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"guid": 1, "label": 0}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: JSON records with keys \['guid', 'label'\] match no known benchmark"):
        read_texts(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"premise": "x"},\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: not valid JSON \(line 2: Expecting value\)"):
        read_texts(broken)


def test_cli_side_by_side(hand_tokenizer, fixtures_dir, tmp_path):
    from pipeline.cli import main

    texts = fixtures_dir / "tokenizer" / "nli_dev.json"
    args = ["tokenizer-report", str(hand_tokenizer), str(hand_tokenizer), "--label", "a", "--label", "b",
            "--texts", str(texts)]
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["n_texts"] == 4 and set(rep["tokenizers"]) == {"a", "b"}
    assert rep["tokenizers"]["a"] == rep["tokenizers"]["b"]
    assert rep["tokenizers"]["a"] == evaluate(hand_tokenizer, read_texts(texts), language="ko")
    md = CliRunner().invoke(main, args)
    assert md.exit_code == 0 and md.output == to_markdown(rep)
    bad = CliRunner().invoke(main, ["tokenizer-report", str(tmp_path), "--texts", str(texts)])
    assert bad.exit_code != 0 and "no tokenizer_config.json" in bad.output
