"""Writes the sample data that ships inside the package: a small raw Korean corpus and the eight KLUE tasks.

    python -m pipeline.sample.make_sample [OUT_DIR]     # default: this folder (pipeline/sample/)

The output is deterministic: every generator draws from its own `random.Random` seeded with a fixed string,
so the same code writes the same bytes (tests/test_sample_data.py regenerates the folder and compares). Every
text is written from the templates and word lists of this package (`textkit`, `corpus_text`, `klue_tasks`);
nothing is copied from KLUE, KorQuAD, WoS or any other data set. Companies, schools, teams, villages, rivers
and mountains are made up; cities, countries and ministries are real names used as vocabulary; PII values
(names, phone numbers, resident registration numbers, ...) are fake but well-formed, made by
`corpora.pii.synth.fake_value` (valid checksums and layouts, so the detector's validators accept them).

What the scores mean: a model trained and evaluated on these files can only show that the code learns (that
the pipeline runs end to end and that fine-tuning moves above chance). The tasks are templated, much easier
and much smaller than KLUE, and their numbers are not comparable with published KLUE scores.

corpus/ (raw text for the curation stages; each file in a format the collect stage reads)
    news.jsonl          news articles, one JSON object a line: `text` (paragraphs joined by newlines), `title`,
                        `category` (the seven YNAT topics), `date`, `id`. Written register: politics, economy,
                        society, culture, world, IT/science, sports. Some end in a reporter line with an e-mail
                        or a boilerplate line (copyright, "관련 기사"), a few are boilerplate only; exact copies
                        (syndicated reprints) and near copies (one digit or word changed); one line that is not
                        JSON and one record without `text` (quarantined by collect).
    forum.txt           forum posts, one a line (unit: line): informal register of eleven boards (childcare,
                        living alone, second-hand trade, cars, pets, cooking, travel, exercise, jobs, games,
                        study) with the phone numbers, accounts, plates and card numbers people paste; junk
                        lines (too short, UI boilerplate, symbols only, English only), reposts and edited
                        reposts.
    wiki.txt            encyclopedia entries, one block each (unit: block: a title line, then one or two
                        paragraph lines; blocks separated by a blank line): people, rivers, mountains, villages,
                        companies, universities, foods, sports clubs, islands. Stubs, revised and copied entries.
    reviews.tsv         short reviews (tsv with a header `id, document, label`; label 1 positive, 0 negative)
                        of films, products, restaurants and stays, in the clipped style of review sites; too
                        short and symbol-only reviews, repeated one-liners, one ragged row (quarantined).
    qa.csv              question and answer pairs (csv with a header `Q, A, label`; the label is a category):
                        everyday worries, civil-service, health and device questions, questions that paste an
                        account, card, plate, passport or licence number; repeated pairs.
    official/*.txt      one document a file (unit: file): official letters (공문, gongmun_*.txt) and answers to
                        civil complaints (민원 답변, minwon_*.txt), the densest PII: contact blocks, resident,
                        foreign-resident, business and corporate registration numbers, licence, passport,
                        health-insurance and card numbers, accounts, plates, addresses, URLs, IPs. One letter
                        filed twice (exact duplicate), one sent to a second receiver (near duplicate).
    Planted in the corpus: every PII type of `corpora.pii.types.ALL_TYPES` (the gold spans are
    `build_sample().pii`: the values the generator inserted as PII); a few sentences copied from the KLUE dev files below, one document
    each (`build_sample().planted`), which the decontaminate stage should drop; every document's kind (clean,
    junk, duplicate, near_duplicate, contaminated) by its place in its file (`build_sample().doc_kinds`) and
    each planted copy with the document it copies (`build_sample().duplicates`). With the per-source filter
    thresholds of tests/test_sample_data.py (short sources: no rules for long web documents), filters drop the
    junk, dedup the planted copies (plus a few accidental repeats of short reviews and answers), and
    decontamination exactly the planted documents.

klue/ (the official file names and layouts that `finetune` reads; train and dev wherever KLUE has both)
    ynat/ynat-v1.1_{train,dev}.json          headline topic classification: titles from topic templates
    sts/klue-sts-v1.1_{train,dev}.json        sentence pairs scored 0-5 by how many slot values they share
    nli/klue-nli-v1.1_{train,dev}.json        premise/hypothesis pairs; the label follows from comparing the
                                              two (same place and time, another place, another time) and
                                              from cue phrases (negation, "together with")
    ner/klue-ner-v1.1_{train,dev}.tsv         character-level BIO tags (PS, LC, OG, DT, TI, QT) from templates
    re/klue-re-v1.1_{train,dev}.json          templated relations between marked entities, some sentences with
                                              three or four entities where the marked pair decides the label;
                                              re/relation_list.json is the official 30-label list
    dp/klue-dp-v1.1_{train,dev}.tsv           simple head-final sentences with their real dependency trees
                                              (lemmas, POS, heads, DEPREL), built with the sentence
    mrc/klue-mrc-v1.1_{train,dev}.json        KLUE-MRC layout: passages about made-up people, companies and
                                              villages, three questions each (types 1, 2, and 3 = unanswerable,
                                              with `is_impossible` and `plausible_answers`)
    wos/wos-v1.1_{train,dev}.json, wos/ontology.json   dialogues of `finetune.wos_synth` (the official 45
                                              slots), one JSON dialogue a line
JSON files hold one record (MRC: one article) a line inside the list, so they stay small and diffable.

manifest.json: what was written (records and bytes per file, document kinds per source, PII spans per type,
the planted benchmark sentences, examples per task file).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.sample import corpus_text as ct
from pipeline.sample import klue_tasks as kt

HERE = Path(__file__).resolve().parent
SEED = "klue-sample-v1"
SIZES = {"ynat": (400, 150), "sts": (400, 150), "nli": (400, 150), "ner": (400, 150), "re": (400, 150),
         "dp": (400, 150), "mrc": (100, 34), "wos": (300, 60)}  # (train, dev); MRC in articles of 3 questions
CORPUS_SIZES = {"news": 560, "forum": 1800, "wiki": 500, "reviews": 1800, "qa": 1000, "gongmun": 45, "minwon": 49}
WOS_SEED = 2024
# the dev files that the planted sentences come from; the recipe lists them as decontamination benchmarks
BENCHMARKS = {"ynat": "klue/ynat/ynat-v1.1_dev.json", "sts": "klue/sts/klue-sts-v1.1_dev.json",
              "nli": "klue/nli/klue-nli-v1.1_dev.json", "ner": "klue/ner/klue-ner-v1.1_dev.tsv",
              "re": "klue/re/klue-re-v1.1_dev.json", "dp": "klue/dp/klue-dp-v1.1_dev.tsv",
              "mrc": "klue/mrc/klue-mrc-v1.1_dev.json", "wos": "klue/wos/wos-v1.1_dev.json"}


@dataclass(frozen=True)
class GoldSpan:
    """A PII value the generator put in the corpus: the file, the document's place in it (what the collect
    stage's readers call `line` / `row`, 0 for a whole file), character offsets in the document text (end
    exclusive) and the text."""

    file: str
    where: int
    label: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Planted:
    """A document holding a sentence of a KLUE dev file."""

    file: str
    where: int
    benchmark: str  # a key of BENCHMARKS
    sentence: str


@dataclass(frozen=True)
class Duplicate:
    """A planted exact or near duplicate (`kind`) at (file, where) of the document at (of_file, of_where)."""

    file: str
    where: int
    of_file: str
    of_where: int
    kind: str


@dataclass
class Sample:
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> content
    pii: list[GoldSpan] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    doc_kinds: dict[tuple[str, int], str] = field(default_factory=dict)  # (file, where) -> corpus_text.KINDS
    located: dict[int, tuple[str, int]] = field(default_factory=dict, repr=False)  # id(CorpusDoc) -> place
    kinds: dict[str, Counter[str]] = field(default_factory=dict)  # corpus file -> document kind -> count
    examples: dict[str, int] = field(default_factory=dict)  # klue file -> examples the task reader yields


# ---- serialisation -------------------------------------------------------------------------------------------
def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def json_list(records: list[Any]) -> str:
    """A JSON list with one record a line."""
    return "[\n" + ",\n".join(dumps(r) for r in records) + "\n]\n"


def mrc_json(obj: dict[str, Any]) -> str:
    return f'{{"version": {dumps(obj["version"])}, "data": ' + json_list(obj["data"]).rstrip("\n") + "}\n"


# ---- KLUE ----------------------------------------------------------------------------------------------------
def klue_files() -> tuple[dict[str, str], dict[str, Any]]:
    """(relative path -> text, the dev data the corpus copies sentences from)."""
    files: dict[str, str] = {}
    dev: dict[str, Any] = {}
    for split, k in (("train", 0), ("dev", 1)):
        ynat = kt.ynat(split, SIZES["ynat"][k])
        sts = kt.sts(split, SIZES["sts"][k])
        nli = kt.nli(split, SIZES["nli"][k])
        ner = kt.ner(split, SIZES["ner"][k])
        re_ = kt.re_split(split, SIZES["re"][k])
        dp = kt.dp(split, SIZES["dp"][k])
        mrc = kt.mrc(split, SIZES["mrc"][k])
        wos = kt.wos(split, SIZES["wos"][k], WOS_SEED)
        files.update({f"klue/ynat/ynat-v1.1_{split}.json": json_list(ynat),
                      f"klue/sts/klue-sts-v1.1_{split}.json": json_list(sts),
                      f"klue/nli/klue-nli-v1.1_{split}.json": json_list(nli),
                      f"klue/ner/klue-ner-v1.1_{split}.tsv": ner,
                      f"klue/re/klue-re-v1.1_{split}.json": json_list(re_),
                      f"klue/dp/klue-dp-v1.1_{split}.tsv": dp,
                      f"klue/mrc/klue-mrc-v1.1_{split}.json": mrc_json(mrc),
                      f"klue/wos/wos-v1.1_{split}.json": json_list(wos)})
        if split == "dev":
            dev = {"ynat": ynat, "sts": sts, "nli": nli, "ner": ner, "re": re_, "dp": dp, "mrc": mrc}
    files["klue/re/relation_list.json"] = json.dumps(kt.relation_list(), ensure_ascii=False, indent=1) + "\n"
    files["klue/wos/ontology.json"] = json.dumps(kt.wos_ontology(), ensure_ascii=False, indent=1) + "\n"
    return files, dev


def _words(s: str) -> int:
    import re

    return len(re.findall(r"\w+", s))


def planted_sentences(dev: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Corpus source -> [(benchmark, sentence)]: dev texts of at least six words (benchmark texts shorter than
    the n-gram length match whole when they have `min_words` words: 5 by default) and without a person's
    name, so the PII gold stays complete in the documents that hold them."""
    nli = [r["premise"] for r in dev["nli"] if r["source"] in ("wikinews", "policy")]
    sts = [r["sentence1"] for r in dev["sts"] if r["source"].startswith(("airbnb", "policy"))]
    ner = [kt.ner_plain(block)[0] for block in dev["ner"].split("\n\n") if "\t" in block and "B-PS" not in block]
    re_ = [r["sentence"] for r in dev["re"] if "PER" not in (r["subject_entity"]["type"], r["object_entity"]["type"])]
    dp = [t for t in kt.dp_plain(dev["dp"]) if not any(name in t for name in kt.NAMES_NNP)]
    mrc = [a["paragraphs"][0]["context"] for a in dev["mrc"]["data"] if a["news_category"] == "사회"]
    ynat = [r["title"] for r in dev["ynat"]]

    def first(texts: list[str], skip: int = 0) -> str:
        return [t for t in texts if _words(t) >= 6][skip]

    return {
        "news": [("nli", first(nli)), ("ner", first(ner)), ("re", first(re_))],
        "forum": [("sts", first(sts)), ("ynat", first(ynat))],
        "wiki": [("mrc", mrc[0])],
        "reviews": [("sts", first(sts, 5))],
        "qa": [("dp", first(dp))],
    }


