"""The MLM pretraining loop, readable top to bottom: `python -m pretrain.train CONFIG.json`.

Runs in-process (one CPU process) or once per rank under `torchrun` / `accelerate launch` (gloo on CPU, nccl on
GPU, optionally DeepSpeed ZeRO 1/2/3). `train()` does, in order:
  1. build the accelerator, the tokenizer, the packed samples and a seeded model with its optimizer;
  2. resume from the newest complete checkpoint in `<out_dir>/checkpoints/` if there is one;
  3. for each optimizer step: `grad_accum` micro-batches, each chosen by (seed, data step, global micro-batch)
     and masked on the fly (dynamic masking, optionally whole-eojeol), MLM loss at masked positions only; clip;
     step (skipped where the gradient norm is not finite: `pretrain.nonfinite`); a loss spike or several
     non-finite steps in a row roll back to the last checkpoint and skip the batches since (`pretrain.rollback`);
  4. log loss / lr / tokens/s and MFU (against a GPU's datasheet peak, a CPU's measured one) to metrics.jsonl
     and TensorBoard; evaluate every `eval_every`; checkpoint every `checkpoint_every` steps (atomically:
     written under a temp name, then renamed; with a table of its files that a resume verifies); on SIGTERM or
     SIGUSR1 checkpoint at the next step boundary and exit with `EXIT_PREEMPTED` (75; `pretrain.preempt`);
  5. export `final/` (safetensors model + tokenizer), `summary.json` and `loss_curve.png`.
The schedule (`lr_factor`) and the held-out evaluation (`evaluate`) are below the loop. What it stands on is in
modules of its own, so that this one is the loop: the configuration (`pretrain.config`), the accelerator and
DeepSpeed set-up (`pretrain.engine`), the micro-batches (`pretrain.batches`), throughput and MFU
(`pretrain.throughput`), checkpoint IO (`pretrain.checkpoint`), and the metrics, summary and loss curve
(`pretrain.metrics`). Because the data order and the masks are functions of the step number, a resumed run
reads no sample twice and, on CPU, reproduces the uninterrupted loss curve step for step; because they are
functions of the micro-batch's place in the global batch, not of the rank, a checkpoint resumes on another number
of ranks (`pretrain.checkpoint.resume`).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.hardware import cpu_model, native_bf16
from pretrain.architectures import build_config
from pretrain.batches import BatchSource, to_device
from pretrain.checkpoint import checkpoint_path, resume, save_checkpoint
from pretrain.config import TrainConfig
from pretrain.engine import Run, agreed_elapsed, cpu_kernels, make_accelerator, release
from pretrain.export import export_final, fp32_master_state
from pretrain.flops import step_flops
from pretrain.metrics import log_row, plot_loss_curve, read_metrics, summarize
from pretrain.nonfinite import SkipGuard, nan_steps_for_tests
from pretrain.preempt import EXIT_PREEMPTED, PREEMPTED_FILE, Preempted, PreemptionWatch, preempted
from pretrain.rollback import (
    SPIKE_FACTOR,
    DataSkips,
    LossLog,
    RollbackLimit,
    SpikeWatch,
    Verdict,
    spike_steps_for_tests,
)
from pretrain.throughput import Throughput, device_peak

EVAL_STEP = 2**40  # the "step" coordinate of evaluation masks: fixed, so every evaluation sees the same masks


class Halted(RuntimeError):
    """Raised when `halt_after_step` is reached: the run stops like a killed one would."""


def lr_factor(step: int, cfg: TrainConfig, progress: float | None = None) -> float:
    """Linear warmup to 1, then (`schedule: linear`) linear decay to `min_lr_ratio` at the end of training, or
    (`schedule: wsd`) 1 until the last `decay_fraction` of the post-warmup steps and a linear decay over those.

    `progress` (0..1 of the post-warmup span) replaces the step count when a wall-clock budget drives it.
    """
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    if progress is None:
        span = max(1, cfg.max_steps - cfg.warmup_steps)
        progress = (step - cfg.warmup_steps) / span
    progress = min(1.0, progress)
    if cfg.schedule == "wsd":
        progress = max(0.0, progress - (1.0 - cfg.decay_fraction)) / cfg.decay_fraction
    return max(cfg.min_lr_ratio, 1.0 - (1.0 - cfg.min_lr_ratio) * progress)


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run (or resume) training to `max_steps`; returns the summary also written to `summary.json`."""
    import torch
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm
    from transformers import AutoTokenizer

    # lazy: torch (pretrain.data, pretrain.model): reading a config or metrics loads no torch
    from pretrain.data import PackedSamples, SampleOrder, SpecialIds, TokenStream, seed_dropout
    from pretrain.model import training_model

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    precision = cfg.resolved_precision()
    if precision.name == "bf16" and not torch.cuda.is_available() and native_bf16() is None:
        warnings.warn(f"mixed_precision bf16 on a CPU without native bf16 ({cpu_model()}): emulated bf16 matrix "
                      "products run ~100x slower than fp32 here; `auto` or `no` would train in fp32", stacklevel=2)
    accelerator = make_accelerator(cfg)
    watch: PreemptionWatch | None = None
    try:
        # -- data, model, optimizer ---------------------------------------------------------------------
        world, rank = accelerator.num_processes, accelerator.process_index
        tok = AutoTokenizer.from_pretrained(cfg.tokenizer_dir)
        special = SpecialIds.from_tokenizer(tok)
        train_samples = PackedSamples(TokenStream(Path(cfg.encode_dir), "train"), cfg.seq_len, special)
        eval_stream = TokenStream(Path(cfg.encode_dir), "eval")
        eval_samples = PackedSamples(eval_stream, cfg.seq_len, special) if len(eval_stream) else None
        order = SampleOrder(len(train_samples), cfg.seed, cfg.batch_size, cfg.grad_accum, world)

        model_cfg = build_config(cfg.model, vocab_size=len(tok), seq_len=cfg.seq_len,
                                 pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                                 eos_token_id=tok.sep_token_id, overrides=cfg.model_overrides,
                                 architecture=cfg.architecture)
        kernels = cpu_kernels(cfg, precision.name)  # eager attention and a compiled encoder where they pay
        model = training_model(model_cfg, cfg.seed, kernels.attention, kernels.compile)
        n_params = sum(p.numel() for p in model.parameters())
        decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
        no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
        # torch's fused AdamW: one pass over each tensor instead of foreach's ten or so. It pays where the
        # optimizer is a real share of a step: 12 x 768 on 2 CPU threads, 2,765 -> 2,460 ms (1.12x; the step
        # spent 16 % in AdamW), neutral within noise at 4 x 256 (3 %; docs/experiments/2026-12-06-cpu-precision.md).
        # Under DeepSpeed its ZeRO optimizer steps the partitions instead: left to it.
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}],
                                      lr=cfg.lr, betas=cfg.adam_betas, eps=cfg.adam_eps,
                                      fused=cfg.deepspeed is None or None)
        model, optimizer = accelerator.prepare(model, optimizer)
        set_seed(cfg.seed)  # dropout is seeded again per micro-batch (pretrain.data.seed_dropout)
        run = Run(cfg, accelerator, model, optimizer, special, order, kernels)

        # -- resume -------------------------------------------------------------------------------------
        state = resume(run) or {}
        step, elapsed_before, tokens_seen = state.get("step", 0), state.get("elapsed_s", 0.0), state.get("tokens", 0)
        skips = DataSkips.from_json(state.get("data_skips"))  # batches skipped by rollbacks (pretrain.rollback)
        rollbacks: list[dict[str, Any]] = list(state.get("rollbacks", []))
        if run.main:  # the note of an earlier preemption: this run has taken over from its checkpoint
            (run.out_dir / PREEMPTED_FILE).unlink(missing_ok=True)
        accelerator.init_trackers("tensorboard")
        peak = device_peak(cfg)
        batches = BatchSource(run, train_samples)  # builds the next micro-batch while this one runs (GPU)
        # a step with a non-finite gradient norm leaves the weights alone
        guard = SkipGuard(optimizer, list(state.get("skipped_steps", [])))
        losses = LossLog(accelerator, SpikeWatch(cfg.spike_window, cfg.spike_sigmas, cfg.max_bad_steps,
                                                 cfg.warmup_steps))
        losses.watch.restore(state.get("spike_watch"))
        nan_steps, spike_steps = nan_steps_for_tests(), spike_steps_for_tests()

        # -- the loop -----------------------------------------------------------------------------------
        # Throughput counts training steps only: the clock is read after a device sync at the ends of each
        # timed stretch, stops for evaluation, checkpoints and logging, and skips the process's first step
        # (start-up: allocator, kernels, DeepSpeed's first collectives).
        model.train()
        t_start = time.perf_counter()
        timer = Throughput(accelerator)
        window: list[tuple[int, float | None]] = []  # the steps since the last log row: (step, loss or None)
        bar = tqdm(total=cfg.max_steps, initial=step, desc="pretrain", disable=not run.main, unit="step")
        first_step = True

        def read_losses() -> Verdict | None:
            """The steps' losses and skips so far (a host sync), and whether they call for a rollback."""
            guard.flush()
            rows, verdict = losses.flush(guard.skipped)
            window.extend(rows)
            return verdict

        def checkpoint() -> None:
            timer.pause()
            guard.flush()  # the skipped steps so far go into train_state.json
            save_checkpoint(run, step, elapsed_before + time.perf_counter() - t_start, tokens_seen, guard.skipped,
                            {"data_skips": skips.to_json(), "rollbacks": rollbacks,
                             "spike_watch": losses.watch.state()})

        def roll_back(verdict: Verdict) -> None:
            """Back to the newest checkpoint before the bad step, skipping the batches since (pretrain.rollback)."""
            nonlocal step, elapsed_before, tokens_seen, t_start, first_step
            timer.pause()
            bad = skips.data_step(verdict.step - 1)
            if len(rollbacks) >= cfg.max_rollbacks:
                raise RollbackLimit(f"step {verdict.step}: {verdict.reason}; max_rollbacks ({cfg.max_rollbacks}) "
                                    f"already used: {[r['step'] for r in rollbacks]}")
            state = resume(run, at_most=verdict.first - 1)
            if state is None:
                raise RollbackLimit(f"step {verdict.step}: {verdict.reason}; no checkpoint before it to roll back "
                                    f"to (checkpoint_every {cfg.checkpoint_every})")
            # the clock goes on (a wall-clock budget counts the rolled-back steps too)
            elapsed_before += time.perf_counter() - t_start
            t_start = time.perf_counter()
            step, tokens_seen = state["step"], state["tokens"]
            first, last = skips.skip(step, bad)
            guard.skipped[:] = state.get("skipped_steps", [])
            rollbacks.append({"step": verdict.step, "reason": verdict.reason, "to_step": step,
                              "skipped_batches": [first + 1, last + 1]})  # 1-based, as steps are numbered
            losses.clear()
            losses.watch.restore(state.get("spike_watch"))
            window.clear()
            bar.n = step
            first_step = True
            accelerator.print(f"rolled back: {verdict.reason} at step {verdict.step}; resumed from step {step}, "
                              f"skipping batches {first + 1}-{last + 1}")

        # handlers for SIGTERM/SIGUSR1 during the loop only (the previous ones are back after it, or on an error)
        watch = PreemptionWatch(run).install()
        while step < cfg.max_steps:
            progress = None
            if cfg.time_budget_s:
                # one clock for every rank (the slowest's), or one rank stops while another enters a collective
                elapsed = agreed_elapsed(run, elapsed_before + time.perf_counter() - t_start)
                if elapsed >= cfg.time_budget_s:
                    accelerator.print(f"wall-clock budget of {cfg.time_budget_s:.0f}s reached at step {step}")
                    break
                progress = max((step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps),
                               elapsed / cfg.time_budget_s)
            lr = cfg.lr * lr_factor(step, cfg, progress)
            for group in optimizer.param_groups:
                group["lr"] = lr
            if not first_step:
                timer.start()
            tokens = predicted = 0
            data_step = skips.data_step(step)  # the step whose batches this one reads (pretrain.rollback)
            step_loss = torch.zeros((), device=accelerator.device, dtype=torch.float64)
            for a in range(cfg.grad_accum):
                b, n_pred = batches.get(data_step, a)
                seed_dropout(cfg.seed, data_step, order.global_micro(a, rank))
                with accelerator.accumulate(model):
                    loss = model(**b)
                    if data_step + 1 in nan_steps:  # test hooks (pretrain.nonfinite, pretrain.rollback)
                        loss = loss * float("nan")
                    if data_step + 1 in spike_steps:
                        loss = loss * SPIKE_FACTOR
                    accelerator.backward(loss)
                    if accelerator.sync_gradients:
                        norm = accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                        guard.arm(norm, step + 1)
                    optimizer.step()
                    guard.disarm()
                    optimizer.zero_grad()
                step_loss += loss.detach().double() / cfg.grad_accum
                tokens += int(b["input_ids"].numel())
                predicted += n_pred
            step += 1
            losses.add(step, step_loss)  # on the device: read with the next log row or checkpoint
            tokens_seen += order.per_step * cfg.seq_len
            if not first_step:
                timer.count(tokens, step_flops(model_cfg, cfg.seq_len, tokens, predicted))
            first_step = False
            bar.update(1)
            row: dict[str, Any] = {}
            log_due = step % cfg.log_every == 0 or step == cfg.max_steps
            checkpoint_due = step % cfg.checkpoint_every == 0 or step == cfg.max_steps
            if log_due or checkpoint_due:
                # the only host sync of the training steps: each step's loss over the ranks, and its skip flag
                verdict = read_losses()
                if verdict is not None:
                    roll_back(verdict)
                    continue
            if log_due:
                trained = [x for _, x in window if x is not None]
                window_skipped = [s for s, x in window if x is None]
                row = {"step": step, **({"loss": sum(trained) / len(trained)} if trained else {}), "lr": lr,
                       "epoch": order.epoch(data_step + 1)}
                row.update(timer.window(world, peak))
                if window_skipped:
                    row["skipped_steps"] = window_skipped
                    accelerator.print(f"non-finite gradient norm: update skipped at step(s) {window_skipped}")
                window.clear()
                bar.set_postfix(loss=f"{row.get('loss', float('nan')):.3f}", tok_s=f"{row.get('tokens_per_s', 0):.0f}")
            if eval_samples is not None and (step % cfg.eval_every == 0 or step == cfg.max_steps):
                timer.pause()
                row = {**row, "step": step, **evaluate(run, eval_samples)}
            if row:
                log_row(run, row)
            if checkpoint_due:
                checkpoint()
            if cfg.halt_after_step is not None and step >= cfg.halt_after_step:
                bar.close()
                raise Halted(f"halted after step {step} (halt_after_step)")
            # a step boundary: all ranks agree whether one of them got SIGTERM/SIGUSR1 (pretrain.preempt)
            if step < cfg.max_steps and watch.agreed():
                verdict = read_losses()  # a spike among the last steps: roll back first, then checkpoint there
                if verdict is not None:
                    roll_back(verdict)
                if step % cfg.checkpoint_every or verdict is not None:  # else written just above
                    checkpoint()
                bar.close()
                batches.close()
                raise preempted(run, step, checkpoint_path(run.out_dir, step), watch.name)
        watch.restore()
        bar.close()
        batches.close()
        if eval_samples is not None and step % cfg.eval_every and step < cfg.max_steps:
            # the wall-clock budget ended the run between evaluations: the final model still gets one
            log_row(run, {"step": step, **evaluate(run, eval_samples)})

        # -- export -------------------------------------------------------------------------------------
        if cfg.deepspeed:  # the fp32 masters, not the bf16 module (a collective under ZeRO-3: every rank)
            state = fp32_master_state(accelerator.unwrap_model(model))
        else:
            state = accelerator.get_state_dict(model)
        if run.main:
            export_final(model_cfg, tok, run.out_dir / "final", state)
        accelerator.wait_for_everyone()
        rank_steps = [int(x) for x in accelerator.gather(torch.tensor([step], device=accelerator.device)).tolist()]
        guard.flush()
        summary = {**summarize(run, step, tokens_seen, n_params, timer, peak, rank_steps),
                   "skipped_steps": guard.skipped, "rollbacks": rollbacks, "data_skips": skips.to_json()}
        if run.main:
            plot_loss_curve(read_metrics(run.metrics_path), run.out_dir / "loss_curve.png")
            io.write_json(run.out_dir / "summary.json", summary, indent=1, ensure_ascii=True)
        accelerator.wait_for_everyone()
        return summary
    finally:
        if watch is not None:
            watch.restore()
        release(accelerator)


