"""Precision and the CPU's peak (pipeline/hardware.py): how `mixed_precision` is written and resolved, where the
resolution goes (keys, summary.json, card, fine-tuning records), a real bf16 run, and the measured matmul peak that
CPU MFU divides by."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

import pipeline.hardware as hw
import pretrain.engine as engine
from pipeline.hardware import BF16_MIN_HIDDEN, Precision, matmul_peak, resolve_precision
from pretrain.config import PretrainParams, TrainConfig
from pretrain.engine import Kernels, cpu_kernels
from pretrain.train import Halted, train
from testkit.pretrain import encode_fixture

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def amx(monkeypatch):
    """This CPU as one with AMX (and no GPU): what `auto` does on the Xeons the rule was measured on."""
    monkeypatch.setattr(hw, "native_bf16", lambda: "AMX")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


# -- how it is written ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("written", [False, "no", "No", "false", "fp32", "off"])
def test_every_way_of_saying_fp32_means_no(written):
    assert PretrainParams(mixed_precision=written).mixed_precision == "no"


def test_true_is_refused_with_what_to_write_instead():
    with pytest.raises(ValueError, match="does not say which precision; write auto, bf16, fp16 or no"):
        PretrainParams(mixed_precision=True)


def test_an_unquoted_no_on_the_command_line_is_fp32(tmp_path):
    """`--set stages.pretrain.mixed_precision=no`: YAML reads `no` as False, which failed before ("got False")."""
    from pipeline.recipe import load_recipe

    recipe = load_recipe(ROOT / "pipeline" / "sample" / "recipe.yaml", ["stages.pretrain.mixed_precision=no"])
    p = recipe.stages["pretrain"]
    assert p.mixed_precision == "no"
    assert p.resolved_precision() == Precision("fp32", "set: no")


# -- how `auto` resolves -------------------------------------------------------------------------------------------


def test_native_bf16_is_what_the_cpu_flags_say():
    """torch's detection against the kernel's flags: AMX tiles or AVX512-BF16 in /proc/cpuinfo."""
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if not flags:
        pytest.skip("no /proc/cpuinfo flags on this system")
    expected = "AMX" if "amx_tile" in flags else "AVX512-BF16" if "avx512_bf16" in flags else None
    assert hw.native_bf16() == expected


def test_auto_without_native_bf16_is_fp32_at_every_width(monkeypatch):
    monkeypatch.setattr(hw, "native_bf16", lambda: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for width in (128, 256, 768, None):
        r = resolve_precision("auto", width)
        assert r.name == "fp32" and r.why.startswith("auto: no native bf16 on this CPU")
    assert resolve_precision("bf16", 128) == Precision("bf16", "set: bf16")  # forcing it still forces it


def test_auto_with_amx_is_bf16_from_the_measured_width_on(amx):
    narrow = resolve_precision("auto", BF16_MIN_HIDDEN - 64)
    assert narrow.name == "fp32" and f"hidden size {BF16_MIN_HIDDEN - 64} < {BF16_MIN_HIDDEN}" in narrow.why
    wide = resolve_precision("auto", BF16_MIN_HIDDEN)
    assert wide.name == "bf16" and wide.accelerate == "bf16" and wide.why.startswith("auto: AMX bf16")
    assert resolve_precision("no", 768).accelerate == "no"
    # the recipe's shape decides: the suite's 4 x 256 is bf16 there, the embedded default's 4 x 128 stays fp32
    assert PretrainParams(model_overrides={"hidden_size": 256}).resolved_precision().name == "bf16"
    assert PretrainParams(model="tiny").resolved_precision().name == "fp32"


def test_the_stage_key_holds_the_resolution(amx, tmp_path):
    from pretrain.stages.pretrain import PretrainStage
    from testkit.pretrain import context

    def material(**kw):
        ctx = context(tmp_path, PretrainParams(**kw), {"encode": (tmp_path, {}), "vocab": (tmp_path, {})})
        return PretrainStage().fingerprint(ctx)

    assert material(model_overrides={"hidden_size": 256, "num_attention_heads": 4}) == {"precision": "bf16"}
    assert material() == {"precision": "fp32"}  # 4 x 128: below the width rule
    assert material(mixed_precision="no", model_overrides={"hidden_size": 256, "num_attention_heads": 4}) == {
        "precision": "fp32"}


def test_the_finetune_key_holds_each_tasks_resolution_for_the_arms_width(amx, tmp_path):
    from types import SimpleNamespace

    from finetune.stages.finetune import FinetuneParams, precision_material
    from pipeline.stage import StageContext

    def material(hidden: int, **kw):
        recipe = SimpleNamespace(stages={"pretrain": PretrainParams(model_overrides={"hidden_size": hidden})})
        params = FinetuneParams(tasks=["ynat", "ner"], data_dir=str(tmp_path), **kw)
        return precision_material(StageContext(out_dir=tmp_path, params=params, inputs={}, recipe=recipe))

    assert material(128) == {"precision": {"ynat": "fp32", "ner": "fp32"}}
    assert material(256) == {"precision": {"ynat": "bf16", "ner": "bf16"}}
    assert material(256, task_hyperparams={"ner": {"mixed_precision": False}}) == {"precision": {"ynat": "bf16",
                                                                                                "ner": "fp32"}}


def test_a_bf16_run_departs_from_the_baseline_and_auto_itself_does_not():
    from finetune.results import run_departures
    from finetune.tasks.ynat import YnatTask

    hp = YnatTask.defaults.model_dump()
    base = {"task": "ynat", "hyperparams": hp, "max_steps": None}
    assert run_departures({**base, "precision": "fp32"}) == []
    assert run_departures({**base, "hyperparams": {**hp, "mixed_precision": "no"}}) == []
    assert run_departures({**base, "precision": "bf16"}) == ["bf16 autocast (baseline: fp32)"]


# -- a real run in each precision ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    return encode_fixture(tmp_path_factory.mktemp("precision"), n_shards=1, repeat=2, eval_fraction=0.15)


def _cfg(encoded, out, **kw) -> TrainConfig:
    enc, vocab, _ = encoded
    base = dict(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(out), seq_len=32,
                batch_size=4, max_steps=4, warmup_steps=1, lr=2e-3, log_every=2, eval_every=4, eval_batches=1,
                checkpoint_every=4, threads=1, architecture="modernbert",
                model_overrides={"hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128})
    return TrainConfig(**{**base, **kw})


def test_bf16_autocast_trains_fp32_masters_and_records_why(encoded, tmp_path):
    """bf16 autocast on the CPU, forced (native or emulated): the loss is bf16's, the weights fp32 masters (the
    export stays fp32), and summary.json says which precision and why; the same steps in fp32 agree to bf16's
    rounding, not to the bit."""
    with pytest.warns(UserWarning, match="emulated bf16") if hw.native_bf16() is None else nullcontext():
        bf16 = train(_cfg(encoded, tmp_path / "bf16", mixed_precision="bf16"))
    fp32 = train(_cfg(encoded, tmp_path / "fp32", mixed_precision="no"))
    assert (bf16["precision"], bf16["precision_why"], bf16["mixed_precision"]) == ("bf16", "set: bf16", "bf16")
    assert (fp32["precision"], fp32["mixed_precision"]) == ("fp32", "no")
    with safe_open(str(tmp_path / "bf16/final/model.safetensors"), "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float32}
    if hw.native_bf16() is None:  # emulated bf16 has no peak to divide by (pipeline.hardware.mfu_peak)
        assert bf16["mfu"] is None and bf16["peak"] is None
    assert bf16["last_loss"] != fp32["last_loss"]
    assert bf16["last_loss"] == pytest.approx(fp32["last_loss"], rel=0.02)


def test_a_cpu_run_reports_mfu_against_the_measured_peak_of_its_precision(encoded, tmp_path):
    summary = train(_cfg(encoded, tmp_path / "run", mixed_precision="no", max_steps=3, log_every=1))
    peak = matmul_peak("fp32", 1)  # the cached measurement the run divided by
    assert summary["peak"] == {"label": peak.label, "flops_per_s": peak.tflops * 1e12}
    assert hw.cpu_model() in peak.label and "1 thread, fp32 matmul measured" in peak.label
    assert summary["mfu"] > 0
    rows = [json.loads(line) for line in (tmp_path / "run/metrics.jsonl").read_text().splitlines()]
    assert all(r["mfu"] > 0 for r in rows if "tokens_per_s" in r)


# -- the measured peak ---------------------------------------------------------------------------------------------


def test_the_peak_is_measured_once_per_machine_threads_and_dtype(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_CACHE_DIR", str(tmp_path))
    calls = []
    real = hw.measure_matmul

    def counted(dtype, threads, sizes=None, repeats=hw.PEAK_REPEATS):
        calls.append((dtype, threads))
        return real(dtype, threads, sizes=(128,), repeats=2)

    monkeypatch.setattr(hw, "measure_matmul", counted)
    first = matmul_peak("fp32", 1)
    assert matmul_peak("fp32", 1) == first and calls == [("fp32", 1)]
    matmul_peak("fp32", 2)
    assert calls == [("fp32", 1), ("fp32", 2)]
    cached = json.loads((tmp_path / "matmul-peak.json").read_text())
    assert len(cached) == 2 and all(v["cpu"] == hw.cpu_model() and v["tflops"] > 0 for v in cached.values())
    (tmp_path / "matmul-peak.json").write_text("{not json")  # a broken cache is measured around, never an error
    assert matmul_peak("fp32", 1).tflops > 0 and len(calls) == 3


def test_mfu_has_no_peak_for_emulated_bf16_or_fp16(monkeypatch):
    monkeypatch.setattr(hw, "native_bf16", lambda: None)
    monkeypatch.setattr(hw, "matmul_peak", lambda *a: pytest.fail("nothing to measure"))
    assert hw.mfu_peak("bf16", 2) is None and hw.mfu_peak("fp16", 2) is None


def test_the_measured_rate_is_the_best_of_its_products():
    p = hw.measure_matmul("fp32", 1, sizes=(64, 128), repeats=2)
    assert p.n in (64, 128) and p.dtype == "fp32" and p.threads == 1
    # no product can beat one fp32 FMA unit's 2 x 16 FLOPs a cycle at 6 GHz on one thread
    assert 0 < p.tflops < 2 * 16 * 6e9 / 1e12


def test_one_process_fine_tunes_in_one_precision_then_another(tmp_path):
    """Two tasks of a suite may resolve to different precisions in one process (accelerate keeps one process-wide
    state and refused the second); each run records what it trained in."""
    from finetune.data import load_task_data
    from finetune.registry import get_task
    from finetune.trainer import run_seed
    from testkit.finetune import FX, fixture_texts
    from testkit.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "model", fixture_texts())
    task = get_task("ynat", data_dir=FX)
    data = load_task_data(task, FX)
    records = [run_seed(task, model, data, tmp_path / choice, 1, task.defaults.replace(mixed_precision=choice),
                        max_steps=2, save_model=False, progress=False)
               for choice in ("no", "bf16", "no")]
    assert [r["precision"] for r in records] == ["fp32", "bf16", "fp32"]
    assert records[0]["history"] == records[2]["history"]  # fp32 after bf16 is the fp32 run again


# -- the kernels a CPU bf16 run computes with (pretrain.engine.cpu_kernels) ----------------------------------------


def _kernels_for(**kw) -> Kernels:
    params = PretrainParams(**{"architecture": "modernbert", **kw})
    return cpu_kernels(params, params.resolved_precision().name)


def test_a_modernbert_in_bf16_on_native_bf16_gets_eager_attention_in_a_compiled_encoder(amx):
    fast = _kernels_for(mixed_precision="bf16")
    assert (fast.attention, fast.compile) == ("eager", True) and "AMX" in fast.why
    assert (_kernels_for(mixed_precision="bf16", compile=False).attention,
            _kernels_for(mixed_precision="bf16", compile=False).compile) == ("eager", False)
    # where it was not measured to pay: the stock kernels, an eager module
    for kw in ({"mixed_precision": "no"}, {"mixed_precision": "bf16", "num_processes": 2},
               {"mixed_precision": "bf16", "deepspeed": "zero2"},
               {"mixed_precision": "bf16", "architecture": "roberta"}):
        k = _kernels_for(**kw)
        assert (k.attention, k.compile) == (None, False), kw
    assert _kernels_for(mixed_precision="no", compile=True).compile  # forced


def test_without_a_cxx_compiler_auto_leaves_the_encoder_eager_and_says_why(amx, monkeypatch):
    monkeypatch.setattr(engine, "cxx_compiler", lambda: None)
    k = _kernels_for(mixed_precision="bf16")
    assert (k.attention, k.compile) == ("eager", False) and "no C++ compiler" in k.why
    assert _kernels_for(mixed_precision="bf16", compile=True).compile  # forced: the user's call


def test_without_native_bf16_a_bf16_run_keeps_the_stock_kernels(monkeypatch):
    monkeypatch.setattr(hw, "native_bf16", lambda: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    k = _kernels_for(mixed_precision="bf16")
    assert (k.attention, k.compile) == (None, False)


@pytest.mark.skipif(hw.native_bf16() is None, reason="needs a CPU with native bf16 (AMX or AVX512-BF16) to run the "
                                                      "compiled bf16 encoder for real; this CPU has none")
def test_a_compiled_bf16_run_is_deterministic_and_resumes_to_the_same_bytes(encoded, tmp_path):
    """The compiled encoder with eager attention, for real: the same loss curve twice, the same final weights after a
    halt and a resume from the checkpoint (the compiled module's state dict keeps the stock keys), and summary.json
    says which kernels ran."""
    cfg = {"mixed_precision": "bf16", "max_steps": 4, "checkpoint_every": 2, "log_every": 1}
    first = train(_cfg(encoded, tmp_path / "a", **cfg))
    assert first["kernels"] == {"attention": "eager", "compile": True, "why": first["kernels"]["why"]}
    train(_cfg(encoded, tmp_path / "b", **cfg))
    with pytest.raises(Halted):
        train(_cfg(encoded, tmp_path / "c", **cfg, halt_after_step=2))
    train(_cfg(encoded, tmp_path / "c", **cfg))
    curves = [(tmp_path / r / "metrics.jsonl").read_text() for r in "abc"]
    losses = [[json.loads(x).get("loss") for x in c.splitlines()] for c in curves]
    assert losses[0] == losses[1] == losses[2] and len([x for x in losses[0] if x is not None]) == 4
    weights = {(tmp_path / r / "final/model.safetensors").read_bytes() for r in "abc"}
    assert len(weights) == 1
