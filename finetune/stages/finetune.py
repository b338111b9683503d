"""The `finetune` stage: the pretrained model of an arm -> the tasks of a suite, every seed, scored.

After `pretrain`, the stage graph goes on into the fine-tuning suite (`klue finetune`'s code, run in-process):
for each task named in `tasks`, each seed, the pretrained model and (with `vs_random_init`) fresh weights of
the same shape, and the task's floor (`finetune.floors`: TF-IDF + a linear model for the sentence-level tasks,
on the same split). Each (task, init, seed) run is a unit with its own folder, `<task>/<init>/seed-N/`, whose
`metrics.json` is written last; the stage is `resumable`, so a killed run keeps its finished units and the
rerun continues with the first unfinished one. On CPU a unit's files are the same bytes whether the stage was
interrupted or not (wall times go to `timing.json`).

Caching and sharing come from the runner's key: the stage's key covers the pretrained model's key (its input),
these params and the contents of the task files, so two arms that share a model share its fine-tuning folder,
and a rerun after a finished run skips it. Scores land in the manifest's meta (per task and init: mean, std and
per-seed values of every official metric) and in `results.md` / `results.json` (`finetune.results`: the
pretrained row, the random-init row, Δ with Welch's p, the suite's published rows), which `klue report` joins
across arms.

The default, `tasks: []`, fine-tunes nothing: a recipe without a `finetune` section ends at the checkpoint.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from finetune.data import _hf_dir, _official_file, load_task_data, write_json
from finetune.floors import floors_for, run_any_floor
from finetune.registry import SUITES, get_task, resolve_name, task_class
from finetune.tasks.base import check_hyperparams, check_task_hyperparam, departures, reads_hyperparam
from finetune.trainer import run_finetune, run_seed, seed_done
from pipeline.filehash import file_digests
from pipeline.hardware import resolve_precision
from pipeline.parallel import ray_connect
from pipeline.stage import ArmOutput, ReportSection, Stage, StageContext, StageInput, StageParams, StageResult

INITS = ("pretrained", "random-init")


class FinetuneParams(StageParams):
    """Which tasks, on which data, with which seeds and hyperparameters (`klue finetune`'s options)."""

    tasks: list[str] = Field(default_factory=list, description="task names or aliases, or a suite: 'klue' (all "
                             "eight KLUE tasks) or 'jglue'; [] runs nothing")
    data_dir: str | None = Field(None, description="the suite's data folder: official files (e.g. "
                                 "${KLUE_DATA_DIR}/klue) or a local HF datasets copy")
    task_data_dirs: dict[str, str] = Field(
        default_factory=dict, description="per task, a data folder in place of data_dir (e.g. {dst: a folder of "
                                          "generated WoS dialogues} where the shared folder has none)")
    seeds: list[int] = Field(default_factory=lambda: [42], min_length=1)
    split: Literal["auto", "official", "dev-split"] = Field(
        "auto", description="official: train file -> dev; dev-split: a split of the dev file; auto: official if "
                            "a train file exists")
    eval_fraction: float = Field(0.2, gt=0, lt=1)
    protocol: Literal["selection-split", "klue-baseline"] = Field(
        "selection-split", description="where the checkpoint is chosen: selection-split, on a share of the training "
                                       "examples (selection_fraction), never on the reported split; klue-baseline, "
                                       "on the reported split itself, as KLUE-baseline's dev table (marked in tables)")
    selection_fraction: float = Field(0.1, gt=0, lt=1, description="selection-split: the share of the training "
                                      "examples, by the task's split key hash, that chooses the checkpoint")
    vs_random_init: bool = Field(False, description="also fine-tune fresh weights of the same shape, same seeds")
    max_train_examples: int | None = Field(None, ge=1, description="cap (a fixed guid-hash sample); marked ‡")
    max_eval_examples: int | None = Field(None, ge=1)
    max_steps: int | None = Field(None, ge=1, description="cap on optimiser steps per run")
    hyperparams: dict[str, float | int | bool | str | None] = Field(
        default_factory=dict, description="finetune.tasks.base.Hyperparams fields for every task, e.g. "
                                          "{learning_rate: 1.0e-3, pooling: mean}; a field that only some tasks "
                                          "read (pooling, ptr_values_only) reaches those tasks only")
    task_hyperparams: dict[str, dict[str, float | int | bool | str | None]] = Field(
        default_factory=dict, description="per task, after `hyperparams`: {sts: {epochs: 10}}")
    lr_grid: list[float] = Field(default_factory=list, description="learning rates to choose from on the "
                                 "selection split: every rate is fine-tuned with every seed, for each task and "
                                 "init, and each picks the rate with the best mean selection score (random init "
                                 "picks its own); the table reports the pick, the report shows the whole grid. [] "
                                 "keeps the one learning rate of `hyperparams`")
    floors: bool = Field(True, description="also score each task's floors on the same split: the no-model one "
                                           "(TF-IDF + LR / ridge for sentence-level tasks, MRC's sliding window, "
                                           "DST's previous state) and the trivial ones (majority class, all-O, "
                                           "right/left attach, no answer, ...: finetune.floors)")
    equivalence_margin: float = Field(1.0, gt=0, description="points of a task's main metric within which two "
                                      "rows are called equivalent (two one-sided tests, finetune.stats); ±1 is our "
                                      "reading of the KLUE paper's 'minimal degradation'. In the stage's key, as "
                                      "every param; `python -m finetune.results --margin` re-reads finished runs "
                                      "at another")
    threads: int | None = Field(None, ge=1, description="torch threads (default: torch's)")
    devices: int | None = Field(None, ge=0, description="accelerators the runs share, one run per device at a "
                                "time (a worker process per device, CUDA_VISIBLE_DEVICES set; on Ray, tasks of "
                                "num_gpus=1). Default: the node's GPUs (a Ray cluster's with --executor ray), none "
                                "on a CPU machine. How the runs are spread, never what they write: out of the key")
    generated: list[str] = Field(default_factory=list, description="tasks whose data here is generated, not "
                                 "KLUE's (the embedded default's MRC and WoS): marked in the tables and the verdict")

    @field_validator("task_data_dirs", "task_hyperparams", mode="before")
    @classmethod
    def _none_is_empty(cls, v: Any) -> Any:
        # a recipe that extends another clears an inherited mapping with `null` (`extends` merges mappings key
        # by key, so `{}` would keep the base's entries): e.g. size-sweep.yaml, one task of klue-tiny-suite's
        return {} if v is None else v

    @field_validator("tasks", "generated")
    @classmethod
    def _known_tasks(cls, v: list[str]) -> list[str]:
        return expand_tasks(v)

    @field_validator("hyperparams")
    @classmethod
    def _known_fields(cls, v: dict[str, Any]) -> dict[str, Any]:
        return check_hyperparams(v, "hyperparams")

    @model_validator(mode="after")
    def _task_overrides(self) -> FinetuneParams:
        for name, hp in self.task_hyperparams.items():
            task = resolve_name(name)  # a RegistryError (ValueError) naming the known tasks
            if task not in self.tasks:
                raise ValueError(f"task_hyperparams.{name}: {task!r} is not in tasks ({', '.join(self.tasks)})")
            # the values as the model converts them (YAML reads 3e-5 as a string), so the key sees numbers
            self.task_hyperparams[name] = hp = check_hyperparams(hp, f"task_hyperparams.{name}")
            for key in hp:
                try:
                    check_task_hyperparam(task, key)
                except ValueError as e:
                    raise ValueError(f"task_hyperparams.{name}.{key}: {e}") from None
        if len(set(self.lr_grid)) != len(self.lr_grid) or any(lr <= 0 for lr in self.lr_grid):
            raise ValueError(f"lr_grid: positive rates, each once (got {self.lr_grid})")
        if self.lr_grid and self.protocol == "klue-baseline":
            raise ValueError("lr_grid: protocol klue-baseline chooses on the reported split; a grid needs the "
                             "selection split (protocol: selection-split)")
        if self.tasks and self.data_dir is None:
            raise ValueError("data_dir: required when tasks are named (the folder of the suite's files)")
        for name in list(self.task_data_dirs):
            try:
                task = resolve_name(name)
            except ValueError as e:
                raise ValueError(f"task_data_dirs.{name}: {e}") from None
            if task not in self.tasks:
                raise ValueError(f"task_data_dirs.{name}: {task!r} is not in tasks ({', '.join(self.tasks)})")
            self.task_data_dirs[task] = self.task_data_dirs.pop(name)
        return self

    def data_root(self, task: str) -> Path:
        """The folder `task`'s files are read from: its own in `task_data_dirs`, else `data_dir`."""
        return Path(self.task_data_dirs.get(task) or self.data_dir or ".")


def expand_tasks(names: list[str]) -> list[str]:
    """Registered task names, suites expanded in registry order; a task named twice is an error."""
    out: list[str] = []
    for name in names:
        suite = {"all": "klue"}.get(name.strip().lower(), name.strip().lower())
        for task in SUITES[suite] if suite in SUITES else [resolve_name(name)]:
            if task in out:
                raise ValueError(f"task {task!r} is named twice")
            out.append(task)
    return out


def processes(workers: int, threads: int | None) -> int:
    """How many runs the stage trains at a time: `workers`, but no more than the cores hold at `threads` each
    (unset: torch's default, every core, so one). Threads beyond the cores fight over them: the suite's 2-thread
    pretraining fell from ~7,700 to 3,600-5,200 tokens/s on 2 cores whenever a one-thread test ran beside it
    (docs/experiments/2026-12-03-suite-ablations.md, "Reproducibility")."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(workers, cores // threads if threads else 1))


def device_count(p: FinetuneParams, ctx: StageContext[FinetuneParams]) -> int:
    """How many accelerators the runs are spread over (`devices`; default: this node's GPUs, or the Ray cluster's
    with the Ray executor; 0 on a CPU machine: runs go on `workers` processes as before)."""
    if p.devices is not None:
        return p.devices
    if ctx.executor.kind == "ray":
        import ray

        ray_connect(ctx.executor)
        return int(ray.cluster_resources().get("GPU", 0))
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def resolved_precisions(ctx: StageContext[FinetuneParams]) -> dict[str, Any]:
    """What each task's `mixed_precision` resolves to on this machine for the arm's encoder (its width from the
    recipe's pretrain params, as the trainer reads it from the model's config): task -> `Precision`."""
    pretrain = getattr(getattr(ctx, "recipe", None), "stages", {}).get("pretrain")
    hidden = getattr(pretrain, "hidden_size", None)
    p = ctx.params
    return {t: resolve_precision(hyperparams_for(p, t, task_class(t).defaults).mixed_precision, hidden)
            for t in p.tasks}


def precision_material(ctx: StageContext[FinetuneParams]) -> dict[str, Any]:
    """The key's share of `resolved_precisions`: {"precision": {task: name}}."""
    return {"precision": {t: r.name for t, r in resolved_precisions(ctx).items()}}


def hyperparams_for(p: FinetuneParams, task: str, defaults: Any) -> Any:
    """The task's `Hyperparams`: its defaults (KLUE-baseline's, JGLUE's), then `hyperparams` (without the fields
    this task does not read, so its metrics.json records what it ran with), then its own `task_hyperparams` (the
    task's win)."""
    general = {k: v for k, v in p.hyperparams.items() if reads_hyperparam(task, k)}
    return defaults.replace(**{**general, **p.task_hyperparams.get(task, {})})


class FinetuneStage(Stage[FinetuneParams]):
    """Fine-tuning suite over the arm's pretrained model; resumable per (task, init, seed) unit."""

    name = "finetune"
    # 2: KLUE-baseline's evaluation cadence and early stopping, RE probabilities unrounded; 3: the MRC floor no longer
    # depends on the process's str hash seed (finetune.floors.sliding_window_answer); 4: the checkpoint is chosen on
    # a selection split carved from the training examples, not on the reported split (`protocol`, issue 48), and
    # each seed writes split.json; the trivial floors beside the no-model ones, each under `<task>/floor-<id>/`
    version = "4"
    inputs = ("pretrain",)
    resumable = True
    input_paths = ("data_dir", "task_data_dirs.*")
    layout_params = ("devices",)  # the same files whatever the devices (tests/test_finetune_devices.py)

    def fingerprint(self, ctx: StageContext[FinetuneParams]) -> dict[str, Any]:
        # the task files' contents, not their location: the same files elsewhere give the same key
        p = ctx.params
        if p.data_dir is None:
            return {}
        out = precision_material(ctx)

        # the named tasks' folders (a task's folder, or its whole root when that is one task's folder or holds no
        # such subfolder): another task's files added to the data folder do not change this key. Each file is
        # named relative to its task's root, so a task read from its own folder (`task_data_dirs`) keys as the
        # same files inside data_dir would.
        folders = {}
        for t in p.tasks:
            root, sub = p.data_root(t), get_task(t).files.subdir
            folders[root / sub if (root / sub).is_dir() else root] = root
        files = {f: root for d, root in sorted(folders.items())
                 for f in d.rglob("*") if f.is_file() and not f.name.startswith(".")}
        digests = file_digests(sorted(files), desc="hashing task files")
        return {**out, "data": {str(f.relative_to(root)): digests[f] for f, root in sorted(files.items())}}

    # the report's section, verdict and forest plot: built in `finetune.report`, from one table across the arms
    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        # lazy: finetune.results loads every task module (the suites' columns)
        from finetune.report import finetune_section

        return finetune_section(outputs)

    @classmethod
    def verdict(cls, outputs: list[ArmOutput]) -> list[str]:
        # lazy: finetune.results loads every task module (the suites' columns)
        from finetune.report import finetune_verdict

        return finetune_verdict(outputs)

    @classmethod
    def verdict_figures(cls, outputs: list[ArmOutput]) -> list[Any]:
        # lazy: finetune.results loads every task module (the suites' columns)
        from finetune.report import finetune_figures

        return finetune_figures(outputs)

    @classmethod
    def card_facts(cls, stage: StageInput) -> dict[str, Any]:
        """The KLUE table and `model-index` of the model card (finetune/card.py); nothing when it fine-tuned none."""
        # lazy: numpy and every task module (finetune.card reads finetune.results)
        from finetune.card import evaluation

        return {"evaluation": evaluation(stage)}

    @classmethod
    def progress(cls, partial: Path, params: dict[str, Any]) -> str | None:
        inits = INITS if params.get("vs_random_init") else INITS[:1]
        rates = params.get("lr_grid") or [None]
        units = [f"{t}/{run_folder(i, lr)}/seed-{s}" for t in params.get("tasks", []) for i in inits for lr in rates
                 for s in params.get("seeds", [])]
        done = [u for u in units if (partial / u / "metrics.json").is_file()]
        todo = [u for u in units if u not in done]
        return (f"{len(done)} of {len(units)} fine-tuning runs done"
                + (f"; now {todo[0]}" if todo else "; scoring floors and writing the table"))

    def describe(self, ctx: StageContext[FinetuneParams]) -> dict[str, Any]:
        p = ctx.params
        if not p.tasks:
            return {"tasks": "none (stages.finetune.tasks is empty: the run ends at the checkpoint)"}
        inits = INITS if p.vs_random_init else INITS[:1]
        grid = len(p.lr_grid) or 1
        out: dict[str, Any] = {
            "runs": f"{len(p.tasks)} tasks x {len(inits)} init{'s' if len(inits) > 1 else ''} ({', '.join(inits)}) "
                    + (f"x {grid} learning rates " if p.lr_grid else "")
                    + f"x {len(p.seeds)} seeds = {len(p.tasks) * len(inits) * grid * len(p.seeds)}, plus "
                    f"{sum(len(floors_for(t)) for t in p.tasks) if p.floors else 0} floors",
            "data": f"{p.data_dir} (split {p.split})",
            "protocol": (f"selection-split: {p.selection_fraction:.0%} of the training examples (by the task's split "
                         "key hash) choose the checkpoint; the reported split only scores it"
                         if p.protocol == "selection-split" else
                         "klue-baseline: the checkpoint is chosen on the reported split itself (KLUE-baseline's dev "
                         "table; marked in the tables)"),
        }
        fields = {"learning_rate": "lr", "batch_size": "batch", "epochs": "epochs", "max_length": "max length"}
        for name in p.tasks:
            task = get_task(name)
            chosen = hyperparams_for(p, name, task.defaults)
            hp = ", ".join(f"{short} {getattr(chosen, f)}" for f, short in fields.items())
            changed = departures(chosen.model_dump(), task.defaults)
            if changed:  # what the results table will mark, named before anything runs
                hp += f" (departs from the baseline: {', '.join(d.split(' (')[0] for d in changed)})"
            # where its data is, without reading it: a missing file shows here, not hours into the run
            root = p.data_root(name)
            if not root.is_dir():
                files = f"MISSING: {root} is not a folder"
            elif _hf_dir(task, root) is not None:
                files = "HF datasets copy"
            elif _official_file(task, root, task.files.dev_glob) is None:
                files = f"MISSING: no {task.files.subdir}/{task.files.dev_glob}"
            elif _official_file(task, root, task.files.train_glob) is None:
                files = "dev file only: trained on a split of it (†)"
            else:
                files = "official train and dev files"
            if name in p.task_data_dirs:
                files += f", from {root}"
            if name in p.generated:
                files += " (generated, §)"
            out[name] = f"{hp}; {files}"
        kinds = {f"{r.name} ({r.why})" for r in resolved_precisions(ctx).values()}
        out["precision"] = "; ".join(sorted(kinds))
        caps = {k: v for k, v in (("max_train_examples", p.max_train_examples),
                                  ("max_eval_examples", p.max_eval_examples), ("max_steps", p.max_steps)) if v}
        if caps:
            out["caps"] = ", ".join(f"{k} {v}" for k, v in caps.items())
        n = processes(ctx.workers, p.threads)
        out["processes"] = (f"{n} runs at a time, {p.threads} thread{'s' if p.threads != 1 else ''} each" if n > 1
                            else "one run at a time" + ("" if ctx.workers <= 1 else
                                                        f" (threads: {p.threads or 'unset'} fill the cores)"))
        return out

    def run(self, ctx: StageContext[FinetuneParams]) -> StageResult:
        p = ctx.params
        if not p.tasks:
            return StageResult(meta={"tasks": {}, "note": "no tasks named (stages.finetune.tasks)"})
        assert p.data_dir is not None
        data_dir = Path(p.data_dir)
        if not data_dir.is_dir():
            raise FileNotFoundError(f"stages.finetune.data_dir: {data_dir} is not a folder")
        for task, folder in p.task_data_dirs.items():
            if not Path(folder).is_dir():
                raise FileNotFoundError(f"stages.finetune.task_data_dirs.{task}: {folder} is not a folder")
        import torch
        from transformers.utils import logging as hf_logging

        if p.threads:
            torch.set_num_threads(p.threads)
        # transformers' load report (the new head's weights) once per run would bury the progress bars
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        try:
            return self._run(ctx)
        finally:
            hf_logging.set_verbosity(verbosity)

    def _run(self, ctx: StageContext[FinetuneParams]) -> StageResult:
        # lazy: finetune.results loads every task module (the suites' columns)
        from finetune.results import write_results

        p = ctx.params
        pre = ctx.inputs["pretrain"]
        model_dir = pre.path / pre.meta.get("final_dir", "final")
        # named by its place in the workdir: the metrics files do not depend on where the workdir is
        model_ref = f"{pre.name}/{pre.path.name}/{pre.meta.get('final_dir', 'final')}"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        inits = INITS if p.vs_random_init else INITS[:1]
        replicate = replicate_seed(ctx.arm)  # this arm's pretraining replicate, if the recipe made replicates
        # every task's data is read before the first run trains: a broken file fails in seconds
        try:
            jobs = [(name, *_task_data(str(ctx.out_dir), p, name)) for name in p.tasks]
            # the (task, init, seed) runs, on `workers` processes: each run seeds itself and reads nothing another
            # writes, so its files are the same bytes whichever process ran it (docs/experiments/2026-12-03-suite-
            # ablations.md, "Reproducibility"). Spawned, not forked: see `pipeline.parallel.ordered_map`.
            # (a resumed stage skips its finished runs here, before any process loads their data)
            rates: list[float | None] = list(p.lr_grid) or [None]
            devices = device_count(p, ctx)
            units = [{"params": p.model_dump(mode="json"), "task": name, "init": init, "seed": seed, "lr": lr,
                      "model_dir": str(model_dir), "out_dir": str(ctx.out_dir), "replicate": replicate,
                      "progress": processes(ctx.workers, p.threads) <= 1 and devices <= 1}
                     for name in p.tasks for init in inits for lr in rates for seed in p.seeds
                     if not seed_done(ctx.out_dir / name / run_folder(init, lr) / f"seed-{seed}")]
            at_once = dataclasses.replace(ctx, workers=devices or processes(ctx.workers, p.threads))
            for _ in at_once.map(_train_unit, units, desc="fine-tuning runs" if at_once.workers > 1 else None,
                                 start="spawn", devices=devices):
                pass
        finally:
            _DATA.clear()
        meta: dict[str, Any] = {}
        run_dirs = []
        for name, task, hp, data in jobs:
            for init in inits:
                # every seed is done: this reads them back and writes each (task, init, rate) summary; with a
                # grid, the rate the selection split prefers is the cell's (`choose_rate`)
                summaries = {lr: run_finetune(task, model_dir, data, ctx.out_dir / name / run_folder(init, lr),
                                              p.seeds, hp if lr is None else hp.replace(learning_rate=lr),
                                              max_steps=p.max_steps, random_init=init == "random-init",
                                              save_model=False,
                                              label="random init" if init == "random-init" else "pretrained",
                                              progress=False, resume=True, model_ref=model_ref,
                                              pretrain_seed=replicate)
                             for lr in rates}
                lr, grid = choose_rate(ctx.out_dir / name / init, summaries, p.seeds, task.main_metric)
                summary, folder = summaries[lr], f"{name}/{run_folder(init, lr)}"
                meta.setdefault(name, {})[init] = {
                    "mean": summary["mean"], "std": summary["std"], "per_seed": summary["per_seed"],
                    "main_metric": summary["main_metric"], "split": data.source.get("split"),
                    "n_train": data.source.get("n_train"), "n_eval": data.source.get("n_eval"),
                    "metrics": f"{folder}/metrics.json", **({"grid": grid} if grid else {})}
                run_dirs.append(ctx.out_dir / folder)
            for floor in floors_for(name) if p.floors else []:
                # every floor of the task (finetune.floors: the no-model one, then the trivial ones), each a row of
                # the table under its own label, on the examples the model was scored on
                out = ctx.out_dir / name / f"floor-{floor}"
                summary = run_any_floor(name, floor, p.data_root(name), out, split=p.split,
                                        eval_fraction=p.eval_fraction, max_eval=p.max_eval_examples,
                                        max_train=p.max_train_examples, protocol=p.protocol,
                                        selection_fraction=p.selection_fraction)
                meta[name][f"floor:{floor}"] = {
                    "mean": summary["mean"], "label": summary["label"], "method": summary["floor"]["method"],
                    "reads_gold": summary["floor"]["reads_gold"], "main_metric": summary["main_metric"],
                    "metrics": f"{name}/floor-{floor}/metrics.json"}
                run_dirs.append(out)
        write_results(ctx.out_dir / "results", run_dirs, generated=p.generated)
        return StageResult(meta={"tasks": meta, "seeds": p.seeds, "table": "results.md",
                                 "runs": [str(d.relative_to(ctx.out_dir)) for d in run_dirs]})


# A stage run's task data, per process: read once by the stage before any run trains, and once by each worker
# process for the runs it is given. Keyed by the stage's output folder (its key) and the task, so a long-lived
# worker (a Ray actor process) never serves another run's data; the stage clears its own process's copy.
_DATA: dict[tuple[str, str], tuple[Any, Any, Any]] = {}


def _task_data(out_dir: str, p: FinetuneParams, name: str) -> tuple[Any, Any, Any]:
    """(task, its Hyperparams, its TaskData) for this stage run."""
    if (out_dir, name) not in _DATA:
        root = p.data_root(name)
        task = get_task(name, data_dir=root)
        data = load_task_data(task, root, split=p.split, eval_fraction=p.eval_fraction,
                              max_train=p.max_train_examples, max_eval=p.max_eval_examples, protocol=p.protocol,
                              selection_fraction=p.selection_fraction)
        _DATA[out_dir, name] = (task, hyperparams_for(p, name, task.defaults), data)
    return _DATA[out_dir, name]


def _train_unit(unit: dict[str, Any]) -> str:
    """One (task, init, seed) run of the stage (`finetune.trainer.run_seed`, resumed when its metrics exist), in
    whichever process `ctx.map` gives it; returns its folder, relative to the stage's."""
    import torch
    from transformers.utils import logging as hf_logging

    p = FinetuneParams.model_validate(unit["params"])
    if p.threads:
        torch.set_num_threads(p.threads)
    hf_logging.set_verbosity_error()  # a spawned process starts at transformers' default
    if not unit["progress"]:  # runs side by side: the stage's one bar, not every process's weight-loading bars
        hf_logging.disable_progress_bar()
    task, hp, data = _task_data(unit["out_dir"], p, unit["task"])
    if unit["lr"] is not None:
        hp = hp.replace(learning_rate=unit["lr"])
    rel = f"{unit['task']}/{run_folder(unit['init'], unit['lr'])}/seed-{unit['seed']}"
    run_seed(task, Path(unit["model_dir"]), data, Path(unit["out_dir"]) / rel, unit["seed"], hp,
             max_steps=p.max_steps, random_init=unit["init"] == "random-init", save_model=False,
             progress=unit["progress"], resume=True,
             init_seed=unit["replicate"] if unit["init"] == "random-init" else None)
    return rel


def run_folder(init: str, lr: float | None) -> str:
    """A (init, learning rate) run's folder under its task's: `pretrained`, or with a grid `pretrained/lr-0.001`."""
    return init if lr is None else f"{init}/lr-{lr:g}"


def selection_score(folder: Path, seeds: list[int], metric: str) -> float | None:
    """The mean over the seeds of the main metric on the selection split at each seed's chosen checkpoint (the
    score that chose it: its history entry at `best_step`); None where no seed has one."""
    import json
    import math

    values = []
    for seed in seeds:
        record = json.loads((folder / f"seed-{seed}" / "metrics.json").read_text(encoding="utf-8"))
        at = [h.get(metric) for h in record.get("history", []) if h.get("step") == record.get("best_step")]
        if at and at[0] is not None and math.isfinite(at[0]):
            values.append(float(at[0]))
    return sum(values) / len(values) if values else None


def choose_rate(folder: Path, summaries: dict[float | None, dict[str, Any]], seeds: list[int], metric: str
                ) -> tuple[float | None, list[dict[str, Any]]]:
    """The grid's pick for one (task, init): the rate with the best mean selection score (`selection_score`; the
    first in grid order on a tie), and every rate's selection and reported scores (the whole grid, written to
    `folder/grid.json` and shown by the report). Without a grid: (None, [])."""
    if list(summaries) == [None]:
        return None, []
    grid = [{"learning_rate": lr, "selection": selection_score(folder / f"lr-{lr:g}", seeds, metric),
             "reported": s["mean"].get(metric), "metrics": f"lr-{lr:g}/metrics.json"} for lr, s in summaries.items()]
    best = max(range(len(grid)), key=lambda i: (grid[i]["selection"] is not None,
                                                 grid[i]["selection"] or 0.0, -i))
    for i, row in enumerate(grid):
        row["chosen"] = i == best
    write_json(folder / "grid.json", {"chosen": grid[best]["learning_rate"], "metric": metric,
                                      "by": "mean over the seeds of the selection split's score at each seed's chosen "
                                            "checkpoint", "grid": grid})
    return grid[best]["learning_rate"], grid


def replicate_seed(arm: dict[str, str]) -> int | None:
    """The pretraining replicate an arm is (its `pretrain_seed` value), or None: the arm's only pretraining run.
    A replicate's random init draws its weights from this seed, so the random-init row has as many inits as the
    pretrained row has pretraining runs."""
    # lazy: finetune.results loads every task module (the suites' columns)
    from finetune.report import REPLICATE_VARIANT

    value = arm.get(REPLICATE_VARIANT)
    return None if value is None else int(value)
