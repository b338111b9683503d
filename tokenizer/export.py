"""Export a trained vocabulary as a folder that stock `transformers` loads offline, with no project code and
no MeCab, and that tokenizes raw (un-segmented) Korean text.

Choices, so pretraining and fine-tuning agree:
- ids: [CLS]=0 [PAD]=1 [SEP]=2 [UNK]=3 [MASK]=4 (klue/roberta; RobertaConfig's pad/bos/eos defaults), then the
  PII placeholders, then learned tokens.
- WordPiece -> `BertTokenizerFast`, `do_lower_case=False`, `strip_accents=False` (NFD accent stripping would
  decompose Hangul syllables into jamo), `tokenize_chinese_chars=True`: Hanja in Korean text are mostly
  isolated Sino-Korean terms; one token per ideograph keeps thousands of rare Hanja strings out of the
  vocabulary, Hangul is outside the CJK ranges and unaffected, and it is what klue/bert-base does.
- `model_input_names=["input_ids", "attention_mask"]`: klue/roberta has `type_vocab_size=1`, so no
  `token_type_ids` are ever produced (pair inputs would otherwise give type id 1 and index out of range).
  The post-processor gives type id 0 to both segments for the same reason.
- BPE -> `PreTrainedTokenizerFast` with the same normalizer, pre-tokenizer, special tokens and
  post-processor, and `##` continuations (so the same `tokenizer/mecab.py` units train it).
- PII placeholders are added tokens (never split, matched before normalization) but not *special*: they
  stand for content, so MLM may mask and predict them and `decode(skip_special_tokens=True)` keeps them.
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import io
from tokenizer.train import METASPACE, SPECIAL_TOKENS, TrainedVocab

MODEL_INPUT_NAMES = ["input_ids", "attention_mask"]


def build_backend(tv: TrainedVocab):
    """The `tokenizers.Tokenizer` used at inference."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab = tv.vocab
    model: models.Model
    if tv.pre_tokenizer == "metaspace":
        return _metaspace_backend(tv)
    if tv.algorithm == "wordpiece":
        model = models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##")
    elif tv.algorithm == "bpe":
        model = models.BPE(vocab, tv.merges or [], unk_token="[UNK]", continuing_subword_prefix="##")
    else:
        raise ValueError(f"unknown algorithm {tv.algorithm!r}")
    tok = Tokenizer(model)
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False,
                                                lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    return _with_specials(tok, tv)


def _metaspace_backend(tv: TrainedVocab):
    """A language without spaces (`TrainedVocab.pre_tokenizer == "metaspace"`): the language's Unicode form, then
    BertNormalizer's clean-up (control characters, whitespace to spaces; no CJK padding, no lower-casing); words
    only at spaces, marked ▁ (Metaspace, `prepend_scheme="first"`: the first word too, as training saw it); BPE
    with byte fallback, so no character is [UNK] and decode() gives the normalized text back exactly."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab = tv.vocab
    tok = Tokenizer(models.BPE(vocab, tv.merges or [], unk_token="[UNK]", byte_fallback=True))
    clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                       lowercase=False)
    forms = {"NFKC": normalizers.NFKC, "NFC": normalizers.NFC}
    if tv.unicode_normalization not in (None, "none", *forms):
        raise ValueError(f"unknown unicode_normalization {tv.unicode_normalization!r}")
    norm = forms.get(tv.unicode_normalization or "")
    tok.normalizer = normalizers.Sequence([norm(), clean]) if norm else clean
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="first", split=True)
    tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                     decoders.Metaspace(replacement=METASPACE, prepend_scheme="first", split=True)])
    return _with_specials(tok, tv)


def _with_specials(tok, tv: TrainedVocab):
    """What both kinds of tokenizer share: `[CLS] A [SEP] (B [SEP])` with type id 0 throughout, the special
    tokens, and the PII placeholders as added (not special) tokens."""
    from tokenizers import AddedToken, processors

    vocab = tv.vocab
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:0 [SEP]:0",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    placeholders = tv.tokens[len(SPECIAL_TOKENS):tv.n_reserved]
    if placeholders:
        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in placeholders])
    return tok


def hf_tokenizer(tv: TrainedVocab, model_max_length: int = 512):
    """The transformers tokenizer object of `tv` (module doc: which class, which flags), not yet saved."""
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast

    backend = build_backend(tv)
    names = dict(cls_token="[CLS]", pad_token="[PAD]", sep_token="[SEP]", unk_token="[UNK]", mask_token="[MASK]")
    common = dict(model_max_length=model_max_length, model_input_names=list(MODEL_INPUT_NAMES), **names)
    if tv.algorithm == "wordpiece" and tv.pre_tokenizer == "bert":
        return BertTokenizerFast(tokenizer_object=backend, vocab=tv.vocab, do_lower_case=False,
                                 tokenize_chinese_chars=True, strip_accents=False, **common)
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="[CLS]", eos_token="[SEP]", **common)


def export_tokenizer(tv: TrainedVocab, out_dir: Path, model_max_length: int = 512):
    """Write the tokenizer folder (`save_pretrained`) and return the transformers tokenizer object."""
    hf = hf_tokenizer(tv, model_max_length)
    out_dir.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(str(out_dir))
    if tv.algorithm == "bpe":
        # transformers 5 writes its internal name `TokenizersBackend`; `PreTrainedTokenizerFast` names the same
        # class there and is also what transformers 4 knows, so the folder loads in both.
        cfg_path = out_dir / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
        io.write_json(cfg_path, cfg, indent=2)
    return hf


def special_token_ids(tv: TrainedVocab) -> dict[str, int]:
    """The ids a model config must agree with (pad_token_id, bos/eos = cls/sep, ...)."""
    v = tv.vocab
    return {"cls_token_id": v["[CLS]"], "pad_token_id": v["[PAD]"], "sep_token_id": v["[SEP]"],
            "unk_token_id": v["[UNK]"], "mask_token_id": v["[MASK]"], "bos_token_id": v["[CLS]"],
            "eos_token_id": v["[SEP]"]}
