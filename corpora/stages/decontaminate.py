"""The decontaminate stage: drop (or flag, or cut the sentences of) documents sharing a word n-gram with a
benchmark text (13 eojeols by default, as GPT-3's decontamination). Writes shards of the same names as its
input, `dropped-NNNNN.jsonl` (with the benchmarks hit) and `samples.jsonl`."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from corpora.benchmarks import iter_texts
from corpora.decontaminate import BenchmarkIndex, word_hashes, word_spans
from corpora.lang import LanguageCode, get_language
from corpora.shards import Doc, iter_docs, list_shards, meta_json, write_docs
from corpora.stages.common import EXCERPT, ShardReport, merge, result, shard_suffix, write_samples
from pipeline.filehash import file_digests
from pipeline.io import JsonlWriter
from pipeline.stage import Stage, StageContext, StageParams, StageResult


class BenchmarkFile(StageParams):
    path: str
    name: str | None = Field(None, description="name in reports; default: the file name without extension")
    format: Literal["auto", "nli", "sts", "ynat", "re", "ner", "dp", "squad", "wos", "jsonl"] = "auto"

    def resolved(self) -> Path:
        p = os.path.expandvars(self.path)
        if "$" in p:
            raise ValueError(f"benchmark path {self.path!r}: environment variable not set ({p})")
        return Path(p)

    def label(self) -> str:
        return self.name or Path(self.path).name.rsplit(".", 1)[0]


class DecontaminateParams(StageParams):
    benchmarks: list[BenchmarkFile] = Field(default_factory=list)
    n: int = Field(13, ge=1, le=64, description="word n-gram length")
    min_words: int = Field(5, ge=1, description="benchmark texts shorter than n match whole if at least this long")
    mode: Literal["drop", "flag", "sentences"] = "drop"
    language: LanguageCode  # the recipe's `language:` (pipeline.recipe), never a default

    @field_validator("benchmarks")
    @classmethod
    def _unique(cls, v: list[BenchmarkFile]) -> list[BenchmarkFile]:
        names = [b.label() for b in v]
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise ValueError(f"benchmark names must be unique; repeated: {dup} (set `name:`)")
        return v

    @model_validator(mode="after")
    def _n(self) -> DecontaminateParams:
        if self.min_words > self.n:
            raise ValueError(f"min_words={self.min_words} is larger than n={self.n}")
        return self


_MATCH_BATCH = 512  # documents matched at once (`BenchmarkIndex.masks`): ~2 MB of word hashes


def _decon_shard(task: tuple[Path, Path, Path, list[str], DecontaminateParams]) -> ShardReport:
    in_path, out_dir, index_path, names, params = task
    index = BenchmarkIndex.load(index_path, names)
    lang = get_language(params.language)
    rep = ShardReport()
    audit = JsonlWriter(out_dir / f"dropped-{shard_suffix(in_path)}.jsonl")

    def masked():
        """(document, bitmask of the benchmarks it shares an n-gram with), matched a batch at a time."""
        batch: list[Doc] = []
        for d in chain(iter_docs(in_path), [None]):
            if d is not None:
                batch.append(d)
                if len(batch) < _MATCH_BATCH:
                    continue
            yield from zip(batch, index.masks([word_hashes(x.text, lang) for x in batch]), strict=True)
            batch = []

    def kept():
        for d, mask in masked():
            if not mask:
                rep.keep(d.source, len(d.text))
                yield d
                continue
            hit = index.benchmark_names(mask)
            for b in hit:
                rep.count("docs_per_benchmark", b)
            if params.mode == "flag":
                meta = d.meta_dict()
                meta["contamination"] = hit
                rep.keep(d.source, len(d.text))
                yield Doc(d.id, d.text, d.source, meta_json(meta))
                continue
            if params.mode == "sentences":
                words, spans = word_spans(d.text, lang)
                found = index.matches(words)[1]
                covered = [(spans[i][0], spans[i + m - 1][1]) for i, m in found]
                sents = [(a, b) for a, b in lang.sentence_spans(d.text)
                         if not any(a < ce and cs < b for cs, ce in covered)]
                # (no located match: word-by-word normalization differs from the whole-text one; drop)
                if sents and covered:
                    text = "\n".join(d.text[a:b] for a, b in sents)
                    rep.keep(d.source, len(text), {"contaminated_sentences": len(d.text) - len(text)})
                    rep.count("edited_docs", "sentences")
                    yield Doc(d.id, text, d.source, d.meta)
                    continue
            rep.drop(d.source, "contaminated", len(d.text))
            audit.write({"id": d.id, "source": d.source, "reason": "contaminated", "benchmarks": hit})
            rep.sample("contaminated", 5, {"id": d.id, "benchmarks": hit, "text": d.text[:EXCERPT]})

    write_docs(out_dir / in_path.name, kept())
    audit.close()
    return rep


class DecontaminateStage(Stage[DecontaminateParams]):
    """Drop (or flag, or cut the sentences of) documents sharing a word n-gram with a benchmark text."""

    name = "decontaminate"
    version = "1"
    inputs = ("dedup",)
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished
    input_paths = ("benchmarks.*.path",)

    def fingerprint(self, ctx: StageContext[DecontaminateParams]) -> dict[str, Any]:
        # content, not path or mtime: the same benchmark files elsewhere (another machine, a re-provisioned
        # copy) give the same key; a missing file is None here and a clear error in run()
        paths = {b.label(): b.resolved() for b in ctx.params.benchmarks}
        digests = file_digests(p for p in paths.values() if p.is_file())
        return {label: digests.get(p) for label, p in paths.items()}

    def describe(self, ctx: StageContext[DecontaminateParams]) -> dict[str, Any]:
        """Each benchmark file and whether it is there (a missing one shows in `klue run --dry-run`, before the
        corpus stages run, not when this stage starts), the n-gram rule and the mode."""
        p = ctx.params
        if not p.benchmarks:
            return {"benchmarks": "none (nothing is checked for overlap)"}
        out: dict[str, Any] = {"rule": f"a document sharing a {p.n}-eojeol n-gram with a benchmark text (or a whole "
                                       f"text of {p.min_words}-{p.n - 1} eojeols): {p.mode}"}
        for b in p.benchmarks:
            path = b.resolved()
            out[f"benchmark {b.label()}"] = (f"{path} ({path.stat().st_size:,} bytes)" if path.is_file()
                                             else f"MISSING: {path} is not a file")
        return out

    def run(self, ctx: StageContext[DecontaminateParams]) -> StageResult:
        params = ctx.params
        for b in params.benchmarks:
            if not b.resolved().is_file():
                raise FileNotFoundError(f"decontaminate: benchmark {b.label()!r}: file not found: {b.resolved()}")

        index = BenchmarkIndex.build(((b.label(), iter_texts(b.resolved(), b.format)) for b in params.benchmarks),
                                     n=params.n, min_words=params.min_words, lang=get_language(params.language))
        work = ctx.out_dir / "_work"
        work.mkdir(exist_ok=True)
        index_path = work / "index.npz"
        index.save(index_path)
        shards = list_shards(ctx.inputs["dedup"].path)
        tasks = [(p, ctx.out_dir, index_path, index.names, params) for p in shards]
        rep = merge(list(ctx.map(_decon_shard, tasks, desc="decontaminate")), 5)
        shutil.rmtree(work)
        write_samples(ctx.out_dir, rep.samples)
        per = rep.counters.get("docs_per_benchmark", Counter())
        meta = {"report": {
            "mode": params.mode, "n": params.n, "min_words": params.min_words, "ngrams": int(len(index.keys)),
            "benchmarks": {nm: {**index.stats[nm], "docs": int(per.get(nm, 0))} for nm in index.names},
            "edited_docs": int(rep.counters.get("edited_docs", Counter()).get("sentences", 0)),
        }}
        return result(rep, meta)
