"""The one place that declares every fine-tuning task.

Entries are plain data (import path, title, metric names) so that `klue finetune --help` and `--task-list`
can list tasks without importing torch; the task class is imported only when a task is used. Adding a task
(NER, DP, MRC, WoS) is one module under `finetune/tasks/` plus one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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


def resolve_name(name: str) -> str:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in TASKS:
        raise KeyError(f"unknown task {name!r}; registered tasks: {', '.join(sorted(TASKS))}")
    return key


def task_class(name: str) -> type[Task]:
    module, _, attr = TASKS[resolve_name(name)].target.partition(":")
    return getattr(importlib.import_module(module), attr)


def get_task(name: str, data_dir: Path | None = None) -> Task:
    """An instance of the task; `data_dir` lets tasks read label files shipped with the data (RE)."""
    return task_class(name)(data_dir=data_dir)


def task_list_text() -> str:
    width = max(map(len, TASKS))
    return "\n".join(
        f"{name:<{width}}  {', '.join(e.metrics):<18} (selects on {e.main_metric})  {e.title}"
        for name, e in TASKS.items()
    )
