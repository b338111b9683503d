"""The Ray executor on a real two-node Ray cluster started on this machine (`ray.cluster_utils.Cluster`, one CPU
per node, no dashboard): the corpus stages give the same keys, bytes and funnels as the local pool, a rerun skips
every stage, a worker killed mid-task is retried, and a task's own error fails the stage."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install -e '.[ray]')")

from pipeline.cli import main  # noqa: E402
from pipeline.parallel import Executor, ordered_map  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]  # a Ray start with no loopback would spin forever

TESTS = Path(__file__).resolve().parent
FIX = TESTS / "fixtures" / "e2e"
UPSTREAM = ("collect", "filter", "dedup", "decontaminate")


@pytest.fixture(scope="module")
def cluster():
    from testkit.ray_cluster import two_node_cluster

    # worker processes import the task functions of tests/testkit, and the stages read the fixture recipe
    with two_node_cluster({"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep), "KLUE_E2E_DIR": str(FIX)}) as c:
        yield c


def klue(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def stage_tree(wd: Path) -> dict[str, object]:
    """Per stage: its key folder, the sha256 file table and the funnel of its manifest."""
    out: dict[str, object] = {}
    for st in UPSTREAM:
        (folder,) = sorted(p for p in (wd / st).iterdir() if p.is_dir())
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        out[st] = (folder.name, m["key"], m["files"], m["funnel"], m["by_source"])
    return out


def test_the_corpus_stages_on_ray_equal_the_local_pool(cluster, tmp_path):
    klue("run", FIX / "recipe.yaml", "--workdir", tmp_path / "local", "--until", "decontaminate", "--workers", "2")
    out = klue("run", FIX / "recipe.yaml", "--workdir", tmp_path / "ray", "--until", "decontaminate",
               "--executor", "ray", "--ray-address", cluster.address)
    assert "executor ray" in out
    assert stage_tree(tmp_path / "ray") == stage_tree(tmp_path / "local")
    m = json.loads(next((tmp_path / "ray" / "dedup").glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert m["executor"]["kind"] == "ray" and m["executor"]["nodes"] == 2
    # the rerun on the cluster skips every stage and changes nothing
    before = stage_tree(tmp_path / "ray")
    klue("run", FIX / "recipe.yaml", "--workdir", tmp_path / "ray", "--until", "decontaminate",
         "--executor", "ray", "--ray-address", cluster.address)
    run = json.loads((tmp_path / "ray" / "run.json").read_text(encoding="utf-8"))
    assert {s["stage"]: s["status"] for a in run["arms"] for s in a["stages"]} == dict.fromkeys(UPSTREAM, "skipped")
    assert stage_tree(tmp_path / "ray") == before


def test_a_task_whose_worker_dies_is_retried(cluster, tmp_path):
    from testkit.ray_tasks import crash_once

    exe = Executor("ray", cluster.address)
    res = list(ordered_map(crash_once, [(str(tmp_path), x) for x in range(6)], executor=exe))
    assert [r[0] for r in res] == [x * x for x in range(6)]  # in input order, every one after its crash
    crashed = {p.name: int(p.read_text()) for p in tmp_path.glob("*.crashed")}
    assert len(crashed) == 6
    assert all(pid != crashed[f"{x}.crashed"] for x, (_, pid) in enumerate(res))  # a new worker process


def test_a_node_removed_mid_map_loses_nothing(cluster, tmp_path):
    from testkit.ray_tasks import slow_square

    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    exe = Executor("ray", cluster.address)
    it = ordered_map(slow_square, [(str(tmp_path), x, 2.0) for x in range(9)], executor=exe)
    first = next(it)  # the first window of tasks is in flight
    deadline = time.monotonic() + 60
    while not (started_there := [p for p in tmp_path.iterdir() if p.suffix == f".{node.node_id}"]):
        assert time.monotonic() < deadline, "no task started on the new node within 60 s"
        time.sleep(0.05)
    cluster.remove_node(node)  # its running tasks and the results it holds are gone: Ray reruns them elsewhere
    rest = list(it)
    assert [r[0] for r in [first, *rest]] == [x * x for x in range(9)]
    assert started_there, "no task had started on the removed node: the test removed an idle node"
    attempts: dict[str, int] = {}
    for p in tmp_path.iterdir():
        attempts[p.name.split("-")[0]] = attempts.get(p.name.split("-")[0], 0) + 1
    assert max(attempts.values()) >= 2  # a task cut off with its node ran again on another


def test_a_task_error_fails_the_map_with_its_message(cluster):
    from testkit.ray_tasks import bad_input

    with pytest.raises(Exception, match="shard 3: malformed record"):
        list(ordered_map(bad_input, range(6), executor=Executor("ray", cluster.address)))


def test_a_worker_with_other_versions_than_the_driver_fails_the_map_naming_them(cluster, tmp_path, monkeypatch):
    """Every task first compares its worker's environment (Python, this project's files, dependency versions)
    with the driver's: here the driver claims another numpy, as a node with another install would have."""
    from pipeline import parallel
    from pipeline.parallel import ClusterMismatch
    from testkit.ray_tasks import slow_square

    real = parallel.environment()
    items = [(str(tmp_path), x, 0.0) for x in range(3)]
    monkeypatch.setattr(parallel, "environment", lambda: {**real, "numpy": "0.0.1"})
    pattern = rf"Ray node [\d.]+ differs from the driver: numpy {real['numpy']} there, 0.0.1 on the driver"
    with pytest.raises(ClusterMismatch, match=pattern):
        list(ordered_map(slow_square, items, executor=Executor("ray", cluster.address)))
    assert not list(tmp_path.iterdir())  # checked before the task's own code ran
    monkeypatch.undo()
    assert [r[0] for r in ordered_map(slow_square, items, executor=Executor("ray", cluster.address))] == [0, 1, 4]


