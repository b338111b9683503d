"""The statistics of the verdict (finetune/stats.py): the Multi-Bootstrap on cases whose distribution is known by
hand, Holm's correction on a known vector, and the two one-sided tests passing and failing."""

from __future__ import annotations

import numpy as np
import pytest

from finetune.stats import grouped, holm, multi_bootstrap, tost_p


def accuracy(summed: np.ndarray) -> np.ndarray:
    """Statistics (correct, 1) per example -> accuracy x 100."""
    return 100.0 * summed[..., 0] / summed[..., 1]


def run(correct: list[int]) -> np.ndarray:
    return np.array([[c, 1] for c in correct], dtype=float)


def test_fine_tuning_seeds_are_drawn_within_a_replicate_by_hand():
    """One evaluation example (every draw takes it), arm A one replicate with runs scoring 100 and 0 and arm B
    one run scoring 0. Drawing A's two runs with replacement: both 100 (1/4), one each (1/2), both 0 (1/4), so
    Δ is 100, 50 or 0 with those probabilities: the 95 % interval is [0, 100], P(Δ <= 0) = 1/4 and the two-sided
    p is 2 * min(1/4, 1) = 0.5; the observed Δ is the mean of the runs, 50."""
    a = [[run([1]), run([0])]]
    b = [[run([0])]]
    found = multi_bootstrap(a, b, accuracy, n_boot=4000, seed=1)
    assert found.diff == 50.0 and found.ci == (0.0, 100.0)
    assert found.p == pytest.approx(0.5, abs=0.04)  # binomial sd of the 1/4 share at 4000 draws: 0.007, x2
    assert found.replicates == (1, 1) and found.runs == (2, 1)


def test_examples_are_drawn_jointly_for_both_arms_by_hand():
    """Two examples; A right on the first only, B on neither. A draw takes the first example twice (1/4: Δ 100),
    once (1/2: Δ 50) or never (1/4: Δ 0). Had each arm drawn its own examples, B would still score 0 and nothing
    would change; so a second case: B right on the first example only too. Then A and B are identical on every
    joint draw, Δ is 0 on all of them and p = 1."""
    a = [[run([1, 0])]]
    found = multi_bootstrap(a, [[run([0, 0])]], accuracy, n_boot=4000, seed=2)
    assert found.diff == 50.0 and found.ci == (0.0, 100.0) and found.p == pytest.approx(0.5, abs=0.04)
    same = multi_bootstrap(a, [[run([1, 0])]], accuracy, n_boot=500, seed=2)
    assert same.diff == 0.0 and same.ci == (0.0, 0.0) and same.p == 1.0


def test_pretraining_replicates_widen_the_interval():
    """The MultiBERTs point: arm A's two pretraining replicates disagree (40 % and 80 % on 50 examples, 3 runs
    each scoring alike); B one replicate at 60 %. With A's replicates drawn, Δ is -20, 0 or +20 apart from the
    example noise; with only A's first replicate the interval never sees that spread."""
    rng = np.random.default_rng(0)

    def replicate(share: float) -> list[np.ndarray]:
        correct = (rng.random(50) < share).astype(int).tolist()
        return [run(correct)] * 3

    r1, r2 = replicate(0.4), replicate(0.8)
    b = [replicate(0.6)]
    wide = multi_bootstrap([r1, r2], b, accuracy, n_boot=2000, seed=3)
    narrow = multi_bootstrap([r1], b, accuracy, n_boot=2000, seed=3)
    assert wide.replicates == (2, 1)
    assert (wide.ci[1] - wide.ci[0]) > (narrow.ci[1] - narrow.ci[0]) + 10


