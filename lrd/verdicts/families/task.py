"""The judge of ``lrd.task``: does the dataset explain part of each model's LRD scores beyond the final layer?
(Jiang, Yang, Tam 2026, abstract, Sec. 1 contribution (2).)

:func:`task_result` runs the test and returns a :class:`~lrd.verdicts.result.Result` (numbers
only); :func:`task_verdict` writes it into a verdict through :mod:`lrd.verdicts.wording.families`.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.families.measures import FINAL_LAYER_STATISTICS, RANK_FREE_SCORES
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import (holm, monte_carlo_p, partial_eta_squared, score_grid, tolerance, variance_explained,
                                within_block_permutation_test)
from lrd.verdicts.wording import families as wording

__all__ = ["equal_sample_tasks", "task_shares", "residual_after_final_layer", "task_group_tests", "factor_word",
           "task_result", "task_verdict"]


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
    return wording.task(task_result(scores, measures, factor=factor, block=block, size=size, rank=rank, final=final,
                                    n_permutations=n_permutations, n_bootstrap=n_bootstrap, seed=seed, alpha=alpha,
                                    groups=groups))


def task_result(scores: pd.DataFrame, measures: Sequence[str] = RANK_FREE_SCORES, *, factor: str = "task",
                block: str = "model", size: str = "N", rank: str = "rank r",
                final: Sequence[str] = FINAL_LAYER_STATISTICS, n_permutations: int = 5000,
                n_bootstrap: int = 2000, seed: int = 0, alpha: float = ALPHA,
                groups: pd.DataFrame | None = None) -> Result:
    """The numbers of :func:`task_verdict`: its test on ``scores``, no sentence.

    ``case``: ``"tested"``; ``"one task"`` (fewer than two tasks of equal N), ``"final missing"``
    (facts ``missing``: the final-layer statistics the table lacks), ``"no residual df"`` (the
    design leaves the task no residual degree of freedom). Facts (as far as the case reached):
    ``word`` (:func:`factor_word`), ``n_models``, ``n_tasks``, ``n_texts`` (None without ``size``),
    ``measures``, ``final``, ``plain_share`` and ``plain_top`` (the task's share of the raw scores'
    within-model variance, not tested, and its measure), ``beyond`` (the residuals' test as a
    dict), ``residual_top``, ``rank_share`` (the task's share of r's, None without ``rank``) and
    ``group_hits`` ((models whose tasks differ beyond the texts' sampling, models), or None).

    Examples
    --------
    2 models x 2 tasks with 1 final-layer statistic: 4 cells, 2 model effects and 1 slope leave
    the task nothing.

    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "N": 50, "s": [0., 1, 0, 1],
    ...                    "f": [0., 0, 1, 1]})
    >>> r = task_result(df, ["s"], final=["f"], n_bootstrap=0)
    >>> r.case, r.p_value, r.facts["plain_share"]
    ('no residual df', None, 1.0)
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
        return Result(claim, "test", case="one task", facts={"word": word, "n_tasks": n_tasks})
    missing = [m for m in final if m not in scores.columns]
    if missing:
        return Result(claim, "test", case="final missing", facts={"word": word, "missing": missing})
    values, _, _ = score_grid(scores, measures, rows=block, cols=factor)  # (measures, models, tasks)
    plain = partial_eta_squared(values)
    facts = {"word": word, "n_models": n_models, "n_tasks": n_tasks, "measures": measures, "final": final,
             "n_texts": int(scores[size].iloc[0]) if size in scores.columns else None,
             "plain_share": float(plain.max()), "plain_top": measures[int(np.argmax(plain))]}
    residual = residual_after_final_layer(scores, measures, final, factor=factor, block=block)
    if residual is None:
        return Result(claim, "test", case="no residual df", facts=facts)
    beyond = within_block_permutation_test(residual, measures, factor=factor, block=block,
                                           n_permutations=n_permutations, seed=seed + 1)
    rvalues, _, _ = score_grid(residual, measures, rows=block, cols=factor)
    ci = None
    if n_bootstrap:  # percentile interval, models resampled with replacement (residuals held fixed)
        picks = np.random.default_rng(seed).integers(0, n_models, size=(n_bootstrap, n_models))
        ci = tuple(np.quantile(partial_eta_squared(rvalues[:, picks]).max(0), [0.025, 0.975]))
    facts.update(beyond=dataclasses.asdict(beyond), residual_top=measures[int(np.argmax(partial_eta_squared(rvalues)))],
                 rank_share=None, group_hits=None)
    if rank in scores.columns:
        facts["rank_share"] = float(partial_eta_squared(score_grid(scores, [rank], rows=block, cols=factor)[0])[0])
    if groups is not None and not groups.empty:
        table = task_group_tests(groups, measures, tasks=scores[factor].unique(), factor=factor, block=block,
                                 seed=seed)
        if len(table):
            facts["group_hits"] = (int((table["p (Holm)"] <= alpha).sum()), len(table))
    return Result(claim, "test", statistic=beyond.statistic, p_value=beyond.p_value, p_min=beyond.p_min,
                  effect=beyond.statistic, ci=ci, alpha=alpha, facts=facts)
