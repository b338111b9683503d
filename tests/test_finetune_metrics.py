"""KLUE metrics on hand-computed examples, including the edge cases KLUE-baseline leaves to sklearn/scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finetune.metrics import (
    accuracy,
    dp_las_macro_f1,
    dp_las_micro_f1,
    dp_uas_macro_f1,
    dp_uas_micro_f1,
    macro_f1,
    ner_char_macro_f1,
    ner_entity_macro_f1,
    pearson_r,
    re_auprc,
    re_micro_f1,
    sts_binary_f1,
)
from finetune.tasks.ner import NER_LABELS


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


# ---- KLUE-NER ---------------------------------------------------------------------------------------------

def test_ner_entity_f1_is_strict_iob2():
    # gold: PS (0-1), LC (3). Predicted "I-PS I-PS" has no B- start: strict IOB2 reads no entity there (seqeval's
    # default mode would read a PS and score 100). PS: tp 0, fn 1 -> F1 0; LC: F1 1; macro over {PS, LC} = 50
    gold = [["B-PS", "I-PS", "O", "B-LC"]]
    assert ner_entity_macro_f1([["I-PS", "I-PS", "O", "B-LC"]], gold) == pytest.approx(50.0)
    # exact span and type: a shorter PS is a miss (and a false positive), the LC still counts
    assert ner_entity_macro_f1([["B-PS", "O", "O", "B-LC"]], gold) == pytest.approx(50.0)
    assert ner_entity_macro_f1([["B-PS", "I-PS", "O", "B-LC"]], gold) == pytest.approx(100.0)


def test_ner_entity_f1_runs_over_the_concatenated_sentences_without_joining_them():
    # Two sentences, each gold PS (0-1). The second prediction starts with I-: on one concatenated sequence it
    # would continue the first sentence's PS into one 4-character entity (tp 0 -> 0); the O between sentences
    # (the official [CLS]/[SEP] positions) keeps them apart: PS tp 1, fp 0, fn 1 -> P 1, R 1/2 -> F1 2/3
    gold = [["B-PS", "I-PS"], ["B-PS", "I-PS"]]
    assert ner_entity_macro_f1([["B-PS", "I-PS"], ["I-PS", "I-PS"]], gold) == pytest.approx(200 / 3)


def test_ner_entity_f1_macro_counts_a_type_found_on_one_side_as_zero():
    # PS right (F1 1); QT predicted but never gold (F1 0) -> macro over {PS, QT} = 50
    assert ner_entity_macro_f1([["B-PS", "I-PS", "B-QT"]], [["B-PS", "I-PS", "O"]]) == pytest.approx(50.0)
    assert math.isnan(ner_entity_macro_f1([["O", "O"]], [["O", "O"]]))  # no entity anywhere: undefined
    with pytest.raises(ValueError, match="sentence 0: 1 predicted tags for 2 gold tags"):
        ner_entity_macro_f1([["O"]], [["O", "O"]])


def test_ner_char_macro_f1_includes_o_and_scores_absent_labels_one():
    gold = ["B-PS", "I-PS", "O", "O"]
    pred = ["B-PS", "O", "O", "O"]
    # B-PS: F1 1; I-PS: tp 0, fn 1 -> 0; O: tp 2, fp 1 -> P 2/3, R 1 -> 0.8; the 10 labels absent from both
    # sides score 1 (zero_division=1 over the fixed 13-label set)
    assert ner_char_macro_f1(pred, gold, NER_LABELS) == pytest.approx((1 + 0 + 0.8 + 10) / 13 * 100)
    # the O-excluded value (what the official docstring describes): 12 labels, B-PS 1, I-PS 0, 10 absent -> 1
    assert ner_char_macro_f1(pred, gold, NER_LABELS, include_o=False) == pytest.approx(11 / 12 * 100)


def test_ner_char_macro_f1_label_on_one_side_only_scores_zero():
    # B-LC predicted for a gold O: B-LC tp 0, fp 1 -> 0; O: tp 1, fn 1 -> P 1, R 1/2 -> 2/3; 11 absent -> 1
    assert ner_char_macro_f1(["B-LC", "O"], ["O", "O"], NER_LABELS) == pytest.approx((0 + 2 / 3 + 11) / 13 * 100)
    assert ner_char_macro_f1(["B-LC", "O"], ["O", "O"], NER_LABELS, include_o=False) == pytest.approx(11 / 12 * 100)
    with pytest.raises(ValueError):
        ner_char_macro_f1([], [], NER_LABELS)


# ---- KLUE-DP ----------------------------------------------------------------------------------------------
# Two sentences: 3 eojeols (the third's head is wrong) and 2 eojeols. Flat gold heads 2 0 2 0 1, predicted 2 0 1 0 1.
GOLD_HEADS, PRED_HEADS = [[2, 0, 2], [0, 1]], [[2, 0, 1], [0, 1]]
# label ids (official order): 3 NP_SBJ, 2 VP, 16 VP_OBJ, 15 VP_CMP, 20 VP_CNJ, 17 VNP_CMP
GOLD_LABELS, PRED_LABELS = [[3, 2, 16], [2, 15]], [[3, 2, 20], [2, 17]]


def test_dp_uas_micro_is_the_share_of_right_heads():
    assert dp_uas_micro_f1(PRED_HEADS, GOLD_HEADS) == pytest.approx(80.0)  # 4 of 5


def test_dp_uas_macro_averages_over_head_positions():
    # classes are head positions: 0: gold 2, pred 2, tp 2 -> 1; 1: gold 1, pred 2, tp 1 -> P 1/2 R 1 -> 2/3;
    # 2: gold 2, pred 1, tp 1 -> P 1 R 1/2 -> 2/3; macro = 7/9 (not the 80 of the micro score)
    assert dp_uas_macro_f1(PRED_HEADS, GOLD_HEADS) == pytest.approx(700 / 9)
    # a head position predicted but never gold enters the mean with 0: positions {0, 1, 2}, 2 only predicted
    # 0: tp 1 -> 1; 1: gold 1 pred 0 -> 0; 2: pred 1, gold 0 -> 0; mean 1/3
    assert dp_uas_macro_f1([[0, 2]], [[0, 1]]) == pytest.approx(100 / 3)


def test_dp_las_merges_labels_from_15_into_others_and_fills_wrong_heads():
    # after the merge (ids >= 15 -> one class): gold 3 2 O 2 O, pred 3 2 O 2 O; the wrong head (3rd word) makes
    # its prediction the filler class F: pred 3 2 F 2 O
    # micro: 4 of 5 right; VNP_CMP (17) for VP_CMP (15) counts as right because both are "others"
    assert dp_las_micro_f1(PRED_HEADS, GOLD_HEADS, PRED_LABELS, GOLD_LABELS) == pytest.approx(80.0)
    # macro over {3, 2, others, filler}: 1, 1, others (gold 2, pred 1, tp 1 -> 2/3), filler (never gold) 0
    assert dp_las_macro_f1(PRED_HEADS, GOLD_HEADS, PRED_LABELS, GOLD_LABELS) == pytest.approx((1 + 1 + 2 / 3 + 0) / 4 * 100)


def test_dp_las_macro_filler_class_costs_a_whole_class_share():
    # every head right: no filler class; labels 16 vs 20 are both "others" -> perfect
    heads = [[2, 0, 2], [0, 1]]
    assert dp_las_macro_f1(heads, heads, PRED_LABELS, GOLD_LABELS) == pytest.approx(100.0)
    # one wrong head whose label was also right: classes {2, 3, filler}: 3 loses its only word (gold 1, tp 0 -> 0),
    # 2 is right (1), the filler scores 0 -> 1/3, while micro drops only to 4/5
    gold_l, pred_l = [[3, 2], [2, 2, 2]], [[3, 2], [2, 2, 2]]
    assert dp_las_macro_f1([[1, 0], [0, 1, 1]], [[2, 0], [0, 1, 1]], pred_l, gold_l) == pytest.approx(100 / 3)
    assert dp_las_micro_f1([[1, 0], [0, 1, 1]], [[2, 0], [0, 1, 1]], pred_l, gold_l) == pytest.approx(80.0)


def test_dp_metrics_check_lengths():
    with pytest.raises(ValueError, match="2 predicted heads for 3 gold heads"):
        dp_uas_micro_f1([[0, 1]], [[0, 1, 1]])
    with pytest.raises(ValueError, match="labels"):
        dp_las_micro_f1([[0, 1]], [[0, 1]], [[0]], [[0, 1]])
