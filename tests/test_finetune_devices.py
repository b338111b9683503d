"""The finetune stage spreads its runs over a node's devices, one run per device at a time (issue 51, item 2):
a worker process per device, started with its own `CUDA_VISIBLE_DEVICES`. On this CPU machine two simulated
devices (`devices: 2`) stand in for two GPUs: the runs go two at a time, each worker keeps its device id, and
every metrics and predictions file is the bytes of the runs made one at a time; the stage key does not change."""

from __future__ import annotations

import json
import os

from pipeline.recipe import load_recipe
from pipeline.runner import Runner
from testkit.finetune_recipes import REG
from testkit.finetune_recipes import recipe as _recipe
from testkit.finetune_recipes import run as _run
from testkit.finetune_recipes import unit_files as _unit_files


def test_two_devices_run_two_units_at_once_with_the_same_files(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    one = _run(_recipe(tmp_path, {"tasks": ["ynat"]}, name="one"), tmp_path / "one").arm_stages["default"]["finetune"]
    runner = Runner(load_recipe(_recipe(tmp_path, {"tasks": ["ynat"], "devices": 2}, name="two"), registry=REG),
                    tmp_path / "two", REG)
    runner.run()
    two = runner.arm_stages["default"]["finetune"]
    assert two.key == one.key, "devices spread the runs; they are not in the key"
    reference = _unit_files(one.path)
    assert sum(name.endswith("/metrics.json") and "seed-" in name for name in reference) == 4
    assert _unit_files(two.path) == reference

    timings = [json.loads(p.read_text()) for p in sorted(two.path.rglob("seed-*/timing.json"))]
    assert len(timings) == 4
    by_pid = {t["pid"]: t["device"] for t in timings}
    assert sorted(by_pid.values()) == ["0", "1"], "two worker processes, each on its own device for its lifetime"
    assert all(t["device"] == by_pid[t["pid"]] for t in timings)
    spans = sorted((t["started"], t["ended"], t["device"]) for t in timings)
    assert any(a[1] > b[0] and a[2] != b[2] for a, b in zip(spans, spans[1:], strict=False)), "two runs at once"
    assert {json.loads(p.read_text())["device"] for p in one.path.rglob("seed-*/timing.json")} == \
        {os.environ.get("CUDA_VISIBLE_DEVICES")}, "one at a time: in the stage's own process, devices untouched"
