"""KLUE metrics, computed as KLUE-baseline computes them.

Reference: KLUE-benchmark/KLUE-baseline, `klue_baseline/metrics/functional.py` (commit 443c38b). Each function
says where it matches that code and how it treats the edge cases that code leaves to scikit-learn/scipy/seqeval,
so a score here can be compared with a published KLUE number, quirks included (each quirk is named where it
is kept). All scores are ×100.

The JGLUE metrics (JSTS Spearman, JSQuAD EM and character F1) are at the end, with their own sources: JGLUE
(yahoojapan/JGLUE @ 6f071c0) scores with the transformers code it patches, not with code of its own.

scikit-learn and SciPy are imported inside the functions that use them (a second of imports): every task module
imports this one, and `klue finetune --help` and the results tables read the tasks' declarations (title, metrics,
published scores: `Task.entry`) without scoring anything.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

import numpy as np

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
    from sklearn.metrics import f1_score

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
    from scipy.stats import pearsonr

    p, t = np.asarray(preds, dtype=float), np.asarray(labels, dtype=float)
    if len(p) < 2 or np.all(p == p[0]) or np.all(t == t[0]):
        return math.nan
    return float(pearsonr(p, t)[0] * 100.0)


def sts_binary_f1(preds: Sequence[float], labels: Sequence[float], threshold: float = STS_THRESHOLD) -> float:
    """KLUE-STS F1 (`klue_sts_f1`): prediction and `real-label` are both binarised at >= 3.0, then binary F1.
    The paper defines the binary label from the annotation; in the v1.1 files `binary-label` equals
    real-label >= 3 for every dev example, so the code and the paper agree here. No positives anywhere -> 0."""
    from sklearn.metrics import f1_score

    p = (np.asarray(preds, dtype=float) >= threshold).astype(int)
    t = (np.asarray(labels, dtype=float) >= threshold).astype(int)
    return float(f1_score(t, p, average="binary", zero_division=0) * 100.0)


def re_micro_f1(preds: Sequence[int], labels: Sequence[int], label_list: Sequence[str]) -> float:
    """KLUE-RE micro F1 over the relation labels except `no_relation` (`klue_re_micro_f1`): a `no_relation`
    prediction for a true relation is a miss (FN), a relation predicted for a `no_relation` pair is a false
    positive, and `no_relation` pairs predicted as such count for nothing."""
    from sklearn.metrics import f1_score

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
    from sklearn.metrics import auc, precision_recall_curve

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
    from sklearn.metrics import f1_score

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
    from sklearn.metrics import f1_score

    p, g = _heads(pred_heads, gold_heads)
    return float(f1_score(g, p, average="micro") * 100.0)


def dp_uas_macro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]]) -> float:
    """KLUE-DP UAS macro F1 (`klue_dp_uas_macro_f1`): sklearn macro F1 with the head *position* as the class
    (0 = ROOT, 1 = the first eojeol, ...), averaged over the positions found in gold or predictions; a
    position predicted but never gold (or the reverse) scores 0. This is the official definition: the class
    is where the head sits in the sentence, not which word it is."""
    from sklearn.metrics import f1_score

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
    from sklearn.metrics import f1_score

    g, p = _las_classes(pred_heads, gold_heads, pred_deprels, gold_deprels)
    return float(f1_score(g, p, average="micro") * 100.0)


def dp_las_macro_f1(pred_heads: Sequence[Sequence[int]], gold_heads: Sequence[Sequence[int]],
                    pred_deprels: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[int]]) -> float:
    """KLUE-DP LAS macro F1 (`klue_dp_las_macro_f1`): sklearn macro F1 over the label classes after the
    "others" merge (ids >= 15 are one class) and the wrong-head filler (a word with a wrong head is predicted
    as a class no gold word has). Quirk kept: as soon as one head is wrong, the filler class enters the mean
    with F1 0, so the score drops by a whole class's share, not by that word's."""
    from sklearn.metrics import f1_score

    g, p = _las_classes(pred_heads, gold_heads, pred_deprels, gold_deprels)
    return float(f1_score(g, p, average="macro", zero_division=0) * 100.0)


# ---- KLUE-MRC ---------------------------------------------------------------------------------------------

# Question types of KLUE-MRC (`question_type` in the official JSON): the paper's three kinds of question.
MRC_QUESTION_TYPES: dict[int, str] = {1: "paraphrase", 2: "multi-sentence", 3: "unanswerable"}

# The official `NORMALIZE_CHAR_PATTERN` (`metrics/utils.py`) is meant to replace quotes and brackets
# ('"《》<>〈〉()‘’) with a space, but only its first eight characters sit inside the character class: the
# pattern is "one of '\"《》<>〈〉, then the literal text ()‘’", so it matches only that five-character sequence
# and never a lone 《, 〈, ‘ or ’. Kept as written (the ASCII ones go with the punctuation step anyway); the
# Korean quotes and brackets therefore stay in the answer and must match exactly.
_MRC_QUOTE_PATTERN = re.compile(r"['\"《》<>〈〉]\(\)‘’")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def mrc_normalize(answer: str) -> str:
    """KLUE-MRC answer normalisation (`normalize_answer_for_klue_mrc`): lower-case, the quote pattern above
    replaced by a space, ASCII punctuation (`string.punctuation`) deleted, runs of whitespace collapsed to one
    space and the ends stripped. Nothing else: no article removal (SQuAD's), no Unicode punctuation."""
    answer = _MRC_QUOTE_PATTERN.sub(" ", answer.lower())
    answer = "".join(c for c in answer if c not in _ASCII_PUNCTUATION)
    return " ".join(answer.split())


def mrc_rouge_w(pred: str, gold: str) -> float:
    """KLUE-MRC "ROUGE-W" of two normalised strings (`rouge_w_score_for_klue_mrc`), in [0, 1]: despite the
    name, the F1 (beta 1) of character precision and recall of the longest common *contiguous* substring.
    An empty gold answer (an unanswerable question) scores 1 for an empty prediction and 0 otherwise.

    The substring is found with `difflib.SequenceMatcher(..., autojunk=False).find_longest_match`, which is
    exact. The official call leaves `autojunk` on; that only matters for a gold answer of 200 characters or
    more, where difflib then ignores every character that makes up over 1% of it, so the official value can be
    lower than the true one there. KLUE-MRC answers are far shorter."""
    if gold == "":
        return float(pred == gold)
    match = SequenceMatcher(None, pred, gold, autojunk=False).find_longest_match(0, len(pred), 0, len(gold))
    precision = match.size / len(pred) if pred else 0.0
    recall = match.size / len(gold)
    if precision + recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def mrc_em_and_rouge_w(pred: str, golds: Sequence[str]) -> tuple[float, float]:
    """EM and ROUGE-W of one raw prediction against its raw gold answers (`klue_mrc_em` / `klue_mrc_rouge_w`
    per question): both sides normalised, each score the max over the gold answers (and 0). No gold answer at
    all (an unanswerable question) means the one gold answer "", so only a prediction that normalises to ""
    scores 1 there, for EM and ROUGE-W alike."""
    p = mrc_normalize(pred)
    gold_norm = [mrc_normalize(g) for g in golds] or [""]
    em = max([0.0] + [float(p == g) for g in gold_norm])
    rouge = max([0.0] + [mrc_rouge_w(p, g) for g in gold_norm])
    return em, rouge


def mrc_scores(preds: Sequence[str], golds: Sequence[Sequence[str]],
               question_types: Sequence[int | None] | None = None) -> dict[str, float | int | None]:
    """KLUE-MRC `exact_match` and `rouge_w` (×100, the mean over questions), and when question types are known
    the same per type, as `exact_match_type1` / `rouge_w_type1` / `n_type1` (1 paraphrase, 2 multi-sentence,
    3 unanswerable; the official code logs these per-type means). A type with no question has None. Questions
    without a type (KorQuAD) count in the totals only; the official reader would call them type 1
    (`qa.get("question_type", 1)`), which for a file without types makes type 1 the total again."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions for {len(golds)} questions")
    if not golds:
        raise ValueError("MRC scores of zero questions are undefined")
    types = list(question_types) if question_types is not None else [None] * len(golds)
    scores = [mrc_em_and_rouge_w(p, g) for p, g in zip(preds, golds, strict=True)]
    out: dict[str, float | int | None] = {
        "exact_match": float(np.mean([s[0] for s in scores]) * 100.0),
        "rouge_w": float(np.mean([s[1] for s in scores]) * 100.0)}
    if any(t is not None for t in types):
        for t in MRC_QUESTION_TYPES:
            of_type = [s for s, qt in zip(scores, types, strict=True) if qt == t]
            out[f"exact_match_type{t}"] = float(np.mean([s[0] for s in of_type]) * 100.0) if of_type else None
            out[f"rouge_w_type{t}"] = float(np.mean([s[1] for s in of_type]) * 100.0) if of_type else None
            out[f"n_type{t}"] = len(of_type)
    return out


# ---- WoS dialogue state tracking (`wos_jga`, `compute_prf_for_wos`, `wos_slot_micro_f1`) -----------------------

def wos_joint_goal_accuracy(preds: Sequence[Sequence[str]], golds: Sequence[Sequence[str]]) -> float:
    """Joint goal accuracy ×100: the share of turns whose predicted `domain-slot-value` set equals the gold set
    (`wos_jga`). Sets: order and duplicates do not matter. Zero turns: 0 (the official `total == 0` case)."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predicted states for {len(golds)} turns")
    hits = sum(set(p) == set(g) for p, g in zip(preds, golds, strict=True))
    return hits / len(golds) * 100.0 if golds else 0.0


