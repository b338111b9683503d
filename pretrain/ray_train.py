"""`launcher: ray`: the pretrain stage's loop as Ray Train workers on the cluster the corpus stages ran on.

Ray Train's `TorchTrainer` places `workers` actors (one rank each: a CPU slot, or a GPU where `gpus_per_worker`
is 1), sets torchrun's rank environment in each (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ...) and opens the
process group (gloo on CPU, nccl on GPU) before the train function starts. The train function is the loop itself,
`pretrain.train.train`: accelerate finds the open group and DeepSpeed joins it, as under torchrun. Nothing of the
loop knows it runs under Ray, which is why a run's bytes are the same under either launcher
(tests/test_pretrain_ray.py: 2 gloo workers on a 2-node cluster against 2 torchrun ranks, byte for byte) and why
`launcher` and `ray` are out of the stage key.

Where things are written: the loop writes its checkpoints, metrics and final weights in the stage folder, as
always, so every node must see the workdir at the same path (a shared filesystem: the same requirement as the
corpus stages' shard folders, docs/scaling.md). A worker that cannot see the run's train_config.json stops with
an error naming its node. Ray Train's own run state goes to `ray_train/` in the stage folder and is deleted when
the run ends.

Failures: a worker or node lost mid-run (a spot node reclaimed, an OOM kill) makes Ray Train restart the whole
worker group, up to `max_failures` times; the restarted loop resumes from the newest verified checkpoint in the
stage folder (pretrain/checkpoint.py), losing the steps since. SIGTERM/SIGUSR1 preemption (pretrain/preempt.py)
does not apply: Ray Train runs the train function outside its process's main thread, where Python cannot catch
signals, so Ray's restart is the recovery. A run that fails past `max_failures` raises; the next `klue run`
starts the workers again and resumes the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.parallel import Executor, check_environment, environment, ray_connect
from pretrain.config import RayTrainParams, TrainConfig
from pretrain.train import train

RAY_STATE_DIR = "ray_train"  # Ray Train's run state in the stage folder, deleted when the run ends
STARTS_FILE = "starts.jsonl"  # in RAY_STATE_DIR: a line per start of the worker group (a restart after a loss)


class RayTrainError(RuntimeError):
    """The cluster cannot run the workers asked for, or the run failed past `max_failures`."""


def describe_workers(num_processes: int, ray: RayTrainParams, threads: int | None) -> str:
    """The dry run's line on `launcher: ray`: the workers and what each asks the cluster for."""
    cpus = ray.cpus_per_worker or threads or 1
    gpu = f", {ray.gpus_per_worker} GPU" if ray.gpus_per_worker else ""
    return (f"{num_processes} Ray Train worker{'s' if num_processes > 1 else ''} ({cpus} CPU{gpu} each, "
            f"{'nccl' if ray.gpus_per_worker else 'gloo'}) on the executor's cluster; up to {ray.max_failures} "
            f"restart{'' if ray.max_failures == 1 else 's'} from the newest checkpoint")


def worker_env(cfg: TrainConfig, ray: RayTrainParams) -> dict[str, str]:
    """The environment every worker process starts with (Ray's runtime_env): what torchrun's ranks get from
    `pretrain.stages.pretrain.launch`. Set at process start, before torch or DeepSpeed read it."""
    env = {"TOKENIZERS_PARALLELISM": "false"}
    if cfg.threads:
        env["OMP_NUM_THREADS"] = str(cfg.threads)
    if cfg.deepspeed and not ray.gpus_per_worker:
        env["DS_ACCELERATOR"] = "cpu"
    return env


def _worker(config: dict[str, Any]) -> None:
    """The train function of each Ray Train worker: check that this node runs what the driver runs and sees the
    run folder, then run the loop on the train_config.json the stage wrote."""
    import ray.train

    check_environment(config["environment"])
    cfg_path = Path(config["train_config"])
    if not cfg_path.is_file():
        raise RayTrainError(f"Ray node {ray.util.get_node_ip_address()} does not see {cfg_path}: launcher: ray "
                            "trains in the stage folder, so the workdir must be on a filesystem every node mounts "
                            "at the same path (docs/scaling.md)")

    if ray.train.get_context().get_world_rank() == 0:  # the driver counts the group's starts: its restarts
        with open(cfg_path.parent / RAY_STATE_DIR / STARTS_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps({"node": ray.util.get_node_ip_address(), "pid": os.getpid()}) + "\n")

    train(TrainConfig.model_validate_json(cfg_path.read_text(encoding="utf-8")))


