"""Recipes: the YAML file that says which sources to read, how every stage is configured, and which ablation
arms to run. This module holds the schema (`Recipe`, `Arm`) and the loading that checks a file against it.

Everything a run needs is checked here, before any work starts, so that a typo in the last stage's params does
not surface after an hour of curation: unknown keys, wrong types, out-of-range values, unset environment
variables, missing source files and unknown stage names all become one `RecipeError` naming the recipe file and
the key path (`stages.filter.min_chars`).

Order of processing: YAML (`extends:` applied) -> `--set` overrides -> `${ENV}` expansion
(`pipeline.recipe_file`) -> relative input paths (sources, and the params each stage declares in
`Stage.input_paths`) resolved against the recipe's folder (`pipeline.recipe_paths`) -> schema -> `sources`
validated with the graph's `Stage.sources_model` -> per-stage params models -> variants expanded into arms
(`pipeline.recipe_variants`) -> source paths exist.

The stage graph comes from a `pipeline.stages.StageRegistry` (the production one by default); nothing here
imports a stage package until the registry is asked for a stage the recipe needs.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from pipeline.recipe_file import (
    RecipeError,
    apply_override,
    display_keys,
    display_value,
    expand_env,
    read_recipe_file,
    stage_class,
)
from pipeline.recipe_paths import anchor_env_paths, input_path_patterns, resolve_relative_paths
from pipeline.recipe_variants import arm_stage_dicts, variant_overrides
from pipeline.stage import Stage, StageParams
from pipeline.stages import STAGES, StageRegistry

# The language of a recipe (or a command: `klue pii`, `klue tokenizer-report`) that names none: the one default.
# Below the recipe and the commands every function takes the language it runs (a missing one is an error).
DEFAULT_LANGUAGE = "ko"


class Recipe(BaseModel):
    """A validated recipe. After `load_recipe`, `stages` maps every stage the run needs to its params model
    instance (defaults for stages the file does not mention); `variants` keeps the file's declaration."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="names the default workdir runs/<name>")
    seed: int = 42
    sources: list[Any] = Field(default_factory=list, description="validated by the graph's Stage.sources_model")
    stages: dict[str, Any] = Field(default_factory=dict)
    variants: dict[Any, Any] = Field(default_factory=dict)
    language: str = Field(
        DEFAULT_LANGUAGE, description="ISO 639-1 code of the corpus's language (a folder of corpora/lang); every "
                          "stage with a `language` param takes it, so a new language is this one key. Checked there, by the "
                          "stages' `LanguageCode` type, not here: the ground floor knows no language")
    executor: Literal["local", "ray"] = Field(
        "local", description="where shard tasks run: this machine's process pool, or Ray tasks on the cluster at "
                             "--ray-address / $RAY_ADDRESS; outputs are the same, so it is in no key")

    _path: Path | None = PrivateAttr(default=None)
    _arms: list[Arm] = PrivateAttr(default_factory=list)

    @property
    def path(self) -> Path | None:
        """The recipe file this was loaded from (None when built in code)."""
        return self._path

    @property
    def arms(self) -> list[Arm]:
        """The arms of the ablation, in declaration order (one arm named `default` without variants)."""
        return self._arms or [Arm("default", {}, self)]

    def params(self, stage: str) -> StageParams:
        return self.stages[stage]

    def snapshot(self) -> dict[str, Any]:
        """JSON-able copy for run.json: the recipe as it was validated (env expanded, defaults filled)."""
        return {
            "name": self.name,
            "seed": self.seed,
            "language": self.language,
            "sources": [s.model_dump(mode="json") for s in self.sources],
            "stages": {k: v.model_dump(mode="json") for k, v in self.stages.items()},
            "variants": {display_value(k): [display_value(x) for x in v] if isinstance(v, list) else display_keys(v)
                         for k, v in self.variants.items()},
        }


@dataclass(frozen=True)
class Arm:
    """One path through the graph: a value for every variant, and the recipe with those values applied."""

    name: str  # "pii=on,pretokenize=none", or "default"
    values: dict[str, str]  # variant name -> value as shown ("on"/"off" for YAML booleans)
    recipe: Recipe


# ---------------------------------------------------------------------------------------------------------
# loading


