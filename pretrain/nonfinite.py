"""Skipping the update of a step whose gradient norm is not finite (a NaN or inf loss makes it so through the
backward pass), instead of writing NaN into every weight and the optimizer's moments, which no later step undoes.

No host sync: the flag `~isfinite(norm)` stays on the device and goes to the fused AdamW as `found_inf` (the
mechanism torch's GradScaler uses), whose kernel then leaves the weights, the moments and the step count as they
were. The flags are read where the loop syncs anyway (each log row, each checkpoint), so the step numbers reach
metrics.jsonl (`skipped_steps` of the window), `train_state.json` (across resumes) and summary.json. With data
parallelism the norm is that of the all-reduced gradients, so every rank takes the same decision.

Where it does not apply, training is as before: under DeepSpeed (its engine steps inside `backward`) and with
fp16 (accelerate's GradScaler already skips non-finite steps, and owns `found_inf`).

Test hook: `KLUE_TEST_NAN_STEPS="5,6"` multiplies the loss of those steps (1-based, as metrics.jsonl numbers
them) by NaN, standing for a batch that overflows.
"""

from __future__ import annotations

import os
from typing import Any

NAN_STEPS_ENV = "KLUE_TEST_NAN_STEPS"


def steps_from_env(name: str) -> frozenset[int]:
    """The step numbers a test hook's environment variable lists, separated by commas (empty when unset)."""
    raw = os.environ.get(name, "")
    try:
        return frozenset(int(s) for s in raw.split(",") if s.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected step numbers separated by commas") from None


def nan_steps_for_tests() -> frozenset[int]:
    """The steps whose loss `NAN_STEPS_ENV` turns into NaN (empty unless a test sets it)."""
    return steps_from_env(NAN_STEPS_ENV)


class SkipGuard:
    """Arms the fused AdamW with the step's `found_inf` flag before `optimizer.step()` and collects the flags;
    `flush()` turns them into step numbers. Disabled (every call a no-op) where the optimizer cannot skip."""

    def __init__(self, optimizer: Any, skipped: list[int]):
        inner = getattr(optimizer, "optimizer", optimizer)  # accelerate's AcceleratedOptimizer wraps torch's
        fused = bool(getattr(inner, "defaults", {}).get("fused"))
        self.enabled = fused and getattr(optimizer, "scaler", None) is None
        self.inner = inner
        self.skipped = skipped  # every skipped step so far, this process's and the resumed checkpoint's
        self._pending: list[tuple[int, Any]] = []  # (step number, device flag) not yet read

    def arm(self, norm: Any, step: int) -> Any:
        """Before `optimizer.step()` of 1-based step `step`: a device flag, 1.0 where the update will be
        skipped (None when disabled or without a norm)."""
        if not self.enabled or norm is None:
            return None
        import torch

        flag = (~torch.isfinite(norm)).to(torch.float32)
        self.inner.found_inf = flag
        self._pending.append((step, flag))
        return flag

    def disarm(self) -> None:
        """After `optimizer.step()`: no flag is left for a step that does not set one."""
        self.inner.__dict__.pop("found_inf", None)

    def flush(self) -> list[int]:
        """Read the pending flags (a host sync: call it where the loop syncs anyway); the newly skipped steps,
        also appended to `skipped`."""
        if not self._pending:
            return []
        import torch

        flags = torch.stack([f for _, f in self._pending]).tolist()
        new = [s for (s, _), f in zip(self._pending, flags, strict=True) if f]
        self._pending.clear()
        self.skipped.extend(new)
        return new
