"""Pretraining throughput: the pretrain stage's loop against HF `Trainer` + `DataCollatorForLanguageModeling`.

Same text, same WordPiece tokenizer, same `tiny` encoder of each architecture (RoBERTa and ModernBERT by default,
`--architectures`), same batch (sequences x length), same threads, in one run. The baseline is the `run_mlm.py` way: tokenize with `datasets.map`, then either `--line_by_line`
(one document per row, dynamic padding per batch) or the default `group_texts` (concatenate, cut into blocks;
no document separators). Reported: real (non-padding) tokens per second after warm-up, the padding share of
what the model computed, and the speed-up of ours over each baseline. ModernBERT's own class can compute its
logits at the masked positions only (`sparse_prediction`, as our wrapper does for every architecture): that row
is the strongest HF baseline for it.

Each row runs in fp32 and, where the CPU multiplies bf16 natively (AMX, AVX512-BF16; `--precisions` to choose),
in bf16 autocast over fp32 weights: ours with `mixed_precision: bf16` (and, on such a CPU, the loop's kernels:
eager attention in a compiled encoder, `pretrain.engine.cpu_kernels`), HF's with `TrainingArguments(bf16=True)`.
MFU divides the model FLOPs a row computed usefully (`pretrain.flops.step_flops`: real tokens, the predicted
positions through the head) by the CPU's measured matmul peak at the row's precision and threads
(`pipeline.hardware.matmul_peak`). `--shape` picks the encoder: `tiny` (4 x 128, the embedded default's),
`suite` (4 x 256, klue-tiny-suite's) or `base` (12 x 768, KLUE-base's).

    python bench/pretrain.py --docs 20000 --steps 30          # needs KLUE_DATA_DIR
    python bench/pretrain.py --shape suite --batch 16 --architectures modernbert --json suite.json
    python bench/pretrain.py --shape base --batch 4 --steps 12 --warmup 4 --architectures modernbert
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from corpora.shards import Doc, doc_id, meta_json, shard_name, write_docs  # noqa: E402
from pipeline.stage import StageContext, StageInput  # noqa: E402


def read_texts(data_dir: Path, n_docs: int) -> list[str]:
    """Half Wikipedia sections (long), half movie reviews (short): both kinds of padding behaviour."""
    wiki = (data_dir / "corpus/kowiki_sections.txt").read_text(encoding="utf-8").split("\n\n")
    nsmc = (data_dir / "corpus/nsmc_reviews.txt").read_text(encoding="utf-8").splitlines()
    wiki = [t.strip() for t in wiki if t.strip()][: n_docs // 2]
    nsmc = [t.strip() for t in nsmc if t.strip()][: n_docs - len(wiki)]
    return wiki + nsmc


def train_tokenizer(texts: list[str], out: Path, vocab_size: int):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import BertTokenizerFast

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"]))
    tok = BertTokenizerFast(vocab=wp.get_vocab(), do_lower_case=False, strip_accents=False,
                            model_input_names=["input_ids", "attention_mask"])
    tok.save_pretrained(out)
    return tok


# --shape: (pretrain.architectures size, model_overrides), the same for ours and HF's
SHAPE_ARGS: dict[str, tuple[str, dict]] = {
    "tiny": ("tiny", {}),
    "suite": ("tiny", {"hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 704}),
    "base": ("base", {}),
}


def model_config(args, tok, architecture: str):
    from pretrain.architectures import build_config

    size, overrides = SHAPE_ARGS[args.shape]
    if architecture != "modernbert":
        overrides = {k: v for k, v in overrides.items() if k != "intermediate_size"} | (
            {"intermediate_size": 4 * overrides["hidden_size"]} if "hidden_size" in overrides else {})
    return build_config(size, vocab_size=len(tok), seq_len=args.seq_len, pad_token_id=tok.pad_token_id,
                        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, overrides=overrides,
                        architecture=architecture), size, overrides


def mfu(flops_per_s: float, precision: str, threads: int) -> float | None:
    from pipeline.hardware import mfu_peak

    peak = mfu_peak(precision, threads)
    return flops_per_s / (peak.tflops * 1e12) if peak else None


def encode_texts(texts: list[str], work: Path, tok_dir: Path, eval_fraction: float = 0.0) -> Path:
    """The texts as one document shard, encoded by the encode stage into `work/encode` (once: a later call with the
    same `work` reuses it)."""
    from pretrain.stages.encode import EncodeParams, EncodeStage

    enc = work / "encode"
    if enc.is_dir():
        return enc
    docs = work / "docs"
    write_docs(docs / shard_name(0), (Doc(doc_id("bench", "b", i), t, "bench", meta_json({}))
                                      for i, t in enumerate(texts)))
    enc.mkdir(parents=True)
    EncodeStage().run(StageContext(
        out_dir=enc, params=EncodeParams(eval_fraction=eval_fraction),
        inputs={"pii": StageInput("pii", docs, {}),
                "vocab": StageInput("vocab", tok_dir.parent, {"meta": {"tokenizer_dir": tok_dir.name}})},
        recipe=SimpleNamespace(seed=0, sources=[])))
    return enc


def run_ours(texts: list[str], work: Path, tok_dir: Path, args, architecture: str, precision: str = "fp32") -> dict:
    from pretrain.config import TrainConfig
    from pretrain.metrics import read_metrics
    from pretrain.train import train

    enc = encode_texts(texts, work, tok_dir)
    shutil.rmtree(work / "train", ignore_errors=True)
    from transformers import AutoTokenizer

    _, size, overrides = model_config(args, AutoTokenizer.from_pretrained(tok_dir), architecture)
    cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(tok_dir), out_dir=str(work / "train"),
                      architecture=architecture, model=size, model_overrides=overrides,
                      seq_len=args.seq_len, batch_size=args.batch, max_steps=args.steps, warmup_steps=5,
                      lr=1e-3, log_every=args.warmup, eval_every=10**9, checkpoint_every=10**9,
                      threads=args.threads, mixed_precision="no" if precision == "fp32" else precision)
    train(cfg)
    rows = [m for m in read_metrics(work / "train/metrics.jsonl") if "tokens_per_s" in m][1:]  # skip warm-up
    tps = sum(m["tokens_per_s"] for m in rows) / len(rows)
    # Packed samples are full except the last one of the split: padding is below 1/len(samples).
    return {"tokens_per_s": tps, "padding": 0.0, "loss": rows[-1]["loss"],
            "mfu": sum(m["mfu"] for m in rows) / len(rows) if all("mfu" in m for m in rows) else None}


class CountingCollator:
    """Wraps HF's collator to count what the model computes: (real tokens, padded positions) per batch."""

    def __init__(self, inner, pad_id: int):
        self.inner, self.pad_id = inner, pad_id
        self.real, self.total, self.predicted = [], [], []

    def __call__(self, features):
        batch = self.inner(features)
        self.total.append(batch["input_ids"].numel())
        self.real.append(int(batch["attention_mask"].sum()) if "attention_mask" in batch
                         else batch["input_ids"].numel())
        self.predicted.append(int((batch["labels"] != -100).sum()))
        return batch


