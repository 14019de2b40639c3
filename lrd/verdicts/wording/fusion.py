"""The ILSE / Cayley-Encoder verdicts' sentences, from the judges' results (:mod:`lrd.verdicts.fusion`).

One function per judge (``fc``, ``cayley_performance``, ``baselines``, ``few_shot``, ``gain``,
``mapping``, ``parameters``, ``cayley_efficiency``), each turning that judge's
:class:`~lrd.verdicts.result.Result` into its :class:`~lrd.verdicts.record.Verdict`; and the
phrases the judges share (the models a claim leaves out, :func:`scope_words`) and the null
models' descriptions (:data:`NULL_PANELS`, :mod:`lrd.verdicts.fusion.nulls`).
"""

from __future__ import annotations

from lrd.verdicts.claims import ILSE_PAPER_STATES, OUT_OF_SCOPE, claim as claim_entry
from lrd.verdicts.record import Verdict, holm_over
from lrd.verdicts.result import Result

__all__ = ["MODEL_LEVEL", "PANEL_NOTE", "ENCODER_RECONSTRUCTION", "NULL_PANELS", "size_words", "scope_words",
           "reference_name", "above", "fc", "cayley_performance", "baselines", "few_shot", "gain", "mapping",
           "parameters", "cayley_efficiency", "few_shot_power_panel", "gain_power_panel"]

#: The reconstruction of the model-level comparisons.
MODEL_LEVEL = ("model-level score: a model's seed means averaged over its tasks (accuracy and Spearman points "
               "alike); the paper reports cells and states no test")
#: The note on the panel beside every comparison of methods.
PANEL_NOTE = ("The unit is the model. The paper used 9 pre-trained LLMs of 14M to 8B parameters (abstract v1); our "
              "offline decoders are small dequantised GGUF checkpoints (some instruction-tuned) and our encoders "
              "sentence embedders, which the book's rule kinds leaves out by default.")
#: Where the encoder's configuration behind the parameter arithmetic comes from (shown with every
#: share of the paper's models).
ENCODER_RECONSTRUCTION = ("the encoder's configuration is our reconstruction, from ilge 0.1.0's "
                          "tuning.recommended_config('cayley'): hidden width 256 (the only width the authors' Optuna "
                          "scripts search: run_optuna_trial_gin.py, gin_hidden_dim in [256]), one GIN layer (their "
                          "search: 1-2, so the smallest), a one-layer MLP in GIN, LayerNorm, a linear head; the "
                          "authors' encoder projects every state to that width first (gnn_models.py, "
                          "LayerGINEncoder.proj_in), d x 256 + 256 parameters at hidden size d")


def size_words(n: float) -> str:
    """A parameter count in words: ``"22.7M"``, ``"1.5B"``.

    >>> size_words(2.27e7), size_words(1.5e9)
    ('22.7M', '1.5B')
    """
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def scope_words(left_out) -> str:
    """The evidence's words for the models :func:`lrd.verdicts.fusion.size_scope` left out ("" for none).

    >>> print(scope_words({"outside": [("tiny", 2.3e6)], "bounds": (14_067_712, 8.03e9),
    ...                    "other_kind": [("st", "encoder")], "kinds": ("decoder",)}))
    ; out of the paper's scope (outside its 14.1M-8.0B parameters; shown, not counted): tiny (2.3M); left out by the book's rule kinds (counts decoder models only; shown, not counted): st (encoder)
    """
    words = ""
    if left_out.get("outside"):
        lo, hi = left_out["bounds"]
        words = (f"; {OUT_OF_SCOPE} (outside its {size_words(lo)}-{size_words(hi)} parameters; shown, not counted): "
                 + ", ".join(f"{m} ({size_words(b)})" for m, b in left_out["outside"]))
    if left_out.get("other_kind"):
        words += (f"; left out by the book's rule kinds (counts {' and '.join(left_out['kinds'])} models only; shown, "
                  f"not counted): " + ", ".join(f"{m} ({k})" for m, k in left_out["other_kind"]))
    return words


def reference_name(key) -> str:
    """A comparison's name: a reference's label, or (label, shots) for a full-data reference of the few-shot claim."""
    if isinstance(key, tuple):
        return f"full-data {key[0]} at {key[1]} shots"
    return key


# --- one method above every reference --------------------------------------------------------------

