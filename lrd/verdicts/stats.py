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

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sp

__all__ = ["PermutationTest", "sign_flip_test", "equivalence_sign_flip_test", "spearman_permutation_test",
           "sign_flip_max_test", "mean_interval", "sign_flip_p_min", "models_for_sign_flip", "two_group_p_min",
           "smallest_two_group_panel", "two_group_permutation_test"]

_TOL = 1e-12


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

def _sign_patterns(n: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if 2 ** n <= max_exact:
        return 1 - 2 * np.array(list(itertools.product((0, 1), repeat=n)), dtype=float), True
    rng = np.random.default_rng(seed)
    return np.where(rng.random((n_permutations, n)) < 0.5, -1.0, 1.0), False


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
    tol = _TOL * max(1.0, float(np.abs(d).max()))
    count = int((null >= observed - tol).sum())
    top = int((null >= np.abs(d).mean() - tol).sum())
    if exact:
        p, p_min = count / len(null), top / len(null)
    else:
        p, p_min = (1 + count) / (1 + len(null)), max(2.0 ** -int((d != 0).sum()), 1 / (1 + len(null)))
    return PermutationTest(observed, float(p), float(p_min), len(null), exact, 1)


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
    tol = _TOL * max(1.0, float(np.abs(d).max()))
    count = int((null >= observed - tol).sum())
    top = int((null >= np.abs(d).mean(0).max() - tol).sum())
    if exact:
        p, p_min = count / len(null), top / len(null)
    else:
        p_min = max(2.0 ** -len(d), 1 / (1 + len(null)))
        p = max((1 + count) / (1 + len(null)), p_min)
    return PermutationTest(observed, float(p), float(p_min), len(null), exact, d.shape[1])


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


def sign_flip_p_min(n_units: int) -> float:
    """Smallest p-value of an exact one-sided sign-flip test over ``n_units`` (:math:`2^{-n}`)."""
    return 2.0 ** -n_units


def models_for_sign_flip(alpha: float = 0.05) -> int:
    """Fewest units an exact one-sided sign-flip test needs to reach ``alpha`` (5 for 0.05)."""
    return math.ceil(math.log2(1 / alpha))


# --- two groups: relabelling the kinds ---------------------------------------------------------

def two_group_p_min(n_first: int, n_second: int) -> float:
    """Smallest p-value of a two-group relabelling test (``1 / C(n, k)``, doubled for equal groups)."""
    n = n_first + n_second
    return (2 if n_first == n_second else 1) / math.comb(n, n_first)


def smallest_two_group_panel(alpha: float = 0.05) -> tuple[int, int]:
    """The smallest balanced-as-possible ``(k, n - k)`` panel whose two-group test can reach ``alpha``."""
    for n in range(2, 64):
        k = n // 2
        if two_group_p_min(k, n - k) <= alpha:
            return k, n - k
    raise ValueError(f"no panel of under 64 units reaches alpha={alpha}")


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
    tol = _TOL * max(1.0, float(np.abs(x).max()))
    count = int((null >= observed - tol).sum())
    top = int((null >= null.max() - tol).sum())
    if exact:
        p, p_min = count / len(null), top / len(null)
    else:
        p_min = max(1 / math.comb(n, k), 1 / (1 + len(null)))
        p = max((1 + count) / (1 + len(null)), p_min)
    return PermutationTest(float(sign * observed), float(p), float(p_min), len(null), exact, 1)


# --- rank correlation: orderings ---------------------------------------------------------------

def _rank_rows(x: np.ndarray) -> np.ndarray:
    r = _sp.rankdata(x, axis=-1)
    r = r - r.mean(-1, keepdims=True)
    norm = np.sqrt((r ** 2).sum(-1, keepdims=True))
    return np.divide(r, norm, out=np.zeros_like(r), where=norm > 0)


def _orderings(n: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if math.factorial(n) <= max_exact:
        return np.array(list(itertools.permutations(range(n)))), True
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
    count = int((null >= observed - _TOL).sum())
    top = int((null >= null.max() - _TOL).sum())
    if exact:
        p, p_min = count / len(perms), top / len(perms)
    else:
        p, p_min = (1 + count) / (1 + len(perms)), max(1 / math.factorial(len(y)), 1 / (1 + len(perms)))
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
    se = float(x.std(ddof=1)) / math.sqrt(len(x))
    if se == 0:
        return m, m
    half = float(_sp.t.ppf((1 + level) / 2, len(x) - 1)) * se
    return m - half, m + half
