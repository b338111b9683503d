"""`klue run --dry-run`: the plan without running anything, on the toy graph and on every shipped recipe; and
`extends:`, which the shipped recipes use to share one recipe's sources and curation settings."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.recipe import RecipeError, load_recipe, read_recipe_file
from testkit.toy import TOY, TOY_AB

TOY_REG = ["--registry", "testkit.toy_stages:REGISTRY", "--workers", "1"]
RECIPES = sorted((Path(__file__).resolve().parent.parent / "recipes").glob("*.yaml"))
SAMPLE_RECIPE = Path(__file__).resolve().parent.parent / "pipeline" / "sample" / "recipe.yaml"


def klue(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def _states(out: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^  (\w+)\s+(cached|would run)\s+key", out, re.M)]


def test_dry_run_writes_nothing_then_shows_what_is_cached(tmp_path):
    wd = tmp_path / "w"
    code, out = klue("run", str(TOY), "--workdir", str(wd), "--dry-run", *TOY_REG)
    assert code == 0, out
    assert not wd.exists() and "nothing was run." in out
    assert _states(out) == [("collect", "would run"), ("filter", "would run"), ("pii", "would run"),
                            ("count", "would run")]
    assert klue("run", str(TOY), "--workdir", str(wd), *TOY_REG)[0] == 0
    code, out = klue("run", str(TOY), "--workdir", str(wd), "--dry-run", *TOY_REG)
    assert [s for _, s in _states(out)] == ["cached"] * 4 and "4 cached, 0 would run" in out
    # a param of the second stage changes its key and every key after it, not the first stage's
    code, out = klue("run", str(TOY), "--workdir", str(wd), "--dry-run", "--set", "stages.filter.min_chars=3",
                     *TOY_REG)
    assert _states(out) == [("collect", "cached"), ("filter", "would run"), ("pii", "would run"),
                            ("count", "would run")]
    code, out = klue("run", str(TOY), "--workdir", str(wd), "--dry-run", "--force", "pii", *TOY_REG)
    assert [s for _, s in _states(out)] == ["cached", "cached", "would run", "would run"]


def test_dry_run_keys_are_the_keys_a_run_uses_and_shared_folders_are_listed_once(tmp_path):
    wd = tmp_path / "ab"
    code, plan = klue("run", str(TOY_AB), "--workdir", str(wd), "--dry-run", *TOY_REG)
    assert code == 0
    code, out = klue("run", str(TOY_AB), "--workdir", str(wd), *TOY_REG)
    planned = re.findall(r"^  (\w+)\s+would run\s+key (\w{8})  (.*)$", plan, re.M)
    ran = {(m.group(1), m.group(2)) for m in re.finditer(r"^✓ (\w+)\s+ran .* key (\w{8})", out, re.M)}
    assert {(s, k) for s, k, _ in planned} == ran
    shared = [s for s, _, arms in planned if arms == "all arms"]
    assert shared and shared[0] == "collect"  # upstream of the variant: one folder for both arms


def test_a_recipe_error_is_reported_by_the_dry_run(tmp_path):
    code, out = klue("run", str(TOY), "--workdir", str(tmp_path / "w"), "--dry-run", "--set",
                     "stages.filter.no_such_param=1", *TOY_REG)
    assert code != 0 and "stages.filter" in out and not (tmp_path / "w").exists()


@pytest.mark.shared_data
@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_every_shipped_recipe_validates_and_plans(recipe, tmp_path, monkeypatch):
    if not os.environ.get("KLUE_DATA_DIR"):
        pytest.skip("KLUE_DATA_DIR is not set: the shipped recipes read their sources from the shared data")
    data = Path(os.environ["KLUE_DATA_DIR"])
    if "ja" in recipe.stem and not (data / "ja").is_dir():
        pytest.skip(f"{data / 'ja'} is missing: the Japanese recipe reads the shared Japanese corpus")
    wd = tmp_path / "w"
    code, out = klue("run", str(recipe), "--workdir", str(wd), "--dry-run")
    assert code == 0, out
    assert not wd.exists() and "nothing was run." in out
    rec = load_recipe(recipe)
    stages = [s for s, _ in _states(out)]
    assert list(dict.fromkeys(stages)) == list(rec.stages)  # every stage, in run order
    assert len(stages) >= len(rec.stages) and "parameters:" in out and "tokens per step:" in out
    if "roberta" in recipe.stem or "modernbert" in recipe.stem:
        p = rec.params("pretrain")
        # KLUE's 68M / 111M / 337M with a 32k vocabulary; ModernBERT's parameter-matched GeGLU and no biases
        expected = {("roberta", "small"): "68,124,416", ("roberta", "base"): "110,651,648",
                    ("roberta", "large"): "336,690,432", ("modernbert", "small"): "67,675,904",
                    ("modernbert", "base"): "110,152,448"}[p.architecture, p.model]
        assert f"parameters: {expected}" in out
        assert {"roberta": "RobertaForMaskedLM", "modernbert": "ModernBertForMaskedLM"}[p.architecture] in out
        assert '"bf16": {"enabled": true}' in out and "x 8 processes" in out
    if rec.variants:
        assert len(rec.arms) >= 2 and sum(1 for s in stages if s == "pretrain") == len(rec.arms)


def test_the_embedded_default_plans_without_any_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("KLUE_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out = klue("run", "--dry-run")
    assert code == 0, out
    assert "klue-sample" in out and "nothing was run." in out and "warning" not in out
    assert [s for s, _ in _states(out)][-2:] == ["pretrain", "finetune"]
    assert "runs: 8 tasks x 2 inits (pretrained, random-init) x 2 seeds = 32" in out
    assert not (tmp_path / "runs").exists() and SAMPLE_RECIPE.is_file()


def test_extends_merges_mappings_and_replaces_lists(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({
        "name": "base", "seed": 1, "sources": [{"name": "a", "path": "a.txt"}],
        "stages": {"filter": {"min_chars": 5, "per_source": {"a": {"min_chars": 2}}}, "dedup": {"ngram": 5}}}))
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({
        "extends": "base.yaml", "name": "child", "sources": [{"name": "b", "path": "b.txt"}],
        "stages": {"filter": {"per_source": {"a": {"max_chars": 9}}}, "pretrain": {"model": "small"}}}))
    raw = read_recipe_file(tmp_path / "child.yaml")
    assert raw == {"name": "child", "seed": 1, "sources": [{"name": "b", "path": "b.txt"}],
                   "stages": {"filter": {"min_chars": 5, "per_source": {"a": {"min_chars": 2, "max_chars": 9}}},
                              "dedup": {"ngram": 5}, "pretrain": {"model": "small"}}}


@pytest.mark.parametrize(("files", "message"), [
    ({"a.yaml": {"extends": "b.yaml", "name": "a"}, "b.yaml": {"extends": "a.yaml", "name": "b"}},
     "is already in the chain"),
    ({"a.yaml": {"extends": "missing.yaml", "name": "a"}}, "missing.yaml is not a file"),
    ({"a.yaml": {"extends": ["b.yaml"], "name": "a"}}, "extends: expected the path of a recipe file"),
])
def test_extends_errors_name_the_file(tmp_path, files, message):
    for name, raw in files.items():
        (tmp_path / name).write_text(yaml.safe_dump(raw))
    with pytest.raises(RecipeError, match=message) as e:
        load_recipe(tmp_path / "a.yaml")
    assert "a.yaml" in str(e.value)


@pytest.mark.shared_data
def test_the_dry_run_names_every_benchmark_file_a_klue_reproduction_lacks(tmp_path, monkeypatch):
    """A KLUE data folder with the corpus and YNAT only: the plan names each file decontaminate, the vocabulary's
    fidelity report and the finetune stage would miss, before any stage runs, and each one it has."""
    shared = os.environ.get("KLUE_DATA_DIR")
    if not shared:
        pytest.skip("KLUE_DATA_DIR is not set: the recipe reads its sources from the shared data")
    data = tmp_path / "data"
    (data / "klue").mkdir(parents=True)
    (data / "corpus").symlink_to(Path(shared).resolve() / "corpus")
    (data / "klue" / "ynat").symlink_to(Path(shared).resolve() / "klue" / "ynat")
    monkeypatch.setenv("KLUE_DATA_DIR", str(data))
    code, out = klue("run", str(RECIPES[0].parent / "klue-roberta-base.yaml"), "--workdir", str(tmp_path / "w"),
                     "--dry-run")
    assert code == 0 and "nothing was run." in out, out
    warned = [line for line in out.splitlines() if line.startswith("warning:")]
    missing = {m.group(1) for line in warned for m in [re.search(r"MISSING: (\S+)", line)] if m}
    lacking = {str(data / "klue" / f) for f in (
        "sts/klue-sts-v1.1_dev.json", "nli/klue-nli-v1.1_dev.json", "ner/klue-ner-v1.1_dev.tsv",
        "re/klue-re-v1.1_dev.json", "dp/klue-dp-v1.1_dev.tsv", "mrc/korquad-v1.0_dev.json")}
    assert lacking <= missing, sorted(lacking - missing)
    assert sum("warning: decontaminate (all arms): benchmark" in line for line in warned) == 6
    assert sum("warning: vocab (all arms): report text" in line for line in warned) == 2
    assert any(line.startswith("warning: finetune") and "MISSING" in line for line in warned)
    assert f"benchmark ynat-v1_dev: {data / 'klue' / 'ynat' / 'ynat-v1_dev.json'} (" in out
    assert not (tmp_path / "w").exists()


def test_the_data_page_lists_each_task_s_files_as_the_registry_finds_them():
    """docs/data.md's layout table is the registry's (`Task.files`): a renamed pattern shows here first."""
    from finetune.registry import get_task

    page = (Path(__file__).resolve().parent.parent / "docs" / "data.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (\w+) \| `(\w+)/` \| `([^`]+)`[^|]* \| `([^`]+)`[^|]* \| `(\w+)` \|$", page, re.M)}
    assert sorted(rows) == sorted(["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst"])
    for name, (folder, train, dev, config) in rows.items():
        files = get_task(name).files
        assert (folder, config) == (files.subdir, files.hf_config), name
        assert train == files.train_glob.split("|")[0] and dev == files.dev_glob.split("|")[0], name
