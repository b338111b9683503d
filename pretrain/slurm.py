"""`launcher: slurm`: the pretrain stage's loop as an sbatch job on an allocation of `stages.pretrain.slurm`.

The stage writes `train_config.json` into its own partial folder as for a local run; this module renders an sbatch
script from the recipe (torchrun on every node, c10d rendezvous: pretrain/examples/slurm_pretrain.sbatch is the
hand-written original), writes it and the job's output into the same folder, submits it and waits. The folder
is the job's whole state, so `klue run` may die while the job runs: a later call finds `slurm_job.json` there and
re-attaches to the job (no second submission), or takes the finished folder when the job is done, after checking
that the job trained this very config (the sha256 of train_config.json, which holds every param of the stage
key and the resolved inputs). A job that stopped early is submitted again and resumes from its newest checkpoint
(pretrain.checkpoint), as a killed local run does: at once when the ranks were preempted (`--signal=USR1@N`
before the time limit, or a scheduler's SIGTERM: pretrain/preempt.py writes preempted.json) or timed out, on the
next `klue run` when it failed.

The bytes are the run's, not the launcher's: the same ranks and threads train the same weights under torchrun
here and under Slurm (tests/test_pretrain_slurm.py), which is why `launcher` and `slurm` are out of the stage key.
The job runs this interpreter (`sys.executable`) in this working directory with this environment (`--export=ALL`):
the cluster's nodes must see the same paths, as on any shared file system.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline import io
from pretrain.checkpoint import find_checkpoint
from pretrain.config import STATE_FILE, PretrainParams, SlurmParams, TrainConfig
from pretrain.preempt import PREEMPTED_FILE

JOB_FILE = "slurm_job.json"  # the job this folder's run is in: id, script digest, config digest, submission time
SCRIPT_FILE = "slurm_job.sbatch"
LOG_PATTERN = "slurm-%j.out"  # in the partial folder, one per job
SIGNALS = "SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1"  # torchrun relays these to its ranks (pretrain/preempt.py)
SHUTDOWN_TIMEOUT_S = 600  # torchrun's wait for the ranks' preemption checkpoint (pretrain.stages.pretrain)
ACTIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
                    "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"})
# stopped from outside the loop, which checkpointed on the way out when it had the time: submitted again
RESUBMIT = frozenset({"PREEMPTED", "TIMEOUT", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"})


class SlurmError(RuntimeError):
    """A Slurm job of the pretrain stage that did not train: the message names the job and its output file."""


@dataclass(frozen=True)
class JobState:
    """What Slurm says of a job: its state (RUNNING, COMPLETED, ...; UNKNOWN when it no longer knows the job),
    the exit code as `code:signal`, and the reason it waits or failed."""

    state: str
    exit_code: str = ""
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


def render_script(cfg: TrainConfig, cfg_path: Path, slurm: SlurmParams, *, python: str | None = None,
                  chdir: Path | None = None) -> str:
    """The sbatch script of a run: one task per node, each running torchrun with the node's ranks, rendezvous
    through c10d on the first node (a port from the job id, so jobs sharing a node do not collide); the output
    into the run folder; `--signal=USR1@signal_s` so the ranks checkpoint before the time limit. On CPU (no GPUs)
    the ranks use gloo, DeepSpeed its CPU accelerator, and each torch its `threads` (OMP_NUM_THREADS)."""
    per_node = cfg.num_processes // slurm.nodes
    threads = cfg.threads or 1
    cpus = slurm.cpus_per_task or (None if slurm.gpus_per_node else per_node * threads)
    run_dir = cfg_path.parent
    sbatch = [f"--job-name={slurm.job_name}", f"--nodes={slurm.nodes}", "--ntasks-per-node=1"]
    if cpus:
        sbatch.append(f"--cpus-per-task={cpus}")
    if slurm.gpus_per_node:
        sbatch.append(f"--gpus-per-node={slurm.gpus_per_node}")
    sbatch += [f"--{k}={v}" for k, v in (("partition", slurm.partition), ("account", slurm.account),
                                          ("time", slurm.time)) if v]
    if slurm.signal_s:
        sbatch.append(f"--signal=USR1@{slurm.signal_s}")
    # --no-requeue: the stage resubmits a preempted job itself; a job Slurm requeued too would be a second one
    # training in the same folder
    sbatch += [f"--output={run_dir / LOG_PATTERN}", f"--chdir={chdir or Path.cwd()}", "--export=ALL",
               "--no-requeue", *slurm.extra_args]
    env = {"KLUE_PYTHON": python or sys.executable, "KLUE_TRAIN_CONFIG": str(cfg_path),
           "KLUE_PROCS_PER_NODE": str(per_node), "TOKENIZERS_PARALLELISM": "false"}
    if cfg.threads or not slurm.gpus_per_node:  # torchrun's default is 1 thread per rank
        env["OMP_NUM_THREADS"] = str(threads)
    if cfg.deepspeed is not None and not slurm.gpus_per_node:
        env["DS_ACCELERATOR"] = "cpu"
    lines = [
        "#!/bin/bash",
        f"# Rendered by pretrain/slurm.py for {run_dir.name}: {cfg.num_processes} ranks ({slurm.nodes} "
        f"node{'s' if slurm.nodes > 1 else ''} x {per_node}), batch {cfg.batch_size} x grad_accum {cfg.grad_accum}.",
        "# Submitted again, it resumes from the run folder's newest checkpoint.",
        *(f"#SBATCH {a}" for a in sbatch),
        "set -euo pipefail",
        *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
        # sed, not head: head exits after one line and scontrol then dies of SIGPIPE (pipefail: a failed job)
        'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)',
        "MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))",
        "export MASTER_ADDR MASTER_PORT",
        # Slurm 22.05 and later do not pass the job's --cpus-per-task on to srun: the ranks would share one core
        'export SRUN_CPUS_PER_TASK="${SLURM_CPUS_PER_TASK:-1}"',
        # single quotes: each node's task expands its own $SLURM_NODEID
        "srun --kill-on-bad-exit=1 bash -c 'exec \"$KLUE_PYTHON\" -m torch.distributed.run "
        "--nnodes \"$SLURM_NNODES\" --nproc_per_node \"$KLUE_PROCS_PER_NODE\" --node_rank \"$SLURM_NODEID\" "
        "--rdzv_backend c10d --rdzv_endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv_id \"$SLURM_JOB_ID\" "
        f"--signals-to-handle {SIGNALS} --shutdown-timeout {SHUTDOWN_TIMEOUT_S} "
        "-m pretrain.train \"$KLUE_TRAIN_CONFIG\"'",
        "",
    ]
    return "\n".join(lines)


def describe_allocation(p: PretrainParams) -> str:
    """The dry run's line on `launcher: slurm`: the allocation and what the job's script is made of."""
    slurm = p.slurm or SlurmParams()
    per_node = slurm.ranks_per_node(p.num_processes)
    asks = [f"{k} {v}" for k, v in (("partition", slurm.partition), ("account", slurm.account),
                                    ("time", slurm.time)) if v]
    gpus = f", {slurm.gpus_per_node} GPUs each" if slurm.gpus_per_node else " (CPU)"
    return (f"slurm: {slurm.nodes} node{'s' if slurm.nodes > 1 else ''} x {per_node} rank"
            f"{'s' if per_node > 1 else ''}{gpus}{'; ' + ', '.join(asks) if asks else ''}; an sbatch job "
            f"({SCRIPT_FILE} in the stage folder), waited for; a rerun re-attaches to it")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _slurm(*cmd: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise SlurmError(f"`{cmd[0]}` is not installed: launcher: slurm needs the Slurm client commands "
                         "(Debian: apt-get install slurm-client) on the machine that runs `klue run`") from None


def submit(run_dir: Path, script: str, *, step: int) -> dict[str, Any]:
    """Write the script into the run folder, `sbatch --parsable` it, and record the job in `slurm_job.json`
    (atomically, so a kill leaves the previous record or this one). `step`: the newest checkpoint's, to tell a
    resubmission that made progress from one that did not."""
    path = run_dir / SCRIPT_FILE
    io.remove_temps(run_dir)  # what a killed job left half-written; safe only now, with no job of ours running
    io.write_text(path, script)
    (run_dir / PREEMPTED_FILE).unlink(missing_ok=True)  # the marker of this job's preemption, not an older one
    r = _slurm("sbatch", "--parsable", str(path))
    if r.returncode != 0:
        raise SlurmError(f"sbatch {path} failed (exit {r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
    job_id = r.stdout.strip().split(";")[0]  # --parsable: "id" or "id;cluster"
    old = read_job(run_dir)
    record = {"job_id": job_id, "script_sha256": _sha256(script.encode()),
              "config_sha256": _sha256((run_dir / "train_config.json").read_bytes()),
              "submitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "step_at_submit": step,
              "output": str(run_dir / LOG_PATTERN.replace("%j", job_id)),
              "earlier_jobs": [*(old.get("earlier_jobs") or []), old["job_id"]] if old else []}
    io.write_json(run_dir / JOB_FILE, record, indent=1, sort_keys=False)
    print(f"pretrain: submitted Slurm job {job_id} ({path}); output in {record['output']}", flush=True)
    return record


def read_job(run_dir: Path) -> dict[str, Any] | None:
    """The folder's `slurm_job.json`, or None."""
    path = run_dir / JOB_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def job_state(job_id: str) -> JobState:
    """The job's state from `scontrol show job` (slurmctld's memory: pending, running and recently finished
    jobs), else `sacct` (the accounting database, where there is one); UNKNOWN when neither knows it."""
    r = _slurm("scontrol", "show", "job", "--oneliner", job_id)
    if r.returncode == 0 and "JobState=" in r.stdout:
        fields = dict(w.split("=", 1) for w in r.stdout.split() if "=" in w)
        return JobState(fields["JobState"], fields.get("ExitCode", ""), fields.get("Reason", ""))
    r = _slurm("sacct", "--noheader", "--allocations", "--parsable2", "--jobs", job_id,
               "--format=State,ExitCode,Reason")
    if r.returncode == 0 and r.stdout.strip():
        state, code, reason = (r.stdout.strip().splitlines()[0].split("|") + ["", ""])[:3]
        return JobState(state.split()[0], code, reason)  # "CANCELLED by 0" -> CANCELLED
    return JobState("UNKNOWN")