# ---- corpus --------------------------------------------------------------------------------------------------
def _gold(sample: Sample, file: str, where: int, d: ct.CorpusDoc, offset: int = 0) -> None:
    text = d.text
    for s in d.doc.spans:
        assert text[s.start:s.end] == s.text, (file, where, s)
        sample.pii.append(GoldSpan(file, where, s.label, s.start + offset, s.end + offset, s.text))


def _account(sample: Sample, file: str, where: int, d: ct.CorpusDoc, planted: list[tuple[str, str]]) -> None:
    sample.kinds.setdefault(file, Counter())[d.kind] += 1
    _gold(sample, file, where, d)
    _locate(sample, file, where, d)
    if d.kind == "contaminated":
        sentence = next(s for b, s in planted if b == d.note and s in d.text)
        sample.planted.append(Planted(file, where, d.note, sentence))


def _locate(sample: Sample, file: str, where: int, d: ct.CorpusDoc) -> None:
    sample.located[id(d)] = (file, where)
    sample.doc_kinds[(file, where)] = d.kind
    if d.of is not None:
        of_file, of_where = sample.located[id(d.of)]
        sample.duplicates.append(Duplicate(file, where, of_file, of_where, d.kind))


def write_news(sample: Sample, docs: list[ct.CorpusDoc], planted: list[tuple[str, str]]) -> str:
    lines = []
    for d in docs:
        lines.append(dumps({"id": d.fields["id"], "title": d.fields["title"], "category": d.fields["category"],
                            "date": d.fields["date"], "text": d.text}))
        _account(sample, "corpus/news.jsonl", len(lines), d, planted)
    # two records the collect stage quarantines: a line cut off mid-record, and a record without its text
    at = len(lines) // 3
    lines.insert(at, '{"id": "news-cut", "title": "전송 중 잘린 기사", "category": "사회", "text": "이 기사는 전송 중에 끊겨')
    lines.insert(2 * at, dumps({"id": "news-notext", "title": "본문 없는 기사", "category": "경제", "body": "본문 필드 이름이 다르다."}))
    sample.kinds["corpus/news.jsonl"]["malformed"] += 2
    # line numbers after the inserts: recompute the locators of what follows them
    _shift(sample, "corpus/news.jsonl", [at + 1, 2 * at + 1])
    return "\n".join(lines) + "\n"


