"""`launcher: ray` (issue 51, item 1): the pretrain stage's loop as Ray Train workers on the executor's cluster.
Without Ray's cluster: the stage key ignores the launcher, the workers set the processes and the global batch
stays the recipe's (or is refused), the dry run names the workers. On a real two-node Ray cluster started here
(`ray.cluster_utils.Cluster`, one CPU per node, as tests/test_ray_executor.py starts one): 2 gloo workers train
the bytes of the same 2 ranks under local torchrun, the run's card names where it trained, and Ray Train's own
state is gone from the stage folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from pretrain.config import PretrainParams, RayTrainParams, TrainConfig
from testkit.pretrain import context, encode_fixture, pretrain_key, two_rank_params


def test_the_launcher_and_its_workers_are_not_in_the_key_but_the_processes_are(tmp_path):
    local, _ = pretrain_key(tmp_path, "stages.pretrain.num_processes=4")
    ray, params = pretrain_key(tmp_path, "stages.pretrain.launcher=ray", "stages.pretrain.num_processes=4",
                                "stages.pretrain.ray={cpus_per_worker: 2, max_failures: 1}")
    assert ray == local and params["launcher"] == "ray" and params["ray"]["max_failures"] == 1
    # 4 workers for a recipe of 1 process x grad_accum 4: the run is 4 ranks x grad_accum 1, keyed so
    moved, params = pretrain_key(tmp_path, "stages.pretrain.launcher=ray", "stages.pretrain.grad_accum=4",
                                  "stages.pretrain.ray={workers: 4}")
    assert (params["num_processes"], params["grad_accum"]) == (4, 1) and moved == local
    from click.testing import CliRunner

    from pipeline.cli import main

    res = CliRunner().invoke(main, ["run", "--dry-run", "--until", "pretrain", "--workdir", str(tmp_path / "d"),
                                    "--launcher", "ray", "--set", "stages.pretrain.num_processes=4",
                                    "--set", "stages.pretrain.threads=3"])
    assert res.exit_code == 0, res.output
    threads3, _ = pretrain_key(tmp_path, "stages.pretrain.num_processes=4", "stages.pretrain.threads=3")
    assert re.search(rf"^  pretrain\s+would run\s+key {threads3[:8]}", res.output, re.M), res.output
    assert "launcher: ray: 4 Ray Train workers (3 CPU each, gloo) on the executor's cluster; up to 3 restarts " \
           "from the newest checkpoint" in res.output


def test_the_global_batch_is_the_recipes_whatever_the_workers():
    p = PretrainParams(launcher="ray", batch_size=8, grad_accum=8, ray=RayTrainParams(workers=8, gpus_per_worker=1))
    assert (p.num_processes, p.grad_accum) == (8, 1)
    assert PretrainParams.model_validate(p.model_dump()) == p, "idempotent: a manifest's params reload the same"
    assert PretrainParams(batch_size=8, grad_accum=8, ray={"workers": 4}).num_processes == 1, \
        "launcher local: the workers are ignored"
    with pytest.raises(ValidationError, match=r"ray: the global batch 16 \(batch_size 8 x grad_accum 2 x "
                                              r"num_processes 1\) does not divide over 4 Ray Train workers"):
        PretrainParams(launcher="ray", batch_size=8, grad_accum=2, ray={"workers": 4})
    with pytest.raises(ValidationError, match="gpus_per_worker"):
        RayTrainParams(gpus_per_worker=2)
    cfg = TrainConfig.model_validate({**p.model_dump(), "seed": 1, "encode_dir": "/e", "tokenizer_dir": "/t",
                                      "out_dir": "/o"})
    assert "ray" not in cfg.model_dump() and "launcher" not in cfg.model_dump(), "train_config.json: the run's"


def test_a_worker_that_does_not_see_the_run_folder_says_so(tmp_path):
    """The check a worker makes before training (without Ray's cluster: the function itself)."""
    pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install -e '.[ray]')")
    from pipeline.parallel import environment
    from pretrain.ray_train import RayTrainError, _worker

    with pytest.raises(RayTrainError, match=rf"does not see {tmp_path}/nowhere/train_config.json: launcher: ray "
                                            "trains in the stage folder, so the workdir must be on a filesystem "
                                            "every node mounts"):
        _worker({"train_config": str(tmp_path / "nowhere" / "train_config.json"), "environment": environment()})


