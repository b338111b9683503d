"""Every recipe snippet in the docs validates: the ```yaml blocks of README.md, docs/*.md and the packages'
README.md files, and the inline `variants: {...}` / `stages: {...}` examples, each laid over the embedded default
recipe (a snippet is usually a fragment) and validated by the recipe loader's own `build_recipe` (no source paths
checked: a snippet's paths are examples). A snippet that names a key the code does not have (`pretokenize.mode`
for `analyzer`) fails here instead of in a user's first run. The dated experiment records are left out: they show
the recipes as they ran then."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.recipe import build_recipe
from pipeline.recipe_file import read_recipe_file
from pipeline.sample import SAMPLE_DIR
from pipeline.stages import STAGES

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```ya?ml\n(.*?)```", re.S)
INLINE = re.compile(r"`((?:variants|stages|sources): *\{[^`]*\})`")
PACKAGES = ("pipeline", "corpora", "tokenizer", "pretrain", "finetune")
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"),
                *(page for pkg in PACKAGES for page in (REPO / pkg).rglob("README.md"))])


def snippets() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(REPO).as_posix()
        out += [(f"{rel}:{text[:m.start()].count(chr(10)) + 1}", m.group(1))
                for rx in (BLOCK, INLINE) for m in rx.finditer(text)]
    return out


def laid_over(base: dict[str, Any], snippet: dict[str, Any]) -> dict[str, Any]:
    """`snippet` over `base`: stages merged stage by stage, param by param; any other key replaced."""
    out = dict(base)
    for k, v in snippet.items():
        if k == "stages" and isinstance(v, dict):
            stages = dict(base.get("stages") or {})
            for name, params in v.items():
                stages[name] = {**(stages.get(name) or {}), **(params or {})}
            out["stages"] = stages
        else:
            out[k] = v
    return out


def test_the_docs_hold_recipe_snippets():
    found = snippets()
    assert len(found) >= 4, found  # the check below is not vacuous


@pytest.mark.parametrize("where, text", snippets(), ids=[w for w, _ in snippets()])
def test_every_recipe_snippet_validates(where: str, text: str):
    snippet = yaml.safe_load(text)
    assert isinstance(snippet, dict), f"{where}: not a YAML mapping"
    base = read_recipe_file(SAMPLE_DIR / "recipe.yaml")
    build_recipe(laid_over(base, snippet), where, STAGES)


def test_a_snippet_with_a_wrong_key_fails():
    base = read_recipe_file(SAMPLE_DIR / "recipe.yaml")
    wrong = yaml.safe_load("variants: {tok: {mecab: {pretokenize.mode: mecab}, none: {pretokenize.mode: none}}}")
    with pytest.raises(ValueError, match="mode"):
        build_recipe(laid_over(base, wrong), "wrong", STAGES)
