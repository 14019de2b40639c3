"""The sentences of the model-selection verdicts (:mod:`lrd.verdicts.selection`), written from their results.

One function per judge, each turning the judge's :class:`~lrd.verdicts.result.Result` into its
:class:`~lrd.verdicts.record.Verdict` (branching on ``r.case``), and the words of the
selection claims' null models. Numbers come from the result; nothing here computes a statistic.
"""

from __future__ import annotations

from lrd.verdicts.record import Verdict
from lrd.verdicts.result import Result

__all__ = ["RECONSTRUCTION", "selection", "selection_strongest", "selection_llm", "selection_null",
           "selection_strongest_null", "selection_llm_null"]

#: How the model-level scores are reconstructed (every selection verdict says it).
RECONSTRUCTION = ("model-level scores: d_0L, mean chance-adjusted NRS over the transitions, mean GFMI over layers "
                  "0..L-1 (lrd.metrics.model_scores), each averaged over the embedding tasks; the paper's exact "
                  "aggregation is not in our digest")


def _count(n: int, plural: str) -> str:
    """``"1 model"``, ``"3 models"``."""
    return f"{n} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"


def _fmt_p(p: float) -> str:
    return f"{p:.2g}"


def _too_few(n: int, panel: str) -> str:
    return f"only {_count(n, panel)} with every score and a downstream score: no ordering test can run"


def _where(kinds: list | None) -> str:
    """The orderings' strata in words: "one kind of model" or "within kind (encoder 4, decoder 4)"."""
    if kinds is None:
        return "one kind of model"
    return "within kind (" + ", ".join(f"{k} {c}" for k, c in kinds) + ")"


def _rho_text(f) -> str:
    return ", ".join(f"{m} {r:+.2f} (p = {_fmt_p(p)})" for m, r, p in zip(f["measures"], f["rho"], f["p"]))


def _kind(f) -> str:
    return "exact" if f["exact"] else "Monte Carlo"


