r"""Paired differences, one per independent unit: sign-flip tests (one score, the best of several, the
smallest p over several), the equivalence test, the design's smallest p and the test's power."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from lrd.verdicts.stats.tails import PermutationTest, tail_p, tolerance

__all__ = ["sign_flip_test", "sign_flip_min_p_test", "sign_flip_max_test", "equivalence_sign_flip_test",
           "sign_flip_power", "sign_flip_p_min", "models_for_sign_flip"]


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
    # sign_flip_test(row, n_permutations=2000, seed=seed) of every simulated row at once: exact over
    # every pattern up to its max_exact (2^16), else the same 2000 random patterns for every row
    exact = 2 ** n_units <= 2 ** 16
    signs = _all_signs(n_units) if exact else _random_signs(n_units, 2000, seed)
    observed = d.mean(1, keepdims=True)
    tol = tolerance(np.abs(d).max(1, keepdims=True))  # one per simulated panel
    rows = max(1, 2 ** 22 // len(signs))  # panels per block: at most 4M null statistics in memory
    count = np.concatenate([(d[i:i + rows] @ signs.T / n_units >= observed[i:i + rows] - tol[i:i + rows]).sum(1)
                            for i in range(0, len(d), rows)])
    if exact:
        p = count / len(signs)
    else:
        p_min = np.maximum(2.0 ** -(d != 0).sum(1), 1 / (1 + len(signs)))
        p = np.maximum((1 + count) / (1 + len(signs)), p_min)
    return float((p <= alpha + tolerance()).mean())


def sign_flip_p_min(n_units: int) -> float:
    """Smallest p-value of an exact one-sided sign-flip test over ``n_units`` (:math:`2^{-n}`)."""
    return 2.0 ** -n_units


def models_for_sign_flip(alpha: float = 0.05) -> int:
    """Fewest units an exact one-sided sign-flip test needs to reach ``alpha`` (5 for 0.05)."""
    return math.ceil(math.log2(1 / alpha))
