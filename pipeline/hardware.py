"""What this machine computes with: its CPU, whether that CPU multiplies bf16 matrices natively, the precision a
training run resolves `mixed_precision: auto` to, and the measured matrix-product peak that CPU MFU divides by.

One place for these because pretraining, fine-tuning, the stage keys, the model card and the benches all ask the
same questions, and must get the same answers.

**Precision.** `auto` resolves, once per run, by a rule on the machine and the model's width, never on a timing
(a key that flipped with the machine's load would defeat the cache):

- a GPU with bf16 (`torch.cuda.is_bf16_supported()`): bf16 autocast;
- a CPU with native bf16 matrix units (`native_bf16()`: AMX tiles or AVX512-BF16, as torch itself detects them)
  and a model at least `BF16_MIN_HIDDEN` wide: bf16 autocast;
- otherwise fp32.

Autocast keeps fp32 master weights and optimizer state (the same as on a GPU), so exports stay fp32. Why the width:
autocast casts every weight and activation to bf16 around each matrix product, an O(tokens x d) cost against the
product's O(tokens x d^2), so the casts stop paying below some width. Measured on a Xeon with AMX (issue 47,
2026-12-06, 2 threads, ModernBERT steps with AdamW): 4 x 128 at batch 8 x 128 ran at 0.82x of fp32 in bf16 (14,745
against 17,932 tokens/s), 4 x 256 at 16 x 128 at 1.40-1.46x, 12 x 768 at 4 x 128 at 1.94x; on another AMX Xeon
(2026-12-07, plain autocast) 1.05x, 1.28x and 1.68x. `bench/precision.py crossover` measures the crossover on the
machine at hand. Pretraining adds kernels to bf16 there (`pretrain.engine.cpu_kernels`) with which it pays from 128
wide (1.33-1.41x), but fine-tuning runs plain autocast, so the one rule stays at 256
(docs/experiments/2026-12-07-cpu-bf16.md). On AVX512-BF16 without AMX (an AMD EPYC, Zen 4, 2026-12-07) the
loop's 4 x 256 step ran 1.90-2.13x fp32 with bf16 products only 2.3x faster (the record's addendum). Without
native bf16 the emulated kernels are far slower (a 1024^2 bf16 product took 2.3 s on an AVX2-only AMD EPYC against
12 ms in fp32): `auto` never picks bf16 there, and a forced `bf16` warns.

**Peak.** MFU on a GPU divides by the datasheet's dense bf16 peak (`pretrain.flops.PEAKS`); a CPU has no datasheet
figure that holds for a VM's share of it, so its peak is measured: the best rate of square matrix products at the
run's thread count and dtype (`measure_matmul`), as `pretrain/examples/gpu_check.py` measures a GPU's. It is cached
per machine (`$KLUE_CACHE_DIR/matmul-peak.json`, keyed by CPU model, dtype, threads and torch version) and
recorded with the CPU model and the load average at the time it was taken: a peak measured on busy cores is low, and
the MFU divided by it high.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from pipeline import io

# Below this hidden size `auto` keeps a CPU run in fp32 even with native bf16 (the measurements in the docstring:
# plain autocast loses or ties at 128, wins at 256).
BF16_MIN_HIDDEN = 256

# Sizes of the square products that measure the peak: large enough to reach the rate of the model's big products
# (the suite's FFN is 2048 tokens x 256 x 1408), as the 0.34 (fp32) and 2.45 (bf16) TFLOP/s at n = 2048
# were. Emulated bf16 (no native support) runs ~100x slower, so it is measured on small products only.
PEAK_SIZES = (1024, 2048)
EMULATED_PEAK_SIZES = (256, 512)
PEAK_REPEATS = 5


def _precision_choice(v: Any) -> Any:
    """`mixed_precision` as a recipe writes it: YAML reads an unquoted `no` (and `false`, `off`) as False, which
    means fp32, as do "fp32" and "false"; True says nothing about which half precision, so it is refused."""
    if v is False or (isinstance(v, str) and v.lower() in ("no", "false", "fp32", "off")):
        return "no"
    if v is True:
        raise ValueError("mixed_precision: true does not say which precision; write auto, bf16, fp16 or no")
    return v


# A recipe's `mixed_precision` (pretraining) and a fine-tuning `Hyperparams.mixed_precision`: accelerate's names,
# with `auto` resolved by `resolve_precision`.
MixedPrecision = Annotated[Literal["auto", "no", "bf16", "fp16"], BeforeValidator(_precision_choice)]


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's "model name", else what `platform` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def hardware_here(num_processes: int, threads: int | None, nodes: int = 1) -> str:
    """The machines a run is training on, as its main rank sees them: its GPUs by name, or the CPU model, cores
    and torch threads, with the node count where the ranks span several (a Slurm job, Ray Train workers; every
    node is taken to be the main rank's, as torchrun and Ray Train place the same ranks on each)."""
    import torch

    where = f"{nodes} nodes, " if nodes > 1 else ""
    if torch.cuda.is_available():
        return f"{where}{num_processes} x {torch.cuda.get_device_name(0)}"
    used = threads or torch.get_num_threads()
    cores = f"{os.cpu_count()} cores{' each' if nodes > 1 else ''}"
    return (f"CPU: {cpu_model()}, {where}{cores}, {num_processes} process{'es' if num_processes > 1 else ''} x "
            f"{used} torch thread{'s' if used > 1 else ''}")


def native_bf16() -> str | None:
    """The CPU's native bf16 matrix support as torch detects it ("AMX" tiles or "AVX512-BF16"), None without.
    torch's own checks (`torch.cpu._is_amx_tile_supported`, `_is_avx512_bf16_supported`) read CPUID and the
    kernel's permission for AMX state, which a flag in /proc/cpuinfo alone does not show."""
    import torch

    cpu = torch.cpu
    if getattr(cpu, "_is_amx_tile_supported", lambda: False)():
        return "AMX"
    if getattr(cpu, "_is_avx512_bf16_supported", lambda: False)():
        return "AVX512-BF16"
    return None


@dataclass(frozen=True)
class Precision:
    """A resolved precision: `name` as people say it (fp32, bf16, fp16), `accelerate` as accelerate's
    `mixed_precision` takes it (no, bf16, fp16), and why it was chosen."""

    name: str
    why: str

    @property
    def accelerate(self) -> str:
        return "no" if self.name == "fp32" else self.name


def resolve_precision(choice: str, hidden_size: int | None) -> Precision:
    """`choice` (`MixedPrecision`, already normalised) for a model `hidden_size` wide on this machine (module
    docstring: the rule and its measurements). `hidden_size` None: unknown width, treated as wide enough."""
    if choice == "no":
        return Precision("fp32", "set: no")
    if choice in ("bf16", "fp16"):
        return Precision(choice, f"set: {choice}")
    if choice != "auto":
        raise ValueError(f"mixed_precision {choice!r}: one of auto, no, bf16, fp16")
    import torch

    if torch.cuda.is_available():
        return (Precision("bf16", "auto: the GPU has bf16") if torch.cuda.is_bf16_supported()
                else Precision("fp32", "auto: the GPU has no bf16"))
    unit = native_bf16()
    if unit is None:
        return Precision("fp32", f"auto: no native bf16 on this CPU ({torch.backends.cpu.get_cpu_capability()})")
    if hidden_size is not None and hidden_size < BF16_MIN_HIDDEN:
        return Precision("fp32", f"auto: {unit} bf16, but hidden size {hidden_size} < {BF16_MIN_HIDDEN} "
                                 "(plain autocast does not pay below it: docs/recipes.md)")
    return Precision("bf16", f"auto: {unit} bf16, hidden size {hidden_size} >= {BF16_MIN_HIDDEN}")


def reset_accelerate_state() -> None:
    """Forget the precision of the process's earlier `Accelerator`s before making one: accelerate keeps one
    process-wide state and refuses a second `Accelerator` in another precision, which a suite meets when two tasks
    resolve differently, or a notebook that fine-tunes and then pretrains. The process group stays
    (`reset_partial_state=False`), so a rank of a torchrun job can call it too."""
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(reset_partial_state=False)
    GradientState._reset_state()


# -- the measured peak ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatmulPeak:
    """The best measured rate of square matrix products on this CPU at a dtype and thread count."""

    cpu: str
    dtype: str  # "fp32" or "bf16"
    threads: int
    tflops: float
    n: int  # the product size that reached it
    torch: str
    native_bf16: str | None
    loadavg: float  # the 1-minute load average when it was measured
    measured: str  # UTC time

    @property
    def label(self) -> str:
        unit = "" if self.dtype == "fp32" else f", {self.native_bf16 or 'no native bf16'}"
        return (f"{self.cpu}, {self.threads} thread{'s' if self.threads > 1 else ''}, {self.dtype} matmul measured "
                f"{self.tflops:.3g} TFLOP/s (n = {self.n}{unit})")


def measure_matmul(dtype: str, threads: int, sizes: tuple[int, ...] | None = None,
                   repeats: int = PEAK_REPEATS) -> MatmulPeak:
    """Time `repeats` products of two random n x n matrices of `dtype` per size (after two warm-ups) on `threads`
    torch threads and keep the best rate: the peak a training step's products can approach."""
    import torch

    native = native_bf16()
    if sizes is None:
        sizes = PEAK_SIZES if dtype == "fp32" or native else EMULATED_PEAK_SIZES
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    best, best_n = 0.0, sizes[0]
    try:
        gen = torch.Generator().manual_seed(0)
        for n in sizes:
            a = torch.randn(n, n, generator=gen).to(torch_dtype)
            b = torch.randn(n, n, generator=gen).to(torch_dtype)
            for _ in range(2):
                a @ b
            for _ in range(repeats):
                t = time.perf_counter()
                a @ b
                rate = 2 * n**3 / (time.perf_counter() - t)
                if rate > best:
                    best, best_n = rate, n
    finally:
        torch.set_num_threads(before)
    return MatmulPeak(cpu_model(), dtype, threads, round(best / 1e12, 4), best_n, torch.__version__, native,
                      round(os.getloadavg()[0], 2), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def mfu_peak(precision: str, threads: int) -> MatmulPeak | None:
    """The peak that CPU MFU divides by for a run in `precision` on `threads`: the measured fp32 or bf16 matmul
    peak (`matmul_peak`); None for fp16, and for bf16 without native support, whose emulated products have no
    meaningful peak (their rate falls as the matrices grow: 0.0013 TFLOP/s at n = 256, 0.0003 at n = 2048 on the
    AMD EPYC of 2026-12-06, and a model's thin products beat both)."""
    if precision == "fp32" or (precision == "bf16" and native_bf16()):
        return matmul_peak(precision, threads)
    return None


def peak_cache_path() -> Path:
    return io.cache_root() / "matmul-peak.json"


def matmul_peak(dtype: str, threads: int) -> MatmulPeak:
    """The cached peak of this machine at `dtype` and `threads`, measured (a second or two) on the first ask. A cache
    that cannot be read or written is measured around, never an error."""
    import torch

    key = f"{cpu_model()} | {dtype} | {threads} threads | torch {torch.__version__}"
    path = peak_cache_path()
    try:
        cached = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        cached = {}
    if key in cached:
        try:
            return MatmulPeak(**cached[key])
        except TypeError:
            pass  # written by another version of this module: measure again
    peak = measure_matmul(dtype, threads)
    cached[key] = asdict(peak)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        io.write_json(path, cached)
    except OSError:
        pass
    return peak
