"""Label-free model selection: do model-level scores rank models like their downstream score?

For a panel of :math:`n` models with a label-free score :math:`s_m` and a downstream score
:math:`y_m`, the agreement is Spearman's rank correlation

.. math:: \\rho(s, y) = \\operatorname{corr}(\\operatorname{rank}(s), \\operatorname{rank}(y)).

Under chance (the score says nothing about the downstream score) every assignment of the
downstream scores to the models is equally likely, so the exact p-value of a positive
correlation is the share of the :math:`n!` permutations of :math:`y` whose correlation is at
least the observed one. With :math:`n` models no result can have a p-value below
:math:`1/n!` (:math:`1/120` for five models, :math:`1/6` for three): three models can never
show a correlation beyond chance at the 5% level.

References
----------
Jiang, Yang, Tam, arXiv:2605.12714 (2026), abstract and Sec. 6 (model selection by the
model-level scores d_{0,L}, mean NRS and mean GFMI).
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from lrd.report import OldVerdict as Verdict
from lrd.verdicts.record import ALPHA
from lrd.verdicts.stats import spearman_permutation_test

__all__ = ["spearman_permutation_test", "selection_table", "selection_verdict"]


def verdict_word(p_value: float, p_min: float, *, complete: bool = True, alpha: float = ALPHA) -> str:
    """The old verdict word of :func:`selection_verdict` (moved from the deleted ``lrd.stats``; goes
    when the chapter's claims are judged by :mod:`lrd.verdicts`).

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

def selection_table(scores: pd.DataFrame, downstream: pd.Series, measures: Sequence[str]) -> pd.DataFrame:
    """Spearman correlation of each model-level measure with the downstream score, with its exact p-value.

    Parameters
    ----------
    scores : DataFrame indexed by model, one column per measure
    downstream : Series indexed by model
    measures : the columns to correlate

    Returns
    -------
    DataFrame indexed by measure: ``rho``, ``p`` (one-sided, exact), ``p_min``, ``n`` (models).
    """
    common = [m for m in scores.index if m in downstream.index and np.isfinite(downstream[m])]
    rows = {}
    for name in measures:
        x = scores.loc[common, name].astype(float)
        ok = np.isfinite(x.to_numpy())
        if ok.sum() < 2:
            rows[name] = {"rho": np.nan, "p": np.nan, "p_min": np.nan, "n": int(ok.sum())}
            continue
        t = spearman_permutation_test(x.to_numpy()[ok], downstream[common].to_numpy(dtype=float)[ok])
        rows[name] = {"rho": t.statistic, "p": t.p_value, "p_min": t.p_min, "n": int(ok.sum())}
    return pd.DataFrame(rows).T.astype({"n": int})


def selection_verdict(scores: pd.DataFrame, downstream: pd.Series, measures: Sequence[str], *, strongest: str,
                      alpha: float = ALPHA, panel: str = "models") -> Verdict:
    """Verdict on "all the ``measures`` correlate positively with the downstream score, ``strongest`` the most".

    The joint test takes the smallest correlation over the measures inside every permutation
    (:func:`spearman_permutation_test` with ``statistic="min"``). "not testable" when no result
    on this many models can reach ``alpha``; "reproduced" when every measure correlates
    positively beyond chance and ``strongest`` has the largest correlation; "partly reproduced"
    when they all do but another measure is stronger.
    """
    common = [m for m in scores.index if m in downstream.index]
    x = scores.loc[common, list(measures)].to_numpy(dtype=float).T
    y = downstream[common].to_numpy(dtype=float)
    keep = np.isfinite(x).all(0) & np.isfinite(y)
    if keep.sum() < 2:
        return Verdict("not testable", f"fewer than two {panel} with every score and a downstream score")
    test = spearman_permutation_test(x[:, keep], y[keep], statistic="min")
    table = selection_table(scores.loc[np.array(common)[keep]], downstream, measures)
    top = table["rho"].astype(float).idxmax()
    rhos = ", ".join(f"{m} {r:+.2f}" for m, r in table["rho"].items())
    n = int(keep.sum())
    evidence = (f"Spearman over {n} {panel}: {rhos}; smallest {test.statistic:+.2f}, exact p = {test.p_value:.2g} "
                f"under chance; strongest {top}")
    word = verdict_word(test.p_value, test.p_min, complete=top == strongest, alpha=alpha)
    if word == "not testable":
        evidence += f" (with {n} {panel} no result can have p below {test.p_min:.2g})"
    kind = "exact" if test.exact else "Monte Carlo"
    return Verdict(word, evidence, test.p_value, f"{kind} permutation test over {test.n_permutations} orderings of "
                   f"the downstream scores, minimum correlation over {test.n_comparisons} scores")
