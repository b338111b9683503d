#!/usr/bin/env python3
"""KLUE-base dress rehearsal on the CPU: the real `klue-roberta-base` / `klue-modernbert-base` shapes (12 x 768,
the 32k vocabulary the recipe builds, 512 positions) through every piece a GPU run uses, on 2 gloo ranks.

For each run asked for (`--runs`; default roberta x ZeRO-2, roberta x ZeRO-3 and modernbert x ZeRO-2, the
subset that fits 15 minutes on 2 shared cores; `--runs all` adds modernbert x ZeRO-3):
  1. a few optimizer steps of 512-token samples on 2 ranks under torchrun + DeepSpeed (`DS_ACCELERATOR=cpu`,
     gloo; bf16 only where the CPU has native bf16, else fp32 as `mixed_precision: auto` resolves), one torch
     thread per rank;
  2. a real SIGTERM to torchrun's process group after step `--sigterm-after`: every rank checkpoints at the next
     step boundary and exits 75 (`pretrain.preempt`); the checkpoint folder is checked and measured;
  3. a resume of that checkpoint on 1 rank (`python -m pretrain.train` under torchrun, `num_processes: 1`,
     `grad_accum` doubled: the same global batch) to `--steps`;
  4. `klue export-checkpoint` of the SIGTERM checkpoint (fp32 safetensors), loaded by stock
     `transformers.AutoModelForMaskedLM.from_pretrained` (no remote code): class, dtype, a finite forward pass;
  5. (the runs named by `--finetune`, default roberta-zero2) a short YNAT fine-tune from that export
     (`klue finetune ynat`, 8 steps of 8 x 64 tokens: it proves the path, not a score).
Measured per rank: peak RSS (VmHWM of each rank, polled from /proc), seconds per step (the loop's own
tokens/s of timed steps), checkpoint size; computed: FLOPs per step (`pretrain.flops.step_flops`) and
DeepSpeed's model-state estimates (`estimate_zero2_model_states_mem_needs_all_live`,
`estimate_zero3_model_states_mem_needs_all_live`), compared in a table (`--json OUT` keeps everything).

The tokenizer and the encoded shards come from the recipe's own stages (`klue run recipes/klue-roberta-base.yaml
--until encode`, cached under WORK/data; ~5 minutes the first time on 2 cores, instant after).

    bash pretrain/examples/dress_rehearsal.sh --json /tmp/klue-dress/results.json     # WORK: /tmp/klue-dress
    bash pretrain/examples/dress_rehearsal.sh --runs all --finetune all               # the whole matrix
    bash pretrain/examples/dress_rehearsal.sh --resume-only   # step 3 again on the runs already in WORK

docs/scaling.md ("KLUE-base: a dress rehearsal on the CPU, and what the real run costs") has the numbers and the
projection to 8 GPUs (`projection()` below).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the project, from this checkout (above); torch, transformers and DeepSpeed load inside the steps that need them
from pipeline.hardware import cpu_model, native_bf16  # noqa: E402
from pipeline.recipe_file import read_recipe_file  # noqa: E402
from pretrain.architectures import build_config  # noqa: E402
from pretrain.config import CHECKPOINTS, STATE_FILE, PretrainParams, TrainConfig  # noqa: E402
from pretrain.flops import PEAKS, step_flops  # noqa: E402
from pretrain.stages.pretrain import SHUTDOWN_TIMEOUT_S  # noqa: E402

RECIPES = {"roberta": ROOT / "recipes" / "klue-roberta-base.yaml",
           "modernbert": ROOT / "recipes" / "klue-modernbert-base.yaml"}
GIB = 1024**3
MLM_FRACTION = 0.15  # predicted positions per token (the recipe's mlm_probability) for the FLOP count
EXIT_PREEMPTED = 75
ALL_RUNS = ("roberta-zero2", "roberta-zero3", "modernbert-zero2", "modernbert-zero3")
DEFAULT_RUNS = ALL_RUNS[:3]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------------------
# the projection to a GPU node (pure arithmetic: tests/test_dress_rehearsal.py)


def flops_per_token(d: int, n_layers: int, f: int, vocab: int, seq: int, ffn_matrices: int = 2,
                    mlm_fraction: float = MLM_FRACTION) -> float:
    """Training FLOPs per input token, as `pretrain.flops.step_flops` counts them, with `mlm_fraction` of the
    positions through the MLM head."""
    per_token = 2 * n_layers * (4 * d * d + ffn_matrices * d * f) + 2 * n_layers * 2 * seq * d
    per_predicted = 2 * (d * d + d * vocab)
    return 3.0 * (per_token + mlm_fraction * per_predicted)


def zero_model_states_bytes(params: int, largest_layer: int, ranks: int, stage: int, *, bytes_param: int = 2) -> float:
    """Model-state bytes per rank, no offload: DeepSpeed's estimator formulas (16-bit params: `bytes_param=2`:
    ZeRO-2 2P + 18P/N, ZeRO-3 4*largest + 18P/N), or the same accounting for a pure-fp32 run (`bytes_param=4`:
    ZeRO-2 4P + 16P/N, ZeRO-3 4*largest + 20P/N: fp32 params, grads, masters and Adam's two moments)."""
    if bytes_param == 2:
        full, shard = (2 * params, 18 * params / ranks) if stage == 2 else (4 * largest_layer, 18 * params / ranks)
    else:
        full, shard = (4 * params, 16 * params / ranks) if stage == 2 else (4 * largest_layer, 20 * params / ranks)
    return full + shard


def activation_bytes(seq: int, batch: int, d: int, n_layers: int, heads: int, *, flash: bool = True,
                     bytes_per: int = 2) -> float:
    """Activation memory of a transformer encoder's layers kept for the backward pass: Korthikanti et al. 2022
    (arXiv 2205.05198, eq. 1, no tensor parallelism): s*b*d*(34 + 5*a*s/d) bytes per layer in 16-bit; with a
    fused (flash) attention the 5*a*s/d term of the stored attention matrices is gone. Scaled by
    `bytes_per / 2` for another element size."""
    per_layer = seq * batch * d * (34 + (0 if flash else 5 * heads * seq / d))
    return n_layers * per_layer * bytes_per / 2


def checkpoint_bytes(params: int, *, bytes_param: int = 2) -> float:
    """A ZeRO checkpoint as accelerate's `save_state` writes it: the module's weights (`bytes_param` each) plus
    the optimizer's fp32 masters and Adam's two fp32 moments (12 bytes each), over all ranks' files."""
    return params * (bytes_param + 12)


@dataclass(frozen=True)
class Gpu:
    name: str
    peak_flops: float  # dense bf16, per GPU (pretrain.flops.PEAKS)
    memory_gib: float


def projection(params: int, largest_layer: int, flops_token: float, tokens: float, gpu: Gpu, *, gpus: int = 8,
               mfu: float = 0.4, seq: int = 512, micro_batch: int = 32, d: int = 768, n_layers: int = 12,
               heads: int = 12, vocab: int = 32000, mlm_fraction: float = MLM_FRACTION) -> dict[str, float]:
    """GPU-hours, wall-clock days, memory per GPU (ZeRO-2 and ZeRO-3 model states, DeepSpeed's 16-bit accounting,
    plus activations at `micro_batch` with fused attention and the MLM head's fp32 logits at the predicted
    positions) and checkpoint size of `tokens` training tokens at `mfu` of `gpu`'s peak."""
    total_flops = flops_token * tokens
    seconds = total_flops / (gpus * gpu.peak_flops * mfu)
    acts = activation_bytes(seq, micro_batch, d, n_layers, heads, flash=True, bytes_per=2)
    logits = micro_batch * seq * mlm_fraction * vocab * 4 * 2  # fp32 logits and their gradient
    z2 = zero_model_states_bytes(params, largest_layer, gpus, 2)
    z3 = zero_model_states_bytes(params, largest_layer, gpus, 3)
    return {"total_flops": total_flops, "wall_hours": seconds / 3600, "gpu_hours": gpus * seconds / 3600,
            "zero2_states_gib": z2 / GIB, "zero3_states_gib": z3 / GIB, "activations_gib": (acts + logits) / GIB,
            "zero2_gib": (z2 + acts + logits) / GIB, "zero3_gib": (z3 + acts + logits) / GIB,
            "checkpoint_gib": checkpoint_bytes(params) / GIB, "export_gib": 4 * params / GIB}


# ---------------------------------------------------------------------------------------------------------
# measuring processes


def _proc_status(pid: int) -> dict[str, int]:
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmHWM:", "VmRSS:")):
                key, val = line.split(":", 1)
                out[key] = int(val.split()[0]) * 1024
    except (OSError, ValueError):
        pass
    return out


@dataclass
class TreeWatch:
    """Polls the peak RSS (VmHWM) of every process under `root`, labelled by its RANK (torchrun's ranks) or as the
    launcher, every `every` seconds on a thread, and the peak of their summed RSS."""

    root: int
    every: float = 0.2
    peaks: dict[str, int] = field(default_factory=dict)
    total_peak: int = 0
    _labels: dict[int, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _label(self, proc: Any) -> str:
        if proc.pid not in self._labels:
            try:
                env = proc.environ()
                rank = env.get("RANK")
                is_rank = rank is not None and proc.pid != self.root and "pretrain" in " ".join(proc.cmdline())
                self._labels[proc.pid] = f"rank{rank}" if is_rank else "launcher" if proc.pid == self.root \
                    else f"pid{proc.pid}"
            except Exception:  # noqa: BLE001 -- a process that ended between the listing and the read
                return f"pid{proc.pid}"
        return self._labels[proc.pid]

    def poll(self) -> None:
        import psutil  # type: ignore[import-untyped]  # (no stubs installed; bench/ uses it untyped too)

        try:
            root = psutil.Process(self.root)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total = 0
        for p in procs:
            st = _proc_status(p.pid)
            if not st:
                continue
            label = self._label(p)
            self.peaks[label] = max(self.peaks.get(label, 0), st.get("VmHWM", 0))
            total += st.get("VmRSS", 0)
        self.total_peak = max(self.total_peak, total)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.poll()

    def start(self) -> TreeWatch:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def run_watched(cmd: list[str], log_path: Path, env: dict[str, str] | None = None, *,
                on_poll: Any = None, timeout: float = 900) -> tuple[int, float, TreeWatch]:
    """Run `cmd` in a session of its own, output to `log_path`; returns (exit status, seconds, peaks).
    `on_poll(proc)` is called every second while it runs (to send it a signal)."""
    t0 = time.perf_counter()
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)
        watch = TreeWatch(proc.pid).start()
        try:
            while proc.poll() is None:
                if on_poll is not None:
                    on_poll(proc)
                if time.perf_counter() - t0 > timeout:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    break
                time.sleep(0.5)
        finally:
            watch.poll()
            watch.stop()
    return proc.returncode, time.perf_counter() - t0, watch


def baseline_rss(env: dict[str, str]) -> int:
    """Peak RSS of a process that only imports what a rank imports (torch, transformers, accelerate, DeepSpeed):
    what a rank holds before its model."""
    code = ("import torch, transformers, accelerate, deepspeed, pretrain.train\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    return int(out) * 1024


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------------------
# the pieces


def prepare_data(work: Path, data_dir: Path) -> tuple[Path, Path, float]:
    """The recipe's vocabulary (32k WordPiece over MeCab morphemes) and encoded shards, by its own stages
    (cached: the second call only checks). Returns (encode dir, tokenizer dir, seconds)."""
    t0 = time.perf_counter()
    wd = work / "data"
    env = {**os.environ, "KLUE_DATA_DIR": str(data_dir)}
    cmd = [sys.executable, "-m", "pipeline.cli", "run", str(RECIPES["roberta"]), "--until", "encode",
           "--workdir", str(wd)]
    with open(work / "data-prep.log", "ab") as out:
        subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, check=True)
    arm = wd / "arms" / "default"
    vocab_meta = json.loads((arm / "vocab" / "manifest.json").read_text())["meta"]
    return (arm / "encode").resolve(), (arm / "vocab").resolve() / vocab_meta["tokenizer_dir"], \
        time.perf_counter() - t0


def train_config(arch: str, zero: str, *, encode_dir: Path, tokenizer_dir: Path, out_dir: Path, steps: int,
                 micro_batch: int, ranks: int, grad_accum: int, threads: int) -> Any:
    """The recipe's `stages.pretrain` as a TrainConfig, cut down to a few steps on `ranks` CPU ranks."""
    raw = dict(read_recipe_file(RECIPES[arch])["stages"]["pretrain"])
    raw.update(num_processes=ranks, deepspeed=zero, batch_size=micro_batch, grad_accum=grad_accum, threads=threads,
               max_steps=steps, log_every=1, eval_every=10**6, eval_batches=1, checkpoint_every=10**6,
               keep_checkpoints=3, mixed_precision="auto")
    p = PretrainParams.model_validate(raw)
    precision = p.resolved_precision()
    return TrainConfig.model_validate({**p.model_dump(), "encode_dir": str(encode_dir),
                                       "tokenizer_dir": str(tokenizer_dir), "out_dir": str(out_dir), "seed": 42,
                                       "precision": precision.name, "precision_why": precision.why})


# Each rank runs `python -m pretrain.train CONFIG` through this shim, which writes the rank's exit status and its
# own peak RSS (ru_maxrss) to REPORT_DIR/rank<R>-<pid>.json on the way out: torchrun, stopped by a signal, reports
# neither (it raises SignalException instead of its failure table).
RANK_SHIM = """import json, os, resource, runpy, sys
report, sys.argv = sys.argv[1], [sys.argv[2]] + sys.argv[3:]
code = 0
try:
    runpy.run_module("pretrain.train", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
except BaseException:
    code = 1
    raise
finally:
    rank = os.environ.get("RANK", "0")
    with open(os.path.join(report, f"rank{rank}-{os.getpid()}.json"), "w") as f:
        json.dump({"rank": int(rank), "exit": code,
                   "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}, f)
sys.exit(code)
"""


def torchrun_cmd(cfg_path: Path, ranks: int, report_dir: Path) -> list[str]:
    """The command `pretrain.stages.pretrain.launch` runs (its flags: relayed signals, a long shutdown), each
    rank's `python -m pretrain.train CONFIG` through RANK_SHIM (its exit status and peak RSS into `report_dir`)."""
    report_dir.mkdir(parents=True, exist_ok=True)
    shim = report_dir.parent / "rank_shim.py"
    shim.write_text(RANK_SHIM, encoding="utf-8")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1", "--nproc_per_node",
            str(ranks), "--signals-to-handle", "SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1", "--shutdown-timeout",
            str(SHUTDOWN_TIMEOUT_S), str(shim), str(report_dir), "pretrain/train.py", str(cfg_path)]


