"""Long runs survive a damaged checkpoint and preemption (issue 50, items 4 and 2).

Integrity: every checkpoint records its files (bytes, sha256); a resume passes over one whose files differ, warns
naming the file, and continues from the one before, to the bytes of a run never interrupted. Preemption: a real
SIGTERM / SIGUSR1 makes every rank checkpoint at the next step boundary and exit with EXIT_PREEMPTED (75), and the
rerun resumes to the uninterrupted bytes; `klue run` says so and exits with the same status.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.stage import EXIT_PREEMPTED, Preempted
from pretrain.checkpoint import (
    CheckpointWarning,
    checkpoint_problems,
    file_records,
    find_checkpoint,
    verified_checkpoint,
)
from pretrain.config import TrainConfig
from pretrain.metrics import read_metrics
from pretrain.preempt import PREEMPTED_FILE
from pretrain.train import Halted, train
from testkit.pretrain import context, dropout_config, encode_fixture, spy_steps_read


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("resilience"), n_shards=2, repeat=3, eval_fraction=0.15)


def _cfg(encoded, out: Path, **kw) -> TrainConfig:
    return dropout_config(encoded, out, **{"max_steps": 6, "eval_every": 3, "checkpoint_every": 2, **kw})


def _weights(run: Path) -> bytes:
    return (run / "final" / "model.safetensors").read_bytes()


def _curve(run: Path) -> list[tuple[int, float | None, float | None]]:
    return [(m["step"], m.get("loss"), m.get("eval_loss")) for m in read_metrics(run / "metrics.jsonl")]


# -- item 4: integrity ------------------------------------------------------------------------------------


def test_a_damaged_checkpoint_is_passed_over_and_the_run_resumes_to_the_same_bytes(encoded, tmp_path, monkeypatch):
    full = tmp_path / "full"
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGUSR1)
    train(_cfg(encoded, full))
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGUSR1)) == before, "handlers restored"

    out = tmp_path / "damaged"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=4))  # checkpoints at steps 2 and 4
    newest = find_checkpoint(out)
    assert newest is not None and newest.name == "step-00000004"
    state = json.loads((newest / "train_state.json").read_text())
    assert state["files"] == file_records(newest) and "model.safetensors" in state["files"]
    assert checkpoint_problems(newest) == []
    data = bytearray((newest / "model.safetensors").read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, same size: only the hash can tell
    (newest / "model.safetensors").write_bytes(bytes(data))

    steps_read = spy_steps_read(monkeypatch)
    with pytest.warns(CheckpointWarning, match=r"step-00000004/model\.safetensors: sha256 .* when written"):
        train(_cfg(encoded, out))
    assert sorted(set(steps_read)) == [2, 3, 4, 5], "resumed from step 2, the checkpoint before the damaged one"
    assert (out / "checkpoints" / "rejected-step-00000004").is_dir(), "kept aside to look at"
    assert _curve(out) == _curve(full)
    assert _weights(out) == _weights(full)


def _fake_checkpoint(root: Path, step: int, files: dict[str, bytes], *, record: bool = True) -> Path:
    ckpt = root / "checkpoints" / f"step-{step:08d}"
    ckpt.mkdir(parents=True)
    for name, data in files.items():
        (ckpt / name).write_bytes(data)
    state = {"step": step, **({"files": file_records(ckpt)} if record else {})}
    (ckpt / "train_state.json").write_text(json.dumps(state))
    return ckpt


def test_verification_falls_back_one_checkpoint_at_a_time_and_trusts_old_ones(tmp_path):
    """Newest truncated, the one before missing a file: both warned about by file and moved aside; the oldest,
    written before checkpoints recorded their files, is trusted as before. With nothing left: from scratch."""
    legacy = _fake_checkpoint(tmp_path, 2, {"model.safetensors": b"a" * 10}, record=False)
    missing = _fake_checkpoint(tmp_path, 4, {"model.safetensors": b"b" * 10, "optimizer.bin": b"o"})
    truncated = _fake_checkpoint(tmp_path, 6, {"model.safetensors": b"c" * 10})
    (missing / "optimizer.bin").unlink()
    (truncated / "model.safetensors").write_bytes(b"c" * 4)
    with pytest.warns(CheckpointWarning) as caught:
        assert verified_checkpoint(tmp_path) == legacy
    lines = [str(w.message) for w in caught]
    assert len(lines) == 2
    assert "step-00000006/model.safetensors: 4 bytes, 10 when written" in lines[0]
    assert "step-00000004/optimizer.bin: missing" in lines[1]
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "rejected-step-00000004", "rejected-step-00000006", "step-00000002"]

    (legacy / "train_state.json").write_text("{not json")
    with pytest.warns(CheckpointWarning) as caught:
        assert verified_checkpoint(tmp_path) is None
    assert "step-00000002/train_state.json: unreadable" in str(caught[0].message)
    assert "training starts from step 0" in str(caught[1].message)


def test_pruning_keeps_the_new_checkpoint_after_a_fallback(encoded, tmp_path):
    """keep_checkpoints=1 after a fallback: the damaged newer checkpoint is aside, so pruning removes the old good
    one only once the new one is written, and the newest checkpoint on disk is always a verified one."""
    out = tmp_path / "run"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=4, keep_checkpoints=2))
    (out / "checkpoints" / "step-00000004" / "optimizer.bin").unlink()
    with pytest.warns(CheckpointWarning, match="optimizer.bin: missing"), pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=3, keep_checkpoints=1, checkpoint_every=3))
    assert [p.name for p in (out / "checkpoints").glob("step-*")] == ["step-00000003"]
    assert checkpoint_problems(out / "checkpoints" / "step-00000003") == []


# -- item 2: preemption -----------------------------------------------------------------------------------


def _wait_for_step(proc: subprocess.Popen, metrics: Path, step: int, timeout: float = 240) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        rows = read_metrics(metrics) if metrics.is_file() else []
        if rows and rows[-1]["step"] >= step:
            return
        time.sleep(0.005)
    raise AssertionError(f"the run ended or stalled before step {step} (exit {proc.poll()})")


@pytest.mark.slow
def test_sigterm_checkpoints_at_the_next_step_and_the_rerun_resumes_to_the_same_bytes(encoded, tmp_path):
    """`python -m pretrain.train` in its own process gets a real SIGTERM after a few logged steps: it checkpoints
    the step it is in, exits 75 naming the checkpoint and the way to resume; the rerun ends at the bytes of a run
    never signalled."""
    kw = dict(max_steps=40, checkpoint_every=100, eval_every=10)  # no regular checkpoint before the signal
    out = tmp_path / "preempted"
    path = tmp_path / "preempted.json"
    path.write_text(_cfg(encoded, out, **kw).model_dump_json())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "pretrain.train", str(path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_step(proc, out / "metrics.jsonl", 3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_PREEMPTED, err[-2000:]
    note = json.loads((out / PREEMPTED_FILE).read_text())
    ckpt = find_checkpoint(out)
    assert ckpt is not None and ckpt.name == f"step-{note['step']:08d}" and note["signal"] == "SIGTERM"
    assert 3 <= note["step"] < 40 and checkpoint_problems(ckpt) == []
    assert max(m["step"] for m in read_metrics(out / "metrics.jsonl")) == note["step"], "stopped at that boundary"
    assert f"preempted by SIGTERM at step {note['step']}: checkpoint {ckpt} written" in err
    assert note["checkpoint"] == f"checkpoints/{ckpt.name}"
    assert "rerun the same command" in err
    assert not (out / "final").exists()

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert not (out / PREEMPTED_FILE).exists()
    full = tmp_path / "full"
    train(_cfg(encoded, full, **kw))
    assert _curve(out) == _curve(full)
    assert _weights(out) == _weights(full)


def _rank_pid(parent: int, rank: int, timeout: float = 120) -> int:
    """The pid of torchrun rank `rank` among `parent`'s descendants (its RANK environment variable)."""
    psutil = pytest.importorskip("psutil")
    deadline = time.time() + timeout
    while time.time() < deadline:
        for p in psutil.Process(parent).children(recursive=True):
            try:
                if "pretrain.train" in p.cmdline() and p.environ().get("RANK") == str(rank) \
                        and "torch.distributed.run" not in p.cmdline():
                    return int(p.pid)
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no rank {rank} under pid {parent}")


