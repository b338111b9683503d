"""The `pretrain` stage: token shards -> a pretrained encoder (`architecture:`) in `final/`, with metrics.jsonl, TensorBoard logs,
checkpoints and loss_curve.png. The loop itself is `pretrain.train`; this module builds its config from the
stage's params, and runs it in-process or on several ranks through torchrun."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from pipeline import io
from pipeline.hardware import hardware_here, mfu_peak
from pipeline.manifest import environment, upstream
from pipeline.plots import Figure, md_table, panels
from pipeline.release.card import write_model_card
from pipeline.release.facts import hardware_recorded, read_json, sources_of
from pipeline.stage import ArmOutput, Preempted, ReportSection, Stage, StageContext, StageInput, StageResult
from pretrain.architectures import ARCHITECTURES, build_config, parameter_counts
from pretrain.checkpoint import checkpoint_problems, find_checkpoint, verified_checkpoint
from pretrain.config import CHECKPOINTS, STATE_FILE, PretrainParams, RayTrainParams, SlurmParams, TrainConfig
from pretrain.engine import cpu_kernels, deepspeed_config
from pretrain.metrics import read_metrics
from pretrain.preempt import PREEMPTED_FILE
from pretrain.ray_train import describe_workers, run_on_ray
from pretrain.slurm import JOB_FILE, describe_allocation, refuse_active_job, run_on_slurm, status_line
from pretrain.stages.encode import tokenizer_dir
from pretrain.train import train


class PretrainStage(Stage[PretrainParams]):
    """MLM pretraining; resumable: a killed run continues from its newest verified checkpoint in the same folder,
    and a preempted one (SIGTERM/SIGUSR1: `pretrain.preempt`) from the checkpoint it wrote on the way out."""

    name = "pretrain"
    # 2: eval_mask_loss in metrics and summary; 3: eval_order_gain; 4: fp32 export under DeepSpeed, eval masks
    # per sample (rank-independent), tokens/s of training steps only, MFU from counted FLOPs, final checkpoint;
    # 5: the model card (final/README.md, and LICENSE for mixed licences), `hardware` in the meta; 6: fused AdamW
    # (other bits), the precision `auto` resolved and the CPU's MFU in summary.json; 7: masks and dropout by the
    # global micro-batch (other bits on several ranks or with dropout; one process without dropout unchanged),
    # rollbacks over loss spikes, a checkpoint resumed on another world size; 8: `compile`, and a ModernBERT in bf16
    # on a CPU with native bf16 computes attention by matrix products in a compiled encoder (other bits there only)
    version = "8"
    inputs = ("encode", "vocab")
    resumable = True
    variant_field = "architecture"  # `pretrain: [roberta, modernbert]`: one arm per encoder
    replicates = ("seeds", "seed")  # `seeds: [1, 2, 3]`: three pretraining runs, one arm each (pipeline.recipe)
    # where the loop runs (here, a Slurm job: pretrain/slurm.py, Ray Train workers: pretrain/ray_train.py) is not
    # what it writes: out of the key
    layout_params = ("launcher", "slurm", "ray")
    # the checkpoints (model, optimizer and RNG state) and the final weights: nearly all of the folder's bytes,
    # read only to train on or export (`klue gc --weights`); the metrics, loss curve, card and tokenizer stay
    weights = ("checkpoints/*", "final/*.safetensors")

    @classmethod
    def written_from_outside(cls, partial: Path) -> bool:
        """A Slurm job of this folder may still be writing a checkpoint: its temp files are left to
        `pretrain.slurm`, which clears them before it submits again (a re-attached job keeps writing)."""
        return (partial / JOB_FILE).is_file()

    @classmethod
    def progress(cls, partial: Path, params: dict[str, Any]) -> str | None:
        """The loop's step and losses; under `launcher: slurm`, after the job's id and state."""
        job, loop = status_line(partial), cls._loop_progress(partial, params)
        return f"{job}: {loop}" if job else loop

    @classmethod
    def _loop_progress(cls, partial: Path, params: dict[str, Any]) -> str | None:
        cfg_path, metrics = partial / "train_config.json", partial / "metrics.jsonl"
        if not cfg_path.is_file():
            return "starting"
        total = json.loads(cfg_path.read_text(encoding="utf-8")).get("max_steps")
        rows = [json.loads(line) for line in metrics.read_text(encoding="utf-8").splitlines() if line.strip()] \
            if metrics.is_file() else []
        if not rows:
            return f"step 0 of {total}"
        last = rows[-1]
        evals = [r for r in rows if "eval_loss" in r]
        held = f", held-out loss {evals[-1]['eval_loss']:.3f}" if evals else ""
        return (f"step {last['step']} of {total}, loss {last.get('loss', float('nan')):.3f}{held}, "
                f"{last.get('tokens_per_s', 0):,.0f} tokens/s")

    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        """Loss curves of every arm on one set of axes, against tokens seen (training loss, the held-out loss at
        [MASK] inputs, and the word-order gain: what shuffling the context costs the model at [MASK], ~0 while
        it predicts from the bag of words), the summary numbers, and where each arm left the plateau."""
        curves, per_step = _curves(outputs)
        if not curves:
            return None

        def series(key: str) -> dict[str, list[tuple[float, float]]]:
            return {label: [(r["step"] * per_step[label] / 1e6, r[key]) for r in rows if r.get(key) is not None]
                    for label, rows in curves.items()}

        fig = Figure("loss.png", panels([("training loss", series("loss")),
                                         ("held-out loss at [MASK] (nats)", series("eval_mask_loss")),
                                         ("word-order gain (nats)", series("eval_order_gain"))],
                                        xlabel="tokens seen (millions)"),
                     "MLM losses and word-order gain per arm, against tokens seen.")
        keys = ["steps", "tokens_seen", "params", "first_loss", "last_loss", "eval_loss", "eval_mask_loss",
                "eval_order_gain", "tokens_per_s", "mfu", "world_size", "precision", "skipped_updates", "rollbacks"]

        def fmt(v: Any) -> str:
            return "–" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

        body = [[k, *(fmt((o.meta.get("report") or {}).get(k)) for o in outputs)] for k in keys]
        marks = [plateau_marks(curves.get(o.label, []), per_step.get(o.label, 0.0)) for o in outputs]
        body += [[k, *(m[k] for m in marks)] for k in marks[0]]
        return ReportSection("Pretraining", "\n".join(md_table(["", *(o.label for o in outputs)], body)), [fig])

    @classmethod
    def verdict(cls, outputs: list[ArmOutput]) -> list[str]:
        """Whether each arm's model uses word order at the end of pretraining (`order_gain_verdict`): a model
        still in the MLM plateau predicts from the bag of words, which caps what fine-tuning can get from it."""
        curves, per_step = _curves(outputs)
        lines = []
        for o in outputs:
            rows, per = curves.get(o.label, []), per_step.get(o.label, 0.0)
            line = order_gain_verdict(o.meta.get("report") or {}, rows, per)
            if line is not None:
                lines.append(f"{o.label}: {line}" if len(outputs) > 1 else line)
        return lines

    @classmethod
    def card_facts(cls, stage: StageInput) -> dict[str, Any]:
        """The training facts of the model card (pipeline/release/card.py) from a finished folder: the params,
        summary.json, the machine it recorded and the word-order verdict (`run_order_verdict`); the stage's own
        card (`write_card`) states the same from the run it just made."""
        summary = read_json(stage.path / "summary.json")
        return {"train": stage.manifest.get("params") or {}, "summary": summary,
                "hardware": hardware_recorded(stage.meta, summary, stage.manifest),
                "order_verdict": run_order_verdict(stage.path, summary)}

    def describe(self, ctx: StageContext[PretrainParams]) -> dict[str, Any]:
        """The model's shape and exact parameter count (built on PyTorch's meta device: no memory, no
        weights), tokens per optimiser step, steps and tokens, precision and the DeepSpeed config it would use."""
        import torch

        p = ctx.params
        vocab = ctx.inputs["vocab"].meta.get("vocab_size")
        where = "the built vocabulary"
        if vocab is None:
            vocab = _planned_vocab_size(ctx)
            where = "stages.vocab.vocab_size; not built yet"
        config = build_config(p.model, vocab_size=vocab, seq_len=p.seq_len, pad_token_id=1, bos_token_id=0,
                              eos_token_id=2, overrides=dict(p.model_overrides), architecture=p.architecture)
        arch = ARCHITECTURES[p.architecture]
        with torch.device("meta"):
            model = arch.mlm_type()(config)
        n, embed = parameter_counts(model)
        per_step = p.batch_size * p.seq_len * p.grad_accum * p.num_processes
        built = "tokens" in ctx.inputs["encode"].meta
        steps = resolve_steps(ctx, p) if built or p.epochs is None else p.max_steps
        out: dict[str, Any] = {
            "model": f"{p.model} {arch.mlm_class} ({arch.layout}): {config.num_hidden_layers} layers x "
                     f"{config.hidden_size}, "
                     f"{config.num_attention_heads} heads, FFN {config.intermediate_size}, vocabulary "
                     f"{config.vocab_size} ({where}), {config.max_position_embeddings} positions",
            "parameters": f"{n:,} ({n - embed:,} besides the embeddings)",
            "tokens per step": f"{per_step:,} = micro-batch {p.batch_size} x sequence {p.seq_len} x grad_accum "
                               f"{p.grad_accum} x {p.num_processes} process{'es' if p.num_processes > 1 else ''}",
            "steps": f"{steps:,}" + ("" if built or p.epochs is None else
                                     f" (at most; the epochs cap {p.epochs} is applied once encode has run)"),
            "tokens": f"{(steps or 0) * per_step:,}",
        }
        precision = p.resolved_precision()
        out["precision"] = f"{precision.name} ({precision.why})"
        kernels = cpu_kernels(p, precision.name)
        out["kernels"] = (f"attention {kernels.attention or 'as the architecture'}, encoder "
                          f"{'compiled (inductor)' if kernels.compile else 'eager'} ({kernels.why})")
        if p.launcher == "slurm":
            out["launcher"] = describe_allocation(p)
        elif p.launcher == "ray":
            out["launcher"] = f"ray: {describe_workers(p.num_processes, p.ray or RayTrainParams(), p.threads)}"
        if p.deepspeed is not None:  # planned for GPUs, where `auto` is bf16, whatever this machine is
            cfg = TrainConfig.model_validate({**p.model_dump(), "max_steps": steps or 1, "seed": run_seed(ctx),
                                              "encode_dir": "", "tokenizer_dir": "", "out_dir": ""})
            out["deepspeed"] = deepspeed_config(cfg, "bf16" if p.mixed_precision == "auto" else precision.accelerate)
        return out

    def fingerprint(self, ctx: StageContext[PretrainParams]) -> dict[str, Any]:
        """The precision `mixed_precision` resolves to on this machine: `auto` is bf16 on one machine and fp32 on
        another, and a CPU run's bits depend on which."""
        return {"precision": ctx.params.resolved_precision().name}

    def run(self, ctx: StageContext[PretrainParams]) -> StageResult:
        p = ctx.params
        precision = p.resolved_precision()  # what the key holds: the loop trains in it wherever it runs
        cfg = TrainConfig.model_validate({
            **p.model_dump(), "max_steps": resolve_steps(ctx, p), "seed": run_seed(ctx),
            "encode_dir": str(ctx.inputs["encode"].path), "tokenizer_dir": str(tokenizer_dir(ctx)),
            "out_dir": str(ctx.out_dir), "precision": precision.name, "precision_why": precision.why})
        cfg_path = ctx.out_dir / "train_config.json"
        adopted = adopt_other_world(ctx, cfg)
        parent = None if adopted else continue_from_parent(ctx, cfg.max_steps)
        io.write_text(cfg_path, cfg.model_dump_json(indent=1) + "\n")
        if p.launcher != "slurm":
            refuse_active_job(ctx.out_dir)  # a Slurm job still training in this folder: no second run beside it
        if p.launcher == "slurm":  # a job on the allocation of `slurm:`; a rerun re-attaches (pretrain/slurm.py)
            summary = run_on_slurm(cfg, cfg_path, p.slurm or SlurmParams(),
                                   progress=lambda: self._loop_progress(ctx.out_dir, {}))
        elif p.launcher == "ray":  # Ray Train workers on the executor's cluster (pretrain/ray_train.py)
            summary = run_on_ray(cfg, cfg_path, p.ray or RayTrainParams(), ctx.executor,
                                 progress=lambda: self._loop_progress(ctx.out_dir, {}))
        elif p.num_processes == 1 and p.deepspeed is None:
            summary = train(cfg)
        else:
            if not _has_cuda():
                # each rank's MFU divides by the peak at its threads: measured here, alone, before the ranks start
                # (measured by every rank at once, the ranks would share the cores)
                mfu_peak(precision.name, p.threads or rank_threads(p.num_processes))
            launch(cfg_path, p.num_processes, deepspeed=p.deepspeed is not None)
            summary = json.loads((ctx.out_dir / "summary.json").read_text())
        # where the main rank trained (pretrain.metrics.summarize): a Slurm job's or Ray Train's nodes, not this
        # machine; a summary from before it was recorded: this machine, with the thread count rank 0 trained with
        hardware = summary.get("hardware") or hardware_here(p.num_processes, summary.get("threads") or p.threads)
        write_card(ctx, summary, hardware)
        return StageResult(meta={
            "final_dir": "final",
            "hardware": hardware,
            "metrics": "metrics.jsonl",
            "plots": ["loss_curve.png"],
            "report": {k: summary.get(k) for k in ("steps", "first_loss", "last_loss", "eval_loss", "eval_mask_loss",
                                                   "eval_order_gain", "tokens_per_s", "mfu", "tokens_seen",
                                                   "params", "world_size", "precision")}
            | {"skipped_updates": len(summary.get("skipped_steps") or []),  # non-finite steps (pretrain.nonfinite)
               "rollbacks": len(summary.get("rollbacks") or [])},  # spikes and bad runs (pretrain.rollback)
            **({"parent": parent} if parent else {}),
            **({"adopted": adopted} if adopted else {}),
        })


