"""The input paths a recipe names (its sources' `path`, and the params each stage declares in
`Stage.input_paths`): a leading `${VAR}` anchored at the shell's working directory, the rest made absolute
against the recipe's folder, and taken out of cache keys again (`without_input_paths`).

One module for the three because they walk the same locations (`_locate` over `Stage.input_paths`): a path
the loader resolves is exactly a path the key leaves out.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.recipe_file import stage_class
from pipeline.stage import Stage
from pipeline.stages import StageRegistry

_LEADING_ENV_RE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def input_path_patterns(raw: dict[str, Any], registry: StageRegistry, where: str) -> dict[str, tuple[str, ...]]:
    """stage -> its `Stage.input_paths`, for the stages the recipe configures (only they can name input files)."""
    stages = raw["stages"] if isinstance(raw.get("stages"), dict) else {}
    return {name: stage_class(registry, name, where).input_paths for name in stages if name in registry}


def _locate(node: Any, parts: Sequence[str]) -> Iterator[tuple[dict[str, Any] | list[Any], Any]]:
    """(container, key) of every value that the dotted pattern `parts` names in `node` (`*`: each list item, or
    each value of a mapping)."""
    head, rest = parts[0], parts[1:]
    if head == "*":
        keys: Iterator[Any] = (iter(range(len(node))) if isinstance(node, list)
                               else iter(list(node)) if isinstance(node, dict) else iter(()))
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
    (`report_texts.*`) becomes its length; a path field (`benchmarks.*.path`) and a mapping of paths
    (`task_data_dirs.*`: finetune's fingerprint names each file relative to its task's folder) are removed.
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
                elif isinstance(container[key], dict) and isinstance(container, dict):
                    container.pop(key)
        else:
            for container, key in list(_locate(params, parts)):
                if isinstance(container, dict):
                    container.pop(key, None)
    return out


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


