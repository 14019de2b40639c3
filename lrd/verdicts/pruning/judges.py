r"""The pruning claims' judges: each claim's :class:`~lrd.verdicts.result.Result` (``*_result``), and
its verdict written from it by :mod:`lrd.verdicts.wording.pruning` (``judge_*``).

Every result's ``facts`` hold, beside the judge's own rows: ``n_models`` (the units), ``margin``
(None without a non-superiority part), ``excluded`` (the (model, task) pairs left out as not above
measured chance), ``n_opposite`` (the tests ``p_against`` is Bonferroni-corrected over) and
``per_model_units`` (the pruned decoders of the per-item count; 0 without items).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from lrd.methods.pruning import MEASUREMENT_RULES
from lrd.verdicts.pruning.changes import DEFAULT_MARGIN, ModelChanges, model_level, per_model_holm
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.wording import pruning as wording
from lrd.verdicts.stats import PermutationTest, equivalence_sign_flip_test, mean_interval, sign_flip_test

__all__ = ["gfmi_only_result", "gfmi_median_result", "frenet_result", "nrs_result", "judge_pruning_gfmi_only",
           "judge_pruning_gfmi_median", "judge_pruning_frenet", "judge_pruning_nrs"]

_OTHERS = tuple(r for r in MEASUREMENT_RULES if r != "GFMI")


def _bonferroni(tests: Sequence[PermutationTest]) -> float:
    return min(1.0, len(tests) * min(t.p_value for t in tests))


def _non_superior(d: np.ndarray, margin: float) -> PermutationTest:
    return equivalence_sign_flip_test(d, margin, lower=-np.inf)


def _prepare(changes: pd.DataFrame, random: str) -> tuple[ModelChanges, list[tuple[str, str]]]:
    """Task-averaged changes and the (model, task) pairs left out as not above measured chance."""
    cube = model_level(changes, random=random)
    excluded = []
    if "informative" in changes and not changes["informative"].all():
        pairs = changes.loc[~changes["informative"].astype(bool), ["model", "task"]].drop_duplicates()
        excluded = [(m, t) for m, t in pairs.itertuples(index=False)]
    return cube, excluded


def _missing(claim: str, cube: ModelChanges, needs: Sequence[tuple[str, float]],
             excluded: list) -> Result | None:
    """A result of case ``"missing"`` when a needed (rule, budget) has no model left, else None."""
    lacking = [(r, f) for r, f in needs if len(cube.vs_random(r, f)) == 0]
    if not lacking:
        return None
    return Result(claim, "test", case="missing", facts={"lacking": lacking, "excluded": excluded})


def _common(claim: str, *, support: Sequence[PermutationTest], opposite: Sequence[PermutationTest],
            effect: np.ndarray, n: int, margin: float | None, excluded: list, alpha: float,
            p_holm: Sequence[float], **facts) -> Result:
    """The result of an intersection-union test: p the largest of ``support``'s, ``p_against``
    Bonferroni over ``opposite``, the effect's mean and interval, the per-model count."""
    per_model = (sum(x <= alpha for x in p_holm), len(p_holm)) if p_holm else None
    return Result(claim, "test", statistic=float(effect.mean()), p_value=max(t.p_value for t in support),
                  p_min=max(t.p_min for t in support), p_against=_bonferroni(opposite),
                  effect=float(effect.mean()), ci=mean_interval(effect) if len(effect) > 1 else None,
                  per_model=per_model, alpha=alpha,
                  facts={"n_models": n, "margin": margin, "excluded": excluded, "n_opposite": len(opposite),
                         "per_model_units": len(p_holm), **facts})


