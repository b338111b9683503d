"""The machinery the pretraining loop runs on: the `Accelerator` (CPU or GPU, mixed precision, optionally a
DeepSpeed ZeRO plugin built from the shipped JSON in `pretrain/deepspeed/`), its release, the clock all ranks
agree on, and `Run`, the handles the loop passes to the functions it calls.

Apart from `pretrain.train` so that the loop reads as the loop: a newcomer needs none of accelerate's and
DeepSpeed's set-up details to follow a training step, and the stage (`pretrain.stages.pretrain`) reads the
DeepSpeed config and precision from here without importing the loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.hardware import reset_accelerate_state
from pretrain.config import TrainConfig

DEEPSPEED_DIR = Path(__file__).parent / "deepspeed"


@dataclass
class Run:
    """What the loop shares with the functions it calls (instead of closures over its locals)."""

    cfg: TrainConfig
    accelerator: Any
    model: Any
    optimizer: Any
    special: Any  # pretrain.data.SpecialIds
    order: Any  # pretrain.data.SampleOrder

    @property
    def out_dir(self) -> Path:
        return Path(self.cfg.out_dir)

    @property
    def metrics_path(self) -> Path:
        return self.out_dir / "metrics.jsonl"

    @property
    def main(self) -> bool:
        return bool(self.accelerator.is_main_process)


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
    reset_accelerate_state()  # a fine-tuning before this in the process may have left another precision's state
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
