"""The task registry: names, aliases and suites in `finetune/registry.py`; what each task is (title, metrics,
results-table columns with the published scores) declared by the task class itself as its `entry`."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from finetune import registry
from finetune.records import TaskEntry
from finetune.registry import ALL_TASKS, JGLUE_TASKS, TASKS, RegistryError, get_task, task_class, task_entry
from finetune.tasks.base import DataError, Task, klue_published
from finetune.tasks.jglue import jglue_published
from finetune.tasks.nli import NliTask
from pipeline.registry import Registry


def _modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\nprint(sorted(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_names_suites_and_aliases_import_no_task_module():
    modules = _modules_after("import finetune.cli\nfrom finetune.registry import ALL_TASKS, TASKS, resolve_name\n"
                             "assert list(TASKS)[0] == 'ynat' and 'jnli' in ALL_TASKS and len(ALL_TASKS) == 12\n"
                             "assert resolve_name('wos') == 'dst'")
    assert [m for m in modules if m.startswith("finetune.tasks")] == []


def test_every_entry_reads_without_torch_or_scoring_libraries():
    """`klue finetune --help`, `--task-list` and the results tables import every task module of a suite: those
    must leave torch, transformers, scikit-learn and SciPy to the functions that use them."""
    modules = _modules_after("from finetune.registry import SUITES, task_list_text\nimport finetune.results\n"
                             "[task_list_text(s) for s in SUITES]")
    assert "finetune.tasks.jcqa" in modules and "finetune.tasks.dst" in modules
    assert [m for m in ("torch", "transformers", "sklearn", "scipy") if m in modules] == []


def test_every_task_class_declares_its_own_entry():
    assert list(ALL_TASKS) == [*TASKS, *JGLUE_TASKS]
    for name, entry in ALL_TASKS.items():
        cls = task_class(name)
        assert isinstance(vars(cls).get("entry"), TaskEntry) and entry is cls.entry, name
        assert entry.main_metric in entry.metrics and all(c.metric in entry.metrics for c in entry.columns), name
        task = get_task(name)
        assert (task.metric_names, task.main_metric, task.columns) == (entry.metrics, entry.main_metric,
                                                                       entry.columns)


def test_an_inherited_entry_is_refused_naming_the_class(monkeypatch):
    bare = type("BareNliTask", (NliTask,), {"name": "bare"})  # NLI's entry, inherited: the wrong title and scores
    monkeypatch.setattr(sys.modules["finetune.tasks.nli"], "BareNliTask", bare, raising=False)
    monkeypatch.setattr(registry, "TASK_CLASSES", Registry("task", {"bare": "finetune.tasks.nli:BareNliTask"}))
    with pytest.raises(RegistryError, match=r"task 'bare': .*BareNliTask declares no `entry` of its own"):
        get_task("bare")


def test_a_published_column_has_one_score_per_model():
    assert list(klue_published(*range(9))) == ["mBERT-base", "XLM-R-base", "XLM-R-large", "KR-BERT-base",
                                                "koELECTRA-base", "KLUE-BERT-base", "KLUE-RoBERTa-small",
                                                "KLUE-RoBERTa-base", "KLUE-RoBERTa-large"]
    with pytest.raises(ValueError, match=r"KLUE README, Baseline Scores: 8 scores for 9 models"):
        klue_published(*range(8))
    assert "XLM-R-base" not in jglue_published(*range(7)) and len(jglue_published(*range(9))) == 9
    with pytest.raises(ValueError, match=r"JGLUE README, dev set: 8 scores for 9 models"):
        jglue_published(*range(8))


def test_an_unknown_label_names_the_field_index_and_labels():
    with pytest.raises(DataError, match=r"^p:3: field 'deprels'\[1\] = 'ZZ' is not a KLUE-DP label \(expected one "
                                        r"of \['NP', 'VP'\]\)$"):
        Task.require_labels(["NP", "ZZ", "YY"], ["NP", "VP"], "deprels", "a KLUE-DP label", "p:3")
    assert task_entry("jcqa") is ALL_TASKS["jcommonsenseqa"]
