"""The training loop: exact resume without replaying data, sparse MLM loss, configs, export round trip."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

import pretrain.data
import pretrain.model
from pretrain.architectures import ARCHITECTURES, build_config
from pretrain.checkpoint import find_checkpoint
from pretrain.config import TrainConfig
from pretrain.export import export_final
from pretrain.metrics import read_metrics
from pretrain.model import SparseMLM, build_model
from pretrain.train import Halted, lr_factor, train
from testkit.pretrain import context, encode_fixture, make_tokenizer, spy_steps_read


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    enc, vocab, result = encode_fixture(root, n_shards=2, repeat=3, eval_fraction=0.15)
    return enc, vocab, result


# dropout on, so that resuming must restore the RNG state too (ModernBERT names its dropouts differently)
DROPOUT = {"modernbert": {"embedding_dropout": 0.1, "mlp_dropout": 0.1, "attention_dropout": 0.1}}
BERT_DROPOUT = {"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}


def _cfg(encoded, out, architecture="roberta", **kw) -> TrainConfig:
    enc, vocab, _ = encoded
    base = dict(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(out), seq_len=32,
                batch_size=4, grad_accum=2, max_steps=6, warmup_steps=2, lr=2e-3, log_every=1,
                eval_every=3, eval_batches=2, checkpoint_every=2, threads=1, architecture=architecture,
                model_overrides=DROPOUT.get(architecture, BERT_DROPOUT))
    base.update(kw)
    return TrainConfig(**base)


@pytest.mark.parametrize("architecture", ["roberta", "modernbert"])
def test_resume_after_kill_equals_uninterrupted_run(encoded, tmp_path, monkeypatch, architecture):
    full = train(_cfg(encoded, tmp_path / "full", architecture))
    assert full["steps"] == 6

    steps_read = spy_steps_read(monkeypatch)
    out = tmp_path / "killed"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, architecture, halt_after_step=3))  # dies after step 3; the newest checkpoint is step 2
    assert find_checkpoint(out).name == "step-00000002"
    assert max(m["step"] for m in read_metrics(out / "metrics.jsonl")) == 3
    steps_read.clear()
    train(_cfg(encoded, out, architecture))
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
    assert type(train_model_of(out)).__name__ == ARCHITECTURES[architecture].mlm_class


def train_model_of(run_dir):
    from transformers import AutoModelForMaskedLM

    return AutoModelForMaskedLM.from_pretrained(run_dir / "final", local_files_only=True)


@pytest.mark.parametrize("architecture", ["modernbert", "roformer", "xlm-roberta-xl"])
def test_the_same_seed_gives_byte_identical_weights_and_curves(encoded, tmp_path, architecture):
    """What roberta's exact-resume test pins for KLUE's encoder, for the others: two runs of one config agree to
    the byte (weights file and metrics but the wall-clock fields), and the loss falls."""
    runs = [tmp_path / "a", tmp_path / "b"]
    for out in runs:
        summary = train(_cfg(encoded, out, architecture, max_steps=4, checkpoint_every=4))
        assert summary["threads"] == 1, "the thread count a CPU run's bits depend on is in its summary"
    a, b = ((r / "final" / "model.safetensors").read_bytes() for r in runs)
    assert a == b
    clock = {"tokens_per_s", "mfu"}
    ma, mb = ([{k: v for k, v in m.items() if k not in clock} for m in read_metrics(r / "metrics.jsonl")]
              for r in runs)
    assert ma == mb and ma[-1]["loss"] < ma[0]["loss"]
    assert type(train_model_of(runs[0])).__name__ == ARCHITECTURES[architecture].mlm_class


def test_resume_refuses_a_different_batch_layout(encoded, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Halted):
        train(_cfg(encoded, out, halt_after_step=2))
    with pytest.raises(ValueError, match="8 samples per step \\(the global batch\\); this run has 4"):
        train(_cfg(encoded, out, grad_accum=1))


@pytest.mark.parametrize("architecture", list(ARCHITECTURES))
def test_sparse_loss_equals_dense_loss(architecture):
    cfg = build_config("tiny", vocab_size=300, seq_len=16, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                       overrides={"num_hidden_layers": 1}, architecture=architecture)
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
    # the other encoders: the same shape, their own position numbering, ModernBERT's parameter-matched GeGLU
    kw = dict(vocab_size=32000, seq_len=512, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    mb = build_config("base", architecture="modernbert", **kw)
    assert type(mb).__name__ == "ModernBertConfig" and mb.max_position_embeddings == 512
    assert (mb.hidden_size, mb.num_hidden_layers, mb.intermediate_size) == (768, 12, 2048)  # 3 x 2048 = 2 x 3072
    assert (mb.cls_token_id, mb.sep_token_id, mb.pad_token_id) == (0, 2, 1)
    assert build_config("tiny", architecture="modernbert", **kw).intermediate_size == 384  # 2/3 x 512, up to 64
    assert build_config("base", architecture="xlm-roberta-xl", **kw).max_position_embeddings == 514
    rf = build_config("base", architecture="roformer", **kw)
    assert rf.max_position_embeddings == 512 and rf._attn_implementation == "eager"
    with pytest.raises(ValueError, match="unknown architecture 'bert'; choose one of"):
        build_config("tiny", architecture="bert", **kw)


def test_the_architecture_is_checked_where_the_recipe_names_it():
    from pydantic import ValidationError

    from pretrain.stages.pretrain import PretrainParams

    assert PretrainParams().architecture == "roberta"  # KLUE's stays the default
    with pytest.raises(ValidationError, match="architecture"):
        PretrainParams(architecture="modernbert2")


def test_wsd_holds_the_peak_then_decays_over_the_last_fraction():
    cfg = TrainConfig(encode_dir="e", tokenizer_dir="t", out_dir="o", max_steps=110, warmup_steps=10,
                      schedule="wsd", decay_fraction=0.2)
    f = [lr_factor(s, cfg) for s in range(111)]
    assert f[0] == 0.1 and f[9] == 1.0  # the same warmup
    assert all(x == 1.0 for x in f[10:91])  # stable until 80 of the 100 post-warmup steps
    assert f[95] == pytest.approx(0.75) and f[100] == pytest.approx(0.5) and f[110] == pytest.approx(0.0, abs=1e-12)
    linear = TrainConfig(encode_dir="e", tokenizer_dir="t", out_dir="o", max_steps=110, warmup_steps=10)
    assert lr_factor(60, linear) == pytest.approx(0.5)  # the default is unchanged
    # a wall-clock budget drives both schedules through `progress`
    assert lr_factor(50, cfg, progress=0.9) == pytest.approx(0.5)


@pytest.mark.parametrize("architecture", list(ARCHITECTURES))
def test_export_round_trip_identical_logits_and_fill_mask(tmp_path, architecture):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tok = AutoTokenizer.from_pretrained(make_tokenizer(tmp_path / "tok"))
    cfg = build_config("tiny", vocab_size=len(tok), seq_len=32, pad_token_id=tok.pad_token_id,
                       bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, architecture=architecture)
    model = build_model(cfg, seed=1).eval()
    export_final(model.config, tok, tmp_path / "final", model.state_dict())
    assert (tmp_path / "final" / "model.safetensors").is_file()
    assert not list((tmp_path / "final").glob("*.bin")), "safetensors only"
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path / "final", local_files_only=True).eval()
    assert type(loaded).__name__ == ARCHITECTURES[architecture].mlm_class
    tok2 = AutoTokenizer.from_pretrained(tmp_path / "final", local_files_only=True)
    assert tok2.model_max_length == 32  # the positions it was built for, whatever the numbering
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


def test_the_report_says_where_each_arm_left_the_plateau(tmp_path):
    """The pretraining section's plateau rows, from the arms' metrics.jsonl: tokens until the order gain first
    reaches 0.5 nats, and the [MASK] loss at the first evaluation at or past 2M, 4M and 11M tokens."""
    from pipeline.stage import ArmOutput
    from pretrain.stages.pretrain import PretrainStage, plateau_marks

    evals = [(500, 7.1, 0.0), (1000, 6.9, 0.3), (1500, 6.5, 0.6), (2000, 6.0, 1.2), (5500, 5.0, 3.0)]
    rows = [{"step": s, "loss": 7.0, "eval_loss": m - 1, "eval_mask_loss": m, "eval_order_gain": g}
            for s, m, g in evals]
    marks = plateau_marks(rows, 2048)
    assert marks == {"order gain >= 0.5 at (tokens)": "3.07M",  # step 1,500 x 2,048
                     "[MASK] loss at 2M tokens": "6.900",  # step 1,000: 2.05M, the first at or past 2M
                     "[MASK] loss at 4M tokens": "6.000", "[MASK] loss at 11M tokens": "5.000"}
    flat = plateau_marks([{**r, "eval_order_gain": 0.0} for r in rows[:2]], 2048)
    assert flat["order gain >= 0.5 at (tokens)"] == "not by 2.05M" and flat["[MASK] loss at 4M tokens"] == "–"

    outputs = []
    for label, rs in (("modernbert", rows), ("roberta", rows[:2])):
        (tmp_path / label).mkdir()
        (tmp_path / label / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rs))
        steps = rs[-1]["step"]
        meta = {"metrics": "metrics.jsonl", "report": {"steps": steps, "tokens_seen": steps * 2048}}
        outputs.append(ArmOutput((label,), tmp_path / label, {"meta": meta}))
    section = PretrainStage.report_section(outputs)
    line = next(x for x in section.markdown.splitlines() if x.startswith("| order gain"))
    assert line.split("|")[2:4] == [" 3.07M ", " not by 2.05M "]
    assert section.figures[0].png.startswith(b"\x89PNG")


@pytest.mark.slow
def test_a_modernbert_run_killed_with_sigkill_resumes_to_the_uninterrupted_bytes(encoded, tmp_path):
    """`python -m pretrain.train` in its own process, SIGKILLed once a checkpoint is on disk and training has moved
    past it, then started again: the same loss curve step for step and the same weights as a run never killed."""
    import os
    import signal
    import subprocess
    import sys
    import time

    kw = dict(max_steps=60, checkpoint_every=10, eval_every=20, keep_checkpoints=2)
    cfg = _cfg(encoded, tmp_path / "killed", "modernbert", **kw)
    path = tmp_path / "killed.json"
    path.write_text(cfg.model_dump_json())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pretrain.train", str(path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tmp_path / "killed"
    deadline = time.time() + 240
    try:
        while time.time() < deadline and proc.poll() is None:
            ckpt = find_checkpoint(out) if (out / "checkpoints").is_dir() else None
            rows = read_metrics(out / "metrics.jsonl") if (out / "metrics.jsonl").is_file() else []
            if ckpt is not None and rows and rows[-1]["step"] > int(ckpt.name.split("-")[1]):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (out / "final").exists()
    killed_at = max(m["step"] for m in read_metrics(out / "metrics.jsonl"))
    assert killed_at < 60

    assert subprocess.run([sys.executable, "-m", "pretrain.train", str(path)], env=env,
                          capture_output=True).returncode == 0
    full = tmp_path / "full"
    train(_cfg(encoded, full, "modernbert", **kw))
    a, b = read_metrics(full / "metrics.jsonl"), read_metrics(out / "metrics.jsonl")
    assert [m["step"] for m in a] == [m["step"] for m in b]
    assert [(m.get("loss"), m.get("eval_loss")) for m in a] == [(m.get("loss"), m.get("eval_loss")) for m in b]
    assert (full / "final/model.safetensors").read_bytes() == (out / "final/model.safetensors").read_bytes()