def _newest_step(run_dir: Path) -> int:
    ckpt = find_checkpoint(run_dir)
    return int(json.loads((ckpt / STATE_FILE).read_text())["step"]) if ckpt is not None else 0


def _tail(path: Path, n: int = 20) -> str:
    if not path.is_file():
        return f"(no output file {path})"
    lines = path.read_text(errors="replace").splitlines()[-n:]
    return "\n".join(f"  | {line}" for line in lines)


def run_on_slurm(cfg: TrainConfig, cfg_path: Path, slurm: SlurmParams,
                 progress: Callable[[], str | None] | None = None) -> dict[str, Any]:
    """Train `cfg` (written at `cfg_path`, in the run folder) as a Slurm job and return its summary.json.

    A job recorded in the folder is re-attached to while Slurm says it is pending or running, and taken when it
    has finished with summary.json written; it must have been submitted for this train_config.json (same
    sha256), else this refuses, naming the job. Anything else submits a new job. While waiting, prints the job's
    state and `progress()` (the loop's logged step) when they change. Raises SlurmError when the job fails,
    naming it and its output file (the next call submits again, resuming from the checkpoint); a job preempted
    or timed out is resubmitted at once, up to `max_resubmits` times in a row without a newer checkpoint."""
    run_dir = cfg_path.parent
    config_sha = _sha256(cfg_path.read_bytes())
    script = render_script(cfg, cfg_path, slurm)
    summary_path = run_dir / "summary.json"
    job = read_job(run_dir)
    if job is not None:
        state = job_state(job["job_id"])
        if job.get("config_sha256") != config_sha and (state.active or summary_path.is_file()):
            raise SlurmError(f"Slurm job {job['job_id']} in {run_dir} ({state.state}) was submitted for another "
                             f"train_config.json (sha256 {job.get('config_sha256')}, this one {config_sha}); "
                             f"scancel {job['job_id']} if it is not wanted, and remove {run_dir / JOB_FILE}")
        if state.active:
            print(f"pretrain: re-attaching to Slurm job {job['job_id']} ({state.state}); its output: "
                  f"{job['output']}", flush=True)
        elif summary_path.is_file() and state.state in ("COMPLETED", "UNKNOWN"):
            print(f"pretrain: Slurm job {job['job_id']} finished ({state.state}); adopting {run_dir.name}",
                  flush=True)
            return dict(json.loads(summary_path.read_text()))
        else:
            job = None  # failed, cancelled or stopped early: a new job resumes from the newest checkpoint
    if job is None:
        summary_path.unlink(missing_ok=True)  # only the new job's own summary says it finished
        job = submit(run_dir, script, step=_newest_step(run_dir))
    stalled = 0
    while True:
        state = _wait(job, slurm.poll_s, progress)
        log = Path(job["output"])
        if state.state == "COMPLETED" or (state.state == "UNKNOWN" and summary_path.is_file()):
            if not summary_path.is_file():
                raise SlurmError(f"Slurm job {job['job_id']} completed without writing {summary_path}; its "
                                 f"output {log}:\n{_tail(log)}")
            return dict(json.loads(summary_path.read_text()))

        if state.state in RESUBMIT or (run_dir / PREEMPTED_FILE).is_file():
            step = _newest_step(run_dir)
            stalled = stalled + 1 if step <= int(job.get("step_at_submit") or 0) else 0
            if stalled <= slurm.max_resubmits:
                print(f"pretrain: Slurm job {job['job_id']} stopped ({state.state}) at checkpoint step {step}; "
                      "submitting again", flush=True)
                job = submit(run_dir, script, step=step)
                continue
        raise SlurmError(f"Slurm job {job['job_id']} ended {state.state} (exit {state.exit_code or '?'}"
                         f"{', ' + state.reason if state.reason and state.reason != 'None' else ''}); "
                         f"its output {log}:\n{_tail(log)}\nrerun to submit it again from the newest checkpoint")


