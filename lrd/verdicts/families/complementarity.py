"""The judge of ``lrd.complementarity``: are the three families' per-layer curves not strongly correlated?
(Jiang, Yang, Tam 2026, Sec. 1: "complementary rather than redundant".)

The families' curves, their correlations across layers and their reliability over the texts,
the per-model tests, and :func:`complementarity_result` (numbers only), which
:func:`complementarity_verdict` writes into a verdict through :mod:`lrd.verdicts.wording.families`.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from lrd.verdicts.families.measures import COMPLEMENTARITY_MARGIN, FAMILY_CURVES, UNDEFINED_RHO
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import (average_ranks, equivalence_sign_flip_test, intersection_union_by_model,
                                mean_interval, mean_intervals, sign_flip_min_p_test)
from lrd.verdicts.wording import families as wording

__all__ = ["spearman_rows", "family_pairs", "curve_reliability", "family_correlations", "redundancy_table",
           "judged_rho", "complementarity_model_tests", "complementarity_result", "complementarity_verdict"]


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of ``a`` with the same row of ``b`` (NaN for a constant row)."""
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(-1, keepdims=True), rb - rb.mean(-1, keepdims=True)
    norm = np.sqrt((ra ** 2).sum(-1) * (rb ** 2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (ra * rb).sum(-1) / np.where(norm > 0, norm, 1), np.nan)


def family_pairs(families: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of families, in order.

    >>> family_pairs(["Frenet", "NRS", "GFMI"])
    [('Frenet', 'NRS'), ('Frenet', 'GFMI'), ('NRS', 'GFMI')]
    """
    return list(itertools.combinations(families, 2))


def _family_curves(part: pd.DataFrame, curves: dict[str, str], where: str) -> dict[str, np.ndarray]:
    """One model's (and task's, and group's) family curves on the transitions l -> l+1."""
    series = {m: g.sort_values("layer")["value"].to_numpy(dtype=float) for m, g in part.groupby("measurement")}
    n = min(len(v) for v in series.values())
    values = {f: (series[m][:-1] + series[m][1:]) / 2 if len(series[m]) == n + 1 else series[m]
              for f, m in curves.items()}
    if any(len(v) != n for v in values.values()):
        raise ValueError(f"{where}: the curves {curves} do not share the transitions l -> l+1")
    if n < 3:
        raise ValueError(f"{where}: {n} transitions; a correlation across layers needs at least 3")
    return values


def curve_reliability(group_results: pd.DataFrame, curves: dict[str, str] | None = None) -> pd.DataFrame:
    r"""How reproducible each family's curve is over the texts: split-group reliability.

    The texts of each task are cut into :math:`G` disjoint groups and every family's curve is
    measured on each (``group_results``). For model, task and family, :math:`\bar r` is the mean
    Spearman correlation across layers between the curves of two different groups (texts
    independent, so only the texts' noise separates them), and the reliability of the curve on
    all :math:`G` groups' texts is stepped up by Spearman-Brown,
    :math:`R = G\bar r / (1 + (G - 1)\bar r)` (our reconstruction: a curve on all texts is
    treated as the average of the groups' curves; ``NaN`` where :math:`\bar r \le 0`).

    Returns
    -------
    DataFrame ``model, task, family, groups, mean r, reliability``.

    Examples
    --------
    Two groups whose curves rank the layers alike: reliability 1.

    >>> rows = [{"model": "m", "task": "t", "group": g, "measurement": x, "layer": l + 0.5, "value": float(l)}
    ...         for g in (0, 1) for x in ("a", "b") for l in range(4)]
    >>> curve_reliability(pd.DataFrame(rows), {"A": "a", "B": "b"})["reliability"].tolist()
    [1.0, 1.0]
    """
    curves = dict(FAMILY_CURVES if curves is None else curves)
    rows = []
    subset = group_results[group_results["measurement"].isin(curves.values())]
    for (model, task), part in subset.groupby(["model", "task"], sort=False):
        by_group = [_family_curves(g, curves, f"{model}/{task}/group {k}") for k, g in part.groupby("group")]
        g = len(by_group)
        for family in curves:
            rs = [float(spearman_rows(a[family], b[family])) for a, b in itertools.combinations(by_group, 2)]
            r = float(np.nanmean(rs)) if rs and np.isfinite(rs).any() else math.nan
            rel = g * r / (1 + (g - 1) * r) if np.isfinite(r) and r > 0 else math.nan
            rows.append({"model": model, "task": task, "family": family, "groups": g, "mean r": r,
                         "reliability": rel})
    return pd.DataFrame(rows, columns=["model", "task", "family", "groups", "mean r", "reliability"])


def family_correlations(results: pd.DataFrame, curves: dict[str, str] | None = None,
                        reliability: pd.DataFrame | None = None) -> pd.DataFrame:
    r"""Spearman correlation across layers between the families' per-layer curves, per model and task.

    Each family is represented by one curve on the transitions :math:`l \to l+1`
    (:data:`FAMILY_CURVES`): the Grassmann velocity :math:`s_l` (Frenet), the chance-adjusted
    NRS, and GFMI, which is defined per layer, at the midpoint
    :math:`(\mathrm{GFMI}_l + \mathrm{GFMI}_{l+1})/2`. A constant curve has no correlation
    (``rho`` NaN; :func:`complementarity_verdict` skips it).

    With ``reliability`` (:func:`curve_reliability`), each correlation is also corrected for the
    curves' noise over the texts, :math:`\rho_c = \rho / \sqrt{R_a R_b}` clipped to [-1, 1]
    (Spearman's correction for attenuation; NaN where a reliability is undefined): noise lowers
    a correlation, which would favour "not redundant".

    Parameters
    ----------
    results : DataFrame
        Tidy per-layer rows (``model, task, measurement, layer, value``).
    curves : dict, optional
        Family name -> measurement; a measurement on whole layers (``L + 1`` values) is moved
        to the transitions by averaging neighbours.
    reliability : DataFrame, optional
        :func:`curve_reliability` of the same curves.

    Returns
    -------
    DataFrame
        One row per (model, task, pair): ``model, task, pair, rho, transitions`` (and
        ``rho_corrected`` with ``reliability``).

    Raises
    ------
    ValueError
        When a measurement is missing or a model has fewer than 3 transitions (a rank
        correlation of two or fewer points is always +-1).
    """
    curves = dict(FAMILY_CURVES if curves is None else curves)
    missing = set(curves.values()) - set(results["measurement"])
    if missing:
        raise ValueError(f"results lack the measurements {sorted(missing)}")
    rel = ({(m, t, f): r for m, t, f, r in reliability[["model", "task", "family", "reliability"]]
            .itertuples(index=False)} if reliability is not None else None)
    rows = []
    subset = results[results["measurement"].isin(curves.values())]
    for (model, task), part in subset.groupby(["model", "task"], sort=False):
        values = _family_curves(part, curves, f"{model}/{task}")
        n = len(next(iter(values.values())))
        for a, b in family_pairs(list(curves)):
            row = {"model": model, "task": task, "pair": f"{a}-{b}",
                   "rho": float(spearman_rows(values[a], values[b])), "transitions": n}
            if rel is not None:
                ra, rb = rel.get((model, task, a), math.nan), rel.get((model, task, b), math.nan)
                ok = np.isfinite(ra) and np.isfinite(rb) and ra > 0 and rb > 0
                row["rho_corrected"] = float(np.clip(row["rho"] / math.sqrt(ra * rb), -1, 1)) if ok else math.nan
            rows.append(row)
    columns = ["model", "task", "pair", "rho", "transitions"] + (["rho_corrected"] if rel is not None else [])
    return pd.DataFrame(rows, columns=columns)


def redundancy_table(correlations: pd.DataFrame) -> pd.DataFrame:
    """Each model's mean |Spearman| over tasks, one column per pair of families (the unit of the test).

    Correlations that are NaN (a constant curve) are left out of the mean; a model with none
    for some pair gets NaN there.
    """
    table, models, pairs = _redundancy(correlations)
    return pd.DataFrame(table, index=pd.Index(models, name="model"), columns=list(pairs))


def judged_rho(correlations: pd.DataFrame, undefined: float | None = UNDEFINED_RHO) -> np.ndarray:
    """The correlation each test reads, row by row: the noise-corrected one where ``correlations``
    has one (undefined counted as ``undefined``, default 1: the noise leaves redundancy open;
    None: the raw one), else the raw one; NaN for a constant curve."""
    rho = correlations["rho"].to_numpy(dtype=float)
    if "rho_corrected" in correlations:
        corrected = correlations["rho_corrected"].to_numpy(dtype=float)
        rho = np.where(np.isnan(rho), np.nan, np.where(np.isnan(corrected), rho if undefined is None else undefined,
                                                       corrected))
    return rho


def _redundancy(correlations: pd.DataFrame,
                undefined: float | None = UNDEFINED_RHO) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`redundancy_table` as an array (models, pairs), with the model and pair labels
    (the correlations of :func:`judged_rho`)."""
    rho = judged_rho(correlations, undefined)
    model, models = pd.factorize(correlations["model"])
    pair, pairs = pd.factorize(correlations["pair"])
    ok = ~np.isnan(rho)
    sums, counts = np.zeros((len(models), len(pairs))), np.zeros((len(models), len(pairs)))
    np.add.at(sums, (model[ok], pair[ok]), np.abs(rho[ok]))
    np.add.at(counts, (model[ok], pair[ok]), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts, np.asarray(models), np.asarray(pairs)


def complementarity_model_tests(correlations: pd.DataFrame, *, margin: float = COMPLEMENTARITY_MARGIN,
                                undefined_rho: float | None = UNDEFINED_RHO) -> pd.DataFrame:
    r"""Per model, are its families' curves below the redundancy margin? Tasks as replicates.

    Within one model the replicates that vary independently are its tasks: each is measured on
    its own texts, so a task's :math:`|\rho|` (corrected for the curves' noise where
    ``correlations`` has ``rho_corrected``, an undefined correction counted as 1, as in
    :func:`complementarity_verdict`) carries both the texts' noise and how the task moves the
    curves. For each pair of families, a one-sided t-test of "mean :math:`|\rho|` over the
    model's :math:`T` tasks below ``margin``",
    :math:`t = (m - \bar x)/(s/\sqrt T)` on :math:`T - 1` degrees of freedom (a sign-flip test
    could not go below :math:`2^{-T}`: 1/16 with 4 tasks); the model supports "no pair
    redundant" when all three pairs do (intersection-union, ``p (all)`` the largest p), and Holm
    adjusts ``p (all)`` over the models. Its size at the boundary :math:`|\rho| = m` is simulated
    in ``tests/test_verdicts_families.py`` (the bound at 1 makes :math:`|\rho|` skewed, which
    keeps the test on the safe side).

    Returns
    -------
    DataFrame, one row per (model, pair): ``model, pair, tasks, mean |rho|, low, high, p,
    p (all), p (all, Holm)`` (``low, high``: the two-sided 95% t-interval, clipped to [0, 1]);
    pairs with fewer than 2 tasks of defined correlation get ``p`` 1.

    Examples
    --------
    >>> c = pd.DataFrame({"model": "m", "task": np.repeat(["a", "b", "c"], 3), "pair": ["x-y", "x-z", "y-z"] * 3,
    ...                   "rho": [0.1, -0.2, 0.3, 0.2, -0.1, 0.2, 0.0, -0.3, 0.4]})
    >>> t = complementarity_model_tests(c)
    >>> t["mean |rho|"].round(2).tolist(), round(float(t["p (all)"].iloc[0]), 4)  # y-z binds: t = 6.9 on 2 df
    ([0.1, 0.2, 0.3], 0.0101)
    """
    if not 0 < margin < 1:
        raise ValueError(f"margin must lie in (0, 1), got {margin}")
    columns = ["model", "pair", "tasks", "mean |rho|", "low", "high", "p"]
    table = correlations.assign(_x=np.abs(judged_rho(correlations, undefined_rho))).dropna(subset=["_x"])
    groups = [(model, pair, part["_x"].to_numpy(dtype=float))
              for (model, pair), part in table.groupby(["model", "pair"], sort=False)]
    tested = {}  # group -> (p, low, high): the t-tests of the groups of each size at once (same numbers)
    for n in {len(x) for _, _, x in groups} - {1}:
        at = [g for g, (_, _, x) in enumerate(groups) if len(x) == n]
        xs = np.stack([groups[g][2] for g in at])
        spread = xs.std(1, ddof=1) > 0
        p = (xs.mean(1) >= margin).astype(float)
        if spread.any():
            p[spread] = _sp.ttest_1samp(xs[spread], margin, axis=-1, alternative="less").pvalue
        ci = np.clip(mean_intervals(xs), 0.0, 1.0)
        tested.update({g: (float(p[i]), float(ci[i, 0]), float(ci[i, 1])) for i, g in enumerate(at)})
    rows = []
    for g, (model, pair, x) in enumerate(groups):
        n, mean = len(x), float(x.mean())
        if n < 2:
            rows.append({"model": model, "pair": pair, "tasks": n, "mean |rho|": mean, "low": 0.0, "high": 1.0,
                         "p": 1.0})
            continue
        p, low, high = tested[g]
        rows.append({"model": model, "pair": pair, "tasks": n, "mean |rho|": mean, "low": low, "high": high, "p": p})
    n_pairs = correlations["pair"].nunique()
    return intersection_union_by_model(pd.DataFrame(rows, columns=columns), n_pairs)


def complementarity_verdict(correlations: pd.DataFrame, *, margin: float = COMPLEMENTARITY_MARGIN,
                            undefined_rho: float | None = UNDEFINED_RHO, alpha: float = ALPHA) -> Verdict:
    r"""Verdict on ``lrd.complementarity``, read as: no two families' per-layer curves are strongly correlated.

    The paper says the three families are "complementary rather than redundant" (Sec. 1, our
    translation of the digest) without a measurement. Complementarity proper, that each family
    adds information the other two lack (an incremental prediction of model or task differences),
    is not what this judge tests: it tests the weaker "not strongly correlated", our reconstruction,
    and its outcome reads as that. Two families are strongly correlated when their per-layer curves
    order the layers alike, :math:`|\rho| \ge m` (Spearman across layers; ``margin`` :math:`m`, default
    :data:`COMPLEMENTARITY_MARGIN`). For each pair of families, each model's
    :math:`x_{\text{model}}` is its mean :math:`|\rho|` over tasks (the unit is the model); a
    one-sided equivalence (non-superiority) sign-flip test of "mean :math:`x < m`"
    (:func:`lrd.verdicts.stats.equivalence_sign_flip_test` with ``lower=-inf``) runs per pair,
    and the claim needs all three: an intersection-union test, p = the largest of the three
    p-values (valid at level alpha without correction). ``p_against``: some pair's mean is above
    the margin beyond chance (:func:`lrd.verdicts.stats.sign_flip_min_p_test` of :math:`x - m`,
    adjusted for the three pairs by the min-p procedure): redundant, contradicted. ``p_min``:
    :math:`2^{-n}` with :math:`n` models. Effect: the largest pair mean :math:`|\rho|` (the pair
    closest to redundancy) with its t-interval over models, clipped to [0, 1].

    A low correlation could also come from noisy curves: where ``correlations`` carries
    ``rho_corrected`` (:func:`family_correlations` with :func:`curve_reliability`), the test uses
    the correlations corrected for the curves' noise over the texts, an undefined correction
    counted as ``undefined_rho`` (default :data:`UNDEFINED_RHO`, 1: the noise leaves redundancy
    open; None: the raw correlation); otherwise the raw ones, and says so. ``alpha``: the level
    of the test and of the per-model count (the book's 0.05; the paper states no test).

    Examples
    --------
    Five models whose curves are nearly unrelated:

    >>> c = pd.DataFrame({"model": [f"m{i}" for i in range(5) for _ in range(3)], "task": "t",
    ...                   "pair": ["a-b", "a-c", "b-c"] * 5, "rho": 0.1})
    >>> v = complementarity_verdict(c)
    >>> v.outcome, v.p_value == 1 / 32
    ('reproduced', True)
    """
    return wording.complementarity(complementarity_result(correlations, margin=margin, undefined_rho=undefined_rho,
                                                          alpha=alpha))


def complementarity_result(correlations: pd.DataFrame, *, margin: float = COMPLEMENTARITY_MARGIN,
                           undefined_rho: float | None = UNDEFINED_RHO, alpha: float = ALPHA) -> Result:
    r"""The numbers of :func:`complementarity_verdict`: its tests on ``correlations``, no sentence.

    ``case``: ``"tested"``, ``"no pairs"`` (no correlation at all) or ``"no complete model"`` (no
    model with a correlation for every pair). Facts of a test: ``n_models``, ``pairs``, ``means``
    (each pair's mean over models of the models' mean :math:`|\rho|`), ``worst`` (the largest's
    pair), ``margin``, ``corrected`` (whether the noise-corrected correlations were read),
    ``n_by_model`` (models in the per-model count), ``skipped`` and ``n_correlations`` (NaN
    correlations left out, of all) and ``dropped`` (the models left out of the test over models:
    no defined correlation for some pair in any task, e.g. a curve constant in every task; they
    stay in the per-model count, where their p is 1). ``"no complete model"`` carries ``dropped``,
    ``skipped`` and ``n_correlations`` too.

    Examples
    --------
    Five models, every pair at |rho| 0.1: each sign-flip test's p is its smallest, 1/32.

    >>> c = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(5)], 3), "task": "t",
    ...                   "pair": ["a-b", "a-c", "b-c"] * 5, "rho": 0.1})
    >>> r = complementarity_result(c)
    >>> r.case, r.p_value == r.p_min == 1 / 32, r.facts["means"]
    ('tested', True, [0.1, 0.1, 0.1])
    """
    claim = "lrd.complementarity"
    if not 0 < margin < 1:
        raise ValueError(f"margin must lie in (0, 1), got {margin}")
    table, models, pairs = _redundancy(correlations, undefined_rho)
    skipped = int(np.isnan(correlations["rho"].to_numpy(dtype=float)).sum())
    if len(pairs) == 0:
        return Result(claim, "test", case="no pairs")
    complete = ~np.isnan(table).any(1)  # models with a correlation for every pair
    dropped = [str(m) for m, ok in zip(models, complete) if not ok]
    table = table[complete]
    n = len(table)
    if n == 0:
        return Result(claim, "test", case="no complete model",
                      facts={"dropped": dropped, "skipped": skipped, "n_correlations": len(correlations)})
    below = [equivalence_sign_flip_test(x, margin, lower=-math.inf) for x in table.T]
    above = sign_flip_min_p_test(table - margin)
    p_value, p_min = max(t.p_value for t in below), max(t.p_min for t in below)
    means = table.mean(0)
    j = int(np.argmax(means))
    ci = tuple(np.clip(mean_interval(table[:, j]), 0.0, 1.0)) if n > 1 else None  # |rho| lies in [0, 1]
    by_model = complementarity_model_tests(correlations, margin=margin,
                                           undefined_rho=undefined_rho).drop_duplicates("model")
    p_models = [float(x) for x in by_model["p (all, Holm)"]]
    return Result(claim, "test", statistic=float(means[j]), p_value=p_value, p_min=p_min, p_against=above.p_value,
                  effect=float(means[j]), ci=ci, alpha=alpha,
                  per_model=(sum(x <= alpha for x in p_models), len(p_models)) if p_models else None,
                  facts={"n_models": n, "pairs": [str(p) for p in pairs], "means": [float(m) for m in means],
                         "worst": str(pairs[j]), "margin": margin, "corrected": "rho_corrected" in correlations,
                         "n_by_model": len(by_model), "skipped": skipped, "n_correlations": len(correlations),
                         "dropped": dropped})