def test_the_hardware_line_counts_the_nodes_the_ranks_span():
    from pipeline.hardware import cpu_model, hardware_here

    one = hardware_here(2, 3)
    assert one == f"CPU: {cpu_model()}, {os.cpu_count()} cores, 2 processes x 3 torch threads"
    assert hardware_here(4, 1, nodes=2) == \
        f"CPU: {cpu_model()}, 2 nodes, {os.cpu_count()} cores each, 4 processes x 1 torch thread"


# -- on a real two-node Ray cluster -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install -e '.[ray]')")
    from testkit.ray_cluster import two_node_cluster

    with two_node_cluster({"RAY_TRAIN_ENABLE_STATE_TRACKING": "0"}) as c:
        yield c


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("ray-enc"), n_shards=2, repeat=3, eval_fraction=0.15)


def _params(launcher: str) -> PretrainParams:
    return two_rank_params(launcher, ray={"max_failures": 0})


def _ctx(encoded, out: Path, p: PretrainParams, executor=None):
    enc, vocab, result = encoded
    ctx = context(out, p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    if executor is not None:
        ctx.executor = executor
    return ctx


def _kill_a_worker_after_the_first_checkpoint(run: Path, killed: list[int]) -> None:
    """SIGKILL one Ray Train worker process (as a lost node or an OOM kill ends it) once the run has written its
    first checkpoint, so the restarted workers have one to resume from."""
    import signal
    import time

    import psutil

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not any((run / "checkpoints").glob("step-*")):
        time.sleep(0.02)
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if "RayTrainWorker" in " ".join(proc.info["cmdline"] or []):
            os.kill(proc.info["pid"], signal.SIGKILL)
            killed.append(proc.info["pid"])
            return


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_ray_train_workers_one_killed_mid_run_train_the_bytes_of_local_torchrun(cluster, encoded, tmp_path,
                                                                                     capsys):
    """2 gloo workers on the two-node cluster, one SIGKILLed after the first checkpoint: Ray Train restarts the
    worker group (max_failures 1), the loop resumes from the newest checkpoint, and the weights are those of the
    same 2 ranks under local torchrun, uninterrupted. (One run for both claims: each costs a minute here.)"""
    import threading

    import psutil

    from pipeline.parallel import Executor
    from pretrain.ray_train import RAY_STATE_DIR
    from pretrain.stages.pretrain import PretrainStage

    longer = {"max_steps": 24, "checkpoint_every": 4, "eval_every": 12, "log_every": 4}
    local = tmp_path / "local"
    PretrainStage().run(_ctx(encoded, local, _params("local").model_copy(update=longer)))
    out = tmp_path / "key.partial"
    p = _params("ray").model_copy(update={**longer, "ray": RayTrainParams(max_failures=1)})
    killed: list[int] = []
    killer = threading.Thread(target=_kill_a_worker_after_the_first_checkpoint, args=(out, killed))
    killer.start()
    try:
        res = PretrainStage().run(_ctx(encoded, out, p, Executor("ray", cluster.address)))
    finally:
        killer.join()
    assert killed and not psutil.pid_exists(killed[0]), "a worker was killed"
    printed = capsys.readouterr().out
    assert "pretrain: 2 Ray Train workers (1 CPU each, gloo) on the executor's cluster; up to 1 restart from the newest" in printed
    assert "pretrain: Ray Train restarted the workers 1 time, each from the newest checkpoint" in printed
    assert (out / "final" / "model.safetensors").read_bytes() == (local / "final" / "model.safetensors").read_bytes()
    assert (out / "train_config.json").read_bytes() == (local / "train_config.json").read_bytes().replace(
        str(local).encode(), str(out).encode()), "the same config but for the folder"
    assert res.meta["report"]["steps"] == 24 and res.meta["report"]["world_size"] == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rank_steps"] == [24, 24] and summary["threads"] == 1
    # the card's hardware line is the main rank's (Ray Train's nodes here share this machine's address, so Ray
    # counts them as one node: LOCAL_WORLD_SIZE 2), with the ranks' thread count, not the driver's
    assert res.meta["hardware"] == summary["hardware"] == \
        json.loads((local / "summary.json").read_text())["hardware"]
    assert res.meta["hardware"].endswith(f"{os.cpu_count()} cores, 2 processes x 1 torch thread")
    assert res.meta["hardware"] in (out / "final" / "README.md").read_text(encoding="utf-8")
    assert not (out / RAY_STATE_DIR).exists(), "Ray Train's run state is removed when the run ends"
