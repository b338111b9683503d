"""The stage contract: what every stage of the pipeline implements and what the runner hands it.

A stage is a class with a name, a pydantic params model (its part of the recipe), the names of the stages it
reads, a code version, and `run(ctx) -> StageResult`. The runner (pipeline/runner.py) computes a cache key from
(name, version, params, the keys of its inputs, `fingerprint(ctx)`), gives the stage an empty (or, for a
resumable stage, partially filled) folder to write into, checks the counts it returns, writes `manifest.json`
last and renames the folder into place. A stage never writes outside `ctx.out_dir` and never reads a later stage.

Why a class per stage and not a function: the runner needs the static parts (name, inputs, params model,
version) before it runs anything, to validate a recipe and to compute keys for every arm of an ablation.

A stage is generic over its params model: `class FilterStage(Stage[FilterParams])` declares the model once,
`params_model` is taken from it, and `ctx.params` is a `FilterParams` to the type checker.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict

from pipeline import io, journal
from pipeline.parallel import LOCAL, Executor, ordered_map

JOURNAL = "_journal"  # a `shard_resume` stage's record of its finished tasks, inside its partial folder
PARTIAL = ".partial"  # the suffix of a stage folder the runner is still writing: `<key>.partial/`

# The exit status of a run stopped by a preemption signal after saving its progress: EX_TEMPFAIL of sysexits.h
# ("temporary failure; retry"), what schedulers and wrappers read as "requeue me". `klue run` and
# `python -m pretrain.train` exit with it; any other non-zero status is a failure.
EXIT_PREEMPTED = 75


class Preempted(Exception):
    """A stage stopped on a preemption signal (SIGTERM, SIGUSR1) once its progress was saved: not a failure,
    rerunning the same command continues from where it stopped. The runner re-raises it with `stage` set, and
    `klue run` exits with `EXIT_PREEMPTED`."""

    def __init__(self, message: str, stage: str | None = None):
        self.message, self.stage = message, stage
        super().__init__(message)


class StageParams(BaseModel):
    """Base of every stage's params model: unknown keys are a recipe error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


P = TypeVar("P", bound=StageParams)


