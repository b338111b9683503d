"""What bf16 buys on this CPU, and what stands between a pretraining step and the CPU's peak (issue 47).

    python bench/precision.py peak                        # fp32 and bf16 matmul peaks, measured now (not cached)
    python bench/precision.py crossover                   # fp32 vs bf16 autocast steps by width: where `auto` switches
    python bench/precision.py sizing --threads 1 --precision bf16   # a time budget as steps, by shape (a sweep's)
    python bench/precision.py anatomy --shape suite [--precision bf16] [--kernels stock]   # where a step's time goes
    python bench/precision.py levers --shape suite [--precision bf16] [--compile]   # each change against the loop's step
    KLUE_DATA_DIR=../shared/data python bench/precision.py quality --steps 2000   # [MASK] loss, bf16 against fp32

Every timing is a training step of the loop's model (`pretrain.model.SparseMLM` over a stock ModernBERT with
the kernels the loop picks at that precision on this machine, `pretrain.engine.cpu_kernels`: in bf16 on a CPU
with native bf16, eager attention in a compiled encoder, whose compile time is reported apart; the loop's
fused AdamW and groups, gradient clipping) on a packed batch of random ids with 15 % masked: packed samples
have no padding, so the ids do not change the time. Each configuration runs in its own process (threads and
environment set before torch starts), configurations alternate over `--rounds` rounds, and a row reports the
median milliseconds a step after `--warmup` steps: a one-off stall on a shared machine moves no row. Run
alone, and say the CPU model and the load with the numbers (printed here).

`crossover` backs `pipeline.hardware.BF16_MIN_HIDDEN` (the width from which `auto` picks bf16 on a CPU with native
bf16); without native bf16 it says so and times fp32 alone unless `--force-bf16` (emulated bf16 is ~100x slower).
`quality` trains the suite's shape on the shared corpus with the pretrain stage's loop in both precisions (same
data, seed and steps) and compares the held-out [MASK] loss; the issue's bar is 0.05 nats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (layers, hidden, heads): the shapes the CPU recipes use or may use, and KLUE-base's
SHAPES = {"tiny": (4, 128, 4), "suite": (4, 256, 4), "6x512": (6, 512, 8), "8x512": (8, 512, 8),
          "base": (12, 768, 12)}


def overrides(layers: int, hidden: int, heads: int) -> dict[str, int]:
    from pretrain.architectures import glu_inner

    return {"num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
            "intermediate_size": 704 if hidden == 256 else glu_inner(hidden)}  # the suite's 704, as its recipe


# -- one configuration, in its own process -------------------------------------------------------------------------


def step_model(shape: tuple[int, int, int], vocab: int, seq_len: int, precision: str, attention: str | None = "loop",
               compile_encoder: str | bool | None = "loop") -> tuple[Any, Any, bool]:
    """(config, `SparseMLM`, whether its encoder is compiled) of a ModernBERT of `shape`, with the kernels the loop
    would use at `precision` here (`pretrain.engine.cpu_kernels`) where `attention` / `compile_encoder` say "loop",
    else those named (None: the stock attention, an eager encoder; "encoder": compiled in place, static shapes)."""
    from pretrain.architectures import build_config
    from pretrain.config import PretrainParams
    from pretrain.engine import cpu_kernels
    from pretrain.model import training_model

    cfg = build_config("tiny", vocab_size=vocab, seq_len=seq_len, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                       overrides=overrides(*shape), architecture="modernbert")
    loop = cpu_kernels(PretrainParams(architecture="modernbert"), precision)
    compiled = compile_encoder == "encoder" or (compile_encoder == "loop" and loop.compile)
    model = training_model(cfg, 0, loop.attention if attention == "loop" else attention, compiled)
    return cfg, model, compiled


def time_steps(spec: dict[str, Any]) -> dict[str, Any]:
    """Build the model and optimizer of `spec`, run `warmup + steps` training steps, return per-step times and the
    step's model FLOPs (`pretrain.flops.step_flops`)."""
    import torch

    from pretrain.flops import step_flops

    torch.set_num_threads(spec["threads"])
    cfg, model, compiled = step_model(spec["shape"], spec["vocab"], spec["seq_len"], spec["precision"],
                                      spec.get("attention", "loop"), spec.get("compile", "loop"))
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                                  lr=1e-4, betas=(0.9, 0.98), eps=1e-6, fused=not spec.get("foreach") or None)
    compiled_s = None
    if spec.get("compile") is True:
        t = time.perf_counter()
        model = torch.compile(model, dynamic=True)  # the number of masked positions changes every batch
        compiled_s = t
    elif compiled:
        compiled_s = time.perf_counter()  # the first step compiles the encoder: its time is reported apart
    gen = torch.Generator().manual_seed(0)
    batch, seq = spec["batch"], spec["seq_len"]

    def make_batch() -> tuple[Any, Any]:
        ids = torch.randint(5, spec["vocab"], (batch, seq), generator=gen)
        masked = torch.rand(batch, seq, generator=gen) < 0.15
        labels = torch.where(masked, ids, torch.full_like(ids, -100))
        return torch.where(masked, torch.full_like(ids, 4), ids), labels

    bf16 = spec["precision"] == "bf16"
    times, predicted = [], []
    for i in range(spec["warmup"] + spec["steps"]):
        ids, labels = make_batch()
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(input_ids=ids, labels=labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if i == 0 and compiled_s is not None:
            compiled_s = time.perf_counter() - compiled_s
        if i >= spec["warmup"]:
            times.append(time.perf_counter() - t)
            predicted.append(int((labels != -100).sum()))
    flops = step_flops(cfg, seq, batch * seq, round(statistics.mean(predicted)))
    return {"times": times, "flops": flops, "compile_s": compiled_s}


class SpecFailed(RuntimeError):
    """A configuration's process failed (its stderr's tail is the message)."""


def run_spec(spec: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "_child", json.dumps(spec)], capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": str(spec["threads"]), **(env or {})})
    if proc.returncode:
        raise SpecFailed(f"{spec} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def alternate(configs: dict[str, tuple[dict[str, Any], dict[str, str]]], rounds: int,
              optional: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Run every configuration once per round, in turn, and pool each one's step times. A failing configuration
    ends the bench, unless it is `optional` (a lever that may not work here): that one is reported and dropped."""
    pooled: dict[str, dict[str, Any]] = {}
    configs = dict(configs)
    for r in range(rounds):
        for name, (spec, env) in list(configs.items()):
            try:
                res = run_spec(spec, env)
            except SpecFailed as e:
                if name not in optional:
                    sys.exit(str(e))
                print(f"  {name}: dropped, its process failed:\n{e}", file=sys.stderr)
                del configs[name]
                pooled.pop(name, None)
                continue
            into = pooled.setdefault(name, {"times": [], "flops": res["flops"], "compile_s": []})
            into["times"] += res["times"]
            if res["compile_s"] is not None:
                into["compile_s"].append(res["compile_s"])
            print(f"  round {r + 1}/{rounds} {name}: {statistics.median(res['times']) * 1e3:.0f} ms/step",
                  file=sys.stderr)
    return pooled


def describe_machine(threads: int) -> str:
    import torch

    from pipeline.hardware import cpu_model, native_bf16

    return (f"{cpu_model()} ({torch.backends.cpu.get_cpu_capability()}, native bf16: {native_bf16() or 'none'}), "
            f"{threads} threads, torch {torch.__version__}, load average {os.getloadavg()[0]:.2f}")


def base_spec(args: argparse.Namespace, shape: tuple[int, int, int], **kw: Any) -> dict[str, Any]:
    return {"shape": shape, "batch": args.batch, "seq_len": args.seq_len, "vocab": args.vocab, "threads": args.threads,
            "steps": args.steps, "warmup": args.warmup, "precision": "fp32", **kw}


def row(name: str, res: dict[str, Any], tokens: int, peak: Any, baseline_ms: float | None) -> dict[str, Any]:
    """A table row; `peak` (`pipeline.hardware.mfu_peak`) None: no MFU (emulated bf16)."""
    ms = statistics.median(res["times"]) * 1e3
    out = {"config": name, "ms_per_step": round(ms, 1), "tokens_per_s": round(tokens / ms * 1e3),
           "mfu": round(res["flops"] / (ms / 1e3) / (peak.tflops * 1e12), 4) if peak else None,
           "spread_ms": [round(min(res["times"]) * 1e3, 1), round(max(res["times"]) * 1e3, 1)]}
    if baseline_ms:
        out["speedup"] = round(baseline_ms / ms, 3)
    if res.get("compile_s"):
        out["compile_s"] = round(statistics.median(res["compile_s"]), 1)
    return out


def print_rows(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"{'configuration':44s} {'ms/step':>8s} {'tokens/s':>9s} {'MFU':>6s} {'speed-up':>9s}  min-max ms")
    for r in rows:
        extra = f"  (compile {r['compile_s']:.0f} s)" if "compile_s" in r else ""
        mfu = f"{r['mfu']:6.1%}" if r["mfu"] is not None else f"{'–':>6s}"
        print(f"{r['config']:44s} {r['ms_per_step']:8.0f} {r['tokens_per_s']:9,d} {mfu} "
              f"{r.get('speedup', 1.0):8.2f}x  {r['spread_ms'][0]:.0f}-{r['spread_ms'][1]:.0f}{extra}")


# -- the commands --------------------------------------------------------------------------------------------------


def cmd_peak(args: argparse.Namespace) -> dict[str, Any]:
    from pipeline.hardware import measure_matmul, native_bf16

    out = {}
    for dtype in ("fp32", "bf16"):
        if dtype == "bf16" and not native_bf16() and not args.force_bf16:
            print("bf16: no native bf16 on this CPU; measured on small products only", file=sys.stderr)
        p = measure_matmul(dtype, args.threads)
        out[dtype] = p.__dict__
        print(p.label)
    return out


def cmd_crossover(args: argparse.Namespace) -> dict[str, Any]:
    """fp32 against bf16 autocast, one step each, at each width (4 layers) and KLUE-base's 12 x 768: the speed-up
    and what `auto` resolves to (`pipeline.hardware.resolve_precision`)."""
    from pipeline.hardware import mfu_peak, native_bf16, resolve_precision

    do_bf16 = bool(native_bf16()) or args.force_bf16
    if not do_bf16:
        print("no native bf16 on this CPU: `auto` is fp32 at every width; fp32 timed alone (--force-bf16 times "
              "emulated bf16, ~100x slower)", file=sys.stderr)
    shapes = [(4, w, max(2, w // 64)) for w in args.widths] + ([] if args.no_base else [SHAPES["base"]])
    rows = []
    for shape in shapes:
        batch = args.batch if shape != SHAPES["base"] else args.base_batch
        configs = {"fp32": (base_spec(args, shape, batch=batch), {})}
        if do_bf16:
            configs["bf16"] = (base_spec(args, shape, batch=batch, precision="bf16"), {})
        pooled = alternate(configs, args.rounds)
        tokens = batch * args.seq_len
        fp32 = row(f"{shape[0]} x {shape[1]}, batch {batch} x {args.seq_len}, fp32", pooled["fp32"], tokens,
                   mfu_peak("fp32", args.threads), None)
        rows.append(fp32)
        if do_bf16:
            rows.append(row(f"{shape[0]} x {shape[1]}, batch {batch} x {args.seq_len}, bf16", pooled["bf16"], tokens,
                            mfu_peak("bf16", args.threads), fp32["ms_per_step"]))
        rows[-1]["auto"] = resolve_precision("auto", shape[1]).name
    print_rows(f"fp32 against bf16 autocast: {describe_machine(args.threads)}", rows)
    return {"rows": rows}


def parse_shape(text: str) -> tuple[int, int, int]:
    """`6x512` (layers x hidden) as (layers, hidden, heads), one head per 64 dimensions."""
    try:
        layers, hidden = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape {text!r}: expected LAYERSxHIDDEN, e.g. 6x512") from None
    if hidden % 64:
        raise argparse.ArgumentTypeError(f"shape {text!r}: the hidden size must be a multiple of 64 (64 a head)")
    return layers, hidden, hidden // 64


def cmd_sizing(args: argparse.Namespace) -> dict[str, Any]:
    """A time budget as steps: each shape's step at `--precision` and `--threads`, timed alone, and the steps that
    fit in `--budget-s` at that rate. A sweep that trains those steps (recipes/size-sweep-bf16.yaml) is the
    equal-time comparison, yet byte-reproducible and indifferent to what else shares the cores while it runs."""
    from pipeline.hardware import mfu_peak

    configs = {f"{s[0]} x {s[1]}": (base_spec(args, s, precision=args.precision), {}) for s in args.shapes}
    pooled = alternate(configs, args.rounds)
    rows = []
    for (name, res), shape in zip(pooled.items(), args.shapes, strict=True):
        r = row(f"{name}, batch {args.batch} x {args.seq_len}, {args.precision}", res, args.batch * args.seq_len,
                mfu_peak(args.precision, args.threads), None)
        r["shape"] = f"{shape[0]}x{shape[1]}"
        r["steps_in_budget"] = int(args.budget_s * 1e3 // r["ms_per_step"])
        rows.append(r)
    print_rows(f"step times for a {args.budget_s:g} s budget: {describe_machine(args.threads)}", rows)
    for r in rows:
        print(f"{r['shape']}: {r['steps_in_budget']} steps in {args.budget_s:g} s")
    return {"budget_s": args.budget_s, "rows": rows}


def cmd_levers(args: argparse.Namespace) -> dict[str, Any]:
    """The loop's step at one shape against each change the issue names, alternated in rounds."""
    from pipeline.hardware import mfu_peak

    shape = SHAPES[args.shape]
    base = base_spec(args, shape, precision=args.precision)
    configs: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
        "the loop's step (fused AdamW)": (base, {}),
        "foreach AdamW (the loop's before 2026-12-06)": ({**base, "foreach": True}, {}),
        "threads bound to cores (OMP_PROC_BIND=close)": (base, {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}),
        "the stock kernels (SDPA), eager": ({**base, "attention": None, "compile": None}, {}),
        "attention by matrix products (eager), eager": ({**base, "attention": "eager", "compile": None}, {}),
        "SDPA, the encoder compiled (static shapes)": ({**base, "attention": None, "compile": "encoder"}, {}),
    }
    if args.compile:
        configs["torch.compile, the whole model (dynamic)"] = ({**base, "compile": True}, {})
    for b in args.batches:
        if b != args.batch:
            configs[f"batch {b} x {args.seq_len}"] = ({**base, "batch": b}, {})
    pooled = alternate(configs, args.rounds, optional=tuple(k for k in configs if "compile" in k))
    peak = mfu_peak(args.precision, args.threads)
    first = next(iter(pooled))
    base_ms = statistics.median(pooled[first]["times"]) * 1e3
    rows = []
    for name, res in pooled.items():
        spec = configs[name][0]
        tokens = spec["batch"] * args.seq_len
        r = row(name, res, tokens, peak, None if name == first else base_ms)
        if spec["batch"] != args.batch:  # per token: a bigger batch does more work a step
            r["speedup"] = round(r["tokens_per_s"] / (args.batch * args.seq_len / base_ms * 1e3), 3)
        rows.append(r)
    print_rows(f"levers at {shape[0]} x {shape[1]}, batch {args.batch} x {args.seq_len}, {args.precision}: "
               f"{describe_machine(args.threads)}", rows)
    return {"rows": rows}


def cmd_anatomy(args: argparse.Namespace) -> dict[str, Any]:
    """One shape's step split by phase (timed) and by operator kind (torch.profiler's self time), with the
    FLOPs those matrix products did against the peak."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from pipeline.hardware import matmul_peak
    from pretrain.data import SpecialIds, mask_tokens, step_generator
    from pretrain.flops import step_flops

    torch.set_num_threads(args.threads)
    shape = SHAPES[args.shape]
    kernels = "loop" if args.kernels == "loop" else None
    cfg, model, _ = step_model(shape, args.vocab, args.seq_len, args.precision, kernels, kernels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-6, fused=True)
    special = SpecialIds(cls=0, sep=2, pad=1, mask=4, vocab_size=args.vocab, all_special=(0, 1, 2, 3, 4))
    gen = torch.Generator().manual_seed(0)
    phases: dict[str, list[float]] = {k: [] for k in ("data (masking)", "forward", "backward", "clip", "optimizer")}
    predicted = []

    def step(i: int) -> None:
        t0 = time.perf_counter()
        ids = torch.randint(5, args.vocab, (args.batch, args.seq_len), generator=gen)
        ids, labels = mask_tokens(ids, special, step_generator(0, i, 0, 0))
        t1 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = model(input_ids=ids, labels=labels)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        t4 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t5 = time.perf_counter()
        if i >= args.warmup:
            for k, v in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
                phases[k].append(v)
            predicted.append(int((labels != -100).sum()))

    for i in range(args.warmup + args.steps):
        step(i)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(3):
            step(args.warmup + args.steps + i)
    kinds: dict[str, float] = {}
    for e in prof.key_averages():
        name = e.key
        kind = ("matrix products" if name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")
                else "attention (SDPA kernels)" if "scaled_dot_product" in name or "flash_attention" in name
                else "log-softmax / cross-entropy" if "log_softmax" in name or "nll_loss" in name
                else "copies and dtype casts (bf16: autocast's)" if name in ("aten::copy_", "aten::_to_copy")
                else "elementwise, norms, copies and the rest")
        kinds[kind] = kinds.get(kind, 0.0) + e.self_cpu_time_total / 1e6 / 3
    step_s = sum(statistics.median(v) for v in phases.values())
    flops = step_flops(cfg, args.seq_len, args.batch * args.seq_len, round(statistics.mean(predicted)))
    peak = matmul_peak(args.precision, args.threads)
    total_kinds = sum(kinds.values())
    print(f"\nanatomy of a {shape[0]} x {shape[1]} step, batch {args.batch} x {args.seq_len}, {args.precision}, "
          f"{args.kernels} kernels: "
          f"{describe_machine(args.threads)}")
    print(f"step {step_s * 1e3:.0f} ms, {flops / 1e9:.1f} GFLOP (model FLOPs), MFU {flops / step_s / (peak.tflops * 1e12):.1%}"
          f" of {peak.label}")
    print(f"{'phase':20s} {'ms':>7s} {'share':>6s}")
    for k, v in phases.items():
        print(f"{k:20s} {statistics.median(v) * 1e3:7.1f} {statistics.median(v) / step_s:6.1%}")
    print(f"\n{'operator kind (profiled self time)':40s} {'ms':>7s} {'share':>6s}")
    for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{k:40s} {v * 1e3:7.1f} {v / total_kinds:6.1%}")
    mm = kinds.get("matrix products", 0.0)
    if mm:
        print(f"\nthe matrix products ran at {flops / mm / 1e12:.3f} TFLOP/s of model FLOPs "
              f"({flops / mm / (peak.tflops * 1e12):.0%} of the peak; under SDPA the attention's products are in its "
              "kernels, under eager attention in these)")
    return {"phases_ms": {k: round(statistics.median(v) * 1e3, 2) for k, v in phases.items()},
            "kinds_ms": {k: round(v * 1e3, 2) for k, v in kinds.items()}, "flops": flops,
            "step_ms": round(step_s * 1e3, 1), "peak": peak.label}


def cmd_quality(args: argparse.Namespace) -> dict[str, Any]:
    """The suite's shape trained `--steps` steps by the pretrain stage's loop in fp32 and in bf16 autocast, same
    data, seed and schedule; the held-out [MASK] loss of each at the end."""
    from bench.pretrain import encode_texts, read_texts, train_tokenizer
    from pipeline.hardware import native_bf16
    from pretrain.config import TrainConfig
    from pretrain.train import train

    data = os.environ.get("KLUE_DATA_DIR")
    if not data:
        sys.exit("set KLUE_DATA_DIR to the shared data folder")
    if not native_bf16() and not args.force_bf16:
        sys.exit("no native bf16 on this CPU: bf16 would run emulated, ~100x slower (--force-bf16 to run it anyway)")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-precision-"))
    texts = read_texts(Path(data), args.docs)
    tok_dir = work / "vocab" / "tok"
    if not tok_dir.is_dir():
        train_tokenizer(texts, tok_dir, args.vocab)
    enc = encode_texts(texts, work, tok_dir, eval_fraction=0.01)
    out = {}
    for precision in ("fp32", "bf16"):
        cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(tok_dir), out_dir=str(work / precision),
                          architecture="modernbert", model_overrides=overrides(*SHAPES["suite"]), seq_len=128,
                          batch_size=16, max_steps=args.steps, warmup_steps=200, lr=1e-3, eval_every=args.steps,
                          eval_batches=20, log_every=50, checkpoint_every=args.steps, threads=args.threads, seed=0,
                          mixed_precision="no" if precision == "fp32" else "bf16")
        s = train(cfg)
        out[precision] = {k: s[k] for k in ("eval_mask_loss", "eval_loss", "last_loss", "tokens_per_s", "mfu")}
        print(f"{precision}: [MASK] loss {s['eval_mask_loss']:.4f}, {s['tokens_per_s']:,.0f} tokens/s", file=sys.stderr)
    gap = out["bf16"]["eval_mask_loss"] - out["fp32"]["eval_mask_loss"]
    print(f"\n[MASK] loss after {args.steps} steps of 4 x 256 (batch 16 x 128, seed 0): fp32 "
          f"{out['fp32']['eval_mask_loss']:.4f}, bf16 {out['bf16']['eval_mask_loss']:.4f}, bf16 - fp32 {gap:+.4f} nats; "
          f"bf16 / fp32 tokens/s {out['bf16']['tokens_per_s'] / out['fp32']['tokens_per_s']:.2f}x; "
          f"{describe_machine(args.threads)}")
    return {**out, "gap_nats": gap}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["peak", "crossover", "sizing", "levers", "anatomy", "quality", "_child"])
    ap.add_argument("spec", nargs="?", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="suite")
    ap.add_argument("--widths", type=int, nargs="+", default=[128, 192, 256, 384, 512])
    ap.add_argument("--shapes", type=parse_shape, nargs="+", default=[(4, 256, 4), (6, 384, 6), (6, 512, 8)],
                    help="sizing: LAYERSxHIDDEN shapes to time (default: recipes/size-sweep-bf16.yaml's)")
    ap.add_argument("--budget-s", type=float, default=1200, help="sizing: the budget to turn into steps")
    ap.add_argument("--batch", type=int, default=16, help="sequences a step (the suite's 16)")
    ap.add_argument("--base-batch", type=int, default=4, help="sequences a step of the 12 x 768 crossover row")
    ap.add_argument("--no-base", action="store_true", help="crossover: leave out the 12 x 768 row")
    ap.add_argument("--batches", type=int, nargs="+", default=[16, 32, 64], help="levers: batch sizes to time")
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=16000)
    ap.add_argument("--steps", type=int, default=8, help="timed steps a process (quality: training steps)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--compile", action="store_true", help="levers: also torch.compile (minutes of compiling)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="levers, anatomy: the step's precision (bf16: autocast over fp32 weights, as the loop)")
    ap.add_argument("--kernels", choices=["loop", "stock"], default="loop",
                    help="anatomy: the loop's kernels at --precision (pretrain.engine.cpu_kernels), or the stock ones "
                         "(SDPA, an eager module: plain autocast)")
    ap.add_argument("--force-bf16", action="store_true", help="time bf16 without native bf16 (emulated)")
    ap.add_argument("--docs", type=int, default=20000, help="quality: documents of the shared corpus")
    ap.add_argument("--workdir", help="quality: keep the tokenizer, shards and runs here")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    if args.command == "_child":
        print(json.dumps(time_steps(json.loads(args.spec))))
        return
    if args.command == "quality" and args.steps == 8:
        args.steps = 2000
    result = {"peak": cmd_peak, "crossover": cmd_crossover, "sizing": cmd_sizing, "levers": cmd_levers,
              "anatomy": cmd_anatomy, "quality": cmd_quality}[args.command](args)
    if args.json:
        args.json.write_text(json.dumps({"command": args.command, "machine": describe_machine(args.threads),
                                         "result": result}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