def _power_label(r: Result) -> dict:
    known = r.facts.get("power_known")
    if not known:
        return {}
    left, many = r.facts["power_left"], len(r.facts["comparisons"]) > 1
    words = ", ".join(f"{k} {e:+.1f}" for k, e in known)
    return {"power_label": (f"power of the exact sign-flip test at the paper's own Table 1 mean differences ({words} "
                            f"points; 3 models x 5 tasks), with the spread across models observed here"
                            + ("; for 'above every one' the smallest of the comparisons' powers, an upper bound"
                               if many else "")
                            + (f"; not in the paper's table, so not included: {', '.join(left)}" if left else ""))}


def _items_label(r: Result) -> str:
    refs = r.facts["references"]
    return (f"models in which the {r.facts['method_label']} is above {' and '.join(refs)} over their classification "
            f"test items and seeds (crossed-factor t-test per model"
            f"{', largest p over the references' if len(refs) > 1 else ''}")


def _few_shot_items_label(r: Result) -> str:
    shots = r.facts["shots"]
    return (f"models in which the {r.facts['method_label']} trained on {shots[0]}-{shots[1]} examples per class is "
            f"above full-data {' and '.join(r.facts['references'])} over the few-shot tasks' test items and seeds "
            f"(crossed-factor t-test per model and shot count, largest p over the shot counts and references")


def above(r: Result, what: str, per_model_label: str, reconstruction: str | None = None) -> Verdict:
    """The verdict of :func:`lrd.verdicts.fusion.above_result`: ``what`` is compared, ``per_model_label``
    the opening of the per-model label, ``reconstruction`` the claim's own (None: :data:`MODEL_LEVEL`)."""
    f = r.facts
    out = scope_words(f["left_out"])
    if r.case != "tested":
        why = ("no model the claim counts in the panel" if r.case == "no model counted"
               else "the methods to compare were not both run on any model")
        return r.verdict(f"{what}: {why}{out}", reconstruction=reconstruction, note=PANEL_NOTE)
    label, skipped, many = f["method_label"], f["skipped"], len(f["comparisons"]) > 1
    parts = [f"{reference_name(ref)} {mean:+.1f} points ({n_up}/{n} models above)"
             for ref, mean, n_up, n in f["comparisons"]]
    evidence = (f"{label} minus {'; '.join(parts)}"
                + (f"; not run: {', '.join(reference_name(s) for s in skipped)}" if skipped else "") + out)
    kind = "exact" if f["exact"] else "Monte Carlo"
    n_models, k = f["n_models"], len(f["comparisons"])
    test = f"{kind} one-sided sign-flip test over {n_models} models (task means of seed means)"
    if many:
        test = f"intersection-union of {k} {kind} one-sided sign-flip tests over {n_models} models, p = max"
    per_model = ({"per_model_label": f"{per_model_label}; {holm_over(r.per_model[1])})"}
                 if r.per_model is not None else {})
    return r.verdict(
        evidence, test=test,
        against=(f"{label} significantly below "
                 + (f"at least one of them (min-p over joint sign flips of the {f['n_common']} models they share)"
                    if many else "it")),
        effect_label=(f"mean gain over {reference_name(f['binding'])}, points "
                      f"(model means{'; the binding comparison' if many else ''})"),
        effect_format="{:+.1f}", reconstruction=reconstruction or MODEL_LEVEL, note=PANEL_NOTE,
        **per_model, **_power_label(r))


def fc(r: Result) -> Verdict:
    """ilse.fc's verdict (:func:`lrd.verdicts.fusion.fc_result`)."""
    return above(r, "FC-Encoder against the existing approaches", _items_label(r))


def cayley_performance(r: Result) -> Verdict:
    """ilse.cayley_performance's verdict (:func:`lrd.verdicts.fusion.cayley_performance_result`)."""
    return above(r, "Cayley- against FC-Encoder", _items_label(r))


def baselines(r: Result) -> Verdict:
    """ilse.baselines's verdict (:func:`lrd.verdicts.fusion.baselines_result`)."""
    return above(r, "Cayley-Encoder against the baselines", _items_label(r))