# ---------------------------------------------------------------------------------------------------------
# what the loop calls


def evaluate(run: Run, eval_samples: Any) -> dict[str, float]:
    """Held-out loss over a fixed set of samples with fixed masks: `eval_loss` over every predicted token,
    as RoBERTa reports it, `eval_mask_loss` over the positions whose input is [MASK] only, and
    `eval_order_gain`: the [MASK] loss with the context words shuffled minus the same loss with them intact.

    The set is the first `eval_batches * batch_size` held-out samples, each masked (and shuffled) by a generator
    of its own index, split over the ranks: the numbers do not depend on how many ranks there are.

    Why these three: 10 % of the predicted tokens are left unchanged in the input, and a model learns to copy
    them long before it learns to use context, so `eval_loss` falls well below the unigram entropy while the
    [MASK] positions are still predicted from token frequencies alone (fill-mask then answers "." to
    everything). `eval_mask_loss` says whether the model uses context; `eval_order_gain` (nats) whether it
    uses the order of that context: ~0 means a bag-of-words model, still in the plateau."""
    import torch

    # lazy: torch (pretrain.data)
    from pretrain.data import IGNORE, mask_tokens, shuffle_context, step_generator

    cfg, accelerator, model, special = run.cfg, run.accelerator, run.model, run.special
    rank, world, dev = accelerator.process_index, accelerator.num_processes, accelerator.device
    n = len(eval_samples)
    mine = [(j, j % n) for j in range(cfg.eval_batches * cfg.batch_size)][rank::world]
    model.eval()
    # loss all, count all, loss at [MASK], count [MASK], loss at [MASK] with shuffled context
    sums = torch.zeros(5, device=dev, dtype=torch.float64)
    with torch.no_grad():
        for k in range(0, len(mine), cfg.batch_size):
            chunk = mine[k:k + cfg.batch_size]
            b = eval_samples.batch([i for _, i in chunk])
            rows, shuffled_rows, label_rows = [], [], []
            for row, (j, _) in enumerate(chunk):
                ids, labels = mask_tokens(b["input_ids"][row:row + 1], special, step_generator(cfg.seed, EVAL_STEP, j),
                                          mlm_probability=cfg.mlm_probability,
                                          word_starts=None if b.get("word_starts") is None
                                          else b["word_starts"][row:row + 1], whole_word=cfg.whole_word_mask)
                rows.append(ids)
                label_rows.append(labels)
                shuffled_rows.append(shuffle_context(ids, labels, special, step_generator(cfg.seed, EVAL_STEP, j, 1)))
            ids, labels, shuffled = torch.cat(rows), torch.cat(label_rows), torch.cat(shuffled_rows)
            batch = to_device({"input_ids": ids, "labels": labels}, b["attention_mask"], dev, False)
            losses = model(**batch, per_token=True).double()
            at_mask = (ids[labels != IGNORE] == special.mask).to(dev)
            shuffled_losses = model(**{**batch, "input_ids": shuffled.to(dev)}, per_token=True).double()
            sums += torch.stack([losses.sum(), torch.tensor(float(losses.numel()), device=dev),
                                 losses[at_mask].sum(), at_mask.sum().double(),
                                 shuffled_losses[at_mask].sum()])
    model.train()
    sums = accelerator.reduce(sums, "sum")
    return {"eval_loss": float(sums[0] / sums[1].clamp(min=1)),
            "eval_mask_loss": float(sums[2] / sums[3].clamp(min=1)),
            "eval_order_gain": float((sums[4] - sums[2]) / sums[3].clamp(min=1))}


