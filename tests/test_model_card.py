"""The model card (pipeline/release/card.py) and `klue export`, on a real tiny run of every stage.

One workdir for the module: the end-to-end fixture recipe (tests/fixtures/e2e: seven sources, one of them given
a CC BY-SA 4.0 licence here) as one arm, through pretraining (3 steps) and fine-tuning (YNAT and NLI, 2 seeds,
2 steps, random init and the floor), about 10 s on 2 cores. What is checked, offline (`ModelCard.validate()`
would ask the Hub): the pretrain stage's `final/README.md` and the exported card load with `ModelCard.load`,
their metadata passes `check_metadata` and round-trips through `huggingface_hub`'s parser, the `model-index`
holds exactly the run's metrics.json means, the licence names the share-alike source, and stock
`AutoModelForMaskedLM` / `AutoTokenizer` load the exported folder with the Hub switched off.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.manifest import verify_files
from pipeline.release.licenses import HUB_LICENSES, card_license, classify
from testkit.finetune import FX
from testkit.toy import subprocess_env

pytestmark = pytest.mark.slow

E2E = Path(__file__).parent / "fixtures" / "e2e"
REPO = Path(__file__).resolve().parents[1]
SETS = ["--set", "variants=null", "--set", "sources.1.license=CC BY-SA 4.0",  # wiki
        "--set", "stages.finetune.tasks=[ynat, nli]", "--set", f"stages.finetune.data_dir={FX}",
        "--set", "stages.finetune.seeds=[1, 2]", "--set", "stages.finetune.vs_random_init=true",
        "--set", "stages.finetune.max_steps=2", "--set", "stages.finetune.threads=1"]
SOURCES = ["news", "wiki", "posts", "qa", "reviews", "comments", "law"]
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "KLUE_E2E_DIR": str(E2E),
           "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


def klue_subprocess(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", *map(str, args)], cwd=REPO,
                          env=subprocess_env(**OFFLINE), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"klue {' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def klue(*args: str | Path) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("card")
    wd = root / "wd"
    proc = klue_subprocess("run", E2E / "recipe.yaml", "--workdir", wd, "--workers", "1", *SETS)
    rec = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    stages = {s["stage"]: wd / s["path"] for s in rec["arms"][0]["stages"]}
    manifests = {k: json.loads((p / "manifest.json").read_text(encoding="utf-8")) for k, p in stages.items()}
    return SimpleNamespace(root=root, wd=wd, out=proc.stdout, stages=stages, manifests=manifests)


def load_card(path: Path):
    from huggingface_hub import ModelCard

    return ModelCard.load(path)


def pretrained_means(run) -> dict[tuple[str, str], float]:
    """(task, metric) -> the mean of the pretrained runs' metrics.json, as the finetune stage wrote them."""
    out = {}
    for rel in run.manifests["finetune"]["meta"]["runs"]:
        m = json.loads((run.stages["finetune"] / rel / "metrics.json").read_text(encoding="utf-8"))
        if not m.get("random_init") and not m.get("floor"):
            out.update({(m["task"], k): v for k, v in m["mean"].items()})
    return out


# ----------------------------------------------------------------------------------------------- licences
def test_source_licences_map_to_the_hubs_ids_and_share_alike_is_named():
    got = {t: (s.hub_id, s.share_alike) for t in ("CC BY-SA 4.0", "CC BY-SA", "CC0 (test fixture)", "MIT",
                                                  "KOGL Type 1", "public documents", "cc-by-4.0", "GPL-3.0",
                                                  "Creative Commons Attribution-ShareAlike 3.0")
           for s in [classify("s", t)]}
    assert got == {"CC BY-SA 4.0": ("cc-by-sa-4.0", True), "CC BY-SA": (None, True),
                   "CC0 (test fixture)": ("cc0-1.0", False), "MIT": ("mit", False), "KOGL Type 1": (None, False),
                   "public documents": (None, False), "cc-by-4.0": ("cc-by-4.0", False),
                   "GPL-3.0": ("gpl-3.0", True), "Creative Commons Attribution-ShareAlike 3.0": ("cc-by-sa-3.0", True)}
    one = card_license([("a", "CC BY-SA 4.0"), ("b", "cc-by-sa-4.0")])
    assert (one.license, one.license_name, one.license_link) == ("cc-by-sa-4.0", None, None)
    assert one.license in HUB_LICENSES and [s.source for s in one.share_alike] == ["a", "b"]
    assert "Share-alike: `a` (CC BY-SA 4.0), `b` (cc-by-sa-4.0)." in one.summary()
    unversioned = card_license([("wiki", "CC BY-SA")])  # the Hub has no id for an unversioned CC BY-SA
    assert (unversioned.license, unversioned.license_name, unversioned.license_link) == ("other", "cc-by-sa", "LICENSE")
    mixed = card_license([("a", "CC0"), ("b", "MIT")])
    assert (mixed.license, mixed.license_name) == ("other", "mixed-source-licenses") and not mixed.share_alike
    unknown = card_license([("a", "CC BY-SA 4.0"), ("b", "unknown"), ("c", "")])
    assert unknown.license == "unknown" and [s.source for s in unknown.missing] == ["b", "c"]
    assert unknown.summary().startswith("`license: unknown`: the recipe gives no licence for `b`, `c`")
    assert card_license([]).license == "unknown"


