r"""Judging Hinostroza et al.'s claims: does cosine relevance rank blocks like their removal cost?

The chapter ``cosine_vs_ablation`` measures, per decoder and task, the 0/1 correctness of
every evaluation item with the model intact and with each block removed, the cosine relevance
of every block, and the accuracy of the intact model's predictions under label permutations
(measured chance). This module turns those measurements into tidy tables and judges the
paper's claims on them.

**Accuracy relevance and its noise.** Block :math:`l`'s accuracy relevance is
:math:`a_l = \bar c_0 - \bar c_l`, a mean over :math:`n` items of per-item losses: with a few
dozen items most blocks differ by one or two items, so part of the spread of :math:`a` over
blocks is item noise, and noise pulls every correlation with it towards 0. The **split-half
reliability** measures how much: split the items at random into halves :math:`A, B`, correlate
the two halves' relevance vectors over blocks (:math:`r_{AB}`, averaged over ``n_splits``
random splits) and step it up to the full length (Spearman-Brown),

.. math:: R = \frac{2 r_{AB}}{1 + r_{AB}}.

A correlation with a noise-free score (cosine relevance: a mean over every token, held fixed)
is **corrected for attenuation** (Spearman 1904): :math:`r_c = r / \sqrt{R}`, clipped to
:math:`[-1, 1]`, undefined when :math:`R \le 0` (no measurable signal). Classical test theory
makes this exact in expectation for Pearson's correlation of item means, which is the
default (``method="pearson"``). It is not for rank correlations: near-tied blocks stay
shuffled however many items are added, so the split-half step-up over-states the reliability
of a ranking and the corrected Spearman correlation stays biased towards 0 (simulated at the
margin with a few dozen items, its test said "reproduced" more often than its level allows);
Spearman's rho is reported uncorrected, beside. Every number is recomputed on ``n_boot`` bootstrap resamples of the
items (the unit that varies independently within one model; halves are split by distinct
item, so a resampled duplicate never lands in both halves), which gives intervals and p-values.

**Tests.** A bootstrap p-value is :math:`(1 + \#\{b : \text{replicate } b \text{ does not
support the conclusion}\}) / (1 + B)`; a replicate whose correction is undefined (or, for the
mis-estimation share, whose ranking reliability is below ``min_reliability``) supports no
conclusion, so noise gives "inconclusive", never "reproduced" or "contradicted". The
percentile bootstrap's level is approximate: the null models at the end of this module check it
on simulated panels (:mod:`lrd.verdicts.calibration`). Tasks of one
model are averaged first (one value per model and replicate). The claims are about the models
of the panel ("depending on the model"), so the panel verdict is an **intersection-union
test**: a conclusion holds when it holds for every model, with :math:`p = \max_m p_m` (valid at
:math:`\alpha` without correction; Berger 1982). Generalising beyond the panel's models would
need a test over models (a sign-flip test, :math:`p \ge 2^{-n}`); the pruning claim, a
comparison of two procedures, is judged that way.

**Chance is measured.** A model-task pair counts only where the intact accuracy is above its
permutation null: the same predictions scored against gold answers drawn uniformly among each
item's choices (:func:`lrd.engine.scoring.permuted_gold_accuracy`, cached with the unit), one-sided
p-value at most :math:`\alpha`.

References
----------
Hinostroza et al., "Rethinking Layer Relevance in Large Language Models Beyond Cosine
Similarity", arXiv:2605.14075 (2026): abstract, Sec. 1, Figures 1 and 2.
Spearman, "The proof and measurement of association between two things", Am. J. Psychol. 15
(1904) 72-101 (correction for attenuation); Brown (1910), Spearman (1910) (step-up formula).
Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics 24 (1982)
295-300 (intersection-union tests).
Efron and Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall 1993, Ch. 13, 16.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from lrd.verdicts.spec import NullModel
from lrd.verdicts.claims import COSINE_MISESTIMATE_SHARE
from lrd.verdicts.record import ALPHA, Verdict, holm_over, per_model_count
from lrd.verdicts.stats import average_ranks, crossed_t_test, holm, mean_interval, monte_carlo_p, sign_flip_test, tolerance

__all__ = ["RelevanceReplicates", "relevance_replicates", "replicates_of", "spearman_brown", "corrected_correlation",
           "estimation_shares", "agreement_table", "task_agreement_table", "chance_table", "agreement_summary",
           "estimation_by_margin", "unrelated_draws", "judge_theory", "judge_correlation", "judge_misestimate", "judge_dataset",
           "judge_pruning", "judge_olmo", "decoder_note", "SIMULATED_RESAMPLES", "PAPER_MODELS", "STRONG_CORRELATION", "ESTIMATION_MARGIN", "MIN_RELIABILITY",
           "SAME_RELEVANCE", "CORRELATION_NULL", "MISESTIMATE_NULL", "DATASET_NULL", "PRUNING_NULL"]

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

#: Why ``cosine.misestimate`` has no per-model count (see :func:`judge_misestimate`).
MISESTIMATE_PER_MODEL = ("no per-model test: 'no better than unrelated rankings' is not identifiable from item-noisy "
                         "drops (near-tied blocks ordered as cosine orders them give the same data as unrelated ones); "
                         "per decoder the chapter shows the share, its difference from unrelated rankings and the "
                         "permutation p against the claim")

#: What the paper's language models are, for the note that every cosine verdict carries.
PAPER_MODELS = "the paper's LLMs include OLMo and LLaMA-3-8B"


def decoder_note(panel: pd.DataFrame, *, paper: str = PAPER_MODELS) -> str:
    """What a reader must know of the language models the cosine claims are tested on.

    ``panel`` has one row per model with columns ``model``, ``tuning`` ("base" or "instruct",
    :func:`lrd.engine.models.model_kinds`) and ``weights`` (what was done to them,
    :func:`lrd.engine.models.model_sources`; "" when unknown). Computed from the panel the chapter
    ran, so that the note never names a model that was not measured.

    >>> decoder_note(pd.DataFrame({"model": ["a", "b"], "tuning": ["instruct", "base"],
    ...                            "weights": ["GGUF Q4_1 dequantised to fp32", "as published"]}))
    "instruction-tuned: 1 of 2 language models (a); dequantised from GGUF: 1 of 2 (a); the paper's LLMs include OLMo and LLaMA-3-8B"
    >>> decoder_note(pd.DataFrame({"model": [], "tuning": [], "weights": []}))
    "no language model was measured; the paper's LLMs include OLMo and LLaMA-3-8B"
    """
    missing = {"model", "tuning", "weights"} - set(panel.columns)
    if missing:
        raise ValueError(f"panel lacks columns {sorted(missing)}; pass model_kinds(models) merged with "
                         "model_sources(models) on 'model'")
    if panel.empty:
        return f"no language model was measured; {paper}"
    n = len(panel)
    instruct = panel.loc[panel["tuning"] == "instruct", "model"].tolist()
    gguf = panel.loc[panel["weights"].str.contains("GGUF", case=False), "model"].tolist()

    def listed(models: list[str]) -> str:
        return f" ({', '.join(models)})" if models else ""

    noun = "language model" if n == 1 else "language models"
    return (f"instruction-tuned: {len(instruct)} of {n} {noun}{listed(instruct)}; dequantised from GGUF: "
            f"{len(gguf)} of {n}{listed(gguf)}; {paper}")


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


def _unrelated_share(cosine: np.ndarray, accuracy: np.ndarray, margin: float) -> float:
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
                  "unrelated": np.full(n, _unrelated_share(rep.cosine, rep.accuracy[0], margin))}
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
                     "corrected lo": _quantile(corr, q[0], -1.0), "corrected hi": _quantile(corr, q[1], 1.0),
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
        unrelated = [_unrelated_share(r.cosine, r.accuracy[0], m) for r in replicates.values()]
        rows.append({"margin": float(m), "ours": float(np.mean(ours)), "unrelated": float(np.mean(unrelated))})
    return pd.DataFrame(rows)


# --- panel helpers -------------------------------------------------------------------------------

def _quantile(values: np.ndarray, q: float, fill: float) -> float:
    """The ``q`` quantile of bootstrap replicates, an undefined (non-finite) replicate counted as
    ``fill`` (the bound on the side the interval end is on: -1 for a lower end, 1 for an upper)."""
    v = np.where(np.isfinite(values), values, fill)
    return float(np.quantile(v, q)) if len(v) else math.nan


def _bootstrap_p(replicates: np.ndarray, supports: Callable[[np.ndarray], np.ndarray]) -> float:
    """(1 + #replicates not supporting) / (1 + B); a NaN replicate supports nothing."""
    v = np.asarray(replicates, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(v) & supports(np.where(np.isfinite(v), v, 0.0))
    return monte_carlo_p(int((~ok).sum()), len(v))


def _above_chance(table: pd.DataFrame, chance: pd.DataFrame, alpha: float,
                  keys: tuple[str, ...] = ("task",)) -> pd.DataFrame:
    """The rows of ``table`` whose model-task pairs (each of ``keys``) have intact accuracy above
    measured chance (``p_chance <= alpha``)."""
    rows = list(zip(chance["model"].to_numpy(object), chance["task"].to_numpy(object)))
    known = set(rows)
    above = {k for k, p in zip(rows, chance["p_chance"].to_numpy(float)) if p <= alpha}
    keep = np.ones(len(table), dtype=bool)
    models = table["model"].to_numpy(object)
    for key in keys:
        pairs = list(zip(models, table[key].to_numpy(object)))
        missing = sorted(set(pairs) - known)
        if missing:
            raise ValueError(f"no chance row for {missing}")
        keep &= np.fromiter((p in above for p in pairs), dtype=bool, count=len(pairs))
    return table[keep]


def _per_model(table: pd.DataFrame, columns: tuple[str, ...], *, group: str = "task") -> dict[str, dict[str, np.ndarray]]:
    """Per column and model: an array (n_tasks, n_boot + 1) of ``column`` by task (or task pair,
    ``group``) and replicate (NaN where a replicate is missing)."""
    replicate = table["replicate"].to_numpy()
    width = int(replicate.max()) + 1
    values = {c: table[c].to_numpy(dtype=float) for c in columns}
    out: dict[str, dict[str, list]] = {c: {} for c in columns}
    keys = zip(table["model"].to_numpy(object), table[group].to_numpy(object))
    index: dict[tuple, list] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    for (model, _), idx in index.items():
        idx = np.asarray(idx)
        for c in columns:
            row = np.full(width, np.nan)
            row[replicate[idx]] = values[c][idx]
            out[c].setdefault(model, []).append(row)
    return {c: {m: np.vstack(rows) for m, rows in by.items()} for c, by in out.items()}


def _holm_count(p_values: list[float], alpha: float, label: str) -> dict:
    """``per_model`` and its label for a verdict: the models whose test, Holm-adjusted over the
    models, has p <= ``alpha`` (the same per-model tests the intersection-union combines).

    >>> _holm_count([0.001, 0.04, 0.5], 0.05, "decoders")["per_model"]
    (1, 3)
    """
    return per_model_count(holm(p_values), label, alpha=alpha)


def _chance_words(chance: pd.DataFrame, alpha: float) -> str:
    return (f"{int((chance['p_chance'] <= alpha).sum())} of {len(chance)} decoder-task pairs above measured chance "
            f"at p <= {alpha}")


# --- the judges ------------------------------------------------------------------------------------

def judge_theory(toy, *, max_cosine: float = 1e-3, min_accuracy: float = 1.0,
                 max_without: float | None = None) -> Verdict:
    """Demonstration of "a layer can have arbitrarily low cosine relevance and still be crucial".

    ``toy`` is a :class:`lrd.methods.counterexample.CounterexampleResult` (``cosine_relevance``,
    ``accuracy``, ``accuracy_without``, ``chance``). It holds when the block of least cosine
    relevance has relevance below ``max_cosine`` while the intact network is perfect (accuracy at
    least ``min_accuracy``, 1) and the network without that block is at chance (accuracy at most
    ``max_without``; None: the toy's ``chance``). The network is our construction illustrating the
    paper's theoretical result, not a reproduction of its proof: it holds by design.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> judge_theory(NS(cosine_relevance=np.array([0.3, 4e-5, 0.2]), accuracy=1.0,
    ...                 accuracy_without=np.array([1.0, 0.5, 1.0]), chance=0.5)).outcome
    'demonstrated'
    """
    cos = np.asarray(toy.cosine_relevance, dtype=float)
    block = int(np.argmin(cos))
    without = float(np.asarray(toy.accuracy_without, dtype=float)[block])
    ceiling = toy.chance if max_without is None else max_without
    holds = bool(cos[block] < max_cosine and toy.accuracy >= min_accuracy and without <= ceiling)
    evidence = (f"an illustration of the theory (our construction): in a {len(cos)}-block residual network, block "
                f"{block + 1} has cosine relevance {cos[block]:.1e}, the least, yet removing it takes accuracy from "
                f"{toy.accuracy:.0%} to {without:.0%} (chance {toy.chance:.0%})")
    return Verdict("cosine.theory", "demonstration", evidence, holds=holds,
                   reconstruction="the toy network is ours; the paper proves the point in its theoretical analysis, "
                                  "it does not build this network")


def judge_correlation(agreement: pd.DataFrame, chance: pd.DataFrame, *, margin: float = STRONG_CORRELATION,
                      alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "the correlation between cosine similarity and performance degradation is often
    weak or moderate" (abstract): an equivalence test of :math:`|r_c| < m` per model.

    For each model (tasks above measured chance only), :math:`r_c` is the mean over its tasks of
    the noise-corrected correlation of accuracy relevance with cosine relevance (column
    ``r_corrected`` of :func:`agreement_table`). Equivalence by two one-sided bootstrap tests over
    items: :math:`p_m = \max(p^{+}, p^{-})` with
    :math:`p^{+} = (1 + \#\{b: r_{c,b} \ge m\})/(1 + B)` and :math:`p^{-}` likewise for
    :math:`r_{c,b} \le -m` (a replicate whose correction is undefined counts against).
    Against, "strong" (:math:`|r_c| \ge m`): the one-sided test of the better direction,
    doubled. Panel: intersection-union over models (:math:`\max_m p_m`). Noise (reliability near
    0) leaves the correction undefined or large, so it gives "inconclusive", never "reproduced".

    Parameters
    ----------
    agreement : DataFrame from :func:`agreement_table`
    chance : DataFrame from :func:`chance_table`
    margin : float
        :math:`m`, default :data:`STRONG_CORRELATION` (0.7, the conventional moderate/strong cut).
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``) and of the per-model count.
    note : str
        What the panel's language models are (:func:`decoder_note`), carried by the verdict; every
        judge of this module takes it.
    """
    if not 0 < margin < 1:
        raise ValueError(f"margin must be in (0, 1), got {margin!r}")
    kept = _above_chance(agreement, chance, alpha)
    claim = "cosine.correlation"
    if kept.empty:
        return Verdict.untestable(claim, f"{_chance_words(chance, alpha)}: without signal, accuracy relevance is noise",
                                  note=note, alpha=alpha)
    arrays = _per_model(kept, ("r_corrected", "r", "reliability"))
    per_model = {m: a.mean(0) for m, a in arrays["r_corrected"].items()}  # NaN if any task's is
    p_claim, p_against, parts = [], [], []
    for model, v in per_model.items():
        boot = v[1:]
        p_claim.append(max(_bootstrap_p(boot, lambda x: x < margin), _bootstrap_p(boot, lambda x: x > -margin)))
        p_against.append(min(1.0, 2 * min(_bootstrap_p(boot, lambda x: x >= margin),
                                          _bootstrap_p(boot, lambda x: x <= -margin))))
        parts.append(f"{model}: r {arrays['r'][model][:, 0].mean():.2f}, reliability "
                     f"{arrays['reliability'][model][:, 0].mean():.2f}, corrected {v[0]:.2f} "
                     f"[{_quantile(boot, 0.025, -1):.2f}, {_quantile(boot, 0.975, 1):.2f}]")
    stack = np.vstack(list(per_model.values()))
    n_boot = stack.shape[1] - 1
    effect = float(stack[:, 0].mean()) if np.isfinite(stack[:, 0]).all() else None  # undefined in a model
    mean_boot = stack[:, 1:].mean(0)
    return Verdict(claim, "test",
                   f"noise-corrected correlation of accuracy with cosine relevance, mean over tasks [95% bootstrap "
                   f"interval]: {'; '.join(parts)} ({_chance_words(chance, alpha)})",
                   test=f"equivalence |r| < {margin} per model (two one-sided bootstrap tests over items, {n_boot} "
                        f"resamples), all {len(per_model)} models (intersection-union)",
                   statistic=effect, p_value=max(p_claim), p_against=max(p_against),
                   against=f"|r| >= {margin} (strong) in every model", p_min=1 / (1 + n_boot),
                   effect=effect, ci=(_quantile(mean_boot, 0.025, -1.0), _quantile(mean_boot, 0.975, 1.0)),
                   effect_label="noise-corrected correlation, mean over decoders", effect_format="{:.2f}",
                   reconstruction=f"Pearson's correlation corrected for item noise (split-half reliability, "
                                  f"Spearman-Brown), the average over tasks and the {margin} margin are ours; the "
                                  f"paper's correlation procedure is not in the text we have",
                   note=note, alpha=alpha,
                   **_holm_count(p_claim, alpha, f"decoders whose noise-corrected correlation is shown within "
                                                 f"+-{margin} (the equivalence test above, items resampled; "
                                                 f"{holm_over(len(p_claim), 'decoder')})"))


def _mean_over_tasks(draws: pd.DataFrame) -> np.ndarray:
    """Per permutation (ascending), the mean over tasks (sorted) of ``misestimated``: the numbers of
    ``draws.pivot_table(index="permutation", columns="task", values="misestimated").mean(axis=1)``,
    read off a grid where every (permutation, task) has one finite value (as :func:`unrelated_draws`
    gives), else from that pivot table."""
    p_codes, permutations = pd.factorize(draws["permutation"], sort=True)
    t_codes, tasks = pd.factorize(draws["task"], sort=True)
    cell = p_codes * len(tasks) + t_codes
    values = draws["misestimated"].to_numpy(dtype=float)
    if (len(draws) == 0 or len(draws) != len(permutations) * len(tasks) or (p_codes < 0).any() or (t_codes < 0).any()
            or np.bincount(cell, minlength=len(draws)).max() != 1 or not np.isfinite(values).all()):
        return draws.pivot_table(index="permutation", columns="task", values="misestimated").mean(axis=1).to_numpy()
    grid = np.empty(len(draws))
    grid[cell] = values
    return grid.reshape(len(permutations), len(tasks)).mean(1)  # contiguous rows: pandas' summation order


def judge_misestimate(agreement: pd.DataFrame, chance: pd.DataFrame, unrelated: pd.DataFrame, *,
                      share: float = COSINE_MISESTIMATE_SHARE, min_reliability: float = MIN_RELIABILITY,
                      alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "in more than 90% of the cases cosine over- or under-estimates a layer's
    relevance" (Introduction), judged against the share that unrelated rankings give.

    The share of mis-estimated blocks (:func:`estimation_shares` at the margin of ``agreement``)
    depends on the margin, and rankings unrelated to each other already mis-estimate most blocks
    at ours (the share :math:`u` below): a share above 90% would need cosine to be *worse* than random. So the
    paper's 90% is shown as its description, and the claim is read on the scale it implies:
    cosine places blocks no better than rankings unrelated to removal cost, up to the 10% of
    cases the paper leaves (:math:`\delta = 1 - 0.9`). Per model, :math:`s` is the share averaged
    over its tasks above measured chance and :math:`u` the unrelated rankings' (exact) share:

    * **reproduced** ("no better than unrelated rankings", :math:`s > u - \delta`) cannot be shown
      by the measured share: item noise in the accuracy drops pulls :math:`s` towards :math:`u`
      without bound (pure noise gives :math:`s = u`) and the bootstrap over items does not
      reproduce that pull (simulated just below the edge :math:`s = u - \delta`, a bootstrap
      equivalence test says "reproduced" more often than its level allows). So :math:`p = 1`
      (``tests/test_agreement.py::test_misestimation_is_judged_against_unrelated_rankings``): the
      verdict is "contradicted" or "inconclusive", and the difference with its bootstrap interval
      is shown as evidence. No
      other statistic mends this, per model or across models: blocks whose removal costs nearly
      the same (most blocks of a small decoder) are ordered by differences far below what a few
      hundred items resolve, so a panel whose true share is well below :math:`u - \delta` (those
      near-ties ordered as cosine orders them) gives nearly the same data as one at :math:`u`
      (the same in the limit of exact ties), and a test valid at that least favourable null has
      almost no power anywhere. So the verdict carries no per-model count, and says why
      (``per_model_label``);
    * **contradicted** (cosine ranks blocks better than unrelated rankings by more than the
      :math:`\delta` the claim leaves, :math:`s < u - \delta`): the one-sided bootstrap test of
      :math:`d = s - u`, :math:`p_\text{against} = (1 + \#\{b: d_b \ge -\delta\})/(1 + B)`.
      Item noise pulls :math:`d` towards 0, and the resamples further, so this side errs towards
      "inconclusive". The permutation test of the share against unrelated rankings
      (:func:`unrelated_draws`; exact, but of "better than random" at all, which the claim allows
      up to :math:`\delta`) is shown beside it as evidence, not as the test;

    both intersection-union over models.

    Parameters
    ----------
    agreement : DataFrame from :func:`agreement_table`
    chance : DataFrame from :func:`chance_table`
    unrelated : DataFrame from :func:`unrelated_draws` (same replicates and margin)
    share : float
        The paper's share (0.9); :math:`\delta = 1 - ` ``share``.
    min_reliability : float
        Default :data:`MIN_RELIABILITY`.
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``).
    """
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share!r}")
    delta = 1 - share
    kept = _above_chance(agreement, chance, alpha)
    claim = "cosine.misestimate"
    if kept.empty:
        return Verdict.untestable(claim, f"{_chance_words(chance, alpha)}: without signal, accuracy relevance is noise",
                                  note=note, alpha=alpha)
    arrays = _per_model(kept, ("misestimated", "rank_reliability", "unrelated"))
    observed = {m: a.mean(0) for m, a in arrays["misestimated"].items()}
    chance_share = {m: a.mean(0) for m, a in arrays["unrelated"].items()}
    kept_pairs = set(zip(kept["model"], kept["task"]))
    null = unrelated[[(m, t) in kept_pairs for m, t in zip(unrelated["model"].to_numpy(dtype=object),
                                                              unrelated["task"].to_numpy(dtype=object))]]
    with np.errstate(invalid="ignore"):
        excess = {m: np.where((arrays["rank_reliability"][m] >= min_reliability).all(0), v - chance_share[m], np.nan)
                  for m, v in observed.items()}
    p_against, parts = [], []
    n_perm = None
    for model, v in excess.items():
        draws = _mean_over_tasks(null[null["model"] == model])
        if not len(draws):
            raise ValueError(f"{model}: no permutation draws in `unrelated` (run unrelated_draws on the same replicates)")
        n_perm = len(draws) if n_perm is None else min(n_perm, len(draws))
        s0 = observed[model][0]
        boot = v[1:]
        diff = observed[model] - chance_share[model]  # every replicate: noise errs towards inconclusive here
        p_against.append(_bootstrap_p(diff[1:], lambda x: x < -delta))
        p_random = monte_carlo_p(int((draws <= s0 + tolerance()).sum()), len(draws))
        parts.append(f"{model}: {s0:.0%} against unrelated rankings' {chance_share[model][0]:.0%} (difference "
                     f"{s0 - chance_share[model][0]:+.0%} [{_quantile(boot, 0.025, -1):+.0%}, {_quantile(boot, 0.975, 1):+.0%}], "
                     f"p = {p_against[-1]:.3f} that it is below -{delta:.0%}; better than random, permutation "
                     f"p = {p_random:.3f}; ranking reliability {arrays['rank_reliability'][model][:, 0].mean():.2f})")
    stack = np.vstack(list(excess.values()))
    effect = float(np.mean([observed[m][0] - chance_share[m][0] for m in observed]))
    n_boot = stack.shape[1] - 1
    mean_boot = stack[:, 1:].mean(0)
    return Verdict(claim, "test", f"share of blocks mis-estimated by cosine: {'; '.join(parts)} "
                                  f"({_chance_words(chance, alpha)})",
                   test=(f"against the claim: the share below the unrelated rankings' by more than {delta:.0%} "
                         f"(one-sided bootstrap test over items, {n_boot} resamples) in every one of the "
                         f"{len(excess)} models (intersection-union); 'no better than random' is not testable under "
                         f"item noise (p = 1); beside it, the permutation test against unrelated rankings ({n_perm} "
                         f"random assignments of the measured relevance to blocks)"),
                   # p = 1: no valid test of "no better than random" under item noise (see above)
                   statistic=effect, p_value=1.0, p_against=max(p_against),
                   against=f"cosine ranks blocks better than unrelated rankings by more than {delta:.0%} of the "
                           f"blocks in every model",
                   p_min=1 / (1 + n_boot), effect=effect,
                   ci=(_quantile(mean_boot, 0.025, -1.0), _quantile(mean_boot, 0.975, 1.0)),
                   effect_label="share mis-estimated minus the unrelated rankings' share, mean over decoders",
                   effect_format="{:+.0%}",
                   paper_effect=f"> {share:.0%} of cases (the paper's description; its margin is not in our text)",
                   per_model_label=MISESTIMATE_PER_MODEL,
                   reconstruction=(f"over/under-estimation is our reconstruction (percentile ranks more than a margin "
                                   f"apart); the paper's {share:.0%} is read as 'no better than unrelated rankings, up "
                                   f"to the {delta:.0%} of cases it leaves', because the share itself depends on the "
                                   f"margin and unrelated rankings reach most of it"),
                   note=note, alpha=alpha)


def judge_dataset(task_agreement: pd.DataFrame, chance: pd.DataFrame, *, same: float = SAME_RELEVANCE,
                  alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "layer relevance differs across datasets" (Introduction, Figure 1A).

    Within a model, two tasks' accuracy relevances agree up to item noise when their
    noise-corrected between-task correlation (:func:`task_agreement_table`) is 1: the
    within-task split-half reliability is the ceiling that noise allows, and a task's
    difficulty scales its drops without changing which blocks matter (shuffling items between
    tasks of different difficulty would not be a valid null). Per model, :math:`\bar r_c` is the
    mean over pairs of tasks above measured chance. A correlation below 1 is near-automatic as
    items grow (any real difference between two tasks, however small, shows), so the claim is
    judged against a substantive margin, the same ``same`` that defines "the same relevance":
    reproduced when :math:`\bar r_c <` ``same`` (the tasks share less than ``same``\ :sup:`2` of
    their relevance's variance), :math:`p = (1 + \#\{b: \bar r_{c,b} \ge \text{same}\})/(1 + B)`;
    contradicted (relevance the same on every task): :math:`\bar r_c >` ``same`` by the mirror
    test; undefined corrections count against both; intersection-union over models.

    Parameters
    ----------
    task_agreement : DataFrame from :func:`task_agreement_table`
    chance : DataFrame from :func:`chance_table`
    same : float
        Default :data:`SAME_RELEVANCE`.
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``) and of the per-model count.
    """
    claim = "cosine.dataset"
    if task_agreement.empty:
        return Verdict.untestable(claim, "no decoder was measured on two tasks", note=note, alpha=alpha)
    kept = _above_chance(task_agreement, chance, alpha, keys=("task_a", "task_b"))
    if kept.empty:
        return Verdict.untestable(claim, f"no decoder is above measured chance on two tasks "
                                         f"({_chance_words(chance, alpha)})", note=note, alpha=alpha)
    kept = kept.assign(pair=[f"{a} / {b}" for a, b in zip(kept["task_a"], kept["task_b"])])
    arrays = _per_model(kept, ("r_corrected", "r"), group="pair")
    per_model = {m: a.mean(0) for m, a in arrays["r_corrected"].items()}
    p_claim, p_against, parts = [], [], []
    for model, v in per_model.items():
        boot = v[1:]
        p_claim.append(_bootstrap_p(boot, lambda x: x < same))
        p_against.append(_bootstrap_p(boot, lambda x: x > same))
        parts.append(f"{model}: {v[0]:.2f} [{_quantile(boot, 0.025, -1):.2f}, {_quantile(boot, 0.975, 1):.2f}] over "
                     f"{len(arrays['r'][model])} task pair(s), uncorrected {arrays['r'][model][:, 0].mean():.2f}")
    stack = np.vstack(list(per_model.values()))
    n_boot = stack.shape[1] - 1
    effect = float(stack[:, 0].mean()) if np.isfinite(stack[:, 0]).all() else None  # undefined in a model
    mean_boot = stack[:, 1:].mean(0)
    return Verdict(claim, "test", f"noise-corrected correlation of accuracy relevance between tasks [95% bootstrap "
                                  f"interval]: {'; '.join(parts)}",
                   test=f"one-sided bootstrap test of a corrected between-task correlation below {same} per model "
                        f"({n_boot} resamples of items per task), all {len(per_model)} models (intersection-union)",
                   statistic=effect, p_value=max(p_claim), p_against=max(p_against),
                   against=f"corrected between-task correlation above {same} (the same relevance) in every model",
                   p_min=1 / (1 + n_boot), effect=effect,
                   ci=(_quantile(mean_boot, 0.025, -1.0), _quantile(mean_boot, 0.975, 1.0)),
                   effect_label="noise-corrected between-task correlation, mean over decoders", effect_format="{:.2f}",
                   reconstruction=f"the paper shows the variation in a heat map; the test (between-task correlation "
                                  f"against the split-half ceiling) and the {same} margin for 'the same' are ours",
                   note=note, alpha=alpha,
                   **_holm_count(p_claim, alpha, f"decoders whose corrected between-task correlation is shown below "
                                                 f"{same} (the bootstrap test above, items resampled; "
                                                 f"{holm_over(len(p_claim), 'decoder')})"))


#: Columns of :func:`pruning_model_tests`.
PRUNING_MODEL_COLUMNS = ["model", "tasks", "items", "difference", "low", "high", "p", "p (Holm)"]


def pruning_model_tests(items: pd.DataFrame, chance: pd.DataFrame | None = None, *,
                        better: str = "accuracy (calibration)", worse: str = "cosine (BI)",
                        alpha: float = ALPHA) -> pd.DataFrame:
    r"""Per pruned model, does the ``better`` ranking prune better than the ``worse`` one, over
    the model's test items?

    For model :math:`m`, task :math:`t` and test item :math:`i`,
    :math:`x_{ti} = \frac1K\sum_k (c_{ti}(\text{better}, k) - c_{ti}(\text{worse}, k))`, the
    difference in 0/1 correctness averaged over the :math:`K` budgets (the statistic of
    :func:`judge_pruning` per item). The model's effect :math:`\bar d = \frac1T\sum_t \bar x_t`
    is tested one-sided ("better above worse") by Student's t with the items as the unit
    (:func:`lrd.verdicts.stats.crossed_t_test`; both rules are deterministic, so each task is one
    row of items); Holm adjusts over the models. Tasks whose intact model is not above measured
    chance (``chance``, :func:`chance_table`) are left out, as in the chapter's other per-model
    tests; a model with none is left out.

    Parameters
    ----------
    items : DataFrame
        ``model, task, rule, seed, k, item, correct`` (:func:`lrd.units.cosine_vs_ablation.pruning_items_table`).
    chance : DataFrame, optional
        :func:`chance_table`.

    Returns
    -------
    DataFrame :data:`PRUNING_MODEL_COLUMNS` (``low, high``: the two-sided 95% t-interval).

    Examples
    --------
    >>> items = pd.DataFrame({"model": "m", "task": "t", "rule": np.repeat(["accuracy (calibration)", "cosine (BI)"], 4),
    ...                       "seed": 0, "k": 1, "item": [0, 1, 2, 3] * 2, "correct": [1, 1, 1, 0, 0, 1, 0, 0]})
    >>> pruning_model_tests(items)[["difference", "items"]].values.tolist()
    [[0.5, 4.0]]
    """
    need = {"model", "task", "rule", "seed", "k", "item", "correct"}
    if not need <= set(items.columns):
        raise ValueError(f"items need columns {sorted(need)}, got {sorted(items.columns)}")
    if chance is not None and len(items):
        items = _above_chance(items, chance, alpha)
    rows = []
    kept = items[items["rule"].isin([better, worse]) & (items["k"] > 0)]
    for model, part in kept.groupby("model", sort=False):
        tables = []
        for task, cell in part.groupby("task", sort=False):
            grid = cell.pivot_table(index=["k", "item"], columns="rule", values="correct", aggfunc="mean")
            if not {better, worse} <= set(grid.columns):
                raise ValueError(f"{model} / {task}: the items need both rules {better!r} and {worse!r}")
            diff = (grid[better] - grid[worse]).groupby(level="item").mean().to_numpy(dtype=float)
            tables.append(diff[None, :])
        if not tables:
            continue
        t = crossed_t_test(tables)
        rows.append({"model": model, "tasks": len(tables), "items": sum(x.shape[1] for x in tables),
                     "difference": t["mean"], "low": t["low"], "high": t["high"], "p": t["p"]})
    table = pd.DataFrame(rows, columns=PRUNING_MODEL_COLUMNS[:-1])
    return table.assign(**{"p (Holm)": holm(table["p"].to_numpy()) if len(table) else []})


def judge_pruning(curves: pd.DataFrame, *, better: str = "accuracy (calibration)", worse: str = "cosine (BI)",
                  random: str = "random", alpha: float = ALPHA, note: str = "", items: pd.DataFrame | None = None,
                  chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on "pruning by the accuracy drop beats pruning by cosine" (abstract, Sec. 6).

    Per pruned model :math:`m`, :math:`d_m` is the mean over budgets :math:`k > 0` of the
    evaluation accuracy (mean over tasks) of the ``better`` rule minus the ``worse`` rule's
    (random orders: median over seeds). Exact one-sided sign-flip test over models (the unit
    that varies independently; :math:`p \ge 2^{-n}`, so 5 models are needed to reach 0.05),
    and the same test of :math:`-d` against.

    Parameters
    ----------
    curves : DataFrame with columns ``model, rule, seed, k, acc``
    random : str
        The rule whose curve (median over seeds) the evidence shows beside the two compared; no
        number of the test reads it.
    alpha : float
        The verdict's level; also the level of the measured-chance filter and of the per-model
        count (Holm) of the evidence from ``items``.
    items : DataFrame, optional
        The pruned models' per-item correctness (:func:`lrd.units.cosine_vs_ablation.pruning_items_table`):
        the evidence per model beside the verdict (:func:`pruning_model_tests`, Holm over the models).
    chance : DataFrame, optional
        :func:`chance_table`: the tasks the per-model tests keep.
    """
    need = {"model", "rule", "seed", "k", "acc"}
    if not need <= set(curves.columns):
        raise ValueError(f"curves need columns {sorted(need)}, got {sorted(curves.columns)}")
    claim = "cosine.pruning"
    pruned = curves[curves["k"] > 0]
    cells: dict[tuple, list] = {}  # (model, rule, seed) -> accuracies over budgets
    for key, acc in zip(zip(pruned["model"].to_numpy(object), pruned["rule"].to_numpy(object),
                            pruned["seed"].to_numpy()), pruned["acc"].to_numpy(float)):
        cells.setdefault(key, []).append(acc)
    rules: dict[str, dict[str, list]] = {}  # model -> rule -> mean accuracy per seed
    for (model, rule, _), accs in cells.items():
        rules.setdefault(model, {}).setdefault(rule, []).append(float(np.mean(accs)))
    if not rules:
        return Verdict.untestable(claim, "no model was pruned", note=note, alpha=alpha)
    missing = {m: sorted({better, worse} - set(r)) for m, r in rules.items() if not {better, worse} <= set(r)}
    if missing:
        raise ValueError(f"every pruned model needs both rules {better!r} and {worse!r}; missing {missing}")
    by = {m: {rule: float(np.median(v)) for rule, v in r.items()} for m, r in rules.items()}
    d = np.array([r[better] - r[worse] for r in by.values()])
    parts = [f"{model}: {r[better]:.3f} vs {r[worse]:.3f}" + (f" (random {r[random]:.3f})" if random in r else "")
             for model, r in by.items()]
    test, against = sign_flip_test(d), sign_flip_test(-d)
    budgets = sorted(pruned["k"].unique().tolist())
    per_model = {}
    if items is not None and len(items):
        table = pruning_model_tests(items, chance, better=better, worse=worse, alpha=alpha)
        per_model = per_model_count(
            table["p (Holm)"], f"pruned decoders in which the accuracy-drop ranking prunes better than cosine's over "
                               f"their multiple-choice test items (difference in correctness averaged over the "
                               f"budgets, t-test with items as the unit, tasks above measured chance; "
                               f"{holm_over(len(table), 'decoder')})", alpha=alpha)
    return Verdict(claim, "test", f"evaluation accuracy, mean over budgets of {budgets} blocks removed, accuracy-drop "
                                  f"ranking vs cosine ranking: {'; '.join(parts)}", **per_model,
                   test=f"exact one-sided sign-flip test over {len(d)} pruned model(s)",
                   statistic=float(d.mean()), p_value=test.p_value, p_against=against.p_value,
                   against="the cosine ranking prunes better", p_min=test.p_min, effect=float(d.mean()),
                   ci=mean_interval(d) if len(d) > 1 else None,
                   effect_label="accuracy of the accuracy-drop ranking minus cosine's, mean over models",
                   effect_format="{:+.3f}",
                   reconstruction="the average over budgets is ours (the paper compares curves, Figure 2)",
                   note=note, alpha=alpha)


def judge_olmo(*, note: str = "") -> Verdict:
    """Verdict on the OLMo layer-16 example: not testable, OLMo is not in the offline panel."""
    return Verdict.untestable("cosine.olmo", "OLMo is not in the offline panel", note=note)


# --- null models (lrd.verdicts.calibration) ----------------------------------------------------------

#: Bootstrap resamples of each simulated verdict: fewer than the chapter's (1000), a cost of the
#: simulation. They set how finely a bootstrap p-value is resolved (at least 1/101), not the
#: noise the test must hold its size against, which the items and splits carry.
SIMULATED_RESAMPLES = 100

#: The default book's cosine panel, restated (``cosine_vs_ablation`` at its defaults: SmolLM2,
#: Gemma 3 and Qwen2.5 with 30, 18 and 24 blocks, on 2 multiple-choice tasks of 32 items, 20
#: half splits); the appendix reads the executed chapter's instead (``lrd.book.designs``).
COSINE_DESIGN = {"layers": (30, 18, 24), "n_tasks": 2, "n_items": 32, "n_splits": 20}


def _describe_cosine(layers: tuple, n_tasks: int, n_items: int, n_splits: int) -> str:
    return (f"{len(layers)} decoder{'s' if len(layers) != 1 else ''} "
            f"({', '.join(map(str, layers))} blocks) x {n_tasks} task{'s' if n_tasks != 1 else ''}, {n_items} items, "
            f"{n_splits} half splits, {SIMULATED_RESAMPLES} resamples")


def _drop_profile(n_blocks: int) -> np.ndarray:
    """A realistic shape of accuracy relevance over ``n_blocks`` blocks: one block whose removal is
    catastrophic, one that matters, the rest small and nearly tied (what small decoders show)."""
    return np.r_[0.45, 0.2, np.linspace(0.0, 0.1, n_blocks - 2)]


def _simulate_correct(rng: np.random.Generator, drop: np.ndarray, n_items: int, *, intact: float = 0.8) -> np.ndarray:
    """0/1 correctness (L + 1, n): item right intact with probability ``intact``; block ``l``'s
    removal turns a right item wrong with probability ``drop[l] / intact`` (expected relevance ``drop``)."""
    right = rng.random(n_items) < intact
    keep = rng.random((len(drop), n_items)) >= np.asarray(drop)[:, None] / intact
    return np.vstack([right, right[None] & keep]).astype(float)


def _with_correlation(x: np.ndarray, r: float) -> np.ndarray:
    """A vector whose Pearson correlation with ``x`` is exactly ``r``."""
    z = (x - x.mean()) / x.std()
    other = np.cos(np.arange(len(x)) * 2.0)  # any fixed direction, made orthogonal to 1 and x
    other = other - other.mean() - (other @ z) / (z @ z) * z
    other = other / other.std()
    return r * z + math.sqrt(1 - r * r) * other


def _at_share(drop: np.ndarray, target: float, *, margin: float = ESTIMATION_MARGIN, seed: int = 0) -> np.ndarray:
    """A cosine relevance whose mis-estimation share against ``drop`` (:func:`estimation_shares`)
    is the smallest one at or above ``target`` among Gaussian-copula draws at correlations 0..1
    (a fixed set of draws: the same vector for the same input).

    A 24-block decoder's share moves in steps of 1/24:

    >>> drop = np.linspace(0.0, 0.5, 24)
    >>> target = _unrelated_share(drop, drop, 0.1) - 0.1
    >>> s = estimation_shares(_at_share(drop, target), drop, margin=0.1)
    >>> bool(target <= s["over"] + s["under"] < target + 1 / 24)
    True
    """
    a = np.asarray(drop, dtype=float)
    z = (average_ranks(a) - (len(a) + 1) / 2) / len(a)
    z = z / z.std()
    noise = np.random.default_rng(seed).standard_normal((50, len(a)))
    r = np.linspace(0.0, 1.0, 101)[:, None, None]
    cand = (r * z + np.sqrt(1 - r * r) * noise).reshape(-1, len(a))
    est = estimation_shares(cand, np.broadcast_to(a, cand.shape), margin=margin)
    share = est["over"] + est["under"]
    ok = np.flatnonzero(share >= target - 1e-9)
    if not len(ok):
        raise ValueError(f"no draw reaches a share of {target!r}")
    return cand[ok[np.argmin(share[ok])]]


def _sim_chance(keys) -> pd.DataFrame:
    return pd.DataFrame({"model": [k[0] for k in keys], "task": [k[1] for k in keys], "acc": 0.8, "chance": 0.5,
                         "p_chance": 0.001, "p_min_chance": 0.001})


def _sim_replicates(rng: np.random.Generator, cosine: dict, drops: dict, intact: dict | None = None, *,
                    n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"],
                    ranks: bool = False) -> dict:
    """Simulated replicates of every (model, task); ``ranks`` only where the judge reads the
    rank reliability (the misestimate claim)."""
    return {key: relevance_replicates(_simulate_correct(rng, drops[key], n_items, intact=(intact or {}).get(key, 0.8)),
                                      cosine[key], n_boot=SIMULATED_RESAMPLES, n_splits=n_splits,
                                      seed=int(rng.integers(2 ** 31)), ranks=ranks)
            for key in drops}


def _panel_keys(layers: tuple, n_tasks: int) -> list[tuple[int, tuple[str, str], int]]:
    """``(model index, (model, task), blocks)`` for every decoder and task of a simulated panel."""
    return [(i, (f"m{i}", f"t{t}"), n) for i, n in enumerate(layers) for t in range(n_tasks)]


#: The correlation the power simulation gives the "moderate" decoder (assumed: the paper says
#: "weak or moderate, depending on the model" without numbers); the others are weak (0.1).
POWER_MODERATE = 0.4


def _simulate_correlation(rng: np.random.Generator, r: float = STRONG_CORRELATION, others: float = 0.1, *,
                          layers: tuple = COSINE_DESIGN["layers"], n_tasks: int = COSINE_DESIGN["n_tasks"],
                          n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """The first decoder's cosine relevance at a correlation of exactly ``r`` with its expected
    accuracy relevance on every task, the others' at ``others``: with the defaults the least
    favourable null of "weak or moderate in every decoder" (one decoder exactly at the margin 0.7,
    the rest clearly weak); ``others = r`` puts every decoder at ``r`` (the edge of "strong in
    every decoder")."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: _drop_profile(n) for _, key, n in keys}
    cosine = {key: _with_correlation(drops[key], r if i == 0 else others) for i, key, _ in keys}
    reps = _sim_replicates(rng, cosine, drops, n_items=n_items, n_splits=n_splits)
    return {"agreement": agreement_table(reps), "chance": _sim_chance(reps)}


def _misestimate_panel(rng: np.random.Generator, cosine: dict, drops: dict, *, n_items: int, n_splits: int) -> dict:
    """What :func:`judge_misestimate` reads, simulated for ``cosine`` against expected ``drops``."""
    reps = _sim_replicates(rng, cosine, drops, n_items=n_items, n_splits=n_splits, ranks=True)
    return {"agreement": agreement_table(reps, margin=ESTIMATION_MARGIN), "chance": _sim_chance(reps),
            "unrelated": unrelated_draws(reps, margin=ESTIMATION_MARGIN, n_perm=199, seed=int(rng.integers(2 ** 31)))}


@lru_cache(maxsize=None)
def _edge_cosine(n_blocks: int) -> np.ndarray:
    """The cosine relevance at the claim's edge against drops evenly spread over ``n_blocks``
    blocks (:func:`_at_share`; deterministic, so computed once per block count; read-only)."""
    drop = np.linspace(0.0, 0.5, n_blocks)
    out = _at_share(drop, _unrelated_share(drop, drop, ESTIMATION_MARGIN) - (1 - COSINE_MISESTIMATE_SHARE))
    out.setflags(write=False)
    return out


def _simulate_misestimate_effect(rng: np.random.Generator, *, layers: tuple = COSINE_DESIGN["layers"],
                                 n_tasks: int = COSINE_DESIGN["n_tasks"], n_items: int = COSINE_DESIGN["n_items"],
                                 n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """The paper's point at its strongest: cosine unrelated to removal cost in every decoder."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: np.linspace(0.0, 0.5, n) for _, key, n in keys}
    cosine = {key: rng.permutation(n).astype(float) for _, key, n in keys}
    return _misestimate_panel(rng, cosine, drops, n_items=n_items, n_splits=n_splits)


def _simulate_misestimate_edge(rng: np.random.Generator, *, layers: tuple = COSINE_DESIGN["layers"],
                               n_tasks: int = COSINE_DESIGN["n_tasks"], n_items: int = COSINE_DESIGN["n_items"],
                               n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """Where a "contradicted" would be false at its most likely: the first decoder at the claim's
    edge (cosine's share of mis-estimated blocks exactly :math:`\delta` below the unrelated
    rankings', the nearest a draw gets from above), the others ranking blocks as removal does
    (contradicting the claim without doubt). Drops evenly spread, so that item noise pulls little."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: np.linspace(0.0, 0.5, n) for _, key, n in keys}
    cosine = {key: _edge_cosine(n) if i == 0 else drops[key].copy() for i, key, n in keys}
    return _misestimate_panel(rng, cosine, drops, n_items=n_items, n_splits=n_splits)


#: The correlation between two tasks' expected drops in the power simulation of ``cosine.dataset``
#: (assumed: the paper shows relevance varying across datasets in a figure, without a number).
POWER_DATASET_CORRELATION = 0.5


def _simulate_dataset(rng: np.random.Generator, r: float = SAME_RELEVANCE, others: float | None = 0.0, *,
                      layers: tuple = COSINE_DESIGN["layers"], n_tasks: int = COSINE_DESIGN["n_tasks"],
                      n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """Every later task of the first decoder has expected drops at a Pearson correlation of exactly
    ``r`` with its first task's, the other decoders' at ``others`` (None: at ``r`` too); later
    tasks harder (intact accuracy 0.6, drops 0.6 times as large). With the defaults the least
    favourable null of "relevance depends on the dataset in every decoder" (one decoder at the
    margin of 'the same', 0.9, the rest clearly dependent); ``others=None`` the edge of "the same
    in every decoder"."""
    keys = _panel_keys(layers, n_tasks)
    drops, intact = {}, {}
    for i, key, n in keys:
        first = _drop_profile(n)
        if key[1] == "t0":
            drops[key] = first
            continue
        other = _with_correlation(first, r if i == 0 or others is None else others) * first.std()
        drops[key], intact[key] = 0.6 * (other - other.min()), 0.6
    cosine = {key: np.arange(n, dtype=float) for _, key, n in keys}
    reps = _sim_replicates(rng, cosine, drops, intact, n_items=n_items, n_splits=n_splits)
    return {"task_agreement": task_agreement_table(reps), "chance": _sim_chance(reps)}


def _simulate_pruning(rng: np.random.Generator, n_models: int = 8) -> dict:
    """Null of "the accuracy-drop ranking prunes better": ``n_models`` models whose two rules are exchangeable."""
    rows = []
    for m in range(n_models):
        base = rng.uniform(0.5, 0.9)
        for k in (1, 2, 4):
            for rule in ("accuracy (calibration)", "cosine (BI)"):
                rows.append({"model": f"m{m}", "rule": rule, "seed": -1, "k": k,
                             "acc": base - 0.05 * k + rng.normal(0, 0.03)})
    return {"curves": pd.DataFrame(rows)}


#: Registered in :data:`lrd.verdicts.calibration.NULL_MODELS`.
CORRELATION_NULL = NullModel(_simulate_correlation, judge_correlation,
                             f"{{design}}; the first decoder at r = {STRONG_CORRELATION} exactly on every task, the "
                             f"others at 0.1 (least favourable)",
                             effect=partial(_simulate_correlation, others=STRONG_CORRELATION),
                             effect_panel=f"the same design, every decoder at r = {STRONG_CORRELATION} exactly: the "
                                          f"edge of 'strong in every decoder'",
                             power_effect=partial(_simulate_correlation, r=POWER_MODERATE),
                             power_panel=f"the same design, the first decoder at r = {POWER_MODERATE} (moderate), the "
                                         f"others at 0.1 (assumed: the paper gives no numbers)",
                             design=COSINE_DESIGN, describe_design=_describe_cosine)
MISESTIMATE_NULL = NullModel(_simulate_misestimate_effect, judge_misestimate,
                             "{design}, cosine unrelated to removal cost in every decoder: the test's p is 1 by "
                             "construction (item noise pulls the share towards the unrelated rankings', so 'no better "
                             "than random' is never concluded), so its false-reproduced rate is 0 under any null",
                             effect=_simulate_misestimate_edge,
                             effect_panel=f"{{design}}; the first decoder at the claim's edge (cosine's share of "
                                          f"mis-estimated blocks {1 - COSINE_MISESTIMATE_SHARE:.0%} of the blocks below "
                                          f"the unrelated rankings'), the others ranking blocks as removal does: a "
                                          f"contradiction would be false",
                             power_effect=_simulate_misestimate_effect,
                             power_panel="the same: the test cannot say 'reproduced' at any effect (p = 1 by design)",
                             design=COSINE_DESIGN, describe_design=_describe_cosine)
DATASET_NULL = NullModel(_simulate_dataset, judge_dataset,
                         f"{{design}}; the first decoder's later tasks harder, their expected drops at correlation "
                         f"exactly {SAME_RELEVANCE} with its first task's (the margin of 'the same'), the other "
                         f"decoders' at 0 (least favourable)",
                         effect=partial(_simulate_dataset, others=None),
                         effect_panel=f"the same design, every decoder's tasks at correlation exactly "
                                      f"{SAME_RELEVANCE}: the edge of 'the same in every decoder'",
                         power_effect=partial(_simulate_dataset, r=POWER_DATASET_CORRELATION, others=None),
                         power_panel=f"the same design, every decoder's tasks' expected drops at correlation "
                                     f"{POWER_DATASET_CORRELATION} (assumed: the paper's figure gives no number)",
                         design=COSINE_DESIGN, describe_design=_describe_cosine)
PRUNING_NULL = NullModel(_simulate_pruning, judge_pruning,
                         "{n_models} models x 3 budgets, the two rules exchangeable within each model",
                         effect=_simulate_pruning,
                         effect_panel="the same: exchangeable rules are also the edge of 'beats'",
                         design={"n_models": 8},
                         design_label="restated, larger than the default book's: the chapter's pruned decoders are too "
                                      "few to reach p <= 0.05 (its verdict says 'not testable', power 0)")
