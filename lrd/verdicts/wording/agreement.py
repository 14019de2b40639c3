"""The sentences of Hinostroza et al.'s verdicts (:mod:`lrd.verdicts.agreement`), written from the
judges' :class:`~lrd.verdicts.result.Result`: one function per judge, the note on the panel's
language models, and the words of the claims' null models."""

from __future__ import annotations

from lrd.verdicts.record import Verdict, holm_over
from lrd.verdicts.result import Result

__all__ = ["PAPER_MODELS", "MISESTIMATE_PER_MODEL", "decoder_note", "theory", "correlation", "misestimate", "dataset",
           "pruning", "olmo", "describe_cosine_design", "correlation_null_panels", "misestimate_null_panels",
           "dataset_null_panels", "PRUNING_NULL_PANEL", "PRUNING_EFFECT_PANEL", "PRUNING_DESIGN_LABEL"]

#: What the paper's language models are, for the note that every cosine verdict carries.
PAPER_MODELS = "the paper's LLMs include OLMo and LLaMA-3-8B"

#: Why ``cosine.misestimate`` has no per-model count (see :func:`lrd.verdicts.agreement.judge_misestimate`).
MISESTIMATE_PER_MODEL = ("no per-model test: 'no better than unrelated rankings' is not identifiable from item-noisy "
                         "drops (near-tied blocks ordered as cosine orders them give the same data as unrelated ones); "
                         "per decoder the chapter shows the share, its difference from unrelated rankings and the "
                         "permutation p against the claim")


def decoder_note(panel: dict, *, paper: str = PAPER_MODELS) -> str:
    """The note on the panel's language models from :func:`lrd.verdicts.agreement.decoder_panel`'s
    counts (``n``, ``instruct``, ``gguf``).

    >>> decoder_note({"n": 1, "instruct": [], "gguf": []})
    "instruction-tuned: 0 of 1 language model; dequantised from GGUF: 0 of 1; the paper's LLMs include OLMo and LLaMA-3-8B"
    """
    n, instruct, gguf = panel["n"], panel["instruct"], panel["gguf"]
    if n == 0:
        return f"no language model was measured; {paper}"

    def listed(models: list[str]) -> str:
        return f" ({', '.join(models)})" if models else ""

    noun = "language model" if n == 1 else "language models"
    return (f"instruction-tuned: {len(instruct)} of {n} {noun}{listed(instruct)}; dequantised from GGUF: "
            f"{len(gguf)} of {n}{listed(gguf)}; {paper}")


def _chance_words(f) -> str:
    return (f"{f['chance_above']} of {f['chance_pairs']} decoder-task pairs above measured chance "
            f"at p <= {f['alpha']}")


def _no_signal(r: Result) -> Verdict:
    return r.verdict(f"{_chance_words({**r.facts, 'alpha': r.alpha})}: without signal, accuracy relevance is noise",
                     note=r.facts["note"])


