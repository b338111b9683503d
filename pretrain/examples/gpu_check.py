"""One prepared check of the GPU paths, for the few minutes a GPU machine is lent (see gpu_check.sh).

    python pretrain/examples/gpu_check.py --out gpu-check            # on a GPU: under 10 minutes on one H200
    python pretrain/examples/gpu_check.py --out gpu-check --toy      # every piece at toy size on CPU

Sections, each recorded in OUT/results.json as it finishes (a failed one keeps its error and the rest go on):
  env        versions, device, bf16 support
  matmul     the measured bf16 matrix-product rate (8192^3, the mean of 10 after 3 warm-ups)
  tiny       `tiny` on the device: train, evaluate, checkpoint, halt, resume; the resumed loss curve against an
             uninterrupted one; the export loads with AutoModelForMaskedLM in fp32
  small      `small` (6 x 768, vocabulary padded to 32,000 as KLUE-RoBERTa's) with bf16 and DeepSpeed ZeRO-2
             for a fixed number of steps: tokens/s and MFU as logged, and MFU recomputed here from tokens/s
  modernbert the same for ModernBERT `small` (pre-LN, RoPE, GeGLU; stock ModernBertForMaskedLM, SDPA), whose
             export loads with AutoModelForMaskedLM and answers fill-mask
  zero3      ZeRO-3 bf16: a checkpoint exported with `klue export-checkpoint` is fp32 and scores the run's own
             eval loss (within bf16 rounding); final/ holds the fp32 masters
  finetune   a short YNAT fine-tune on the device from the ZeRO-3 export (fixture data): fp32 weights, bf16
             autocast on the GPU
OUT/results.md is the same as a table. The data is the Korean fixture text of tests/fixtures/pretrain (carried
with the project; throughput does not depend on what the tokens say).

A script of the repository, not of the installed package (pretrain/examples/ is left out of the wheel): it runs
from a checkout and puts the checkout's root and its tests/ on sys.path, for the test kit's fixture encoder
(`testkit.pretrain.encode_fixture`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the project and its test helpers (testkit), from a checkout
# Each section imports what it uses inside its function: a section whose import fails on the GPU host (a library
# missing or broken there) is recorded as failed, and the other sections still run (`Check.section`).


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("gpu-check"))
    ap.add_argument("--toy", action="store_true", help="toy sizes on CPU (DeepSpeed's CPU accelerator, gloo)")
    ap.add_argument("--only", nargs="*", default=None, help="run these sections only")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    check = Check(args.out, args.toy)
    for name, fn in SECTIONS.items():
        if args.only is None or name in args.only:
            check.section(name, fn)
    check.write_markdown()
    failed = [n for n, r in check.results.items() if r.get("status") == "failed"]
    print(f"\n{len(check.results)} sections, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; "
          f"results in {args.out}")
    return 1 if failed else 0


class Check:
    def __init__(self, out: Path, toy: bool):
        self.out, self.toy = out, toy
        self.results: dict[str, dict[str, Any]] = {}
        self.data: tuple[Path, Path, Any] | None = None

    def section(self, name: str, fn: Callable[[Check], dict[str, Any]]) -> None:
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            res = {"status": "ok", **fn(self)}
        except Exception as e:  # noqa: BLE001 - one failed section must not cost the others their minutes
            res = {"status": "failed", "error": f"{type(e).__name__}: {e}",
                   "traceback": traceback.format_exc().splitlines()[-12:]}
        res["seconds"] = round(time.perf_counter() - t0, 1)
        self.results[name] = res
        print(json.dumps(res, indent=1, default=str)[:2000], flush=True)
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1, default=str) + "\n")

    def write_markdown(self) -> None:
        lines = ["| section | status | seconds | result |", "|---|---|---:|---|"]
        for name, r in self.results.items():
            shown = {k: v for k, v in r.items() if k not in ("status", "seconds", "traceback")}
            lines.append(f"| {name} | {r['status']} | {r['seconds']} | {json.dumps(shown, default=str)[:400]} |")
        (self.out / "results.md").write_text("\n".join(lines) + "\n")

    def encoded(self) -> tuple[Path, Path, Any]:
        """Tokenizer and encoded fixture text, built once (repeated: throughput needs samples, not variety)."""
        if self.data is None:
            from testkit.pretrain import encode_fixture

            self.data = encode_fixture(self.out / "data", n_shards=2, repeat=20 if self.toy else 400,
                                       eval_fraction=0.05)
        return self.data

    def config(self, name: str, **kw: Any) -> Any:
        from pretrain.train import TrainConfig

        enc, vocab, _ = self.encoded()
        return TrainConfig(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(self.out / name),
                           **kw)

    def launch(self, cfg: Any, processes: int) -> dict[str, Any]:
        """`pretrain.train` under torchrun, as the pretrain stage runs it (DeepSpeed needs a launcher)."""
        from pretrain.stages.pretrain import launch

        out = Path(cfg.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "train_config.json").write_text(cfg.model_dump_json(indent=1) + "\n")
        launch(out / "train_config.json", processes, deepspeed=cfg.deepspeed is not None)
        return json.loads((out / "summary.json").read_text())


# ---------------------------------------------------------------------------------------------------------


def env(c: Check) -> dict[str, Any]:
    import torch

    from pipeline.versions import package_versions

    out: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
                           **package_versions("transformers", "accelerate", "deepspeed", "tokenizers", "pydantic")}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        out.update(device=torch.cuda.get_device_name(), memory_gib=round(props.total_memory / 2**30, 1),
                   sm_count=props.multi_processor_count, bf16=torch.cuda.is_bf16_supported(),
                   cudnn=torch.backends.cudnn.version())
        try:
            out["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
        except OSError:
            out["driver"] = "nvidia-smi not found"
    elif not c.toy:
        raise RuntimeError("no CUDA device: run with --toy for the CPU version")
    return out


def matmul(c: Check) -> dict[str, Any]:
    import torch

    n, dtype, dev = (512, torch.float32, "cpu") if c.toy else (8192, torch.bfloat16, "cuda")
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    for _ in range(3):
        a @ b
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    for _ in range(10):
        a @ b
    sync()
    sec = (time.perf_counter() - t0) / 10
    return {"n": n, "dtype": str(dtype), "tflops": round(2 * n**3 / sec / 1e12, 1)}


def tiny(c: Check) -> dict[str, Any]:
    """Train, halt after a checkpoint, resume; compare with the uninterrupted run; load the export."""
    import torch
    from transformers import AutoModelForMaskedLM

    from pretrain.metrics import read_metrics
    from pretrain.train import Halted, train

    steps, every = (8, 4) if c.toy else (60, 20)
    kw = dict(model="tiny", seq_len=128, batch_size=8 if c.toy else 32, max_steps=steps, warmup_steps=2,
              lr=1e-3, log_every=1, eval_every=every, eval_batches=2, checkpoint_every=every)
    full = train(c.config("tiny-full", **kw))
    try:
        train(c.config("tiny-resumed", halt_after_step=every + every // 2, **kw))
    except Halted:
        pass
    resumed = train(c.config("tiny-resumed", **kw))
    a = {m["step"]: m["loss"] for m in read_metrics(c.out / "tiny-full" / "metrics.jsonl") if "loss" in m}
    b = {m["step"]: m["loss"] for m in read_metrics(c.out / "tiny-resumed" / "metrics.jsonl") if "loss" in m}
    diff = max(abs(a[s] - b[s]) for s in a)
    model = AutoModelForMaskedLM.from_pretrained(c.out / "tiny-resumed" / "final")
    dtypes = sorted({str(p.dtype) for p in model.parameters()})
    if diff > 1e-3 or dtypes != ["torch.float32"] or full["steps"] != resumed["steps"]:
        raise AssertionError(f"resume differs by {diff} or export dtypes {dtypes}")
    return {"steps": full["steps"], "resume_max_loss_diff": diff, "export_dtypes": dtypes,
            "eval_loss": resumed["eval_loss"], "tokens_per_s": full["tokens_per_s"],
            "device": str(torch.device("cuda" if torch.cuda.is_available() else "cpu"))}


def small(c: Check, architecture: str = "roberta") -> dict[str, Any]:
    """`small` bf16 ZeRO-2, fixed steps; MFU as logged and recomputed here from tokens/s."""
    from pretrain.architectures import build_config
    from pretrain.flops import step_flops
    from pretrain.train import TrainConfig

    size = "tiny" if c.toy else "small"
    name = "small" if architecture == "roberta" else f"small-{architecture}"
    # KLUE's 32k vocabulary on the GPU (its MLM head is a real share of the FLOPs); at toy size the fixture's own:
    # on a CPU without AMX bf16 is emulated, and a 32k head took 6-10 s of each section's 35
    head = {"vocab_size": 1000 if c.toy else 32000}
    cfg: TrainConfig = c.config(name, model=size, model_overrides=head, seq_len=128,
                                architecture=architecture,
                                batch_size=8 if c.toy else 64, max_steps=6 if c.toy else 400, warmup_steps=2,
                                lr=5e-4, log_every=2 if c.toy else 50, eval_every=10**6, eval_batches=1,
                                checkpoint_every=10**6, deepspeed="zero2", mixed_precision="bf16",
                                peak_tflops=1.0 if c.toy else None)
    summary = c.launch(cfg, 2 if c.toy else 1)
    _, vocab, _ = c.encoded()
    model_cfg = build_config(size, vocab_size=1000, seq_len=cfg.seq_len, pad_token_id=1, bos_token_id=0,
                             eos_token_id=2, overrides=head, architecture=architecture)
    if summary.get("mfu") is None:
        raise AssertionError(f"no MFU logged (peak {summary.get('peak')})")
    # recomputed with the nominal share of predicted positions (15 % of the non-special tokens ~ 14.8 %)
    flops_per_token = step_flops(model_cfg, cfg.seq_len, 1, 0) + 0.148 * (step_flops(model_cfg, cfg.seq_len, 0, 1))
    recomputed = summary["tokens_per_s"] * flops_per_token / summary["peak"]["flops_per_s"]
    world = summary["world_size"]
    recomputed /= world  # tokens/s is over all ranks, the peak per device
    return {"model": size, "architecture": architecture, "steps": summary["steps"],
            "tokens_per_s": round(summary["tokens_per_s"]), "mfu_logged": summary["mfu"],
            "mfu_recomputed": recomputed, "peak": summary["peak"], "mixed_precision": summary["mixed_precision"],
            "deepspeed": summary["deepspeed"], "world_size": world}


def modernbert(c: Check) -> dict[str, Any]:
    """`small` for ModernBERT; then its export (fp32, stock class) answers fill-mask on the device."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    out = small(c, "modernbert")
    final = c.out / "small-modernbert" / "final"
    model = AutoModelForMaskedLM.from_pretrained(final, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(final, local_files_only=True)
    fill = pipeline("fill-mask", model=model, tokenizer=tok, device=0 if torch.cuda.is_available() else -1)
    answers = fill(f"서울은 대한민국의 {tok.mask_token}이다.", top_k=3)
    if type(model).__name__ != "ModernBertForMaskedLM" or len(answers) != 3:
        raise AssertionError(f"export is {type(model).__name__}, fill-mask gave {answers}")
    return {**out, "export_class": type(model).__name__,
            "export_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
            "fill_mask_top3": [a["token_str"] for a in answers]}


def zero3(c: Check) -> dict[str, Any]:
    """ZeRO-3 bf16: export a checkpoint, check fp32 and its eval loss; final/ equals the fp32 masters."""
    import torch
    from safetensors.torch import load_file

    from pretrain.export import checkpoint_state, export_checkpoint
    from pretrain.metrics import read_metrics
    from pretrain.train import evaluate_folder

    steps = 6 if c.toy else 60
    cfg = c.config("zero3", model="tiny" if c.toy else "small", seq_len=128, batch_size=8 if c.toy else 32,
                   max_steps=steps, warmup_steps=2, lr=5e-4, log_every=steps // 2, eval_every=steps // 2,
                   eval_batches=2, checkpoint_every=steps // 2, keep_checkpoints=3, deepspeed="zero3",
                   mixed_precision="bf16")
    c.launch(cfg, 2 if c.toy else 1)
    run = Path(cfg.out_dir)
    export_checkpoint(run, c.out / "zero3-export", step=steps // 2, language="ko")  # the Korean fixture text
    exported = load_file(c.out / "zero3-export" / "model.safetensors")
    masters = {k.removeprefix("mlm."): v for k, v in checkpoint_state(run / "checkpoints" / f"step-{steps:08d}").items()}
    final = load_file(run / "final" / "model.safetensors")
    equal = all(torch.equal(final[k], masters[k]) for k in final if k in masters)
    logged = next(m["eval_loss"] for m in read_metrics(run / "metrics.jsonl") if m["step"] == steps // 2
                  and "eval_loss" in m)
    got = evaluate_folder(c.out / "zero3-export", cfg)["eval_loss"]
    dtypes = sorted({str(t.dtype) for t in exported.values()})
    if dtypes != ["torch.float32"] or not equal or abs(got - logged) > 0.05:
        raise AssertionError(f"dtypes {dtypes}, final == masters {equal}, eval {got} vs logged {logged}")
    return {"export_dtypes": dtypes, "final_equals_fp32_masters": equal, "eval_loss_export": got,
            "eval_loss_logged_bf16": logged}


def finetune(c: Check) -> dict[str, Any]:
    """A short YNAT fine-tune from the ZeRO-3 export on the fixture data."""
    import torch

    from finetune.data import load_task_data
    from finetune.registry import get_task
    from finetune.trainer import FinetuneConfig, finetune_once

    fx = ROOT / "tests" / "fixtures" / "finetune"
    task = get_task("ynat", fx)
    data = load_task_data(task, fx, split="official")
    hp = task.defaults.__class__(**{**task.defaults.__dict__, "epochs": 1, "batch_size": 16, "max_length": 64})
    res = finetune_once(task, c.out / "zero3-export", data, FinetuneConfig(hp=hp, seed=1, progress=False))
    return {"metrics": res.metrics, "steps": res.total_steps, "train_seconds": res.train_seconds,
            "device": "cuda" if torch.cuda.is_available() else "cpu"}


SECTIONS: dict[str, Callable[[Check], dict[str, Any]]] = {
    "env": env, "matmul": matmul, "tiny": tiny, "small": small, "modernbert": modernbert, "zero3": zero3,
    "finetune": finetune,
}

if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
