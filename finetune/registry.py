"""Which fine-tuning tasks exist: name -> task class (imported on first use), aliases, and the two suites.

What a task is lives in its module: each `finetune/tasks/<task>.py` class declares its `entry` (title, metric
keys, main metric, results-table `Column`s with the published scores and their source) beside the metrics it
computes. This module only names them: adding a task is one module under `finetune/tasks/` plus one line here.
`klue finetune --help`, `--task-list` and the results tables read the entries of a whole suite, which imports
its task modules; those import no torch, transformers, scikit-learn or SciPy at module level (`finetune.metrics`
and the heads load them inside functions), so that stays a fraction of a second. Listing or resolving names
(`TASK_CLASSES.names`, `resolve_name`, `list(TASKS)`, `name in TASKS`) imports no task module.

Two suites. `TASKS` is the KLUE suite: `klue finetune all`, `--task-list`, `--help` and the results tables
(`finetune.results`) cover it. `JGLUE_TASKS` holds the four JGLUE tasks with a train or dev file (JSTS, JNLI,
JSQuAD, JCommonsenseQA; MARC-ja is no longer distributed): they are fine-tuned and scored by name (`klue
finetune jnli`, `klue score jsquad`), their data is another folder (`$KLUE_DATA_DIR/ja/jglue`), and they stay
out of `all`, whose runs read one data folder.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from finetune.records import Column, TaskEntry
from pipeline.registry import Registry, RegistryError

if TYPE_CHECKING:
    from finetune.tasks.base import Task

# name -> "module:Class", in report order.
KLUE_TARGETS: dict[str, str] = {
    "ynat": "finetune.tasks.ynat:YnatTask", "sts": "finetune.tasks.sts:StsTask", "nli": "finetune.tasks.nli:NliTask",
    "ner": "finetune.tasks.ner:NerTask", "re": "finetune.tasks.re:ReTask", "dp": "finetune.tasks.dp:DpTask",
    "mrc": "finetune.tasks.mrc:MrcTask", "dst": "finetune.tasks.dst:DstTask"}
JGLUE_TARGETS: dict[str, str] = {
    "jsts": "finetune.tasks.jsts:JstsTask", "jnli": "finetune.tasks.jnli:JnliTask",
    "jsquad": "finetune.tasks.jsquad:JsquadTask", "jcommonsenseqa": "finetune.tasks.jcqa:JCommonsenseQaTask"}

# Names users may type for a task: KLUE-baseline's task names and the HF `klue` config names; `jcqa`, the usual
# short form of JCommonsenseQA (the module is `finetune/tasks/jcqa.py`).
ALIASES: dict[str, str] = {"tc": "ynat", "klue-sts": "sts", "klue-nli": "nli", "klue-ner": "ner", "klue-re": "re",
                           "klue-dp": "dp", "klue-mrc": "mrc", "wos": "dst",
                           "klue-dst": "dst", "jcqa": "jcommonsenseqa"}

# The lookup of the classes themselves: imported on first use.
TASK_CLASSES: Registry[type[Task]] = Registry("task", {**KLUE_TARGETS, **JGLUE_TARGETS}, aliases=ALIASES)


def task_entry(name: str) -> TaskEntry:
    """The `entry` a task class declares itself (its module is imported here). An entry inherited from a parent
    task (JNLI from NLI, JSTS from STS, JSQuAD from MRC) would put the parent's title and published scores in
    the reports: refused, naming the class."""
    cls = TASK_CLASSES.get(name)
    entry = vars(cls).get("entry")
    if not isinstance(entry, TaskEntry):
        raise RegistryError(f"task {name!r}: {cls.__module__}.{cls.__qualname__} declares no `entry` of its own "
                            f"(a TaskEntry: title, metrics, main metric, columns)")
    return entry


class TaskEntries(Mapping[str, TaskEntry]):
    """Registered names -> their `TaskEntry`s. Names, `in` and `len` import nothing; an entry imports its task's
    module on first access (`task_entry`)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = names

    def __getitem__(self, name: str) -> TaskEntry:
        if name not in self._names:
            raise KeyError(name)
        return task_entry(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __repr__(self) -> str:
        return f"TaskEntries({', '.join(self._names)})"


TASKS = TaskEntries(tuple(KLUE_TARGETS))
JGLUE_TASKS = TaskEntries(tuple(JGLUE_TARGETS))

# Every task that can be named, and the suites they belong to.
ALL_TASKS = TaskEntries((*KLUE_TARGETS, *JGLUE_TARGETS))
SUITES: dict[str, TaskEntries] = {"klue": TASKS, "jglue": JGLUE_TASKS}


def resolve_name(name: str) -> str:
    """The registered name for a task name or alias; a `RegistryError` (a ValueError) naming the known ones."""
    return TASK_CLASSES.resolve(name)


def task_class(name: str) -> type[Task]:
    return TASK_CLASSES.get(name)


__all__ = ["ALIASES", "ALL_TASKS", "JGLUE_TARGETS", "JGLUE_TASKS", "KLUE_TARGETS", "SUITES", "TASKS", "TASK_CLASSES",
           "Column", "RegistryError", "TaskEntries", "TaskEntry", "get_task", "resolve_name", "task_class",
           "task_entry", "task_list_text"]


def get_task(name: str, data_dir: Path | None = None) -> Task:
    """An instance of the task; `data_dir` lets tasks read label files shipped with the data (RE). Its `entry` is
    checked first (`task_entry`), so a task class without one of its own fails here, by name."""
    key = resolve_name(name)
    task_entry(key)
    return task_class(key)(data_dir=data_dir)


def task_list_text(suite: str = "klue") -> str:
    """One line per task of a suite ("klue", the default and `--task-list`'s, or "jglue")."""
    tasks = SUITES[suite]
    width = max(map(len, tasks))
    metric_width = max(len(", ".join(e.metrics)) for e in tasks.values())
    return "\n".join(
        f"{name:<{width}}  {', '.join(e.metrics):<{metric_width}} (selects on {e.main_metric})  {e.title}"
        for name, e in tasks.items()
    )