def rank_reports(report_dir: Path) -> dict[str, dict[str, int]]:
    """{"rank0": {"exit": .., "ru_maxrss": ..}, ...} as the shim wrote them."""
    out = {}
    for f in sorted(report_dir.glob("rank*.json")):
        d = json.loads(f.read_text())
        out[f"rank{d['rank']}"] = {"exit": d["exit"], "ru_maxrss": d["ru_maxrss"]}
    return out


def rank_env(threads: int) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "DS_ACCELERATOR": "cpu", "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1", "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def read_rows(out_dir: Path) -> list[dict[str, Any]]:
    path = out_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            rows.append(json.loads(line))
    return rows


def seconds_per_step(rows: list[dict[str, Any]], tokens_per_step: int) -> list[float]:
    """Each timed step's seconds, from the loop's tokens/s (over all ranks; the first step of a process is not
    timed, evaluation and checkpoints stop the clock)."""
    return [tokens_per_step / r["tokens_per_s"] for r in rows if r.get("tokens_per_s")]


def estimates(arch: str, tokenizer_dir: Path, ranks: int) -> dict[str, Any]:
    """DeepSpeed's own estimators on the real model (built here, fp32, on the CPU), their printed tables, and the
    numbers of the no-offload rows (per GPU = per rank) for `ranks` ranks on one node."""
    import torch
    from deepspeed.runtime.zero.stage3 import (
        estimate_zero3_model_states_mem_needs,
        estimate_zero3_model_states_mem_needs_all_live,
    )
    from deepspeed.runtime.zero.stage3 import model_to_params as z3_params
    from deepspeed.runtime.zero.stage_1_and_2 import (
        estimate_zero2_model_states_mem_needs,
        estimate_zero2_model_states_mem_needs_all_live,
    )
    from transformers import AutoTokenizer

    # lazy: torch (pretrain.model)
    from pretrain.model import SparseMLM, build_model

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    mcfg = build_config("base", vocab_size=len(tok), seq_len=512, pad_token_id=tok.pad_token_id,
                        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, architecture=arch)
    # built on the meta device and given uninitialised CPU storage: the estimators count parameters (shared ones
    # once, by storage) and look at layers, and a real initialisation of 110M weights costs ~15 s on 2 cores
    with torch.device("meta"):
        model = SparseMLM(build_model(mcfg, 42))
    model = model.to_empty(device="cpu")
    model.mlm.tie_weights()  # to_empty gives the tied decoder storage of its own
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        estimate_zero2_model_states_mem_needs_all_live(model, num_gpus_per_node=ranks, num_nodes=1)
        estimate_zero3_model_states_mem_needs_all_live(model, num_gpus_per_node=ranks, num_nodes=1)
    total, largest = z3_params(model)
    z2_cpu, z2_dev = estimate_zero2_model_states_mem_needs(total, ranks, 1, cpu_offload=False)
    z3_cpu, z3_dev, _ = estimate_zero3_model_states_mem_needs(total, largest, ranks, 1, cpu_offload=False,
                                                                cpu_offload_params=False, zero_init=True)
    out = {"params": total, "largest_layer_params": largest, "printed": printed.getvalue(),
           "config": {k: getattr(mcfg, k) for k in ("hidden_size", "num_hidden_layers", "intermediate_size",
                                                    "vocab_size", "num_attention_heads", "max_position_embeddings")},
           "ffn_matrices": 3 if arch == "modernbert" else 2,
           "zero2": {"ds_per_rank": z2_dev, "ds_host_per_node": z2_cpu,
                     "fp32_per_rank": zero_model_states_bytes(total, largest, ranks, 2, bytes_param=4)},
           "zero3": {"ds_per_rank": z3_dev, "ds_host_per_node": z3_cpu,
                     "fp32_per_rank": zero_model_states_bytes(total, largest, ranks, 3, bytes_param=4)}}
    del model
    return out


