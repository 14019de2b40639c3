"""How far cosine relevance agrees with accuracy relevance, pruning orders, and verdicts.

Everything here is a pure function of measured arrays (per-item correctness, relevance
vectors, pruning tables); the chapter ``cosine_vs_ablation`` glues what these return.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["bootstrap_rank_correlations", "estimation_shares", "pruning_sets", "correlation_verdict",
           "intact_accuracy_interval", "pruning_verdict", "counterexample_verdict", "strength"]


def strength(rho: float) -> str:
    """Conventional label of a correlation's size: weak (< 0.4), moderate (< 0.7), strong."""
    a = abs(rho)
    return "weak" if a < 0.4 else "moderate" if a < 0.7 else "strong"


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of ``x`` (B, L) with the vector ``y`` (L,)."""
    rx = stats.rankdata(x, axis=1)
    ry = stats.rankdata(y)
    rx = rx - rx.mean(1, keepdims=True)
    ry = ry - ry.mean()
    den = np.sqrt((rx ** 2).sum(1) * (ry ** 2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx @ ry) / den, np.nan)


def bootstrap_rank_correlations(correct: np.ndarray, cosine: np.ndarray, *, n_boot: int = 1000,
                                level: float = 0.95, seed: int = 0) -> dict:
    r"""Spearman and Kendall correlation of accuracy relevance with cosine relevance, with CIs.

    Accuracy relevance of block :math:`l` is :math:`\bar c_0 - \bar c_l`, with
    :math:`c_{l,i} \in \{0, 1\}` the correctness of item :math:`i` with block :math:`l` removed
    (row 0 intact). Items are resampled with replacement ``n_boot`` times (percentile
    intervals); cosine relevance, measured on all tokens in one pass, is held fixed.

    Parameters
    ----------
    correct : ndarray of shape (L + 1, n_items)
    cosine : ndarray of shape (L,)

    Returns
    -------
    dict with ``spearman``, ``spearman_lo``, ``spearman_hi``, ``kendall``, ``kendall_lo``,
    ``kendall_hi`` (NaN where accuracy relevance is constant over layers).
    """
    correct = np.asarray(correct, dtype=float)
    cosine = np.asarray(cosine, dtype=float)
    if correct.ndim != 2 or correct.shape[0] != len(cosine) + 1:
        raise ValueError(f"correct must be (L + 1, n_items) with L = {len(cosine)}, got {correct.shape}")
    if not (np.isfinite(correct).all() and np.isfinite(cosine).all()):
        raise ValueError("correct and cosine must be finite")
    acc = correct.mean(1)
    rel = acc[0] - acc[1:]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, correct.shape[1], size=(n_boot, correct.shape[1]))
    boot = correct[:, idx].mean(-1).T  # (B, L + 1)
    boot_rel = boot[:, :1] - boot[:, 1:]
    sp = _spearman_rows(boot_rel, cosine)
    kt = np.array([stats.kendalltau(r, cosine).statistic if np.ptp(r) > 0 else np.nan for r in boot_rel])
    q = [(1 - level) / 2, (1 + level) / 2]
    out = {"spearman": float(_spearman_rows(rel[None], cosine)[0]),
           "kendall": float(stats.kendalltau(rel, cosine).statistic) if np.ptp(rel) > 0 else float("nan")}
    for name, vals in (("spearman", sp), ("kendall", kt)):
        lo, hi = np.nanquantile(vals, q) if np.isfinite(vals).any() else (np.nan, np.nan)
        out[f"{name}_lo"], out[f"{name}_hi"] = float(lo), float(hi)
    return out


def estimation_shares(cosine: np.ndarray, accuracy: np.ndarray, *, margin: float = 1 / 3) -> dict:
    r"""Share of layers whose relevance cosine over- or under-estimates.

    Both relevances are turned into percentile ranks within the model and task,
    :math:`p = (\mathrm{rank} - 1)/(L - 1) \in [0, 1]` (ties share their mean rank). Cosine
    **over-estimates** layer :math:`l` when :math:`p^{\cos}_l - p^{\mathrm{acc}}_l > m` and
    **under-estimates** it when :math:`p^{\mathrm{acc}}_l - p^{\cos}_l > m`, with margin
    :math:`m` (default 1/3: the two orders put the layer at least a third of the depth apart).

    Returns
    -------
    dict with ``over``, ``under`` (shares in [0, 1]) and ``layers_over``, ``layers_under``
    (1-based block numbers).
    """
    c, a = np.asarray(cosine, float), np.asarray(accuracy, float)
    if c.shape != a.shape or c.ndim != 1 or len(c) < 2:
        raise ValueError(f"need two relevance vectors of the same length >= 2, got {c.shape} and {a.shape}")
    pc = (stats.rankdata(c) - 1) / (len(c) - 1)
    pa = (stats.rankdata(a) - 1) / (len(a) - 1)
    over, under = pc - pa > margin, pa - pc > margin
    return {"over": float(over.mean()), "under": float(under.mean()),
            "layers_over": (np.flatnonzero(over) + 1).tolist(), "layers_under": (np.flatnonzero(under) + 1).tolist()}


def _lowest(scores: np.ndarray, k: int, tiebreak: np.ndarray | None = None) -> list[int]:
    keys = (np.asarray(scores),) if tiebreak is None else (np.asarray(tiebreak), np.asarray(scores))
    return sorted((np.lexsort(keys)[:k] + 1).tolist())


def pruning_sets(scores: dict[str, np.ndarray], ks: list[int], *, distance: np.ndarray | None = None,
                 n_random: int = 5, seed: int = 0, tiebreak: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Which blocks each pruning rule removes for each budget ``k``.

    Parameters
    ----------
    scores : dict of name -> ndarray of shape (L,)
        Importance per block (higher = keep); rule ``name`` removes the ``k`` lowest.
    ks : list of int
        Numbers of blocks to remove.
    distance : ndarray of shape (L + 1, L + 1), optional
        Angular distances; adds the rule ``angular (Gromov)``, which removes the ``k``
        consecutive blocks :math:`l^*+1..l^*+k` minimising :math:`d(l, l+k)`.
    n_random : int
        Random rules (one random order per seed; budget ``k`` removes its first ``k`` blocks).
    tiebreak : dict of name -> ndarray, optional
        Secondary key for ties (e.g. log-likelihood drop for accuracy relevance).

    Returns
    -------
    DataFrame with columns ``rule, seed, k, removed`` (tuple of 1-based blocks).
    """
    from lrd.relevance import gromov_block

    n = len(next(iter(scores.values())))
    rows = []
    for name, s in scores.items():
        rows += [(name, -1, k, tuple(_lowest(s, k, (tiebreak or {}).get(name)))) for k in ks]
    if distance is not None:
        rows += [("angular (Gromov)", -1, k, tuple(gromov_block(distance, k))) for k in ks]
    for r in range(n_random):
        order = np.random.default_rng(seed + r).permutation(n) + 1
        rows += [("random", r, k, tuple(sorted(order[:k].tolist()))) for k in ks]
    return pd.DataFrame(rows, columns=["rule", "seed", "k", "removed"])


