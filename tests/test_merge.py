"""`klue merge`: arms run side by side in workdirs of their own, hard-linked into one workdir where the whole
recipe then finds every stage cached (docs/usage.md, "Arms side by side"), on the toy graph."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from pipeline.cli import main
from testkit.toy import TOY_AB, leftovers, stage_digests

TOY_REG = ["--registry", "testkit.toy_stages:REGISTRY", "--workers", "1"]


def klue(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def run_arm(wd, pii: str) -> None:
    code, out = klue("run", str(TOY_AB), "--workdir", str(wd), "--set", f"variants.pii=[{pii}]", *TOY_REG)
    assert code == 0, out


def statuses(wd) -> dict[str, str]:
    run = json.loads((wd / "run.json").read_text())
    return {f"{a['name']}/{s['stage']}": s["status"] for a in run["arms"] for s in a["stages"]}


def test_arms_run_apart_then_merged_are_the_whole_recipe_cached_and_the_same_bytes(tmp_path):
    a, b, whole = tmp_path / "a", tmp_path / "b", tmp_path / "whole"
    run_arm(a, "on")
    run_arm(b, "off")
    (b / "pii" / "deadbeefdeadbeef.partial").mkdir()  # a killed run's leftover is not a finished folder
    (b / "pii" / "deadbeefdeadbeef.partial" / "x.bin").write_bytes(b"0")
    code, out = klue("merge", str(b), "--into", str(a))
    assert code == 0, out
    rows = [ln.split("  from ")[0].strip().rsplit(" ", 1) for ln in out.splitlines()[:-1]]
    # b's collect and filter are a's (one folder for both arms); its pii and count folders are new
    assert sorted((folder.split("/")[0], how.strip()) for how, folder in rows) == [
        ("collect", "already there"), ("count", "linked"), ("count", "linked"), ("filter", "already there"),
        ("pii", "linked")]
    assert out.splitlines()[-1] == f"3 stage folders merged into {a}, 2 already there"
    assert not list((a / "pii").glob("*.partial")) and leftovers(a) == []
    linked = next(p for p in (b / "pii").glob("*/*") if p.is_file() and p.name != "manifest.json"
                  and not p.parent.name.endswith(".partial"))
    assert os.stat(linked).st_ino == os.stat(a / "pii" / linked.parent.name / linked.name).st_ino  # no bytes copied

    code, out = klue("run", str(TOY_AB), "--workdir", str(a), *TOY_REG)
    assert code == 0, out
    assert set(statuses(a).values()) == {"skipped"} and len(statuses(a)) == 4 * 4  # 4 arms x 4 stages, none ran
    assert klue("run", str(TOY_AB), "--workdir", str(whole), *TOY_REG)[0] == 0
    assert stage_digests(a) == stage_digests(whole)

    code, out = klue("merge", str(b), "--into", str(a))  # again: nothing new
    assert code == 0 and out.splitlines()[-1] == f"0 stage folders merged into {a}, 5 already there"


def test_merge_refuses_a_key_with_another_manifest_a_corrupt_file_and_a_running_target(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_arm(a, "on")
    run_arm(b, "on")
    pii = next((b / "pii").iterdir())
    manifest = json.loads((pii / "manifest.json").read_text())
    manifest["files"]["extra.bin"] = {"sha256": "0" * 64, "bytes": 1}
    (pii / "manifest.json").write_text(json.dumps(manifest))
    code, out = klue("merge", str(b), "--into", str(a))
    assert code != 0 and f"{pii} and {a / 'pii' / pii.name}: the same key with other files" in out

    run_arm(c, "off")
    count = next(p for p in (c / "count").glob("*/*") if p.is_file() and p.name != "manifest.json")
    count.write_bytes(count.read_bytes() + b"!")
    code, out = klue("merge", str(c), "--into", str(a), "--verify")
    assert code != 0 and f"{count}: content differs from the manifest" in out
    assert not (a / "count" / count.parent.name).exists()  # nothing half-merged under the key
    assert not [p for p in (a / "count").iterdir() if p.name.startswith(".")]  # nor a temp folder

    (a / "status.json").write_text(json.dumps({"pid": os.getpid(), "stage": "pii"}))
    code, out = klue("merge", str(c), "--into", str(a))
    assert code != 0 and "a run is going" in out
    (a / "status.json").unlink()
    code, out = klue("merge", str(a), "--into", str(a))
    assert code != 0 and "is the workdir to merge into" in out