class RecipeView(Protocol):
    """What a stage may read of the recipe (`pipeline.recipe.Recipe` is one; tests pass simpler objects)."""

    @property
    def name(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def sources(self) -> Sequence[Any]: ...

    @property
    def path(self) -> Path | None: ...


@dataclass
class Funnel:
    """Document accounting for one stage (and, in `by_source`, per source).

    The invariant the runner enforces: docs_in == docs_kept + sum(dropped.values()) + quarantined, and the same
    for characters. Characters are counted on the text as the stage received it (for collect: as decoded).
    """

    docs_in: int = 0
    docs_kept: int = 0
    dropped: Counter = field(default_factory=Counter)  # reason code -> docs
    quarantined: int = 0
    chars_in: int = 0
    chars_kept: int = 0
    chars_dropped: Counter = field(default_factory=Counter)  # reason code -> chars
    chars_quarantined: int = 0

    def keep(self, n_chars: int, docs: int = 1) -> None:
        """Book `docs` kept documents (one by default) of `n_chars` characters in all."""
        self.docs_in += docs
        self.docs_kept += docs
        self.chars_in += n_chars
        self.chars_kept += n_chars

    def drop(self, reason: str, n_chars: int) -> None:
        self.docs_in += 1
        self.dropped[reason] += 1
        self.chars_in += n_chars
        self.chars_dropped[reason] += n_chars

    def quarantine(self, n_chars: int = 0) -> None:
        self.docs_in += 1
        self.quarantined += 1
        self.chars_in += n_chars
        self.chars_quarantined += n_chars

    def add(self, other: Funnel) -> None:
        self.docs_in += other.docs_in
        self.docs_kept += other.docs_kept
        self.dropped.update(other.dropped)
        self.quarantined += other.quarantined
        self.chars_in += other.chars_in
        self.chars_kept += other.chars_kept
        self.chars_dropped.update(other.chars_dropped)
        self.chars_quarantined += other.chars_quarantined

    def problems(self) -> list[str]:
        """Why these counts do not reconcile (empty list when they do)."""
        out = []
        if self.docs_in != self.docs_kept + sum(self.dropped.values()) + self.quarantined:
            out.append(
                f"docs: in={self.docs_in} != kept={self.docs_kept} + dropped={sum(self.dropped.values())}"
                f" + quarantined={self.quarantined}"
            )
        if self.chars_in != self.chars_kept + sum(self.chars_dropped.values()) + self.chars_quarantined:
            out.append(
                f"chars: in={self.chars_in} != kept={self.chars_kept} + dropped={sum(self.chars_dropped.values())}"
                f" + quarantined={self.chars_quarantined}"
            )
        if any(v < 0 for v in self.dropped.values()) or min(self.docs_kept, self.quarantined) < 0:
            out.append("negative count")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "docs_in": self.docs_in,
            "docs_kept": self.docs_kept,
            "dropped": dict(sorted(self.dropped.items())),
            "quarantined": self.quarantined,
            "chars_in": self.chars_in,
            "chars_kept": self.chars_kept,
            "chars_dropped": dict(sorted(self.chars_dropped.items())),
            "chars_quarantined": self.chars_quarantined,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Funnel:
        return cls(
            docs_in=d["docs_in"],
            docs_kept=d["docs_kept"],
            dropped=Counter(d.get("dropped", {})),
            quarantined=d.get("quarantined", 0),
            chars_in=d.get("chars_in", 0),
            chars_kept=d.get("chars_kept", 0),
            chars_dropped=Counter(d.get("chars_dropped", {})),
            chars_quarantined=d.get("chars_quarantined", 0),
        )



def tally(acc: dict[str, list[int]], source: str, text: str) -> None:
    """Count one document of `source` into a `[docs, chars]` tally (see `funnels_from_tallies`)."""
    c = acc.get(source)
    if c is None:
        c = acc[source] = [0, 0]
    c[0] += 1
    c[1] += len(text)


def funnels_from_tallies(kept: dict[str, list[int]], quarantined: dict[str, list[int]]
                         ) -> tuple[Funnel, dict[str, Funnel]]:
    """Total and per-source funnels of a pass-through stage from per-source `[docs, chars]` tallies.

    Hot loops tally into plain lists (a Funnel per document costs two Counters); this turns the tallies into
    the accounting the runner checks, sources in sorted order.
    """
    by_source: dict[str, Funnel] = {}
    for src in sorted(kept.keys() | quarantined.keys()):
        (nk, ck), (nq, cq) = kept.get(src, (0, 0)), quarantined.get(src, (0, 0))
        by_source[src] = Funnel(docs_in=nk + nq, docs_kept=nk, quarantined=nq, chars_in=ck + cq,
                                chars_kept=ck, chars_quarantined=cq)
    return funnel_sum(by_source.values()), by_source


def shard_funnels(kept: dict[str, list[int]], quarantined: dict[str, list[int]]) -> dict[str, Any]:
    """A shard worker's funnels from its tallies, as the JSON that crosses the process boundary (Funnels with
    Counters pickle slower than plain dicts) and that `FunnelSum.add` reads back in the parent."""
    funnel, by_source = funnels_from_tallies(kept, quarantined)
    return {"funnel": funnel.to_json(), "by_source": {k: v.to_json() for k, v in by_source.items()}}


def funnel_sum(funnels: Iterable[Funnel]) -> Funnel:
    """The sum of funnels (`Funnel.add`): a total from per-source funnels."""
    total = Funnel()
    for f in funnels:
        total.add(f)
    return total


class FunnelSum:
    """The stage's total and per-source funnels, summed over its shard workers' results: the one way every stage
    sums per-shard counts (`add` for the JSON of `shard_funnels`, `add_funnels` for Funnels a worker returns), so
    the accounting lives in one place. `sources`: per-source funnels to start with, counted or not (collect lists
    every source of the recipe, even one that read nothing)."""

    def __init__(self, sources: Iterable[str] = ()) -> None:
        self.funnel = Funnel()
        # the sources given, then the others in the order they first arrive
        self.by_source: dict[str, Funnel] = {s: Funnel() for s in sources}

    def add(self, res: dict[str, Any]) -> None:
        """Add one shard result (a dict with the `funnel` and `by_source` keys of `shard_funnels`)."""
        self.add_funnels(Funnel.from_json(res["funnel"]),
                         {k: Funnel.from_json(v) for k, v in res["by_source"].items()})

    def add_funnels(self, funnel: Funnel, by_source: Mapping[str, Funnel]) -> None:
        """Add one shard's total and its per-source funnels (in their order)."""
        self.funnel.add(funnel)
        for k, v in by_source.items():
            self.by_source.setdefault(k, Funnel()).add(v)


@dataclass
class StageResult:
    """What `Stage.run` returns; stored in the manifest.

    funnel / by_source: document accounting (None for stages that do not consume documents, e.g. vocab).
    meta: small JSON-able facts that later stages or the report read from the manifest (e.g. the PII stage's
    placeholder tokens, the vocab stage's tokenizer folder, pretrain's final model folder, summary metrics).
    """

    funnel: Funnel | None = None
    by_source: dict[str, Funnel] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageInput:
    """A finished upstream stage: its folder and its manifest (as a dict)."""

    name: str
    path: Path
    manifest: dict[str, Any]

    @property
    def meta(self) -> dict[str, Any]:
        return self.manifest.get("meta", {})

    def files(self, pattern: str = "*.parquet") -> list[Path]:
        """Output files matching `pattern`, sorted by name (shard order is name order)."""
        return sorted(p for p in self.path.glob(pattern) if p.is_file())


@dataclass
class StageContext(Generic[P]):
    """Everything a stage may use. `out_dir` exists and is the only place the stage writes."""

    out_dir: Path
    params: P
    inputs: dict[str, StageInput]
    recipe: RecipeView
    workers: int = 1
    arm: dict[str, str] = field(default_factory=dict)  # variant name -> value of the arm being run
    executor: Executor = LOCAL  # the local pool, or Ray tasks on a cluster: never part of a key
    # for a `shard_resume` stage: where each finished task's result is recorded (see `map`)
    journal: Path | None = None
    _maps: int = field(default=0, repr=False, compare=False)

    @property
    def seed(self) -> int:
        return self.recipe.seed

    def finished_runs(self, stage: type[Stage[Any]]) -> list[tuple[Path, dict[str, Any]]]:
        """The finished folders of `stage` beside this one (`<workdir>/<stage>/<key>/` of other keys, each with
        its manifest), in name order: those of the same stage version, seed and input keys, which differ from this
        run in their params only. The runner's cache, offered to a stage that grows from another run of itself
        (pretrain: a longer run continues a shorter one); which of them fits is the stage's decision."""
        inputs = {dep: inp.manifest.get("key") for dep, inp in sorted(self.inputs.items())}
        out = []
        for folder in sorted(self.out_dir.parent.glob("*")):
            # (pipeline.manifest.MANIFEST: the runner writes it last, so a folder with one is done)
            if folder == self.out_dir or folder.suffix or not (folder / "manifest.json").is_file():
                continue
            m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            if (m.get("stage") == stage.name and m.get("version") == stage.version and m.get("seed") == self.seed
                    and m.get("inputs") == inputs):
                out.append((folder, m))
        return out

    def interrupted_runs(self) -> list[Path]:
        """The unfinished folders of this stage beside this one (`<key>.partial/` of other keys: runs that were
        killed, or are running), in name order: offered to a stage that takes over another key's interrupted run
        (pretrain: a run on M processes continues one interrupted on N); which of them fits is the stage's
        decision."""
        return [f for f in sorted(self.out_dir.parent.glob(f"*{PARTIAL}")) if f != self.out_dir]

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], desc: str | None = None,
            total: int | None = None, start: Literal["fork", "spawn"] = "fork", devices: int = 0) -> Iterator[Any]:
        """Apply `fn` to `items` on `self.workers` processes (or as Ray tasks), yielding results in input order.

        `fn` must be a picklable top-level function. Order-preserving, so outputs never depend on the
        number of workers or the executor. Shows a progress bar when `desc` is given. `start`: how local worker
        processes start (`ordered_map`; `spawn` for tasks that train with torch). `devices`: one accelerator per
        task, one worker per device (`ordered_map`).

        With a `journal` (stages with `shard_resume`), each result is recorded as it arrives, and a rerun after
        a kill takes the recorded results instead of running those tasks again: only the missing shards run.
        Sound because a task writes its own outputs atomically before it returns, and the n-th `map` call of a
        stage run gets the same items in the same order on every run (they derive from its inputs and params).
        """
        if self.journal is None:
            return ordered_map(fn, items, workers=self.workers, desc=desc, total=total, executor=self.executor,
                               start=start, devices=devices)
        self._maps += 1
        return _journaled_map(self, fn, list(items), self.journal / f"map-{self._maps:02d}", desc, start, devices)