def _shift(sample: Sample, file: str, inserted: list[int]) -> None:
    """Renumber the records of `file` after lines were inserted at the (1-based, final) line numbers."""
    def moved(where: int) -> int:
        for line in sorted(inserted):
            if where >= line:
                where += 1
        return where

    sample.pii[:] = [GoldSpan(g.file, moved(g.where), g.label, g.start, g.end, g.text) if g.file == file else g
                     for g in sample.pii]
    sample.planted[:] = [Planted(p.file, moved(p.where), p.benchmark, p.sentence) if p.file == file else p
                         for p in sample.planted]
    sample.duplicates[:] = [Duplicate(d.file, moved(d.where), d.of_file, moved(d.of_where), d.kind)
                            if d.file == file else d for d in sample.duplicates]
    sample.doc_kinds = {(f, moved(w) if f == file else w): k for (f, w), k in sample.doc_kinds.items()}


def write_lines(sample: Sample, file: str, docs: list[ct.CorpusDoc], planted: list[tuple[str, str]]) -> str:
    for i, d in enumerate(docs, 1):
        assert "\n" not in d.text, d.text
        _account(sample, file, i, d, planted)
    return "\n".join(d.text for d in docs) + "\n"


def write_blocks(sample: Sample, file: str, docs: list[ct.CorpusDoc], planted: list[tuple[str, str]]) -> str:
    """Blocks separated by one blank line; a block's locator is its first line's number (the text reader's)."""
    line = 1
    for d in docs:
        assert "\n\n" not in d.text and d.text.strip() == d.text, d.text
        _account(sample, file, line, d, planted)
        line += d.text.count("\n") + 2
    return "\n\n".join(d.text for d in docs) + "\n"


