"""The pretraining configuration, in one place: `PretrainParams` (the recipe's `stages.pretrain`, what a user sets)
and `TrainConfig` (those plus what the stage resolves: paths, seed, the step count, optimizer constants), and the
names of the files a run keeps. A leaf of `pretrain/`: the stage (`pretrain.stages.pretrain`), the loop
(`pretrain.train`) and the exporter (`pretrain.export`) all read it, and it reads none of them, so they do not
import each other in a circle.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.hardware import MixedPrecision, Precision, resolve_precision
from pipeline.stage import StageParams
from pretrain.architectures import SHAPES, ArchitectureName, SizeName


class SlurmParams(StageParams):
    """`stages.pretrain.slurm`: the allocation `launcher: slurm` asks for (pretrain/slurm.py renders the sbatch
    script from it). Not in the stage key (`PretrainStage.layout_params`): where the run happens is not what it
    writes. The number of processes it makes (nodes x procs_per_node) is: `PretrainParams` sets `num_processes`
    to it and adapts `grad_accum`, so the key names the run that happens."""

    nodes: int = Field(1, ge=1)
    gpus_per_node: int = Field(0, ge=0, description="0: a CPU job (gloo; DeepSpeed's CPU accelerator)")
    procs_per_node: int | None = Field(None, ge=1, description="ranks per node (default: gpus_per_node, or on "
                                       "CPU the recipe's num_processes / nodes)")
    cpus_per_task: int | None = Field(None, ge=1, description="CPUs of each node's task (default on CPU: "
                                      "procs_per_node x threads)")
    partition: str | None = None
    account: str | None = None
    time: str | None = Field(None, description="the job's time limit, as sbatch takes it (e.g. 48:00:00)")
    signal_s: int = Field(300, ge=0, description="--signal=USR1@N: the ranks checkpoint and stop N s before the "
                          "time limit (pretrain/preempt.py); the stage resubmits (0: no signal)")
    job_name: str = "klue-pretrain"
    extra_args: list[str] = Field(default_factory=list, description="more `#SBATCH` lines, e.g. --qos=high")
    poll_s: float = Field(10.0, gt=0, description="how often the waiting stage asks Slurm about the job")
    max_resubmits: int = Field(3, ge=0, description="preempted or timed-out jobs resubmitted in a row without "
                               "a new checkpoint before the stage gives up")

    def ranks_per_node(self, num_processes: int) -> int:
        """procs_per_node, or its default (see the field); raises where the recipe's processes do not divide."""
        if self.procs_per_node is not None:
            return self.procs_per_node
        if self.gpus_per_node:
            return self.gpus_per_node
        if num_processes % self.nodes:
            raise ValueError(f"slurm: num_processes {num_processes} do not divide over {self.nodes} nodes; set "
                             "slurm.procs_per_node")
        return num_processes // self.nodes


class RayTrainParams(StageParams):
    """`stages.pretrain.ray`: the Ray Train workers of `launcher: ray` (pretrain/ray_train.py), on the cluster of
    the recipe's executor. Out of the stage key, like `slurm`; the number of workers is not: `PretrainParams`
    sets `num_processes` to it and adapts `grad_accum`, so that the global batch stays the recipe's."""

    workers: int | None = Field(None, ge=1, description="Ray Train workers, one rank each (default: "
                                "num_processes)")
    gpus_per_worker: int = Field(0, ge=0, le=1, description="0: CPU workers (gloo); 1: a GPU each (nccl)")
    cpus_per_worker: int | None = Field(None, ge=1, description="CPUs each worker reserves (default: threads, "
                                        "else 1)")
    max_failures: int = Field(3, ge=0, description="worker-group restarts after a worker or node is lost; each "
                              "resumes from the newest checkpoint")


