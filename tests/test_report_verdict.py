"""The Verdict at the top of the run report (and at the end of `klue run`): what the fine-tuning table and the
pretraining curves conclude, in sentences, from constructed stage folders.

What is checked: a win, a loss and an untested task against random init are told apart (the Multi-Bootstrap on
real per-seed predictions, Holm's correction; tests/test_verdict.py has the statistics); a floor at or above the
model is named; a task of generated data is marked (in the table too); the forest plot sits under the lines; the order-gain sentence on both sides of 0.5 nats; the section comes right
under the header, before the problems and every other section, and a real Chromium shows it there; with
nothing to conclude there is no section.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from finetune.report import finetune_section
from finetune.results import build_table, to_markdown
from finetune.stages.finetune import FinetuneStage
from finetune.verdict import generated_note, verdict
from pipeline.stage import ArmOutput
from pretrain.stages.pretrain import PretrainStage

# (task, init) -> how many evaluation examples each seed gets right (testkit.verdict.write_run: real predictions
# on the fixture's examples): YNAT 49 of 56 against 11 (a win), NLI 5 of 30 against 25 (a loss); MRC's rows are
# summaries without predictions (untested) of a generated task; NLI's majority floor at 45 is above the model.
RIGHT = {("ynat", "pretrained"): {1: 50, 2: 48, 3: 49}, ("ynat", "random-init"): {1: 10, 2: 12, 3: 11},
         ("nli", "pretrained"): {1: 5, 2: 6, 3: 5}, ("nli", "random-init"): {1: 25, 2: 25, 3: 24}}
MRC = {"pretrained": 31.0, "random-init": 29.0}
FLOORS = {("nli", "floor:majority"): ("majority-class floor", 45.0), ("ynat", "floor:majority"):
          ("majority-class floor", 3.57)}
ORDER_YES = ("Order gain 2.31 nats at the end of pretraining (2.05M tokens; it first reached 0.5 at 1.02M): "
             "the model uses word order.")
ORDER_NO = ("Order gain 0.12 nats at the end of pretraining (2.05M tokens), below 0.5: still in the MLM plateau, "
            "the model does not use word order yet.")


def _finetune_folder(folder: Path, generated: list[str]) -> dict:
    """A finetune stage folder as the stage leaves it: a run folder per (task, init) and per floor, the manifest's
    meta pointing at their metrics.json; returns the manifest."""
    from testkit.verdict import write_floor, write_run

    tasks: dict[str, dict] = {}
    for (task, init), right in RIGHT.items():
        write_run(folder / task / init, task, init, right, random_init=init == "random-init")
        tasks.setdefault(task, {})[init] = {"metrics": f"{task}/{init}/metrics.json"}
    for init, score in MRC.items():
        run = {"task": "mrc", "label": init, "main_metric": "rouge_w", "mean": {"rouge_w": score},
               "std": {"rouge_w": 3.0}, "seeds": [1, 2, 3], "random_init": init == "random-init",
               "data": {"split": "official", "n_train": 100, "n_eval": 50}}
        (folder / "mrc" / init).mkdir(parents=True)
        (folder / "mrc" / init / "metrics.json").write_text(json.dumps(run), encoding="utf-8")
        tasks["mrc"] = {**tasks.get("mrc", {}), init: {"metrics": f"mrc/{init}/metrics.json"}}
    for (task, key), (label, score) in FLOORS.items():
        write_floor(folder / task / key.replace(":", "-"), task, label, score)
        tasks[task][key] = {"metrics": f"{task}/{key.replace(':', '-')}/metrics.json"}
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


def test_the_fine_tuning_verdict_tells_wins_losses_and_untested_apart_and_names_the_floor(tmp_path):
    folder = tmp_path / "finetune" / "k1"
    manifest = _finetune_folder(folder, generated=["mrc"])
    outputs = [ArmOutput(("default",), folder, manifest)]
    lines = FinetuneStage.verdict(outputs)
    assert lines[0] == ("Pretraining beat random init on 1 of 2 tested tasks and lost on 1 (main metrics; "
                        "Multi-Bootstrap, Holm's correction over these 2 tasks, p < 0.05; before correction 1 beat and "
                        "1 lost at p < 0.05).")
    assert lines[1].startswith("Beat random init: YNAT F1 +") and "(p=0.001, Holm 0.002)" in lines[1]
    assert lines[2].startswith("Lost to random init: NLI Acc -64.44 [") and "(p=0.001, Holm 0.002)" in lines[2]
    assert lines[3] == "Untested (no per-example predictions to resample): MRC ROUGE § +2.00."
    assert lines[4].startswith("One pretraining run per arm")
    assert lines[5] == "A floor scores at or above the model on: NLI Acc (majority-class floor 45.00 ≥ 17.78)."
    assert lines[6] == "§ generated data, not KLUE's (MRC ROUGE): these scores say nothing about KLUE."
    assert len(lines) == 7

    # the table of the report's section marks the generated task's columns and says why under it, and names the
    # rows it could not resample; the verdict's forest plot has the one comparison
    section = finetune_section(outputs)
    assert section is not None
    header = next(line for line in section.markdown.splitlines() if line.startswith("| model |"))
    assert [c.strip() for c in header.strip("|").split("|") if "§" in c] == ["MRC EM §", "MRC ROUGE §"]
    assert "§ the task's data here is generated, not KLUE's (the embedded default's MRC and WoS)" in section.markdown
    assert "Not resampled (pretrained, mrc:" in section.markdown
    (figure,) = FinetuneStage.verdict_figures(outputs)
    assert figure.name == "verdict-forest.png"


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
    assert verdict(table, "pretrained", "random init")[1] == ("Untested (no per-example predictions to resample): "
                                                              "MRC ROUGE § +10.00.")


def test_a_model_above_every_floor_is_said_so():
    """A floor below the model on every task: one line; without a random-init row, only that line."""
    runs = [{"task": "ynat", "label": label, "mean": {"macro_f1": m}, "std": {"macro_f1": 0.0},
             "seeds": [] if label == "floor" else [1], "random_init": label == "random init",
             "floor": label == "floor", "data": {}}
            for label, m in (("pretrained", 55.0), ("random init", 50.0), ("floor", 40.0))]
    assert verdict(build_table(runs), "pretrained", "random init")[-1] == (
        "The model scores above every floor on every task that has one (1).")
    assert verdict(build_table(runs[::2]), "pretrained", None) == [
        "The model scores above every floor on every task that has one (1)."]


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
        _finetune_folder(wd / "finetune" / "f1", generated=["mrc"])
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
    verdict_lines = FinetuneStage.verdict([ArmOutput(("default",), wd / "finetune" / "f1",
                                                     json.loads((wd / "finetune" / "f1" / "manifest.json").read_text()))])
    expected = [*verdict_lines, ORDER_YES]  # the last stage first: fine-tuning, then pretraining
    # the lines, then the forest plot under them
    assert body[:len(expected)] == [f"- {line}" for line in expected]
    assert any("report_files/verdict-forest.png" in line for line in body[len(expected):])
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
    assert first["body"].splitlines()[0].startswith("Pretraining beat random init on 1 of 2 tested tasks")
    assert first["body"].splitlines()[-1] == ORDER_YES


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_the_fine_tuning_figure_draws_every_run_and_each_floor_as_a_line(tmp_path):
    from finetune.report import finetune_panels, suite_table
    from pipeline.plots import DotPanel, dot_panels

    folder = tmp_path / "finetune" / "k1"
    manifest = _finetune_folder(folder, generated=["mrc"])
    built = suite_table([ArmOutput(("default",), folder, manifest)])
    assert built is not None
    panels = {p.title: p for p in finetune_panels(built[1], {"mrc"})}
    assert list(panels) == ["YNAT", "NLI"]  # registry order; MRC's summaries hold no per-seed scores, nor a floor
    for task, title in (("ynat", "YNAT"), ("nli", "NLI")):
        rows = dict(panels[title].rows)
        assert list(rows) == ["pretrained", "random init"]
        for init, label in (("pretrained", "pretrained"), ("random-init", "random init")):
            run = json.loads((folder / task / init / "metrics.json").read_text())
            main = run["main_metric"]
            assert rows[label] == [(run["per_seed"][s][main], "–") for s in ("1", "2", "3")]  # no replicate seed
        assert panels[title].lines == {"majority-class": FLOORS[(task, "floor:majority")][1]}

    # the bug this figure replaced: one bar series per floor made it 5,148 pixels wide; now its size is the panels'
    one = DotPanel("A", "F1", [("pretrained", [(50.0, "1"), (52.0, "2")])], {"floor": 10.0})
    many = DotPanel("A", "F1", one.rows, {f"floor {i}": 3.0 * i for i in range(13)})
    assert _png_size(dot_panels([one] * 8, group_label="seed")) == _png_size(dot_panels([many] * 8, group_label="seed"))
    width, height = _png_size(dot_panels([many] * 8, group_label="seed"))
    assert width <= 1400 and height <= 700
