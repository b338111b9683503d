"""A tokenizer for a language without spaces (Japanese): MeCab (UniDic) units, BPE trained on morphemes with ▁
at space-starts and byte fallback, exported as a Metaspace tokenizer that loads with AutoTokenizer and runs
where MeCab cannot be imported; and the pretokenize and vocab stages with `language: ja`."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import unicodedata
from pathlib import Path

import pytest

pytest.importorskip("unidic_lite", reason="the `ja` extra is not installed (pip install -e '.[ja]')")

from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs  # noqa: E402
from pipeline.stage import StageContext, StageInput  # noqa: E402
from tokenizer.export import export_tokenizer  # noqa: E402
from tokenizer.mecab import Pretokenizer, restore  # noqa: E402
from tokenizer.stages.pretokenize import PretokenizeParams, PretokenizeStage  # noqa: E402
from tokenizer.stages.vocab import VocabParams, VocabStage  # noqa: E402
from tokenizer.train import BYTE_TOKENS, METASPACE, metaspace_rewriter, reserved_tokens, train_vocab  # noqa: E402

PLACEHOLDERS = ["[PHONE]", "[PERSON]", "[EMAIL]"]
FIX = Path(__file__).resolve().parent / "fixtures" / "tokenizer" / "corpus_ja.txt"
LINES = FIX.read_text(encoding="utf-8").splitlines()
RECIPE = types.SimpleNamespace(seed=42, sources=[])


@pytest.fixture(scope="module")
def pt() -> Pretokenizer:
    return Pretokenizer("mecab", protected=PLACEHOLDERS, language="ja")


def test_units_are_morphemes_with_placeholders_whole_and_restore_exactly(pt):
    assert pt.text("東京都に住んでいる[PERSON]さんが本を読んだ。") == \
        "東京 ##都 ##に ##住ん ##で ##いる ##[PERSON] ##さん ##が ##本 ##を ##読ん ##だ ##。"
    # no BERT-style isolation of punctuation or kanji (`@@`): the exported tokenizer does not split there
    assert "@@" not in " ".join(pt.text(t) for t in LINES)
    text = "\n".join(LINES)
    assert restore(pt.text(text)) == text
    plain = Pretokenizer("none", protected=PLACEHOLDERS, language="ja")
    assert plain.text("駅前の[PERSON]さん と English") == "駅前の ##[PERSON] ##さん と English"


def test_the_metaspace_rewrite_marks_chunk_starts_and_drops_placeholders():
    rw = metaspace_rewriter(reserved_tokens(PLACEHOLDERS))
    assert rw("東京 ##都 ##に ##[PERSON] ##さん\n次 ##の 行") == \
        f" {METASPACE}東京 都 に   さん {METASPACE}次 の {METASPACE}行"
    assert rw("[PERSON] ##さん") == "   さん"  # after an added token, Metaspace(prepend_scheme="first") adds no ▁


def _train(pt, size=900):
    units = [pt.text(t) for t in LINES * 3]
    return train_vocab(units, algorithm="bpe", vocab_size=size, min_frequency=2, placeholders=PLACEHOLDERS,
                       pre_tokenizer="metaspace", unicode_normalization="NFKC")


def test_training_is_deterministic_and_pieces_stay_inside_morphemes(pt):
    a, b = _train(pt), _train(pt)
    assert (a.tokens, a.merges) == (b.tokens, b.merges)
    assert a.tokens[:8] == ["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]", *PLACEHOLDERS]
    assert a.tokens[8:8 + 256] == BYTE_TOKENS and a.n_reserved == 8 and len(a.tokens) <= 900
    morphemes = {u.removeprefix("##") for t in LINES for u in pt.text(t).split()}
    learned = [t.removeprefix(METASPACE) for t in a.tokens[8 + 256:]]
    # every learned piece lies inside a morpheme of the training text (never across a boundary)
    assert all(any(p in m for m in morphemes) for p in learned if p)
    with pytest.raises(ValueError, match="trained with algorithm 'bpe', not 'wordpiece'"):
        train_vocab([pt.text(LINES[0])], algorithm="wordpiece", pre_tokenizer="metaspace")


def test_the_exported_tokenizer_runs_without_mecab_and_round_trips(pt, tmp_path):
    export_tokenizer(_train(pt), tmp_path / "tok")
    texts = [*LINES, "珍しい𠮷野家の🍣", "全角ＡＢＣと半角ｶﾀｶﾅ、  二つの空白。"]
    script = f"""
