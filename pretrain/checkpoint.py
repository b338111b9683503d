"""Checkpoint IO of the pretraining loop: `checkpoints/step-NNNNNNNN/` written atomically by every rank,
the newest complete and verified one found and loaded on resume.

Integrity: `train_state.json` records every file of its checkpoint (relative path, bytes, sha256), hashed by the
main rank once every rank has written. A resume checks the newest checkpoint against that table and, when a file
is missing or differs (a disk that lost a block, a copy cut short, a file edited by hand), warns naming the file,
moves the folder aside as `rejected-step-NNNNNNNN` and falls back to the one before, and so on; with none left it
starts over. A bad checkpoint found this way costs `checkpoint_every` steps instead of the whole run.

Its own module so that the loop reads as two calls (`save_checkpoint`, `resume`), and the stage can find a run's
newest checkpoint (`find_checkpoint`) without importing the loop.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.manifest import sha256_file
from pretrain.config import CHECKPOINTS, STATE_FILE
from pretrain.engine import Run
from pretrain.metrics import read_metrics, rewrite_metrics

FILES = "files"  # train_state.json's table of the checkpoint's files: relative path -> {bytes, sha256}
REJECTED = "rejected-"  # prefix of a checkpoint folder that failed verification (kept to look at, never loaded)


class CheckpointWarning(UserWarning):
    """A checkpoint failed verification on resume and was passed over."""


def find_checkpoint(out_dir: Path) -> Path | None:
    """Newest complete checkpoint: a `step-*` folder (renamed into place only once complete)."""
    ckpts = sorted((out_dir / CHECKPOINTS).glob("step-*"))
    ckpts = [c for c in ckpts if (c / STATE_FILE).is_file()]
    return ckpts[-1] if ckpts else None


def checkpoint_path(out_dir: Path, step: int) -> Path:
    """Where the checkpoint of `step` goes: `<out_dir>/checkpoints/step-NNNNNNNN` (zero-padded: sorts by step)."""
    return out_dir / CHECKPOINTS / f"step-{step:08d}"


def save_checkpoint(run: Run, s: int, elapsed: float, tokens: int, skipped: Sequence[int] = (),
                    extra: dict[str, Any] | None = None) -> None:
    """`checkpoints/step-NNNNNNNN/`: model (safetensors; under DeepSpeed its ZeRO shards), optimizer and RNG
    states of every rank, and `train_state.json` with the steps whose update was skipped (`skipped`:
    pretrain.nonfinite), `extra` (the rollbacks and data skips: pretrain.rollback) and the table of those files
    (`FILES`); written under a temp name and renamed when
    complete. Keeps `keep_checkpoints`, pruning only once the new one is in place and checked, and never the new
    one. The last step is checkpointed too, so a finished run can be continued to more steps."""
    accelerator, ckpt_root = run.accelerator, run.out_dir / CHECKPOINTS
    final = checkpoint_path(run.out_dir, s)
    # Every rank writes into the same folder, so its temp name is one that all ranks agree on (not
    # `io.temp_name`'s per-process one); it still matches `io.is_temp`, so `io.remove_temps` cleans it.
    tmp = ckpt_root / f".{final.name}.tmp-allranks"
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()  # every rank's files are on disk: the table below covers them all
    if run.main:
        state = {"step": s, "elapsed_s": elapsed, "tokens": tokens, "world_size": accelerator.num_processes,
                 "per_step": run.order.per_step, "micro_batch": run.cfg.batch_size, "grad_accum": run.cfg.grad_accum,
                 "samples_read": s * run.order.per_step, "skipped_steps": list(skipped), **(extra or {}),
                 FILES: file_records(tmp)}
        io.write_text(tmp / STATE_FILE, json.dumps(state, sort_keys=True) + "\n")
        if final.exists():  # the same step again (a finished run restarted): replace it
            shutil.rmtree(final)
        tmp.rename(final)
        # Sizes only: the hashes were computed from these very bytes a moment ago; this catches a rename or a
        # file system that lost a file on the way, before older (good) checkpoints are pruned.
        problems = checkpoint_problems(final, hashes=False)
        if problems:
            raise RuntimeError(f"{final}: checkpoint incomplete after writing it: {'; '.join(problems)}")
        prune(ckpt_root, final, run.cfg.keep_checkpoints)
    accelerator.wait_for_everyone()


def prune(ckpt_root: Path, newest: Path, keep: int) -> None:
    """Delete all but the `keep` newest checkpoints, never `newest` (the one just written and checked): a
    resume moves failed checkpoints aside, so the newest on disk is a verified one and at least it stays."""
    for old in sorted(ckpt_root.glob("step-*"))[:-keep]:
        if old != newest:
            shutil.rmtree(old, ignore_errors=True)


def file_records(folder: Path) -> dict[str, dict[str, Any]]:
    """relative path -> {bytes, sha256} of every file of a checkpoint folder but its state file (which holds
    this table)."""
    out: dict[str, dict[str, Any]] = {}
    for p in sorted(folder.rglob("*"), key=lambda q: q.relative_to(folder).as_posix()):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel != STATE_FILE:
            out[rel] = {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
    return out


def checkpoint_problems(ckpt: Path, *, hashes: bool = True) -> list[str]:
    """What is wrong with a checkpoint folder against the file table in its state file, one line per file
    naming it and what differs; [] when it is verified. `hashes=False` checks presence and sizes only."""
    try:
        state = json.loads((ckpt / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return [f"{ckpt / STATE_FILE}: unreadable ({e})"]
    files = state.get(FILES)
    if files is None:
        # Written before checkpoints recorded their files: nothing to check against, trusted as it always was.
        return []
    problems = []
    for rel, info in sorted(files.items()):
        p = ckpt / rel
        if not p.is_file():
            problems.append(f"{p}: missing")
            continue
        size = p.stat().st_size
        if size != info["bytes"]:
            problems.append(f"{p}: {size} bytes, {info['bytes']} when written")
        elif hashes and (digest := sha256_file(p)) != info["sha256"]:
            problems.append(f"{p}: sha256 {digest[:16]}..., {info['sha256'][:16]}... when written")
    return problems


def verified_checkpoint(out_dir: Path, at_most: int | None = None) -> Path | None:
    """The newest complete checkpoint (of a step <= `at_most`, when given) whose files match their table; each
    newer one that does not is warned about (naming the file and what differs) and moved aside as
    `rejected-step-NNNNNNNN`, so that neither a later resume nor `keep_checkpoints` pruning counts it. None (with
    a warning when some were rejected): no usable checkpoint, the run starts over. Main rank only: it renames
    folders."""
    ckpt_root = out_dir / CHECKPOINTS
    rejected = 0
    while True:
        found = [c for c in sorted(ckpt_root.glob("step-*")) if (c / STATE_FILE).is_file()
                 and (at_most is None or int(c.name.removeprefix("step-")) <= at_most)]
        if not found:
            break
        ckpt = found[-1]
        problems = checkpoint_problems(ckpt)
        if not problems:
            return ckpt
        rejected += 1
        aside = ckpt_root / f"{REJECTED}{ckpt.name}"
        if aside.exists():
            shutil.rmtree(aside)
        ckpt.rename(aside)
        warnings.warn(f"checkpoint {ckpt} failed verification, moved aside to {aside.name} and passed over: "
                      + "; ".join(problems), CheckpointWarning, stacklevel=2)
    if rejected:
        warnings.warn(f"no checkpoint in {ckpt_root} passed verification: training starts from step 0",
                      CheckpointWarning, stacklevel=2)
    return None


def resume(run: Run, at_most: int | None = None) -> dict[str, Any] | None:
    """Load the newest complete, verified checkpoint (of a step <= `at_most`: a rollback's, which deletes the
    checkpoints after it) and return its
    `train_state.json`; None without one. Drops unfinished checkpoint folders, moves failed ones aside
    (`verified_checkpoint`), and drops the metrics lines logged after the checkpoint. The main rank verifies and
    tells the others which one.

    Another world size: a checkpoint of N ranks loads on M ranks when the micro-batch and the global batch are
    the same (so `grad_accum` went from A to A * N / M): the data order, masks and dropout are functions of the
    global micro-batch (`pretrain.data`), so the run goes on as N ranks would have, up to the order of
    floating-point sums. Plain DDP state is the same on every rank and loads as it is; a DeepSpeed ZeRO
    checkpoint is partitioned by rank, so it is first converted to DeepSpeed's universal checkpoint
    (`to_universal`) and loaded from that."""
    from accelerate.utils import broadcast_object_list

    accelerator = run.accelerator
    chosen: list[str | None] = [None]
    if run.main and (run.out_dir / CHECKPOINTS).is_dir():
        io.remove_temps(run.out_dir / CHECKPOINTS)
        if at_most is not None:  # a rollback: checkpoints after the bad step are of training it abandons
            for later in sorted((run.out_dir / CHECKPOINTS).glob("step-*")):
                if int(later.name.removeprefix("step-")) > at_most:
                    shutil.rmtree(later)
        found = verified_checkpoint(run.out_dir, at_most)
        chosen = [found.name if found is not None else None]
    accelerator.wait_for_everyone()
    broadcast_object_list(chosen, from_process=0)
    if chosen[0] is None:
        return None
    ckpt = run.out_dir / CHECKPOINTS / chosen[0]
    state = json.loads((ckpt / STATE_FILE).read_text())
    world, per_step = accelerator.num_processes, run.order.per_step
    if state["per_step"] != per_step:
        raise ValueError(f"{ckpt}: written with {state['per_step']} samples per step (the global batch); this "
                         f"run has {per_step}: set batch_size and grad_accum so that batch_size x grad_accum x "
                         f"processes is {state['per_step']}")
    if state["world_size"] != world:
        if state.get("micro_batch") != run.cfg.batch_size:
            raise ValueError(f"{ckpt}: written by {state['world_size']} ranks with micro-batch "
                             f"{state.get('micro_batch', '(not recorded: an older checkpoint)')}; resuming on "
                             f"{world} ranks needs the same micro-batch ({run.cfg.batch_size} here) and grad_accum "
                             f"{state.get('grad_accum', '?')} x {state['world_size']} / {world}")
        accelerator.print(f"{ckpt.name}: written by {state['world_size']} ranks, resumed on {world} (grad_accum "
                          f"{state.get('grad_accum')} -> {run.cfg.grad_accum}, the same global batch)")
    if state["world_size"] != world and run.cfg.deepspeed:
        load_universal(run, ckpt)
    else:
        accelerator.load_state(str(ckpt))
    # accelerate counts micro-batches to know when to step (`accumulate`), and load_state restored the count of
    # the run that wrote the checkpoint: with another grad_accum it would step mid-batch
    accelerator.step = state["step"] * run.cfg.grad_accum
    accelerator.print(f"resuming from {ckpt.name} (step {state['step']})")
    if run.main:  # lines logged after the checkpoint belong to the lost part of the run
        rewrite_metrics(run.metrics_path, [m for m in read_metrics(run.metrics_path) if m["step"] <= state["step"]])
    return state


UNIVERSAL = "universal"  # the tag of a ZeRO checkpoint converted to DeepSpeed's universal format


def to_universal(ckpt: Path) -> Path:
    """`ckpt`'s ZeRO checkpoint (accelerate's `pytorch_model` tag) converted to DeepSpeed's universal checkpoint
    (DeepSpeed's own `ds_to_universal`; Lian et al. 2024, "Universal Checkpointing", arXiv 2406.18820), written
    under a temp name in the checkpoint folder's parent and returned; the caller removes it. Its files are not in
    the checkpoint's file table: the table verified the ZeRO shards this is made from."""
    import argparse

    from deepspeed.checkpoint.ds_to_universal import main as ds_to_universal

    out = ckpt.parent / f".{ckpt.name}-{UNIVERSAL}.tmp-allranks"
    if out.exists():
        shutil.rmtree(out)
    args = argparse.Namespace(input_folder=str(ckpt / "pytorch_model"), output_folder=str(out / UNIVERSAL),
                              num_extract_workers=1, num_merge_workers=1, keep_temp_folder=False, strict=True,
                              inject_missing_state=True)
    ds_to_universal(args)
    return out


def load_universal(run: Run, ckpt: Path) -> None:
    """Load a ZeRO checkpoint written by another number of ranks: the main rank converts it (`to_universal`),
    every rank loads its own partition of the result through the DeepSpeed engine, and the conversion is
    removed. The generators need nothing: dropout and masks are seeded per micro-batch (`pretrain.data`)."""
    from accelerate.utils import broadcast_object_list

    accelerator, engine = run.accelerator, run.model
    where: list[str | None] = [str(to_universal(ckpt)) if run.main else None]
    accelerator.wait_for_everyone()
    broadcast_object_list(where, from_process=0)
    universal = Path(str(where[0]))
    engine._config.load_universal_checkpoint = True  # DeepSpeed reads the flag from its config at load time
    try:
        engine.load_checkpoint(str(universal), tag=UNIVERSAL, load_module_strict=True)
    finally:
        engine._config.load_universal_checkpoint = False
    accelerator.wait_for_everyone()
    if run.main:
        shutil.rmtree(universal, ignore_errors=True)
