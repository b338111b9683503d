"""The stage runner: walks the stage graph for every arm of a recipe, runs what is not done, skips what is.

Caching, resume and ablation sharing all come from one rule: a stage's output folder is
`<workdir>/<stage>/<key>/`, where key = sha256(stage, version, params, input keys, fingerprint, seed[, sources]),
and the folder is done exactly when its `manifest.json` names that key. Work happens in `<key>.partial/`; the
manifest is written last and the folder renamed into place, so a kill -9 at any moment leaves either a done
folder or a partial one (wiped before a rerun, or kept for a `resumable` stage to continue). Two arms whose
params agree up to a stage get the same keys there and share the folders.

Stages run stage-major (every arm's `collect`, then every arm's `filter`, ...), so shared upstream work is done
once and a failure stops before any arm spends time downstream of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline import io
from pipeline.manifest import (
    KEY_CHARS,
    MANIFEST,
    compute_key,
    environment,
    file_table,
    pruned_note,
    read_manifest,
    result_problems,
    verify_files,
    write_manifest,
)
from pipeline.parallel import Executor
from pipeline.recipe import Arm, Recipe, RecipeError, stage_class
from pipeline.recipe_paths import without_input_paths
from pipeline.stage import (
    JOURNAL,
    PARTIAL,
    Preempted,
    Stage,
    StageContext,
    StageInput,
    StageParams,
    StageResult,
)
from pipeline.stages import STAGES, StageRegistry

RUN_JSON = "run.json"
STATUS_JSON = "status.json"  # the stage running now (removed when it ends): `klue status`


class StageFailed(RuntimeError):
    """A stage raised, or returned counts the runner refuses. Earlier stages stay done."""

    def __init__(self, stage: str, arm: str, message: str, log: Path | None = None):
        self.stage, self.arm, self.message, self.log = stage, arm, message, log
        super().__init__(f"stage {stage} failed (arm {arm}): {message}")


@dataclass
class StageOutcome:
    """One stage folder as this run saw it."""

    stage: str
    key: str
    path: Path
    status: str  # "ran" | "skipped" | "failed"
    seconds: float
    manifest: dict[str, Any] = field(default_factory=dict)
    arms: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class _Plan:
    """A stage of one arm, keyed and ready to run."""

    stage: Stage[Any]
    key: str
    material: dict[str, Any]
    inputs: dict[str, StageInput]
    params: StageParams


@dataclass
class PlannedStage:
    """One stage folder as a dry run sees it: its key, the arms that share it, and whether it is already done."""

    stage: str
    key: str
    path: Path
    arms: list[str]
    cached: bool
    params: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)


def stage_dir(workdir: Path, stage: str, key: str) -> Path:
    return workdir / stage / key[:KEY_CHARS]


class Runner:
    """Runs one recipe into one workdir. `registry` defaults to the production stage graph."""

    def __init__(self, recipe: Recipe, workdir: str | Path, registry: StageRegistry | None = None, *,
                 until: str | None = None, force: Iterable[str] = (), workers: int = 1, verify: bool = False,
                 console: Any = None, executor: Executor | None = None):
        self.recipe = recipe
        self.workdir = Path(workdir)
        self.registry = registry or STAGES
        self.workers = max(1, int(workers))
        self.executor = executor or Executor(recipe.executor)
        self.verify = verify
        self.console = console
        order = self.registry.names
        for name in [until, *force]:
            if name is not None and name not in order:
                raise RecipeError(f"unknown stage {name!r}; known stages: {', '.join(order)}")
        self.stages = list(order[: order.index(until) + 1] if until else order)
        self.until = until
        self.classes = {name: stage_class(self.registry, name, "stage graph") for name in self.stages}
        for i, name in enumerate(self.stages):
            for dep in self.classes[name].inputs:
                if dep not in self.stages[:i]:
                    raise RecipeError(f"stage {name!r} reads {dep!r}, which is not a stage before it in the graph "
                                      f"({', '.join(self.stages[:i]) or 'none'})")
        self.forced = self._downstream(set(force))
        # arm name -> stage -> outcome, in stage order
        self.arm_stages: dict[str, dict[str, StageOutcome]] = {a.name: {} for a in recipe.arms}
        self.started = ""

    def recipe_warnings(self) -> list[str]:
        """What the stages of this run warn about in the recipe (`Stage.recipe_warnings`), in stage order."""
        return [w for name in self.stages for w in self.classes[name].recipe_warnings(self.recipe)]

    def _downstream(self, roots: set[str]) -> set[str]:
        """The forced stages and every stage that (transitively) reads one of them."""
        out = set(roots)
        for name in self.stages:
            if any(dep in out for dep in self.classes[name].inputs):
                out.add(name)
        return out

    # -----------------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Run every stage of every arm; returns the run record (also written to `<workdir>/run.json`)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.started = _now()
        with _workdir_lock(self.workdir):
            io.remove_stale(self.workdir / RUN_JSON)
            try:
                for name in self.stages:
                    self._run_stage(name)
                    self._write_run_json("running")
            except StageFailed:
                self._write_run_json("failed")
                raise
            except KeyboardInterrupt:
                self._write_run_json("interrupted")
                raise
            except Preempted:
                self._write_run_json("preempted")
                raise
            return self._write_run_json("ok")

    def plan(self) -> list[PlannedStage]:
        """What `run` would do, without running anything: every stage of every arm keyed (a key needs the
        upstream keys, not their outputs), whether its folder is already done, and what the stage says it would
        do (`Stage.describe`). Stages in run order; arms that share a key share one entry."""
        out: list[PlannedStage] = []
        for name in self.stages:
            groups: dict[str, list[tuple[Arm, _Plan]]] = {}
            for arm in self.recipe.arms:
                plan = self._plan(name, arm)
                groups.setdefault(plan.key, []).append((arm, plan))
            for key, members in groups.items():
                arm, plan = members[0]
                final = stage_dir(self.workdir, name, key)
                manifest = read_manifest(final)
                cached = manifest is not None and manifest.get("key") == key and name not in self.forced
                if not cached:
                    manifest = {"key": key, "meta": {}}
                outcome = StageOutcome(name, key, final, "cached" if cached else "planned", 0.0, manifest or {},
                                       [a.name for a, _ in members])
                for a, _ in members:
                    self.arm_stages[a.name][name] = outcome
                ctx = StageContext(out_dir=final, params=plan.params, inputs=plan.inputs, recipe=arm.recipe,
                                   workers=self.workers, arm=dict(arm.values), executor=self.executor)
                try:
                    details = plan.stage.describe(ctx)
                except Exception as e:  # a dry run reports what it cannot tell instead of stopping
                    details = {"describe failed": f"{type(e).__name__}: {e}"}
                out.append(PlannedStage(name, key, final, outcome.arms, cached, plan.material["params"], details))
        self.arm_stages = {a.name: {} for a in self.recipe.arms}
        return out

    def _run_stage(self, name: str) -> None:
        """Key the stage in every arm (their inputs are all done: stage-major order), then build each distinct
        key once, for all the arms that share it."""
        groups: dict[str, list[tuple[Arm, _Plan]]] = {}
        for arm in self.recipe.arms:
            plan = self._plan(name, arm)
            groups.setdefault(plan.key, []).append((arm, plan))
        for members in groups.values():
            arm, plan = members[0]
            arm_names = [a.name for a, _ in members]
            try:
                outcome = self._execute(plan, arm)
            except StageFailed:
                for other in arm_names:
                    self.arm_stages[other][name] = self.arm_stages[arm.name][name]
                raise
            outcome.arms = arm_names
            for a in arm_names:
                self.arm_stages[a][name] = outcome
                self._link(a, name, outcome.path)
            self._print(outcome)

    def _plan(self, name: str, arm: Arm) -> _Plan:
        cls = self.classes[name]
        stage = cls()
        params = arm.recipe.stages.get(name)
        if params is None:  # a recipe validated for fewer stages (e.g. with another --until): defaults
            # and the recipe's language, which no stage defaults (pipeline.recipe._take_language)
            fields = cls.params_model.model_fields
            params = cls.params_model.model_validate({"language": arm.recipe.language} if "language" in fields else {})
        inputs = {}
        for dep in cls.inputs:
            up = self.arm_stages[arm.name][dep]
            inputs[dep] = StageInput(dep, up.path, up.manifest)
        probe = StageContext(out_dir=self.workdir / name, params=params, inputs=inputs, recipe=arm.recipe,
                             workers=self.workers, arm=dict(arm.values), executor=self.executor)
        try:
            material = {
                "stage": name,
                "version": str(cls.version),
                "params": params.model_dump(mode="json"),
                "inputs": {dep: inp.manifest["key"] for dep, inp in sorted(inputs.items())},
                "fingerprint": stage.fingerprint(probe),
                "seed": arm.recipe.seed,
            }
            if cls.sources_model is not None:
                material["sources"] = [s.model_dump(mode="json") for s in arm.recipe.sources]
            keyed = without_input_paths(cls, material)
            for param in cls.layout_params:  # how the work is cut, not what it writes (Stage.layout_params)
                keyed["params"].pop(param, None)
            key = compute_key(keyed)
        except Exception as e:
            raise self._fail(name, arm, None, f"computing the cache key: {type(e).__name__}: {e}", exc=e) from e
        return _Plan(stage, key, material, inputs, params)

    def _execute(self, plan: _Plan, arm: Arm) -> StageOutcome:
        stage, key, material, inputs, params = plan.stage, plan.key, plan.material, plan.inputs, plan.params
        name = stage.name
        final = stage_dir(self.workdir, name, key)
        partial = final.with_name(final.name + PARTIAL)
        old = final.with_name(final.name + ".old")
        forced = name in self.forced
        t0 = time.monotonic()
        _recover_swap(final, partial, old, key)

        if not forced:
            manifest = read_manifest(final)
            if manifest is not None and manifest.get("key") == key:
                if self.verify:
                    problems = verify_files(final, manifest)
                    if problems:
                        raise self._fail(name, arm, key, "outputs changed since they were written:\n  "
                                         + "\n  ".join(problems) + f"\nrerun with --force {name} to rebuild")
                return StageOutcome(name, key, final, "skipped", time.monotonic() - t0, manifest)
            # killed after the manifest was written but before the rename: the partial folder is complete
            manifest = read_manifest(partial)
            if manifest is not None and manifest.get("key") == key:
                _publish(partial, final, old)
                return StageOutcome(name, key, final, "ran", time.monotonic() - t0, manifest)

        for dep, inp in sorted(inputs.items()):  # a stage to build from weights that `klue gc --weights` removed
            if (note := pruned_note(inp.manifest)) is not None:
                raise self._fail(name, arm, key, f"its input {dep} ({inp.path}): {note}. Rebuild {dep} "
                                 f"with `--force {dep}`, or `klue merge` a whole copy into this workdir")
        if partial.exists() and (forced or not (stage.resumable or stage.shard_resume)):
            shutil.rmtree(partial)
        partial.mkdir(parents=True, exist_ok=True)
        _clean_resumed(partial, temps=not stage.written_from_outside(partial))
        journal = partial / JOURNAL if stage.shard_resume else None
        ctx = StageContext(out_dir=partial, params=params, inputs=inputs, recipe=arm.recipe,
                           workers=self.workers, arm=dict(arm.values), executor=self.executor, journal=journal)
        started = _now()
        # what `klue status` reads while the stage runs: which stage, for which arms, in which folder
        io.write_json(self.workdir / STATUS_JSON, {
            "stage": name, "key": key, "arm": arm.name, "partial": partial.relative_to(self.workdir).as_posix(),
            "started": started, "pid": os.getpid()}, indent=2, sort_keys=False)
        try:
            result = stage.run(ctx)
        except Preempted as e:  # not a failure: its progress is in the partial folder, kept for the rerun
            e.stage = name
            raise
        except Exception as e:
            raise self._fail(name, arm, key, f"{type(e).__name__}: {e}", exc=e) from e
        finally:
            (self.workdir / STATUS_JSON).unlink(missing_ok=True)
        seconds = time.monotonic() - t0
        if not isinstance(result, StageResult):
            raise self._fail(name, arm, key, f"run() returned {type(result).__name__}, expected StageResult")
        if journal is not None:
            shutil.rmtree(journal, ignore_errors=True)  # done: the output is what an uninterrupted run writes
        problems = result_problems(result)
        if problems:
            raise self._fail(name, arm, key, "document counts do not reconcile, output refused:\n  "
                             + "\n  ".join(problems))
        try:
            json.dumps(result.meta, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise self._fail(name, arm, key, f"result meta is not plain JSON: {e}") from e
        manifest = {
            "stage": name,
            "key": key,
            "version": material["version"],
            "params": material["params"],
            "inputs": material["inputs"],
            "fingerprint": material["fingerprint"],
            "seed": material["seed"],
            "files": file_table(partial),
            "funnel": result.funnel.to_json() if result.funnel is not None else None,
            "by_source": {s: f.to_json() for s, f in sorted(result.by_source.items())},
            "meta": result.meta,
            "timings": {"started": started, "finished": _now(), "seconds": round(seconds, 3)},
            "workers": self.workers,
            "executor": self.executor.describe(),
            **environment(),
        }
        write_manifest(partial, manifest)
        _publish(partial, final, old)
        return StageOutcome(name, key, final, "ran", time.monotonic() - t0, manifest)

    def _fail(self, name: str, arm: Arm, key: str | None, message: str,
              exc: BaseException | None = None) -> StageFailed:
        log = None
        if exc is not None:
            log = self.workdir / "logs" / f"{name}-{key[:KEY_CHARS] if key else 'key'}.traceback.txt"
            log.parent.mkdir(parents=True, exist_ok=True)
            io.write_text(log, "".join(traceback.format_exception(exc)))
        outcome = StageOutcome(name, key or "", self.workdir, "failed", 0.0, {}, [arm.name], message)
        self.arm_stages[arm.name][name] = outcome
        err = StageFailed(name, arm.name, message, log)
        if self.console is not None:
            self.console.print(f"[bold red]✗ {name:<14} failed[/]  (arm {arm.name})  {message}"
                                + (f"\n  traceback: {log}" if log else ""), highlight=False)
        return err

    def _print(self, outcome: StageOutcome) -> None:
        if self.console is None:
            return
        funnel = outcome.manifest.get("funnel")
        docs = f"docs {funnel['docs_kept']}/{funnel['docs_in']} kept" if funnel else ""
        n_arms = len(self.recipe.arms)
        which = ("" if n_arms == 1 else f"  all {n_arms} arms" if len(outcome.arms) == n_arms
                 else f"  arm{'s' if len(outcome.arms) > 1 else ''} {'; '.join(outcome.arms)}")
        style = "green" if outcome.status == "ran" else "dim"
        mark = "✓" if outcome.status == "ran" else "·"
        self.console.print(f"[{style}]{mark} {outcome.stage:<14} {outcome.status:<7} {outcome.seconds:8.2f}s[/]"
                           f"  {docs:<26} key {outcome.key[:8]}{which}", highlight=False, soft_wrap=True)

    def _link(self, arm: str, stage: str, target: Path) -> None:
        """`<workdir>/arms/<arm>/<stage>` -> `../../<stage>/<key>`, replaced atomically."""
        link = self.workdir / "arms" / arm / stage
        link.parent.mkdir(parents=True, exist_ok=True)
        rel = os.path.relpath(target, link.parent)
        io.remove_stale(link)  # left by a run killed mid-way
        with io.atomic_path(link) as tmp:
            os.symlink(rel, tmp)

    def _write_run_json(self, status: str) -> dict[str, Any]:
        record = {
            "status": status,
            "started": self.started,
            "finished": _now(),
            "recipe_file": str(self.recipe.path) if self.recipe.path else None,
            "recipe": self.recipe.snapshot(),
            "until": self.until,
            "forced": sorted(self.forced),
            "workers": self.workers,
            "executor": self.executor.describe(),
            "stages": self.stages,
            "arms": [
                {
                    "name": arm.name,
                    "values": arm.values,
                    "stages": [
                        {"stage": o.stage, "key": o.key,
                         "path": None if o.status == "failed" else o.path.relative_to(self.workdir).as_posix(),
                         "status": o.status, "seconds": round(o.seconds, 3), "error": o.error,
                         "shared_with": [a for a in o.arms if a != arm.name]}
                        for o in self.arm_stages[arm.name].values()
                    ],
                }
                for arm in self.recipe.arms
            ],
            **environment(),
        }
        io.write_json(self.workdir / RUN_JSON, record, indent=2, sort_keys=False)
        return record


def _recover_swap(final: Path, partial: Path, old: Path, key: str) -> None:
    """Finish a swap that a kill interrupted (`final` moved to `old`, the new `partial` not yet renamed)."""
    if not old.exists():
        return
    if not final.exists():
        manifest = read_manifest(partial)
        if manifest is not None and manifest.get("key") == key:
            os.replace(partial, final)
        else:
            os.replace(old, final)
            return
    shutil.rmtree(old)




def _clean_resumed(partial: Path, temps: bool = True) -> None:
    """Before a resumable stage continues a killed run: drop what its interrupted atomic writes left (temp
    files and folders of `pipeline.io`; not where a process outside this run still writes:
    `Stage.written_from_outside`) and any stale manifest."""
    if temps:
        io.remove_temps(partial)
    (partial / MANIFEST).unlink(missing_ok=True)


def _publish(partial: Path, final: Path, old: Path) -> None:
    """Rename the finished partial folder into place; an existing folder (forced rerun) is swapped out through
    `<key>.old`, which `_recover_swap` finishes after a kill."""
    io.move_into_place(partial, final, old)


@contextlib.contextmanager
def _workdir_lock(workdir: Path) -> Iterator[None]:
    """One `klue run` per workdir at a time (the lock dies with the process, so kill -9 never leaves it)."""
    with open(workdir / ".klue-run.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RecipeError(f"another `klue run` is using {workdir}; wait for it or use another --workdir") \
                from None
        yield


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_recipe(recipe: Recipe, workdir: str | Path, registry: StageRegistry | None = None,
               **kwargs: Any) -> dict[str, Any]:
    """Convenience: `Runner(recipe, workdir, registry, **kwargs).run()`."""
    return Runner(recipe, workdir, registry, **kwargs).run()
