"""The words of the authors'-code appendix (:mod:`lrd.verdicts.fidelity`): the decision table, the
sentence saying where a model's states go on the Cayley graph, and the labels of the mid-layer
claims judged under both variants."""

from __future__ import annotations

__all__ = ["DECISIONS", "VARIANT_CLAIMS", "ilse_layout"]

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

#: The mid-layer claims :func:`lrd.verdicts.fidelity.variant_verdicts` judges under both variants, by judge.
VARIANT_CLAIMS = {
    "valley": "compression valley (prompt entropy)",
    "metrics_track": "metrics track the score (prompt entropy, DiME)",
    "choice": "a layer chosen by DiME beats the last",
}


def ilse_layout(model: str, layout: dict | None) -> str:
    """One sentence from :func:`lrd.verdicts.fidelity.ilse_layouts`: where ``model``'s states go."""
    if layout is None:
        return f"{model} is not in the panel, so the configuration is not measured here"
    n_states, n, nodes, lrd_nodes = layout["n_states"], layout["n"], layout["nodes"], layout["lrd_nodes"]
    if layout["drops_first"]:
        return (f"{model} has {n_states} states, one more than |SL(2, Z_{n})| = {nodes}: ILSE drops the embedding "
                f"state and uses {nodes} nodes, lrd keeps all {n_states} on {lrd_nodes}")
    return (f"{model} has {n_states} states: both configurations put them on the {nodes} nodes of SL(2, Z_{n}), "
            "so only the doubled edges differ")
