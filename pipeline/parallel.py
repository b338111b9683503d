"""Order-preserving process pool. Work is split by shard, so results never depend on the worker count."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tqdm.auto import tqdm


def ordered_map(fn: Callable[[Any], Any], items: Iterable[Any], workers: int = 1, desc: str | None = None,
                total: int | None = None) -> Iterator[Any]:
    """Yield fn(item) for each item, in input order, computed on `workers` processes (1: in this process)."""
    items = list(items)
    total = len(items) if total is None else total
    bar = tqdm(total=total, desc=desc, unit="shard", disable=desc is None, leave=False)
    try:
        if workers <= 1 or len(items) <= 1:
            for item in items:
                yield fn(item)
                bar.update(1)
            return
        # fork: workers inherit imported modules (fast start); every task function builds its own heavy
        # objects (MeCab taggers, analyzers) lazily, per process.
        ctx = mp.get_context("fork")
        with ctx.Pool(processes=min(workers, len(items))) as pool:
            for res in pool.imap(fn, items, chunksize=1):
                yield res
                bar.update(1)
    finally:
        bar.close()
