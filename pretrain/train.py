"""The MLM pretraining loop, readable top to bottom: `python -m pretrain.train CONFIG.json`.

Runs in-process (one CPU process) or once per rank under `torchrun` / `accelerate launch` (gloo on CPU, nccl on
GPU, optionally DeepSpeed ZeRO 1/2/3). `train()` does, in order:
  1. build the accelerator, the tokenizer, the packed samples and a seeded model with its optimizer;
  2. resume from the newest complete checkpoint in `<out_dir>/checkpoints/` if there is one;
  3. for each optimizer step: `grad_accum` micro-batches, each chosen by (seed, step, micro, rank) and masked
     on the fly (dynamic masking, optionally whole-eojeol), MLM loss at masked positions only; clip; step;
  4. log loss / lr / tokens/s (and MFU on GPU) to metrics.jsonl and TensorBoard; evaluate every `eval_every`;
     checkpoint every `checkpoint_every` steps (atomically: written under a temp name, then renamed);
  5. export `final/` (safetensors model + tokenizer), `summary.json` and `loss_curve.png`.
The pieces it calls are the named functions below it: `micro_batch`, `evaluate`, `log_row`, `save_checkpoint`,
`resume`, `export_final`, `plot_loss_curve`. Because the data order and the masks are functions of the step
number, a resumed run reads no sample twice and, on CPU, reproduces the uninterrupted loss curve step for step.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import io
from pretrain.config import CHECKPOINTS, STATE_FILE, TrainConfig
from pretrain.export import export_final, fp32_master_state
from pretrain.flops import Peak, peak_for, step_flops

EVAL_STEP = 2**40  # the "step" coordinate of evaluation masks: fixed, so every evaluation sees the same masks
DEEPSPEED_DIR = Path(__file__).parent / "deepspeed"


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


def resolve_mixed_precision(choice: str) -> str:
    """`auto`: bf16 on a GPU that has it, fp32 otherwise (CPU bf16 is slower than fp32 on most CPUs)."""
    import torch

    if choice != "auto":
        return choice
    return "bf16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "no"


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


def find_checkpoint(out_dir: Path) -> Path | None:
    """Newest complete checkpoint: a `step-*` folder (renamed into place only once complete)."""
    ckpts = sorted((out_dir / CHECKPOINTS).glob("step-*"))
    ckpts = [c for c in ckpts if (c / STATE_FILE).is_file()]
    return ckpts[-1] if ckpts else None


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rewrite_metrics(path: Path, rows: list[dict[str, Any]]) -> None:
    io.write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def plot_loss_curve(metrics: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [(m["step"], m["loss"]) for m in metrics if "loss" in m]
    evals = [(m["step"], m["eval_loss"]) for m in metrics if "eval_loss" in m]
    mask_evals = [(m["step"], m["eval_mask_loss"]) for m in metrics if "eval_mask_loss" in m]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    if train:
        ax.plot(*zip(*train, strict=True), label="train loss")
    if evals:
        ax.plot(*zip(*evals, strict=True), "o-", label="held-out loss")
    if mask_evals:
        ax.plot(*zip(*mask_evals, strict=True), "s--", label="held-out loss at [MASK] inputs")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("MLM cross-entropy (nats)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    order = [(m["step"], m["eval_order_gain"]) for m in metrics if "eval_order_gain" in m]
    if order:  # on its own axis: ~0 (bag of words) until the model leaves the plateau, then rising
        ax2 = ax.twinx()
        (line,) = ax2.plot(*zip(*order, strict=True), "^:", color="tab:red", label="word-order gain (right)")
        ax2.set_ylabel("order gain (nats)")
        handles.append(line)
        labels.append(line.get_label())
    ax.legend(handles, labels, fontsize="small")
    fig.tight_layout()
    with io.atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run (or resume) training to `max_steps`; returns the summary also written to `summary.json`."""
    import torch
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm
    from transformers import AutoTokenizer

    from pretrain.architectures import build_config
    from pretrain.data import PackedSamples, SampleOrder, SpecialIds, TokenStream
    from pretrain.model import SparseMLM, build_model

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    accelerator = make_accelerator(cfg)
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
        model = SparseMLM(build_model(model_cfg, cfg.seed))
        n_params = sum(p.numel() for p in model.parameters())
        decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
        no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}],
                                      lr=cfg.lr, betas=cfg.adam_betas, eps=cfg.adam_eps)
        model, optimizer = accelerator.prepare(model, optimizer)
        set_seed(cfg.seed + rank)  # dropout streams differ per rank; restored from checkpoints on resume
        run = Run(cfg, accelerator, model, optimizer, special, order)

        # -- resume -------------------------------------------------------------------------------------
        step, elapsed_before, tokens_seen = resume(run)
        accelerator.init_trackers("tensorboard")
        peak = device_peak(cfg)
        batches = BatchSource(run, train_samples)  # builds the next micro-batch while this one runs (GPU)

        # -- the loop -----------------------------------------------------------------------------------
        # Throughput counts training steps only: the clock is read after a device sync at the ends of each
        # timed stretch, stops for evaluation, checkpoints and logging, and skips the process's first step
        # (start-up: allocator, kernels, DeepSpeed's first collectives).
        model.train()
        t_start = time.perf_counter()
        timer = Throughput(accelerator)
        window_loss = torch.zeros((), device=accelerator.device, dtype=torch.float64)
        window_steps = 0
        bar = tqdm(total=cfg.max_steps, initial=step, desc="pretrain", disable=not run.main, unit="step")
        first_step = True
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
            for a in range(cfg.grad_accum):
                b, n_pred = batches.get(step, a)
                with accelerator.accumulate(model):
                    loss = model(**b)
                    accelerator.backward(loss)
                    if accelerator.sync_gradients:
                        accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    optimizer.step()
                    optimizer.zero_grad()
                window_loss += loss.detach().double() / cfg.grad_accum
                tokens += int(b["input_ids"].numel())
                predicted += n_pred
            step += 1
            window_steps += 1
            tokens_seen += order.per_step * cfg.seq_len
            if not first_step:
                timer.count(tokens, step_flops(model_cfg, cfg.seq_len, tokens, predicted))
            first_step = False
            bar.update(1)
            row: dict[str, Any] = {}
            if step % cfg.log_every == 0 or step == cfg.max_steps:
                # the only host sync of the training steps: the loss, averaged over the window and the ranks
                mean_loss = float(accelerator.reduce(window_loss, "mean")) / window_steps
                row = {"step": step, "loss": mean_loss, "lr": lr, "epoch": order.epoch(step)}
                row.update(timer.window(world, peak))
                window_loss.zero_()
                window_steps = 0
                bar.set_postfix(loss=f"{mean_loss:.3f}", tok_s=f"{row.get('tokens_per_s', 0):.0f}")
            if eval_samples is not None and (step % cfg.eval_every == 0 or step == cfg.max_steps):
                timer.pause()
                row = {**row, "step": step, **evaluate(run, eval_samples)}
            if row:
                log_row(run, row)
            if step % cfg.checkpoint_every == 0 or step == cfg.max_steps:
                timer.pause()
                save_checkpoint(run, step, elapsed_before + time.perf_counter() - t_start, tokens_seen)
            if cfg.halt_after_step is not None and step >= cfg.halt_after_step:
                bar.close()
                raise Halted(f"halted after step {step} (halt_after_step)")
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
        summary = summarize(run, step, tokens_seen, n_params, timer, peak, rank_steps)
        if run.main:
            plot_loss_curve(read_metrics(run.metrics_path), run.out_dir / "loss_curve.png")
            io.write_json(run.out_dir / "summary.json", summary, indent=1, ensure_ascii=True)
        accelerator.wait_for_everyone()
        return summary
    finally:
        release(accelerator)


