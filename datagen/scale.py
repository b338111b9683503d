"""A Korean corpus of any size for measuring the corpus stages at scale: `python -m datagen.scale --gb N OUT`.

The shared corpus is 50 MB; a KLUE-size run reads 63 GB. Repeating the 50 MB would not do: exact and near
duplicate removal would collapse it back to 50 MB, so every stage after dedup would be measured on a fraction of
the input. Instead every document is new: a sequence of units drawn from the documents of one source of the
shared corpus (a Wikipedia section: a title and lines of other sections; a petition: sentences of other
petitions; a review, a comment, a news sentence: three to five of them), with that source's own length
distribution (at least three units, none more than 40 % of the words: documents of one or two units, or mostly
one long unit, drawn from the same pool collide as near duplicates by chance) and its own file format (blank-line separated blocks, JSON lines, one document a line), in files of
at most `--file-mb`. Random sequences of real units keep the text's statistics (characters, words, the filters'
ratios, MeCab's morphemes) while no two documents share more than a unit or two.

Two ways it is easier per MB than real text, measured (docs/scaling.md, "The scale corpus against real text"):
its documents are ~5x longer than the shared corpus's (1,076 against 207 bytes on average: a review or a comment
is three to five of them here), and every stage pays a cost per document; and its vocabulary is the shared
corpus's, so it stops growing (511k distinct eojeols in its first 48 MB against 894k in 40 MB of the shared corpus)
and caches keyed by word hit more often than on text that keeps bringing new words. `bench/projection.py --text`
turns its rates into real text's.

Into that stream, at fixed rates, go what the funnel must find, and the manifest lists every one by document id
(corpora.shards.doc_id of the source, the file and the record's line, as the collect stage computes it):
- exact duplicates (1.5 % of documents of at least 5 words): an earlier document again, verbatim;
- near duplicates (1.5 % of documents of at least 40 words): an earlier document with ` (수정됨)` appended
  (one word more: Jaccard of 5-word shingles about 0.9, above the recipes' 0.8);
- PII (3 %): a labelled sentence of fake PII of every type in turn appended (datagen.pii.synth's templates, as the
  embedded sample does), with its types;
- junk (1 % of the line sources, 0.5 % of the others): a line the filters drop (the sample's JUNK lists).
Deterministic by `--seed`: the same arguments give the same bytes. `OUT/recipe.yaml` is a recipe for the corpus
(the sample's filter settings for its sources) and `OUT/manifest.json` the planted counts and ids.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from corpora.shards import doc_id, list_shards
from datagen.sample import JUNK, pii_sentence

RATES = {"exact": 0.015, "near": 0.015, "pii": 0.03}
JUNK_RATE = {"line": 0.01, "block": 0.005, "petition": 0.005}
NEAR_SUFFIX = " (수정됨)"
MIN_UNITS = 3  # two documents sharing one unit of one or two are near duplicates by chance; of three, not
MAX_SHARE = 0.4  # of a document's words in one unit: two documents sharing it then have a Jaccard near 0.25
MAX_UNITS = 24
RECENT = 2000  # earlier documents a duplicate is drawn from (bounded: memory does not grow with the corpus)
SENTENCE = re.compile(r"(?<=[.!?。])\s+")


@dataclass(frozen=True)
class Source:
    """One source of the scale corpus: where its units come from and how its files look."""

    name: str
    share: float  # of the corpus's UTF-8 bytes
    unit: str  # "block" (blank-line separated), "petition" (JSON lines), "line" (one document a line)
    licence: str


SOURCES = (Source("kowiki", 0.40, "block", "CC BY-SA"), Source("petitions", 0.25, "petition", "KOGL Type 1"),
           Source("nsmc", 0.15, "line", "CC0"), Source("news_comments", 0.10, "line", "CC BY-SA 4.0"),
           Source("parallel_ko", 0.10, "line", "CC BY-SA 3.0"))
EXTENSION = {"block": "txt", "petition": "jsonl", "line": "txt"}


@dataclass
class Pool:
    """A source's units and its length distribution (units per document)."""

    units: list[str]
    lengths: list[int]
    titles: list[str] = field(default_factory=list)
    fields: list[dict[str, str]] = field(default_factory=list)