def gfmi_only_result(changes: pd.DataFrame, *, rule: str = "GFMI", others: Sequence[str] = _OTHERS,
                     budgets: Sequence[float] = (0.15, 0.20), margin: float = DEFAULT_MARGIN,
                     random: str = "random", alpha: float = ALPHA, items: pd.DataFrame | None = None,
                     chance: pd.DataFrame | None = None) -> Result:
    r"""The numbers of :func:`judge_pruning_gfmi_only`.

    Facts: ``rule``, ``budgets``, ``own`` (per budget: ``budget, mean, p`` of ``rule`` minus
    random), ``rest`` (per other rule and budget: ``rule, budget, mean, p`` of non-superiority),
    ``binding`` (the budget of the smaller mean); case ``"missing"`` with ``lacking``.
    """
    claim = "lrd.pruning_gfmi_only"
    cube, excluded = _prepare(changes, random)
    if (bad := _missing(claim, cube, [(r, b) for r in (rule, *others) for b in budgets], excluded)) is not None:
        return bad
    own = {b: cube.vs_random(rule, b) for b in budgets}
    rest = {(r, b): cube.vs_random(r, b) for r in others for b in budgets}
    beats = {b: sign_flip_test(d) for b, d in own.items()}
    below = {k: _non_superior(d, margin) for k, d in rest.items()}
    binding = min(own, key=lambda b: own[b].mean())
    return _common(claim, support=[*beats.values(), *below.values()],
                   opposite=[*(_non_superior(d, margin) for d in own.values()),
                             *(sign_flip_test(d) for d in rest.values())],
                   effect=own[binding], n=max(len(d) for d in own.values()), margin=margin, excluded=excluded,
                   alpha=alpha, p_holm=per_model_holm(items, [(rule, random, b) for b in budgets], chance=chance),
                   rule=rule, budgets=list(budgets), binding=binding,
                   own=[{"budget": b, "mean": float(own[b].mean()), "p": beats[b].p_value} for b in budgets],
                   rest=[{"rule": r, "budget": b, "mean": float(rest[r, b].mean()), "p": below[r, b].p_value}
                         for r, b in rest])


def gfmi_median_result(changes: pd.DataFrame, *, rule: str = "GFMI", others: Sequence[str] = _OTHERS,
                       budgets: Sequence[float] | None = None, random: str = "random", alpha: float = ALPHA,
                       items: pd.DataFrame | None = None, chance: pd.DataFrame | None = None) -> Result:
    r"""The numbers of :func:`judge_pruning_gfmi_median`.

    Facts: ``rule``, ``others``, ``budgets``, ``medians`` (per budget: ``budget, rule median,
    best`` (the other rule of highest median), ``best median``), ``largest_p``, ``binding`` (the
    (rule, budget) of the smallest lead) and ``binding_mean``; case ``"no budget"`` (no pruned
    model with an informative score) or ``"missing"`` with ``lacking``.
    """
    claim = "lrd.pruning_gfmi_median"
    cube, excluded = _prepare(changes, random)
    budgets = [float(b) for b in cube.fractions] if budgets is None else list(budgets)
    if not budgets:
        return Result(claim, "test", case="no budget", facts={"excluded": excluded})
    if (bad := _missing(claim, cube, [(r, b) for r in (rule, *others) for b in budgets], excluded)) is not None:
        return bad
    diffs = {(r, b): cube.versus(rule, r, b) for r in others for b in budgets}
    tests = {k: sign_flip_test(d) for k, d in diffs.items()}
    binding = min(diffs, key=lambda k: diffs[k].mean())
    med = {(r, b): cube.median_change(r, b) for r in (rule, *others) for b in budgets}
    best = {b: max(others, key=lambda r: med[r, b]) for b in budgets}
    return _common(claim, support=list(tests.values()), opposite=[sign_flip_test(-d) for d in diffs.values()],
                   effect=diffs[binding], n=max(len(d) for d in diffs.values()), margin=None, excluded=excluded,
                   alpha=alpha, p_holm=per_model_holm(items, [(rule, r, b) for r in others for b in budgets],
                                                      chance=chance),
                   rule=rule, others=list(others), budgets=budgets, binding=binding,
                   binding_mean=float(diffs[binding].mean()), largest_p=max(t.p_value for t in tests.values()),
                   medians=[{"budget": b, "rule median": med[rule, b], "best": best[b],
                             "best median": med[best[b], b]} for b in budgets])


