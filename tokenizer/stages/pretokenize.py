"""The `pretokenize` stage: PII-replaced doc shards -> unit shards (same Parquet layout as doc shards, one
output shard per input shard, `text` = pre-tokenized units, see tokenizer/mecab.py), plus
`shard-NNNNN.chars.json` beside each: the character counts the vocab stage needs for its alphabet, gathered here
where every text passes anyway. Work is split by shard, so the output does not depend on the worker count.
`analyzer: none` is the plain-text arm of the paper's ablation: same format, no morpheme split, so `vocab` is
unchanged.
"""

from __future__ import annotations

import gc
import inspect
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from corpora.lang import LanguageCode, get_language
from corpora.shards import DOC_SCHEMA, QuarantineWriter, list_shards, write_docs
from pipeline import io
from pipeline.stage import FunnelSum, Stage, StageContext, StageParams, StageResult, shard_funnels, tally
from pipeline.versions import package_versions
from tokenizer.mecab import MecabError, Pretokenizer
from tokenizer.train import CharCounter, metaspace_rewriter, reserved_tokens, training_rewriter


class PretokenizeParams(StageParams):
    """Which analyzer, and how many distinct eojeols each worker caches (exact: speed only)."""

    analyzer: Literal["mecab", "none"] = Field(
        default="mecab", description="mecab: morpheme-aware units; none: plain text (the ablation arm)")
    cache_size: int = Field(default=1 << 18, ge=0, description="distinct eojeols cached per worker")
    language: LanguageCode = Field(description="its MeCab dictionary and kind of tokenizer (corpora/lang)")

    @model_validator(mode="after")
    def _dictionary(self) -> PretokenizeParams:
        """The `mecab` arm needs the language's MeCab dictionary; `none` reads no analyzer."""
        if self.analyzer == "mecab" and get_language(self.language).mecab_dictionary is None:
            raise ValueError(f"language {self.language!r} has no MeCab dictionary (corpora/lang/{self.language}/"
                             "__init__.py: mecab_dictionary); only `analyzer: none` can run")
        return self


@lru_cache(maxsize=2)
def _pretokenizer(analyzer: str, protected: tuple[str, ...], cache_size: int, language: str):
    """One Pretokenizer per process and settings, so its eojeol cache carries over from shard to shard (the
    cache is exact, so this changes speed only)."""
    return Pretokenizer(analyzer, protected, cache_size=cache_size, language=language)


def training_scheme(language: str) -> str:
    """The exported tokenizer's kind for a language: "bert" (spaced words) or "metaspace" (no spaces)."""
    return "bert" if get_language(language).whitespace_words else "metaspace"


def _pretokenize_shard(task: tuple[str, str, str, list[str], int, str]) -> dict[str, Any]:
    """One input shard -> one unit shard. Top-level (picklable) for the process pool; builds its own tagger.

    Works on Arrow record batches rather than `Doc`s: only the text column passes through Python (ids,
    sources and meta are carried over as Arrow columns), which keeps the per-document cost to the
    pre-tokenization itself."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    in_path, out_path, analyzer, protected, cache_size, language = task
    pt = _pretokenizer(analyzer, tuple(protected), cache_size, language)
    to_units = pt.text
    rewriter = training_rewriter if training_scheme(language) == "bert" else metaspace_rewriter
    to_training = rewriter(reserved_tokens(protected))
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
    io.write_json(chars_path(Path(out_path)), stats.result().to_json(), indent=None, sort_keys=False)
    return {**shard_funnels(kept, bad), "quarantine": quarantine}


class _UnitShardWriter:
    """A unit shard, written from Arrow record batches with the text column replaced, byte for byte what
    `corpora.shards.write_docs` writes for the same documents: same schema and writer settings, one row group
    per `rows` documents (tests compare the two). Atomic: a temp name, renamed on a clean close."""

    rows: int = inspect.signature(write_docs).parameters["row_group_size"].default

    def __init__(self, path: Path):
        import pyarrow.parquet as pq

        self.path = path
        self._target = io.atomic_path(path)
        self._tmp = self._target.__enter__()
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

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        import pyarrow as pa

        try:
            if exc_type is None and (self._pending or self.n == 0):
                pending = self._pending or [DOC_SCHEMA.empty_table()]
                self._put(pa.concat_tables(pending).combine_chunks())
        finally:
            self._writer.close()
        self._target.__exit__(exc_type, exc, tb)  # renames the temp file into place, or discards it


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


def chars_path(shard: Path) -> Path:
    """The character-count sidecar of a unit shard (`shard-NNNNN.chars.json`), which the vocab stage reads."""
    return shard.with_name(shard.name.replace(".parquet", ".chars.json"))


class PretokenizeStage(Stage[PretokenizeParams]):
    """PII-replaced doc shards -> unit shards (one per input shard) and their character-count sidecars."""

    name = "pretokenize"
    version = "1"
    inputs = ("pii",)
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished
    variant_field = "analyzer"

    def fingerprint(self, ctx: StageContext[PretokenizeParams]) -> dict[str, Any]:
        dictionary = get_language(ctx.params.language).mecab_dictionary or "none"
        return package_versions("mecab-python3", dictionary, "tokenizers")

    def run(self, ctx: StageContext[PretokenizeParams]) -> StageResult:
        params = ctx.params
        src = ctx.inputs["pii"]
        protected = list(src.meta.get("placeholder_tokens", []))
        shards = list_shards(src.path)
        tasks = [(str(p), str(ctx.out_dir / p.name), params.analyzer, protected, params.cache_size,
                  params.language) for p in shards]
        funnels, bad = FunnelSum(), list[dict[str, Any]]()
        for res in ctx.map(_pretokenize_shard, tasks, desc=f"pretokenize ({params.analyzer})"):
            funnels.add(res)
            bad.extend(res["quarantine"])
        _pretokenizer.cache_clear()  # workers=1 ran in this process: free the tagger and eojeol cache
        if bad:
            with QuarantineWriter(ctx.out_dir / "quarantine" / "pretokenize.jsonl") as q:
                for rec in bad:
                    q.add(**rec)
        meta = {"analyzer": params.analyzer, "format": "units-v1", "placeholder_tokens": protected,
                "shards": len(shards), "language": params.language,
                "training_scheme": training_scheme(params.language)}
        return StageResult(funnel=funnels.funnel, by_source=dict(sorted(funnels.by_source.items())), meta=meta)
