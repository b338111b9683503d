"""The selection split (issue 48, item 5): every score-driven choice of a run (the checkpoint, early stopping) is
made on a split carved from the training examples, never on the split the tables report. What is checked: the
selection split never meets the reported one (guids, and MRC's articles, DST's dialogues, JNLI's images), read back
from each seed's split.json; it is the same on every call and whatever the file order; the model never trains on
it; in dev-split mode it comes from the part of dev that is not reported; the caps; the protocol "klue-baseline"
keeps today's split (select IS eval) and training set; and the trainer's history holds the selection split's
scores while the reported metrics are the eval split's, of the checkpoint those scores chose."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from finetune.data import SELECT_SALT, guid_bucket, load_task_data, split_by_guid
from finetune.registry import get_task
from testkit.finetune import FX, FXJ, fixture_texts, run_finetune
from testkit.tiny_model import build_tiny_model


def _guids(examples: list[dict]) -> list[str]:
    return [e["guid"] for e in examples]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-select"), fixture_texts())


@pytest.mark.parametrize(("name", "folder"), [("ynat", FX), ("sts", FX), ("mrc", FX), ("dst", FX), ("jnli", FXJ)])
def test_the_selection_split_is_carved_from_the_training_examples_by_the_split_key(name, folder):
    """Official (YNAT) or dev-split (STS, MRC by article, DST by dialogue, JNLI by image): the reported split is
    the one klue-baseline reports (today's), and the selection split plus the training set are exactly today's
    training examples, in file order, cut by the split key's hash under the salt "klue-select"."""
    task = get_task(name, folder)
    data = load_task_data(task, folder)
    today = load_task_data(task, folder, protocol="klue-baseline")
    assert _guids(data.eval) == _guids(today.eval)  # the reported split does not move
    assert data.select and data.train and not data.selects_on_eval
    # the selection split and training: today's training examples, each on one side, by its split key's hash
    chosen = {task.split_key(e) for e in today.train if guid_bucket(task.split_key(e), SELECT_SALT) < 0.1}
    assert _guids(data.select) == [e["guid"] for e in today.train if task.split_key(e) in chosen]
    assert _guids(data.train) == [e["guid"] for e in today.train if task.split_key(e) not in chosen]
    # no guid and no split unit (article, dialogue, image) shared by two of the three splits
    keys = {part: {task.split_key(e) for e in getattr(data, part)} for part in ("train", "select", "eval")}
    assert not keys["select"] & keys["eval"] and not keys["select"] & keys["train"]
    assert not set(_guids(data.select)) & set(_guids(data.eval))
    assert not set(_guids(data.select)) & set(_guids(data.train))
    src = data.source
    assert (src["protocol"], src["selection_fraction"], src["selection_by"]) == (
        "selection-split", 0.1, task.split_unit)
    assert src["n_select"] == src["n_select_available"] == len(data.select)
    assert src["n_train"] == src["n_train_available"] == len(data.train) == len(today.train) - len(data.select)
    assert "chosen on a selection split of the training examples" in src["note"]


def test_dev_split_mode_takes_the_selection_split_from_the_part_of_dev_that_is_not_reported():
    task = get_task("mrc", FX)
    data = load_task_data(task, FX, split="dev-split")
    dev = task.read_file(Path(data.source["dev"]))
    not_reported, reported = split_by_guid(dev, 0.2, key=task.split_key)
    assert _guids(data.eval) == _guids(reported)
    assert sorted(_guids(data.select) + _guids(data.train)) == sorted(_guids(not_reported))
    articles = {part: {e["title"] for e in getattr(data, part)} for part in ("train", "select", "eval")}
    assert articles["select"] and not articles["select"] & (articles["eval"] | articles["train"])


def test_the_selection_split_is_deterministic_and_independent_of_file_order(tmp_path):
    task = get_task("ynat", FX)
    a, b = load_task_data(task, FX), load_task_data(task, FX)
    assert _guids(a.select) == _guids(b.select) and _guids(a.train) == _guids(b.train)
    # the same files, their records shuffled: the same guids on each side, each list in its file's order
    shutil.copytree(FX / "ynat", tmp_path / "ynat")
    for f in (tmp_path / "ynat").glob("*.json"):
        records = json.loads(f.read_text(encoding="utf-8"))
        random.Random(7).shuffle(records)
        f.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    shuffled = load_task_data(task, tmp_path)
    assert set(_guids(shuffled.select)) == set(_guids(a.select)) and _guids(shuffled.select) != _guids(a.select)
    assert set(_guids(shuffled.train)) == set(_guids(a.train))
    order = [r["guid"] for r in json.loads((tmp_path / "ynat" / "ynat-v1.1_train.json").read_text(encoding="utf-8"))]
    assert _guids(shuffled.select) == [g for g in order if g in set(_guids(a.select))]


def test_a_larger_fraction_selects_more_and_the_caps_apply_to_each_side():
    task = get_task("ynat", FX)
    whole = load_task_data(task, FX)
    larger = load_task_data(task, FX, selection_fraction=0.3)
    assert set(_guids(whole.select)) < set(_guids(larger.select))  # bucket < 0.1 is inside bucket < 0.3
    assert larger.source["selection_fraction"] == 0.3
    # max_train caps what remains for training; max_eval the reported split and the selection split alike
    capped = load_task_data(task, FX, max_train=20, max_eval=5)
    assert (len(capped.train), len(capped.select), len(capped.eval)) == (20, 5, 5)
    assert set(_guids(capped.train)) < set(_guids(whole.train))
    assert set(_guids(capped.select)) < set(_guids(whole.select))
    assert capped.source["n_select_available"] == len(whole.select) and capped.source["n_select"] == 5
    assert "selection capped at 5 of" in capped.source["note"]
    with pytest.raises(ValueError, match="selection_fraction must be in"):
        load_task_data(task, FX, selection_fraction=1.0)
    with pytest.raises(ValueError, match="protocol must be one of"):
        load_task_data(task, FX, protocol="dev")  # type: ignore[arg-type]


def test_klue_baseline_selects_on_the_reported_split_and_trains_on_everything():
    for name in ("ynat", "sts"):
        task = get_task(name, FX)
        data = load_task_data(task, FX, protocol="klue-baseline", max_eval=10)
        assert data.select is data.eval and data.selects_on_eval and len(data.eval) == 10
        if name == "ynat":
            train_file = task.read_file(next((FX / "ynat").glob(task.files.train_glob)))
            assert _guids(data.train) == _guids(train_file)  # all 140
        else:
            dev = task.read_file(next((FX / "sts").glob(task.files.dev_glob)))
            assert _guids(data.train) == _guids(split_by_guid(dev, 0.2, key=task.split_key)[0])
        src = data.source
        assert (src["protocol"], src["selection_fraction"], src["selection_by"]) == ("klue-baseline", None, None)
        assert src["n_select"] == src["n_eval"] == 10
        assert "chosen on the reported split itself (protocol klue-baseline)" in src["note"]


def test_each_seed_writes_split_json_and_the_splits_never_meet(tiny, tmp_path):
    """Read back from the runs themselves: seed-N/split.json of a YNAT run (official files) and of an MRC run
    (a dev split by article), under each protocol."""
    out = tmp_path / "suite"
    run_finetune(["ynat,mrc", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--max-steps", "1",
                  "--batch-size", "8", "--seeds", "1,2", "--no-save-model"])
    for name in ("ynat", "mrc"):
        task = get_task(name, FX)
        data = load_task_data(task, FX)
        splits = [json.loads((out / name / f"seed-{s}" / "split.json").read_text(encoding="utf-8")) for s in (1, 2)]
        assert splits[0] == splits[1] == {"protocol": "selection-split", "selection": _guids(data.select),
                                          "eval": _guids(data.eval)}
        assert not set(splits[0]["selection"]) & set(splits[0]["eval"])
        by_guid = {e["guid"]: e for e in data.select + data.eval}
        if name == "mrc":  # no article on both sides
            assert not ({by_guid[g]["title"] for g in splits[0]["selection"]}
                        & {by_guid[g]["title"] for g in splits[0]["eval"]})
        summary = json.loads((out / name / "metrics.json").read_text(encoding="utf-8"))
        assert summary["data"]["protocol"] == "selection-split" and summary["data"]["n_select"] == len(data.select)
        seed = json.loads((out / name / "seed-1" / "metrics.json").read_text(encoding="utf-8"))
        assert [h["split"] for h in seed["history"]] == ["selection"]
        # the predictions are the reported split's
        preds = [json.loads(line) for line in (out / name / "seed-1" / "predictions.jsonl").read_text().splitlines()]
        assert [p["guid"] for p in preds] == splits[0]["eval"]
    # the table marks the departure: 90 % of train trains, 10 % selects
    md = (out / "results.md").read_text(encoding="utf-8")
    assert "trained on 90 % of train; 10 % selects the checkpoint" in md

    run_finetune(["ynat", "--model", str(tiny), "--data-dir", str(FX), "--output", str(tmp_path / "base"),
                  "--max-steps", "1", "--batch-size", "8", "--no-save-model", "--protocol", "klue-baseline"])
    split = json.loads((tmp_path / "base" / "seed-42" / "split.json").read_text(encoding="utf-8"))
    today = load_task_data(get_task("ynat", FX), FX, protocol="klue-baseline")
    assert split == {"protocol": "klue-baseline", "selection": _guids(today.eval), "eval": _guids(today.eval)}


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("protocol", ["selection-split", "klue-baseline"])
def test_the_history_scores_the_selection_split_and_the_chosen_checkpoint_is_reported_on_eval(
        tiny, tmp_path, monkeypatch, protocol):
    """Every evaluation the trainer makes is recorded (which examples, which scores). Selection-split: each check
    scores the selection examples and its scores are the history's; after training, one evaluation of the eval
    examples gives the reported metrics. The saved model (the chosen checkpoint's weights) scores exactly the
    history's best entry on the selection split and the reported metrics on the eval split. Klue-baseline: the
    checks score the eval examples, no second evaluation, the reported metrics are the best history entry's."""
    import finetune.trainer as trainer
    from finetune.trainer import FinetuneConfig, finetune_once

    task = get_task("ynat", FX)
    data = load_task_data(task, FX, protocol=protocol)
    calls: list[tuple[list[str], dict]] = []
    real = trainer.evaluate

    def spy(task_, model, loader, accelerator, features, examples, *args, **kwargs):
        metrics, preds = real(task_, model, loader, accelerator, features, examples, *args, **kwargs)
        calls.append((_guids(examples), metrics))
        return metrics, preds

    monkeypatch.setattr(trainer, "evaluate", spy)
    hp = task.defaults.replace(learning_rate=3e-3, epochs=2, batch_size=16)
    save = tmp_path / "model"
    res = finetune_once(task, tiny, data, FinetuneConfig(hp=hp, seed=3, save_dir=save, progress=False))
    checks, history = len(res.history), res.history
    assert checks == 8  # 2 epochs x 4 checks
    metric_keys = list(task.metric_names)
    entry = {h["step"]: h for h in history}[res.best_step]
    scores = [h[task.main_metric] for h in history]
    assert res.best_step == history[scores.index(max(scores))]["step"]  # the first best selection score
    if protocol == "selection-split":
        assert len(calls) == checks + 1
        assert all(guids == _guids(data.select) for guids, _ in calls[:checks])
        assert [{k: m[k] for k in metric_keys} for _, m in calls[:checks]] == [
            {k: h[k] for k in metric_keys} for h in history]
        assert {h["split"] for h in history} == {"selection"}
        assert calls[-1][0] == _guids(data.eval) and calls[-1][1] == res.metrics
    else:
        assert len(calls) == checks  # no second evaluation
        assert all(guids == _guids(data.eval) for guids, _ in calls)
        assert {h["split"] for h in history} == {"eval"}
        assert res.metrics == {k: v for k, v in entry.items() if k not in ("step", "epoch", "split")}
    # the reported metrics are the eval examples' scores of the saved predictions
    assert [p["guid"] for p in res.predictions] == _guids(data.eval)
    assert task.compute_metrics(res.predictions, data.eval) == res.metrics
    # the saved model is the chosen checkpoint: on the selection examples it scores the history's best entry, on the
    # eval examples the reported metrics
    reloaded = _scores(task, save, data.select, hp), _scores(task, save, data.eval, hp)
    assert reloaded[0] == {k: v for k, v in entry.items() if k not in ("step", "epoch", "split")}
    assert reloaded[1] == res.metrics


def _scores(task, model_dir: Path, examples: list[dict], hp) -> dict:
    """`examples` scored by the model saved in `model_dir`, batched as the trainer batches its evaluations."""
    from accelerate import Accelerator
    from torch.utils.data import DataLoader
    from transformers import AutoTokenizer

    from finetune.trainer import evaluate, length_order, model_inputs, usable_length
    from pipeline.hardware import reset_accelerate_state

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = task.load_finetuned(model_dir)
    features = task.encode(examples, tokenizer, usable_length(model.config, tokenizer, hp.max_length))
    order = length_order(features)
    loader = DataLoader(model_inputs([features[i] for i in order]), batch_size=hp.eval_batch_size, shuffle=False,
                        collate_fn=task.collator(tokenizer))
    reset_accelerate_state()  # the run before trained under its own Accelerator
    accelerator = Accelerator()
    model, loader = accelerator.prepare(model, loader)
    return evaluate(task, model, loader, accelerator, features, examples, order=order)[0]


def test_the_stage_and_the_command_line_carry_the_protocol(tmp_path):
    from click.testing import CliRunner
    from pydantic import ValidationError

    from finetune.cli import finetune
    from finetune.stages.finetune import _DATA, FinetuneParams, FinetuneStage, _task_data

    class Ctx:
        def __init__(self, params):
            self.params, self.workers = params, 1

    base = FinetuneParams(tasks=["ynat"], data_dir=str(FX), protocol="klue-baseline")
    wider = FinetuneParams(tasks=["ynat"], data_dir=str(FX), selection_fraction=0.3)
    assert FinetuneParams(tasks=["ynat"], data_dir=str(FX)).protocol == "selection-split"
    assert FinetuneStage.version == "4"
    assert FinetuneStage().describe(Ctx(base))["protocol"].startswith("klue-baseline: the checkpoint is chosen on")
    assert FinetuneStage().describe(Ctx(wider))["protocol"].startswith("selection-split: 30% of the training")
    try:
        _, _, data = _task_data(str(tmp_path / "a"), base, "ynat")
        assert data.select is data.eval and data.source["protocol"] == "klue-baseline"
        _, _, data = _task_data(str(tmp_path / "b"), wider, "ynat")
        assert data.source["selection_fraction"] == 0.3
        assert _guids(data.select) == _guids(load_task_data(get_task("ynat", FX), FX, selection_fraction=0.3).select)
    finally:
        _DATA.clear()
    for bad in ({"protocol": "dev"}, {"selection_fraction": 1.0}, {"selection_fraction": 0}):
        with pytest.raises(ValidationError):
            FinetuneParams(tasks=["ynat"], data_dir=str(FX), **bad)
    for args, message in ((["--selection-fraction", "1.5"], "--selection-fraction"),
                          (["--protocol", "dev"], "--protocol")):
        res = CliRunner().invoke(finetune, ["ynat", "--model", str(FX), "--data-dir", str(FX), "--output",
                                            str(tmp_path / "o"), *args])
        assert res.exit_code == 2 and message in res.output and not (tmp_path / "o").exists()
