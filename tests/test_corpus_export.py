"""`klue export WORKDIR --corpus` (pretrain/publish_corpus.py) and its dataset card
(pipeline/release/dataset_card.py), on a real run of the end-to-end fixture recipe through `encode` (seven sources
in six formats, planted duplicates, PII, junk and a benchmark sentence; arms `pii=on` and `pii=off`), about 20 s on
2 cores.

What is checked: `datasets.load_dataset("parquet", data_dir=DIR)` returns exactly the documents the `pii` stage
kept (count, ids, texts), split as `encode` held them out; `DatasetCard.load` reads licence, language and
configs; every number of the card equals the one recomputed here from the manifests; `pii_types` is the
detected types of each document on the arm that replaced them and empty on the one that did not; the export is
byte-deterministic and shards by size with the Hub's names; bad requests are errors that say what is wrong.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from corpora.pii.spans import read_spans, spans_name
from corpora.shards import iter_docs, list_shards
from pipeline.cli import main
from pretrain.encode import is_held_out
from pretrain.publish_corpus import export_corpus
from testkit.toy import sha256, subprocess_env

pytestmark = pytest.mark.slow

E2E = Path(__file__).parent / "fixtures" / "e2e"
GOLD = Path(__file__).parent / "fixtures" / "pii" / "synth_gold.jsonl"
REPO = Path(__file__).resolve().parents[1]
ON, OFF = "pii=on", "pii=off"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("corpus")
    wd = root / "wd"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(E2E / "recipe.yaml"), "--workdir",
                           str(wd), "--workers", "1", "--until", "encode"], cwd=REPO, capture_output=True, text=True,
                          env=subprocess_env(KLUE_E2E_DIR=str(E2E), OMP_NUM_THREADS="1",
                                             TOKENIZERS_PARALLELISM="false"), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rec = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    stages = {a["name"]: {s["stage"]: wd / s["path"] for s in a["stages"]} for a in rec["arms"]}
    return SimpleNamespace(root=root, wd=wd, stages=stages)


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def export(run, name: str, *args: str) -> Path:
    to = run.root / name
    res = CliRunner().invoke(main, ["export", str(run.wd), "--corpus", "--to", str(to), *args],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return to


@pytest.fixture(scope="module")
def on(run) -> Path:
    return export(run, "on", "--arm", ON, "--repo-id", "you/e2e-corpus", "--pii-eval", str(GOLD))


def card(folder: Path):
    from huggingface_hub import DatasetCard

    return DatasetCard.load(folder / "README.md")


def kept_docs(folder: Path) -> dict[str, str]:
    return {d.id: d.text for s in list_shards(folder) for d in iter_docs(s)}


def test_load_dataset_returns_exactly_the_documents_the_pii_stage_kept(run, on):
    from datasets import load_dataset

    ds = load_dataset("parquet", data_dir=str(on))
    pii = run.stages[ON]["pii"]
    want = kept_docs(pii)
    enc = manifest(run.stages[ON]["encode"])
    held = {i for i in want if is_held_out(i, enc["seed"], enc["params"]["eval_fraction"])}
    assert set(ds) == {"train", "validation"}
    got = {split: dict(zip(ds[split]["id"], ds[split]["text"], strict=True)) for split in ds}
    assert len(ds["train"]) + len(ds["validation"]) == len(want) == manifest(pii)["funnel"]["docs_kept"]
    assert set(got["validation"]) == held and len(held) == enc["meta"]["docs"]["eval"] > 0
    assert {**got["train"], **got["validation"]} == want
    assert set(ds["train"]["license"]) >= {"CC0 (test fixture)", "public documents"}
    assert set(ds["train"]["language"]) == {"ko"}


def test_pii_types_are_the_replaced_types_on_one_arm_and_empty_on_the_other(run, on):
    det = run.stages[ON]["pii_detect"]
    want = {}
    for shard in list_shards(run.stages[ON]["pii"]):
        for doc_id, spans in read_spans(det / spans_name(shard)).items():
            want[doc_id] = sorted({s.type for s in spans})
    table = pq.read_table(on / "data").to_pydict()
    got = {i: t for i, t in zip(table["id"], table["pii_types"], strict=True) if t}
    assert got == want and len(got) > 0
    texts = dict(zip(table["id"], table["text"], strict=True))
    assert all(f"[{t}]" in texts[i] for i, types in got.items() for t in types)
    off = export(run, "off", "--arm", OFF)
    assert pq.read_table(off / "data").column("pii_types").to_pylist() == [[]] * len(kept_docs(run.stages[OFF]["pii"]))
    assert "PII replacement was **off** for this dataset (arm `pii=off`)" in card(off).text


def test_dataset_card_metadata_is_what_the_hub_reads(on):
    from pipeline.release.dataset_card import check_dataset_metadata

    c = card(on)
    d = c.data.to_dict()
    assert d["language"] == ["ko"] and d["license"] == "other" and d["license_name"] == "mixed-source-licenses"
    assert d["configs"] == [{"config_name": "default", "data_files": [
        {"split": "train", "path": "data/train-*"}, {"split": "validation", "path": "data/validation-*"}]}]
    assert d["task_categories"] == ["fill-mask"] and d["size_categories"] == ["n<1K"]
    assert d["klue_pipeline"]["repo_id"] == "you/e2e-corpus" and d["klue_pipeline"]["arm"] == ON
    assert check_dataset_metadata(c.data, on) == []
    licence = (on / "LICENSE").read_text(encoding="utf-8")
    assert "CC0 (test fixture)" in licence and "public documents" in licence
    assert 'load_dataset("you/e2e-corpus")' in c.text
    # the recipe as recorded, without the machine's folders: paths relative to the recipe's folder
    assert "path: sources/news_lines.txt" in c.text and str(REPO) not in c.text and str(on.parent) not in c.text


def row(text: str, *cells: str) -> bool:
    """Whether the markdown `text` has a table row starting with these cells."""
    return re.search(r"^\| " + re.escape(" | ".join(cells)) + r" \|", text, re.M) is not None


def test_every_number_in_the_card_equals_the_manifests(run, on):
    text = card(on).text
    st = {k: manifest(v) for k, v in run.stages[ON].items()}
    # the funnel: documents per source after every stage
    for source, f in st["collect"]["by_source"].items():
        cells = [f"{f['docs_in']:,}", *(f"{st[s]['by_source'].get(source, {}).get('docs_kept', 0):,}"
                                         for s in ("filter", "dedup", "decontaminate", "pii"))]
        assert row(text, f"`{source}`", _licence(run, source), *cells), source
    # removals per stage, reason and source, and their totals
    for stage in ("collect", "filter", "dedup", "decontaminate", "pii"):
        reasons = Counter(st[stage]["funnel"]["dropped"])
        if st[stage]["funnel"]["quarantined"]:
            reasons["quarantined"] = st[stage]["funnel"]["quarantined"]
        for reason, n in reasons.items():
            if n:
                assert re.search(rf"^\| {stage} \| {reason} \|.* \| {n:,} \|$", text, re.M), (stage, reason)
    # dedup, decontamination, PII
    dd = st["dedup"]["funnel"]["dropped"]
    assert f"{dd.get('exact_duplicate', 0):,} exact and {dd.get('near_duplicate', 0):,} near duplicates" in text
    for name, b in st["decontaminate"]["meta"]["report"]["benchmarks"].items():
        assert row(text, name, f"{b['texts']:,}", f"{b['docs']:,}")
    for t, n in st["pii_detect"]["meta"]["report"]["spans_per_type"].items():
        replaced = st["pii"]["meta"]["report"]["per_type"][t]["spans"]
        assert row(text, t, f"{n:,}", f"{replaced:,}")
    rep = st["pii"]["meta"]["report"]
    assert f"{rep['spans_changed']:,} spans in {rep['docs_changed']:,} documents were changed" in text
    # splits, per source and in all
    table = pq.read_table(on / "data").to_pydict()
    enc = st["encode"]
    split = ["validation" if is_held_out(i, enc["seed"], enc["params"]["eval_fraction"]) else "train"
             for i in table["id"]]
    for s in ("train", "validation"):
        assert re.search(rf"^\| {s} \| {split.count(s):,} \| `data/{s}-00000-of-00001.parquet` \|$", text, re.M)
    per = Counter(zip(table["source"], split, strict=True))
    for source in st["collect"]["by_source"]:
        assert re.search(rf"^\| `{source}` \|.*\| {per[source, 'train']:,} \| {per[source, 'validation']:,} \|$",
                         text, re.M), source
    for stage in ("collect", "filter", "dedup", "decontaminate", "pii_detect", "pii"):
        assert row(text, stage, f"`{st[stage]['key']}`")


def _licence(run, source: str) -> str:
    rec = json.loads((run.wd / "run.json").read_text(encoding="utf-8"))
    return next(s.get("license") or "none given" for s in rec["recipe"]["sources"] if s["name"] == source)


def test_measured_pii_recall_is_the_detectors_on_the_gold_file(run, on):
    from corpora.pii.engine import PiiDetector
    from corpora.pii.evaluate import evaluate_file

    res = evaluate_file(GOLD, PiiDetector(threshold=manifest(run.stages[ON]["pii_detect"])["params"]["threshold"], language="ko"))
    o = res["overall"]
    assert row(card(on).text, "**all targeted**", f"{o['support']:,}", f"{o['recall']:.3f}",
               f"{o['recall_cover']:.3f}", f"{o['precision']:.3f}")


def test_export_is_deterministic_and_shards_by_size_with_the_hubs_names(run, on, tmp_path):
    again = export_corpus(run.wd, tmp_path / "again", arm=ON, repo_id="you/e2e-corpus", pii_eval=GOLD)
    assert again.docs == {"train": pq.read_table(on / "data" / "train-00000-of-00001.parquet").num_rows,
                          "validation": pq.read_table(on / "data" / "validation-00000-of-00001.parquet").num_rows}
    for f in (on / "data").iterdir():
        assert sha256(f) == sha256(tmp_path / "again" / "data" / f.name), f.name
    assert (on / "README.md").read_bytes() == (tmp_path / "again" / "README.md").read_bytes()
    small = export_corpus(run.wd, tmp_path / "small", arm=ON, shard_mb=0.004)  # ~4 KB of text per file
    names = small.files["train"]
    n = len(names)
    assert n > 2 and names == [f"data/train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    whole = pq.read_table(on / "data" / "train-00000-of-00001.parquet").to_pydict()
    parts = [pq.read_table(tmp_path / "small" / name).to_pydict() for name in names]
    assert [i for p in parts for i in p["id"]] == whole["id"]  # same documents, same order


def test_an_earlier_stage_exports_its_own_documents_without_pii_replacement(run, tmp_path):
    out = export_corpus(run.wd, tmp_path / "dedup", arm=ON, stage="dedup")
    assert sum(out.docs.values()) == manifest(run.stages[ON]["dedup"])["funnel"]["docs_kept"]
    table = pq.read_table(tmp_path / "dedup" / "data").to_pydict()
    assert set(table["id"]) == set(kept_docs(run.stages[ON]["dedup"]))
    assert all(t == [] for t in table["pii_types"])
    text = card(tmp_path / "dedup").text
    assert "## PII\n\nNot replaced: this export is of the `dedup` stage" in text
    assert "decontamination" not in text.split("## Curation")[1].split("## Deduplication")[0]


@pytest.mark.parametrize("args, message", [
    (["--stage", "vocab"], "not a corpus stage"),
    ([], "2 arms (pii=on, pii=off); name one with --arm"),
    (["--arm", "pii=maybe"], "no arm 'pii=maybe'"),
])
def test_bad_requests_are_errors_that_say_what_is_wrong(run, tmp_path, args, message):
    res = CliRunner().invoke(main, ["export", str(run.wd), "--corpus", "--to", str(tmp_path / "x"), *args])
    assert res.exit_code != 0 and message in res.output, res.output
    assert not (tmp_path / "x").exists()


def test_options_of_the_other_export_are_refused_and_an_existing_folder_is_kept(run, on):
    res = CliRunner().invoke(main, ["export", str(run.wd), "--arm", ON, "--repo-id", "x/y", "--to", str(on)])
    assert res.exit_code != 0 and "--repo-id: only with --corpus" in res.output
    before = sha256(on / "README.md")
    res = CliRunner().invoke(main, ["export", str(run.wd), "--corpus", "--arm", ON, "--to", str(on)])
    assert res.exit_code != 0 and "already exists" in res.output
    assert sha256(on / "README.md") == before


def test_toxicity_scores_are_a_column_and_its_drops_are_counted(tmp_path):
    import corpora.toxicity
    from corpora.toxicity.scores import read_scores, scores_name

    sample = Path(corpora.toxicity.__file__).parent / "sample.tsv"
    wd = tmp_path / "wd"
    sets = ["variants=null", "stages.toxicity.enabled=true", f"stages.toxicity.train_data={sample}",
            "stages.toxicity.action=drop", "stages.toxicity.threshold=0.5"]
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(E2E / "recipe.yaml"), "--workdir",
                           str(wd), "--workers", "1", "--until", "pii", *(a for s in sets for a in ("--set", s))],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=subprocess_env(KLUE_E2E_DIR=str(E2E), OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = export_corpus(wd, tmp_path / "tox")
    rec = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    st = {s["stage"]: wd / s["path"] for s in rec["arms"][0]["stages"]}
    scores = {}
    for shard in list_shards(st["decontaminate"]):
        scores.update(read_scores(st["toxicity"] / scores_name(shard)))
    table = pq.read_table(tmp_path / "tox" / "data").to_pydict()
    assert [round(x, 6) for x in table["toxicity"]] == [round(scores[i].score, 6) for i in table["id"]]
    dropped = manifest(st["pii"])["funnel"]["dropped"].get("toxicity", 0)
    assert dropped > 0 and max(table["toxicity"]) <= 0.5
    assert out.columns[-1] == "toxicity"
    assert f"documents above 0.5 were left out ({dropped:,})" in card(tmp_path / "tox").text
