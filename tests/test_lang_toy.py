"""A language is one folder and one registry entry: a toy language from a fixture folder (tests/fixtures/lang/
klue_toy_lang: whitespace words, e-mail-only PII, no MeCab dictionary), registered here, runs collect -> encode
through the real runner, and every stage with a language uses it; a missing language is an error, not Korean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpora.lang import LANGUAGES, get_language
from corpora.pii.types import PACKS, pack_facts
from pipeline.recipe import load_recipe
from pipeline.recipe_file import RecipeError
from pipeline.registry import RegistryError
from pipeline.runner import Runner

FOLDER = Path(__file__).resolve().parent / "fixtures" / "lang"
RECIPE = FOLDER / "recipe.yaml"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(FOLDER))
    monkeypatch.setenv("KLUE_TOY_LANG_DIR", str(FOLDER))
    LANGUAGES.register("zz", "klue_toy_lang:TOY")
    yield get_language("zz")
    LANGUAGES.unregister("zz")


def test_the_registry_is_the_one_list_of_languages(toy):
    assert list(LANGUAGES)[-1] == "zz" and toy.name == "Toy"
    # the PII facts are a view of the languages: the toy's appears with it, and goes with it
    assert list(PACKS) == [*(c for c in LANGUAGES if c != "zz"), "zz"] and pack_facts("zz").types == ("EMAIL",)
    with pytest.raises(RegistryError, match="already registered"):
        LANGUAGES.register("ZZ", "klue_toy_lang:TOY")


def test_a_language_not_registered_is_an_error(monkeypatch):
    monkeypatch.setenv("KLUE_TOY_LANG_DIR", str(FOLDER))
    with pytest.raises(RegistryError, match=r"unknown language 'zz'"):
        get_language("zz")
    with pytest.raises(ValueError, match=r"no PII recognizers for language 'zz'"):
        pack_facts("zz")
    with pytest.raises(RecipeError, match=r"'zz'"):
        load_recipe(RECIPE, until="collect")


def test_a_language_without_a_mecab_dictionary_runs_only_the_plain_pretokenize_arm(toy):
    with pytest.raises(RecipeError, match=r"language 'zz' has no MeCab dictionary"):
        load_recipe(RECIPE, ["stages.pretokenize.analyzer=mecab"], until="pretokenize")


def test_the_toy_language_runs_collect_to_encode(toy, tmp_path):
    recipe = load_recipe(RECIPE, until="encode")
    assert recipe.language == "zz"
    assert {n: p.language for n, p in recipe.stages.items() if "language" in type(p).model_fields} == dict.fromkeys(
        ("filter", "decontaminate", "pii_detect", "toxicity", "pii", "pretokenize", "vocab"), "zz")
    wd = tmp_path / "w"
    Runner(recipe, wd, until="encode").run()
    run = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "ok"
    (arm,) = run["arms"]
    ms = {s["stage"]: json.loads((wd / s["path"] / "manifest.json").read_text(encoding="utf-8"))
          for s in arm["stages"]}
    assert list(ms) == ["collect", "filter", "dedup", "decontaminate", "pii_detect", "toxicity", "pii", "pretokenize",
                        "vocab", "encode"]
    assert ms["collect"]["funnel"]["docs_kept"] == 63
    # the toy's rules: its words and thresholds (the two junk lines), its dedup, its benchmark words
    assert ms["filter"]["funnel"]["docs_kept"] == 61
    assert ms["dedup"]["funnel"]["docs_kept"] == 60
    assert ms["decontaminate"]["funnel"]["docs_kept"] == 59
    # its PII pack found the one e-mail address, and the placeholder replaced it
    report = ms["pii_detect"]["meta"]["report"]
    assert report["language"] == "zz" and report["types"] == ["EMAIL"] and report["spans_per_type"] == {"EMAIL": 1}
    assert ms["pii"]["meta"]["placeholder_tokens"] == ["[EMAIL]"] and ms["pii"]["meta"]["report"]["spans_changed"] == 1
    assert ms["pretokenize"]["meta"]["language"] == "zz" and ms["pretokenize"]["meta"]["training_scheme"] == "bert"
    assert ms["encode"]["funnel"]["docs_in"] == 59 and ms["encode"]["meta"]["tokens"]["train"] > 0
