"""The pretokenize and vocab stages, run by hand (no runner): outputs, funnel, meta, worker independence."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs
from pipeline.stage import StageContext, StageInput
from tokenizer.mecab import restore
from tokenizer.stages.pretokenize import PretokenizeParams, PretokenizeStage
from tokenizer.stages.vocab import VocabParams, VocabStage

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
    ctx = StageContext(out_dir=out, params=PretokenizeParams(language="ko", analyzer=analyzer),
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


def test_unit_shards_are_what_write_docs_writes(pretokenized, tmp_path):
    """The stage writes unit shards from Arrow columns; they must be the shards the contract's writer gives."""
    for analyzer in ("mecab", "none"):
        for p in list_shards(pretokenized[analyzer][0]):
            write_docs(tmp_path / p.name, iter_docs(p))
            assert (tmp_path / p.name).read_bytes() == p.read_bytes()


def test_mecab_failures_are_quarantined_and_the_rest_written_whole(fixtures_dir, tmp_path, monkeypatch):
    """Documents MeCab cannot reproduce go to quarantine; the kept ones still make full row groups, exactly
    as write_docs would write them, and the character counts cover exactly the kept ones."""
    import pyarrow.parquet as pq

    import tokenizer.mecab as m
    from tokenizer.train import CharStats, reserved_tokens, training_text

    real = m.MecabAnalyzer.surfaces

    def failing(self, eojeol):  # the real analyzer, made to fail on one word
        if "고장" in eojeol:
            raise m.MecabError(f"simulated: MeCab output does not reproduce {eojeol!r}")
        return real(self, eojeol)

    monkeypatch.setattr(m.MecabAnalyzer, "surfaces", failing)
    lines = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8").splitlines()
    docs = [Doc(doc_id("fx", "q", i), lines[i % len(lines)] + (" 고장났다" if i % 7 == 3 else ""),
                "a" if i % 2 else "b", meta_json({"i": i})) for i in range(9000)]
    pii = tmp_path / "pii"
    write_docs(pii / "shard-00000.parquet", docs)
    write_docs(pii / "shard-00001.parquet", [Doc(doc_id("fx", "all-bad", 0), "모두 고장", "a", "{}")])
    res = _pretokenize(pii, tmp_path / "out", "mecab", workers=1)

    bad = [d for d in docs if "고장" in d.text]
    assert not res.funnel.problems()
    assert res.funnel.quarantined == len(bad) + 1 and res.funnel.docs_kept == len(docs) - len(bad)
    assert res.by_source["a"].quarantined + res.by_source["b"].quarantined == len(bad) + 1
    assert res.funnel.chars_quarantined == sum(len(d.text) for d in bad) + len("모두 고장")
    recs = [json.loads(ln) for ln in
            (tmp_path / "out" / "quarantine" / "pretokenize.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["location"] for r in recs] == [d.id for d in bad] + [doc_id("fx", "all-bad", 0)]
    assert {r["reason"] for r in recs} == {"mecab_failed"} and "고장났다" in recs[0]["detail"]
    assert recs[0]["file"] == "shard-00000.parquet" and recs[-1]["file"] == "shard-00001.parquet"

    out = tmp_path / "out" / "shard-00000.parquet"
    kept = list(iter_docs(out))
    bad_ids = {d.id for d in bad}
    assert [(d.id, d.source, d.meta) for d in kept] == [(d.id, d.source, d.meta) for d in docs if d.id not in bad_ids]
    assert pq.ParquetFile(out).metadata.num_row_groups == -(-len(kept) // 4096)
    write_docs(tmp_path / "ref.parquet", kept)
    assert (tmp_path / "ref.parquet").read_bytes() == out.read_bytes()
    write_docs(tmp_path / "empty.parquet", [])  # the all-quarantined shard is an empty shard, not a missing one
    assert (tmp_path / "empty.parquet").read_bytes() == (tmp_path / "out" / "shard-00001.parquet").read_bytes()
    expected = CharStats.of(training_text(d.text, reserved_tokens(PLACEHOLDERS)) for d in kept).to_json()
    assert json.loads((tmp_path / "out" / "shard-00000.chars.json").read_text(encoding="utf-8")) == expected


def _vocab(pretokenized, analyzer: str, out: Path, fixtures_dir: Path, **params):
    out.mkdir()
    pre_dir, pre_res = pretokenized[analyzer]
    texts = [str(fixtures_dir / "tokenizer" / "nli_dev.json"), str(fixtures_dir / "tokenizer" / "ner_dev.tsv")]
    ctx = StageContext(
        out_dir=out, params=VocabParams(vocab_size=700, min_frequency=2, report_texts=texts, **{"language": "ko", **params}),
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
    ctx = StageContext(out_dir=tmp_path, params=VocabParams(language="ko", vocab_size=100),
                       inputs={"pretokenize": StageInput("pretokenize", pre_dir, {"meta": pre_res.meta}),
                               "pii": StageInput("pii", pre_dir, {"meta": {}})}, recipe=RECIPE)
    with pytest.raises(ValueError, match=r"\[EMAIL\].*\[PERSON\].*\[PHONE\]"):
        VocabStage().run(ctx)
