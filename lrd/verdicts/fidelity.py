"""Where the book follows the authors' code: the decision per measurement and its measured effect.

Issue 30 put lrd's measurements beside the public code of the papers (OFSkean/information_flow
for Skean et al. 2025, icip-cas/ShortGPT for block influence, tomulanovski/ILSE for the
Cayley-Encoder). Where a verdict compares our number with the paper's, the measurement under its
plain name computes what the paper's code computes and the formula is a named option computed
from the same states (:data:`lrd.methods.suite.FORMULA_VARIANTS`); where the code has a defect
(pad tokens averaged into ShortGPT's score) lrd keeps the right computation. This module holds
the decision table and turns the chapters' tidy tables (both variants) into the appendix's
tables: no forward pass, no training. Its words (the decision table, the layout sentence, the
claims' labels) are :mod:`lrd.verdicts.wording.fidelity`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lrd.aggregation.cayley import ilse_layout
from lrd.methods.suite import FORMULA_VARIANTS
from lrd.verdicts.layer_choice import judge_choice, judge_metrics_track, judge_valley
from lrd.verdicts.wording import fidelity as wording
from lrd.verdicts.wording.fidelity import DECISIONS

__all__ = ["DECISIONS", "decisions", "ilse_layout_text", "ilse_layouts", "variant_differences", "variant_verdicts", "relevance_variants",
           "cayley_configurations"]

def decisions() -> pd.DataFrame:
    """:data:`DECISIONS` as a table (columns ``measurement, authors' code, lrd default, other variant, why``)."""
    return pd.DataFrame(DECISIONS, columns=["measurement", "authors' code", "lrd default", "other variant", "why"])


def ilse_layout_text(model: str, n_states: int | None) -> str:
    """One sentence: where ``model``'s ``n_states`` states go under lrd's and ILSE's default configuration.

    >>> ilse_layout_text("m", 7)
    'm has 7 states, one more than |SL(2, Z_2)| = 6: ILSE drops the embedding state and uses 6 nodes, lrd keeps all 7 on 24'
    >>> ilse_layout_text("m", 13)
    'm has 13 states: both configurations put them on the 24 nodes of SL(2, Z_3), so only the doubled edges differ'
    """
    return wording.ilse_layout(model, ilse_layouts(n_states))


def ilse_layouts(n_states: int | None) -> dict | None:
    """Where ``n_states`` states go under ILSE's default configuration and lrd's: ``n`` (of SL(2,
    Z_n)), ``nodes``, ``drops_first`` (ILSE drops the embedding state) and ``lrd_nodes``; None
    without states.

    >>> ilse_layouts(7)
    {'n_states': 7, 'n': 2, 'nodes': 6, 'drops_first': True, 'lrd_nodes': 24}
    """
    if n_states is None:
        return None
    n, nodes, first = ilse_layout(n_states, keep_embedding_layer=False)
    _, lrd_nodes, _ = ilse_layout(n_states)
    return {"n_states": n_states, "n": n, "nodes": nodes, "drops_first": bool(first), "lrd_nodes": lrd_nodes}


def variant_differences(results: pd.DataFrame) -> pd.DataFrame:
    """Per model and measurement of :data:`FORMULA_VARIANTS`: how far the code's curve is from the formula's.

    Each curve is averaged over the tasks it was measured on; ``max |diff|`` is the largest
    absolute difference over layers, ``mean diff`` the mean of (code - formula), and
    ``argmin moves`` whether the deepest intermediate layer (``0 < l < L``, where a valley
    would be) differs between the two.

    Returns
    -------
    DataFrame
        Columns ``model, measurement, max |diff|, mean diff, argmin moves``; a measurement whose
        formula rows are absent (a cache written before both were computed) is left out.
    """
    out = []
    for code, formula in FORMULA_VARIANTS.items():
        part = results[results["measurement"].isin([code, formula])]
        if not (part["measurement"] == formula).any():
            continue
        curves = part.groupby(["model", "measurement", "layer"], sort=False)["value"].mean().unstack("layer")
        for model in dict.fromkeys(part["model"]):
            if (model, code) not in curves.index or (model, formula) not in curves.index:
                continue
            a, b = curves.loc[(model, code)].to_numpy(float), curves.loc[(model, formula)].to_numpy(float)
            inner = slice(1, len(a) - 1)
            out.append({"model": model, "measurement": code, "max |diff|": float(np.nanmax(np.abs(a - b))),
                        "mean diff": float(np.nanmean(a - b)),
                        "argmin moves": bool(len(a) > 2 and np.argmin(a[inner]) != np.argmin(b[inner]))})
    return pd.DataFrame(out, columns=["model", "measurement", "max |diff|", "mean diff", "argmin moves"])


def variant_verdicts(results: pd.DataFrame, *, token_task: str, note: str | None = None) -> pd.DataFrame:
    """The mid-layer verdicts that read a measurement of :data:`FORMULA_VARIANTS`, under both variants.

    The same judge functions as the chapter (:func:`lrd.verdicts.layer_choice.judge_valley`,
    ``judge_metrics_track`` with the paper's two signed metrics, ``judge_choice`` by DiME), once
    with the paper's code (the chapter's verdict) and once with the formula.

    Returns
    -------
    DataFrame
        Index ``claim``; columns ``paper's code`` and ``formula`` (outcome and evidence) and
        ``same outcome``.
    """
    f = FORMULA_VARIANTS
    tokens = results[results["task"] == token_task]
    labels = wording.VARIANT_CLAIMS
    pairs = {
        labels["valley"]: (lambda m: judge_valley(tokens, measurement=m, note=note), "prompt entropy"),
        labels["metrics_track"]: (
            lambda m: judge_metrics_track(results, directions={m[0]: -1, m[1]: +1}, note=note),
            ("prompt entropy", "DiME")),
        labels["choice"]: (lambda m: judge_choice(results, metric=m, note=note), "DiME"),
    }
    rows = []
    for claim, (judge, code) in pairs.items():
        formula = tuple(f[c] for c in code) if isinstance(code, tuple) else f[code]
        needed = formula if isinstance(formula, tuple) else (formula,)
        if not all((results["measurement"] == m).any() for m in needed):
            continue
        a, b = judge(code), judge(formula)
        rows.append({"claim": claim, "paper's code": str(a), "formula": str(b), "same outcome": a.outcome == b.outcome})
    return pd.DataFrame(rows, columns=["claim", "paper's code", "formula", "same outcome"]).set_index("claim")


def relevance_variants(relevance: pd.DataFrame) -> pd.DataFrame:
    """The last block's cosine relevance by lrd's definition and by ShortGPT's (after the final norm).

    ``relevance`` holds tidy rows with ``"cosine relevance"`` and ``"cosine relevance (ShortGPT
    last block)"`` (:func:`lrd.methods.relevance.relevance_rows`). Columns: ``model, task, lrd,
    ShortGPT, difference`` and the last block's rank among all blocks (1 = least relevant, the
    first ShortGPT would prune) under each.
    """
    name = "cosine relevance (ShortGPT last block)"
    out = []
    for (model, task), part in relevance.groupby(["model", "task"], sort=False):
        ours = part[part["measurement"] == "cosine relevance"].sort_values("layer")["value"].to_numpy(float)
        theirs = part[part["measurement"] == name].sort_values("layer")["value"].to_numpy(float)
        if not len(theirs) or len(ours) != len(theirs):
            continue
        rank = lambda v: int((v < v[-1]).sum()) + 1
        out.append({"model": model, "task": task, "lrd": ours[-1], "ShortGPT": theirs[-1],
                    "difference": theirs[-1] - ours[-1], "rank lrd": rank(ours), "rank ShortGPT": rank(theirs)})
    return pd.DataFrame(out, columns=["model", "task", "lrd", "ShortGPT", "difference", "rank lrd", "rank ShortGPT"])


def cayley_configurations(scores: pd.DataFrame | None, *,
                          variants=("identity mapping", "edges listed twice (reference)",
                                    "embeddings dropped (ILSE trainers)")) -> pd.DataFrame:
    """Mean and spread over seeds of the Cayley ablation's scores under lrd's and ILSE's configurations.

    ``scores``: the ablation unit's rows (``variant, seed, score``). Columns ``variant, mean,
    std, n_seeds, minus identity`` (the mean difference from lrd's configuration); empty when
    ``scores`` is None (no ablation unit in the panel).
    """
    if scores is None:
        scores = pd.DataFrame(columns=["variant", "seed", "score"])
    part = scores[scores["variant"].isin(variants)]
    table = part.groupby("variant", sort=False)["score"].agg(["mean", "std", "count"]).rename(columns={"count": "n_seeds"})
    table = table.reindex([v for v in variants if v in table.index])
    base = table["mean"].get("identity mapping", np.nan)
    return table.assign(**{"minus identity": table["mean"] - base}).reset_index()