def write_card(ctx: StageContext[PretrainParams], summary: dict[str, Any], hardware: str) -> None:
    """`final/README.md`, the model card of the data and the training (pipeline/release/card.py), and
    `final/LICENSE` when the sources' licences differ. Data facts come from every upstream stage folder
    (`upstream`: this stage's key covers theirs). Nothing outside the key goes in (not the recipe's name, not the
    arm: arms and recipes that agree up to here share this folder); fine-tuning scores come later, from `klue
    export`."""
    write_model_card(ctx.out_dir / "final", upstream(ctx.inputs), name=None, recipe=None,
                     sources=sources_of(list(ctx.recipe.sources)), train=ctx.params.model_dump(mode="json"),
                     summary=summary, hardware=hardware, order_verdict=run_order_verdict(ctx.out_dir, summary),
                     provenance={"klue-pipeline": environment()["klue_version"]})


# Where a run leaves the MLM plateau (docs/experiments/2026-11-30-plateau.md): the first evaluation whose order
# gain reaches this many nats, and the [MASK] loss at these token counts (the plateau study's columns: ~1, 2
# and 5.5k steps of 2,048).
EXIT_GAIN = 0.5
MILESTONES = (2_000_000, 4_000_000, 11_000_000)
EXIT_MARK = f"order gain >= {EXIT_GAIN} at (tokens)"  # plateau_marks' row: where the run left the plateau