def test_check_metadata_names_what_the_hub_would_refuse():
    from huggingface_hub import ModelCardData

    from pipeline.release.card import check_metadata

    good = ModelCardData(language="ko", license="other", license_name="mixed-source-licenses",
                         license_link="LICENSE", pipeline_tag="fill-mask")
    assert check_metadata(good) == []
    bad = ModelCardData(language="Korean", license="CC BY-SA 4.0", pipeline_tag="fill-mask")
    assert check_metadata(bad) == ["license: 'CC BY-SA 4.0' is not an id of the Hub's licence list",
                                   "language: 'Korean' is not an ISO 639 code"]
    assert check_metadata(ModelCardData(language="ko", license="other", pipeline_tag="text-generation")) == [
        "license_name: None (license: other needs one of [a-z0-9.-])",
        "license_link: missing (license: other needs the licence's file or URL)",
        "pipeline_tag: 'text-generation', expected fill-mask"]


def test_klue_run_warns_before_it_starts_when_a_source_has_no_licence(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_E2E_DIR", str(E2E))
    out = klue("run", E2E / "recipe.yaml", "--workdir", tmp_path / "wd", "--dry-run", "--until", "collect",
               "--set", "sources.2.license=unknown")
    lines = out.splitlines()
    assert lines[0] == ("warning: sources.2.license: source 'posts' has no licence; the model card will say the "
                        "licence of the text is unknown (set e.g. license: \"CC BY-SA 4.0\")")
    assert sum(line.startswith("warning: sources.") for line in lines) == 1


# ------------------------------------------------------------------------------------- the stage's card
def test_the_pretrain_stage_writes_a_card_of_the_data_and_training_into_final(run):
    final = run.stages["pretrain"] / "final"
    assert sorted(p.name for p in final.iterdir()) == ["LICENSE", "README.md", "config.json", "model.safetensors",
                                                       "tokenizer.json", "tokenizer_config.json"]
    # part of the stage's outputs: in its manifest, so `klue run --verify` checks them
    assert {"final/README.md", "final/LICENSE"} <= set(run.manifests["pretrain"]["files"])
    assert verify_files(run.stages["pretrain"], run.manifests["pretrain"]) == []
    card = load_card(final / "README.md")
    data = card.data.to_dict()
    assert data == {"language": "ko", "license": "other", "license_name": "mixed-source-licenses",
                    "license_link": "LICENSE", "datasets": SOURCES, "library_name": "transformers",
                    "pipeline_tag": "fill-mask",
                    "tags": ["klue-pipeline", "masked-lm", "pretrained-from-scratch", "roberta", "pii-placeholder",
                             "mecab-pretokenized", "wordpiece"]}
    from pipeline.release.card import check_metadata

    assert check_metadata(card.data) == []
    text = card.text
    assert text.startswith("\n# roberta-tiny-ko\n")  # named by what it is: no recipe name or arm outside the key
    assert "Share-alike: `wiki` (CC BY-SA 4.0)." in text
    # the funnel table's total row is the manifests' own counts
    m = run.manifests
    total = (f"| total |  | {m['collect']['funnel']['docs_in']:,} | {m['filter']['funnel']['docs_kept']:,} | "
             f"{m['dedup']['funnel']['docs_kept']:,} | {m['decontaminate']['funnel']['docs_kept']:,} | "
             f"{m['pii']['funnel']['docs_kept']:,} |")
    assert total in text.splitlines()
    wiki = m["pii"]["by_source"]["wiki"]["docs_kept"]
    assert any(line.startswith("| `wiki` | CC BY-SA 4.0 | ") and line.endswith(f" | {wiki} |")
               for line in text.splitlines())
    spans = m["pii_detect"]["meta"]["report"]["spans_per_type"]
    replaced = m["pii"]["meta"]["report"]["per_type"]
    for t, n in spans.items():
        assert f"| {t} | {n} | {replaced[t]['spans']} |" in text
    summary = json.loads((run.stages["pretrain"] / "summary.json").read_text(encoding="utf-8"))
    assert f"| parameters | {summary['params']:,} |" in text
    assert f"| tokens seen | {summary['tokens_seen']:,} (" in text
    assert f"| held-out loss at [MASK] | {summary['eval_mask_loss']:.3f} |" in text
    assert f"| hardware | {m['pretrain']['meta']['hardware']} |" in text
    # the precision `auto` chose and why, and the MFU with the measured peak it divides by (pipeline/hardware.py)
    assert f"| precision | {summary['precision']} ({summary['precision_why']}) |" in text
    assert f"MFU {summary['mfu']:.1%} of {summary['peak']['label']} |" in text
    assert "**inference needs no MeCab**" in text and "klue_nli_dev" in text
    assert "## Evaluation\n\nNot in this card: fine-tuning runs after pretraining." in text
    lic = (final / "LICENSE").read_text(encoding="utf-8")
    assert "- wiki      CC BY-SA 4.0 (Hub id cc-by-sa-4.0, share-alike)\n" in lic
    assert "- law       public documents (not on the Hub's licence list)\n" in lic


# ---------------------------------------------------------------------------------------- klue export
@pytest.fixture(scope="module")
def exported(run) -> Path:
    to = run.root / "export"
    out = klue("export", run.wd, "--to", to)
    assert out.splitlines()[:3] == [
        f"exported arm default of {run.wd} to {to}: LICENSE, README.md, config.json, loss_curve.png, "
        "model.safetensors, report.html, tokenizer.json, tokenizer_config.json",
        "licence: other (mixed-source-licenses, see LICENSE); share-alike sources: wiki",
        "model-index: 2 results"]
    assert "upload_folder(repo_id=\"you/name\", folder_path=" in out
    return to


def test_export_card_model_index_equals_the_runs_metrics(run, exported):
    from huggingface_hub import ModelCardData
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from pipeline.release.card import check_metadata

    card = load_card(exported / "README.md")
    assert check_metadata(card.data) == []
    data = card.data.to_dict()
    assert ModelCardData(**data).to_dict() == data  # what huggingface_hub parses back is what was written
    name, results = model_index_to_eval_results(data["model-index"])
    assert name == "e2e-tiny"
    got = {(r.dataset_config, r.metric_type): r.metric_value for r in results}
    assert got == pretrained_means(run)  # exactly the metrics.json means, no rounding
    assert {(r.task_type, r.dataset_type, r.dataset_name, r.dataset_split) for r in results} == {
        ("text-classification", "klue/klue", "KLUE ynat", "validation"),
        ("text-classification", "klue/klue", "KLUE nli", "validation")}
    assert [r.metric_name for r in results] == ["YNAT F1, mean of 2 seeds (std 0.00)",
                                                "NLI Acc, mean of 2 seeds (std 0.00)"]
    assert (data["license"], data["license_name"], data["datasets"]) == ("other", "mixed-source-licenses", SOURCES)
    text = card.text
    assert text.startswith("\n# e2e-tiny\n")
    # the fine-tuning table as finetune.results writes it, narrowed to the run's columns, with the published rows
    assert "| model | YNAT F1 | NLI Acc |" in text and "| KLUE-RoBERTa-base (published) | 85.12 | 84.97 |" in text
    ynat, nli = pretrained_means(run)[("ynat", "macro_f1")], pretrained_means(run)[("nli", "accuracy")]
    assert f"| pretrained ¹ | {ynat:.2f} ± 0.00 | {nli:.2f} ± 0.00 |" in text
    assert "¹ departs from " in text and "every task: max_steps 2" in text  # the departure footnote
    assert "- Fine-tuning was capped at 2 optimiser steps per run, far short of KLUE-baseline's epochs." in text
    assert "![Training loss, held-out loss at [MASK] and word-order gain](loss_curve.png)" in text
    assert "[report.html](report.html)" in text
    assert f"| pretrain stage | `pretrain/{run.stages['pretrain'].name}` |" in text
    # the export read the workdir and wrote only its own folder
    for stage in ("pretrain", "finetune"):
        assert verify_files(run.stages[stage], run.manifests[stage]) == []


def test_exported_folder_loads_offline_with_stock_classes(run, exported):
    code = f"""
import json
from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline
tok = AutoTokenizer.from_pretrained({str(exported)!r})
model = AutoModelForMaskedLM.from_pretrained({str(exported)!r})
preds = pipeline("fill-mask", model=model, tokenizer=tok)("대한민국의 수도는 [MASK]이다.", top_k=3)
print(json.dumps([type(model).__name__, len(tok), model.config.vocab_size, len(preds)]))
"""
    proc = subprocess.run([sys.executable, "-c", code], env=subprocess_env(**OFFLINE), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    vocab = run.manifests["vocab"]["meta"]["vocab_size"]
    assert json.loads(proc.stdout.splitlines()[-1]) == ["RobertaForMaskedLM", vocab, vocab, 3]


def test_export_refuses_an_existing_folder_and_an_unknown_arm(run, exported):
    res = CliRunner().invoke(main, ["export", str(run.wd), "--to", str(exported)])
    assert res.exit_code != 0 and f"{exported}: already exists; choose another --to or pass --force" in res.output
    res = CliRunner().invoke(main, ["export", str(run.wd), "--arm", "pii=off", "--to", str(run.root / "x")])
    assert res.exit_code != 0 and "no arm 'pii=off'; arms: default" in res.output
    assert not (run.root / "x").exists()


def test_the_model_card_links_the_corpus_exported_from_the_same_run(run, tmp_path):
    from huggingface_hub import DatasetCard

    corpus = tmp_path / "corpus"
    klue("export", run.wd, "--corpus", "--repo-id", "you/e2e-corpus", "--model-repo", "you/e2e", "--to", corpus)
    klue("export", run.wd, "--dataset", corpus, "--to", tmp_path / "model")
    c = load_card(tmp_path / "model" / "README.md")
    assert c.data.datasets == ["you/e2e-corpus"]
    assert "[you/e2e-corpus](https://huggingface.co/datasets/you/e2e-corpus)" in c.text
    assert "[you/e2e](https://huggingface.co/you/e2e)" in DatasetCard.load(corpus / "README.md").text
    # a corpus exported without a Hub id cannot be linked; one of another run (another pii key) is refused
    klue("export", run.wd, "--corpus", "--to", tmp_path / "bare")
    res = CliRunner().invoke(main, ["export", str(run.wd), "--dataset", str(tmp_path / "bare"), "--to",
                                    str(tmp_path / "m1")])
    assert res.exit_code != 0 and "export the corpus with --repo-id ID" in res.output
    readme = corpus / "README.md"
    key = run.manifests["pii"]["key"]
    readme.write_text(readme.read_text(encoding="utf-8").replace(key, "0" * 64), encoding="utf-8")
    res = CliRunner().invoke(main, ["export", str(run.wd), "--dataset", str(corpus), "--to", str(tmp_path / "m2")])
    assert res.exit_code != 0 and "exported from another run or arm" in res.output
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()


def test_an_exported_checkpoint_carries_its_own_card(run, tmp_path):
    out = tmp_path / "step-3"
    klue("export-checkpoint", run.wd / "arms" / "default" / "pretrain", "--output", out)
    card = load_card(out / "README.md")
    data = card.data.to_dict()
    assert (data["license"], data["datasets"]) == ("other", SOURCES) and "model-index" not in data
    assert card.text.startswith("\n# e2e-tiny-step-3\n")
    state = json.loads(next((run.stages["pretrain"] / "checkpoints").glob("step-*/train_state.json")).read_text())
    assert f"| checkpoint | step {state['step']:,}, {state['tokens']:,} tokens |" in card.text
    assert (out / "LICENSE").read_text(encoding="utf-8") == \
        (run.stages["pretrain"] / "final" / "LICENSE").read_text(encoding="utf-8")