def test_a_clear_difference_gets_the_smallest_p_the_draws_allow_and_the_same_seed_the_same_answer():
    a = [[run([1] * 40 + [0] * 10)] * 2]
    b = [[run([0] * 40 + [1] * 10)] * 2]
    found = multi_bootstrap(a, b, accuracy, n_boot=1000, seed=4)
    assert found.diff == 60.0 and found.p == pytest.approx(2 / 1001)  # no draw at or below 0: (0 + 1) / 1001, x2
    assert multi_bootstrap(a, b, accuracy, n_boot=1000, seed=4) == found


def test_mismatched_examples_and_empty_arms_are_refused():
    with pytest.raises(ValueError, match="shapes"):
        multi_bootstrap([[run([1, 0])]], [[run([1, 0, 1])]], accuracy, n_boot=10)
    with pytest.raises(ValueError, match="arm B"):
        multi_bootstrap([[run([1])]], [[]], accuracy, n_boot=10)


def test_groups_are_summed_into_one_unit():
    values = np.array([[1, 1], [0, 1], [1, 1]], dtype=float)
    assert grouped(values, ["d1", "d2", "d1"]).tolist() == [[2, 2], [0, 1]]
    assert grouped(values, None) is values


def test_holm_on_a_known_vector():
    """Holm 1979 on p = (0.01, 0.04, 0.03, 0.005), m = 4: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 =
    0.02, 0.03, 0.06, 0.04, made monotone: 0.02, 0.03, 0.06, 0.06; back in input order, None left out."""
    assert holm([0.01, 0.04, 0.03, None, 0.005]) == pytest.approx([0.03, 0.06, 0.06, None, 0.02])
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []
    # "4 of 7 tasks at p < 0.05" that Holm keeps only 2 of: the smallest two survive 0.05 / 7 and 0.05 / 6
    adjusted = holm([0.001, 0.004, 0.02, 0.03, 0.2, 0.5, 0.7])
    assert sum(p < 0.05 for p in adjusted if p is not None) == 2


def test_tost_passes_inside_the_margin_and_fails_outside_or_when_too_wide():
    rng = np.random.default_rng(5)
    tight = rng.normal(0.2, 0.3, 4000)  # the 90 % interval, about [-0.29, 0.69], lies within ±1
    assert tost_p(tight, 1.0) < 0.05
    wide = rng.normal(0.0, 2.0, 4000)  # centred on 0, but it allows ±3.3: not shown equivalent
    assert tost_p(wide, 1.0) > 0.05
    shifted = rng.normal(1.5, 0.1, 4000)  # a clear difference beyond the margin
    assert tost_p(shifted, 1.0) > 0.95
    with pytest.raises(ValueError, match="positive"):
        tost_p(tight, 0.0)


def test_the_bootstrap_reports_equivalence_at_the_margin_by_hand():
    """A and B differ on one of 50 examples, B right there: each draw's Δ is -2 points times the number of times
    it holds that example, k ~ Binomial(50, 1/50). TOST at margin 7 fails only where Δ <= -7, k >= 4:
    P = 0.018 < 0.05, equivalent. At margin 5, where k >= 3: P = 0.078, not shown equivalent (nor different:
    Δ = 0 on the draws without the example)."""
    from scipy.stats import binom

    base = [1] * 30 + [0] * 20
    a = [[run(base)] * 3]
    b = [[run(base[:-1] + [1])] * 3]
    assert binom.sf(3, 50, 1 / 50) == pytest.approx(0.018, abs=0.001)
    assert binom.sf(2, 50, 1 / 50) == pytest.approx(0.078, abs=0.001)
    wide = multi_bootstrap(a, b, accuracy, n_boot=4000, seed=6, margin=7.0)
    assert wide.diff == pytest.approx(-2.0) and wide.equivalent
    assert wide.p_equivalence == pytest.approx(0.018, abs=0.008)
    narrow = multi_bootstrap(a, b, accuracy, n_boot=4000, seed=6, margin=5.0)
    assert not narrow.equivalent and narrow.p_equivalence == pytest.approx(0.078, abs=0.015)
    assert narrow.p > 0.05
