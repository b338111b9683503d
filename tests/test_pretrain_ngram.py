"""Count-based reference losses (`python -m pretrain.ngram`), checked on streams small enough to count by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pretrain.ngram import main, ngram_baselines
from testkit.pretrain import encode_fixture


def _encode_dir(root: Path, train: list[int], held: list[int], vocab: int) -> Path:
    """The on-disk layout `pretrain.encode` writes (index.json + raw uint16 token files), one shard per split."""
    splits = {}
    for split, toks in (("train", train), ("eval", held)):
        (root / split).mkdir(parents=True)
        np.asarray(toks, dtype="<u2").tofile(root / split / "s0.tokens")
        splits[split] = [{"stem": "s0", "tokens": len(toks), "docs": 1}]
    (root / "index.json").write_text(json.dumps({"format": "klue-token-shards/1", "dtype": "<u2",
                                                 "vocab_size": vocab, "word_info": False, "special_ids": {},
                                                 "splits": splits}))
    return root


def test_hand_counted_unigram_and_bigram(tmp_path):
    enc = _encode_dir(tmp_path, [0, 1, 0, 1, 0, 2], [0, 1, 0, 2], vocab=3)
    out = ngram_baselines(enc, lam=0.5)
    p = {0: 3.5 / 7.5, 1: 2.5 / 7.5, 2: 1.5 / 7.5}  # add-half unigram over the 6 train tokens
    assert out["unigram"] == pytest.approx(-np.mean(np.log([p[0], p[1], p[0], p[2]])))
    # after 0: 1 twice, 2 once; after 1: 0 twice
    left = [0.5 * 2 / 3 + 0.5 * p[1], 0.5 * 1 + 0.5 * p[0], 0.5 * 1 / 3 + 0.5 * p[2]]
    assert out["bigram_left"] == pytest.approx(-np.mean(np.log(left)))
    # before 1: 0 twice; before 0: 1 twice; before 2: 0 once
    right = [0.5 * 1 + 0.5 * p[0], 0.5 * 1 + 0.5 * p[1], 0.5 * 1 + 0.5 * p[0]]
    assert out["bigram_right"] == pytest.approx(-np.mean(np.log(right)))
    assert (out["train_tokens"], out["eval_tokens"]) == (6, 4)


def test_an_order_only_stream_is_nearly_free_for_a_bigram(tmp_path):
    k = 50
    enc = _encode_dir(tmp_path, [i % k for i in range(5000)], [i % k for i in range(7, 507)], vocab=k)
    out = ngram_baselines(enc, lam=0.9)
    assert out["unigram"] == pytest.approx(math.log(k), abs=1e-3)
    assert out["bigram_left"] == pytest.approx(-math.log(0.9 + 0.1 / k), abs=1e-3)


def test_real_encode_output_and_cli(tmp_path, capsys):
    enc, _, _ = encode_fixture(tmp_path, n_shards=2, repeat=2, eval_fraction=0.2)
    main([str(enc), "--max-tokens", "100000"])
    out = json.loads(capsys.readouterr().out)
    assert out["bigram_left"] < out["unigram"] and out["bigram_right"] < out["unigram"]
    capped = ngram_baselines(enc, max_tokens=50)
    assert capped["train_tokens"] == 50


def test_no_held_out_tokens_is_a_clear_error(tmp_path):
    enc = _encode_dir(tmp_path, [0, 1, 2], [], vocab=3)
    with pytest.raises(ValueError, match="eval split holds 0 tokens"):
        ngram_baselines(enc)
