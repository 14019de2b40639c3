"""The sentences of the mid-layer chapter's verdicts (:mod:`lrd.verdicts.layer_choice`): one function
per judge, from its :class:`~lrd.verdicts.result.Result` to its :class:`~lrd.verdicts.record.Verdict`,
and the chapter's other words (the final-norm finding, the note on the panel's decoders, the labels
of its tables and the null models' designs in words).
"""

from __future__ import annotations

from lrd.verdicts.claims import SKEAN_GAIN_RANGE
from lrd.verdicts.record import Verdict, holm_over
from lrd.verdicts.result import Result

__all__ = ["STATES_NORMED", "STATES_RETURNED", "CHOSEN_ON_HALF", "gain", "valley", "metrics_track", "choice",
           "no_norm_comparison", "norm_change", "decoder_panel", "describe_design", "describe_valleys",
           "GAIN_NULL_PANEL", "GAIN_EFFECT_PANEL", "valley_null_panel", "VALLEY_EFFECT_PANEL", "valley_power_panel",
           "VALLEY_DESIGN_LABEL", "METRICS_TRACK_NULL_PANEL", "METRICS_TRACK_EFFECT_PANEL",
           "metrics_track_power_panel", "CHOICE_NULL_PANEL", "choice_effect_panel"]

#: The ``states`` column of the gain's tables: a decoder's layers through its final norm, or as
#: the model returns them.
STATES_NORMED = "through the final norm"
STATES_RETURNED = "as returned (no final norm)"
#: The columns of :func:`lrd.verdicts.layer_choice.cross_fitted_gain` naming each half's choice.
CHOSEN_ON_HALF = ("layer chosen on half 1", "layer chosen on half 2")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _models(n: int) -> str:
    return _count(n, "model")


def _shown(unit: str, x: float) -> str:
    """A left-out model's number, or why it has none (a relative gain over a last layer scoring 0)."""
    return "undefined (last layer 0)" if x != x else unit.format(x)


def _left_out(kinds: tuple[str, ...] | None, shown: str) -> str:
    """How a verdict names the models its scope leaves out (shown, never counted)."""
    if not shown:
        return ""
    kinds = " or ".join(f"{k}s" for k in kinds) if kinds else "in scope"
    return f"; left out by the book's scope rule (not {kinds}: contrastive sentence embedders; shown, not counted): {shown}"


