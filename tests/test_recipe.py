"""Recipe loading: validation errors name the file and key path, env expansion, --set, variants -> arms."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.recipe import RecipeError, load_recipe
from pipeline.stages import stage_registry
from testkit import toy_stages
from testkit.toy import DATA, TOY, TOY_AB

REG = stage_registry(toy_stages.REGISTRY)

BASE = f"""
name: t
sources:
  - {{name: alpha, path: {DATA / 'alpha.txt'}, format: text}}
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "recipe.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def load_error(path: Path, overrides: tuple[str, ...] = ()) -> str:
    with pytest.raises(RecipeError) as e:
        load_recipe(path, overrides, registry=REG)
    return str(e.value)


def test_valid_recipe_fills_defaults_and_resolves_relative_paths():
    r = load_recipe(TOY, registry=REG)
    assert r.name == "toy" and r.seed == 7
    assert [s.path for s in r.sources] == [str(DATA / "alpha.txt"), str(DATA / "beta.txt")]
    assert r.sources[0].license == "CC0" and r.sources[1].license == "unknown"
    assert r.params("collect").shard_size == 3
    assert r.params("filter").min_chars == 5 and r.params("filter").max_digit_ratio == 1.0
    assert r.params("pii").enabled is True  # absent from the file: defaults
    assert [a.name for a in r.arms] == ["default"] and r.arms[0].recipe.params("filter").min_chars == 5


@pytest.mark.parametrize(
    ("body", "key_path", "expected"),
    [
        ("sedd: 3\n", "sedd", "unknown key; expected one of: name, seed, sources, stages, variants"),
        ("stages:\n  filter: {min_char: 3}\n", "stages.filter.min_char",
         "unknown key; expected one of: min_chars, max_digit_ratio, cheat"),
        ("stages:\n  filter: {min_chars: lots}\n", "stages.filter.min_chars", "valid integer"),
        ("stages:\n  filter: {max_digit_ratio: 1.5}\n", "stages.filter.max_digit_ratio",
         "less than or equal to 1"),
        ("stages:\n  filtr: {}\n", "stages.filtr", "unknown stage; known stages: collect, filter, pii, count"),
        ("seed: many\n", "seed", "valid integer"),
    ],
)
def test_validation_errors_name_file_and_key_path(tmp_path, body, key_path, expected):
    path = write(tmp_path, BASE + body)
    msg = load_error(path)
    assert msg.startswith(f"recipe {path}: {key_path}: ")
    assert expected in msg
    assert "\n" not in msg  # one message, one problem


def test_unknown_key_inside_a_source(tmp_path):
    msg = load_error(write(tmp_path, BASE.replace("format: text", "format: text, formatt: csv")))
    assert ": sources.0.formatt: unknown key; expected one of: name, path, format" in msg


def test_missing_source_file_and_empty_glob(tmp_path):
    msg = load_error(write(tmp_path, BASE + "  - {name: b, path: nope/missing.txt, format: text}\n"))
    assert f"sources.1.path: '{tmp_path / 'nope/missing.txt'}' does not exist (source 'b')" in msg
    msg = load_error(write(tmp_path, BASE + "  - {name: b, path: 'data/*.nothing', format: text}\n"))
    assert "sources.1.path: no file matches" in msg and "*.nothing" in msg


def test_unset_env_var_names_variable_and_key(tmp_path, monkeypatch):
    monkeypatch.delenv("KLUE_TEST_SURELY_UNSET", raising=False)
    path = write(tmp_path, BASE + "  - {name: b, path: '${KLUE_TEST_SURELY_UNSET}/x.txt', format: text}\n")
    msg = load_error(path)
    assert msg.startswith(f"recipe {path}: sources.1.path: environment variable KLUE_TEST_SURELY_UNSET is not set")


