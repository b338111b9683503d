"""Recipes: the YAML file that says which sources to read, how every stage is configured, and which ablation
arms to run.

Everything a run needs is checked here, before any work starts, so that a typo in the last stage's params does
not surface after an hour of curation: unknown keys, wrong types, out-of-range values, unset environment
variables, missing source files and unknown stage names all become one `RecipeError` naming the recipe file and
the key path (`stages.filter.min_chars`).

Order of processing: YAML -> `--set` overrides -> `${ENV}` expansion -> relative input paths (sources, and the
params each stage declares in `Stage.input_paths`) resolved against the recipe's folder -> schema -> `sources`
validated with the graph's `Stage.sources_model` -> per-stage params models -> variants expanded into arms ->
source paths exist.

The stage graph comes from a `pipeline.stages.StageRegistry` (the production one by default); nothing here
imports a stage package until the registry is asked for a stage the recipe needs.
"""

from __future__ import annotations

import copy
import difflib
import glob
import itertools
import os
import re
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from pipeline.registry import RegistryError
from pipeline.stage import Stage, StageParams
from pipeline.stages import STAGES, StageRegistry

_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class RecipeError(ValueError):
    """A recipe that cannot run. The message names the file and key path; no traceback is needed."""


def stage_class(registry: StageRegistry, name: str, where: str = "recipe") -> type[Stage[Any]]:
    """`registry.get(name)`, its errors (unknown name, module that cannot be imported) as a `RecipeError`."""
    try:
        return registry.get(name)
    except RegistryError as e:
        raise RecipeError(f"{where}: {e}") from None


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
        "ko", description="ISO 639-1 code of the corpus's language (a module of corpora/lang); every stage with a "
                          "`language` param takes it, so a new language is this one key. Checked there, by the "
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
            "variants": {display_value(k): [display_value(x) for x in v] if isinstance(v, list) else _display_keys(v)
                         for k, v in self.variants.items()},
        }


@dataclass(frozen=True)
class Arm:
    """One path through the graph: a value for every variant, and the recipe with those values applied."""

    name: str  # "pii=on,pretokenize=none", or "default"
    values: dict[str, str]  # variant name -> value as shown ("on"/"off" for YAML booleans)
    recipe: Recipe


def display_value(v: Any) -> str:
    """How a variant value is shown: YAML turns `on`/`off` into booleans; show them as the user wrote them."""
    if v is True:
        return "on"
    if v is False:
        return "off"
    if v is None:
        return "none"
    return str(v)


