"""What a corpus of G GB costs on a given machine, projected from `bench/scale.py`'s measurements (issue 49, item
5): per stage, CPU hours, wall hours on one node and on a Ray cluster, peak memory per worker and disk.

    python bench/projection.py /tmp/scale-0.5.json --gb 63 1000 [--node 64] [--cluster 16x32]
        [--text REAL.json SCALE.json]

The model, and what in it is measured and what is assumed:
- **Work per stage** (measured): each stage's MB of input per CPU second at the largest size in the JSON, and its
  input's share of the corpus (what the funnel before it left: `input_mb` / collect's `input_mb`). CPU hours at
  G GB = G x share / rate. Assumed: the rate holds at G (it held within 15 % from 0.1 to 0.5 GB for every stage
  whose run was not start-up bound: docs/scaling.md), and the funnel's shares are the scale corpus's (a real
  crawl loses more to the filters: a smaller share downstream).
- **Wall hours** (assumed): CPU hours / cores for every sharded stage (2 workers halved the wall time of each at
  0.1 GB; more shards than cores at these sizes), except `vocab`, which trains in one process: its CPU hours are
  its wall hours on any machine. No Ray overhead is added: it has not been measured at scale yet.
- **Memory per worker** (measured): each stage's peak RSS of the whole process tree with one worker, flat from
  0.1 to 0.5 GB for every stage (within 1.08x), so a worker needs it at any size; a node needs it times its
  workers. Not flat for `vocab` beyond what was measured: its word counts grow with the distinct pre-tokens.
- **Disk** (measured ratio): each stage folder's size over the corpus size, times G. `klue gc` frees only what
  the last run does not use (older keys, killed runs' leftovers), so the run itself needs the sum.
- **Which text** (`--text REAL.json SCALE.json`, measured): the scale corpus is easier per MB than real text: its
  documents are ~5x longer than the shared corpus's (each stage pays a cost per document) and its vocabulary is
  the shared corpus's (caches keyed by word hit more often than on text that keeps bringing new words). Two
  `bench/stage_floors.py --json` records of one window, one on a workdir of real text (the shared corpus:
  `recipes/klue-tiny-cpu.yaml`) and one on the scale corpus of about its size (`--gb 0.05`, so that each stage's
  fixed cost weighs alike), give each stage's real-over-scale rate, and each
  measured stage's rate is multiplied by it; the stages not in both keep the scale corpus's rate and are marked
  `*` (docs/scaling.md, "The scale corpus against real text").
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

SERIAL = {"vocab", "vocab*"}  # trains in one process whatever the workers (`*`: see `on_text`)


@dataclass(frozen=True)
class StageCost:
    stage: str
    share: float  # the stage's input over the corpus (collect's input)
    mb_per_cpu_s: float
    peak_rss_mb: float
    disk_ratio: float  # the stage folder's size over the corpus size

    def cpu_hours(self, gb: float) -> float:
        return gb * 1000 * self.share / self.mb_per_cpu_s / 3600

    def wall_hours(self, gb: float, cores: int) -> float:
        return self.cpu_hours(gb) / (1 if self.stage in SERIAL else cores)


def stage_costs(bench: dict) -> list[StageCost]:
    """One `StageCost` per stage from a `bench/scale.py --json` record: the largest size's one-worker row."""
    rows = {stage: max((r for r in runs if r["workers"] == 1), key=lambda r: r["gb"])
            for stage, runs in bench["stages"].items()}
    corpus = rows["collect"]["input_mb"]
    return [StageCost(stage, r["input_mb"] / corpus, r["mb_per_cpu_s"], r["peak_rss_mb"], r["disk_mb"] / corpus)
            for stage, r in rows.items()]


def text_ratios(real: dict, scale: dict) -> dict[str, float]:
    """Per stage in both `bench/stage_floors.py --json` records: the whole stage's MB per CPU second on real text
    over the same on the scale corpus."""
    both = sorted(set(real["stages"]) & set(scale["stages"]))
    return {s: real["stages"][s]["stage_mb_per_cpu_s"] / scale["stages"][s]["stage_mb_per_cpu_s"] for s in both}


def on_text(costs: list[StageCost], ratios: dict[str, float]) -> list[StageCost]:
    """`costs` with each stage's rate scaled by its ratio; a stage without one is renamed `stage*` (kept as is)."""
    return [replace(c, mb_per_cpu_s=c.mb_per_cpu_s * ratios[c.stage]) if c.stage in ratios
            else replace(c, stage=c.stage + "*") for c in costs]


def project(costs: list[StageCost], gb: float, machines: dict[str, int]) -> list[dict]:
    """Per stage and in all: CPU hours, wall hours on each machine (name -> cores), peak RSS per worker, disk."""
    rows = [{"stage": c.stage, "cpu_h": c.cpu_hours(gb), **{m: c.wall_hours(gb, n) for m, n in machines.items()},
             "rss_mb": c.peak_rss_mb, "disk_gb": gb * c.disk_ratio} for c in costs]
    total = {"stage": "all", "cpu_h": sum(r["cpu_h"] for r in rows), **{m: sum(r[m] for r in rows) for m in machines},
             "rss_mb": max(r["rss_mb"] for r in rows), "disk_gb": sum(r["disk_gb"] for r in rows)}
    return [*rows, total]


def markdown(table: list[dict], gb: float, machines: dict[str, int]) -> str:
    head = ["stage", "CPU hours", *(f"wall hours, {m}" for m in machines), "peak RSS per worker (MB)",
            "disk (GB)"]
    lines = [f"**{gb:g} GB**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        cells = [r["stage"], f"{r['cpu_h']:,.1f}", *(f"{r[m]:,.2f}" for m in machines), f"{r['rss_mb']:,.0f}",
                 f"{r['disk_gb']:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", type=Path, help="a `bench/scale.py --json` file")
    ap.add_argument("--gb", type=float, nargs="+", default=[63.0, 1000.0])
    ap.add_argument("--node", type=int, default=64, help="cores of one node")
    ap.add_argument("--cluster", default="16x32", help="NODESxCORES of a Ray cluster")
    ap.add_argument("--text", type=Path, nargs=2, metavar=("REAL", "SCALE"),
                    help="bench/stage_floors.py --json records of real text and of the scale corpus, one window")
    args = ap.parse_args(argv)
    nodes, per = (int(x) for x in args.cluster.split("x"))
    machines = {f"1 x {args.node} cores": args.node, f"{nodes} x {per} cores": nodes * per}
    bench = json.loads(args.bench.read_text(encoding="utf-8"))
    costs = stage_costs(bench)
    print(f"from {args.bench}: {bench.get('cpu')}, {bench.get('cores')} cores, load {bench.get('load_start')}",
          file=sys.stderr)
    if args.text:
        real, scale = (json.loads(p.read_text(encoding="utf-8")) for p in args.text)
        ratios = text_ratios(real, scale)
        costs = on_text(costs, ratios)
        print("rates as on real text, real over scale: " + ", ".join(f"{s} {r:.2f}" for s, r in ratios.items())
              + "; * the scale corpus's rate", file=sys.stderr)
    for gb in args.gb:
        print(markdown(project(costs, gb, machines), gb, machines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
