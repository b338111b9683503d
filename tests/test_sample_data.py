"""The sample shipped in `pipeline/sample/` (what `klue run` with no recipe runs on): rebuilt byte for byte from the
shared data, licensed file by file, read by the project's own readers (collect's corpus readers, the eight task
readers, the benchmark reader), with its planted PII, junk, copies and benchmark sentences where manifest.json says
they are, and the embedded recipe in step with the builder.

Fast on purpose (a few seconds, no model training). The rebuild and the check that every KLUE example is real need
the shared data (KLUE_DATA_DIR) and skip without it; everything else reads the shipped files only.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from datagen import sample as ds
from pipeline.sample import SAMPLE_DIR, corpus_dir, klue_dir

MANIFEST = json.loads((SAMPLE_DIR / "manifest.json").read_text(encoding="utf-8"))
RECIPE = yaml.safe_load((SAMPLE_DIR / "recipe.yaml").read_text(encoding="utf-8"))
DATA = Path(os.environ["KLUE_DATA_DIR"]) if os.environ.get("KLUE_DATA_DIR") else None
needs_data = pytest.mark.skipif(DATA is None or not (DATA / "corpus").is_dir(),
                                reason="needs the shared data (KLUE_DATA_DIR) the sample is built from")
# train / dev examples as the task readers count them (MRC: questions; DST: user turns)
EXPECTED = {"ynat": (800, 200), "sts": (369, 150), "nli": (800, 200), "ner": (800, 200), "re": (800, 200),
            "dp": (800, 200), "mrc": (300, 102), "dst": (3477, 611)}


def _data_files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
            and p.suffix != ".yaml"}  # the embedded default recipe is written by hand, not built


# ---- (a) built, not edited -------------------------------------------------------------------------------------
@needs_data
def test_rebuilding_from_the_shared_data_gives_the_shipped_files_byte_for_byte(tmp_path):
    assert DATA is not None
    ds.build(DATA, tmp_path)
    shipped, fresh = _data_files(SAMPLE_DIR), _data_files(tmp_path)
    assert sorted(fresh) == sorted(shipped), "file lists differ: run `python -m datagen.sample`"
    changed = [rel for rel in shipped if shipped[rel].read_bytes() != fresh[rel].read_bytes()]
    assert changed == [], f"stale sample files {changed[:5]}: run `python -m datagen.sample`"


@needs_data
def test_every_klue_example_is_a_real_one_and_the_split_halves_are_disjoint():
    """The shipped KLUE files hold examples of the shared KLUE files, unchanged; where one dev file was split into
    train and dev (STS, NER, RE, DP), no example is in both."""
    assert DATA is not None
    for task, (train_file, dev_file, name, _) in ds.KLUE.items():
        shipped = {split: (klue_dir() / name.format(split)).read_text(encoding="utf-8") for split in ("train", "dev")}
        if task in ("ner", "dp"):
            _, real_blocks = ds._tsv_blocks(DATA / dev_file)
            real = set(real_blocks)
            parts = {split: set(ds._tsv_blocks(klue_dir() / name.format(split))[1]) for split in shipped}
        else:
            real = {json.dumps(r, ensure_ascii=False, sort_keys=True)
                    for f in (train_file, dev_file) if f for r in json.loads((DATA / f).read_text(encoding="utf-8"))}
            parts = {split: {json.dumps(r, ensure_ascii=False, sort_keys=True) for r in json.loads(text)}
                     for split, text in shipped.items()}
        for split, examples in parts.items():
            assert examples <= real, (task, split, len(examples - real))
        assert not parts["train"] & parts["dev"], task


def test_the_package_helpers_and_the_size_budget():
    """The sample stays a sensible part of the wheel: under 10 MB on disk (about 2.5 MB compressed)."""
    assert corpus_dir() == SAMPLE_DIR / "corpus" and klue_dir() == SAMPLE_DIR / "klue"
    files = _data_files(SAMPLE_DIR)
    total = sum(p.stat().st_size for p in files.values())
    corpus_bytes = sum(p.stat().st_size for r, p in files.items() if r.startswith("corpus/"))
    assert total <= 10 * 2**20, total
    assert 4e6 <= corpus_bytes <= 6e6, corpus_bytes
    assert MANIFEST["corpus_bytes"] == corpus_bytes


# ---- (b) licences ------------------------------------------------------------------------------------------------
def _licence_rows() -> dict[str, str]:
    """LICENSES.md: shipped path pattern -> licence cell."""
    rows = {}
    for line in (SAMPLE_DIR / "LICENSES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            for pattern in re.findall(r"`([^`]+)`", cells[0]):
                rows[pattern] = cells[2]
    return rows


def _expand(pattern: str) -> list[str]:
    m = re.search(r"\{([^}]+)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in _expand(pattern[:m.start()] + alt + pattern[m.end():])]


def test_the_licence_file_lists_every_shipped_file_with_the_recipes_licence():
    rows = _licence_rows()
    covered = {p: lic for pattern, lic in rows.items() for p in _expand(pattern)}
    for rel in _data_files(SAMPLE_DIR):
        if rel in ("LICENSES.md", "manifest.json", "klue/LICENSE-KLUE.md"):
            continue
        owner = next((p for p in covered if rel == p or rel.startswith(p + "/")), None)
        assert owner is not None, f"{rel} is shipped but LICENSES.md does not list it"
    for src in RECIPE["sources"]:
        path = src["path"].split("/*")[0]
        assert covered.get(path) == src["license"], (src["name"], covered.get(path), src["license"])
    assert {covered[p] for p in covered if p.startswith("klue/") and "/mrc/" not in p and "/wos/" not in p} == {
        "CC BY-SA 4.0 (`klue/LICENSE-KLUE.md`)"}
    klue_licence = (klue_dir() / "LICENSE-KLUE.md").read_text(encoding="utf-8")
    assert klue_licence.startswith("Attribution-ShareAlike 4.0 International")


def test_the_recipe_reads_the_sources_as_the_builder_wrote_them():
    by_name = {s["name"]: s for s in RECIPE["sources"]}
    assert list(by_name) == [s.name for s in ds.SOURCES]
    for src in ds.SOURCES:
        spec = by_name[src.name]
        assert {k: v for k, v in spec.items() if k not in ("name", "path", "license")} == src.recipe, src.name
        assert spec["path"].split("/*")[0] == src.out and spec["license"] == src.licence
    stages = RECIPE["stages"]
    assert stages["filter"]["per_source"] == ds.PER_SOURCE
    assert [b["path"] for b in stages["decontaminate"]["benchmarks"]] == list(ds.BENCHMARKS.values())
    assert {k: stages["decontaminate"][k] for k in ds.DECONTAMINATE} == ds.DECONTAMINATE
    assert stages["finetune"]["generated"] == ["mrc", "dst"]


# ---- (c) the task readers --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_task_is_read_by_its_own_reader(name):
    from finetune.data import load_task_data
    from finetune.registry import get_task

    task = get_task(name, data_dir=klue_dir())
    data = load_task_data(task, klue_dir(), split="auto", eval_fraction=0.2, max_train=None, max_eval=None)
    assert data.source["split"] == "official", data.source  # a train file and a dev file, as in KLUE
    # the model trains on what the selection split (which chooses its checkpoint) leaves of the training file
    assert (len(data.train) + len(data.select), len(data.eval)) == EXPECTED[name] and data.select
    guids = [e["guid"] for e in data.train + data.select + data.eval]
    assert len(set(guids)) == len(guids)


def test_the_official_label_lists_and_every_label_in_use():
    from datagen.wos import SLOTS
    from finetune.registry import get_task
    from finetune.tasks.re import OFFICIAL_RELATIONS

    d = klue_dir()
    relations = json.loads((d / "re" / "relation_list.json").read_text(encoding="utf-8"))["relations"]
    assert relations == OFFICIAL_RELATIONS
    assert sorted(json.loads((d / "wos" / "ontology.json").read_text(encoding="utf-8"))) == sorted(SLOTS)
    ynat = get_task("ynat", data_dir=d).read_file(d / "ynat" / "ynat-v1_train.json")
    assert len({e["label"] for e in ynat}) == 7
    nli = get_task("nli", data_dir=d).read_file(d / "nli" / "klue-nli-v1.1_dev.json")
    assert set(Counter(e["label"] for e in nli)) == {0, 1, 2}
    ner = get_task("ner", data_dir=d).read_file(d / "ner" / "klue-ner-v1.1_train.tsv")
    assert {t for e in ner for t in e["tags"]} == set(range(13))  # every B-/I- tag of the six types, and O


# ---- (d) the corpus --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus() -> tuple[dict[tuple[str, int], str], Counter[str]]:
    """(file, locator) -> document text, as the collect stage's readers give them (locator: the reader's line / row
    number, 0 for a whole file), and the quarantined records as file:reason counts."""
    from corpora.readers import Bad
    from testkit.sample_records import locator, sample_records

    docs: dict[tuple[str, int], str] = {}
    bad: Counter[str] = Counter()
    for _, rel, rec in sample_records():
        if isinstance(rec, Bad):
            bad[f"{rel}:{rec.reason}"] += 1
            continue
        docs[(rel, locator(rec))] = rec.text
    return docs, bad


def test_corpus_readers_read_every_record_and_quarantine_the_malformed_ones(corpus):
    docs, bad = corpus
    assert bad == {"corpus/petitions.jsonl:bad_json": 1, "corpus/petitions.jsonl:missing_text": 1,
                   "corpus/nsmc.tsv:ragged_row": 1}
    per_file = Counter(rel.split("/")[1] if not rel.startswith("corpus/law/") else "law" for rel, _ in docs)
    expected = {Path(s.out).name if s.name != "law" else "law": sum(MANIFEST["sources"][s.name]["documents"].values())
                for s in ds.SOURCES}
    assert per_file == expected


def test_every_pii_type_is_in_the_corpus_at_its_gold_offsets(corpus):
    from corpora.pii.types import ALL_TYPES

    docs, _ = corpus
    per_type = Counter(g[2] for g in MANIFEST["gold"])
    assert set(per_type) == set(ALL_TYPES) and min(per_type.values()) >= 20, per_type
    for rel, where, label, start, end, text in MANIFEST["gold"]:
        assert docs[(rel, where)][start:end] == text, (rel, where, label)
    with_pii = {(g[0], g[1]) for g in MANIFEST["gold"]}
    rate = len(with_pii) / sum(1 for rel, _ in docs if not rel.startswith("corpus/law/"))
    assert 0.02 < rate < 0.04, rate  # PII_RATE of the documents (junk and copies carry none)


def test_planted_copies_are_what_dedup_catches(corpus):
    from corpora.dedup import exact_key, shingle_hashes

    docs, _ = corpus
    kinds = Counter(d[4] for d in MANIFEST["duplicates"])
    assert kinds["duplicate"] >= 100 and kinds["near_duplicate"] >= 20, kinds
    for rel, where, of_rel, of_where, kind in MANIFEST["duplicates"]:
        a, b = docs[(rel, where)], docs[(of_rel, of_where)]
        if kind == "duplicate":
            assert exact_key(a) == exact_key(b)
        else:
            assert exact_key(a) != exact_key(b)
            sa, sb = set(shingle_hashes(a, 5).tolist()), set(shingle_hashes(b, 5).tolist())
            assert len(sa & sb) / len(sa | sb) >= 0.8, (rel, where)  # the dedup stage's threshold


def test_planted_junk_fails_the_filters_and_most_real_text_passes(corpus):
    """With the recipe's per-source settings, every planted junk document is dropped; of the real text, most is
    kept (Wikipedia's category-only sections and one-word comments are real junk the filters drop too)."""
    from corpora.filters import FilterChain
    from corpora.stages.filter import FilterParams

    docs, _ = corpus
    params = FilterParams(language="ko", per_source=ds.PER_SOURCE)
    source_of = {Path(s.out).name: s.name for s in ds.SOURCES}
    chains = {s.name: FilterChain(params, s.name) for s in ds.SOURCES}

    def kept(rel: str, text: str) -> bool:
        return chains[source_of[rel.split("/")[1]]](text).reason is None

    junk = [(rel, w) for rel, w in MANIFEST["junk"]]
    assert len(junk) >= 100 and not any(kept(rel, docs[(rel, w)]) for rel, w in junk)
    planted = {tuple(x[:2]) for x in MANIFEST["junk"] + MANIFEST["duplicates"] + MANIFEST["planted"]}
    real = [(k, t) for i, (k, t) in enumerate(sorted(docs.items())) if k not in planted and i % 7 == 0]
    share = sum(kept(rel, t) for (rel, _), t in real) / len(real)
    assert share >= 0.75, share


def test_decontamination_finds_the_planted_sentences_and_what_real_text_holds(corpus):
    """Every planted sentence is a text of its KLUE dev file (as the benchmark reader reads it), and the stage's
    index hits exactly the documents that hold one: the planted ones and those the manifest found by themselves."""
    from corpora.benchmarks import iter_texts
    from corpora.decontaminate import BenchmarkIndex, word_hashes
    from corpora.lang import get_language

    ko = get_language("ko")
    docs, _ = corpus
    names = list(ds.BENCHMARKS)
    texts = {b: list(iter_texts(SAMPLE_DIR / ds.BENCHMARKS[b])) for b in names}
    assert {p[2] for p in MANIFEST["planted"]} == set(names)
    for rel, where, benchmark, sentence in MANIFEST["planted"]:
        assert sentence in texts[benchmark] and sentence in docs[(rel, where)]
    index = BenchmarkIndex.build([(b, texts[b]) for b in names], **ds.DECONTAMINATE, lang=ko)
    hits = {k for k, text in docs.items() if index.matches(word_hashes(text, ko))[0]}
    assert hits == {tuple(p[:2]) for p in MANIFEST["planted"]} | {tuple(n[:2]) for n in MANIFEST["natural_contamination"]}
