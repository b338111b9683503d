"""The collect stage: the recipe's raw sources -> document shards with provenance, plus a quarantine.

Work is split by input file (a source with `max_docs` is one task, read in file order until it has its
documents), each task writes hidden part files named by (source, task, chunk), and the stage renames them to
consecutive `shard-NNNNN.parquet` in that order, so shards are the same bytes for any `ctx.workers`.

Damaged records never stop the run: they go to `quarantine/<source>.jsonl` and into the funnel. Records
larger than `max_doc_bytes` are quarantined as `too_long` rather than kept: every later stage (filters,
MeCab, dedup shingling) handles a document at a time, and a multi-megabyte "document" is in practice a dump
or a missing line break, not prose worth the memory.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, overload

from pydantic import Field, ValidationError

from corpora.readers import (
    Bad,
    ReadOptions,
    SourceFile,
    read_file,
    resolve_source,
    source_files_on_disk,
    source_root,
)
from corpora.readers.streams import control_ratio
from corpora.shards import Doc, QuarantineWriter, doc_id, meta_json, shard_name, write_docs
from corpora.sources import SourceSpec
from pipeline.filehash import file_digests
from pipeline.io import atomic_file
from pipeline.stage import Funnel, RecipeView, Stage, StageContext, StageParams, StageResult

WORK_DIR = "_work"
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LISTED = 50  # empty files named in the manifest meta per source (the count is always exact)


class CollectParams(StageParams):
    shard_docs: int = Field(default=20_000, ge=1, description="documents per shard (shards never span files)")
    max_doc_bytes: int = Field(default=10 * 2**20, ge=1,
                               description="larger records are quarantined as too_long, never held whole")
    binary_ratio: float = Field(default=0.3, gt=0, le=1,
                                description="a record (or a file's first 64 KiB) with a larger share of "
                                "control/undecodable characters is binary")


@overload
def _safe(s: str) -> str: ...
@overload
def _safe(s: bytes) -> bytes: ...
def _safe(s: str | bytes) -> str | bytes:
    """Quarantine text that can be written as UTF-8: lone surrogates become visible \\udXXX escapes."""
    return s if isinstance(s, bytes) else s.encode("utf-8", "backslashreplace").decode("utf-8")


def check_text(text: str, opts: ReadOptions) -> tuple[str, str] | None:
    """Why a decoded text cannot be a document (reason, detail), or None. Empty text is the caller's drop."""
    if len(text) * 4 > opts.max_doc_bytes:  # cheap bound first; UTF-8 needs at most 4 bytes a character
        n = len(text.encode("utf-8", "surrogatepass"))
        if n > opts.max_doc_bytes:
            return "too_long", f"text of {n} bytes exceeds max_doc_bytes={opts.max_doc_bytes}"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return "invalid_unicode", f"lone surrogate U+{ord(text[e.start]):04X} at character {e.start}"
    r = control_ratio(text)
    if r > opts.binary_ratio:
        return "binary", f"{r:.0%} of {len(text)} characters are control characters (binary_ratio=" \
                         f"{opts.binary_ratio})"
    return None


@dataclass(frozen=True)
class _Task:
    source_idx: int
    task_idx: int
    spec: SourceSpec
    files: tuple[SourceFile, ...]
    out_dir: Path
    opts: ReadOptions
    shard_docs: int


@dataclass
class _TaskResult:
    funnel: Funnel
    parts: list[str]
    empty_files: list[str]
    quarantine: str | None  # work-file path relative to out_dir, when it holds records
    max_docs_reached: bool = False


@dataclass
class _SourceSummary:
    files: int = 0
    empty_files: list[str] = field(default_factory=list)
    shards: list[int] = field(default_factory=list)
    quarantine_parts: list[Path] = field(default_factory=list)
    max_docs_reached: bool = False


