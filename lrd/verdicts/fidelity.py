"""Where the book follows the authors' code: the decision per measurement and its measured effect.

Issue 30 put lrd's measurements beside the public code of the papers (OFSkean/information_flow
for Skean et al. 2025, icip-cas/ShortGPT for block influence, tomulanovski/ILSE for the
Cayley-Encoder). Where a verdict compares our number with the paper's, the measurement under its
plain name computes what the paper's code computes and the formula is a named option computed
from the same states (:data:`lrd.methods.suite.FORMULA_VARIANTS`); where the code has a defect
(pad tokens averaged into ShortGPT's score) lrd keeps the right computation. This module holds
the decision table and turns the chapters' tidy tables (both variants) into the appendix's
tables: no forward pass, no training.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lrd.aggregation.cayley import ilse_layout
from lrd.methods.suite import FORMULA_VARIANTS
from lrd.verdicts.layer_choice import judge_choice, judge_metrics_track, judge_valley

__all__ = ["DECISIONS", "decisions", "ilse_layout_text", "variant_differences", "variant_verdicts", "relevance_variants",
           "cayley_configurations"]

#: One row per place lrd and the authors' code differ: (measurement, the authors' code, lrd's
#: default, the other variant and its option, why).
DECISIONS = [
    ("matrix-based entropy (prompt and dataset entropy)",
     "OFSkean/information_flow compute_entropy (experiments/utils/metrics/metric_functions.py; "
     "also misc/metric_utils.py): max(M, 0) entrywise, M = Z^T Z if N > d else Z Z^T, then trace-normalised spectrum",
     "the code's clamp (dataset_entropy, prompt_entropy: clamp=True)",
     "the formula, spectrum of Z Z^T / tr: clamp=False; rows '... (no clamp)'",
     "the compression-valley and metrics-track verdicts compare with the paper's curves"),
    ("effective rank", "no function in the authors' code", "exp of the formula's entropy (no clamp)",
     "matrix_entropy(..., clamp=True) if wanted", "nothing of the paper's to follow"),
    ("Renyi entropy, alpha = 2", "repitl frobeniusGIP: -log(||K||_F^2 / m^2), the formula + 2 log m",
     "the formula", "frobenius_offset=True", "a constant offset, and the book uses alpha = 1"),
    ("prompt curvature", "compute_curvature (metric_functions.py): centred, L2-normalised tokens; "
     "arccos |cos| of consecutive steps; a zero step counts as angle 0",
     "the code's (normalize=True, absolute=True, zero_steps='zero')",
     "the formula on raw tokens: normalize=False, absolute=False, zero_steps='drop'; rows 'curvature (raw tokens, ...)'",
     "the book shows the paper's curvature curves"),
    ("DiME", "compute_dime with repitl doe: d x d covariances A^T A, B^T B (feature axes permuted) when N > d",
     "the code's (kernel='code')", "N x N Gram matrices always: kernel='samples'; rows 'DiME (N x N Gram)'",
     "the label-free layer choice is compared with the paper's; identical for N <= d"),
    ("block influence (cosine relevance), last block", "icip-cas/ShortGPT compute_bi: the last block's input "
     "against hidden_states[-1], after the final norm",
     "the block's own output (before the final norm), the same definition for every block",
     "rows 'cosine relevance (ShortGPT last block)', from the same pass",
     "Hinostroza et al. define relevance on a block's input and output; the norm is not the block"),
    ("block influence, pad tokens", "ShortGPT sums over every position of the padded batch",
     "real tokens only", "none", "a defect: a prompt's score would depend on its batch-mates' lengths"),
    ("Cayley graph: states and nodes", "tomulanovski/ILSE gnn_datasets.py, keep_embedding_layer=False (most trainers): "
     "drop the embedding state when L + 1 = |SL(2, Z_n)| + 1",
     "every state kept (keep_embedding_layer=True, as the precomputed trainers)",
     "keep_embedding_layer=False; ablation variant 'embeddings dropped (ILSE trainers)'",
     "the paper maps every layer to a node; which configuration its tables used cannot be told"),
    ("Cayley graph: edge multiplicity", "get_cayley_graph lists g -> gs and gs -> g per generator: "
     "each edge twice (n >= 3), four times (n = 2)", "each edge once each way",
     "reference_duplicates=True; ablation variant 'edges listed twice (reference)'",
     "a duplicated edge doubles a neighbour's message under sum aggregation, which the paper does not describe"),
]


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
    if n_states is None:
        return f"{model} is not in the panel, so the configuration is not measured here"
    n, nodes, first = ilse_layout(n_states, keep_embedding_layer=False)
    _, lrd_nodes, _ = ilse_layout(n_states)
    if first:
        return (f"{model} has {n_states} states, one more than |SL(2, Z_{n})| = {nodes}: ILSE drops the embedding "
                f"state and uses {nodes} nodes, lrd keeps all {n_states} on {lrd_nodes}")
    return (f"{model} has {n_states} states: both configurations put them on the {nodes} nodes of SL(2, Z_{n}), "
            "so only the doubled edges differ")


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
    pairs = {
        "compression valley (prompt entropy)": (
            lambda m: judge_valley(tokens, measurement=m, note=note), "prompt entropy"),
        "metrics track the score (prompt entropy, DiME)": (
            lambda m: judge_metrics_track(results, directions={m[0]: -1, m[1]: +1}, note=note),
            ("prompt entropy", "DiME")),
        "a layer chosen by DiME beats the last": (lambda m: judge_choice(results, metric=m, note=note), "DiME"),
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
