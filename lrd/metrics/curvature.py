"""Curvature of a prompt's token trajectory: how sharply it turns from token to token.

For a token matrix :math:`Z = (z_1, \\dots, z_T)` the differences
:math:`v_k = z_{k+1} - z_k` are the steps of the trajectory; the curvature is the mean angle
between consecutive steps,

.. math::

    C(Z) = \\frac{1}{T - 2} \\sum_{k=1}^{T-2}
           \\arccos \\frac{v_{k+1}^\\top v_k}{\\lVert v_{k+1} \\rVert \\, \\lVert v_k \\rVert},

in radians: 0 on a straight path, :math:`\\pi/2` when every step is orthogonal to the last,
:math:`\\pi` when the path reverses at every token. Invariant to rotation, translation and
scaling of the token states.

References
----------
Skean et al., "Layer by Layer: Uncovering Hidden Representations in Language Models",
ICML 2025, Section 3 (curvature, after Hosseini and Fedorenko, NeurIPS 2023).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def curvature(tokens: np.ndarray, *, absolute: bool = False) -> np.ndarray:
    """Mean angle between consecutive token-difference vectors of token matrices.

    Parameters
    ----------
    tokens : array of shape (..., T, d)
        One prompt's token states (leading axes, e.g. layers, are kept); ``T >= 3``.
    absolute : bool
        Use :math:`|\\cos|` (angles folded into ``[0, pi/2]``), as the paper's code does; the
        paper's formula (default) keeps the sign.

    Returns
    -------
    ndarray of shape (...)
        Radians. A zero step (two identical consecutive tokens) has no direction; its angles
        are left out of the mean, and a path with no two consecutive nonzero steps gives 0.

    Examples
    --------
    >>> zigzag = np.array([[0, 0], [1, 0], [1, 1], [2, 1], [2, 2]], dtype=float)
    >>> round(float(curvature(zigzag)), 6)  # pi / 2
    1.570796
    """
    z = np.asarray(tokens, dtype=np.float64)
    if z.ndim < 2 or z.shape[-2] < 3:
        raise ValueError(f"tokens must have shape (..., T, d) with T >= 3, got {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("tokens contain NaN or inf")
    v = np.diff(z, axis=-2)
    norm = np.linalg.norm(v, axis=-1)
    dot = (v[..., 1:, :] * v[..., :-1, :]).sum(-1)
    denom = norm[..., 1:] * norm[..., :-1]
    valid = denom > 0
    cos = np.clip(np.divide(dot, denom, out=np.zeros_like(dot), where=valid), -1.0, 1.0)
    angle = np.arccos(np.abs(cos) if absolute else cos)
    count = valid.sum(-1)
    return np.divide(np.where(valid, angle, 0.0).sum(-1), count, out=np.zeros(count.shape), where=count > 0)


def prompt_curvature(tokens: Sequence[np.ndarray], *, absolute: bool = False) -> np.ndarray:
    """Curvature per layer averaged over prompts.

    Parameters
    ----------
    tokens : sequence of arrays of shape (n_layers, T_i, d_model)
        Per-prompt token states (``lrd.extract(..., return_tokens=True)``); prompts with fewer
        than 3 tokens are skipped.
    absolute : bool
        See :func:`curvature`.

    Returns
    -------
    ndarray of shape (n_layers,)
    """
    kept = [t for t in tokens if np.ndim(t) == 3 and t.shape[1] >= 3]
    if not kept:
        raise ValueError("no prompt has 3 or more tokens; curvature needs at least 3 tokens per prompt")
    return np.mean([curvature(t, absolute=absolute) for t in kept], axis=0)