def gain(r: Result) -> Verdict:
    """``skean.gain``'s verdict (:func:`lrd.verdicts.layer_choice.judge_gain`)."""
    f = r.facts
    often, relative, estimator, band, paper_low = f["often"], f["relative"], f["estimator"], f["band"], f["paper_low"]
    unit = "{:.0%}" if often == "share" else ("{:+.1%}" if relative else "{:+.3f}")
    out_words = _left_out(f["scope_kinds"], ", ".join(f"{m} {_shown(unit, x)}" for m, x in f["left_out"].items()))
    if r.case == "no model in scope":
        return r.verdict(f"no model of the claim's scope ({f['scope']}) in the panel" + out_words, note=f["note"])
    n, wins, mean = f["n_models"], f["wins"], r.effect
    where, verb = ((f"layers at {band[0]:.0%}-{band[1]:.0%} depth", "score") if estimator == "band"
                   else ("cross-fitted best intermediate layer", "scores"))
    if estimator == "band":
        states = f", {f['normed']} through the final norm"
    else:
        states = ", chosen on one half of each task's rows and scored on the other"
    if often == "share":
        evidence = (f"the {where} {verb} above the last layer in {mean:.0%} of a model's tasks (mean over "
                    f"{_models(n)} in the claim's scope{states}; in more than half for {wins} of {n})")
    else:
        evidence = (f"the {where} {verb} {mean:+.1%} relative to the last layer (mean over {_models(n)} in the "
                    f"claim's scope{states}; above the last for {wins} of {n}); paper: "
                    f"{SKEAN_GAIN_RANGE[0]:.0%}-{SKEAN_GAIN_RANGE[1]:.0%}" if relative else
                    f"the {where} {verb} {mean:+.3f} points above the last layer (mean over {_models(n)} in the "
                    f"claim's scope{states}; above the last for {wins} of {n}); paper: "
                    f"{SKEAN_GAIN_RANGE[0]:.0%}-{SKEAN_GAIN_RANGE[1]:.0%}")
    if f["crossed"] is not None:
        evidence += f"; the cross-fitted best intermediate layer (shown, not tested): {f['crossed']:+.1%}"
    per_shown = r.per_model
    if per_shown is not None:
        evidence += f"; shown in {per_shown[0]} of {per_shown[1]} models over their (task, half) replicates (Holm)"
    evidence += out_words
    if often == "share":
        against = "the chosen layers above the last in fewer than half of a model's tasks, on average (sign-flip test)"
        effect_label = f"mean share of a model's tasks where the {where} {verb} above the last"
    else:
        against = (f"mean {'relative ' if relative else ''}gain below the paper's lower end {paper_low:.0%}"
                   f"{'' if relative else ' (read in points)'} (sign-flip non-superiority test)")
        effect_label = (f"mean relative gain, {where} over the last" if relative
                        else f"mean gain in score points (of 1), {where} over the last")
    how = ("the paper's estimator: the mean score of the layers at "
           f"{band[0]:.0%}-{band[1]:.0%} depth (the nearest intermediate layer where none falls in it) against the "
           "last layer, through the final norm where the model has one (as the paper's truncated model scores them)"
           if estimator == "band" else
           "the book's alternative estimator: the best intermediate layer chosen on one half of each task's rows "
           "and scored on the other, and swapped, against the last layer on the same halves (as the model returns "
           "them)")
    reading = ("; 'often improving' read as the share of a model's tasks where the chosen layers beat the last, "
               "above one half (the book's alternative reading)" if often == "share" else
               "; 'often improving' read as the mean gain over models (the book's reading, not the paper's words)")
    return r.verdict(evidence,
                     per_model_label=("models of the claim's scope whose 40-60% band scores above the last layer over "
                                      "their (task, half) replicates (disjoint rows and fits; exact sign-flip test per "
                                      f"model, {holm_over(per_shown[1])})" if per_shown is not None else None),
                     test=f"exact one-sided sign-flip test over {_models(n)} (tasks averaged per model)",
                     against=against, effect_label=effect_label,
                     effect_format="{:.0%}" if often == "share" else ("{:+.1%}" if relative else "{:+.3f}"),
                     power_label=(f"if every model in the claim's scope gained the paper's {paper_low:.0%}, with the "
                                  f"spread across models observed here ({f['spread']:.1%}); exact sign-flip test, 4000 "
                                  "simulated panels" if r.power is not None else None),
                     reconstruction=how + "; "
                                    + ("relative to the model's task-mean score of the last layer" if relative else
                                       "in points of the model's task-mean score")
                                    + " (the paper's averaging over tasks is not specified beyond Fig. 1)" + reading,
                     note=f["note"])