def load_stock(folder: Path) -> dict[str, Any]:
    """The export through stock transformers, no remote code: its class, dtype, parameters and a forward pass."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    t0 = time.perf_counter()
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)
    enc = tok(f"대한민국의 수도는 {tok.mask_token}이다.", return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits
    dtypes = sorted({str(p.dtype) for p in model.parameters()})
    return {"class": type(model).__name__, "dtypes": dtypes, "params": sum(p.numel() for p in model.parameters()),
            "finite": bool(torch.isfinite(logits).all()), "seconds": round(time.perf_counter() - t0, 2)}


def rehearse(arch: str, zero: str, args: argparse.Namespace, encode_dir: Path, tok_dir: Path,
             finetune: bool) -> dict[str, Any]:
    """Steps 1-5 for one encoder and ZeRO stage; returns what was measured."""
    name = f"{arch}-{zero}"
    run = args.work / "runs" / name
    res: dict[str, Any] = {"name": name, "arch": arch, "zero": zero, "steps_ok": [], "steps_failed": {}}
    if not args.resume_only:
        shutil.rmtree(run, ignore_errors=True)
        run.mkdir(parents=True)
    cfg = train_config(arch, zero, encode_dir=encode_dir, tokenizer_dir=tok_dir, out_dir=run, steps=args.steps,
                       micro_batch=args.micro_batch, ranks=2, grad_accum=1, threads=1)
    res["precision"] = cfg.precision
    cfg_path = run / "train_config.json"
    tokens_per_step = 2 * args.micro_batch * cfg.seq_len  # the global batch: ranks x micro-batch x accumulation
    from transformers import AutoTokenizer


    tok = AutoTokenizer.from_pretrained(tok_dir)
    mcfg = build_config("base", vocab_size=len(tok), seq_len=cfg.seq_len, pad_token_id=tok.pad_token_id,
                        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, architecture=arch)
    res["flops_per_step"] = step_flops(mcfg, cfg.seq_len, tokens_per_step, round(MLM_FRACTION * tokens_per_step))
    res["tokens_per_step"] = tokens_per_step

    # 1 + 2: train on 2 ranks, SIGTERM after step `sigterm_after`
    if not args.resume_only:
        cfg_path.write_text(cfg.model_dump_json(indent=1) + "\n", encoding="utf-8")
        sent: dict[str, float] = {}
        steps_peaks: dict[str, int] = {}
        t_start = time.perf_counter()

        def maybe_signal(proc: subprocess.Popen[bytes]) -> None:
            rows = read_rows(run)
            done = max((r["step"] for r in rows), default=0)
            if "first_step_s" not in sent and done >= 1:
                sent["first_step_s"] = time.perf_counter() - t_start
            if "at" not in sent and done >= args.sigterm_after:
                watch_now = TreeWatch(proc.pid)
                watch_now.poll()  # the ranks' peaks over the training steps, before the checkpoint
                steps_peaks.update(watch_now.peaks)
                os.killpg(proc.pid, signal.SIGTERM)  # torchrun's group: torchrun relays it to the ranks
                sent["at"] = time.perf_counter() - t_start
                sent["after_step"] = done
                log(f"  {name}: SIGTERM to torchrun's process group after step {done}")

        log(f"{name}: training on 2 ranks ({cfg.precision}, micro-batch {args.micro_batch} x 512, "
            f"1 thread each), SIGTERM after step {args.sigterm_after}")
        rc, secs, watch = run_watched(torchrun_cmd(cfg_path, 2, run / "ranks-2"), run / "train-2ranks.log",
                                      rank_env(1), on_poll=maybe_signal, timeout=args.timeout)
        reports = rank_reports(run / "ranks-2")
        rank_codes = [r["exit"] for r in reports.values()]
        rows = read_rows(run)
        secs_steps = seconds_per_step(rows, tokens_per_step)
        marker = run / "preempted.json"
        preempt = json.loads(marker.read_text()) if marker.is_file() else None
        ckpts = sorted(c for c in (run / CHECKPOINTS).glob("step-*") if (c / STATE_FILE).is_file())
        ckpt = ckpts[-1] if ckpts else None
        res["train"] = {"torchrun_exit": rc, "ranks": reports, "seconds": round(secs, 1),
                        "startup_to_step1_s": round(sent.get("first_step_s", float("nan")), 1),
                        "sigterm_at_s": round(sent.get("at", float("nan")), 1), "sigterm_after_step": sent.get("after_step"),
                        "steps_logged": [r["step"] for r in rows], "losses": [r.get("loss") for r in rows],
                        "seconds_per_step": [round(s, 2) for s in secs_steps],
                        "mfu_cpu": [r.get("mfu") for r in rows if r.get("mfu") is not None],
                        "polled_peak_rss": dict(sorted(watch.peaks.items())), "polled_peak_rss_sum": watch.total_peak,
                        "polled_peak_rss_before_sigterm": dict(sorted(steps_peaks.items())),
                        "preempted": preempt}
        res["s_per_step"] = statistics.median(secs_steps) if secs_steps else None
        ok = preempt is not None and ckpt is not None and rank_codes == [EXIT_PREEMPTED] * 2
        if ok and ckpt is not None:
            res["steps_ok"].append("train+sigterm")
            res["checkpoint"] = {"path": str(ckpt), "step": json.loads((ckpt / STATE_FILE).read_text())["step"],
                                 "bytes": dir_bytes(ckpt),
                                 "files": {str(p.relative_to(ckpt)): p.stat().st_size
                                           for p in sorted(ckpt.rglob("*")) if p.is_file() and p.stat().st_size > 2**20}}
            log(f"  {name}: torchrun exit {rc}, ranks {rank_codes}; checkpoint step {res['checkpoint']['step']} "
                f"{res['checkpoint']['bytes'] / GIB:.2f} GiB; s/step {res['train']['seconds_per_step']}; peak RSS "
                f"{_gib({k: v['ru_maxrss'] for k, v in reports.items()})} (before the checkpoint: "
                f"{_gib({k: v for k, v in steps_peaks.items() if 'rank' in k})})")
        else:
            res["steps_failed"]["train+sigterm"] = (f"exit {rc}, rank exit codes {rank_codes}, preempted.json "
                                                    f"{'present' if preempt else 'missing'}, checkpoint {ckpt}; "
                                                    f"see {run / 'train-2ranks.log'}")
            log(f"  {name}: FAILED train+sigterm: {res['steps_failed']['train+sigterm']}")
            return res
    else:
        old = json.loads((run / "rehearsal.json").read_text()) if (run / "rehearsal.json").is_file() else {}
        res = {**old, **{k: v for k, v in res.items() if k in ("name",)}}
        res.setdefault("steps_failed", {}).pop("resume-1-rank", None)
        res.setdefault("steps_ok", [])
        res["steps_ok"] = [s for s in res["steps_ok"] if s != "resume-1-rank"]
        # back to the state the SIGTERM left: the resumed run's later checkpoints and final/ go
        step = res.get("checkpoint", {}).get("step")
        for c in (run / CHECKPOINTS).glob("step-*"):
            state = c / STATE_FILE
            if step is None or not state.is_file() or json.loads(state.read_text()).get("step", 0) > step:
                shutil.rmtree(c, ignore_errors=True)
        for leftover in ("final", "summary.json"):
            shutil.rmtree(run / leftover, ignore_errors=True) if (run / leftover).is_dir() else \
                (run / leftover).unlink(missing_ok=True)

    # 3: resume on 1 rank, the global batch kept (grad_accum doubled)
    if args.steps > res.get("checkpoint", {}).get("step", args.steps):
        cfg1 = cfg.model_copy(update={"num_processes": 1, "grad_accum": 2 * cfg.grad_accum, "threads": args.resume_threads})
        cfg1_path = run / "train_config_1rank.json"
        cfg1_path.write_text(cfg1.model_dump_json(indent=1) + "\n", encoding="utf-8")
        log(f"{name}: resuming on 1 rank (grad_accum {cfg1.grad_accum}, {args.resume_threads} threads) to step {args.steps}")
        shutil.rmtree(run / "ranks-1", ignore_errors=True)
        rc, secs, watch = run_watched(torchrun_cmd(cfg1_path, 1, run / "ranks-1"), run / "resume-1rank.log",
                                      rank_env(args.resume_threads), timeout=args.timeout)
        text = (run / "resume-1rank.log").read_text(errors="replace")
        summary = json.loads((run / "summary.json").read_text()) if (run / "summary.json").is_file() else None
        res["resume"] = {"exit": rc, "seconds": round(secs, 1), "ranks": rank_reports(run / "ranks-1"),
                         "summary_steps": summary.get("steps") if summary else None,
                         "world_size": summary.get("world_size") if summary else None,
                         "error": None if rc == 0 else _last_error(text)}
        if rc == 0 and summary is not None and summary.get("steps") == args.steps:
            res["steps_ok"].append("resume-1-rank")
            log(f"  {name}: resumed on 1 rank to step {args.steps} in {secs:.0f}s")
        else:
            res["steps_failed"]["resume-1-rank"] = f"exit {rc}: {res['resume']['error']}"
            log(f"  {name}: FAILED resume on 1 rank: {res['steps_failed']['resume-1-rank']}")
    if args.resume_only:
        return res

    # 4: export the SIGTERM checkpoint to fp32 safetensors; stock transformers loads it
    export = run / "export"
    step = res["checkpoint"]["step"]
    rc, secs, watch = run_watched([sys.executable, "-m", "pipeline.cli", "export-checkpoint", str(run), "--step",
                                   str(step), "--output", str(export), "--config", str(cfg_path)],
                                  run / "export.log", rank_env(2), timeout=args.timeout)
    res["export"] = {"exit": rc, "seconds": round(secs, 1), "peak_rss": max(watch.peaks.values(), default=0)}
    if rc != 0:
        res["steps_failed"]["export"] = f"exit {rc}: {_last_error((run / 'export.log').read_text(errors='replace'))}"
        log(f"  {name}: FAILED export: {res['steps_failed']['export']}")
        return res
    res["export"]["bytes"] = dir_bytes(export)
    res["export"]["config_dtype"] = json.loads((export / "config.json").read_text()).get("dtype")
    try:
        res["load"] = load_stock(export)
        if res["load"]["finite"] and res["load"]["dtypes"] == ["torch.float32"]:
            res["steps_ok"].append("export+stock-load")
        else:
            res["steps_failed"]["export+stock-load"] = f"loaded but {res['load']}"
    except Exception as e:  # noqa: BLE001 -- reported, the rehearsal goes on
        res["steps_failed"]["export+stock-load"] = f"{type(e).__name__}: {e}"
    log(f"  {name}: export {res['export']['bytes'] / GIB:.2f} GiB in {secs:.0f}s; stock load: "
        f"{res.get('load', res['steps_failed'].get('export+stock-load'))}")

    # 5: a short YNAT fine-tune from the export
    if finetune:
        ft_out = run / "ynat"
        shutil.rmtree(ft_out, ignore_errors=True)
        cmd = [sys.executable, "-m", "pipeline.cli", "finetune", "ynat", "--model", str(export), "--data-dir",
               str(args.data_dir / "klue"), "--output", str(ft_out), "--seeds", "1", "--max-train-examples",
               str(args.ft_train), "--max-eval-examples", str(args.ft_eval), "--max-steps", str(args.ft_steps),
               "--batch-size", "8", "--max-length", "64", "--no-save-model", "--quiet"]
        log(f"{name}: YNAT fine-tune from the export ({args.ft_steps} steps of 8 x 64)")
        rc, secs, watch = run_watched(cmd, run / "finetune.log", rank_env(2), timeout=args.timeout)
        metrics = sorted(ft_out.rglob("metrics.json"))
        res["finetune"] = {"exit": rc, "seconds": round(secs, 1), "peak_rss": max(watch.peaks.values(), default=0),
                           "metrics": json.loads(metrics[0].read_text()) if metrics else None}
        if rc == 0 and metrics:
            res["steps_ok"].append("ynat-finetune")
            log(f"  {name}: YNAT done in {secs:.0f}s")
        else:
            res["steps_failed"]["ynat-finetune"] = f"exit {rc}: {_last_error((run / 'finetune.log').read_text(errors='replace'))}"
            log(f"  {name}: FAILED YNAT: {res['steps_failed']['ynat-finetune']}")
    return res


def _gib(peaks: dict[str, int]) -> str:
    return ", ".join(f"{k} {v / GIB:.2f} GiB" for k, v in sorted(peaks.items()))


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if any(w in ln for w in ("Error", "error:", "Exception", "refus", "world_size")):
            return ln[:400]
    return lines[-1][:400] if lines else "(no output)"


# ---------------------------------------------------------------------------------------------------------
# the report


def table(results: list[dict[str, Any]], ests: dict[str, dict[str, Any]], baseline: int) -> str:
    rows = ["| run | precision | s/step (2 ranks) | FLOPs/step | peak RSS rank0 / rank1 | minus imports | DS est. "
            "per rank (16-bit) | same, fp32 | checkpoint | export | steps ok | failed |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        e = ests[r["arch"]][r["zero"]]
        reports = (r.get("train") or {}).get("ranks", {})
        ranks = [reports.get(k, {}).get("ru_maxrss", 0) for k in ("rank0", "rank1")]
        s = r.get("s_per_step")
        rows.append("| {} | {} | {} | {:.3g} | {} | {} | {:.2f} GiB | {:.2f} GiB | {} | {} | {} | {} |".format(
            r["name"], r.get("precision"), f"{s:.1f}" if s else "–", r.get("flops_per_step", 0),
            " / ".join(f"{x / GIB:.2f}" for x in ranks) + " GiB",
            " / ".join(f"{(x - baseline) / GIB:.2f}" for x in ranks) + " GiB",
            e["ds_per_rank"] / GIB, e["fp32_per_rank"] / GIB,
            f"{r['checkpoint']['bytes'] / GIB:.2f} GiB" if r.get("checkpoint") else "–",
            f"{r['export']['bytes'] / GIB:.2f} GiB" if (r.get("export") or {}).get("bytes") else "–",
            ", ".join(r.get("steps_ok", [])) or "–", "; ".join(r.get("steps_failed", {})) or "–"))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/klue-dress"), help="cache and run folders")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("KLUE_DATA_DIR", ROOT.parent / "shared" / "data")))
    ap.add_argument("--runs", default=",".join(DEFAULT_RUNS),
                    help=f"ENCODER-ZERO names, or 'all' ({', '.join(ALL_RUNS)}); the default leaves out "
                         "modernbert-zero3 to stay under 15 minutes on 2 shared cores")
    ap.add_argument("--steps", type=int, default=4, help="optimizer steps in all (the 1-rank resume goes to here)")
    ap.add_argument("--sigterm-after", type=int, default=2, help="SIGTERM once this step is logged")
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--resume-threads", type=int, default=2)
    ap.add_argument("--finetune", default="roberta-zero2",
                    help="runs (NAME,NAME or 'all' or 'none') that get the YNAT fine-tune")
    ap.add_argument("--ft-steps", type=int, default=8, help="YNAT optimizer steps (batch 8 x 64 tokens)")
    ap.add_argument("--ft-train", type=int, default=256, help="YNAT training examples (an epoch: 32 steps)")
    ap.add_argument("--ft-eval", type=int, default=64, help="YNAT examples scored (and in the selection split)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per subprocess before it is killed")
    ap.add_argument("--resume-only", action="store_true", help="only step 3, on the runs already in WORK")
    ap.add_argument("--json", type=Path, help="write every number here")
    args = ap.parse_args(argv)
    args.work = args.work.resolve()
    args.data_dir = args.data_dir.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


    t0 = time.perf_counter()
    env_info: dict[str, Any] = {"cpu": cpu_model(), "cores": os.cpu_count(), "native_bf16": native_bf16(),
                "load_start": os.getloadavg(), "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
                "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    import deepspeed
    import torch
    import transformers

    env_info["versions"] = {"torch": torch.__version__, "deepspeed": deepspeed.__version__,
                            "transformers": transformers.__version__}
    log(f"{env_info['cpu']}, {env_info['cores']} cores, native bf16: {env_info['native_bf16']}, "
        f"load {env_info['load_start'][0]:.2f}")
    log("data: the recipe's vocab and encode stages (cached under WORK/data)")
    encode_dir, tok_dir, data_s = prepare_data(args.work, args.data_dir)
    env_info["data_prep_s"] = round(data_s, 1)
    log(f"  tokenizer {tok_dir} ({data_s:.0f}s)")
    baseline = baseline_rss(rank_env(1))
    env_info["import_rss"] = baseline
    log(f"  a rank's imports alone: {baseline / GIB:.2f} GiB peak RSS")

    names = list(ALL_RUNS) if args.runs == "all" else args.runs.split(",")
    unknown = set(names) - set(ALL_RUNS)
    if unknown:
        ap.error(f"--runs: unknown {sorted(unknown)}; choose from {', '.join(ALL_RUNS)}")
    archs = [a for a in RECIPES if any(n.startswith(f"{a}-") for n in names)]
    ests = {}
    for arch in archs:
        e = estimates(arch, tok_dir, 2)
        ests[arch] = e
        log(f"{arch}: {e['params']:,} parameters (largest layer {e['largest_layer_params']:,}); DeepSpeed per rank "
            f"(2 ranks, no offload): ZeRO-2 {e['zero2']['ds_per_rank'] / GIB:.2f} GiB, ZeRO-3 "
            f"{e['zero3']['ds_per_rank'] / GIB:.2f} GiB")
    wanted = set(names) if args.finetune == "all" else set() if args.finetune == "none" else \
        set(args.finetune.split(","))
    results = []
    for name in names:
        arch, zero = name.split("-")
        r = rehearse(arch, zero, args, encode_dir, tok_dir, name in wanted)
        (args.work / "runs" / name / "rehearsal.json").write_text(json.dumps(r, indent=1, default=str))
        results.append(r)


    peaks = {label: f for key, label, f in PEAKS if key in ("H100", "A100")}
    env_info["load_end"] = os.getloadavg()
    env_info["wall_s"] = round(time.perf_counter() - t0, 1)
    proj = {}
    for arch in archs:
        e = ests[arch]
        c = e["config"]
        ft = flops_per_token(c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["vocab_size"], 512,
                             e["ffn_matrices"])
        for label, flops in peaks.items():
            gpu = Gpu(label, flops, 80.0)
            proj[f"{arch} / {label}"] = projection(e["params"], e["largest_layer_params"], ft, 500_000 * 2048 * 512,
                                                   gpu, vocab=c["vocab_size"]) | {"flops_per_token": ft}
    print()
    print(table(results, {a: {z: ests[a][z] for z in ("zero2", "zero3")} for a in archs}, baseline))
    print(f"\nwall {env_info['wall_s']:.0f}s; load average {env_info['load_start'][0]:.2f} -> {env_info['load_end'][0]:.2f}; "
          f"a rank's imports alone {baseline / GIB:.2f} GiB")
    for k, v in proj.items():
        print(f"{k}: {v['gpu_hours']:,.0f} GPU-hours ({v['wall_hours']:.1f} h on 8), ZeRO-2 {v['zero2_gib']:.1f} GiB/GPU, "
              f"ZeRO-3 {v['zero3_gib']:.1f} GiB/GPU, checkpoint {v['checkpoint_gib']:.2f} GiB at 40 % MFU")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"env": env_info, "estimates": ests, "runs": results, "projection": proj},
                                        indent=1, default=str))
        log(f"wrote {args.json}")
    failed = [r["name"] for r in results if r.get("steps_failed")]
    return 1 if failed and not args.resume_only else 0


if __name__ == "__main__":
    raise SystemExit(main())
