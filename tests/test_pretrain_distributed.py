"""Two real processes (torchrun, gloo on CPU), plain DDP and DeepSpeed ZeRO-2: both ranks train, loss falls.

Slow: process start-up, and DeepSpeed compiles its CPU communication op on first use (~50 s, then cached).
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from pretrain.metrics import read_metrics
from pretrain.stages.pretrain import PretrainParams, PretrainStage
from testkit.pretrain import context, encode_fixture

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("dist")
    return encode_fixture(root, n_shards=2, repeat=4, eval_fraction=0.1)


@pytest.mark.parametrize("deepspeed,architecture", [(None, "roberta"), ("zero2", "roberta"), ("zero2", "modernbert")])
def test_two_processes_train_together(encoded, tmp_path, deepspeed, architecture):
    if deepspeed and importlib.util.find_spec("deepspeed") is None:
        pytest.skip("deepspeed is not installed (optional extra)")
    enc, vocab, result = encoded
    p = PretrainParams(seq_len=32, batch_size=8, max_steps=12, warmup_steps=2, lr=3e-3, log_every=1,
                       eval_every=6, checkpoint_every=6, num_processes=2, deepspeed=deepspeed, threads=1,
                       architecture=architecture)
    ctx = context(tmp_path / "run", p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    res = PretrainStage().run(ctx)
    assert res.meta["report"]["world_size"] == 2
    # every rank saved its own RNG state into the checkpoint: both ranks really ran
    ckpt = ctx.out_dir / "checkpoints" / "step-00000006"
    assert sorted(p.name for p in ckpt.glob("random_states_*.pkl")) == ["random_states_0.pkl",
                                                                         "random_states_1.pkl"]
    if deepspeed:
        shards = sorted(p.name for p in (ckpt / "pytorch_model").glob("zero_pp_rank_*_optim_states.pt"))
        assert len(shards) == 2, "ZeRO-2 partitions the optimizer state over the two ranks"
    state = json.loads((ckpt / "train_state.json").read_text())
    assert state["world_size"] == 2 and state["samples_read"] == 6 * 2 * 8
    losses = [m["loss"] for m in read_metrics(ctx.out_dir / "metrics.jsonl") if "loss" in m]
    assert len(losses) == 12
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.2
    assert (ctx.out_dir / "final" / "model.safetensors").is_file()
    config = json.loads((ctx.out_dir / "final" / "config.json").read_text())
    assert config["model_type"] == architecture and config["dtype"] == "float32"
