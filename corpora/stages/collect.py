"""The collect stage: the recipe's raw sources -> document shards with provenance, plus a quarantine.

Work is split by input file (a source with `max_docs` is one task, read in file order until it has its
documents), and a file larger than `split_bytes` (text with `unit: line` or `block`, JSON lines, Parquet) by
pieces of about that size (`corpora.readers.ranges`: pieces end on record boundaries and continue the whole
file's line/row numbers, so their records, ids and quarantine entries are the whole file's). Each task writes
hidden part files named by its identity (source, file, piece); the stage renames a whole file's parts to
consecutive `shard-NNNNN.parquet` in that order, and re-chunks a split file's pieces into the `shard_docs`
chunks the whole-file read writes, so shards are the same bytes for any `ctx.workers` and with or without
splitting. CSV/TSV, compressed files, `unit: file`, Arrow/saved datasets and `max_docs` sources are never split.

Resume: every finished task leaves a done-marker (its result, JSON) in `_work/done/` of the partial folder,
written after its parts; the runner keeps that folder after a kill (`resumable`), and a rerun reads back the
markers and runs only the other tasks (the plan of pieces is kept in `_work/plan.json`, so lines are not
counted again). The final renames and re-chunking are redone or skipped idempotently.

Damaged records never stop the run: they go to `quarantine/<source>.jsonl` and into the funnel. Records
larger than `max_doc_bytes` are quarantined as `too_long` rather than kept: every later stage (filters,
MeCab, dedup shingling) handles a document at a time, and a multi-megabyte "document" is in practice a dump
or a missing line break, not prose worth the memory.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from itertools import chain, islice, pairwise
from pathlib import Path
from typing import Any, overload

import pyarrow as pa
from pydantic import Field, ValidationError

from corpora.readers import (
    Bad,
    ReadOptions,
    SourceFile,
    Span,
    read_file,
    resolve_source,
    source_files_on_disk,
    source_root,
)
from corpora.readers.ranges import byte_cuts, count_newlines, line_spans, row_group_spans, split_kind
from corpora.readers.streams import control_ratio
from corpora.shards import (
    DOC_SCHEMA,
    ROW_GROUP,
    Doc,
    QuarantineWriter,
    doc_id,
    meta_json,
    row_groups,
    shard_name,
    write_doc_tables,
    write_docs,
)
from corpora.sources import SourceSpec
from pipeline.filehash import file_digests
from pipeline.io import atomic_file, atomic_path
from pipeline.release.licenses import classify
from pipeline.stage import Funnel, FunnelSum, RecipeView, Stage, StageContext, StageParams, StageResult

WORK_DIR = "_work"
PARTS_DIR = f"{WORK_DIR}/parts"
DONE_DIR = f"{WORK_DIR}/done"  # one JSON marker per finished read task: what a rerun after a kill skips
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LISTED = 50  # empty files named in the manifest meta per source (the count is always exact)
log = logging.getLogger(__name__)


class CollectParams(StageParams):
    shard_docs: int = Field(default=20_000, ge=1, description="documents per shard (shards never span files)")
    max_doc_bytes: int = Field(default=10 * 2**20, ge=1,
                               description="larger records are quarantined as too_long, never held whole")
    binary_ratio: float = Field(default=0.3, gt=0, le=1,
                                description="a record (or a file's first 64 KiB) with a larger share of "
                                "control/undecodable characters is binary")
    split_bytes: int | None = Field(default=256 * 2**20, ge=1,
                                    description="a text (unit line/block), JSON-lines or Parquet file larger than "
                                    "this is read in pieces of about this size by several workers, with the same "
                                    "output bytes; null: every file is one task (see corpora/readers/ranges.py)")


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
    span: Span | None = None  # a piece of a split file (then `files` is that one file)
    span_idx: int = 0

    @property
    def tid(self) -> str:
        """The task's identity in its part, quarantine and done-marker names: a rerun finds its finished work
        by it (a piece also names its byte or row-group range, so a marker can never be taken for another)."""
        base = f"{self.source_idx:04d}-{self.task_idx:06d}"
        return base if self.span is None else f"{base}-{self.span_idx:05d}-{self.span.start}-{self.span.end}"


@dataclass
class _TaskResult:
    funnel: Funnel
    parts: list[str]  # relative to out_dir, in order
    empty_files: list[str]
    quarantine: str | None  # work-file path relative to out_dir, when it holds records
    max_docs_reached: bool = False
    records: int = 0  # records read: a split file is empty when its pieces read none
    broken: bool = False  # a piece of a split Parquet file met damage: the file is read whole instead

    def to_json(self) -> dict[str, Any]:
        return {"funnel": self.funnel.to_json(), "parts": self.parts, "empty_files": self.empty_files,
                "quarantine": self.quarantine, "max_docs_reached": self.max_docs_reached,
                "records": self.records, "broken": self.broken}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> _TaskResult:
        return cls(Funnel.from_json(d["funnel"]), list(d["parts"]), list(d["empty_files"]), d["quarantine"],
                   bool(d["max_docs_reached"]), int(d["records"]), bool(d["broken"]))


@dataclass
class _ReadState:
    kept: int = 0
    records: int = 0
    full: bool = False
    broken: bool = False


@dataclass
class _Unit:
    """Input that becomes consecutive shards: a file (or a `max_docs` source's files) read by one task, or a
    split file read by one task per piece, whose documents are re-chunked into shards at the end."""

    spec: SourceSpec
    rel: str
    tasks: list[_Task]

    @property
    def split(self) -> bool:
        return self.tasks[0].span is not None


@dataclass
class _SourceSummary:
    files: int = 0
    empty_files: list[str] = field(default_factory=list)
    shards: list[int] = field(default_factory=list)
    quarantine_parts: list[Path] = field(default_factory=list)
    max_docs_reached: bool = False


def _run_task(task: _Task) -> _TaskResult:
    """Read the task's file(s) into part files of `shard_docs` documents (a piece of a split file: one part,
    re-chunked later), then record the result in a done-marker, written last, so a rerun skips the task."""
    spec = task.spec
    funnel = Funnel()
    empty: list[str] = []
    qrel = f"{WORK_DIR}/q-{task.tid}.jsonl"
    state = _ReadState()

    def docs(qw: QuarantineWriter) -> Iterator[Doc]:
        def bad(rel: str, reason: str, location: str, detail: str, excerpt: str | bytes, chars: int) -> None:
            funnel.quarantine(chars)
            qw.add(source=spec.name, file=_safe(rel), reason=reason, location=location, detail=_safe(detail),
                   excerpt=_safe(excerpt))

        for src in task.files:
            n_records = 0

            with closing(read_file(spec, src, task.opts, task.span)) as records:
                for rec in records:
                    n_records += 1
                    if isinstance(rec, Bad):
                        if task.span is not None and rec.reason == "corrupt_file":
                            state.broken = True  # where the whole-file read stops; it is redone whole
                            return
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
                    state.kept += 1
                    if spec.max_docs is not None and state.kept >= spec.max_docs:
                        state.full = True
                        return
            state.records += n_records
            if n_records == 0:
                empty.append(src.rel)

    parts: list[str] = []
    with QuarantineWriter(task.out_dir / qrel) as qw:
        stream = docs(qw)
        while (first := next(stream, None)) is not None:
            if task.span is not None:  # a piece: one part, re-cut into shards at the end
                parts.append(f"{PARTS_DIR}/{task.tid}.arrow")
                _write_piece(task.out_dir / parts[-1], chain([first], stream))
                break
            parts.append(f"{PARTS_DIR}/{task.tid}-{len(parts):05d}.parquet")
            write_docs(task.out_dir / parts[-1], chain([first], islice(stream, task.shard_docs - 1)))
        n_quarantined = qw.count
    res = _TaskResult(funnel, parts, empty, qrel if n_quarantined else None, state.full, state.records,
                      state.broken)
    with atomic_file(_marker(task), "w") as f:
        json.dump(res.to_json(), f, sort_keys=True)
    return res


def _write_piece(path: Path, docs: Iterator[Doc]) -> None:
    """A piece's documents as an uncompressed Arrow IPC file, in batches of ROW_GROUP: it is read once, by the
    re-cutting, so a Parquet part would only add a zstd round trip (measured: about a quarter more CPU)."""
    with atomic_path(path) as tmp, pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, DOC_SCHEMA) as w:
        while batch := list(islice(docs, ROW_GROUP)):
            w.write_table(pa.Table.from_pydict({"id": [d.id for d in batch], "text": [d.text for d in batch],
                                                "source": [d.source for d in batch],
                                                "meta": [d.meta for d in batch]}, schema=DOC_SCHEMA))


def _marker(task: _Task) -> Path:
    return task.out_dir / DONE_DIR / f"{task.tid}.json"


def _finished(task: _Task) -> _TaskResult | None:
    """The result a run before a kill recorded for this task, or None (then it runs)."""
    path = _marker(task)
    if not path.exists():
        return None
    return _TaskResult.from_json(json.loads(path.read_text(encoding="utf-8")))


class CollectStage(Stage[CollectParams]):
    """Every source of the recipe, streamed in file order into document shards (see the module docstring)."""

    name = "collect"
    version = "1"
    sources_model = SourceSpec
    layout_params = ("split_bytes",)  # the same shards whatever the pieces (tests/test_collect_ranges.py)
    resumable = True  # the runner keeps a killed run's partial folder; `run` skips the finished tasks

    @classmethod
    def recipe_warnings(cls, recipe: RecipeView) -> list[str]:
        """A source without a licence: the model card then says the licence is unknown (pipeline/release/licenses.py)."""
        return [f"sources.{i}.license: source {spec.name!r} has no licence; the model card will say the licence "
                f"of the text is unknown (set e.g. license: \"CC BY-SA 4.0\")"
                for i, spec in enumerate(recipe.sources) if classify(spec.name, spec.license).missing]

    @classmethod
    def progress(cls, partial: Path, params: dict[str, Any]) -> str | None:
        """`klue status` while collect runs: the read tasks (files, pieces of split files) finished so far."""
        done = partial / DONE_DIR
        if not done.is_dir():
            return None
        return f"{sum(1 for _ in done.glob('*.json'))} read tasks (files or pieces of files) done"

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
        files = [resolve_source(spec, base) for spec in sources]
        plan = _plan(ctx, sources, files, opts)
        units = _units(sources, files, plan, out, opts, params.shard_docs)
        results = _run_all(ctx, [t for u in units for t in u.tasks], "collect: files")
        broken = [u for u in units if u.split and any(results[t.tid].broken for t in u.tasks)]
        for u in broken:  # damage in a split Parquet file: read it whole, as without splitting
            u.tasks = [replace(u.tasks[0], span=None, span_idx=0)]
        results |= _run_all(ctx, [u.tasks[0] for u in broken], "collect: damaged files")

        summaries = {spec.name: _SourceSummary(files=len(f)) for spec, f in zip(sources, files, strict=True)}
        funnels = FunnelSum(spec.name for spec in sources)  # every source, even one that read nothing
        for unit in units:
            for r in (results[t.tid] for t in unit.tasks):
                funnels.add_funnels(r.funnel, {unit.spec.name: r.funnel})
        funnel, by_source = funnels.funnel, funnels.by_source
        n_shards, rechunk = _number_shards(out, units, results, summaries, params.shard_docs)
        if rechunk:
            for _ in ctx.map(_write_shard, rechunk, desc="collect: re-chunking split files"):
                pass

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


def _number_shards(out: Path, units: list[_Unit], results: dict[str, _TaskResult],
                   summaries: dict[str, _SourceSummary], shard_docs: int) -> tuple[int, list[_ShardJob]]:
    """Give every unit its consecutive shard numbers, in unit order: a whole file's parts are renamed to
    them, a split file's shards are returned as jobs to write (its pieces' documents re-cut). Also fills the
    per-source summaries (shards, empty files, quarantine parts)."""
    n_shards = 0
    rechunk: list[_ShardJob] = []
    for unit in units:
        res = [results[t.tid] for t in unit.tasks]
        summary = summaries[unit.spec.name]
        if unit.split:
            jobs = _rechunk_jobs(out, res, shard_docs, n_shards)
            rechunk += jobs
            n = len(jobs)
            if sum(r.records for r in res) == 0:
                summary.empty_files.append(unit.rel)
        else:
            n = _place_parts(out, res[0].parts, n_shards)
            summary.empty_files += res[0].empty_files
        summary.shards += range(n_shards, n_shards + n)
        n_shards += n
        for r in res:
            summary.max_docs_reached |= r.max_docs_reached
            if r.quarantine:
                summary.quarantine_parts.append(out / r.quarantine)
    return n_shards, rechunk


def _plan(ctx: StageContext[CollectParams], sources: list[SourceSpec], files: list[list[SourceFile]],
          opts: ReadOptions) -> dict[str, list[Span]]:
    """The pieces of every split file ("source/file" index -> spans), from `_work/plan.json` on a rerun (the
    partial folder belongs to this key, so to these very input bytes) or computed and saved there: cuts near
    multiples of `split_bytes`, then the lines ahead of each piece, counted in parallel."""
    path = ctx.out_dir / WORK_DIR / "plan.json"
    if path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        return {k: [Span(*s) for s in v] for k, v in saved.items()}
    split = ctx.params.split_bytes
    plan: dict[str, list[Span]] = {}
    counting: list[tuple[str, Path, list[int]]] = []
    for si, spec in enumerate(sources):
        for fi, src in enumerate(files[si]):
            kind = split_kind(spec, src, split, opts)
            if kind is None or split is None:
                continue
            if kind == "row_groups":
                spans = row_group_spans(spec, src.path, split)
                if spans:
                    plan[f"{si}/{fi}"] = spans
                continue
            cuts = byte_cuts(src.path, split, kind == "blocks", opts.max_doc_bytes)
            if len(cuts) > 1:
                counting.append((f"{si}/{fi}", src.path, cuts))
    jobs = [(str(p), a, b) for _, p, cuts in counting for a, b in pairwise(cuts)]
    counts = iter(ctx.map(count_newlines, jobs, desc="collect: counting lines of split files") if jobs else [])
    for key, p, cuts in counting:
        plan[key] = line_spans(cuts, p.stat().st_size, [next(counts) for _ in cuts[1:]])
    with atomic_file(path, "w") as f:
        json.dump({k: [[s.start, s.end, s.before] for s in v] for k, v in plan.items()}, f, sort_keys=True)
    return plan


def _units(sources: list[SourceSpec], files: list[list[SourceFile]], plan: dict[str, list[Span]], out: Path,
           opts: ReadOptions, shard_docs: int) -> list[_Unit]:
    """The read tasks in output order: a `max_docs` source is one task (read in file order until it has its
    documents), any other file one task, or one per piece when it is split."""
    units = []
    for si, spec in enumerate(sources):
        if spec.max_docs is not None:
            units.append(_Unit(spec, "", [_Task(si, 0, spec, tuple(files[si]), out, opts, shard_docs)]))
            continue
        for fi, src in enumerate(files[si]):
            task = _Task(si, fi, spec, (src,), out, opts, shard_docs)
            spans = plan.get(f"{si}/{fi}", [])
            tasks = [replace(task, span=s, span_idx=k) for k, s in enumerate(spans)] or [task]
            units.append(_Unit(spec, src.rel, tasks))
    return units


def _run_all(ctx: StageContext[CollectParams], tasks: list[_Task], desc: str) -> dict[str, _TaskResult]:
    """Results by task id: those recorded before a kill are read back, the others run."""
    results: dict[str, _TaskResult] = {}
    todo = []
    for t in tasks:
        res = _finished(t)
        if res is None:
            todo.append(t)
        else:
            results[t.tid] = res
    if not todo:
        return results
    if results:
        log.info("collect: %d of %d read tasks finished before; running %d", len(results), len(tasks), len(todo))
    for t, res in zip(todo, ctx.map(_run_task, todo, desc=desc), strict=True):
        results[t.tid] = res
    return results


def _place_parts(out: Path, parts: list[str], first: int) -> int:
    """Rename a whole file's parts to consecutive shards. Re-entrant: a part renamed before a kill is found
    under its shard name (the numbering is the same on the rerun)."""
    for k, part in enumerate(parts):
        shard = out / shard_name(first + k)
        if (out / part).exists():
            os.replace(out / part, shard)
        elif not shard.exists():
            raise RuntimeError(f"collect: {out / part} is missing and {shard.name} was not made from it; "
                               f"delete {out} and rerun")
    return len(parts)


_ShardJob = tuple[Path, list[tuple[Path, int, int]]]  # shard path, (part, first row, end row) slices


def _rechunk_jobs(out: Path, res: list[_TaskResult], shard_docs: int, first: int) -> list[_ShardJob]:
    """The shards of a split file: its pieces' documents in order, cut into the `shard_docs` chunks the
    whole-file read writes."""
    counts = [(out / p, r.funnel.docs_kept) for r in res for p in r.parts]  # a piece has at most one part
    groups: list[list[tuple[Path, int, int]]] = []
    cur: list[tuple[Path, int, int]] = []
    room = shard_docs
    for path, n in counts:
        a = 0
        while a < n:
            take = min(room, n - a)
            cur.append((path, a, a + take))
            a, room = a + take, room - take
            if room == 0:
                groups.append(cur)
                cur, room = [], shard_docs
    if cur:
        groups.append(cur)
    return [(out / shard_name(first + j), g) for j, g in enumerate(groups)]


def _write_shard(job: _ShardJob) -> int:
    """Write one shard of a split file from slices of its pieces' parts, in the row groups `write_docs` makes
    (ROW_GROUP rows, contiguous columns), so the bytes equal the whole-file read's."""
    dest, slices = job
    return write_doc_tables(dest, row_groups(chain.from_iterable(_slice(p, a, b) for p, a, b in slices)))


def _slice(path: Path, a: int, b: int) -> Iterator[pa.Table]:
    """Rows [a, b) of a piece's part file, a stored batch at a time (memory-mapped: only the batches that hold
    them are touched)."""
    reader = pa.ipc.open_file(pa.memory_map(str(path)))
    row = 0
    for i in range(reader.num_record_batches):
        batch = reader.get_batch(i)
        n = batch.num_rows
        if row < b and row + n > a:
            lo = max(a - row, 0)
            yield pa.Table.from_batches([batch.slice(lo, min(b - row, n) - lo)])
        row += n
        if row >= b:
            break


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
