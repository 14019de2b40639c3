"""The sentences of the pruning verdicts (:mod:`lrd.verdicts.pruning`), written from their results.

One function per judge (``gfmi_only``, ``gfmi_median``, ``frenet``, ``nrs``) turns the judge's
:class:`~lrd.verdicts.result.Result` into its :class:`~lrd.verdicts.record.Verdict`; the null
models' designs in words are :func:`null_panels`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from lrd.verdicts.record import Verdict, holm_over
from lrd.verdicts.result import Result

__all__ = ["PRUNING_RECONSTRUCTION", "gfmi_only", "gfmi_median", "frenet", "nrs", "null_panels"]

PRUNING_RECONSTRUCTION = (
    "the prune rules are our reconstruction (lrd.methods.pruning.PRUNE_RULES; Frenet removes the blocks of smallest "
    "Grassmann velocity, NRS those of highest chance-adjusted retention, GFMI those of smallest |GFMI change|), "
    "as are the budgets (5, 10, 15, 20% of the blocks; the paper's digest names 15% and 20%), the rounding "
    "k = max(1, floor(pL + 1/2)) and the model-level difference (tasks and random seeds averaged)")


def budget(f: float) -> str:
    """A budget as a percentage: ``budget(0.15) == '15%'``."""
    return f"{f:.0%}"


def count(n: int, plural: str) -> str:
    """``"1 model"``, ``"3 models"``."""
    return f"{n} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"


def excluded_text(pairs: Sequence[tuple[str, str]]) -> str:
    """The clause naming the (model, task) pairs left out as not above measured chance ("" for none)."""
    if not pairs:
        return ""
    return "; left out as not above measured chance: " + ", ".join(f"{m}/{t}" for m, t in pairs)


def _untestable(r: Result, why: str) -> Verdict:
    return r.verdict(why + excluded_text(r.facts["excluded"]), reconstruction=PRUNING_RECONSTRUCTION)


def _missing(r: Result) -> Verdict:
    return _untestable(r, "no pruned model with an informative score for "
                       + ", ".join(f"{rule} at {budget(f)}" for rule, f in r.facts["lacking"]))


def _common(r: Result, evidence: str, *, test: str, against: str, effect_label: str, per_model_label: str) -> Verdict:
    f = r.facts
    margin_text = f"; non-superiority margin m = {f['margin']:+.3f} of the score" if f["margin"] is not None else ""
    per_model = {} if r.per_model is None else {"per_model_label": (
        f"pruned decoders in which {per_model_label}, over their multiple-choice test items (crossed-factor t-test "
        f"per model, random's orders as the second factor; largest p over the comparisons; "
        f"{holm_over(f['per_model_units'], 'decoder', ' above measured chance')}; encoders' scores have no items)")}
    return r.verdict(evidence + excluded_text(f["excluded"]), test=test + f" (units: {count(f['n_models'], 'models')})",
                     against=against + f" (Bonferroni over {f['n_opposite']} tests)", effect_label=effect_label,
                     effect_format="{:+.3f}", reconstruction=PRUNING_RECONSTRUCTION + margin_text, **per_model)


def gfmi_only(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.pruning.gfmi_only_result`."""
    if r.case == "missing":
        return _missing(r)
    f = r.facts
    rule, budgets, margin = f["rule"], f["budgets"], f["margin"]
    evidence = (f"{rule} minus random, mean over {count(f['n_models'], 'models')}: "
                + ", ".join(f"{budget(o['budget'])} {o['mean']:+.3f} (p = {o['p']:.2g})" for o in f["own"])
                + "; the other measurement rules minus random: "
                + ", ".join(f"{o['rule']} at {budget(o['budget'])} {o['mean']:+.3f} (below +{margin:.2f}: p = "
                            f"{o['p']:.2g})" for o in f["rest"]))
    return _common(r, evidence,
                   test=(f"intersection-union of exact sign-flip tests ({rule} beats random at "
                         f"{', '.join(map(budget, budgets))}) and non-superiority sign-flip tests (the other rules "
                         f"do not)"),
                   against=f"{rule} shown not to beat random by {margin:.2f} at some budget, or another rule shown to",
                   effect_label=f"{rule} minus random at {budget(f['binding'])} (its weaker budget), mean over models",
                   per_model_label=f"{rule} beats random at {' and '.join(map(budget, budgets))}")


