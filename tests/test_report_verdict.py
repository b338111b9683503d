"""The Verdict at the top of the run report (and at the end of `klue run`): what the fine-tuning table and the
pretraining curves conclude, in sentences, from constructed stage folders.

What is checked: a win, a loss and a tie against random init are told apart by Welch's p of the table's Δ row
(and "beat" needs a positive Δ); the no-model floor above the pretrained model is named; a task of generated
data is marked (in the table too); the order-gain sentence on both sides of 0.5 nats; the section comes right
under the header, before the problems and every other section, and a real Chromium shows it there; with
nothing to conclude there is no section.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from finetune.results import build_table, generated_note, to_markdown, verdict
from finetune.stages.finetune import FinetuneStage, finetune_section
from pipeline.stage import ArmOutput
from pretrain.stages.pretrain import PretrainStage

# (task, init) -> main-metric mean and std over three seeds. Welch's p (ttest_ind_from_stats, n = 3 a side):
# YNAT +20 -> 1.6e-05 (a win), STS -5 -> 0.015 (a loss), NLI -0.5 -> 0.57 and MRC +2 -> 0.46 (within noise).
# Their 95 % intervals: diff ± t(0.975, df 4) * std * sqrt(2/3), e.g. YNAT 20 ± 2.7764 * 0.8165 = [17.73, 22.27].
SCORES = {
    ("ynat", "pretrained"): (60.0, 1.0), ("ynat", "random-init"): (40.0, 1.0), ("ynat", "floor"): (50.0, 0.0),
    ("sts", "pretrained"): (25.0, 1.5), ("sts", "random-init"): (30.0, 1.5),
    ("nli", "pretrained"): (36.0, 1.0), ("nli", "random-init"): (36.5, 1.0), ("nli", "floor"): (45.0, 0.0),
    ("mrc", "pretrained"): (31.0, 3.0), ("mrc", "random-init"): (29.0, 3.0),
}
MAIN = {"ynat": "macro_f1", "sts": "pearsonr", "nli": "accuracy", "mrc": "rouge_w"}

VERDICT = [
    "Pretraining beat random init on 2 of 4 tasks (p < 0.05 on 1).",
    "Beat random init (p < 0.05): YNAT F1 +20.00 [+17.73, +22.27] (p=1.6e-05).",
    "Lost to random init (p < 0.05): STS r -5.00 [-8.40, -1.60] (p=0.015).",
    "No significant difference from random init (p >= 0.05): NLI Acc -0.50 [-2.77, +1.77] (p=0.57), "
    "MRC ROUGE § +2.00 [-4.80, +8.80] (p=0.46).",
    "The no-model floor still scores above the pretrained model on NLI Acc (floor 45.00, pretrained 36.00).",
    "§ generated data, not KLUE's (MRC ROUGE): these scores say nothing about KLUE.",
]
ORDER_YES = ("Order gain 2.31 nats at the end of pretraining (2.05M tokens; it first reached 0.5 at 1.02M): "
             "the model uses word order.")
ORDER_NO = ("Order gain 0.12 nats at the end of pretraining (2.05M tokens), below 0.5: still in the MLM plateau, "
            "the model does not use word order yet.")


def _finetune_folder(folder: Path, scores: dict[tuple[str, str], tuple[float, float]],
                     generated: list[str]) -> dict:
    """A finetune stage folder as the stage leaves it: a metrics.json per (task, init), the manifest's meta
    pointing at them; returns the manifest."""
    tasks: dict[str, dict] = {}
    for (task, init), (mean, std) in scores.items():
        seeds = [1] if init == "floor" else [1, 2, 3]
        run = {"task": task, "label": init, "main_metric": MAIN[task], "mean": {MAIN[task]: mean},
               "std": {MAIN[task]: std}, "seeds": seeds, "random_init": init == "random-init",
               "floor": init == "floor", "data": {"split": "official", "n_train": 100, "n_eval": 50}}
        path = folder / task / init / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(run), encoding="utf-8")
        tasks.setdefault(task, {})[init] = {"metrics": f"{task}/{init}/metrics.json"}
    manifest = {"stage": "finetune", "key": folder.name, "params": {"generated": generated},
                "meta": {"tasks": tasks, "seeds": [1, 2, 3]}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def _pretrain_folder(folder: Path, final_gain: float) -> dict:
    """A pretrain stage folder: metrics.jsonl with an evaluation every 250 steps of 2,048 tokens, the order
    gain reaching 0.5 at step 500 (1.02M tokens) when the run ends above it; returns the manifest."""
    gains = [0.1, 0.6, 1.5, final_gain] if final_gain >= 0.5 else [0.0, 0.05, 0.1, final_gain]
    rows = [{"step": 250 * (i + 1), "loss": 7.0, "eval_mask_loss": 7.0 - i, "eval_order_gain": g}
            for i, g in enumerate(gains)]
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    manifest = {"stage": "pretrain", "key": folder.name, "meta": {"metrics": "metrics.jsonl", "report": {
        "steps": 1000, "tokens_seen": 1000 * 2048, "eval_order_gain": final_gain}}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def test_the_fine_tuning_verdict_tells_wins_losses_and_noise_apart_and_names_the_floor(tmp_path):
    folder = tmp_path / "finetune" / "k1"
    manifest = _finetune_folder(folder, SCORES, generated=["mrc"])
    outputs = [ArmOutput(("default",), folder, manifest)]
    assert FinetuneStage.verdict(outputs) == VERDICT

    # the table of the report's section marks the generated task's columns and says why under it
    section = finetune_section(outputs)
    assert section is not None
    header = next(line for line in section.markdown.splitlines() if line.startswith("| model |"))
    assert [c.strip() for c in header.strip("|").split("|") if "§" in c] == ["MRC EM §", "MRC ROUGE §"]
    assert "§ the task's data here is generated, not KLUE's (the embedded default's MRC and WoS)" in section.markdown


def test_only_a_generated_task_that_ran_is_marked():
    """No mark without generated tasks, nor for a generated task the run did not fine-tune (a recipe's list
    stays when `tasks` is narrowed)."""
    runs = [{"task": "mrc", "label": label, "mean": {"rouge_w": m}, "std": {"rouge_w": 1.0}, "seeds": [1, 2],
             "random_init": label == "random init", "data": {}} for label, m in (("pretrained", 30.0),
                                                                                  ("random init", 20.0))]
    for table in (build_table(runs), build_table(runs, generated=["dst"])):
        assert "§" not in "".join(verdict(table, "pretrained", "random init")) + to_markdown(table)
        assert generated_note(table) is None
    table = build_table(runs, generated=["dst", "mrc"])
    assert table["generated"] == ["MRC EM", "MRC ROUGE"]
    assert verdict(table, "pretrained", "random init")[1].startswith("Beat random init (p < 0.05): MRC ROUGE § +10.00")


def test_one_seed_is_untested_and_a_model_above_every_floor_is_said_so():
    """With one seed the table has no p: no "beat", no "no significant difference"; and no floor above."""
    runs = [{"task": "ynat", "label": label, "mean": {"macro_f1": m}, "std": {"macro_f1": 0.0}, "seeds": [1],
             "random_init": label == "random init", "floor": label == "floor", "data": {}}
            for label, m in (("pretrained", 55.0), ("random init", 50.0), ("floor", 40.0))]
    assert verdict(build_table(runs), "pretrained", "random init") == [
        "Pretraining beat random init on 1 of 1 tasks (p < 0.05 on 0).",
        "Untested against random init (one seed, or no spread over the seeds): YNAT F1 +5.00.",
        "The pretrained model scores above the no-model floor on every task that has one (1).",
    ]
    # no random-init row: only what the floor says
    assert verdict(build_table(runs[::2]), "pretrained", None) == [
        "The pretrained model scores above the no-model floor on every task that has one (1)."]


def test_the_pretraining_verdict_says_whether_the_model_uses_word_order(tmp_path):
    yes, no = (ArmOutput((arm,), tmp_path / arm, _pretrain_folder(tmp_path / arm, gain))
               for arm, gain in (("modernbert", 2.31), ("roberta", 0.12)))
    assert PretrainStage.verdict([yes]) == [ORDER_YES]
    assert PretrainStage.verdict([no]) == [ORDER_NO]
    assert PretrainStage.verdict([yes, no]) == [f"modernbert: {ORDER_YES}", f"roberta: {ORDER_NO}"]
    without = ArmOutput(("x",), tmp_path / "x", {"meta": {"report": {"steps": 10, "eval_order_gain": None}}})
    assert PretrainStage.verdict([without]) == []
    smoke = ArmOutput(("s",), tmp_path / "s", {"meta": {"report": {"steps": 3, "tokens_seen": 3 * 512,
                                                                    "eval_order_gain": 0.0}}})
    assert PretrainStage.verdict([smoke])[0].startswith("Order gain 0.00 nats at the end of pretraining "
                                                         "(1.5k tokens), below 0.5")


def _workdir(tmp_path: Path, gain: float | None, finetune: bool = True) -> Path:
    """A finished run's workdir: run.json, a pretrain and (optionally) a finetune folder, and a failed stage
    of another arm, which the report lists among its problems."""
    wd = tmp_path / "w"
    stages = []
    pre = _pretrain_folder(wd / "pretrain" / "p1", gain if gain is not None else 0.0)
    if gain is None:
        pre["meta"]["report"]["eval_order_gain"] = None
        (wd / "pretrain" / "p1" / "manifest.json").write_text(json.dumps(pre), encoding="utf-8")
    stages.append({"stage": "pretrain", "key": "p1", "status": "ran", "seconds": 1.0, "path": "pretrain/p1"})
    if finetune:
        _finetune_folder(wd / "finetune" / "f1", SCORES, generated=["mrc"])
        stages.append({"stage": "finetune", "key": "f1", "status": "ran", "seconds": 1.0, "path": "finetune/f1"})
    run = {"recipe": {"name": "verdict"}, "recipe_file": "r.yaml", "status": "done", "started": "s",
           "finished": "f", "klue_version": "0.1.0", "stages": ["pretrain", "finetune"],
           "arms": [{"name": "default", "values": {}, "stages": stages}]}
    (wd / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return wd


def test_the_report_opens_with_the_verdict_and_klue_run_prints_it(tmp_path):
    from rich.console import Console

    from pipeline.commands import print_verdict
    from pipeline.report import build_report, build_verdict, write_report

    wd = _workdir(tmp_path, 2.31)
    run = json.loads((wd / "run.json").read_text())
    run["arms"].append({"name": "other", "values": {}, "stages": [
        {"stage": "pretrain", "key": None, "status": "failed", "error": "boom", "path": None}]})
    (wd / "run.json").write_text(json.dumps(run), encoding="utf-8")

    _, _, md = write_report(wd)
    lines = md.splitlines()
    start = lines.index("## Verdict")
    # right under the header's bullet list (its last bullet and a blank line), before the problems
    assert lines[start - 2].startswith("- klue-pipeline ") and lines[start - 1] == ""
    body = lines[start + 2:lines.index("> **⚠ PROBLEMS: this run's accounting or stages need attention**")]
    expected = [*VERDICT, ORDER_YES]  # the last stage first: fine-tuning, then pretraining
    assert body == [f"- {line}" for line in expected] + [""]
    assert [x[3:] for x in lines if x.startswith("## ")][:3] == ["Verdict", "Pretraining", "Fine-tuning"]

    assert build_verdict(wd, build_report(wd)) == expected
    out = io.StringIO()
    print_verdict(Console(file=out, width=80, highlight=False, soft_wrap=True), expected)
    assert out.getvalue().splitlines() == ["Verdict:", *(f"- {line}" for line in expected)]


def test_the_verdict_says_only_what_it_can_and_is_absent_with_nothing_to_say(tmp_path):
    from pipeline.report import build_report, build_verdict, write_report

    wd = _workdir(tmp_path / "a", 0.12, finetune=False)
    assert build_verdict(wd, build_report(wd)) == [ORDER_NO]
    wd = _workdir(tmp_path / "b", None, finetune=False)
    _, _, md = write_report(wd)
    assert "## Verdict" not in md and build_verdict(wd, build_report(wd)) == []


def test_a_real_browser_shows_the_verdict_first_under_the_header(tmp_path):
    from pipeline.report import write_report
    from testkit.browser import chromium, page_facts

    wd = _workdir(tmp_path, 2.31)
    _, html, _ = write_report(wd)
    if chromium() is None:
        pytest.skip("no Chromium on PATH (Debian's `chromium` package; .ci/run installs it)")
    facts = page_facts(html)
    assert facts["lead"] == ["H1", "UL"]
    first = facts["h2"][0]
    assert first["text"] == "Verdict"
    assert first["body"].splitlines() == [*VERDICT, ORDER_YES]