def intact_accuracy_interval(n_correct: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) ``level`` interval of an accuracy of ``n_correct`` out of ``n`` items.

    >>> lo, hi = intact_accuracy_interval(16, 16)
    >>> round(lo, 3), hi
    (0.794, 1.0)
    """
    if not (0 <= n_correct <= n and n > 0):
        raise ValueError(f"need 0 <= n_correct <= n and n > 0, got {n_correct} of {n}")
    ci = stats.binomtest(int(n_correct), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def _range(values: pd.Series, fmt: str) -> str:
    lo, hi = fmt.format(values.min()), fmt.format(values.max())
    return lo if lo == hi else f"from {lo} to {hi}"


def correlation_verdict(table: pd.DataFrame, *, strong: float = 0.7) -> str:
    r"""Verdict on "the correlation between cosine similarity and performance degradation is
    often weak or moderate", one row per model/task.

    Columns: ``spearman`` (required); ``spearman_lo``, ``spearman_hi`` (bootstrap interval,
    optional); ``acc (intact)``, ``n items``, ``chance`` (optional, together).

    Accuracy relevance is only signal where the intact model is above chance: removing a block
    from a model that guesses moves its accuracy by noise. A pair counts only when the lower end
    of the exact binomial 95% interval of its intact accuracy lies above ``chance``; with none,
    the verdict is "not testable". Among the pairs that count, a pair is *clearly weak or
    moderate* when its Spearman interval lies inside :math:`(-0.7, 0.7)` and *clearly strong*
    when it lies outside :math:`[-0.7, 0.7]` on one side (without intervals, the point estimate
    decides). The word: "reproduced" when at least half are clearly weak or moderate, "partly
    reproduced" when some are, "not reproduced" when at least half are clearly strong (and none
    clearly weak or moderate), else "not testable" (the intervals are too wide to tell).
    """
    t = table[np.isfinite(table["spearman"].astype(float))]
    if t.empty:
        return "not testable: accuracy relevance was constant over layers for every model and task"
    n_all = len(t)
    has_ci = {"spearman_lo", "spearman_hi"} <= set(t.columns)
    lo = t["spearman_lo"].astype(float) if has_ci else t["spearman"].astype(float)
    hi = t["spearman_hi"].astype(float) if has_ci else t["spearman"].astype(float)
    ci_note = ""
    if has_ci:
        n_zero = int(((lo <= 0) & (hi >= 0)).sum())
        ci_note = f"; the 95% bootstrap interval of Spearman's rho includes 0 in {n_zero} of {n_all}"
    acc_note = ""
    if {"acc (intact)", "n items", "chance"} <= set(t.columns):
        above = []
        for acc, n, ch in zip(t["acc (intact)"], t["n items"], t["chance"]):
            a_lo, _ = intact_accuracy_interval(int(round(acc * n)), int(n))
            above.append(a_lo > ch)
        above = np.array(above)
        acc_note = (f"; intact accuracy clearly above chance (lower end of its exact 95% binomial interval "
                    f"above chance) in {int(above.sum())} of {n_all}")
        if not above.any():
            acc, items, rho = t["acc (intact)"], t["n items"].astype(int), t["spearman"]
            return (f"not testable: no model-task pair has intact accuracy clearly above chance, so accuracy "
                    f"relevance is noise (intact accuracy {_range(acc, '{:.0%}')} on {_range(items, '{}')} items, "
                    f"Spearman {_range(rho, '{:.2f}')}{ci_note})")
        t, lo, hi = t[above], lo[above], hi[above]
    n = len(t)
    clear_wm = int(((lo > -strong) & (hi < strong)).sum())
    clear_strong = int(((lo >= strong) | (hi <= -strong)).sum())
    span = f"Spearman from {t['spearman'].min():.2f} to {t['spearman'].max():.2f}"
    what = "95% interval" if has_ci else "estimate"
    tail = f"({span}{ci_note}{acc_note})"
    if clear_wm == n:
        return f"reproduced: {what} of |rho| below {strong} in all {n} model-task pairs that count {tail}"
    if clear_wm >= n / 2:
        return f"reproduced: {what} of |rho| below {strong} in {clear_wm} of {n} model-task pairs that count {tail}"
    if clear_wm > 0:
        return (f"partly reproduced: {what} of |rho| below {strong} in only {clear_wm} of {n} model-task pairs "
                f"that count {tail}")
    if clear_strong >= n / 2:
        return f"not reproduced: {what} of |rho| at least {strong} in {clear_strong} of {n} model-task pairs {tail}"
    return (f"not testable: the 95% intervals of Spearman's rho are too wide to tell weak or moderate from strong "
            f"in the {n} model-task pairs that count {tail}")


def pruning_verdict(curves: pd.DataFrame, *, better: str = "accuracy (calibration)",
                    worse: str = "cosine (BI)", random: str = "random") -> str:
    """Verdict on "accuracy-drop relevance gives better pruning than cosine" from mean accuracy
    over the budgets (column ``acc``, one row per rule/seed/k; random rules averaged by median).

    A difference between the two rules no larger than the spread (max - min) of the random
    orders' mean accuracies is within noise: the verdict is then "not testable", not a win or
    a loss. Without random orders the point estimates decide.
    """
    pruned = curves[curves["k"] > 0]
    by = pruned.groupby(["rule", "seed"])["acc"].mean().groupby("rule").median()
    if better not in by or worse not in by:
        return f"not testable: need both rules {better!r} and {worse!r}"
    b, w = by[better], by[worse]
    rank = int((by > b).sum()) + 1
    tail = f"mean accuracy over budgets {b:.3f} vs {w:.3f}; rank {rank} of {len(by)} rules"
    seeds = pruned[pruned["rule"] == random].groupby("seed")["acc"].mean()
    if len(seeds) > 1:
        spread = float(seeds.max() - seeds.min())
        tail += f"; random orders spread {spread:.3f} over {len(seeds)} seeds"
        if abs(b - w) <= spread:
            return f"not testable: the two rules differ by no more than random orders do ({tail})"
    if b > w:
        return f"reproduced: ranking blocks by accuracy drop prunes better than cosine ({tail})"
    if b == w:
        return f"not reproduced: the two rules tie ({tail})"
    return f"not reproduced: cosine ordering prunes better on our panel ({tail})"


def counterexample_verdict(cosine: float, acc: float, acc_without: float, chance: float) -> str:
    """Verdict on "a layer can have arbitrarily low cosine relevance and still be crucial"."""
    if cosine < 1e-3 and acc == 1.0 and acc_without <= chance:
        return (f"reproduced: a block with cosine relevance {cosine:.1e} whose removal takes accuracy from "
                f"{acc:.0%} to {acc_without:.0%} (chance)")
    return f"not reproduced: cosine relevance {cosine:.1e}, accuracy {acc:.0%} -> {acc_without:.0%}"