def wos_turn_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """One turn's F1 as `compute_prf_for_wos` (after TRADE): true positives count gold items found in the
    prediction and false positives predicted items absent from gold, by list membership, so a duplicated gold
    item counts twice and a duplicated predicted one never adds a false positive. An empty gold state scores 1
    for an empty prediction and 0 otherwise; precision or recall 0 gives F1 0."""
    if not gold:
        return 1.0 if not pred else 0.0
    tp = sum(g in pred for g in gold)
    fn = len(gold) - tp
    fp = sum(p not in gold for p in pred)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def wos_slot_micro_f1(preds: Sequence[Sequence[str]], golds: Sequence[Sequence[str]]) -> float:
    """The official "slot micro F1" ×100 (`wos_slot_micro_f1`): despite the name, the **mean over turns** of
    the per-turn F1 (`wos_turn_f1`), every turn counting once; not a micro F1 over slot instances. Zero turns:
    0."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predicted states for {len(golds)} turns")
    if not golds:
        return 0.0
    return sum(wos_turn_f1(g, p) for p, g in zip(preds, golds, strict=True)) / len(golds) * 100.0


def dst_scores(preds: Sequence[Sequence[str]], golds: Sequence[Sequence[str]]) -> dict[str, float]:
    """WoS `joint_goal_acc` and `slot_micro_f1` (×100) over user turns."""
    if not golds:
        raise ValueError("DST scores of zero turns are undefined")
    return {"joint_goal_acc": wos_joint_goal_accuracy(preds, golds),
            "slot_micro_f1": wos_slot_micro_f1(preds, golds)}


# ---- JGLUE ------------------------------------------------------------------------------------------------

def spearman_r(preds: Sequence[float], labels: Sequence[float]) -> float:
    """JSTS Spearman rank correlation ×100, which JGLUE reports beside Pearson (README "Baseline Scores":
    Pearson/Spearman). JGLUE's `run_glue.py --metric_name stsb` scores with the HF `glue`/`stsb` metric, i.e.
    `scipy.stats.spearmanr(preds, labels)[0]` (ties get average ranks). Undefined for a constant side, like
    `pearson_r`: NaN (null in JSON)."""
    from scipy.stats import spearmanr

    p, t = np.asarray(preds, dtype=float), np.asarray(labels, dtype=float)
    if len(p) < 2 or np.all(p == p[0]) or np.all(t == t[0]):
        return math.nan
    return float(spearmanr(p, t)[0] * 100.0)


def jsquad_normalize(answer: str) -> str:
    """JSQuAD answer normalisation: transformers' SQuAD `normalize_answer` as JGLUE patches it
    (`fine-tuning/patch/transformers-4.9.2_jglue-1.3.0.patch`, `squad_metrics.py`), applied in the same order:
    lower-case; punctuation kept (`remove_punc` returns its input); `remove_articles` becomes
    `text.rstrip("。")`, so trailing ideographic full stops go and nothing else (not "." or "、", not a "。"
    followed by a space, which the next step would only then expose); whitespace runs collapsed to one space and
    the ends stripped (`" ".join(text.split())`)."""
    return " ".join(answer.lower().rstrip("。").split())


def jsquad_char_f1(pred: str, gold: str) -> float:
    """JGLUE's character F1 of one prediction against one gold answer, in [0, 1] (the patched `compute_f1`):
    both normalised, each turned into its list of characters (spaces included: they survive normalisation
    between words), the overlap counted as a multiset (`Counter(gold) & Counter(pred)`, order ignored, so
    "東京" and "京東" score 1). An empty side scores 1 if both are empty, else 0."""
    g, p = list(jsquad_normalize(gold)), list(jsquad_normalize(pred))
    if not g or not p:
        return float(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def jsquad_em_and_f1(pred: str, golds: Sequence[str]) -> tuple[float, float]:
    """EM and character F1 of one question, each the max over its gold answers (`get_raw_scores`): the gold
    answers whose normalised text is not empty, or the one answer "" when none is left (SQuAD's rule for
    unanswerable questions; JSQuAD has none, so every question keeps its 2-3 answers). EM is
    `jsquad_normalize(gold) == jsquad_normalize(pred)`."""
    kept = [g for g in golds if jsquad_normalize(g)] or [""]
    p = jsquad_normalize(pred)
    em = max(float(jsquad_normalize(g) == p) for g in kept)
    f1 = max(jsquad_char_f1(pred, g) for g in kept)
    return em, f1


def jsquad_scores(preds: Sequence[str], golds: Sequence[Sequence[str]]) -> dict[str, float]:
    """JSQuAD `exact_match` and `f1` ×100: the mean over questions of `jsquad_em_and_f1` (`squad_evaluate` ->
    `make_eval_dict`: 100 × sum / total). JGLUE's README prints the same numbers as fractions (0.871/0.941)."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions for {len(golds)} questions")
    if not golds:
        raise ValueError("JSQuAD scores of zero questions are undefined")
    scores = [jsquad_em_and_f1(p, g) for p, g in zip(preds, golds, strict=True)]
    return {"exact_match": float(np.mean([s[0] for s in scores]) * 100.0),
            "f1": float(np.mean([s[1] for s in scores]) * 100.0)}
