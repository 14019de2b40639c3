r"""Neighbourhood retention score (NRS): how much of each sample's local
neighbourhood survives from one layer to the next.

The paper (Jiang, Yang & Tam 2026, section 4.1) does not print its formula;
this module implements the documented reconstruction below: the mean overlap
of cosine k-nearest-neighbour sets between consecutive layers, optionally
adjusted for the overlap two random neighbour sets would have by chance.
"""

from __future__ import annotations

import numpy as np

from lrd.metrics._validation import check_layers, constant_layers

__all__ = ["nrs"]

# Rows of the (n, n) similarity matrix processed at once; bounds memory at
# _BLOCK * n_samples floats for large n_samples.
_BLOCK = 4096


def _unit_rows(x: np.ndarray, layer: int) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if np.any(norms == 0):
        bad = np.flatnonzero(norms[:, 0] == 0)[:5].tolist()
        raise ValueError(
            f"layer {layer} has samples with zero norm (samples {bad}); cosine neighbours "
            "are undefined for them"
        )
    u = x / norms
    if constant_layers(u[None]):
        raise ValueError(
            f"layer {layer} points every sample in the same direction (all cosine similarities "
            "are 1), so it has no neighbourhoods, only ties; check the pooling and inputs"
        )
    return u


def _knn(u: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of each row's k most cosine-similar other rows, ascending index.

    Exact ties at the k-th similarity are broken in favour of the lower sample
    index, so the result is a deterministic function of the similarities.
    """
    n = u.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        sim = u[start:stop] @ u.T  # (b, n)
        sim[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # exclude self
        kth = np.partition(sim, n - k, axis=1)[:, n - k : n - k + 1]  # k-th largest, (b, 1)
        above = sim > kth
        tied = sim == kth
        need = k - above.sum(axis=1, keepdims=True)
        chosen = above | (tied & (np.cumsum(tied, axis=1) <= need))
        out[start:stop] = np.nonzero(chosen)[1].reshape(stop - start, k)
    return out


def nrs(layers: np.ndarray, k: int = 10, *, adjusted: bool = False) -> np.ndarray:
    r"""Neighbourhood retention between consecutive layers.

    With :math:`\mathcal N_l^k(i)` the ``k`` nearest neighbours of sample
    :math:`i` at layer :math:`l` by cosine distance (the sample itself
    excluded),

    .. math::

        \mathrm{NRS}_l = \frac{1}{N} \sum_{i=1}^{N}
            \frac{\lvert \mathcal N_l^k(i) \cap \mathcal N_{l+1}^k(i) \rvert}{k},
        \qquad
        \mathrm{NRS}^{\mathrm{adj}}_l = \frac{\mathrm{NRS}_l - k/(N-1)}{1 - k/(N-1)} .

    Two independent uniformly random ``k``-subsets of the other :math:`N-1`
    samples share :math:`k^2/(N-1)` elements on average, so the adjusted score
    is 0 at chance and 1 for identical neighbourhoods.

    Parameters
    ----------
    layers : ndarray of shape (n_layers, n_samples, d_model)
        Pooled states, layer 0 = embeddings, ``n_layers = L + 1 >= 2``.
    k : int, default 10
        Neighbourhood size, ``1 <= k < n_samples`` (``k < n_samples - 1`` when
        ``adjusted``, since with every other sample a neighbour the chance level
        is 1).
    adjusted : bool, default False
        Return the chance-adjusted score.

    Returns
    -------
    ndarray of shape (n_layers - 1,)
        ``out[l]`` compares layers ``l`` and ``l + 1``. In :math:`[0, 1]`
        (adjusted: :math:`[-k/(N-1-k), 1]`), 1 for identical neighbourhoods.
        Invariant to rotating a layer and to rescaling any sample (cosine);
        not to translation. Exact ties in similarity at the ``k``-th neighbour
        go to the lower sample index, so the score is deterministic.

    Raises
    ------
    ValueError
        If ``k >= n_samples``, there are fewer than 2 layers, the input has NaN/inf, a
        sample has zero norm, or a layer sends every sample in one direction (all
        similarities tie). Duplicate samples are allowed (ties go to the lower index).
        Integer and float16 input is computed in float64.

    Notes
    -----
    One ``(N, N)`` similarity product and one partial sort per layer (row
    blocks of 4096 bound memory); overlaps are counted with one sorted-set
    intersection per layer pair.

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", section 4.1
    (formula reconstructed; the paper does not print it).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).standard_normal((40, 8))
    >>> nrs(np.stack([x, 3.0 * x]), k=5).tolist()
    [1.0]
    """
    x = check_layers(layers, min_samples=2)
    n_layers, n, _ = x.shape
    if n_layers < 2:
        raise ValueError(f"need at least 2 layers to compare, got layers of shape {x.shape}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k >= n:
        raise ValueError(
            f"too few samples for k: k={k} neighbours need at least {k + 1} samples, got "
            f"n_samples={n}; pass k <= {n - 1} or use more samples"
        )
    chance = k / (n - 1)
    if adjusted and chance >= 1:
        raise ValueError(
            f"adjusted NRS is undefined for k={k} with n_samples={n} (every other sample is "
            f"a neighbour, chance overlap is 1); pass k <= {n - 2} or use more samples"
        )
    rows = np.arange(n, dtype=np.int64)[:, None] * n
    codes = [(_knn(_unit_rows(x[layer], layer), k) + rows).ravel() for layer in range(n_layers)]
    out = np.array(
        [np.isin(codes[layer], codes[layer + 1], assume_unique=True).mean()
         for layer in range(n_layers - 1)]
    )
    if adjusted:
        out = adjust_nrs(out, k, n)
    return out


def adjust_nrs(raw: np.ndarray, k: int, n_samples: int) -> np.ndarray:
    r"""Chance-adjusted NRS from raw NRS: :math:`(\mathrm{NRS} - c) / (1 - c)`, :math:`c = k/(N-1)`.

    The same as ``nrs(layers, k, adjusted=True)`` without recomputing the neighbourhoods.

    Examples
    --------
    >>> adjust_nrs(np.array([1.0, 0.1]), k=10, n_samples=101).tolist()
    [1.0, 0.0]
    """
    chance = k / (n_samples - 1)
    if chance >= 1:
        raise ValueError(f"adjusted NRS is undefined for k={k} with n_samples={n_samples}")
    return (np.asarray(raw, dtype=float) - chance) / (1.0 - chance)
