"""Throughput accounting of the pretraining loop: tokens and FLOPs per second of training steps only, and MFU
against the device's peak (a GPU's datasheet figure, `pretrain.flops`; a CPU's measured one, `pipeline.hardware`).

Its own module because the timing rules (device syncs at the ends of a timed stretch, the clock stopped for
evaluation, checkpoints and logging) are a concern of their own; the loop only starts, counts and pauses.
"""

from __future__ import annotations

import time
from typing import Any

from pipeline.hardware import mfu_peak
from pretrain.config import TrainConfig
from pretrain.flops import Peak, peak_for


def device_peak(cfg: TrainConfig) -> Peak | None:
    """The per-device peak that MFU divides by: `peak_tflops` when set; on a GPU its datasheet peak
    (`pretrain.flops.PEAKS`; None for an unknown GPU, then no MFU is logged); on a CPU the measured matmul peak
    at the run's precision and this process's thread count (`pipeline.hardware.mfu_peak`, cached per machine;
    none for fp16, or for bf16 on a CPU that only emulates it)."""
    import torch

    if cfg.peak_tflops is not None:
        return peak_for("", cfg.peak_tflops)
    if torch.cuda.is_available():
        return peak_for(torch.cuda.get_device_name())
    measured = mfu_peak(cfg.resolved_precision().name, torch.get_num_threads())
    return Peak(measured.label, measured.tflops * 1e12) if measured else None


class Throughput:
    """Tokens and FLOPs per second of training steps only (see the loop): windows between log steps, and the
    run's total for the summary."""

    def __init__(self, accelerator: Any):
        self.accelerator = accelerator
        self._t0: float | None = None
        self.tokens = self.flops = 0.0  # this window
        self.seconds = 0.0
        self.total_tokens = self.total_flops = self.total_seconds = 0.0

    def _sync(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def start(self) -> None:
        """Start the clock (if it is not running): a timed stretch of training steps begins."""
        if self._t0 is None:
            self._sync()
            self._t0 = time.perf_counter()

    def count(self, tokens: int, flops: float) -> None:
        """A timed step's work; the clock keeps running into the next step until `pause`."""
        self.tokens += tokens
        self.flops += flops

    def pause(self) -> None:
        """Stop the clock after a device sync: what follows (evaluation, a checkpoint) is not training."""
        if self._t0 is not None:
            self._sync()
            dt = time.perf_counter() - self._t0
            self.seconds += dt
            self.total_seconds += dt
            self._t0 = None

    def window(self, world: int, peak: Peak | None) -> dict[str, Any]:
        """tokens/s (over all ranks) and MFU of the window since the last call, then a new window."""
        self.pause()
        out: dict[str, Any] = {}
        if self.seconds > 0:
            out["tokens_per_s"] = self.tokens * world / self.seconds
            if peak is not None:
                out["mfu"] = self.flops / (self.seconds * peak.flops)
        self.total_tokens += self.tokens
        self.total_flops += self.flops
        self.tokens = self.flops = self.seconds = 0.0
        return out