# ---------------------------------------------------------------------------------------------------------
# what the loop calls


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


def make_accelerator(cfg: TrainConfig) -> Any:
    """The `Accelerator` for this config: CPU or GPU, mixed precision, optionally a DeepSpeed ZeRO plugin."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DeepSpeedPlugin, DistributedType, InitProcessGroupKwargs

    precision = resolve_mixed_precision(cfg.mixed_precision)
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


def device_peak(cfg: TrainConfig) -> Peak | None:
    """The per-device peak that MFU divides by: `peak_tflops` when set, else the GPU's from `pretrain.flops`;
    None on CPU or an unknown GPU (then no MFU is logged)."""
    import torch

    if cfg.peak_tflops is not None:
        return peak_for("", cfg.peak_tflops)
    return peak_for(torch.cuda.get_device_name()) if torch.cuda.is_available() else None


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


class Throughput:
    """Tokens and FLOPs per second of training steps only (see the loop): windows between log steps, and the
    run's total for the summary."""

    def __init__(self, accelerator: Any):
        self.accelerator = accelerator
        self._t0: float | None = None
        self.tokens = self.flops = 0.0  # this window
        self.seconds = 0.0
        self.total_tokens = self.total_flops = self.total_seconds = 0.0

    def _sync(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def start(self) -> None:
        """Start the clock (if it is not running): a timed stretch of training steps begins."""
        if self._t0 is None:
            self._sync()
            self._t0 = time.perf_counter()

    def count(self, tokens: int, flops: float) -> None:
        """A timed step's work; the clock keeps running into the next step until `pause`."""
        self.tokens += tokens
        self.flops += flops

    def pause(self) -> None:
        """Stop the clock after a device sync: what follows (evaluation, a checkpoint) is not training."""
        if self._t0 is not None:
            self._sync()
            dt = time.perf_counter() - self._t0
            self.seconds += dt
            self.total_seconds += dt
            self._t0 = None

    def window(self, world: int, peak: Peak | None) -> dict[str, Any]:
        """tokens/s (over all ranks) and MFU of the window since the last call, then a new window."""
        self.pause()
        out: dict[str, Any] = {}
        if self.seconds > 0:
            out["tokens_per_s"] = self.tokens * world / self.seconds
            if peak is not None:
                out["mfu"] = self.flops / (self.seconds * peak.flops)
        self.total_tokens += self.tokens
        self.total_flops += self.flops
        self.tokens = self.flops = self.seconds = 0.0
        return out


class BatchSource:
    """Micro-batches of (step, micro-batch) on this rank: built on the CPU (masking is a function of the
    coordinates), in pinned memory and copied without blocking on a GPU, where a background thread builds the
    next one while the current one runs. On CPU they are built in line (a thread would only compete)."""

    def __init__(self, run: Run, samples: Any, background: bool | None = None):
        import torch

        self.run, self.samples = run, samples
        self.rank = run.accelerator.process_index
        self.pin = torch.cuda.is_available()
        self._pool: Any = None
        self._next: tuple[tuple[int, int], Any] | None = None
        if background is None:
            background = torch.cuda.is_available()
        if background:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batches")

    def _coords_after(self, s: int, a: int) -> tuple[int, int]:
        return (s, a + 1) if a + 1 < self.run.cfg.grad_accum else (s + 1, 0)

    def _build(self, s: int, a: int) -> tuple[dict[str, Any], int]:
        return micro_batch(self.run, s, a, self.rank, self.samples, self.run.order.indices(s, a, self.rank),
                           pin=self.pin)

    def get(self, s: int, a: int) -> tuple[dict[str, Any], int]:
        """The micro-batch and its number of predicted positions."""
        if self._pool is None:
            return self._build(s, a)
        if self._next is not None and self._next[0] == (s, a):
            built = self._next[1].result()
        else:
            built = self._build(s, a)
        nxt = self._coords_after(s, a)
        self._next = (nxt, self._pool.submit(self._build, *nxt)) if nxt[0] < self.run.cfg.max_steps else None
        return built

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def micro_batch(run: Run, s: int, a: int, r: int, samples: Any, indices: list[int], pin: bool = False
                ) -> tuple[dict[str, Any], int]:
    """Samples `indices`, masked with the generator of coordinates (seed, step s, micro-batch a, rank r), on
    the device; and how many positions are predicted (counted on the CPU, so the count costs no sync)."""
    from pretrain.data import IGNORE, mask_tokens, step_generator

    cfg, dev = run.cfg, run.accelerator.device
    b = samples.batch(indices)
    ids, labels = mask_tokens(b["input_ids"], run.special, step_generator(cfg.seed, s, a, r),
                             mlm_probability=cfg.mlm_probability, word_starts=b.get("word_starts"),
                             whole_word=cfg.whole_word_mask)
    return _to_device({"input_ids": ids, "labels": labels}, b["attention_mask"], dev, pin), \
        int((labels != IGNORE).sum())


def _to_device(batch: dict[str, Any], attention_mask: Any, dev: Any, pin: bool) -> dict[str, Any]:
    if not bool(attention_mask.all()):  # packed samples need no mask; only the short last one does
        batch["attention_mask"] = attention_mask
    if pin:
        batch = {k: v.pin_memory() for k, v in batch.items()}
    return {k: v.to(dev, non_blocking=pin) for k, v in batch.items()}


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
            batch = _to_device({"input_ids": ids, "labels": labels}, b["attention_mask"], dev, False)
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


def log_row(run: Run, row: dict[str, Any]) -> None:
    """One line of metrics.jsonl (main process) and the same values to the trackers."""
    run.accelerator.log({k: v for k, v in row.items() if k != "step"}, step=row["step"])
    if run.main:
        with open(run.metrics_path, "a", encoding="utf-8") as f:  # appended: a killed run keeps its lines
            f.write(json.dumps(row, sort_keys=True) + "\n")


def save_checkpoint(run: Run, s: int, elapsed: float, tokens: int) -> None:
    """`checkpoints/step-NNNNNNNN/`: model (safetensors; under DeepSpeed its ZeRO shards), optimizer and RNG
    states of every rank, and `train_state.json`; written under a temp name and renamed when complete. Keeps
    `keep_checkpoints`. The last step is checkpointed too, so a finished run can be continued to more steps."""
    accelerator, ckpt_root = run.accelerator, run.out_dir / CHECKPOINTS
    final = ckpt_root / f"step-{s:08d}"
    # Every rank writes into the same folder, so its temp name is one that all ranks agree on (not
    # `io.temp_name`'s per-process one); it still matches `io.is_temp`, so `io.remove_temps` cleans it.
    tmp = ckpt_root / f".{final.name}.tmp-allranks"
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if run.main:
        state = {"step": s, "elapsed_s": elapsed, "tokens": tokens, "world_size": accelerator.num_processes,
                 "per_step": run.order.per_step, "samples_read": s * run.order.per_step}
        io.write_text(tmp / STATE_FILE, json.dumps(state, sort_keys=True) + "\n")
        if final.exists():  # the same step again (a finished run restarted): replace it
            shutil.rmtree(final)
        tmp.rename(final)
        for old in sorted(ckpt_root.glob("step-*"))[:-run.cfg.keep_checkpoints]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()


def resume(run: Run) -> tuple[int, float, int]:
    """(step, elapsed seconds, tokens seen) of the newest complete checkpoint, loaded; (0, 0, 0) without one.
    Drops unfinished checkpoint folders and the metrics lines logged after the checkpoint."""
    accelerator = run.accelerator
    if run.main and (run.out_dir / CHECKPOINTS).is_dir():
        io.remove_temps(run.out_dir / CHECKPOINTS)
    accelerator.wait_for_everyone()
    ckpt = find_checkpoint(run.out_dir)
    if ckpt is None:
        return 0, 0.0, 0
    state = json.loads((ckpt / STATE_FILE).read_text())
    world, per_step = accelerator.num_processes, run.order.per_step
    if state["world_size"] != world or state["per_step"] != per_step:
        raise ValueError(f"{ckpt}: written with world_size={state['world_size']} and "
                         f"{state['per_step']} samples/step; this run has {world} and {per_step}")
    accelerator.load_state(str(ckpt))
    accelerator.print(f"resuming from {ckpt.name} (step {state['step']})")
    if run.main:  # lines logged after the checkpoint belong to the lost part of the run
        _rewrite_metrics(run.metrics_path, [m for m in read_metrics(run.metrics_path) if m["step"] <= state["step"]])
    return state["step"], state["elapsed_s"], state["tokens"]


def summarize(run: Run, step: int, tokens_seen: int, n_params: int, timer: Throughput, peak: Peak | None,
              rank_steps: list[int]) -> dict[str, Any]:
    """The run's summary (summary.json and the stage report) from metrics.jsonl and this process's timer:
    tokens/s and MFU over every timed training step of this process (not a mean of window rates)."""
    metrics = read_metrics(run.metrics_path)
    train_rows = [m for m in metrics if "loss" in m]
    eval_rows = [m for m in metrics if "eval_loss" in m]
    world = run.accelerator.num_processes
    secs = timer.total_seconds
    return {
        "steps": step,
        "first_loss": train_rows[0]["loss"] if train_rows else None,
        "last_loss": train_rows[-1]["loss"] if train_rows else None,
        "eval_loss": eval_rows[-1]["eval_loss"] if eval_rows else None,
        "eval_mask_loss": eval_rows[-1].get("eval_mask_loss") if eval_rows else None,
        "eval_order_gain": eval_rows[-1].get("eval_order_gain") if eval_rows else None,
        "tokens_per_s": timer.total_tokens * world / secs if secs else None,
        "mfu": timer.total_flops / (secs * peak.flops) if secs and peak else None,
        "peak": {"label": peak.label, "flops_per_s": peak.flops} if peak else None,
        "tokens_seen": tokens_seen,
        "params": n_params,
        "world_size": world,
        "rank_steps": rank_steps,
        "mixed_precision": run.accelerator.mixed_precision,
        "deepspeed": run.cfg.deepspeed,
        "epochs": run.order.epoch(step),
    }


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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
