r"""Verdicts on the claims of the LRD families chapter (Jiang, Yang, Tam 2026).

The paper applies its three families of layer-wise measurements (Frenet, NRS, GFMI) to 31
models on 30 MTEB tasks and reports (abstract, Sec. 1):

* ``lrd.architecture``: LRD reveals architectural differences (encoder against decoder models);
* ``lrd.final_layer``: ... that are not apparent from final-layer representations alone;
* ``lrd.task``: ... and task-level differences;
* ``lrd.complementarity``: the three families are complementary rather than redundant.

One judge function per claim turns the chapter's tidy tables into a :class:`lrd.verdicts.Verdict`
by a stated permutation test whose unit is the model, and one :class:`NullModel` per claim
simulates its inputs under the test's null for :func:`lrd.verdicts.null_calibration`.

Tables
------
``scores``: one row per (model, task) with ``model``, ``kind`` (``"encoder"``/``"decoder"``),
``task``, ``N`` (texts) and the model-level scores of :func:`lrd.metrics.model_scores` plus
``"final mean cosine"``. ``results``: the tidy per-layer rows of :func:`lrd.metrics.profile_rows`
(``model, task, measurement, layer, depth, value``).

References
----------
Jiang, Yang, Tam, "Layer-wise Representation Dynamics", arXiv:2605.12714 (2026): abstract;
Sec. 1 (three complementary families); Sec. 2.3 (distinct roles); Sec. 3.1 (the Frenet rank r
fixed by the final layer's 95% variance).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from lrd.verdicts.spec import NullModel
from lrd.verdicts.record import ALPHA, Verdict, holm_over, per_model_count
from lrd.verdicts.stats import (average_ranks, holm, monte_carlo_p, tolerance, equivalence_sign_flip_test, intersection_union_by_model, mean_interval, mean_intervals, partial_eta_squared, score_grid,
                                separation_counts, separation_test, separation_tests, sign_flip_min_p_test,
                                variance_explained, within_block_permutation_test)

__all__ = ["residual_after_final_layer", "LRD_SCORES", "measure_relabelling_test", "FINAL_LAYER_SCORES", "FINAL_LAYER_STATISTICS", "RANK_FREE_SCORES", "FAMILY_CURVES", "COMPLEMENTARITY_MARGIN", "UNDEFINED_RHO",
           "architecture_verdict", "final_layer_verdict", "equal_sample_tasks", "task_shares", "task_verdict", "factor_word",
           "task_group_tests",
           "family_correlations", "curve_reliability", "redundancy_table", "complementarity_verdict",
           "complementarity_model_tests",
           "ARCHITECTURE_NULL", "FINAL_LAYER_NULL", "TASK_NULL", "COMPLEMENTARITY_NULL"]

#: Model-level LRD scores (one number per model and task; :func:`lrd.metrics.model_scores`).
#: d_0L is the paper's; the means over layers (velocity, curvature, NRS, GFMI) are our
#: reconstruction of "model-level scores" the paper does not define in the text we have.
LRD_SCORES = ("d_0L", "mean velocity", "mean curvature", "mean NRS (adjusted)", "mean GFMI")
#: Statistics of the final layer alone: the Frenet rank r (smallest rank explaining 95% of the
#: final layer's variance) and the mean pairwise cosine of the final layer.
FINAL_LAYER_SCORES = ("rank r", "final mean cosine")
#: The final layer's own statistics as rich as the LRD families: its rank and mean cosine
#: (spectral), the mean cosine to its k nearest neighbours (NRS's ingredient) and the share of its
#: variance between its Ward clusters at GFMI's levels (GFMI's ingredient; lrd.metrics.final_layer).
FINAL_LAYER_STATISTICS = FINAL_LAYER_SCORES + ("final kNN cosine", "final cluster share")
#: LRD scores that do not depend on the Frenet rank r (NRS and GFMI never use it; every Frenet
#: distance does, since d(a, b) <= sqrt(r) pi / 2 and r is fixed by each task's final layer).
RANK_FREE_SCORES = ("mean NRS (adjusted)", "mean GFMI")
#: One per-layer curve per family (measurement names of :func:`lrd.metrics.profile_rows`).
FAMILY_CURVES = {"Frenet": "velocity", "NRS": "NRS (adjusted)", "GFMI": "GFMI"}
#: Margin of "not strongly correlated": two families' per-layer curves are strongly correlated when they
#: order a model's layers alike with Spearman |rho| >= 0.7, the book's cut for a "strong"
#: correlation elsewhere (lrd.verdicts.agreement.STRONG_CORRELATION: Dancey and Reidy's labels as
#: tabulated by Akoglu, Turk. J. Emerg. Med. 18 (2018) 91-93); 0.8 and 0.9 are the alternatives of
#: its Rule (at 0.9, two families
#: whose curves agree at |rho| 0.85 would pass as "not redundant" almost always).
COMPLEMENTARITY_MARGIN = 0.7


def _exactness(test) -> str:
    return "exact" if test.exact else "Monte Carlo"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _kinds(scores: pd.DataFrame, group: str, unit: str) -> dict[str, int]:
    """Number of units of each group ("encoder" before "decoder")."""
    first_rows = np.unique(pd.factorize(scores[unit])[0], return_index=True)[1]
    labels, counts = np.unique(scores[group].to_numpy()[first_rows].astype(str), return_counts=True)
    return dict(sorted(zip(labels.tolist(), counts.tolist()), reverse=True))


def _panel(counts: dict[str, int]) -> str:
    return " and ".join(_plural(n, g) for g, n in counts.items())


# --- lrd.architecture ----------------------------------------------------------------------------

def architecture_verdict(scores: pd.DataFrame, measures: Sequence[str] = LRD_SCORES, *, group: str = "kind",
                         within: str = "task", unit: str = "model", alpha: float = ALPHA,
                         note: str | None = None) -> Verdict:
    r"""Verdict on ``lrd.architecture``: some LRD score separates encoders from decoders.

    Test: :func:`lrd.verdicts.stats.separation_test`. The statistic is the largest number of
    tasks on which one of ``measures`` puts every encoder below every decoder (or above),

    .. math:: S = \max_m \#\{t : m \text{ separates the kinds on task } t\};

    under the null the kinds are exchangeable between models (which :math:`k` of the :math:`n`
    models are encoders is arbitrary), and the exact p-value is the share of the
    :math:`\binom nk` relabellings whose statistic is at least :math:`S` (maximum over the
    measures inside every relabelling). Unit: the model (its tasks are relabelled together).
    ``p_min`` is :math:`1/\binom nk` (doubled for equal groups): 1/10 for 2 encoders and 3
    decoders, so that panel cannot test the claim. Effect: the share of tasks that the best
    score separates (no interval: a count over the panel's tasks; its uncertainty is the
    p-value's). ``alpha``: the test's level (the book's 0.05; the paper states no test).
    ``note``: what the reader must know about the panel (e.g. what its decoders are). Paper:
    abstract, Sec. 1.

    Examples
    --------
    >>> df = pd.DataFrame({"model": list("abcd"), "kind": ["encoder"] * 2 + ["decoder"] * 2, "task": "t",
    ...                    "s": [0.0, 1.0, 2.0, 3.0]})
    >>> v = architecture_verdict(df, ["s"])
    >>> v.outcome, v.p_value, v.p_min  # 2 against 2: the best p is 2/6
    ('not testable', 0.3333333333333333, 0.3333333333333333)
    """
    claim = "lrd.architecture"
    counts = _kinds(scores, group, unit)
    if len(counts) != 2:
        return Verdict.untestable(claim, f"the panel has {_panel(counts)}: the test needs encoders and decoders",
                                  note=note)
    measures = list(measures)
    n_tasks = scores[within].nunique()
    test = separation_test(scores, measures, group=group, within=within, unit=unit)
    top = separation_counts(scores, measures, group=group, within=within, unit=unit).idxmax()
    evidence = (f"{top}, the best of {len(measures)} LRD scores, separates the {_panel(counts)} on {test.statistic} "
                f"of {n_tasks} tasks; {_exactness(test)} p = {test.p_value:.2g} over the {test.n_permutations} "
                f"choices of which models are {next(iter(counts))}s")
    if test.p_min > alpha:
        evidence += f" (with {_panel(counts)} no result can have p below {test.p_min:.2g})"
    return Verdict(claim, "test", evidence, test=test.describe(f"choices of the {next(iter(counts))}s (unit: model)"),
                   statistic=float(test.statistic), p_value=test.p_value, p_min=test.p_min,
                   effect=test.statistic / n_tasks, effect_format="{:.0%}",
                   effect_label=f"share of tasks on which the best LRD score separates the kinds ({top})",
                   reconstruction="mean velocity, mean curvature, mean NRS and mean GFMI as model-level scores "
                                  "(the paper's text defines d_0L only); NRS and GFMI are reconstructions",
                   note=note, alpha=alpha)


# --- lrd.final_layer ----------------------------------------------------------------------------

def final_layer_verdict(scores: pd.DataFrame, measures: Sequence[str] = LRD_SCORES,
                        final: Sequence[str] = FINAL_LAYER_SCORES, *, group: str = "kind", within: str = "task",
                        unit: str = "model", alpha: float = ALPHA, note: str | None = None) -> Verdict:
    r"""Verdict on ``lrd.final_layer``: LRD separates the kinds on more tasks than final-layer statistics.

    The abstract's "not apparent from final-layer representations alone" is read as a
    comparison (our reconstruction): the statistic is the difference

    .. math:: D = S(\text{LRD scores}) - S(\text{final-layer statistics})

    of the separation counts of :func:`architecture_verdict`, the kinds relabelled jointly for
    both sets (:func:`lrd.verdicts.stats.separation_test` with a baseline). p: share of the
    :math:`\binom nk` relabellings with a difference at least :math:`D` (the paper's direction);
    ``p_against``: share with a difference at most :math:`D` (final-layer statistics separate
    the kinds on more tasks than LRD, beyond chance: contradicted). Unit: the model. The
    absolute reading, "final-layer statistics show no difference at all", is a claim of no
    effect that would need an equivalence test on a separation score with a margin; the
    comparison needs none. Effect: :math:`D` over the number of tasks (no interval, as for
    :func:`architecture_verdict`); ``alpha`` and ``note`` as there. Paper: abstract, Sec. 1
    contribution (2).

    Examples
    --------
    >>> df = pd.DataFrame({"model": list("abcd"), "kind": ["encoder"] * 2 + ["decoder"] * 2, "task": "t",
    ...                    "lrd": [0.0, 1.0, 2.0, 3.0], "last": [0.0, 2.0, 1.0, 3.0]})
    >>> v = final_layer_verdict(df, ["lrd"], ["last"])
    >>> v.statistic, v.outcome  # LRD separates the one task, the final layer does not
    (1.0, 'not testable')
    """
    claim = "lrd.final_layer"
    counts = _kinds(scores, group, unit)
    if len(counts) != 2:
        return Verdict.untestable(claim, f"the panel has {_panel(counts)}: the test needs encoders and decoders",
                                  note=note)
    measures, final = list(measures), list(final)
    n_tasks = scores[within].nunique()
    tails = separation_tests(scores, measures, baseline=final, group=group, within=within, unit=unit)
    more, fewer = tails["greater"], tails["less"]
    table = separation_counts(scores, measures + final, group=group, within=within, unit=unit)
    top, ftop = table[measures].idxmax(), table[final].idxmax()
    swap = measure_relabelling_test(table, measures, final)
    p_value, p_against = max(more.p_value, swap["greater"]), max(fewer.p_value, swap["less"])
    p_min = max(more.p_min, swap["p_min"])
    evidence = (f"the best LRD score ({top}) separates the {_panel(counts)} on {table[top]} of {n_tasks} tasks, the "
                f"best final-layer statistic ({ftop}) on {table[ftop]}: difference {more.statistic:+d}; kinds "
                f"relabelled over {more.n_permutations} choices: {_exactness(more)} p = {more.p_value:.2g}; the "
                f"{len(measures) + len(final)} measures relabelled between the two sets over {swap['n']} splits: "
                f"p = {swap['greater']:.2g}")
    if p_min > alpha:
        evidence += f" (no result on this design can have p below {p_min:.2g})"
    return Verdict(claim, "test", evidence,
                   test=(f"intersection-union (p = max) of {more.describe('choices of the ' + next(iter(counts)) + 's, LRD and final-layer scores relabelled jointly (unit: model)')} "
                         f"and an exact test relabelling which {len(measures)} of the {len(measures) + len(final)} "
                         f"measures are LRD scores ({swap['n']} splits: a best of {len(measures)} against a best of "
                         f"{len(final)} gains nothing by selection)"),
                   statistic=float(more.statistic), p_value=p_value, p_min=p_min,
                   p_against=p_against,
                   against="final-layer statistics separate the kinds on more tasks than LRD scores (both tests, "
                           "other tail)",
                   effect=more.statistic / n_tasks, effect_format="{:+.0%}",
                   effect_label="share of tasks separated: best LRD score minus best final-layer statistic",
                   reconstruction="'not apparent from the final layer' tested as a difference of separation counts "
                                  f"against the final-layer statistics {', '.join(final)}; the paper names no test",
                   note=note, alpha=alpha)


def measure_relabelling_test(counts: pd.Series, measures: Sequence[str], final: Sequence[str]) -> dict:
    r"""Exact test of "the LRD measures separate more than the final-layer ones" with the measures
    exchangeable between the two sets.

    :math:`D = \max_{m \in \mathcal M} S_m - \max_{b \in \mathcal B} S_b` (separation counts
    :math:`S`). Under the null that LRD and final-layer measures are exchangeable (e.g. every measure
    shifted alike by kind), each of the :math:`\binom{|\mathcal M| + |\mathcal B|}{|\mathcal M|}`
    splits of the measures into sets of those sizes is equally likely, so the best of five against the
    best of two carries its selection into the null. p (``"greater"``): share of splits with
    :math:`D' \ge D`; ``"less"``: with :math:`D' \le D`; ``p_min``: :math:`1/\binom{\cdot}{\cdot}`.

    Examples
    --------
    >>> c = pd.Series({"a": 3, "b": 3, "c": 3, "f": 0})
    >>> t = measure_relabelling_test(c, ["a", "b", "c"], ["f"])  # every LRD measure above the final one
    >>> t["greater"], t["n"]
    (0.25, 4)
    """
    measures, final = list(measures), list(final)
    names = measures + final
    values = counts[names].to_numpy(dtype=float)
    k = len(measures)
    splits = list(itertools.combinations(range(len(names)), k))
    d = np.array([values[list(c)].max() - np.delete(values, list(c)).max() for c in splits])
    observed = values[:k].max() - values[k:].max()
    return {"greater": float((d >= observed - 1e-9).mean()), "less": float((d <= observed + 1e-9).mean()),
            "p_min": 1 / len(splits), "n": len(splits)}


# --- lrd.task -----------------------------------------------------------------------------------

def equal_sample_tasks(scores: pd.DataFrame, *, size: str = "N") -> pd.DataFrame:
    """The rows of the tasks measured on the largest number of texts (``size``).

    Every LRD score depends on the number of texts N (the Frenet rank r, the chance level of
    NRS, the clusters of GFMI), so task effects are judged only between tasks of equal N.
    """
    return scores[scores[size] == scores[size].max()].reset_index(drop=True)


def task_shares(scores: pd.DataFrame, measures: Sequence[str], *, factor: str = "task",
                block: str = "model") -> pd.DataFrame:
    r"""Share of each measure's variance that the task explains within models, and that the model explains.

    Returns a DataFrame indexed by measure with ``"task share"`` (partial :math:`\eta^2`: of the
    variance left after removing each model's mean, :func:`lrd.verdicts.stats.partial_eta_squared`)
    and ``"model share"`` (:math:`\eta^2` of the model on the raw values); the two need not sum to 1.
    """
    measures = list(measures)
    values, _, _ = score_grid(scores, measures, rows=block, cols=factor)
    return pd.DataFrame({"task share": partial_eta_squared(values),
                         "model share": [variance_explained(scores, m, block) for m in measures]}, index=measures)


def residual_after_final_layer(scores: pd.DataFrame, measures: Sequence[str], final: Sequence[str], *,
                               factor: str = "task", block: str = "model") -> pd.DataFrame | None:
    r"""Each LRD score with what the model and the final-layer statistics explain removed.

    For each measure :math:`y_{bf}` (model :math:`b`, task :math:`f`), the residual of the
    least-squares fit :math:`y_{bf} = a_b + \sum_j \beta_j x_{j,bf} + e_{bf}` on model effects
    and the final-layer statistics :math:`x_j` (``final``, standardised). What the task still
    explains of these residuals is a task difference the final layer does not show. None when
    the design leaves no residual degree of freedom for the task (:math:`BF - B - J < F`).

    Returns
    -------
    DataFrame or None
        ``scores`` with each of ``measures`` replaced by its residual.
    """
    measures, final = list(measures), list(final)
    values, blocks, levels = score_grid(scores, measures + final, rows=block, cols=factor)
    n_blocks, n_levels = values.shape[1:]
    if n_blocks * n_levels - n_blocks - len(final) < n_levels:
        return None
    x = values[len(measures):].reshape(len(final), -1).T
    x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    dummies = np.repeat(np.eye(n_blocks), n_levels, axis=0)
    design = np.column_stack([dummies, x])
    y = values[:len(measures)].reshape(len(measures), -1).T
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = (y - design @ coef).T.reshape(len(measures), n_blocks, n_levels)
    out = pd.DataFrame({block: np.repeat(blocks, n_levels), factor: np.tile(levels, n_blocks)})
    for k, m in enumerate(measures):
        out[m] = resid[k].ravel()
    return out


def task_group_tests(groups: pd.DataFrame, measures: Sequence[str] = RANK_FREE_SCORES, *, tasks=None,
                     factor: str = "task", block: str = "model", n_permutations: int = 2000,
                     seed: int = 0) -> pd.DataFrame:
    r"""Per model, does the task move its LRD scores beyond the sampling of texts? Disjoint groups
    of each task's texts as replicates.

    Each task's texts are cut into :math:`G` disjoint random groups of equal size and every LRD
    score is computed on each group (:func:`lrd.units.lrd_families.text_groups`), giving for
    model :math:`m`, measure :math:`k`, task :math:`t` and group :math:`g` a value :math:`y_{ktg}`.
    The statistic is the largest share of the variance over the :math:`TG` values that the task
    explains (:math:`\eta^2`), over ``measures``:

    .. math:: S_m = \max_k \frac{G \sum_t (\bar y_{kt\cdot} - \bar y_{k\cdot\cdot})^2}
              {\sum_{t,g} (y_{ktg} - \bar y_{k\cdot\cdot})^2}.

    Under "the task does not matter" the groups are exchangeable between tasks (same size, texts
    drawn alike): ``n_permutations`` random reassignments of the :math:`TG` groups to tasks (the
    same for every measure, the maximum taken inside each) give
    :math:`p_m = (1 + \#\{S^{(b)} \ge S_m\})/(1 + B)`; Holm adjusts over the models. The unit is
    the text group: the test says whether *this model's* scores differ between tasks, at the
    groups' sample size (scores such as the mean NRS depend on the number of texts, which is the
    same in every group).

    Parameters
    ----------
    groups : DataFrame
        One row per (model, task, group) with ``measures`` (``FamilyTables.group_scores``).
    tasks : collection of str, optional
        Only these tasks (the verdict's: :func:`equal_sample_tasks`); default all.

    Returns
    -------
    DataFrame ``model, tasks, groups, texts per group, measure`` (the largest share's),
    ``share, p, p (Holm)``; models with fewer than 2 tasks or 2 groups per task are left out.

    Examples
    --------
    >>> g = pd.DataFrame({"model": "a", "task": np.repeat(["x", "y"], 3), "group": [0, 1, 2] * 2, "N": 10,
    ...                   "s": [0.0, 0.1, 0.2, 1.0, 1.1, 1.2]})
    >>> row = task_group_tests(g, ["s"], n_permutations=999).iloc[0]
    >>> round(float(row["share"]), 3), float(row["p"])   # 2 of the 20 distinct splits reach it: p near 1/10
    (0.974, 0.089)
    """
    measures = list(measures)
    columns = ["model", "tasks", "groups", "texts per group", "measure", "share", "p", "p (Holm)"]
    if groups is None or groups.empty:
        return pd.DataFrame(columns=columns)
    if tasks is not None:
        groups = groups[groups[factor].isin(set(tasks))]
    rng = np.random.default_rng(seed)
    rows = []
    for model, part in groups.groupby(block, sort=False):
        counts = part.groupby(factor, sort=False).size()
        if len(counts) < 2 or counts.min() < 2:
            continue
        g = int(counts.min())
        part = part.groupby(factor, sort=False).head(g).sort_values([factor], kind="stable")
        y = part[measures].to_numpy(dtype=float).T  # (K, T * G), task blocks of G
        if not np.isfinite(y).all():
            raise ValueError(f"{model}: non-finite group scores")
        t = len(counts)

        def share(v: np.ndarray) -> np.ndarray:  # (..., T * G) -> (...)
            blocks = v.reshape(*v.shape[:-1], t, g)
            centred = v - v.mean(-1, keepdims=True)
            between = g * ((blocks.mean(-1) - v.mean(-1, keepdims=True)) ** 2).sum(-1)
            total = (centred ** 2).sum(-1)
            return np.where(total > 0, between / np.where(total > 0, total, 1), 0.0)

        observed = share(y)  # (K,)
        perms = np.argsort(rng.random((n_permutations, t * g)), axis=1)
        null = share(y[:, perms]).max(0)  # (B,)
        stat = float(observed.max())
        rows.append({"model": model, "tasks": t, "groups": g, "texts per group": int(part["N"].iloc[0]),
                     "measure": measures[int(np.argmax(observed))], "share": stat,
                     "p": monte_carlo_p(int((null >= stat - tolerance()).sum()), n_permutations)})
    table = pd.DataFrame(rows, columns=columns[:-1])
    return table.assign(**{"p (Holm)": holm(table["p"].to_numpy()) if len(table) else []})


def factor_word(scores: pd.DataFrame, *, factor: str = "task", types: str = "task type") -> str:
    """How the verdict names its factor: ``"task"`` only where every task type of ``scores`` has two
    or more datasets (column ``types``), else ``"dataset"``: with one dataset per type, a difference
    between tasks is a difference between datasets, and type and dataset cannot be told apart.

    Examples
    --------
    >>> df = pd.DataFrame({"task": ["sst2", "mrpc", "imdb", "qqp"], "task type": ["cls", "pair", "cls", "pair"]})
    >>> factor_word(df), factor_word(df.iloc[:3])
    ('task', 'dataset')
    """
    if types not in scores.columns:
        return "dataset"
    per_type = scores.groupby(types)[factor].nunique()
    return "task" if len(per_type) and int(per_type.min()) >= 2 else "dataset"


def task_verdict(scores: pd.DataFrame, measures: Sequence[str] = RANK_FREE_SCORES, *, factor: str = "task",
                 block: str = "model", size: str = "N", rank: str = "rank r",
                 final: Sequence[str] = FINAL_LAYER_STATISTICS, n_permutations: int = 5000,
                 n_bootstrap: int = 2000, seed: int = 0, alpha: float = ALPHA,
                 groups: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.task``: the dataset (task) explains part of each model's LRD scores beyond the final layer.

    The claim's wording (abstract: LRD "reveals architectural and task-level differences that are
    not apparent from final-layer representations alone"; Sec. 1 contribution (2)) has two parts.
    The first, "the scores differ between tasks", is a null known false before any data: different
    datasets always differ in their texts, so their scores differ; it is shown (the dataset's
    share of the within-model variance, in the evidence) and not tested. The verdict tests the
    second: the task still explains the LRD scores once model effects and the final layer's own
    statistics ``final`` are regressed out (:func:`residual_after_final_layer`; default
    :data:`FINAL_LAYER_STATISTICS`: the final layer's rank and mean cosine, and its neighbourhood
    and clustering statistics, the single-layer counterparts of what the families measure
    across layers, :mod:`lrd.metrics.final_layer`).

    Test: :func:`lrd.verdicts.stats.within_block_permutation_test` on the residuals (Kennedy's
    residual permutation: the reduced model's residuals shuffled between each model's tasks, an
    approximation whose size is simulated in :data:`TASK_NULL`). The statistic is the largest
    share of the residuals' within-model variance the task explains (partial :math:`\eta^2`) over
    ``measures``; the p-value enumerates the :math:`(T!)^{M-1}` distinct shuffles (Monte Carlo
    beyond 20000), :math:`p_{\min} = 1/(T!)^{M-1}`. The unit is the model: only task differences
    that recur across models count. A design that leaves the task no residual degree of freedom
    (:math:`MT - M - J < T` with :math:`J` statistics) cannot be tested. No opposite test: a
    share cannot be negative. Effect: the statistic, with a 95% percentile bootstrap interval
    over models (the residuals held fixed; biased upward, as every :math:`\eta^2`).

    The Frenet scores are left out (default ``measures``, :data:`RANK_FREE_SCORES`): r is fixed by
    each task's final layer and every Grassmann distance is at most :math:`\sqrt r\,\pi/2`.
    ``scores`` must hold tasks of one N (:func:`equal_sample_tasks`). The factor is called
    "dataset" unless every task type (column ``"task type"``) has two or more datasets
    (:func:`factor_word`). With ``groups`` (the scores on disjoint groups of each task's texts)
    the evidence adds in how many models the datasets' scores differ beyond the sampling of texts
    (:func:`task_group_tests`): expected of different datasets, not part of the verdict.
    ``alpha``: the level (the book's 0.05; the paper states no test).

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "N": 50, "s": [0., 1, 0, 1],
    ...                    "f": [0., 0, 1, 1]})
    >>> task_verdict(df, ["s"], final=["f"], n_bootstrap=0).outcome  # 4 cells, 2 models, 1 statistic: no df left
    'not testable'
    """
    claim = "lrd.task"
    measures, final = list(measures), list(final or ())
    if not final:
        raise ValueError("final: name the final-layer statistics the task effect must exceed (the task effect "
                         "alone is known before any data: different datasets differ)")
    if size in scores.columns and scores[size].nunique() > 1:
        raise ValueError(f"the tasks were measured on different numbers of texts ({size}: "
                         f"{sorted(scores[size].unique().tolist())}); pass equal_sample_tasks(scores)")
    word = factor_word(scores, factor=factor)
    n_tasks, n_models = scores[factor].nunique(), scores[block].nunique()
    if n_tasks < 2:
        return Verdict.untestable(claim, f"only {_plural(n_tasks, word)} of equal sample size: the test needs two")
    missing = [m for m in final if m not in scores.columns]
    if missing:
        return Verdict.untestable(claim, f"the table lacks the final-layer statistics {', '.join(missing)}: the "
                                         f"{word} effect beyond the final layer cannot be judged against them")
    values, _, _ = score_grid(scores, measures, rows=block, cols=factor)  # (measures, models, tasks)
    plain = partial_eta_squared(values)
    top = measures[int(np.argmax(plain))]
    shown = (f"over {_plural(n_models, 'model')} x {_plural(n_tasks, word)}"
             + (f" of {int(scores[size].iloc[0])} texts" if size in scores.columns else "")
             + f", the {word} explains {plain.max():.0%} of the within-model variance of {top} (expected: different "
               f"datasets differ; not tested)")
    residual = residual_after_final_layer(scores, measures, final, factor=factor, block=block)
    if residual is None:
        return Verdict.untestable(claim, shown + f"; {_plural(n_models, 'model')} x {_plural(n_tasks, word)} leave "
                                                 f"no residual degree of freedom for the {word} beyond the "
                                                 f"{len(final)} final-layer statistics ({', '.join(final)})")
    beyond = within_block_permutation_test(residual, measures, factor=factor, block=block,
                                           n_permutations=n_permutations, seed=seed + 1)
    rvalues, _, _ = score_grid(residual, measures, rows=block, cols=factor)
    rtop = measures[int(np.argmax(partial_eta_squared(rvalues)))]
    ci = None
    if n_bootstrap:  # percentile interval, models resampled with replacement (residuals held fixed)
        picks = np.random.default_rng(seed).integers(0, n_models, size=(n_bootstrap, n_models))
        ci = tuple(np.quantile(partial_eta_squared(rvalues[:, picks]).max(0), [0.025, 0.975]))
    evidence = (f"{shown}; with model effects and the final layer's {len(final)} statistics ({', '.join(final)}) "
                f"regressed out, the {word} explains {beyond.statistic:.0%} of what is left of {rtop}; "
                f"{_exactness(beyond)} p = {beyond.p_value:.2g}")
    if beyond.p_min > alpha:
        evidence += f" (no result on this panel can have p below {beyond.p_min:.2g})"
    note = ("Frenet scores (d_0L, velocity, curvature) are left out: their distances scale with the rank r that each "
            "task's final layer fixes")
    if rank in scores.columns:
        rank_share = float(partial_eta_squared(score_grid(scores, [rank], rows=block, cols=factor)[0])[0])
        note += f" (the {word} explains {rank_share:.0%} of r's within-model variance here)"
    if word == "dataset":
        note += ("; one dataset per task type (or no types given): a dataset difference is not shown to be a "
                 "task-type difference")
    if groups is not None and not groups.empty:
        table = task_group_tests(groups, measures, tasks=scores[factor].unique(), factor=factor, block=block,
                                 seed=seed)
        if len(table):
            hits = int((table["p (Holm)"] <= alpha).sum())
            note += (f"; per model, the {word}s' scores differ beyond the sampling of texts in {hits} of "
                     f"{_plural(len(table), 'model')} ({holm_over(len(table))}; expected of different datasets, "
                     f"not part of the verdict)")
    return Verdict(claim, "test", evidence,
                   test=beyond.describe(f"shuffles of the residuals after model effects and {', '.join(final)} "
                                        f"between each model's {word}s (unit: model; Kennedy's procedure)"),
                   statistic=beyond.statistic, p_value=beyond.p_value, p_min=beyond.p_min, effect=beyond.statistic,
                   ci=ci, effect_format="{:.0%}",
                   effect_label=(f"{word}'s share of the within-model variance left after the final layer's "
                                 f"statistics, best of {', '.join(measures)} (about 1/{n_models} by chance)"),
                   reconstruction=("mean NRS and mean GFMI as model-level scores, themselves reconstructions; "
                                   "'not apparent from final-layer representations alone' as a "
                                   f"{word} effect left after regressing each score on model effects and the final "
                                   f"layer's statistics ({', '.join(final)}; the paper names none and states no "
                                   f"test); the {word} effect alone is not tested (known before any data)"),
                   note=note + ".", alpha=alpha)


# --- lrd.complementarity ------------------------------------------------------------------------

def _spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of ``a`` with the same row of ``b`` (NaN for a constant row)."""
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(-1, keepdims=True), rb - rb.mean(-1, keepdims=True)
    norm = np.sqrt((ra ** 2).sum(-1) * (rb ** 2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (ra * rb).sum(-1) / np.where(norm > 0, norm, 1), np.nan)


def _pairs(families: Sequence[str]) -> list[tuple[str, str]]:
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
            rs = [float(_spearman_rows(a[family], b[family])) for a, b in itertools.combinations(by_group, 2)]
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
        for a, b in _pairs(list(curves)):
            row = {"model": model, "task": task, "pair": f"{a}-{b}",
                   "rho": float(_spearman_rows(values[a], values[b])), "transitions": n}
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


#: The correlation counted where the correction for the curves' noise is undefined (a reliability
#: <= 0 or missing): 1, redundant, since the noise leaves redundancy open (the book's choice;
#: None in the judges: the raw correlation instead).
UNDEFINED_RHO = 1.0


def _judged_rho(correlations: pd.DataFrame, undefined: float | None = UNDEFINED_RHO) -> np.ndarray:
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
    (the correlations of :func:`_judged_rho`)."""
    rho = _judged_rho(correlations, undefined)
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
    table = correlations.assign(_x=np.abs(_judged_rho(correlations, undefined_rho))).dropna(subset=["_x"])
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
    claim = "lrd.complementarity"
    if not 0 < margin < 1:
        raise ValueError(f"margin must lie in (0, 1), got {margin}")
    table, _, pairs = _redundancy(correlations, undefined_rho)
    skipped = int(np.isnan(correlations["rho"].to_numpy(dtype=float)).sum())
    if len(pairs) == 0:
        return Verdict.untestable(claim, "no per-layer curves were correlated")
    table = table[~np.isnan(table).any(1)]  # models with a correlation for every pair
    n = len(table)
    if n == 0:
        return Verdict.untestable(claim, "no model has a correlation for every pair of families")
    below = [equivalence_sign_flip_test(x, margin, lower=-math.inf) for x in table.T]
    above = sign_flip_min_p_test(table - margin)
    p_value, p_min = max(t.p_value for t in below), max(t.p_min for t in below)
    means = table.mean(0)
    j = int(np.argmax(means))
    worst = pairs[j]
    ci = tuple(np.clip(mean_interval(table[:, j]), 0.0, 1.0)) if n > 1 else None  # |rho| lies in [0, 1]
    listed = ", ".join(f"{p} {m:.2f}" for p, m in zip(pairs, means))
    corrected = "rho_corrected" in correlations
    by_model = complementarity_model_tests(correlations, margin=margin,
                                           undefined_rho=undefined_rho).drop_duplicates("model")
    per_model = per_model_count(
        by_model["p (all, Holm)"], f"models whose every pair of families stays below {margin:g} (mean |rho| "
                                   + ("corrected for the curves' noise " if corrected else "")
                                   + f"over their tasks as replicates, one-sided t-test per pair, intersection-union "
                                     f"over the {len(pairs)} pairs; {holm_over(len(by_model))})", alpha=alpha)
    what = ("mean |Spearman| across layers, corrected for the curves' noise over the texts (split-group "
            "reliability),") if corrected else "mean |Spearman| across layers (uncorrected for the curves' noise),"
    evidence = (f"{what} over {_plural(n, 'model')}: {listed}; test of: every pair below "
                f"|rho| {margin:g} (not strongly correlated): p = {p_value:.2g} (largest of {len(pairs)} sign-flip tests)")
    if p_min > alpha:
        evidence += f" (with {_plural(n, 'model')} no result can have p below {p_min:.2g})"
    if skipped:
        evidence += f"; {skipped} of {len(correlations)} correlations skipped (constant curve)"
    return Verdict(claim, "test", evidence, **per_model,
                   test=f"intersection-union of {len(pairs)} one-sided equivalence sign-flip tests (margin "
                        f"{margin:g}, unit: model)",
                   statistic=float(means[j]), p_value=p_value, p_min=p_min, p_against=above.p_value,
                   against=f"some pair of families has mean |rho| above {margin:g} beyond chance (sign-flip "
                           f"min-p test over the {len(pairs)} pairs): strongly correlated",
                   effect=float(means[j]), ci=ci, effect_format="{:.2f}",
                   effect_label=(f"largest mean |Spearman| between two families' layer curves ({worst})"
                                 + (", noise-corrected" if corrected else "")),
                   reconstruction=f"'complementary rather than redundant' read as 'not strongly correlated': no pair of "
                                  f"per-layer curves with |Spearman| >= {margin:g} (velocity, adjusted NRS, GFMI at "
                                  "transition midpoints); the paper gives no measurement, and that each family adds "
                                  "information the others lack (complementarity proper) is not tested"
                                  + ("; the correction for noise (split-group reliability, Spearman-Brown, Spearman's "
                                     "attenuation formula) is ours" if corrected else ""),
                   note="NRS and GFMI are our reconstructions of the paper's families.", alpha=alpha)


# --- null models ---------------------------------------------------------------------------------

def _scores_panel(rng: np.random.Generator, n_encoders: int, n_decoders: int, n_tasks: int,
                  measures: Sequence[str]) -> pd.DataFrame:
    """A panel whose scores are i.i.d. noise: kinds are exchangeable between models."""
    n = n_encoders + n_decoders
    models = [f"m{i}" for i in range(n)]
    frame = pd.DataFrame({"model": np.repeat(models, n_tasks),
                          "kind": np.repeat(["encoder"] * n_encoders + ["decoder"] * n_decoders, n_tasks),
                          "task": np.tile([f"t{t}" for t in range(n_tasks)], n), "N": 300})
    return frame.assign(**{m: rng.normal(size=len(frame)) for m in measures})


#: The kind effect the power simulations give a score that shows architecture, in noise sd
#: (assumed: the paper reports no effect size).
POWER_KIND_SHIFT = 1.5


#: The default book's panel for the families claims (`lrd_families` at its defaults: minilm, mpnet,
#: e5small against the five decoder-based models, on 4 tasks), restated; the appendix reads the
#: executed chapter's instead (``lrd.book.designs``).
FAMILIES_DESIGN = {"n_encoders": 3, "n_decoders": 5, "n_tasks": 4}


def _simulate_architecture(rng: np.random.Generator, shift: float = 0.0, *,
                           n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                           n_decoders: int = FAMILIES_DESIGN["n_decoders"],
                           n_tasks: int = FAMILIES_DESIGN["n_tasks"]) -> dict:
    """The kinds exchangeable: no LRD score separates them (the null's edge, and the claim's); with
    ``shift``, every LRD score moved by that many noise sd in decoders."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, LRD_SCORES)
    moved = shift * (frame["kind"] == "decoder").to_numpy()
    return {"scores": frame.assign(**{m: frame[m] + moved for m in LRD_SCORES})}


ARCHITECTURE_NULL = NullModel(
    _simulate_architecture, architecture_verdict,
    "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} tasks, 5 LRD scores i.i.d. (kinds exchangeable)",
    effect=_simulate_architecture,
    effect_panel="the same: kinds exchangeable are also the edge of 'separates' (a separation of 0+)",
    power_effect=functools.partial(_simulate_architecture, shift=POWER_KIND_SHIFT),
    power_panel=f"the same design, every LRD score {POWER_KIND_SHIFT:g} noise sd higher in decoders (assumed: the paper "
                f"reports no size)", design=FAMILIES_DESIGN)


def _simulate_final_layer(rng: np.random.Generator, final_shift: float = 1.5, *,
                          n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                          n_decoders: int = FAMILIES_DESIGN["n_decoders"],
                          n_tasks: int = FAMILIES_DESIGN["n_tasks"]) -> dict:
    """Every measure shifted alike by kind (LRD and final-layer measures exchangeable): the kinds
    differ, the two sets show it equally; with ``final_shift`` the final-layer measures shifted
    by that instead (0: the final layer shows no difference, the LRD scores do)."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, LRD_SCORES + FINAL_LAYER_SCORES)
    decoder = (frame["kind"] == "decoder").to_numpy()
    return {"scores": frame.assign(**{m: frame[m] + (1.5 if m in LRD_SCORES else final_shift) * decoder
                                      for m in LRD_SCORES + FINAL_LAYER_SCORES})}


def _simulate_final_layer_effect(rng: np.random.Generator, **design: int) -> dict:
    """The claim at its edge for a contradiction: the LRD scores and the final-layer statistics
    shifted alike by kind (LRD no worse)."""
    return _simulate_final_layer(rng, **design)


FINAL_LAYER_NULL = NullModel(
    _simulate_final_layer, final_layer_verdict,
    "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} tasks, 5 LRD and 2 final-layer scores, every one "
    "shifted alike by kind "
    "(1.5 noise sd; the measures exchangeable)", effect=_simulate_final_layer_effect,
    effect_panel="the same: LRD as informative as the final layer is the edge where 'contradicted' must stay rare",
    power_effect=functools.partial(_simulate_final_layer, final_shift=0.0),
    power_panel="the same design, the LRD scores 1.5 noise sd higher in decoders, the final-layer scores not shifted "
                "(the claim at its strongest; the paper reports no size)", design=FAMILIES_DESIGN)


def _simulate_task_edge(rng: np.random.Generator, own_task: float = 0.0,
                        carriers: Sequence[str] = FINAL_LAYER_STATISTICS, *,
                        n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                        n_decoders: int = FAMILIES_DESIGN["n_decoders"], n_tasks: int = 3) -> dict:
    """The composite null's edge at the chapter's design (default: 8 models, the 3 of its tasks
    of equal size): the tasks move the final layer's statistics (:data:`FINAL_LAYER_STATISTICS`),
    and the LRD scores only through those of them named in ``carriers`` (each score a model
    effect plus a mix of the carriers plus noise); with ``own_task``, each LRD score also has task
    effects of its own (sd ``own_task``), beyond the final layer's."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, FINAL_LAYER_STATISTICS)
    t, m = pd.factorize(frame["task"])[0], pd.factorize(frame["model"])[0]
    for j in FINAL_LAYER_STATISTICS:
        frame[j] = frame[j] + 2 * rng.normal(size=n_tasks)[t] + rng.normal(size=n_encoders + n_decoders)[m]
    carriers = list(carriers)
    for k in RANK_FREE_SCORES:
        w = rng.normal(size=len(carriers))
        frame[k] = (frame[carriers].to_numpy() @ w + rng.normal(size=n_encoders + n_decoders)[m]
                    + 0.5 * rng.normal(size=len(frame)))
        if own_task:
            frame[k] = frame[k] + own_task * rng.normal(size=n_tasks)[t]
    # the bootstrap interval does not enter the outcome: left out to keep the calibration fast
    return {"scores": frame, "n_bootstrap": 0, "n_permutations": 2000}


TASK_NULL = NullModel(
    _simulate_task_edge, task_verdict,
    "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} datasets of equal size: the datasets move the "
    "final layer's 4 statistics (rank, mean cosine, kNN cosine, cluster share), the 2 rank-free LRD scores follow "
    "them (a model effect, a mix of the four, noise): dataset differences the final layer already shows",
    effect=_simulate_task_edge,
    effect_panel="the same: dataset differences exactly those the final layer shows are also the edge of 'beyond it'",
    power_effect=functools.partial(_simulate_task_edge, own_task=1.0),
    power_panel="the same design, each rank-free LRD score also with dataset effects of its own (sd 1, twice the "
                "residual noise; assumed: the paper reports no size)",
    design={**FAMILIES_DESIGN, "n_tasks": 3})


#: Mean |Spearman| between two families' curves in the power simulation of complementarity.
POWER_FAMILY_RHO = 0.5


@functools.lru_cache(maxsize=None)
def _latent_weight(target: float, n: int, draws: int = 4000) -> float:
    """Weight c of a shared latent curve such that two curves of ``n`` points, c z + sqrt(1 - c^2) e,
    have mean Spearman |rho| equal to ``target`` (bisection on a fixed Monte Carlo sample)."""
    rng = np.random.default_rng(12345)
    z, e1, e2 = rng.normal(size=(3, draws, n))
    lo, hi = 0.0, 1.0
    for _ in range(30):
        c = (lo + hi) / 2
        s = math.sqrt(1 - c * c)
        if np.abs(_spearman_rows(c * z + s * e1, c * z + s * e2)).mean() < target:
            lo = c
        else:
            hi = c
    return (lo + hi) / 2


def _redundancy_boundary(rng: np.random.Generator, n_models: int = 8, n_tasks: int = 4, n_layers: int = 12,
                         margin: float = COMPLEMENTARITY_MARGIN, target: float | None = None) -> dict:
    """Correlation tables at the boundary of the null: Frenet and NRS at mean |rho| = margin (the
    least favourable case of the intersection-union test; ``target`` another value), GFMI unrelated to both."""
    c = _latent_weight(margin if target is None else target, n_layers)
    s = math.sqrt(1 - c * c)
    z = rng.normal(size=(n_models, n_tasks, n_layers))
    curves = {"Frenet": c * z + s * rng.normal(size=z.shape), "NRS": c * z + s * rng.normal(size=z.shape),
              "GFMI": rng.normal(size=z.shape)}
    pairs = _pairs(list(curves))
    rho = np.stack([_spearman_rows(curves[a], curves[b]) for a, b in pairs], -1)  # (models, tasks, pairs)
    cells = np.indices(rho.shape).reshape(3, -1)
    return {"correlations": pd.DataFrame({"model": np.char.add("m", cells[0].astype(str)),
                                          "task": np.char.add("t", cells[1].astype(str)),
                                          "pair": np.array([f"{a}-{b}" for a, b in pairs])[cells[2]],
                                          "rho": rho.ravel()}),
            # the judge's margin where the boundary is placed elsewhere (at its default, the judge's own)
            **({} if margin == COMPLEMENTARITY_MARGIN else {"margin": margin})}


COMPLEMENTARITY_NULL = NullModel(
    _redundancy_boundary, complementarity_verdict,
    "{n_models} models x {n_tasks} tasks x 12 transitions; Frenet and NRS curves at mean |rho| = "
    f"{COMPLEMENTARITY_MARGIN:g} (the margin), GFMI unrelated",
    effect=_redundancy_boundary, effect_panel="the same: |rho| exactly at the margin is also the edge of 'not strongly correlated'",
    power_effect=functools.partial(_redundancy_boundary, target=POWER_FAMILY_RHO),
    power_panel=f"the same design, Frenet and NRS curves at mean |rho| = {POWER_FAMILY_RHO} (related but far from "
                f"strongly correlated; assumed: the paper gives no measurement), GFMI unrelated",
    design={"n_models": 8, "n_tasks": 4})
