"""Rolling back over bad stretches of training: a loss spike, or several non-finite steps in a row, sends the run
back to its last checkpoint from before the bad step, and the batches read since that checkpoint are skipped.

Why roll back instead of going on. A single non-finite step is skipped where it happens (`pretrain.nonfinite`),
but a spike has already moved the weights, and a run of non-finite steps says the state itself has gone bad.
PaLM (Chowdhery et al. 2022, arXiv 2204.02311, §5.1) met about 20 spikes in a run "despite gradient clipping"
and handled each by restarting about 100 steps before it and skipping 200-500 data batches; the same batches
replayed from the same state did not spike, so the cause is the combination, and skipping the data is enough.
This module does the same, as rules a recipe sets (`PretrainParams`):

- **A spike** is a step whose loss (the mean over the ranks) lies more than `spike_sigmas` standard deviations
  above the mean of the `spike_window` accepted steps before it. The rule and the default 7 sigmas are OLMo 2's
  "spike score" (Team OLMo 2024, "2 OLMo 2 Furious", arXiv 2501.00656, §3.2: values at least 7 standard
  deviations above a rolling average); its window is 1,000 values, ours defaults to 100 because the CPU recipes
  train for 300-3,000 steps. Only once the window is full and warmup is over (the rising learning rate of
  warmup makes the loss jump for reasons of its own); `spike_window: 0` turns it off.
- **Bad steps in a row**: `max_bad_steps` consecutive steps with a non-finite gradient norm (each skipped by
  the optimizer) roll back as well: one is a bad batch, several in a row a bad state.

**Replayable.** The data a step reads is a pure function of its *data step* (`DataSkips`), which equals the
training step until a rollback: after going back from a bad step t to the checkpoint of step c, training step c
reads the data of step t + 1, and so on. The skips are in every checkpoint's `train_state.json`, so a run killed
after a rollback and resumed reads exactly what the uninterrupted run read; and a run killed before its first
checkpoint after a rollback meets the same spike again from the same state, and rolls back the same way.
`max_rollbacks` bounds the retries: past it the run stops with an error naming the steps, instead of looping.

No extra host sync: the per-step losses stay on the device and are read where the loop reads anything (each
log row, each checkpoint: `LossLog.flush`), so a spike is found at most `log_every` steps late; the rollback
then goes to the newest checkpoint at or before the spike, never to one written after it.

Test hook: `KLUE_TEST_SPIKE_STEPS="12"` multiplies the loss of those data steps (1-based, as metrics.jsonl
numbers steps) by `SPIKE_FACTOR`, standing for a batch that makes the loss jump.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pretrain.nonfinite import steps_from_env

SPIKE_STEPS_ENV = "KLUE_TEST_SPIKE_STEPS"
SPIKE_FACTOR = 20.0  # far above 7 sigmas of any window, and the loss stays finite (a spike, not a NaN)


class RollbackLimit(RuntimeError):
    """More rollbacks than `max_rollbacks`: the run stops instead of trying again."""


def spike_steps_for_tests() -> frozenset[int]:
    """The data steps whose loss `SPIKE_STEPS_ENV` multiplies by SPIKE_FACTOR (empty unless a test sets it)."""
    return steps_from_env(SPIKE_STEPS_ENV)


@dataclass
class DataSkips:
    """Which data step each training step reads. `shifts` are (training step, batches skipped from it on),
    in order: data_step(s) = s + the sum of the shifts at or before s."""

    shifts: list[tuple[int, int]] = field(default_factory=list)

    def data_step(self, step: int) -> int:
        return step + sum(n for at, n in self.shifts if step >= at)

    def skip(self, at: int, through_data_step: int) -> tuple[int, int]:
        """From training step `at` on, continue after data step `through_data_step` (0-based): the batches
        data_step(at) .. through_data_step are never trained on; returned as (first, last). Shifts recorded
        at or after `at` are replaced: the training they belonged to was rolled back as well."""
        first = self.data_step(at)
        self.shifts = [(a, n) for a, n in self.shifts if a < at]
        self.shifts.append((at, through_data_step + 1 - self.data_step(at)))
        return first, through_data_step

    def to_json(self) -> list[list[int]]:
        return [[a, n] for a, n in self.shifts]

    @classmethod
    def from_json(cls, rows: list[list[int]] | None) -> DataSkips:
        return cls([(int(a), int(n)) for a, n in rows or []])


@dataclass(frozen=True)
class Verdict:
    """Why the run goes back: at (1-based) step `step`, `reason`; `first` is the first bad step (of a run of
    non-finite ones; the spike itself otherwise): the run goes back to a checkpoint before it."""

    step: int
    reason: str
    first: int


class SpikeWatch:
    """The spike and bad-run rules over the accepted steps' losses (module doc). Fed in step order by
    `LossLog.flush`; its state goes into every checkpoint and comes back with it (`state`, `restore`)."""

    def __init__(self, window: int, sigmas: float, max_bad_steps: int, warmup_steps: int):
        self.window, self.sigmas, self.max_bad, self.warmup = window, sigmas, max_bad_steps, warmup_steps
        self.reset()

    def reset(self) -> None:
        self.losses: list[float] = []
        self.bad_run = 0

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps, so that a resumed run judges the next steps as the uninterrupted one would."""
        return {"window": list(self.losses), "bad_run": self.bad_run}

    def restore(self, state: dict[str, Any] | None) -> None:
        self.reset()
        if state:
            self.losses, self.bad_run = [float(x) for x in state["window"]], int(state["bad_run"])

    def see(self, step: int, loss: float | None) -> Verdict | None:
        """One step (1-based) and its loss; None where its update was skipped (a non-finite gradient norm)."""
        if loss is None or not math.isfinite(loss):
            self.bad_run += 1
            if self.max_bad and self.bad_run >= self.max_bad:
                return Verdict(step, f"{self.bad_run} steps in a row with a non-finite gradient norm",
                               step - self.bad_run + 1)
            return None
        self.bad_run = 0
        if self.window and len(self.losses) >= self.window:
            recent = self.losses[-self.window:]
            mean = sum(recent) / len(recent)
            sd = math.sqrt(sum((x - mean) ** 2 for x in recent) / (len(recent) - 1))
            if loss > mean + self.sigmas * sd:
                return Verdict(step, f"loss spike: {loss:.4g} against a mean of {mean:.4g} (sd {sd:.3g}) over the "
                                     f"{self.window} steps before, more than {self.sigmas:g} sd above", step)
        if step > self.warmup:
            self.losses.append(loss)
            del self.losses[:-self.window or None]
        return None