def evaluate_folder(model_dir: Path, cfg: TrainConfig) -> dict[str, float]:
    """`evaluate` of an exported model folder (final/, `klue export-checkpoint`) on the run's held-out samples
    and masks, in this process: the numbers the run logged for those weights, whatever its number of ranks."""
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    # lazy: torch (pretrain.data, pretrain.model)
    from pretrain.data import PackedSamples, SpecialIds, TokenStream
    from pretrain.model import SparseMLM

    tok = AutoTokenizer.from_pretrained(model_dir)
    special = SpecialIds.from_tokenizer(tok)
    samples = PackedSamples(TokenStream(Path(cfg.encode_dir), "eval"), cfg.seq_len, special)
    accelerator = Accelerator(cpu=not torch.cuda.is_available())
    try:
        model = SparseMLM(AutoModelForMaskedLM.from_pretrained(model_dir, dtype=torch.float32).eval())
        model = model.to(accelerator.device)
        return evaluate(Run(cfg, accelerator, model, None, special, None), samples)
    finally:
        release(accelerator)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pretrain.train CONFIG.json", file=sys.stderr)
        return 2
    path = Path(args[0])
    cfg = TrainConfig.model_validate_json(path.read_text(encoding="utf-8"))
    try:
        train(cfg)
    except Halted as e:
        print(str(e), file=sys.stderr)
        return 3
    except Preempted as e:  # every rank exits so; one line says what happened and how to go on
        if os.environ.get("RANK", "0") == "0":
            print(str(e), file=sys.stderr)
        return EXIT_PREEMPTED
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
