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


def matrix_entropy(x: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
    """Matrix-based entropy of the rows of ``x`` (see the module docstring), in nats.

    Parameters
    ----------
    x : array of shape (..., n, d)
        Rows are samples (texts or tokens); leading axes (e.g. layers) are kept.
    alpha : float
        Order of the entropy (the paper's default is 1).

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> round(float(matrix_entropy(np.eye(3))), 6)  # three orthonormal rows: log 3
    1.098612
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., n, d), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x contains NaN or inf")
    return spectrum_entropy(np.linalg.svd(x, compute_uv=False) ** 2, alpha=alpha)


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


def dataset_entropy(layers: np.ndarray, *, alpha: float = 1.0, normalized: bool = True) -> np.ndarray:
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

    Returns
    -------
    ndarray of shape (n_layers,)
    """
    x = check_layers(layers, min_samples=2)
    h = matrix_entropy(normalize_rows(x), alpha=alpha)
    return h / _max_entropy(x.shape[1], x.shape[2]) if normalized else h


def prompt_entropy(tokens: Sequence[np.ndarray], *, alpha: float = 1.0, normalized: bool = True,
                   chunk: int = 16) -> np.ndarray:
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
    for start in range(0, len(order), chunk):
        idx = order[start:start + chunk]
        t_max = lengths[idx].max()
        batch = np.zeros((len(idx), n_layers, t_max, d))
        for j, i in enumerate(idx):
            batch[j, :, :lengths[i]] = normalize_rows(tokens[i])
        h = matrix_entropy(batch, alpha=alpha)  # (chunk, n_layers)
        if normalized:
            h = h / np.log(np.minimum(lengths[idx], d))[:, None]
        out += h.sum(0)
    return out / len(tokens)
