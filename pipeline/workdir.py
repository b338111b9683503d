"""A finished workdir as `klue run` left it: `run.json` (the recipe's snapshot, its arms and each arm's stage
folders) and the stage folders' manifests. What every reader of a finished run starts from (`klue export` of the
model or of the corpus, the cards), on the ground floor so that no package has to reach into another's to find
an arm's folders.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.manifest import (
    KEY_CHARS,
    MANIFEST,
    PRUNED,
    pruned_files,
    read_manifest,
    verify_files,
    write_manifest,
)
from pipeline.runner import RUN_JSON
from pipeline.stage import StageInput
from pipeline.stages import STAGES, registry_from_spec


class WorkdirError(ValueError):
    """A workdir, arm or stage folder that cannot be read as a finished run; the message names the file or arm."""


def read_run(workdir: Path) -> dict[str, Any]:
    """`WORKDIR/run.json`, the record of the last `klue run` there."""
    path = workdir / RUN_JSON
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkdirError(f"{path}: not found; {workdir} is not a workdir of `klue run`") from None
    except ValueError as e:
        raise WorkdirError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(run, dict) or not run.get("arms"):
        raise WorkdirError(f"{path}: records no arms")
    return run


def choose_arm(run: dict[str, Any], arm: str | None, where: Path) -> dict[str, Any]:
    """The arm record named `arm`, or the only one; several arms and no `--arm` is an error listing them."""
    arms = run["arms"]
    names = [a["name"] for a in arms]
    if arm is None:
        if len(arms) > 1:
            raise WorkdirError(f"{where / RUN_JSON}: {len(arms)} arms ({', '.join(names)}); name one with --arm")
        return dict(arms[0])
    for a in arms:
        if a["name"] == arm:
            return dict(a)
    raise WorkdirError(f"{where / RUN_JSON}: no arm {arm!r}; arms: {', '.join(names)}")


def arm_stages(workdir: Path, arm: dict[str, Any]) -> dict[str, StageInput]:
    """The arm's finished stage folders by stage name (a failed or unfinished stage is left out)."""
    out = {}
    for s in arm.get("stages", []):
        if s.get("status") == "failed" or not s.get("path"):
            continue
        folder = workdir / s["path"]
        manifest = read_manifest(folder)
        if manifest is not None and manifest.get("key") == s.get("key"):
            out[s["stage"]] = StageInput(s["stage"], folder, manifest)
    return out


def merge_stage_folders(sources: list[Path], into: Path, verify: bool = False) -> list[tuple[str, Path, str]]:
    """Hard-link every finished stage folder of `sources` (workdirs of `klue run`) into workdir `into`, so that a
    run there finds them cached: what `cp -al SRC/STAGE/KEY INTO/STAGE/` does by hand when arms or replicates ran
    side by side in workdirs of their own (docs/usage.md, "Arms side by side"), with the checks a hand copy skips.

    A folder is finished when its manifest names its key (pipeline/manifest.py); `.partial`, `.old` and unfinished
    folders stay where they are. The stage folders are found by their manifests (`SRC/STAGE/KEY/manifest.json`),
    so the stages of any graph are merged. With `verify`, every file is checked against the manifest's sha256
    first. A key already in `into` is skipped when its manifest lists the same files and refused when it does not
    (one key, two contents: a nondeterminism or an edited folder); a folder there whose weights `klue gc --weights`
    removed is replaced by a source's whole copy ("restored"). Each folder is linked under a temp name and
    renamed into place (`pipeline.io.atomic_path`), so a kill leaves no half folder under the key. Files are
    hard-linked (no bytes copied: no run edits a finished folder), copied across file systems. Returns (stage,
    source folder, "linked" | "copied" | "restored" | "already there") per folder."""
    done: list[tuple[str, Path, str]] = []
    into.mkdir(parents=True, exist_ok=True)
    for src in sources:
        if not src.is_dir():
            raise WorkdirError(f"{src}: no such workdir")
        if src.resolve() == into.resolve():
            raise WorkdirError(f"{src}: is the workdir to merge into")
        # hard links need one file system; across two the bytes are copied
        how, copy = ("linked", os.link) if src.stat().st_dev == into.stat().st_dev else ("copied", shutil.copy2)
        for found in sorted(src.glob(f"*/*/{MANIFEST}")):
            folder = found.parent
            stage = folder.parent.name
            manifest = read_manifest(folder)
            if manifest is None or str(manifest.get("key", ""))[:KEY_CHARS] != folder.name:
                continue  # unfinished, `.partial`, `.old`, or not a stage folder
            if verify and (problems := verify_files(folder, manifest)):
                raise WorkdirError(f"{folder}: does not match its manifest:\n  " + "\n  ".join(problems))
            target = into / stage / folder.name
            restore = False
            if target.exists():
                there = read_manifest(target) or {}
                if (there.get("key"), there.get("files")) != (manifest.get("key"), manifest.get("files")):
                    raise WorkdirError(f"{folder} and {target}: the same key with other files (sha256 in their "
                                       f"manifests); check both with `klue run --verify` before merging")
                # the same folder; one whose weights `klue gc --weights` removed takes them back from a whole copy
                restore = bool(pruned_files(there) - pruned_files(manifest))
                if not restore:
                    done.append((stage, folder, "already there"))
                    continue
            io.remove_stale(target)  # a killed merge's temp folder
            with io.atomic_path(target, replace_dir=restore) as tmp:
                shutil.copytree(folder, tmp, symlinks=True, copy_function=copy)
                if read_manifest(tmp) != manifest:
                    raise WorkdirError(f"{folder}: changed while it was merged into {target}")
            done.append((stage, folder, "restored" if restore else how))
    return done


