"""The collect stage on one large text file: `--workers 1` vs `2`, splitting off vs on (`split_bytes`), wall
seconds, MB/s, and a check that every configuration writes the same shard and quarantine bytes.

    KLUE_DATA_DIR=../shared/data python bench/collect_split.py [--mb 200] [--split-mb 16] [--workers 1 2]
        [--cache DIR]

Input: the shared corpus's text files (kowiki sections, NSMC reviews, news comments), concatenated and repeated
to about `--mb` MB, read as one `format: text, unit: line` source. Each configuration runs in a `klue run RECIPE
--until collect` process of its own in a fresh workdir; the wall time is the stage's `timings.seconds` in its
manifest (the source digest before it is not included), MB/s is the file's size over it; CPU seconds are those
of the whole `klue run` process and its pool workers (start-up and the source digest included). Without splitting the
file is one task whatever the worker count, which is the point of the comparison.

Time it alone: 2 cores are easily oversubscribed. Not run in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PARTS = ("kowiki_sections.txt", "nsmc_reviews.txt", "news_comments.txt")


def make_input(data: Path, cache: Path, mb: int) -> Path:
    """The shared texts repeated to about `mb` MB (cached: the same bytes every time)."""
    out = cache / f"collect-split-{mb}mb.txt"
    if out.exists():
        return out
    body = b"".join((data / "corpus" / p).read_bytes().rstrip(b"\n") + b"\n" for p in PARTS)
    cache.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".tmp"), "wb") as f:
        for _ in range(max(1, round(mb * 2**20 / len(body)))):
            f.write(body)
    os.replace(out.with_suffix(".tmp"), out)
    return out


def run(src: Path, workdir: Path, workers: int, split_bytes: int | None) -> tuple[float, float, dict[str, str]]:
    """Wall seconds of the stage, CPU seconds of the whole `klue run` (its pool workers included), digests."""
    recipe = workdir.parent / f"{workdir.name}.yaml"
    recipe.write_text(json.dumps({
        "name": "collect-split", "seed": 1,
        "sources": [{"name": "big", "path": str(src), "format": "text", "unit": "line"}],
        "stages": {"collect": {"split_bytes": split_bytes}},
    }), encoding="utf-8")
    cpu0 = _children_cpu()
    subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(recipe), "--workdir", str(workdir),
                    "--until", "collect", "--workers", str(workers)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    cpu = _children_cpu() - cpu0
    (folder,) = [p for p in (workdir / "collect").iterdir() if p.is_dir()]
    seconds = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["timings"]["seconds"]
    digests = {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
               for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    return float(seconds), cpu, digests


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--split-mb", type=int, default=16, help="split_bytes of the splitting runs, in MiB")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "klue-bench")
    args = ap.parse_args()
    data = Path(os.environ.get("KLUE_DATA_DIR", "../shared/data"))
    src = make_input(data, args.cache, args.mb)
    size = src.stat().st_size
    print(f"input: {src} ({size / 1e6:.0f} MB)")
    reference = None
    for split in (None, args.split_mb * 2**20):
        for w in args.workers:
            wd = Path(tempfile.mkdtemp(prefix="collect-split-", dir=args.cache))
            try:
                seconds, cpu, digests = run(src, wd / "w", w, split)
            finally:
                shutil.rmtree(wd, ignore_errors=True)
            reference = reference or digests
            label = "off" if split is None else f"{args.split_mb} MiB"
            print(f"workers {w}  splitting {label:>7}: {seconds:6.1f} s  {size / 1e6 / seconds:5.1f} MB/s  "
                  f"CPU {cpu:6.1f} s (whole klue run)  same bytes as the first run: {digests == reference}  "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
