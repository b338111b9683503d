"""The `encode` and `pretrain` stages: corpus shards -> token shards -> a pretrained RoBERTa in `final/`.

Kept light at import time (no torch): the runner imports stage classes to validate recipes and compute keys.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from pipeline.stage import Funnel, Stage, StageContext, StageParams, StageResult


class EncodeParams(StageParams):
    eval_fraction: float = Field(0.01, ge=0.0, lt=1.0, description="share of documents held out (by id hash)")
    word_info: bool = Field(True, description="store eojeol starts for whole-word masking (1 byte per token)")


class EncodeStage(Stage):
    """Tokenize the final corpus with the stage-3 tokenizer into memory-mappable token shards."""

    name: ClassVar[str] = "encode"
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ("pii", "vocab")
    params_model: ClassVar[type[StageParams]] = EncodeParams

    def run(self, ctx: StageContext) -> StageResult:
        from corpora.shards import list_shards
        from pretrain.encode import ShardTask, encode_shard, load_tokenizer, write_index

        p: EncodeParams = ctx.params  # type: ignore[assignment]
        tok_dir = tokenizer_dir(ctx)
        shards = list_shards(ctx.inputs["pii"].path)
        if not shards:
            raise FileNotFoundError(f"{ctx.inputs['pii'].path}: no document shards (shard-*.parquet)")
        tok = load_tokenizer(tok_dir)
        tasks = [ShardTask(s, ctx.out_dir, tok_dir, ctx.seed, p.eval_fraction, p.word_info) for s in shards]
        results = list(ctx.map(encode_shard, tasks, desc="encode"))
        funnel, by_source = Funnel(), {}
        for r in results:
            funnel.add(r.funnel)
            for src, f in r.by_source.items():
                by_source.setdefault(src, Funnel()).add(f)
        special = {name: getattr(tok, f"{name}_token_id") for name in ("cls", "pad", "sep", "unk", "mask")}
        index = write_index(ctx.out_dir, results, vocab_size=len(tok), word_info=p.word_info,
                            special_ids=special)
        totals = {s: sum(x["tokens"] for x in index["splits"][s]) for s in index["splits"]}
        docs = {s: sum(x["docs"] for x in index["splits"][s]) for s in index["splits"]}
        meta = {"index": "index.json", "dtype": index["dtype"], "vocab_size": len(tok), "tokens": totals,
                "docs": docs, "word_info": p.word_info,
                "report": {"train_tokens": totals["train"], "eval_tokens": totals["eval"],
                           "tokens_per_doc": totals["train"] / max(1, docs["train"])}}
        return StageResult(funnel=funnel, by_source=dict(sorted(by_source.items())), meta=meta)


def tokenizer_dir(ctx: StageContext) -> Path:
    vocab = ctx.inputs["vocab"]
    sub = vocab.meta.get("tokenizer_dir")
    if not sub:
        raise KeyError(f"{vocab.path}: the vocab manifest has no meta['tokenizer_dir']")
    return vocab.path / sub


class PretrainParams(StageParams):
    model: Literal["tiny", "small", "base", "large"] = "tiny"
    model_overrides: dict[str, int | float] = Field(default_factory=dict,
                                                    description="RobertaConfig fields, e.g. num_hidden_layers")
    seq_len: int = Field(128, ge=8)
    batch_size: int = Field(32, ge=1, description="micro-batch per process")
    grad_accum: int = Field(1, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = 0.01
    warmup_steps: int = Field(50, ge=0)
    max_steps: int | None = Field(500, ge=1)
    epochs: float | None = Field(None, gt=0, description="cap on passes over the training tokens")
    time_budget_s: float | None = Field(None, gt=0, description="wall-clock budget; the LR decays to it")
    max_grad_norm: float = 1.0
    mlm_probability: float = Field(0.15, gt=0, lt=1)
    whole_word_mask: bool = False
    eval_every: int = Field(100, ge=1)
    eval_batches: int = Field(10, ge=1)
    log_every: int = Field(10, ge=1)
    checkpoint_every: int = Field(100, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    num_processes: int = Field(1, ge=1, description="1: in-process; >1: torchrun (gloo on CPU, nccl on GPU)")
    deepspeed: Literal["zero1", "zero2", "zero3"] | None = None
    mixed_precision: Literal["auto", "no", "bf16", "fp16"] = "auto"
    threads: int | None = Field(None, ge=1, description="torch threads per process (default: torch's)")


class PretrainStage(Stage):
    """MLM pretraining; resumable: a killed run continues from its newest checkpoint in the same folder."""

    name: ClassVar[str] = "pretrain"
    version: ClassVar[str] = "3"  # 2: eval_mask_loss in metrics and summary; 3: eval_order_gain
    inputs: ClassVar[tuple[str, ...]] = ("encode", "vocab")
    params_model: ClassVar[type[StageParams]] = PretrainParams
    resumable: ClassVar[bool] = True
    variant_field: ClassVar[str] = "model"

    def run(self, ctx: StageContext) -> StageResult:
        from pretrain.train import TrainConfig

        p: PretrainParams = ctx.params  # type: ignore[assignment]
        cfg = TrainConfig(
            encode_dir=str(ctx.inputs["encode"].path), tokenizer_dir=str(tokenizer_dir(ctx)),
            out_dir=str(ctx.out_dir), seed=ctx.seed, model_size=p.model, model_overrides=dict(p.model_overrides),
            seq_len=p.seq_len, micro_batch_size=p.batch_size, grad_accum=p.grad_accum, lr=p.lr,
            weight_decay=p.weight_decay, warmup_steps=p.warmup_steps, max_steps=resolve_steps(ctx, p),
            time_budget_s=p.time_budget_s, max_grad_norm=p.max_grad_norm, mlm_probability=p.mlm_probability,
            whole_word_mask=p.whole_word_mask, eval_every=p.eval_every, eval_batches=p.eval_batches,
            log_every=p.log_every, checkpoint_every=p.checkpoint_every, keep_checkpoints=p.keep_checkpoints,
            deepspeed=p.deepspeed, mixed_precision=p.mixed_precision, threads=p.threads,
        )
        cfg_path = ctx.out_dir / "train_config.json"
        tmp = cfg_path.with_name(".train_config.json.tmp")
        tmp.write_text(cfg.model_dump_json(indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, cfg_path)
        if p.num_processes == 1 and p.deepspeed is None:
            from pretrain.train import train

            summary = train(cfg)
        else:
            launch(cfg_path, p.num_processes, deepspeed=p.deepspeed is not None)
            summary = json.loads((ctx.out_dir / "summary.json").read_text())
        return StageResult(meta={
            "final_dir": "final",
            "metrics": "metrics.jsonl",
            "plots": ["loss_curve.png"],
            "report": {k: summary.get(k) for k in ("steps", "first_loss", "last_loss", "eval_loss", "eval_mask_loss",
                                                   "eval_order_gain",
                                                   "tokens_per_s", "tokens_seen", "params", "world_size")},
        })


def resolve_steps(ctx: StageContext, p: PretrainParams) -> int:
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


def launch(cfg_path: Path, num_processes: int, *, deepspeed: bool = False) -> None:
    """Run `python -m pretrain.train CONFIG` on `num_processes` ranks with torchrun (a real process per rank).

    Not `accelerate launch --cpu`: with --cpu it silently starts a single process. torchrun sets the rank
    environment that `Accelerator` reads; on a CPU-only machine that selects gloo (DeepSpeed: its CPU
    accelerator, `DS_ACCELERATOR=cpu`).
    """
    env = dict(os.environ)
    if "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // num_processes))
    if deepspeed and not _has_cuda():
        env.setdefault("DS_ACCELERATOR", "cpu")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
                "--nproc_per_node", str(num_processes)]
    cmd = [*torchrun, "-m", "pretrain.train", str(cfg_path)]
    proc = subprocess.run(cmd, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pretraining on {num_processes} processes failed (exit {proc.returncode}): "
                           f"{' '.join(cmd)}")


def _has_cuda() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    import torch

    return torch.cuda.is_available()
