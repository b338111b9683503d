"""`klue export-checkpoint`: a training checkpoint becomes the same kind of model folder as `final/`."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from pretrain.export import export_checkpoint_cmd
from pretrain.train import TrainConfig, train
from testkit.pretrain import encode_fixture


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    enc, vocab, _ = encode_fixture(root, n_shards=1, repeat=2, eval_fraction=0.15)
    out = root / "run"
    cfg = TrainConfig(encode_dir=str(enc), tokenizer_dir=str(vocab / "tok"), out_dir=str(out), seq_len=32,
                      batch_size=4, max_steps=6, warmup_steps=1, lr=3e-3, eval_every=100, eval_batches=1,
                      checkpoint_every=2, keep_checkpoints=3, threads=1)  # checkpoints at 2, 4, 6 (the end)
    train(cfg)
    (out / "train_config.json").write_text(cfg.model_dump_json())  # as the pretrain stage does
    return out


def _export(args: list[str], language: list[str] | None = None):
    """The command on the fixture run, made outside a workdir: it has no vocab stage to state the card's language."""
    return CliRunner().invoke(export_checkpoint_cmd, [*args, *(["--language", "ko"] if language is None else language)],
                              catch_exceptions=False)


def test_a_run_outside_a_workdir_needs_the_cards_language(run, tmp_path):
    res = _export([str(run), "--output", str(tmp_path / "x")], language=[])
    assert res.exit_code == 1 and "the card's language is unknown: no vocab stage folder among the run's stages " \
        "(none) to read it from (a run made outside a workdir: `klue export-checkpoint --language CODE`)" in res.output
    assert not (tmp_path / "x").exists(), "nothing half-written"


def test_newest_checkpoint_exports_its_own_weights_and_loads(run, tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    res = _export([str(run), "--output", str(tmp_path / "s6")])  # default: the newest checkpoint, the last step
    assert res.exit_code == 0, res.output
    assert "step-00000006" in res.output
    final = load_file(run / "final" / "model.safetensors")
    last = load_file(tmp_path / "s6" / "model.safetensors")
    assert last.keys() == final.keys() and all(torch.equal(last[k], final[k]) for k in final)  # = final/

    res = _export([str(run), "--step", "4", "--output", str(tmp_path / "s4")])
    assert res.exit_code == 0, res.output
    ckpt = load_file(run / "checkpoints" / "step-00000004" / "model.safetensors")
    exported = load_file(tmp_path / "s4" / "model.safetensors")
    assert {"mlm." + k for k in exported} == set(ckpt)
    assert all(torch.equal(v, ckpt["mlm." + k]) for k, v in exported.items())
    assert exported.keys() == final.keys()  # the same folder layout as the stage's own export
    assert not all(torch.equal(exported[k], final[k]) for k in exported)  # two more steps moved the weights
    model = AutoModelForMaskedLM.from_pretrained(tmp_path / "s4")
    assert torch.equal(model.lm_head.decoder.bias, ckpt["mlm.lm_head.bias"])  # the tied bias is restored
    assert torch.equal(model.lm_head.decoder.weight, ckpt["mlm.roberta.embeddings.word_embeddings.weight"])
    assert AutoTokenizer.from_pretrained(tmp_path / "s4").model_max_length == 32

    res = _export([str(run), "--step", "2", "--output", str(tmp_path / "s2")])
    assert res.exit_code == 0, res.output
    s2 = load_file(tmp_path / "s2" / "model.safetensors")
    assert not all(torch.equal(s2[k], exported[k]) for k in s2)


def test_missing_step_or_config_is_a_clear_error(run, tmp_path):
    res = _export([str(run), "--step", "5", "--output", str(tmp_path / "x")])
    assert res.exit_code != 0 and "no checkpoint of step 5 (kept: 2, 4, 6)" in res.output
    res = _export([str(tmp_path), "--output", str(tmp_path / "x")])
    assert res.exit_code != 0 and "train_config.json: not found" in res.output
    assert not (tmp_path / "x").exists()
