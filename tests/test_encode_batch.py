"""`pretrain.encode.BatchEncoder` (issue 49, item 3): the eojeol cache in front of the tokenizer writes exactly the
ids and eojeol starts of the per-document tokenizer call it replaced, on every whitespace character Python knows,
CJK, placeholders, emoji, zero-width characters and real Korean text; batches the cache cannot take (a whitespace
character the tokenizer deletes) and tokenizers it cannot take (lower-casing) go through the whole-text path, which
writes the same; a cache that overflows empties and refills without changing a byte."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain.encode import _UNSAFE_SPACE, BatchEncoder, load_tokenizer, word_starts
from testkit.pretrain import fixture_lines, make_tokenizer

SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
ODD = ["", "   ", "[PAD][MASK]서울", "a\u200bb c", "é́ e\u0301", "😀 👍🏽 test", "(괄호)안에 '따옴표' \"인용\"…",
       "가" * 150 + " 나", "中國語 abc,def"]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return load_tokenizer(make_tokenizer(tmp_path_factory.mktemp("tok") / "tok"))


def _texts() -> list[str]:
    around = [t for c in SPACES for t in (f"가나{c}다라", f"{c}서울{c}마바", f"中國{c}語 abc{c}{c}x", c)]
    return ODD + around + fixture_lines()


def _reference(tok, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ids, words, lens = [], [], []
    for t in texts:
        e = tok(t, add_special_tokens=False, return_offsets_mapping=True)
        ids += e["input_ids"]
        words += word_starts(t, e["offset_mapping"]).tolist()
        lens.append(len(e["input_ids"]))
    return np.array(ids, dtype=np.int64), np.array(words, dtype=np.uint8), np.array(lens, dtype=np.int64)


def _same(got, want) -> bool:
    return all(np.array_equal(np.asarray(g, dtype=np.int64), np.asarray(w, dtype=np.int64))
               for g, w in zip(got, want, strict=True))


def test_every_path_writes_the_per_document_tokens_and_eojeol_starts(tok):
    enc = BatchEncoder(tok, word_info=True)
    assert enc.chunked, "the vocab stage's tokenizer (BertNormalizer, BertPreTokenizer, WordPiece) takes the cache"
    texts = _texts()
    for i in range(0, len(texts), 64):
        batch = texts[i:i + 64]
        want = _reference(tok, batch)
        assert _same(enc(batch), want), i
        assert _same(enc._encode_whole(batch), want), i
        safe = [t for t in batch if not _UNSAFE_SPACE.search(t)]
        assert _same(enc._encode_chunks(safe), _reference(tok, safe)), i
    unsafe = [c for c in SPACES if _UNSAFE_SPACE.search(c)]
    assert unsafe, "some whitespace the tokenizer deletes: those batches must be encoded whole"
    # why they must: the cache's split would break a word there that the tokenizer joins
    assert any(not _same(enc._encode_chunks([f"가{c}나"]), _reference(tok, [f"가{c}나"])) for c in unsafe)


def test_a_full_cache_empties_and_refills_with_the_same_bytes(tok):
    texts = fixture_lines()
    small = BatchEncoder(tok, word_info=True, max_entries=16)
    for i in range(0, len(texts), 8):
        assert _same(small(texts[i:i + 8]), _reference(tok, texts[i:i + 8])), i
    assert len(small.cache) <= max(16, max(len(" ".join(texts[i:i + 8]).split()) for i in range(0, len(texts), 8)))


def test_a_tokenizer_the_cache_cannot_take_is_encoded_whole(tmp_path):
    import json

    from pretrain.encode import chunk_safe

    cfg = json.loads(load_tokenizer(make_tokenizer(tmp_path / "tok")).backend_tokenizer.to_str())
    assert chunk_safe(cfg)
    assert not chunk_safe({**cfg, "normalizer": {**cfg["normalizer"], "lowercase": True}})
    assert not chunk_safe({**cfg, "pre_tokenizer": {"type": "Metaspace"}})
    assert not chunk_safe({**cfg, "added_tokens": [{"content": "a b"}]})
    assert not chunk_safe({**cfg, "added_tokens": [{"content": "[X]", "lstrip": True}]})