def few_shot(r: Result) -> Verdict:
    """ilse.few_shot's verdict (:func:`lrd.verdicts.fusion.few_shot_result`)."""
    f = r.facts
    shots = f["shots"]
    if r.case == "panel empty":
        return r.verdict(f"no model the claim counts in the panel{scope_words(f['left_out'])}", note=PANEL_NOTE)
    if r.case == "references not run":
        missing = f["missing"]
        return r.verdict(f"the full-data {', '.join(missing)} {'was' if len(missing) == 1 else 'were'} not run "
                         f"(the chapter's `methods`)")
    if r.case == "no few-shot run":
        return r.verdict(f"no few-shot run of {f['method_label']} with {shots[0]}-{shots[1]} examples per class "
                         f"(the chapter's `few_shot`)")
    return above(r, "few-shot Cayley-Encoder against full-data references", _few_shot_items_label(r),
                 reconstruction=(f"model-level score: a model's seed means averaged over the few-shot tasks; "
                                 f"the claim must hold at every shot count from {shots[0]} to {shots[1]} "
                                 f"against both references"))


# --- ilse.gain ------------------------------------------------------------------------------------

def gain(r: Result) -> Verdict:
    """ilse.gain's verdict, always not testable (:func:`lrd.verdicts.fusion.gain_result`)."""
    f = r.facts
    paper_pp, top_paper = f["paper_pp"], f["paper_top"]
    rests = (f"'up to {paper_pp:g} points' is the largest gain over the paper's own 13 tasks x 9 LLMs, a maximum over "
             f"its cells that no other panel can reproduce or contradict, so it is not tested")
    if top_paper is not None:
        rests += (f"; what it rests on, the paper's Table 1 (3 models x 5 classification tasks, our digest): the "
                  f"{f['method_label']}'s largest gain over the {f['reference_label'].lower()} is "
                  f"{top_paper[2]:.1f} points ({top_paper[0]} / {top_paper[1]}); per model "
                  + ", ".join(f"{model} {largest:.1f} ({task})" for model, _, largest, task in f["paper_rows"])
                  + f"; {f['n_paper_cells']} of {f['paper_cells']} cells at {paper_pp:g} or more")
    words = dict(paper_effect=(f"up to {paper_pp:g} points (Table 1's largest: {top_paper[2]:.1f})"
                               if top_paper is not None else f"up to {paper_pp:g} points"),
                 note=f"Scope: {claim_entry(r.claim).scope.text}. " + PANEL_NOTE)
    size = scope_words(f["left_out"])
    if r.case == "no cells":
        why = ("no model the claim counts in the panel" + size if size else
               f"{f['method_label']} and {f['reference_label']} were not both run on a classification task")
        return r.verdict(f"{rests}; on our panel (description): {why}", **words)
    return r.verdict(
        f"{rests}; on our panel (description, not a test): largest gain {r.effect:+.1f} points ({f['model']} / "
        f"{f['task']}; a maximum over {f['n_cells']} cells, biased upward by selection)" + size,
        effect_label=(f"largest cell gain on the panel over the {f['reference_label'].lower()}, points (a description; "
                      f"95% simultaneous bootstrap interval over test items and {f['n_seeds']} seeds, "
                      f"{f['n_boot']} replicates)"),
        effect_format="{:+.1f}", **words)


# --- ilse.mapping ----------------------------------------------------------------------------------

