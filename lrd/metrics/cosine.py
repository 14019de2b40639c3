"""Cosine similarity of pooled states, per layer."""

from __future__ import annotations

import numpy as np

from lrd.metrics._validation import check_layers


def mean_cosine_similarity(layers: np.ndarray) -> np.ndarray:
    r"""Mean pairwise cosine similarity of the samples at every layer.

    .. math::

        \bar c_l = \frac{1}{N(N-1)} \sum_{i \neq j} \frac{x_{l,i}^\top x_{l,j}}{\|x_{l,i}\| \|x_{l,j}\|}

    computed in closed form from the sum of unit vectors,
    :math:`\sum_{i \neq j} u_i^\top u_j = \|\sum_i u_i\|^2 - N`.
    A value near 1 means the layer maps all inputs to nearly the same
    direction (anisotropy); near 0, directions are spread out.

    Parameters
    ----------
    layers : ndarray of shape (n_layers, n_samples, d_model)
        Pooled states, layer 0 = embeddings.

    Returns
    -------
    ndarray of shape (n_layers,)
        Invariant to rotation and to positive rescaling of each sample. A layer whose
        samples all point the same way (for example a constant layer, or duplicates)
        scores 1 (to rounding); a single layer is fine.

    Raises
    ------
    ValueError
        If there are fewer than 2 samples, the input has NaN/inf, or a sample has zero
        norm. Integer and float16 input is computed in float64.
    """
    x = check_layers(layers, min_samples=2)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a pooled state has zero norm; cosine similarity is undefined for it")
    u = x / norms
    n = x.shape[1]
    s = u.sum(axis=1)
    return ((s * s).sum(axis=-1) - n) / (n * (n - 1))