def load_pool(data: Path, src: Source) -> Pool:
    """The units of `src` in the shared corpus (deduplicated, in file order, so the pool is deterministic)."""
    corpus = data / "corpus"
    if src.name == "kowiki":
        titles, lines, lengths = [], [], []
        for block in (corpus / "kowiki_sections.txt").read_text(encoding="utf-8").split("\n\n"):
            rows = [r for r in block.split("\n") if r.strip()]
            if len(rows) >= 2:
                titles.append(rows[0])
                lines += rows[1:]
                lengths.append(len(rows) - 1)
        return Pool(_unique(lines), lengths, titles=_unique(titles))
    if src.name == "petitions":
        sentences, lengths, fields = [], [], []
        for path in sorted((corpus / "petitions").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                parts = [s for s in SENTENCE.split(str(rec.get("content") or "").replace("\n", " ")) if s.strip()]
                if parts:
                    sentences += parts
                    lengths.append(len(parts))
                    fields.append({"title": str(rec.get("title") or ""), "category": str(rec.get("category") or "")})
        return Pool(_unique(sentences), lengths, fields=fields)
    files = {"nsmc": [corpus / "nsmc_reviews.txt"], "news_comments": [corpus / "news_comments.txt"],
             "parallel_ko": sorted((corpus / "parallel_ko").iterdir())}[src.name]
    lines = [x.strip() for f in files for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    return Pool(_unique(lines), [3, 4, 5])


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass
class Planted:
    """What one source's files hold besides plain documents: ids by kind, PII types by id."""

    docs: int = 0
    bytes: int = 0
    exact: list[tuple[str, str]] = field(default_factory=list)  # (copy id, id of the document it copies)
    near: list[tuple[str, str]] = field(default_factory=list)
    junk: list[str] = field(default_factory=list)
    pii: dict[str, list[str]] = field(default_factory=dict)  # id -> types appended

    def to_json(self) -> dict[str, Any]:
        types = Counter(t for ts in self.pii.values() for t in ts)
        return {"docs": self.docs, "bytes": self.bytes,
                "counts": {"exact": len(self.exact), "near": len(self.near), "junk": len(self.junk),
                           "pii_docs": len(self.pii), "pii_spans": dict(sorted(types.items()))},
                "ids": {"exact": self.exact, "near": self.near, "junk": self.junk, "pii": self.pii}}


def units_of(pool: Pool, rng: random.Random) -> list[str]:
    """The units of one new document: at least MIN_UNITS, and none more than MAX_SHARE of its words (more
    units are drawn, up to MAX_UNITS, then the draw starts over). A unit is drawn many times at scale (a 1 GB
    corpus uses each kowiki line about 20 times), so a document that is mostly one long unit would be a near
    duplicate of every other document that drew it."""
    while True:
        units = [rng.choice(pool.units) for _ in range(max(MIN_UNITS, rng.choice(pool.lengths)))]
        while len(units) < MAX_UNITS:
            sizes = [len(u.split()) for u in units]
            if max(sizes) <= MAX_SHARE * sum(sizes):
                return units
            units.append(rng.choice(pool.units))


def documents(pool: Pool, unit: str, rng: random.Random) -> Iterator[tuple[str, dict[str, str]]]:
    """New documents of one source, forever: (text, fields)."""
    while True:
        units = units_of(pool, rng)
        if unit == "block":
            yield "\n".join([rng.choice(pool.titles), *units]), {}
        elif unit == "petition":
            yield " ".join(units), dict(rng.choice(pool.fields))
        else:
            yield " ".join(units), {}


class SourceWriter:
    """Writes one source's records into files of at most `file_bytes`, tracking each record's line number (the
    collect stage's record index) so the manifest can name documents by the ids collect will give them."""

    def __init__(self, out: Path, src: Source, file_bytes: int):
        self.out, self.src, self.file_bytes = out, src, file_bytes
        self.n_files, self.line, self.size = 0, 1, 0
        self.f: Any = None
        self.rel = ""

    def _open(self) -> None:
        if self.f is not None:
            self.f.close()
        self.rel = f"{self.src.name}-{self.n_files:04d}.{EXTENSION[self.src.unit]}"
        self.f = open(self.out / self.src.name / self.rel, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self.n_files += 1
        self.line, self.size = 1, 0

    def write(self, text: str, fields: dict[str, str]) -> str:
        """Write one record; its document id."""
        if self.f is None or self.size >= self.file_bytes:
            self._open()
        if self.src.unit == "petition":
            record = json.dumps({**fields, "content": text}, ensure_ascii=False) + "\n"
        elif self.src.unit == "block":
            record = text + "\n\n"
        else:
            record = text.replace("\n", " ") + "\n"
        start = self.line
        self.f.write(record)
        self.line += record.count("\n")
        self.size += len(record.encode("utf-8"))
        return doc_id(self.src.name, self.rel, start)

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


def generate_source(out: Path, data: Path, src: Source, budget: int, seed: int, file_bytes: int) -> Planted:
    """`budget` bytes of `src` into OUT/<source>/, planting at the module's rates."""
    rng = random.Random(f"{seed}:{src.name}")
    pool = load_pool(data, src)
    (out / src.name).mkdir(parents=True, exist_ok=True)
    w = SourceWriter(out, src, file_bytes)
    planted = Planted()
    recent: deque[tuple[str, str]] = deque(maxlen=RECENT)  # (text, id) of plain documents
    used: set[str] = set()  # a document is copied once at most: then every copy is one duplicate to remove
    fresh = documents(pool, src.unit, rng)
    k = 0
    types: list[str] = []
    sep = "\n" if src.unit == "block" else " "
    try:
        while planted.bytes < budget:
            text, fields = next(fresh)
            roll = rng.random()
            kind = "plain"
            base, base_id = rng.choice(recent) if recent else ("", "")
            if roll < RATES["exact"] + RATES["near"] and base_id and base_id not in used:
                if roll < RATES["exact"] and len(base.split()) >= 5:
                    text, kind = base, "exact"
                elif roll >= RATES["exact"] and len(base.split()) >= 40:
                    text, kind = base + NEAR_SUFFIX, "near"
                if kind != "plain":
                    used.add(base_id)
            elif roll < RATES["exact"] + RATES["near"] + RATES["pii"]:
                sentence, spans = pii_sentence(k, rng)
                k += 1
                text, kind = text + sep + (sentence.replace("\n", " ") if src.unit != "block" else sentence), "pii"
                types = sorted({t for t, _, _ in spans})
            elif rng.random() < JUNK_RATE[src.unit]:
                text, kind = rng.choice(JUNK[src.unit]), "junk"
            i = w.write(text, fields)
            planted.docs += 1
            planted.bytes += len(text.encode("utf-8"))
            if kind == "exact":
                planted.exact.append((i, base_id))
            elif kind == "near":
                planted.near.append((i, base_id))
            elif kind == "pii":
                planted.pii[i] = types
            elif kind == "junk":
                planted.junk.append(i)
            if kind == "plain":
                recent.append((text, i))
    finally:
        w.close()
    return planted


def recipe(out: Path, data: Path) -> dict[str, Any]:
    """A recipe for the scale corpus: the sample's filter settings for the same kinds of source."""
    informal = {"min_chars": 10, "gopher_min_words": None, "line_punct_thr": None, "min_stop_words": None,
                "new_line_ratio": None}
    globs = {s.name: f"{s.name}/*.{EXTENSION[s.unit]}" for s in SOURCES}
    sources = []
    for s in SOURCES:
        spec: dict[str, Any] = {"name": s.name, "path": globs[s.name], "license": s.licence}
        if s.unit == "petition":
            spec.update(format="jsonl", text_field="content", meta_fields=["title", "category"])
        else:
            spec.update(format="text", unit=s.unit)
        sources.append(spec)
    benchmarks = [{"path": str(data / "klue" / p)} for p in
                  ("ynat/ynat-v1_dev.json", "sts/klue-sts-v1.1_dev.json", "nli/klue-nli-v1.1_dev.json",
                   "ner/klue-ner-v1.1_dev.tsv", "re/klue-re-v1.1_dev.json", "dp/klue-dp-v1.1_dev.tsv")]
    return {"name": f"scale-{out.name}", "seed": 42, "sources": sources,
            "stages": {"filter": {"per_source": {"nsmc": informal, "news_comments": informal,
                                                 "parallel_ko": {"min_chars": 10, "gopher_min_words": None},
                                                 "petitions": {"line_punct_thr": None}}},
                       "dedup": {"ngram": 5, "threshold": 0.8, "num_perm": 128},
                       "decontaminate": {"n": 13, "min_words": 5, "mode": "drop", "benchmarks": benchmarks},
                       "pii": {"enabled": True, "mode": "placeholder"}, "pretokenize": {"analyzer": "mecab"},
                       "vocab": {"vocab_size": 8000, "min_frequency": 2, "limit_alphabet": 3000}, "encode": {"eval_fraction": 0.01}}}


def generate(out: Path, gb: float, data: Path, seed: int = 0, file_mb: float = 64) -> dict[str, Any]:
    """The whole corpus, its recipe and manifest; returns the manifest."""
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    data = data.resolve()  # the recipe names the benchmark files by absolute path
    total = int(gb * 1e9)
    sources = {s.name: generate_source(out, data, s, int(total * s.share), seed, int(file_mb * 2**20)).to_json()
               for s in SOURCES}
    manifest = {"gb": gb, "seed": seed, "rates": RATES, "junk_rates": JUNK_RATE, "sources": sources,
                "bytes": sum(s["bytes"] for s in sources.values()), "docs": sum(s["docs"] for s in sources.values())}
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "recipe.yaml").write_text(yaml.safe_dump(recipe(out, data), allow_unicode=True, sort_keys=False),
                                     encoding="utf-8")
    return manifest


def stage_folder(wd: Path, stage: str) -> Path:
    """The folder of `stage` of the only arm of the workdir's run.json."""
    run = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    return wd / next(s["path"] for s in run["arms"][0]["stages"] if s["stage"] == stage)


def has_stage(wd: Path, stage: str) -> bool:
    run = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    return any(s["stage"] == stage and s.get("status") != "failed" for s in run["arms"][0]["stages"])


def stage_manifest(wd: Path, stage: str) -> dict[str, Any]:
    return json.loads((stage_folder(wd, stage) / "manifest.json").read_text(encoding="utf-8"))


def ids_of(path: Path) -> set[str]:
    return {i for s in list_shards(path) for i in pq.read_table(s, columns=["id"]).column("id").to_pylist()}


def check_funnel(wd: Path, corpus: dict[str, Any]) -> dict[str, Any]:
    """The funnel of the workdir `wd` (a `klue run` of this corpus's recipe, at least through `dedup`) against
    the planted documents: every junk document gone after `filter`; dedup's exact and near duplicates equal to
    the planted copies that passed the filters; with `pii_detect` run, every planted type found in its document."""
    junk = [i for s in corpus["sources"].values() for i in s["ids"]["junk"]]
    pairs = {k: [tuple(p) for s in corpus["sources"].values() for p in s["ids"][k]] for k in ("exact", "near")}
    pii = {i: t for s in corpus["sources"].values() for i, t in s["ids"]["pii"].items()}
    kept = ids_of(stage_folder(wd, "filter"))
    dd = stage_manifest(wd, "dedup")["funnel"]["dropped"]
    # a copy is a duplicate to remove when both it and the document it copies passed the filters (a suffix can
    # tip a filter's ratio, so the two are not always kept or dropped together)
    out: dict[str, Any] = {"junk": {"planted": len(junk), "left_after_filter": sum(i in kept for i in junk)}}
    for kind in ("exact", "near"):
        out[kind] = {"planted_after_filter": sum(a in kept and b in kept for a, b in pairs[kind]),
                     "removed": dd.get(f"{kind}_duplicate", 0)}
    if has_stage(wd, "pii_detect"):
        from corpora.pii.spans import read_spans, spans_name

        det = stage_folder(wd, "pii_detect")
        detected: dict[str, set[str]] = {}
        for shard in list_shards(stage_folder(wd, "decontaminate")):
            for i, spans in read_spans(det / spans_name(shard)).items():
                detected[i] = {s.type for s in spans}
        present = ids_of(stage_folder(wd, "decontaminate"))
        typed = [(i, t) for i, ts in pii.items() if i in present for t in ts]
        out["pii"] = {"planted_pairs": len(typed), "found": sum(t in detected.get(i, ()) for i, t in typed)}
    out["ok"] = (out["junk"]["left_after_filter"] == 0
                 and out["exact"]["removed"] == out["exact"]["planted_after_filter"]
                 and out["near"]["removed"] == out["near"]["planted_after_filter"]
                 and ("pii" not in out or out["pii"]["found"] == out["pii"]["planted_pairs"]))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--gb", type=float, required=True, help="GB of UTF-8 text to write")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--file-mb", type=float, default=64, help="at most this many MB a file")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("KLUE_DATA_DIR", "../shared/data")))
    args = ap.parse_args(argv)
    m = generate(args.out, args.gb, args.data, args.seed, args.file_mb)
    counts = {k: sum(s["counts"][k] for s in m["sources"].values()) for k in ("exact", "near", "junk", "pii_docs")}
    print(f"{args.out}: {m['docs']:,} documents, {m['bytes'] / 1e6:,.1f} MB; planted {counts}")


if __name__ == "__main__":
    main()

