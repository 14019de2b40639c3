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

**The paper's code** (``compute_curvature`` in OFSkean/information_flow
``experiments/utils/metrics/metric_functions.py`` at 703d566f) computes something else in three
ways, and the book's verdicts compare with the paper's numbers, so the default follows the code:

* the tokens are normalised first: centred over the prompt's tokens and each L2-normalised
  (``normalize`` in the same file, the pipeline's step before every per-prompt metric),
  ``normalize=True``; the formula on raw states is ``normalize=False``;
* the angle is that of :math:`|\cos|`, folded into :math:`[0, \pi/2]`: ``absolute=True``;
  the formula keeps the sign (``absolute=False``);
* a zero step (a repeated token, :math:`v_k = 0`) has an angle of 0 that counts in the mean:
  ``zero_steps="zero"``; ``zero_steps="drop"`` leaves those angles out of the mean (no direction,
  no angle).

The older generation (``experiments/utils/misc/metric_utils.py``, Sept. 2024) took the angle
between consecutive (normalised) *tokens*, :math:`\arccos(z_k^\top z_{k+1})`, not between steps;
the paper defines curvature on steps (Section 3), so its numbers come from the newer code.

References
----------
Skean et al., "Layer by Layer: Uncovering Hidden Representations in Language Models",
ICML 2025, Section 3 (curvature, after Hosseini and Fedorenko, NeurIPS 2023).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _unit_centred(z: np.ndarray) -> np.ndarray:
    c = z - z.mean(-2, keepdims=True)
    norm = np.linalg.norm(c, axis=-1, keepdims=True)
    return np.divide(c, norm, out=np.zeros_like(c), where=norm > 0)


def curvature(tokens: np.ndarray, *, normalize: bool = True, absolute: bool = True,
              zero_steps: str = "zero") -> np.ndarray:
    """Mean angle between consecutive token-difference vectors of token matrices.

    Parameters
    ----------
    tokens : array of shape (..., T, d)
        One prompt's token states (leading axes, e.g. layers, are kept); ``T >= 3``.
    normalize : bool
        Centre the tokens over the prompt and L2-normalise each (the paper's code, default); a
        token equal to the prompt mean becomes the zero vector (the code divides by 0 there).
    absolute : bool
        Use :math:`|\cos|` (angles folded into ``[0, pi/2]``), as the paper's code does
        (default); ``False``: the paper's formula, which keeps the sign.
    zero_steps : {"zero", "drop"}
        A zero step (two identical consecutive tokens) has no direction: ``"zero"`` counts its
        angles as 0 (the paper's code, default), ``"drop"`` leaves them out of the mean. A step
        counts as zero when its norm is at most ``1e-4`` times the largest token norm of the
        path (the code tests ``== 0``; after centring and normalisation two equal tokens can
        differ by round-off or float noise, whose direction is arbitrary, while distinct
        tokens differ by far more).

    Returns
    -------
    ndarray of shape (...)
        Radians; 0 when no angle is left (``"drop"`` with no two consecutive nonzero steps).

    Examples
    --------
    >>> zigzag = np.array([[0, 0], [1, 0], [1, 1], [2, 1], [2, 2]], dtype=float)
    >>> round(float(curvature(zigzag, normalize=False)), 6)  # pi / 2
    1.570796
    >>> back = np.array([[0, 0], [1, 0], [0, 0]], dtype=float)  # reverses: pi, folded to 0 by |cos|
    >>> round(float(curvature(back, normalize=False, absolute=False)), 6), float(curvature(back))
    (3.141593, 0.0)
    """
    if zero_steps not in ("zero", "drop"):
        raise ValueError(f"zero_steps must be 'zero' or 'drop', got {zero_steps!r}")
    z = np.asarray(tokens, dtype=np.float64)
    if z.ndim < 2 or z.shape[-2] < 3:
        raise ValueError(f"tokens must have shape (..., T, d) with T >= 3, got {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("tokens contain NaN or inf")
    if normalize:
        z = _unit_centred(z)
    v = np.diff(z, axis=-2)
    norm = np.linalg.norm(v, axis=-1)
    scale = np.linalg.norm(z, axis=-1).max(-1, keepdims=True)
    norm = np.where(norm > 1e-4 * scale, norm, 0.0)
    dot = (v[..., 1:, :] * v[..., :-1, :]).sum(-1)
    denom = norm[..., 1:] * norm[..., :-1]
    valid = denom > 0
    cos = np.clip(np.divide(dot, denom, out=np.zeros_like(dot), where=valid), -1.0, 1.0)
    angle = np.where(valid, np.arccos(np.abs(cos) if absolute else cos), 0.0)
    if zero_steps == "zero":
        return angle.mean(-1)
    count = valid.sum(-1)
    return np.divide(angle.sum(-1), count, out=np.zeros(count.shape), where=count > 0)


def prompt_curvature(tokens: Sequence[np.ndarray], *, normalize: bool = True, absolute: bool = True,
                     zero_steps: str = "zero") -> np.ndarray:
    """Curvature per layer averaged over prompts.

    Parameters
    ----------
    tokens : sequence of arrays of shape (n_layers, T_i, d_model)
        Per-prompt token states (``lrd.extract(..., return_tokens=True)``); prompts with fewer
        than 3 tokens are skipped.
    normalize, absolute, zero_steps
        See :func:`curvature` (defaults: the paper's code).

    Returns
    -------
    ndarray of shape (n_layers,)
    """
    kept = [t for t in tokens if np.ndim(t) == 3 and t.shape[1] >= 3]
    if not kept:
        raise ValueError("no prompt has 3 or more tokens; curvature needs at least 3 tokens per prompt")
    return np.mean([curvature(t, normalize=normalize, absolute=absolute, zero_steps=zero_steps) for t in kept],
                   axis=0)
