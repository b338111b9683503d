"""A loss spike or a run of non-finite steps rolls the run back to its last checkpoint before the bad step and
skips the batches since (issue 50, item 1; pretrain/rollback.py): recorded in train_state.json, summary.json, the
report and the model card, and replayable: a run killed after a rollback and resumed ends at the same bytes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pretrain.config import TrainConfig
from pretrain.metrics import read_metrics
from pretrain.rollback import DataSkips, RollbackLimit, SpikeWatch
from pretrain.train import Halted, train
from testkit.pretrain import dropout_config, encode_fixture


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("rollback"), n_shards=2, repeat=3, eval_fraction=0.15)


def _cfg(encoded, out: Path, **kw) -> TrainConfig:
    return dropout_config(encoded, out, **{"max_steps": 12, "eval_every": 6, "checkpoint_every": 3,
                                           "keep_checkpoints": 5, "spike_window": 3, **kw})


def _weights(run: Path) -> bytes:
    return (run / "final" / "model.safetensors").read_bytes()


# -- the rules ---------------------------------------------------------------------------------------------


def test_data_skips_map_training_steps_to_the_batches_they_read():
    skips = DataSkips()
    assert [skips.data_step(s) for s in range(4)] == [0, 1, 2, 3]
    # a bad step 7 (0-based data step 6) sent the run back to the checkpoint of step 4: steps 4.. read 7..
    assert skips.skip(4, 6) == (4, 6)
    assert [skips.data_step(s) for s in range(3, 7)] == [3, 7, 8, 9]
    # a second rollback to the same checkpoint, from training step 6 (which read data step 9)
    assert skips.skip(4, skips.data_step(6)) == (7, 9)
    assert [skips.data_step(s) for s in range(3, 6)] == [3, 10, 11]
    assert DataSkips.from_json(skips.to_json()) == skips == DataSkips([(4, 6)])


def test_spike_watch_judges_against_the_window_after_warmup():
    watch = SpikeWatch(window=3, sigmas=7.0, max_bad_steps=2, warmup_steps=1)
    assert watch.see(1, 50.0) is None  # warmup: not part of the window, not judged
    for step, loss in [(2, 5.0), (3, 4.9), (4, 5.1)]:
        assert watch.see(step, loss) is None
    # mean 5.0, sd 0.1: 5.69 is 6.9 sd above, 5.71 is 7.1 sd above
    assert watch.see(5, 5.69) is None
    verdict = watch.see(6, 6.5)  # window (4.9, 5.1, 5.69): mean 5.23, sd 0.41 -> 6.5 is 3.1 sd above
    assert verdict is None
    spike = watch.see(7, 12.0)
    assert spike is not None and spike.step == spike.first == 7 and "loss spike: 12" in spike.reason
    saved = watch.state()
    other = SpikeWatch(window=3, sigmas=7.0, max_bad_steps=2, warmup_steps=1)
    other.restore(saved)
    assert other.state() == saved and other.see(8, 12.0) is not None
    # two non-finite steps in a row: a bad run from its first step
    assert watch.see(8, None) is None
    bad = watch.see(9, math.nan)
    assert bad is not None and (bad.step, bad.first) == (9, 8) and "2 steps in a row" in bad.reason


# -- in the loop ---------------------------------------------------------------------------------------------


def test_a_spike_rolls_back_skips_its_batch_and_is_replayable(encoded, tmp_path, monkeypatch):
    """KLUE_TEST_SPIKE_STEPS=8 makes batch 8 spike: the run goes back to the checkpoint of step 6, skips
    batches 7-8 (those read since it), and goes on; the record is everywhere a reader looks, and a run
    killed right after the rollback (before its next checkpoint) replays it to the same bytes."""
    monkeypatch.setenv("KLUE_TEST_SPIKE_STEPS", "8")
    out = tmp_path / "spike"
    summary = train(_cfg(encoded, out))
    assert [(r["step"], r["to_step"], r["skipped_batches"]) for r in summary["rollbacks"]] == [(8, 6, [7, 8])]
    assert summary["rollbacks"][0]["reason"].startswith("loss spike: ")
    assert summary["data_skips"] == [[6, 2]] and summary["steps"] == 12
    rows = [m for m in read_metrics(out / "metrics.jsonl") if "loss" in m]
    assert [m["step"] for m in rows] == list(range(1, 13)), "the curve is the kept trajectory, one row a step"
    assert max(m["loss"] for m in rows) < 20, "the spike's loss is not in the curve"
    state = json.loads((out / "checkpoints" / "step-00000009" / "train_state.json").read_text())
    assert state["data_skips"] == [[6, 2]] and len(state["rollbacks"]) == 1
    assert state["spike_watch"]["bad_run"] == 0 and len(state["spike_watch"]["window"]) == 3

    from pipeline.release.facts import gather
    from pipeline.release.sections import body

    card = body(gather(out / "final", {}, name=None, recipe=None, sources=[], train={}, summary=summary, language="ko"))
    assert "| rollbacks | 1: at step 8 (loss spike: " in card and "back to step 6, batches 7-8 skipped" in card

    killed = tmp_path / "killed"
    with pytest.raises(Halted):
        train(_cfg(encoded, killed, halt_after_step=8))  # 8 spikes, back to 6, steps 7-8 (batches 9-10), halt
    assert not (killed / "checkpoints" / "step-00000009").exists()
    resumed = train(_cfg(encoded, killed))  # from step 6 again: the spike again, the same rollback
    assert resumed["rollbacks"] == summary["rollbacks"] and resumed["data_skips"] == [[6, 2]]
    assert _weights(killed) == _weights(out)

    # without the bad batch, the first 6 steps are those of a run that never spiked
    monkeypatch.delenv("KLUE_TEST_SPIKE_STEPS")
    clean = tmp_path / "clean"
    assert train(_cfg(encoded, clean))["rollbacks"] == []
    a, b = (json.loads((r / "checkpoints" / "step-00000006" / "train_state.json").read_text())["files"]
            for r in (out, clean))
    assert a["model.safetensors"] == b["model.safetensors"]
    assert _weights(clean) != _weights(out), "the rolled-back run skipped two batches"


def test_non_finite_steps_in_a_row_roll_back_before_the_first(encoded, tmp_path, monkeypatch):
    """Three NaN batches in a row (7, 8, 9; max_bad_steps 3): the run goes back to the checkpoint of step 6,
    before the first of them, skips batches 7-9, and leaves no skipped step behind; a checkpoint written
    inside the bad run (step 9) is deleted, so a later resume cannot land on the abandoned branch."""
    monkeypatch.setenv("KLUE_TEST_NAN_STEPS", "7,8,9")
    out = tmp_path / "nan"
    summary = train(_cfg(encoded, out, spike_window=0))
    assert [(r["step"], r["to_step"], r["skipped_batches"]) for r in summary["rollbacks"]] == [(9, 6, [7, 9])]
    assert summary["rollbacks"][0]["reason"] == "3 steps in a row with a non-finite gradient norm"
    assert summary["skipped_steps"] == [] and summary["data_skips"] == [[6, 3]]
    assert all(math.isfinite(m["loss"]) for m in read_metrics(out / "metrics.jsonl") if "loss" in m)
    # two in a row stay skips, not a rollback
    monkeypatch.setenv("KLUE_TEST_NAN_STEPS", "7,8")
    two = train(_cfg(encoded, tmp_path / "two", spike_window=0))
    assert two["rollbacks"] == [] and two["skipped_steps"] == [7, 8]


def test_past_max_rollbacks_the_run_stops_naming_the_step(encoded, tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_TEST_SPIKE_STEPS", "8")
    with pytest.raises(RollbackLimit, match=r"step 8: loss spike: .*max_rollbacks \(0\) already used"):
        train(_cfg(encoded, tmp_path / "limit", max_rollbacks=0))
    monkeypatch.setenv("KLUE_TEST_SPIKE_STEPS", "")
    monkeypatch.setenv("KLUE_TEST_NAN_STEPS", "1,2,3")
    with pytest.raises(RollbackLimit, match="step 3: 3 steps in a row .* no checkpoint before it"):
        train(_cfg(encoded, tmp_path / "early"))
