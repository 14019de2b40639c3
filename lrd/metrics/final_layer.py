r"""Statistics of one layer alone (the final layer's, for the LRD chapter's baseline).

The LRD paper says its families reveal differences "not apparent from final-layer representations
alone" (Jiang, Yang, Tam 2026, abstract). A baseline poorer than the families would make that
claim easy, so the book gives the final layer the same three kinds of measurement the families
make across layers, applied to the one layer:

* spectral: the Frenet rank :math:`r` (:mod:`lrd.metrics.frenet`) and the mean pairwise cosine
  (:func:`lrd.metrics.mean_cosine_similarity`), already in the chapter's tables;
* neighbourhood (NRS's ingredient): :func:`knn_cosine`, the mean cosine of each text to its
  :math:`k` nearest neighbours;
* clustering (GFMI's ingredient): :func:`cluster_share`, the share of the layer's variance
  between the clusters of the same Ward partitions GFMI compares.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lrd.metrics.gfmi import _DEFAULT_LEVELS, _partitions

__all__ = ["knn_cosine", "cluster_share", "final_layer_statistics"]


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or not np.isfinite(x).all():
        raise ValueError(f"expected a finite (n_samples >= 2, d) array, got shape {np.shape(x)}")
    norms = np.linalg.norm(x, axis=1)
    if (norms == 0).any():
        raise ValueError("a sample has zero norm: its cosine is undefined")
    return x / norms[:, None]


def knn_cosine(x: np.ndarray, k: int = 10) -> float:
    r"""Mean cosine similarity of each sample to its ``k`` nearest neighbours (cosine; itself excluded).

    .. math:: \bar c^{(k)} = \frac1N \sum_i \frac1k \sum_{j \in \mathcal N^k(i)} \cos(x_i, x_j),

    with :math:`\mathcal N^k(i)` the neighbourhood NRS uses (:func:`lrd.metrics.nrs`): how tight
    the layer's local neighbourhoods are. Invariant to rotation and to rescaling any sample.

    Examples
    --------
    >>> round(knn_cosine(np.eye(4), k=2), 12)  # orthogonal samples: every cosine is 0
    0.0
    >>> knn_cosine(np.array([[1.0, 0], [2, 0], [0, 1], [0, 3]]), k=1)  # each sample has a parallel twin
    1.0
    """
    u = _unit(x)
    n = u.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k must lie in [1, n_samples), got k={k} for {n} samples")
    sim = u @ u.T
    np.fill_diagonal(sim, -np.inf)
    top = np.partition(sim, n - k, axis=1)[:, n - k:]  # the k largest of each row
    return float(np.clip(top, -1.0, 1.0).mean())


def cluster_share(x: np.ndarray, levels: Sequence[int] = _DEFAULT_LEVELS, *, linkage: str = "ward") -> float:
    r"""Share of the layer's variance between its clusters, averaged over the filtration levels.

    The rows are centred and unit-normalised and cut by the Ward dendrogram into ``levels``
    clusters, exactly as :func:`lrd.metrics.gfmi` does (its partitions); at each level the share
    is :math:`R^2 = 1 - \sum_c \sum_{i \in c} \lVert u_i - \bar u_c \rVert^2 / \sum_i \lVert u_i - \bar u \rVert^2`,
    and the statistic is its mean over the levels: how strongly the layer is clustered (1 when
    the samples sit on as many points as clusters, near the level's share of directions for
    isotropic noise). Invariant to rotation, scaling and translation of the layer.

    Examples
    --------
    Two groups of duplicates on opposite sides: two clusters hold all the variance.

    >>> x = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]])
    >>> cluster_share(x, levels=(2,))
    1.0
    """
    x = np.asarray(x, dtype=np.float64)
    levels = [min(int(c), x.shape[0]) for c in levels]
    labels = _partitions(x, levels, linkage)  # (levels, N)
    xc = x - x.mean(axis=0)
    norms = np.linalg.norm(xc, axis=1)
    u = np.where(norms[:, None] > 0, xc / np.where(norms > 0, norms, 1.0)[:, None], 0.0)
    u = u - u.mean(axis=0)
    total = float((u * u).sum())
    if total <= 0:
        return 0.0
    shares = []
    for lab in labels:
        _, idx = np.unique(lab, return_inverse=True)
        sums = np.zeros((idx.max() + 1, u.shape[1]))
        np.add.at(sums, idx, u)
        counts = np.bincount(idx).astype(float)
        between = float(((sums ** 2).sum(1) / counts).sum())  # sum_c n_c |mean_c|^2 (u centred)
        shares.append(between / total)
    return float(np.clip(np.mean(shares), 0.0, 1.0))


def final_layer_statistics(layers: np.ndarray, *, k: int = 10,
                           levels: Sequence[int] = _DEFAULT_LEVELS) -> dict[str, float]:
    """The final layer's neighbourhood and clustering statistics (the chapter's column names).

    ``layers``: (L + 1, N, d) or one (N, d) layer. Returns ``"final kNN cosine"``
    (:func:`knn_cosine` with NRS's ``k``) and ``"final cluster share"`` (:func:`cluster_share`
    at GFMI's levels).
    """
    last = np.asarray(layers)[-1] if np.ndim(layers) == 3 else np.asarray(layers)
    return {"final kNN cosine": knn_cosine(last, k), "final cluster share": cluster_share(last, levels)}
