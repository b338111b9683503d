"""Checkpoint IO of the pretraining loop: `checkpoints/step-NNNNNNNN/` written atomically by every rank,
the newest complete one found and loaded on resume.

Its own module so that the loop reads as two calls (`save_checkpoint`, `resume`), and the stage can find a run's
newest checkpoint (`find_checkpoint`) without importing the loop.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline import io
from pretrain.config import CHECKPOINTS, STATE_FILE
from pretrain.engine import Run
from pretrain.metrics import read_metrics, rewrite_metrics


def find_checkpoint(out_dir: Path) -> Path | None:
    """Newest complete checkpoint: a `step-*` folder (renamed into place only once complete)."""
    ckpts = sorted((out_dir / CHECKPOINTS).glob("step-*"))
    ckpts = [c for c in ckpts if (c / STATE_FILE).is_file()]
    return ckpts[-1] if ckpts else None


def save_checkpoint(run: Run, s: int, elapsed: float, tokens: int) -> None:
    """`checkpoints/step-NNNNNNNN/`: model (safetensors; under DeepSpeed its ZeRO shards), optimizer and RNG
    states of every rank, and `train_state.json`; written under a temp name and renamed when complete. Keeps
    `keep_checkpoints`. The last step is checkpointed too, so a finished run can be continued to more steps."""
    accelerator, ckpt_root = run.accelerator, run.out_dir / CHECKPOINTS
    final = ckpt_root / f"step-{s:08d}"
    # Every rank writes into the same folder, so its temp name is one that all ranks agree on (not
    # `io.temp_name`'s per-process one); it still matches `io.is_temp`, so `io.remove_temps` cleans it.
    tmp = ckpt_root / f".{final.name}.tmp-allranks"
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if run.main:
        state = {"step": s, "elapsed_s": elapsed, "tokens": tokens, "world_size": accelerator.num_processes,
                 "per_step": run.order.per_step, "samples_read": s * run.order.per_step}
        io.write_text(tmp / STATE_FILE, json.dumps(state, sort_keys=True) + "\n")
        if final.exists():  # the same step again (a finished run restarted): replace it
            shutil.rmtree(final)
        tmp.rename(final)
        for old in sorted(ckpt_root.glob("step-*"))[:-run.cfg.keep_checkpoints]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()


def resume(run: Run) -> tuple[int, float, int]:
    """(step, elapsed seconds, tokens seen) of the newest complete checkpoint, loaded; (0, 0, 0) without one.
    Drops unfinished checkpoint folders and the metrics lines logged after the checkpoint."""
    accelerator = run.accelerator
    if run.main and (run.out_dir / CHECKPOINTS).is_dir():
        io.remove_temps(run.out_dir / CHECKPOINTS)
    accelerator.wait_for_everyone()
    ckpt = find_checkpoint(run.out_dir)
    if ckpt is None:
        return 0, 0.0, 0
    state = json.loads((ckpt / STATE_FILE).read_text())
    world, per_step = accelerator.num_processes, run.order.per_step
    if state["world_size"] != world or state["per_step"] != per_step:
        raise ValueError(f"{ckpt}: written with world_size={state['world_size']} and "
                         f"{state['per_step']} samples/step; this run has {world} and {per_step}")
    accelerator.load_state(str(ckpt))
    accelerator.print(f"resuming from {ckpt.name} (step {state['step']})")
    if run.main:  # lines logged after the checkpoint belong to the lost part of the run
        rewrite_metrics(run.metrics_path, [m for m in read_metrics(run.metrics_path) if m["step"] <= state["step"]])
    return state["step"], state["elapsed_s"], state["tokens"]
