"""The cosine chapter's measurements as tidy tables: accuracy relevance on bootstrap resamples of
the items, its split-half reliability, the noise-corrected correlation with cosine relevance,
the mis-estimation shares and their permutation null, and intact accuracy against measured chance
(the statistics of :mod:`lrd.verdicts.agreement`; the judges are in
:mod:`lrd.verdicts.agreement.judges`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from lrd.verdicts.stats import average_ranks, monte_carlo_p, tolerance

__all__ = ["RelevanceReplicates", "relevance_replicates", "replicates_of", "spearman_brown", "corrected_correlation",
           "estimation_shares", "unrelated_share", "unrelated_draws", "agreement_table", "task_agreement_table",
           "chance_table", "agreement_summary", "estimation_by_margin", "bootstrap_quantile", "STRONG_CORRELATION",
           "ESTIMATION_MARGIN", "MIN_RELIABILITY", "SAME_RELEVANCE"]

#: The conventional cut between a moderate and a strong correlation (|r| >= 0.7 is "strong" in
#: Dancey and Reidy's labels, as tabulated by Akoglu, "User's guide to correlation coefficients",
#: Turk. J. Emerg. Med. 18 (2018) 91-93): the equivalence margin of "weak or moderate".
STRONG_CORRELATION = 0.7
#: Over/under-estimation margin in percentile ranks: a block counts as mis-estimated when its
#: cosine and accuracy ranks lie more than a tenth of the depth apart (2-3 blocks in our
#: 18-30-block decoders). Our reconstruction: the paper's definition is not in the text we have.
ESTIMATION_MARGIN = 0.1
#: Least split-half reliability of the accuracy *ranking* for a mis-estimation share to count
#: (0.7: the usual minimum for a usable measurement, Nunnally 1978): below it, item noise
#: alone drives the share towards what unrelated rankings give.
MIN_RELIABILITY = 0.7
#: Noise-corrected between-task correlation above which two tasks' relevance counts as the
#: same (the claim "relevance depends on the dataset" is then contradicted).
SAME_RELEVANCE = 0.9


# --- correlations along the last axis ------------------------------------------------------------

def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation along the last axis (broadcast); NaN where either side is constant or NaN."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
    sx, sy = np.sqrt((xc * xc).sum(-1)), np.sqrt((yc * yc).sum(-1))
    # constant up to rounding: the centred norm is negligible against the raw one
    flat = (sx <= 1e-9 * np.sqrt((x * x).sum(-1))) | (sy <= 1e-9 * np.sqrt((y * y).sum(-1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(flat, np.nan, (xc * yc).sum(-1) / np.where(flat, 1.0, sx * sy))


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation along the last axis (ties share their mean rank); NaN where constant or NaN."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    nan = np.isnan(x).any(-1) | np.isnan(y).any(-1)
    rx = average_ranks(np.where(np.isnan(x), 0, x))
    ry = average_ranks(np.where(np.isnan(y), 0, y))
    return np.where(nan, np.nan, _pearson(rx, ry))


_CORRELATIONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {"pearson": _pearson, "spearman": _spearman}


def _correlation(method: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if method not in _CORRELATIONS:
        raise ValueError(f"method must be one of {sorted(_CORRELATIONS)}, got {method!r}")
    return _CORRELATIONS[method]


def spearman_brown(r_half: np.ndarray | float) -> np.ndarray | float:
    r"""Reliability of the full-length score from the correlation of two halves: :math:`2r / (1 + r)`.

    >>> spearman_brown(0.5), spearman_brown(0.0), spearman_brown(1.0)
    (0.6666666666666666, 0.0, 1.0)
    """
    r = np.asarray(r_half, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(r > -1, 2 * r / (1 + r), np.nan)
    return float(out) if out.ndim == 0 else out


def corrected_correlation(r: np.ndarray | float, reliability: np.ndarray | float) -> np.ndarray | float:
    r"""Correction for attenuation by the noise of one variable: :math:`r / \sqrt{R}`, clipped to [-1, 1].

    NaN where :math:`R \le 0` or either input is NaN (the noisy variable carries no measurable
    signal, so the correlation it hides is unbounded).

    >>> corrected_correlation(0.3, 0.25), corrected_correlation(0.9, 0.5), corrected_correlation(0.2, -0.1)
    (0.6, 1.0, nan)
    """
    r, rel = np.asarray(r, dtype=float), np.asarray(reliability, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(rel > 0, np.clip(r / np.sqrt(np.where(rel > 0, rel, 1.0)), -1.0, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


# --- accuracy relevance on bootstrap resamples of the items ------------------------------------

@dataclass(frozen=True)
class RelevanceReplicates:
    """One model's accuracy relevance on one task, on all items and on bootstrap resamples of them.

    Attributes
    ----------
    accuracy : ndarray of shape (n_boot + 1, L)
        Accuracy relevance of blocks 1..L; row 0 on the items as measured, rows 1.. on resamples.
    reliability : ndarray of shape (n_boot + 1,)
        Split-half reliability (Pearson, Spearman-Brown) of ``accuracy`` over blocks, per row.
    rank_reliability : ndarray of shape (n_boot + 1,)
        The same for the ranking of blocks (Spearman halves); NaN where undefined.
    cosine : ndarray of shape (L,)
        Cosine relevance (from every token in one pass; held fixed).
    n_items : int
    """

    accuracy: np.ndarray
    reliability: np.ndarray
    rank_reliability: np.ndarray
    cosine: np.ndarray
    n_items: int

    @property
    def n_boot(self) -> int:
        return self.accuracy.shape[0] - 1

    def reliability_of(self, method: str) -> np.ndarray:
        """``reliability`` for ``"pearson"``, ``rank_reliability`` for ``"spearman"``."""
        _correlation(method)
        return self.reliability if method == "pearson" else self.rank_reliability


def _mean_over_splits(r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        counted = np.isfinite(r).sum(-1)
        return np.where(counted > 0, np.nansum(r, -1) / np.maximum(counted, 1), np.nan)


def relevance_replicates(correct: np.ndarray, cosine: np.ndarray, *, n_boot: int = 1000, n_splits: int = 20,
                         seed: int = 0, ranks: bool = True) -> RelevanceReplicates:
    r"""Accuracy relevance and its split-half reliability, on the items and on ``n_boot`` resamples.

    Parameters
    ----------
    correct : ndarray of shape (L + 1, n_items)
        Correctness of each item (0/1, or a fraction), row 0 intact, row :math:`l` with block
        :math:`l` removed.
    cosine : ndarray of shape (L,)
    n_boot : int
        Bootstrap resamples of the items (with replacement).
    n_splits : int
        Random half splits averaged in the reliability (:math:`r_{AB}` is their mean, then
        Spearman-Brown); the same splits are used on every resample, by distinct item.
    seed : int
    ranks : bool
        Compute ``rank_reliability`` (the costly part: ranks of every half on every resample);
        False leaves it NaN, for uses that read only the Pearson reliability (the calibration's
        simulations of the correlation and dataset claims).

    Examples
    --------
    Every item loses 0.5 without block 1, 0.1 without block 2 and nothing without block 3
    (correctness may be fractional, e.g. averaged over prompts): every half of the items agrees,
    so the reliability is 1.

    >>> c = np.ones((4, 20)); c[1], c[2] = 0.5, 0.9
    >>> r = relevance_replicates(c, np.array([0.3, 0.2, 0.1]), n_boot=5, n_splits=4)
    >>> np.round([*r.accuracy[0], r.reliability[0], r.rank_reliability[0]], 6).tolist()
    [0.5, 0.1, 0.0, 1.0, 1.0]
    """
    c = np.asarray(correct, dtype=float)
    cos = np.asarray(cosine, dtype=float)
    if c.ndim != 2 or c.shape[0] < 3 or c.shape[0] != len(cos) + 1:
        raise ValueError(f"correct must be (L + 1, n_items) with L = len(cosine) >= 2, got {c.shape} and "
                         f"cosine of length {len(cos)}")
    if c.shape[1] < 4:
        raise ValueError(f"need at least 4 items to split in halves, got {c.shape[1]}")
    if not (np.isfinite(c).all() and np.isfinite(cos).all()):
        raise ValueError("correct and cosine must be finite")
    for name, v in (("n_boot", n_boot), ("n_splits", n_splits)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    n = c.shape[1]
    drop = c[:1] - c[1:]  # (L, n): per-item loss when the block is removed
    rng = np.random.default_rng(seed)
    w = np.vstack([np.ones(n), rng.multinomial(n, np.full(n, 1 / n), size=n_boot)])  # (B + 1, n) item counts
    acc = (w @ drop.T) / n
    halves = np.zeros((n_splits, n), dtype=bool)
    for k in range(n_splits):
        halves[k, rng.permutation(n)[: n // 2]] = True
    parts = []
    for side in (halves, ~halves):  # (K, n) each
        ws = w[None, :, :] * side[:, None, :]  # (K, B + 1, n)
        total = ws.sum(-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.where(total > 0, (ws @ drop.T) / np.where(total > 0, total, 1), np.nan))
    pearson = _mean_over_splits(_pearson(*parts).T)  # (B + 1,)
    rank_r = spearman_brown(_mean_over_splits(_spearman(*parts).T)) if ranks else np.full(len(pearson), np.nan)
    return RelevanceReplicates(acc, spearman_brown(pearson), rank_r, cos, n)


def replicates_of(correct: Mapping[tuple[str, str], np.ndarray], cosine: Mapping[tuple[str, str], np.ndarray], *,
                  n_boot: int = 1000, n_splits: int = 20, seed: int = 0) -> dict[tuple[str, str], RelevanceReplicates]:
    """:func:`relevance_replicates` of every (model, task) pair, each with its own seed
    (``seed`` + its position), so that pairs are resampled independently."""
    missing = set(correct) - set(cosine)
    if missing:
        raise ValueError(f"no cosine relevance for {sorted(missing)}")
    return {key: relevance_replicates(c, cosine[key], n_boot=n_boot, n_splits=n_splits, seed=seed + i)
            for i, (key, c) in enumerate(correct.items())}


def estimation_shares(cosine: np.ndarray, accuracy: np.ndarray, *, margin: float = ESTIMATION_MARGIN) -> dict:
    r"""Share of blocks whose relevance cosine over- or under-estimates (our reconstruction).

    Both relevances become percentile ranks within the model and task,
    :math:`p = (\mathrm{rank} - 1)/(L - 1) \in [0, 1]` (ties share their mean rank). Cosine
    **over-estimates** block :math:`l` when :math:`p^{\cos}_l - p^{\mathrm{acc}}_l > m` and
    **under-estimates** it when :math:`p^{\mathrm{acc}}_l - p^{\cos}_l > m`.

    Parameters
    ----------
    cosine, accuracy : ndarray of shape (L,) or (..., L)
    margin : float
        :math:`m`, in [0, 1).

    Returns
    -------
    dict with ``over``, ``under`` (shares, arrays for stacked input) and, for 1-D input,
    ``layers_over``, ``layers_under`` (1-based block numbers).

    Examples
    --------
    >>> x = np.array([0.1, 0.2, 0.3, 0.4])
    >>> s = estimation_shares(x, x[::-1], margin=1 / 3)
    >>> s["over"], s["under"], s["layers_over"], s["layers_under"]
    (0.25, 0.25, [4], [1])
    """
    c, a = np.asarray(cosine, float), np.asarray(accuracy, float)
    if c.shape[-1] != a.shape[-1] or a.shape[-1] < 2:
        raise ValueError(f"need relevance vectors of the same length >= 2, got {c.shape} and {a.shape}")
    if not 0 <= margin < 1:
        raise ValueError(f"margin is a share of the percentile range in [0, 1), got {margin!r}")
    n = a.shape[-1]
    pc = (average_ranks(c) - 1) / (n - 1)
    pa = (average_ranks(a) - 1) / (n - 1)
    tol = 1e-9
    over, under = pc - pa > margin + tol, pa - pc > margin + tol
    out = {"over": over.mean(-1), "under": under.mean(-1)}
    if a.ndim == 1 and c.ndim == 1:
        out = {k: float(v) for k, v in out.items()}
        out.update(layers_over=(np.flatnonzero(over) + 1).tolist(), layers_under=(np.flatnonzero(under) + 1).tolist())
    return out


def unrelated_share(cosine: np.ndarray, accuracy: np.ndarray, margin: float) -> float:
    """Expected mis-estimation share when the accuracy relevances are assigned to blocks at random.

    Under a uniformly random assignment each block receives each accuracy percentile of the
    multiset with equal probability (ties keep their shared rank), so the expectation is exact:
    the mean over blocks :math:`l` and percentiles :math:`j` of :math:`1[|p^{\cos}_l - p^{\mathrm{acc}}_j| > m]`.
    """
    n = len(accuracy)
    pc = (average_ranks(cosine) - 1) / (n - 1)
    pa = (average_ranks(accuracy) - 1) / (n - 1)
    return float((np.abs(pc[:, None] - pa[None, :]) > margin + 1e-9).mean())


def unrelated_draws(replicates: Mapping[tuple[str, str], RelevanceReplicates], *, margin: float = ESTIMATION_MARGIN,
                    n_perm: int = 2000, seed: int = 0) -> pd.DataFrame:
    r"""The permutation null of the mis-estimation share: the measured accuracy relevance assigned
    to blocks at random, ``n_perm`` times per model and task.

    Draw :math:`k` pairs cosine's percentile ranks with a uniformly random permutation
    :math:`\pi_k` of the measured accuracy ranks (the items as measured, replicate 0):
    :math:`s_k = rac1L \sum_l 1[|p^{\cos}_l - p^{\mathrm{acc}}_{\pi_k(l)}| > m]`. If cosine
    relevance is unrelated to removal cost, the observed share is one more draw of this law;
    its mean is the ``unrelated`` column of :func:`agreement_table` (an exact expectation).

    Returns
    -------
    DataFrame ``model, task, permutation, misestimated`` (``margin`` must be the one of the
    agreement table it is judged with).
    """
    if isinstance(n_perm, bool) or not isinstance(n_perm, int) or n_perm < 19:
        raise ValueError(f"n_perm must be an integer >= 19 (so that p can reach 0.05), got {n_perm!r}")
    rng = np.random.default_rng(seed)
    frames = []
    for (model, task), rep in replicates.items():
        n = len(rep.cosine)
        pc = (average_ranks(rep.cosine) - 1) / (n - 1)
        pa = (average_ranks(rep.accuracy[0]) - 1) / (n - 1)
        perm = rng.permuted(np.broadcast_to(pa, (n_perm, n)), axis=1)
        share = (np.abs(pc[None, :] - perm) > margin + 1e-9).mean(1)
        frames.append(pd.DataFrame({"model": model, "task": task, "permutation": np.arange(n_perm),
                                    "misestimated": share}))
    if not frames:
        raise ValueError("no model-task pairs given")
    return pd.concat(frames, ignore_index=True)


# --- tidy tables -------------------------------------------------------------------------------

def agreement_table(replicates: Mapping[tuple[str, str], RelevanceReplicates], *, method: str = "pearson",
                    margin: float = ESTIMATION_MARGIN) -> pd.DataFrame:
    """One row per model, task and replicate (0 = the items as measured, 1.. = resamples).

    Columns: ``model, task, replicate, n_items``; ``r`` (``method`` correlation of accuracy
    with cosine relevance), ``reliability`` (its split-half reliability), ``r_corrected``
    (:func:`corrected_correlation`); ``spearman`` (uncorrected) and ``rank_reliability``;
    ``over, under, misestimated`` (:func:`estimation_shares` at ``margin``, ``misestimated =
    over + under``) and ``unrelated`` (the mis-estimation share of unrelated rankings: accuracy
    relevance shuffled over blocks, on the measured items).
    """
    corr = _correlation(method)
    names = ("model", "task", "replicate", "n_items", "r", "reliability", "spearman", "rank_reliability", "over",
             "under", "unrelated")
    cols: dict[str, list] = {k: [] for k in names}
    for (model, task), rep in replicates.items():
        n = rep.n_boot + 1
        est = estimation_shares(np.broadcast_to(rep.cosine, rep.accuracy.shape), rep.accuracy, margin=margin)
        values = {"model": [model] * n, "task": [task] * n, "replicate": np.arange(n), "n_items": np.full(n, rep.n_items),
                  "r": corr(rep.accuracy, rep.cosine[None, :]), "reliability": rep.reliability_of(method),
                  "spearman": _spearman(rep.accuracy, rep.cosine[None, :]), "rank_reliability": rep.rank_reliability,
                  "over": est["over"], "under": est["under"],
                  "unrelated": np.full(n, unrelated_share(rep.cosine, rep.accuracy[0], margin))}
        for k in names:
            cols[k].append(values[k])
    if not cols["model"]:
        raise ValueError("no model-task pairs given")
    out = pd.DataFrame({k: np.concatenate(v) for k, v in cols.items()})
    out.insert(6, "r_corrected", corrected_correlation(out["r"].to_numpy(), out["reliability"].to_numpy()))
    out.insert(11, "misestimated", out["over"] + out["under"])
    return out


def task_agreement_table(replicates: Mapping[tuple[str, str], RelevanceReplicates], *,
                         method: str = "pearson") -> pd.DataFrame:
    r"""Between-task agreement of accuracy relevance within each model, per replicate.

    For two tasks :math:`s, t` of one model, :math:`r_{st}` is the correlation (``method``) of
    their accuracy-relevance vectors over blocks; corrected for the noise of both,
    :math:`r_{st} / \sqrt{R_s R_t}` (clipped to [-1, 1]; NaN where a reliability is
    :math:`\le 0`). Tasks are resampled independently (their items are different), so replicate
    :math:`b` pairs two independent resamples. A model whose blocks matter alike on both tasks,
    up to a factor (a harder task loses less), has corrected correlation 1: the within-task
    reliability is the ceiling that item noise allows.

    Returns
    -------
    DataFrame ``model, task_a, task_b, replicate, r, reliability_a, reliability_b, r_corrected``.
    """
    corr = _correlation(method)
    frames = []
    models = list(dict.fromkeys(m for m, _ in replicates))
    for model in models:
        tasks = [t for m, t in replicates if m == model]
        for s, t in itertools.combinations(tasks, 2):
            a, b = replicates[model, s], replicates[model, t]
            if a.accuracy.shape != b.accuracy.shape:
                raise ValueError(f"{model}: tasks {s!r} and {t!r} need the same blocks and number of resamples, got "
                                 f"{a.accuracy.shape} and {b.accuracy.shape}")
            ra, rb = a.reliability_of(method), b.reliability_of(method)
            with np.errstate(invalid="ignore"):
                rel = np.where((ra > 0) & (rb > 0), ra * rb, np.nan)
            r = corr(a.accuracy, b.accuracy)
            frames.append(pd.DataFrame({"model": model, "task_a": s, "task_b": t, "replicate": np.arange(a.n_boot + 1),
                                        "r": r, "reliability_a": ra, "reliability_b": rb,
                                        "r_corrected": corrected_correlation(r, rel)}))
    cols = ["model", "task_a", "task_b", "replicate", "r", "reliability_a", "reliability_b", "r_corrected"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def chance_table(accuracy: Mapping[tuple[str, str], float], null: Mapping[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    r"""Intact accuracy against its measured chance, one row per model and task.

    Parameters
    ----------
    accuracy : dict (model, task) -> intact accuracy
    null : dict (model, task) -> ndarray of shape (n_permutations,)
        Accuracies of the same predictions under label permutations
        (:func:`lrd.engine.scoring.permuted_gold_accuracy`).

    Returns
    -------
    DataFrame ``model, task, acc, chance`` (mean of the null), ``p_chance``
    (:math:`(1 + \#\{\text{null} \ge \text{acc}\})/(1 + N)`) and ``p_min_chance`` (the same
    for a perfect score: the best these items allow).

    Examples
    --------
    >>> t = chance_table({("m", "t"): 1.0}, {("m", "t"): np.array([0.5, 0.25, 0.75, 1.0])})
    >>> t[["acc", "chance", "p_chance", "p_min_chance"]].values.tolist()
    [[1.0, 0.625, 0.4, 0.4]]
    """
    rows = []
    tol = tolerance()
    for key, acc in accuracy.items():
        if key not in null:
            raise ValueError(f"no permutation null for {key}")
        z = np.asarray(null[key], dtype=float)
        if z.ndim != 1 or len(z) == 0 or not np.isfinite(z).all():
            raise ValueError(f"the null of {key} must be a non-empty finite 1-D array, got shape {z.shape}")
        rows.append({"model": key[0], "task": key[1], "acc": float(acc), "chance": float(z.mean()),
                     "p_chance": monte_carlo_p(int((z >= acc - tol).sum()), len(z)),
                     "p_min_chance": monte_carlo_p(int((z >= 1 - tol).sum()), len(z))})
    return pd.DataFrame(rows, columns=["model", "task", "acc", "chance", "p_chance", "p_min_chance"])


def agreement_summary(agreement: pd.DataFrame, chance: pd.DataFrame | None = None, *, level: float = 0.95) -> pd.DataFrame:
    """One row per model and task: the measured values with percentile intervals over the resamples.

    Undefined corrections widen the corrected correlation's interval to the full range.
    """
    q = ((1 - level) / 2, (1 + level) / 2)
    rows = []
    for (model, task), part in agreement.groupby(["model", "task"], sort=False):
        obs, boot = part[part["replicate"] == 0].iloc[0], part[part["replicate"] > 0]
        corr = boot["r_corrected"].to_numpy()
        rows.append({"model": model, "task": task, "items": int(obs["n_items"]), "r": obs["r"],
                     "reliability": obs["reliability"], "r corrected": obs["r_corrected"],
                     "corrected lo": bootstrap_quantile(corr, q[0], -1.0), "corrected hi": bootstrap_quantile(corr, q[1], 1.0),
                     "spearman": obs["spearman"], "rank reliability": obs["rank_reliability"],
                     "mis-estimated": obs["misestimated"], "over": obs["over"], "under": obs["under"],
                     "unrelated": obs["unrelated"]})
    out = pd.DataFrame(rows)
    if chance is not None:
        out = out.merge(chance[["model", "task", "acc", "chance", "p_chance"]], on=["model", "task"], how="left")
        out = out[["model", "task", "items", "acc", "chance", "p_chance"] + [c for c in out.columns if c not in
                  ("model", "task", "items", "acc", "chance", "p_chance")]]
    return out


def estimation_by_margin(replicates: Mapping[tuple[str, str], RelevanceReplicates],
                         margins=(0.0, 0.05, 0.1, 0.2, 1 / 3)) -> pd.DataFrame:
    """Mis-estimation share against the margin, ours beside unrelated rankings' (on the measured items).

    Returns one row per margin: ``margin``, ``ours`` (mean over model-task pairs) and
    ``unrelated`` (accuracy relevance shuffled over blocks).

    >>> x = np.ones((3, 8)); x[1, :4] = 0
    >>> t = estimation_by_margin({("m", "t"): relevance_replicates(x, np.array([0.2, 0.1]), n_boot=1)}, margins=(0.5,))
    >>> t.values.tolist()
    [[0.5, 0.0, 0.5]]
    """
    rows = []
    for m in margins:
        ours = [sum(estimation_shares(r.cosine, r.accuracy[0], margin=m)[k] for k in ("over", "under"))
                for r in replicates.values()]
        unrelated = [unrelated_share(r.cosine, r.accuracy[0], m) for r in replicates.values()]
        rows.append({"margin": float(m), "ours": float(np.mean(ours)), "unrelated": float(np.mean(unrelated))})
    return pd.DataFrame(rows)


def bootstrap_quantile(values: np.ndarray, q: float, fill: float) -> float:
    """The ``q`` quantile of bootstrap replicates, an undefined (non-finite) replicate counted as
    ``fill`` (the bound on the side the interval end is on: -1 for a lower end, 1 for an upper)."""
    v = np.where(np.isfinite(values), values, fill)
    return float(np.quantile(v, q)) if len(v) else math.nan
