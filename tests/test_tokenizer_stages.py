"""The pretokenize and vocab stages, run by hand (no runner): outputs, funnel, meta, worker independence."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs
from pipeline.stage import StageContext, StageInput
from tokenizer.mecab import restore
from tokenizer.stages import PretokenizeParams, PretokenizeStage, VocabParams, VocabStage

PLACEHOLDERS = ["[PHONE]", "[PERSON]", "[EMAIL]"]
RECIPE = types.SimpleNamespace(seed=42, sources=[])


@pytest.fixture(scope="module")
def pii_dir(fixtures_dir, tmp_path_factory) -> Path:
    """Two doc shards, as the pii stage would leave them (every line of the fixture is a document)."""
    d = tmp_path_factory.mktemp("pii")
    lines = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8").splitlines()
    docs = [Doc(doc_id("fx", "corpus.txt", i), t, "fx" if i % 3 else "other", meta_json({"line": i + 1}))
            for i, t in enumerate(lines * 5)]
    docs.append(Doc(doc_id("fx", "x", 0), "", "fx", "{}"))  # empty documents are kept, as empty
    write_docs(d / "shard-00000.parquet", docs[:60])
    write_docs(d / "shard-00001.parquet", docs[60:])
    return d


def _pretokenize(pii_dir: Path, out: Path, analyzer: str, workers: int):
    out.mkdir()
    ctx = StageContext(out_dir=out, params=PretokenizeParams(analyzer=analyzer),
                       inputs={"pii": StageInput("pii", pii_dir, {"meta": {"placeholder_tokens": PLACEHOLDERS}})},
                       recipe=RECIPE, workers=workers)
    return PretokenizeStage().run(ctx)


@pytest.fixture(scope="module")
def pretokenized(pii_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("pre")
    return {a: (base / a, _pretokenize(pii_dir, base / a, a, workers=1)) for a in ("mecab", "none")}


def test_pretokenize_output_and_funnel(pii_dir, pretokenized):
    out, res = pretokenized["mecab"]
    assert not res.funnel.problems()
    n_in = sum(1 for p in list_shards(pii_dir) for _ in iter_docs(p))
    assert res.funnel.docs_in == res.funnel.docs_kept == n_in
    assert res.by_source["fx"].docs_kept + res.by_source["other"].docs_kept == n_in
    assert [p.name for p in list_shards(out)] == ["shard-00000.parquet", "shard-00001.parquet"]
    src = [d for p in list_shards(pii_dir) for d in iter_docs(p)]
    got = [d for p in list_shards(out) for d in iter_docs(p)]
    assert [(d.id, d.source, d.meta) for d in got] == [(d.id, d.source, d.meta) for d in src]
    assert all(restore(g.text) == s.text for g, s in zip(got, src, strict=True))
    assert "아버지 가방 ##에 들어가 ##신다 @@." in {g.text for g in got}
    assert res.meta["analyzer"] == "mecab" and res.meta["placeholder_tokens"] == PLACEHOLDERS


def test_pretokenize_does_not_depend_on_workers(pii_dir, pretokenized, tmp_path):
    _pretokenize(pii_dir, tmp_path / "w2", "mecab", workers=2)
    for p in list_shards(pretokenized["mecab"][0]):
        assert (tmp_path / "w2" / p.name).read_bytes() == p.read_bytes()


def _vocab(pretokenized, analyzer: str, out: Path, fixtures_dir: Path, **params):
    out.mkdir()
    pre_dir, pre_res = pretokenized[analyzer]
    texts = [str(fixtures_dir / "tokenizer" / "nli_dev.json"), str(fixtures_dir / "tokenizer" / "ner_dev.tsv")]
    ctx = StageContext(
        out_dir=out, params=VocabParams(vocab_size=700, min_frequency=2, report_texts=texts, **params),
        inputs={"pretokenize": StageInput("pretokenize", pre_dir, {"meta": pre_res.meta}),
                "pii": StageInput("pii", pre_dir, {"meta": {"placeholder_tokens": PLACEHOLDERS}})},
        recipe=RECIPE)
    return VocabStage().run(ctx)


def test_vocab_stage_exports_tokenizer_and_report(pretokenized, fixtures_dir, tmp_path):
    from transformers import AutoTokenizer

    res = {a: _vocab(pretokenized, a, tmp_path / a, fixtures_dir) for a in ("mecab", "none")}
    for a, r in res.items():
        m = r.meta
        assert m["tokenizer_dir"] == "tokenizer" and m["algorithm"] == "wordpiece" and m["analyzer"] == a
        assert m["special_tokens"] == {"[CLS]": 0, "[PAD]": 1, "[SEP]": 2, "[UNK]": 3, "[MASK]": 4,
                                       "[PHONE]": 5, "[PERSON]": 6, "[EMAIL]": 7}
        tok = AutoTokenizer.from_pretrained(tmp_path / a / "tokenizer")
        assert len(tok) == m["vocab_size"] <= 700
        assert tok.convert_tokens_to_ids("[PHONE]") == 5
        rep = json.loads((tmp_path / a / "fidelity.json").read_text(encoding="utf-8"))
        assert rep["n_texts"] == 6
        assert set(m["report"]) >= {"morpheme_aligned", "tokens_per_eojeol", "unk_rate", "vocab_coverage"}
        assert (tmp_path / a / "fidelity.md").read_text(encoding="utf-8").startswith("Fidelity on 6 texts")
    # Same algorithm, different training units: the two arms learn different vocabularies.
    vocab = {a: json.loads((tmp_path / a / "tokenizer" / "tokenizer.json").read_text())["model"]["vocab"]
             for a in res}
    assert "##에서" in vocab["mecab"] and set(vocab["mecab"]) != set(vocab["none"])
    # The stage took its alphabet from pretokenize's per-shard character counts; counting again from the
    # unit shards (no sidecars) must give the very same vocabulary.
    from tokenizer.train import iter_texts, train_vocab

    shards = list_shards(pretokenized["mecab"][0])
    assert all(p.with_name(p.name.replace(".parquet", ".chars.json")).is_file() for p in shards)
    recount = train_vocab(lambda: iter_texts(shards), vocab_size=700, min_frequency=2, placeholders=PLACEHOLDERS)
    assert recount.vocab == vocab["mecab"]


def test_vocab_stage_rejects_undeclared_placeholders(pretokenized, fixtures_dir, tmp_path):
    pre_dir, pre_res = pretokenized["mecab"]
    ctx = StageContext(out_dir=tmp_path, params=VocabParams(vocab_size=100),
                       inputs={"pretokenize": StageInput("pretokenize", pre_dir, {"meta": pre_res.meta}),
                               "pii": StageInput("pii", pre_dir, {"meta": {}})}, recipe=RECIPE)
    with pytest.raises(ValueError, match=r"\[EMAIL\].*\[PERSON\].*\[PHONE\]"):
        VocabStage().run(ctx)