def run_hf(texts: list[str], tok, args, line_by_line: bool, architecture: str, sparse: bool = False,
           precision: str = "fp32") -> dict:
    import torch
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments

    from pretrain.flops import step_flops
    from pretrain.model import build_model

    ds = Dataset.from_dict({"text": texts})
    if line_by_line:  # run_mlm.py --line_by_line: one row per document, truncated, padded per batch
        ds = ds.map(lambda b: tok(b["text"], truncation=True, max_length=args.seq_len), batched=True,
                    remove_columns=["text"])
    else:  # run_mlm.py default: tokenize everything, concatenate, cut into seq_len blocks
        ds = ds.map(lambda b: tok(b["text"]), batched=True, remove_columns=["text"])

        def group(b):
            ids = [t for row in b["input_ids"] for t in row]
            n = len(ids) // args.seq_len * args.seq_len
            blocks = [ids[i:i + args.seq_len] for i in range(0, n, args.seq_len)]
            return {"input_ids": blocks, "attention_mask": [[1] * args.seq_len for _ in blocks]}

        ds = ds.map(group, batched=True, remove_columns=ds.column_names)
    cfg, _, _ = model_config(args, tok, architecture)
    if sparse:
        cfg.sparse_prediction = True
    model = build_model(cfg, seed=0)
    collator = CountingCollator(DataCollatorForLanguageModeling(tok, mlm_probability=0.15), tok.pad_token_id)
    marks: dict[int, float] = {}

    class Clock(TrainerCallback):
        def on_step_end(self, a, state, control, **kw):
            marks[state.global_step] = time.perf_counter()

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as out:
        targs = TrainingArguments(output_dir=out, max_steps=args.steps, per_device_train_batch_size=args.batch,
                                  learning_rate=1e-3, warmup_steps=5, report_to=[], save_strategy="no",
                                  logging_steps=10**9, use_cpu=True, dataloader_num_workers=0, seed=0,
                                  disable_tqdm=True, bf16=precision == "bf16")
        Trainer(model=model, args=targs, train_dataset=ds, data_collator=collator,
                callbacks=[Clock()]).train()
    w = args.warmup
    real = sum(collator.real[w:args.steps])
    total = sum(collator.total[w:args.steps])
    seconds = marks[args.steps] - marks[w]
    flops = step_flops(cfg, args.seq_len, real, sum(collator.predicted[w:args.steps]))
    return {"tokens_per_s": real / seconds, "padding": 1 - real / total,
            "mfu": mfu(flops / seconds, precision, args.threads)}


