"""KLUE-baseline's evaluation cadence and checkpoint choice (`run_klue.py` @ 8a03c94: `val_check_interval 0.25`,
`ModelCheckpoint(mode="max")`, `EarlyStopping(patience)`): which steps are evaluated, which checkpoint is kept, when
a run stops early, and that the settings reach a run from `--hp` and are recorded in its metrics.json."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from finetune.cli import finetune
from finetune.registry import TASKS, get_task
from finetune.trainer import eval_interval
from testkit.finetune import FX, fixture_texts
from testkit.tiny_model import build_tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny-cadence"), fixture_texts())


def test_the_interval_is_lightnings_val_check_batch():
    # int(N * 0.25), at least 1: an epoch of 10 batches is checked after 2, 4, 6, 8 and 10 (five times), one of 250
    # after 62, 124, 186 and 248 (the last two batches wait for the next epoch's first check)
    assert eval_interval(10, 4) == 2 and eval_interval(250, 4) == 62 and eval_interval(8, 4) == 2
    assert eval_interval(3, 4) == 1 and eval_interval(3, 3) == 1 and eval_interval(8, 1) == 8


def test_klue_tasks_default_to_the_baselines_cadence_and_patience():
    # run_all.sh @ 8a03c94: --patience 100000 (YNAT, MRC, WoS) or 10000 (RE, DP) never stops; STS, NLI and NER keep
    # run_klue.py's default of 5
    patience = {name: get_task(name).defaults.patience for name in TASKS}
    assert patience == {"ynat": None, "sts": 5, "nli": 5, "ner": 5, "re": None, "dp": None, "mrc": None, "dst": None}
    assert {get_task(name).defaults.evals_per_epoch for name in TASKS} == {4}
    assert not any(get_task(name).defaults.group_by_length for name in TASKS)  # a uniform shuffle, as the baseline


def _run(tiny, out, *args: str) -> tuple[dict, list[dict]]:
    res = CliRunner().invoke(finetune, ["ynat", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out),
                                        "--batch-size", "8", "--no-save-model", "--quiet", *args],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "metrics.json").read_text())
    seed = json.loads((out / "seed-42" / "metrics.json").read_text())
    return summary, seed


def test_four_checks_an_epoch_the_first_best_kept_and_no_stop_without_patience(tiny, tmp_path):
    summary, seed = _run(tiny, tmp_path / "a", "--epochs", "2", "--lr", "3e-3")
    per_epoch = math.ceil(summary["data"]["n_train"] / 8)
    every = eval_interval(per_epoch, 4)
    expected = [e * per_epoch + b for e in range(2) for b in range(every, per_epoch + 1, every)]
    assert [h["step"] for h in seed["history"]] == expected and len(expected) >= 8
    assert summary["hyperparams"]["evals_per_epoch"] == 4 and summary["hyperparams"]["patience"] is None
    assert not seed["stopped_early"] and seed["total_steps"] == 2 * per_epoch
    # the history is the selection split's (the reported metrics are the eval split's, of the chosen checkpoint:
    # tests/test_selection_split.py); the kept checkpoint is the first of the best selection scores
    assert {h["split"] for h in seed["history"]} == {"selection"}
    scores = [h["macro_f1"] for h in seed["history"]]
    assert seed["best_step"] == seed["history"][scores.index(max(scores))]["step"]  # the first of equal bests


def test_patience_counts_evaluations_without_a_strictly_better_score(tiny, tmp_path):
    # A learning rate too small to change a prediction: every check scores what the first did, so with patience 2
    # the run stops at the third check (two without improvement), and the kept checkpoint is the first.
    summary, seed = _run(tiny, tmp_path / "b", "--epochs", "3", "--lr", "1e-12", "--hp", "ynat.patience=2")
    steps = [h["step"] for h in seed["history"]]
    assert len(steps) == 3 and seed["stopped_early"] and steps[-1] < seed["total_steps"]
    assert len({h["macro_f1"] for h in seed["history"]}) == 1 and seed["best_step"] == steps[0]
    assert summary["hyperparams"]["patience"] == 2


def test_one_check_an_epoch_and_a_capped_last_step(tiny, tmp_path):
    # evals_per_epoch 1 checks at the end of each epoch; a step cap between two checks is evaluated as well
    summary, seed = _run(tiny, tmp_path / "c", "--epochs", "3", "--hp", "ynat.evals_per_epoch=1",
                         "--max-steps", "5")
    per_epoch = math.ceil(summary["data"]["n_train"] / 8)
    assert per_epoch > 5, "the fixture must hold more than one capped epoch for this test"
    assert [h["step"] for h in seed["history"]] == [5] and seed["total_steps"] == 5
    assert summary["steps_capped"] and seed["steps_per_epoch"] == per_epoch
    # a cap above the run's own steps cuts nothing: not recorded as capped (nor marked as a departure)
    summary, seed = _run(tiny, tmp_path / "d", "--epochs", "1", "--max-steps", "1000")
    assert seed["total_steps"] == per_epoch and not summary["steps_capped"]
