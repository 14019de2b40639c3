r"""Two groups of units, and a factor within blocks: relabelling the groups (the mean difference, the
separation of two kinds on several tasks) and shuffling a factor within each block (its share of
variance)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from lrd.verdicts.stats.ranks import all_orderings
from lrd.verdicts.stats.tails import PermutationTest, tail_p

__all__ = ["relabellings", "two_group_p_min", "smallest_two_group_panel", "two_group_permutation_test",
           "perfectly_separated", "separation_table", "score_grid", "separation_counts", "separation_test",
           "separation_tests", "variance_explained", "partial_eta_squared", "within_block_permutation_test"]


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


def _groupings(n: int, k: int, *, max_exact: int, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """Boolean masks (G, n) of the size-``k`` subsets of ``n`` units: all of them, or a random draw."""
    if math.comb(n, k) <= max_exact:
        masks = np.zeros((math.comb(n, k), n), dtype=bool)
        for row, members in enumerate(itertools.combinations(range(n), k)):
            masks[row, list(members)] = True
        return masks, True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n_permutations, n)), axis=1) < k, False


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
    masks, exact = _groupings(n, k, max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    sign = 1.0 if alternative == "greater" else -1.0
    null = sign * (masks @ x / k - (~masks) @ x / (n - k))
    observed = sign * (x[a].mean() - x[~a].mean())
    p, p_min = tail_p(null, observed, exact=exact, design_p_min=1 / math.comb(n, k), extreme=float(null.max()),
                      scale=float(np.abs(x).max()))
    return PermutationTest(float(sign * observed), float(p), float(p_min), len(null), exact, 1)


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
        orders = all_orderings(n_levels)
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