def selection(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.selection.selection_result`'s numbers."""
    f = r.facts
    n, panel = f["n"], f["panel"]
    if r.case == "too few":
        return r.verdict(_too_few(n, panel))
    measures, where = f["measures"], _where(f["kinds"])
    evidence = (f"Spearman over {_count(n, panel)}, orderings {where}: {_rho_text(f)}; all {len(measures)} positive: "
                f"p = {_fmt_p(r.p_value)} (the largest; best possible {_fmt_p(r.p_min)})")
    return r.verdict(
        evidence,
        test=(f"intersection-union of {len(measures)} {_kind(f)} one-sided permutation tests of Spearman's rho over "
              f"{f['n_orderings']} orderings of the downstream scores {where}, p = max (units: {_count(n, panel)})"),
        against=f"some score correlates negatively (largest -rho of {len(measures)} scores, same orderings)",
        effect_label=f"Spearman rho of the binding score ({measures[f['binding']]}), {_count(n, panel)}",
        effect_format="{:+.2f}", reconstruction=RECONSTRUCTION, note=f["note"])


def selection_strongest(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.selection.selection_strongest_result`'s numbers."""
    f = r.facts
    n, panel = f["n"], f["panel"]
    if r.case == "too few":
        return r.verdict(_too_few(n, panel))
    strongest, margins = f["strongest"], f["margins"]
    vs_text = "; ".join(f"vs {m}: rho difference {margins[m]:+.2f}, p = {_fmt_p(p)}" for m, p in f["p"].items())
    evidence = (f"Spearman over {_count(n, panel)}: {strongest} {f['rho']:+.2f}; {vs_text} (best possible "
                f"{_fmt_p(r.p_min)})")
    return r.verdict(
        evidence,
        test=(f"sign-flip tests over {_count(n, panel)} of {strongest}'s rho minus each other score's "
              f"(intersection-union over {len(margins)} scores)"),
        against=f"another score is stronger than {strongest} (Bonferroni over {f['n_reverse']} tests)",
        effect_label=f"smallest margin of {strongest}'s rho over another score's ({f['closest']}), {_count(n, panel)}",
        effect_format="{:+.2f}", reconstruction=RECONSTRUCTION, note=f["note"])


def _llm_note(f) -> str:
    n = f["n"]
    note = [f"downstream score: {f['downstream_name']}, our stand-in for the paper's MMLU"]
    if f["sources"] is not None:
        note.append(f"the decoders are {'; '.join(f'{m} = {s}' for m, s in zip(f['models'], f['sources']))}: "
                    f"{f['instruct']} of {n} instruct-tuned and {f['gguf']} of {n} dequantised from GGUF, where the "
                    f"paper uses base LLMs")
    if f["below_chance"] is not None:
        below = f["below_chance"]
        note.append("not above measured chance: " + ", ".join(
            f"{m} on {t} ({a:.2f} vs chance {c:.2f}, p = {p:.2g})" for m, t, a, c, p in below)
            if below else "every decoder is above its measured chance")
    return "; ".join(note)


def selection_llm(r: Result) -> Verdict:
    """The verdict of :func:`lrd.verdicts.selection.selection_llm_result`'s numbers."""
    f = r.facts
    n = f["n"]
    if r.case == "too few":
        return r.verdict(_too_few(n, "decoders"), note=_llm_note(f))
    measures, where = f["measures"], _where(f["kinds"])
    evidence = (f"Spearman over {_count(n, 'decoders')}, orderings {where}: {_rho_text(f)}; all {len(measures)} "
                f"positive: p = {_fmt_p(r.p_value)} (the largest), and no result on {_count(n, 'decoders')} can "
                f"have p below {_fmt_p(r.p_min)}")
    return r.verdict(
        evidence,
        test=(f"intersection-union of {len(measures)} {_kind(f)} one-sided permutation tests over {f['n_orderings']} "
              f"orderings of the decoders' downstream scores {where}, p = max"),
        against=f"some score correlates negatively (largest -rho of {len(measures)} scores, same orderings)",
        effect_label=(f"Spearman rho of the binding score ({measures[f['binding']]}), "
                      f"{_count(n, 'decoders')}"),
        effect_format="{:+.2f}",
        reconstruction=RECONSTRUCTION + "; downstream score: multiple-choice accuracy, not MMLU",
        note=_llm_note(f))


# --- the null models' designs (lrd.verdicts.selection) --------------------------------------------------

def selection_null(noise: float) -> dict[str, str]:
    """The designs of ``SELECTION_NULL`` in words (``noise``: the power simulation's noise sd)."""
    return {"panel": "{n} models (half encoders), 2 scores tracking the downstream score, 1 unrelated; the "
                     "downstream score separates the kinds (least favourable)",
            "effect_panel": "{n} models (half encoders), every score = downstream + 2 sd noise (weakly positive)",
            "power_panel": f"{{n}} models (half encoders), every score = downstream + {noise:g} sd noise within each "
                           f"kind (rho 0.71; assumed: the paper gives no rho)"}


def selection_strongest_null(noise: float) -> dict[str, str]:
    """The designs of ``STRONGEST_NULL`` in words."""
    return {"panel": "{n} models, 3 scores equally related to the downstream score (d_0L exchangeable with the "
                     "others)",
            "effect_panel": "the same: d_0L exchangeable with the others is also the edge of 'strongest'",
            "power_panel": f"{{n}} models, d_0L = downstream + 0.3 sd noise (rho 0.96), the other scores + "
                           f"{noise:g} sd (rho 0.71; assumed: the paper gives no rho)"}


def selection_llm_null(noise: float) -> dict[str, str]:
    """The designs of ``SELECTION_LLM_NULL`` in words."""
    return {"panel": "{n} decoders, 2 scores tracking the downstream score, 1 unrelated (least favourable)",
            "effect_panel": "{n} decoders, every score = downstream + 2 sd noise (weakly positive)",
            "power_panel": f"{{n}} causal LMs, every score = downstream + {noise:g} sd noise (rho 0.71; "
                           f"assumed: the paper gives no rho)"}
