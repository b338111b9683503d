"""Pretraining replicates (`stages.pretrain.seeds`): each seed is an arm of its own from the pretrain stage on,
with its own folder and key (adding a seed reuses the others), every stage before it one folder for all; each
replicate is fine-tuned with the finetune stage's seeds, its random init drawn from the replicate's seed; the
table makes one row of an arm's replicates, and the verdict's intervals then hold pretraining variance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pipeline.recipe import RecipeError, load_recipe
from pipeline.runner import Runner
from pipeline.stages import stage_registry
from testkit import finetune_stages
from testkit.finetune import FX

REG = stage_registry(finetune_stages.REGISTRY)


def _recipe(tmp_path: Path, pretrain: dict, finetune: dict | None = None, variants: dict | None = None) -> Path:
    section = {"tasks": ["nli"], "data_dir": str(FX), "seeds": [1, 2], "vs_random_init": True, "max_steps": 2,
               "max_eval_examples": 30, "threads": 1, "floors": False, **(finetune or {})}
    raw = {"name": "rep", "stages": {"pretrain": pretrain, "finetune": section},
           **({"variants": variants} if variants else {})}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_seeds_become_one_arm_each_with_the_seed_set_and_the_list_emptied(tmp_path):
    recipe = load_recipe(_recipe(tmp_path, {"seeds": [3, 1]}, variants={"model": {"a": {"pretrain.hidden": 16},
                                                                                 "b": {"pretrain.hidden": 32}}}),
                         registry=REG)
    assert [a.name for a in recipe.arms] == ["model=a,pretrain_seed=3", "model=a,pretrain_seed=1",
                                             "model=b,pretrain_seed=3", "model=b,pretrain_seed=1"]
    params = recipe.arms[1].recipe.params("pretrain")
    assert (params.seed, params.seeds, params.hidden) == (1, [], 16)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("pretrain", "message"), [
    ({"seeds": [1, 1]}, "stages.pretrain.seeds: a value is named twice"),
    ({"seeds": [1], "seed": 4}, "stages.pretrain.seeds: set either `seed` (one run) or `seeds` (replicates)"),
    ({"seeds": ["a"]}, "stages.pretrain.seeds: expected a list of integers"),
])
def test_bad_seeds_are_named(tmp_path, pretrain, message):
    with pytest.raises(RecipeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_recipe(_recipe(tmp_path, pretrain), registry=REG)


def test_replicates_fine_tune_apart_and_make_one_row_whose_intervals_hold_pretraining_variance(tmp_path):
    from finetune.report import finetune_verdict, suite_table
    from pipeline.stage import ArmOutput

    wd = tmp_path / "w"
    runner = Runner(load_recipe(_recipe(tmp_path, {"seeds": [1, 2]}), registry=REG), wd, REG)
    runner.run()
    stages = runner.arm_stages
    assert list(stages) == ["pretrain_seed=1", "pretrain_seed=2"]
    pre = [stages[a]["pretrain"].path for a in stages]
    assert pre[0] != pre[1]  # the seed is in the key
    outs = [stages[a]["finetune"] for a in stages]
    # each replicate's random init drew its weights from the replicate's seed, the same for both fine-tuning seeds
    random = [json.loads((o.path / "nli" / "random-init" / "metrics.json").read_text()) for o in outs]
    assert [(r["pretrain_seed"], r["init_seed"]) for r in random] == [(1, 1), (2, 2)]
    pretrained = json.loads((outs[0].path / "nli" / "pretrained" / "metrics.json").read_text())
    assert pretrained["pretrain_seed"] == 1 and "init_seed" not in pretrained
    outputs = [ArmOutput((a,), stages[a]["finetune"].path, stages[a]["finetune"].manifest) for a in stages]
    built = suite_table(outputs)
    assert built is not None
    table, _ = built
    assert list(table["ours"]) == ["pretrained", "random init"]  # the replicates are one row
    cell = table["ours"]["pretrained"]["NLI Acc"]
    assert (cell["seeds"], cell["replicates"]) == (4, 2) and cell["spread"] is not None
    assert table["ours"]["random init"]["NLI Acc"]["replicates"] == 2  # two inits, not four
    (comp,) = table["vs_random_init"]
    assert comp["cells"]["NLI Acc"]["replicates"] == [2, 2] and comp["cells"]["NLI Acc"]["runs"] == [4, 4]
    lines = finetune_verdict(outputs)
    assert ("The intervals hold pretraining variance (2+ pretraining runs an arm), fine-tuning seeds and the "
            "evaluation sample (Multi-Bootstrap). With 4 runs on a side, drawing them understates their spread (a "
            "bootstrap of k values has (k - 1)/k of their variance); MultiBERTs drew from 25 seeds.") in lines
    assert not any(line.startswith("pretrain_seed=") for line in lines)  # one arm: no per-replicate prefix

    # a third seed: the first two pretraining and fine-tuning folders are reused, only the new one runs
    more = Runner(load_recipe(_recipe(tmp_path, {"seeds": [1, 2, 3]}), registry=REG), wd, REG)
    more.run()
    assert [more.arm_stages[a]["pretrain"].status for a in more.arm_stages] == ["skipped", "skipped", "ran"]
    assert [more.arm_stages[a]["finetune"].status for a in more.arm_stages] == ["skipped", "skipped", "ran"]


def test_a_random_init_draws_its_weights_from_the_init_seed_not_the_fine_tuning_seed(tmp_path):
    """At a learning rate of 1e-12 the saved weights are the initial ones to 1e-8 (an Adam step moves a weight by
    about the rate): with an init seed, two fine-tuning seeds start from the same weights; without one (one
    pretraining run), each seed draws its own (initial weights differ by ~0.02)."""
    import torch
    from safetensors.torch import load_file

    from finetune.data import load_task_data
    from finetune.registry import get_task
    from finetune.trainer import FinetuneConfig, finetune_once
    from testkit.finetune import fixture_texts
    from testkit.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", fixture_texts())
    task = get_task("nli", data_dir=FX)
    data = load_task_data(task, FX, max_train=8, max_eval=4)
    hp = task.defaults.replace(learning_rate=1e-12, batch_size=4)

    def weights(seed: int, init_seed: int | None) -> dict:
        out = tmp_path / f"s{seed}-i{init_seed}"
        finetune_once(task, model, data, FinetuneConfig(hp=hp, seed=seed, max_steps=1, random_init=True,
                                                        init_seed=init_seed, save_dir=out, progress=False))
        return load_file(out / "model.safetensors")

    a, b = weights(1, 7), weights(2, 7)
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-8) for k in a)
    c, d = weights(1, None), weights(2, None)
    assert not all(torch.allclose(c[k], d[k], rtol=0, atol=1e-3) for k in c)
