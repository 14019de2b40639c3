"""Augmentation-invariance metrics: InfoNCE, LiDAR and DiME, on embeddings of augmented views.

Each prompt is perturbed several times (:func:`lrd.engine.augment.augment_views`); a layer whose
embeddings of the views of one prompt stay close to each other and far from other prompts'
is "invariant". Views are compared after L2-normalising each embedding (cosine geometry).

References
----------
Skean et al., "Layer by Layer: Uncovering Hidden Representations in Language Models",
ICML 2025, Section 3 (augmentation-invariance metrics) and the code OFSkean/information_flow.
Oord, Li, Vinyals, "Representation Learning with Contrastive Predictive Coding", 2018 (InfoNCE).
Thilak et al., "LiDAR: Sensing Linear Probing Performance in Joint Embedding SSL Architectures",
ICLR 2024. Skean, Osorio, Brockmeier, Giraldo, "DiME: Maximizing Mutual Information by a
Difference of Matrix-Based Entropies", 2023.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from lrd.metrics.entropy import gram_entropy, spectrum_entropy, unit_rows


def _check_views(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim < 2:
        raise ValueError(f"views must be two arrays of the same shape (..., N, d); got {a.shape} and {b.shape}")
    if a.shape[-2] < 2:
        raise ValueError(f"need at least 2 prompts, got {a.shape[-2]}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("views contain NaN or inf")
    return a, b


def infonce(view_a: np.ndarray, view_b: np.ndarray, *, temperature: float = 0.1) -> np.ndarray:
    r"""InfoNCE between two views, reported as the bound :math:`1 - \mathcal L / \log N`.

    With cosine similarities :math:`s_{ij} = \hat a_i^\top \hat b_j`,

    .. math::

        \mathcal L = -\frac1N \sum_i \log \frac{e^{s_{ii}/\tau}}{\sum_j e^{s_{ij}/\tau}},
        \qquad \text{score} = 1 - \mathcal L / \log N,

    about 1 when each prompt's two views match each other and nothing else, about 0 when
    the views are unrelated (then :math:`\mathcal L \approx \log N`).

    Parameters
    ----------
    view_a, view_b : arrays of shape (..., N, d)
        Row ``i`` of each is an embedding of an augmented view of prompt ``i``.
    temperature : float
        :math:`\tau`; the paper uses 0.1.

    Returns
    -------
    ndarray of shape (...)
    """
    a, b = _check_views(view_a, view_b)
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    logits = np.einsum("...id,...jd->...ij", unit_rows(a), unit_rows(b)) / temperature
    diag = np.diagonal(logits, axis1=-2, axis2=-1)
    loss = (logsumexp(logits, axis=-1) - diag).mean(-1)
    return 1.0 - loss / np.log(a.shape[-2])


def lidar(views: np.ndarray, *, delta: float = 1e-4, alpha: float = 1.0) -> np.ndarray:
    r"""LiDAR: entropy of the LDA matrix that separates prompts ("classes") from their views.

    For prompts :math:`i = 1..N` with views :math:`z_{ij}`, :math:`j = 1..K`, class means
    :math:`\mu_i` and grand mean :math:`\mu`,

    .. math::

        S_b = \frac1N \sum_i (\mu_i - \mu)(\mu_i - \mu)^\top, \quad
        S_w = \frac{1}{NK} \sum_{ij} (z_{ij} - \mu_i)(z_{ij} - \mu_i)^\top + \delta I,

    and LiDAR is the matrix entropy (nats) of :math:`S_w^{-1/2} S_b S_w^{-1/2}`: high when
    many directions separate prompts relative to the spread of their augmentations.

    Parameters
    ----------
    views : array of shape (..., N, K, d)
        ``K >= 2`` views of each of ``N`` prompts (the paper uses ``K = 16``).
    delta : float
        Ridge added to :math:`S_w` (the paper's :math:`10^{-4}`).
    alpha : float
        Entropy order.

    Returns
    -------
    ndarray of shape (...)

    Notes
    -----
    :math:`S_b` has rank at most :math:`N - 1`, so the LDA matrix's nonzero eigenvalues are those
    of the :math:`N \times N` matrix :math:`\frac1N B S_w^{-1} B^\top` (:math:`B` the centred
    class means as rows; :math:`AB` and :math:`BA` share their nonzero spectrum), and
    :math:`S_w^{-1}` is applied through a :math:`d \times d` solve or, when :math:`d > NK`,
    through the Woodbury identity with an :math:`NK \times NK` solve: the cost no longer grows
    as :math:`d^3` (a 1536-wide model's 29 layers: two :math:`d \times d` eigendecompositions
    per layer before). The zero eigenvalues left out add nothing to the entropy.
    """
    z = np.asarray(views, dtype=np.float64)
    if z.ndim < 3 or z.shape[-2] < 2 or z.shape[-3] < 2:
        raise ValueError(f"views must have shape (..., N, K, d) with N >= 2 and K >= 2, got {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("views contain NaN or inf")
    z = unit_rows(z)
    n, k, d = z.shape[-3:]
    mu_i = z.mean(-2)  # (..., N, d)
    b = mu_i - mu_i.mean(-2, keepdims=True)  # S_b = b^T b / N
    w = (z - mu_i[..., None, :]).reshape(*z.shape[:-3], n * k, d) / np.sqrt(n * k)  # S_w = w^T w + delta I
    bt = np.swapaxes(b, -1, -2)
    if d <= n * k:  # S_w^{-1} b^T by a d x d solve
        sw = np.swapaxes(w, -1, -2) @ w + delta * np.eye(d)
        small = b @ np.linalg.solve(sw, bt)
    else:  # Woodbury: S_w^{-1} = (I - w^T (delta I + w w^T)^{-1} w) / delta, an NK x NK solve
        bw = b @ np.swapaxes(w, -1, -2)
        inner = w @ np.swapaxes(w, -1, -2) + delta * np.eye(n * k)
        small = (b @ bt - bw @ np.linalg.solve(inner, np.swapaxes(bw, -1, -2))) / delta
    small = small / n  # (..., N, N): b S_w^{-1} b^T / N, the nonzero spectrum of the LDA matrix
    return spectrum_entropy(np.linalg.eigvalsh((small + np.swapaxes(small, -1, -2)) / 2), alpha=alpha)


def dime(view_a: np.ndarray, view_b: np.ndarray, *, n_permutations: int = 10, alpha: float = 1.0,
         seed: int = 0, kernel: str = "code") -> np.ndarray:
    r"""DiME: difference of matrix-based entropies between mismatched and matched view pairs.

    With cosine Gram matrices :math:`K_A = \hat A \hat A^\top`, :math:`K_B = \hat B \hat B^\top`
    (:math:`N \times N`) and random permutation matrices :math:`P`,

    .. math::

        \mathrm{DiME} = \mathbb E_P\, S_\alpha(K_A \circ P K_B P^\top) - S_\alpha(K_A \circ K_B),

    a lower bound on the mutual information between the views: clearly positive when
    prompt :math:`i`'s two views agree, about 0 when they are independent.

    **The paper's code** (``compute_dime`` in OFSkean/information_flow, both generations, with
    ``doe`` of ``repitl.difference_of_entropies``) builds :math:`\hat A \hat A^\top` only when
    :math:`N \le d`; for :math:`N > d` it builds the ``d x d`` covariances
    :math:`\hat A^\top \hat A`, :math:`\hat B^\top \hat B` and permutes *feature* axes, a
    different quantity (up to 0.27 away at ``N = 40, d = 8``). ``kernel="code"`` (default) does
    the same (the book compares DiME with the paper's); ``kernel="samples"`` always takes the
    ``N x N`` Gram matrices of the formula above. The two agree whenever ``N <= d`` (the book's
    panel: 16 prompts, ``d >= 384``). The code's optional division by ``log min(N, d)``
    ("maxEntropy") is not applied here (raw nats).

    Parameters
    ----------
    view_a, view_b : arrays of shape (..., N, d)
    n_permutations : int
        Permutations averaged (the paper's code uses 10).
    alpha : float
    seed : int
        Seed of the permutations (the same permutations for every leading index).
    kernel : {"code", "samples"}
        ``"code"``: ``d x d`` covariances when ``N > d``, as the paper's code; ``"samples"``:
        always the ``N x N`` Gram matrices.

    Returns
    -------
    ndarray of shape (...)
    """
    a, b = _check_views(view_a, view_b)
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    if kernel not in ("code", "samples"):
        raise ValueError(f"kernel must be 'code' or 'samples', got {kernel!r}")
    a, b = unit_rows(a), unit_rows(b)
    if kernel == "code" and a.shape[-2] > a.shape[-1]:  # the code's d x d covariances
        ka = np.einsum("...nd,...ne->...de", a, a)
        kb = np.einsum("...nd,...ne->...de", b, b)
    else:
        ka = np.einsum("...id,...jd->...ij", a, a)
        kb = np.einsum("...id,...jd->...ij", b, b)
    rng = np.random.default_rng(seed)
    perms = np.stack([rng.permutation(ka.shape[-1]) for _ in range(n_permutations)])
    permuted = kb[..., perms[:, :, None], perms[:, None, :]]  # (..., n_perm, N, N)
    h_perm = gram_entropy(ka[..., None, :, :] * permuted, alpha=alpha).mean(-1)
    return h_perm - gram_entropy(ka * kb, alpha=alpha)
