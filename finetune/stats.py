"""The statistics behind a verdict: the Multi-Bootstrap of MultiBERTs, Holm's correction, and equivalence by two
one-sided tests.

**Why the Multi-Bootstrap.** Two pretrained models differ by their pretraining data or recipe *and* by their
pretraining seed, and a fine-tuned score varies with the fine-tuning seed and with the evaluation sample. A
t-test over fine-tuning seeds of one pretraining run per arm leaves out the first of these, often the largest
(Sellam et al. 2021, "The MultiBERTs: BERT Reproductions for Robustness Analysis", arXiv 2106.16163, §3: pretraining
seed alone moves GLUE scores by points). The Multi-Bootstrap estimates the distribution of the difference
between two arms by resampling all three at once, in each of `n_boot` draws:
1. the evaluation examples, with replacement (the same draw for both arms: the comparison is paired on
   examples), or whole groups of them where examples are not independent (the turns of one dialogue);
2. per arm, its pretraining replicates, with replacement (independently for the two arms: "unpaired seeds",
   since a seed of one arm has nothing in common with the same number in the other);
3. within each drawn replicate, its fine-tuning runs, with replacement.
A draw's score of an arm is the mean over its drawn replicates of the mean over their drawn fine-tuning runs of
the task's metric recomputed on the drawn examples. Our nesting follows the paper's §3 and its reference code
(google-research/language, `language/multiberts/multibootstrap.py`), which averages the fine-tuning runs of a
seed instead of drawing them; we also draw them (the issue's "resample fine-tuning seeds"), so that an arm with
one pretraining replicate still carries its fine-tuning variance. With one pretraining replicate per arm, step 2
draws the same one every time: the interval then holds no pretraining variance, and the verdict says so.

The metric of a draw is computed from per-example sufficient statistics (`finetune.example_stats`): a resample
is a multiset of examples, its statistics are the weighted sum `W @ S`, so a draw costs one matrix product
instead of one call of the task's metric code per run.

**What it reports.** The observed difference (the nested means on the full evaluation set), the percentile
interval of the drawn differences at `level`, and a two-sided p: twice the smaller tail share of the drawn
differences at 0, with the +1 correction of Davison & Hinkley (1997, eq. 4.11) so that p is never 0 with
finitely many draws. (The reference code reports the one-sided share `mean(delta <= 0)`.) `n_boot` bounds the
smallest p: 2 / (n_boot + 1); 2,000 draws resolve p down to 0.001, below Holm's smallest threshold for eight
tasks (0.05 / 8 = 0.00625).

**Equivalence, not absence.** "No difference" needs evidence that any difference is smaller than a margin: two
one-sided tests (Schuirmann 1987, "A comparison of the two one-sided tests procedure and the power approach for
assessing the equivalence of average bioavailability", J. Pharmacokinet. Biopharm. 15(6)) at margin m: the
difference is shown above -m and below +m, each at `alpha`; p_TOST is the larger of the two one-sided bootstrap
p's. This is the same decision as "the (1 - 2 alpha) interval lies inside (-m, m)".

**Many tasks.** A comparison over eight tasks tests eight hypotheses; Holm's step-down correction (Holm 1979,
"A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2)) keeps the family-wise error
at alpha without assuming the tasks independent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# An arm: its pretraining replicates, each a list of fine-tuning runs, each run an (examples x statistics) array.
Arm = Sequence[Sequence[np.ndarray]]
ScoreFn = Callable[[np.ndarray], np.ndarray]

N_BOOT = 2000  # resolves p down to 2 / 2001 ≈ 0.001 (module doc)
LEVEL = 0.95
_CHUNK = 250  # draws per matrix product: memory is chunk x examples, not n_boot x examples


@dataclass(frozen=True)
class Comparison:
    """Arm A against arm B on one metric (points): the observed difference A - B, its `level` percentile interval
    over the draws, the two-sided p, and, with a margin, the TOST p and whether the two arms are equivalent. The
    counts say what the interval holds: with one pretraining replicate on a side, no pretraining variance."""

    diff: float
    ci: tuple[float, float]
    p: float
    level: float
    n_boot: int
    replicates: tuple[int, int]  # pretraining replicates of A and of B
    runs: tuple[int, int]  # fine-tuning runs of A and of B, all replicates together
    margin: float | None = None
    p_equivalence: float | None = None
    equivalent: bool | None = None


def grouped(values: np.ndarray, groups: Sequence[str] | None) -> np.ndarray:
    """Statistics summed per group (rows in order of first appearance): the unit the bootstrap draws. Examples of
    one group (the turns of a dialogue, the questions on one passage) are not independent; drawing them one by one
    would understate the variance."""
    if groups is None:
        return values
    index: dict[str, int] = {}
    rows = np.array([index.setdefault(g, len(index)) for g in groups])
    out = np.zeros((len(index), values.shape[1]), dtype=np.float64)
    np.add.at(out, rows, values)
    return out


def _nested_mean(per_run: Sequence[Sequence[float]]) -> float:
    return float(np.mean([np.mean(runs) for runs in per_run]))


def multi_bootstrap(arm_a: Arm, arm_b: Arm, score: ScoreFn, *, n_boot: int = N_BOOT, seed: int = 0,
                    level: float = LEVEL, margin: float | None = None, alpha: float = 0.05) -> Comparison:
    """The Multi-Bootstrap of arm A against arm B (module doc). Every run's array has one row per evaluation unit
    (example, or group: `grouped`), the same units in the same order for every run of both arms; `score` maps
    summed statistics (..., k) to the metric (...), NaN where undefined. `seed` fixes the draws: the same inputs
    give the same Comparison."""
    arms = [[[np.asarray(r, dtype=np.float64) for r in rep] for rep in arm] for arm in (arm_a, arm_b)]
    for name, arm in zip("AB", arms, strict=True):
        if not arm or any(not rep for rep in arm):
            raise ValueError(f"arm {name}: every arm needs at least one pretraining replicate with at least one run")
    shapes = {r.shape for arm in arms for rep in arm for r in rep}
    if len(shapes) != 1:
        raise ValueError(f"runs disagree on the evaluation units or statistics: shapes {sorted(shapes)}")
    (n_units, _), = shapes
    observed = [_nested_mean([[float(score(r.sum(0))) for r in rep] for rep in arm]) for arm in arms]
    diff = observed[0] - observed[1]
    if not math.isfinite(diff):
        raise ValueError("the metric is undefined on the full evaluation set for a run of one arm")

    rng = np.random.default_rng(seed)
    flat = [[r for rep in arm for r in rep] for arm in arms]
    stacked = [np.stack(runs, axis=1) for runs in flat]  # (units, runs, k)
    deltas = np.empty(n_boot)
    done = 0
    while done < n_boot:
        m = min(_CHUNK, n_boot - done)
        weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=m).astype(np.float64)
        means = []
        for arm, st in zip(arms, stacked, strict=True):
            # (m, runs): each run on each draw's examples; NaN where undefined there, left out of the means below
            per_run = score(np.einsum("bu,urk->brk", weights, st))
            starts = np.cumsum([0] + [len(rep) for rep in arm])
            picks = rng.integers(0, len(arm), size=(m, len(arm)))  # the drawn pretraining replicates
            rep_means = np.empty((m, len(arm)))
            for j in range(len(arm)):
                sizes = np.array([len(arm[i]) for i in picks[:, j]])
                runs = starts[picks[:, j]][:, None] + (rng.random((m, max(sizes))) * sizes[:, None]).astype(int)
                # a replicate with fewer runs than the widest draws only its own: mask the columns past its size
                taken = np.take_along_axis(per_run, runs, axis=1)
                mask = np.arange(runs.shape[1])[None, :] < sizes[:, None]
                with np.errstate(invalid="ignore"):
                    rep_means[:, j] = np.nansum(np.where(mask, taken, 0.0), axis=1) / np.maximum(
                        (mask & ~np.isnan(taken)).sum(axis=1), 1)
            means.append(rep_means.mean(axis=1))
        deltas[done:done + m] = means[0] - means[1]
        done += m
    tail = (1.0 - level) / 2
    low, high = (float(x) for x in np.quantile(deltas, [tail, 1.0 - tail]))
    p = min(1.0, 2 * min(_tail_p(deltas <= 0), _tail_p(deltas >= 0)))
    p_eq = equivalent = None
    if margin is not None:
        p_eq = tost_p(deltas, margin)
        equivalent = p_eq < alpha
    return Comparison(diff=diff, ci=(low, high), p=p, level=level, n_boot=n_boot,
                      replicates=(len(arms[0]), len(arms[1])), runs=(len(flat[0]), len(flat[1])), margin=margin,
                      p_equivalence=p_eq, equivalent=equivalent)


def _tail_p(hits: np.ndarray) -> float:
    """A one-sided bootstrap p with the +1 correction (Davison & Hinkley 1997, eq. 4.11)."""
    return float((hits.sum() + 1) / (len(hits) + 1))


def tost_p(deltas: np.ndarray, margin: float) -> float:
    """The two one-sided tests' p at `margin` from drawn differences: the larger of P(Δ ≤ -margin) and
    P(Δ ≥ +margin) (each with the +1 correction). Below alpha, the difference lies within ±margin at level alpha."""
    if margin <= 0:
        raise ValueError(f"equivalence margin must be positive, got {margin}")
    deltas = np.asarray(deltas, dtype=np.float64)
    return max(_tail_p(deltas <= -margin), _tail_p(deltas >= margin))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input's order; None stays None and is not counted in
    the family. Sorted ascending, the i-th smallest (from 0) of m is multiplied by m - i, then made monotone by a
    running maximum and capped at 1; "adjusted p < alpha" is then exactly Holm's rejection rule. By hand: SciPy
    has only false-discovery-rate control (`scipy.stats.false_discovery_control`), and statsmodels'
    `multipletests` is not worth a dependency for these five lines."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
