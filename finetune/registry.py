"""The one place that declares every fine-tuning task.

Entries are plain data (import path, title, metric names) so that `klue finetune --help` and `--task-list`
can list tasks without importing torch; the task class is imported only when a task is used. Adding a task
(NER, DP, MRC, WoS) is one module under `finetune/tasks/` plus one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.registry import Registry, RegistryError

if TYPE_CHECKING:
    from finetune.tasks.base import Task


@dataclass(frozen=True)
class TaskEntry:
    target: str  # "module:Class"
    title: str
    metrics: tuple[str, ...]  # KLUE-baseline metric keys, in report order
    main_metric: str  # the one that selects the checkpoint (KLUE-baseline's --metric_key)


TASKS: dict[str, TaskEntry] = {
    "ynat": TaskEntry("finetune.tasks.ynat:YnatTask", "Topic classification (YNAT, title only)",
                      ("macro_f1",), "macro_f1"),
    "sts": TaskEntry("finetune.tasks.sts:StsTask", "Semantic textual similarity (KLUE-STS)",
                     ("pearsonr", "f1"), "pearsonr"),
    "nli": TaskEntry("finetune.tasks.nli:NliTask", "Natural language inference (KLUE-NLI)",
                     ("accuracy",), "accuracy"),
    "re": TaskEntry("finetune.tasks.re:ReTask", "Relation extraction (KLUE-RE)",
                    ("micro_f1", "auprc"), "micro_f1"),
}

# Names users may type for a task: KLUE-baseline's task names and the HF `klue` config names.
ALIASES: dict[str, str] = {"tc": "ynat", "klue-sts": "sts", "klue-nli": "nli", "klue-re": "re"}


# The lookup of the classes themselves: imported on first use.
TASK_CLASSES: Registry[type[Task]] = Registry("task", {name: e.target for name, e in TASKS.items()}, aliases=ALIASES)


def resolve_name(name: str) -> str:
    """The registered name for a task name or alias; a `RegistryError` (a ValueError) naming the known ones."""
    return TASK_CLASSES.resolve(name)


def task_class(name: str) -> type[Task]:
    return TASK_CLASSES.get(name)


__all__ = ["ALIASES", "TASKS", "TASK_CLASSES", "RegistryError", "TaskEntry", "get_task", "resolve_name",
           "task_class", "task_list_text"]


def get_task(name: str, data_dir: Path | None = None) -> Task:
    """An instance of the task; `data_dir` lets tasks read label files shipped with the data (RE)."""
    return task_class(name)(data_dir=data_dir)


def task_list_text() -> str:
    width = max(map(len, TASKS))
    return "\n".join(
        f"{name:<{width}}  {', '.join(e.metrics):<18} (selects on {e.main_metric})  {e.title}"
        for name, e in TASKS.items()
    )
