"""The sample data shipped in `pipeline/sample/` (what `klue run` with no recipe runs on): regenerated
byte for byte, read by the project's own readers (collect's corpus readers, the eight task readers, the
benchmark reader), with every PII type, duplicates and planted benchmark sentences where the generator says,
and labels a bag-of-n-grams model can learn.

Fast on purpose (a few seconds of generation, no model training): run with OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pipeline.sample import SAMPLE_DIR, corpus_dir, klue_dir
from pipeline.sample import make_sample as ms

# train / dev examples as the task readers count them (MRC: questions; DST: user turns)
EXPECTED = {"ynat": (400, 150), "sts": (400, 150), "nli": (400, 150), "ner": (400, 150), "re": (400, 150),
            "dp": (400, 150), "mrc": (300, 102), "dst": (3477, 611)}
# the per-source filter thresholds the sample is meant to run with (short informal sources switch off the
# rules for long web documents, as recipes/klue-tiny-cpu.yaml does for its line sources)
SHORT = {"min_chars": 10, "gopher_min_words": None, "line_punct_thr": None, "min_stop_words": None,
         "new_line_ratio": None}
PER_SOURCE = {"forum": SHORT, "reviews": SHORT, "qa": SHORT, "official": {"new_line_ratio": None, "char_dup_ratio": None}}
SOURCE_OF = {"corpus/news.jsonl": "news", "corpus/forum.txt": "forum", "corpus/wiki.txt": "wiki",
             "corpus/reviews.tsv": "reviews", "corpus/qa.csv": "qa"}


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> tuple[Path, ms.Sample]:
    out = tmp_path_factory.mktemp("sample")
    return out, ms.write_all(out)


def _data_files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
            and p.name != "recipe.yaml"}  # the embedded default recipe is written by hand, not generated


def _specs() -> dict[str, object]:
    from corpora.sources import SourceSpec

    lic = "CC0 (generated sample)"
    return {
        "corpus/news.jsonl": SourceSpec(name="news", path="x", format="jsonl", meta_fields=["title", "category"],
                                        license=lic),
        "corpus/forum.txt": SourceSpec(name="forum", path="x", format="text", unit="line", license=lic),
        "corpus/wiki.txt": SourceSpec(name="wiki", path="x", format="text", unit="block", license=lic),
        "corpus/reviews.tsv": SourceSpec(name="reviews", path="x", format="tsv", text_columns=["document"],
                                         meta_fields=["label"], license=lic),
        "corpus/qa.csv": SourceSpec(name="qa", path="x", format="csv", text_columns=["Q", "A"], license=lic),
        "corpus/official": SourceSpec(name="official", path="x", format="text", unit="file", license=lic),
    }


@pytest.fixture(scope="module")
def corpus() -> dict[tuple[str, int], str]:
    """(file, locator) -> document text, as the collect stage's readers give them (locator: the reader's
    line / row number, 0 for a whole file); quarantined records under (file, -1) as their reason codes."""
    from corpora.readers import Bad, ReadOptions, SourceFile, read_file

    docs: dict[tuple[str, int], str] = {}
    bad: Counter[str] = Counter()
    for rel, spec in _specs().items():
        path = SAMPLE_DIR / rel
        files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
        for f in files:
            frel = f.relative_to(SAMPLE_DIR).as_posix()
            for rec in read_file(spec, SourceFile(f, f.name), ReadOptions()):  # type: ignore[arg-type]
                if isinstance(rec, Bad):
                    bad[f"{frel}:{rec.reason}"] += 1
                    continue
                where = rec.where.get("row", rec.where.get("line", 0))
                docs[(frel, where)] = rec.text
    docs[("bad", -1)] = json.dumps(dict(bad))
    return docs


# ---- (a) deterministic ---------------------------------------------------------------------------------------
def test_regenerating_gives_the_shipped_files_byte_for_byte(regenerated):
    out, _ = regenerated
    shipped, fresh = _data_files(SAMPLE_DIR), _data_files(out)
    assert sorted(fresh) == sorted(shipped), "file lists differ: run `python -m pipeline.sample.make_sample`"
    changed = [rel for rel in shipped if shipped[rel].read_bytes() != fresh[rel].read_bytes()]
    assert changed == [], f"stale sample files {changed[:5]}: run `python -m pipeline.sample.make_sample`"


def test_the_package_helpers_and_the_size_budget():
    assert corpus_dir() == SAMPLE_DIR / "corpus" and klue_dir() == SAMPLE_DIR / "klue"
    files = _data_files(SAMPLE_DIR)
    total = sum(p.stat().st_size for p in files.values())
    corpus_bytes = sum(p.stat().st_size for r, p in files.items() if r.startswith("corpus/"))
    assert total <= 6 * 2**20, total
    assert 1.5e6 <= corpus_bytes <= 3e6, corpus_bytes
    manifest = json.loads((SAMPLE_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["corpus_bytes"] == corpus_bytes


# ---- (b) the task readers --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_task_is_read_by_its_own_reader(name):
    from finetune.data import load_task_data
    from finetune.registry import get_task

    task = get_task(name, data_dir=klue_dir())
    data = load_task_data(task, klue_dir(), split="auto", eval_fraction=0.2, max_train=None, max_eval=None)
    assert data.source["split"] == "official", data.source  # a train file and a dev file, as in KLUE
    assert (len(data.train), len(data.eval)) == EXPECTED[name]
    guids = [e["guid"] for e in data.train + data.eval]
    assert len(set(guids)) == len(guids)


def test_label_lists_are_the_official_ones():
    from finetune.tasks.re import OFFICIAL_RELATIONS
    from finetune.wos_synth import SLOTS
    from pipeline.sample.klue_tasks import RELATIONS

    assert RELATIONS == OFFICIAL_RELATIONS
    relations = json.loads((klue_dir() / "re" / "relation_list.json").read_text(encoding="utf-8"))["relations"]
    assert relations == OFFICIAL_RELATIONS
    ontology = json.loads((klue_dir() / "wos" / "ontology.json").read_text(encoding="utf-8"))
    assert sorted(ontology) == sorted(SLOTS)


def test_task_labels_cover_the_label_sets():
    from finetune.registry import get_task

    d = klue_dir()
    ynat = get_task("ynat", data_dir=d).read_file(d / "ynat" / "ynat-v1.1_train.json")
    assert len({e["label"] for e in ynat}) == 7
    nli = get_task("nli", data_dir=d).read_file(d / "nli" / "klue-nli-v1.1_dev.json")
    assert Counter(e["label"] for e in nli) == {0: 50, 1: 50, 2: 50}
    sts = json.loads((d / "sts" / "klue-sts-v1.1_train.json").read_text(encoding="utf-8"))
    scores = [r["labels"]["real-label"] for r in sts]
    assert min(scores) < 1 and max(scores) > 4.5 and 0.3 < sum(r["labels"]["binary-label"] for r in sts) / len(sts) < 0.7
    ner = get_task("ner", data_dir=d).read_file(d / "ner" / "klue-ner-v1.1_train.tsv")
    tags = {t for e in ner for t in e["tags"]}
    assert tags == set(range(13))  # every B-/I- tag of the six types, and O
    mrc = json.loads((d / "mrc" / "klue-mrc-v1.1_train.json").read_text(encoding="utf-8"))
    qas = [q for a in mrc["data"] for p in a["paragraphs"] for q in p["qas"]]
    assert {q["question_type"] for q in qas} == {1, 2, 3}
    assert all(q["is_impossible"] == (q["question_type"] == 3) and (not q["answers"]) == q["is_impossible"]
               and (not q["is_impossible"] or q["plausible_answers"]) for q in qas)
    assert 0.2 < sum(q["is_impossible"] for q in qas) / len(qas) < 0.4


def test_dp_trees_are_head_final_with_one_root():
    from finetune.registry import get_task

    d = klue_dir()
    for split in ("train", "dev"):
        for ex in get_task("dp", data_dir=d).read_file(d / "dp" / f"klue-dp-v1.1_{split}.tsv"):
            heads = ex["heads"]
            assert heads[-1] == 0 and heads.count(0) == 1, ex
            assert all(h > i + 1 for i, h in enumerate(heads[:-1])), ex  # every head to the right: Korean is head-final


# ---- (c) the corpus -------------------------------------------------------------------------------------------
def test_corpus_readers_read_every_record_and_quarantine_the_malformed_ones(corpus, regenerated):
    _, sample = regenerated
    bad = json.loads(corpus[("bad", -1)])
    assert bad == {"corpus/news.jsonl:bad_json": 1, "corpus/news.jsonl:missing_text": 1, "corpus/reviews.tsv:ragged_row": 1}
    assert {k for k in sample.doc_kinds.values()} == {"clean", "junk", "duplicate", "near_duplicate", "contaminated"}
    assert set(sample.doc_kinds) == {k for k in corpus if k[0] != "bad"}  # one kind for every record read
    for rel, kinds in sample.kinds.items():
        n_docs = sum(n for k, n in kinds.items() if k != "malformed")
        prefix = rel + "/" if rel == "corpus/official" else rel
        read = sum(1 for f, _ in corpus if f == rel or f.startswith(prefix))
        assert read == n_docs, (rel, read, n_docs)


def test_every_pii_type_is_in_the_corpus_at_its_gold_offsets(corpus, regenerated):
    from corpora.pii.types import ALL_TYPES

    _, sample = regenerated
    per_type = Counter(g.label for g in sample.pii)
    assert set(per_type) == set(ALL_TYPES), set(ALL_TYPES) - set(per_type)
    assert min(per_type.values()) >= 5, per_type
    for g in sample.pii:
        text = corpus[(g.file, g.where)]
        assert text[g.start:g.end] == g.text, g
    official = {g.label for g in sample.pii if g.file.startswith("corpus/official/")}
    assert len(official) >= 14  # the letters and answers carry nearly every type


def test_planted_duplicates_are_what_dedup_catches(corpus, regenerated):
    from corpora.dedup import exact_key, shingle_hashes

    _, sample = regenerated
    kinds = Counter(d.kind for d in sample.duplicates)
    assert kinds["duplicate"] >= 50 and kinds["near_duplicate"] >= 30, kinds
    assert {d.file.split("/")[1] for d in sample.duplicates} >= {"news.jsonl", "forum.txt", "wiki.txt", "official"}
    for d in sample.duplicates:
        a, b = corpus[(d.file, d.where)], corpus[(d.of_file, d.of_where)]
        if d.kind == "duplicate":
            assert exact_key(a) == exact_key(b), d
        else:
            assert exact_key(a) != exact_key(b), d
            sa, sb = set(shingle_hashes(a, 5).tolist()), set(shingle_hashes(b, 5).tolist())
            assert len(sa & sb) / len(sa | sb) >= 0.8, d  # the dedup stage's default threshold


def test_junk_fails_the_filters_and_clean_text_passes(corpus, regenerated):
    """With the per-source thresholds the sample is meant for (PER_SOURCE), the planted junk is dropped and
    clean documents are kept."""
    from corpora.filters import FilterChain
    from corpora.stages.filter import FilterParams

    _, sample = regenerated
    params = FilterParams(per_source=PER_SOURCE)
    chains = {src: FilterChain(params, src) for src in ("news", "forum", "wiki", "reviews", "qa", "official")}
    junk, clean = Counter(), Counter()
    for i, ((rel, where), text) in enumerate(sorted(corpus.items())):
        kind = sample.doc_kinds.get((rel, where))
        if kind == "junk":
            junk[chains[SOURCE_OF.get(rel, "official")](text).reason is not None] += 1
        elif kind == "clean" and i % 5 == 0:  # a fifth of the clean documents keeps this test fast
            clean[chains[SOURCE_OF.get(rel, "official")](text).reason is None] += 1
    assert junk[False] == 0 and junk[True] >= 100, junk
    assert clean[True] / sum(clean.values()) >= 0.97, clean


def test_planted_benchmark_sentences_are_found_by_decontamination_and_nothing_else(corpus, regenerated):
    """Every planted sentence is in its KLUE dev file (as the benchmark reader reads it), and the
    decontamination index (n=13, min_words=5, the stage's defaults) hits exactly the documents holding them."""
    from corpora.benchmarks import iter_texts
    from corpora.decontaminate import BenchmarkIndex, word_hashes

    _, sample = regenerated
    assert {p.benchmark for p in sample.planted} == {"ynat", "sts", "nli", "ner", "re", "dp", "mrc"}
    names = list(ms.BENCHMARKS)
    texts = {b: list(iter_texts(SAMPLE_DIR / ms.BENCHMARKS[b])) for b in names}
    for p in sample.planted:
        assert p.sentence in texts[p.benchmark], p
        assert p.sentence in corpus[(p.file, p.where)], p
    index = BenchmarkIndex.build([(b, texts[b]) for b in names], n=13, min_words=5)
    hits = {(rel, where) for (rel, where), text in corpus.items() if rel != "bad" and index.matches(word_hashes(text))[0]}
    assert hits == {(p.file, p.where) for p in sample.planted}


# ---- (d) learnable labels -------------------------------------------------------------------------------------
def _tfidf_lr(train_x: list[str], train_y: list, dev_x: list[str], dev_y: list) -> float:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True)
    model = LogisticRegression(max_iter=2000, C=5.0).fit(vec.fit_transform(train_x), train_y)
    return float(f1_score(dev_y, model.predict(vec.transform(dev_x)), average="macro"))


