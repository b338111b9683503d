"""The micro-batches of the pretraining loop: which samples (`pretrain.data.SampleOrder`), masked with the
generator of their coordinates (seed, data step, global micro-batch), moved to the device; on a GPU built one ahead
on a thread.

Apart from the loop because the prefetching is plumbing: what a micro-batch is, is `micro_batch`, a pure
function of its coordinates, whichever way `BatchSource` schedules it.
"""

from __future__ import annotations

from typing import Any

from pretrain.engine import Run


class BatchSource:
    """Micro-batches of (step, micro-batch) on this rank: built on the CPU (masking is a function of the
    coordinates), in pinned memory and copied without blocking on a GPU, where a background thread builds the
    next one while the current one runs. On CPU they are built in line (a thread would only compete)."""

    def __init__(self, run: Run, samples: Any, background: bool | None = None):
        import torch

        self.run, self.samples = run, samples
        self.rank = run.accelerator.process_index
        self.pin = torch.cuda.is_available()
        self._pool: Any = None
        self._next: tuple[tuple[int, int], Any] | None = None
        if background is None:
            background = torch.cuda.is_available()
        if background:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batches")

    def _coords_after(self, s: int, a: int) -> tuple[int, int]:
        return (s, a + 1) if a + 1 < self.run.cfg.grad_accum else (s + 1, 0)

    def _build(self, s: int, a: int) -> tuple[dict[str, Any], int]:
        return micro_batch(self.run, s, a, self.rank, self.samples, self.run.order.indices(s, a, self.rank),
                           pin=self.pin)

    def get(self, s: int, a: int) -> tuple[dict[str, Any], int]:
        """The micro-batch `a` of data step `s` (`pretrain.rollback.DataSkips`) and its number of predicted
        positions. On a GPU the next one is built meanwhile (after the last step, one is built for nothing)."""
        if self._pool is None:
            return self._build(s, a)
        if self._next is not None and self._next[0] == (s, a):
            built = self._next[1].result()
        else:
            built = self._build(s, a)
        nxt = self._coords_after(s, a)
        self._next = (nxt, self._pool.submit(self._build, *nxt))
        return built

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def micro_batch(run: Run, s: int, a: int, r: int, samples: Any, indices: list[int], pin: bool = False
                ) -> tuple[dict[str, Any], int]:
    """Samples `indices`, masked with the generator of coordinates (seed, data step s, global micro-batch of a
    and r), on the device; and how many positions are predicted (counted on the CPU, so the count costs no sync)."""
    # lazy: torch (pretrain.data)
    from pretrain.data import IGNORE, mask_tokens, step_generator

    cfg, dev = run.cfg, run.accelerator.device
    b = samples.batch(indices)
    # (seed, step, global micro-batch, 0): the same masks whatever the world size (pretrain.data)
    ids, labels = mask_tokens(b["input_ids"], run.special, step_generator(cfg.seed, s, run.order.global_micro(a, r), 0),
                             mlm_probability=cfg.mlm_probability, word_starts=b.get("word_starts"),
                             whole_word=cfg.whole_word_mask)
    return to_device({"input_ids": ids, "labels": labels}, b["attention_mask"], dev, pin), \
        int((labels != IGNORE).sum())


def to_device(batch: dict[str, Any], attention_mask: Any, dev: Any, pin: bool) -> dict[str, Any]:
    """A masked batch on the device (the evaluation's too), with its attention mask only when it masks something:
    pinned and copied without blocking when `pin`, so the copy overlaps the step before it."""
    if not bool(attention_mask.all()):  # packed samples need no mask; only the short last one does
        batch["attention_mask"] = attention_mask
    if pin:
        batch = {k: v.pin_memory() for k, v in batch.items()}
    return {k: v.to(dev, non_blocking=pin) for k, v in batch.items()}
