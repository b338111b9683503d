"""Builds the sample that ships in `pipeline/sample/` (what `klue run` with no recipe runs on) from the shared data.

    KLUE_DATA_DIR=../shared/data python -m datagen.sample [OUT_DIR]     # default: pipeline/sample/

The same shared files give the same bytes (tests/test_sample_data.py rebuilds the folder and compares when the
shared data is there). Every choice is a hash of a fixed string (`SEED`, the source, the unit's place), never a
random draw that depends on how many came before, so a new source or a bigger budget leaves the others alone.

corpus/ — real Korean text, a few MB, drawn evenly through each openly licensed source of the shared corpus
(`SOURCES`: its licence and attribution go to LICENSES.md and to the embedded recipe), in the formats the collect
stage reads: blocks (Wikipedia sections), lines (news comments, parallel news sentences), TSV (NSMC reviews, with
the line number in the shared file as `id`), CSV (chatbot Q&A), JSON lines (petitions) and one document a file
(the Constitution and bills). Then what real text lacks, so that every curation stage has work:
- synthetic PII of every type (`datagen.pii.synth`: fake, well-formed values in labelled Korean sentences),
  appended to `PII_RATE` of the documents (real text has almost none: a stated rate, not a measured one);
  the gold spans are in manifest.json;
- junk the filters must drop (too short, symbols only, English only, site boilerplate, stubs);
- exact copies (reposts) and near copies (a few words added) of real documents, for dedup;
- sentences of the sample's KLUE dev files appended to real documents, for decontamination (manifest `planted`;
  real text also holds some by itself: `natural_contamination`, found with the stage's own index);
- three malformed records the collect stage quarantines (a cut JSON line, a record without its text field, a
  ragged TSV row).

klue/ — real KLUE v1.1 examples (CC BY-SA 4.0, its licence beside them) for every task the shared data has, a
fixed hash sample in the official formats: YNAT and NLI from their train and dev files; STS, NER, RE and DP, for
which the shared data has only the dev file, split into disjoint train and dev parts by the same hash. MRC is
generated (`datagen.klue_mrc`: KorQuAD is CC BY-ND, KLUE-MRC is not here), WoS dialogues too
(`datagen.wos`: no WoS dialogues are here); the embedded recipe marks both as generated.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE_DIR = HERE.parent / "pipeline" / "sample"
SEED = "klue-sample-v2"
PII_RATE = 0.03  # of the documents of every source but the laws: one to two labelled sentences of fake PII


@dataclass(frozen=True)
class Source:
    """One source of the sample: where it comes from in the shared data, where it goes, its licence."""

    name: str  # the recipe's source name
    origin: str  # under KLUE_DATA_DIR
    out: str  # under the sample folder
    budget: int  # bytes of text to draw (evenly through the source)
    licence: str
    attribution: str
    recipe: dict[str, Any]  # the recipe's reader settings (besides name, path, license)


SOURCES = [
    Source("kowiki", "corpus/kowiki_sections.txt", "corpus/kowiki.txt", 1_700_000, "CC BY-SA",
           "Korean Wikipedia contributors, https://ko.wikipedia.org (article sections)",
           {"format": "text", "unit": "block"}),
    Source("petitions", "corpus/petitions", "corpus/petitions.jsonl", 900_000, "KOGL Type 1",
           "Cheong Wa Dae national petitions (청와대 국민청원), 2017-2019; public-sector "
           "text, KOGL Type 1 as another copy of this data states",
           {"format": "jsonl", "text_field": "content", "meta_fields": ["title", "category"]}),
    Source("nsmc", "corpus/nsmc_reviews.txt", "corpus/nsmc.tsv", 600_000, "CC0",
           "Naver sentiment movie corpus (NSMC), Lucy Park, https://github.com/e9t/nsmc",
           {"format": "tsv", "text_columns": ["document"], "meta_fields": ["id"]}),
    Source("news_comments", "corpus/news_comments.txt", "corpus/news_comments.txt", 400_000, "CC BY-SA 4.0",
           "Korean entertainment-news comments (the shared corpus's news_comments.txt; "
           "licence as the shared data's README states)", {"format": "text", "unit": "line"}),
    Source("parallel_ko", "corpus/parallel_ko", "corpus/parallel_news.txt", 350_000, "CC BY-SA 3.0",
           "Korean (and North Korean) sides of public Korean-English / Korean-French news "
           "corpora, https://github.com/jungyeul/korean-parallel-corpora",
           {"format": "text", "unit": "line"}),
    Source("chatbot_qa", "corpus/chatbot_qa.csv", "corpus/chatbot_qa.csv", 250_000, "MIT",
           "Chatbot_data, songys, https://github.com/songys/Chatbot_data",
           {"format": "csv", "text_columns": ["Q", "A"]}),
    Source("law", "corpus/law", "corpus/law", 10**9, "public documents",
           "Constitution of the Republic of Korea and National Assembly bills (not protected by copyright: "
           "Korean Copyright Act, Article 7)", {"format": "text", "unit": "file"}),
]
SHORT = {"min_chars": 10, "gopher_min_words": None, "line_punct_thr": None, "min_stop_words": None,
         "new_line_ratio": None}
# the per-source filter settings the sample runs with (as recipes/klue-tiny-cpu.yaml: short informal sources
# switch off the rules meant for long web documents)
PER_SOURCE: dict[str, dict[str, Any]] = {
    "nsmc": SHORT, "news_comments": SHORT, "chatbot_qa": SHORT,
    "parallel_ko": {"min_chars": 10, "gopher_min_words": None}, "petitions": {"line_punct_thr": None},
    "law": {"new_line_ratio": None, "char_dup_ratio": None}}

# KLUE: (origin train file or None: split the dev file, origin dev file, sample name train, dev, sizes)
KLUE = {
    "ynat": ("klue/ynat/ynat-v1_train.json", "klue/ynat/ynat-v1_dev.json", "ynat/ynat-v1_{}.json", (800, 200)),
    "nli": ("klue/nli/klue-nli-v1.1_train.json", "klue/nli/klue-nli-v1.1_dev.json",
            "nli/klue-nli-v1.1_{}.json", (800, 200)),
    "sts": (None, "klue/sts/klue-sts-v1.1_dev.json", "sts/klue-sts-v1.1_{}.json", (369, 150)),
    "ner": (None, "klue/ner/klue-ner-v1.1_dev.tsv", "ner/klue-ner-v1.1_{}.tsv", (800, 200)),
    "re": (None, "klue/re/klue-re-v1.1_dev.json", "re/klue-re-v1.1_{}.json", (800, 200)),
    "dp": (None, "klue/dp/klue-dp-v1.1_dev.tsv", "dp/klue-dp-v1.1_{}.tsv", (800, 200)),
}
MRC_ARTICLES = (100, 34)  # train, dev (three questions each)
WOS_DIALOGUES = (300, 60)
WOS_SEED = 2024
# the dev files decontamination indexes (the recipe lists them); MRC's is generated but indexed all the same
BENCHMARKS = {"ynat": "klue/ynat/ynat-v1_dev.json", "sts": "klue/sts/klue-sts-v1.1_dev.json",
              "nli": "klue/nli/klue-nli-v1.1_dev.json", "ner": "klue/ner/klue-ner-v1.1_dev.tsv",
              "re": "klue/re/klue-re-v1.1_dev.json", "dp": "klue/dp/klue-dp-v1.1_dev.tsv",
              "mrc": "klue/mrc/klue-mrc-v1.1_dev.json"}
DECONTAMINATE: dict[str, Any] = {"n": 13, "min_words": 5}  # the embedded recipe's settings

JUNK = {
    "line": ["ㅋㅋㅋㅋㅋ", "ㅇㅇ", "굿굿", "ㅠㅠ", "퍼가요~", "로그인 | 회원가입 | 검색", "▶ 인기 게시물 바로 가기",
             "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "★★★★★★★★★★★★★★★★★★", "=================================",
             "$$$ 100% !!! ### ~~~ ^^^ *** +++ ||| 1234 5678 9999 0000",
             "Click here to win a free phone now!!! Limited offer for today only, do not miss it.",
             "Best price guaranteed, visit our online store for more details and discount coupons."],
    "block": ["이 문서는 토막글입니다.",
              "This article is a stub. You can help the wiki by expanding it with reliable sources.",
              "See also: list of rivers, list of mountains, list of villages and related categories."],
    "petition": ["내용 없음", "테스트 청원입니다."],
}


@dataclass
class Doc:
    """A document as the collect stage's reader will give it (`text`), with what the builder put in it."""

    text: str
    fields: dict[str, str] = field(default_factory=dict)  # the format's other columns / keys
    kind: str = "real"  # real, junk, duplicate, near_duplicate, contaminated
    pii: list[tuple[str, int, int]] = field(default_factory=list)  # (label, start, end) in `text`
    of: int | None = None  # a copy: the index of the document it copies
    benchmark: str | None = None  # contaminated: the benchmark and the sentence appended
    sentence: str | None = None
    origin: str = ""  # where in the shared data: "file:line"


