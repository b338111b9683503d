"""Variants -> arms: a recipe's `variants:` (the shorthand `stage: [a, b]` or the long form `NAME: {VALUE:
{stage.param: value}}`) read into per-variant updates, and every combination of their values turned into one
arm's params dicts, which `pipeline.recipe.build_recipe` validates.

Apart from the schema because it is the ablation's own grammar: a new way to declare arms changes this module,
not the recipe's schema or its loading.
"""

from __future__ import annotations

import copy
import itertools
import typing
from collections.abc import Iterator
from typing import Any

from pipeline.recipe_file import RecipeError, display_value, set_path, stage_class
from pipeline.stages import StageRegistry


def variant_overrides(variants: dict[Any, Any], where: str, registry: StageRegistry
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
                                          f"{', '.join(registry.names)}" + registry.did_you_mean(stage))
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


def _accepts(annotation: Any, kind: type) -> bool:
    """Whether a field annotation admits values of `kind` (bool or NoneType), looking inside unions."""
    if annotation is kind or annotation is Any:
        return True
    return any(_accepts(a, kind) for a in typing.get_args(annotation) if not isinstance(a, (str, int, float)))


def arm_stage_dicts(arm_specs: dict[str, list[tuple[str, dict[str, Any]]]], stages_raw: dict[str, Any],
                    needed: list[str], where: str) -> Iterator[tuple[str, dict[str, str], dict[str, Any]]]:
    """(arm name, variant -> value as shown, stage -> params dict with the arm's updates applied) for every
    combination of the variants' values, in declaration order; the params dicts are copies of `stages_raw`'s."""
    variant_names = list(arm_specs)
    for combo in itertools.product(*(arm_specs[v] for v in variant_names)):
        values = {v: display for v, (display, _) in zip(variant_names, combo, strict=True)}
        arm_name = ",".join(f"{k}={v}" for k, v in values.items()) or "default"
        stage_dicts = {n: copy.deepcopy(stages_raw.get(n, {})) for n in needed}
        for v, (display, updates) in zip(variant_names, combo, strict=True):
            for dotted, value in updates.items():
                stage, _, rest = dotted.partition(".")
                set_path(stage_dicts[stage], rest.split("."), value, f"variants.{v}.{display}", where)
        yield arm_name, values, stage_dicts
