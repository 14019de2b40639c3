"""The sentences of the LRD-families verdicts (:mod:`lrd.verdicts.families`), written from their results.

One function per judge, each turning the judge's :class:`~lrd.verdicts.result.Result` into its
:class:`~lrd.verdicts.record.Verdict` (branching on ``r.case``), and the words of the families'
null models (:mod:`lrd.verdicts.families.nulls`). Numbers come from the result; nothing here
computes a statistic.
"""

from __future__ import annotations

from collections.abc import Mapping

from lrd.verdicts.record import Verdict, holm_over
from lrd.verdicts.result import Result
from lrd.verdicts.stats import PermutationTest

__all__ = ["architecture", "final_layer", "task", "complementarity", "architecture_null", "final_layer_null",
           "task_null", "complementarity_null"]


def _exactness(test: Mapping) -> str:
    return "exact" if test["exact"] else "Monte Carlo"


def _describe(test: Mapping, what: str) -> str:
    """:meth:`lrd.verdicts.stats.PermutationTest.describe` of a test kept as a dict."""
    return PermutationTest(**test).describe(what)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _panel(counts: Mapping[str, int]) -> str:
    return " and ".join(_plural(n, g) for g, n in counts.items())


def _not_two_kinds(r: Result) -> Verdict:
    return r.verdict(f"the panel has {_panel(r.facts['counts'])}: the test needs encoders and decoders",
                     note=r.facts["note"])


# --- lrd.architecture, lrd.final_layer ------------------------------------------------------------