def plateau_marks(rows: list[dict[str, Any]], tokens_per_step: float) -> dict[str, str]:
    """Table cells from an arm's metrics.jsonl rows: tokens until `eval_order_gain` >= EXIT_GAIN, and
    `eval_mask_loss` at the first evaluation at or past each of MILESTONES ("–" where the run stopped short)."""
    evals = [(r["step"] * tokens_per_step, r) for r in rows if r.get("eval_mask_loss") is not None]
    exit_at = next((t for t, r in evals if (r.get("eval_order_gain") or 0.0) >= EXIT_GAIN), None)
    seen = evals[-1][0] if evals else 0
    out = {EXIT_MARK: f"{exit_at / 1e6:.2f}M" if exit_at is not None
           else (f"not by {seen / 1e6:.2f}M" if evals else "–")}
    for m in MILESTONES:
        hit = next((r for t, r in evals if t >= m), None)
        out[f"[MASK] loss at {m / 1e6:g}M tokens"] = "–" if hit is None else f"{hit['eval_mask_loss']:.3f}"
    return out


def order_gain_verdict(report: dict[str, Any], rows: list[dict[str, Any]], tokens_per_step: float) -> str | None:
    """The verdict line on word order from a run's summary (`report`: eval_order_gain, tokens_seen) and its
    metrics.jsonl rows (where the gain first reached EXIT_GAIN, `plateau_marks`). The final gain decides: at
    least EXIT_GAIN nats means shuffling the context costs the model, so it reads word order; below it, the
    model is still in the MLM plateau (docs/experiments/2026-11-30-plateau.md). None without an order-gain
    evaluation."""
    gain = report.get("eval_order_gain")
    if gain is None:
        return None
    head = f"Order gain {gain:.2f} nats at the end of pretraining ({_tokens(report.get('tokens_seen') or 0)} tokens"
    if gain < EXIT_GAIN:
        return f"{head}), below {EXIT_GAIN}: still in the MLM plateau, the model does not use word order yet."
    first = plateau_marks(rows, tokens_per_step)[EXIT_MARK]
    since = f"; it first reached {EXIT_GAIN} at {first}" if first[0].isdigit() else ""
    return f"{head}{since}): the model uses word order."