def test_env_expansion_in_paths_and_params(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_TOY_DIR", str(DATA))
    monkeypatch.setenv("KLUE_TOY_NOTE", "from-env")
    path = write(tmp_path, "name: t\nsources:\n  - {name: a, path: '${KLUE_TOY_DIR}/beta.txt', format: text}\n"
                           "stages:\n  count: {note: 'n-${KLUE_TOY_NOTE}'}\n")
    r = load_recipe(path, registry=REG)
    assert r.sources[0].path == str(DATA / "beta.txt")
    assert r.params("count").note == "n-from-env"


def test_set_overrides(tmp_path):
    r = load_recipe(TOY, ["stages.filter.min_chars=9", "sources.1.max_docs=2", "seed=11",
                          "stages.pii.enabled=off", "stages.count.note='007'"], registry=REG)
    assert r.params("filter").min_chars == 9 and r.params("filter").max_digit_ratio == 1.0
    assert r.sources[1].max_docs == 2 and r.sources[0].max_docs is None
    assert r.seed == 11 and r.params("pii").enabled is False and r.params("count").note == "007"
    assert "index 5 out of range" in load_error(TOY, ("sources.5.max_docs=1",))
    assert "expected PATH=VALUE" in load_error(TOY, ("stages.filter.min_chars",))
    msg = load_error(TOY, ("stages.filter.min_chars=-1",))
    assert "stages.filter.min_chars: Input should be greater than or equal to 0 (got -1)" in msg


def test_variants_expand_to_arms_in_declaration_order():
    r = load_recipe(TOY_AB, registry=REG)
    assert [a.name for a in r.arms] == ["pii=on,count=plain", "pii=on,count=fancy", "pii=off,count=plain",
                                        "pii=off,count=fancy"]
    by_name = {a.name: a for a in r.arms}
    assert by_name["pii=off,count=fancy"].values == {"pii": "off", "count": "fancy"}
    assert by_name["pii=off,count=fancy"].recipe.params("pii").enabled is False
    assert by_name["pii=on,count=fancy"].recipe.params("pii").enabled is True
    assert by_name["pii=on,count=fancy"].recipe.params("count").note == "fancy"  # long form, nested mapping
    assert by_name["pii=on,count=plain"].recipe.params("count").note == "plain"  # long form, dotted key
    # stages outside the variants are the same object in every arm (same params -> same keys)
    assert len({id(a.recipe.params("filter")) for a in r.arms}) == 1


def test_shorthand_uses_the_stage_variant_field(tmp_path):
    r = load_recipe(write(tmp_path, BASE + "variants:\n  count: [x, y]\n"), registry=REG)
    assert [a.name for a in r.arms] == ["count=x", "count=y"]
    assert [a.recipe.params("count").note for a in r.arms] == ["x", "y"]  # ToyCount.variant_field = "note"


def test_shorthand_off_means_the_word_for_a_text_field(tmp_path):
    r = load_recipe(write(tmp_path, BASE + "variants:\n  count: [on, off, 'no']\n"), registry=REG)
    assert [a.name for a in r.arms] == ["count=on", "count=off", "count=no"]
    assert [a.recipe.params("count").note for a in r.arms] == ["on", "off", "no"]


def test_variant_errors(tmp_path):
    msg = load_error(write(tmp_path, BASE + "variants:\n  pii: [on, maybe]\n"))
    assert "(in arm pii=maybe): stages.pii.enabled: Input should be a valid boolean" in msg
    msg = load_error(write(tmp_path, BASE + "variants:\n  tok: [a, b]\n"))
    assert "variants.tok: the shorthand `tok: [a, b]` needs a stage name" in msg
    msg = load_error(write(tmp_path, BASE + "variants:\n  x: {a: {nosuch.p: 1}}\n"))
    assert "variants.x.a.nosuch.p: unknown stage 'nosuch'" in msg
    msg = load_error(write(tmp_path, BASE + "variants:\n  pii: [on, on]\n"))
    assert "variants.pii: duplicate value(s) on" in msg


def test_missing_stage_module_is_a_clear_error():
    with pytest.raises(RecipeError, match=r"stage 'filter' is declared as no_such_module_xyz:FilterStage but its "
                                          r"module cannot be imported: ModuleNotFoundError"):
        load_recipe(TOY, registry=stage_registry(toy_stages.BROKEN_REGISTRY))


def test_until_limits_the_stages_that_are_imported(tmp_path):
    path = write(tmp_path, BASE + "stages:\n  collect: {shard_size: 2}\n")
    reg = stage_registry(toy_stages.BROKEN_REGISTRY)
    r = load_recipe(path, registry=reg, until="collect")  # the broken filter module is never imported
    assert list(r.stages) == ["collect"] and r.params("collect").shard_size == 2
    with pytest.raises(RecipeError, match="no_such_module_xyz"):
        load_recipe(path, registry=reg)


def test_stage_input_files_resolve_against_the_recipe_folder(tmp_path, monkeypatch):
    """Benchmark files and fidelity texts named relative to the recipe work from any working directory."""
    folder = tmp_path / "recipes"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "a.txt").write_text("text\n", encoding="utf-8")
    path = folder / "r.yaml"
    path.write_text(
        "name: rel\nsources:\n  - {name: a, path: data/a.txt, format: text}\n"
        "stages:\n"
        "  decontaminate: {benchmarks: [{path: data/dev.json}, {path: /abs/other.json}]}\n"
        "  vocab: {report_texts: [data/dev.json, ~/x.tsv]}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the recipe's folder
    r = load_recipe("recipes/r.yaml")
    assert [b.path for b in r.params("decontaminate").benchmarks] == [str(folder / "data" / "dev.json"),
                                                                       "/abs/other.json"]
    assert r.params("vocab").report_texts == [str(folder / "data" / "dev.json"), str(Path("~/x.tsv").expanduser())]


def test_a_relative_env_path_is_relative_to_the_shell_not_the_recipe(tmp_path, monkeypatch):
    """`KLUE_DATA_DIR=../shared/data klue run recipes/x.yaml`, as the README says: the variable is read the way
    the user's shell sees it; a path written literally in the recipe stays relative to the recipe's folder."""
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "a.txt").write_text("text\n", encoding="utf-8")
    (tmp_path / "proj" / "recipes" / "lit").mkdir(parents=True)
    (tmp_path / "proj" / "recipes" / "lit" / "b.txt").write_text("text\n", encoding="utf-8")
    path = tmp_path / "proj" / "recipes" / "r.yaml"
    path.write_text("name: env\nsources:\n  - {name: a, path: '${KLUE_TOY_DATA}/a.txt', format: text}\n"
                    "  - {name: b, path: 'lit/./b.txt', format: text}\n"
                    "stages:\n  decontaminate: {benchmarks: [{path: '${KLUE_TOY_DATA}/../data/dev.json'}]}\n",
                    encoding="utf-8")
    monkeypatch.chdir(tmp_path / "proj")
    monkeypatch.setenv("KLUE_TOY_DATA", "../shared/data")
    r = load_recipe("recipes/r.yaml")
    assert r.sources[0].path == str(tmp_path / "shared" / "data" / "a.txt")
    assert r.sources[1].path == str(tmp_path / "proj" / "recipes" / "lit" / "b.txt")  # normalised
    assert r.params("decontaminate").benchmarks[0].path == str(tmp_path / "shared" / "data" / "dev.json")
    # another spelling of the same folder gives the same paths, hence the same stage cache keys
    monkeypatch.setenv("KLUE_TOY_DATA", str(tmp_path / "proj" / ".." / "shared" / "data"))
    again = load_recipe("recipes/r.yaml")
    assert [s.path for s in again.sources] == [s.path for s in r.sources]