def load_recipe(path: str | Path, overrides: Sequence[str] = (), registry: StageRegistry | None = None,
                until: str | None = None, check_sources: bool = True) -> Recipe:
    """Read, override, expand and validate a recipe file; raise `RecipeError` on the first kind of problem.

    `overrides`: `PATH=VALUE` strings (`stages.filter.min_chars=20`, `sources.0.max_docs=100`), the value
    parsed as YAML. `until`: the last stage the run needs; stages after it are validated only when the recipe
    configures them (so a run `--until dedup` does not import the pretraining code unless the recipe names it).
    """
    path = Path(path)
    registry = registry or STAGES
    where = f"recipe {path}"
    raw = read_recipe_file(path)
    for ov in overrides:
        apply_override(raw, ov, where)
    patterns = input_path_patterns(raw, registry, where)
    anchor_env_paths(raw, patterns)
    raw = expand_env(raw, where)
    resolve_relative_paths(raw, path.resolve().parent, patterns)
    recipe = build_recipe(raw, where, registry, until)
    recipe._path = path.resolve()
    for arm in recipe.arms:
        arm.recipe._path = recipe._path
    if check_sources:
        check_source_paths(recipe, where)
    return recipe


def build_recipe(raw: dict[str, Any], where: str, registry: StageRegistry, until: str | None = None) -> Recipe:
    """Validate an already expanded recipe dict (see `load_recipe`)."""
    stages_raw = raw.get("stages")
    if stages_raw is None:
        stages_raw = {}
    try:
        recipe = Recipe.model_validate({**raw, "stages": {}, "variants": {}})
    except ValidationError as e:
        raise RecipeError(_format_validation(e, where, prefix=(), model=Recipe)) from None
    if not isinstance(stages_raw, dict):
        raise RecipeError(f"{where}: stages: expected a mapping stage name -> params, got {stages_raw!r}")
    variants_raw = raw.get("variants") or {}
    if not isinstance(variants_raw, dict):
        raise RecipeError(f"{where}: variants: expected a mapping (e.g. `pii: [on, off]`), got {variants_raw!r}")

    variants_raw = _replicate_variants(registry, stages_raw, variants_raw, where)
    order = registry.names
    if until is not None and until not in order:
        raise RecipeError(f"{where}: --until {until!r} is not a stage; known stages: {', '.join(order)}")
    for name in stages_raw:
        if name not in order:
            raise RecipeError(f"{where}: stages.{name}: unknown stage; known stages: {', '.join(order)}"
                              + registry.did_you_mean(name))
        if stages_raw[name] is None:
            stages_raw[name] = {}
        if not isinstance(stages_raw[name], dict):
            raise RecipeError(f"{where}: stages.{name}: expected a mapping of params, got {stages_raw[name]!r}")

    if recipe.sources:
        recipe = recipe.model_copy(update={"sources": _validate_sources(recipe.sources, registry, where)})
    names = [s.name for s in recipe.sources]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise RecipeError(f"{where}: sources.{i}.name: duplicate source name {n!r}")

    arm_specs = variant_overrides(variants_raw, where, registry)
    needed = set(order[: order.index(until) + 1] if until else order) | set(stages_raw)
    for spec in arm_specs.values():
        for _, updates in spec:
            needed |= {p.split(".", 1)[0] for p in updates}
    needed_ordered = [s for s in order if s in needed]

    for name in needed_ordered:
        _take_language(stage_class(registry, name, where), stages_raw, name, recipe.language, where)
    params = {}
    for name in needed_ordered:
        cls = stage_class(registry, name, where)
        params[name] = _validate_params(cls.params_model, stages_raw.get(name, {}), where, f"stages.{name}")
        _known_sources(params[name], names, where, f"stages.{name}")
    recipe = recipe.model_copy(update={"stages": params, "variants": variants_raw})

    arms = []
    for arm_name, values, stage_dicts in arm_stage_dicts(arm_specs, stages_raw, needed_ordered, where):
        arm_params = {}
        for n in needed_ordered:
            if stage_dicts[n] == stages_raw.get(n, {}):
                arm_params[n] = params[n]
                continue
            cls = stage_class(registry, n, where)
            arm_params[n] = _validate_params(cls.params_model, stage_dicts[n], where, f"stages.{n}",
                                             context=f" (in arm {arm_name})")
        arms.append(Arm(arm_name, values, recipe.model_copy(update={"stages": arm_params})))
    recipe._arms = arms
    for arm in arms:
        arm.recipe._arms = arms
    return recipe


def _replicate_variants(registry: StageRegistry, stages_raw: dict[str, Any], variants: dict[Any, Any],
                        where: str) -> dict[Any, Any]:
    """`variants` with one more for each stage whose replicate list the recipe fills (`Stage.replicates`):
    `stages.pretrain.seeds: [1, 2, 3]` is the variant `pretrain_seed: {1: {pretrain.seed: 1, pretrain.seeds: []},
    ...}`. Why a variant: each replicate is then an arm, with its own folders from that stage on, cached and
    resumed like any arm, while every stage before it stays one folder for all of them."""
    out = dict(variants)
    for name, raw in stages_raw.items():
        if name not in registry.names or not isinstance(raw, dict):
            continue
        spec = stage_class(registry, name, where).replicates
        if spec is None or not raw.get(spec[0]):
            continue
        many, one = spec
        values = raw[many]
        path = f"stages.{name}.{many}"
        if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise RecipeError(f"{where}: {path}: expected a list of integers, got {values!r}")
        if len(set(values)) != len(values):
            raise RecipeError(f"{where}: {path}: a value is named twice ({values})")
        if raw.get(one) is not None:
            raise RecipeError(f"{where}: {path}: set either `{one}` (one run) or `{many}` (replicates), not both")
        variant = f"{name}_{one}"
        if variant in out:
            raise RecipeError(f"{where}: variants.{variant}: {path} declares this variant already")
        out[variant] = {v: {f"{name}.{one}": v, f"{name}.{many}": []} for v in values}
    return out


