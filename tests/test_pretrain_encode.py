"""Encode + packing: every token of the corpus lands in exactly one training or held-out sample."""

from __future__ import annotations

import filecmp
import json

import numpy as np
import pytest

from corpora.shards import iter_docs, list_shards
from pretrain.data import PackedSamples, SpecialIds, TokenStream
from pretrain.encode import EMPTY_REASON, is_held_out, load_tokenizer
from testkit.pretrain import encode_fixture, fixture_lines


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("enc")
    enc, vocab, result = encode_fixture(root, n_shards=3, repeat=2, eval_fraction=0.2,
                                        extra_docs=["   ", "마지막 문서입니다."])
    return root, enc, vocab, result


def _expected_streams(root, vocab):
    """Per split: each document's tokens + [SEP], in shard order, computed straight from the tokenizer."""
    tok = load_tokenizer(vocab / "tok")
    out = {"train": [], "eval": []}
    for shard in list_shards(root / "docs"):
        for d in iter_docs(shard):
            ids = tok(d.text, add_special_tokens=False)["input_ids"]
            if ids:
                split = "eval" if is_held_out(d.id, 7, 0.2) else "train"
                out[split].extend([*ids, tok.sep_token_id])
    return tok, out


def test_packing_loses_and_duplicates_no_token(encoded):
    root, enc, vocab, _ = encoded
    tok, expected = _expected_streams(root, vocab)
    special = SpecialIds.from_tokenizer(tok)
    for split in ("train", "eval"):
        samples = PackedSamples(TokenStream(enc, split), seq_len=24, special=special)
        bodies = []
        for i in range(len(samples)):
            ids, att, _ = samples.sample(i)
            n = int(att.sum())
            assert ids[0] == tok.cls_token_id and ids[n - 1] == tok.sep_token_id
            assert (ids[n:] == tok.pad_token_id).all()
            if i < len(samples) - 1:
                assert n == 24, "only the last sample may be short"
            bodies.extend(ids[1:n - 1].tolist())
        assert bodies == expected[split]
    assert len(expected["eval"]) > 0 and len(expected["train"]) > len(expected["eval"])


def test_samples_cross_shard_boundaries(encoded):
    _, enc, vocab, _ = encoded
    stream = TokenStream(enc, "train")
    assert len(stream.bounds) == 4  # three shards
    b = int(stream.bounds[1])
    joined = stream.tokens(b - 5, b + 5)
    assert joined.tolist() == stream._tokens[0][-5:].tolist() + stream._tokens[1][:5].tolist()


def test_funnel_and_index(encoded):
    _, enc, _, result = encoded
    f = result.funnel
    n_docs = len(fixture_lines()) * 2 + 2
    assert f.docs_in == n_docs and not f.problems()
    assert f.dropped == {EMPTY_REASON: 1} and f.docs_kept == n_docs - 1
    assert sum(s.docs_in for s in result.by_source.values()) == n_docs
    index = json.loads((enc / "index.json").read_text())
    assert index["dtype"] == "<u2"  # 700-token vocabulary fits in uint16
    assert result.meta["docs"]["train"] + result.meta["docs"]["eval"] == n_docs - 1
    for s in index["splits"]["train"]:
        assert (enc / "train" / f"{s['stem']}.tokens").stat().st_size == 2 * s["tokens"]
        starts = np.load(enc / "train" / f"{s['stem']}.docs.npy", allow_pickle=False)
        assert len(starts) == s["docs"] + 1 and starts[-1] == s["tokens"]


def test_word_starts_count_eojeols(encoded):
    """One eojeol start per whitespace-separated word, even where punctuation splits tokens."""
    root, enc, vocab, _ = encoded
    tok = load_tokenizer(vocab / "tok")
    docs = [d for shard in list_shards(root / "docs") for d in iter_docs(shard)
            if tok(d.text, add_special_tokens=False)["input_ids"] and not is_held_out(d.id, 7, 0.2)]
    stream = TokenStream(enc, "train")
    words = stream.words(0, len(stream))
    tokens = stream.tokens(0, len(stream))
    sep_at = np.flatnonzero(tokens == tok.sep_token_id)
    start = 0
    for d, end in zip(docs, sep_at, strict=True):
        assert int(words[start:end].sum()) == len(d.text.split()), d.text
        start = end + 1
    assert any("," in d.text for d in docs)  # the punctuation case is exercised


def test_encode_is_deterministic_across_workers(tmp_path):
    a, vocab, _ = encode_fixture(tmp_path / "a", n_shards=3, workers=1)
    b, _, _ = encode_fixture(tmp_path / "b", n_shards=3, workers=2, vocab_dir=vocab)
    cmp = filecmp.dircmp(a, b)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 1 + 2 * 3 * 3  # index + (tokens, docs, words) x 3 shards x 2 splits
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert not cmp.diff_files
