"""DST training step time: the TRADE decoder computing the vocabulary distribution of every (example, slot) row at
every step (`StateTracker.decode_all_rows`, the baseline's way) against only the rows whose gold value still has a
token (the default), same model, batches, seed and threads, in one run.

Both rows train the same fresh copy of the model for the same steps on the same batches of synthetic WoS
dialogues (`python -m datagen.wos`), with dropout off and teacher forcing on every step so that the two
are the same computation: the bench checks that their losses agree at every step and stops if they do not.
Reported: median seconds per optimiser step (forward, backward, AdamW), the share of rows still decoding at each
decoder step, and the ratio.

    python bench/dst.py --model runs/klue-tiny-cpu/arms/default/pretrain/final --steps 12 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="a pretrained model folder (AutoModel + tokenizer)")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import torch
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from datagen import wos
    from finetune.data import load_task_data
    from finetune.registry import get_task

    torch.set_num_threads(args.threads)
    hf_logging.set_verbosity_error()  # the head's fresh weights, reported once per model built
    with tempfile.TemporaryDirectory() as tmp:
        wos.write(Path(tmp), 200, 10, 0)
        task = get_task("dst", data_dir=Path(tmp))
        data = load_task_data(task, Path(tmp), split="official", max_train=args.steps * args.batch_size)
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        task.prepare_tokenizer(tokenizer)
        feats = task.encode(data.train, tokenizer, args.max_length)
    collate = task.collator(tokenizer)
    batches = [collate([{k: v for k, v in f.items() if k != "example_index"} for f in feats[i:i + args.batch_size]])
               for i in range(0, len(feats), args.batch_size)][: args.steps]
    lengths = torch.cat([(b["target_ids"] != tokenizer.pad_token_id).sum(-1).flatten() for b in batches])
    share = [float((lengths > k).float().mean()) for k in range(int(lengths.max()))]

    times: dict[bool, list[float]] = {}
    losses: dict[bool, list[float]] = {}
    for all_rows in (True, False):
        torch.manual_seed(0)
        model = task.build_model(args.model, tokenizer, random_init=False).train()
        model.head_config = replace(model.head_config, teacher_forcing=1.0)
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        model.decode_all_rows = all_rows
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for batch in batches:
            t = time.perf_counter()
            loss = model(**batch).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            times.setdefault(all_rows, []).append(time.perf_counter() - t)
            losses.setdefault(all_rows, []).append(loss.item())
    for a, b in zip(losses[True], losses[False], strict=True):
        if abs(a - b) > 1e-4 * max(1.0, abs(a)):
            sys.exit(f"the two rows trained differently: losses {losses[True]} vs {losses[False]}")
    dense, sparse = statistics.median(times[True]), statistics.median(times[False])
    print(f"model {args.model}, {len(batches)} steps of batch {args.batch_size}, max length {args.max_length}, "
          f"{args.threads} thread(s); losses agree at every step ({losses[False][0]:.4f} -> {losses[False][-1]:.4f})")
    print("rows still decoding at decoder step k: " + ", ".join(f"{k}: {s:.2f}" for k, s in enumerate(share)))
    print()
    print("| decoder | s / step (median) | ratio |")
    print("|---|---:|---:|")
    print(f"| every row at every step (baseline) | {dense:.3f} | 1.00 |")
    print(f"| unfinished values only (ours) | {sparse:.3f} | {dense / sparse:.2f}x |")


if __name__ == "__main__":
    main()