def frenet_result(changes: pd.DataFrame, *, rule: str = "Frenet (velocity)", lightest: float | None = None,
                  margin: float = DEFAULT_MARGIN, random: str = "random", alpha: float = ALPHA,
                  items: pd.DataFrame | None = None, chance: pd.DataFrame | None = None) -> Result:
    r"""The numbers of :func:`judge_pruning_frenet`.

    Facts: ``rule``, ``lightest``, ``lightest_mean``, ``lightest_p`` (the sign-flip p there),
    ``rest`` (per heavier budget: ``budget, mean, p`` of non-superiority); case ``"no heavier
    budget"`` with ``budgets`` (no lightest and heavier budget to compare) or ``"missing"``.
    """
    claim = "lrd.pruning_frenet"
    cube, excluded = _prepare(changes, random)
    budgets = cube.budgets(rule)
    lightest = (min(budgets) if budgets else None) if lightest is None else lightest
    rest = [b for b in budgets if not np.isclose(b, lightest)]
    if lightest is None or not rest:
        return Result(claim, "test", case="no heavier budget", facts={"rule": rule, "budgets": budgets,
                                                                      "excluded": excluded})
    if (bad := _missing(claim, cube, [(rule, lightest)], excluded)) is not None:
        return bad
    d = {b: cube.vs_random(rule, b) for b in [lightest, *rest]}
    beats, below = sign_flip_test(d[lightest]), {b: _non_superior(d[b], margin) for b in rest}
    return _common(claim, support=[beats, *below.values()],
                   opposite=[_non_superior(d[lightest], margin), *(sign_flip_test(d[b]) for b in rest)],
                   effect=d[lightest], n=len(d[lightest]), margin=margin, excluded=excluded, alpha=alpha,
                   p_holm=per_model_holm(items, [(rule, random, lightest)], chance=chance),
                   rule=rule, lightest=lightest, lightest_mean=float(d[lightest].mean()), lightest_p=beats.p_value,
                   rest=[{"budget": b, "mean": float(d[b].mean()), "p": below[b].p_value} for b in rest])


def nrs_result(changes: pd.DataFrame, *, rule: str = "NRS", margin: float = DEFAULT_MARGIN, random: str = "random",
               alpha: float = ALPHA, items: pd.DataFrame | None = None,
               chance: pd.DataFrame | None = None) -> Result:
    r"""The numbers of :func:`judge_pruning_nrs`.

    Facts: ``rule``, ``budgets``, ``rows`` (per budget: ``budget, mean, p`` of non-superiority),
    ``binding`` (the budget of the largest mean); case ``"no budget"`` with ``rule``.
    """
    claim = "lrd.pruning_nrs"
    cube, excluded = _prepare(changes, random)
    budgets = cube.budgets(rule)
    if not budgets:
        return Result(claim, "test", case="no budget", facts={"rule": rule, "excluded": excluded})
    d = {b: cube.vs_random(rule, b) for b in budgets}
    below = {b: _non_superior(d[b], margin) for b in budgets}
    binding = max(budgets, key=lambda b: d[b].mean())
    return _common(claim, support=list(below.values()), opposite=[sign_flip_test(d[b]) for b in budgets],
                   effect=d[binding], n=max(len(x) for x in d.values()), margin=margin, excluded=excluded,
                   alpha=alpha, p_holm=per_model_holm(items, [(rule, random, b) for b in budgets], chance=chance,
                                                      margin=margin),
                   rule=rule, budgets=budgets, binding=binding,
                   rows=[{"budget": b, "mean": float(d[b].mean()), "p": below[b].p_value} for b in budgets])


