"""Closed forms and invariances of the mid-layer metric suite (entropy, curvature, InfoNCE,
LiDAR, DiME), then one property test per property over a registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from lrd.metrics import (
    curvature,
    dataset_entropy,
    dime,
    effective_rank,
    gram_entropy,
    infonce,
    lidar,
    matrix_entropy,
    prompt_curvature,
    prompt_entropy,
    spectrum_entropy,
)


def rotation(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


# ----------------------------------------------------------------------------- entropy


@pytest.mark.parametrize("n, d", [(3, 3), (5, 8), (16, 40)])
def test_orthonormal_rows_have_entropy_log_n_and_rank_n(n, d):
    x = rotation(np.random.default_rng(n), d)[:n]
    assert matrix_entropy(x) == pytest.approx(np.log(n), abs=1e-10)
    assert effective_rank(x) == pytest.approx(n, abs=1e-8)


def test_rank_one_has_zero_entropy_and_rank_one():
    x = np.outer(np.arange(1, 7), np.random.default_rng(0).standard_normal(5))
    assert matrix_entropy(x) == pytest.approx(0.0, abs=1e-10)
    assert effective_rank(x) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("alpha", [0.5, 2.0, 3.0])
def test_renyi_entropy_of_uniform_spectrum_is_log_k(alpha):
    assert spectrum_entropy(np.full(7, 0.3), alpha=alpha) == pytest.approx(np.log(7))


def test_renyi_order_limits_and_monotone():
    p = np.array([0.5, 0.3, 0.15, 0.05])
    h = [float(spectrum_entropy(p, alpha=a)) for a in (0.5, 0.999999, 1.0, 2.0)]
    assert h[1] == pytest.approx(h[2], abs=1e-5)
    assert h[0] > h[2] > h[3]


def test_gram_and_rows_agree():
    x = np.random.default_rng(2).standard_normal((9, 4))
    assert gram_entropy(x @ x.T) == pytest.approx(matrix_entropy(x), abs=1e-10)


def test_entropy_rejects_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        matrix_entropy(np.eye(3), alpha=0)
    with pytest.raises(ValueError, match="NaN"):
        matrix_entropy(np.array([[1.0, np.nan]]))


def test_prompt_entropy_of_orthogonal_tokens_is_maximal():
    # tokens at the vertices of a simplex: centred rows are equiangular, entropy log(T-1)
    t = 5
    tokens = np.eye(t)[None].repeat(2, axis=0)  # 2 layers, 5 tokens in R^5
    h = prompt_entropy([tokens, tokens], normalized=False, clamp=False)
    assert h == pytest.approx([np.log(t - 1)] * 2, abs=1e-10)
    # the paper's code clamps the Gram's -1/(T-1) entries at 0: the identity, entropy log T
    assert prompt_entropy([tokens, tokens], normalized=False) == pytest.approx([np.log(t)] * 2, abs=1e-10)


def test_prompt_entropy_padding_chunks_do_not_matter():
    rng = np.random.default_rng(3)
    tokens = [rng.standard_normal((3, t, 6)) for t in (2, 5, 9, 4)]
    assert prompt_entropy(tokens, chunk=1) == pytest.approx(prompt_entropy(tokens, chunk=4), abs=1e-10)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        prompt_entropy([rng.standard_normal((3, 1, 6))])


def test_dataset_entropy_bounded():
    h = dataset_entropy(np.random.default_rng(4).standard_normal((3, 50, 20)))
    assert np.all((h > 0.8) & (h <= 1.0))


# ----------------------------------------------------------------------------- curvature


def test_straight_path_has_zero_curvature():
    direction = np.random.default_rng(5).standard_normal(7)
    path = np.arange(6)[:, None] * direction + 3.0
    assert curvature(path, normalize=False, absolute=False, zero_steps="drop") == pytest.approx(0.0, abs=1e-7)
    assert curvature(path) == pytest.approx(0.0, abs=1e-7)  # the paper's code: normalised, |cos|


def test_right_angle_zigzag_has_curvature_half_pi():
    zigzag = np.array([[0, 0], [1, 0], [1, 1], [2, 1], [2, 2], [3, 2]], dtype=float)
    assert curvature(zigzag, normalize=False, absolute=False, zero_steps="drop") == pytest.approx(np.pi / 2)


def test_reversal_is_pi_and_absolute_folds_it():
    back = np.array([[0.0, 0], [1, 0], [0, 0], [1, 0]])
    assert curvature(back, normalize=False, absolute=False, zero_steps="drop") == pytest.approx(np.pi)
    assert curvature(back, normalize=False, absolute=True) == pytest.approx(0.0, abs=1e-7)


def test_prompt_curvature_averages_and_skips_short():
    zig = np.array([[0, 0], [1, 0], [1, 1], [2, 1]], dtype=float)
    line = np.array([[0, 0], [1, 1], [2, 2]], dtype=float)
    out = prompt_curvature([np.stack([zig, zig]), np.stack([line, line]), np.zeros((2, 2, 2))], normalize=False, absolute=False, zero_steps="drop")
    assert out == pytest.approx([np.pi / 4] * 2)


# ----------------------------------------------------------------------------- invariance metrics


def test_infonce_identical_views_near_max_and_shuffled_near_zero():
    # independent views: the loss is log N plus a Jensen term ~ 1 / (2 d tau^2), small for large d
    rng = np.random.default_rng(6)
    a = rng.standard_normal((64, 2048))
    assert infonce(a, a) > 0.9
    assert abs(infonce(a, rng.standard_normal((64, 2048)))) < 0.03


def test_dime_identical_views_positive_independent_about_zero():
    # structured prompts (6 clusters in R^8): matched views share the structure, permuted do not
    rng = np.random.default_rng(7)
    centres = 3 * rng.standard_normal((6, 8))
    a = centres[rng.integers(0, 6, 48)] + 0.3 * rng.standard_normal((48, 8))
    b = centres[rng.integers(0, 6, 48)] + 0.3 * rng.standard_normal((48, 8))
    assert dime(a, a, kernel="samples") > 0.5  # N = 48 > d = 8: the N x N formula (the code's is d x d)
    assert abs(dime(a, b, kernel="samples")) < 0.1


def test_lidar_counts_discriminative_directions():
    # prompts spread over all 16 directions against over 2: LiDAR ~ log 16 against ~ log 2
    rng = np.random.default_rng(8)
    full = rng.standard_normal((40, 1, 16))
    low = full * (np.arange(16) < 2)
    noise = 0.3 * rng.standard_normal((40, 8, 16))
    values = lidar(np.stack([full + noise, low + noise]))
    assert values[0] > np.log(16) - 0.4 and values[1] < np.log(2) + 0.5


def _lidar_by_definition(views, delta=1e-4):
    """LiDAR as its definition reads: the d x d LDA matrix S_w^{-1/2} S_b S_w^{-1/2}."""
    z = views / np.linalg.norm(views, axis=-1, keepdims=True)
    n, k, d = z.shape[-3:]
    mu = z.mean(-2)
    cb = mu - mu.mean(-2, keepdims=True)
    sb = np.einsum("...nd,...ne->...de", cb, cb) / n
    cw = (z - mu[..., None, :]).reshape(*z.shape[:-3], n * k, d)
    sw = np.einsum("...nd,...ne->...de", cw, cw) / (n * k) + delta * np.eye(d)
    w, u = np.linalg.eigh(sw)
    inv_sqrt = (u / np.sqrt(w)[..., None, :]) @ np.swapaxes(u, -1, -2)
    ev = np.clip(np.linalg.eigvalsh(inv_sqrt @ sb @ inv_sqrt), 0, None)
    p = ev / ev.sum(-1, keepdims=True)
    return -(p * np.log(np.where(p > 0, p, 1))).sum(-1)


@pytest.mark.parametrize("shape", [(6, 3, 40), (6, 3, 10), (2, 5, 4, 64), (4, 2, 8)])
def test_lidar_equals_its_definition_in_both_regimes(shape):
    # d > N K (Woodbury, N K x N K), d <= N K (d x d solve), batched; against the d x d LDA matrix
    rng = np.random.default_rng(sum(shape))
    views = rng.standard_normal(shape) + 2.0 * rng.standard_normal(shape[:-2] + (1, shape[-1]))
    np.testing.assert_allclose(lidar(views), _lidar_by_definition(views), rtol=1e-8, atol=1e-10)


def test_lidar_is_invariant_to_rotations_and_view_scale():
    rng = np.random.default_rng(3)
    views = rng.standard_normal((5, 4, 30)) + rng.standard_normal((5, 1, 30))
    q, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    scale = rng.uniform(0.1, 10, size=(5, 4, 1))
    np.testing.assert_allclose(lidar(views @ q), lidar(views), rtol=1e-9)
    np.testing.assert_allclose(lidar(views * scale), lidar(views), rtol=1e-9)


def test_views_validated():
    with pytest.raises(ValueError, match="same shape"):
        infonce(np.ones((4, 3)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="K >= 2"):
        lidar(np.ones((4, 1, 3)))


# ----------------------------------------------------------------------------- registry of properties


@dataclass
class Metric:
    name: str
    fn: Callable[[np.ndarray], float]  # (n, d) rows -> value
    rotation_invariant: bool = True
    scale_invariant: bool = True
    permutation_invariant: bool = True


def _two_views(fn):
    def call(x):
        rng = np.random.default_rng(0)
        return fn(x, x + 0.1 * rng.standard_normal(x.shape) * np.linalg.norm(x, axis=1, keepdims=True) / 3)
    return call


METRICS = [
    Metric("matrix_entropy", matrix_entropy),
    Metric("effective_rank", effective_rank),
    # the formula variants: the paper's code (clamped d x d matrix, d x d DiME kernels for N > d)
    # depends on the basis when N > d (tests/test_fidelity.py)
    Metric("dataset_entropy", lambda x: dataset_entropy(x[None], clamp=False)[0]),
    Metric("curvature", curvature, permutation_invariant=False),
    Metric("infonce", lambda x: infonce(x, x)),
    Metric("dime", lambda x: dime(x, x, kernel="samples")),
]


@pytest.fixture
def rows():
    return np.random.default_rng(9).standard_normal((30, 12))


@pytest.mark.parametrize("m", [m for m in METRICS if m.rotation_invariant], ids=lambda m: m.name)
def test_rotation_invariance(m, rows):
    q = rotation(np.random.default_rng(10), rows.shape[1])
    assert m.fn(rows @ q) == pytest.approx(m.fn(rows), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("m", [m for m in METRICS if m.scale_invariant], ids=lambda m: m.name)
def test_scale_invariance(m, rows):
    assert m.fn(7.5 * rows) == pytest.approx(m.fn(rows), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("m", [m for m in METRICS if m.permutation_invariant and m.name != "dime"],
                         ids=lambda m: m.name)
def test_permutation_invariance(m, rows):
    perm = np.random.default_rng(11).permutation(len(rows))
    assert m.fn(rows[perm]) == pytest.approx(m.fn(rows), rel=1e-8, abs=1e-10)
