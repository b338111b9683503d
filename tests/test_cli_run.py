"""`klue run` and `klue report` through the click entry point, on the toy stage graph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from testkit.toy import TOY, TOY_AB, expected_funnels

TOY_REG = ["--registry", "testkit.toy_stages:REGISTRY", "--workers", "1"]


def klue(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def _finished_run(tmp_path_factory, recipe: Path, name: str) -> Path:
    """A workdir in which `klue run` of `recipe` succeeded: what the module's run fixtures share."""
    wd = tmp_path_factory.mktemp("cli") / name
    code, out = klue("run", str(recipe), "--workdir", str(wd), *TOY_REG)
    assert code == 0, out
    return wd


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory) -> Path:
    return _finished_run(tmp_path_factory, TOY, "toy")


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory) -> Path:
    return _finished_run(tmp_path_factory, TOY_AB, "ab")


def test_run_prints_one_line_per_stage_and_skips_on_rerun(toy_run):
    code, out = klue("run", str(TOY), "--workdir", str(toy_run), *TOY_REG)
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith(("✓", "·"))]
    assert [ln.split()[1:3] for ln in lines] == [["collect", "skipped"], ["filter", "skipped"],
                                                 ["pii", "skipped"], ["count", "skipped"]]
    exp = expected_funnels()
    kept = sum(e["docs_kept"] for e in exp["filter"].values())
    seen = sum(e["docs_in"] for e in exp["filter"].values())
    assert f"docs {kept}/{seen} kept" in lines[1]
    assert f"klue report {toy_run}" in out


def test_default_workdir_is_runs_slash_recipe_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = klue("run", str(TOY), "--until", "collect", *TOY_REG)
    assert code == 0, out
    assert (tmp_path / "runs" / "toy" / "arms" / "default" / "collect" / "manifest.json").is_file()
    assert not (tmp_path / "runs" / "toy" / "filter").exists()


@pytest.mark.parametrize(("args", "expected"), [
    (["--set", "stages.filter.min_chars=abc"], "stages.filter.min_chars: Input should be a valid integer"),
    (["--until", "nope"], "--until 'nope' is not a stage; known stages: collect, filter, pii, count"),
    (["--force", "nope"], "unknown stage 'nope'"),
    (["--registry", "testkit.toy_stages:BROKEN_REGISTRY"], "stage 'filter' is declared as no_such_module_xyz"),
])
def test_bad_invocations_fail_before_any_work(tmp_path, args, expected):
    wd = tmp_path / "w"
    code, out = klue("run", str(TOY), "--workdir", str(wd), *TOY_REG, *args)
    assert code == 1 and expected in out
    assert not wd.exists()


def test_failing_stage_exits_1_and_names_it(tmp_path):
    wd = tmp_path / "w"
    code, out = klue("run", str(TOY), "--workdir", str(wd), *TOY_REG, "--set", "stages.count.explode=true")
    assert code == 1
    assert "✗ count" in out and "ValueError: toy count exploded on purpose" in out and "traceback:" in out
    assert (wd / "arms/default/pii/manifest.json").is_file()


def test_report_markdown_matches_the_stage_counts(toy_run):
    code, out = klue("report", str(toy_run))
    assert code == 0
    md, _, where = out.rpartition("report: ")  # the markdown on stdout, then the page's path on stderr
    assert (toy_run / "report.md").read_text() == md
    assert where.startswith(f"{toy_run / 'report.html'} (and report.md") and (toy_run / "report.html").is_file()
    exp = expected_funnels()
    for stage, reason in (("collect", "empty"), ("filter", "too_short")):
        rows = []
        for src, e in exp[stage].items():
            q = e.get("quarantined", 0)
            rows.append([src, e["docs_in"], e["docs_kept"], f"{reason}: {e[reason]}", q, e["chars_in"],
                         e["chars_kept"], "ok"])
        total = ["**total**", *[sum(r[i] for r in rows) for i in (1, 2)],
                 f"{reason}: {sum(e[reason] for e in exp[stage].values())}", sum(r[4] for r in rows),
                 *[sum(r[i] for r in rows) for i in (5, 6)], "ok"]
        section = md.split(f"### {stage} ")[1].split("###")[0]
        for row in [*rows, total]:
            assert "| " + " | ".join(map(str, row)) + " |" in section, (stage, row)
    digits = sum(e["digits"] for e in exp["filter"].values())
    assert f"| digits_replaced | {digits} |" in md.split("### pii ")[1]
    assert "![sizes.png](count/" in md and "PROBLEMS" not in md
    kept = {s: e["docs_kept"] for s, e in exp["filter"].items()}
    count = md.split("### count ")[1]
    assert "| docs | source |\n|---|---|\n" + "".join(f"| {n} | {s} |\n" for s, n in kept.items()) in count
    assert "|  | docs |\n|---|---|\n" + "".join(f"| {s} | {n} |\n" for s, n in kept.items()) in count