def judge_pruning_gfmi_only(changes: pd.DataFrame, *, rule: str = "GFMI", others: Sequence[str] = _OTHERS,
                            budgets: Sequence[float] = (0.15, 0.20), margin: float = DEFAULT_MARGIN,
                            random: str = "random", alpha: float = ALPHA, items: pd.DataFrame | None = None,
                            chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_gfmi_only``: ``rule`` beats random at every one of ``budgets``, and no
    rule of ``others`` does.

    Intersection-union test, :math:`p = \max` of: the sign-flip p-value of :math:`\bar D_{\text{GFMI},b} > 0`
    at each budget :math:`b`, and the non-superiority p-value of :math:`\bar D_{r,b} < m` for each
    other measurement rule :math:`r` and budget. ``p_against`` (Bonferroni): GFMI shown not to beat
    random by :math:`m` at some budget, or another rule shown to beat random. Unit: the model.
    Paper: abstract ("GFMI is the only measurement-guided rule that beats Random at the 15% and
    20% budgets"). With ``items`` (pruned decoders' per-item outcomes) and ``chance``, the evidence
    per model: in how many decoders GFMI beats random at every one of ``budgets`` over their test
    items (:func:`rule_item_tests`; the other rules' part, an absence, has no per-model test).
    """
    return wording.gfmi_only(gfmi_only_result(changes, rule=rule, others=others, budgets=budgets, margin=margin,
                                              random=random, alpha=alpha, items=items, chance=chance))


def judge_pruning_gfmi_median(changes: pd.DataFrame, *, rule: str = "GFMI", others: Sequence[str] = _OTHERS,
                              budgets: Sequence[float] | None = None, random: str = "random",
                              alpha: float = ALPHA, items: pd.DataFrame | None = None,
                              chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_gfmi_median``: ``rule`` prunes better than each rule of ``others`` at every budget.

    For each other rule :math:`r` and budget :math:`b`, the per-model difference of changes
    :math:`\bar\Delta_{m,\text{GFMI},b} - \bar\Delta_{m,r,b}` (tasks averaged) by an exact
    sign-flip test over models; intersection-union, :math:`p = \max` over rules and budgets.
    ``p_against`` (Bonferroni): some other rule better beyond chance somewhere. The paper compares
    median changes over model-task pairs; with the model as unit we test the paired difference
    (our reconstruction; medians over models are shown beside it). Paper: abstract ("has the
    best median change at every budget"), against the other measurement-guided rules.
    """
    return wording.gfmi_median(gfmi_median_result(changes, rule=rule, others=others, budgets=budgets, random=random,
                                                  alpha=alpha, items=items, chance=chance))


def judge_pruning_frenet(changes: pd.DataFrame, *, rule: str = "Frenet (velocity)", lightest: float | None = None,
                         margin: float = DEFAULT_MARGIN, random: str = "random", alpha: float = ALPHA,
                         items: pd.DataFrame | None = None, chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_frenet``: ``rule`` beats random at the lightest budget and at no other.

    Intersection-union, :math:`p = \max` of the sign-flip p-value of :math:`\bar D_{\text{Frenet},b_0} > 0`
    at the lightest budget :math:`b_0` and the non-superiority p-values of
    :math:`\bar D_{\text{Frenet},b} < m` at every other budget. ``p_against`` (Bonferroni):
    Frenet shown not to beat random by :math:`m` at :math:`b_0`, or shown to beat random at
    another budget. Unit: the model. Paper: abstract ("Frenet is effective only at the lightest
    budget").
    """
    return wording.frenet(frenet_result(changes, rule=rule, lightest=lightest, margin=margin, random=random,
                                        alpha=alpha, items=items, chance=chance))


def judge_pruning_nrs(changes: pd.DataFrame, *, rule: str = "NRS", margin: float = DEFAULT_MARGIN,
                      random: str = "random", alpha: float = ALPHA, items: pd.DataFrame | None = None,
                      chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_nrs``: ``rule`` does not beat random at any budget (NRS does not transfer to pruning).

    A claim of absence: non-superiority at every budget, :math:`p = \max_b` of the sign-flip
    p-values of :math:`m - D_{\text{NRS},b}` (mean advantage over random below :math:`m`).
    ``p_against`` (Bonferroni over budgets): NRS beats random beyond chance at some budget. Unit:
    the model. Paper: abstract ("NRS does not transfer from model selection to pruning").
    """
    return wording.nrs(nrs_result(changes, rule=rule, margin=margin, random=random, alpha=alpha, items=items,
                                  chance=chance))
