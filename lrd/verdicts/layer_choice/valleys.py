"""The valley of prompt entropy (Skean et al., Fig. 2a): the mid-band contrast of a curve, per model
and per prompt, and each model's tests over its prompts (:mod:`lrd.verdicts.layer_choice`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lrd.verdicts.layer_choice.tables import per_model_arrays, sample_intervals
from lrd.verdicts.stats import equivalence_sign_flip_test, holm, sign_flip_test

__all__ = ["valley_drop", "VALLEY_BAND", "VALLEY_MARGIN", "valley_contrast", "valley_depths",
           "prompt_valleys", "per_model_valleys"]


def valley_drop(curve: np.ndarray) -> float:
    r"""Depth of a mid-depth valley: :math:`\min(S_0, S_L) - \min_{0<l<L} S_l`.

    Positive when some intermediate layer lies below both ends (a valley), negative or 0 when
    the curve is monotone or peaks in the middle. Our reconstruction: the paper shows the
    curves (Fig. 2a) without a scalar depth. Needs at least 3 layers.

    >>> valley_drop([1.0, 0.4, 0.9])
    0.5
    """
    c = np.asarray(curve, dtype=float)
    if c.ndim != 1 or len(c) < 3:
        raise ValueError(f"need a 1-D curve of at least 3 layers, got shape {c.shape}")
    return float(min(c[0], c[-1]) - c[1:-1].min())


#: The mid-depth band where a valley is looked for (our reconstruction of Fig. 2a's "mid-depth";
#: the paper gives no number): blocks at depth l/L in [0.25, 0.75] against the blocks on either side.
VALLEY_BAND = (0.25, 0.75)
#: Equivalence margin of "encoders do not" show a valley: a mid-band contrast within +-0.05 of
#: the normalised prompt entropy (which lies in [0, 1]) counts as flat. Our choice: the paper
#: shows BERT's curve as flat (Fig. 2a) without a tolerance.
VALLEY_MARGIN = 0.05


def valley_contrast(curves: np.ndarray, band: tuple[float, float] = VALLEY_BAND) -> np.ndarray | float:
    r"""The mid-band valley statistic of one curve, or of each row of ``curves`` (..., L + 1).

    With :math:`E`, :math:`M` and :math:`T` the blocks (the embeddings, :math:`l = 0`, left out)
    at depth :math:`l/L` below the band, in it and above it, :math:`\bar S_G` and
    :math:`\bar d_G` a group's mean entropy and mean depth,

    .. math:: v = \frac{(\bar d_T - \bar d_M)\,\bar S_E + (\bar d_M - \bar d_E)\,\bar S_T}
                       {\bar d_T - \bar d_E} - \bar S_M ,

    how far the middle lies below the straight line through the two sides, at the middle's
    depth. Positive when the middle lies below both sides. A linear contrast: 0 in expectation when
    the layers are exchangeable (the old :func:`valley_drop` is positive with probability
    :math:`(L-1)/(L+1)` there), 0 on a straight line (a monotone trend is no valley), negative
    for a dip at block 1 (block 1 lies below the band), and the mean over prompts of their
    contrasts is the contrast of their mean curve. Needs a block on each side of the band.

    >>> round(valley_contrast([0.9, 0.8, 0.5, 0.5, 0.5, 0.8, 0.8]), 12)  # L = 6: blocks 1 | 2-4 | 5-6
    0.3
    >>> round(valley_contrast([0.9, 0.2, 0.8, 0.8, 0.8, 0.8, 0.8]), 3)  # a dip at block 1 is no valley
    -0.333
    """
    c = np.asarray(curves, dtype=float)
    n_blocks = c.shape[-1] - 1
    depth = np.arange(1, n_blocks + 1) / max(n_blocks, 1)
    lo, hi = band
    early, mid, late = depth < lo - 1e-12, (depth >= lo - 1e-12) & (depth <= hi + 1e-12), depth > hi + 1e-12
    if not (early.any() and mid.any() and late.any()):
        raise ValueError(f"a curve of {n_blocks} blocks has no block on each side of the band {band}; "
                         "the valley statistic needs at least 5 blocks")
    blocks = c[..., 1:]
    d_e, d_m, d_t = depth[early].mean(), depth[mid].mean(), depth[late].mean()
    line = ((d_t - d_m) * blocks[..., early].mean(-1) + (d_m - d_e) * blocks[..., late].mean(-1)) / (d_t - d_e)
    v = line - blocks[..., mid].mean(-1)
    return float(v) if np.ndim(v) == 0 else v


def valley_depths(results: pd.DataFrame, *, measurement: str = "prompt entropy",
                  band: tuple[float, float] = VALLEY_BAND) -> pd.DataFrame:
    """:func:`valley_contrast` of each model's curve of ``measurement`` (averaged over tasks), beside the
    old :func:`valley_drop`: ``model, kind, valley, deepest drop``."""
    if "kind" not in results.columns:
        raise ValueError("results need a 'kind' column (encoder or decoder per model)")
    kinds = results.groupby("model", sort=False)["kind"].first()
    return pd.DataFrame([{"model": model, "kind": kinds[model],
                          "valley": valley_contrast(values[..., 0].mean(0), band) if _has_band(len(layers), band)
                          else float("nan"),
                          "deepest drop": valley_drop(values[..., 0].mean(0))}
                         for model, (_, layers, values) in per_model_arrays(results, [measurement]).items()])


def _has_band(n_layers: int, band: tuple[float, float]) -> bool:
    """Whether a curve of ``n_layers`` layers (0..L) has a block on each side of ``band`` and in it."""
    try:
        valley_contrast(np.zeros(n_layers), band)
    except ValueError:
        return False
    return True


def _prompt_valley_groups(prompts: pd.DataFrame, band: tuple[float, float]):
    """Per (model, kind) in order of first appearance (as ``groupby(sort=False)``): the model, its
    kind, its prompts (ascending) and their :func:`valley_contrast`; models with too few blocks
    for a mid band are left out, as in :func:`valley_depths`."""
    needed = {"model", "kind", "prompt", "layer", "value"}
    if not needed <= set(prompts.columns):
        raise ValueError(f"prompts need the columns {sorted(needed)}")
    m_codes, models = pd.factorize(prompts["model"], use_na_sentinel=False)
    k_codes, kinds = pd.factorize(prompts["kind"], use_na_sentinel=False)
    codes, pairs = pd.factorize(m_codes * len(kinds) + k_codes)  # (model, kind) pairs by first appearance
    prompt, layer = prompts["prompt"].to_numpy(), prompts["layer"].to_numpy()
    value = prompts["value"].to_numpy(dtype=float)
    order = np.lexsort((layer, prompt, codes))
    starts = np.searchsorted(codes[order], np.arange(len(pairs) + 1))
    for g, pair in enumerate(pairs):
        model, kind = models[pair // len(kinds)], kinds[pair % len(kinds)]
        rows = order[starts[g]:starts[g + 1]]  # this model's rows, by prompt then layer
        p, l = prompt[rows], layer[rows]
        new_prompt = np.r_[True, p[1:] != p[:-1]]
        ids, layers = p[new_prompt], np.unique(l)
        repeated = (~new_prompt[1:] & (l[1:] == l[:-1])).any()  # sorted: a repeated (prompt, layer) is adjacent
        if len(rows) != len(ids) * len(layers) or repeated:
            raise ValueError(f"model {model!r}: every prompt needs exactly one value at every layer")
        if not _has_band(len(layers), band):
            continue  # too few blocks for a mid band: left out, as in valley_depths
        yield model, kind, ids, valley_contrast(value[rows].reshape(len(ids), len(layers)), band)


def prompt_valleys(prompts: pd.DataFrame, *, band: tuple[float, float] = VALLEY_BAND) -> pd.DataFrame:
    """:func:`valley_contrast` of every prompt's curve (:func:`lrd.methods.crossfit.prompt_entropy_rows`):
    ``model, kind, prompt, valley``."""
    found: dict[str, list] = {"model": [], "kind": [], "prompt": [], "valley": []}
    for model, kind, ids, valleys in _prompt_valley_groups(prompts, band):
        for key, part in (("model", [model] * len(ids)), ("kind", [kind] * len(ids)), ("prompt", ids),
                          ("valley", valleys)):
            found[key].extend(part)
    return pd.DataFrame(found) if found["model"] else pd.DataFrame(columns=["model", "kind", "prompt", "valley"])


def per_model_valleys(prompts: pd.DataFrame, *, band: tuple[float, float] = VALLEY_BAND,
                      margin: float = VALLEY_MARGIN, n_permutations: int = 1000) -> pd.DataFrame:
    r"""Per model, prompts as the unit: the mean valley, its t-interval and two sign-flip tests.

    ``p valley``: one-sided sign-flip test over the model's prompts of "the mean valley is above
    0" (exact up to 16 prompts, else ``n_permutations`` random sign patterns); ``p flat``: the equivalence
    test over prompts of "it lies within +-``margin``"
    (:func:`lrd.verdicts.stats.equivalence_sign_flip_test`; ``p flat min`` its smallest p). ``p valley
    (Holm)`` is Holm-adjusted over the panel's decoders, ``p flat (Holm)`` over its encoders.
    The unit is the prompt: the model's own curve is the estimand, not a draw from a population.
    """
    rows, samples = [], []
    for model, kind, _, x in _prompt_valley_groups(prompts, band):  # prompt_valleys, grouped
        if pd.isna(model) or pd.isna(kind):
            continue  # as groupby would
        rows.append({"model": model, "kind": kind, "prompts": len(x), "valley": float(x.mean()),
                     "ci": None, "p valley": sign_flip_test(x, n_permutations=n_permutations).p_value,
                     "p flat": (flat := equivalence_sign_flip_test(x, margin, n_permutations=n_permutations)).p_value,
                     "p flat min": flat.p_min})
        samples.append(x)
    for row, ci in zip(rows, sample_intervals(samples)):  # filled in at once
        row["ci"] = ci
    table = pd.DataFrame(rows, columns=["model", "kind", "prompts", "valley", "ci", "p valley", "p flat", "p flat min"])
    for column, kind in (("p valley", "decoder"), ("p flat", "encoder")):
        mask = (table["kind"] == kind).to_numpy()
        table[f"{column} (Holm)"] = np.nan
        if mask.any():
            table.loc[mask, f"{column} (Holm)"] = holm(table.loc[mask, column].to_numpy())
    return table
