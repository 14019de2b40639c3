r"""Frenet-style trajectory of layer subspaces on the Grassmann manifold.

Every layer is summarised by the span of its top principal directions, a point
on the Grassmann manifold :math:`\mathrm{Gr}(r, d)`; the model's forward pass is
then a discrete curve of ``n_layers`` points. Its speed (geodesic distance
between consecutive layers) and bending (Menger curvature of consecutive
triples) are the Frenet quantities of Jiang, Yang & Tam (2026), section 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.blas

from lrd.metrics._validation import check_layers, constant_layers

__all__ = [
    "FrenetResult",
    "frenet",
    "grassmann_distance",
    "menger_curvature",
    "subspace_basis",
]

# Geodesic distances at or below this many radians are rounding noise of the
# angle computation (same subspace up to float64 error) and are set to 0, so
# that a repeated point gives velocity 0 and curvature 0, not 1 / noise.
_ZERO_DISTANCE = 1e-9

# Relative rounding slack when reading the rank off the cumulative spectrum,
# so that a spectrum explaining exactly 95% at rank r gives r, not r + 1.
_RANK_RTOL = 1e-10


def _scatter(xc: np.ndarray) -> np.ndarray | None:
    """Lower triangle of the (d, d) scatter matrix of a centred (n, d) float64 matrix.

    None when d > n (use the SVD). BLAS syrk writes a Fortran-ordered matrix
    that LAPACK uses in place: about twice as fast as ``xc.T @ xc`` followed by
    ``eigh`` under a multi-threaded BLAS.
    """
    n, d = xc.shape
    if d > n:
        return None
    return scipy.linalg.blas.dsyrk(1.0, np.ascontiguousarray(xc).T, trans=0, lower=1)


def _principal(xc: np.ndarray, scatter: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """All principal variances (descending, unnormalised) and axes (d, k) of a centred (n, d) matrix.

    One full decomposition, for the final layer, which needs both its spectrum (to fix r) and
    its top-r axes.
    """
    if scatter is not None:
        w, v = scipy.linalg.eigh(scatter, lower=True, driver="evd", overwrite_a=True, check_finite=False)
        return np.clip(w[::-1], 0.0, None), v[:, ::-1]
    _, s, vt = scipy.linalg.svd(xc, full_matrices=False, check_finite=False)
    return s * s, vt.T


def _top_axes(xc: np.ndarray, r: int, scatter: np.ndarray | None) -> np.ndarray:
    """Top-r principal axes (d, r), by decreasing variance, of a centred (n, d) matrix.

    When d <= n: the top r eigenvectors of the (d, d) scatter matrix (LAPACK
    syevr on an index subset, or syevd when r > d / 4), 2.5-4x faster than the
    thin SVD of the (n, d) matrix and, for a subspace separated by a spectral
    gap, equal to it to float64 rounding (the error grows like
    eps * lambda_1 / gap). Otherwise the thin SVD.
    """
    if scatter is not None:
        d = scatter.shape[0]
        if 4 * r <= d:  # few vectors: MRRR on an index subset
            _, v = scipy.linalg.eigh(
                scatter, lower=True, subset_by_index=[d - r, d - 1], driver="evr",
                overwrite_a=True, check_finite=False,
            )
        else:  # many vectors: divide and conquer on all of them is cheaper
            _, v = scipy.linalg.eigh(
                scatter, lower=True, driver="evd", overwrite_a=True, check_finite=False
            )
            v = v[:, d - r :]
        return np.ascontiguousarray(v[:, ::-1])
    _, _, vt = scipy.linalg.svd(xc, full_matrices=False, check_finite=False)
    return np.ascontiguousarray(vt[:r].T)


def _rank_for_variance(variances: np.ndarray, variance: float) -> int:
    total = variances.sum()
    if total <= 0:
        raise ValueError(
            "the final layer has zero variance (all samples identical); the rank that "
            "explains a fraction of its variance is undefined: check the pooling and inputs"
        )
    explained = np.cumsum(variances) / total
    return min(int(np.searchsorted(explained, variance * (1 - _RANK_RTOL)) + 1), variances.size)


def subspace_basis(X: np.ndarray, r: int) -> np.ndarray:
    r"""Orthonormal basis of the top-``r`` principal subspace of a centred layer.

    .. math::

        X - \mathbf{1}\bar x^\top = U \Sigma V^\top, \qquad Q = V_{:, 1:r}

    Parameters
    ----------
    X : ndarray of shape (n_samples, d_model)
        One layer's representations; the sample mean is removed first.
    r : int
        Subspace dimension, ``1 <= r <= min(n_samples, d_model)``.

    Returns
    -------
    ndarray of shape (d_model, r)
        Orthonormal columns, ordered by decreasing variance. The subspace (not
        the basis) is unique when the ``r``-th and ``(r+1)``-th variances differ;
        directions beyond the rank of the centred data are an arbitrary
        (deterministic) orthonormal completion. The subspace is invariant to
        translation and scaling of ``X`` and rotates with ``X``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, holds NaN/inf, ``r`` is out of range, or all samples are
        identical (no subspace at all).

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", section 3.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [3.0, 0.1], [-3.0, -0.1]])
    >>> Q = subspace_basis(X, 1)
    >>> Q.shape, bool(abs(Q[0, 0]) > 0.99)
    ((2, 1), True)
    """
    x = np.asarray(X, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected X of shape (n_samples, d_model), got shape {x.shape}")
    check_layers(x[None], min_samples=1)
    n, d = x.shape
    if not 1 <= r <= min(n, d):
        raise ValueError(f"r must be between 1 and min(n_samples, d_model) = {min(n, d)}, got {r}")
    if constant_layers(x[None]):
        raise ValueError("X has zero variance (all samples identical): it has no principal subspace")
    xc = x - x.mean(axis=0)
    return _top_axes(xc, r, _scatter(xc))


def grassmann_distance(Qa: np.ndarray, Qb: np.ndarray) -> np.ndarray | float:
    r"""Geodesic (arc-length) distance between subspaces given by orthonormal bases.

    .. math::

        d(\mathcal A, \mathcal B) = \Big(\sum_{i=1}^{r} \theta_i^2\Big)^{1/2},
        \qquad \theta_i = \arccos \sigma_i(Q_a^\top Q_b)

    with the singular values clipped to :math:`[0, 1]`. The principal angles
    are evaluated in the numerically stable form
    :math:`\theta_i = 2 \arcsin(\lVert Q_a u_i - Q_b v_i \rVert / 2)`, where
    :math:`Q_a^\top Q_b = U \Sigma V^\top`; this equals :math:`\arccos\sigma_i` exactly
    but keeps full precision for small angles, where ``arccos`` loses half the
    digits (an angle of 1e-12 would otherwise read as ~1e-8).

    Parameters
    ----------
    Qa, Qb : ndarray of shape (..., d, r)
        Orthonormal bases (columns), or stacks of them with the same shape.

    Returns
    -------
    float or ndarray of shape (...)
        Distance in radians, in :math:`[0, \sqrt{r}\,\pi/2]`. Symmetric,
        zero exactly when the spans agree, and independent of the choice of
        basis (:math:`Q R` for orthogonal :math:`R` gives the same value).

    Raises
    ------
    ValueError
        If the shapes differ or a basis is not orthonormal (to 1e-6).

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", section 3.1;
    Björck & Golub (1973), Math. Comp. 27:579, for the principal angles.

    Examples
    --------
    >>> import numpy as np
    >>> t = 0.3
    >>> a = np.array([[1.0], [0.0]])
    >>> b = np.array([[np.cos(t)], [np.sin(t)]])
    >>> round(grassmann_distance(a, b), 12)
    0.3
    """
    qa = np.asarray(Qa, dtype=np.float64)
    qb = np.asarray(Qb, dtype=np.float64)
    if qa.shape != qb.shape or qa.ndim < 2:
        raise ValueError(
            f"bases must have the same shape (..., d, r), got {qa.shape} and {qb.shape}"
        )
    if qa.shape[-1] > qa.shape[-2]:
        raise ValueError(f"a basis of shape (d, r) needs r <= d, got shape {qa.shape[-2:]}")
    eye = np.eye(qa.shape[-1])
    for name, q in (("Qa", qa), ("Qb", qb)):
        err = np.abs(np.swapaxes(q, -1, -2) @ q - eye).max(initial=0.0)
        if not err <= 1e-6:
            raise ValueError(
                f"{name} does not have orthonormal columns (max |Q^T Q - I| = {err:.2g}); "
                "build bases with subspace_basis or np.linalg.qr"
            )
    out = _geodesic(qa, qb)
    return float(out) if out.ndim == 0 else out


def _geodesic(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """Unchecked grassmann_distance for stacks (..., d, r) of orthonormal bases."""
    u, _, vh = np.linalg.svd(np.swapaxes(qa, -1, -2) @ qb)
    chord = np.linalg.norm(qa @ u - qb @ np.swapaxes(vh, -1, -2), axis=-2)
    theta = 2.0 * np.arcsin(np.clip(chord / 2.0, 0.0, 1.0))
    return np.sqrt((theta * theta).sum(axis=-1))


def menger_curvature(a, b, c) -> np.ndarray | float:
    r"""Menger curvature (inverse circumradius) of triangles given by side lengths.

    .. math::

        \kappa = \frac{4 A}{a b c}, \qquad
        A = \tfrac14 \sqrt{(a + (b + c))(c - (a - b))(c + (a - b))(a + (b - c))}

    with :math:`a \ge b \ge c` (Kahan's ordering of Heron's formula, accurate
    for needle-shaped triangles). Degenerate triangles (any side 0, or
    collinear points) have curvature 0.

    Parameters
    ----------
    a, b, c : float or array-like, broadcastable
        Side lengths, any order.

    Returns
    -------
    float or ndarray of the broadcast shape
        Curvature in inverse length units. Invariant to permuting the sides;
        scales as :math:`1/s` when all sides scale by :math:`s`.

    Raises
    ------
    ValueError
        If a side is negative or non-finite, or the sides violate the triangle
        inequality beyond rounding (relative 1e-8).

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", section 3.2;
    Kahan, "Miscalculating Area and Angles of a Needle-like Triangle" (2014).

    Examples
    --------
    >>> round(menger_curvature(3.0, 4.0, 5.0), 12)  # circumradius 2.5
    0.4
    >>> menger_curvature([1.0, 2.0], [1.0, 1.0], [0.0, 1.0]).tolist()  # degenerate
    [0.0, 0.0]
    """
    sides = np.broadcast_arrays(*(np.asarray(s, dtype=np.float64) for s in (a, b, c)))
    s = np.stack(sides)
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError("side lengths must be finite and non-negative")
    s = -np.sort(-s, axis=0)  # s[0] >= s[1] >= s[2]
    a_, b_, c_ = s
    gap = c_ - (a_ - b_)
    if np.any(gap < -1e-8 * a_):
        raise ValueError(
            "side lengths violate the triangle inequality (longest side exceeds the sum "
            f"of the others by up to {float(np.max(-gap)):.3g})"
        )
    prod = (a_ + (b_ + c_)) * np.clip(gap, 0.0, None) * (c_ + (a_ - b_)) * (a_ + (b_ - c_))
    denom = a_ * b_ * c_
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(denom > 0, np.sqrt(prod) / np.where(denom > 0, denom, 1.0), 0.0)
    return float(kappa) if kappa.ndim == 0 else kappa


@dataclass(frozen=True, eq=False)
class FrenetResult:
    """Frenet quantities of one model on one task.

    Attributes
    ----------
    rank : int
        Subspace dimension ``r`` used at every layer.
    velocity : ndarray of shape (n_layers - 1,)
        ``velocity[l]`` is the geodesic distance between layers ``l`` and ``l + 1`` (radians).
    curvature : ndarray of shape (n_layers - 2,)
        ``curvature[l]`` is the Menger curvature at layer ``l + 1`` (triple ``l, l+1, l+2``).
    displacement : float
        Geodesic distance between the first and last layer, :math:`d_{0,L}`.
    mean_velocity : float
        Mean of ``velocity``.
    mean_curvature : float
        Mean of ``curvature``; NaN when there are only two layers (no triple).
    """

    rank: int
    velocity: np.ndarray
    curvature: np.ndarray
    displacement: float
    mean_velocity: float
    mean_curvature: float


def frenet(layers: np.ndarray, *, variance: float = 0.95) -> FrenetResult:
    r"""Velocity, curvature and displacement of a model's layer subspaces.

    Each layer is centred and replaced by its top-``r`` principal subspace
    :math:`Q_l`; ``r`` is the smallest rank that explains the fraction
    ``variance`` of the centred final layer's variance, and is used for every
    layer. With the geodesic distance :math:`d` of :func:`grassmann_distance`,

    .. math::

        s_l = d(l, l+1), \qquad
        \kappa_{l+1} = \frac{4 A(l, l+1, l+2)}{d(l,l+1)\, d(l+1,l+2)\, d(l,l+2)},

    where :math:`A` is the Heron area of the triangle with those three side
    lengths (:func:`menger_curvature`; 0 for a degenerate triple). The
    model-level summaries are the end-to-end displacement :math:`d(0, L)`, the
    mean velocity and the mean curvature.

    Parameters
    ----------
    layers : ndarray of shape (n_layers, n_samples, d_model)
        Pooled states, layer 0 = embeddings, ``n_layers = L + 1 >= 2``.
    variance : float, default 0.95
        Fraction of the final layer's variance the subspaces must explain.

    Returns
    -------
    FrenetResult
        ``velocity`` of shape ``(L,)``, ``curvature`` of shape ``(L - 1,)``.
        Invariant to translating or rescaling any layer, and to one rotation
        applied to all layers together. A rotation of a single layer changes
        the result unless it maps that layer's principal subspace onto itself
        (for example a rotation within the subspace): layers are compared in
        the shared coordinates of the residual stream. Distances below 1e-9
        rad are float64 noise and are reported as exactly 0.

    Raises
    ------
    ValueError
        If there are fewer than 2 layers or 2 samples, the input has NaN/inf, or a layer
        has zero variance (all samples identical: it has no principal subspace). Integer
        and float16 input is computed in float64.

    Notes
    -----
    Per layer, one symmetric eigendecomposition: the top ``r`` eigenvectors
    of the ``(d, d)`` scatter matrix (LAPACK ``syevr`` on an index subset;
    a thin SVD when ``d_model > n_samples``), equal to the top right singular
    vectors of the centred layer to float64 rounding. All ``2L - 1``
    consecutive and skip-one distances, and :math:`d(0, L)`, come from one
    batched product and one batched ``(r, r)`` SVD. A layer whose centred
    rank is below ``r`` gets an arbitrary but deterministic completion of its
    basis.

    References
    ----------
    Jiang, Yang & Tam (2026), "Layer-wise Representation Dynamics", sections 3.1-3.2.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((50, 4)) * [3.0, 2.0, 0.0, 0.0]  # a plane in R^4
    >>> c, s = np.cos(0.7), np.sin(0.7)
    >>> rot = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    >>> res = frenet(np.stack([x, 2.0 * x + 1.0, x @ rot]))  # same plane three times
    >>> res.rank, res.velocity.tolist(), res.mean_curvature
    (2, [0.0, 0.0], 0.0)
    """
    x = check_layers(layers, min_samples=2)
    if x.shape[0] < 2:
        raise ValueError(f"need at least 2 layers for a trajectory, got layers of shape {x.shape}")
    if not 0.0 < variance <= 1.0:
        raise ValueError(f"variance must be in (0, 1], got {variance}")
    if constant := constant_layers(x):
        raise ValueError(
            f"layers {constant} have zero variance (all samples identical): they have no principal "
            "subspace, so velocity and curvature through them are undefined; check the pooling "
            "and inputs, or drop those layers"
        )
    n_layers = x.shape[0]
    # centre one layer at a time: a (n, d) buffer stays in cache, a full centred copy would not
    xc_last = x[-1] - x[-1].mean(axis=0)
    variances, axes = _principal(xc_last, _scatter(xc_last))
    r = _rank_for_variance(variances, variance)
    q = np.stack(
        [_top_axes(xc, r, _scatter(xc)) for xc in (layer - layer.mean(axis=0) for layer in x[:-1])]
        + [np.ascontiguousarray(axes[:, :r])]
    )  # (n_layers, d, r)

    # One batch: consecutive pairs, skip-one pairs, then (0, L).
    first = np.concatenate([q[:-1], q[:-2], q[:1]])
    second = np.concatenate([q[1:], q[2:], q[-1:]])
    dist = _geodesic(first, second)
    dist = np.where(dist <= _ZERO_DISTANCE, 0.0, dist)
    n_steps = n_layers - 1
    velocity = dist[:n_steps]
    skip = dist[n_steps:-1]
    curvature = menger_curvature(velocity[:-1], velocity[1:], skip)
    curvature = np.atleast_1d(np.asarray(curvature, dtype=np.float64))
    return FrenetResult(
        rank=int(r),
        velocity=velocity,
        curvature=curvature,
        displacement=float(dist[-1]),
        mean_velocity=float(velocity.mean()),
        mean_curvature=float(curvature.mean()) if curvature.size else float("nan"),
    )