LAUNCH = """
import sys
from pathlib import Path
from pipeline.stage import EXIT_PREEMPTED, Preempted
from pretrain.stages.pretrain import launch
try:
    launch(Path(sys.argv[1]), 2)
except Preempted as e:
    print(e, file=sys.stderr)
    sys.exit(EXIT_PREEMPTED)
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["launcher", "rank 1"])
def test_two_ranks_preempted_checkpoint_the_same_step_and_resume(encoded, tmp_path, target):
    """Two gloo ranks under torchrun, launched as the stage launches them. `launcher`: SIGTERM to the process
    that runs `launch` (what `klue run` is), which passes it on to torchrun, which relays it to both ranks.
    `rank 1`: SIGUSR1 to rank 1 alone; the ranks agree at the next step boundary. Either way both ranks write
    their part of one checkpoint at the same step and exit 75, the launcher raises `Preempted`, and a rerun
    completes the run."""
    enc, vocab, result = encoded
    from pretrain.stages.pretrain import PretrainParams, PretrainStage

    p = PretrainParams(seq_len=32, batch_size=4, max_steps=30, warmup_steps=2, lr=3e-3, log_every=1,
                       eval_every=10, checkpoint_every=100, num_processes=2, threads=1)
    ctx = context(tmp_path / "run", p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    cfg = TrainConfig.model_validate({**p.model_dump(), "max_steps": 30, "seed": 7, "encode_dir": str(enc),
                                      "tokenizer_dir": str(vocab / "tok"), "out_dir": str(ctx.out_dir)})
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    cfg_path = ctx.out_dir / "train_config.json"
    cfg_path.write_text(cfg.model_dump_json())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(cfg_path)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        rank1 = _rank_pid(proc.pid, 1)
        _wait_for_step(proc, ctx.out_dir / "metrics.jsonl", 3)
        if target == "launcher":
            proc.send_signal(signal.SIGTERM)
        else:
            os.kill(rank1, signal.SIGUSR1)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_PREEMPTED, err[-3000:]
    note = json.loads((ctx.out_dir / PREEMPTED_FILE).read_text())
    why = "SIGTERM" if target == "launcher" else "a signal to another rank"  # rank 0 is the one that reports
    assert note["signal"] == why and f"preempted by {why} at step {note['step']}" in err
    ckpt = find_checkpoint(ctx.out_dir)
    assert ckpt is not None and ckpt.name == f"step-{note['step']:08d}" and checkpoint_problems(ckpt) == []
    assert sorted(x.name for x in ckpt.glob("random_states_*.pkl")) == ["random_states_0.pkl", "random_states_1.pkl"]
    assert json.loads((ckpt / "train_state.json").read_text())["world_size"] == 2

    res = PretrainStage().run(ctx)  # the rerun: the stage resumes from the preemption checkpoint
    assert res.meta["report"]["steps"] == 30
    steps = [m["step"] for m in read_metrics(ctx.out_dir / "metrics.jsonl") if "loss" in m]
    assert steps == list(range(1, 31))


def test_klue_run_says_preempted_and_exits_75_then_the_rerun_finishes(tmp_path, monkeypatch):
    """The runner and `klue run` side, on the toy stage graph: a stage that raises `Preempted` (as the pretrain
    stage does on SIGTERM) is reported as preempted, with the stage's line on how to resume, run.json says
    "preempted", and the exit status is 75; the rerun runs the rest."""
    from click.testing import CliRunner

    import testkit.toy_stages as toy
    from pipeline.cli import main
    from testkit.toy import TOY

    wd = tmp_path / "w"
    args = ["run", str(TOY), "--workdir", str(wd), "--registry", "testkit.toy_stages:REGISTRY", "--workers", "1"]

    def preempt(self, ctx):
        raise Preempted("preempted by SIGTERM at step 3: checkpoint checkpoints/step-00000003 written; rerun the "
                        "same command to resume from it")

    with monkeypatch.context() as m:
        m.setattr(toy.ToyCount, "run", preempt)
        res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == EXIT_PREEMPTED, res.output
    assert "preempted: stage count: preempted by SIGTERM at step 3" in res.output
    assert "rerun the same command to resume from it" in res.output and "continues from here" in res.output
    assert json.loads((wd / "run.json").read_text())["status"] == "preempted"
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output


def test_handlers_are_only_installed_in_the_main_thread(encoded, tmp_path):
    """A loop run from a worker thread cannot catch signals (Python's rule): it warns and trains as before."""
    box: dict[str, object] = {}

    def run() -> None:
        with pytest.warns(UserWarning, match="outside the main thread"):
            box["summary"] = train(_cfg(encoded, tmp_path / "thread", max_steps=2, eval_every=2))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert box["summary"]["steps"] == 2  # type: ignore[index]


# -- item 1: a non-finite loss skips the update -----------------------------------------------------------


def test_a_nan_loss_skips_the_update_and_is_counted(encoded, tmp_path, monkeypatch):
    """KLUE_TEST_NAN_STEPS makes the loss of steps 3 and 4 NaN: their updates are skipped (the weights after
    step 4 are the bytes of those after step 2), their losses stay out of the log, the steps are named in
    metrics.jsonl, train_state.json and summary.json, and training goes on with finite losses."""
    monkeypatch.setenv("KLUE_TEST_NAN_STEPS", "3,4")
    out = tmp_path / "nan"
    summary = train(_cfg(encoded, out, max_steps=6, keep_checkpoints=3))
    assert summary["skipped_steps"] == [3, 4]
    rows = {m["step"]: m for m in read_metrics(out / "metrics.jsonl")}
    assert "loss" not in rows[3] and rows[3]["skipped_steps"] == [3] and rows[4]["skipped_steps"] == [4]
    assert all(rows[s]["loss"] == rows[s]["loss"] for s in (1, 2, 5, 6)), "finite losses before and after"
    ckpts = out / "checkpoints"
    assert (ckpts / "step-00000002/model.safetensors").read_bytes() == \
        (ckpts / "step-00000004/model.safetensors").read_bytes()
    assert json.loads((ckpts / "step-00000004/train_state.json").read_text())["skipped_steps"] == [3, 4]
    assert summary["last_loss"] == rows[6]["loss"] and summary["first_loss"] == rows[1]["loss"]
    assert json.loads((out / "summary.json").read_text())["skipped_steps"] == [3, 4]
    from pipeline.release.facts import gather
    from pipeline.release.sections import body

    card = body(gather(out / "final", {}, name=None, recipe=None, sources=[], train={}, summary=summary, language="ko"))
    assert "| skipped updates | 2 step(s) with a non-finite gradient norm left the weights as they were: 3, 4 |" \
        in card

    # killed after step 5 and resumed from step 4 without the hook: the skipped steps come back from the
    # checkpoint, and the run ends at the bytes of the one never killed
    resumed = tmp_path / "resumed"
    with pytest.raises(Halted):
        train(_cfg(encoded, resumed, max_steps=6, halt_after_step=5))
    monkeypatch.delenv("KLUE_TEST_NAN_STEPS")
    assert train(_cfg(encoded, resumed, max_steps=6))["skipped_steps"] == [3, 4]
    assert _weights(resumed) == _weights(out)
