"""The filter stage: normalize every document, remove boilerplate lines and (per source) short sentences, then
apply the length, script, Gopher and FineWeb filters in `order`; the first failing filter names the drop reason.
Writes shards of the same names as its input, `dropped-NNNNN.jsonl` and `samples.jsonl` (see `common`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from corpora.filters import FilterChain
from corpora.filters.params import (
    FILTER_NAMES,
    KNOB_DEFAULTS,
    THRESHOLD_KEYS,
    Thresholds,
    language_thresholds,
)
from corpora.lang import LanguageCode, get_language
from corpora.shards import Doc, iter_docs, list_shards, write_docs
from corpora.stages.common import EXCERPT, ShardReport, merge, result, shard_suffix, write_samples
from pipeline.io import JsonlWriter
from pipeline.stage import Stage, StageContext, StageResult


class FilterParams(Thresholds):
    """The filter stage's params: every threshold of `Thresholds` (the knobs of the registered filters, with
    the filters' and Korean defaults; another `language`'s defaults for keys the recipe does not set), plus
    normalization, the filter order and `per_source` overrides of any threshold for one source, e.g.
    `per_source: {nsmc: {min_chars: 10}}`."""

    language: LanguageCode  # the recipe's `language:` (pipeline.recipe), never a default
    normalization: Literal["NFC", "NFKC", "none"] | None = None  # None: the language's form (Korean: NFC)
    max_blank_lines: int = Field(1, ge=0, le=100)
    # filters run in this order (default: corpora/filters/registry.py's RUN_ORDER, then any other registered
    # filter); a document's drop reason is the first that fails. Leave one out to disable it.
    order: tuple[str, ...] = FILTER_NAMES
    per_source: dict[str, dict[str, Any]] = Field(default_factory=dict)
    would_fail_stats: bool = True  # evaluate every filter on every document (for the report), not just until the first failure
    samples_per_reason: int = Field(5, ge=0, le=1000)

    @field_validator("order")
    @classmethod
    def _known(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [n for n in v if n not in FILTER_NAMES]
        if unknown:
            raise ValueError(f"unknown filter(s) {unknown}; known: {list(FILTER_NAMES)}")
        if len(set(v)) != len(v):
            raise ValueError(f"filter listed twice in order: {list(v)}")
        return v

    @model_validator(mode="after")
    def _per_source(self) -> FilterParams:
        language_thresholds(get_language(self.language))  # the language's defaults fit the filters' knobs
        for src in self.per_source:
            self.thresholds_for(src)  # raises a validation error naming the bad key
        return self

    def thresholds_for(self, source: str | None = None) -> Thresholds:
        """The thresholds for one source: filter defaults < language defaults < recipe keys < per_source."""
        lang = language_thresholds(get_language(self.language))
        base = {k: getattr(self, k) for k in THRESHOLD_KEYS}
        # the field defaults are the filters' overlaid with Korean's (tests check they equal corpora/lang/ko/__init__.py's),
        # so for Korean this changes nothing; for another language, every key the recipe does not set comes from
        # that language's defaults, else from the filter's
        base.update({k: v for k, v in {**KNOB_DEFAULTS, **lang}.items() if k not in self.model_fields_set})
        over = self.per_source.get(source, {}) if source is not None else {}
        bad = sorted(set(over) - THRESHOLD_KEYS)
        if bad:
            raise ValueError(f"per_source.{source}: unknown threshold(s) {bad}")
        return Thresholds.model_validate({**base, **over})


def _filter_shard(task: tuple[Path, Path, FilterParams, dict[str, int]]) -> ShardReport:
    in_path, out_dir, params, source_min = task
    rep = ShardReport()
    chains: dict[str, FilterChain] = {}
    audit = JsonlWriter(out_dir / f"dropped-{shard_suffix(in_path)}.jsonl")
    would_fail: Counter[str] = Counter()
    checks: Counter[tuple[str, str]] = Counter()
    rep.counters["would_fail"], rep.counters["checks"] = would_fail, checks

    def kept():
        for d in iter_docs(in_path):
            chain = chains.get(d.source)
            if chain is None:
                chain = chains[d.source] = FilterChain(params, d.source, source_min.get(d.source))
            o = chain(d.text)
            for name, check in o.fails:
                would_fail[name] += 1
                checks[name, check] += 1
            if o.reason is None:
                rep.keep(d.source, len(o.text), o.removed)
                yield d if o.text == d.text else Doc(d.id, o.text, d.source, d.meta)
            else:
                rep.drop(d.source, o.reason, len(d.text))
                rep.count("first_fail", f"{o.reason}.{o.check}")
                audit.write({"id": d.id, "source": d.source, "reason": o.reason, "check": o.check})
                rep.sample(o.reason, params.samples_per_reason,
                           {"id": d.id, "source": d.source, "check": o.check, "text": d.text[:EXCERPT]})

    write_docs(out_dir / in_path.name, kept())
    audit.close()
    rep.counters["checks"] = Counter({f"{n}.{c}": k for (n, c), k in checks.items()})
    return rep


class FilterStage(Stage[FilterParams]):
    """Normalize every document, remove boilerplate lines and (per source) short sentences, then apply the
    length, script, Gopher and FineWeb filters in `order`; the first failing filter names the drop reason."""

    name = "filter"
    version = "1"
    inputs = ("collect",)
    shard_resume = True  # a rerun after a kill runs only the shards whose task had not finished

    def fingerprint(self, ctx: StageContext[FilterParams]) -> dict[str, Any]:
        # sources' min_sentence_chars change this stage's output but are not part of its params
        return {"min_sentence_chars": _source_min(ctx)}

    def run(self, ctx: StageContext[FilterParams]) -> StageResult:
        params = ctx.params
        shards = list_shards(ctx.inputs["collect"].path)
        src_min = _source_min(ctx)
        tasks = [(p, ctx.out_dir, params, src_min) for p in shards]
        rep = merge(list(ctx.map(_filter_shard, tasks, desc="filter")), params.samples_per_reason)
        write_samples(ctx.out_dir, rep.samples)
        meta = {
            "report": {
                "order": list(params.order),
                "would_fail": dict(sorted(rep.counters.get("would_fail", Counter()).items())),
                "checks": dict(sorted(rep.counters.get("checks", Counter()).items())),
                "first_fail": dict(sorted(rep.counters.get("first_fail", Counter()).items())),
                "thresholds": {s: params.thresholds_for(s).model_dump(mode="json", exclude_defaults=True)
                               for s in sorted(params.per_source)},
            },
            "shards": len(shards),
        }
        return result(rep, meta)


def _source_min(ctx: StageContext[FilterParams]) -> dict[str, int]:
    sources = getattr(ctx.recipe, "sources", None) or []
    return {s.name: s.min_sentence_chars for s in sources if getattr(s, "min_sentence_chars", None)}