import json, sys, unicodedata
for m in ("MeCab", "unidic_lite", "fugashi", "corpora", "tokenizer", "pipeline"):
    sys.modules[m] = None  # importing any of them now raises ImportError
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained({str(tmp_path / "tok")!r})
texts = json.loads(sys.stdin.read())
out = []
for t in texts:
    enc = tok(t)
    out.append([tok.convert_ids_to_tokens(enc["input_ids"]), tok.decode(enc["input_ids"], skip_special_tokens=True)])
print(json.dumps([type(tok).__name__, out], ensure_ascii=False))
"""
    p = subprocess.run([sys.executable, "-c", script], input=json.dumps(texts), capture_output=True, text=True,
                       check=True)
    name, out = json.loads(p.stdout.strip().splitlines()[-1])
    assert name in ("PreTrainedTokenizerFast", "TokenizersBackend")
    for t, (tokens, decoded) in zip(texts, out, strict=True):
        assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "[UNK]" not in tokens
        # NFKC, then runs of whitespace as Metaspace keeps them
        assert decoded == unicodedata.normalize("NFKC", t), (t, tokens)
    first = out[0][0]
    assert first[1].startswith(METASPACE) and "[PERSON]" in first  # the placeholder is one token
    assert "<0xF0>" in out[-2][0]  # 𠮷 and 🍣 are outside the alphabet: byte fallback, not [UNK]


# ---- the stages ------------------------------------------------------------------------------------------------
def _pii_dir(tmp_path: Path) -> Path:
    d = tmp_path / "pii"
    d.mkdir()
    docs = [Doc(doc_id("fx", "corpus_ja.txt", i), unicodedata.normalize("NFKC", t), "fx", meta_json({}))
            for i, t in enumerate(LINES * 4)]
    write_docs(d / "shard-00000.parquet", docs[:60])
    write_docs(d / "shard-00001.parquet", docs[60:])
    return d


def test_the_stages_with_language_ja(tmp_path):
    pii = _pii_dir(tmp_path)
    pii_in = {"pii": StageInput("pii", pii, {"meta": {"placeholder_tokens": PLACEHOLDERS}})}
    res = {}
    for workers in (1, 2):
        out = tmp_path / f"pre{workers}"
        out.mkdir()
        ctx = StageContext(out_dir=out, params=PretokenizeParams(language="ja"), inputs=pii_in, recipe=RECIPE,
                           workers=workers)
        res[workers] = PretokenizeStage().run(ctx)
    assert res[1].meta["training_scheme"] == "metaspace" and res[1].meta["language"] == "ja"
    for p in list_shards(tmp_path / "pre1"):
        assert (tmp_path / "pre2" / p.name).read_bytes() == p.read_bytes()
    src = [d.text for p in list_shards(pii) for d in iter_docs(p)]
    assert [restore(d.text) for p in list_shards(tmp_path / "pre1") for d in iter_docs(p)] == src
    fp = PretokenizeStage().fingerprint(types.SimpleNamespace(params=PretokenizeParams(language="ja")))
    assert set(fp) == {"mecab-python3", "unidic-lite", "tokenizers"}

    params = VocabParams(language="ja", vocab_size=700)
    assert params.algorithm == "bpe"  # the language's default, as no algorithm was named
    vin = {"pretokenize": StageInput("pretokenize", tmp_path / "pre1", {"meta": res[1].meta}),
           "pii": StageInput("pii", pii, {"meta": {"placeholder_tokens": PLACEHOLDERS}})}
    (tmp_path / "vocab").mkdir()
    v = VocabStage().run(StageContext(out_dir=tmp_path / "vocab", params=params, inputs=vin, recipe=RECIPE))
    assert v.meta["pre_tokenizer"] == "metaspace" and v.meta["algorithm"] == "bpe"
    tj = json.loads((tmp_path / "vocab" / "tokenizer" / "tokenizer.json").read_text(encoding="utf-8"))
    assert tj["pre_tokenizer"]["type"] == "Metaspace" and tj["model"]["byte_fallback"] is True
    assert [n["type"] for n in tj["normalizer"]["normalizers"]] == ["NFKC", "BertNormalizer"]
    # a Korean pretokenize output cannot feed a Japanese vocabulary
    ko_meta = {**res[1].meta, "training_scheme": "bert", "language": "ko"}
    vin["pretokenize"] = StageInput("pretokenize", tmp_path / "pre1", {"meta": ko_meta})
    (tmp_path / "vocab2").mkdir()
    with pytest.raises(ValueError, match="needs units pre-tokenized for a 'metaspace' tokenizer"):
        VocabStage().run(StageContext(out_dir=tmp_path / "vocab2", params=params, inputs=vin, recipe=RECIPE))


def test_fidelity_counts_morphemes_and_the_morpheme_aware_vocabulary_aligns_better(pt, tmp_path):
    from tokenizer.fidelity import evaluate

    plain = Pretokenizer("none", protected=PLACEHOLDERS, language="ja")
    for name, p in (("mecab", pt), ("none", plain)):
        tv = train_vocab([p.text(t) for t in LINES * 3], algorithm="bpe", vocab_size=900, min_frequency=2,
                         placeholders=PLACEHOLDERS, pre_tokenizer="metaspace", unicode_normalization="NFKC")
        export_tokenizer(tv, tmp_path / name)
    texts = [unicodedata.normalize("NFKC", t) for t in LINES]
    got = {name: evaluate(tmp_path / name, texts, language="ja") for name in ("mecab", "none")}
    n_morphemes = sum(len(pt.eojeol_units(c)) for t in texts for c in t.split())
    for m in got.values():
        assert m["counts"]["eojeols"] == n_morphemes  # the unit is the morpheme, not the space-free run
        assert m["unk_rate"] == 0.0  # byte fallback
    assert got["mecab"]["morpheme_aligned"] > got["none"]["morpheme_aligned"]
    assert got["mecab"]["morpheme_aligned"] >= 0.95


def test_jsquad_windows_may_split_a_byte_fallback_character(pt, tmp_path):
    """With byte fallback, a character outside the vocabulary is 2-4 byte tokens sharing its offsets; a window
    can end inside it. Adjacent windows must then still be accepted (and every passage token kept)."""
    from transformers import AutoTokenizer

    from finetune.registry import get_task

    export_tokenizer(_train(pt), tmp_path / "tok")
    tok = AutoTokenizer.from_pretrained(tmp_path / "tok")
    task = get_task("jsquad")
    rare = "≒"  # three UTF-8 bytes, never in the training lines
    assert tok.tokenize(rare)[-3:] == ["<0xE2>", "<0x89>", "<0x92>"]
    split_seen = False
    for pad in range(40):
        context = "東京" * pad + rare + "大阪の駅前で本を読んだ。" * 12
        ex = {"guid": f"q{pad}", "question": "駅前で何を読んだ？", "context": context, "title": "t",
              "answers": [{"text": "本", "answer_start": context.index("本")}], "is_impossible": False}
        feats = task.encode([ex], tok, 48)
        assert len(feats) >= 2
        ends = [max(o[1] for o in f["_offsets"] if o) for f in feats]
        starts = [min(o[0] for o in f["_offsets"] if o) for f in feats]
        split_seen |= any(s < e for s, e in zip(starts[1:], ends, strict=False))  # a character in two windows
        assert ends[-1] == len(context)
    assert split_seen, "no padding put the byte-fallback character across a window boundary"
