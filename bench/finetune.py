"""Fine-tuning throughput: our trainer (`finetune.trainer`) against transformers' `Trainer`, same model, data,
hyperparameters and seed, in one run.

Both sides get the same features (the task's own `encode`), the same collator (dynamic padding per batch), the
same fresh head on the same tiny RoBERTa (built from a config with a WordPiece trained on the task's text, or
`--model DIR`), AdamW with the same groups, eps, clipping and linear warmup/decay, and an evaluation after every
epoch scored by the same `compute_metrics` that `klue score` runs. Each run is its own process, so its peak RSS
is its own. Rows:

- `HF Trainer`: `Trainer` with its default random sampler; logits reduced to what the metric needs
  (`preprocess_logits_for_metrics`: argmax for NER), as its docs advise for token tasks.
- `HF Trainer, group_by_length`: `train_sampling_strategy="group_by_length"` (its `LengthGroupedSampler`).
- `ours, uniform shuffle`: `group_by_length=False`, the sampler of KLUE-baseline; the same algorithm as the
  first row, so its metrics should agree with it to the last digit when the batch order and dropout draws agree.
- `ours`: the defaults (length-grouped batches, length-sorted evaluation), in fp32.
- `HF Trainer, group_by_length, bf16` and `ours (defaults, bf16)`: the same two with bf16 autocast over fp32 weights
  (`bf16=True`; `mixed_precision: bf16`); by default only where the CPU has native bf16 (AMX, AVX512-BF16).

Reported: training examples/s (examples × epochs / seconds of the training loop, evaluations excluded),
evaluation examples/s, wall-clock of the whole run (model load to last evaluation), peak RSS, the task's main
metric, and ours over each HF row by wall-clock.

    KLUE_DATA_DIR=../shared/data python bench/finetune.py --tasks nli,ner --max-train 8000 --max-eval 2000 --epochs 2 --lr 5e-4
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ROWS = ("hf", "hf-grouped", "ours-uniform", "ours")
# bf16 autocast on the CPU, ours and HF's (`bf16=True`), both length-grouped: run by default where the CPU has
# native bf16 (pipeline.hardware.native_bf16); elsewhere emulated bf16 is ~100x slower, so only when asked by --rows
BF16_ROWS = ("hf-bf16", "ours-bf16")
LABELS = {"hf": "HF Trainer", "hf-grouped": "HF Trainer, group_by_length", "ours-uniform": "ours, uniform shuffle",
          "ours": "ours (defaults, fp32)", "hf-bf16": "HF Trainer, group_by_length, bf16",
          "ours-bf16": "ours (defaults, bf16)"}


def task_texts(task: Any, examples: list[dict]) -> list[str]:
    out = []
    for ex in examples:
        if "text" in ex:
            out.append(ex["text"])
        else:
            a, b = task.texts(ex)
            out += [a] + ([b] if b else [])
    return out


def build_model_dir(tasks: list[str], data_dir: Path, out: Path, args: argparse.Namespace) -> Path:
    """A tiny RoBERTa from its config and a WordPiece trained on the tasks' training texts: what the bench
    measures is the trainer, not the weights."""
    from bench.pretrain import train_tokenizer
    from finetune.data import load_task_data
    from finetune.registry import get_task
    from pretrain.architectures import build_config
    from pretrain.model import build_model

    texts: list[str] = []
    for name in tasks:
        task = get_task(name, data_dir=data_dir)
        texts += task_texts(task, load_task_data(task, data_dir, max_train=args.max_train,
                                                 protocol="klue-baseline").train)  # what `child` trains on
    tok = train_tokenizer(texts, out, args.vocab)
    cfg = build_config(args.size, vocab_size=len(tok), seq_len=512, pad_token_id=tok.pad_token_id,
                       bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
    build_model(cfg, seed=0).save_pretrained(out, safe_serialization=True)
    return out


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One run, in this process; prints its result as the last line of stdout."""
    import torch

    from finetune.data import load_task_data
    from finetune.registry import get_task

    torch.set_num_threads(spec["threads"])
    data_dir, model_dir = Path(spec["data_dir"]), Path(spec["model_dir"])
    task = get_task(spec["task"], data_dir=data_dir)
    # KLUE-baseline's protocol: the Trainer rows evaluate the eval split each epoch, so ours scores (and chooses on)
    # the same split and both train on the same examples
    data = load_task_data(task, data_dir, max_train=spec["max_train"], max_eval=spec["max_eval"],
                          protocol="klue-baseline")
    # one evaluation an epoch and no early stopping, as the Trainer rows (`eval_strategy="epoch"`)
    bf16 = spec["row"].endswith("-bf16")
    hp = task.defaults.replace(epochs=spec["epochs"], max_length=min(task.defaults.max_length, 510),
                               group_by_length=spec["row"] in ("ours", "hf-grouped", *BF16_ROWS), evals_per_epoch=1,
                               patience=None, mixed_precision="bf16" if bf16 else "no")
    if spec.get("lr"):
        hp = hp.replace(learning_rate=spec["lr"])
    started = time.perf_counter()
    if spec["row"].startswith("ours"):
        res = run_ours(task, model_dir, data, hp, spec["seed"])
    else:
        res = run_hf(task, model_dir, data, hp, spec["seed"], Path(spec["work"]))
    res["wall_s"] = time.perf_counter() - started
    res["n_train"], res["n_eval"], res["epochs"] = len(data.train), len(data.eval), hp.epochs
    res["hp"] = hp.model_dump()
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def run_ours(task: Any, model_dir: Path, data: Any, hp: Any, seed: int) -> dict[str, Any]:
    from finetune.trainer import FinetuneConfig, finetune_once

    r = finetune_once(task, model_dir, data, FinetuneConfig(hp=hp, seed=seed, progress=False))
    return {"metrics": r.metrics, "history": r.history, "train_s": r.train_seconds - r.eval_seconds,
            "eval_s": r.eval_seconds, "n_features_train": r.n_train_features}


