"""The person recognizer's anchored patterns, fast form against plain form (issue 49): CPU nanoseconds per character
of `finditer` over real documents, the least of `--repeat` alternating runs each, and whether both forms give the
same matches (span and group) on every document.

    python bench/pii_patterns.py --workdir WD [--docs 3000] [--repeat 7]

WD: a `klue run` workdir done through `decontaminate` (the texts pii_detect reads), e.g. the 0.1 GB scale
corpus's (`bench/scale.py --keep`, or `klue run /tmp/klue-scale/scale-0.1/recipe.yaml --workdir WD --until
decontaminate`). The plain forms are `names.plain_patterns()`: each alternation in full, a look-behind first.
Alternating runs in one process, because this VM's speed drifts by up to 1.3x within minutes. Time it alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpora.lang.ko.pii import names  # noqa: E402
from corpora.shards import iter_docs, list_shards  # noqa: E402
from datagen.scale import stage_folder  # noqa: E402


def cpu_ns(rx, texts: list[str]) -> float:
    t = time.process_time()
    for text in texts:
        for _ in rx.finditer(text):
            pass
    return (time.process_time() - t) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    texts: list[str] = []
    for shard in list_shards(stage_folder(args.workdir, "decontaminate")):
        texts += [d.text for d in iter_docs(shard)]
        if len(texts) >= args.docs:
            break
    texts = texts[:args.docs]
    chars = sum(map(len, texts))
    print(f"{len(texts)} documents, {chars:,} characters; load average {os.getloadavg()[0]:.2f}")
    print(f"{'pattern':14s} {'plain ns/char':>14s} {'fast ns/char':>13s} {'fast/plain':>11s}  same matches")
    for name, plain in names.plain_patterns().items():
        fast = getattr(names, name)
        same = all([(m.span(), m.groups()) for m in fast.finditer(t)] == [(m.span(), m.groups()) for m in plain.finditer(t)]
                   for t in texts)
        p, f = [], []
        for _ in range(args.repeat):
            p.append(cpu_ns(plain, texts))
            f.append(cpu_ns(fast, texts))
        print(f"{name:14s} {min(p) / chars:14.1f} {min(f) / chars:13.1f} {min(f) / min(p):11.2f}  {same}")


if __name__ == "__main__":
    main()
