"""Small statistics that chapters use to turn tables of scores into verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd


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


def architecture_verdicts(separation: pd.DataFrame, lrd_scores: list[str], final_scores: list[str],
                          n_tasks: int) -> tuple[str, str]:
    """Plain verdicts on "LRD shows architectural differences not apparent from the final layer".

    ``separation`` is a :func:`separation_table` over ``lrd_scores + final_scores``. The first
    verdict asks whether some LRD score separates encoders from decoders on every task; the
    second whether final-layer-only statistics separate them less often than the best LRD score.
    """
    if separation.empty:
        missing = "not testable: the panel needs at least one encoder and one decoder"
        return missing, missing
    best = separation.loc[lrd_scores, "separated on"]
    final = separation.loc[final_scores, "separated on"]
    top, top_n = best.idxmax(), int(best.max())
    ftop, ftop_n = final.idxmax(), int(final.max())
    if top_n == n_tasks:
        arch = f"reproduced: {top} separates encoders from decoders on all {n_tasks} tasks"
    elif top_n > 0:
        arch = f"partly reproduced: the best LRD score ({top}) separates them on {top_n} of {n_tasks} tasks"
    else:
        arch = "not reproduced: no LRD score separates encoders from decoders on any task"
    if top_n == 0:
        final_verdict = "not testable: no LRD score separates the architectures"
    elif ftop_n >= top_n:
        final_verdict = (f"not reproduced on our panel: a final-layer statistic ({ftop}) separates them on "
                         f"{ftop_n} of {n_tasks} tasks, as often as the best LRD score ({top_n})")
    else:
        final_verdict = (f"reproduced: final-layer statistics separate them on at most {ftop_n} of {n_tasks} "
                         f"tasks, fewer than the best LRD score ({top_n})")
    return arch, final_verdict


def task_verdict(shares: pd.DataFrame, n_tasks: int) -> str:
    """Plain verdict on "task-level differences" from a (score x {task, model}) table of eta^2.

    ``n_tasks`` is the number of tasks behind ``shares``; with fewer than two the question
    cannot be asked.
    """
    if n_tasks < 2:
        return "not testable: fewer than two tasks of equal sample size"
    top = shares["task"].idxmax()
    task, model = shares.loc[top, "task"], shares.loc[top, "model"]
    if task > model:
        return f"reproduced: the task explains {task:.0%} of the variance of {top} (the model {model:.0%})"
    return (f"not reproduced: for every score the model explains more variance than the task "
            f"(largest task share {task:.0%}, for {top})")
