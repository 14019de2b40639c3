"""Small statistics that chapters use to turn tables of scores into verdicts.

Every verdict on a comparison carries its strength: the probability of a result at least as
strong as the observed one under chance, from an exact (or Monte Carlo) permutation of the
labels that the claim is about, with the maximum over all the scores tried taken inside the
permutation so that the number of comparisons is accounted for. The verdict word follows from
that probability (:func:`verdict_word`): where the panel is too small for any result to reach
the significance level, the honest word is "not testable".
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lrd.report import OldVerdict as Verdict
from lrd.verdicts.stats import PermutationTest

ALPHA = 0.05


def perfectly_separated(values: np.ndarray, groups: np.ndarray) -> bool:
    """True when two groups' values do not overlap (every value of one below the other's).

    Raises
    ------
    ValueError
        Unless ``groups`` holds exactly two distinct labels.
    """
    values, groups = np.asarray(values, dtype=float), np.asarray(groups)
    labels = np.unique(groups)
    if len(labels) != 2:
        raise ValueError(f"need exactly two groups, got {labels.tolist()}")
    a, b = values[groups == labels[0]], values[groups == labels[1]]
    return bool(a.max() < b.min() or b.max() < a.min())


def separation_table(scores: pd.DataFrame, measures: list[str], *, group: str = "kind",
                     within: str = "task") -> pd.DataFrame:
    """For each measure and each value of ``within``: are the two ``group``s separated?

    Returns a boolean table (measures x values of ``within``) with a last column counting
    the ``within`` values on which the measure separates the groups.
    """
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
    order = np.argsort(rng.random((n_permutations, n)), axis=1)
    return order < k, False


def _separated_counts(values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Tasks on which each grouping separates each score: values (S, T, M), masks (G, M) -> (G, S)."""
    a = masks[:, None, None, :]
    v = values[None]
    a_max, a_min = np.where(a, v, -np.inf).max(-1), np.where(a, v, np.inf).min(-1)
    b_max, b_min = np.where(~a, v, -np.inf).max(-1), np.where(~a, v, np.inf).min(-1)
    return ((a_max < b_min) | (b_max < a_min)).sum(-1)


