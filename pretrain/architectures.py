"""The encoder architectures and sizes pretraining builds: stock transformers classes, one table.

Every architecture is a stock transformers `*ForMaskedLM` class, so an exported model folder loads with
`AutoModelForMaskedLM` alone, without this project (and never with `trust_remote_code`):

| name             | class                      | layer norm | positions                         | FFN   |
|------------------|----------------------------|------------|-----------------------------------|-------|
| `roberta`        | `RobertaForMaskedLM`       | post-LN    | learned, absolute                 | GELU  |
| `xlm-roberta-xl` | `XLMRobertaXLForMaskedLM`  | pre-LN     | learned, absolute                 | GELU  |
| `roformer`       | `RoFormerForMaskedLM`      | post-LN    | rotary (Su et al. 2021)           | GELU  |
| `modernbert`     | `ModernBertForMaskedLM`    | pre-LN     | rotary; local/global attention    | GeGLU |

`roberta` is KLUE's (klue/roberta-*; arXiv 2105.09680) and the default of the KLUE-size recipes. The middle two
exist so that the plateau study (docs/experiments/2026-11-30-plateau.md) can cross layer-norm placement with the
kind of positions using stock classes; `modernbert` (Warner et al. 2024, arXiv 2412.13663) is the modern encoder the CPU recipes use.

Sizes follow the released KLUE-RoBERTa models (klue/roberta-small, -base, -large) for `small`, `base` and `large`
in depth, width and heads. `tiny` is ours, sized for a 2-core CPU run of ~10 minutes (see the note on SHAPES).
ModernBERT's GeGLU FFN has three matrices instead of two, so its inner size is 2/3 of RoBERTa's 4 x hidden (the
parameter-matched GLU of Shazeer 2020, arXiv 2002.05202), rounded up to a multiple of 64.

Nothing here imports torch or transformers at import time: recipes validate `architecture:` without them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

ArchitectureName = Literal["roberta", "xlm-roberta-xl", "roformer", "modernbert"]
SizeName = Literal["tiny", "small", "base", "large"]

# (hidden, layers, heads). `tiny`: 4 layers x 128 (0.8M parameters besides the embeddings for RoBERTa), sized by
# compute: ten minutes of 2 CPU cores are ~1e14 FLOPs, for which a ~1M-parameter encoder is near the
# compute-optimal size. Measured on the shared corpus (16k WordPiece, batch 16 x 128, 240 s each): 4 x 128 ran
# at 18.3k tokens/s and reached held-out loss 6.34, 4 x 256 at 6.2k tokens/s only 6.57 (unigram: 7.08).
SHAPES: dict[str, tuple[int, int, int]] = {
    "tiny": (128, 4, 4),
    "small": (768, 6, 12),   # klue/roberta-small
    "base": (768, 12, 12),   # klue/roberta-base
    "large": (1024, 24, 16),  # klue/roberta-large
}


def glu_inner(hidden: int) -> int:
    """The GeGLU inner size with RoBERTa's FFN parameter count: 2/3 of 4 x hidden, rounded up to 64."""
    return -(-(8 * hidden) // (3 * 64)) * 64


@dataclass(frozen=True)
class Architecture:
    """What pretraining needs to know of one stock masked-LM class."""

    name: str
    mlm_class: str  # transformers class name (`config.architectures` of an export)
    config_class: str
    layout: str  # one line for the dry run and docs
    encoder: str  # attribute of the MLM model that holds the encoder
    head: Callable[[Any, Any], Any]  # (MLM model, hidden states) -> logits
    offset_positions: bool  # RoBERTa-style learned positions numbered from pad_token_id + 1
    ffn_matrices: int  # weight matrices in one FFN (2, or 3 for a GLU): for the FLOP count
    size_fields: Callable[[str], dict[str, Any]]  # size name -> config fields

    def config_type(self) -> Any:
        import transformers

        return getattr(transformers, self.config_class)

    def mlm_type(self) -> Any:
        import transformers

        return getattr(transformers, self.mlm_class)


def _bert_like(size: str) -> dict[str, Any]:
    d, n, h = SHAPES[size]
    out: dict[str, Any] = {"hidden_size": d, "num_hidden_layers": n, "num_attention_heads": h,
                           "intermediate_size": 4 * d}
    if size == "tiny":
        # Dropout would only slow learning this far from overfitting (and costs ~8 % of a step in random-number
        # generation); fine-tuning can set its own dropout on the loaded config.
        out.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return out


def _modernbert(size: str) -> dict[str, Any]:
    # ModernBERT's own defaults otherwise: no dropout, no biases but the decoder's, a global-attention layer
    # every third layer and 128-token local windows in the others, RoPE theta 160k (global) / 10k (local).
    d, n, h = SHAPES[size]
    return {"hidden_size": d, "num_hidden_layers": n, "num_attention_heads": h, "intermediate_size": glu_inner(d)}


ARCHITECTURES: dict[str, Architecture] = {
    "roberta": Architecture(
        "roberta", "RobertaForMaskedLM", "RobertaConfig", "post-LN, learned absolute positions, GELU FFN",
        "roberta", lambda m, h: m.lm_head(h), True, 2, _bert_like),
    "xlm-roberta-xl": Architecture(
        "xlm-roberta-xl", "XLMRobertaXLForMaskedLM", "XLMRobertaXLConfig",
        "pre-LN, learned absolute positions, GELU FFN", "roberta", lambda m, h: m.lm_head(h), True, 2, _bert_like),
    "roformer": Architecture(
        "roformer", "RoFormerForMaskedLM", "RoFormerConfig", "post-LN, rotary positions, GELU FFN",
        "roformer", lambda m, h: m.cls(h), False, 2, _bert_like),
    "modernbert": Architecture(
        "modernbert", "ModernBertForMaskedLM", "ModernBertConfig",
        "pre-LN, rotary positions, GeGLU FFN, local/global attention", "model",
        lambda m, h: m.decoder(m.head(h)), False, 3, _modernbert),
}
assert tuple(ARCHITECTURES) == get_args(ArchitectureName)



def architecture_of(config: Any) -> Architecture:
    """The architecture of a model config: each name above is its class's `model_type`."""
    arch = ARCHITECTURES.get(getattr(config, "model_type", ""))
    if arch is None:
        raise ValueError(f"model_type {getattr(config, 'model_type', None)!r} is none of the pretraining "
                         f"architectures {sorted(ARCHITECTURES)}")
    return arch


def usable_positions(config: Any) -> int:
    """How many tokens one sequence may hold: learned RoBERTa-style tables lose pad_token_id + 1 slots."""
    offset = config.pad_token_id + 1 if architecture_of(config).offset_positions else 0
    return int(config.max_position_embeddings) - offset


def build_config(size: str, *, vocab_size: int, seq_len: int, pad_token_id: int, bos_token_id: int,
                 eos_token_id: int, overrides: dict[str, Any] | None = None,
                 architecture: str = "roberta") -> Any:
    """The stock config of `architecture` at one of SHAPES, sized to the tokenizer and the sequence length.

    `max_position_embeddings` holds exactly `seq_len` tokens: `seq_len + pad_token_id + 1` for RoBERTa-style
    tables (numbered from `pad_token_id + 1`; with KLUE's `[PAD]` = 1 that is `seq_len + 2`), `seq_len` for the
    rotary ones (RoFormer's sinusoid table; ModernBERT's nominal length).
    """
    if size not in SHAPES:
        raise ValueError(f"unknown model size {size!r}; choose one of {sorted(SHAPES)}")
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {sorted(ARCHITECTURES)}")
    arch = ARCHITECTURES[architecture]
    kw: dict[str, Any] = arch.size_fields(size)
    kw.update(overrides or {})
    # `vocab_size` in the overrides pads the embedding table beyond the tokenizer (e.g. to a multiple of 128,
    # as Megatron-LM does for tensor-core-friendly shapes); it can never be smaller than the tokenizer
    padded = int(kw.pop("vocab_size", vocab_size))
    if padded < vocab_size:
        raise ValueError(f"model_overrides.vocab_size={padded} is smaller than the tokenizer's {vocab_size}")
    if kw["hidden_size"] % kw["num_attention_heads"]:
        raise ValueError(f"hidden_size {kw['hidden_size']} is not a multiple of num_attention_heads "
                         f"{kw['num_attention_heads']}")
    specials: dict[str, Any] = {"pad_token_id": pad_token_id, "bos_token_id": bos_token_id,
                                "eos_token_id": eos_token_id}
    if architecture == "modernbert":
        specials.update(cls_token_id=bos_token_id, sep_token_id=eos_token_id)
    else:
        specials["type_vocab_size"] = 1
    positions = seq_len + pad_token_id + 1 if arch.offset_positions else seq_len
    cfg = arch.config_type()(vocab_size=padded, max_position_embeddings=positions, **specials, **kw)
    cfg._attn_implementation = "eager" if architecture == "roformer" else "sdpa"  # RoFormer has no SDPA path
    return cfg


def parameter_counts(model: Any) -> tuple[int, int]:
    """(all parameters, those of the embeddings: token, position and type tables and their norms), of a model
    of any architecture here (each names those modules `*embeddings*`, RoFormer's sinusoid `embed_positions`).
    Tied tensors count once."""
    total = embed = 0
    for name, p in model.named_parameters():
        total += p.numel()
        if "embed" in name:
            embed += p.numel()
    return total, embed
