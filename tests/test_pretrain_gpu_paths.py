"""The GPU and multi-node paths, pinned on CPU: DeepSpeed's CPU accelerator and two gloo ranks stand in for GPUs
and nodes. One test per defect the review found (each fails on the code before the fix):
  1. a DeepSpeed bf16 run exported bf16 weights (fine-tuning then trained in pure bf16);
  2. a wall-clock budget stopped each rank on its own clock (one rank entered a collective alone);
  3. tokens/s counted evaluation, checkpoints and start-up as training time;
  4. MFU counted 6 N per token (embedding lookups, and the output layer at every position);
  5. `klue export-checkpoint` could not read a DeepSpeed checkpoint;
  6. the Slurm example gave every node rank 0 and no CPUs per task.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

import pretrain.batches as batches_mod
import pretrain.train as train_mod
from pretrain.architectures import build_config
from pretrain.config import TrainConfig
from pretrain.engine import Run, deepspeed_config, release
from pretrain.flops import peak_for, step_flops
from pretrain.metrics import read_metrics
from pretrain.stages.pretrain import PretrainParams, PretrainStage
from pretrain.train import evaluate_folder, train
from testkit.pretrain import context, encode_fixture, train_samples

ROOT = Path(__file__).resolve().parent.parent
needs_deepspeed = pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None,
                                     reason="deepspeed is not installed (the optional `deepspeed` extra)")


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu-paths")
    return encode_fixture(root, n_shards=2, repeat=4, eval_fraction=0.1)


def _stage_run(encoded, out: Path, **kw) -> Path:
    enc, vocab, result = encoded
    params = dict(seq_len=32, batch_size=8, max_steps=6, warmup_steps=2, lr=3e-3, log_every=1, eval_every=3,
                  eval_batches=2, checkpoint_every=3, keep_checkpoints=3, num_processes=2, threads=1)
    ctx = context(out, PretrainParams(**{**params, **kw}),
                  {"encode": (enc, result.meta), "vocab": (vocab, {"tokenizer_dir": "tok"})})
    PretrainStage().run(ctx)
    return ctx.out_dir


def _masters(ckpt: Path) -> dict[str, torch.Tensor]:
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

    return {k.removeprefix("mlm."): v for k, v in get_fp32_state_dict_from_zero_checkpoint(str(ckpt)).items()}


# ---------------------------------------------------------------------------------------------------------
# 1. fp32 export of a DeepSpeed bf16 run, and fine-tuning in fp32


@pytest.mark.slow
@needs_deepspeed
def test_deepspeed_bf16_run_exports_its_fp32_masters(encoded, tmp_path):
    out = _stage_run(encoded, tmp_path / "run", deepspeed="zero2", mixed_precision="bf16")
    final = load_file(out / "final" / "model.safetensors")
    assert {t.dtype for t in final.values()} == {torch.float32}
    assert json.loads((out / "final" / "config.json").read_text())["dtype"] == "float32"
    masters = _masters(out / "checkpoints" / "step-00000006")  # the last step is checkpointed too
    shared = [k for k in final if k in masters]
    assert len(shared) >= len(final) - 1  # all but, at most, a tied tensor stored under its other name
    for k in shared:
        assert torch.equal(final[k], masters[k]), k
    # not the bf16 module upcast: masters carry bits that bf16 cannot hold
    assert any(not torch.equal(t, t.bfloat16().float()) for t in final.values())

    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from finetune.registry import get_task

    bf16_dir = tmp_path / "bf16-folder"  # what the old export wrote: bf16 weights, dtype bfloat16
    AutoModelForMaskedLM.from_pretrained(out / "final").to(torch.bfloat16).save_pretrained(bf16_dir)
    tok = AutoTokenizer.from_pretrained(out / "final")
    tok.save_pretrained(bf16_dir)
    assert json.loads((bf16_dir / "config.json").read_text())["dtype"] == "bfloat16"
    task = get_task("ynat", ROOT / "tests" / "fixtures" / "finetune")
    for random_init in (False, True):  # both arms of --vs-random-init
        model = task.build_model(bf16_dir, tok, random_init)
        assert {p.dtype for p in model.parameters()} == {torch.float32}, random_init


# ---------------------------------------------------------------------------------------------------------
# 5. DeepSpeed checkpoints export (ZeRO-2 and ZeRO-3) to models with the training run's own eval loss


@pytest.mark.slow
@needs_deepspeed
@pytest.mark.parametrize("zero,architecture", [("zero2", "roberta"), ("zero3", "roberta"), ("zero3", "modernbert")])
def test_zero_checkpoint_exports_with_the_same_eval_loss(encoded, tmp_path, zero, architecture):
    from pretrain.export import export_checkpoint_cmd

    out = _stage_run(encoded, tmp_path / "run", deepspeed=zero, mixed_precision="no", architecture=architecture)
    assert (out / "checkpoints" / "step-00000003" / "latest").is_file()  # a ZeRO checkpoint, no safetensors
    res = CliRunner().invoke(export_checkpoint_cmd, [str(out), "--step", "3", "--output", str(tmp_path / "s3"), "--language", "ko"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert {t.dtype for t in load_file(tmp_path / "s3" / "model.safetensors").values()} == {torch.float32}
    cfg = TrainConfig.model_validate_json((out / "train_config.json").read_text())
    logged = next(m["eval_loss"] for m in read_metrics(out / "metrics.jsonl") if m.get("step") == 3 and "eval_loss" in m)
    # the export, evaluated in one process, scores what the two ranks logged (evaluation is rank-independent)
    assert evaluate_folder(tmp_path / "s3", cfg)["eval_loss"] == pytest.approx(logged, abs=1e-6)
    # the final step's checkpoint exports to exactly the run's final/ (one export path for both)
    res = CliRunner().invoke(export_checkpoint_cmd, [str(out), "--output", str(tmp_path / "s6"), "--language", "ko"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    a, b = load_file(tmp_path / "s6" / "model.safetensors"), load_file(out / "final" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((tmp_path / "s6" / "config.json").read_text())["model_type"] == architecture


def test_zero_configs_accumulate_and_communicate_in_fp32(tmp_path):
    for zero in ("zero1", "zero2", "zero3"):
        cfg = TrainConfig(encode_dir="e", tokenizer_dir="t", out_dir=str(tmp_path), deepspeed=zero)
        ds = deepspeed_config(cfg, "bf16")
        assert ds["bf16"] == {"enabled": True}
        assert ds["data_types"]["grad_accum_dtype"] == "fp32" and ds["communication_data_type"] == "fp32", zero


# ---------------------------------------------------------------------------------------------------------
# 2. one clock for every rank


@pytest.mark.slow
def test_two_ranks_with_a_wall_clock_budget_stop_at_the_same_step(encoded, tmp_path):
    enc, vocab, _ = encoded
    out = tmp_path / "run"
    out.mkdir()
    # rank 1 sees its clock 1.5 s ahead, as a rank that started that much earlier would: on its own clock it
    # would stop 1.5 s before rank 0 and leave it waiting in the next step's gradient all-reduce
    cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(out), seq_len=32,
                      batch_size=4, max_steps=100_000, warmup_steps=2, lr=1e-3, log_every=5, eval_every=10**6,
                      checkpoint_every=10**6, threads=1, time_budget_s=3.0, clock_offset_s={1: 1.5})
    (out / "train_config.json").write_text(cfg.model_dump_json())
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1", "--nproc_per_node", "2",
           "-m", "pretrain.train", str(out / "train_config.json")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rank_steps"] == [summary["steps"]] * 2 and 0 < summary["steps"] < 100_000
    assert "budget of 3s reached" in proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------------------
# 3. tokens/s of training steps only; 4. MFU from counted FLOPs


def test_flop_count_equals_a_hand_count():
    cfg = build_config("tiny", vocab_size=1000, seq_len=32, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.intermediate_size) == (4, 128, 512)
    # per token, forward: 2*4*(4*128^2 + 2*128*512) matmuls + 2*4*2*32*128 attention = 1,638,400;
    # per predicted position: 2*(128^2 + 128*1000) = 288,768; training = 3x forward
    assert step_flops(cfg, 32, tokens=64, predicted=10) == 3 * (64 * 1_638_400 + 10 * 288_768) == 323_235_840
    small = build_config("small", vocab_size=16000, seq_len=128, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    from transformers import RobertaForMaskedLM

    n_params = sum(p.numel() for p in RobertaForMaskedLM(small).parameters())
    old = 6 * n_params * 1000
    assert 1.15 < old / step_flops(small, 128, tokens=1000, predicted=150) < 1.30  # the review's 1.22x
    # ModernBERT's GeGLU has three FFN matrices (d x 2f in, f x d out): 2*4*(4*128^2 + 3*128*384) + attention
    # 2*4*2*32*128 = 1,769,472 per token; the same head (dense transform and decoder) at predicted positions
    mb = build_config("tiny", vocab_size=1000, seq_len=32, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                      architecture="modernbert")
    assert mb.intermediate_size == 384
    assert step_flops(mb, 32, tokens=64, predicted=10) == 3 * (64 * 1_769_472 + 10 * 288_768) == 348_401_664
    # and against the parameters a step touches: every encoder matrix once per token, in and out
    from transformers import ModernBertForMaskedLM

    model = ModernBertForMaskedLM(mb)
    encoder = sum(p.numel() for n, p in model.named_parameters() if p.ndim == 2 and ".layers." in n)
    assert 2 * encoder == 2 * 4 * (4 * 128 * 128 + 3 * 128 * 384)


def test_peaks_are_named_per_card():
    assert peak_for("NVIDIA H100 80GB HBM3").label == "H100 SXM, bf16 dense"
    assert peak_for("NVIDIA H100 PCIe").flops == 756e12 and peak_for("NVIDIA H100 NVL").flops == 835e12
    assert peak_for("NVIDIA H200").flops == 989e12 and peak_for("NVIDIA H200 NVL").flops == 835e12
    assert peak_for("NVIDIA GeForce GTX 1080") is None
    assert peak_for("anything", override_tflops=100).flops == 100e12


def test_tokens_per_s_and_mfu_count_training_steps_only(encoded, tmp_path, monkeypatch):
    enc, vocab, _ = encoded
    pause = 0.6  # each evaluation, checkpoint and the first micro-batch (start-up) take this long on top
    real_eval, real_ckpt, real_batch = train_mod.evaluate, train_mod.save_checkpoint, batches_mod.micro_batch
    calls = {"batch": 0}

    def slow_eval(*a, **k):
        time.sleep(pause)
        return real_eval(*a, **k)

    def slow_ckpt(*a, **k):
        time.sleep(pause)
        return real_ckpt(*a, **k)

    def slow_first_batch(*a, **k):
        calls["batch"] += 1
        if calls["batch"] == 1:
            time.sleep(pause)
        return real_batch(*a, **k)

    monkeypatch.setattr(train_mod, "evaluate", slow_eval)
    monkeypatch.setattr(train_mod, "save_checkpoint", slow_ckpt)
    monkeypatch.setattr(batches_mod, "micro_batch", slow_first_batch)
    cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(tmp_path / "run"),
                      seq_len=32, batch_size=4, max_steps=8, warmup_steps=1, lr=1e-3, log_every=2, eval_every=2,
                      eval_batches=1, checkpoint_every=4, threads=1, peak_tflops=1.0)
    summary = train(cfg)
    rows = [m for m in read_metrics(tmp_path / "run" / "metrics.jsonl") if "loss" in m]
    assert [r["step"] for r in rows] == [2, 4, 6, 8]
    per_step = cfg.batch_size * cfg.seq_len
    for r in rows:
        timed_steps = 1 if r["step"] == 2 else 2  # step 1 is start-up, never timed
        seconds = timed_steps * per_step / r["tokens_per_s"]
        assert seconds < pause - 0.1, f"step {r['step']}: the window took {seconds:.2f}s, a pause leaked in"
        # MFU = FLOPs of the window's steps (predicted positions counted from the same masks) / (s * peak)
        assert r["mfu"] == pytest.approx(_window_flops(cfg, r["step"], timed_steps) / (seconds * 1e12), rel=1e-6)
    assert summary["tokens_per_s"] is not None and summary["peak"]["flops_per_s"] == 1e12


def test_background_batches_are_the_inline_ones(encoded, tmp_path):
    """The GPU path builds the next micro-batch on a thread; whatever the order of requests, each batch is the
    pure function of (step, micro-batch, rank) that the inline path builds."""
    from accelerate import Accelerator
    from transformers import AutoTokenizer

    from pretrain.data import SampleOrder

    enc, vocab, _ = encoded
    cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(tmp_path), seq_len=32,
                      batch_size=4, grad_accum=2, max_steps=5)
    samples = train_samples(enc, AutoTokenizer.from_pretrained(vocab / "tok"), cfg.seq_len)
    accelerator = Accelerator(cpu=True)
    try:
        run = Run(cfg, accelerator, None, None, samples.special, SampleOrder(len(samples), cfg.seed, 4, 2, 1))
        inline, ahead = batches_mod.BatchSource(run, samples), batches_mod.BatchSource(run, samples, background=True)
        coords = [(0, 0), (0, 1), (1, 0), (1, 1), (3, 1), (2, 0), (4, 1)]  # in order, then skipping about
        for s, a in coords:
            (b1, n1), (b2, n2) = inline.get(s, a), ahead.get(s, a)
            assert n1 == n2 and b1.keys() == b2.keys() and all(torch.equal(b1[k], b2[k]) for k in b1), (s, a)
        ahead.close()
    finally:
        release(accelerator)


def _window_flops(cfg: TrainConfig, last_step: int, n_steps: int) -> float:
    from transformers import AutoTokenizer

    from pretrain.data import IGNORE, SampleOrder, mask_tokens, step_generator

    tok = AutoTokenizer.from_pretrained(cfg.tokenizer_dir)
    samples = train_samples(cfg.encode_dir, tok, cfg.seq_len)
    order = SampleOrder(len(samples), cfg.seed, cfg.batch_size, cfg.grad_accum, 1)
    model_cfg = build_config(cfg.model, vocab_size=len(tok), seq_len=cfg.seq_len, pad_token_id=tok.pad_token_id,
                             bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
    total = 0.0
    for s in range(last_step - n_steps, last_step):  # 0-based step coordinates of steps last-n+1 .. last
        b = samples.batch(order.indices(s, 0, 0))
        _, labels = mask_tokens(b["input_ids"], samples.special, step_generator(cfg.seed, s, 0, 0),
                                mlm_probability=cfg.mlm_probability)
        total += step_flops(model_cfg, cfg.seq_len, int(b["input_ids"].numel()), int((labels != IGNORE).sum()))
    return total


# ---------------------------------------------------------------------------------------------------------
# 6. the Slurm example, run with stand-ins for srun, scontrol and python


def test_slurm_script_gives_each_node_its_rank_and_cpus(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    fakes = {
        # srun: run the command once per node, as Slurm does, with that node's id
        "srun": '#!/bin/bash\nwhile [[ "$1" == --* ]]; do shift; done\n'
                'for n in $(seq 0 $((SLURM_NNODES - 1))); do SLURM_NODEID=$n SLURM_PROCID=$n "$@" || exit 1; done\n',
        # a long node list, so that a reader that stops after the first line makes it die of SIGPIPE
        "scontrol": "#!/bin/bash\necho node-a\necho node-b\nfor i in $(seq 1 50000); do echo node-x$i; done\n",
        "python": f'#!/bin/bash\necho "node=$SLURM_NODEID cpus=${{SRUN_CPUS_PER_TASK:-unset}} args=$*" >> {log}\n',
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod((bin_dir / name).stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RUN": "/shared/run", "SLURM_NNODES": "2", "SLURM_JOB_ID": "77",
           "SLURM_JOB_NODELIST": "node-[a-b]", "SLURM_CPUS_PER_TASK": "64", "SLURM_NODEID": "0"}
    script = ROOT / "pretrain" / "examples" / "slurm_pretrain.sbatch"
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 2
    for n, line in enumerate(calls):
        assert line.startswith(f"node={n} cpus=64 ")
        assert f"--node_rank {n} " in line and "--rdzv_endpoint node-a:29500" in line
        assert line.endswith("-m pretrain.train /shared/run/train_config.json")