def _validate_sources(sources: list[Any], registry: StageRegistry, where: str) -> list[Any]:
    """The recipe's `sources:` entries, validated by the model of the graph's stage that reads them."""
    model = next((cls.sources_model for n in registry.names
                  if (cls := stage_class(registry, n, where)).sources_model is not None), None)
    if model is None:
        raise RecipeError(f"{where}: sources: no stage of this graph reads sources ({', '.join(registry.names)})")
    out = []
    for i, src in enumerate(sources):
        try:
            out.append(src if isinstance(src, model) else model.model_validate(src))
        except ValidationError as e:
            raise RecipeError(_format_validation(e, where, ("sources", str(i)), model)) from None
    return out


def _known_sources(params: Any, sources: list[str], where: str, key: str) -> None:
    """A stage's `per_source` settings name sources of the recipe: an entry for a source the recipe no longer has
    (its `sources:` replaced, by an `extends:` or `--set sources=...`) would silently apply to nothing."""
    stale = sorted(set(getattr(params, "per_source", None) or {}) - set(sources))
    if stale and sources:
        raise RecipeError(f"{where}: {key}.per_source: {', '.join(map(repr, stale))} "
                          f"{'is not a source' if len(stale) == 1 else 'are not sources'} of this recipe "
                          f"(sources: {', '.join(sources)}); remove the entry, or rename it to the source it meant")


def _take_language(cls: type[Stage[Any]], stages_raw: dict[str, Any], name: str, language: str, where: str) -> None:
    """A stage whose params have a `language` field gets the recipe's `language:`; naming another one in the
    stage is an error rather than a silent mix (one corpus, one language: the filters, the decontamination
    n-grams and the analyzer must agree)."""
    if "language" not in cls.params_model.model_fields:
        return
    own = (stages_raw.get(name) or {}).get("language", language)
    if own != language:
        raise RecipeError(f"{where}: stages.{name}.language: {own!r} differs from the recipe's language "
                          f"{language!r}; set `language:` at the top of the recipe instead")
    stages_raw[name] = {**(stages_raw.get(name) or {}), "language": language}


def _validate_params(model: type[StageParams], data: dict[str, Any], where: str, prefix: str,
                     context: str = "") -> StageParams:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise RecipeError(_format_validation(e, where, tuple(prefix.split(".")), model, context)) from None


def _format_validation(e: ValidationError, where: str, prefix: tuple[str, ...], model: type[BaseModel],
                       context: str = "") -> str:
    """One message for a pydantic error: file, key path, what was expected, what was given."""
    lines = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(p) for p in (*prefix, *err["loc"])) or "(top level)"
        if err["type"] == "extra_forbidden":
            fields = _fields_at(model, err["loc"][:-1])
            hint = f"; expected one of: {', '.join(fields)}" if fields else ""
            lines.append(f"{loc}: unknown key{hint}")
        elif err["type"] == "missing":
            lines.append(f"{loc}: required key is missing")
        else:
            lines.append(f"{loc}: {err['msg']} (got {err.get('input')!r})")
    head = f"{where}{context}: "
    if len(lines) == 1:
        return head + lines[0]
    return head + f"{len(lines)} problems:\n" + "\n".join(f"  - {ln}" for ln in lines)


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at `loc`, for 'expected one of' hints."""
    for part in loc:
        if isinstance(part, int):
            continue
        f = model.model_fields.get(str(part))
        if f is None:
            return []
        ann = f.annotation
        inner = [a for a in getattr(ann, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel)]
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
        elif inner:
            model = inner[0]
        else:
            return []
    return list(model.model_fields)


def check_source_paths(recipe: Recipe, where: str) -> None:
    """Every source path must exist, or (for a glob) match at least one file."""
    for i, src in enumerate(recipe.sources):
        p = src.path
        if glob.has_magic(p):
            if not any(os.path.isfile(m) for m in glob.iglob(p, recursive=True)):
                raise RecipeError(f"{where}: sources.{i}.path: no file matches {p!r} (source {src.name!r})")
        elif not os.path.exists(p):
            raise RecipeError(f"{where}: sources.{i}.path: {p!r} does not exist (source {src.name!r})")