def run_on_ray(cfg: TrainConfig, cfg_path: Path, ray_params: RayTrainParams, executor: Executor,
               progress: Callable[[], str | None] | None = None, poll_s: float = 10.0) -> dict[str, Any]:
    """Train `cfg` (written at `cfg_path`, in the run folder) as `cfg.num_processes` Ray Train workers on the
    executor's cluster (its address, else $RAY_ADDRESS, else a Ray instance started here) and return the
    summary.json the main rank wrote. Prints `progress()` (the loop's logged step) when it changes."""
    import ray
    from ray.train import FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    ray_connect(executor)
    cpus = ray_params.cpus_per_worker or cfg.threads or 1
    per_worker = {"CPU": cpus, **({"GPU": ray_params.gpus_per_worker} if ray_params.gpus_per_worker else {})}
    have = ray.cluster_resources()
    for name, each in per_worker.items():
        if have.get(name, 0) < each * cfg.num_processes:
            raise RayTrainError(f"launcher: ray asks for {cfg.num_processes} workers x {each} {name} and the Ray "
                                f"cluster has {have.get(name, 0):g} {name}: they would never all be placed (set "
                                "stages.pretrain.ray.cpus_per_worker, or add nodes)")
    run_dir = cfg_path.parent
    state_dir = run_dir / RAY_STATE_DIR
    shutil.rmtree(state_dir, ignore_errors=True)  # an interrupted launch's: this run resumes from the loop's own
    state_dir.mkdir()
    summary_path = run_dir / "summary.json"
    summary_path.unlink(missing_ok=True)  # only this run's summary says it finished
    trainer = TorchTrainer(
        _worker,
        train_loop_config={"train_config": str(cfg_path), "environment": environment()},
        torch_config=TorchConfig(backend="nccl" if ray_params.gpus_per_worker else "gloo"),
        scaling_config=ScalingConfig(num_workers=cfg.num_processes, use_gpu=bool(ray_params.gpus_per_worker),
                                     resources_per_worker=per_worker),
        run_config=RunConfig(name=run_dir.name, storage_path=str(state_dir),
                             failure_config=FailureConfig(max_failures=ray_params.max_failures),
                             worker_runtime_env={"env_vars": worker_env(cfg, ray_params)}),
    )
    print(f"pretrain: {describe_workers(cfg.num_processes, ray_params, cfg.threads)}", flush=True)
    stop = threading.Event()
    watcher = threading.Thread(target=_show_progress, args=(progress, stop, poll_s), daemon=True)
    watcher.start()
    try:
        trainer.fit()
    except Exception as e:  # Ray wraps the workers' errors; name the run and how to go on
        raise RayTrainError(f"pretraining on {cfg.num_processes} Ray Train workers failed in {run_dir}: {e}\n"
                            "rerun to start the workers again from the newest checkpoint") from e
    finally:
        stop.set()
        watcher.join()
    starts = (state_dir / STARTS_FILE).read_text(encoding="utf-8").count("\n")
    if starts > 1:
        print(f"pretrain: Ray Train restarted the workers {starts - 1} time{'s' if starts > 2 else ''}, each from "
              "the newest checkpoint", flush=True)
    shutil.rmtree(state_dir, ignore_errors=True)
    if not summary_path.is_file():
        raise RayTrainError(f"the Ray Train run in {run_dir} ended without writing {summary_path}")
    return dict(json.loads(summary_path.read_text(encoding="utf-8")))


def _show_progress(progress: Callable[[], str | None] | None, stop: threading.Event, poll_s: float) -> None:
    """Print the loop's logged step while the workers run (their own output stays in the Ray logs)."""
    last = ""
    while progress is not None and not stop.wait(poll_s):
        line = progress() or "starting"
        if line != last:
            print(f"pretrain: Ray Train: {line}", file=sys.stderr, flush=True)
            last = line


__all__ = ["RAY_STATE_DIR", "STARTS_FILE", "RayTrainError", "describe_workers", "run_on_ray", "worker_env"]
