"""The judges of ``lrd.architecture`` and ``lrd.final_layer``: do LRD scores separate encoders from decoders,
and on more tasks than the final layer's statistics? (Jiang, Yang, Tam 2026, abstract, Sec. 1.)

Each ``*_result`` function runs the test and returns a :class:`~lrd.verdicts.result.Result`
(numbers only); each ``*_verdict`` judge writes it into a verdict through
:mod:`lrd.verdicts.wording.families`.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.families.measures import FINAL_LAYER_SCORES, LRD_SCORES
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import separation_counts, separation_test, separation_tests
from lrd.verdicts.wording import families as wording

__all__ = ["kind_counts", "architecture_result", "architecture_verdict", "final_layer_result", "final_layer_verdict",
           "measure_relabelling_test"]


def kind_counts(scores: pd.DataFrame, group: str, unit: str) -> dict[str, int]:
    """Number of units of each group ("encoder" before "decoder").

    >>> kind_counts(pd.DataFrame({"model": list("abca"), "kind": ["encoder", "decoder", "decoder", "encoder"]}),
    ...             "kind", "model")
    {'encoder': 1, 'decoder': 2}
    """
    first_rows = np.unique(pd.factorize(scores[unit])[0], return_index=True)[1]
    labels, counts = np.unique(scores[group].to_numpy()[first_rows].astype(str), return_counts=True)
    return dict(sorted(zip(labels.tolist(), counts.tolist()), reverse=True))


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
    return wording.architecture(architecture_result(scores, measures, group=group, within=within, unit=unit,
                                                    alpha=alpha, note=note))


def architecture_result(scores: pd.DataFrame, measures: Sequence[str] = LRD_SCORES, *, group: str = "kind",
                        within: str = "task", unit: str = "model", alpha: float = ALPHA,
                        note: str | None = None) -> Result:
    """The numbers of :func:`architecture_verdict`: its test on ``scores``, no sentence.

    ``case`` is ``"tested"``, or ``"not two kinds"`` (facts: ``counts``, the units of each kind).
    Facts of a test: ``counts``, ``n_measures``, ``n_tasks``, ``top`` (the best score),
    ``test`` (the :class:`~lrd.verdicts.stats.PermutationTest` as a dict) and ``note`` (the caller's).

    Examples
    --------
    Two encoders below two decoders on 3 tasks: every task separated, p = 2/6 (equal groups).

    >>> df = pd.DataFrame({"model": np.repeat(list("abcd"), 3), "kind": np.repeat(["encoder", "decoder"], 6),
    ...                    "task": ["x", "y", "z"] * 4, "s": np.repeat([0.0, 1.0, 2.0, 3.0], 3)})
    >>> r = architecture_result(df, ["s"])
    >>> r.statistic, r.effect, r.p_value == r.p_min == 1 / 3
    (3.0, 1.0, True)
    """
    claim = "lrd.architecture"
    counts = kind_counts(scores, group, unit)
    if len(counts) != 2:
        return Result(claim, "test", case="not two kinds", facts={"counts": counts, "note": note})
    measures = list(measures)
    n_tasks = scores[within].nunique()
    test = separation_test(scores, measures, group=group, within=within, unit=unit)
    top = separation_counts(scores, measures, group=group, within=within, unit=unit).idxmax()
    return Result(claim, "test", statistic=float(test.statistic), p_value=test.p_value, p_min=test.p_min,
                  effect=test.statistic / n_tasks, alpha=alpha,
                  facts={"counts": counts, "n_measures": len(measures), "n_tasks": n_tasks, "top": top,
                         "test": dataclasses.asdict(test), "note": note})


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
    return wording.final_layer(final_layer_result(scores, measures, final, group=group, within=within, unit=unit,
                                                  alpha=alpha, note=note))


def final_layer_result(scores: pd.DataFrame, measures: Sequence[str] = LRD_SCORES,
                       final: Sequence[str] = FINAL_LAYER_SCORES, *, group: str = "kind", within: str = "task",
                       unit: str = "model", alpha: float = ALPHA, note: str | None = None) -> Result:
    """The numbers of :func:`final_layer_verdict`: both tests on ``scores``, no sentence.

    ``case`` is ``"tested"`` or ``"not two kinds"`` (as :func:`architecture_result`). Facts of a
    test: ``counts``, ``n_tasks``, ``measures``, ``final``, ``top`` and ``final_top`` (the best of
    each set) with their separation counts ``top_count`` and ``final_top_count``, ``more`` (the
    kinds' relabelling test, as a dict), ``swap`` (:func:`measure_relabelling_test`) and ``note``.

    Examples
    --------
    The LRD score separates the one task and the final-layer one does not: D = 1, but 2 against 2
    kinds and 2 measures leave p >= 1/2.

    >>> df = pd.DataFrame({"model": list("abcd"), "kind": ["encoder"] * 2 + ["decoder"] * 2, "task": "t",
    ...                    "lrd": [0.0, 1.0, 2.0, 3.0], "last": [0.0, 2.0, 1.0, 3.0]})
    >>> r = final_layer_result(df, ["lrd"], ["last"])
    >>> r.statistic, r.effect, r.p_min, r.facts["swap"]["n"]
    (1.0, 1.0, 0.5, 2)
    """
    claim = "lrd.final_layer"
    counts = kind_counts(scores, group, unit)
    if len(counts) != 2:
        return Result(claim, "test", case="not two kinds", facts={"counts": counts, "note": note})
    measures, final = list(measures), list(final)
    n_tasks = scores[within].nunique()
    tails = separation_tests(scores, measures, baseline=final, group=group, within=within, unit=unit)
    more, fewer = tails["greater"], tails["less"]
    table = separation_counts(scores, measures + final, group=group, within=within, unit=unit)
    top, ftop = table[measures].idxmax(), table[final].idxmax()
    swap = measure_relabelling_test(table, measures, final)
    p_value, p_against = max(more.p_value, swap["greater"]), max(fewer.p_value, swap["less"])
    p_min = max(more.p_min, swap["p_min"])
    return Result(claim, "test", statistic=float(more.statistic), p_value=p_value, p_min=p_min, p_against=p_against,
                  effect=more.statistic / n_tasks, alpha=alpha,
                  facts={"counts": counts, "n_tasks": n_tasks, "measures": measures, "final": final, "top": top,
                         "final_top": ftop, "top_count": table[top], "final_top_count": table[ftop],
                         "more": dataclasses.asdict(more), "swap": swap, "note": note})


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