def run_order_verdict(run_dir: Path, summary: dict[str, Any]) -> str | None:
    """`order_gain_verdict` of a finished run folder: its summary.json and metrics.jsonl (none: no marks)."""
    rows = read_metrics(run_dir / "metrics.jsonl") if (run_dir / "metrics.jsonl").is_file() else []
    per_step = summary["tokens_seen"] / summary["steps"] if summary.get("steps") else 0.0
    return order_gain_verdict(summary, rows, per_step)


def _tokens(n: float) -> str:
    """A token count as the plateau rows write it (2.05M), in thousands or units below a million (a smoke run's
    few steps would read 0.00M)."""
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else f"{n:.0f}"


def _curves(outputs: list[ArmOutput]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, float]]:
    """Each arm's metrics.jsonl rows and tokens per optimiser step, by arm label (arms without the file are
    left out)."""
    curves: dict[str, list[dict[str, Any]]] = {}
    per_step: dict[str, float] = {}
    for o in outputs:
        path = o.path / o.meta.get("metrics", "metrics.jsonl")
        rep = o.meta.get("report") or {}
        if path.is_file():
            curves[o.label] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                               if line.strip()]
            per_step[o.label] = rep["tokens_seen"] / rep["steps"] if rep.get("steps") else 0.0
    return curves, per_step


