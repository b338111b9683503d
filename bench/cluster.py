"""The dedup stage at 1x and 4x input: the driver's memory in the global step, and the Ray executor against
the local pool with the same number of workers, with a check that all runs write the same bytes.

    KLUE_DATA_DIR=../shared/data python bench/cluster.py [--mb 5] [--scales 1 4] [--workers 2] [--dups 400]

Input: kowiki sections (60 %) and NSMC reviews (40 %) of `--mb` MB per scale, plus `--dups` edited copies of
earlier documents (one word changed: near duplicates) at every scale, so the number of duplicates stays fixed
while the corpus grows. Memory: the peak of numpy and Python allocations in the driver process (tracemalloc)
while the stage runs with its shard tasks in Ray's worker processes (a run of its own); the range-partitioned global step holds only the
duplicate edges and the survivors' ids there, so the peak should follow the duplicates, not the corpus. Time:
wall seconds, best of `--repeat`, local pool vs a Ray instance started here with `--workers` CPUs (the Ray
cluster start is not timed). Needs the `ray` extra. Not run in CI.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import random
import sys
import tempfile
import time
import tracemalloc
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.curation import build_sample  # noqa: E402
from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, shard_name, write_docs  # noqa: E402
from corpora.stages.dedup import DedupParams, DedupStage  # noqa: E402
from pipeline.parallel import Executor  # noqa: E402
from pipeline.stage import StageContext, StageInput  # noqa: E402


def with_duplicates(src: Path, out: Path, n_dups: int, seed: int = 0) -> int:
    """The sample's shards plus a last shard of `n_dups` one-word edits of random earlier long documents."""
    rng = random.Random(seed)
    docs = [d for s in list_shards(src) for d in iter_docs(s)]
    long = [d for d in docs if len(d.text) > 400]
    out.mkdir(parents=True)
    for s in list_shards(src):
        (out / s.name).write_bytes(s.read_bytes())
    extra = []
    for i in range(n_dups):
        d = rng.choice(long)
        words = d.text.split(" ")
        words[rng.randrange(len(words))] = "변경"
        extra.append(Doc(doc_id("dups", "bench", i), " ".join(words), "dups", meta_json({})))
    write_docs(out / shard_name(len(list_shards(src))), extra)
    return len(docs) + len(extra)


def run_dedup(inp: Path, out: Path, workers: int, executor: Executor, trace: bool = False
              ) -> tuple[float, float, dict]:
    """(wall seconds, driver's traced peak MB or nan, report). Memory is traced in a run of its own: forked
    pool workers inherit tracemalloc and would run slower, which would bias the time against the local pool."""
    out.mkdir(parents=True)
    ctx = StageContext(out_dir=out, params=DedupParams(), recipe=types.SimpleNamespace(seed=42),
                       inputs={"filter": StageInput("filter", inp, {"meta": {}})}, workers=workers,
                       executor=executor)
    if trace:
        tracemalloc.start()
    t = time.perf_counter()
    res = DedupStage().run(ctx)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 1e6 if trace else float("nan")
    if trace:
        tracemalloc.stop()
    return seconds, peak, res.meta["report"]


def same_bytes(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def ray_vs_local(inp: Path, tmp: Path, workers: int, repeat: int) -> dict:
    """The dedup stage on `inp`'s shards, local pool vs Ray with the same `workers` (best of `repeat`,
    alternating), and whether the two wrote the same bytes. Starts a local Ray instance with `workers` CPUs if
    this process has none (its start is not timed)."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    best: dict[str, tuple[float, float, dict]] = {}
    for r in range(repeat):
        for kind in ("local", "ray"):
            res = run_dedup(inp, tmp / f"{kind}-{r}", workers, Executor(kind))
            if kind not in best or res[0] < best[kind][0]:
                best[kind] = res
    rep = best["local"][2]
    return {"local_s": best["local"][0], "ray_s": best["ray"][0], "ratio": best["ray"][0] / best["local"][0],
            "same_bytes": same_bytes(tmp / "local-0", tmp / "ray-0"),
            "duplicates": rep["exact_duplicates"] + rep["near_duplicates"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--scales", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dups", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    data = Path(os.environ.get("KLUE_DATA_DIR", ROOT.parent / "shared" / "data"))
    import ray

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; ray {ray.__version__} with "
          f"{args.workers} CPUs; local pool with {args.workers} workers; wall seconds, best of {args.repeat}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            sample = build_sample(data, args.mb * scale, Path(tmp) / f"s{scale}")
            inp = Path(tmp) / f"in{scale}"
            n = with_duplicates(Path(tmp) / f"s{scale}" / "shards", inp, args.dups)
            cmp = ray_vs_local(inp, Path(tmp) / f"out{scale}", args.workers, args.repeat)
            _, peak, _ = run_dedup(inp, Path(tmp) / f"out{scale}-mem", args.workers, Executor("ray"), trace=True)
            rows.append((scale, n, sample["bytes"] / 1e6, cmp, peak))
    print(f"\n{'input':>6}{'docs':>9}{'MB':>7}{'duplicates':>12}{'local s':>9}{'ray s':>8}{'ray/local':>11}"
          f"{'driver peak MB':>16}{'same bytes':>12}")
    for scale, n, mb, cmp, peak in rows:
        print(f"{scale:>5}x{n:>9}{mb:>7.1f}{cmp['duplicates']:>12}{cmp['local_s']:>9.2f}{cmp['ray_s']:>8.2f}"
              f"{cmp['ratio']:>11.2f}{peak:>16.1f}{cmp['same_bytes']!s:>12}")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