def run_hf(task: Any, model_dir: Path, data: Any, hp: Any, seed: int, work: Path) -> dict[str, Any]:
    import numpy as np
    from transformers import AutoTokenizer, Trainer, TrainerCallback, TrainingArguments
    from transformers.trainer_utils import set_seed

    from finetune.trainer import model_inputs, usable_length

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    task.prepare_tokenizer(tokenizer)
    set_seed(seed)  # as ours: the seed, then the head's init
    model = task.build_model(model_dir, tokenizer, False)
    max_length = usable_length(model.config, tokenizer, hp.max_length)
    train_features = task.encode(data.train, tokenizer, max_length)
    eval_features = task.encode(data.eval, tokenizer, max_length)
    history: list[dict[str, Any]] = []
    clock = {"eval": 0.0}

    def compute_metrics(p: Any) -> dict[str, Any]:
        preds = task.predictions(np.asarray(p.predictions), eval_features, data.eval)
        metrics = task.compute_metrics(preds, data.eval)
        history.append(metrics)
        return {k: v for k, v in metrics.items() if isinstance(v, (int, float))}

    def reduce(logits: Any, labels: Any) -> Any:  # what ours keeps per feature, too (`Task.eval_outputs`)
        logits = logits[0] if isinstance(logits, tuple) else logits  # the model's extra outputs, if any
        return logits.argmax(dim=-1) if logits.ndim == 3 else logits

    class EvalClock(TrainerCallback):
        def on_epoch_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            clock["t0"] = time.perf_counter()

        def on_evaluate(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            clock["eval"] += time.perf_counter() - clock["t0"]

    targs = TrainingArguments(
        output_dir=str(work), per_device_train_batch_size=hp.batch_size, per_device_eval_batch_size=hp.eval_batch_size,
        learning_rate=hp.learning_rate, num_train_epochs=hp.epochs, warmup_steps=hp.warmup_ratio,
        weight_decay=hp.weight_decay, max_grad_norm=hp.max_grad_norm, adam_epsilon=hp.adam_epsilon,
        lr_scheduler_type="linear", eval_strategy="epoch", save_strategy="no", logging_strategy="no",
        report_to=[], use_cpu=True, dataloader_num_workers=0, seed=seed, data_seed=seed, disable_tqdm=True,
        bf16=hp.mixed_precision == "bf16",
        train_sampling_strategy="group_by_length" if hp.group_by_length else "random",
        remove_unused_columns=False)
    trainer = Trainer(model=model, args=targs, train_dataset=model_inputs(train_features),
                      eval_dataset=model_inputs(eval_features), data_collator=task.collator(tokenizer),
                      compute_metrics=compute_metrics, preprocess_logits_for_metrics=reduce,
                      callbacks=[EvalClock()])
    t0 = time.perf_counter()
    trainer.train()
    total = time.perf_counter() - t0
    best = max(history, key=lambda m: m.get(task.main_metric) or -1e9)  # ours selects the best epoch, too
    return {"metrics": best, "history": history, "train_s": total - clock["eval"], "eval_s": clock["eval"],
            "n_features_train": len(train_features)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="nli,ner")
    ap.add_argument("--max-train", type=int, default=3000)
    ap.add_argument("--max-eval", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--lr", type=float, help="learning rate for every task (default: the task's; a tiny model "
                    "from scratch learns little at 5e-5, and a metric that does not move compares nothing)")
    ap.add_argument("--size", default="tiny", help="pretrain.model size of the bench model")
    ap.add_argument("--vocab", type=int, default=16000)
    ap.add_argument("--model", type=Path, help="a model folder to use instead of the tiny one built here")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rows", help=f"which rows to run, of {','.join(ROWS + BF16_ROWS)} (default: the first four, "
                    "and the bf16 ones where the CPU has native bf16)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child)), default=str))
        return
    data = os.environ.get("KLUE_DATA_DIR")
    if not data:
        sys.exit("set KLUE_DATA_DIR to the shared data folder")
    data_dir = Path(data) / "klue"
    tasks = args.tasks.split(",")
    from pipeline.hardware import native_bf16

    rows = args.rows.split(",") if args.rows else [*ROWS, *(BF16_ROWS if native_bf16() else ())]
    if not args.rows and not native_bf16():
        print("bf16 rows skipped: this CPU has no native bf16 (pass them in --rows to run them emulated)",
              file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="bench-finetune-"))
    results: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        model_dir = args.model or build_model_dir(tasks, data_dir, work / "model", args)
        for name in tasks:
            for row in rows:
                spec = {"task": name, "row": row, "data_dir": str(data_dir), "model_dir": str(model_dir),
                        "max_train": args.max_train, "max_eval": args.max_eval, "epochs": args.epochs,
                        "seed": args.seed, "threads": args.threads, "lr": args.lr, "work": str(work / f"{name}-{row}")}
                proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True,
                                      text=True, env={**os.environ, "OMP_NUM_THREADS": str(args.threads),
                                                      "TOKENIZERS_PARALLELISM": "false"})
                if proc.returncode:
                    sys.exit(f"{name} / {row} failed:\n{proc.stderr[-4000:]}")
                results[name, row] = json.loads(proc.stdout.strip().splitlines()[-1])
                r = results[name, row]
                print(f"  {name:4s} {LABELS[row]:34s} wall {r['wall_s']:7.1f}s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_table(results, tasks, rows, args)


def print_table(results: dict[tuple[str, str], dict[str, Any]], tasks: list[str], rows: list[str],
                args: argparse.Namespace) -> None:
    from finetune.registry import get_task

    load = os.getloadavg()[0]
    from pipeline.hardware import cpu_model, native_bf16

    model = f"the model in {args.model}" if args.model else f"tiny RoBERTa ({args.size}) built from a config"
    print(f"\n{model}, {args.epochs} epoch(s), lr {args.lr or 'default'}, "
          f"seed {args.seed}, up to {args.max_train} train / {args.max_eval} eval examples, "
          f"{args.threads} threads, load average after the run {load:.2f}; {cpu_model()}, native bf16: "
          f"{native_bf16() or 'none'}")
    head = (f"{'task':5s} {'run':34s} {'train ex/s':>10s} {'eval ex/s':>10s} {'wall s':>8s} {'peak RSS MB':>11s} "
            f"{'metric':>22s} {'ours / it':>10s}")
    print(head)
    for name in tasks:
        main_metric = get_task(name).main_metric
        ours = results.get((name, "ours"))
        for row in rows:
            r = results[name, row]
            train_eps = r["n_train"] * r["epochs"] / r["train_s"]
            eval_eps = r["n_eval"] * r["epochs"] / r["eval_s"] if r["eval_s"] else float("nan")
            metric = f"{main_metric} {r['metrics'].get(main_metric, float('nan')):.4f}"
            ratio = f"{r['wall_s'] / ours['wall_s']:9.2f}x" if ours else "-"
            print(f"{name:5s} {LABELS[row]:34s} {train_eps:10.1f} {eval_eps:10.1f} {r['wall_s']:8.1f} "
                  f"{r['peak_rss_mb']:11.0f} {metric:>22s} {ratio:>10s}")


if __name__ == "__main__":
    main()
