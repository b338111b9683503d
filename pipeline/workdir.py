"""A finished workdir as `klue run` left it: `run.json` (the recipe's snapshot, its arms and each arm's stage
folders) and the stage folders' manifests. What every reader of a finished run starts from (`klue export` of the
model or of the corpus, the cards), on the ground floor so that no package has to reach into another's to find
an arm's folders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.manifest import read_manifest
from pipeline.runner import RUN_JSON
from pipeline.stage import StageInput


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
