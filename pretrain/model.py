"""The models pretraining builds, and the sparse-prediction MLM wrapper used for training.

Which stock classes and sizes exist is `pretrain.architectures`. Why the wrapper: with a small encoder the
output layer over a 16-32k vocabulary dominates the cost of a step. MLM only needs logits at the ~15 % masked positions, so `SparseMLM` runs the encoder, gathers the masked hidden
states and applies the (unchanged) output head to those rows only. The wrapped module is the stock class, so
`save_pretrained` of `.mlm` is loadable by `AutoModelForMaskedLM` as is.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from pretrain.architectures import architecture_of


def build_model(config: Any, seed: int) -> Any:
    """A randomly initialised stock `*ForMaskedLM` of the config's architecture; the seed makes the initial
    weights reproducible."""
    torch.manual_seed(seed)
    return architecture_of(config).mlm_type()(config)


def training_model(config: Any, seed: int, attention: str | None = None, compile_encoder: bool = False) -> SparseMLM:
    """The model the pretraining loop trains: `build_model` in the `SparseMLM` wrapper, with the kernels
    `pretrain.engine.cpu_kernels` chose: `attention` as transformers' `attn_implementation` (None: the config's),
    and the encoder compiled by inductor in place (its shapes are fixed, packed batch x length; the sparse head,
    whose row count changes every batch, stays eager; in place, so the state dict keeps the stock keys)."""
    if attention:
        config._attn_implementation = attention
    model = SparseMLM(build_model(config, seed))
    if compile_encoder:
        getattr(model.mlm, model._arch.encoder).compile()
    return model


class SparseMLM(nn.Module):
    """Training-time wrapper: MLM loss with the output head applied at masked positions only."""

    def __init__(self, mlm: Any):
        super().__init__()
        self.mlm = mlm
        self._arch = architecture_of(mlm.config)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor,
                attention_mask: torch.Tensor | None = None, per_token: bool = False) -> torch.Tensor:
        """Mean cross-entropy over the predicted positions, or (`per_token`) one loss per predicted position,
        in row-major order of `labels != -100`."""
        encoder = getattr(self.mlm, self._arch.encoder)
        hidden = encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        sel = labels.reshape(-1) != -100
        picked = hidden.reshape(-1, hidden.shape[-1])[sel]
        logits = self._arch.head(self.mlm, picked)
        if per_token:
            return nn.functional.cross_entropy(logits.float(), labels.reshape(-1)[sel], reduction="none")
        if picked.shape[0] == 0:  # no masked token in this micro-batch: a zero loss that keeps the graph
            return logits.sum() * 0.0
        return nn.functional.cross_entropy(logits.float(), labels.reshape(-1)[sel])
