"""`klue status` (where a run stands, while it runs) and `klue gc` (folders the last run does not use), on the
toy graph in real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from testkit.toy import TOY, subprocess_env

TOY_REG = ["--registry", "testkit.toy_stages:REGISTRY", "--workers", "1"]


def klue(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def test_status_while_a_stage_runs_then_after_a_kill_then_done(tmp_path):
    wd, flag = tmp_path / "w", tmp_path / "paused"
    env = subprocess_env(KLUE_TOY_PAUSE="filter:2", KLUE_TOY_PAUSE_FILE=str(flag))
    p = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", str(TOY), "--workdir", str(wd), *TOY_REG],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()[0].decode()
            time.sleep(0.05)
        code, out = klue("status", str(wd))
        assert code == 0, out
        assert "run running" in out and "arm default: 1 of 4 stages done; to do: filter, pii, count" in out
        assert "now: filter (arm default" in out and "is gone" not in out
        assert "progress: 2 shard tasks recorded" in out  # the pause follows the 2nd task's record
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    code, out = klue("status", str(wd))
    assert "now: filter" in out and "the run was killed; rerun it to continue" in out
    assert klue("run", str(TOY), "--workdir", str(wd), *TOY_REG)[0] == 0
    code, out = klue("status", str(wd))
    assert "run ok" in out and "4 of 4 stages done" in out and "no stage is running" in out


def test_gc_lists_then_removes_only_what_the_last_run_does_not_use(tmp_path):
    wd = tmp_path / "w"
    assert klue("run", str(TOY), "--workdir", str(wd), *TOY_REG)[0] == 0
    first = json.loads((wd / "run.json").read_text())
    old_filter = next(s["path"] for s in first["arms"][0]["stages"] if s["stage"] == "filter")
    assert klue("run", str(TOY), "--workdir", str(wd), "--set", "stages.filter.min_chars=3", *TOY_REG)[0] == 0
    (wd / "pii" / "deadbeefdeadbeef.partial").mkdir()  # left by a killed run
    (wd / "pii" / "deadbeefdeadbeef.partial" / "x.bin").write_bytes(b"0" * 2048)
    last = json.loads((wd / "run.json").read_text())
    used = {s["path"] for s in last["arms"][0]["stages"]}
    code, out = klue("gc", str(wd))
    assert code == 0
    listed = sorted(line.split()[-1] for line in out.splitlines() if line.strip() and "/" in line.split()[-1])
    assert old_filter in listed and "pii/deadbeefdeadbeef.partial" in listed
    assert not set(listed) & used and "rerun with --yes" in out and "2.0 kB" in out
    assert (wd / old_filter).is_dir()  # listing removes nothing
    code, out = klue("gc", str(wd), "--yes")
    assert code == 0 and f"removed {len(listed)} folders" in out
    assert not (wd / old_filter).exists() and all((wd / p).is_dir() for p in used)
    assert klue("run", str(TOY), "--workdir", str(wd), "--set", "stages.filter.min_chars=3", *TOY_REG)[0] == 0
    code, out = klue("gc", str(wd))
    assert "0 folders not used by the last run" in out


@pytest.mark.parametrize("cmd", ["status", "gc"])
def test_status_and_gc_name_a_folder_without_a_run(tmp_path, cmd):
    code, out = klue(cmd, str(tmp_path))
    assert code != 0 and "no run.json" in out
