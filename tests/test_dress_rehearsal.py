"""The arithmetic of the KLUE-base dress rehearsal (pretrain/examples/dress_rehearsal.py) behind the table in
docs/scaling.md: FLOPs per token, DeepSpeed's model-state formulas, activations and the projection to 8 GPUs, each
against numbers worked out by hand here. No training."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("dress_rehearsal", ROOT / "pretrain/examples/dress_rehearsal.py")
assert _spec is not None and _spec.loader is not None
dr = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("dress_rehearsal", dr)  # its dataclasses look their module up
_spec.loader.exec_module(dr)

P = 110_651_648  # klue-roberta-base with the 32k vocabulary (klue run --dry-run; the rehearsal's model)
LARGEST = 32_000 * 768 + 32_000  # the MLM decoder (its weight tied to the word embeddings) and its bias
GIB = 2**30


def test_flops_per_token_by_hand_and_as_the_loop_counts():
    # encoder: 2*12*(4*768^2 + 2*768*3072) = 169,869,312; attention: 2*12*2*512*768 = 18,874,368;
    # head at 15 % of the tokens: 0.15 * 2*(768^2 + 768*32,000) = 7,549,747.2; training is 3x the forward
    assert dr.flops_per_token(768, 12, 3072, 32_000, 512) == pytest.approx(3 * 196_293_427.2, rel=1e-12)
    from pretrain.architectures import build_config
    from pretrain.flops import step_flops

    cfg = build_config("base", vocab_size=32_000, seq_len=512, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    assert step_flops(cfg, 512, 1000, 150) == pytest.approx(1000 * dr.flops_per_token(768, 12, 3072, 32_000, 512))


def test_model_state_bytes_match_deepspeeds_estimators():
    pytest.importorskip("deepspeed", reason="deepspeed is not installed (the optional `deepspeed` extra)")
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    assert dr.zero_model_states_bytes(P, LARGEST, 2, 2) == 11 * P == 1_217_168_128
    assert dr.zero_model_states_bytes(P, LARGEST, 2, 3) == 4 * LARGEST + 9 * P == 1_094_296_832
    assert dr.zero_model_states_bytes(P, LARGEST, 2, 2, bytes_param=4) == 12 * P
    assert dr.zero_model_states_bytes(P, LARGEST, 2, 3, bytes_param=4) == 4 * LARGEST + 10 * P
    for n in (2, 8):
        assert dr.zero_model_states_bytes(P, LARGEST, n, 2) == pytest.approx(
            estimate_zero2_model_states_mem_needs(P, n, 1, cpu_offload=False)[1], abs=1)
        assert dr.zero_model_states_bytes(P, LARGEST, n, 3) == pytest.approx(
            estimate_zero3_model_states_mem_needs(P, LARGEST, n, 1, cpu_offload=False, cpu_offload_params=False)[1],
            abs=1)


def test_activations_and_projection_for_8_h100():
    # 12 layers x 512 x 32 x 768 x 34 bytes (fused attention, 16-bit)
    assert dr.activation_bytes(512, 32, 768, 12, 12) == 5_133_828_096
    # the s^2 term: 5 * 12 heads * 512 / 768 = 40 more per element
    assert dr.activation_bytes(512, 32, 768, 12, 12, flash=False) == 12 * 512 * 32 * 768 * 74
    tokens = 500_000 * 2048 * 512
    ft = dr.flops_per_token(768, 12, 3072, 32_000, 512)
    h100 = dr.Gpu("H100", 989e12, 80)
    p = dr.projection(P, LARGEST, ft, tokens, h100, gpus=8, mfu=0.4)
    gpu_seconds = 588_880_281.6 * 524_288_000_000 / (989e12 * 0.4)  # 780,446 s of one GPU
    assert p["gpu_hours"] == pytest.approx(gpu_seconds / 3600, rel=1e-9)
    assert p["gpu_hours"] == pytest.approx(216.8, abs=0.1) and p["wall_hours"] == pytest.approx(27.1, abs=0.05)
    logits = 32 * 512 * 0.15 * 32_000 * 8  # fp32 logits and their gradient at the predicted positions
    assert p["zero2_gib"] * GIB == pytest.approx(4.25 * P + 5_133_828_096 + logits)
    assert p["checkpoint_gib"] * GIB == 14 * P and p["export_gib"] * GIB == 4 * P
    a100 = dr.projection(P, LARGEST, ft, tokens, dr.Gpu("A100", 312e12, 80), gpus=8, mfu=0.4)
    assert a100["gpu_hours"] == pytest.approx(p["gpu_hours"] * 989 / 312)