def valley(r: Result) -> Verdict:
    """``skean.valley``'s verdict (:func:`lrd.verdicts.layer_choice.judge_valley`)."""
    f = r.facts
    short, margin, measurement, band = f["short"], f["margin"], f["measurement"], f["band"]
    note = "; ".join(x for x in (f["note"], f"left out, too few blocks for a mid band (at least 5): {', '.join(short)}"
                                 if short else None) if x) or None
    n_dec, n_enc = f["n_decoders"], f["n_encoders"]
    if r.case == "one kind":
        return r.verdict(f"the panel has {_count(n_dec, 'decoder')} and {_count(n_enc, 'encoder')}; the contrast "
                         "needs both kinds", note=note)
    if f["over_prompts"]:
        flat_test = f"equivalence within +-{margin} per encoder over its prompts (p = the largest)"
    else:
        flat_test = f"equivalence within +-{margin} over {_count(n_enc, 'encoder')} (sign flips)"
    (dec_lo, dec_hi), (enc_lo, enc_hi), shown = f["decoders"], f["encoders"], r.per_model
    evidence = (f"mid-band valley of the normalised {measurement}: decoders {dec_lo:+.3f} to {dec_hi:+.3f}, "
                f"encoders {enc_lo:+.3f} to {enc_hi:+.3f} ({_count(n_dec, 'decoder')}, "
                f"{_count(n_enc, 'encoder')})"
                + (f"; shown in {shown[0]} of {shown[1]} decoders over their prompts (Holm), encoders flat within "
                   f"+-{margin}: largest p {f['flat_p']:.2g}" if shown is not None else ""))
    return r.verdict(evidence,
                     test=f"intersection of a relabelling test of the kinds over {_models(f['n_models'])}, a sign-flip "
                          f"test over {_count(n_dec, 'decoder')} and an {flat_test} (p = the largest)",
                     against="encoders' valley deeper than decoders' (relabelling test)",
                     effect_label=f"mid-band valley, decoders minus encoders ({measurement})", effect_format="{:+.3f}",
                     power_label=(f"of the decoders' sign-flip test if every decoder's valley were {margin} (the "
                                  f"margin of 'flat'; the paper gives no depth), spread across decoders as observed "
                                  f"({f['spread']:.3f})" if r.power is not None else None),
                     per_model_label=("decoders whose mean valley over their prompts is above 0 (sign-flip test per "
                                      "model, Holm over the decoders)" if shown is not None else None),
                     reconstruction=f"the valley as the mid-band contrast: the mean of the blocks at depth below "
                                    f"{band[0]} and above {band[1]} minus the mean of those between (embeddings left "
                                    f"out), of the normalised prompt-entropy curve; 'flat' as within +-{margin} "
                                    "(the paper shows the curves, Fig. 2a, without a scalar or a tolerance)",
                     note=note)


def metrics_track(r: Result) -> Verdict:
    """``skean.metrics_track``'s verdict (:func:`lrd.verdicts.layer_choice.judge_metrics_track`)."""
    f = r.facts
    out_words = _left_out(f["scope_kinds"], ", ".join(f["left_out"]))
    if r.case == "no model in scope":
        return r.verdict(f"no model of the claim's scope ({f['scope']}) in the panel" + out_words, note=f["note"])
    if r.case == "no metric measured":
        return r.verdict(f"none of {f['directions']} is measured on every model in the claim's scope" + out_words,
                         note=f["note"])
    names = [f"{m} ({'+' if d > 0 else '-'})" for m, d in zip(f["metrics"], f["signs"])]
    n = f["n_models"]
    parts = [f"{nm} {mean:+.2f} (p = {p:.2g}, in the paper's direction for {agree})"
             for nm, mean, p, agree in zip(names, f["means"], f["p_values"], f["agree"])]
    evidence = (f"mean signed Spearman correlation with the score across layers over {_models(n)} in the "
                f"claim's scope: {'; '.join(parts)}{out_words}")
    return r.verdict(evidence,
                     test=(f"min-p sign-flip test over {_models(n)} (Westfall-Young, same flips for the {len(names)} "
                           f"metrics, correlations averaged over tasks per model); against: every metric reversed "
                           f"(intersection-union of one-sided sign-flip tests, p = max)"),
                     against="every tested metric goes against the paper's direction (sign-flip tests, p = max)",
                     effect_label=f"mean signed Spearman rho across layers, {names[f['best']]}",
                     effect_format="{:+.2f}",
                     reconstruction="Spearman correlation across layers with the mean of the two halves' scores, per "
                                    "task, averaged per model (the paper relates metrics and scores across layers "
                                    "without a stated statistic); signs from the paper: prompt entropy negative, DiME "
                                    "positive",
                     note=f["note"])


