"""Per-example sufficient statistics of a metric, for resampling evaluation examples fast.

The Multi-Bootstrap (Sellam et al. 2021, "The MultiBERTs", arXiv 2106.16163) recomputes each run's main metric
on thousands of resamples of the evaluation examples. A resample is a multiset of examples: example i taken
W[i] times. Every main metric of this suite is a function of sums over examples, so a task gives one row of
numbers per example (`ExampleStats.values`, n_examples × k) and a function of their sums (`ExampleStats.score`)
with `score(W @ values)` equal to the metric of the examples repeated as W says; a whole bootstrap of B
resamples is one (B, n) × (n, k) product and one vectorised `score` call. Row i holds only example i's own
contributions (its correct flag, its per-class true/false positives, ...), so any grouping of examples
(resampling whole dialogues or articles) is a W too.

`Task.main_metric_stats` (`finetune.tasks.base`) builds these for a task's predictions and gold examples, with
the builders here. Scores are ×100, as `finetune.metrics`, and NaN where the metric is undefined. Each `score`
is a `functools.partial` of a module-level function, so an `ExampleStats` pickles (process pools).

A leaf module: numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

__all__ = ["ExampleStats", "accuracy_stats", "fixed_macro_f1_stats", "macro_f1_stats", "mean_stats",
           "micro_f1_stats", "pearson_stats", "per_class_counts"]

# Pearson r is undefined when a side is constant. Summed statistics cannot say "all values equal" exactly; a
# side counts as constant when n·Σx² − (Σx)² is at most this share of n·Σx² (float round-off of the sums is
# orders of magnitude below it; values are standardised on the full sample first, see `pearson_stats`).
CONSTANT_TOLERANCE = 1e-10


@dataclass(frozen=True)
class ExampleStats:
    """Per-example sufficient statistics of a task's main metric.

    `values` is (n_examples, k) float64: row i is example i's contribution to k additive statistics (counts,
    sums). `score` maps summed statistics of shape (..., k) to the metric, shape (...), ×100, NaN where it is
    undefined; it is vectorised over the leading axes. For example multiplicities W (n_examples,) or a batch of
    them (B, n_examples), `score(W @ values)` is the metric of the examples repeated W[i] times, and
    `score(values.sum(0))` (`total`) the metric of the examples once each."""

    values: np.ndarray
    score: Callable[[np.ndarray], np.ndarray]

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"values must be (n_examples, k), got shape {values.shape}")
        object.__setattr__(self, "values", values)

    @property
    def n_examples(self) -> int:
        return int(self.values.shape[0])

    def total(self) -> float:
        """The metric over all examples, each once."""
        return float(self.score(self.values.sum(axis=0)))

    def resampled(self, weights: Any) -> np.ndarray:
        """The metric of each resample: `weights` is (n_examples,) or (B, n_examples) multiplicities."""
        return np.asarray(self.score(np.asarray(weights, dtype=np.float64) @ self.values))


# ---- builders ---------------------------------------------------------------------------------------------

def _column(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one value per example, got shape {arr.shape}")
    return arr


def _mean_score(sums: np.ndarray) -> np.ndarray:
    sums = np.asarray(sums, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1] * 100.0, np.nan)


def mean_stats(per_example: Any) -> ExampleStats:
    """The mean of one score per example, ×100 (MRC ROUGE-W, JSQuAD F1, WoS per-turn F1: scores in [0, 1]).
    Columns: the score, 1. NaN for an empty resample."""
    x = _column(per_example, "per_example")
    return ExampleStats(np.stack([x, np.ones_like(x)], axis=1), _mean_score)


def accuracy_stats(correct: Any) -> ExampleStats:
    """Accuracy ×100 from one correct / wrong flag per example (`mean_stats` of the flags)."""
    return mean_stats(np.asarray(correct, dtype=bool))


def _pearson_score(sums: np.ndarray, tolerance: float = CONSTANT_TOLERANCE) -> np.ndarray:
    sums = np.asarray(sums, dtype=np.float64)
    n, sx, sy, sxx, syy, sxy = (sums[..., j] for j in range(6))
    var_x = n * sxx - sx * sx
    var_y = n * syy - sy * sy
    cov = n * sxy - sx * sy
    constant = (var_x <= tolerance * n * sxx) | (var_y <= tolerance * n * syy) | (n < 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.sqrt(var_x * var_y)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0) * 100.0)


def pearson_stats(pred: Any, gold: Any) -> ExampleStats:
    """Pearson r ×100 of predicted and gold values (KLUE-STS, JSTS): columns 1, x, y, x², y², xy. Each side is
    first standardised on the full sample (r does not change; the sums stay well conditioned, and a side that
    is constant over the full sample becomes exact zeros). NaN, as `finetune.metrics.pearson_r`, for fewer
    than two examples or a side that is constant in the resample (up to `CONSTANT_TOLERANCE`)."""
    x, y = _column(pred, "pred"), _column(gold, "gold")
    if x.shape != y.shape:
        raise ValueError(f"{len(x)} predictions for {len(y)} gold values")
    x, y = _standardise(x), _standardise(y)
    return ExampleStats(np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1), _pearson_score)


def _standardise(x: np.ndarray) -> np.ndarray:
    if len(x) == 0 or np.all(x == x[0]):
        return np.zeros_like(x)  # exactly: the mean of equal values need not round back to them
    centred = x - x.mean()
    return centred / np.sqrt(np.mean(centred * centred))


def _micro_f1_score(sums: np.ndarray) -> np.ndarray:
    sums = np.asarray(sums, dtype=np.float64)
    denom = sums[..., 1] + sums[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, 2.0 * sums[..., 0] / denom * 100.0, 0.0)


def micro_f1_stats(tp: Any, n_pred: Any, n_gold: Any) -> ExampleStats:
    """Micro F1 ×100 = 2·TP / (predicted + gold), from per-example counts of true positives, predicted and gold
    items of the scored classes (KLUE-RE: relations but `no_relation`). Nothing predicted or gold: 0
    (zero_division=0, as sklearn's `f1_score(average="micro", zero_division=0)`)."""
    cols = [_column(tp, "tp"), _column(n_pred, "n_pred"), _column(n_gold, "n_gold")]
    if len({len(c) for c in cols}) != 1:
        raise ValueError(f"tp, n_pred and n_gold differ in length: {[len(c) for c in cols]}")
    return ExampleStats(np.stack(cols, axis=1), _micro_f1_score)


def _class_f1(sums: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class F1 = 2·TP / (2·TP + FP + FN) and whether the class occurs (denominator > 0), (..., C) each."""
    sums = np.asarray(sums, dtype=np.float64)
    tp, fp, fn = sums[..., :n_classes], sums[..., n_classes:2 * n_classes], sums[..., 2 * n_classes:]
    denom = 2.0 * tp + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(denom > 0, 2.0 * tp / denom, 0.0)
    return f1, denom > 0


def _macro_f1_score(sums: np.ndarray, n_classes: int) -> np.ndarray:
    f1, present = _class_f1(sums, n_classes)
    count = present.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, (f1 * present).sum(axis=-1) / count * 100.0, np.nan)


def _fixed_macro_f1_score(sums: np.ndarray, n_classes: int, zero_division: float) -> np.ndarray:
    f1, present = _class_f1(sums, n_classes)
    return np.where(present, f1, zero_division).mean(axis=-1) * 100.0


def _counts(tp: Any, fp: Any, fn: Any) -> np.ndarray:
    arrs = [np.asarray(a, dtype=np.float64) for a in (tp, fp, fn)]
    if arrs[0].ndim != 2 or any(a.shape != arrs[0].shape for a in arrs):
        raise ValueError(f"tp, fp, fn must be (n_examples, n_classes) each, got {[a.shape for a in arrs]}")
    return np.concatenate(arrs, axis=1)


def macro_f1_stats(tp: Any, fp: Any, fn: Any) -> ExampleStats:
    """Macro F1 ×100 from per-example, per-class counts (each (n_examples, C)), over the classes that occur in
    the resample (TP + FP + FN > 0: found in gold or predictions), each scoring 2·TP / (2·TP + FP + FN):
    sklearn's `f1_score(average="macro", zero_division=0)` with its default label set (YNAT, KLUE-DP LAS) and
    seqeval's macro F1 over the entity types found (KLUE-NER entities). No class at all: NaN. Columns: TP of
    each class, then FP, then FN."""
    values = _counts(tp, fp, fn)
    return ExampleStats(values, partial(_macro_f1_score, n_classes=values.shape[1] // 3))


def fixed_macro_f1_stats(tp: Any, fp: Any, fn: Any, zero_division: float = 1.0) -> ExampleStats:
    """Macro F1 ×100 over a FIXED label set, the C columns of the counts: sklearn's `f1_score(labels=...,
    average="macro", zero_division=...)`. A class absent from gold and predictions of the resample scores
    `zero_division` and still counts in the mean (KLUE-NER character F1: all 13 labels, zero_division=1)."""
    values = _counts(tp, fp, fn)
    return ExampleStats(values, partial(_fixed_macro_f1_score, n_classes=values.shape[1] // 3,
                                        zero_division=float(zero_division)))


def per_class_counts(gold: Any, pred: Any, labels: Sequence[Any], example: Any = None,
                     n_examples: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-example, per-class TP, FP and FN (each (n_examples, len(labels))) of single-label items.

    `gold` and `pred` hold one class per item; `example` says which example each item belongs to (KLUE-DP: the
    sentence of each word), by default item i is example i. An item counts TP for its class when gold == pred,
    else FP for the predicted class and FN for the gold class; a class outside `labels` counts for nothing
    (as sklearn's `labels=`): RE's `no_relation`."""
    g, p = np.asarray(gold), np.asarray(pred)
    if g.shape != p.shape or g.ndim != 1:
        raise ValueError(f"gold and pred must be equal-length 1-D arrays, got {g.shape} and {p.shape}")
    ex = np.arange(len(g)) if example is None else np.asarray(example, dtype=np.int64)
    if ex.shape != g.shape:
        raise ValueError(f"example must give one example index per item: {ex.shape} for {g.shape}")
    n = (int(ex.max()) + 1 if len(ex) else 0) if n_examples is None else n_examples
    index = {label: j for j, label in enumerate(labels)}
    n_classes = len(index)
    gi = np.fromiter((index.get(v, -1) for v in g.tolist()), dtype=np.int64, count=len(g))
    pi = np.fromiter((index.get(v, -1) for v in p.tolist()), dtype=np.int64, count=len(p))
    hit = gi == pi

    def count(mask: np.ndarray, cls: np.ndarray) -> np.ndarray:
        keep = mask & (cls >= 0)
        flat = np.bincount(ex[keep] * n_classes + cls[keep], minlength=n * n_classes)
        return flat.reshape(n, n_classes).astype(np.float64)

    return count(hit, gi), count(~hit, pi), count(~hit, gi)
