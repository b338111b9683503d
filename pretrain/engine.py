"""The machinery the pretraining loop runs on: the `Accelerator` (CPU or GPU, mixed precision, optionally a
DeepSpeed ZeRO plugin built from the shipped JSON in `pretrain/deepspeed/`), its release, the clock all ranks
agree on, and `Run`, the handles the loop passes to the functions it calls.

Apart from `pretrain.train` so that the loop reads as the loop: a newcomer needs none of accelerate's and
DeepSpeed's set-up details to follow a training step, and the stage (`pretrain.stages.pretrain`) reads the
DeepSpeed config and precision from here without importing the loop.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import hardware
from pretrain.config import PretrainParams, TrainConfig

DEEPSPEED_DIR = Path(__file__).parent / "deepspeed"


@dataclass(frozen=True)
class Kernels:
    """How the encoder computes: its attention implementation (transformers' `attn_implementation`; None: the
    architecture's own, `pretrain.architectures.build_config`) and whether inductor compiles it."""

    attention: str | None
    compile: bool
    why: str


@dataclass
class Run:
    """What the loop shares with the functions it calls (instead of closures over its locals)."""

    cfg: TrainConfig
    accelerator: Any
    model: Any
    optimizer: Any
    special: Any  # pretrain.data.SpecialIds
    order: Any  # pretrain.data.SampleOrder
    kernels: Kernels | None = None  # what the encoder computes with (`cpu_kernels`); None outside training

    @property
    def out_dir(self) -> Path:
        return Path(self.cfg.out_dir)

    @property
    def metrics_path(self) -> Path:
        return self.out_dir / "metrics.jsonl"

    @property
    def main(self) -> bool:
        return bool(self.accelerator.is_main_process)


def cpu_kernels(cfg: PretrainParams, precision: str) -> Kernels:
    """The kernels for a run in `precision` (resolved) here. On a CPU with native bf16 (AMX, AVX512-BF16), a
    ModernBERT in bf16 spends its step outside the matrix products: at 4 x 256, batch 16 x 128, on 2 threads of an
    AMX Xeon, SDPA's kernels took 25 % of the step, elementwise work and autocast's casts 43 %, the products 29 %
    (`python bench/precision.py anatomy --precision bf16`). So there (measured alone, median ms a step, 2026-12-07,
    docs/experiments/2026-12-07-cpu-bf16.md):
    - attention by matrix products (`eager`: its two products run on AMX in bf16) instead of SDPA: 277 -> 233 ms;
    - the encoder compiled by inductor, which fuses the elementwise work and the casts: 233 -> 193 ms (13 s to
      compile, once; static shapes, since a packed batch is always batch x length; the sparse head, whose row count
      changes every batch, stays eager). `compile: true` forces it, `false` keeps the module eager.
    In fp32 neither pays (SDPA 340 against eager 351 ms; the whole model compiled, 0.88x in the record of
    2026-12-06), and neither is measured under DeepSpeed, on several processes or for RoBERTa: those keep the
    stock kernels and an eager module (a GPU too)."""
    import torch

    native = hardware.native_bf16()  # read through the module: tests stand in another CPU there
    measured = (precision == "bf16" and not torch.cuda.is_available() and native is not None
                and cfg.architecture == "modernbert" and cfg.deepspeed is None and cfg.num_processes == 1)
    compiled = measured if cfg.compile == "auto" else bool(cfg.compile)
    forced = "" if cfg.compile == "auto" else f"; compile: {str(cfg.compile).lower()}"
    if compiled and cfg.compile == "auto" and not cxx_compiler():
        compiled, forced = False, "; no C++ compiler for inductor on PATH (g++ or clang++, or $CXX): eager"
    if measured:
        return Kernels("eager", compiled, f"auto: ModernBERT in bf16 on a CPU with {native} bf16{forced}")
    return Kernels(None, compiled, f"auto: the stock kernels{forced}")


def cxx_compiler() -> str | None:
    """The C++ compiler inductor would build its CPU kernels with (`$CXX`, else g++ or clang++), None without one:
    a slim container has none, and `compile: auto` then leaves the encoder eager instead of failing at its first
    step. (Inductor's own search, `torch._inductor.cpp_builder`, is private and raises; this is what it looks for.)"""
    return next((p for c in (os.environ.get("CXX"), "g++", "clang++") if c and (p := shutil.which(c))), None)


def deepspeed_config(cfg: TrainConfig, mixed_precision: str) -> dict[str, Any]:
    """The shipped ZeRO JSON with its "auto" fields filled from the training config."""
    ds = json.loads((DEEPSPEED_DIR / f"{cfg.deepspeed}.json").read_text())
    ds["train_micro_batch_size_per_gpu"] = cfg.batch_size
    ds["gradient_accumulation_steps"] = cfg.grad_accum
    ds["gradient_clipping"] = cfg.max_grad_norm
    ds["bf16"] = {"enabled": mixed_precision == "bf16"}
    if mixed_precision == "fp16":
        ds["fp16"] = {"enabled": True}
    return ds


def make_accelerator(cfg: TrainConfig) -> Any:
    """The `Accelerator` for this config: CPU or GPU, mixed precision, optionally a DeepSpeed ZeRO plugin."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DeepSpeedPlugin, DistributedType, InitProcessGroupKwargs

    precision = cfg.resolved_precision().accelerate
    # a fine-tuning before this in the process may have left another precision's state
    hardware.reset_accelerate_state()
    plugin, handlers = None, []
    if cfg.deepspeed:
        plugin = DeepSpeedPlugin(hf_ds_config=deepspeed_config(cfg, precision))
        if not torch.cuda.is_available():
            # Without an explicit backend, accelerate treats a CPU DeepSpeed run as one process of one
            # (every rank believes it is rank 0 of 1); gloo makes it read the real rank and world size.
            handlers.append(InitProcessGroupKwargs(backend="gloo"))
    accelerator = Accelerator(
        # accelerate ignores a DeepSpeed plugin when cpu=True; with DS_ACCELERATOR=cpu DeepSpeed runs on CPU
        cpu=not torch.cuda.is_available() and plugin is None,
        mixed_precision=precision,
        gradient_accumulation_steps=cfg.grad_accum,
        deepspeed_plugin=plugin,
        kwargs_handlers=handlers,
        log_with="tensorboard",
        project_dir=cfg.out_dir,
    )
    if cfg.deepspeed and accelerator.distributed_type != DistributedType.DEEPSPEED:
        release(accelerator)
        raise RuntimeError(f"deepspeed={cfg.deepspeed} requested but accelerate runs "
                           f"{accelerator.distributed_type}; launch with torchrun (see pretrain.stages.pretrain.launch)")
    return accelerator


def release(accelerator: Any) -> None:
    """End the trackers and reset accelerate's process-wide state, so a second run in the same process
    (tests, notebooks) starts clean."""
    from accelerate.state import AcceleratorState, GradientState

    accelerator.end_training()
    AcceleratorState._reset_state(True)
    GradientState._reset_state()


def agreed_elapsed(run: Run, local: float) -> float:
    """The largest elapsed time over the ranks (plus `clock_offset_s`, a test hook standing for a rank that
    started late): every rank then stops at the same step and follows the same learning-rate schedule."""
    import torch

    local += run.cfg.clock_offset_s.get(run.accelerator.process_index, 0.0)
    if run.accelerator.num_processes == 1:
        return local
    import torch.distributed as dist

    t = torch.tensor([local], device=run.accelerator.device, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # accelerate's reduce knows sum and mean only
    return float(t)
