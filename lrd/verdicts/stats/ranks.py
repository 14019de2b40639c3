r"""Orderings of the units: average ranks, the rank correlation's permutation test, and the accuracy
against chance by permuted gold labels."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from lrd.verdicts.stats.tails import PermutationTest, monte_carlo_p, tail_p, tolerance

__all__ = ["average_ranks", "rank_rows", "all_orderings", "permutation_p_min", "spearman_permutation_test",
           "accuracy_permutation_test"]


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


def rank_rows(x: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis (:func:`average_ranks`), centred and scaled to unit length
    per row (a constant row stays 0): the dot product of two such rows is their Spearman correlation.

    >>> round(float(rank_rows(np.array([1.0, 2, 3])) @ rank_rows(np.array([10.0, 30, 20]))), 12)
    0.5
    """
    r = average_ranks(x)
    r = r - r.mean(-1, keepdims=True)
    norm = np.sqrt((r ** 2).sum(-1, keepdims=True))
    return np.divide(r, norm, out=np.zeros_like(r), where=norm > 0)


@functools.lru_cache(maxsize=16)
def all_orderings(n: int) -> np.ndarray:
    """Every ordering of ``0..n-1`` in lexicographic order, shape (n!, n), read-only (computed once
    per ``n`` and process: a verdict's exact permutation test and each of the appendix's
    simulated panels enumerate the same 8! = 40320 orderings).

    >>> all_orderings(3).tolist()
    [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    """
    out = np.fromiter(itertools.chain.from_iterable(itertools.permutations(range(n))), dtype=np.intp,
                      count=math.factorial(n) * n).reshape(-1, n)
    out.flags.writeable = False
    return out


def _orderings(n: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if math.factorial(n) <= max_exact:
        return all_orderings(n), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n_permutations, n)), axis=1), False


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
    rx, ry = rank_rows(x), rank_rows(y)
    null = agg(rx @ ry[perms].T, axis=0)
    observed = float(agg(rx @ ry))
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=1 / math.factorial(len(y)), extreme=float(null.max()))
    return PermutationTest(observed, float(p), float(p_min), len(perms), exact, x.shape[0])


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