def choice(r: Result) -> Verdict:
    """``skean.choice``'s verdict (:func:`lrd.verdicts.layer_choice.judge_choice`)."""
    f = r.facts
    metric, relative = f["metric"], f["relative"]
    out_words = _left_out(f["scope_kinds"], ", ".join(f"{m} {_shown('{:+.1%}', g)}" for m, g in f["left_out"].items()))
    if r.case == "no model in scope":
        return r.verdict(f"no model of the claim's scope ({f['scope']}) in the panel" + out_words, note=f["note"])
    n, wins, shown = f["n_models"], f["wins"], r.per_model
    evidence = (f"the {metric}-chosen layer (mean depth {f['depth']:.2f}) scores {r.effect:+.1%} "
                f"relative to the last layer (mean over {_models(n)} in the claim's scope; above the last for {wins} "
                f"of {n})")
    evidence += f"; shown in {shown[0]} of {n} models over their (task, half) replicates (Holm)" + out_words
    return r.verdict(evidence,
                     per_model_label=(f"models of the claim's scope whose {metric}-chosen layer scores above the last "
                                      "over their (task, half) replicates (disjoint rows and fits; exact sign-flip test "
                                      f"per model, {holm_over(n)})"),
                     test=f"exact one-sided sign-flip test over {_models(n)} (tasks averaged per model)",
                     power_label=(f"if the chosen layer scored the paper's {f['paper_choice_gain']:.0%} above the last "
                                  f"in every model, with the spread across models observed here ({f['spread']:.1%}); "
                                  "exact sign-flip test, 4000 simulated panels" if r.power is not None else None),
                     against=f"the {metric}-chosen layer below the last (sign-flip test)",
                     effect_label=(f"mean relative gain, {metric}-chosen layer over the last" if relative else
                                   f"mean gain in score points (of 1), {metric}-chosen layer over the last"),
                     effect_format="{:+.1%}",
                     reconstruction=f"one layer per model, the intermediate layer of "
                                    f"{'highest' if f['higher_is_better'] else 'lowest'} "
                                    f"{metric} (on the augmented prompts), used for every task; "
                                    + ("relative gain" if relative else "gain in points")
                                    + " of the task-mean score (the paper's '3%' does not say relative or in points)",
                     note=f["note"])


# --- the chapter's other words -----------------------------------------------------------------

def no_norm_comparison(norm_task: str, has_decoder: bool) -> str:
    """Why :func:`lrd.verdicts.layer_choice.final_norm_comparison` compared nothing."""
    if not norm_task:
        return "The comparison was skipped: norm_task is empty (pass -p norm_task with one of tasks to run it)."
    if not has_decoder:
        return ("This panel has no decoder, so there is no final norm to compare: the encoders' layers do not pass "
                "through one. Add a decoder to the models to run the comparison.")
    return "None of the panel's decoders has a final norm, so there is nothing to compare."


def norm_change(mean: float, moves: int, n_models: int) -> str:
    """The final-norm comparison's finding: the mean absolute change and the decoders whose best layer moves."""
    return (f"The mean absolute change of the score over layers is {mean:.3f}; the best layer moves for "
            f"{moves} of {_count(n_models, 'decoder')}.")


def decoder_panel(n_models: int, decoders: list[str], instruct: int, gguf: int) -> str:
    """:func:`lrd.verdicts.layer_choice.panel_note`'s words: ``decoders`` the decoders' sources, of
    which ``instruct`` instruction-tuned and ``gguf`` dequantised from GGUF, in a panel of ``n_models``."""
    if not decoders:
        return (f"the panel has no decoder, so the claims are tested on {_count(n_models, 'encoder')} only; "
                "the paper tests base LLMs")
    return (f"instruction-tuned: {instruct} of {_count(len(decoders), 'decoder')}; dequantised from GGUF: {gguf} of "
            f"{len(decoders)} ({'; '.join(decoders)}); the paper tests base models")