def mapping(r: Result) -> Verdict:
    """ilse.mapping's verdict (:func:`lrd.verdicts.fusion.mapping_result`)."""
    f = r.facts
    m, n_seeds, c = f["m"], f["n_seeds"], f["paper_std_pp"]
    per_model = {}
    if r.per_model is not None:
        out, (n_maps, n_grid_seeds) = f["per_model_out"], f["grid"]
        per_model = {"per_model_label": (
            f"models whose mapping component is below {c:g} points on their own mapping x seed grid "
            f"({n_maps} mappings x {n_grid_seeds} seeds; the same chi-square bound per model; "
            f"{holm_over(r.per_model[1], 'model', ' whose encoder learns the task')}"
            + (f"; left out, shown, not counted (the book's rule: mean score not {f['learns_pp']:g} points above the "
               f"majority class; or a model the claim does not count: the paper's sizes, the book's kinds): "
               f"{', '.join(out)}" if out else "") + ")")}
    scope = claim_entry(r.claim).scope
    if r.case == "too few mappings":
        return r.verdict(f"{m} random mapping{'s were' if m != 1 else ' was'} trained; a spread needs at least 2 (the "
                         f"chapter's `n_mappings`, on an `ablation_model` of the panel)", **per_model)
    if r.case == "model not counted":
        return r.verdict(f"the ablation model is not a model the claim counts{scope_words(f['left_out'])}; the "
                         f"chapter's `ablation_model` must be one", note=scope.text, **per_model)
    if r.case == "does not learn":
        return r.verdict(f"the Cayley-Encoder's mean score over the mappings, {f['mean']:.1f} points, is not "
                         f"{f['learns_pp']:g} points above the majority class's {f['chance']:.1f}: it does not learn "
                         f"the task, so no spread over mappings can show the claim",
                         note=scope.text if scope else None)
    evidence = (f"{m} random layer-to-node mappings x {n_seeds} seed{'s' if n_seeds != 1 else ''}: std over mappings "
                f"of one run {f['per_run']:.2f} points")
    if r.p_against is not None:
        evidence += (f", std over seeds at one mapping {f['seed_sd']:.2f}; the mapping's own component {r.effect:.2f} "
                     f"points (F-test of any mapping effect against the seed noise p = {f['f_p']:.2g})")
    else:
        evidence += "; one seed: the mapping cannot be told from the training noise, only an upper bound is tested"
    return r.verdict(
        evidence,
        test=(f"variance component of the mapping on a {m} x {n_seeds} mapping x seed grid against {c:g} "
              f"points: chi-square bound of the mapping means ({f['df']} degrees of freedom; seed noise counts against)"
              + ("; against: generalized p-value of the component beyond the seed noise" if r.p_against is not None
                 else "")),
        against=(f"the mapping's component above the paper's {c:g} points" if r.p_against is not None else None),
        effect_label="std of the mapping's component, points", effect_format="{:.2f}",
        paper_effect=f"std <= {c:g} points over 10 mappings (one run each)",
        reconstruction=("the paper's per-run spread read as the mapping's variance component (two-way random model, "
                        "seeds as blocks): its per-run std includes the training noise, ours separates it"),
        note="One model and task (the chapter's ablation model), as the paper's ablation; assumes normal scores.",
        **per_model)


# --- demonstrations --------------------------------------------------------------------------------

def _shares(rows) -> str:
    return ", ".join(f"{model} {share:.3%}" for model, share in rows)


def parameters(r: Result) -> Verdict:
    """ilse.parameters' verdict (:func:`lrd.verdicts.fusion.parameters_result`)."""
    f = r.facts
    share, (lo, hi) = f["paper_share"], f["params_range"]
    sizes = f"{size_words(lo)}-{size_words(hi)}"
    parts = []
    if f["reference_in"]:
        text = (f"on the paper's own models (its sizes, quoted; {sizes}): " + _shares(f["reference_in"])
                + f"; {f['reference_within']} of {len(f['reference_in'])} within {share:.1%}")
        if f["reference_over"]:
            text += (f"; above it: {', '.join(f['reference_over'])}, so the abstract's 'at most {share:.1%}' does not "
                     f"hold for them at this configuration")
            if f["projection_over"] is not None:
                text += (" (the input projection alone is " + ", ".join(
                    f"{projection:.3%} of {model}" for model, projection in f["projection_over"]) + ")")
        parts.append(text)
    if f["reference_out"]:
        parts.append(f"the paper's models outside {sizes} (not counted under this range): "
                     + _shares(f["reference_out"]))
    which = f"{sizes} parameters" + (f", {' and '.join(f['kinds'])} models" if f["kinds"] is not None else "")
    panel = f["panel"]
    parts.append(f"on the panel's models the claim counts ({which}): " + (
        _shares(panel) + f"; {f['panel_within']} of {len(panel)} within {share:.1%}" if panel else "none"))
    return r.verdict(
        "; ".join(parts) + scope_words(f["left_out"]),
        paper_effect=f"<= {share:.1%} (its 9 LLMs, 14M to 8B)",
        reconstruction=ENCODER_RECONSTRUCTION,
        note=("The share falls with the model's size (the input projection, hidden size x 256, is fixed by the "
              "model's width); the abstract states 'at most 0.1%' for nine LLMs from 14M parameters (abstract v1), "
              "so the paper's own smallest models are counted, not left out."))


