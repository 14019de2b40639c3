"""All LRD measurement families of one stack of layers, as tidy rows.

Helpers that chapters call once per (model, task): :func:`lrd_profile` runs Frenet, NRS and
GFMI on the same ``(L + 1, N, d)`` array; :func:`profile_rows` lays the per-layer values out
on a common depth axis and :func:`model_scores` condenses them to model-level scores (d_{0,L}
as in the paper; the means over layers are our reconstruction).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lrd.metrics.frenet import FrenetResult, frenet
from lrd.metrics.gfmi import gfmi
from lrd.metrics.nrs import adjust_nrs, nrs
from lrd.tables import per_layer


@dataclass(frozen=True)
class LRDProfile:
    """Frenet, NRS (raw and chance-adjusted) and GFMI of one stack of layers."""

    frenet: FrenetResult
    nrs: np.ndarray  # (L,), pair (l, l+1)
    nrs_adjusted: np.ndarray  # (L,)
    gfmi: np.ndarray  # (L+1,)

    @property
    def n_layers(self) -> int:
        """L, the number of blocks (the stack has L + 1 layers)."""
        return len(self.gfmi) - 1


def lrd_profile(layers: np.ndarray, *, k: int = 10, variance: float = 0.95, **gfmi_options) -> LRDProfile:
    """Run every LRD family on ``layers`` of shape (L + 1, N, d).

    Parameters
    ----------
    layers : ndarray of shape (n_layers, n_samples, d_model)
    k : int
        Neighbourhood size of NRS.
    variance : float
        Variance fraction that fixes the Frenet rank r on the final layer.
    **gfmi_options
        Passed to :func:`lrd.metrics.gfmi` (``levels``, ``linkage``).

    Notes
    -----
    Runs with numpy's and scipy's BLAS on one thread: the families are many small decompositions
    (per layer an SVD, a k-NN graph, a clustering), where more BLAS threads only add
    synchronisation, and beside torch's own threads in the same process they cost many times the
    one-thread time. torch's threads (the forward pass) are not touched.
    """
    with threadpool_limits(1, user_api="blas"):
        raw = nrs(layers, k)
        return LRDProfile(frenet(layers, variance=variance), raw, adjust_nrs(raw, k, np.shape(layers)[1]),
                          gfmi(layers, **gfmi_options))


def profile_rows(profile: LRDProfile, *, model: str, task: str) -> pd.DataFrame:
    """Tidy per-layer rows (``model, task, measurement, layer, depth, value``).

    Quantities of a transition l -> l + 1 (velocity, NRS) sit at layer l + 1/2; curvature
    kappa_{l+1} at its middle layer l + 1; GFMI at its layer. ``depth = layer / L``.
    """
    L = profile.n_layers
    mid = np.arange(L) + 0.5
    series = {
        "velocity": (mid, profile.frenet.velocity),
        "curvature": (np.arange(1, L), profile.frenet.curvature),
        "NRS": (mid, profile.nrs),
        "NRS (adjusted)": (mid, profile.nrs_adjusted),
        "GFMI": (np.arange(L + 1), profile.gfmi),
    }
    return pd.concat([per_layer(val, model=model, task=task, measurement=name, layers=pos, n_layers=L)
                      for name, (pos, val) in series.items()], ignore_index=True)


def model_scores(profile: LRDProfile) -> dict[str, float]:
    """Model-level scores: rank r, end-to-end displacement d_{0,L}, means over layers.

    d_{0,L} is the paper's model-level Frenet score (Jiang, Yang, Tam 2026, abstract). The paper
    names three model-level scores but the text we have defines only d_{0,L}: the means over
    layers (velocity, curvature, NRS, GFMI) are *our reconstruction* of the others, and NRS and
    GFMI are themselves reconstructions. ``mean GFMI`` averages layers 0..L-1 (layer L is 1 by
    construction).
    """
    fr = profile.frenet
    return {"rank r": fr.rank, "d_0L": fr.displacement, "mean velocity": fr.mean_velocity,
            "mean curvature": fr.mean_curvature, "mean NRS": float(profile.nrs.mean()),
            "mean NRS (adjusted)": float(profile.nrs_adjusted.mean()), "mean GFMI": float(profile.gfmi[:-1].mean())}