def describe_design(design) -> str:
    """A :class:`lrd.verdicts.layer_choice.MidLayerDesign` in words."""
    n_dec = sum(k == "decoder" for k in design.kinds)
    return (f"{len(design.layers)} models ({n_dec} decoders) x {design.n_tasks} tasks, {min(design.layers)}-"
            f"{max(design.layers)} blocks; noise per layer: fits {design.fit_sd:.0%} "
            f"({'shared by the halves' if design.shared_fit else 'per half'}), rows {design.row_sd:.0%} per half, "
            f"roughness {design.rough_sd:.0%}")


def describe_valleys(layers, kinds, n_prompts, *, prompt_sd: float, rough_sd: float) -> str:
    """The valley's simulated design (:data:`lrd.verdicts.layer_choice.VALLEY_DESIGN`) in words."""
    n_dec = sum(k == "decoder" for k in kinds)
    return (f"{len(kinds) - n_dec} encoders and {n_dec} decoders ({min(layers)}-{max(layers)} blocks), {n_prompts} "
            f"prompts each (noise {prompt_sd:g} per prompt and layer, roughness "
            f"{rough_sd:g})")


#: The null models' designs in words (:data:`lrd.verdicts.layer_choice.GAIN_NULL`, ...).
GAIN_NULL_PANEL = "the chapter's design, every layer equally good in expectation: {design}"
GAIN_EFFECT_PANEL = (f"the same design, the layers at 40-60% depth {SKEAN_GAIN_RANGE[0]:.0%} above the others "
                     "in every model of the claim's scope, decoders and sentence embedders alike (the "
                     "paper's lower end, the edge of 'at least 2%')")
VALLEY_EFFECT_PANEL = "the same design, decoders' and encoders' valleys equal (0): the edge of 'decoders deeper'"
VALLEY_DESIGN_LABEL = ("restated, larger than the default book's: the claim's smallest testable panel "
                       "(the default book's decoders are too few to reach p <= 0.05 for 'every "
                       "decoder')")
METRICS_TRACK_NULL_PANEL = "the chapter's design, prompt entropy and DiME independent of the scores: {design}"
METRICS_TRACK_EFFECT_PANEL = "the same: metrics unrelated to the score are the edge of 'every metric reversed'"
CHOICE_NULL_PANEL = ("the chapter's design, every layer equally good in expectation, DiME independent of "
                     "the scores: {design}")


def valley_null_panel(margin: float) -> str:
    """:data:`lrd.verdicts.layer_choice.VALLEY_NULL`'s design, with the margin of 'flat'."""
    return ("{design}; half the panels without any valley, half with decoders' valleys of 0.2 and "
            f"encoders' exactly at the margin of 'flat' ({margin:g}): the composite null's two edges")


def valley_power_panel(margin: float) -> str:
    """The valley's power design, every decoder's valley ``margin``."""
    return (f"the same design, every decoder's valley {margin} of the normalised "
            "prompt entropy (assumed: the paper gives no depth; the size of encoders' "
            "'flat' margin), encoders flat")


def metrics_track_power_panel(peak: float) -> str:
    """The metrics' power design: the band's gain, and the metrics moved by ``peak`` noise sd there."""
    return (f"the same design, the layers at 40-60% depth {SKEAN_GAIN_RANGE[0]:.0%} "
            f"above the others (the paper's lower end), and there prompt entropy "
            f"{peak:g} noise sd lower and DiME {peak:g} "
            f"higher (assumed: the paper gives no size)")


def choice_effect_panel(gain: float) -> str:
    """The choice's effect design: DiME choosing a layer ``gain`` above the last."""
    return ("the same design, DiME choosing a layer at 40-60% depth that scores the paper's "
            f"{gain:.0%} above the last in every model")