def cayley_efficiency(r: Result) -> Verdict:
    """ilse.cayley_efficiency's verdict (:func:`lrd.verdicts.fusion.cayley_efficiency_result`)."""
    f = r.facts
    denser, outside, token = f["denser"], f["outside"], f["token"]
    text = (f"the Cayley graph has fewer edges than the complete graph from {f['start']} states on (up to {f['top']}), "
            f"which holds the models of the paper's Table 1 "
            f"({', '.join(f'{k} {v}' for k, v in ILSE_PAPER_STATES.items())} "
            f"states; not its 6-block Pythia-14M and -70M, 7 states); "
            f"in that scope it is sparser on {f['n_inside'] - len(denser)} of {f['n_inside']} models of the panel")
    if denser:
        text += " (not on " + ", ".join(f"{model}: {cayley} against {fc}" for model, cayley, fc in denser) + ")"
    if outside:
        text += ("; left out by the book's rule sparser_graph (fewer states, where the Cayley graph is not the "
                 "sparser one; shown, not counted): "
                 + ", ".join(f"{model}: {states} states give {nodes} nodes and {cayley} edges against {fc}"
                             for model, states, nodes, cayley, fc in outside))
    if token is not None and f["memory_at"] == "longest":
        text += (f"; token graph of {token['tokens']} tokens: {token['cayley_edges']:.0f} against "
                 f"{token['fc_edges']:.0f} edges, FC's measured peak memory {token['ratio']:.1f}x Cayley's")
    elif token is not None:
        text += (f"; token graphs of {', '.join(str(t) for t in token['tokens'])} tokens: fewer edges on "
                 f"{token['fewer']} of {len(token['tokens'])}, FC's measured peak memory "
                 f"{token['ratio_min']:.1f}x-{token['ratio_max']:.1f}x Cayley's")
    return r.verdict(text, paper_effect="12.0x-34.3x less GPU memory on token graphs (Gemma2-2B)",
                     note=("A model with few layers sits on a Cayley graph with many virtual nodes (24 for SL(2, "
                           "Z_3)), so its layer graph can have more edges than the complete graph of its states: "
                           "outside the layer counts of the paper's models, where the construction is not meant to "
                           "gain."))


# --- the null and effect models' descriptions (lrd.verdicts.fusion.nulls) ---------------------------

#: The panels of the null models, their edges and power designs (``{n_models}``: filled from the design).
NULL_PANELS = {
    "methods": ("{n_models} models x {n_tasks} tasks x {n_seeds} seeds, methods exchangeable within each model-task "
                "cell"),
    "methods edge": "the same: exchangeable methods (every difference exactly 0) are the edge of 'above'",
    "methods power": ("the same design, each cell's differences drawn from the paper's own Table 1 cells of that pair "
                      "of methods (a method the table lacks as the table's best)"),
    "few_shot": ("{n_models} models x {n_tasks} tasks x {n_seeds} seeds, Cayley at 8/16/32 shots exchangeable with "
                 "full-data DWAtt and Last within each cell"),
    "few_shot edge": "the same: few shots exchangeable with the full-data references are also the edge of 'exceed'",
    "gain": ("{n_models} models x {n_tasks} tasks x {n_seeds} seeds x {n_items} items, every cell's true gain exactly "
             "40 points, 200 bootstrap replicates (the chapter: 2000); the verdict is 'not testable' by construction "
             "(a maximum over the paper's own cells), so no draw can give a false 'reproduced' or 'contradicted'"),
    "gain edge": "the same: every cell at exactly 40 points",
    "gain design": ("restated: the cells (classification tasks) of the models the claim counts, known only from the "
                    "executed scores"),
    "mapping": ("{n_mappings} mappings x {n_seeds} seeds, mapping component exactly 1.5 points, seed effect and "
                "training noise of 0-4.5 points"),
    "mapping edge": "the same: a mapping component of exactly 1.5 points is also the edge of the claim",
    "mapping power": ("the same design, the mapping irrelevant (component 0: the paper's robustness at its strongest), "
                      "seed effect and training noise as above"),
}


def few_shot_power_panel(lead_pp: float) -> str:
    """The few-shot power design, Cayley ``lead_pp`` points above both references."""
    return (f"the same design, Cayley at 8-32 shots {lead_pp:g} points above both full-data references in every cell "
            f"(assumed: the paper gives no size)")


def gain_power_panel(n_cells: int, low: float, high: float, n_above: int, paper_pp: float) -> str:
    """The gain's power design: each cell's gain drawn from the paper's ``n_cells`` Table 1 gains."""
    return (f"the same design, each cell's gain drawn from the paper's own Table 1 gains of the Cayley-Encoder over "
            f"the last layer ({n_cells} cells, {low:.1f}-{high:.1f} points, {n_above} above {paper_pp:g}): power 0, no "
            f"panel tests the claim")