def _run_task(task: _Task) -> _TaskResult:
    spec = task.spec
    funnel = Funnel()
    empty: list[str] = []
    qrel = f"{WORK_DIR}/q-{task.source_idx:04d}-{task.task_idx:06d}.jsonl"
    state = {"kept": 0, "full": False}

    def docs(qw: QuarantineWriter) -> Iterator[Doc]:
        def bad(rel: str, reason: str, location: str, detail: str, excerpt: str | bytes, chars: int) -> None:
            funnel.quarantine(chars)
            qw.add(source=spec.name, file=_safe(rel), reason=reason, location=location, detail=_safe(detail),
                   excerpt=_safe(excerpt))

        for src in task.files:
            n_records = 0

            with closing(read_file(spec, src, task.opts)) as records:
                for rec in records:
                    n_records += 1
                    if isinstance(rec, Bad):
                        bad(src.rel, rec.reason, rec.location, rec.detail, rec.excerpt, rec.chars)
                        continue
                    if not rec.text.strip():
                        funnel.drop("empty", len(rec.text))
                        continue
                    where = _location(rec.where)
                    problem = check_text(rec.text, task.opts)
                    if problem:
                        bad(src.rel, problem[0], where, problem[1], rec.text[:200], len(rec.text))
                        continue
                    meta: dict[str, Any] = {"source": spec.name, "license": spec.license, "file": src.rel,
                                            **rec.where}
                    if rec.fields:
                        meta["fields"] = rec.fields
                    meta_str = meta_json(meta)
                    if _SURROGATE.search(meta_str):
                        bad(src.rel, "invalid_unicode", where,
                            "a meta field (or the file name) holds a lone surrogate", meta_str[:200], len(rec.text))
                        continue
                    funnel.keep(len(rec.text))
                    yield Doc(doc_id(spec.name, src.rel, rec.index), rec.text, spec.name, meta_str)
                    state["kept"] += 1
                    if spec.max_docs is not None and state["kept"] >= spec.max_docs:
                        state["full"] = True
                        return
            if n_records == 0:
                empty.append(src.rel)

    parts: list[str] = []
    with QuarantineWriter(task.out_dir / qrel) as qw:
        stream = docs(qw)
        while (first := next(stream, None)) is not None:
            name = f".part-{task.source_idx:04d}-{task.task_idx:06d}-{len(parts):05d}.parquet"
            write_docs(task.out_dir / name, chain([first], islice(stream, task.shard_docs - 1)))
            parts.append(name)
        n_quarantined = qw.count
    return _TaskResult(funnel, parts, empty, qrel if n_quarantined else None, bool(state["full"]))