def _wait(job: dict[str, Any], poll_s: float, progress: Callable[[], str | None] | None) -> JobState:
    """Poll the job until Slurm no longer says it is active; print its state and progress when they change.
    Interrupted (Ctrl-C, `klue run` killed), the job runs on: the message says how to re-attach or stop it."""
    last = ""
    try:
        while True:
            state = job_state(job["job_id"])
            if not state.active:
                return state
            line = f"Slurm job {job['job_id']} {state.state}"
            if state.state == "PENDING" and state.reason not in ("", "None"):
                line += f" ({state.reason})"
            elif progress is not None:
                line += f": {progress() or 'starting'}"
            if line != last:
                print(f"pretrain: {line}", flush=True)
                last = line
            time.sleep(poll_s)
    except KeyboardInterrupt:
        print(f"pretrain: left Slurm job {job['job_id']} running: rerun `klue run` to re-attach to it, or "
              f"scancel {job['job_id']}", file=sys.stderr, flush=True)
        raise


def refuse_active_job(run_dir: Path) -> None:
    """Before a local run in `run_dir`: raise SlurmError while a Slurm job recorded there is pending or running
    (a recipe switched back to `launcher: local` would otherwise train a second time in the same folder)."""
    job = read_job(run_dir)
    if job is None:
        return
    try:
        state = job_state(job["job_id"])
    except SlurmError:  # no Slurm commands here: the job cannot be asked about, nor be this machine's
        return
    if state.active:
        raise SlurmError(f"Slurm job {job['job_id']} is still training in {run_dir} ({state.state}): rerun with "
                         f"launcher: slurm to wait for it, or scancel {job['job_id']} first")


def status_line(run_dir: Path) -> str | None:
    """For `klue status`: the folder's Slurm job and its state ("Slurm job 12 RUNNING"), None without one.
    Where Slurm's commands are not on this machine, the recorded job id alone."""
    job = read_job(run_dir)
    if job is None:
        return None
    try:
        state = job_state(job["job_id"]).state
    except (SlurmError, subprocess.TimeoutExpired):
        state = "state unknown here"
    return f"Slurm job {job['job_id']} {state}"

