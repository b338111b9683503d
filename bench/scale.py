"""Every corpus stage at several sizes: MB of input per CPU second, wall seconds, peak memory, disk, and the funnel
checked against what the scale corpus planted.

    KLUE_DATA_DIR=../shared/data python bench/scale.py --gb 0.1 0.5 1 [--workers 1 2] [--ray] [--json OUT]
        [--cache DIR] [--until encode] [--no-real]

Input: `python -m datagen.scale --gb N` (new Korean documents drawn from the shared corpus's sources, with
planted exact and near duplicates, PII of every type and junk; cached under `--cache`). Each stage runs in a
`klue run RECIPE --until STAGE` process of its own (the stages before it are done and skipped), so what the
process and its workers use is the stage's:
- CPU seconds: the rusage of the finished `klue run` and every worker it waited for, less the CPU of a run that
  skips every stage (start-up, imports, the input digests), measured once per workdir;
- peak RSS: the largest sum of the RSS of `klue run` and its descendants (driver and pool workers), sampled
  every 0.1 s with psutil (a Ray run's workers are not descendants: its RSS is the driver's);
- wall seconds: the stage's own `timings.seconds` in its manifest;
- MB of input: the stage's `chars_in` in UTF-8 bytes (the corpus's bytes per character; the collect stage: its
  documents' text; vocab and encode: the pii stage's output);
- disk: the bytes of the stage's folder.
Then the funnel against the manifest of the scale corpus: every planted junk document gone after `filter`; dedup's
exact and near duplicates against the planted copies that passed the filters; every planted PII type found in
its document by `pii_detect`. Each chain also records the machine's busy cores beyond its own (`foreign_cores`,
from the kernel's CPU times against the runs' rusage) and warns when other work shared the cores. With `--ray`,
the largest size again on the Ray executor (a local instance with `--workers` CPUs): the same bytes as the local
pool, stage by stage, and its wall time over the pool's (`ratio_measured_alone` false where either half shared
the cores).

Then, unless `--no-real`, the same chain over real text in the same window: the shared corpus through
`recipes/klue-tiny-cpu.yaml`, one worker (`results["real"]`, each stage's rate over that of the scale size nearest
its ~48 MB: include `--gb 0.05` for a comparison at equal size). The
scale corpus is easier per MB than real text (5x longer documents, a vocabulary that stops growing:
docs/scaling.md, "The scale corpus against real text"), so its rates alone flatter the stages that pay per
document or per new word.

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
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from corpora.shards import list_shards  # noqa: E402
from datagen.scale import check_funnel, generate  # noqa: E402
from datagen.scale import stage_folder as folder  # noqa: E402
from datagen.scale import stage_manifest as manifest  # noqa: E402

# Average cores of other work during a chain above which its numbers are flagged: the bench's own bookkeeping (the
# RSS sampler, the parent) stays well under it.
FOREIGN_WARN = 0.15

STAGES = ("collect", "filter", "dedup", "decontaminate", "pii_detect", "pii", "pretokenize", "vocab", "encode")


def klue(recipe: Path, wd: Path, until: str, workers: int, executor: str = "local") -> dict[str, float]:
    """One `klue run --until` in a subprocess: its CPU seconds (with its waited-for workers) and the peak of the
    summed RSS of its process tree."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy_before = busy_cpu_s()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", str(recipe), "--workdir", str(wd),
                             "--until", until, "--workers", str(workers), "--executor", executor], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        p = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                rss = sum(q.memory_info().rss for q in [p, *p.children(recursive=True)])
                peak[0] = max(peak[0], rss / 2**20)
            except psutil.Error:
                pass
            time.sleep(0.1)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, _ = proc.communicate()
    done.set()
    th.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"klue run --until {until} failed:\n{out[-4000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = time.perf_counter() - t0
    return {"cpu_s": cpu, "peak_rss_mb": peak[0], "wall_total_s": wall,
            "busy_cores": (busy_cpu_s() - busy_before) / max(wall, 1e-3)}


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy (every process, the kernel's work included), from boot."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def foreign_cores(rows: dict[str, dict[str, Any]], executor: str) -> float:
    """The machine's busy cores beyond what the measured runs used, averaged over them: other jobs on the cores,
    which make every rate and wall time here low (time alone). A Ray run's workers are not the driver's
    descendants, so their CPU cannot be told apart from another job's: there the excess over `workers` busy cores
    is what is left."""
    wall = sum(r["wall_total_s"] for r in rows.values())
    busy = sum(r["busy_cores"] * r["wall_total_s"] for r in rows.values())
    if executor == "ray":
        workers = next(iter(rows.values()))["workers"]
        return max(0.0, busy / wall - workers)
    return max(0.0, (busy - sum(r["cpu_s"] for r in rows.values())) / wall)


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def input_mb(wd: Path, stage: str, corpus: dict[str, Any]) -> float:
    """MB of UTF-8 the stage read: collect the documents' text (the scale corpus's manifest `bytes`; for a corpus
    without one, the shared corpus, counted in collect's output), the others their chars_in at the corpus's bytes
    per character (vocab and encode read the pii stage's output)."""
    chars = manifest(wd, "collect")["funnel"]["chars_in"]
    total = corpus.get("bytes") or collected_bytes(wd)
    per_char = total / max(chars, 1)
    if stage == "collect":
        return total / 1e6
    src = "pii" if stage in ("pretokenize", "vocab", "encode") else stage
    f = manifest(wd, src)["funnel"]
    n = f["chars_kept"] if src != stage else f["chars_in"]
    return n * per_char / 1e6


def collected_bytes(wd: Path) -> int:
    """UTF-8 bytes of the text of every document the collect stage wrote."""
    return sum(pc.sum(pc.binary_length(pq.read_table(p, columns=["text"]).column("text"))).as_py() or 0
               for p in list_shards(folder(wd, "collect")))


def run_chain(recipe: Path, wd: Path, workers: int, corpus: dict[str, Any], until: str,
              executor: str = "local") -> dict[str, dict[str, float]]:
    stages = STAGES[:STAGES.index(until) + 1]
    raw = {s: klue(recipe, wd, s, workers, executor) for s in stages}
    for s in stages:
        raw[s]["workers"] = workers
    foreign = foreign_cores(raw, executor)
    if foreign > FOREIGN_WARN:
        print(f"WARNING: {foreign:.2f} cores on average were busy with something else during these runs "
              f"({executor}, {workers} workers): their rates and wall times are not a measurement alone", flush=True)
    idle = min(klue(recipe, wd, until, workers, executor)["cpu_s"] for _ in range(2))  # every stage skipped
    out = {}
    for s in stages:
        m = manifest(wd, s)
        cpu = max(raw[s]["cpu_s"] - idle, 1e-3)
        mb = input_mb(wd, s, corpus)
        out[s] = {"gb": corpus["gb"], "workers": workers, "executor": executor, "input_mb": round(mb, 2),
                  "cpu_s": round(cpu, 2), "mb_per_cpu_s": round(mb / cpu, 3),
                  "wall_s": round(m["timings"]["seconds"], 2), "peak_rss_mb": round(raw[s]["peak_rss_mb"], 1),
                  "disk_mb": round(disk_mb(folder(wd, s)), 2), "startup_cpu_s": round(idle, 2),
                  "busy_cores": round(raw[s]["busy_cores"], 2), "foreign_cores": round(foreign, 2)}
    return out


def digests(wd: Path, stages: tuple[str, ...]) -> dict[str, dict[str, str]]:
    out = {}
    for s in stages:
        f = folder(wd, s)
        out[s] = {p.relative_to(f).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                  for p in sorted(f.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, nargs="+", default=[0.1, 0.5, 1.0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--until", default="encode", choices=STAGES)
    ap.add_argument("--ray", action="store_true", help="also the largest size on the Ray executor")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/klue-scale"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the workdirs")
    ap.add_argument("--no-real", dest="real", action="store_false",
                    help="skip the same chain over the shared corpus (real text) in the same window")
    args = ap.parse_args()
    data = Path(os.environ.get("KLUE_DATA_DIR", ROOT.parent / "shared" / "data"))
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "unknown CPU")
    print(f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    results: dict[str, Any] = {"cpu": cpu, "cores": os.cpu_count(), "load_start": os.getloadavg()[0], "stages": {},
                               "funnel": {}, "corpus": {}}
    for gb in args.gb:
        out = args.cache / f"scale-{gb:g}"
        if not (out / "manifest.json").is_file():
            t0 = time.perf_counter()
            generate(out, gb, data)
            print(f"generated {out} in {time.perf_counter() - t0:.0f} s")
        corpus = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        results["corpus"][f"{gb:g}"] = {"docs": corpus["docs"], "bytes": corpus["bytes"]}
        runs = [("local", w) for w in args.workers] + ([("ray", max(args.workers))] if args.ray and gb == max(args.gb)
                                                        else [])
        for executor, workers in runs:
            wd = args.cache / f"wd-{gb:g}-{workers}-{executor}"
            shutil.rmtree(wd, ignore_errors=True)
            rows = run_chain(out / "recipe.yaml", wd, workers, corpus, args.until, executor)
            for s, r in rows.items():
                results["stages"].setdefault(s, []).append(r)
                print(f"{s:14s} {gb:5g} GB  workers {workers} {executor:5s}  {r['mb_per_cpu_s']:7.2f} MB/CPU-s  "
                      f"wall {r['wall_s']:8.1f} s  peak {r['peak_rss_mb']:7.0f} MB  disk {r['disk_mb']:8.1f} MB",
                      flush=True)
            results["funnel"][f"{gb:g}-{workers}-{executor}"] = check_funnel(wd, corpus)
            print("funnel:", json.dumps(results["funnel"][f"{gb:g}-{workers}-{executor}"]), flush=True)
            if executor == "ray":
                local = args.cache / f"wd-{gb:g}-{workers}-local"
                same = digests(local, tuple(rows)) == digests(wd, tuple(rows))
                ratio = {s: round(rows[s]["wall_s"] / max(results_row(results, s, gb, workers)["wall_s"], 1e-3), 2)
                         for s in rows}
                foreign = {"local": results_row(results, until_stage(rows), gb, workers)["foreign_cores"],
                           "ray": rows[until_stage(rows)]["foreign_cores"]}
                results["ray"] = {"gb": gb, "workers": workers, "same_bytes": same, "wall_over_local": ratio,
                                  "foreign_cores": foreign,
                                  "ratio_measured_alone": max(foreign.values()) <= FOREIGN_WARN}
                print("ray:", json.dumps(results["ray"]), flush=True)
    if args.real:
        wd = args.cache / "wd-real-1-local"
        shutil.rmtree(wd, ignore_errors=True)
        results["real"] = run_chain(ROOT / "recipes" / "klue-tiny-cpu.yaml", wd, 1, {"gb": "real"}, args.until)
        # the size nearest the shared corpus's (~48 MB): each stage's fixed cost weighs alike on both sides
        near = min(args.gb, key=lambda g: abs(g * 1000 - results["real"]["collect"]["input_mb"]))
        print(f"\nreal text (the shared corpus, recipes/klue-tiny-cpu.yaml, workers 1) over the {near:g} GB scale "
              "corpus, MB/CPU-s:")
        for s, r in results["real"].items():
            scale = next((x for x in results["stages"].get(s, []) if x["gb"] == near and x["workers"] == 1
                          and x["executor"] == "local"), None)
            r["over_scale"] = round(r["mb_per_cpu_s"] / scale["mb_per_cpu_s"], 3) if scale else None
            print(f"{s:14s} {r['mb_per_cpu_s']:7.2f} MB/CPU-s  "
                  + (f"x{r['over_scale']:.2f}" if scale else "(no one-worker scale row)")
                  + f"  peak {r['peak_rss_mb']:7.0f} MB", flush=True)
    results["load_end"] = os.getloadavg()[0]
    _print_acceptance(results, args.gb)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if not args.keep:
        for wd in args.cache.glob("wd-*"):
            shutil.rmtree(wd, ignore_errors=True)


def until_stage(rows: dict[str, Any]) -> str:
    return next(reversed(rows))


def results_row(results: dict[str, Any], stage: str, gb: float, workers: int) -> dict[str, Any]:
    return next(r for r in results["stages"][stage] if r["gb"] == gb and r["workers"] == workers
                and r["executor"] == "local")


def _print_acceptance(results: dict[str, Any], sizes: list[float]) -> None:
    """Per stage, one worker: peak RSS and MB/CPU-s at the largest size over the smallest (issue 49's bounds:
    RSS within 1.25x, rate within 15 %), and the marginal rate between consecutive sizes: the extra MB over the
    extra CPU seconds, in which a stage's fixed cost (its workers' start-up: the PII analyzer's load, MeCab's
    dictionary) cancels, so that it says whether the cost of a MB grows with the corpus. Stored under
    `results["acceptance"]`."""
    lo, hi = min(sizes), max(sizes)
    if lo == hi:
        return
    ordered = sorted(set(sizes))
    print(f"\nper stage, workers 1: largest ({hi:g} GB) over smallest ({lo:g} GB); marginal MB/CPU-s between sizes")
    acc: dict[str, Any] = {}
    for s in results["stages"]:
        try:
            rows = [results_row(results, s, gb, 1) for gb in ordered]
        except StopIteration:
            continue
        a, b = rows[0], rows[-1]
        marginal = {f"{x['gb']:g}-{y['gb']:g}":
                    round((y["input_mb"] - x["input_mb"]) / max(y["cpu_s"] - x["cpu_s"], 1e-3), 3)
                    for x, y in pairwise(rows)}
        acc[s] = {"rss_ratio": round(b["peak_rss_mb"] / a["peak_rss_mb"], 3),
                  "rate_ratio": round(b["mb_per_cpu_s"] / a["mb_per_cpu_s"], 3), "marginal_mb_per_cpu_s": marginal}
        print(f"{s:14s} peak RSS x{acc[s]['rss_ratio']:.2f}   MB/CPU-s x{acc[s]['rate_ratio']:.2f}   marginal "
              + "  ".join(f"{k} GB: {v:.2f}" for k, v in acc[s]["marginal_mb_per_cpu_s"].items()))
    results["acceptance"] = acc

if __name__ == "__main__":
    main()
