"""Stage manifests and cache keys: the record that makes a stage folder "done".

A stage folder is complete exactly when its `manifest.json` exists and names the folder's key; the manifest is
written last, atomically, and lists every output file with its sha256 so a later `klue run --verify` (or a
person) can check that nothing changed since. Keys are sha256 over canonical JSON, so the same stage, version,
params, inputs and fingerprint always give the same folder, in any arm and on any machine.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from collections import Counter
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.stage import StageInput, StageResult, funnel_sum

MANIFEST = "manifest.json"
KEY_CHARS = 16  # folder names use the first 16 hex digits; the manifest keeps the full key
# The manifest's record of the weight files `klue gc --weights` removed (`pipeline.workdir.prune_weights`):
# {"files": [relative paths], "bytes": their total, "at": when}. `files` keeps listing them with their sha256,
# so the folder still says what it held, and a merge compares it with an unpruned copy of the same key.
PRUNED = "pruned"


def canonical_json(obj: Any) -> str:
    """The one serialisation keys are computed over: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def compute_key(material: dict[str, Any]) -> str:
    try:
        text = canonical_json(material)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cache key material is not plain JSON ({e}): {material!r}") from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def list_outputs(folder: Path) -> list[Path]:
    """Every file of a stage folder except the manifest, sorted by relative path (stable across machines)."""
    out = [p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder).as_posix() != MANIFEST]
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix())


def file_table(folder: Path) -> dict[str, dict[str, Any]]:
    """relpath -> {sha256, bytes} for every output file."""
    return {p.relative_to(folder).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
            for p in list_outputs(folder)}


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    io.write_json(folder / MANIFEST, manifest, indent=2, fsync=True)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a folder, or None when it is missing or unreadable (= the folder is not done)."""
    try:
        with open(folder / MANIFEST, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def upstream(inputs: Mapping[str, StageInput]) -> dict[str, StageInput]:
    """Every finished stage folder that `inputs` were built from, transitively, by stage name (`inputs` first).

    Each manifest names the keys of its own inputs, and a key's folder is `<workdir>/<stage>/<key[:16]>` beside
    the input's own; so a stage can read what stages it does not declare as inputs said (the pretrain stage's
    model card tells the whole data story, from collect on). Its output stays a function of its key: its key
    covers its inputs' keys, which cover theirs. A stage named by a manifest whose folder is missing or holds
    another key (removed or rebuilt by hand) is left out, as are the upstream stages of inputs that are not
    in a workdir (tests build contexts by hand)."""
    out: dict[str, StageInput] = dict(inputs)
    todo = list(inputs.values())
    while todo:
        cur = todo.pop(0)
        workdir = cur.path.parent.parent
        for dep, key in sorted((cur.manifest.get("inputs") or {}).items()):
            if dep in out or not isinstance(key, str):
                continue
            folder = workdir / dep / key[:KEY_CHARS]
            manifest = read_manifest(folder)
            if manifest is None or manifest.get("key") != key:
                continue
            out[dep] = StageInput(dep, folder, manifest)
            todo.append(out[dep])
    return out


def pruned_files(manifest: dict[str, Any]) -> set[str]:
    """The files of a folder that `klue gc --weights` removed (its manifest's `pruned`; none when unpruned)."""
    return set((manifest.get(PRUNED) or {}).get("files") or [])


def pruned_note(manifest: dict[str, Any]) -> str | None:
    """Why a folder can no longer give what its weights gave (training on, exporting), or None when it can."""
    record = manifest.get(PRUNED) or {}
    if not record.get("files"):
        return None
    n = len(record["files"])
    return (f"its weights ({n} file{'s' if n != 1 else ''}) were removed by `klue gc --weights` at "
            f"{record.get('at', '?')}; its results are kept")


def verify_files(folder: Path, manifest: dict[str, Any]) -> list[str]:
    """Differences between the files on disk and the manifest's table (empty when everything matches). Files
    that `klue gc --weights` removed (`pruned_files`) are gone on purpose and not a difference."""
    problems = []
    gone = pruned_files(manifest)
    listed = {rel: info for rel, info in manifest.get("files", {}).items() if rel not in gone}
    on_disk = {p.relative_to(folder).as_posix(): p for p in list_outputs(folder)}
    for rel, info in sorted(listed.items()):
        p = on_disk.get(rel)
        if p is None:
            problems.append(f"{folder / rel}: missing")
        elif p.stat().st_size != info["bytes"] or sha256_file(p) != info["sha256"]:
            problems.append(f"{folder / rel}: content differs from the manifest (sha256 mismatch)")
    for rel in sorted(set(on_disk) - set(listed)):
        problems.append(f"{folder / rel}: not listed in the manifest")
    return problems


def result_problems(result: StageResult) -> list[str]:
    """Why a stage's accounting cannot be accepted: a funnel that does not reconcile, or per-source funnels
    that do not add up to the total."""
    problems = []
    if result.funnel is not None:
        problems += [f"total: {p}" for p in result.funnel.problems()]
    for source, f in sorted(result.by_source.items()):
        problems += [f"source {source!r}: {p}" for p in f.problems()]
    if result.by_source:
        if result.funnel is None:
            problems.append("by_source funnels given without a total funnel")
        else:
            summed = funnel_sum(list(result.by_source.values())).to_json()
            total = result.funnel.to_json()
            for field, value in total.items():
                got = summed[field]
                if isinstance(value, dict):
                    value, got = dict(Counter(value) + Counter()), dict(Counter(got) + Counter())
                if got != value:
                    problems.append(f"sum over sources of {field} = {got} but the total says {value}")
    return problems


def environment() -> dict[str, str]:
    try:
        version = metadata.version("klue-pipeline")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        version = "unknown"
    return {"klue_version": version, "python": sys.version.split()[0], "platform": platform.platform()}