def architecture(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.families.architecture_result`'s numbers."""
    if r.case == "not two kinds":
        return _not_two_kinds(r)
    f, test = r.facts, r.facts["test"]
    counts, first = f["counts"], next(iter(f["counts"]))
    evidence = (f"{f['top']}, the best of {f['n_measures']} LRD scores, separates the {_panel(counts)} on "
                f"{test['statistic']} of {f['n_tasks']} tasks; {_exactness(test)} p = {test['p_value']:.2g} over the "
                f"{test['n_permutations']} choices of which models are {first}s")
    if test["p_min"] > r.alpha:
        evidence += f" (with {_panel(counts)} no result can have p below {test['p_min']:.2g})"
    return r.verdict(evidence, test=_describe(test, f"choices of the {first}s (unit: model)"), effect_format="{:.0%}",
                     effect_label=f"share of tasks on which the best LRD score separates the kinds ({f['top']})",
                     reconstruction="mean velocity, mean curvature, mean NRS and mean GFMI as model-level scores "
                                    "(the paper's text defines d_0L only); NRS and GFMI are reconstructions",
                     note=f["note"])


def final_layer(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.families.final_layer_result`'s numbers."""
    if r.case == "not two kinds":
        return _not_two_kinds(r)
    f, more, swap = r.facts, r.facts["more"], r.facts["swap"]
    measures, final = f["measures"], f["final"]
    evidence = (f"the best LRD score ({f['top']}) separates the {_panel(f['counts'])} on {f['top_count']} of "
                f"{f['n_tasks']} tasks, the best final-layer statistic ({f['final_top']}) on {f['final_top_count']}: "
                f"difference {more['statistic']:+d}; kinds relabelled over {more['n_permutations']} choices: "
                f"{_exactness(more)} p = {more['p_value']:.2g}; the {len(measures) + len(final)} measures relabelled "
                f"between the two sets over {swap['n']} splits: p = {swap['greater']:.2g}")
    if r.p_min > r.alpha:
        evidence += f" (no result on this design can have p below {r.p_min:.2g})"
    kinds = ('choices of the ' + next(iter(f['counts'])) + 's, LRD and final-layer scores relabelled jointly '
             '(unit: model)')
    return r.verdict(evidence,
                     test=(f"intersection-union (p = max) of {_describe(more, kinds)} "
                           f"and an exact test relabelling which {len(measures)} of the {len(measures) + len(final)} "
                           f"measures are LRD scores ({swap['n']} splits: a best of {len(measures)} against a best of "
                           f"{len(final)} gains nothing by selection)"),
                     against="final-layer statistics separate the kinds on more tasks than LRD scores (both tests, "
                             "other tail)",
                     effect_format="{:+.0%}",
                     effect_label="share of tasks separated: best LRD score minus best final-layer statistic",
                     reconstruction="'not apparent from the final layer' tested as a difference of separation counts "
                                    f"against the final-layer statistics {', '.join(final)}; the paper names no test",
                     note=f["note"])


# --- lrd.task ----------------------------------------------------------------------------------------

def task(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.families.task_result`'s numbers."""
    f = r.facts
    word = f["word"]
    if r.case == "one task":
        return r.verdict(f"only {_plural(f['n_tasks'], word)} of equal sample size: the test needs two")
    if r.case == "final missing":
        return r.verdict(f"the table lacks the final-layer statistics {', '.join(f['missing'])}: the "
                         f"{word} effect beyond the final layer cannot be judged against them")
    n_models, n_tasks, final = f["n_models"], f["n_tasks"], f["final"]
    shown = (f"over {_plural(n_models, 'model')} x {_plural(n_tasks, word)}"
             + (f" of {f['n_texts']} texts" if f["n_texts"] is not None else "")
             + f", the {word} explains {f['plain_share']:.0%} of the within-model variance of {f['plain_top']} "
               f"(expected: different datasets differ; not tested)")
    if r.case == "no residual df":
        return r.verdict(shown + f"; {_plural(n_models, 'model')} x {_plural(n_tasks, word)} leave "
                                 f"no residual degree of freedom for the {word} beyond the "
                                 f"{len(final)} final-layer statistics ({', '.join(final)})")
    beyond = f["beyond"]
    evidence = (f"{shown}; with model effects and the final layer's {len(final)} statistics ({', '.join(final)}) "
                f"regressed out, the {word} explains {beyond['statistic']:.0%} of what is left of {f['residual_top']}; "
                f"{_exactness(beyond)} p = {beyond['p_value']:.2g}")
    if beyond["p_min"] > r.alpha:
        evidence += f" (no result on this panel can have p below {beyond['p_min']:.2g})"
    note = ("Frenet scores (d_0L, velocity, curvature) are left out: their distances scale with the rank r that each "
            "task's final layer fixes")
    if f["rank_share"] is not None:
        note += f" (the {word} explains {f['rank_share']:.0%} of r's within-model variance here)"
    if word == "dataset":
        note += ("; one dataset per task type (or no types given): a dataset difference is not shown to be a "
                 "task-type difference")
    if f["group_hits"] is not None:
        hits, n = f["group_hits"]
        note += (f"; per model, the {word}s' scores differ beyond the sampling of texts in {hits} of "
                 f"{_plural(n, 'model')} ({holm_over(n)}; expected of different datasets, "
                 f"not part of the verdict)")
    return r.verdict(evidence,
                     test=_describe(beyond, f"shuffles of the residuals after model effects and {', '.join(final)} "
                                            f"between each model's {word}s (unit: model; Kennedy's procedure)"),
                     effect_format="{:.0%}",
                     effect_label=(f"{word}'s share of the within-model variance left after the final layer's "
                                   f"statistics, best of {', '.join(f['measures'])} (about 1/{n_models} by chance)"),
                     reconstruction=("mean NRS and mean GFMI as model-level scores, themselves reconstructions; "
                                     "'not apparent from final-layer representations alone' as a "
                                     f"{word} effect left after regressing each score on model effects and the final "
                                     f"layer's statistics ({', '.join(final)}; the paper names none and states no "
                                     f"test); the {word} effect alone is not tested (known before any data)"),
                     note=note + ".")


# --- lrd.complementarity -----------------------------------------------------------------------------

def complementarity(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.families.complementarity_result`'s numbers."""
    if r.case == "no pairs":
        return r.verdict("no per-layer curves were correlated")
    if r.case == "no complete model":
        return r.verdict("no model has a correlation for every pair of families")
    f = r.facts
    n, pairs, margin, corrected = f["n_models"], f["pairs"], f["margin"], f["corrected"]
    listed = ", ".join(f"{p} {m:.2f}" for p, m in zip(pairs, f["means"]))
    per_model_label = (f"models whose every pair of families stays below {margin:g} (mean |rho| "
                       + ("corrected for the curves' noise " if corrected else "")
                       + f"over their tasks as replicates, one-sided t-test per pair, intersection-union "
                         f"over the {len(pairs)} pairs; {holm_over(f['n_by_model'])})") if r.per_model else None
    what = ("mean |Spearman| across layers, corrected for the curves' noise over the texts (split-group "
            "reliability),") if corrected else "mean |Spearman| across layers (uncorrected for the curves' noise),"
    evidence = (f"{what} over {_plural(n, 'model')}: {listed}; test of: every pair below "
                f"|rho| {margin:g} (not strongly correlated): p = {r.p_value:.2g} (largest of {len(pairs)} sign-flip "
                f"tests)")
    if r.p_min > r.alpha:
        evidence += f" (with {_plural(n, 'model')} no result can have p below {r.p_min:.2g})"
    if f["skipped"]:
        evidence += f"; {f['skipped']} of {f['n_correlations']} correlations skipped (constant curve)"
    if f.get("dropped"):
        evidence += (f"; {_plural(len(f['dropped']), 'model')} left out of the test over models, no defined "
                     f"correlation for some pair in any task (a constant curve): {', '.join(f['dropped'])} "
                     f"(counted in the per-model count as not below the margin)")
    return r.verdict(evidence, per_model_label=per_model_label,
                     test=f"intersection-union of {len(pairs)} one-sided equivalence sign-flip tests (margin "
                          f"{margin:g}, unit: model)",
                     against=f"some pair of families has mean |rho| above {margin:g} beyond chance (sign-flip "
                             f"min-p test over the {len(pairs)} pairs): strongly correlated",
                     effect_format="{:.2f}",
                     effect_label=(f"largest mean |Spearman| between two families' layer curves ({f['worst']})"
                                   + (", noise-corrected" if corrected else "")),
                     reconstruction=f"'complementary rather than redundant' read as 'not strongly correlated': no pair "
                                    f"of per-layer curves with |Spearman| >= {margin:g} (velocity, adjusted NRS, GFMI "
                                    "at transition midpoints); the paper gives no measurement, and that each family "
                                    "adds information the others lack (complementarity proper) is not tested"
                                    + ("; the correction for noise (split-group reliability, Spearman-Brown, "
                                       "Spearman's attenuation formula) is ours" if corrected else ""),
                     note="NRS and GFMI are our reconstructions of the paper's families.")


# --- the null models' designs (lrd.verdicts.families.nulls) --------------------------------------------

def architecture_null(shift: float) -> dict[str, str]:
    """The designs of ``ARCHITECTURE_NULL`` in words (``shift``: the power simulation's kind effect, noise sd)."""
    return {"panel": "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} tasks, 5 LRD scores i.i.d. "
                     "(kinds exchangeable)",
            "effect_panel": "the same: kinds exchangeable are also the edge of 'separates' (a separation of 0+)",
            "power_panel": f"the same design, every LRD score {shift:g} noise sd higher in decoders (assumed: the "
                           f"paper reports no size)"}


def final_layer_null() -> dict[str, str]:
    """The designs of ``FINAL_LAYER_NULL`` in words."""
    return {"panel": "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} tasks, 5 LRD and 2 final-layer "
                     "scores, every one shifted alike by kind (1.5 noise sd; the measures exchangeable)",
            "effect_panel": "the same: LRD as informative as the final layer is the edge where 'contradicted' must "
                            "stay rare",
            "power_panel": "the same design, the LRD scores 1.5 noise sd higher in decoders, the final-layer scores "
                           "not shifted (the claim at its strongest; the paper reports no size)"}


def task_null() -> dict[str, str]:
    """The designs of ``TASK_NULL`` in words."""
    return {"panel": "{n_encoders} encoders and {n_decoders} decoders x {n_tasks} datasets of equal size: the "
                     "datasets move the final layer's 4 statistics (rank, mean cosine, kNN cosine, cluster share), "
                     "the 2 rank-free LRD scores follow them (a model effect, a mix of the four, noise): dataset "
                     "differences the final layer already shows",
            "effect_panel": "the same: dataset differences exactly those the final layer shows are also the edge of "
                            "'beyond it'",
            "power_panel": "the same design, each rank-free LRD score also with dataset effects of its own (sd 1, "
                           "twice the residual noise; assumed: the paper reports no size)"}


def complementarity_null(margin: float, rho: float) -> dict[str, str]:
    """The designs of ``COMPLEMENTARITY_NULL`` in words (``margin``: the judge's; ``rho``: the power
    simulation's mean |rho|)."""
    return {"panel": "{n_models} models x {n_tasks} tasks x 12 transitions; Frenet and NRS curves at mean |rho| = "
                     f"{margin:g} (the margin), GFMI unrelated",
            "effect_panel": "the same: |rho| exactly at the margin is also the edge of 'not strongly correlated'",
            "power_panel": f"the same design, Frenet and NRS curves at mean |rho| = {rho} (related but far from "
                           f"strongly correlated; assumed: the paper gives no measurement), GFMI unrelated"}
