"""What a pretraining run logs and leaves besides its weights: `metrics.jsonl` (one line per logged step,
appended, so a killed run keeps its lines), the trackers (TensorBoard), `summary.json`'s numbers and
`loss_curve.png`.

Its own module so that the loop, the checkpoint code (which trims the lines a resumed run will log again) and
the stage's report read and write the metrics one way.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.hardware import hardware_here
from pretrain.engine import Run
from pretrain.flops import Peak
from pretrain.throughput import Throughput


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The rows of a metrics.jsonl; none for a run that has logged nothing yet (a fresh run resumes from it)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def rewrite_metrics(path: Path, rows: list[dict[str, Any]]) -> None:
    """Replace metrics.jsonl with `rows`, atomically (a resumed run drops the lines of its lost steps)."""
    io.write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def log_row(run: Run, row: dict[str, Any]) -> None:
    """One line of metrics.jsonl (main process) and the same values to the trackers."""
    run.accelerator.log({k: v for k, v in row.items() if k != "step"}, step=row["step"])
    if run.main:
        with open(run.metrics_path, "a", encoding="utf-8") as f:  # appended: a killed run keeps its lines
            f.write(json.dumps(row, sort_keys=True) + "\n")


def summarize(run: Run, step: int, tokens_seen: int, n_params: int, timer: Throughput, peak: Peak | None,
              rank_steps: list[int]) -> dict[str, Any]:
    """The run's summary (summary.json and the stage report) from metrics.jsonl and this process's timer:
    tokens/s and MFU over every timed training step of this process (not a mean of window rates)."""
    metrics = read_metrics(run.metrics_path)
    train_rows = [m for m in metrics if "loss" in m]
    eval_rows = [m for m in metrics if "eval_loss" in m]
    import torch  # here, as in pretrain.engine: reading metrics (the reports) must not load torch

    world = run.accelerator.num_processes
    secs = timer.total_seconds
    precision = run.cfg.resolved_precision()
    return {
        "steps": step,
        "first_loss": train_rows[0]["loss"] if train_rows else None,
        "last_loss": train_rows[-1]["loss"] if train_rows else None,
        "eval_loss": eval_rows[-1]["eval_loss"] if eval_rows else None,
        "eval_mask_loss": eval_rows[-1].get("eval_mask_loss") if eval_rows else None,
        "eval_order_gain": eval_rows[-1].get("eval_order_gain") if eval_rows else None,
        "tokens_per_s": timer.total_tokens * world / secs if secs else None,
        "mfu": timer.total_flops / (secs * peak.flops) if secs and peak else None,
        "peak": {"label": peak.label, "flops_per_s": peak.flops} if peak else None,
        "tokens_seen": tokens_seen,
        "params": n_params,
        "world_size": world,
        # a CPU run's bits depend on it (why: PretrainParams.threads; measured: docs/recipes.md)
        "threads": torch.get_num_threads(),
        # the card's hardware line, from where the main rank ran: a Slurm job's or Ray Train's nodes, not the
        # machine that launched them (torchrun and Ray Train set LOCAL_WORLD_SIZE, the ranks of one node)
        "hardware": hardware_here(world, torch.get_num_threads(),
                                  nodes=max(1, world // int(os.environ.get("LOCAL_WORLD_SIZE") or world))),
        "rank_steps": rank_steps,
        "mixed_precision": run.accelerator.mixed_precision,
        # a CPU run's bits depend on it as on the thread count; `auto` resolves by machine and width
        # (pipeline/hardware.py), and this says which way and why
        "precision": precision.name,
        "precision_why": precision.why,
        # how the encoder computed (pretrain.engine.cpu_kernels): other kernels, other bits
        "kernels": dataclasses.asdict(run.kernels) if run.kernels else None,
        "deepspeed": run.cfg.deepspeed,
        "epochs": run.order.epoch(step),
    }


def plot_loss_curve(metrics: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [(m["step"], m["loss"]) for m in metrics if "loss" in m]
    evals = [(m["step"], m["eval_loss"]) for m in metrics if "eval_loss" in m]
    mask_evals = [(m["step"], m["eval_mask_loss"]) for m in metrics if "eval_mask_loss" in m]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    if train:
        ax.plot(*zip(*train, strict=True), label="train loss")
    if evals:
        ax.plot(*zip(*evals, strict=True), "o-", label="held-out loss")
    if mask_evals:
        ax.plot(*zip(*mask_evals, strict=True), "s--", label="held-out loss at [MASK] inputs")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("MLM cross-entropy (nats)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    order = [(m["step"], m["eval_order_gain"]) for m in metrics if "eval_order_gain" in m]
    if order:  # on its own axis: ~0 (bag of words) until the model leaves the plateau, then rising
        ax2 = ax.twinx()
        (line,) = ax2.plot(*zip(*order, strict=True), "^:", color="tab:red", label="word-order gain (right)")
        ax2.set_ylabel("order gain (nats)")
        handles.append(line)
        labels.append(line.get_label())
    ax.legend(handles, labels, fontsize="small")
    fig.tight_layout()
    with io.atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