# params a parent may differ in: the length, and where it ran (layout params; manifests written before they
# existed lack them)
_NOT_COMPARED = ("max_steps", *PretrainStage.layout_params)


def continue_from_parent(ctx: StageContext[PretrainParams], max_steps: int) -> dict[str, Any] | None:
    """A longer run of a finished pretraining continues from it instead of starting over.

    The parent is a finished folder of this workdir's `pretrain` stage whose manifest has this stage's version,
    seed, input keys and params except `max_steps`, which is smaller than this run's: its newest checkpoint and
    its metrics are copied into this (empty) folder, and the loop resumes there as after a kill. The learning
    rate then follows this run's schedule from the parent's last step (warmup is over; the linear decay now
    ends at the new `max_steps`), so the result is not the bytes of a run trained this long from the start:
    the new key is its own, and `meta.parent` records the folder and step it grew from.
    """
    import shutil

    if find_checkpoint(ctx.out_dir) is not None:  # a killed run of this key: it resumes from its own checkpoint
        return None
    mine = {k: v for k, v in ctx.params.model_dump(mode="json").items() if k not in _NOT_COMPARED}
    best: tuple[int, Path, dict[str, Any]] | None = None
    # the finished runs of this stage with this version, seed and inputs (the runner's cache); here, those whose
    # params differ in `max_steps` (or layout) only
    for folder, m in ctx.finished_runs(PretrainStage):
        theirs = {k: v for k, v in (m.get("params") or {}).items() if k not in _NOT_COMPARED}
        if theirs != mine:
            continue
        ckpt = find_checkpoint(folder)
        step = json.loads((ckpt / "train_state.json").read_text())["step"] if ckpt else 0
        if ckpt is not None and step < max_steps and (best is None or step > best[0]):
            problems = checkpoint_problems(ckpt)  # a finished folder is not touched: a bad one is passed over
            if problems:
                warnings.warn(f"{ckpt}: not continued from, it failed verification: {'; '.join(problems)}",
                              stacklevel=2)
                continue
            best = (step, ckpt, m)
    if best is None:
        return None
    step, ckpt, m = best
    shutil.copytree(ckpt, ctx.out_dir / CHECKPOINTS / ckpt.name)
    shutil.copy2(ckpt.parent.parent / "metrics.jsonl", ctx.out_dir / "metrics.jsonl")
    return {"key": m["key"], "folder": ckpt.parent.parent.name, "step": step}