def _load(rel: str) -> list[dict]:
    return json.loads((klue_dir() / rel).read_text(encoding="utf-8"))


def test_ynat_topics_are_learnable_from_the_title():
    tr, dv = _load("ynat/ynat-v1.1_train.json"), _load("ynat/ynat-v1.1_dev.json")
    f1 = _tfidf_lr([r["title"] for r in tr], [r["label"] for r in tr], [r["title"] for r in dv], [r["label"] for r in dv])
    assert f1 > 0.8  # chance: 1/7


def test_nli_and_re_need_the_pair_not_one_side():
    """NLI: premise and hypothesis together are learnable, but the hypothesis alone does not give the label
    away; RE: the marked entities decide the relation (the sentence alone scores lower)."""
    from finetune.tasks.re import mark_entities

    tr, dv = _load("nli/klue-nli-v1.1_train.json"), _load("nli/klue-nli-v1.1_dev.json")
    hyp = _tfidf_lr([r["hypothesis"] for r in tr], [r["gold_label"] for r in tr], [r["hypothesis"] for r in dv],
                    [r["gold_label"] for r in dv])
    assert 0.45 < hyp < 0.95  # chance 1/3; 1.0 would mean a hypothesis-only shortcut
    tr, dv = _load("re/klue-re-v1.1_train.json"), _load("re/klue-re-v1.1_dev.json")

    def marked(r: dict) -> str:
        s, o = r["subject_entity"], r["object_entity"]
        return mark_entities(r["sentence"], (s["start_idx"], s["end_idx"]), (o["start_idx"], o["end_idx"]))

    with_markers = _tfidf_lr([marked(r) for r in tr], [r["label"] for r in tr], [marked(r) for r in dv], [r["label"] for r in dv])
    sentence_only = _tfidf_lr([r["sentence"] for r in tr], [r["label"] for r in tr], [r["sentence"] for r in dv],
                              [r["label"] for r in dv])
    assert with_markers > 0.7 and with_markers > sentence_only + 0.05, (with_markers, sentence_only)


def test_sts_scores_follow_shared_content():
    from scipy.stats import pearsonr

    dv = _load("sts/klue-sts-v1.1_dev.json")

    def overlap(a: str, b: str) -> float:
        x, y = set(a.split()), set(b.split())
        return len(x & y) / len(x | y)

    r = pearsonr([overlap(d["sentence1"], d["sentence2"]) for d in dv], [d["labels"]["real-label"] for d in dv])[0]
    assert 0.2 < r < 0.9  # shared words help, but paraphrases in other words score high too