def _journaled_map(ctx: StageContext[Any], fn: Callable[[Any], Any], items: list[Any], folder: Path,
                   desc: str | None, start: Literal["fork", "spawn"] = "fork", devices: int = 0) -> Iterator[Any]:
    """`ordered_map` over the items with no recorded result; recorded ones are read back in their place.
    Records are JSON (`pipeline.journal`), never pickles."""
    folder.mkdir(parents=True, exist_ok=True)
    done = {int(p.stem): p for p in folder.glob("*.json") if p.stem.isdigit() and not io.is_temp(p)}
    todo = [i for i in range(len(items)) if i not in done]
    computed = ordered_map(fn, [items[i] for i in todo], workers=ctx.workers, desc=desc, executor=ctx.executor,
                           start=start, devices=devices)
    for i in range(len(items)):
        if i in done:
            yield journal.loads(done[i].read_text(encoding="utf-8"), where=str(done[i]))
            continue
        res = next(computed)
        with io.atomic_file(folder / f"{i:05d}.json") as f:
            f.write(journal.dumps(res))
        yield res


@dataclass(frozen=True)
class ArmOutput:
    """One stage folder of a finished run, for the report: the arms it served, its folder and manifest."""

    arms: tuple[str, ...]
    path: Path
    manifest: dict[str, Any]

    @property
    def meta(self) -> dict[str, Any]:
        return self.manifest.get("meta") or {}

    @property
    def label(self) -> str:
        return ", ".join(self.arms)


