"""A checkpoint written by N ranks resumes on M ranks with the same global batch (issue 50, item 3): the data
order, the masks and dropout are functions of (seed, step, place in the global batch), so 2 ranks x grad_accum 1
and 1 rank x grad_accum 2 are the same training up to the order of floating-point sums. Real torchrun ranks
(gloo), plain DDP and DeepSpeed ZeRO-2 (whose partitioned checkpoint goes through DeepSpeed's universal format),
through the stage: a run interrupted on one world size is taken over by the run of the other
(`adopt_other_world`)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from pretrain.metrics import read_metrics
from pretrain.stages.pretrain import PretrainParams, PretrainStage
from testkit.pretrain import context, encode_fixture

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("world"), n_shards=2, repeat=3, eval_fraction=0.15)


def _run(encoded, out: Path, processes: int, deepspeed: str | None = None, **kw):
    enc, vocab, result = encoded
    p = PretrainParams(**{**dict(
        seq_len=32, batch_size=4, grad_accum=2 // processes, num_processes=processes, max_steps=6, warmup_steps=2,
        lr=3e-3, log_every=1, eval_every=3, eval_batches=2, checkpoint_every=3, keep_checkpoints=3, threads=1,
        deepspeed=deepspeed, mixed_precision="no",
        model_overrides={"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}), **kw})
    ctx = context(out, p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    return PretrainStage().run(ctx)


def _curve(run: Path) -> list[tuple[int, float]]:
    return [(m["step"], m["loss"]) for m in read_metrics(run / "metrics.jsonl") if "loss" in m]


def _evals(run: Path) -> list[float]:
    return [m["eval_loss"] for m in read_metrics(run / "metrics.jsonl") if "eval_loss" in m]


def _interrupted(done: Path, to: Path) -> None:
    """`done` as it was when killed right after its step-3 checkpoint: a `.partial` folder of the stage."""
    shutil.copytree(done, to)
    shutil.rmtree(to / "checkpoints" / "step-00000006")
    shutil.rmtree(to / "final")
    (to / "summary.json").unlink()
    (to / "metrics.jsonl").write_text("".join(
        json.dumps(m) + "\n" for m in read_metrics(done / "metrics.jsonl") if m["step"] <= 3))


def _same_training(a: Path, b: Path) -> None:
    (sa, la), (sb, lb) = zip(*_curve(a), strict=True), zip(*_curve(b), strict=True)
    assert sa == sb == tuple(range(1, 7))
    assert la == pytest.approx(lb, rel=1e-4), "the same steps, up to the order of float sums"
    assert _evals(a) == pytest.approx(_evals(b), rel=1e-4)
    wa, wb = (load_file(r / "final" / "model.safetensors") for r in (a, b))
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=1e-3, atol=1e-4, msg=k)


def test_two_ranks_and_one_with_twice_the_accumulation_train_alike_and_resume_each_other(encoded, tmp_path):
    one = tmp_path / "one"
    _run(encoded, one, 1)
    two = tmp_path / "two"
    _run(encoded, two, 2)
    _same_training(one, two)
    # Here even to the bit: DDP averages the 2 ranks' gradients as (g1 + g2) / 2, accumulation adds g1 / 2 and
    # g2 / 2, and halving is exact in binary floating point. (Over 3 ranks it would be up to rounding only.)
    assert _curve(one) == _curve(two)
    assert (one / "final" / "model.safetensors").read_bytes() == (two / "final" / "model.safetensors").read_bytes()

    # 2 ranks killed after step 3, continued on 1 rank: the stage adopts the interrupted folder's checkpoint
    stage = tmp_path / "stage"
    _interrupted(two, stage / "aaa.partial")
    res = _run(encoded, stage / "bbb.partial", 1)
    assert res.meta["adopted"] == {"folder": "aaa.partial", "step": 3, "world_size": 2}
    _same_training(stage / "bbb.partial", two)
    assert _curve(stage / "bbb.partial")[:3] == _curve(two)[:3], "steps 1-3 are the 2-rank run's own"

    # and back: 1 rank killed after step 3, continued on 2 ranks
    back = tmp_path / "back"
    _interrupted(one, back / "ccc.partial")
    res = _run(encoded, back / "ddd.partial", 2)
    assert res.meta["adopted"] == {"folder": "ccc.partial", "step": 3, "world_size": 1}
    _same_training(back / "ddd.partial", one)


def test_two_ranks_roll_back_together_as_one_rank_does(encoded, tmp_path, monkeypatch):
    """Non-finite batches 4-6 on two ranks: both ranks read the same rank-mean losses and skip flags, roll back to
    step 3 together and skip the same batches, to the bits of one rank accumulating two micro-batches."""
    monkeypatch.setenv("KLUE_TEST_NAN_STEPS", "4,5,6")  # torchrun's ranks inherit it
    one, two = tmp_path / "one", tmp_path / "two"
    a = _run(encoded, one, 1, max_steps=8)
    b = _run(encoded, two, 2, max_steps=8)
    summaries = [json.loads((r / "summary.json").read_text()) for r in (one, two)]
    assert [(r["step"], r["to_step"], r["skipped_batches"]) for r in summaries[1]["rollbacks"]] == [(6, 3, [4, 6])]
    assert summaries[0]["rollbacks"] == summaries[1]["rollbacks"] and summaries[1]["data_skips"] == [[3, 3]]
    assert a.meta["report"]["rollbacks"] == b.meta["report"]["rollbacks"] == 1
    assert _curve(one) == _curve(two)
    assert (one / "final" / "model.safetensors").read_bytes() == (two / "final" / "model.safetensors").read_bytes()


def test_another_global_batch_is_not_adopted_and_a_resume_says_why(encoded, tmp_path):
    """A partial folder of another global batch is not a candidate (this run starts over); a checkpoint of
    another micro-batch is refused naming both."""
    from pretrain.config import TrainConfig
    from pretrain.train import Halted, train

    enc, vocab, _ = encoded
    base = dict(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), seq_len=32, max_steps=4, warmup_steps=1,
                log_every=1, eval_every=4, eval_batches=1, checkpoint_every=2, threads=1)
    out = tmp_path / "run"
    with pytest.raises(Halted):
        train(TrainConfig(**base, out_dir=str(out), batch_size=4, grad_accum=2, halt_after_step=2))
    state = json.loads((out / "checkpoints" / "step-00000002" / "train_state.json").read_text())
    assert (state["micro_batch"], state["grad_accum"], state["world_size"], state["per_step"]) == (4, 2, 1, 8)
    # the same global batch in micro-batches of 8 on this one rank: the masks would differ, refused
    with pytest.raises(ValueError, match="8 samples per step"):
        train(TrainConfig(**base, out_dir=str(out), batch_size=8, grad_accum=2))
    state["world_size"] = 2  # as if written by 2 ranks of 4 x 1
    (out / "checkpoints" / "step-00000002" / "train_state.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match=r"written by 2 ranks with micro-batch 4; resuming on 1 ranks needs the "
                                         r"same micro-batch \(8 here\)"):
        train(TrainConfig(**base, out_dir=str(out), batch_size=8, grad_accum=1))


@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None, reason="deepspeed is not installed")
def test_a_zero2_checkpoint_of_two_ranks_resumes_on_one_through_the_universal_format(encoded, tmp_path):
    two = tmp_path / "two"
    _run(encoded, two, 2, deepspeed="zero2")
    stage = tmp_path / "stage"
    _interrupted(two, stage / "aaa.partial")
    res = _run(encoded, stage / "bbb.partial", 1, deepspeed="zero2")
    assert res.meta["adopted"] == {"folder": "aaa.partial", "step": 3, "world_size": 2}
    _same_training(stage / "bbb.partial", two)
    ckpts = stage / "bbb.partial" / "checkpoints"
    assert not list(ckpts.glob(".*universal*")), "the conversion is removed once loaded"
    shards = sorted(p.name for p in (ckpts / "step-00000006" / "pytorch_model").glob("*optim_states.pt"))
    assert len(shards) == 1, "the resumed run's own checkpoints are of its one rank"
