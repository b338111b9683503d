"""Issue 50's acceptance, as one command: a SIGTERM sent to `klue run RECIPE --until pretrain` in the middle of
pretraining ends it at the next step boundary with a checkpoint (exit 75), and the rerun's final
model.safetensors has the sha256 of a run never interrupted.

    KLUE_DATA_DIR=../shared/data python pretrain/examples/preemption_check.py recipes/klue-tiny-cpu.yaml \
        --workdir /tmp/klue-preempt [--after-step 1234] [--json OUT]

Two workdirs: `a` runs through pretrain uninterrupted; `b` runs the corpus stages, then pretrain, gets SIGTERM
(sent to the `klue run` process, as a scheduler or Ctrl-C on a terminal would) once its metrics.jsonl has logged
`--after-step`, and is run again. Prints and writes (`--json`) the step the run stopped at, the seconds from the
signal to the exit against the run's seconds per step, and both sha256s. The bits of a CPU run depend on the
thread count (the recipe sets `threads`), not on the load, so the two runs may share the machine with other work
(they run at `nice` 15): only the timings then say less.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

EXIT_PREEMPTED = 75  # pipeline.stage.EXIT_PREEMPTED (not imported: this script runs `klue` as a user would)


def klue(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *args]


def run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, preexec_fn=lambda: os.nice(15))


def pretrain_folder(workdir: Path, partial: bool) -> Path:
    found = [f for f in sorted((workdir / "pretrain").iterdir())
             if f.is_dir() and (f.suffix == ".partial") == partial and f.suffix in (".partial", "")]
    if len(found) != 1:
        raise SystemExit(f"{workdir / 'pretrain'}: expected one {'partial ' if partial else ''}folder, found "
                         f"{[f.name for f in found]}")
    return found[0]


def logged_step(metrics: Path) -> int:
    if not metrics.is_file():
        return 0
    lines = [json.loads(x) for x in metrics.read_text(encoding="utf-8").splitlines() if x.strip()]
    return max((m["step"] for m in lines), default=0)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recipe")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--after-step", type=int, default=1234)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    a, b = args.workdir / "a", args.workdir / "b"

    run(klue("run", args.recipe, "--workdir", str(a), "--until", "pretrain"))
    run(klue("run", args.recipe, "--workdir", str(b), "--until", "encode"))
    cmd = klue("run", args.recipe, "--workdir", str(b), "--until", "pretrain")
    print("+", " ".join(cmd), f"(SIGTERM once step {args.after_step} is logged)", flush=True)
    proc = subprocess.Popen(cmd, preexec_fn=lambda: os.nice(15))
    try:
        while True:
            partial = (b / "pretrain").is_dir() and list((b / "pretrain").glob("*.partial"))
            if partial and logged_step(partial[0] / "metrics.jsonl") >= args.after_step:
                break
            if proc.poll() is not None:
                raise SystemExit(f"klue run ended (exit {proc.returncode}) before step {args.after_step}")
            time.sleep(0.5)
        seen = logged_step(partial[0] / "metrics.jsonl")
        t_signal = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        returncode = proc.wait(timeout=900)
        stop_s = time.monotonic() - t_signal
    finally:
        if proc.poll() is None:
            proc.kill()
    if returncode != EXIT_PREEMPTED:
        raise SystemExit(f"klue run exited {returncode} after SIGTERM, not {EXIT_PREEMPTED}")
    folder = pretrain_folder(b, partial=True)
    note = json.loads((folder / "preempted.json").read_text(encoding="utf-8"))
    summary = json.loads((pretrain_folder(a, partial=False) / "summary.json").read_text())
    # tokens per step / tokens per second: the uninterrupted run's seconds per training step
    s_per_step = (summary["tokens_seen"] / summary["steps"] / summary["tokens_per_s"]
                  if summary.get("tokens_per_s") else None)

    run(cmd)  # the rerun resumes from the checkpoint the signal wrote
    final_a = pretrain_folder(a, partial=False) / "final" / "model.safetensors"
    final_b = pretrain_folder(b, partial=False) / "final" / "model.safetensors"
    out = {"recipe": args.recipe, "signal_after_logged_step": seen, "stopped_at_step": note["step"],
           "checkpoint": note["checkpoint"], "signal_to_exit_s": round(stop_s, 1),
           "s_per_step_uninterrupted": None if s_per_step is None else round(s_per_step, 3),
           "sha256_uninterrupted": sha256(final_a), "sha256_preempted_and_resumed": sha256(final_b),
           "load_average": os.getloadavg()}
    out["same_bytes"] = out["sha256_uninterrupted"] == out["sha256_preempted_and_resumed"]
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0 if out["same_bytes"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
