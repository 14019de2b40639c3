r"""The statistical tests behind the verdicts: permutation nulls, equivalence, intervals.

Every test here measures chance instead of assuming it: the p-value is the share of
relabellings (sign flips, orderings, group assignments) of the units that vary independently
(models, not a model's tasks) whose statistic is at least the observed one, exact where the
relabellings can be enumerated, Monte Carlo (``(1 + count) / (1 + n)``) otherwise. Each result
carries ``p_min``, the smallest p-value the design can give at all: a panel of 3 decoders can
never show a positive rank correlation beyond chance (:math:`p \ge 1/3! = 1/6`), so a verdict
on it is "not testable" rather than a failure.

Claims of **no effect** ("the correlation is weak", "NRS does not transfer") are judged by an
equivalence test with a stated margin (:func:`equivalence_sign_flip_test`, two one-sided
tests): absence of a significant effect is never read as evidence of absence.

References
----------
Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer 2005.
Schuirmann, "A comparison of the two one-sided tests procedure [...]", J. Pharmacokinet.
Biopharm. 15 (1987) 657-680 (TOST).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

__all__ = ["crossed_mean_test", "crossed_components", "satterthwaite_df", "crossed_t_test",
           "intersection_union_by_model", "PermutationTest", "sign_flip_test", "equivalence_sign_flip_test", "spearman_permutation_test",
           "mean_interval", "sign_flip_p_min", "models_for_sign_flip", "two_group_p_min", "smallest_two_group_panel",
           "sign_flip_min_p_test", "perfectly_separated", "score_grid", "separation_counts", "separation_table",
           "separation_test", "separation_tests", "variance_explained", "partial_eta_squared",
           "within_block_permutation_test", "accuracy_permutation_test", "sign_flip_max_test",
           "two_group_permutation_test", "sign_flip_power", "holm", "tolerance", "monte_carlo_p", "tail_p"]

_TOL = 1e-12


def tolerance(scale: float = 1.0) -> float:
    r"""The one tolerance rule of every tail count: :math:`10^{-12} \max(1, |\text{scale}|)`.

    A relabelled statistic equal to the observed one up to floating-point error counts as
    reaching it; ``scale`` is the largest magnitude among the data the statistic is computed
    from (p-values, correlations and shares have scale 1).

    >>> tolerance(), tolerance(250.0)
    (1e-12, 2.5e-10)
    """
    return _TOL * max(1.0, abs(float(scale)))


def monte_carlo_p(count, n: int):
    r"""The Monte Carlo p-value :math:`(1 + \text{count}) / (1 + n)` of ``n`` random relabellings
    (or bootstrap replicates), ``count`` of which are at least as extreme as the observed
    statistic: the observed data count as one relabelling, so the p-value is never 0 and the
    test is valid at every ``n`` (Phipson and Smyth 2010). ``count`` may be an array (one
    p-value per entry).

    >>> monte_carlo_p(0, 999), monte_carlo_p(49, 999)
    (0.001, 0.05)
    """
    return (1 + count) / (1 + n)


def tail_p(null: np.ndarray, observed: float, *, exact: bool, design_p_min: float, extreme: float | None = None,
           alternative: str = "greater", scale: float = 1.0) -> tuple[float, float]:
    r"""The p-value and smallest attainable p-value of a permutation test, from its null statistics.

    ``count`` is the number of relabellings whose statistic reaches the observed one (at least
    it, ``alternative="greater"``; at most, ``"less"``; up to :func:`tolerance` of ``scale``).

    - Exact (``null`` holds every relabelling): :math:`p = \text{count}/N`; ``p_min`` is the share
      of relabellings reaching ``extreme``, the most extreme statistic the data allow, or the
      design's ``design_p_min`` where ``extreme`` is None.
    - Monte Carlo (``null`` holds :math:`N` random relabellings): :math:`p` is
      :func:`monte_carlo_p`, never below ``p_min`` :math:`= \max(\text{design\_p\_min}, 1/(1 + N))`:
      the estimate cannot fall below what the design allows.

    >>> tail_p(np.array([0., 1, 2, 3]), 2.0, exact=True, design_p_min=0.25, extreme=3.0)
    (0.5, 0.25)
    >>> tail_p(np.array([0., 1, 2, 3]), 2.0, exact=False, design_p_min=0.01)
    (0.6, 0.2)
    """
    null = np.asarray(null)
    tol = tolerance(scale)
    if alternative == "greater":
        count = int((null >= observed - tol).sum())
        top = None if extreme is None else int((null >= extreme - tol).sum())
    elif alternative == "less":
        count = int((null <= observed + tol).sum())
        top = None if extreme is None else int((null <= extreme + tol).sum())
    else:
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    if exact:
        return count / len(null), (design_p_min if top is None else top / len(null))
    p_min = max(float(design_p_min), 1 / (1 + len(null)))
    return max(monte_carlo_p(count, len(null)), p_min), p_min


@dataclass(frozen=True)
class PermutationTest:
    """Result of a permutation test.

    Attributes
    ----------
    statistic : float
        The observed statistic.
    p_value : float
        Share of relabellings whose statistic is at least the observed one (exact), or
        ``(1 + count) / (1 + n)`` over ``n`` random relabellings (Monte Carlo).
    p_min : float
        The smallest p-value this design can give at all.
    n_permutations : int
        Relabellings enumerated or drawn.
    exact : bool
        Whether every relabelling was enumerated.
    n_comparisons : int
        Scores over which the statistic takes the maximum (or minimum).
    """

    statistic: float
    p_value: float
    p_min: float
    n_permutations: int
    exact: bool
    n_comparisons: int = 1

    def describe(self, what: str = "relabellings") -> str:
        kind = "exact" if self.exact else "Monte Carlo"
        more = f", extreme over {self.n_comparisons} scores" if self.n_comparisons > 1 else ""
        return f"{kind} permutation test over {self.n_permutations} {what}{more}"


# --- paired differences: sign flips -------------------------------------------------------------

@functools.lru_cache(maxsize=32)
def _all_signs(n: int) -> np.ndarray:
    """Every sign pattern of ``n`` units, shape (2^n, n) (cached, read-only: the null calibration
    calls the tests thousands of times on panels of the same size)."""
    signs = 1 - 2 * np.array(list(itertools.product((0, 1), repeat=n)), dtype=float)
    signs.flags.writeable = False
    return signs


@functools.lru_cache(maxsize=8)
def _random_signs(n: int, n_permutations: int, seed: int) -> np.ndarray:
    """``n_permutations`` random sign patterns of ``n`` units (cached, read-only: per-model tests
    over hundreds of items reuse them)."""
    signs = np.where(np.random.default_rng(seed).random((n_permutations, n)) < 0.5, -1.0, 1.0)
    signs.flags.writeable = False
    return signs


def _sign_patterns(n: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if 2 ** n <= max_exact:
        return _all_signs(n), True
    return _random_signs(n, n_permutations, seed), False


def sign_flip_test(differences: np.ndarray, *, max_exact: int = 2 ** 16, n_permutations: int = 20000,
                   seed: int = 0) -> PermutationTest:
    r"""One-sided sign-flip permutation test of "the mean of paired differences is above 0".

    Under chance each difference (one per independent unit, e.g. per model) is as likely to
    have either sign; the p-value is the share of the :math:`2^n` sign patterns whose mean is at
    least the observed mean (exact up to ``max_exact`` patterns, else Monte Carlo). ``p_min``
    is the share reaching the largest attainable mean (:math:`2^{-n'}` with :math:`n'` non-zero
    differences).

    Parameters
    ----------
    differences : array of shape (n_units,)

    Examples
    --------
    >>> t = sign_flip_test(np.array([1.0, 2.0, 3.0]))
    >>> t.p_value, t.p_min
    (0.125, 0.125)
    >>> sign_flip_test(np.array([1.0, -2.0, 3.0])).p_value  # sign patterns with mean >= 2/3
    0.375
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or len(d) == 0 or not np.isfinite(d).all():
        raise ValueError(f"need a non-empty finite 1-D array of paired differences, got shape {d.shape}")
    signs, exact = _sign_patterns(len(d), max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    null = signs @ d / len(d)
    observed = float(d.mean())
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=2.0 ** -int((d != 0).sum()),
                      extreme=float(np.abs(d).mean()), scale=float(np.abs(d).max()))
    return PermutationTest(observed, float(p), float(p_min), len(null), exact, 1)


