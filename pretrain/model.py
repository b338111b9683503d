"""RoBERTa model sizes and the sparse-prediction MLM wrapper used for training.

Sizes follow the released KLUE-RoBERTa models (klue/roberta-small, -base, -large; arXiv 2105.09680) for
`small`, `base` and `large`. `tiny` is ours, sized for a 2-core CPU run of ~10 minutes (see the note on MODEL_SIZES).

Why the wrapper: with a small encoder the output layer over a 16-32k vocabulary dominates the cost of a
step. MLM only needs logits at the ~15 % masked positions, so `SparseMLM` runs the encoder, gathers the masked
hidden states and applies the (unchanged) `lm_head` to those rows only. The wrapped module is a stock
`RobertaForMaskedLM`, so `save_pretrained` of `.mlm` is loadable by `AutoModelForMaskedLM` as is.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import RobertaConfig, RobertaForMaskedLM

# `tiny`: 4 layers x 128 with a 4x FFN (0.8M parameters besides the embeddings), and no dropout. Sized by
# compute: ten minutes of 2 CPU cores are ~1e14 FLOPs, for which a ~1M-parameter encoder is near the
# compute-optimal size. Measured on the shared corpus (16k WordPiece, batch 16 x 128, 240 s each): 4 x 128 ran
# at 18.3k tokens/s and reached held-out loss 6.34, 4 x 256 at 6.2k tokens/s only 6.57 (unigram: 7.08).
# Dropout would only slow learning this far from overfitting (and costs ~8 % of a step in random-number
# generation); fine-tuning can set its own dropout on the loaded config.
MODEL_SIZES: dict[str, dict[str, Any]] = {
    "tiny": {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 512,
             "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0},
    "small": {"hidden_size": 768, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 3072},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    "large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
              "intermediate_size": 4096},
}


def build_config(size: str, *, vocab_size: int, seq_len: int, pad_token_id: int, bos_token_id: int,
                 eos_token_id: int, overrides: dict[str, Any] | None = None) -> RobertaConfig:
    """A `RobertaConfig` for one of MODEL_SIZES, sized to the tokenizer and the sequence length.

    `max_position_embeddings = seq_len + pad_token_id + 1` because RoBERTa numbers positions from
    `pad_token_id + 1`; with KLUE's `[PAD]` = 1 that is `seq_len + 2`.
    """
    if size not in MODEL_SIZES:
        raise ValueError(f"unknown model size {size!r}; choose one of {sorted(MODEL_SIZES)}")
    kw: dict[str, Any] = dict(MODEL_SIZES[size])
    kw.update(overrides or {})
    # `vocab_size` in the overrides pads the embedding table beyond the tokenizer (e.g. to a multiple of 128,
    # as Megatron-LM does for tensor-core-friendly shapes); it can never be smaller than the tokenizer
    padded = int(kw.pop("vocab_size", vocab_size))
    if padded < vocab_size:
        raise ValueError(f"model_overrides.vocab_size={padded} is smaller than the tokenizer's {vocab_size}")
    if kw["hidden_size"] % kw["num_attention_heads"]:
        raise ValueError(f"hidden_size {kw['hidden_size']} is not a multiple of num_attention_heads "
                         f"{kw['num_attention_heads']}")
    cfg = RobertaConfig(
        vocab_size=padded,
        type_vocab_size=1,
        max_position_embeddings=seq_len + pad_token_id + 1,
        pad_token_id=pad_token_id,
        bos_token_id=bos_token_id,
        eos_token_id=eos_token_id,
        hidden_dropout_prob=kw.pop("hidden_dropout_prob", 0.1),
        attention_probs_dropout_prob=kw.pop("attention_probs_dropout_prob", 0.1),
        **kw,
    )
    cfg._attn_implementation = "sdpa"
    return cfg


def build_model(config: RobertaConfig, seed: int) -> RobertaForMaskedLM:
    """A randomly initialised model; the seed makes the initial weights reproducible."""
    torch.manual_seed(seed)
    model = RobertaForMaskedLM(config)
    return model


class SparseMLM(nn.Module):
    """Training-time wrapper: MLM loss with the output layer applied at masked positions only."""

    def __init__(self, mlm: RobertaForMaskedLM):
        super().__init__()
        self.mlm = mlm

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor,
                attention_mask: torch.Tensor | None = None, per_token: bool = False) -> torch.Tensor:
        """Mean cross-entropy over the predicted positions, or (`per_token`) one loss per predicted position,
        in row-major order of `labels != -100`."""
        hidden = self.mlm.roberta(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        sel = labels.reshape(-1) != -100
        picked = hidden.reshape(-1, hidden.shape[-1])[sel]
        logits = self.mlm.lm_head(picked)
        if per_token:
            return nn.functional.cross_entropy(logits.float(), labels.reshape(-1)[sel], reduction="none")
        if picked.shape[0] == 0:  # no masked token in this micro-batch: a zero loss that keeps the graph
            return logits.sum() * 0.0
        return nn.functional.cross_entropy(logits.float(), labels.reshape(-1)[sel])