class CollectStage(Stage[CollectParams]):
    """Every source of the recipe, streamed in file order into document shards (see the module docstring)."""

    name = "collect"
    version = "1"
    sources_model = SourceSpec

    @classmethod
    def recipe_warnings(cls, recipe: RecipeView) -> list[str]:
        """A source without a licence: the model card then says the licence is unknown (corpora/licenses.py)."""
        from corpora.licenses import classify

        return [f"sources.{i}.license: source {spec.name!r} has no licence; the model card will say the licence "
                f"of the text is unknown (set e.g. license: \"CC BY-SA 4.0\")"
                for i, spec in enumerate(recipe.sources) if classify(spec.name, spec.license).missing]

    def fingerprint(self, ctx: StageContext[CollectParams]) -> dict[str, Any]:
        """Relative path, size and content digest of every matched file: edited, added or removed source files
        change the key; a copy of the corpus elsewhere, or the same bytes with new mtimes, does not.

        Also the recipe-time check: a missing path, an empty match or an unset variable raises here."""
        base = _base_dir(ctx.recipe)
        listed = {}
        for spec in _sources(ctx.recipe):
            listed[spec.name] = (source_root(spec, base), source_files_on_disk(resolve_source(spec, base)))
        digests = file_digests([f for _, files in listed.values() for f in files], desc="collect: hashing sources")
        out: dict[str, Any] = {}
        for name, (root, files) in listed.items():
            out[name] = [[Path(os.path.relpath(f, root)).as_posix(), f.stat().st_size, digests[f]] for f in files]
        return {"files": out}

    def run(self, ctx: StageContext[CollectParams]) -> StageResult:
        params = ctx.params
        opts = ReadOptions(max_doc_bytes=params.max_doc_bytes, binary_ratio=params.binary_ratio)
        out = ctx.out_dir
        sources = _sources(ctx.recipe)
        base = _base_dir(ctx.recipe)
        tasks: list[_Task] = []
        summaries: dict[str, _SourceSummary] = {}
        for si, spec in enumerate(sources):
            files = resolve_source(spec, base)
            summaries[spec.name] = _SourceSummary(files=len(files))
            groups = [tuple(files)] if spec.max_docs is not None else [(f,) for f in files]
            tasks += [_Task(si, ti, spec, g, out, opts, params.shard_docs) for ti, g in enumerate(groups)]

        funnel = Funnel()
        by_source = {spec.name: Funnel() for spec in sources}
        n_shards = 0
        results = ctx.map(_run_task, tasks, desc="collect: files")
        for task, res in zip(tasks, results, strict=True):
            summary = summaries[task.spec.name]
            for part in res.parts:  # tasks arrive in order: consecutive shard numbers
                os.replace(out / part, out / shard_name(n_shards))
                summary.shards.append(n_shards)
                n_shards += 1
            funnel.add(res.funnel)
            by_source[task.spec.name].add(res.funnel)
            summary.empty_files += res.empty_files
            summary.max_docs_reached |= res.max_docs_reached
            if res.quarantine:
                summary.quarantine_parts.append(out / res.quarantine)

        meta_sources: dict[str, Any] = {}
        for name, s in summaries.items():
            qfile = None
            if s.quarantine_parts:
                qfile = f"quarantine/{name}.jsonl"
                _concat(s.quarantine_parts, out / qfile)
            meta_sources[name] = {
                "files": s.files,
                "empty_files": len(s.empty_files),
                "empty_file_names": s.empty_files[:MAX_LISTED],
                "shards": [s.shards[0], s.shards[-1] + 1] if s.shards else [],
                "quarantine": qfile,
                "max_docs_reached": s.max_docs_reached,
            }
        shutil.rmtree(out / WORK_DIR, ignore_errors=True)
        return StageResult(funnel=funnel, by_source=by_source,
                           meta={"shards": n_shards, "docs": funnel.docs_kept, "sources": meta_sources})


def _location(where: dict[str, Any]) -> str:
    """The same wording the readers use for quarantine locations."""
    if "row" in where:
        return f"row {where['row']}" + (f" (line {where['line']})" if "line" in where else "")
    return f"line {where['line']}" if "line" in where else "file"


def _concat(parts: list[Path], dest: Path) -> None:
    with atomic_file(dest, "wb") as w:
        for p in parts:
            with open(p, "rb") as r:
                shutil.copyfileobj(r, w)


def _sources(recipe: RecipeView) -> list[SourceSpec]:
    """The recipe's sources as SourceSpec (a hand-built recipe may hold dicts); names must be unique because
    they key ids, quarantine files and per-source counts."""
    raw = list(getattr(recipe, "sources", None) or [])
    if not raw:
        raise ValueError("the recipe has no `sources:` for the collect stage to read")
    specs = []
    for i, s in enumerate(raw):
        if isinstance(s, SourceSpec):
            specs.append(s)
            continue
        try:
            specs.append(SourceSpec.model_validate(s))
        except ValidationError as e:
            d = s if isinstance(s, dict) else {}
            why = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
            raise ValueError(f"source {d.get('name', f'#{i}')!r} (path {d.get('path')}): {why}") from None
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"source names must be unique; repeated: {dupes}")
    return specs


def _base_dir(recipe: RecipeView) -> Path | None:
    """Folder that relative source paths are relative to: the recipe's `base_dir`, or the folder of its
    `path` (the recipe file); None means the current directory."""
    base = getattr(recipe, "base_dir", None)
    if base:
        return Path(base)
    path = getattr(recipe, "path", None)
    if path:
        p = Path(path)
        return p.parent if p.suffix in (".yaml", ".yml") or p.is_file() else p
    return None
