"""The runner on toy stages: keys, skip, --force, arms sharing folders, refused counts, manifests, --verify,
worker-count independence, and kill -9 at several points followed by a byte-identical resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pipeline import io
from pipeline.recipe import load_recipe
from pipeline.runner import Runner, StageFailed
from pipeline.stages import stage_registry
from testkit import toy_stages
from testkit.kill import kill_group_when
from testkit.toy import TOY, TOY_AB, expected_funnels, leftovers, sha256, stage_digests, subprocess_env

PAUSING_RUN = Path(toy_stages.__file__).parent / "pausing_run.py"
REG = stage_registry(toy_stages.REGISTRY)


@pytest.fixture
def runlog(tmp_path, monkeypatch) -> Path:
    """Every toy stage appends its name here when it runs."""
    log = tmp_path / "toy.log"
    monkeypatch.setenv("KLUE_TOY_LOG", str(log))
    return log


def ran(log: Path) -> Counter:
    return Counter(log.read_text().split()) if log.exists() else Counter()


def run(recipe: Path, workdir: Path, overrides=(), **kw) -> dict:
    return Runner(load_recipe(recipe, overrides, registry=REG), workdir, REG, **kw).run()


def statuses(record: dict, arm: int = 0) -> dict[str, str]:
    return {s["stage"]: s["status"] for s in record["arms"][arm]["stages"]}


def test_first_run_writes_manifests_links_and_counts(tmp_path, runlog):
    wd = tmp_path / "w"
    record = run(TOY, wd)
    assert statuses(record) == dict.fromkeys(["collect", "filter", "pii", "count"], "ran")
    exp = expected_funnels(min_chars=5)
    for s in record["arms"][0]["stages"]:
        folder = wd / s["path"]
        manifest = json.loads((folder / "manifest.json").read_text())
        assert folder.name == s["key"][:16] and manifest["key"] == s["key"] and manifest["stage"] == s["stage"]
        # every output file is listed with its real sha256 and size, and nothing else is
        files = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*")
                 if p.is_file() and p.name != "manifest.json"}
        assert set(manifest["files"]) == set(files) and files
        for rel, info in manifest["files"].items():
            assert info == {"sha256": sha256(files[rel]), "bytes": files[rel].stat().st_size}
        link = wd / "arms" / "default" / s["stage"]
        assert link.is_symlink() and not os.path.isabs(os.readlink(link)) and link.resolve() == folder.resolve()
    collect = json.loads((wd / record["arms"][0]["stages"][0]["path"] / "manifest.json").read_text())
    for src, e in exp["collect"].items():
        f = collect["by_source"][src]
        assert (f["docs_in"], f["docs_kept"], f["dropped"].get("empty", 0), f["quarantined"], f["chars_in"]) == \
            (e["docs_in"], e["docs_kept"], e["empty"], e["quarantined"], e["chars_in"])
    assert collect["funnel"]["docs_in"] == sum(e["docs_in"] for e in exp["collect"].values())
    pii = json.loads((wd / "arms/default/pii/manifest.json").read_text())
    assert pii["inputs"] == {"filter": record["arms"][0]["stages"][1]["key"]}
    assert pii["meta"]["report"]["digits_replaced"] == sum(e["digits"] for e in exp["filter"].values())
    assert json.loads((wd / "run.json").read_text())["status"] == "ok"
    assert leftovers(wd) == []


def test_rerun_skips_and_param_change_reruns_downstream_only(tmp_path, runlog):
    wd = tmp_path / "w"
    first = run(TOY, wd)
    assert ran(runlog) == Counter(collect=1, filter=1, pii=1, count=1)
    second = run(TOY, wd)
    assert statuses(second) == dict.fromkeys(["collect", "filter", "pii", "count"], "skipped")
    assert ran(runlog) == Counter(collect=1, filter=1, pii=1, count=1)
    assert [s["key"] for s in second["arms"][0]["stages"]] == [s["key"] for s in first["arms"][0]["stages"]]
    third = run(TOY, wd, ["stages.filter.min_chars=10"])
    assert statuses(third) == {"collect": "skipped", "filter": "ran", "pii": "ran", "count": "ran"}
    assert ran(runlog) == Counter(collect=1, filter=2, pii=2, count=2)
    # both versions live side by side; the arm link points at the latest
    assert len(list((wd / "filter").iterdir())) == 2
    assert (wd / "arms/default/filter").resolve().name == third["arms"][0]["stages"][1]["key"][:16]


def test_until_stops_after_the_stage(tmp_path, runlog):
    record = run(TOY, tmp_path / "w", until="filter")
    assert list(statuses(record)) == ["collect", "filter"]
    assert not (tmp_path / "w" / "pii").exists() and ran(runlog) == Counter(collect=1, filter=1)


def test_force_reruns_the_stage_and_downstream(tmp_path, runlog):
    wd = tmp_path / "w"
    run(TOY, wd)
    before = stage_digests(wd)
    record = run(TOY, wd, force=["filter"])
    assert statuses(record) == {"collect": "skipped", "filter": "ran", "pii": "ran", "count": "ran"}
    assert ran(runlog) == Counter(collect=1, filter=2, pii=2, count=2)
    assert stage_digests(wd) == before  # deterministic rebuild, same keys
    assert leftovers(wd) == []


def test_arms_share_upstream_folders(tmp_path, runlog):
    wd = tmp_path / "w"
    record = run(TOY_AB, wd)
    # 4 arms; collect and filter are common to all, pii differs by the pii variant only
    assert ran(runlog) == Counter(collect=1, filter=1, pii=2, count=4)
    keys = {a["name"]: {s["stage"]: s["key"] for s in a["stages"]} for a in record["arms"]}
    assert len({k["collect"] for k in keys.values()}) == 1 and len({k["filter"] for k in keys.values()}) == 1
    assert keys["pii=on,count=plain"]["pii"] == keys["pii=on,count=fancy"]["pii"]
    assert keys["pii=on,count=plain"]["pii"] != keys["pii=off,count=plain"]["pii"]
    assert len({k["count"] for k in keys.values()}) == 4
    on, off = ("".join(json.loads(ln)["text"] for p in sorted((wd / f"arms/pii={v},count=plain/pii").glob("shard-*"))
                       for ln in p.read_text().splitlines()) for v in ("on", "off"))
    assert not any(c.isdigit() for c in on) and any(c.isdigit() for c in off)
    assert record["recipe"]["variants"]["pii"] == ["on", "off"]  # YAML booleans shown as written
    shared = record["arms"][0]["stages"][0]["shared_with"]
    assert shared == ["pii=on,count=fancy", "pii=off,count=plain", "pii=off,count=fancy"]
    # forcing pii rebuilds each of its two folders once, and the four count folders
    run(TOY_AB, wd, force=["pii"])
    assert ran(runlog) == Counter(collect=1, filter=1, pii=4, count=8)


@pytest.mark.parametrize(("cheat", "expected"), [
    ("total", "total: docs: in=13 != kept="),
    ("by_source", "sum over sources of docs_in = 13 but the total says 12"),
])
def test_refuses_counts_that_do_not_reconcile(tmp_path, runlog, cheat, expected):
    wd = tmp_path / "w"
    with pytest.raises(StageFailed) as e:
        run(TOY, wd, [f"stages.filter.cheat={cheat}"])
    assert e.value.stage == "filter" and "do not reconcile" in str(e.value) and expected in str(e.value)
    assert [p.name.endswith(".partial") for p in (wd / "filter").iterdir()] == [True]  # nothing renamed
    record = json.loads((wd / "run.json").read_text())
    assert record["status"] == "failed" and statuses(record) == {"collect": "ran", "filter": "failed"}
    assert run(TOY, wd, [f"stages.filter.cheat={cheat}"], until="collect")["arms"][0]["stages"][0]["status"] \
        == "skipped"  # the earlier stage stays done


def test_stage_exception_keeps_earlier_stages_and_logs_traceback(tmp_path, runlog):
    wd = tmp_path / "w"
    with pytest.raises(StageFailed, match="stage count failed .*ValueError: toy count exploded") as e:
        run(TOY, wd, ["stages.count.explode=true"])
    assert "toy_stages.py" in e.value.log.read_text()
    record = run(TOY, wd)
    assert statuses(record) == {"collect": "skipped", "filter": "skipped", "pii": "skipped", "count": "ran"}


def test_verify_rechecks_hashes_only_when_asked(tmp_path, runlog):
    wd = tmp_path / "w"
    run(TOY, wd)
    shard = sorted((wd / "arms/default/filter").glob("shard-*"))[0]
    shard.write_text(shard.read_text() + "\n")
    assert statuses(run(TOY, wd))["filter"] == "skipped"  # a plain rerun does not rehash
    with pytest.raises(StageFailed, match=r"(?s)shard-00000.jsonl: content differs.*--force filter"):
        run(TOY, wd, verify=True)
    run(TOY, wd, force=["filter"])
    assert statuses(run(TOY, wd, verify=True))["filter"] == "skipped"


def test_folder_with_a_foreign_manifest_is_rebuilt(tmp_path, runlog):
    wd = tmp_path / "w"
    record = run(TOY, wd)
    m = wd / record["arms"][0]["stages"][1]["path"] / "manifest.json"
    m.write_text(json.dumps({**json.loads(m.read_text()), "key": "0" * 64}))
    assert statuses(run(TOY, wd))["filter"] == "ran"
    assert json.loads(m.read_text())["key"] == record["arms"][0]["stages"][1]["key"]


def test_outputs_do_not_depend_on_worker_count(tmp_path, runlog):
    one = run(TOY, tmp_path / "w1", workers=1)
    two = run(TOY, tmp_path / "w2", workers=2)
    assert [s["key"] for s in one["arms"][0]["stages"]] == [s["key"] for s in two["arms"][0]["stages"]]
    assert stage_digests(tmp_path / "w1") == stage_digests(tmp_path / "w2")


# ----------------------------------------------------------------------------------------------------------
# kill -9 and resume, in real subprocesses


def klue(workdir: Path, *args: str, env: dict | None = None, recipe: Path = TOY) -> subprocess.Popen:
    cmd = [sys.executable, str(PAUSING_RUN), "run", str(recipe), "--workdir", str(workdir),
           "--registry", "testkit.toy_stages:REGISTRY", "--workers", "2", *args]
    return subprocess.Popen(cmd, env=subprocess_env(**(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def run_to_end(workdir: Path, *args: str, env: dict | None = None) -> str:
    p = klue(workdir, *args, env=env)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out.decode()
    return out.decode()


def kill_when_paused(workdir: Path, pause: dict, *args: str) -> None:
    flag = workdir.parent / f"paused-{workdir.name}"
    p = klue(workdir, *args, env={**pause, "KLUE_TOY_PAUSE_FILE": str(flag)})
    kill_group_when(p, flag.exists, 60, f"the pause point {pause}")
    assert p.returncode == -signal.SIGKILL


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    wd = tmp_path_factory.mktemp("ref") / "w"
    run_to_end(wd)
    return stage_digests(wd)


@pytest.mark.slow
@pytest.mark.parametrize(("pause", "stage", "state"), [
    ({"KLUE_TOY_PAUSE": "collect:2"}, "collect", "resumable stage, 2 of 4 shards written"),
    ({"KLUE_TOY_PAUSE": "collect:tmp3"}, "collect", "resumable stage, a shard half written (temp file)"),
    ({"KLUE_TOY_PAUSE": "collect:jsonl"}, "collect", "resumable stage, a JSON-lines file half written"),
    ({"KLUE_TOY_PAUSE": "collect:dir"}, "collect", "resumable stage, a folder half written (temp folder)"),
    ({"KLUE_TOY_PAUSE": "filter:2"}, "filter", "pool of 2 workers, half of the shards done"),
    ({"KLUE_TOY_PAUSE": "pii:3"}, "pii", "third stage, partial folder"),
    ({"KLUE_TOY_PAUSE_RENAME": "publish:2"}, "filter", "manifest written, folder not yet renamed"),
])
def test_kill9_then_resume_is_byte_identical(tmp_path, reference, pause, stage, state):
    wd = tmp_path / "w"
    kill_when_paused(wd, pause)
    partial = [p for p in (wd / stage).iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1 and not [p for p in (wd / stage).iterdir() if not p.name.endswith(".partial")]
    temps = [p for p in partial[0].rglob("*") if io.is_temp(p)]
    if pause["KLUE_TOY_PAUSE" if "KLUE_TOY_PAUSE" in pause else "KLUE_TOY_PAUSE_RENAME"].startswith(
            ("collect:tmp", "collect:jsonl", "collect:dir")):
        assert len(temps) == 1, f"killed in the middle of a write: exactly one temp name, got {temps}"
        assert temps[0].is_dir() == pause["KLUE_TOY_PAUSE"].endswith("dir")
    first_shard = partial[0] / "shard-00000.jsonl"
    inode = first_shard.stat().st_ino if stage == "collect" and first_shard.exists() else None
    out = run_to_end(wd)
    assert stage_digests(wd) == reference, state
    assert leftovers(wd) == []
    if inode is not None:  # resumed, not restarted: the shard written before the kill was kept
        assert (wd / "arms/default/collect/shard-00000.jsonl").stat().st_ino == inode
    assert "skipped" in out or stage == "collect"


@pytest.mark.slow
def test_kill9_mid_stage_then_rerun_runs_only_the_missing_shards(tmp_path, reference):
    """Shard-level resume (`shard_resume`): the driver is killed after two of four filter tasks were recorded;
    the rerun runs the other two only, keeps the finished shards' files, and writes the uninterrupted bytes."""
    wd = tmp_path / "w"
    log = tmp_path / "tasks.log"
    kill_when_paused(wd, {"KLUE_TOY_PAUSE": "filter:2", "KLUE_TOY_TASK_LOG": str(log)})
    partial = next(p for p in (wd / "filter").iterdir() if p.name.endswith(".partial"))
    assert sorted(p.name for p in (partial / "_journal" / "map-01").glob("*.json")) == ["00000.json", "00001.json"]
    kept = {n: (partial / n).stat().st_ino for n in ("shard-00000.jsonl", "shard-00001.jsonl")}
    log.write_text("", encoding="utf-8")
    run_to_end(wd, env={"KLUE_TOY_TASK_LOG": str(log)})
    assert sorted(log.read_text(encoding="utf-8").split()) == ["shard-00002.jsonl", "shard-00003.jsonl"]
    assert stage_digests(wd) == reference
    final = wd / "arms" / "default" / "filter"
    assert {n: (final / n).stat().st_ino for n in kept} == kept  # finished shards: the very files, not rewritten
    assert not (final / "_journal").exists() and leftovers(wd) == []


@pytest.mark.slow
def test_kill9_in_the_middle_of_a_forced_swap(tmp_path, reference):
    wd = tmp_path / "w"
    run_to_end(wd)
    kill_when_paused(wd, {"KLUE_TOY_PAUSE_RENAME": "swap:1"}, "--force", "pii")
    pii = sorted(p.name for p in (wd / "pii").iterdir())
    assert [n.rsplit(".", 1)[-1] for n in pii] == ["old", "partial"]  # the done folder is moved aside
    run_to_end(wd)
    assert stage_digests(wd) == reference
    assert leftovers(wd) == []
