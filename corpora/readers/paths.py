"""Which files a source means: a file, a folder (all files below it, sorted) or a glob.

Resolution is a recipe-time check: a missing path, a pattern that matches nothing or an unset environment
variable is a ValueError naming the source, before any work starts. File order is the sorted relative path,
so ids and shard order never depend on the file system's listing order.
"""

from __future__ import annotations

import glob
import json
import os
import re
from pathlib import Path
from typing import Literal

from corpora.readers.records import SourceFile
from corpora.sources import SourceSpec

_GLOB = re.compile(r"[*?\[]")
_COLUMNAR: dict[str, Literal["parquet", "arrow"]] = {".parquet": "parquet", ".arrow": "arrow"}


def source_path(spec: SourceSpec, base_dir: Path | None = None) -> Path:
    """The source's path with `${VAR}` expanded and made absolute against `base_dir` (the recipe's folder)."""
    expanded = os.path.expandvars(spec.path)
    unset = re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", expanded)
    if unset:
        raise ValueError(f"source {spec.name!r}: path {spec.path!r} uses unset environment variable(s) "
                         f"{', '.join(sorted(set(unset)))}")
    p = Path(expanded).expanduser()
    if not p.is_absolute():
        p = (base_dir or Path.cwd()) / p
    return p


def resolve_source(spec: SourceSpec, base_dir: Path | None = None) -> list[SourceFile]:
    """The files (or saved datasets) of a source, in reading order."""
    p = source_path(spec, base_dir)
    if _GLOB.search(str(p)):
        root = _glob_root(p)
        matches = [Path(m) for m in glob.glob(str(p), recursive=True)]
        if spec.format == "hf_dataset":
            found = [f for m in matches for f in _hf_files(spec, m, root)]
        else:
            found = [SourceFile(m, _rel(m, root)) for m in matches if m.is_file() and not _hidden(m, root)]
        if not found:
            raise ValueError(f"source {spec.name!r}: pattern {str(p)!r} matches no files")
        return sorted(found, key=lambda f: f.rel)
    if not p.exists():
        raise ValueError(f"source {spec.name!r}: path {str(p)!r} does not exist")
    if spec.format == "hf_dataset":
        found = _hf_files(spec, p, p.parent if p.is_file() else p)
    elif p.is_file():
        found = [SourceFile(p, p.name)]
    else:
        found = [SourceFile(f, _rel(f, p)) for f in p.rglob("*") if f.is_file() and not _hidden(f, p)]
    if not found:
        raise ValueError(f"source {spec.name!r}: folder {str(p)!r} holds no files")
    return sorted(found, key=lambda f: f.rel)


def source_root(spec: SourceSpec, base_dir: Path | None = None) -> Path:
    """The folder that `SourceFile.rel` is relative to."""
    p = source_path(spec, base_dir)
    if _GLOB.search(str(p)):
        return _glob_root(p)
    return p if p.is_dir() and spec.format != "hf_dataset" else p.parent


def source_files_on_disk(files: list[SourceFile]) -> list[Path]:
    """Every file whose size/mtime decides the output (a saved dataset: all files in its folder)."""
    out: list[Path] = []
    for f in files:
        if f.path.is_dir():
            out.extend(sorted(x for x in f.path.rglob("*") if x.is_file()))
        else:
            out.append(f.path)
    return out


def _hf_files(spec: SourceSpec, p: Path, root: Path) -> list[SourceFile]:
    """A `save_to_disk` folder (Dataset: state.json; DatasetDict: dataset_dict.json, one entry per split), or
    else the .parquet/.arrow files under `p`."""
    if p.is_file():
        kind = _COLUMNAR.get(p.suffix.lower())
        return [SourceFile(p, _rel(p, root), kind)] if kind else []
    if (p / "dataset_dict.json").is_file():
        try:
            splits = json.loads((p / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"source {spec.name!r}: {p / 'dataset_dict.json'} is not a dataset_dict.json: "
                             f"{e}") from e
        return [SourceFile(p / s, _rel(p / s, root), "hf_disk") for s in splits]
    if (p / "state.json").is_file():
        return [SourceFile(p, _rel(p, root) if p != root else p.name, "hf_disk")]
    return [SourceFile(f, _rel(f, root), _COLUMNAR[f.suffix.lower()])
            for f in p.rglob("*") if f.is_file() and f.suffix.lower() in _COLUMNAR and not _hidden(f, p)]


def _glob_root(p: Path) -> Path:
    parts = []
    for part in p.parts:
        if _GLOB.search(part):
            break
        parts.append(part)
    return Path(*parts)


def _rel(f: Path, root: Path) -> str:
    return f.relative_to(root).as_posix()


def _hidden(f: Path, root: Path) -> bool:
    # dot files (editor backups, .DS_Store, partial downloads) are not data
    return any(part.startswith(".") for part in f.relative_to(root).parts)
