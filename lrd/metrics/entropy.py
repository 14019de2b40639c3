"""Matrix-based entropy of representations: prompt entropy, dataset entropy, effective rank.

The matrix-based Rényi entropy of order :math:`\\alpha` of a set of rows :math:`Z \\in \\mathbb
R^{n \\times d}` is computed from the spectrum of its trace-normalised Gram matrix
:math:`K = Z Z^\\top / \\operatorname{tr}(Z Z^\\top)` (eigenvalues :math:`\\lambda_i \\ge 0`,
:math:`\\sum_i \\lambda_i = 1`), in nats:

.. math::

    S_\\alpha(Z) = \\frac{1}{1 - \\alpha} \\log \\sum_i \\lambda_i^\\alpha, \\qquad
    S_1(Z) = -\\sum_i \\lambda_i \\log \\lambda_i \\quad (\\text{von Neumann}).

The nonzero eigenvalues of :math:`Z Z^\\top` are the squared singular values of :math:`Z`, so the
entropy is computed from an SVD of ``min(n, d)`` values whichever side is smaller. It lies in
``[0, log rank(Z)]``: ``log n`` for ``n`` orthogonal rows of equal norm, ``0`` for rank one; it
is invariant to rotations ``Z Q`` and to scaling ``c Z``.

**Where the paper's code computes something else** (OFSkean/information_flow, both generations:
``compute_entropy`` in ``experiments/utils/misc/metric_utils.py`` at commits 7473dbcf..a6ad5086,
Sept. 2024, and in ``experiments/utils/metrics/metric_functions.py`` at 703d566f). The code builds
the smaller matrix, :math:`Z^\top Z` (``d x d``) when ``n > d`` and :math:`Z Z^\top` (``n x n``)
otherwise, **clamps its entries at 0**, divides by its trace (the newer generation; the older one
leaves that to the eigenvalue normalisation of ``repitl``, which gives the same spectrum) and
takes the entropy of the positive eigenvalues, renormalised to sum 1:

.. math::

    S^{\mathrm{code}}_\alpha(Z) = S_\alpha\big(\operatorname{spec}^{+}\,\max(M, 0)\big),\qquad
    M = \begin{cases} Z^\top Z & n > d \\ Z Z^\top & n \le d \end{cases}.

On centred, row-normalised rows (the paper's input) many entries of :math:`M` are negative, so
the clamp changes the value (three unit rows at 120 degrees: ``log 2`` by the formula, ``log 3``
clamped) and makes it depend on which side is built; without the clamp both sides give the
formula above. The clamped value is rotation invariant when ``n <= d`` (Gram entries are) but
not when ``n > d`` (the entries of :math:`Z^\top Z` depend on the basis).
:func:`dataset_entropy` and :func:`prompt_entropy` compare our numbers with the paper's, so they
clamp by default (``clamp=True``, the paper's code) and ``clamp=False`` gives the formula;
:func:`matrix_entropy` and :func:`effective_rank` (the authors' code has no effective-rank
function) keep the formula by default. For ``alpha = 2`` ``repitl`` takes a Frobenius shortcut
when its ``allow_frobenius_speedup`` is on, :math:`-\log(\lVert K \rVert_F^2 / m^2)` for a trace-one ``m x m`` matrix ``K``,
which is the formula plus :math:`2 \log m` (its division by :math:`m^2` is not the
normalisation its comment says); ``frobenius_offset=True`` reproduces it, the default is the
formula (a constant offset changes no layer-wise shape, and the formula is what the paper states).

References
----------
Skean, Arefin, Zhao, Patel, Naghiyev, LeCun, Shwartz-Ziv, "Layer by Layer: Uncovering Hidden
Representations in Language Models", ICML 2025, Section 3 (matrix-based entropy, prompt and
dataset entropy) and Appendix (metric definitions); code: OFSkean/information_flow.
Giraldo, Rao, Príncipe, "Measures of Entropy from Data Using Infinitely Divisible Kernels",
IEEE Trans. Inf. Theory 2015 (matrix-based entropy).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lrd.metrics._validation import check_layers


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha must be a positive finite number, got {alpha}")
    return alpha


def spectrum_entropy(eigenvalues: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
    """Rényi entropy of order ``alpha`` of nonnegative spectra, normalised to sum 1 (nats).

    Parameters
    ----------
    eigenvalues : array of shape (..., k)
        Eigenvalues of a PSD matrix; values ``<= 0`` (round-off) are ignored.
    alpha : float
        Order; ``1`` gives the von Neumann (Shannon) entropy.

    Returns
    -------
    ndarray of shape (...)
        ``0`` for an all-zero spectrum (documented degenerate value).

    Examples
    --------
    >>> float(spectrum_entropy(np.ones(4)))  # log 4
    1.3862943611198906
    """
    alpha = _check_alpha(alpha)
    ev = np.asarray(eigenvalues, dtype=np.float64)
    if not np.isfinite(ev).all():
        raise ValueError("eigenvalues contain NaN or inf")
    ev = np.where(ev > 0, ev, 0.0)
    total = ev.sum(-1, keepdims=True)
    p = np.divide(ev, total, out=np.zeros_like(ev), where=total > 0)
    if alpha == 1.0:
        logp = np.log(p, out=np.zeros_like(p), where=p > 0)
        return -(p * logp).sum(-1)
    s = (p ** alpha).sum(-1)
    return np.divide(np.log(s, out=np.zeros_like(s), where=s > 0), 1.0 - alpha)


def gram_entropy(gram: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
    """Matrix-based entropy of (a stack of) PSD Gram matrices, normalised by their trace.

    Parameters
    ----------
    gram : array of shape (..., n, n)
        Symmetric positive semi-definite (e.g. ``Z @ Z.T`` or a Hadamard product of such).
    alpha : float

    Returns
    -------
    ndarray of shape (...)
    """
    g = np.asarray(gram, dtype=np.float64)
    if g.ndim < 2 or g.shape[-1] != g.shape[-2]:
        raise ValueError(f"gram must have shape (..., n, n), got {g.shape}")
    if not np.isfinite(g).all():
        raise ValueError("gram contains NaN or inf")
    return spectrum_entropy(np.linalg.eigvalsh(g), alpha=alpha)


def _side_matrix(x: np.ndarray) -> np.ndarray:
    """The matrix the paper's code builds from rows ``x`` (..., n, d): ``x^T x`` when n > d, else ``x x^T``."""
    return np.swapaxes(x, -1, -2) @ x if x.shape[-2] > x.shape[-1] else x @ np.swapaxes(x, -1, -2)