def weight_files(folder: Path, manifest: dict[str, Any], patterns: Sequence[str]) -> list[tuple[str, int]]:
    """The files of a finished stage folder that its stage declares as weights (`Stage.weights`: fnmatch
    patterns on paths relative to the folder) and that are still there: (relative path, bytes), sorted. A file
    the manifest already marks as pruned but still on disk (a prune killed after its manifest was written) is
    one of them: the next prune finishes the job."""
    if not patterns:
        return []
    out = []
    for rel, info in sorted((manifest.get("files") or {}).items()):
        if any(fnmatchcase(rel, pat) for pat in patterns) and (folder / rel).is_file():
            out.append((rel, int(info.get("bytes", 0))))
    return out


def weights_in(workdir: Path, folders: Sequence[str], registry: str | None = None
               ) -> list[tuple[Path, dict[str, Any], tuple[str, ...], list[tuple[str, int]]]]:
    """The weight files left in `folders` (paths relative to `workdir`, `<stage>/<key>`), per finished folder
    that has some: (folder, its manifest, its stage's `weights` patterns, `weight_files`). `registry`: the stage
    graph that declares them (`module:ATTR`, as `klue run --registry`; default the production graph)."""
    graph = registry_from_spec(registry) if registry else STAGES
    out = []
    for rel in folders:
        folder, stage = workdir / rel, Path(rel).parent.name
        patterns = graph.get(stage).weights if stage in graph.names else ()
        manifest = read_manifest(folder)
        if manifest is None or not patterns:
            continue
        if found := weight_files(folder, manifest, patterns):
            out.append((folder, manifest, patterns, found))
    return out


def prune_weights(folder: Path, manifest: dict[str, Any], patterns: Sequence[str]) -> tuple[int, int]:
    """Remove the weight files of a finished stage folder (`weight_files`), keeping every other file, and record
    them in its manifest (`pipeline.manifest.PRUNED`), which keeps their sha256 under `files`: the folder stays
    finished under its key, so the runs after it stay cached, `klue run --verify` and `klue merge` accept it, and
    a stage that would read the weights is refused with the reason (`pipeline.runner`). Why: a replicated
    comparison keeps every run's predictions and metrics, which are a few MB, long after its checkpoints (most of
    the bytes) are no longer wanted. The manifest is rewritten (atomically) before any file is removed, so a kill
    in between leaves files marked as removed, which the next prune removes. Returns (files, bytes) removed."""
    found = weight_files(folder, manifest, patterns)
    if not found:
        return 0, 0
    record = dict(manifest.get(PRUNED) or {})
    names = sorted(pruned_files(manifest) | {rel for rel, _ in found})
    info = manifest.get("files") or {}
    record.update(files=names, bytes=sum(int(info[rel].get("bytes", 0)) for rel in names),
                  at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    write_manifest(folder, {**manifest, PRUNED: record})
    for rel, _ in found:
        (folder / rel).unlink()
    for parent in sorted({(folder / rel).parent for rel, _ in found}, key=lambda p: len(p.parts), reverse=True):
        while parent != folder and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()  # the folders the weights leave empty (a checkpoint's, a run's model/)
            parent = parent.parent
    return len(found), sum(size for _, size in found)
