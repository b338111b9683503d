"""One fine-tuning run, shared by every task: AdamW + linear warmup/decay (KLUE-baseline's optimiser;
`Hyperparams.constant_lr` keeps the peak rate after warmup), KLUE-baseline's evaluation cadence and checkpoint
choice: `evals_per_epoch` evaluations an epoch (its `val_check_interval 0.25`: four), the checkpoint with the best
main metric on the selection split (strictly better only: on a tie the earlier one stays, as Lightning's
`ModelCheckpoint(mode="max")`), and early stopping after `patience` evaluations without a strictly better one
(Lightning's `EarlyStopping`; KLUE-baseline @ 8a03c94 `run_klue.py:99-121`). With `max_steps` (a cap the
baseline does not have) the last step is evaluated too when it falls between two checks.

Which split chooses (`finetune.data`, "protocol"): every checkpoint is scored on `TaskData.select`, and only
those scores choose the checkpoint and stop the run (`RunResult.history`, each entry marked `"split":
"selection"`). The chosen weights are kept in memory (a CPU copy at each improvement) and loaded at the end,
and the reported split (`TaskData.eval`) is scored once, with them: `RunResult.metrics` and `predictions`. So no
score-driven choice reads the split the tables report. Under the protocol "klue-baseline" the selection split is
the reported one (KLUE-baseline selects on dev, reporting test; we have only dev): the history is the reported
split's (`"split": "eval"`), the chosen checkpoint's scores are reported as they are, with no second evaluation.

The loop is written out instead of using `transformers.Trainer` because tasks need their own evaluation
outputs and post-processing (span tasks map several features back to one example), and the scoring must be
the exact code `klue score` runs. `accelerate` handles devices and mixed precision.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from finetune.data import TaskData, split_record, write_json
from finetune.encoders import max_positions
from finetune.tasks.base import IGNORE_INDEX, Hyperparams, Task
from pipeline import io
from pipeline.hardware import reset_accelerate_state, resolve_precision
from pipeline.io import write_jsonl


@dataclass
class FinetuneConfig:
    """One fine-tuning run: the task's hyperparameters plus the run's seed, caps and outputs."""

    hp: Hyperparams
    seed: int = 42
    max_steps: int | None = None  # cap on optimiser steps (tests, smoke runs)
    eval_every: int | None = None  # also evaluate every N steps (a departure: more checkpoints to choose from)
    random_init: bool = False
    # the seed a random init draws its weights from (a pretraining replicate's: its "pretraining seed"); None: `seed`
    init_seed: int | None = None
    save_dir: Path | None = None  # where the selected model is saved (safetensors); None: not saved
    progress: bool = True


@dataclass
class RunResult:
    metrics: dict[str, Any]  # the reported split's scores of the chosen checkpoint
    predictions: list[dict]  # the reported split's, of the chosen checkpoint
    best_step: int
    best_epoch: float
    total_steps: int
    history: list[dict] = field(default_factory=list)  # each check's selection-split scores ("split")
    num_parameters: int = 0
    train_seconds: float = 0.0
    unk_rate: float = 0.0
    max_length: int = 0
    eval_seconds: float = 0.0  # the part of train_seconds spent in evaluation
    n_train_features: int = 0
    stopped_early: bool = False  # early stopping ended the run before total_steps
    steps_per_epoch: int = 0
    precision: str = "fp32"  # what `Hyperparams.mixed_precision` resolved to (pipeline.hardware)


def _token_lists(feature: dict[str, Any]) -> list[list[int]]:
    """The token lists of a feature: one for most tasks, one per choice for multiple choice (JCommonsenseQA),
    whose `input_ids` is a list of lists."""
    ids = feature["input_ids"]
    return list(ids) if ids and isinstance(ids[0], (list, tuple)) else [ids]


def input_length(feature: dict[str, Any]) -> int:
    """The padded length a feature needs: its token count, or for multiple choice its longest choice (the
    collator pads every choice of a batch to that)."""
    return max(len(t) for t in _token_lists(feature))


def unk_rate(features: list[dict], tokenizer: Any) -> float:
    """Share of [UNK] among the non-special input tokens. A high rate means the tokenizer does not fit the text
    (e.g. a normalizer that splits Hangul into jamo), which no amount of fine-tuning fixes."""
    special = set(tokenizer.all_special_ids)
    total = unk = 0
    for f in features:
        for t in (t for ids in _token_lists(f) for t in ids):
            if t not in special or t == tokenizer.unk_token_id:
                total += 1
                unk += t == tokenizer.unk_token_id
    return unk / total if total else 0.0


def eval_interval(steps_per_epoch: int, evals_per_epoch: int) -> int:
    """Batches between two evaluations: Lightning 1.1's `val_check_batch = int(num_training_batches *
    val_check_interval)` (at least 1), with `val_check_interval = 1 / evals_per_epoch`; a check runs after batch b of
    an epoch when b is a multiple of it. So an epoch of 10 batches at 4 a epoch is checked after batches 2, 4, 6, 8
    and 10, and one of 250 after 62, 124, 186 and 248 (its last two batches count in the next check, or in none at
    the end of training), as in KLUE-baseline's runs. Integer division, not the float product, so that 1/3 of 3
    batches is 1, not 0.999..."""
    return max(1, steps_per_epoch // evals_per_epoch)


def _selection_value(metrics: dict[str, Any], key: str) -> float:
    v = metrics.get(key)
    return -math.inf if v is None or not math.isfinite(v) else float(v)


def no_decay_names(model: Any) -> set[str]:
    """The parameters AdamW leaves undecayed, as KLUE-baseline's `["bias", "LayerNorm.weight"]`: biases and the
    weights of every normalisation layer, found by module type (`torch.nn.LayerNorm`, or any class whose name ends
    in "Norm", e.g. an RMSNorm) rather than by name, since ModernBERT calls its layers `attn_norm`, `mlp_norm`,
    `final_norm`."""
    import torch

    names = {n for n, _ in model.named_parameters() if "bias" in n}
    for prefix, module in model.named_modules():
        if isinstance(module, torch.nn.LayerNorm) or type(module).__name__.endswith("Norm"):
            names.update(f"{prefix}.{n}" if prefix else n for n, _ in module.named_parameters(recurse=False))
    return names


def _optimizer(model: Any, hp: Hyperparams) -> Any:
    """AdamW without weight decay on biases and normalisation weights (`no_decay_names`), as in KLUE-baseline."""
    import torch

    no_decay = no_decay_names(model)
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in params if n not in no_decay], "weight_decay": hp.weight_decay},
        {"params": [p for n, p in params if n in no_decay], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=hp.learning_rate, eps=hp.adam_epsilon)


def lr_schedule(optimizer: Any, hp: Hyperparams, total_steps: int) -> Any:
    """KLUE-baseline's linear warmup then linear decay to 0 over `total_steps`; with `hp.constant_lr`, the same
    warmup then the peak rate to the end."""
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    warmup = math.ceil(total_steps * hp.warmup_ratio)
    if hp.constant_lr:
        return get_constant_schedule_with_warmup(optimizer, warmup)
    return get_linear_schedule_with_warmup(optimizer, warmup, total_steps)


def concat_padded(chunks: list[np.ndarray], pad_value: int = IGNORE_INDEX) -> np.ndarray:
    """Concatenates per-batch outputs along the first axis, padding every other axis to the longest chunk with
    `pad_value`. Token-level outputs (NER subword labels, DP word predictions) are as long as their batch's
    longest sentence, so plain `np.concatenate` would fail; padding with the ignore index is what the
    transformers token-classification examples do (`run_ner_no_trainer.py`)."""
    if not chunks:
        raise ValueError("no evaluation outputs")
    rest = tuple(max(c.shape[d] for c in chunks) for d in range(1, chunks[0].ndim))
    if all(c.shape[1:] == rest for c in chunks):
        return np.concatenate(chunks, axis=0)
    dtype = np.result_type(*chunks)
    out = np.full((sum(len(c) for c in chunks), *rest), pad_value, dtype=dtype)
    row = 0
    for c in chunks:
        out[(slice(row, row + len(c)),) + tuple(slice(0, n) for n in c.shape[1:])] = c
        row += len(c)
    return out


def length_order(features: list[dict[str, Any]]) -> list[int]:
    """Feature indices by input length (stable): evaluation runs in this order, so each batch pads to about its
    own length instead of the longest of a random mix, and the outputs go back to feature order afterwards
    (`evaluate`). The model sees the same inputs; only the padding of its batches changes."""
    return sorted(range(len(features)), key=lambda i: input_length(features[i]))


def train_sampler(features: list[dict[str, Any]], hp: Hyperparams, seed: int) -> Any:
    """The training order. `group_by_length`: transformers' `LengthGroupedSampler` (a random permutation, cut
    into mega-batches of 50 batches, each sorted by length), so a batch pads to about its own length; with our
    own seeded generator the order depends on the seed alone. Otherwise None: the loader shuffles uniformly
    (KLUE-baseline's sampler), through accelerate's seedable sampler (epoch e drawn from seed + e, the same
    order on every process and the same as transformers' `Trainer`)."""
    if not hp.group_by_length:
        return None
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    return LengthGroupedSampler(hp.batch_size, lengths=[input_length(f) for f in features],
                                generator=torch.Generator().manual_seed(seed))


def evaluate(task: Task, model: Any, loader: Any, accelerator: Any, features: list, examples: list,
             progress: bool = False, order: list[int] | None = None) -> tuple[dict[str, Any], list[dict]]:
    """Predictions and metrics on the evaluation split; the same `compute_metrics` that `klue score` uses.
    `order`: the feature index of each row the loader yields (`length_order`), None for feature order.

    Per-token outputs are padded with IGNORE_INDEX along their second axis before the processes gather them
    (`pad_across_processes`: the processes' batches may differ in length) and across batches
    (`concat_padded`); floating outputs are kept as float32, integer ones (predicted ids) as they are."""
    import torch
    from tqdm.auto import tqdm

    model.eval()
    chunks = []
    with torch.no_grad():
        for batch in tqdm(loader, desc="eval", leave=False, disable=not progress):
            out = task.eval_outputs(model, batch)
            if out.ndim > 1:
                out = accelerator.pad_across_processes(out, dim=1, pad_index=IGNORE_INDEX)
            out = accelerator.gather_for_metrics(out)
            chunks.append((out.float() if out.is_floating_point() else out).cpu().numpy())
    model.train()
    outputs = concat_padded(chunks)
    if order is not None:
        restored = np.empty_like(outputs)
        restored[np.asarray(order)] = outputs
        outputs = restored
    preds = task.predictions(outputs, features, examples)
    return task.compute_metrics(preds, examples), preds


def usable_length(config: Any, tokenizer: Any, wanted: int) -> int:
    """The longest input the model can take: what its positions hold (`finetune.encoders.max_positions`:
    RoBERTa-style models number them from pad_token_id + 1, so they hold max_position_embeddings - pad - 1
    tokens); the tokenizer may set a lower limit too."""
    limit = wanted
    positions = max_positions(config)
    if positions is not None:
        limit = min(limit, positions)
    model_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(model_max, int) and 0 < model_max < 10**9:
        limit = min(limit, model_max)
    return limit


def model_inputs(features: list[dict[str, Any]]) -> Any:  # a list, which DataLoader takes as a map-style dataset
    """Model inputs only: the collator pads every key it gets, so `example_index` and the task's bookkeeping
    (keys starting with "_", e.g. NER's character spans) stay behind."""
    return [{k: v for k, v in f.items() if k != "example_index" and not k.startswith("_")} for f in features]


def finetune_once(task: Task, model_dir: Path, data: TaskData, cfg: FinetuneConfig) -> RunResult:
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, set_seed
    from torch.utils.data import DataLoader
    from tqdm.auto import tqdm
    from transformers import AutoTokenizer

    hp = cfg.hp
    set_seed(cfg.seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    task.prepare_tokenizer(tokenizer)
    if cfg.random_init and cfg.init_seed is not None:
        set_seed(cfg.init_seed)
    model = task.build_model(Path(model_dir), tokenizer, cfg.random_init, hp)
    # autocast over fp32 weights, as pretraining's: by the machine and the encoder's width (pipeline.hardware; every
    # task model's `config` is its encoder's)
    precision = resolve_precision(hp.mixed_precision, getattr(model.config, "hidden_size", None))
    reset_accelerate_state()  # a run before this one in this process may have trained in another precision
    accelerator = Accelerator(mixed_precision=precision.accelerate,
                              dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True, data_seed=cfg.seed))

    max_length = usable_length(model.config, tokenizer, hp.max_length)
    if max_length < hp.max_length:
        warnings.warn(f"max_length {hp.max_length} exceeds what {model_dir} supports; using {max_length}",
                      stacklevel=2)
    train_features = task.encode(data.train, tokenizer, max_length)
    eval_features = task.encode(data.eval, tokenizer, max_length)
    # the split that chooses the checkpoint; under klue-baseline the reported one itself (scored once a check)
    on_eval = data.selects_on_eval
    select_features = eval_features if on_eval else task.encode(data.select, tokenizer, max_length)
    unk = unk_rate(train_features, tokenizer)
    if unk > 0.2:
        warnings.warn(f"{unk:.0%} of the training tokens are [UNK]: the tokenizer in {model_dir} does not fit this "
                      "text; scores will be meaningless", stacklevel=2)
    collate = task.collator(tokenizer)
    sampler = train_sampler(train_features, hp, cfg.seed)
    # No `generator=`: the order comes from the sampler (or accelerate's seedable one); without it the loader
    # draws its worker base seed from the global RNG, as `Trainer`'s does, so the dropout streams agree too.
    train_loader: DataLoader[dict[str, Any]] = DataLoader(
        model_inputs(train_features), batch_size=hp.batch_size, shuffle=sampler is None, sampler=sampler,
        collate_fn=collate)
    eval_order = length_order(eval_features)
    eval_loader: DataLoader[dict[str, Any]] = DataLoader(
        model_inputs([eval_features[i] for i in eval_order]), batch_size=hp.eval_batch_size, shuffle=False,
        collate_fn=collate)
    select_order = eval_order if on_eval else length_order(select_features)
    select_loader: DataLoader[dict[str, Any]] | None = None if on_eval else DataLoader(
        model_inputs([select_features[i] for i in select_order]), batch_size=hp.eval_batch_size, shuffle=False,
        collate_fn=collate)

    steps_per_epoch = len(train_loader)
    total_steps = hp.epochs * steps_per_epoch
    if cfg.max_steps is not None:
        total_steps = min(total_steps, cfg.max_steps)
    optimizer = _optimizer(model, hp)
    scheduler = lr_schedule(optimizer, hp, total_steps)
    model, optimizer, train_loader, eval_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, eval_loader, scheduler)
    select_loader = eval_loader if select_loader is None else accelerator.prepare(select_loader)
    split_name = "eval" if on_eval else "selection"

    best: dict[str, Any] = {"value": -math.inf, "metrics": None, "preds": None, "step": 0, "state": None}
    # Early stopping's own record, as Lightning's EarlyStopping keeps it apart from the checkpoint's: its best starts
    # at -inf, so a first evaluation with no defined score (NaN) already counts as one without improvement.
    stopping = {"best": -math.inf, "wait": 0}
    history: list[dict] = []
    # Training's random draws (dropout) start from the seed, whatever building the model drew: the pretrained and
    # the random-init arm see the same dropout stream, as does transformers' Trainer (bench/finetune.py).
    set_seed(cfg.seed)
    started = time.perf_counter()
    eval_seconds = 0.0

    def checkpoint(step: int) -> None:
        # scored on the selection split only: its scores choose the checkpoint and stop the run
        nonlocal eval_seconds
        t0 = time.perf_counter()
        metrics, preds = evaluate(task, model, select_loader, accelerator, select_features, data.select,
                                  cfg.progress, order=select_order)
        eval_seconds += time.perf_counter() - t0
        history.append({"step": step, "epoch": round(step / steps_per_epoch, 4), "split": split_name, **metrics})
        value = _selection_value(metrics, task.main_metric)
        if best["metrics"] is None or value > best["value"]:  # strict: on a tie the earlier checkpoint stays
            best.update(value=value, metrics=metrics, preds=preds if on_eval else None, step=step)
            # the chosen weights, kept on the CPU: loaded at the end to score the reported split (and saved)
            state = accelerator.unwrap_model(model).state_dict()
            best["state"] = {k: v.detach().cpu().clone() for k, v in state.items()}
        if value > stopping["best"]:
            stopping.update(best=value, wait=0)
        else:
            stopping["wait"] += 1

    interval = eval_interval(steps_per_epoch, hp.evals_per_epoch)
    capped = total_steps < hp.epochs * steps_per_epoch
    model.train()
    step, running, stopped_early = 0, 0.0, False
    bar = tqdm(total=total_steps, desc=f"{task.name} seed {cfg.seed}", disable=not cfg.progress)
    while step < total_steps:
        for batch in train_loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            if hp.max_grad_norm:
                accelerator.clip_grad_norm_(model.parameters(), hp.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            running = 0.9 * running + 0.1 * loss.item() if step > 1 else loss.item()
            bar.update(1)
            bar.set_postfix(loss=f"{running:.4f}")
            batch_of_epoch = (step - 1) % steps_per_epoch + 1
            if batch_of_epoch % interval == 0 or (capped and step == total_steps) or (cfg.eval_every and step % cfg.eval_every == 0):
                checkpoint(step)
                bar.set_postfix(loss=f"{running:.4f}", **{task.main_metric: history[-1].get(task.main_metric)})
                if hp.patience is not None and stopping["wait"] >= hp.patience and step < total_steps:
                    stopped_early = True
                    break
            if step >= total_steps:
                break
        if stopped_early:
            break
    bar.close()

    unwrapped = accelerator.unwrap_model(model)
    unwrapped.load_state_dict(best["state"])  # the chosen checkpoint
    if on_eval:  # klue-baseline: the selection scores are the reported split's
        metrics, preds = best["metrics"], best["preds"]
    else:  # the reported split, scored once, with the checkpoint the selection split chose
        t0 = time.perf_counter()
        metrics, preds = evaluate(task, model, eval_loader, accelerator, eval_features, data.eval, cfg.progress,
                                  order=eval_order)
        eval_seconds += time.perf_counter() - t0
    train_seconds = time.perf_counter() - started
    if cfg.save_dir is not None:
        # transformers models, and finetune.dp_model.DependencyParser, which has the same method (safetensors)
        unwrapped.save_pretrained(cfg.save_dir, safe_serialization=True)
        tokenizer.save_pretrained(cfg.save_dir)
    return RunResult(
        metrics=metrics, predictions=preds, best_step=best["step"],
        best_epoch=round(best["step"] / steps_per_epoch, 4), total_steps=total_steps, history=history,
        num_parameters=sum(p.numel() for p in unwrapped.parameters()), train_seconds=round(train_seconds, 2),
        unk_rate=round(unk, 4), max_length=max_length, eval_seconds=round(eval_seconds, 2),
        n_train_features=len(train_features), stopped_early=stopped_early, steps_per_epoch=steps_per_epoch,
        precision=precision.name,
    )


def mean_std(values: list[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (ddof=1; 0 for one seed) over the seeds with a defined score."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    return float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0


def run_finetune(task: Task, model_dir: Path, data: TaskData, output: Path, seeds: list[int], hp: Hyperparams,
                 *, max_steps: int | None = None, eval_every: int | None = None, random_init: bool = False,
                 save_model: bool = True, label: str | None = None, progress: bool = True,
                 resume: bool = False, model_ref: str | None = None, pretrain_seed: int | None = None
                 ) -> dict[str, Any]:
    """Runs every seed and writes `seed-N/{metrics.json, predictions.jsonl, timing.json, model/}`, then the
    aggregate `metrics.json` (per-seed scores, mean ± std) and `summary.txt` (one line).

    A seed's `metrics.json` is written last, so it marks the seed done; with `resume`, a seed that has one is
    read back instead of trained again (a killed suite continues with its first unfinished seed). Wall times go
    to `timing.json`, not `metrics.json`: on CPU the same seed gives the same bytes in every metrics file,
    whether a run was interrupted or not. `model_ref` is what `metrics.json` names the model by (default: the
    folder's path; the pipeline's stage gives a path relative to its workdir). Each seed is `run_seed`.
    `pretrain_seed`: the pretraining replicate this run belongs to (`stages.pretrain.seeds`), recorded; a random
    init then draws its weights from it (`init_seed`), the same for every fine-tuning seed.
    """
    output = Path(output)
    model_dir = Path(model_dir)
    label = label or model_dir.resolve().name
    if random_init and "random init" not in label:  # never the pretrained model's row name
        label += " (random init)"
    init_seed = pretrain_seed if random_init else None
    per_seed = {str(seed): run_seed(task, model_dir, data, output / f"seed-{seed}", seed, hp, max_steps=max_steps,
                                    eval_every=eval_every, random_init=random_init, save_model=save_model,
                                    progress=progress, resume=resume, init_seed=init_seed)
                for seed in seeds}

    mean, std = {}, {}
    for key in task.metric_names:
        mean[key], std[key] = mean_std([r["metrics"].get(key) for r in per_seed.values()])
    summary = {
        "task": task.name, "label": label, "model": model_ref or str(model_dir), "random_init": random_init,
        **({"pretrain_seed": pretrain_seed} if pretrain_seed is not None else {}),
        **({"init_seed": init_seed} if init_seed is not None else {}),
        "metric_names": list(task.metric_names), "main_metric": task.main_metric,
        "mean": mean, "std": std, "seeds": seeds, "per_seed": {s: r["metrics"] for s, r in per_seed.items()},
        "data": data.source, "hyperparams": hp.model_dump(), "max_steps": max_steps, "eval_every": eval_every,
        # the longest input the model took (hyperparams.max_length lowered to the model's positions)
        "max_length_used": max(r["max_length"] for r in per_seed.values()),
        # what `mixed_precision` resolved to (a departure unless fp32); seeds read back from before it: fp32
        "precision": "/".join(sorted({r.get("precision", "fp32") for r in per_seed.values()})),
        # whether `max_steps` cut the run short of its epochs (a departure only then)
        "steps_capped": max_steps is not None and any(
            r.get("total_steps", max_steps) < hp.epochs * r.get("steps_per_epoch", max_steps) for r in per_seed.values()),
    }
    write_json(output / "metrics.json", summary)
    line = summary_line(summary)
    io.write_text(output / "summary.txt", line + "\n")
    return summary


def seed_done(seed_dir: Path) -> bool:
    """Whether a seed's run finished: its `metrics.json`, written last, and its predictions are there."""
    return (seed_dir / "metrics.json").is_file() and (seed_dir / "predictions.jsonl").is_file()


def run_seed(task: Task, model_dir: Path, data: TaskData, seed_dir: Path, seed: int, hp: Hyperparams, *,
             max_steps: int | None = None, eval_every: int | None = None, random_init: bool = False,
             save_model: bool = True, progress: bool = True, resume: bool = False,
             init_seed: int | None = None) -> dict[str, Any]:
    """One seed's run: `seed_dir/{split.json, predictions.jsonl, timing.json, model/}`, then `metrics.json` (its
    record, which it returns). `split.json` names the guids that chose the checkpoint ("selection") and those that
    are reported ("eval"), with the protocol (`finetune.data.split_record`). With `resume`, a seed whose
    `metrics.json` and predictions exist is read back, not trained again. Separate from `run_finetune` so that a
    suite can spread its seeds over processes (`finetune.stages`)."""
    done = seed_dir / "metrics.json"
    if resume and seed_done(seed_dir):
        return dict(json.loads(done.read_text(encoding="utf-8")))
    write_json(seed_dir / "split.json", split_record(data))
    cfg = FinetuneConfig(hp=hp, seed=seed, max_steps=max_steps, eval_every=eval_every, random_init=random_init,
                         init_seed=init_seed, save_dir=seed_dir / "model" if save_model else None,
                         progress=progress)
    started = time.time()
    res = finetune_once(task, model_dir, data, cfg)
    write_jsonl(seed_dir / "predictions.jsonl", res.predictions)
    # where and when it ran (the device a stage spread it to: `finetune.stages.finetune.device_count`), apart from
    # metrics.json, whose bytes do not depend on it
    write_json(seed_dir / "timing.json", {"train_seconds": res.train_seconds, "eval_seconds": res.eval_seconds,
                                          "device": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid(),
                                          "started": started, "ended": time.time()})
    record = {"seed": seed, "metrics": res.metrics, "best_step": res.best_step, "best_epoch": res.best_epoch,
              "total_steps": res.total_steps, "steps_per_epoch": res.steps_per_epoch,
              "stopped_early": res.stopped_early,
              "num_parameters": res.num_parameters, "unk_rate": res.unk_rate,
              "max_length": res.max_length, "precision": res.precision, "history": res.history}
    write_json(done, record)  # last: it marks the seed done
    return record


def summary_line(summary: dict[str, Any]) -> str:
    parts = []
    for key in summary["metric_names"]:
        m, s = summary["mean"].get(key), summary["std"].get(key)
        if m is None:
            parts.append(f"{key} n/a")
        else:
            parts.append(f"{key} {m:.2f}" + (f" ± {s:.2f}" if len(summary["seeds"]) > 1 else ""))
    data = summary["data"]
    split = data.get("split")
    where = "official dev" if split == "official" else f"dev split ({data.get('split_by') or 'guid'} hash)"
    seeds = len(summary["seeds"])
    chosen = {"selection-split": f"; checkpoint chosen on a selection split of train, n={data.get('n_select')}",
              "klue-baseline": "; checkpoint chosen on the eval split (klue-baseline)"}.get(data.get("protocol"), "")
    return (f"{summary['task']}  {summary['label']}  " + "  ".join(parts)
            + f"  [{seeds} seed{'s' if seeds > 1 else ''}; eval: {where}, n={data.get('n_eval')}{chosen}]")