def _frobenius_entropy(m: np.ndarray) -> np.ndarray:
    """``repitl``'s alpha = 2 shortcut on a PSD ``m`` (..., k, k): ``-log(||m / tr m||_F^2 / k^2)``."""
    tr = np.trace(m, axis1=-2, axis2=-1)
    k = np.divide(m, tr[..., None, None], out=np.zeros_like(m), where=tr[..., None, None] > 0)
    f = (k ** 2).sum((-2, -1)) / m.shape[-1] ** 2
    return -np.log(f, out=np.zeros_like(f), where=f > 0)


def matrix_entropy(x: np.ndarray, *, alpha: float = 1.0, clamp: bool = False,
                   frobenius_offset: bool = False) -> np.ndarray:
    """Matrix-based entropy of the rows of ``x`` (see the module docstring), in nats.

    Parameters
    ----------
    x : array of shape (..., n, d)
        Rows are samples (texts or tokens); leading axes (e.g. layers) are kept.
    alpha : float
        Order of the entropy (the paper's default is 1).
    clamp : bool
        The paper's code: build ``x^T x`` if ``n > d`` else ``x x^T``, clamp its entries at 0,
        then take the entropy of its spectrum. ``False`` (default): the formula, from the
        squared singular values.
    frobenius_offset : bool
        With ``alpha = 2`` only: ``repitl``'s Frobenius shortcut, the formula plus
        ``2 log m`` for the ``m x m`` matrix built (see the module docstring).

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> round(float(matrix_entropy(np.eye(3))), 6)  # three orthonormal rows: log 3
    1.098612
    >>> z = np.array([[1.0, 0.0], [-1.0, 0.0]])  # Gram [[1, -1], [-1, 1]]: rank 1, clamped: identity
    >>> abs(round(float(matrix_entropy(z)), 6)), round(float(matrix_entropy(z, clamp=True)), 6)
    (0.0, 0.693147)
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., n, d), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x contains NaN or inf")
    if frobenius_offset and _check_alpha(alpha) != 2.0:
        raise ValueError(f"frobenius_offset applies to alpha = 2 only, got alpha = {alpha}")
    if not (clamp or frobenius_offset):
        return spectrum_entropy(np.linalg.svd(x, compute_uv=False) ** 2, alpha=alpha)
    m = _side_matrix(x)
    if clamp:
        m = np.maximum(m, 0.0)
    if frobenius_offset:
        return _frobenius_entropy(m)
    return spectrum_entropy(np.linalg.eigvalsh(m), alpha=alpha)


def effective_rank(x: np.ndarray) -> np.ndarray:
    r"""Effective rank of the rows of ``x``: :math:`\exp S_1(x)`, between 1 and ``rank(x)``.

    The exponential of the von Neumann entropy of the trace-normalised Gram spectrum (the
    squared singular values). Roy and Vetterli (2007) use the singular values themselves; both
    give ``n`` for ``n`` orthonormal rows and 1 for rank one.

    Parameters
    ----------
    x : array of shape (..., n, d)

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> round(float(effective_rank(np.eye(5))), 6)
    5.0
    """
    return np.exp(matrix_entropy(x, alpha=1.0))


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Centre the rows of each matrix over its rows and scale each row to unit L2 norm.

    The normalisation the paper's code applies to a prompt's token matrix (and to a dataset's
    matrix of prompt vectors) before taking its entropy. A row equal to the mean stays zero.

    Parameters
    ----------
    x : array of shape (..., n, d)
    """
    x = np.asarray(x, dtype=np.float64)
    return unit_rows(x - x.mean(-2, keepdims=True))


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Scale each row (last axis) to unit L2 norm; a zero row stays zero."""
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)


def _max_entropy(n: int, d: int) -> float:
    return float(np.log(min(n, d)))


def dataset_entropy(layers: np.ndarray, *, alpha: float = 1.0, normalized: bool = True,
                    clamp: bool = True, frobenius_offset: bool = False) -> np.ndarray:
    r"""Dataset entropy per layer: entropy of the (centred, row-normalised) prompt vectors.

    .. math:: S_\alpha\big(\mathrm{norm}(X_l)\big) / \log \min(N, d) \quad (\text{normalised})

    Parameters
    ----------
    layers : array of shape (n_layers, n_samples, d_model)
        Pooled states of ``N`` prompts per layer (e.g. from :func:`lrd.engine.extract`, mean pooling).
    alpha : float
    normalized : bool
        Divide by ``log min(N, d)`` (the code's default "maxEntropy" normalisation), so 1 is
        the largest possible value.
    clamp : bool
        The paper's code (default): entries of the ``N x N`` (or, for ``N > d``, ``d x d``)
        matrix clamped at 0 (``compute_entropy`` in OFSkean/information_flow); ``False``: the
        formula. See the module docstring.
    frobenius_offset : bool
        ``alpha = 2`` only: the ``+ 2 log m`` of ``repitl``'s Frobenius shortcut.

    Returns
    -------
    ndarray of shape (n_layers,)
    """
    x = check_layers(layers, min_samples=2)
    h = matrix_entropy(normalize_rows(x), alpha=alpha, clamp=clamp, frobenius_offset=frobenius_offset)
    return h / _max_entropy(x.shape[1], x.shape[2]) if normalized else h


def prompt_entropy(tokens: Sequence[np.ndarray], *, alpha: float = 1.0, normalized: bool = True,
                   chunk: int = 16, clamp: bool = True, frobenius_offset: bool = False) -> np.ndarray:
    r"""Prompt entropy per layer: the entropy of each prompt's token matrix, averaged over prompts.

    Each prompt's token matrix :math:`Z \in \mathbb R^{T \times d}` is centred over its tokens
    and its rows L2-normalised; its entropy (divided by :math:`\log \min(T, d)` when
    ``normalized``) is averaged over the prompts.

    Parameters
    ----------
    tokens : sequence of arrays of shape (n_layers, T_i, d_model)
        Per-prompt token states, as :func:`lrd.engine.extract` returns with ``return_tokens=True``.
        Every prompt needs at least 2 tokens.
    alpha : float
    normalized : bool
    chunk : int
        Prompts per batched SVD (zero-padding tokens leaves the nonzero spectrum unchanged).
    clamp : bool
        The paper's code (default): each prompt's ``T x T`` matrix (``d x d`` when ``T > d``)
        clamped at 0 before its spectrum is taken; ``False``: the formula (module docstring).
    frobenius_offset : bool
        ``alpha = 2`` only: the ``+ 2 log m`` of ``repitl``'s Frobenius shortcut.

    Returns
    -------
    ndarray of shape (n_layers,)

    References
    ----------
    Skean et al., ICML 2025, Section 3 ("prompt entropy").
    """
    if len(tokens) == 0:
        raise ValueError("tokens is empty: pass one (n_layers, T, d) array per prompt")
    shapes = {(t.shape[0], t.shape[2]) for t in tokens if np.ndim(t) == 3}
    if len(shapes) != 1 or any(np.ndim(t) != 3 for t in tokens):
        raise ValueError("every prompt's tokens must be an array (n_layers, T_i, d_model) with the same "
                         f"n_layers and d_model; got shapes {sorted({np.shape(t) for t in tokens})[:4]}")
    lengths = np.array([t.shape[1] for t in tokens])
    if lengths.min() < 2:
        raise ValueError(f"prompt {int(lengths.argmin())} has {lengths.min()} token(s); prompt entropy "
                         "needs at least 2 tokens per prompt (drop shorter prompts)")
    n_layers, d = shapes.pop()
    order = np.argsort(lengths)
    out = np.zeros(n_layers)
    side_aware = clamp or frobenius_offset  # the matrix built depends on T_i > d: never mix the two in a batch
    groups = [order[lengths[order] <= d], order[lengths[order] > d]] if side_aware else [order]
    for group in groups:
        for start in range(0, len(group), chunk):
            idx = group[start:start + chunk]
            t_max = lengths[idx].max()
            batch = np.zeros((len(idx), n_layers, t_max, d))
            for j, i in enumerate(idx):
                batch[j, :, :lengths[i]] = normalize_rows(tokens[i])
            if frobenius_offset and t_max <= d:  # zero rows would count in the size m of the shortcut
                h = np.stack([matrix_entropy(batch[j, :, :lengths[i]], alpha=alpha, clamp=clamp,
                                             frobenius_offset=True) for j, i in enumerate(idx)])
            else:
                h = matrix_entropy(batch, alpha=alpha, clamp=clamp, frobenius_offset=frobenius_offset)
            if normalized:
                h = h / np.log(np.minimum(lengths[idx], d))[:, None]
            out += h.sum(0)
    return out / len(tokens)
