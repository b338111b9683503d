"""KLUE metrics on hand-computed examples, including the edge cases KLUE-baseline leaves to sklearn/scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finetune.metrics import accuracy, macro_f1, pearson_r, re_auprc, re_micro_f1, sts_binary_f1


def test_macro_f1_hand_computed():
    # class 0: P 1/2 R 1 -> 2/3; class 1: P 1 R 1/2 -> 2/3; class 2: 1
    assert macro_f1([0, 0, 1, 2], [0, 1, 1, 2]) == pytest.approx((2 / 3 + 2 / 3 + 1) / 3 * 100)


def test_macro_f1_class_never_predicted_counts_as_zero():
    # class 0: P 1/3 R 1 -> 1/2; class 1: P 1 R 1/2 -> 2/3; class 2 is in gold but never predicted -> 0
    assert macro_f1([0, 0, 0, 1], [0, 1, 2, 1]) == pytest.approx((0.5 + 2 / 3 + 0) / 3 * 100)


def test_macro_f1_ignores_class_absent_from_gold_and_predictions():
    # Only labels seen in gold or predictions enter the mean (sklearn's default, as in KLUE-baseline).
    assert macro_f1([0, 1], [0, 1]) == pytest.approx(100.0)


def test_accuracy():
    assert accuracy([0, 1, 2, 2], [0, 1, 1, 2]) == pytest.approx(75.0)
    with pytest.raises(ValueError):
        accuracy([], [])


def test_pearson_hand_computed_and_constant():
    # dx = (-1, 0, 1), dy = (-4/3, -1/3, 5/3): cov 3, |dx| sqrt 2, |dy| sqrt(42/9)
    assert pearson_r([1, 2, 3], [1, 2, 4]) == pytest.approx(3 / (math.sqrt(2) * math.sqrt(42 / 9)) * 100)
    assert math.isnan(pearson_r([2.5, 2.5, 2.5], [1, 2, 4]))  # undefined, not a fake 0


def test_sts_f1_threshold_is_inclusive_on_both_sides():
    # pred >= 3: [1, 0, 1, 0]; gold >= 3: [1, 1, 0, 0] -> tp 1, fp 1, fn 1 -> F1 1/2
    assert sts_binary_f1([3.0, 2.99, 4.0, 1.0], [3.0, 3.5, 2.9, 0.0]) == pytest.approx(50.0)
    assert sts_binary_f1([1.0, 2.0], [0.5, 1.0]) == 0.0  # no positives anywhere


def test_re_micro_f1_excludes_no_relation_and_counts_its_predictions_as_misses():
    labels = ["no_relation", "a", "b"]
    # tp: idx0, idx3; fp: idx2 (a for a no_relation pair); fn: idx1 (no_relation for a true `a`)
    assert re_micro_f1([1, 0, 1, 2, 0], [1, 1, 0, 2, 0], labels) == pytest.approx(200 / 3)
    # all no_relation, predicted so: nothing to score -> 0, not 100
    assert re_micro_f1([0, 0], [0, 0], labels) == 0.0


PROBS = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.1, 0.9]])
GOLD = [0, 1, 0, 1]
# Each class: ranking pos, neg, pos, neg -> PR points (R, P): (0, 1), (.5, 1), (.5, .5), (1, 2/3);
# trapezoids over recall: .5 * 1 + .5 * (.5 + 2/3) / 2 = 0.791666...
PER_CLASS = 0.5 + 0.5 * (0.5 + 2 / 3) / 2


def test_re_auprc_hand_computed():
    score, absent = re_auprc(PROBS, GOLD, 2)
    assert score == pytest.approx(PER_CLASS * 100)
    assert absent == []


def test_re_auprc_leaves_a_class_absent_from_gold_out_of_the_mean():
    probs = np.hstack([PROBS * 0.9, np.full((4, 1), 0.1)])
    score, absent = re_auprc(probs, GOLD, 3)
    assert absent == [2]
    assert score == pytest.approx(PER_CLASS * 100)


def test_re_auprc_ties_interpolate_linearly():
    # one positive and one negative with the same probability: points (0, 1) and (1, 1/2) -> area 3/4
    score, _ = re_auprc(np.array([[0.5, 0.5], [0.5, 0.5]]), [1, 0], 2)
    assert score == pytest.approx(75.0)


def test_re_auprc_checks_shape():
    with pytest.raises(ValueError, match="shape"):
        re_auprc(PROBS, GOLD, 3)
