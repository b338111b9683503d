"""FLOPs of what a pretraining step computes, and the peak they are divided by for MFU.

`6 * N * tokens` (Kaplan et al. 2020) overstates an MLM encoder with a sparse head twice over: embedding lookups
are no matrix products, and the output layer (hidden x vocab, plus the head's dense transform) runs only at the
~15 % of positions that are predicted (`pretrain.model.SparseMLM`). Counted instead, per token, forward pass
(a multiply-add is 2 FLOPs; backward is twice the forward, so training is 3x):

    encoder matmuls   2 * L * (4 d^2 + m d f)     Q, K, V, output projections and the FFN's m matrices
                                                  (m = 2; 3 for ModernBERT's GeGLU, whose input layer is d x 2f)
    attention         2 * L * 2 * s * d           Q K^T and (softmax) V over a sequence of s positions (also in
                                                  ModernBERT's local layers, whose SDPA masks the whole s x s)
    head (predicted)  2 * (d^2 + d V)             dense transform and the decoder, at predicted positions only

Biases, LayerNorm, softmax and GELU are left out (O(d) per token, <1 % at these sizes), as Megatron-LM's and
PaLM's MFU accounting (Chowdhery et al. 2022, appendix B) leave them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pretrain.architectures import architecture_of

# Dense (no sparsity) bf16 tensor-core peaks per GPU, from NVIDIA's datasheets. Matched against
# torch.cuda.get_device_name() in this order (so "H100 NVL" is not taken for an SXM H100).
PEAKS: tuple[tuple[str, str, float], ...] = (
    ("H200 NVL", "H200 NVL, bf16 dense", 835e12),
    ("H200", "H200 SXM, bf16 dense", 989e12),
    ("H100 NVL", "H100 NVL, bf16 dense", 835e12),
    ("H100 PCIe", "H100 PCIe, bf16 dense", 756e12),
    ("H100", "H100 SXM, bf16 dense", 989e12),
    ("A100", "A100 (SXM and PCIe), bf16 dense", 312e12),
    ("L40S", "L40S, bf16 dense", 362e12),
    ("L4", "L4, bf16 dense", 121e12),
)


@dataclass(frozen=True)
class Peak:
    label: str  # what the number is, e.g. "H100 SXM, bf16 dense"
    flops: float  # per device, FLOP/s


def peak_for(device_name: str, override_tflops: float | None = None) -> Peak | None:
    """The peak used for MFU on a device named `device_name`; None when it is not in `PEAKS` (and no override)."""
    if override_tflops is not None:
        return Peak(f"{override_tflops:g} TFLOP/s (set by peak_tflops)", override_tflops * 1e12)
    for key, label, flops in PEAKS:
        if key in device_name:
            return Peak(label, flops)
    return None


def step_flops(config: Any, seq_len: int, tokens: int, predicted: int) -> float:
    """Training FLOPs (forward + backward) of `tokens` input positions, in sequences of `seq_len`, of which
    `predicted` go through the head, for a config of any of `pretrain.model.ARCHITECTURES` (hidden_size,
    num_hidden_layers, intermediate_size, vocab_size)."""
    d, n_layers, f, v = (config.hidden_size, config.num_hidden_layers, config.intermediate_size,
                         config.vocab_size)
    s, m = seq_len, architecture_of(config).ffn_matrices
    per_token = 2 * n_layers * (4 * d * d + m * d * f) + 2 * n_layers * 2 * s * d
    per_predicted = 2 * (d * d + d * v)
    return 3.0 * (tokens * per_token + predicted * per_predicted)