def test_the_driver_killed_mid_stage_reruns_only_the_missing_shards_on_the_cluster(cluster, tmp_path):
    """`kill -9` of the `klue run` driver while its filter stage's tasks run on the cluster, after two of four
    results were recorded; the rerun on the cluster keeps those two shards' files (the very inodes), runs the
    others, and writes the bytes of an uninterrupted local run."""
    from test_runner import kill_when_paused, run_to_end
    from testkit.toy import leftovers, stage_digests

    run_to_end(tmp_path / "ref")
    wd = tmp_path / "w"
    on_ray = ("--executor", "ray", "--ray-address", cluster.address)
    kill_when_paused(wd, {"KLUE_TOY_PAUSE": "filter:2"}, *on_ray)
    partial = next(p for p in (wd / "filter").iterdir() if p.name.endswith(".partial"))
    assert sorted(p.name for p in (partial / "_journal" / "map-01").glob("*.json")) == ["00000.json", "00001.json"]
    kept = {n: (partial / n).stat().st_ino for n in ("shard-00000.jsonl", "shard-00001.jsonl")}
    out = run_to_end(wd, *on_ray)
    assert "executor ray" in out
    final = wd / "arms" / "default" / "filter"
    assert {n: (final / n).stat().st_ino for n in kept} == kept
    assert stage_digests(wd) == stage_digests(tmp_path / "ref") and leftovers(wd) == []


def test_tasks_that_need_a_device_each_get_their_own_from_ray(cluster):
    """`devices` on Ray (the finetune stage's runs): each task asks for one GPU and sees only its own through
    `CUDA_VISIBLE_DEVICES`. This cluster has none: refused at once, not queued forever; then a node declaring two
    GPUs joins (Ray's resources, no GPU needed), and the tasks run there, each with one device id."""
    from testkit.ray_tasks import visible_device

    ray_exec = Executor("ray", cluster.address)
    with pytest.raises(RuntimeError, match="need 1 GPU each, on a Ray cluster with 0 GPUs"):
        list(ordered_map(visible_device, range(4), executor=ray_exec, devices=1))
    node = cluster.add_node(num_cpus=2, num_gpus=2)
    cluster.wait_for_nodes()
    try:
        got = list(ordered_map(visible_device, range(4), executor=ray_exec, devices=2))
    finally:
        cluster.remove_node(node)
    assert [x for x, _ in got] == [0, 1, 2, 3]
    assert {d for _, d in got} <= {"0", "1"} and all(d is not None and "," not in d for _, d in got)
