"""`klue finetune` end to end with a tiny RoBERTa built from a config and a WordPiece vocabulary trained here."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from finetune.cli import finetune
from finetune.registry import get_task
from finetune.score import score_file
from testkit.tiny_model import ARCHITECTURES, build_tiny_model

FX = Path(__file__).parent / "fixtures" / "finetune"
TEXT_KEYS = ("title", "sentence1", "sentence2", "premise", "hypothesis", "sentence")


def _texts(files: list[Path], limit: int | None = None) -> list[str]:
    out = []
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        for r in data[:limit]:
            out += [r[k] for k in TEXT_KEYS if k in r]
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    files = [p for p in FX.glob("*/*.json") if p.name != "relation_list.json" and p.parent.name not in ("mrc", "wos")]
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), _texts(files))


def _run(args: list[str]) -> None:
    res = CliRunner().invoke(finetune, [*args, "--quiet"], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def test_ynat_learns_the_fixture_and_reports_seeds(tiny, tmp_path):
    # KLUE-baseline's protocol (the checkpoint chosen on the reported split): the reported scores are the best of
    # the history. The default protocol's choice on a selection split is tests/test_selection_split.py's; on this
    # fixture its 18 selection examples (and 122 of the 140 to train on) choose too noisily for the bar below.
    out = tmp_path / "ynat"
    _run(["ynat", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--seeds", "1,2",
          "--lr", "3e-3", "--epochs", "12", "--batch-size", "16", "--no-save-model", "--protocol", "klue-baseline"])
    summary = json.loads((out / "metrics.json").read_text())
    per_seed = [summary["per_seed"][s]["macro_f1"] for s in ("1", "2")]
    assert summary["mean"]["macro_f1"] == pytest.approx(np.mean(per_seed))
    assert summary["std"]["macro_f1"] == pytest.approx(np.std(per_seed, ddof=1))
    assert summary["data"]["split"] == "official"
    assert summary["mean"]["macro_f1"] > 80  # keyword topics; chance is about 14
    assert len((out / "summary.txt").read_text().strip().splitlines()) == 1

    for seed in ("1", "2"):
        run = json.loads((out / f"seed-{seed}" / "metrics.json").read_text())
        history = [h["macro_f1"] for h in run["history"]]
        # the reported checkpoint is the first one with the best evaluation score
        assert run["metrics"]["macro_f1"] == max(history)
        assert run["best_step"] == run["history"][history.index(max(history))]["step"]
        # the predictions file scores, through `klue score`'s code, to exactly the reported metrics
        scored = score_file("ynat", FX / "ynat" / "ynat-v1.1_dev.json", out / f"seed-{seed}" / "predictions.jsonl")
        assert scored["metrics"] == run["metrics"] and not scored["subset"]


@pytest.mark.parametrize("task", ["sts", "nli", "re"])
def test_pair_and_relation_tasks_write_scoreable_predictions(tiny, tmp_path, task):
    out = tmp_path / task
    _run([task, "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--max-steps", "4",
          "--batch-size", "8", "--lr", "1e-3"])
    summary = json.loads((out / "metrics.json").read_text())
    t = get_task(task, FX)
    assert set(t.metric_names) <= set(summary["mean"])
    gold = next((FX / t.files.subdir).glob(t.files.dev_glob))
    preds = [json.loads(line) for line in (out / "seed-42" / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == summary["data"]["n_eval"]
    scored = score_file(task, gold, out / "seed-42" / "predictions.jsonl", allow_subset=True)
    run = json.loads((out / "seed-42" / "metrics.json").read_text())
    for key in t.metric_names:
        a, b = scored["metrics"][key], run["metrics"][key]
        assert (a is None and b is None) or math.isclose(a, b, abs_tol=1e-4) or (math.isnan(a) and b is None)
    if task == "re":
        assert all(len(p["probs"]) == 30 and abs(sum(p["probs"]) - 1) < 1e-3 for p in preds)
        # the file holds the probabilities the trainer scored, unrounded: `klue score` gives its AUPRC exactly
        assert scored["metrics"]["auprc"] == run["metrics"]["auprc"]
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        saved = out / "seed-42" / "model"
        tok = AutoTokenizer.from_pretrained(saved)
        model = AutoModelForSequenceClassification.from_pretrained(saved)
        assert tok.convert_tokens_to_ids("</obj>") != tok.unk_token_id
        assert model.get_input_embeddings().num_embeddings == len(tok)
        assert model.config.id2label[0] == "no_relation"
    if task == "sts":
        assert summary["data"]["split"] == "dev-split" and all(isinstance(p["score"], float) for p in preds)


def test_suite_runs_several_tasks_against_random_init_and_writes_one_table(tiny, tmp_path):
    out = tmp_path / "suite"
    _run(["ynat,nli", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--vs-random-init",
          "--max-steps", "3", "--batch-size", "8", "--seeds", "1,2", "--no-save-model",
          "--hp", "ynat.max_length=24", "--hp", "nli.learning_rate=2e-4", "--hp", "ynat.group_by_length=true"])
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [
        "nli", "nli-random-init", "ynat", "ynat-random-init"]
    runs = {d: json.loads((out / d / "metrics.json").read_text()) for d in ("ynat", "ynat-random-init", "nli")}
    assert not runs["ynat"]["random_init"] and runs["ynat-random-init"]["random_init"]
    assert runs["ynat"]["label"] == runs["nli"]["label"] == tiny.name
    assert runs["ynat-random-init"]["label"] == "random init"
    # both arms see the same examples and hyperparameters; only the weights differ
    assert runs["ynat"]["data"] == runs["ynat-random-init"]["data"]
    assert runs["ynat"]["hyperparams"] == runs["ynat-random-init"]["hyperparams"]
    # --hp reaches only its own task; --batch-size reaches every task
    assert runs["ynat"]["hyperparams"]["max_length"] == 24 and runs["nli"]["hyperparams"]["max_length"] == 128
    assert runs["nli"]["hyperparams"]["learning_rate"] == 2e-4
    assert runs["ynat"]["hyperparams"]["learning_rate"] == get_task("ynat").defaults.learning_rate
    assert runs["ynat"]["hyperparams"]["batch_size"] == runs["nli"]["hyperparams"]["batch_size"] == 8
    assert runs["ynat"]["hyperparams"]["group_by_length"] and not runs["nli"]["hyperparams"]["group_by_length"]
    table = json.loads((out / "results.json").read_text())
    assert list(table["ours"]) == [tiny.name, "random init"]
    (d,) = table["vs_random_init"]
    assert d["cells"]["YNAT F1"]["diff"] == pytest.approx(
        runs["ynat"]["mean"]["macro_f1"] - runs["ynat-random-init"]["mean"]["macro_f1"])
    assert set(d["cells"]) == {"YNAT F1", "NLI Acc"}
    assert f"| Δ {tiny.name} − random init |" in (out / "results.md").read_text()
    # a run inside the suite is the same run as on its own (nothing leaks from the runs before it)
    _run(["nli", "--model", str(tiny), "--data-dir", str(FX), "--output", str(tmp_path / "alone"),
          "--max-steps", "3", "--batch-size", "8", "--seeds", "1,2", "--no-save-model", "--lr", "2e-4",
          "--no-group-by-length"])
    for seed in ("1", "2"):
        alone = (tmp_path / "alone" / f"seed-{seed}" / "predictions.jsonl").read_bytes()
        assert alone == (out / "nli" / f"seed-{seed}" / "predictions.jsonl").read_bytes()


def test_two_labelled_runs_of_one_model_against_random_init_fit_one_table(tiny, tmp_path):
    """--label names the random-init arm too ("X (random init)"), so the same model under two settings (the two
    sentence heads) and their random inits are four rows of one table, not a refused duplicate."""
    from finetune.results import write_results

    dirs = []
    for pooling in ("cls", "mean"):
        out = tmp_path / pooling
        _run(["ynat", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--vs-random-init",
              "--max-steps", "2", "--batch-size", "8", "--seeds", "1", "--no-save-model", "--label", f"tiny {pooling}",
              "--hp", f"ynat.pooling={pooling}", "--quiet"])
        dirs += [out / "ynat", out / "ynat-random-init"]
    assert [json.loads((d / "metrics.json").read_text())["label"] for d in dirs] == [
        "tiny cls", "tiny cls (random init)", "tiny mean", "tiny mean (random init)"]
    write_results(tmp_path / "table", dirs)
    assert list(json.loads((tmp_path / "table.json").read_text())["ours"]) == [
        "tiny cls", "tiny cls (random init)", "tiny mean", "tiny mean (random init)"]


def test_all_runs_every_task_into_one_table(tmp_path_factory, tmp_path):
    from testkit.finetune import fixture_texts

    model = build_tiny_model(tmp_path_factory.mktemp("tiny-all"), fixture_texts())
    out = tmp_path / "all"
    _run(["all", "--model", str(model), "--data-dir", str(FX), "--output", str(out), "--max-steps", "2",
          "--batch-size", "8", "--max-eval-examples", "8", "--no-save-model"])
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["dp", "dst", "mrc", "ner", "nli", "re", "sts", "ynat"]
    table = json.loads((out / "results.json").read_text())
    row = table["ours"][model.name]
    assert set(row) == set(table["columns"])  # every task filled its columns
    for col in ("NER entity F1", "NER char F1", "DP UAS", "DP LAS", "STS r", "RE F1", "MRC EM", "MRC ROUGE",
                "DST JGA", "DST slot F1"):
        assert row[col]["dev_split"]  # tasks with only a dev file here: marked † in the table
    assert not row["YNAT F1"]["dev_split"] and not row["NLI Acc"]["dev_split"]
    md = (out / "results.md").read_text()
    assert md.splitlines()[0].endswith("| NER char F1 w/o O | RE F1 | RE AUPRC | DP UAS | DP LAS | MRC EM | MRC ROUGE | DST JGA | DST slot F1 |")
    # batch 8 and a 2-step cap depart from KLUE-baseline's defaults: the row is marked, its footnote says so
    assert "†" in next(line for line in md.splitlines() if line.startswith(f"| {model.name} ¹ |"))
    (note,) = [line for line in md.splitlines() if line.startswith("¹ departs from KLUE-baseline's defaults")]
    assert "every task: batch_size 8" not in note  # MRC's and DST's baseline batch is 16, the others' 32
    assert "max_steps 2 (a cap on optimiser steps" in note and "DST: batch_size 8 (baseline: 16)" in note


@pytest.mark.parametrize(("args", "message"), [
    (["ynat,ynat"], "named twice"),
    (["ynat,foo"], "unknown task 'foo'"),
    (["ynat", "--random-init", "--vs-random-init"], "exclude each other"),
    (["ynat", "--hp", "sts.epochs=3"], "task 'sts' is not part of this run"),
    (["ynat", "--hp", "ynat.epochz=3"], "unknown hyperparameter 'epochz'"),
    (["ynat", "--hp", "ynat.epochs=three"], "ynat.epochs: Input should be a valid integer"),
    (["ynat", "--hp", "ynat.patience=0"], "ynat.patience: Input should be greater than or equal to 1 (value: 0)"),
    (["ynat", "--hp", "epochs=3"], "expected TASK.FIELD=VALUE"),
    (["ynat", "--hp", "ynat.group_by_length=maybe"], "ynat.group_by_length: Input should be a valid boolean"),
    (["ynat", "--hp", "ynat.ptr_values_only=true"], "ptr_values_only is read by the dst task only, not by ynat"),
    (["ynat", "--hp", "ynat.pooling=max"], "ynat.pooling: Input should be 'cls' or 'mean' (value: 'max')"),
    (["ynat,ner", "--hp", "ner.pooling=mean"], "pooling is read by the tasks with a sentence-level head only"),
])
def test_suite_arguments_are_checked_before_any_work(tiny, tmp_path, args, message):
    res = CliRunner().invoke(finetune, [*args, "--model", str(tiny), "--data-dir", str(FX),
                                        "--output", str(tmp_path / "o")])
    assert res.exit_code != 0 and message in res.output
    assert not (tmp_path / "o").exists()


def test_quiet_silences_transformers_only_while_the_command_runs(tiny, tmp_path):
    from transformers.utils import logging as hf_logging

    before = hf_logging.get_verbosity()
    res = CliRunner().invoke(finetune, ["nli", "--model", str(tiny), "--data-dir", str(FX), "--output",
                                        str(tmp_path / "q"), "--max-steps", "1", "--no-save-model", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "Loading weights" not in res.output  # transformers' bar; shown without --quiet
    assert hf_logging.get_verbosity() == before and hf_logging.is_progress_bar_enabled()


def test_all_names_every_registered_task():
    from finetune.cli import _task_names
    from finetune.registry import TASKS

    assert _task_names("all") == list(TASKS) == ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]
    assert _task_names("klue") == list(TASKS)
    assert _task_names("JGLUE") == ["jsts", "jnli", "jsquad", "jcommonsenseqa"]
    assert _task_names("jnli,jcqa") == ["jnli", "jcommonsenseqa"]


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_random_init_keeps_the_shape_and_discards_the_weights(tiny, tmp_path, arch):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    if arch != "roberta":
        tiny = build_tiny_model(tmp_path / arch, ["가 나 다", "라 마 바 사"], architecture=arch, vocab_size=60)
    task = get_task("nli", FX)
    tok = AutoTokenizer.from_pretrained(tiny)
    source = AutoModelForMaskedLM.from_pretrained(tiny).get_input_embeddings().weight
    loaded = task.build_model(tiny, tok, random_init=False).get_input_embeddings().weight
    fresh = task.build_model(tiny, tok, random_init=True)
    assert fresh.config.model_type == arch
    fresh = fresh.get_input_embeddings().weight
    assert loaded.shape == fresh.shape == source.shape
    assert np.allclose(loaded.detach().numpy(), source.detach().numpy())
    assert not np.allclose(fresh.detach().numpy(), source.detach().numpy())


def test_re_marker_glued_to_a_syllable_becomes_a_continuation(tiny):
    from transformers import AutoTokenizer

    task = get_task("re", FX)
    tok = AutoTokenizer.from_pretrained(tiny)
    task.prepare_tokenizer(tok)
    assert "##는" in tok.get_vocab()  # precondition: the fixture vocabulary has the continuation piece
    ex = task.parse_record(json.loads((FX / "re" / "klue-re-v1.1_dev.json").read_text())[0], "x")
    tokens = tok.convert_ids_to_tokens(task.encode([ex], tok, 64)[0]["input_ids"])
    assert tokens[:6] == ["[CLS]", "<subj>", "김민수", "</subj>", "##는", "<obj>"]


def test_cli_lists_tasks_and_stays_light():
    res = CliRunner().invoke(finetune, ["--task-list"])
    assert res.exit_code == 0
    names = [line.split()[0] for line in res.output.strip().splitlines() if line.strip()]
    assert names == ["#", "ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst",
                     "#", "jsts", "jnli", "jsquad", "jcommonsenseqa"]
    assert "# klue" in res.output and "# jglue" in res.output
    help_text = CliRunner().invoke(finetune, ["--help"]).output
    assert "micro_f1, auprc" in help_text and "pearsonr, f1" in help_text
    assert "entity_macro_f1, character_macro_f1, character_macro_f1_without_o (selects on character_macro_f1)" \
        in help_text and "(selects on las_macro_f1)" in help_text
    res = CliRunner().invoke(finetune, ["ynat"])
    assert res.exit_code != 0 and "missing --model, --data-dir, --output" in res.output
    code = "import sys, finetune.cli; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.shared_data
def test_all_four_tasks_on_the_shared_data(shared_data, tmp_path):
    """Acceptance smoke run: every task trains and evaluates on the real KLUE files (capped), and its
    predictions score against the official dev file to the reported numbers."""
    klue = shared_data / "klue"
    sources = [next((klue / d).glob(p)) for d, p in (("ynat", "ynat-v1*_train.json"), ("sts", "*_dev.json"),
                                                      ("nli", "*_train.json"), ("re", "*_dev.json"))]
    model = build_tiny_model(tmp_path / "tiny", _texts(sources, limit=3000))
    for task, split in (("ynat", "official"), ("sts", "dev-split"), ("nli", "official"), ("re", "dev-split")):
        out = tmp_path / task
        _run([task, "--model", str(model), "--data-dir", str(klue), "--output", str(out), "--max-steps", "8",
              "--max-train-examples", "256", "--max-eval-examples", "128", "--batch-size", "16",
              "--no-save-model"] + (["--random-init"] if task == "nli" else []))
        summary = json.loads((out / "metrics.json").read_text())
        n_eval = min(128, summary["data"]["n_eval_available"])  # STS: 20% of 519 dev examples is 105
        assert summary["data"]["split"] == split and summary["data"]["n_eval"] == n_eval
        run = json.loads((out / "seed-42" / "metrics.json").read_text())
        assert run["unk_rate"] < 0.05
        t = get_task(task, klue)
        gold = next((klue / t.files.subdir).glob(t.files.dev_glob))
        scored = score_file(task, gold, out / "seed-42" / "predictions.jsonl", allow_subset=True)
        assert scored["n_scored"] == n_eval and scored["subset"]
        for key in t.metric_names:
            if run["metrics"][key] is not None:
                assert scored["metrics"][key] == pytest.approx(run["metrics"][key], abs=1e-4)


def test_same_seed_gives_identical_outputs(tiny, tmp_path):
    # RE predictions carry probabilities (6 decimals), so any nondeterminism in training would show
    args = ["re", "--model", str(tiny), "--data-dir", str(FX), "--max-steps", "3", "--batch-size", "8",
            "--no-save-model"]
    _run([*args, "--output", str(tmp_path / "a")])
    _run([*args, "--output", str(tmp_path / "b")])
    a = (tmp_path / "a" / "seed-42" / "predictions.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "seed-42" / "predictions.jsonl").read_bytes()
    hist = [json.loads((tmp_path / d / "seed-42" / "metrics.json").read_text())["history"] for d in ("a", "b")]
    assert hist[0] == hist[1]


def test_token_level_outputs_of_different_lengths_are_padded_with_the_ignore_index():
    from finetune.trainer import concat_padded

    a = np.array([[1, 2, 3], [4, 5, 6]])
    b = np.array([[7, 8, 9, 10, 11]])
    out = concat_padded([a, b])
    assert out.tolist() == [[1, 2, 3, -100, -100], [4, 5, 6, -100, -100], [7, 8, 9, 10, 11]]
    # (batch, words, 2) outputs pad their middle axis; equal shapes concatenate as they are (dtype kept)
    c, d = np.zeros((1, 2, 2), dtype=np.int64), np.ones((2, 3, 2), dtype=np.int64)
    out = concat_padded([c, d])
    assert out.shape == (3, 3, 2) and out.dtype == np.int64 and (out[0, 2] == -100).all() and (out[1:] == 1).all()
    logits = [np.full((2, 3), 0.5, dtype=np.float32), np.zeros((1, 3), dtype=np.float32)]
    assert concat_padded(logits).tolist() == [[0.5] * 3, [0.5] * 3, [0.0] * 3]


def test_max_length_is_capped_by_the_model_positions():
    from types import SimpleNamespace

    from finetune.trainer import usable_length

    roberta = SimpleNamespace(model_type="roberta", max_position_embeddings=34, pad_token_id=1)
    bert = SimpleNamespace(model_type="bert", max_position_embeddings=34, pad_token_id=0)
    unbounded = SimpleNamespace(model_max_length=int(1e30))
    assert usable_length(roberta, unbounded, 256) == 32  # positions start at pad + 1
    assert usable_length(bert, unbounded, 256) == 34
    assert usable_length(bert, SimpleNamespace(model_max_length=16), 256) == 16
    assert usable_length(roberta, unbounded, 20) == 20


@pytest.mark.parametrize("constant", [False, True])
def test_the_learning_rate_schedule_warms_up_then_decays_or_holds(constant):
    """KLUE-baseline's linear warmup and decay to 0, or (`constant_lr`) the same warmup and then the peak rate to
    the last step: the rate each of 10 steps trains with, warmup 0.2 -> 2 steps."""
    import torch

    from finetune.tasks.base import Hyperparams
    from finetune.trainer import lr_schedule

    hp = Hyperparams(learning_rate=1e-3, warmup_ratio=0.2, constant_lr=constant)
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=hp.learning_rate)
    scheduler = lr_schedule(optimizer, hp, total_steps=10)
    rates = []
    for _ in range(10):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    peak = [1e-3] * 8 if constant else [1e-3 * (10 - k) / 8 for k in range(2, 10)]
    assert rates == pytest.approx([0.0, 5e-4, *peak])


def test_constant_lr_reaches_the_run_through_the_command_line(tiny, tmp_path):
    out = tmp_path / "o"
    _run(["ynat", "--model", str(tiny), "--data-dir", str(FX), "--output", str(out), "--max-steps", "2",
          "--batch-size", "8", "--seeds", "1", "--no-save-model", "--hp", "ynat.constant_lr=true"])
    assert json.loads((out / "metrics.json").read_text())["hyperparams"]["constant_lr"] is True


def test_a_random_init_run_is_never_labelled_as_the_pretrained_model(tiny, tmp_path):
    """`--label` names the model; with `--random-init` the row is still marked, so a table never merges the
    random init's scores into the pretrained model's row."""
    args = ["nli", "--model", str(tiny), "--data-dir", str(FX), "--max-steps", "1", "--no-save-model",
            "--random-init"]
    _run([*args, "--output", str(tmp_path / "a"), "--label", "tiny-5.5k"])
    _run([*args, "--output", str(tmp_path / "b")])
    labels = [json.loads((tmp_path / d / "metrics.json").read_text())["label"] for d in ("a", "b")]
    assert labels == ["tiny-5.5k (random init)", f"{tiny.resolve().name} (random init)"]
