"""KLUE metrics, computed as KLUE-baseline computes them.

Reference: KLUE-benchmark/KLUE-baseline, `klue_baseline/metrics/functional.py` (commit 443c38b). Each function
says where it matches that code and how it treats the edge cases that code leaves to scikit-learn/scipy, so a
score here can be compared with a published KLUE number. All scores are ×100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import pearsonr
from sklearn.metrics import auc, f1_score, precision_recall_curve

STS_THRESHOLD = 3.0


def macro_f1(preds: Sequence[int], targets: Sequence[int]) -> float:
    """YNAT: sklearn macro F1 over the labels that occur in gold or predictions (sklearn's default label set,
    as in `ynat_macro_f1`). A class that is in gold but never predicted scores F1 0 and counts in the mean;
    a class absent from both is not in the mean."""
    return float(f1_score(targets, preds, average="macro", zero_division=0) * 100.0)


def accuracy(preds: Sequence[int], targets: Sequence[int]) -> float:
    """KLUE-NLI: plain accuracy (`klue_nli_acc`)."""
    p, t = np.asarray(preds), np.asarray(targets)
    if len(p) == 0:
        raise ValueError("accuracy of zero examples is undefined")
    return float((p == t).mean() * 100.0)


def pearson_r(preds: Sequence[float], labels: Sequence[float]) -> float:
    """KLUE-STS Pearson r (`klue_sts_pearsonr`). Undefined when either side is constant: returns NaN (written
    as null in JSON) rather than a number that could be mistaken for a score."""
    p, t = np.asarray(preds, dtype=float), np.asarray(labels, dtype=float)
    if len(p) < 2 or np.all(p == p[0]) or np.all(t == t[0]):
        return math.nan
    return float(pearsonr(p, t)[0] * 100.0)


def sts_binary_f1(preds: Sequence[float], labels: Sequence[float], threshold: float = STS_THRESHOLD) -> float:
    """KLUE-STS F1 (`klue_sts_f1`): prediction and `real-label` are both binarised at >= 3.0, then binary F1.
    The paper defines the binary label from the annotation; in the v1.1 files `binary-label` equals
    real-label >= 3 for every dev example, so the code and the paper agree here. No positives anywhere -> 0."""
    p = (np.asarray(preds, dtype=float) >= threshold).astype(int)
    t = (np.asarray(labels, dtype=float) >= threshold).astype(int)
    return float(f1_score(t, p, average="binary", zero_division=0) * 100.0)


def re_micro_f1(preds: Sequence[int], labels: Sequence[int], label_list: Sequence[str]) -> float:
    """KLUE-RE micro F1 over the relation labels except `no_relation` (`klue_re_micro_f1`): a `no_relation`
    prediction for a true relation is a miss (FN), a relation predicted for a `no_relation` pair is a false
    positive, and `no_relation` pairs predicted as such count for nothing."""
    no_rel = list(label_list).index("no_relation")
    indices = [i for i in range(len(label_list)) if i != no_rel]
    return float(f1_score(labels, preds, average="micro", labels=indices, zero_division=0) * 100.0)


def re_auprc(probs: np.ndarray, labels: Sequence[int] | np.ndarray, num_classes: int) -> tuple[float, list[int]]:
    """KLUE-RE AUPRC (`klue_re_auprc`): per class, one-vs-rest `precision_recall_curve` of that class's softmax
    probability, area by `auc` (trapezoids, not sklearn's average_precision), then the uniform mean over the
    classes, `no_relation` included.

    Edge case: a class with no gold example has no defined PR curve. KLUE-baseline's code gives 0.5 there with the
    scikit-learn installed here (1.9: recall is set to 1 and the curve's (recall 0, precision 1) end point adds
    a triangle), and NaN with older releases that divide 0 by 0. We leave such classes out of the mean and return their indices, so the score is
    the mean over defined curves; on the full official dev set every class occurs and this is exactly the
    KLUE-baseline number.
    """
    probs = np.asarray(probs, dtype=float)
    gold = np.asarray(labels, dtype=int)
    if probs.ndim != 2 or probs.shape != (len(gold), num_classes):
        raise ValueError(f"probs must have shape ({len(gold)}, {num_classes}), got {probs.shape}")
    onehot = np.eye(num_classes, dtype=int)[gold]
    scores, absent = [], []
    for c in range(num_classes):
        if onehot[:, c].sum() == 0:
            absent.append(c)
            continue
        precision, recall, _ = precision_recall_curve(onehot[:, c], probs[:, c])
        scores.append(auc(recall, precision))
    if not scores:
        return math.nan, absent
    return float(np.mean(scores) * 100.0), absent
