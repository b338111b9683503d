"""`klue run` with no recipe: the embedded default (pipeline/sample/recipe.yaml) on the sample shipped in the
package, with no shared data folder in the environment, through every stage, the eight tasks and the report with
its verdict.
Capped here (pretraining and fine-tuning steps) so that it fits CI; the full run is the README's first command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.sample import SAMPLE_DIR

REPO = Path(__file__).resolve().parents[1]
CAPS = ["--set", "stages.pretrain.max_steps=10", "--set", "stages.pretrain.eval_every=5",
        "--set", "stages.pretrain.checkpoint_every=10", "--set", "stages.finetune.max_steps=2",
        "--set", "stages.finetune.seeds=[1]", "--set", "stages.finetune.max_eval_examples=24",
        "--set", "stages.finetune.max_train_examples=48"]


def test_klue_run_without_a_recipe_runs_the_whole_pipeline_offline_and_prints_the_report(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KLUE_DATA_DIR"}
    env.update(OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    wd = tmp_path / "runs" / "klue-sample"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", "--workdir", str(wd), *CAPS],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"Report: {wd / 'report.html'}" in proc.stdout
    run = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert run["recipe_file"] == str(SAMPLE_DIR / "recipe.yaml") and run["status"] == "ok"
    stages = [s["stage"] for s in run["arms"][0]["stages"]]
    assert stages[0] == "collect" and stages[-2:] == ["pretrain", "finetune"]
    manifests = {s["stage"]: json.loads((wd / s["path"] / "manifest.json").read_text()) for s in run["arms"][0]["stages"]}
    assert manifests["collect"]["funnel"]["quarantined"] == 3  # the sample's planted malformed records
    sample = json.loads((SAMPLE_DIR / "manifest.json").read_text(encoding="utf-8"))
    planted = len(sample["planted"]) + len(sample["natural_contamination"])
    assert sum(manifests["decontaminate"]["funnel"]["dropped"].values()) == planted  # its benchmark sentences
    detected = manifests["pii_detect"]["meta"]["report"]["spans_per_type"]
    assert len(detected) >= 15, detected  # synthetic PII of every type (17) appended to real text
    tasks = manifests["finetune"]["meta"]["tasks"]
    assert set(tasks) == {"ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst"}
    assert all({"pretrained", "random-init"} <= set(inits) for inits in tasks.values())
    md = (wd / "report.md").read_text(encoding="utf-8")
    titles = ["Verdict", "Curation funnel", "PII detected", "PII replaced, per arm", "Tokenizer", "Pretraining",
              "Fine-tuning"]
    assert [line[3:] for line in md.splitlines() if line.startswith("## ")][:len(titles)] == titles
    # the verdict covers the eight tasks, marks the generated ones, and is what `klue run` printed last
    verdict = md.split("\n## Verdict\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert " of 8 tested tasks " in verdict[0] and any(line.startswith("- § generated data") for line in verdict), verdict
    assert proc.stdout.splitlines()[-len(verdict) - 1:] == ["Verdict:", *verdict]
    # the model folder carries its card (pipeline/release/card.py): the sample's sources, their mixed licences named
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    sources = run["recipe"]["sources"]
    card = ModelCard.load(wd / "arms" / "default" / "pretrain" / "final" / "README.md")
    assert (card.data.license, card.data.license_name, card.data.license_link) == \
        ("other", "mixed-source-licenses", "LICENSE")
    assert card.data.datasets == [s["name"] for s in sources]
    share_alike = [f"`{s['name']}` ({s['license']})" for s in sources if "BY-SA" in s["license"]]
    assert f"Share-alike: {', '.join(share_alike)}." in card.text
    # and `klue export` makes the publishable folder: the KLUE tasks in its model-index, the generated ones not
    out = tmp_path / "export"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "export", str(wd), "--to", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    exported = ModelCard.load(out / "README.md")
    _, results = model_index_to_eval_results(exported.data.to_dict()["model-index"])
    assert {r.dataset_config for r in results} == {"ynat", "sts", "nli", "ner", "re", "dp"}
    assert "mrc, dst: generated data, not the benchmark's (§), left out of the `model-index`." in exported.text
    # and the corpus: `klue export --corpus` gives what `datasets` loads, every document the pii stage kept
    corpus = tmp_path / "corpus"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "export", str(wd), "--corpus", "--to", str(corpus)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    ds = load_dataset("parquet", data_dir=str(corpus))
    assert sum(len(ds[s]) for s in ds) == manifests["pii"]["funnel"]["docs_kept"]
    assert len(ds["validation"]) == manifests["encode"]["meta"]["docs"]["eval"]
    data = DatasetCard.load(corpus / "README.md").data.to_dict()
    assert (data["license"], data["language"]) == ("other", ["ko"])