@dataclass
class ReportSection:
    """A stage's part of the run report (`Stage.report_section`): markdown, and figures it references as
    `report_files/<name>`."""

    title: str
    markdown: str
    figures: list[Any] = field(default_factory=list)  # pipeline.plots.Figure


class Stage(Generic[P]):
    """Base class of a pipeline stage: `class MyStage(Stage[MyParams])`, set the ClassVars, implement `run`.

    name:          the stage's name in recipes, folders and reports
    version:       bump it when the same params would now give different output (it is part of the key)
    inputs:        names of the upstream stages it reads (`ctx.inputs[name]`)
    params_model:  taken from `Stage[MyParams]`; its section of the recipe (`stages.<name>`)
    resumable:     the runner keeps a killed run's partial folder for `run` to continue
    shard_resume:  the runner keeps a killed run's partial folder and gives `ctx.map` a journal: a rerun runs
                   only the shard tasks whose result was not recorded (the stage's `run` must be re-entrant:
                   outputs written by its tasks, atomically, and the rest rewritten at the end)
    sources_model: the model of the recipe's `sources:` entries, for the stage that reads them (collect);
                   the recipe validates `sources` with it and the sources become part of this stage's key.
                   It must have `name` and `path` fields.
    variant_field: the param that the variant shorthand `NAME: [a, b]` sets
    replicates:    (list param, param) of a stage whose runs are replicates (pretrain: ("seeds", "seed")): a
                   non-empty list in the recipe becomes the variant `<stage>_<param>`, one arm per value with the
                   param set to it and the list emptied, so each replicate has its own folder and key, and adding
                   a value reuses the folders of the others (`pipeline.recipe`)
    input_paths:   params that name input files (`"benchmarks.*.path"`: the `path` of every item of the list
                   `benchmarks`; `"report_texts.*"`: every item of that list of paths). Relative paths there
                   are resolved against the recipe's folder, and their locations are taken out of the key
                   (`fingerprint` must cover the files' contents instead).
    layout_params: params that change how the work is cut, never the bytes written (collect's `split_bytes`:
                   the pieces a large file is read in); left out of the key, so tuning them reuses every folder.
                   A test must show the outputs do not depend on them.
    weights:       patterns (`fnmatch`, on paths relative to the stage folder) of the files that hold model
                   weights and training state: most of a training stage's bytes, read only by a stage that
                   trains on from them or exports them. `klue gc --weights` removes them from finished folders
                   and keeps everything else (metrics, predictions, cards), so that replicates stay comparable
                   and mergeable long after their checkpoints are gone (`pipeline.workdir.prune_weights`).
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    inputs: ClassVar[tuple[str, ...]] = ()
    params_model: ClassVar[type[StageParams]] = StageParams
    resumable: ClassVar[bool] = False
    shard_resume: ClassVar[bool] = False
    sources_model: ClassVar[type[BaseModel] | None] = None
    variant_field: ClassVar[str] = "enabled"
    input_paths: ClassVar[tuple[str, ...]] = ()
    layout_params: ClassVar[tuple[str, ...]] = ()
    replicates: ClassVar[tuple[str, str] | None] = None
    weights: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if get_origin(base) is Stage:
                (model,) = get_args(base)
                if isinstance(model, type) and issubclass(model, StageParams):
                    cls.params_model = model

    def fingerprint(self, ctx: StageContext[P]) -> dict[str, Any]:
        """Extra material for the cache key: the contents (`pipeline.filehash` digests) of files outside the
        workdir that the stage reads (sources, benchmark files); their paths are not part of the key. Must be
        cheap on a rerun, which the digest memo makes it."""
        return {}

    def describe(self, ctx: StageContext[P]) -> dict[str, Any]:
        """What `klue run --dry-run` shows about the work this stage would do (sizes, counts, configs), from its
        params and the recipe alone: an input that is not built yet has a manifest with its key and no meta.
        Must not run anything expensive."""
        return {}

    @classmethod
    def recipe_warnings(cls, recipe: RecipeView) -> list[str]:
        """What `klue run` (and `--dry-run`) warns about before it starts: things in the recipe that do not stop
        the run but that its outputs will carry (a source without a `license:` leaves the model card's licence
        unknown). One line each, naming the recipe key; empty when there is nothing to say."""
        return []

    @classmethod
    def written_from_outside(cls, partial: Path) -> bool:
        """Whether a process this run did not start (a cluster job the stage submitted and a rerun re-attaches
        to) may still be writing into the partial folder: the runner then leaves its temp files, which are that
        process's writes in progress, to the stage."""
        return False

    @classmethod
    def progress(cls, partial: Path, params: dict[str, Any]) -> str | None:
        """What `klue status` says about a run of this stage in progress, from its partial folder (and its
        params as JSON). The default counts the shard tasks a `shard_resume` stage has recorded."""
        journal = partial / JOURNAL
        if not journal.is_dir():
            return None
        done = sum(1 for d in journal.glob("map-*") for f in d.glob("*.json"))
        return f"{done} shard tasks recorded"

    @classmethod
    def report_section(cls, outputs: list[ArmOutput]) -> ReportSection | None:
        """This stage's section of `klue report` across the run's arms (one entry per distinct folder, in arm
        order), or None when it has nothing to show beyond the generic stage details. Built from the
        manifests and files only, so a report can be rebuilt at any time."""
        return None

    @classmethod
    def verdict(cls, outputs: list[ArmOutput]) -> list[str]:
        """What this stage's outputs conclude, in a few plain-text lines (no markdown markup: `klue run` prints
        them as they are), for the Verdict at the top of the report. The report's sections show the numbers;
        this says what they mean (did pretraining help, does the model use word order), so a reader does not
        have to work it out of tables. Built from the manifests and files only, like `report_section`; empty
        when the stage has nothing to conclude."""
        return []

    @classmethod
    def verdict_figures(cls, outputs: list[ArmOutput]) -> list[Any]:
        """Figures shown under the verdict's lines (`pipeline.plots.Figure`s: a forest plot of the differences the
        lines speak of); none by default."""
        return []

    @classmethod
    def card_facts(cls, stage: StageInput) -> dict[str, Any]:
        """What this stage's finished folder contributes to the model card of a run it is part of
        (pipeline/release/card.py asks every stage of the run, as the report asks `verdict`): `CardFacts` fields
        by name (the pretrain stage its training facts, the finetune stage the KLUE table as `evaluation`).
        Built from the folder's manifest and files only; empty by default: the data stages' facts are read from
        their manifests by the card itself."""
        return {}

    def run(self, ctx: StageContext[P]) -> StageResult:  # pragma: no cover - abstract
        raise NotImplementedError
