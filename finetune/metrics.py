"""KLUE metrics, computed as KLUE-baseline computes them.

Reference: KLUE-benchmark/KLUE-baseline, `klue_baseline/metrics/functional.py` (commit 443c38b). Each function
says where it matches that code and how it treats the edge cases that code leaves to scikit-learn/scipy/seqeval,
so a score here can be compared with a published KLUE number, quirks included (each quirk is named where it
is kept). All scores are ×100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import pearsonr
from sklearn.metrics import auc, f1_score, precision_recall_curve

STS_THRESHOLD = 3.0
# KLUE-DP: deprel ids from this one on (official label order, `klue_dp.get_dep_labels`) are merged into one
# "others" class by LAS (`others_idx = 15` in `klue_dp_las_macro_f1` / `klue_dp_las_micro_f1`).
DP_OTHERS_FROM = 15
_DP_OTHERS = -3  # the merged class's id in that code
_DP_WRONG_HEAD = -2  # the label a word with a wrong head gets there (`PAD`)


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


# ---- KLUE-NER ---------------------------------------------------------------------------------------------

def ner_entity_macro_f1(pred_tags: Sequence[Sequence[str]], gold_tags: Sequence[Sequence[str]]) -> float:
    """KLUE-NER entity-level macro F1 (`klue_ner_entity_macro_f1`): seqeval `f1_score` in strict mode with the
    IOB2 scheme, macro-averaged over the entity types found in gold or predictions, on ONE sequence made of
    every sentence (the official code flattens all sentences before calling seqeval).

    Arguments are one tag list per sentence, over the characters that are scored (spaces already removed,
    as the official reader drops them). Strict IOB2 means an entity counts only with its exact span and type
    and a proper `B-` start: `I-PS I-PS` is no entity at all (seqeval's default mode would read it as one).
    Between sentences the official sequence holds the model's outputs at [CLS] and at the last padded position,
    whose gold is O; we put one O there on both sides, so an entity never runs from one sentence into the
    next. A type found on one side only scores 0 in the mean; with no entity on either side the score is
    undefined (NaN, written as null).
    """
    from seqeval.metrics import f1_score as seqeval_f1
    from seqeval.scheme import IOB2

    gold_seq: list[str] = []
    pred_seq: list[str] = []
    for i, (g, p) in enumerate(zip(gold_tags, pred_tags, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(p)} predicted tags for {len(g)} gold tags")
        gold_seq += ["O", *g]
        pred_seq += ["O", *p]
    if all(t == "O" for t in gold_seq) and all(t == "O" for t in pred_seq):
        return math.nan
    return float(seqeval_f1([gold_seq], [pred_seq], average="macro", mode="strict", scheme=IOB2,
                            zero_division=0) * 100.0)


def ner_char_macro_f1(pred_tags: Sequence[str], gold_tags: Sequence[str], label_list: Sequence[str],
                      include_o: bool = True) -> float:
    """KLUE-NER character-level macro F1 (`klue_ner_char_macro_f1`): sklearn macro F1 over the characters of
    all sentences, with the label set fixed to every label of `label_list` and `zero_division=1`.

    Official quirks kept: the label set includes O (the function's docstring says "except O tag", its code
    passes all 13 labels), and because the set is fixed, a label absent from both gold and predictions scores
    F1 1 and raises the mean (a label on one side only scores 0). `include_o=False` gives the O-excluded value
    the docstring describes, reported beside it. Not kept: the official list also holds, per sentence, the
    [CLS] and last padded positions with gold O (what the model outputs there); those are not characters,
    a predictions file has nothing for them, and we leave them out.
    """
    labels = [i for i, name in enumerate(label_list) if include_o or name != "O"]
    index = {name: i for i, name in enumerate(label_list)}
    if len(pred_tags) != len(gold_tags):
        raise ValueError(f"{len(pred_tags)} predicted tags for {len(gold_tags)} gold tags")
    if not gold_tags:
        raise ValueError("character F1 of zero characters is undefined")
    g = [index[t] for t in gold_tags]
    p = [index[t] for t in pred_tags]
    return float(f1_score(g, p, labels=labels, average="macro", zero_division=1) * 100.0)


# ---- KLUE-DP ----------------------------------------------------------------------------------------------

def _flat(seqs: Sequence[Sequence[int]]) -> np.ndarray:
    return np.asarray([x for s in seqs for x in s], dtype=np.int64)


def _heads(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    p, g = _flat(pred_heads), _flat(gold_heads)
    if p.shape != g.shape:
        raise ValueError(f"{len(p)} predicted heads for {len(g)} gold heads")
    if len(g) == 0:
        raise ValueError("attachment scores of zero words are undefined")
    return p, g


def dp_uas_micro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]]) -> float:
    """KLUE-DP UAS (`klue_dp_uas_micro_f1`): sklearn micro F1 of the head index over all words, which for
    single-label classes is the share of words with the right head."""
    p, g = _heads(pred_heads, gold_heads)
    return float(f1_score(g, p, average="micro") * 100.0)


def dp_uas_macro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]]) -> float:
    """KLUE-DP UAS macro F1 (`klue_dp_uas_macro_f1`): sklearn macro F1 with the head *position* as the class
    (0 = ROOT, 1 = the first eojeol, ...), averaged over the positions found in gold or predictions; a
    position predicted but never gold (or the reverse) scores 0. This is the official definition: the class
    is where the head sits in the sentence, not which word it is."""
    p, g = _heads(pred_heads, gold_heads)
    return float(f1_score(g, p, average="macro", zero_division=0) * 100.0)


def _las_classes(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]],
                 pred_deprels: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[int]]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(gold, predicted) label classes as `klue_dp_las_*` builds them: ids >= 15 become one "others" class on
    both sides, then a word whose predicted head is wrong gets the filler class instead of its label."""
    ph, gh = _heads(pred_heads, gold_heads)
    pt, gt = _flat(pred_deprels), _flat(gold_deprels)
    if pt.shape != gh.shape or gt.shape != gh.shape:
        raise ValueError(f"{len(pt)} predicted and {len(gt)} gold labels for {len(gh)} words")
    pt = np.where(pt >= DP_OTHERS_FROM, _DP_OTHERS, pt)
    gt = np.where(gt >= DP_OTHERS_FROM, _DP_OTHERS, gt)
    pt = np.where(ph == gh, pt, _DP_WRONG_HEAD)
    return gt, pt


def dp_las_micro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]],
                    pred_deprels: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[int]]) -> float:
    """KLUE-DP LAS (`klue_dp_las_micro_f1`): share of words with the right head and the right label, where
    labels are compared after the "others" merge: two different labels with ids >= 15 count as a match."""
    g, p = _las_classes(pred_heads, gold_heads, pred_deprels, gold_deprels)
    return float(f1_score(g, p, average="micro") * 100.0)


def dp_las_macro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]],
                    pred_deprels: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[int]]) -> float:
    """KLUE-DP LAS macro F1 (`klue_dp_las_macro_f1`): sklearn macro F1 over the label classes after the
    "others" merge (ids >= 15 are one class) and the wrong-head filler (a word with a wrong head is predicted
    as a class no gold word has). Quirk kept: as soon as one head is wrong, the filler class enters the mean
    with F1 0, so the score drops by a whole class's share, not by that word's."""
    g, p = _las_classes(pred_heads, gold_heads, pred_deprels, gold_deprels)
    return float(f1_score(g, p, average="macro", zero_division=0) * 100.0)