def theory(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_theory`'s verdict."""
    f = r.facts
    evidence = (f"an illustration of the theory (our construction): in a {f['n_blocks']}-block residual network, block "
                f"{f['block']} has cosine relevance {f['cosine']:.1e}, the least, yet removing it takes accuracy from "
                f"{f['accuracy']:.0%} to {f['without']:.0%} (chance {f['chance']:.0%})")
    return r.verdict(evidence, reconstruction="the toy network is ours; the paper proves the point in its theoretical "
                                              "analysis, it does not build this network")


def correlation(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_correlation`'s verdict."""
    if r.case == "no signal":
        return _no_signal(r)
    f, margin = r.facts, r.facts["margin"]
    parts = [f"{m['model']}: r {m['r']:.2f}, reliability {m['reliability']:.2f}, corrected {m['corrected']:.2f} "
             f"[{m['low']:.2f}, {m['high']:.2f}]" for m in f["models"]]
    return r.verdict(f"noise-corrected correlation of accuracy with cosine relevance, mean over tasks [95% bootstrap "
                     f"interval]: {'; '.join(parts)} ({_chance_words({**f, 'alpha': r.alpha})})",
                     test=f"equivalence |r| < {margin} per model (two one-sided bootstrap tests over items, "
                          f"{f['n_boot']} resamples), all {f['n_models']} models (intersection-union)",
                     against=f"|r| >= {margin} (strong) in every model",
                     effect_label="noise-corrected correlation, mean over decoders", effect_format="{:.2f}",
                     reconstruction=f"Pearson's correlation corrected for item noise (split-half reliability, "
                                    f"Spearman-Brown), the average over tasks and the {margin} margin are ours; the "
                                    f"paper's correlation procedure is not in the text we have",
                     note=f["note"],
                     per_model_label=f"decoders whose noise-corrected correlation is shown within +-{margin} (the "
                                     f"equivalence test above, items resampled; "
                                     f"{holm_over(f['n_models'], 'decoder')})")


def misestimate(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_misestimate`'s verdict."""
    if r.case == "no signal":
        return _no_signal(r)
    f, delta, share = r.facts, r.facts["delta"], r.facts["share"]
    parts = [f"{m['model']}: {m['share']:.0%} against unrelated rankings' {m['unrelated']:.0%} (difference "
             f"{m['share'] - m['unrelated']:+.0%} [{m['low']:+.0%}, {m['high']:+.0%}], "
             f"p = {m['p_against']:.3f} that it is below -{delta:.0%}; better than random, permutation "
             f"p = {m['p_random']:.3f}; ranking reliability {m['rank_reliability']:.2f})" for m in f["models"]]
    return r.verdict(f"share of blocks mis-estimated by cosine: {'; '.join(parts)} "
                     f"({_chance_words({**f, 'alpha': r.alpha})})",
                     test=(f"against the claim: the share below the unrelated rankings' by more than {delta:.0%} "
                           f"(one-sided bootstrap test over items, {f['n_boot']} resamples) in every one of the "
                           f"{f['n_models']} models (intersection-union); 'no better than random' is not testable "
                           f"under item noise (p = 1); beside it, the permutation test against unrelated rankings "
                           f"({f['n_perm']} random assignments of the measured relevance to blocks)"),
                     against=f"cosine ranks blocks better than unrelated rankings by more than {delta:.0%} of the "
                             f"blocks in every model",
                     effect_label="share mis-estimated minus the unrelated rankings' share, mean over decoders",
                     effect_format="{:+.0%}",
                     paper_effect=f"> {share:.0%} of cases (the paper's description; its margin is not in our text)",
                     per_model_label=MISESTIMATE_PER_MODEL,
                     reconstruction=(f"over/under-estimation is our reconstruction (percentile ranks more than a "
                                     f"margin apart); the paper's {share:.0%} is read as 'no better than unrelated "
                                     f"rankings, up to the {delta:.0%} of cases it leaves', because the share itself "
                                     f"depends on the margin and unrelated rankings reach most of it"),
                     note=f["note"])


def dataset(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_dataset`'s verdict."""
    f = r.facts
    if r.case == "no task pairs":
        return r.verdict("no decoder was measured on two tasks", note=f["note"])
    if r.case == "no signal":
        return r.verdict(f"no decoder is above measured chance on two tasks "
                         f"({_chance_words({**f, 'alpha': r.alpha})})", note=f["note"])
    same = f["same"]
    parts = [f"{m['model']}: {m['corrected']:.2f} [{m['low']:.2f}, {m['high']:.2f}] over {m['pairs']} task pair(s), "
             f"uncorrected {m['r']:.2f}" for m in f["models"]]
    return r.verdict(f"noise-corrected correlation of accuracy relevance between tasks [95% bootstrap "
                     f"interval]: {'; '.join(parts)}",
                     test=f"one-sided bootstrap test of a corrected between-task correlation below {same} per model "
                          f"({f['n_boot']} resamples of items per task), all {f['n_models']} models "
                          f"(intersection-union)",
                     against=f"corrected between-task correlation above {same} (the same relevance) in every model",
                     effect_label="noise-corrected between-task correlation, mean over decoders",
                     effect_format="{:.2f}",
                     reconstruction=f"the paper shows the variation in a heat map; the test (between-task correlation "
                                    f"against the split-half ceiling) and the {same} margin for 'the same' are ours",
                     note=f["note"],
                     per_model_label=f"decoders whose corrected between-task correlation is shown below {same} (the "
                                     f"bootstrap test above, items resampled; "
                                     f"{holm_over(f['n_models'], 'decoder')})")


def pruning(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_pruning`'s verdict."""
    f = r.facts
    if r.case == "no model pruned":
        return r.verdict("no model was pruned", note=f["note"])
    parts = [f"{m['model']}: {m['better']:.3f} vs {m['worse']:.3f}"
             + (f" (random {m['random']:.3f})" if m["random"] is not None else "") for m in f["models"]]
    per_model = {} if r.per_model is None else {"per_model_label": (
        f"pruned decoders in which the accuracy-drop ranking prunes better than cosine's over their multiple-choice "
        f"test items (difference in correctness averaged over the budgets, t-test with items as the unit, tasks "
        f"above measured chance; {holm_over(f['n_tested'], 'decoder')})")}
    return r.verdict(f"evaluation accuracy, mean over budgets of {f['budgets']} blocks removed, accuracy-drop "
                     f"ranking vs cosine ranking: {'; '.join(parts)}", **per_model,
                     test=f"exact one-sided sign-flip test over {f['n_models']} pruned model(s)",
                     against="the cosine ranking prunes better",
                     effect_label="accuracy of the accuracy-drop ranking minus cosine's, mean over models",
                     effect_format="{:+.3f}",
                     reconstruction="the average over budgets is ours (the paper compares curves, Figure 2)",
                     note=f["note"])


def olmo(r: Result) -> Verdict:
    """:func:`lrd.verdicts.agreement.judge_olmo`'s verdict."""
    return r.verdict("OLMo is not in the offline panel", note=r.facts["note"])


# --- the null models' words (lrd.verdicts.agreement.nulls) -------------------------------------------

def describe_cosine_design(layers: tuple, n_tasks: int, n_items: int, n_splits: int, resamples: int) -> str:
    """A simulated cosine panel in words.

    >>> describe_cosine_design((30, 18), 2, 32, 20, 100)
    '2 decoders (30, 18 blocks) x 2 tasks, 32 items, 20 half splits, 100 resamples'
    """
    return (f"{len(layers)} decoder{'s' if len(layers) != 1 else ''} "
            f"({', '.join(map(str, layers))} blocks) x {n_tasks} task{'s' if n_tasks != 1 else ''}, {n_items} items, "
            f"{n_splits} half splits, {resamples} resamples")


def correlation_null_panels(strong: float, moderate: float) -> dict:
    """``panel``, ``effect_panel`` and ``power_panel`` of ``cosine.correlation``'s null model."""
    return {"panel": f"{{design}}; the first decoder at r = {strong} exactly on every task, the others at 0.1 "
                     f"(least favourable)",
            "effect_panel": f"the same design, every decoder at r = {strong} exactly: the edge of 'strong in every "
                            f"decoder'",
            "power_panel": f"the same design, the first decoder at r = {moderate} (moderate), the others at 0.1 "
                           f"(assumed: the paper gives no numbers)"}


def misestimate_null_panels(delta: float) -> dict:
    """``panel``, ``effect_panel`` and ``power_panel`` of ``cosine.misestimate``'s null model."""
    return {"panel": "{design}, cosine unrelated to removal cost in every decoder: the test's p is 1 by construction "
                     "(item noise pulls the share towards the unrelated rankings', so 'no better than random' is "
                     "never concluded), so its false-reproduced rate is 0 under any null",
            "effect_panel": f"{{design}}; the first decoder at the claim's edge (cosine's share of mis-estimated "
                            f"blocks {delta:.0%} of the blocks below the unrelated rankings'), the others ranking "
                            f"blocks as removal does: a contradiction would be false",
            "power_panel": "the same: the test cannot say 'reproduced' at any effect (p = 1 by design)"}


def dataset_null_panels(same: float, power: float) -> dict:
    """``panel``, ``effect_panel`` and ``power_panel`` of ``cosine.dataset``'s null model."""
    return {"panel": f"{{design}}; the first decoder's later tasks harder, their expected drops at correlation "
                     f"exactly {same} with its first task's (the margin of 'the same'), the other decoders' at 0 "
                     f"(least favourable)",
            "effect_panel": f"the same design, every decoder's tasks at correlation exactly {same}: the edge of 'the "
                            f"same in every decoder'",
            "power_panel": f"the same design, every decoder's tasks' expected drops at correlation {power} (assumed: "
                           f"the paper's figure gives no number)"}


#: ``cosine.pruning``'s null model in words.
PRUNING_NULL_PANEL = "{n_models} models x 3 budgets, the two rules exchangeable within each model"
PRUNING_EFFECT_PANEL = "the same: exchangeable rules are also the edge of 'beats'"
PRUNING_DESIGN_LABEL = ("restated, larger than the default book's: the chapter's pruned decoders are too few to reach "
                        "p <= 0.05 (its verdict says 'not testable', power 0)")
