"""The shard-level resume records (`pipeline.journal`): exact round trips of what tasks return, and no code
loaded from a record."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from corpora.stages.common import ShardReport
from pipeline import journal
from pipeline.stage import Funnel
from pretrain.encode import ShardResult


def test_task_results_round_trip_exactly():
    rep = ShardReport()
    rep.keep("wiki", 120)
    rep.drop("web", "too_short", 7)
    rep.counters["checks"] = Counter({"gopher.words": 3, ("a", 1): 2})
    rep.samples["too_short"] = [{"id": "x", "text": "짧다"}]
    res = ShardResult("00001", Funnel(docs_in=3, docs_kept=2, dropped=Counter({"dup": 1})), {"wiki": Funnel()},
                      {"train": 10}, {"train": 2})
    obj = {"report": rep, "result": res, "n": np.int64(7), "ids": np.arange(4, dtype=np.uint32).reshape(2, 2),
           "pairs": [(1, "a")], "path": Path("/tmp/x"), 3: {4.5, 6}, "__journal__": "a key named like the tag"}
    back = journal.loads(journal.dumps(obj))
    assert back["report"] == rep and back["result"] == res and back["pairs"] == [(1, "a")]
    assert type(back["n"]) is np.int64 and back["n"] == 7
    assert back["ids"].dtype == np.uint32 and back["ids"].tolist() == [[0, 1], [2, 3]]
    assert back[3] == {4.5, 6} and back["path"] == Path("/tmp/x") and back["__journal__"] == obj["__journal__"]
    assert isinstance(back["report"].counters["checks"], Counter) and back["report"].counters["checks"][("a", 1)] == 2


def test_a_record_loads_no_code_from_outside_the_project():
    forged = json.dumps({"__journal__": "dc", "cls": "subprocess:Popen", "v": {"args": ["true"]}})
    with pytest.raises(ValueError, match=r"rec.json: refers to 'subprocess:Popen', outside this project"):
        journal.loads(forged, where="rec.json")
    not_dc = json.dumps({"__journal__": "dc", "cls": "pipeline.io:atomic_file", "v": {}})
    with pytest.raises(ValueError, match="is not a dataclass of this project"):
        journal.loads(not_dc)


def test_an_unrecordable_result_is_an_error_naming_its_type():
    with pytest.raises(TypeError, match=r"holds a builtins.object"):
        journal.dumps({"x": object()})


@dataclass
class _Outside:  # a dataclass of a module outside the project's packages (this test module), as a plug-in's
    name: str
    counts: Counter = field(default_factory=Counter)


def test_a_dataclass_from_outside_the_project_loads_once_registered(monkeypatch):
    """The ground floor names no module outside the installed packages (the test kit included): a class from
    elsewhere is refused until the code defining it registers it, and then rebuilt without an import."""
    assert "testkit" not in journal.PACKAGES
    monkeypatch.setattr(journal, "_REGISTERED", {})
    record = journal.dumps({"x": _Outside("a", Counter({"b": 2}))})
    with pytest.raises(ValueError, match=r"outside this project's packages and not registered"):
        journal.loads(record)
    assert journal.register(_Outside) is _Outside
    assert journal.loads(record) == {"x": _Outside("a", Counter({"b": 2}))}
    with pytest.raises(TypeError, match="is not a dataclass"):
        journal.register(int)