# TrainConfig fields a run may change when it resumes another run's checkpoint on another number of processes:
# how the global batch is cut (pretrain.data: the same micro-batches whatever the world size), the threads, and
# what only tests set
_WORLD_FIELDS = frozenset({"num_processes", "grad_accum", "threads", "out_dir", "halt_after_step", "clock_offset_s"})


def adopt_other_world(ctx: StageContext[PretrainParams], cfg: Any) -> dict[str, Any] | None:
    """A run interrupted on N processes goes on here on M (`num_processes` is in the key, so M has a folder of
    its own): its newest verified checkpoint and its metrics are copied into this (empty) folder, and the loop
    resumes from them (`pretrain.checkpoint.resume` loads a checkpoint of another world size).

    The interrupted run is a `.partial` folder of this stage beside this one whose `train_config.json` equals
    this run's but for how the global batch is cut over the processes (`_WORLD_FIELDS`), with the same
    micro-batch and global batch. Only unfinished runs: a finished one's bytes are its own key's. The result is
    the N-process run continued on M processes, equal to neither up to the order of float sums; `meta.adopted`
    records the folder, step and world size it came from."""
    if find_checkpoint(ctx.out_dir) is not None:  # a killed run of this key: it resumes from its own checkpoint
        return None
    mine = {k: v for k, v in cfg.model_dump(mode="json").items() if k not in _WORLD_FIELDS}
    global_batch = cfg.batch_size * cfg.grad_accum * cfg.num_processes
    best: tuple[int, Path, dict[str, Any]] | None = None
    for folder in ctx.interrupted_runs():  # this stage's `.partial` folders of other keys (the runner's)
        if not (folder / "train_config.json").is_file():
            continue
        try:
            theirs = TrainConfig.model_validate_json((folder / "train_config.json").read_text(encoding="utf-8"))
        except ValueError:
            continue
        if ({k: v for k, v in theirs.model_dump(mode="json").items() if k not in _WORLD_FIELDS} != mine
                or theirs.batch_size * theirs.grad_accum * theirs.num_processes != global_batch
                or theirs.num_processes == cfg.num_processes):
            continue
        ckpt = verified_checkpoint(folder)
        state = json.loads((ckpt / STATE_FILE).read_text()) if ckpt else {}
        if ckpt is not None and "micro_batch" in state and (best is None or state["step"] > best[0]):
            best = (state["step"], ckpt, state)
    if best is None:
        return None
    step, ckpt, state = best
    shutil.copytree(ckpt, ctx.out_dir / CHECKPOINTS / ckpt.name)
    if (ckpt.parent.parent / "metrics.jsonl").is_file():
        shutil.copy2(ckpt.parent.parent / "metrics.jsonl", ctx.out_dir / "metrics.jsonl")
    print(f"pretrain: continuing {ckpt.parent.parent.name} (step {step}, {state['world_size']} processes) on "
          f"{cfg.num_processes}", flush=True)
    return {"folder": ckpt.parent.parent.name, "step": step, "world_size": state["world_size"]}


def _planned_vocab_size(ctx: StageContext[PretrainParams]) -> int:
    """The vocab stage's requested size, for a dry run before it has run (special tokens included)."""
    stages = getattr(ctx.recipe, "stages", {})
    vocab = stages.get("vocab")
    if vocab is None or not hasattr(vocab, "vocab_size"):
        raise ValueError("no vocab stage params in the recipe to size the model from")
    return int(vocab.vocab_size)


def run_seed(ctx: StageContext[PretrainParams]) -> int:
    """The seed this pretraining run trains with: its own (a replicate's) or the recipe's."""
    return ctx.params.seed if ctx.params.seed is not None else ctx.seed


