r"""Intervals and t-tests: Student's interval of a mean over units, and the crossed (seeds x items)
designs' mean, variance components and one-sided t-test."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats as _sp

__all__ = ["mean_interval", "mean_intervals", "crossed_mean_test", "crossed_components", "satterthwaite_df",
           "crossed_t_test"]


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
