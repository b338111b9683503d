"""The `finetune` stage: the suite as a cached, resumable pipeline stage after `pretrain`.

What is checked: its params are validated with errors naming the key; a run fine-tunes every (task, init, seed)
unit and puts the scores in the manifest; a rerun skips the stage; two arms that share a model share its
fine-tuning folder; and a `kill -9` in the middle of the stage resumes with the finished units kept and every
metrics file byte-identical to an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.recipe import RecipeError, load_recipe
from pipeline.runner import Runner
from testkit.finetune import FX
from testkit.finetune_recipes import REG
from testkit.finetune_recipes import recipe as _recipe
from testkit.finetune_recipes import run as _run
from testkit.finetune_recipes import unit_files as _unit_files
from testkit.kill import kill_group_when
from testkit.toy import subprocess_env


@pytest.mark.parametrize(("change", "message"), [
    ({"tasks": ["ynat", "squad"]}, "stages.finetune.tasks"),
    ({"tasks": ["ynat", "tc"]}, "task 'ynat' is named twice"),
    ({"hyperparams": {"lr": 1e-3}}, "hyperparams.lr: unknown hyperparameter; one of learning_rate"),
    ({"hyperparams": {"epochs": 2.5}}, "hyperparams.epochs: Input should be a valid integer, got a number with a fractional part (value: 2.5)"),
    ({"task_hyperparams": {"sts": {"epochs": 2}}}, "task_hyperparams.sts: 'sts' is not in tasks (ynat, nli)"),
    ({"task_hyperparams": {"nli": {"ptr_values_only": True}}},
     "task_hyperparams.nli.ptr_values_only: ptr_values_only is read by the dst task only, not by nli"),
    ({"task_hyperparams": {"nli": {"pooling": "max"}}},
     "task_hyperparams.nli.pooling: Input should be 'cls' or 'mean' (value: 'max')"),
    ({"data_dir": None}, "data_dir: required when tasks are named"),
    ({"seeds": []}, "stages.finetune.seeds"),
    ({"generated": ["mrc", "squad"]}, "stages.finetune.generated"),
    ({"generated": ["wos", "dst"]}, "task 'dst' is named twice"),
    ({"task_data_dirs": {"sts": "x"}}, "task_data_dirs.sts: 'sts' is not in tasks (ynat, nli)"),
    ({"task_data_dirs": {"squad": "x"}}, "task_data_dirs.squad: unknown task 'squad'"),
])
def test_params_errors_name_the_key(tmp_path, change, message):
    with pytest.raises(RecipeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_recipe(_recipe(tmp_path, change), registry=REG)


def test_suites_expand_in_registry_order(tmp_path):
    recipe = load_recipe(_recipe(tmp_path, {"tasks": ["jglue", "ynat"]}), registry=REG)
    assert recipe.params("finetune").tasks == ["jsts", "jnli", "jsquad", "jcommonsenseqa", "ynat"]
    recipe = load_recipe(_recipe(tmp_path, {"tasks": ["klue"]}), registry=REG)
    assert recipe.params("finetune").tasks == ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]


def test_generated_tasks_are_named_like_tasks(tmp_path):
    """`generated` takes the names `tasks` takes (aliases, suites) and keeps the registered names: the report's
    table and verdict mark those tasks. It may name tasks the run does not fine-tune (a recipe's list stays
    right when `--set` narrows `tasks`)."""
    recipe = load_recipe(_recipe(tmp_path, {"generated": ["WoS", "klue-mrc"]}), registry=REG)
    assert recipe.params("finetune").generated == ["dst", "mrc"]
    assert load_recipe(_recipe(tmp_path), registry=REG).params("finetune").generated == []


def test_a_task_override_of_a_global_hyperparameter_wins(tmp_path):
    recipe = load_recipe(_recipe(tmp_path, {"hyperparams": {"learning_rate": 1e-3, "epochs": 2},
                                            "task_hyperparams": {"nli": {"learning_rate": 2e-5}}}), registry=REG)
    from finetune.stages.finetune import FinetuneStage

    p = recipe.params("finetune")
    assert FinetuneStage().describe(_Ctx(p))["nli"].startswith("lr 2e-05, batch 32, epochs 2")
    assert FinetuneStage().describe(_Ctx(p))["ynat"].startswith("lr 0.001, batch 32, epochs 2")


class _Ctx:
    def __init__(self, params, workers=1):
        self.params, self.workers = params, workers


def _finetune_key(recipe: Path, workdir: Path) -> str:
    runner = Runner(load_recipe(recipe, registry=REG), workdir, REG)
    (planned,) = [s for s in runner.plan() if s.stage == "finetune"]
    return planned.key


def test_a_task_read_from_its_own_folder_keys_by_its_files(tmp_path):
    """`task_data_dirs` reads one task from another folder (the suite's generated WoS dialogues, where the shared
    folder has none). The key follows the files, not the folder: the same files elsewhere give the key that they
    give inside data_dir, one changed byte another key; and a recipe without the field keeps its key."""
    import shutil

    from finetune.stages.finetune import FinetuneStage

    own = tmp_path / "own"
    shutil.copytree(FX / "nli", own / "nli")
    wd = tmp_path / "w"
    plain = _finetune_key(_recipe(tmp_path, name="plain"), wd)
    moved = _recipe(tmp_path, {"task_data_dirs": {"klue-nli": str(own)}}, name="moved")
    assert _finetune_key(moved, wd) == plain
    p = load_recipe(moved, registry=REG).params("finetune")
    assert p.task_data_dirs == {"nli": str(own)} and p.data_root("nli") == own and p.data_root("ynat") == FX
    assert FinetuneStage().describe(_Ctx(p, workers=2))["nli"].endswith(f"official train and dev files, from {own}")
    dev = own / "nli" / "klue-nli-v1.1_dev.json"
    dev.write_bytes(dev.read_bytes().replace(b"}", b" }", 1))
    assert _finetune_key(moved, wd) != plain
    # and the runs read it from there: a folder that is not there fails before anything trains, by its key
    gone = _recipe(tmp_path, {"task_data_dirs": {"nli": str(tmp_path / "nowhere")}}, name="gone")
    with pytest.raises(Exception, match=r"stages.finetune.task_data_dirs.nli: .*nowhere is not a folder"):
        _run(gone, tmp_path / "w2")


def test_the_stage_runs_no_more_processes_than_the_cores_hold_at_its_threads(monkeypatch):
    from finetune.stages.finetune import processes

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert [processes(2, 1), processes(8, 1), processes(1, 1), processes(2, 2), processes(2, None)] == [2, 2, 1, 1, 1]


def test_runs_spread_over_processes_write_the_same_bytes(tmp_path, monkeypatch):
    """`--workers 2` trains two (task, init, seed) runs at a time in spawned processes: every unit file, summary
    and table is byte-identical to the one-process run's."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # 2 processes on any machine
    one = _run(_recipe(tmp_path, {"tasks": ["ynat"]}), tmp_path / "one").arm_stages["default"]["finetune"]
    two = Runner(load_recipe(_recipe(tmp_path, {"tasks": ["ynat"]}), registry=REG), tmp_path / "two", REG,
                 workers=2)
    two.run()
    both = two.arm_stages["default"]["finetune"]
    assert both.key == one.key  # workers are not part of the key
    reference = _unit_files(one.path)
    assert sum(name.endswith("/metrics.json") and "seed-" in name for name in reference) == 4
    assert _unit_files(both.path) == reference