def resolve_steps(ctx: StageContext[PretrainParams], p: PretrainParams) -> int:
    """max_steps, capped by `epochs` passes over the packed training samples (the smaller wins)."""
    steps = []
    if p.max_steps is not None:
        steps.append(p.max_steps)
    if p.epochs is not None:
        tokens = ctx.inputs["encode"].meta["tokens"]["train"]
        samples = math.ceil(tokens / (p.seq_len - 2))
        steps.append(max(1, math.ceil(p.epochs * samples / (p.batch_size * p.grad_accum * p.num_processes))))
    if not steps:
        raise ValueError("pretrain: set max_steps, epochs, or both")
    return min(steps)


# How long torchrun lets its workers finish after forwarding a signal before it SIGKILLs them (its default is 30 s):
# long enough for a preemption checkpoint of a large model; the scheduler's own grace period is the real bound.
SHUTDOWN_TIMEOUT_S = 600
FORWARDED = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT, signal.SIGHUP)  # passed on from `klue run` to torchrun


def launch(cfg_path: Path, num_processes: int, *, deepspeed: bool = False) -> None:
    """Run `python -m pretrain.train CONFIG` on `num_processes` ranks with torchrun (a real process per rank).

    Not `accelerate launch --cpu`: with --cpu it silently starts a single process. torchrun sets the rank
    environment that `Accelerator` reads; on a CPU-only machine that selects gloo (DeepSpeed: its CPU
    accelerator, `DS_ACCELERATOR=cpu`).

    Preemption: torchrun runs in a session of its own, and SIGTERM, SIGUSR1, SIGINT and SIGHUP sent to this
    process are passed on to it once each; torchrun relays them to every rank (SIGUSR1 too:
    `--signals-to-handle`) and waits `SHUTDOWN_TIMEOUT_S` for them (its ranks run in sessions of their own, so
    only torchrun can reach them). Its own session means one signal to this process's group reaches torchrun
    once, from here, not twice (torchrun's handler raises on every signal, even while it shuts down). The ranks
    write their checkpoint and exit with EXIT_PREEMPTED, which torchrun reports as a plain failure, so the main
    rank's `preempted.json` is what says it: then this raises `Preempted`.
    """
    env = dict(os.environ)
    if "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(rank_threads(num_processes))
    if deepspeed and not _has_cuda():
        env.setdefault("DS_ACCELERATOR", "cpu")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
                "--nproc_per_node", str(num_processes), "--signals-to-handle", "SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1",
                "--shutdown-timeout", str(SHUTDOWN_TIMEOUT_S)]
    cmd = [*torchrun, "-m", "pretrain.train", str(cfg_path)]
    marker = cfg_path.parent / PREEMPTED_FILE
    marker.unlink(missing_ok=True)
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    with forward_signals(proc, FORWARDED) as received:
        returncode = proc.wait()
    if returncode == 0:
        return
    if marker.is_file():
        raise Preempted(json.loads(marker.read_text(encoding="utf-8"))["message"])
    if signal.SIGINT in received:
        raise KeyboardInterrupt
    raise RuntimeError(f"pretraining on {num_processes} processes failed (exit {returncode}): {' '.join(cmd)}")


@contextmanager
def forward_signals(proc: subprocess.Popen[bytes], signals: tuple[signal.Signals, ...]) -> Iterator[set[int]]:
    """While the block runs, pass each of `signals` that this process receives on to `proc` (once per signal:
    torchrun's handler raises on every signal, and a repeat would interrupt the shutdown the first one started),
    instead of dying and leaving `proc` running. Yields the set of signals received; restores the previous
    handlers after. Outside the main thread Python cannot install handlers: then it forwards nothing."""
    received: set[int] = set()

    def forward(signum: int, frame: FrameType | None) -> None:
        if signum not in received and proc.poll() is None:
            proc.send_signal(signum)
        received.add(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, forward) for sig in signals}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def rank_threads(num_processes: int) -> int:
    """The torch threads of each torchrun rank: `OMP_NUM_THREADS` when set, else the cores shared out."""
    env = os.environ.get("OMP_NUM_THREADS")
    return int(env) if env and env.isdigit() else max(1, (os.cpu_count() or 1) // num_processes)


def _has_cuda() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    import torch

    return torch.cuda.is_available()
