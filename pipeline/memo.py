"""`Memo`: a dict that computes what it lacks and keeps a bounded number of answers, for the hot lookups of
the corpus stages (the pre-tokenizer's eojeols, the person recognizer's candidate words).

Why not `functools.lru_cache`: a hit here is a plain C-level dict lookup, so `map(memo.__getitem__, words)` or
`filter(memo.__getitem__, words)` runs without a Python frame per word; lru_cache's wrapper also does
bookkeeping on every hit and its links are tracked by the garbage collector. A miss calls `__missing__`. Callers
use it only for pure functions, so the bound and the eviction order change speed, never answers: when full, the
older half (insertion order) is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """`fn`'s answers by key, at most `maxsize` kept (0: none); `keep(key)` false: answered but not kept."""

    __slots__ = ("_fn", "_max", "_keep")

    def __init__(self, fn: Callable[[K], V], maxsize: int, keep: Callable[[K], bool] | None = None):
        super().__init__()
        self._fn = fn
        self._max = maxsize
        self._keep = keep

    def __missing__(self, key: K) -> V:
        value = self._fn(key)
        if self._max and (self._keep is None or self._keep(key)):
            if len(self) >= self._max:
                for k in list(islice(self, (len(self) + 1) // 2)):
                    del self[k]
            self[key] = value
        return value