def separation_test(scores: pd.DataFrame, measures: list[str], *, group: str = "kind", within: str = "task",
                    unit: str = "model", max_exact: int = 20000, n_permutations: int = 10000,
                    seed: int = 0) -> PermutationTest:
    r"""Permutation test of "some measure separates the two groups on many of the ``within`` values".

    The statistic is the largest number of ``within`` values (tasks) on which one measure puts
    every unit (model) of one group below every unit of the other,

    .. math:: S = \max_m \#\{t : \text{measure } m \text{ separates the groups on task } t\}.

    Under chance the group labels are exchangeable between units: every way of choosing which
    :math:`k` of the :math:`n` units form the first group is equally likely. The p-value is the
    share of those relabellings (all :math:`\binom{n}{k}` when at most ``max_exact``, else
    ``n_permutations`` random ones) whose statistic is at least the observed one; taking the
    maximum over measures inside every relabelling accounts for the number of measures tried,
    and relabelling units (not rows) keeps the dependence between tasks measured on the same
    models.

    Parameters
    ----------
    scores : DataFrame
        One row per unit and ``within`` value, with columns ``unit``, ``group`` (two labels),
        ``within`` and the ``measures``. Every unit must appear once in each ``within`` value.

    Returns
    -------
    PermutationTest

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
    if not np.isfinite(scores[measures].to_numpy(dtype=float)).all():
        raise ValueError("scores contain non-finite values; a separation test needs finite scores")
    pivot = scores.pivot_table(index=unit, columns=within, values=measures, aggfunc="first")
    if pivot.isna().any().any() or pivot.shape[1] != len(measures) * scores[within].nunique():
        raise ValueError(f"every {unit} needs one row per {within}: the table is incomplete")
    units = pivot.index.tolist()
    labels = scores.groupby(unit)[group].first().reindex(units)
    kinds = labels.unique()
    if len(kinds) != 2:
        raise ValueError(f"need exactly two groups in {group!r}, got {sorted(map(str, kinds))}")
    n_within = scores[within].nunique()
    values = pivot[measures].to_numpy(dtype=float).T.reshape(len(measures), n_within, len(units))
    first = (labels == kinds[0]).to_numpy()
    k, n = int(first.sum()), len(units)
    masks, exact = _groupings(n, k, max_exact=max_exact, n_permutations=n_permutations, seed=seed)
    observed = int(_separated_counts(values, first[None]).max())
    null = _separated_counts(values, masks).max(axis=1)
    if exact:
        p = float((null >= observed).mean())
        p_min = (2 if 2 * k == n else 1) / math.comb(n, k)
    else:
        p = float((1 + (null >= observed).sum()) / (1 + len(null)))
        p_min = max((2 if 2 * k == n else 1) / math.comb(n, k), 1 / (1 + len(null)))
    return PermutationTest(observed, p, p_min, len(masks), exact, len(measures))


def within_group_permutation_test(scores: pd.DataFrame, measures: list[str], *, factor: str = "task",
                                  block: str = "model", n_permutations: int = 5000, seed: int = 0) -> PermutationTest:
    r"""Permutation test of "``factor`` explains a share of the variance" (largest :math:`\eta^2`).

    The statistic is :math:`\max_m \eta^2_{\text{factor}}(m)` over the measures. Under chance
    the ``factor`` labels are exchangeable within each ``block`` (each model's scores are
    shuffled between its tasks), which keeps the block effect intact. The p-value is
    ``(1 + count) / (1 + n_permutations)`` over random within-block shuffles; the maximum over
    measures inside each shuffle accounts for the number of measures.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "s": [0., 1, 0, 1]})
    >>> t = within_group_permutation_test(df, ["s"], n_permutations=200)
    >>> t.statistic, t.p_min  # 2! x 2! orderings: no result can have p below 1/4
    (1.0, 0.25)
    """
    y = scores[measures].to_numpy(dtype=float)  # (R, M)
    if not np.isfinite(y).all():
        raise ValueError("scores contain non-finite values; the test needs finite scores")
    codes = pd.factorize(scores[factor])[0]
    blocks = [np.flatnonzero(scores[block].to_numpy() == b) for b in pd.unique(scores[block])]
    rng = np.random.default_rng(seed)
    perms = np.tile(np.arange(len(codes)), (n_permutations + 1, 1))  # row 0: the observed labels
    for idx in blocks:
        perms[1:, idx] = idx[np.argsort(rng.random((n_permutations, len(idx))), axis=1)]
    onehot = np.eye(codes.max() + 1)[codes[perms]]  # (P, R, F)
    counts = onehot.sum(1)  # (P, F)
    means = np.einsum("prf,rm->pfm", onehot, y) / np.maximum(counts, 1)[..., None]
    centred = y - y.mean(0)
    total = (centred ** 2).sum(0)
    between = np.einsum("pf,pfm->pm", counts, (means - y.mean(0)) ** 2)
    eta = np.where(total > 0, between / np.where(total > 0, total, 1), 0.0).max(1)  # (P,)
    observed, null = float(eta[0]), eta[1:]
    n_distinct = math.prod(math.factorial(len(idx)) for idx in blocks)
    p = float((1 + (null >= observed - 1e-12).sum()) / (1 + n_permutations))
    return PermutationTest(round(observed, 6), p, max(1 / n_distinct, 1 / (1 + n_permutations)), n_permutations,
                           False, len(measures))


def variance_explained(scores: pd.DataFrame, measure: str, factor: str) -> float:
    r"""Share of the variance of ``measure`` explained by ``factor`` (eta squared).

    .. math:: \eta^2 = \frac{\sum_g n_g (\bar y_g - \bar y)^2}{\sum_i (y_i - \bar y)^2}

    1 when the factor determines the value, 0 when every group has the same mean.
    """
    y = scores[measure].astype(float)
    total = ((y - y.mean()) ** 2).sum()
    if total == 0:
        return 0.0
    means = y.groupby(scores[factor]).transform("mean")
    return float(((means - y.mean()) ** 2).sum() / total)


def verdict_word(p_value: float, p_min: float, *, complete: bool = True, alpha: float = ALPHA) -> str:
    """The verdict word a comparison earns from its chance probability.

    "not testable" when even the strongest possible result would have ``p_min > alpha`` (the
    design cannot tell the claim from chance); else "not reproduced" when ``p_value > alpha``;
    else "reproduced", or "partly reproduced" when the result holds only in part
    (``complete=False``).

    >>> verdict_word(0.25, 0.25), verdict_word(0.2, 0.01), verdict_word(0.01, 0.01, complete=False)
    ('not testable', 'not reproduced', 'partly reproduced')
    """
    if not (0 <= p_min <= 1 and 0 <= p_value <= 1):
        raise ValueError(f"p-values must lie in [0, 1], got p={p_value}, p_min={p_min}")
    if p_min > alpha:
        return "not testable"
    if p_value > alpha:
        return "not reproduced"
    return "reproduced" if complete else "partly reproduced"


def _p(test: PermutationTest) -> str:
    return f"p = {test.p_value:.2g} under chance"


def architecture_verdicts(scores: pd.DataFrame, lrd_scores: list[str], final_scores: list[str], *,
                          group: str = "kind", within: str = "task", unit: str = "model",
                          alpha: float = ALPHA) -> tuple[Verdict, Verdict]:
    """Verdicts on "LRD shows architectural differences not apparent from the final layer".

    The first asks whether some LRD score separates encoders from decoders on the tasks beyond
    chance (:func:`separation_test` over ``lrd_scores``): "reproduced" when one score separates
    them on every task with ``p <= alpha``, "partly reproduced" on some tasks with
    ``p <= alpha``. The second, asked only when the first holds, whether final-layer statistics
    separate them less often: "not reproduced" when one separates them on as many tasks,
    "partly reproduced" when they separate them beyond chance but on fewer tasks, "reproduced"
    when they do not separate them beyond chance. On a panel too small for any result to reach
    ``alpha`` both are "not testable".
    """
    groups = scores.groupby(unit)[group].first()
    counts = groups.value_counts()
    if len(counts) != 2:
        missing = Verdict("not testable", "the panel needs at least one encoder and one decoder")
        return missing, missing
    n_tasks = scores[within].nunique()
    panel = " and ".join(f"{n} {g}{'s' if n != 1 else ''}" for g, n in counts.sort_index(ascending=False).items())
    table = separation_table(scores, lrd_scores + final_scores, group=group, within=within)["separated on"]
    top, top_n = table[lrd_scores].idxmax(), int(table[lrd_scores].max())
    ftop, ftop_n = table[final_scores].idxmax(), int(table[final_scores].max())
    lrd = separation_test(scores, lrd_scores, group=group, within=within, unit=unit)
    word = verdict_word(lrd.p_value, lrd.p_min, complete=top_n == n_tasks, alpha=alpha)
    observed = f"the best LRD score ({top}) separates encoders from decoders on {top_n} of {n_tasks} tasks"
    if word == "not testable":
        why = (f"{observed}, but with {panel} any result has p >= {lrd.p_min:.2g} under chance "
               f"(alpha = {alpha:g})")
        return (Verdict(word, why, lrd.p_value, lrd.describe()),
                Verdict(word, "the architectural difference itself is not testable on this panel"))
    arch = Verdict(word, f"{observed}, {_p(lrd)}", lrd.p_value, lrd.describe())
    if word == "not reproduced":
        return arch, Verdict("not testable", "no LRD score separates the architectures beyond chance")
    final = separation_test(scores, final_scores, group=group, within=within, unit=unit)
    seen = f"a final-layer statistic ({ftop}) separates them on {ftop_n} of {n_tasks} tasks, {_p(final)}"
    if ftop_n >= top_n:
        final_word = "not reproduced"
    else:
        final_word = "partly reproduced" if final.p_value <= alpha else "reproduced"
    return arch, Verdict(final_word, f"{seen}; the best LRD score on {top_n}", final.p_value, final.describe())


def task_verdict(scores: pd.DataFrame, measures: list[str], *, factor: str = "task", block: str = "model",
                 alpha: float = ALPHA, n_permutations: int = 5000) -> Verdict:
    """Verdict on "task-level differences": does the task explain variance beyond chance?

    :func:`within_group_permutation_test` of the largest task share of variance (eta squared)
    over ``measures``, task labels shuffled within each model. Fewer than two tasks: "not
    testable".
    """
    n_tasks = scores[factor].nunique()
    if n_tasks < 2:
        return Verdict("not testable", f"fewer than two tasks of equal sample size ({n_tasks})")
    test = within_group_permutation_test(scores, measures, factor=factor, block=block,
                                         n_permutations=n_permutations)
    shares = {m: variance_explained(scores, m, factor) for m in measures}
    top = max(shares, key=shares.get)
    model_share = variance_explained(scores, top, block)
    word = verdict_word(test.p_value, test.p_min, alpha=alpha)
    evidence = (f"the task explains {shares[top]:.0%} of the variance of {top} (the model {model_share:.0%}), "
                f"{_p(test)}")
    if word == "not testable":
        evidence += f"; no result on {n_tasks} tasks can have p below {test.p_min:.2g}"
    return Verdict(word, evidence, test.p_value, test.describe())
