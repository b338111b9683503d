"""A recipe file as the mapping the schema (`pipeline.recipe`) validates: read with `extends:` applied, `--set`
overrides applied, `${ENV}` expanded. Also what every step of loading uses: `RecipeError`, `stage_class` (the
stage registry's lookup, failing as a `RecipeError`) and `display_value` (YAML's `on`/`off` shown as written).

Apart from the schema because none of this knows what a recipe contains: it merges and edits nested dicts and
lists by key path, and `--set` and the variants' `stage.param: value` updates share its path setter (`set_path`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from pipeline.registry import RegistryError
from pipeline.stage import Stage
from pipeline.stages import StageRegistry

_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class RecipeError(ValueError):
    """A recipe that cannot run. The message names the file and key path; no traceback is needed."""


def stage_class(registry: StageRegistry, name: str, where: str = "recipe") -> type[Stage[Any]]:
    """`registry.get(name)`, its errors (unknown name, module that cannot be imported) as a `RecipeError`."""
    try:
        return registry.get(name)
    except RegistryError as e:
        raise RecipeError(f"{where}: {e}") from None


def display_value(v: Any) -> str:
    """How a variant value is shown: YAML turns `on`/`off` into booleans; show them as the user wrote them."""
    if v is True:
        return "on"
    if v is False:
        return "off"
    if v is None:
        return "none"
    return str(v)


def display_keys(obj: Any) -> Any:
    """`obj` with every mapping key shown by `display_value` (a variant's `on:`/`off:` keys in run.json)."""
    if isinstance(obj, Mapping):
        return {display_value(k): display_keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [display_keys(v) for v in obj]
    return obj


# ---------------------------------------------------------------------------------------------------------
# the file and its `extends`


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
    set_path(raw, key.split("."), parsed, f"--set {key}", where)


def set_path(root: Any, parts: list[str], value: Any, label: str, where: str) -> None:
    """Set `root[parts[0]][parts[1]]...` to `value` in place, creating missing mappings on the way; list items by
    index. `label` (`--set KEY`, `variants.V.VALUE`) names the setting in the `RecipeError` of a bad path."""
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


