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


class SparseMLM(nn.Module):
    """Training-time wrapper: MLM loss with the output head applied at masked positions only."""

    def __init__(self, mlm: Any):
        super().__init__()
        self.mlm = mlm
        self._arch = architecture_of(mlm.config)

    @property
    def encoder_name(self) -> str:
        """The attribute of `.mlm` that holds the encoder (the part of the model whose shapes are fixed)."""
        return str(self._arch.encoder)

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