def gfmi_median(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.pruning.gfmi_median_result`."""
    if r.case == "no budget":
        return _untestable(r, "no pruned model with an informative score")
    if r.case == "missing":
        return _missing(r)
    f = r.facts
    rule, others, budgets = f["rule"], f["others"], f["budgets"]
    (worst, at) = f["binding"]
    evidence = (f"median change over {count(f['n_models'], 'models')}, {rule} against the best other rule: "
                + "; ".join(f"{budget(o['budget'])} {o['rule median']:+.3f} vs {o['best']} {o['best median']:+.3f}"
                            for o in f["medians"])
                + f"; paired tests of {rule} minus each other rule over models: largest p = "
                + f"{f['largest_p']:.2g} ({worst} at {budget(at)}: mean {f['binding_mean']:+.3f})")
    return _common(r, evidence,
                   test=(f"intersection-union of exact sign-flip tests of {rule} minus each of {', '.join(others)} "
                         f"at each of {len(budgets)} budgets"),
                   against="another measurement rule prunes better than GFMI at some budget",
                   effect_label=f"{rule} minus {worst} at {budget(at)} (the smallest lead), mean over models",
                   per_model_label=f"{rule} is above each of {', '.join(others)} at every budget")


def frenet(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.pruning.frenet_result`."""
    f = r.facts
    if r.case == "no heavier budget":
        return _untestable(r, f"{f['rule']} needs the lightest budget and a heavier one with an informative score, "
                              f"got budgets {[budget(b) for b in f['budgets']]}")
    if r.case == "missing":
        return _missing(r)
    rule, lightest, margin = f["rule"], f["lightest"], f["margin"]
    heavier = [o["budget"] for o in f["rest"]]
    evidence = (f"{rule} minus random, mean over {count(f['n_models'], 'models')}: at the lightest budget "
                f"{budget(lightest)} {f['lightest_mean']:+.3f} (p = {f['lightest_p']:.2g}); at "
                + ", ".join(f"{budget(o['budget'])} {o['mean']:+.3f} (below +{margin:.2f}: p = {o['p']:.2g})"
                            for o in f["rest"]))
    return _common(r, evidence,
                   test=(f"intersection-union of an exact sign-flip test ({rule} beats random at {budget(lightest)}) "
                         f"and non-superiority sign-flip tests at {', '.join(map(budget, heavier))}"),
                   against=(f"{rule} shown not to beat random by {margin:.2f} at {budget(lightest)}, or shown to beat "
                            f"it at a heavier budget"),
                   effect_label=f"{rule} minus random at {budget(lightest)}, mean over models",
                   per_model_label=(f"{rule} beats random at {budget(lightest)} (the heavier budgets' part, an "
                                    f"absence, has no per-model test)"))


def nrs(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.pruning.nrs_result`."""
    f = r.facts
    if r.case == "no budget":
        return _untestable(r, f"no pruned model with an informative score for {f['rule']}")
    rule, margin = f["rule"], f["margin"]
    evidence = (f"{rule} minus random, mean over {count(f['n_models'], 'models')}: "
                + ", ".join(f"{budget(o['budget'])} {o['mean']:+.3f} (below +{margin:.2f}: p = {o['p']:.2g})"
                            for o in f["rows"]))
    budgets = ", ".join(map(budget, f["budgets"]))
    return _common(r, evidence, test=f"intersection-union of non-superiority sign-flip tests at {budgets}",
                   against=f"{rule} beats random at some budget",
                   effect_label=f"{rule} minus random at {budget(f['binding'])} (its best budget), mean over models",
                   per_model_label=(f"{rule} is shown not to beat random by {margin:.2f} or more at every budget "
                                    f"(non-superiority)"))


#: How the power simulations' assumed effect is labelled.
_NO_SIZE = "assumed: the paper's sizes are not in our digest"
_LARGER = ("restated, larger than the default book's: its pruned models are too few to reach p <= 0.05 (its "
           "verdicts say 'not testable', power 0)")


def null_panels(*, n_tasks: int, seeds: int, margin: float, lead: float) -> dict[str, dict[str, str]]:
    """The pruning null models' designs in words, per claim: ``panel``, ``effect_panel``,
    ``power_panel`` and ``design_label`` (``{n_models}`` left to format), for ``n_tasks`` tasks,
    random's ``seeds``, the non-superiority ``margin`` and the power simulations' ``lead``."""
    return {
        "lrd.pruning_gfmi_only": dict(
            panel=f"{{n_models}} models x {n_tasks} tasks, random with {seeds} seeds; one part of the claim at its "
                  f"null boundary (drawn): GFMI no different from random at 15% or 20%, or Frenet or NRS beating it "
                  f"by exactly the margin +{margin}; the other parts far from theirs",
            effect_panel=f"the claim at its edge: GFMI beating random by exactly the margin +{margin} at 15% and 20%, "
                         f"Frenet and NRS no different from random there",
            power_panel=f"the same design, GFMI ahead of random by {lead:g} at 15% and 20% ({_NO_SIZE}), Frenet and "
                        f"NRS at random's level at every budget", design_label=_LARGER),
        "lrd.pruning_gfmi_median": dict(
            panel=f"{{n_models}} models x {n_tasks} tasks; GFMI exchangeable with one other rule at one budget "
                  f"(drawn), far above both elsewhere",
            effect_panel="the claim at its edge: GFMI exchangeable with the other rules at every budget",
            power_panel=f"the same design, GFMI ahead of random by {lead:g} at every budget ({_NO_SIZE}), Frenet and "
                        f"NRS at random's level", design_label=_LARGER),
        "lrd.pruning_frenet": dict(
            panel=f"{{n_models}} models x {n_tasks} tasks; half the panels Frenet no different from random at 5%, "
                  f"half far above it at 5% and at the margin +{margin} at 10-20%",
            effect_panel=f"the claim at its edge: Frenet beating random by exactly the margin +{margin} at 5%, no "
                         f"different from it at 10-20%",
            power_panel=f"the same design, Frenet ahead of random by {lead:g} at 5% ({_NO_SIZE}), at random's level "
                        f"at 10-20%", design_label=_LARGER),
        "lrd.pruning_nrs": dict(
            panel=f"{{n_models}} models x {n_tasks} tasks; NRS beats random by exactly the margin +{margin} at one "
                  f"budget (drawn), far below it at the others",
            effect_panel="the claim at its edge: NRS no different from random at every budget",
            power_panel="the same design, NRS at random's level at every budget: the claim as the paper states it",
            design_label=_LARGER),
    }