def sign_flip_min_p_test(differences: np.ndarray, *, max_exact: int = 2 ** 16, n_permutations: int = 20000,
                         seed: int = 0) -> PermutationTest:
    r"""Sign-flip test of "the mean paired difference of *some* score is above 0", adjusted for the scores.

    ``differences`` holds one row per independent unit (model) and one column per score. Under
    chance each unit's row is as likely to have either sign, the *same* flip applying to all of
    a unit's scores. Each score :math:`j` gets its one-sided sign-flip p-value :math:`p_j(s)`
    under every sign pattern :math:`s` (the share of patterns whose mean is at least pattern
    :math:`s`'s); the statistic is the smallest, :math:`\min_j p_j`, and the adjusted p-value
    is the share of patterns whose smallest p-value is at most the observed one (the single-step
    min-p procedure of Westfall and Young, 1993). It controls the chance of any false claim
    across the scores without Bonferroni's factor, and unlike the largest mean it is not swamped
    by a score far below 0 (whose flipped mean would be large). ``p_min`` is the share of
    patterns attaining the smallest possible :math:`\min_j p_j` (one pattern per score tops that
    score: between :math:`2^{-n}` and :math:`J 2^{-n}`). ``statistic`` is the largest column mean.

    References
    ----------
    Westfall, Young, *Resampling-Based Multiple Testing*, Wiley 1993, Sec. 2.6.

    Examples
    --------
    Every score of each of 5 units above 0 (the same pattern tops every score): 1/32.

    >>> sign_flip_min_p_test(np.array([[1.0, 2.0, 0.5]] * 5)).p_value
    0.03125
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2 or d.shape[0] == 0 or d.shape[1] == 0 or not np.isfinite(d).all():
        raise ValueError(f"need a finite (n_units, n_scores) array of paired differences, got shape {d.shape}")
    signs, exact = _sign_patterns(len(d), max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    signs = np.vstack([np.ones(len(d)), signs])  # row 0: the observed signs
    means = signs @ d / len(d)  # (P, J)
    tol = tolerance(float(np.abs(d).max()))
    null_means = means[1:]
    ordered = np.sort(null_means, axis=0)
    # p_j(s): share of the null patterns whose mean of score j is at least pattern s's
    p = np.stack([(len(ordered) - np.searchsorted(ordered[:, j], means[:, j] - tol, side="left")) / len(ordered)
                  for j in range(d.shape[1])], axis=1)
    min_p = p.min(1)
    observed, null = min_p[0], min_p[1:]
    p_value, p_min = tail_p(null, observed, exact=exact, design_p_min=2.0 ** -len(d), extreme=float(null.min()),
                            alternative="less")
    return PermutationTest(float(d.mean(0).max()), float(p_value), float(p_min), len(null), exact, d.shape[1])


def equivalence_sign_flip_test(differences: np.ndarray, margin: float, *, lower: float | None = None,
                               **options) -> PermutationTest:
    r"""Equivalence test (two one-sided sign-flip tests) of "the mean difference lies inside the margin".

    The null is that the mean lies outside :math:`(\ell, m)` with :math:`m` = ``margin`` and
    :math:`\ell` = ``lower`` (default :math:`-m`); it is rejected when both
    :math:`\bar d < m` (sign flips of :math:`m - d`) and :math:`\bar d > \ell` (sign flips of
    :math:`d - \ell`) are significant, so the p-value is the larger of the two one-sided
    p-values. ``lower=-inf`` gives a one-sided non-superiority test ("the effect is below
    ``margin``"). Shifting by the margin assumes the differences are symmetric about their mean.

    Examples
    --------
    Five models whose differences all lie well inside +-1:

    >>> t = equivalence_sign_flip_test(np.array([0.1, -0.1, 0.05, 0.0, 0.02]), 1.0)
    >>> t.p_value == t.p_min == 1 / 32
    True
    """
    d = np.asarray(differences, dtype=float)
    if not margin > 0 and lower is None:
        raise ValueError(f"margin must be positive, got {margin}")
    lo = -margin if lower is None else lower
    upper = sign_flip_test(margin - d, **options)
    tests = [upper]
    if np.isfinite(lo):
        tests.append(sign_flip_test(d - lo, **options))
    p = max(t.p_value for t in tests)
    p_min = max(t.p_min for t in tests)
    return PermutationTest(float(d.mean()), float(p), float(p_min), upper.n_permutations, upper.exact, 1)


def sign_flip_power(effect: float, spread: float, n_units: int, *, alpha: float = 0.05, n_simulations: int = 4000,
                    seed: int = 0) -> float:
    r"""Power of the exact one-sided sign-flip test (:func:`sign_flip_test`) at a given effect.

    The share of ``n_simulations`` panels of ``n_units`` independent differences
    :math:`d_i \sim N(\text{effect}, \text{spread}^2)` on which the test's p-value is at most
    ``alpha``. Used to say how strong a test the chapter's design gives at the paper's effect,
    with the spread across units measured on the chapter's own panel. 0 where the design cannot
    reach ``alpha`` (:math:`2^{-n} > \alpha`).

    Examples
    --------
    >>> sign_flip_power(1.0, 0.1, 4)  # 4 units cannot reach 0.05
    0.0
    >>> sign_flip_power(1.0, 1e-3, 5)  # every unit above 0: p = 1/32
    1.0
    >>> round(sign_flip_power(0.0, 1.0, 8, n_simulations=20000), 2)  # size: at most alpha (exact test, discrete)
    0.05
    """
    if isinstance(n_units, bool) or not isinstance(n_units, int) or n_units < 1:
        raise ValueError(f"n_units must be a positive integer, got {n_units!r}")
    if not (math.isfinite(effect) and math.isfinite(spread) and spread >= 0):
        raise ValueError(f"effect must be finite and spread finite and >= 0, got {effect!r}, {spread!r}")
    if sign_flip_p_min(n_units) > alpha:
        return 0.0
    d = np.random.default_rng(seed).normal(effect, spread, size=(n_simulations, n_units))
    if n_units <= 12:
        signs = _all_signs(n_units)
        null = d @ signs.T / n_units  # (simulations, patterns)
        observed = d.mean(1, keepdims=True)
        tol = _TOL * np.maximum(1.0, np.abs(d).max(1, keepdims=True))  # tolerance(), one per simulated panel
        p = (null >= observed - tol).mean(1)
    else:
        p = np.array([sign_flip_test(row, n_permutations=2000, seed=seed).p_value for row in d])
    return float((p <= alpha + tolerance()).mean())


def sign_flip_p_min(n_units: int) -> float:
    """Smallest p-value of an exact one-sided sign-flip test over ``n_units`` (:math:`2^{-n}`)."""
    return 2.0 ** -n_units


def permutation_p_min(n_units: int) -> float:
    """Smallest p-value of an exact one-sided permutation test of a rank correlation over
    ``n_units`` (a perfect ranking: one of the :math:`n!` assignments, :math:`1/n!`).

    Examples
    --------
    >>> permutation_p_min(5)
    0.008333333333333333
    """
    if n_units < 0:
        raise ValueError(f"n_units must be at least 0, got {n_units}")
    return 1 / math.factorial(n_units)


def models_for_sign_flip(alpha: float = 0.05) -> int:
    """Fewest units an exact one-sided sign-flip test needs to reach ``alpha`` (5 for 0.05)."""
    return math.ceil(math.log2(1 / alpha))


# --- two groups: relabelling the kinds ---------------------------------------------------------

def relabellings(n_first: int, n_second: int) -> int:
    """How many ways a two-group relabelling test can assign the labels: :math:`\\binom{n}{k}`.

    Examples
    --------
    >>> relabellings(2, 3)
    10
    """
    return math.comb(n_first + n_second, n_first)


def two_group_p_min(n_first: int, n_second: int) -> float:
    """Smallest p-value of a two-group relabelling test (``1 / C(n, k)``, doubled for equal groups)."""
    return (2 if n_first == n_second else 1) / relabellings(n_first, n_second)


def smallest_two_group_panel(alpha: float = 0.05) -> tuple[int, int]:
    """The smallest balanced-as-possible ``(k, n - k)`` panel whose two-group test can reach ``alpha``."""
    for n in range(2, 64):
        k = n // 2
        if two_group_p_min(k, n - k) <= alpha:
            return k, n - k
    raise ValueError(f"no panel of under 64 units reaches alpha={alpha}")


# --- two groups on several tasks: separation -------------------------------------------------

def perfectly_separated(values: np.ndarray, groups: np.ndarray) -> bool:
    """True when two groups' values do not overlap (every value of one below every value of the other).

    Raises
    ------
    ValueError
        Unless ``groups`` holds exactly two distinct labels.

    Examples
    --------
    >>> perfectly_separated([1, 2, 5, 6], ["a", "a", "b", "b"]), perfectly_separated([1, 5, 2, 6], ["a", "a", "b", "b"])
    (True, False)
    """
    values, groups = np.asarray(values, dtype=float), np.asarray(groups)
    labels = np.unique(groups)
    if len(labels) != 2:
        raise ValueError(f"need exactly two groups, got {labels.tolist()}")
    a, b = values[groups == labels[0]], values[groups == labels[1]]
    return bool(a.max() < b.min() or b.max() < a.min())


def separation_table(scores: pd.DataFrame, measures: list[str], *, group: str = "kind",
                     within: str = "task") -> pd.DataFrame:
    """For each measure and each value of ``within``: are the two ``group``\\ s perfectly separated?

    Returns a boolean table (measures x values of ``within``) with a last column ``"separated on"``
    counting the ``within`` values on which the measure separates the groups; with fewer than two
    groups (e.g. a panel of encoders only) nothing can separate them: no column but that count, 0.
    """
    if scores[group].nunique() < 2:
        return pd.DataFrame({"separated on": 0}, index=list(measures))
    table = pd.DataFrame({w: {m: perfectly_separated(part[m], part[group]) for m in measures}
                          for w, part in scores.groupby(within, sort=False)})
    table["separated on"] = table.sum(axis=1).astype(int)
    return table


def _groupings(n: int, k: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """Boolean masks (G, n) of the size-``k`` subsets of ``n`` units: all of them, or a random draw."""
    if math.comb(n, k) <= max_exact:
        masks = np.zeros((math.comb(n, k), n), dtype=bool)
        for row, members in enumerate(itertools.combinations(range(n), k)):
            masks[row, list(members)] = True
        return masks, True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n_permutations, n)), axis=1) < k, False


def _separated_counts(values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Tasks on which each grouping separates each score: values (S, T, M), masks (G, M) -> (G, S)."""
    a = masks[:, None, None, :]
    v = values[None]
    a_max, a_min = np.where(a, v, -np.inf).max(-1), np.where(a, v, np.inf).min(-1)
    b_max, b_min = np.where(~a, v, -np.inf).max(-1), np.where(~a, v, np.inf).min(-1)
    return ((a_max < b_min) | (b_max < a_min)).sum(-1)


def score_grid(scores: pd.DataFrame, measures: list[str], *, rows: str, cols: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores of a complete two-way design as an array ``(n_measures, n_rows, n_cols)``.

    Parameters
    ----------
    scores : DataFrame
        Exactly one row per (``rows``, ``cols``) pair, every pair present, finite ``measures``.

    Returns
    -------
    values : ndarray of shape (n_measures, n_rows, n_cols)
    row_labels, col_labels : ndarray
        In order of first appearance; ``values[:, i, j]`` belongs to ``row_labels[i], col_labels[j]``.

    Raises
    ------
    ValueError
        On a missing column, a non-finite score, or an incomplete or duplicated design.
    """
    measures = list(measures)
    if not measures:
        raise ValueError("need at least one measure")
    missing = [c for c in (rows, cols, *measures) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lack the columns {missing}")
    y = np.column_stack([scores[m].to_numpy(dtype=float) for m in measures])
    if not np.isfinite(y).all():
        raise ValueError("scores contain non-finite values; the test needs finite scores")
    r, row_labels = pd.factorize(scores[rows])
    c, col_labels = pd.factorize(scores[cols])
    cells = r * len(col_labels) + c
    if len(scores) != len(row_labels) * len(col_labels) or len(np.unique(cells)) != len(scores):
        raise ValueError(f"every {rows} needs exactly one row per {cols}: the table is incomplete")
    values = np.empty((len(measures), len(row_labels), len(col_labels)))
    values[:, r, c] = y.T
    return values, np.asarray(row_labels), np.asarray(col_labels)


def _separation_values(scores: pd.DataFrame, measures: list[str], *, group: str, within: str,
                       unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores as an array (S, T, M) and the first group's mask (M,), validated."""
    if group not in scores.columns:
        raise ValueError(f"scores lack the columns {[group]}")
    values, units, _ = score_grid(scores, measures, rows=unit, cols=within)
    first_rows = np.unique(pd.factorize(scores[unit])[0], return_index=True)[1]  # each unit's first row
    labels = scores[group].to_numpy()[first_rows]
    kinds = pd.unique(labels)
    if len(kinds) != 2:
        raise ValueError(f"need exactly two groups in {group!r}, got {sorted(map(str, kinds))}")
    return values.transpose(0, 2, 1), labels == kinds[0]


def separation_counts(scores: pd.DataFrame, measures: list[str], *, group: str = "kind", within: str = "task",
                      unit: str = "model") -> pd.Series:
    """Number of ``within`` values (tasks) on which each measure perfectly separates the two groups.

    The observed statistic of :func:`separation_test` per measure (its maximum is the test's).
    """
    values, first = _separation_values(scores, measures, group=group, within=within, unit=unit)
    return pd.Series(_separated_counts(values, first[None])[0], index=list(measures), name="separated on")


def separation_test(scores: pd.DataFrame, measures: list[str], *, baseline: list[str] | None = None,
                    alternative: str = "greater", **options) -> PermutationTest:
    r"""Permutation test of "some measure separates the two groups on many ``within`` values".

    The statistic is the largest number of ``within`` values (tasks) on which one measure puts
    every unit (model) of one group below every unit of the other,

    .. math:: S(\mathcal M) = \max_{m \in \mathcal M} \#\{t : m \text{ separates the groups on task } t\},

    or, with ``baseline`` measures :math:`\mathcal B`, the difference
    :math:`D = S(\mathcal M) - S(\mathcal B)` ("the measures separate the groups on more tasks
    than the baseline does"). Under chance the group labels are exchangeable between units:
    every way of choosing which :math:`k` of the :math:`n` units form the first group is equally
    likely. The p-value is the share of those relabellings (all :math:`\binom nk` when at most
    ``max_exact``, else ``n_permutations`` random ones, ``(1 + count) / (1 + n)``) whose statistic
    is at least (``alternative="greater"``) or at most (``"less"``) the observed one. The maxima
    over measures are taken inside every relabelling, so trying several measures is accounted
    for, and relabelling units (not rows) keeps the dependence between tasks measured on the
    same models; with a baseline both sets are relabelled jointly.

    ``p_min`` is the design's: :math:`1/\binom nk`, doubled for equal groups (a grouping and
    its complement separate alike).

    Parameters
    ----------
    scores : DataFrame
        One row per unit and ``within`` value, with columns ``unit``, ``group`` (two labels),
        ``within`` and the measures.
    measures, baseline : list of str
    alternative : {"greater", "less"}
    **options
        ``group``, ``within``, ``unit`` (column names), ``max_exact``, ``n_permutations``, ``seed``.

    Returns
    -------
    PermutationTest
        ``statistic`` is :math:`S` (or :math:`D`), a whole number of tasks.

    Examples
    --------
    One encoder and three decoders: any result arises by chance with probability at least 1/4
    (here 1/2: the model with the highest scores separates as well as the encoder).

    >>> df = pd.DataFrame({"model": list("abcd") * 2, "kind": ["e", "d", "d", "d"] * 2,
    ...                    "task": ["x"] * 4 + ["y"] * 4, "s": [0, 1, 2, 3, 0, 5, 6, 7]})
    >>> t = separation_test(df, ["s"])
    >>> t.statistic, t.p_value, t.p_min
    (2, 0.5, 0.25)
    """
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    return separation_tests(scores, measures, baseline=baseline, **options)[alternative]


def separation_tests(scores: pd.DataFrame, measures: list[str], *, baseline: list[str] | None = None,
                     group: str = "kind", within: str = "task", unit: str = "model", max_exact: int = 20000,
                     n_permutations: int = 10000, seed: int = 0) -> dict[str, PermutationTest]:
    """Both tails of :func:`separation_test` from one set of relabellings: ``{"greater": ..., "less": ...}``."""
    measures, baseline = list(measures), list(baseline or ())
    values, first = _separation_values(scores, measures + baseline, group=group, within=within, unit=unit)
    n, k, s = len(first), int(first.sum()), len(measures)
    masks, exact = _groupings(n, k, max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    counts = _separated_counts(values, np.vstack([first, masks]))  # row 0: the observed kinds; (1 + G, S + B)
    stat = counts[:, :s].max(1) - (counts[:, s:].max(1) if baseline else 0)
    observed, null = int(stat[0]), stat[1:]
    design = two_group_p_min(k, n - k)
    tests = {}
    for tail in ("greater", "less"):
        p, p_min = tail_p(null, observed, exact=exact, design_p_min=design, alternative=tail)
        tests[tail] = PermutationTest(observed, float(p), float(p_min), len(masks), exact, s + len(baseline))
    return tests


# --- a factor within blocks: share of variance ------------------------------------------------

def variance_explained(scores: pd.DataFrame, measure: str, factor: str) -> float:
    r"""Share of the variance of ``measure`` explained by ``factor`` (eta squared).

    .. math:: \eta^2 = \frac{\sum_g n_g (\bar y_g - \bar y)^2}{\sum_i (y_i - \bar y)^2}

    1 when the factor determines the value, 0 when every group has the same mean (and when the
    measure is constant).

    >>> df = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [0.0, 2.0, 4.0, 6.0]})
    >>> variance_explained(df, "y", "g")  # group means 1 and 5, grand mean 3: 16 / 20
    0.8
    """
    y = scores[measure].astype(float)
    total = ((y - y.mean()) ** 2).sum()
    if total == 0:
        return 0.0
    means = y.groupby(scores[factor]).transform("mean")
    return float(((means - y.mean()) ** 2).sum() / total)


def partial_eta_squared(values: np.ndarray) -> np.ndarray:
    r"""Share of each block's variance explained by the factor, over the blocks (partial :math:`\eta^2`).

    ``values`` has shape ``(..., n_blocks, n_levels)`` (one value per block and factor level).
    Each block's mean is removed, :math:`e_{bf} = y_{bf} - \bar y_{b\cdot}`; the share is
    :math:`B \sum_f \bar e_{\cdot f}^2 / \sum_{bf} e_{bf}^2`, 1 when every block has the same
    profile over the levels, 0 when the level means coincide (and for constant blocks).

    >>> partial_eta_squared(np.array([[0.0, 1.0], [10.0, 11.0]]))  # both blocks rise by 1
    array(1.)
    """
    e = values - values.mean(-1, keepdims=True)
    between = values.shape[-2] * (e.mean(-2) ** 2).sum(-1)
    total = (e ** 2).sum((-2, -1))
    return np.where(total > 0, between / np.where(total > 0, total, 1), 0.0)


def within_block_permutation_test(scores: pd.DataFrame, measures: list[str], *, factor: str = "task",
                                  block: str = "model", max_exact: int = 20000, n_permutations: int = 5000,
                                  seed: int = 0) -> PermutationTest:
    r"""Permutation test of "the ``factor`` explains a share of each ``block``'s variance".

    Each measure is centred within every block (a model's mean removed, so differences between
    blocks do not count); the statistic is the largest share of the remaining variance that the
    factor explains, over the measures (:func:`partial_eta_squared`),

    .. math:: S = \max_m \frac{B \sum_f \bar e_{\cdot f, m}^2}{\sum_{b,f} e_{bf,m}^2},
              \qquad e_{bf,m} = y_{bf,m} - \bar y_{b\cdot,m}.

    Under chance the factor's labels are exchangeable within each block (each model's scores
    are shuffled between its tasks). The statistic does not change when the levels are renamed
    in every block at once, so the exact test enumerates the :math:`(F!)^{B-1}` shuffles that
    keep the first block's labels (when at most ``max_exact``), each standing for :math:`F!`
    equivalent ones, and ``p_min = 1 / (F!)^{B-1}``; otherwise ``n_permutations`` random
    shuffles give ``(1 + count) / (1 + n)``. The maximum over measures is taken inside every
    shuffle.

    Parameters
    ----------
    scores : DataFrame
        One row per (block, factor level), every level in every block (a complete design).

    Examples
    --------
    Two models whose two tasks differ the same way: still p = 1/2, since swapping one model's
    tasks is as likely under chance as the observed assignment.

    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "s": [0., 1, 0, 1]})
    >>> t = within_block_permutation_test(df, ["s"])
    >>> t.statistic, t.p_value, t.p_min, t.exact
    (1.0, 0.5, 0.5, True)
    """
    values, blocks, levels = score_grid(scores, measures, rows=block, cols=factor)  # (S, B, F)
    n_blocks, n_levels = values.shape[1:]
    if n_levels < 2:
        raise ValueError(f"need at least two values of {factor!r}, got {n_levels}")
    n_distinct = math.factorial(n_levels) ** (n_blocks - 1)
    if n_distinct <= max_exact:
        orders = _all_orderings(n_levels)
        choice = np.array(list(itertools.product(range(len(orders)), repeat=n_blocks - 1)), dtype=int)
        choice = choice.reshape(n_distinct, n_blocks - 1)
        perms = np.concatenate([np.broadcast_to(np.arange(n_levels), (len(choice), 1, n_levels)), orders[choice]], 1)
        exact = True
    else:
        perms = np.argsort(np.random.default_rng(seed).random((n_permutations, n_blocks, n_levels)), axis=-1)
        exact = False
    shuffled = values[:, np.arange(n_blocks)[None, :, None], perms]  # (S, P, B, F)
    observed = float(partial_eta_squared(values).max())
    null = partial_eta_squared(shuffled).max(0)
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=1 / n_distinct)
    return PermutationTest(observed, float(p), float(p_min), len(perms), exact, values.shape[0])


# --- rank correlation: orderings ---------------------------------------------------------------

def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, 1..n, ties sharing their mean rank; a row holding a NaN is all NaN.

    The same numbers as ``scipy.stats.rankdata(x, axis=-1)`` (method "average"; the ranks are
    half-integers, so exactly the same), at a fraction of its cost on many short rows (the
    calibration ranks thousands of resampled relevance vectors per simulated panel): one
    unstable argsort of all rows at once, then each tie group's first and last position.

    >>> average_ranks(np.array([[0.3, 0.1, 0.3, 0.2], [1.0, np.nan, 0.0, 2.0]])).tolist()
    [[3.5, 1.0, 3.5, 2.0], [nan, nan, nan, nan]]
    """
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return np.empty(x.shape)
    n = x.shape[-1] if x.ndim else 1
    flat = x.reshape(-1, n)
    order = flat.argsort(axis=-1)
    order += np.arange(0, flat.size, n)[:, None]  # positions in the flattened rows
    s = flat.ravel()[order]  # each row sorted (NaN last)
    idx = np.arange(n, dtype=np.int16 if n < 2 ** 14 else np.intp)  # small positions: less memory to scan
    first = np.empty(s.shape, dtype=bool)  # a tie group starts here
    first[:, 0] = True
    np.not_equal(s[:, 1:], s[:, :-1], out=first[:, 1:])
    start = np.maximum.accumulate(first * idx, axis=-1)
    last_rev = np.empty_like(first)  # a group ends here, the row read right to left
    last_rev[:, 0] = True
    last_rev[:, 1:] = first[:, :0:-1]
    end = (n - 1) - np.maximum.accumulate(last_rev * idx, axis=-1)[:, ::-1]
    ranks = np.empty(flat.size)
    ranks[order] = (start + end) * 0.5 + 1
    ranks = ranks.reshape(flat.shape)
    ranks[np.isnan(s[:, -1])] = np.nan
    return ranks.reshape(x.shape)


def _rank_rows(x: np.ndarray) -> np.ndarray:
    r = average_ranks(x)
    r = r - r.mean(-1, keepdims=True)
    norm = np.sqrt((r ** 2).sum(-1, keepdims=True))
    return np.divide(r, norm, out=np.zeros_like(r), where=norm > 0)


@functools.lru_cache(maxsize=16)
def _all_orderings(n: int) -> np.ndarray:
    """Every ordering of ``0..n-1`` in lexicographic order, shape (n!, n), read-only (computed once
    per ``n`` and process: a verdict's exact permutation test and each of the appendix's
    simulated panels enumerate the same 8! = 40320 orderings).

    >>> _all_orderings(3).tolist()
    [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    """
    out = np.fromiter(itertools.chain.from_iterable(itertools.permutations(range(n))), dtype=np.intp,
                      count=math.factorial(n) * n).reshape(-1, n)
    out.flags.writeable = False
    return out


def _orderings(n: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if math.factorial(n) <= max_exact:
        return _all_orderings(n), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n_permutations, n)), axis=1), False


def spearman_permutation_test(scores: np.ndarray, downstream: np.ndarray, *, statistic: str = "min",
                              max_exact: int = 40320, n_permutations: int = 20000, seed: int = 0) -> PermutationTest:
    r"""Exact permutation test of a positive Spearman correlation between score(s) and a downstream score.

    Under chance every assignment of the downstream scores to the units is equally likely, so
    the exact p-value of a positive correlation is the share of the :math:`n!` orderings whose
    correlation is at least the observed one; no result can have p below :math:`1/n!`.

    Parameters
    ----------
    scores : array of shape (n_units,) or (n_scores, n_units)
    downstream : array of shape (n_units,)
    statistic : {"min", "max"}
        With several scores, the smallest (``"min"``: *every* score correlates positively) or
        largest (``"max"``: *some* score does) correlation; the same ordering is applied to every
        score, so the number of scores is accounted for.
    max_exact : int
        Enumerate all :math:`n!` orderings up to this many (8 units), else draw ``n_permutations``.

    Examples
    --------
    Three models ranked perfectly: still p = 1/6, the best three models can do.

    >>> t = spearman_permutation_test(np.array([1., 2, 3]), np.array([10., 20, 30]))
    >>> round(t.statistic, 6), round(t.p_value, 4), round(t.p_min, 4)
    (1.0, 0.1667, 0.1667)
    """
    x = np.atleast_2d(np.asarray(scores, dtype=float))
    y = np.asarray(downstream, dtype=float)
    if y.ndim != 1 or x.shape[1] != len(y) or len(y) < 2:
        raise ValueError(f"need scores (n_scores, n_units) and downstream (n_units,) with n_units >= 2, "
                         f"got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores and downstream must be finite; drop units with missing values first")
    if statistic not in ("min", "max"):
        raise ValueError(f"statistic must be 'min' or 'max', got {statistic!r}")
    agg = np.min if statistic == "min" else np.max
    perms, exact = _orderings(len(y), max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    rx, ry = _rank_rows(x), _rank_rows(y)
    null = agg(rx @ ry[perms].T, axis=0)
    observed = float(agg(rx @ ry))
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=1 / math.factorial(len(y)), extreme=float(null.max()))
    return PermutationTest(observed, float(p), float(p_min), len(perms), exact, x.shape[0])


# --- intervals ---------------------------------------------------------------------------------

def mean_interval(values: np.ndarray, *, level: float = 0.95) -> tuple[float, float]:
    r"""Student-t interval of a mean over independent units: :math:`\bar x \pm t_{n-1} s / \sqrt n`.

    With one unit the interval is infinite on both sides; with no spread it is the mean itself.

    >>> lo, hi = mean_interval(np.array([1.0, 2.0, 3.0]))
    >>> round(lo, 3), round(hi, 3)
    (-0.484, 4.484)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        raise ValueError(f"need a non-empty finite 1-D array, got shape {x.shape}")
    m = float(x.mean())
    if len(x) == 1:
        return -math.inf, math.inf
    if float(x.std(ddof=1)) == 0:
        return m, m
    low, high = _sp.ttest_1samp(x, 0.0).confidence_interval(confidence_level=level)
    return float(low), float(high)



def mean_intervals(values: np.ndarray, *, level: float = 0.95) -> np.ndarray:
    r""":func:`mean_interval` of each row of ``values`` (rows, n), as an array (rows, 2) of low and high.

    The same numbers as row by row (scipy's t-test reduces each row along the last axis as it
    reduces one array), from one t-test over the rows: a judge with many small groups of units
    (models and pairs of families, a few tasks each) spent most of its time in the per-call
    overhead of the t-test.

    >>> mean_intervals(np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])).round(3).tolist()
    [[-0.484, 4.484], [2.0, 2.0]]
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 2 or x.shape[1] == 0 or not np.isfinite(x).all():
        raise ValueError(f"need a finite 2-D array of at least one unit per row, got shape {x.shape}")
    if x.shape[1] == 1:
        return np.tile([-math.inf, math.inf], (len(x), 1))
    m = x.mean(1)
    out = np.stack([m, m], axis=1)
    spread = x.std(1, ddof=1) != 0
    if spread.any():
        low, high = _sp.ttest_1samp(x[spread], 0.0, axis=-1).confidence_interval(confidence_level=level)
        out[spread, 0], out[spread, 1] = low, high
    return out


# --- accuracy against chance: permuted gold labels -----------------------------------------------

def accuracy_permutation_test(predicted: np.ndarray, gold: np.ndarray, *, n_permutations: int = 10000,
                              seed: int = 0) -> PermutationTest:
    r"""One-sided test of "the accuracy is above chance", chance measured by permuting the gold labels.

    Null: the predictions carry no information about which answer is gold, so every assignment
    of the gold labels to the items is equally likely. The null accuracies
    :math:`\frac1n\sum_i [\hat y_i = y_{\pi(i)}]` over random permutations :math:`\pi` keep the
    predictions' and the labels' marginals (a model that always picks the first choice scores the
    share of first-choice golds under the null, not :math:`1/c`). Monte Carlo p-value
    :math:`(1 + \#\{\text{null} \ge \text{observed}\}) / (1 + n_\text{perm})`; ``p_min`` is the same
    for the highest accuracy any assignment can reach, :math:`\sum_v \min(a_v, b_v) / n` with
    :math:`a_v, b_v` the counts of label :math:`v` among the predictions and the golds.

    Parameters
    ----------
    predicted, gold : integer arrays of shape (n_items,)
        The chosen and the correct answer of each item (e.g. choice indices).

    Examples
    --------
    A model that always answers 0, on items whose gold is 0 six times in eight, scores 0.75 and
    is exactly at chance:

    >>> t = accuracy_permutation_test(np.zeros(8, int), np.array([0, 0, 0, 1, 0, 0, 0, 1]))
    >>> t.statistic, t.p_value
    (0.75, 1.0)
    """
    pred, y = np.asarray(predicted), np.asarray(gold)
    if pred.ndim != 1 or pred.shape != y.shape or len(y) == 0:
        raise ValueError(f"need predicted and gold of the same non-empty 1-D shape, got {pred.shape} and {y.shape}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    rng = np.random.default_rng(seed)
    null = (y[np.argsort(rng.random((n_permutations, len(y))), axis=1)] == pred).mean(1)
    observed = float((pred == y).mean())
    best = sum(min(int((pred == v).sum()), int((y == v).sum())) for v in np.union1d(pred, y)) / len(y)
    # p_min: the Monte Carlo share of assignments reaching the best accuracy (at most p, as best >= observed)
    p_min = monte_carlo_p(int((null >= best - tolerance()).sum()), n_permutations)
    p, p_min = tail_p(null, observed, exact=False, design_p_min=p_min)
    return PermutationTest(observed, p, p_min, n_permutations, False, 1)


def sign_flip_max_test(differences: np.ndarray, *, max_exact: int = 2 ** 16, n_permutations: int = 20000,
                       seed: int = 0) -> PermutationTest:
    r"""Sign-flip test of "the mean of *some* column is above 0", the maximum over columns taken inside every pattern.

    ``differences`` holds one row per independent unit (model) and one column per score on a
    common scale (e.g. correlations). Under chance each unit's row is as likely to have either
    sign, the *same* flip applying to all of a unit's columns; the statistic is the largest
    column mean, :math:`T = \max_j \bar d_j`, and the p-value is the share of the :math:`2^n`
    sign patterns (exact up to ``max_exact``, else Monte Carlo ``(1 + count) / (1 + n)``) whose
    :math:`T` is at least the observed one, so choosing the best column is accounted for.
    ``p_min`` is the share of patterns reaching the largest attainable :math:`T`,
    :math:`\max_j \overline{|d_j|}` (:math:`2^{-n}` when one column attains it).

    Examples
    --------
    One column above 0 in every unit, the other mixed: 1/32 with 5 units.

    >>> d = np.array([[0.8, 0.1], [0.7, -0.2], [0.9, 0.3], [0.6, -0.1], [0.8, 0.2]])
    >>> t = sign_flip_max_test(d)
    >>> round(t.statistic, 2), t.p_value, t.p_min
    (0.76, 0.03125, 0.03125)
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2 or 0 in d.shape or not np.isfinite(d).all():
        raise ValueError(f"need a finite (n_units, n_scores) array of paired differences, got shape {d.shape}")
    signs, exact = _sign_patterns(len(d), max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    null = (signs @ d / len(d)).max(1)
    observed = float(d.mean(0).max())
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=2.0 ** -len(d),
                      extreme=float(np.abs(d).mean(0).max()), scale=float(np.abs(d).max()))
    return PermutationTest(observed, float(p), float(p_min), len(null), exact, d.shape[1])



def two_group_permutation_test(values: np.ndarray, first: np.ndarray, *, alternative: str = "greater",
                               max_exact: int = 20000, n_permutations: int = 20000, seed: int = 0) -> PermutationTest:
    r"""Permutation test of "the first group's mean is above the second's", relabelling the units.

    The statistic is :math:`\bar x_A - \bar x_B`. Under chance the group labels are
    exchangeable between units, so every choice of which :math:`k` of the :math:`n` units form
    group A is equally likely; the p-value is the share of the :math:`\binom nk` relabellings
    (all of them when at most ``max_exact``, else ``n_permutations`` random ones,
    ``(1 + count) / (1 + n)``) whose statistic is at least the observed one (``"less"``: at
    most). ``p_min`` is the share of relabellings reaching the most extreme attainable
    statistic: :math:`1/\binom nk` with distinct values.

    Parameters
    ----------
    values : array of shape (n_units,)
    first : bool array of shape (n_units,)
        Membership of group A (at least one unit in each group).
    alternative : {"greater", "less"}

    Examples
    --------
    Two encoders below three decoders: the best ordering two-against-three allows, p = 1/10.

    >>> t = two_group_permutation_test(np.array([0.5, 0.6, 0.7, 0.0, 0.1]), np.array([1, 1, 1, 0, 0], bool))
    >>> round(t.statistic, 3), t.p_value, t.p_min
    (0.55, 0.1, 0.1)
    """
    x = np.asarray(values, dtype=float)
    a = np.asarray(first, dtype=bool)
    if x.ndim != 1 or a.shape != x.shape or not np.isfinite(x).all():
        raise ValueError(f"need finite values (n_units,) and a group mask of the same shape, got {x.shape}, {a.shape}")
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    n, k = len(x), int(a.sum())
    if not 0 < k < n:
        raise ValueError(f"each group needs at least one unit, got {k} of {n} in the first")
    if math.comb(n, k) <= max_exact:
        masks = np.zeros((math.comb(n, k), n), dtype=bool)
        for row, members in enumerate(itertools.combinations(range(n), k)):
            masks[row, list(members)] = True
        exact = True
    else:
        masks = np.argsort(np.random.default_rng(seed).random((n_permutations, n)), axis=1) < k
        exact = False
    sign = 1.0 if alternative == "greater" else -1.0
    null = sign * (masks @ x / k - (~masks) @ x / (n - k))
    observed = sign * (x[a].mean() - x[~a].mean())
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=1 / math.comb(n, k), extreme=float(null.max()),
                      scale=float(np.abs(x).max()))
    return PermutationTest(float(sign * observed), float(p), float(p_min), len(null), exact, 1)



# --- many tests at once ---------------------------------------------------------------------------

def holm(p_values: Sequence[float]) -> np.ndarray:
    r"""Holm's step-down adjustment of ``p_values`` (family-wise error over them).

    With the p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1)\, p_{(j)})`; rejecting every
    :math:`\tilde p \le \alpha` keeps the chance of any false rejection at most :math:`\alpha`
    under any dependence between the tests (Holm, Scand. J. Statist. 6 (1979) 65-70).

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([]).tolist()
    []
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p))))) if len(p) else p
    out = np.empty_like(p)
    out[order] = adjusted
    return out



def intersection_union_by_model(table: pd.DataFrame, n_parts: int, *, model: str = "model",
                                p: str = "p") -> pd.DataFrame:
    """``table`` (one row per model and part of a claim, with its ``p``) with ``p (all)``, the
    model's intersection-union p (the largest of its parts'; 1 where it lacks one of the
    ``n_parts``), and ``p (all, Holm)``, that adjusted over the models by :func:`holm`.

    >>> t = pd.DataFrame({"model": ["a", "a", "b"], "p": [0.01, 0.02, 0.001]})
    >>> intersection_union_by_model(t, 2)[["p (all)", "p (all, Holm)"]].to_numpy().tolist()
    [[0.02, 0.04], [0.02, 0.04], [1.0, 1.0]]
    """
    if table.empty:
        return table.assign(**{"p (all)": [], "p (all, Holm)": []})
    worst = table.groupby(model, sort=False)[p].agg(lambda v: v.max() if len(v) == n_parts else 1.0)
    adjusted = pd.Series(holm(worst.to_numpy()), index=worst.index)
    return table.assign(**{"p (all)": table[model].map(worst), "p (all, Holm)": table[model].map(adjusted)})

# --- crossed designs: seeds x items ---------------------------------------------------------------

def crossed_mean_test(diff: np.ndarray) -> tuple[float, float, float]:
    r"""The mean of a (seeds x items) table of paired differences, its variance and degrees of freedom.

    The seeds re-draw the training (initialisation, dropout, validation split) and the test items
    are a sample of the task: two crossed random factors. With :math:`x_{si} = \mu + a_s + b_i +
    e_{si}` (:math:`S` seeds, :math:`n` items),
    :math:`\operatorname{Var}(\bar x) = \sigma_a^2/S + \sigma_b^2/n + \sigma_e^2/(Sn)`, estimated by
    the two-way ANOVA mean squares as
    :math:`V = (\mathrm{MS}_\text{seed} + \mathrm{MS}_\text{item} - \mathrm{MS}_\text{error})/(Sn)`,
    floored at :math:`\mathrm{MS}_\text{error}/(Sn)` (for :math:`S = 1`, the items' variance over
    :math:`n`), with Welch-Satterthwaite degrees of freedom
    :math:`V^2 / \sum_k (c_k \mathrm{MS}_k)^2/\nu_k`. A test of :math:`\mu > 0` from them is
    :math:`t = \bar x / \sqrt V` against Student's t (simulated at the Cayley chapter's design in
    ``tests/test_fusion_verdicts.py``: at most 5% false positives with the training noise of the
    seeds far above the items').

    Examples
    --------
    >>> x = np.array([[1.0, 0, 1, 1], [1, 1, 0, 1]])
    >>> m, v, df = crossed_mean_test(x)
    >>> m, round(v, 4), df   # MS_seed = 0, MS_item = 1/6, MS_error = 1/3: floored at (1/3) / 8, 3 df
    (0.75, 0.0417, 3.0)
    """
    x = np.asarray(diff, dtype=float)
    parts = crossed_components(x)
    return float(x.mean()), float(sum(v for v, _ in parts)), satterthwaite_df(parts)


def crossed_components(x: np.ndarray, scale: float = 1.0) -> list[tuple[float, int]]:
    r"""The terms of the variance of a (seeds x items) mean, ``(c_k MS_k, df_k)``: the ANOVA
    estimate :math:`(\mathrm{MS}_\text{seed} + \mathrm{MS}_\text{item} - \mathrm{MS}_\text{error})/(Sn)`,
    floored at :math:`\mathrm{MS}_\text{error}/(Sn)` when the seed and item terms are negligible."""
    s, n = x.shape
    if s == 1:
        return [(scale * x.var(ddof=1) / n, n - 1)] if n > 1 else []
    ms_item = s * x.mean(0).var(ddof=1)
    ms_seed = n * x.mean(1).var(ddof=1)
    resid = x - x.mean(0) - x.mean(1)[:, None] + x.mean()
    ms_err = float((resid ** 2).sum()) / ((s - 1) * (n - 1))
    if ms_seed + ms_item - ms_err < ms_err:
        return [(scale * ms_err / (s * n), (s - 1) * (n - 1))]
    return [(scale * ms_item / (s * n), n - 1), (scale * ms_seed / (s * n), s - 1),
            (-scale * ms_err / (s * n), (s - 1) * (n - 1))]


def satterthwaite_df(parts: list[tuple[float, int]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance terms ``(c_k MS_k, df_k)``."""
    var = sum(v for v, _ in parts)
    den = sum(v * v / df for v, df in parts if df > 0)
    return float(var * var / den) if den > 0 else math.inf


def crossed_t_test(tables: Sequence[np.ndarray], *, level: float = 0.95) -> dict:
    r"""One-sided t-test of :math:`\mu > 0` for the mean over several independent (seeds x items)
    tables of differences (a model's tasks), each a crossed design (:func:`crossed_mean_test`).

    The effect is :math:`\bar d = \frac1T\sum_t \bar x_t` with variance :math:`\sum_t V_t/T^2`
    and Satterthwaite degrees of freedom pooled over the tables' components.

    Returns
    -------
    dict with ``mean, se, df, low, high`` (the two-sided ``level`` t-interval) and ``p``.

    Examples
    --------
    >>> r = crossed_t_test([np.array([[1.0, 0, 1, 1]]), np.array([[1.0, 1, 0, 1]])])
    >>> r["mean"], round(r["se"], 4), r["df"]   # two one-seed tables of 4 items: se = sqrt(2 * 0.25/4 / 4)
    (0.75, 0.1768, 6.0)
    """
    t = len(tables)
    if t == 0:
        raise ValueError("need at least one table")
    mean = sum(float(np.mean(m)) for m in tables) / t
    comps = [c for m in tables for c in crossed_components(np.asarray(m, dtype=float), scale=1 / t ** 2)]
    var, df = sum(v for v, _ in comps), satterthwaite_df(comps)
    se = math.sqrt(var) if var > 0 else 0.0
    p = float(_sp.t.sf(mean / se, df)) if se > 0 else (0.0 if mean > 0 else 1.0)
    q = float(_sp.t.ppf(0.5 + level / 2, df)) if math.isfinite(df) else float(_sp.norm.ppf(0.5 + level / 2))
    return {"mean": mean, "se": se, "df": df, "low": mean - q * se, "high": mean + q * se, "p": p}