def test_executor_key_is_validated_and_reaches_every_arm(tmp_path):
    assert load_recipe(TOY, registry=REG).executor == "local"
    r = load_recipe(TOY, ["executor=ray"], registry=REG)
    assert r.executor == "ray" and all(a.recipe.executor == "ray" for a in r.arms)
    with pytest.raises(RecipeError, match=r"executor"):
        load_recipe(TOY, ["executor=slurm"], registry=REG)


E2E = Path(__file__).resolve().parent / "fixtures" / "e2e" / "recipe.yaml"


def _languages(recipe) -> dict[str, str]:
    return {n: p.language for n, p in recipe.stages.items() if "language" in type(p).model_fields}


def test_the_recipe_language_reaches_every_stage_with_a_language_param(monkeypatch):
    monkeypatch.setenv("KLUE_E2E_DIR", str(E2E.parent))
    ko = load_recipe(E2E, until="pii")
    assert ko.language == "ko" and ko.snapshot()["language"] == "ko"
    with_language = ("filter", "decontaminate", "pii_detect", "toxicity", "pii", "vocab")  # the fixture's stages
    assert _languages(ko) == dict.fromkeys(with_language, "ko")
    ja = load_recipe(E2E, ["language=ja"], until="pii")
    assert _languages(ja) == dict.fromkeys(with_language, "ja")
    assert [_languages(a.recipe) for a in ja.arms] == [_languages(ja)] * 2  # both arms of `pii: [on, off]`
    # the language is part of every such stage's params, hence of its key; the others are untouched
    assert ja.stages["filter"] != ko.stages["filter"] and ja.stages["dedup"] == ko.stages["dedup"]


def test_a_stage_language_other_than_the_recipes_is_an_error(monkeypatch):
    monkeypatch.setenv("KLUE_E2E_DIR", str(E2E.parent))
    with pytest.raises(RecipeError, match=r"stages\.filter\.language: 'ko' differs from the recipe's language "
                                          r"'ja'; set `language:` at the top of the recipe instead"):
        load_recipe(E2E, ["language=ja", "stages.filter.language=ko"], until="filter")
    with pytest.raises(RecipeError, match=r"language: .*'xx'.*ko"):
        load_recipe(E2E, ["language=xx"], until="filter")


def test_a_per_source_entry_for_a_source_the_recipe_does_not_have_is_an_error():
    """Replacing `sources:` (an `extends:`, a `--set`) would otherwise leave per_source settings that apply to
    nothing, silently."""
    from pipeline.recipe import RecipeError, load_recipe
    from pipeline.sample import SAMPLE_DIR

    rec = load_recipe(SAMPLE_DIR / "recipe.yaml", until="filter")
    first = rec.sources[0].name
    ok = load_recipe(SAMPLE_DIR / "recipe.yaml", [f"stages.filter.per_source={{{first}: {{min_chars: 5}}}}"],
                     until="filter")
    assert ok.stages["filter"].per_source == {first: {"min_chars": 5}}
    with pytest.raises(RecipeError, match=r"stages\.filter\.per_source: 'gone' is not a source of this recipe "
                                          rf"\(sources: {first}, "):
        load_recipe(SAMPLE_DIR / "recipe.yaml", ["stages.filter.per_source={gone: {min_chars: 5}}"], until="filter")