def _display_keys(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {display_value(k): _display_keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_display_keys(v) for v in obj]
    return obj


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
    patterns = _input_path_patterns(raw, registry, where)
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


def read_recipe_file(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The recipe's mapping, with `extends: BASE.yaml` applied: the base file's mapping (its own `extends`
    first), then this file's keys merged over it -- mappings key by key, recursively; lists and scalars
    replace. A relative BASE is found beside the file that names it. This is how the KLUE-size and ablation
    recipes share the sources and curation settings of one recipe instead of copying them."""
    where = f"recipe {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecipeError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RecipeError(f"{where}: cannot read: {e}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise RecipeError(f"{where}: not valid YAML: {e}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise RecipeError(f"{where}: expected a mapping of keys (name, seed, sources, stages, variants), "
                          f"got {type(raw).__name__}")
    base = raw.pop("extends", None)
    if base is None:
        return raw
    if not isinstance(base, str):
        raise RecipeError(f"{where}: extends: expected the path of a recipe file, got {base!r}")
    base_path = (path.parent / base).resolve()
    chain = (*_seen, path.resolve())
    if base_path in chain:
        raise RecipeError(f"{where}: extends: {base} is already in the chain "
                          f"({' -> '.join(str(p) for p in (*chain, base_path))})")
    if not base_path.is_file():
        raise RecipeError(f"{where}: extends: {base_path} is not a file")
    return _merged(read_recipe_file(base_path, chain), raw)


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _input_path_patterns(raw: dict[str, Any], registry: StageRegistry, where: str) -> dict[str, tuple[str, ...]]:
    """stage -> its `Stage.input_paths`, for the stages the recipe configures (only they can name input files)."""
    stages = raw["stages"] if isinstance(raw.get("stages"), dict) else {}
    return {name: stage_class(registry, name, where).input_paths for name in stages if name in registry}


def _locate(node: Any, parts: Sequence[str]) -> Iterator[tuple[dict[str, Any] | list[Any], Any]]:
    """(container, key) of every value that the dotted pattern `parts` names in `node` (`*`: each list item)."""
    head, rest = parts[0], parts[1:]
    if head == "*":
        keys: Iterator[Any] = iter(range(len(node))) if isinstance(node, list) else iter(())
    else:
        keys = iter([head]) if isinstance(node, dict) and head in node else iter(())
    for k in keys:
        if rest:
            yield from _locate(node[k], rest)
        else:
            yield node, k


def _path_fields(raw: dict[str, Any], patterns: Mapping[str, tuple[str, ...]]
                 ) -> Iterator[tuple[dict[str, Any] | list[Any], Any]]:
    """(container, key) of every string that names an input path: source paths and the stages' input_paths."""
    for src in raw.get("sources") or []:
        if isinstance(src, dict) and isinstance(src.get("path"), str):
            yield src, "path"
    stages = raw["stages"] if isinstance(raw.get("stages"), dict) else {}
    for stage, pats in patterns.items():
        for pat in pats:
            for container, key in _locate(stages.get(stage), pat.split(".")):
                if isinstance(container[key], str):
                    yield container, key


def without_input_paths(cls: type[Stage[Any]], material: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stage's key material with the locations of its input files taken out.

    Why: keys must follow what the inputs contain, not where they lie, so that a corpus copied to another
    folder or machine reuses every stage. Sound because every stage that names input paths fingerprints their
    contents (collect: relative path, size and digest of each matched file; decontaminate and vocab: the
    digest of each file), so the fingerprint still changes when different files are named. A list of paths
    (`report_texts.*`) becomes its length; a path field (`benchmarks.*.path`) is removed.
    """
    out = copy.deepcopy(material)
    for src in out.get("sources") or []:
        src.pop("path", None)
    params = out.get("params") or {}
    for pat in cls.input_paths:
        parts = pat.split(".")
        if parts[-1] == "*":
            for container, key in list(_locate(params, parts[:-1])):
                if isinstance(container[key], list):
                    container[key] = len(container[key])
        else:
            for container, key in list(_locate(params, parts)):
                if isinstance(container, dict):
                    container.pop(key, None)
    return out


_LEADING_ENV_RE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def anchor_env_paths(raw: dict[str, Any], patterns: Mapping[str, tuple[str, ...]]) -> None:
    """A path that starts with `${VAR}` takes VAR's relative value from the shell's working directory, in place.

    Why: `KLUE_DATA_DIR=../shared/data klue run recipes/x.yaml` means ../shared/data as the user's shell sees
    it; only paths written literally in the recipe are relative to the recipe's folder.
    """
    for container, key in _path_fields(raw, patterns):
        m = _LEADING_ENV_RE.match(container[key])
        val = os.environ.get(m.group(1)) if m else None
        if m and val and not os.path.isabs(os.path.expanduser(val)):
            container[key] = os.path.abspath(val) + container[key][m.end():]


def resolve_relative_paths(raw: dict[str, Any], base_dir: Path, patterns: Mapping[str, tuple[str, ...]]) -> None:
    """Make the input paths of `raw` (already env-expanded) absolute and normalised, in place.

    Normalised (`a/b/../c` -> `a/c`), because paths enter stage cache keys: two spellings of one folder must
    not rebuild every stage.
    """
    for container, key in _path_fields(raw, patterns):
        p = os.path.expanduser(container[key])
        container[key] = os.path.normpath(p if os.path.isabs(p) else str(base_dir / p))


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

    order = registry.names
    if until is not None and until not in order:
        raise RecipeError(f"{where}: --until {until!r} is not a stage; known stages: {', '.join(order)}")
    for name in stages_raw:
        if name not in order:
            raise RecipeError(f"{where}: stages.{name}: unknown stage; known stages: {', '.join(order)}"
                              + _did_you_mean(name, order))
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

    arm_specs = _variant_overrides(variants_raw, where, registry)
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
    recipe = recipe.model_copy(update={"stages": params, "variants": variants_raw})

    arms = []
    variant_names = list(arm_specs)
    for combo in itertools.product(*(arm_specs[v] for v in variant_names)):
        values = {v: display for v, (display, _) in zip(variant_names, combo, strict=True)}
        arm_name = ",".join(f"{k}={v}" for k, v in values.items()) or "default"
        stage_dicts = {n: copy.deepcopy(stages_raw.get(n, {})) for n in needed_ordered}
        for v, (display, updates) in zip(variant_names, combo, strict=True):
            for dotted, value in updates.items():
                stage, _, rest = dotted.partition(".")
                _set_path(stage_dicts[stage], rest.split("."), value, f"variants.{v}.{display}", where)
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


def _variant_overrides(variants: dict[Any, Any], where: str, registry: StageRegistry
                       ) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """variant name -> [(shown value, {"stage.param": value})], in declaration order."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for vname, spec in variants.items():
        vkey = display_value(vname)
        path = f"variants.{vkey}"
        arms: list[tuple[str, dict[str, Any]]] = []
        if isinstance(spec, list):  # shorthand: NAME is a stage, values go to its variant_field
            if vkey not in registry.names:
                raise RecipeError(f"{where}: {path}: the shorthand `{vkey}: [a, b]` needs a stage name; known "
                                  f"stages: {', '.join(registry.names)} (or use the long form "
                                  f"`{vkey}: {{VALUE: {{stage.param: value}}}}`)")
            cls = stage_class(registry, vkey, where)
            field_name = cls.variant_field
            field = cls.params_model.model_fields.get(field_name)
            for value in spec:
                if field is not None and (value is None or isinstance(value, bool)) \
                        and not _accepts(field.annotation, type(value)):
                    value = display_value(value)  # `[mecab, off]` for a str/Literal field means the word "off"
                arms.append((display_value(value), {f"{vkey}.{field_name}": value}))
        elif isinstance(spec, dict):  # long form: VALUE -> {"stage.param": value} or {stage: {param: value}}
            for value, updates in spec.items():
                vpath = f"{path}.{display_value(value)}"
                if updates is None:
                    updates = {}
                if not isinstance(updates, dict):
                    raise RecipeError(f"{where}: {vpath}: expected a mapping of `stage.param: value`, "
                                      f"got {updates!r}")
                flat: dict[str, Any] = {}
                for k, v in updates.items():
                    k = str(k)
                    stage = k.split(".", 1)[0]
                    if stage not in registry.names:
                        raise RecipeError(f"{where}: {vpath}.{k}: unknown stage {stage!r}; known stages: "
                                          f"{', '.join(registry.names)}" + _did_you_mean(stage, registry.names))
                    if "." in k:
                        flat[k] = v
                    elif isinstance(v, dict):
                        flat.update({f"{k}.{p}": pv for p, pv in v.items()})
                    else:
                        raise RecipeError(f"{where}: {vpath}.{k}: expected `{k}.PARAM: value` or "
                                          f"`{k}: {{PARAM: value}}`, got {v!r}")
                arms.append((display_value(value), flat))
        else:
            raise RecipeError(f"{where}: {path}: expected a list of values (`{vkey}: [on, off]`) or a mapping "
                              f"VALUE -> {{stage.param: value}}, got {spec!r}")
        if not arms:
            raise RecipeError(f"{where}: {path}: no values")
        shown = [a for a, _ in arms]
        dup = sorted({s for s in shown if shown.count(s) > 1})
        if dup:
            raise RecipeError(f"{where}: {path}: duplicate value(s) {', '.join(dup)}")
        out[vkey] = arms
    return out


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


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


def _accepts(annotation: Any, kind: type) -> bool:
    """Whether a field annotation admits values of `kind` (bool or NoneType), looking inside unions."""
    if annotation is kind or annotation is Any:
        return True
    return any(_accepts(a, kind) for a in typing.get_args(annotation) if not isinstance(a, (str, int, float)))


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


# ---------------------------------------------------------------------------------------------------------
# overrides and environment


def apply_override(raw: dict[str, Any], override: str, where: str = "recipe") -> None:
    """Apply one `--set PATH=VALUE` in place. VALUE is parsed as YAML (`20`, `true`, `[a, b]`, `null`)."""
    key, sep, value = override.partition("=")
    key = key.strip()
    if not sep or not key:
        raise RecipeError(f"{where}: --set {override!r}: expected PATH=VALUE, e.g. stages.filter.min_chars=20")
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError as e:
        raise RecipeError(f"{where}: --set {key}: value {value!r} is not valid YAML: {e}") from None
    _set_path(raw, key.split("."), parsed, f"--set {key}", where)


def _set_path(root: Any, parts: list[str], value: Any, label: str, where: str) -> None:
    node = root
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        here = ".".join(parts[: depth + 1])
        if isinstance(node, list):
            if not re.fullmatch(r"-?\d+", part):
                raise RecipeError(f"{where}: {label}: {here}: a list needs a number index, got {part!r}")
            idx = int(part)
            if not -len(node) <= idx < len(node):
                raise RecipeError(f"{where}: {label}: {here}: index {idx} out of range (list has {len(node)} "
                                  f"items)")
            if last:
                node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if node.get(part) is None:
                    node[part] = {}
                node = node[part]
        else:
            raise RecipeError(f"{where}: {label}: {here}: cannot set a key inside {node!r}")


def expand_env(obj: Any, where: str, path: str = "") -> Any:
    """Replace `${VAR}` in every string value; an unset variable is an error naming it and the key path."""
    if isinstance(obj, dict):
        return {k: expand_env(v, where, f"{path}.{display_value(k)}" if path else display_value(k))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [expand_env(v, where, f"{path}.{i}") for i, v in enumerate(obj)]
    if isinstance(obj, str):
        def sub(m: re.Match[str]) -> str:
            val = os.environ.get(m.group(1))
            if val is None:
                raise RecipeError(f"{where}: {path or '(top level)'}: environment variable {m.group(1)} is not "
                                  f"set (used in {obj!r})")
            return val
        return _ENV_RE.sub(sub, obj)
    return obj


def check_source_paths(recipe: Recipe, where: str) -> None:
    """Every source path must exist, or (for a glob) match at least one file."""
    for i, src in enumerate(recipe.sources):
        p = src.path
        if glob.has_magic(p):
            if not any(os.path.isfile(m) for m in glob.iglob(p, recursive=True)):
                raise RecipeError(f"{where}: sources.{i}.path: no file matches {p!r} (source {src.name!r})")
        elif not os.path.exists(p):
            raise RecipeError(f"{where}: sources.{i}.path: {p!r} does not exist (source {src.name!r})")
