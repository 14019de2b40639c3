r"""Graph filtration mutual information (GFMI): how much of the final layer's
cluster structure, at every scale, each layer already holds.

The paper (Jiang, Yang & Tam 2026, section 4.2) describes GFMI as aligning
each layer with the final layer through a graph filtration and scoring the
agreement with adjusted mutual information; its exact construction is not
public. This module implements the following reconstruction.

Construction
------------
1. *Geometry.* Centre each layer over samples and scale every row to unit
   length, :math:`u_i = (x_i - \bar x) / \lVert x_i - \bar x \rVert`. Distances
   are chordal, :math:`\lVert u_i - u_j \rVert = \sqrt{2 (1 - \cos_{ij})}`: cosine
   geometry of the centred states, so the score is invariant to rotation,
   uniform scaling and translation of a layer (and, unlike raw cosine, not
   dominated by the common direction that transformer states share).
   A sample at the centre (zero row after centring, relative 1e-12) stays the
   zero vector, at distance 1 from every other sample; a layer with all
   samples identical is one cluster at every level.
2. *Filtration.* Build the agglomerative dendrogram of that complete weighted
   graph (``scipy.cluster.hierarchy.linkage``; Ward by default). Its merge
   sequence is a nested family of partitions, a filtration of the graph.
   Levels are indexed by the number of clusters ``c`` (default 2, 4, 8, 16, 32,
   keeping ``c < n_samples``), not by a distance threshold, because distance
   scales differ between layers while cluster counts are comparable.
3. *Alignment and score.* At each level, compare the layer's partition with
   the final layer's partition by adjusted mutual information (arithmetic
   normalisation), and average over levels.

Why Ward rather than single linkage (the literal threshold-graph filtration,
whose levels are the connected components of :math:`\{d_{ij} \le t\}`):
single linkage chains, so on real representations its coarse levels are one
giant component plus outliers, and AMI between such partitions measures the
outliers. Ward (equivalently, minimum within-cluster variance on the unit
sphere) gives balanced clusters at every level, which makes the adjusted
score near 0 for unrelated layers and falls smoothly as the final layer's
structure is corrupted. The linkage is a keyword option.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage as scipy_linkage
from scipy.spatial.distance import squareform
from sklearn.metrics import adjusted_mutual_info_score

from lrd.metrics._validation import check_layers

__all__ = ["gfmi"]

_LINKAGES = ("ward", "average", "complete", "single")
_DEFAULT_LEVELS = (2, 4, 8, 16, 32)
#: Fewest samples GFMI is defined on. With fewer, the chance correction dominates the adjusted
#: mutual information: the lowest AMI of two 2-cluster partitions of n samples is -0.5 for n = 3
#: and 4, -0.29 for 5, -0.24 for 6, -0.19 for 7 and -0.17 for 8 (exhaustive search), so a few
#: samples give large negative "information" (3 samples: [1, -0.5, -0.5]).
MIN_SAMPLES = 8
# A centred row shorter than this fraction of the layer's largest raw row is
# treated as sitting at the centre (zero vector).
_AT_CENTRE_RTOL = 1e-12


def _chordal_distances(x: np.ndarray) -> np.ndarray | None:
    """Condensed chordal distances of centred, unit-normalised rows; None if all rows coincide."""
    scale = np.linalg.norm(x, axis=1).max()
    xc = x - x.mean(axis=0)
    norms = np.linalg.norm(xc, axis=1)
    at_centre = norms <= _AT_CENTRE_RTOL * scale
    if np.all(at_centre):
        return None
    u = np.where(at_centre[:, None], 0.0, xc / np.where(at_centre, 1.0, norms)[:, None])
    sq = (u * u).sum(axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (u @ u.T)
    np.fill_diagonal(d2, 0.0)
    d = np.sqrt(np.clip(d2, 0.0, None))
    return squareform((d + d.T) / 2.0, checks=False)


def _partitions(x: np.ndarray, levels: Sequence[int], method: str) -> np.ndarray:
    """Cluster labels (n_levels, n_samples), one nested partition per level."""
    n = x.shape[0]
    dist = _chordal_distances(x)
    if dist is None:
        return np.ones((len(levels), n), dtype=np.int64)
    tree = scipy_linkage(dist, method=method)
    return np.stack([fcluster(tree, t=c, criterion="maxclust") for c in levels])


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters by order of first appearance, so equal partitions give equal arrays."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def _ami(a: np.ndarray, b: np.ndarray) -> float:
    if np.array_equal(_canonical(a), _canonical(b)):
        return 1.0  # identical partitions; sklearn can round to 1 - 1e-16
    return float(adjusted_mutual_info_score(a, b, average_method="arithmetic"))


def gfmi(
    layers: np.ndarray,
    *,
    levels: Sequence[int] = _DEFAULT_LEVELS,
    linkage: str = "ward",
) -> np.ndarray:
    r"""Graph filtration mutual information of every layer with the final layer.

    With :math:`P_l^{(c)}` the partition of the samples into :math:`c`
    clusters obtained by cutting layer :math:`l`'s dendrogram (cosine geometry
    of the centred states; see the module docstring for the construction),

    .. math::

        \mathrm{GFMI}_l = \frac{1}{|C|} \sum_{c \in C}
            \mathrm{AMI}\big(P_l^{(c)}, P_L^{(c)}\big),
        \qquad C = \{c \in \text{levels} : c < N\} .

    Parameters
    ----------
    layers : ndarray of shape (n_layers, n_samples, d_model)
        Pooled states, layer 0 = embeddings, last layer = reference.
    levels : sequence of int, default (2, 4, 8, 16, 32)
        Cluster counts at which the filtration is cut; counts ``>= n_samples``
        are dropped.
    linkage : {"ward", "average", "complete", "single"}, default "ward"
        Agglomeration rule of the dendrogram (``"single"`` is the
        threshold-graph filtration).

    Returns
    -------
    ndarray of shape (n_layers,)
        ``out[-1] == 1`` exactly; about 0 for a layer unrelated to the final
        one (slightly below 0 at chance level); at most 1. Invariant to rotating,
        uniformly scaling and translating any layer. A layer with all samples
        identical (other than the final one) forms one cluster and scores 0.

    Raises
    ------
    ValueError
        If the input has NaN/inf, fewer than :data:`MIN_SAMPLES` (8) samples or 2 layers, no level is
        below ``n_samples``, a level is below 2, ``linkage`` is unknown, or the
        final layer (the reference) has all samples identical. Duplicate samples
        are allowed; integer and float16 input is computed in float64.

    Notes
    -----
    Per layer: one ``(N, N)`` Gram product, one ``O(N^2)`` linkage, and one AMI
    per level. Partitions are deterministic (scipy breaks merge ties by index).

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", section 4.2
    (construction reconstructed; the paper does not print it).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((60, 5))
    >>> gfmi(np.stack([x + 7.0, 3.0 * x]), levels=(2, 4)).tolist()
    [1.0, 1.0]
    """
    x = check_layers(layers, min_samples=MIN_SAMPLES)  # fewer: chance-level AMI far below 0
    n = x.shape[1]
    if linkage not in _LINKAGES:
        raise ValueError(f"linkage must be one of {_LINKAGES}, got {linkage!r}")
    levels = [int(c) for c in levels]
    if any(c < 2 for c in levels):
        raise ValueError(f"levels are cluster counts and must be >= 2, got {levels}")
    used = sorted({c for c in levels if c < n})
    if not used:
        raise ValueError(
            f"no level below n_samples={n} among levels={levels}; pass smaller levels "
            "or use more samples"
        )
    if x.shape[0] < 2:
        raise ValueError(f"need at least 2 layers (a layer and the final one), got layers of shape {x.shape}")
    if _chordal_distances(x[-1]) is None:
        raise ValueError(
            "the final layer has all samples identical (one cluster at every level), so there is "
            "no structure to compare the other layers with; check the pooling and inputs"
        )
    reference = _partitions(x[-1], used, linkage)
    out = np.empty(x.shape[0])
    for layer in range(x.shape[0]):
        parts = reference if layer == x.shape[0] - 1 else _partitions(x[layer], used, linkage)
        out[layer] = np.mean([_ami(p, q) for p, q in zip(parts, reference)])
    return out
