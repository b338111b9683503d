"""The training loop: exact resume without replaying data, sparse MLM loss, configs, export round trip."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

import pretrain.data
import pretrain.model
from pretrain.export import export_final
from pretrain.model import SparseMLM, build_config, build_model
from pretrain.train import Halted, TrainConfig, find_checkpoint, read_metrics, train
from testkit.pretrain import context, encode_fixture, make_tokenizer


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    enc, vocab, result = encode_fixture(root, n_shards=2, repeat=3, eval_fraction=0.15)
    return enc, vocab, result


def _cfg(encoded, out, **kw) -> TrainConfig:
    enc, vocab, _ = encoded
    base = dict(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(out), seq_len=32,
                batch_size=4, grad_accum=2, max_steps=6, warmup_steps=2, lr=2e-3, log_every=1,
                eval_every=3, eval_batches=2, checkpoint_every=2, threads=1,
                # dropout on, so that resuming must restore the RNG state too
                model_overrides={"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1})
    base.update(kw)
    return TrainConfig(**base)


def test_resume_after_kill_equals_uninterrupted_run(encoded, tmp_path, monkeypatch):
    full = train(_cfg(encoded, tmp_path / "full"))
    assert full["steps"] == 6

    steps_read: list[int] = []
    real = pretrain.data.SampleOrder.indices

    def spy(self, step, micro, rank):
        steps_read.append(step)
        return real(self, step, micro, rank)

    monkeypatch.setattr(pretrain.data.SampleOrder, "indices", spy)
    out = tmp_path / "killed"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=3))  # dies after step 3; the newest checkpoint is step 2
    assert find_checkpoint(out).name == "step-00000002"
    assert max(m["step"] for m in read_metrics(out / "metrics.jsonl")) == 3
    steps_read.clear()
    train(_cfg(encoded, out))
    assert sorted(set(steps_read)) == [2, 3, 4, 5], "the resumed run reads from step 2 on, nothing before"

    a, b = read_metrics(tmp_path / "full" / "metrics.jsonl"), read_metrics(out / "metrics.jsonl")
    assert [m["step"] for m in a] == [m["step"] for m in b] == [1, 2, 3, 4, 5, 6]
    for x, y in zip(a, b, strict=True):
        assert x["loss"] == y["loss"], f"step {x['step']}: {x['loss']} != {y['loss']}"
        assert x.get("eval_loss") == y.get("eval_loss")
    assert a[-1]["loss"] < a[0]["loss"]
    wa, wb = load_file(tmp_path / "full/final/model.safetensors"), load_file(out / "final/model.safetensors")
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    assert (out / "loss_curve.png").stat().st_size > 1000
    assert list((out / "tensorboard").rglob("events.out.tfevents.*"))


def test_resume_refuses_a_different_batch_layout(encoded, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=2))
    with pytest.raises(ValueError, match="samples/step"):
        train(_cfg(encoded, out, grad_accum=1))


def test_sparse_loss_equals_dense_loss():
    cfg = build_config("tiny", vocab_size=300, seq_len=16, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                       overrides={"num_hidden_layers": 1})
    model = build_model(cfg, seed=0).eval()
    ids = torch.randint(5, 300, (3, 16), generator=torch.Generator().manual_seed(0))
    labels = torch.full_like(ids, -100)
    labels[:, 3:6] = ids[:, 3:6]
    dense = model(input_ids=ids, labels=labels).loss
    sparse = SparseMLM(model)(input_ids=ids, labels=labels)
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-6)
    # per-token losses: one per predicted position, row-major, each the dense cross-entropy at that position
    per = SparseMLM(model)(input_ids=ids, labels=labels, per_token=True)
    logits = model(input_ids=ids).logits
    expected = torch.nn.functional.cross_entropy(logits[:, 3:6].reshape(-1, 300), ids[:, 3:6].reshape(-1),
                                                 reduction="none")
    assert per.shape == (9,)
    torch.testing.assert_close(per, expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(per.mean(), dense, rtol=1e-5, atol=1e-6)


def test_eval_order_gain_is_zero_without_position_information(encoded, tmp_path):
    """Attention is permutation-equivariant: with the position table zeroed, shuffling the context cannot change
    any prediction, so the order gain must be 0 up to float error. With strong positions and large weights
    (attention far from uniform, as after training) it is not."""
    one_step = {"max_steps": 1, "eval_every": 1, "lr": 1e-12, "warmup_steps": 1,
                "model_overrides": {"initializer_range": 0.3}}
    real = pretrain.model.build_model

    def with_positions(std):
        def build(config, seed):
            model = real(config, seed)
            with torch.no_grad():
                model.roberta.embeddings.position_embeddings.weight.normal_(0.0, std)
            return model
        return build

    gains = {}
    try:
        for name, std in (("strong", 1.0), ("none", 0.0)):
            pretrain.model.build_model = with_positions(std)
            gains[name] = train(_cfg(encoded, tmp_path / name, **one_step))
    finally:
        pretrain.model.build_model = real
    assert abs(gains["none"]["eval_order_gain"]) < 1e-5
    assert abs(gains["strong"]["eval_order_gain"]) > 1e-3
    assert gains["none"]["eval_mask_loss"] > 0
    rows = read_metrics(tmp_path / "none" / "metrics.jsonl")
    assert rows[-1]["eval_order_gain"] == gains["none"]["eval_order_gain"]


def test_configs_follow_the_tokenizer():
    cfg = build_config("base", vocab_size=32000, seq_len=512, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size) == (768, 12, 32000)
    assert cfg.type_vocab_size == 1 and cfg.max_position_embeddings == 514 and cfg.pad_token_id == 1
    assert cfg._attn_implementation == "sdpa"
    large = build_config("large", vocab_size=100, seq_len=128, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                         overrides={"num_hidden_layers": 2})
    assert (large.hidden_size, large.num_hidden_layers) == (1024, 2)
    with pytest.raises(ValueError, match="unknown model size"):
        build_config("huge", vocab_size=100, seq_len=8, pad_token_id=1, bos_token_id=0, eos_token_id=2)


def test_export_round_trip_identical_logits_and_fill_mask(tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tok = AutoTokenizer.from_pretrained(make_tokenizer(tmp_path / "tok"))
    cfg = build_config("tiny", vocab_size=len(tok), seq_len=32, pad_token_id=tok.pad_token_id,
                       bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
    model = build_model(cfg, seed=1).eval()
    export_final(model.config, tok, tmp_path / "final", model.state_dict())
    assert (tmp_path / "final" / "model.safetensors").is_file()
    assert not list((tmp_path / "final").glob("*.bin")), "safetensors only"
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path / "final", local_files_only=True).eval()
    tok2 = AutoTokenizer.from_pretrained(tmp_path / "final", local_files_only=True)
    enc = tok2(["서울은 대한민국의 수도이다.", "한글은 세종대왕이 만든 글자이다."], padding=True,
               return_tensors="pt")
    assert "token_type_ids" not in enc
    with torch.no_grad():
        torch.testing.assert_close(loaded(**enc).logits, model(**enc).logits, rtol=0, atol=0)
    fill = pipeline("fill-mask", model=loaded, tokenizer=tok2, device="cpu")
    out = fill(f"서울은 대한민국의 {tok2.mask_token}이다.", top_k=3)
    assert len(out) == 3 and all(o["token"] < len(tok2) for o in out)


def test_trained_stage_output_loads(encoded, tmp_path):
    """The stage end to end, in-process: final/ loads with AutoModelForMaskedLM; meta is what the runner reads."""
    from transformers import AutoModelForMaskedLM

    from pretrain.stages.pretrain import PretrainParams, PretrainStage

    enc, vocab, result = encoded
    p = PretrainParams(seq_len=32, batch_size=4, max_steps=4, warmup_steps=1, eval_every=2, log_every=2,
                       checkpoint_every=2, threads=1, whole_word_mask=True)
    ctx = context(tmp_path / "pretrain", p, {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    res = PretrainStage().run(ctx)
    assert res.meta["final_dir"] == "final" and res.meta["plots"] == ["loss_curve.png"]
    assert res.meta["report"]["steps"] == 4 and res.meta["report"]["eval_loss"] > 0
    model = AutoModelForMaskedLM.from_pretrained(ctx.out_dir / "final", local_files_only=True)
    assert model.config.vocab_size == result.meta["vocab_size"]
    from transformers import AutoTokenizer

    # The exported tokenizer truncates to what the position table holds (seq_len), never past it.
    tok = AutoTokenizer.from_pretrained(ctx.out_dir / "final", local_files_only=True)
    assert tok.model_max_length == model.config.max_position_embeddings - 2 == 32
    assert len(tok("가나다 " * 200, truncation=True)["input_ids"]) == 32
    cfg = json.loads((ctx.out_dir / "train_config.json").read_text())
    assert cfg["whole_word_mask"] is True and cfg["seed"] == 7


def test_wall_clock_budget_stops_early_and_still_evaluates_the_final_model(encoded, tmp_path):
    out = tmp_path / "budget"
    s = train(_cfg(encoded, out, max_steps=100_000, time_budget_s=4.0, warmup_steps=1, eval_every=10_000,
                   checkpoint_every=10_000))
    assert 3 <= s["steps"] < 100_000
    rows = read_metrics(out / "metrics.jsonl")
    assert rows[-1]["step"] == s["steps"] and "eval_loss" in rows[-1]
    assert s["eval_loss"] == rows[-1]["eval_loss"] and s["eval_mask_loss"] == rows[-1]["eval_mask_loss"]
    # the kept and random 20 % of the predicted tokens are in eval_loss only: the two differ
    assert s["eval_mask_loss"] > 0 and s["eval_mask_loss"] != s["eval_loss"]
    lrs = [r["lr"] for r in rows if "lr" in r]
    assert lrs[0] == 2e-3 and lrs[-1] < lrs[1] < lrs[0]  # the schedule decays with elapsed time, not with the unreachable max_steps
    assert (out / "final" / "model.safetensors").is_file()