def write_reviews(sample: Sample, docs: list[ct.CorpusDoc], planted: list[tuple[str, str]]) -> str:
    rng = random.Random(f"{SEED}:review-ids")
    ids = rng.sample(range(1_000_000, 10_000_000), len(docs) + 1)
    rows = ["id\tdocument\tlabel"]
    for i, d in enumerate(docs):
        assert "\t" not in d.text and "\n" not in d.text, d.text
        rows.append(f"{ids[i]}\t{d.text}\t{d.fields['label']}")
        _account(sample, "corpus/reviews.tsv", i + 1, d, planted)
    at = len(rows) // 2
    rows.insert(at, f"{ids[-1]}\t라벨 칸이 빠진 채로 저장된 리뷰입니다")  # ragged: two fields where the header has three
    sample.kinds["corpus/reviews.tsv"]["malformed"] += 1
    _shift(sample, "corpus/reviews.tsv", [at])
    return "\n".join(rows) + "\n"


def write_qa(sample: Sample, docs: list[ct.CorpusDoc], planted: list[tuple[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Q", "A", "label"])
    for i, d in enumerate(docs, 1):
        assert d.text == d.fields["Q"] + "\n" + d.fields["A"], d.text
        w.writerow([d.fields["Q"], d.fields["A"], d.fields["label"]])
        _account(sample, "corpus/qa.csv", i, d, planted)
    return buf.getvalue()


def corpus_files(sample: Sample, dev: dict[str, Any]) -> dict[str, str]:
    plant = planted_sentences(dev)
    n = CORPUS_SIZES
    files = {
        "corpus/news.jsonl": write_news(sample, ct.news(random.Random(f"{SEED}:news"), plant["news"], n["news"]),
                                        plant["news"]),
        "corpus/forum.txt": write_lines(sample, "corpus/forum.txt",
                                        ct.forum(random.Random(f"{SEED}:forum"), plant["forum"], n["forum"]),
                                        plant["forum"]),
        "corpus/wiki.txt": write_blocks(sample, "corpus/wiki.txt",
                                        ct.wiki(random.Random(f"{SEED}:wiki"), plant["wiki"], n["wiki"]),
                                        plant["wiki"]),
        "corpus/reviews.tsv": write_reviews(sample, ct.reviews(random.Random(f"{SEED}:reviews"), plant["reviews"],
                                                               n["reviews"]), plant["reviews"]),
        "corpus/qa.csv": write_qa(sample, ct.qa(random.Random(f"{SEED}:qa"), plant["qa"], n["qa"]), plant["qa"]),
    }
    for name, d in ct.official(random.Random(f"{SEED}:official"), n["gongmun"], n["minwon"]):
        rel = f"corpus/official/{name}"
        files[rel] = d.text
        sample.kinds.setdefault("corpus/official", Counter())[d.kind] += 1
        _gold(sample, rel, 0, d)
        _locate(sample, rel, 0, d)
    return files


# ---- the whole sample ----------------------------------------------------------------------------------------
def _count_examples(files: dict[str, str]) -> dict[str, int]:
    """Examples per task file as the task readers count them (questions for MRC, user turns for WoS)."""
    out = {}
    for rel, text in files.items():
        name = rel.rsplit("/", 1)[-1]
        if name in ("relation_list.json", "ontology.json"):
            continue
        if rel.endswith(".tsv"):
            out[rel] = sum(1 for ln in text.split("\n") if ln.startswith("## klue-"))
        elif "/mrc/" in rel:
            out[rel] = sum(len(p["qas"]) for a in json.loads(text)["data"] for p in a["paragraphs"])
        elif "/wos/" in rel:
            out[rel] = sum(1 for d in json.loads(text) for t in d["dialogue"] if t["role"] == "user")
        else:
            out[rel] = len(json.loads(text))
    return out


def manifest(sample: Sample) -> dict[str, Any]:
    corpus: dict[str, Any] = {}
    for rel, data in sorted(sample.files.items()):
        if rel.startswith("corpus/official/"):
            entry = corpus.setdefault("corpus/official", {"files": 0, "bytes": 0})
            entry["files"] += 1
            entry["bytes"] += len(data)
        elif rel.startswith("corpus/"):
            corpus[rel] = {"bytes": len(data)}
    for rel, kinds in sample.kinds.items():
        corpus[rel]["documents"] = dict(sorted(kinds.items()))
    return {
        "generator": "python -m pipeline.sample.make_sample",
        "corpus": corpus,
        "corpus_bytes": sum(len(d) for r, d in sample.files.items() if r.startswith("corpus/")),
        "pii_spans": dict(sorted(Counter(g.label for g in sample.pii).items())),
        "planted_duplicates": dict(sorted(Counter(d.kind for d in sample.duplicates).items())),
        "planted_benchmark_sentences": [{"file": p.file, "where": p.where, "benchmark": p.benchmark,
                                         "benchmark_file": BENCHMARKS[p.benchmark], "sentence": p.sentence}
                                        for p in sample.planted],
        "klue_examples": dict(sorted(sample.examples.items())),
        "klue_bytes": sum(len(d) for r, d in sample.files.items() if r.startswith("klue/")),
    }


def build_sample() -> Sample:
    """Every file of the sample (in memory), with the corpus's gold PII spans and planted sentences."""
    sample = Sample()
    klue, dev = klue_files()
    texts = {**corpus_files(sample, dev), **klue}
    sample.examples = _count_examples(klue)
    sample.files = {rel: text.encode("utf-8") for rel, text in sorted(texts.items())}
    sample.files["manifest.json"] = (json.dumps(manifest(sample), ensure_ascii=False, indent=1) + "\n").encode()
    return sample


def write_all(out_dir: Path) -> Sample:
    """Writes the sample under `out_dir` (corpus/, klue/, manifest.json); files of an earlier sample under
    corpus/ and klue/ that this one does not have are deleted. Returns what was written."""
    from pipeline import io as pio

    out_dir = Path(out_dir)
    sample = build_sample()
    for sub in ("corpus", "klue"):
        for p in sorted((out_dir / sub).rglob("*")) if (out_dir / sub).is_dir() else []:
            if p.is_file() and p.relative_to(out_dir).as_posix() not in sample.files:
                p.unlink()
    for rel, data in sample.files.items():
        path = out_dir / rel
        if not path.is_file() or path.read_bytes() != data:
            pio.write_bytes(path, data)
    return sample


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pipeline.sample.make_sample",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, nargs="?", default=HERE, help="default: pipeline/sample/ itself")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    sample = write_all(args.out_dir)
    m = json.loads(sample.files["manifest.json"])
    print(f"{args.out_dir}: corpus {m['corpus_bytes']:,} bytes, klue {m['klue_bytes']:,} bytes, "
          f"{len(sample.pii)} PII spans, {len(sample.planted)} planted benchmark sentences")


if __name__ == "__main__":
    main()