class PretrainParams(StageParams):
    """Model size, batch, schedule, evaluation and checkpoint cadence, and how to run (processes, DeepSpeed,
    precision). `pretrain.train.TrainConfig` is these plus the run's paths and resolved step count."""

    seed: int | None = Field(None, description="this pretraining run's seed (default: the recipe's `seed`, which "
                             "every stage shares); a replicate's, set by `seeds`")
    seeds: list[int] = Field(default_factory=list, description="pretraining replicates (MultiBERTs): one "
                             "pretraining run per seed, each its own arm and folder, each fine-tuned with the "
                             "finetune stage's seeds, their random inits drawn from the same seeds; the verdict's "
                             "intervals then hold pretraining variance. [] is one run")
    architecture: ArchitectureName = Field("roberta", description="a stock masked-LM class (pretrain/architectures.py): "
                                           "roberta (KLUE's), xlm-roberta-xl, roformer or modernbert")
    model: SizeName = "tiny"
    model_overrides: dict[str, int | float] = Field(default_factory=dict,
                                                    description="config fields of the architecture's class, "
                                                                "e.g. num_hidden_layers")
    seq_len: int = Field(128, ge=8)
    batch_size: int = Field(32, ge=1, description="micro-batch per process")
    grad_accum: int = Field(1, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = 0.01
    warmup_steps: int = Field(50, ge=0)
    # linear: warmup, then linear decay to the end (RoBERTa's, KLUE's). wsd: warmup, stable at the peak, linear
    # decay over the last `decay_fraction` of training (warmup-stable-decay; Hu et al. 2024, MiniCPM, arXiv
    # 2404.06395; Hägele et al. 2024, arXiv 2405.18392, whose 20 % cooldown matches a cosine schedule's loss).
    schedule: Literal["linear", "wsd"] = "linear"
    decay_fraction: float = Field(0.2, gt=0, le=1, description="wsd: the share of steps the decay takes")
    max_steps: int | None = Field(500, ge=1)
    epochs: float | None = Field(None, gt=0, description="cap on passes over the training tokens")
    time_budget_s: float | None = Field(None, gt=0, description="wall-clock budget; the LR decays to it")
    max_grad_norm: float = 1.0
    mlm_probability: float = Field(0.15, gt=0, lt=1)
    whole_word_mask: bool = False
    # rolling back over a loss spike or a run of non-finite steps (pretrain/rollback.py: the rules, their sources)
    spike_window: int = Field(100, ge=0, description="accepted steps a loss spike is measured against (0: no "
                              "spike detection)")
    spike_sigmas: float = Field(7.0, gt=0, description="a spike: a loss this many standard deviations above the "
                                "window's mean (OLMo 2's spike score)")
    max_bad_steps: int = Field(3, ge=0, description="non-finite steps in a row that roll back (0: never)")
    max_rollbacks: int = Field(3, ge=0, description="rollbacks before the run stops with an error")
    eval_every: int = Field(100, ge=1)
    eval_batches: int = Field(10, ge=1)
    log_every: int = Field(10, ge=1)
    checkpoint_every: int = Field(100, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    num_processes: int = Field(1, ge=1, description="1: in-process; >1: torchrun (gloo on CPU, nccl on GPU)")
    deepspeed: Literal["zero1", "zero2", "zero3"] | None = None
    # auto: bf16 autocast on a GPU with bf16 and on a CPU with native bf16 (AMX, AVX512-BF16) for models at least
    # 256 wide, fp32 otherwise (pipeline/hardware.py: the rule and the measurements behind it); no (or false,
    # fp32): fp32. The resolved precision goes into summary.json, the card and the stage key.
    mixed_precision: MixedPrecision = "auto"
    # auto: a ModernBERT trained in bf16 on a CPU with native bf16, by one process without DeepSpeed, has its
    # encoder compiled by inductor (static shapes; the sparse head stays eager) and its attention computed by
    # matrix products instead of SDPA: together 1.43x the step of plain bf16 autocast there at 4 x 256 (1.76x fp32's)
    # (`pretrain.engine.cpu_kernels`, with the measurements); elsewhere neither. true/false force the compile.
    compile: Literal["auto"] | bool = "auto"
    # A CPU run's weights depend on the thread count to the bit (a reduction split over more threads adds in
    # another order), and torch's default is the machine's core count: a recipe whose numbers are published sets
    # it, so that its key and its bits name the same run. summary.json records the count used.
    threads: int | None = Field(None, ge=1, description="torch threads per process (default: torch's, the "
                                "machine's cores; a CPU run's bits depend on it)")
    peak_tflops: float | None = Field(None, gt=0, description="per-device peak for MFU (default: a GPU's "
                                      "dense bf16 peak from pretrain.flops.PEAKS; a CPU's measured matmul peak "
                                      "at the run's precision and threads, pipeline.hardware.matmul_peak)")
    # where the loop runs: here (in-process or torchrun) or as a Slurm job (pretrain/slurm.py). Both are left out
    # of the stage key (PretrainStage.layout_params): the same params give the same bytes either way.
    launcher: Literal["local", "slurm", "ray"] = Field(
        "local", description="local: this machine; slurm: an sbatch job of `slurm:`'s allocation, waited for (a "
        "later run re-attaches); ray: Ray Train workers on the executor's cluster")
    slurm: SlurmParams | None = Field(None, description="the allocation of `launcher: slurm`")
    ray: RayTrainParams | None = Field(None, description="the workers of `launcher: ray`")

    @model_validator(mode="after")
    def _launcher_layout(self) -> PretrainParams:
        """Under `launcher: slurm` the processes are the allocation's (nodes x procs_per_node), under `launcher:
        ray` the workers'; the global batch stays the recipe's (batch_size x grad_accum x num_processes):
        grad_accum adapts, and a global batch that does not divide is refused. Idempotent (a dumped and reloaded
        params model is unchanged)."""
        if self.launcher == "slurm":
            slurm = self.slurm or SlurmParams()
            processes = slurm.nodes * slurm.ranks_per_node(self.num_processes)
            where = f"{processes} processes ({slurm.nodes} nodes x {processes // slurm.nodes})"
        elif self.launcher == "ray":
            processes = (self.ray or RayTrainParams()).workers or self.num_processes
            where = f"{processes} Ray Train workers"
        else:
            return self
        global_batch = self.batch_size * self.grad_accum * self.num_processes
        if global_batch % (self.batch_size * processes):
            raise ValueError(
                f"{self.launcher}: the global batch {global_batch} (batch_size {self.batch_size} x grad_accum "
                f"{self.grad_accum} x num_processes {self.num_processes}) does not divide over {where} of "
                f"micro-batch {self.batch_size}")
        # frozen model: set through object.__setattr__, as pydantic's own validators do
        object.__setattr__(self, "grad_accum", global_batch // (self.batch_size * processes))
        object.__setattr__(self, "num_processes", processes)
        return self

    @property
    def hidden_size(self) -> int:
        """The model's width: `model_overrides.hidden_size`, else the size's (pretrain.architectures.SHAPES)."""
        return int(self.model_overrides.get("hidden_size", SHAPES[self.model][0]))

    def resolved_precision(self) -> Precision:
        """`mixed_precision` resolved for this model on this machine (`pipeline.hardware.resolve_precision`)."""
        return resolve_precision(self.mixed_precision, self.hidden_size)


CHECKPOINTS = "checkpoints"
STATE_FILE = "train_state.json"


class TrainConfig(PretrainParams):
    """Everything the loop needs: the pretrain stage's params (`PretrainParams`, the recipe's
    `stages.pretrain`), plus the run's paths and seed, `max_steps` resolved (epochs applied), and optimizer
    constants that recipes do not set. The stage writes it as `train_config.json` next to its outputs."""

    max_steps: int = 500
    encode_dir: str
    tokenizer_dir: str
    out_dir: str
    seed: int = 42
    adam_betas: tuple[float, float] = (0.9, 0.98)  # RoBERTa's (Liu et al. 2019, sec. 3.1)
    adam_eps: float = 1e-6
    min_lr_ratio: float = 0.0
    # what the stage resolved `mixed_precision` to (its key holds it): the loop trains in it, wherever it runs.
    # None (a config written by hand or by a bench): the loop resolves it on its own machine.
    precision: Literal["fp32", "bf16", "fp16"] | None = None
    precision_why: str | None = None
    halt_after_step: int | None = None  # tests: stop right after this step (and its checkpoint), as if killed
    # how the loop was launched is not the loop's: out of train_config.json, so its bytes are the same for every
    # launcher (adopt_other_world and pretrain.slurm compare them)
    launcher: Literal["local", "slurm", "ray"] = Field("local", exclude=True)
    slurm: SlurmParams | None = Field(None, exclude=True)
    ray: RayTrainParams | None = Field(None, exclude=True)
    clock_offset_s: dict[int, float] = {}  # tests: added to a rank's clock, as a rank that started late sees it

    @model_validator(mode="before")
    @classmethod
    def _legacy_names(cls, data: Any) -> Any:
        """train_config.json files written before the config was built from PretrainParams; and the stage's
        `launcher`, `slurm` and `ray`, which are not the loop's (a params dump passed in whole leaves them out)."""
        if isinstance(data, dict):
            renames = {"model_size": "model", "micro_batch_size": "batch_size"}
            data = {renames.get(k, k): v for k, v in data.items() if k not in ("launcher", "slurm", "ray")}
        return data

    def resolved_precision(self) -> Precision:
        """The precision this run trains in: the stage's resolution when it made one, else resolved here."""
        if self.precision is not None:
            return Precision(self.precision, self.precision_why or "set by the stage")
        return super().resolved_precision()