class LossLog:
    """The per-step losses on the device (no sync), and the skip flags of `pretrain.nonfinite.SkipGuard`, read
    in one go by `flush`: each step's rank-mean loss (None where its update was skipped), fed to the watch."""

    def __init__(self, accelerator: Any, watch: SpikeWatch):
        self.accelerator, self.watch = accelerator, watch
        self._pending: list[tuple[int, Any]] = []

    def add(self, step: int, loss: Any) -> None:
        self._pending.append((step, loss))

    def clear(self) -> None:
        self._pending.clear()

    def flush(self, skipped: list[int]) -> tuple[list[tuple[int, float | None]], Verdict | None]:
        """The pending steps' (step, loss) (one collective over the ranks: the loss every rank sees is the
        same) and the first rollback verdict among them, if any. `skipped`: every step skipped so far."""
        if not self._pending:
            return [], None
        import torch

        stacked = torch.stack([loss for _, loss in self._pending])
        means = self.accelerator.reduce(stacked, "mean").tolist()
        skip = set(skipped)
        rows = [(s, None if s in skip else float(m)) for (s, _), m in zip(self._pending, means, strict=True)]
        self._pending.clear()
        for s, loss in rows:
            verdict = self.watch.see(s, loss)
            if verdict is not None:
                return rows, verdict
        return rows, None