def test_without_tasks_the_stage_fine_tunes_nothing(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: ft\n", encoding="utf-8")
    runner = _run(path, tmp_path / "w")
    out = runner.arm_stages["default"]["finetune"]
    assert out.status == "ran" and out.manifest["meta"]["tasks"] == {}
    assert sorted(p.name for p in out.path.iterdir()) == ["manifest.json"]


def test_runs_every_unit_records_scores_and_is_cached(tmp_path):
    wd = tmp_path / "w"
    runner = _run(_recipe(tmp_path), wd)
    out = runner.arm_stages["default"]["finetune"]
    meta = out.manifest["meta"]
    assert set(meta["tasks"]) == {"ynat", "nli"} and meta["seeds"] == [1, 2]
    for task, metric in (("ynat", "macro_f1"), ("nli", "accuracy")):
        for init in ("pretrained", "random-init"):
            cell = meta["tasks"][task][init]
            on_disk = json.loads((out.path / task / init / "metrics.json").read_text())
            assert cell["mean"] == on_disk["mean"] and list(cell["per_seed"]) == ["1", "2"]
            assert sorted(on_disk["per_seed"]) == ["1", "2"] and metric in cell["mean"]
            for seed in (1, 2):
                unit = out.path / task / init / f"seed-{seed}"
                assert json.loads((unit / "metrics.json").read_text())["total_steps"] == 3
                assert "train_seconds" in json.loads((unit / "timing.json").read_text())
                assert "train_seconds" not in (unit / "metrics.json").read_text()  # timings kept apart
        floor = meta["tasks"][task]["floor:no-model"]  # the TF-IDF floor on the same split
        assert metric in floor["mean"] and floor["method"].startswith("TF-IDF") and not floor["reads_gold"]
        assert (out.path / task / "floor-no-model" / "predictions.jsonl").is_file()
        majority = meta["tasks"][task]["floor:majority"]  # and the constant of the training split's majority class
        assert majority["label"] == "majority-class floor" and metric in majority["mean"]
    table = json.loads((out.path / "results.json").read_text())
    assert list(table["ours"]) == ["pretrained", "random init", "TF-IDF + LR floor", "majority-class floor"]
    assert table["suites"] == ["klue"] and table["floors"] == ["TF-IDF + LR floor", "majority-class floor"]
    # floors are not compared (the verdict names any at or above the model); the Δ row is resampled
    (delta,) = table["vs_random_init"]
    assert delta["model"] == "pretrained" and delta["cells"]["YNAT F1"]["runs"] == [2, 2]
    assert table["evidence_problems"] == []
    assert (wd / "arms" / "default" / "finetune").resolve() == out.path

    again = _run(_recipe(tmp_path), wd)
    assert again.arm_stages["default"]["finetune"].status == "skipped"
    more = _run(_recipe(tmp_path, {"seeds": [1, 2, 3]}), wd)  # another key: a new folder
    assert more.arm_stages["default"]["finetune"].path != out.path


def test_two_arms_that_share_a_model_share_its_fine_tuning(tmp_path):
    """Arms `a` and `b` give the pretrain stage the same params (so the same model key); `c` another model."""
    variants = {"model": {"a": {"pretrain.hidden": 32}, "b": {"pretrain.hidden": 32}, "c": {"pretrain.hidden": 16}}}
    runner = _run(_recipe(tmp_path, {"tasks": ["ynat"], "seeds": [1], "vs_random_init": False}, variants),
                  tmp_path / "w")
    paths = {arm: stages["finetune"].path for arm, stages in runner.arm_stages.items()}
    assert paths["model=a"] == paths["model=b"] != paths["model=c"]
    shared = runner.arm_stages["model=a"]["finetune"]
    assert shared.arms == ["model=a", "model=b"] and shared.status == "ran"  # fine-tuned once, for both arms


def test_the_report_compares_each_arm_with_its_own_random_init_and_the_random_inits_with_each_other(tmp_path):
    """Two arms with different models (as an ablation's two vocabularies): each arm's Δ row is against the random
    init of its own arm, the arms are compared, and so are their random inits (what the vocabulary alone does)."""
    from finetune.report import finetune_section
    from pipeline.stage import ArmOutput

    variants = {"model": {"a": {"pretrain.hidden": 32}, "c": {"pretrain.hidden": 16}}}
    runner = _run(_recipe(tmp_path, {"tasks": ["ynat"], "seeds": [1, 2], "floors": False}, variants), tmp_path / "w")
    outputs = [ArmOutput((arm,), stages["finetune"].path, stages["finetune"].manifest)
               for arm, stages in runner.arm_stages.items()]
    section = finetune_section(outputs)
    assert section is not None
    deltas = [line.split(" |")[0] for line in section.markdown.splitlines() if line.startswith("| Δ ")]
    assert deltas == ["| Δ model=a − random init (model=a)", "| Δ model=c − random init (model=c)",
                      "| Δ model=c − model=a", "| Δ random init (model=c) − random init (model=a)"]


# ---- kill -9 in the middle of the stage, then resume -----------------------------------------------------------

def _klue(recipe: Path, workdir: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "pipeline.cli", "run", str(recipe), "--workdir", str(workdir),
           "--registry", "testkit.finetune_stages:REGISTRY", "--workers", "1"]
    return subprocess.Popen(cmd, env=subprocess_env(OMP_NUM_THREADS="1"), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.slow
def test_kill9_mid_stage_resumes_with_byte_identical_metrics(tmp_path):
    recipe = _recipe(tmp_path)
    ref = tmp_path / "ref"
    p = _klue(recipe, ref)
    assert p.wait(timeout=600) == 0, p.communicate()[0].decode()
    ref_dir = (ref / "arms" / "default" / "finetune").resolve()
    reference = _unit_files(ref_dir)
    assert sum(name.endswith("seed-1/metrics.json") for name in reference) == 4

    wd = tmp_path / "w"
    p = _klue(recipe, wd)
    # kill once the third of eight units (ynat, random init, seed 1) is done
    kill_group_when(p, lambda: any(wd.glob("finetune/*.partial/ynat/random-init/seed-1/metrics.json")), 600,
                    "the stage's third unit")
    (partial,) = wd.glob("finetune/*.partial")
    kept = {u: (partial / u / "metrics.json").stat().st_ino
            for u in ("ynat/pretrained/seed-1", "ynat/pretrained/seed-2", "ynat/random-init/seed-1")}
    assert not (partial / "manifest.json").exists()

    p = _klue(recipe, wd)
    out = p.communicate(timeout=600)[0].decode()
    assert p.returncode == 0, out
    done = (wd / "arms" / "default" / "finetune").resolve()
    assert done.name == ref_dir.name  # the same key
    for unit, inode in kept.items():  # resumed, not retrained: the finished units' files were kept
        assert (done / unit / "metrics.json").stat().st_ino == inode, unit
    assert _unit_files(done) == reference


def test_an_lr_grid_is_chosen_on_the_selection_split_per_task_and_init(tmp_path):
    """`lr_grid`: every rate x seed runs; each (task, init) picks the rate whose seeds score best on the selection
    split at their chosen checkpoints (recomputed here from the seeds' own histories), the table reports that
    rate's runs, and the report shows the whole grid. klue-baseline, which chooses on the reported split, is
    refused a grid."""
    from finetune.report import finetune_section
    from pipeline.stage import ArmOutput

    runner = _run(_recipe(tmp_path, {"tasks": ["nli"], "lr_grid": [1e-4, 5e-3], "floors": False}), tmp_path / "w")
    out = runner.arm_stages["default"]["finetune"]
    for init in ("pretrained", "random-init"):
        grid = json.loads((out.path / "nli" / init / "grid.json").read_text())
        rows = grid["grid"]
        assert [r["learning_rate"] for r in rows] == [1e-4, 5e-3]
        means = []
        for r in rows:
            values = []
            for seed in (1, 2):
                unit = out.path / "nli" / init / f"lr-{r['learning_rate']:g}" / f"seed-{seed}"
                record = json.loads((unit / "metrics.json").read_text())
                (at_best,) = [h for h in record["history"] if h["step"] == record["best_step"]]
                assert at_best["split"] == "selection"
                values.append(at_best["accuracy"])
            means.append(sum(values) / len(values))
            assert r["selection"] == pytest.approx(means[-1])
        best = max(range(len(means)), key=lambda i: (means[i], -i))  # the first rate on a tie
        assert grid["chosen"] == rows[best]["learning_rate"] and rows[best]["chosen"]
        cell = out.manifest["meta"]["tasks"]["nli"][init]
        assert cell["metrics"] == f"nli/{init}/lr-{grid['chosen']:g}/metrics.json" and cell["grid"] == rows
        assert json.loads((out.path / cell["metrics"]).read_text())["hyperparams"]["learning_rate"] == grid["chosen"]
    section = finetune_section([ArmOutput(("default",), out.path, out.manifest)])
    assert section is not None and "Learning-rate grid" in section.markdown
    assert section.markdown.count("| chosen |") == 2
    with pytest.raises(RecipeError, match="lr_grid: protocol klue-baseline chooses on the reported split"):
        load_recipe(_recipe(tmp_path, {"lr_grid": [1e-3], "protocol": "klue-baseline"}), registry=REG)