def main() -> None:
    from pipeline.hardware import cpu_model, mfu_peak, native_bf16

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5, help="steps excluded from the timing")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=16000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--shape", choices=sorted(SHAPE_ARGS), default="tiny")
    ap.add_argument("--architectures", nargs="+", default=["roberta", "modernbert"],
                    help="pretrain.architectures names, each against HF Trainer on the same model")
    ap.add_argument("--precisions", nargs="+", choices=["fp32", "bf16"],
                    help="default: fp32, and bf16 where the CPU has native bf16 (emulated bf16 is ~100x slower)")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    data = os.environ.get("KLUE_DATA_DIR")
    if not data:
        sys.exit("set KLUE_DATA_DIR to the shared data folder")
    precisions = args.precisions or ["fp32", *(["bf16"] if native_bf16() else [])]
    if not args.precisions and not native_bf16():
        print("bf16 rows skipped: this CPU has no native bf16 (--precisions fp32 bf16 runs them emulated)",
              file=sys.stderr)
    texts = read_texts(Path(data), args.docs)
    work = Path(tempfile.mkdtemp(prefix="bench-pretrain-"))
    tables: dict[str, dict[str, dict]] = {}
    try:
        tok = train_tokenizer(texts, work / "vocab" / "tok", args.vocab)
        for arch in args.architectures:
            rows: dict[str, dict] = {}
            for prec in precisions:
                tag = "" if prec == "fp32" else f", {prec}"
                if prec == "fp32":  # the padded baseline once: its padding share says what it is
                    rows["HF Trainer, line_by_line (padded)"] = run_hf(texts, tok, args, True, arch)
                rows[f"HF Trainer, group_texts{tag}"] = run_hf(texts, tok, args, False, arch, precision=prec)
                if arch == "modernbert":
                    rows[f"HF Trainer, group_texts, sparse_prediction{tag}"] = run_hf(
                        texts, tok, args, False, arch, True, precision=prec)
                rows[OURS + tag] = run_ours(texts, work / "ours", work / "vocab" / "tok", args, arch, prec)
            tables[arch] = rows
    finally:
        shutil.rmtree(work, ignore_errors=True)
    peaks = {p: peak for p in precisions if (peak := mfu_peak(p, args.threads))}
    print(f"\n{len(texts)} docs, {args.shape} encoders, vocab {len(tok)}, batch {args.batch} x {args.seq_len}, "
          f"{args.steps} steps ({args.warmup} warm-up), {args.threads} threads; {cpu_model()}, native bf16: "
          f"{native_bf16() or 'none'}; load average after the run {os.getloadavg()[0]:.2f}")
    for peak in peaks.values():
        print(f"  MFU against: {peak.label}")
    print(f"{'architecture':15s} {'run':50s} {'real tok/s':>11s} {'padding':>8s} {'MFU':>6s} {'ours / it':>10s}")
    for arch, rows in tables.items():
        ours = rows[OURS]["tokens_per_s"]
        for name, r in rows.items():
            mfu_cell = f"{r['mfu']:6.1%}" if r["mfu"] is not None else f"{'–':>6s}"
            print(f"{arch:15s} {name:50s} {r['tokens_per_s']:11.0f} {r['padding']:8.1%} {mfu_cell} "
                  f"{ours / r['tokens_per_s']:9.2f}x")
        if f"{OURS}, bf16" in rows:
            print(f"{arch:15s} ours bf16 / ours fp32: {rows[OURS + ', bf16']['tokens_per_s'] / ours:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "cpu": cpu_model(),
                                         "native_bf16": native_bf16(),
                                         "peaks": {p: peak.label for p, peak in peaks.items()},
                                         "rows": tables}, indent=1) + "\n")


OURS = "pretrain stage (packed, sparse head)"


if __name__ == "__main__":
    main()
