"""The trainer's batch order and evaluation order: the uniform shuffle is transformers' `Trainer` to the last
digit, length-grouped batches pad less and depend on the seed alone, and length-sorted evaluation gives the
predictions of feature order."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from finetune.data import load_task_data
from finetune.registry import get_task
from finetune.tasks.base import Hyperparams
from finetune.trainer import FinetuneConfig, finetune_once, length_order, train_sampler
from testkit.tiny_model import build_tiny_model

FX = Path(__file__).parent / "fixtures" / "finetune"
ROOT = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def ner():
    task = get_task("ner", data_dir=FX)
    # KLUE-baseline's protocol: transformers' Trainer, which these tests compare against, evaluates (and records)
    # the eval split each epoch; ours then does the same (the default scores a selection split: test_selection_split)
    return task, load_task_data(task, FX, protocol="klue-baseline")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, ner) -> Path:
    _, data = ner
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), [ex["text"] for ex in data.train + data.eval])


def _bench():
    spec = importlib.util.spec_from_file_location("bench_finetune", ROOT / "bench" / "finetune.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_uniform_shuffle_is_transformers_trainer_to_the_last_digit(ner, tiny, tmp_path):
    """Same features, collator, head init, optimiser, schedule, clipping, batch order and dropout draws: every
    epoch's metrics agree exactly with `Trainer`'s (as bench/finetune.py's rows claim); length-grouped batches,
    a different order, do not."""
    task, data = ner
    hp = task.defaults.replace(epochs=2, batch_size=8, learning_rate=5e-3, max_length=64, group_by_length=False,
                               evals_per_epoch=1, patience=None)  # Trainer's `eval_strategy="epoch"`
    bench = _bench()
    ours = bench.run_ours(task, tiny, data, hp, seed=7)
    hf = bench.run_hf(task, tiny, data, hp, seed=7, work=tmp_path / "hf")
    names = task.metric_names
    ours_h = [[h[k] for k in names] for h in ours["history"]]
    hf_h = [[h[k] for k in names] for h in hf["history"]]
    assert len(ours_h) == 2 and ours_h == hf_h
    assert ours_h[0] != ours_h[1]  # the model moved between the epochs: the agreement is not two constant scores
    grouped = bench.run_ours(task, tiny, data, hp.replace(group_by_length=True), seed=7)
    assert [[h[k] for k in names] for h in grouped["history"]] != ours_h


def _padding(batches: list[list[int]], lengths: list[int]) -> float:
    total = sum(len(b) * max(lengths[i] for i in b) for b in batches)
    return 1 - sum(lengths[i] for b in batches for i in b) / total


def test_length_grouped_batches_pad_less_and_depend_on_the_seed_only():
    import torch

    rng = np.random.default_rng(0)
    lengths = [int(x) for x in rng.integers(5, 200, size=2000)]
    feats = [{"input_ids": [0] * n} for n in lengths]
    hp = Hyperparams(batch_size=16, group_by_length=True)

    def epochs(seed: int, n: int = 2) -> list[list[int]]:
        sampler = train_sampler(feats, hp, seed)
        return [list(sampler) for _ in range(n)]

    a = epochs(3)
    assert a == epochs(3)  # the seed alone decides
    assert a != epochs(4)
    assert a[0] != a[1]  # each epoch its own order
    assert all(sorted(e) == list(range(len(feats))) for e in a)  # every feature once per epoch
    grouped = [a[0][i:i + 16] for i in range(0, len(a[0]), 16)]
    perm = torch.randperm(len(feats), generator=torch.Generator().manual_seed(3)).tolist()
    uniform = [perm[i:i + 16] for i in range(0, len(perm), 16)]
    assert _padding(grouped, lengths) < 0.1 < 0.4 < _padding(uniform, lengths)
    assert train_sampler(feats, hp.replace(group_by_length=False), 3) is None  # the loader's seedable shuffle


def test_length_sorted_evaluation_gives_the_predictions_of_feature_order(ner, tiny, tmp_path, monkeypatch):
    """The outputs of length-sorted batches go back to their features: predictions equal those of evaluating in
    feature order (monkeypatched identity order), byte for byte."""
    import finetune.trainer as trainer

    task, data = ner
    lengths = [len(f["input_ids"]) for f in task.encode(data.eval, _tok(tiny), 64)]
    order = length_order([{"input_ids": [0] * n} for n in lengths])
    assert order != list(range(len(lengths)))  # the fixture's sentences are not already sorted
    assert [lengths[i] for i in order] == sorted(lengths)

    hp = task.defaults.replace(epochs=1, batch_size=8, learning_rate=5e-3, max_length=64)
    cfg = FinetuneConfig(hp=hp.replace(eval_batch_size=4), seed=1, progress=False)
    sorted_run = finetune_once(task, tiny, data, cfg)
    monkeypatch.setattr(trainer, "length_order", lambda feats: list(range(len(feats))))
    plain_run = finetune_once(task, tiny, data, cfg)
    dump = [json.dumps(p, ensure_ascii=False) for p in sorted_run.predictions]
    assert dump == [json.dumps(p, ensure_ascii=False) for p in plain_run.predictions]
    assert [p["guid"] for p in sorted_run.predictions] == [ex["guid"] for ex in data.eval]


def _tok(model_dir: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)