def _h(*parts: object) -> float:
    """A number in [0, 1) fixed by the parts: the sample's only source of chance."""
    digest = hashlib.sha256(":".join([SEED, *map(str, parts)]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _rng(*parts: object) -> random.Random:
    return random.Random(":".join([SEED, *map(str, parts)]))


# ---- drawing real text ---------------------------------------------------------------------------------------
def _units(src: Source, data: Path) -> Iterator[tuple[str, Doc]]:
    """(locator in the shared data, document) for every unit of a source, in file order."""
    path = data / src.origin
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    for f in files:
        rel = f.relative_to(data).as_posix()
        if src.name == "kowiki":
            block: list[str] = []
            start = 1
            with open(f, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if line.strip():
                        if not block:
                            start = n
                        block.append(line.strip())
                    elif block:
                        yield f"{rel}:{start}", Doc("\n".join(block))
                        block = []
            if block:
                yield f"{rel}:{start}", Doc("\n".join(block))
        elif src.name == "petitions":
            with open(f, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    rec = json.loads(line)
                    text = rec["content"].strip()
                    if text:
                        yield f"{rel}:{n}", Doc(text, {"title": rec.get("title", ""), "category": rec.get("category", ""),
                                                       "begin": rec.get("begin", ""), "end": rec.get("end", "")})
        elif src.name == "chatbot_qa":
            with open(f, encoding="utf-8", newline="") as fh:
                for n, row in enumerate(csv.DictReader(fh), 2):
                    q, a = row["Q"].strip(), row["A"].strip()
                    if q and a:
                        yield f"{rel}:{n}", Doc(f"{q}\n{a}", {"Q": q, "A": a, "label": row["label"]})
        elif src.name == "law":
            raw = f.read_bytes().decode("utf-8")  # shipped as it is (the Constitution has CRLF line ends)
            yield rel, Doc(raw.replace("\r\n", "\n"), {"raw": raw})
        else:  # one text a line
            with open(f, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    text = " ".join(line.replace("\t", " ").split())
                    if text:
                        yield f"{rel}:{n}", Doc(text, {"id": str(n)} if src.name == "nsmc" else {})


def draw(src: Source, data: Path) -> list[Doc]:
    """Units of the source kept with a fixed probability (its budget over its size), so the sample spreads over
    the whole source, up to the budget."""
    path = data / src.origin
    size = sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size
    rate = min(1.0, 1.1 * src.budget / size)
    out: list[Doc] = []
    used = 0
    for where, doc in _units(src, data):
        if _h(src.name, where) < rate:
            doc.origin = where
            out.append(doc)
            used += len(doc.text.encode("utf-8"))
            if used >= src.budget:
                break
    return out


# ---- what real text lacks --------------------------------------------------------------------------------------
def pii_sentence(k: int, rng: random.Random) -> tuple[str, list[tuple[str, int, int]]]:
    """The k-th labelled sentence of fake PII (the templates of `datagen.pii.synth` in turn, so every type comes
    up), with its spans."""
    from datagen.pii import synth

    template = synth.TEMPLATES[k % len(synth.TEMPLATES)]
    text, spans = "", []
    for part in template:
        if isinstance(part, tuple):
            value = synth.fake_value(part[0], rng)
            spans.append((part[0], len(text), len(text) + len(value)))
            text += value
        else:
            text += part.replace("{T}", rng.choice(synth.TITLES)).replace("{BANK}", rng.choice(synth.BANKS))
    return text, spans


def _sep(src: Source) -> str:
    """What joins an appended sentence to a document: a space inside one-line units, else a new line."""
    return " " if src.recipe.get("unit") == "line" or src.name == "nsmc" else "\n"


def append(doc: Doc, src: Source, sentence: str) -> int:
    """Append a sentence to the document (and to the format field that holds it); its offset in `text`."""
    sep = _sep(src)
    sentence = sentence.replace("\n", " ") if sep == " " else sentence
    at = len(doc.text) + len(sep)
    doc.text += sep + sentence
    if src.name == "chatbot_qa":
        doc.fields["A"] += sep + sentence
    return at


def inject_pii(docs: list[Doc], src: Source, counter: list[int]) -> None:
    rng = _rng("pii", src.name)
    for i, doc in enumerate(docs):
        if src.name == "law" or _h("pii", src.name, i) >= PII_RATE:
            continue
        for _ in range(1 + (_h("pii-n", src.name, i) < 0.3)):
            sentence, spans = pii_sentence(counter[0], rng)
            counter[0] += 1
            at = append(doc, src, sentence)
            doc.pii += [(label, at + s, at + e) for label, s, e in spans]


def plant(docs: list[Doc], src: Source, sentences: list[tuple[str, str]]) -> list[Doc]:
    """Junk, exact and near copies of real documents without PII, and the benchmark sentences, interleaved."""
    out: list[Doc] = []
    unit = "petition" if src.name == "petitions" else "block" if src.name == "kowiki" else "line"
    junk = JUNK[unit]
    bench = list(sentences)
    for i, doc in enumerate(docs):
        me = len(out)
        out.append(doc)
        words = len(doc.text.split())
        if src.name == "law":
            continue
        if src.name in ("nsmc", "news_comments", "kowiki", "petitions") and _h("junk", src.name, i) < 0.01:
            out.append(Doc(junk[int(_h("junk-pick", src.name, i) * len(junk))], _junk_fields(src), "junk"))
        if doc.pii:
            continue
        if bench and _h("bench", src.name, i) < 0.02:
            b, sentence = bench.pop(0)
            doc.kind, doc.benchmark, doc.sentence = "contaminated", b, sentence
            append(doc, src, sentence)
        elif words >= 5 and _h("dup", src.name, i) < 0.015:  # a repost
            out.append(Doc(doc.text, dict(doc.fields), "duplicate", of=me, origin=doc.origin))
        elif words >= 40 and _h("near", src.name, i) < 0.02:  # an edited repost: long enough to stay similar
            near = Doc(doc.text, dict(doc.fields), "near_duplicate", of=me, origin=doc.origin)
            append(near, src, "(수정됨)")
            out.append(near)
    if bench:
        raise RuntimeError(f"{src.name}: {len(bench)} benchmark sentences left to plant: raise the rate")
    return out


def _junk_fields(src: Source) -> dict[str, str]:
    if src.name == "petitions":
        return {"title": "테스트", "category": "기타", "begin": "", "end": ""}
    if src.name == "nsmc":
        return {"id": "0"}
    return {}


# ---- writing the corpus ----------------------------------------------------------------------------------------
def render(src: Source, docs: list[Doc]) -> dict[str, str]:
    """Relative path -> file text, with the source's malformed records put in."""
    if src.name == "law":
        return {f"{src.out}/{Path(d.origin).name}": d.fields["raw"] for d in docs}
    if src.recipe.get("unit") == "block":
        return {src.out: "\n\n".join(d.text for d in docs) + "\n"}
    if src.recipe.get("unit") == "line":
        return {src.out: "".join(d.text + "\n" for d in docs)}
    if src.name == "petitions":
        lines = [json.dumps({**d.fields, "content": d.text}, ensure_ascii=False) for d in docs]
        third = len(lines) // 3
        lines.insert(third, '{"category": "기타", "title": "전송 중 잘린 청원", "content": "이 청원은 전송 중에 끊겨')
        lines.insert(2 * third, json.dumps({"category": "기타", "title": "본문 없는 청원", "body": "본문 필드 이름이 다르다."},
                                           ensure_ascii=False))
        return {src.out: "\n".join(lines) + "\n"}
    if src.name == "nsmc":
        rows = [f"{d.fields['id']}\t{d.text}" for d in docs]
        rows.insert(len(rows) // 2, "0\t탭이 하나 더 있는 행\t1")  # a ragged row
        return {src.out: "id\tdocument\n" + "".join(r + "\n" for r in rows)}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Q", "A", "label"])
    for d in docs:
        w.writerow([d.fields["Q"], d.fields["A"], d.fields["label"]])
    return {src.out: buf.getvalue()}


def locate(src: Source, docs: list[Doc], root: Path) -> tuple[list[tuple[str, int]], int]:
    """(file, locator) of every document, read back with the collect stage's own readers, and how many records
    the readers quarantined; checks that each document reads back as the text the builder meant (else the gold
    offsets would lie)."""
    from corpora.readers import Bad, ReadOptions, SourceFile, read_file
    from corpora.sources import SourceSpec

    spec = SourceSpec(name=src.name, path="x", license=src.licence, **src.recipe)
    out: list[tuple[str, int]] = []
    bad = 0
    path = root / src.out
    for f in sorted(path.glob("*.txt")) if path.is_dir() else [path]:
        rel = f.relative_to(root).as_posix()
        for rec in read_file(spec, SourceFile(f, f.name), ReadOptions()):
            if isinstance(rec, Bad):
                bad += 1
                continue
            out.append((rel, int(rec.where.get("row", rec.where.get("line", 0)))))
            doc = docs[len(out) - 1]
            if rec.text != doc.text:
                raise RuntimeError(f"{rel}:{out[-1][1]}: reads back as {rec.text[:60]!r}, not {doc.text[:60]!r}")
    if len(out) != len(docs):
        raise RuntimeError(f"{src.name}: {len(out)} documents read back, {len(docs)} written")
    return out, bad


# ---- KLUE ------------------------------------------------------------------------------------------------------
def json_list(records: list[Any]) -> str:
    """A JSON list with one record a line (small, diffable files)."""
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n"


def _tsv_blocks(path: Path) -> tuple[str, list[str]]:
    """(the header comment lines, the sentence blocks) of a KLUE NER/DP TSV."""
    text = path.read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n\n") if b.strip()]
    first = blocks[0].split("\n")
    n_head = next(i for i, ln in enumerate(first) if ln.startswith("## klue-"))  # the first sentence's line
    head_lines, blocks[0] = first[:n_head], "\n".join(first[n_head:])
    return "\n".join(head_lines), blocks


def _pick(items: list[Any], key: Any, task: str, n: int, skip: int = 0) -> list[Any]:
    """`n` items after `skip`, in the order of a fixed hash of their guids, then back in file order."""
    order = sorted(range(len(items)), key=lambda i: _h("klue", task, key(items[i])))[skip:skip + n]
    return [items[i] for i in sorted(order)]


def klue_files(data: Path) -> tuple[dict[str, str], dict[str, int]]:
    """Relative path -> text for klue/, and the examples of each file."""
    files: dict[str, str] = {}
    counts: dict[str, int] = {}
    for task, (train_file, dev_file, name, (n_train, n_dev)) in KLUE.items():
        if task in ("ner", "dp"):
            head, blocks = _tsv_blocks(data / dev_file)
            guid = lambda b: b.split("\n", 1)[0].split("\t")[0]  # noqa: E731
            parts = {"dev": _pick(blocks, guid, task, n_dev), "train": _pick(blocks, guid, task, n_train, n_dev)}
            for split, chosen in parts.items():
                files[f"klue/{name.format(split)}"] = head + "\n" + "\n\n".join(chosen) + "\n\n"
                counts[f"klue/{name.format(split)}"] = len(chosen)
            continue
        dev = json.loads((data / dev_file).read_text(encoding="utf-8"))
        if train_file is None:
            parts = {"dev": _pick(dev, lambda r: r["guid"], task, n_dev),
                     "train": _pick(dev, lambda r: r["guid"], task, n_train, n_dev)}
        else:
            train = json.loads((data / train_file).read_text(encoding="utf-8"))
            parts = {"dev": _pick(dev, lambda r: r["guid"], task, n_dev),
                     "train": _pick(train, lambda r: r["guid"], task, n_train)}
        for split, chosen in parts.items():
            files[f"klue/{name.format(split)}"] = json_list(chosen)
            counts[f"klue/{name.format(split)}"] = len(chosen)
    files["klue/re/relation_list.json"] = (data / "klue/re/relation_list.json").read_text(encoding="utf-8")
    files["klue/LICENSE-KLUE.md"] = (data / "klue/LICENSE-KLUE.md").read_text(encoding="utf-8")
    files.update(generated_files(counts))
    return files, counts


def generated_files(counts: dict[str, int]) -> dict[str, str]:
    """MRC and WoS, generated (see the module docstring)."""
    from datagen.klue_mrc import mrc
    from datagen.wos import dialogues, ontology

    files: dict[str, str] = {}
    for split, n_articles, n_dialogues in (("train", MRC_ARTICLES[0], WOS_DIALOGUES[0]),
                                           ("dev", MRC_ARTICLES[1], WOS_DIALOGUES[1])):
        m = mrc(split, n_articles)
        files[f"klue/mrc/klue-mrc-v1.1_{split}.json"] = (
            f'{{"version": {json.dumps(m["version"])}, "data": ' + json_list(m["data"]).rstrip("\n") + "}\n")
        counts[f"klue/mrc/klue-mrc-v1.1_{split}.json"] = sum(len(p["qas"]) for a in m["data"] for p in a["paragraphs"])
        files[f"klue/wos/wos-v1.1_{split}.json"] = json_list(dialogues(split, n_dialogues, WOS_SEED))
        counts[f"klue/wos/wos-v1.1_{split}.json"] = n_dialogues
    files["klue/wos/ontology.json"] = json.dumps(ontology(), ensure_ascii=False, indent=1) + "\n"
    return files


def benchmark_sentences(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Source -> [(benchmark, text)]: dev texts of at least eight words (so they are n-gram matches, not whole-text
    ones) to append to real documents; one or two per benchmark, spread over the sources."""
    from corpora.benchmarks import iter_texts

    texts = {b: [t for t in iter_texts(root / p) if len(t.split()) >= 8] for b, p in BENCHMARKS.items()}
    first = {b: sorted(ts, key=lambda t: _h("planted", b, t)) for b, ts in texts.items()}
    return {"kowiki": [("ner", first["ner"][0]), ("re", first["re"][0]), ("mrc", first["mrc"][0])],
            "petitions": [("nli", first["nli"][0]), ("dp", first["dp"][0])],
            "news_comments": [("ynat", first["ynat"][0]), ("sts", first["sts"][0])],
            "nsmc": [("sts", first["sts"][1])],
            "parallel_ko": [("re", first["re"][1])]}


# ---- the whole sample --------------------------------------------------------------------------------------------
def build(data: Path, out: Path) -> dict[str, Any]:
    """Write the sample under `out` and return its manifest (also written, as manifest.json)."""
    from pipeline import io as pio

    klue, counts = klue_files(data)
    for rel, text in klue.items():
        pio.write_text(out / rel, text)
    planted_by_source = benchmark_sentences(out)
    manifest: dict[str, Any] = {"builder": "KLUE_DATA_DIR=../shared/data python -m datagen.sample", "seed": SEED,
                                "pii_rate": PII_RATE, "sources": {}, "gold": [], "planted": [], "duplicates": [],
                                "junk": [], "natural_contamination": [], "klue": counts}
    placed: dict[str, list[tuple[str, int]]] = {}
    all_docs: dict[str, list[Doc]] = {}
    counter = [0]
    for src in SOURCES:
        docs = draw(src, data)
        inject_pii(docs, src, counter)
        docs = plant(docs, src, planted_by_source.get(src.name, []))
        rendered = render(src, docs)
        for rel, text in rendered.items():
            pio.write_text(out / rel, text)
        where, malformed = locate(src, docs, out)
        placed[src.name], all_docs[src.name] = where, docs
        kinds = Counter(d.kind for d in docs)
        manifest["sources"][src.name] = {
            "origin": src.origin, "out": src.out, "licence": src.licence,
            "bytes": sum(len(t.encode("utf-8")) for t in rendered.values()), "documents": dict(sorted(kinds.items())),
            "malformed": malformed}
        for d, (rel, w) in zip(docs, where, strict=True):
            manifest["gold"] += [[rel, w, label, s, e, d.text[s:e]] for label, s, e in d.pii]
            if d.kind == "contaminated":
                manifest["planted"].append([rel, w, d.benchmark, d.sentence])
            elif d.kind in ("duplicate", "near_duplicate"):
                assert d.of is not None
                manifest["duplicates"].append([rel, w, *where[d.of], d.kind])
            elif d.kind == "junk":
                manifest["junk"].append([rel, w])
    manifest["natural_contamination"] = natural_contamination(out, all_docs, placed)
    manifest["corpus_bytes"] = sum(s["bytes"] for s in manifest["sources"].values())
    manifest["pii_spans"] = dict(sorted(Counter(g[2] for g in manifest["gold"]).items()))
    pio.write_text(out / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    pio.write_text(out / "LICENSES.md", licences(manifest))
    return manifest


def licences(manifest: dict[str, Any]) -> str:
    """LICENSES.md: every shipped file, where it comes from, its licence and what was changed."""
    rows = ["| file | source | licence | attribution | what was changed |", "|---|---|---|---|---|"]
    for src in SOURCES:
        m = manifest["sources"][src.name]
        changed = ("drawn whole (public documents, unchanged)" if src.name == "law" else
                   f"a fixed hash sample of {sum(m['documents'].values())} units; synthetic PII appended to "
                   f"{PII_RATE:.0%} of them; junk, copies and benchmark sentences planted (manifest.json)")
        rows.append(f"| `{src.out}` | `{src.origin}` (`{src.name}`) | {src.licence} | {src.attribution} | {changed} |")
    for task, (train_file, dev_file, name, (n_train, n_dev)) in KLUE.items():
        origin = f"`{train_file}`, `{dev_file}`" if train_file else f"`{dev_file}` (split in two)"
        rows.append(f"| `klue/{name.format('{train,dev}')}` | {origin} | CC BY-SA 4.0 (`klue/LICENSE-KLUE.md`) | "
                    f"{'KLUE benchmark, YNAT v1' if task == 'ynat' else 'KLUE benchmark v1.1'}, Park et al. 2021, "
                    f"https://klue-benchmark.com | a fixed hash sample of "
                    f"{n_train} + {n_dev} examples, unchanged |")
    rows.append("| `klue/re/relation_list.json` | `klue/re/relation_list.json` | CC BY-SA 4.0 (`klue/LICENSE-KLUE.md`) "
                "| KLUE benchmark v1.1 | unchanged |")
    rows.append("| `klue/mrc/klue-mrc-v1.1_{train,dev}.json` | generated (`datagen/klue_mrc.py`) | CC0 | klue-pipeline | "
                "KLUE-MRC's layout, made-up passages |")
    rows.append("| `klue/wos/wos-v1.1_{train,dev}.json`, `klue/wos/ontology.json` | generated (`datagen/wos.py`) "
                "| CC0 | klue-pipeline | WoS's layout and 45 slots, made-up dialogues |")
    return "\n".join([
        "# Licences of the sample data", "",
        "What `klue run` with no recipe runs on. Real text and real KLUE examples are redistributed under their "
        "licences, as listed; share-alike sources (CC BY-SA) keep their licence in anything made from these files. "
        "Synthetic PII values are fake. Built by `KLUE_DATA_DIR=../shared/data python -m datagen.sample` from the "
        "project's shared data folder; `manifest.json` lists what was planted where.", "", *rows, ""])


def natural_contamination(root: Path, docs: dict[str, list[Doc]],
                          placed: dict[str, list[tuple[str, int]]]) -> list[list[Any]]:
    """Real documents that hold a benchmark text by themselves (Wikipedia and news are where KLUE's sentences come
    from), found with the decontamination stage's index and settings: [file, locator, benchmarks]."""
    from corpora.benchmarks import iter_texts
    from corpora.decontaminate import BenchmarkIndex, word_hashes
    from corpora.lang import get_language

    names = list(BENCHMARKS)
    ko = get_language("ko")  # the sample is Korean (KLUE's benchmarks)
    index = BenchmarkIndex.build([(b, list(iter_texts(root / BENCHMARKS[b]))) for b in names], **DECONTAMINATE,
                                 lang=ko)
    found = []
    for name, ds in docs.items():
        for d, (rel, w) in zip(ds, placed[name], strict=True):
            mask, _ = index.matches(word_hashes(d.text, ko))
            if mask and d.kind not in ("contaminated",):
                found.append([rel, w, [b for i, b in enumerate(names) if mask >> i & 1]])
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(SAMPLE_DIR), type=Path)
    ap.add_argument("--data", default=os.environ.get("KLUE_DATA_DIR"), help="the shared data folder")
    args = ap.parse_args(argv)
    if not args.data:
        print("the shared data folder is needed: set KLUE_DATA_DIR or pass --data", file=sys.stderr)
        return 2
    m = build(Path(args.data), args.out)
    print(f"{args.out}: corpus {m['corpus_bytes']:,} bytes, {len(m['gold'])} PII spans, "
          f"{len(m['planted'])} planted and {len(m['natural_contamination'])} natural benchmark hits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BENCHMARKS", "KLUE", "PER_SOURCE", "SOURCES", "build", "main"]
