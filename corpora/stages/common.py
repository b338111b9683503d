"""What the shard-by-shard curation stages (filter, dedup, decontaminate) share.

Each reads the upstream doc shards and writes shards of the same names (one output per input, possibly
empty), splitting work by shard with `ctx.map`, so outputs never depend on the number of workers. Every
document is either kept or dropped with one reason; characters removed from kept documents (normalization,
boilerplate lines, short or contaminated sentences) are booked under their own reason so chars reconcile.
Audit files beside the shards: `dropped-NNNNN.jsonl` (id, source, reason, check or benchmarks),
`clusters-NNNNN.jsonl` for dedup (id, reason, kept_id), and `samples.jsonl` (a few dropped texts per reason).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.io import write_jsonl
from pipeline.stage import Funnel, FunnelSum, StageResult

EXCERPT = 500  # characters of a dropped document kept in samples.jsonl


@dataclass
class ShardReport:
    """What one shard's worker returns; merged in shard order by the stage."""

    funnel: Funnel = field(default_factory=Funnel)
    by_source: dict[str, Funnel] = field(default_factory=dict)
    counters: dict[str, Counter] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def source(self, name: str) -> Funnel:
        f = self.by_source.get(name)
        if f is None:
            f = self.by_source[name] = Funnel()
        return f

    def keep(self, src: str, n: int, removed: dict[str, int] | None = None, docs: int = 1) -> None:
        """Book `docs` kept documents of `src` (one by default), `n` characters in all."""
        for f in (self.funnel, self.source(src)):
            f.keep(n, docs)
            for reason, k in (removed or {}).items():
                if k:
                    f.chars_in += k
                    f.chars_dropped[reason] += k

    def drop(self, src: str, reason: str, n: int) -> None:
        self.funnel.drop(reason, n)
        self.source(src).drop(reason, n)

    def count(self, table: str, key: str, n: int = 1) -> None:
        self.counters.setdefault(table, Counter())[key] += n

    def sample(self, reason: str, k: int, rec: dict[str, Any]) -> None:
        lst = self.samples.setdefault(reason, [])
        if len(lst) < k:
            lst.append(rec)


def merge(reports: list[ShardReport], k: int) -> ShardReport:
    out, funnels = ShardReport(), FunnelSum()
    for r in reports:
        funnels.add_funnels(r.funnel, dict(sorted(r.by_source.items())))
        for t, c in r.counters.items():
            out.counters.setdefault(t, Counter()).update(c)
        for reason, lst in r.samples.items():
            for rec in lst:
                out.sample(reason, k, rec)
    out.funnel, out.by_source = funnels.funnel, funnels.by_source
    return out


def shard_suffix(shard: Path) -> str:
    return shard.name[len("shard-") : -len(".parquet")]


def write_samples(out_dir: Path, samples: dict[str, list[dict[str, Any]]]) -> None:
    write_jsonl(out_dir / "samples.jsonl", [dict(rec, reason=r) for r in sorted(samples) for rec in samples[r]])


def result(rep: ShardReport, meta: dict[str, Any]) -> StageResult:
    by_source = {s: rep.by_source[s] for s in sorted(rep.by_source)}
    return StageResult(funnel=rep.funnel, by_source=by_source, meta=meta)