def test_report_json_numbers(toy_run):
    code, out = klue("report", str(toy_run), "--format", "json")
    assert code == 0
    data = json.loads(out)
    stages = {s["stage"]: s for s in data["arms"][0]["stages"]}
    exp = expected_funnels()
    for src, e in exp["collect"].items():
        f = stages["collect"]["by_source"][src]
        assert (f["docs_in"], f["docs_kept"], f["quarantined"]) == (e["docs_in"], e["docs_kept"], e["quarantined"])
    assert stages["filter"]["funnel"]["dropped"] == {"too_short": sum(e["too_short"] for e in exp["filter"].values())}
    assert stages["count"]["report"]["docs"] == sum(e["docs_kept"] for e in exp["filter"].values())
    assert stages["count"]["plots"] == [f"{stages['count']['path']}/plots/sizes.png"]
    assert (toy_run / stages["count"]["plots"][0]).is_file()
    assert data["problems"] == [] and all(s["checks"] == [] for s in stages.values())


def test_report_side_by_side_arms(ab_run):
    data = json.loads(klue("report", str(ab_run), "--format", "json")[1])
    comp = data["comparison"]
    assert set(comp["keys"]["collect"].values()) == set(comp["shared"]["collect"]) and \
        len(comp["shared"]["collect"]) == 1
    assert len(comp["shared"]["pii"]) == 2 and comp["shared"]["count"] == []
    assert comp["scalars"]["pii.digits_replaced"]["pii=off,count=plain"] == 0
    assert comp["scalars"]["pii.digits_replaced"]["pii=on,count=fancy"] == \
        sum(e["digits"] for e in expected_funnels()["filter"].values())
    md = klue("report", str(ab_run))[1]
    assert "## Arms side by side" in md and "### collect — shared with arm `pii=on,count=plain`" in md
    digits = sum(e["digits"] for e in expected_funnels()["filter"].values())
    assert f"| pii.digits_replaced | {digits} | {digits} | 0 | 0 |" in md
    assert "| count.note | plain | fancy | plain | fancy |" in md
    assert "| filter.min_chars |" not in md.split("## Arm ")[0]  # equal in every arm: not in the comparison
    code, one = klue("report", str(ab_run), "--arm", "pii=off,count=fancy")
    assert code == 0 and "Arms side by side" not in one and (ab_run / "report.pii=off,count=fancy.md").is_file()
    code, out = klue("report", str(ab_run), "--arm", "pii=maybe")
    assert code == 1 and "no arm 'pii=maybe'" in out and "pii=on,count=plain" in out


def test_report_flags_counts_that_do_not_reconcile(tmp_path):
    wd = tmp_path / "w"
    assert klue("run", str(TOY), "--workdir", str(wd), *TOY_REG, "--until", "filter")[0] == 0
    m = wd / "arms/default/filter/manifest.json"
    data = json.loads(m.read_text())
    data["by_source"]["alpha"]["docs_kept"] += 1  # a source that no longer reconciles, nor sums to the total
    m.write_text(json.dumps(data))
    code, md = klue("report", str(wd))
    assert code == 0
    assert "⚠ PROBLEMS" in md and "**MISMATCH**" in md
    assert "stage filter: COUNTS DO NOT RECONCILE: source 'alpha': docs: in=" in md


def test_report_without_a_run(tmp_path):
    code, out = klue("report", str(tmp_path))
    assert code == 1 and "no run.json here" in out


def test_commands_module_imports_only_click():
    code = ("import sys, pipeline.commands; heavy = {'pydantic', 'rich', 'yaml', 'torch', 'pyarrow'} & "
            "set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
