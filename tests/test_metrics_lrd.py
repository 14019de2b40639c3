"""Unit tests for lrd.metrics: closed forms first, then one property test per property
over a registry of metrics."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from lrd.metrics import (
    FrenetResult,
    frenet,
    gfmi,
    grassmann_distance,
    mean_cosine_similarity,
    menger_curvature,
    nrs,
    subspace_basis,
)


# ----------------------------------------------------------------------------- data


def mixture(rng, n=240, d=16, clusters=8, spread=4.0):
    """Gaussian mixture (n, d) with well-separated clusters."""
    centres = spread * rng.standard_normal((clusters, d))
    return centres[rng.integers(0, clusters, n)] + rng.standard_normal((n, d))


def structured_layers(seed=0, n_layers=5, n=120, d=12):
    """Layers of shape (n_layers, n, d): a mixture pushed through drifting linear maps."""
    rng = np.random.default_rng(seed)
    z = mixture(rng, n=n, d=6, clusters=6)
    mix = rng.standard_normal((6, d))
    out = []
    for _ in range(n_layers):
        mix = mix + 0.3 * rng.standard_normal(mix.shape)
        out.append(z @ mix + 0.2 * rng.standard_normal((n, d)) + rng.standard_normal(d))
    return np.stack(out)


def rotation(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def line(t):
    return np.array([[np.cos(t)], [np.sin(t)]])


def plane_data(basis, rng, n=60):
    """Centred samples spanning exactly the columns of ``basis`` (d, 2), variances 4 : 1."""
    z = rng.standard_normal((n, 2))
    z -= z.mean(axis=0)
    z = np.linalg.qr(z)[0] * [2.0, 1.0]  # exact sample spectrum, so the top-2 space is the plane
    return z @ basis.T


# ----------------------------------------------------------------------------- Grassmann distance


@pytest.mark.parametrize("t", [0.0, 1e-10, 0.3, 1.0, np.pi / 2])
def test_lines_at_angle_t_are_t_apart(t):
    assert grassmann_distance(line(0.0), line(t)) == pytest.approx(t, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("t1, t2", [(0.2, 0.0), (0.4, 1.1), (np.pi / 2, np.pi / 2)])
def test_planes_in_r4_at_principal_angles(t1, t2):
    e = np.eye(4)
    a = e[:, :2]
    b = np.stack(
        [np.cos(t1) * e[0] + np.sin(t1) * e[2], np.cos(t2) * e[1] + np.sin(t2) * e[3]], axis=1
    )
    assert grassmann_distance(a, b) == pytest.approx(np.hypot(t1, t2), abs=1e-12)


def test_distance_is_symmetric_and_basis_free():
    rng = np.random.default_rng(0)
    qa = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    qb = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    r = rotation(rng, 3)
    d = grassmann_distance(qa, qb)
    assert d > 0.1
    assert grassmann_distance(qb, qa) == pytest.approx(d, abs=1e-12)
    assert grassmann_distance(qa @ r, qb) == pytest.approx(d, abs=1e-12)
    assert grassmann_distance(qa, qa @ r) == pytest.approx(0.0, abs=1e-12)


def test_distance_accepts_stacks():
    rng = np.random.default_rng(1)
    qa = np.stack([np.linalg.qr(rng.standard_normal((7, 2)))[0] for _ in range(4)])
    qb = np.stack([np.linalg.qr(rng.standard_normal((7, 2)))[0] for _ in range(4)])
    batched = grassmann_distance(qa, qb)
    assert batched.shape == (4,)
    np.testing.assert_allclose(batched, [grassmann_distance(a, b) for a, b in zip(qa, qb)])


def test_distance_rejects_bad_bases():
    with pytest.raises(ValueError, match="orthonormal"):
        grassmann_distance(2.0 * line(0.0), line(0.1))
    with pytest.raises(ValueError, match="same shape"):
        grassmann_distance(np.eye(3)[:, :1], np.eye(3)[:, :2])


def test_subspace_basis_is_orthonormal_centred_and_top():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((80, 5)) * [5.0, 3.0, 0.1, 0.1, 0.1]
    q = subspace_basis(x + 100.0, 2)
    assert q.shape == (5, 2)
    np.testing.assert_allclose(q.T @ q, np.eye(2), atol=1e-12)
    assert grassmann_distance(q, subspace_basis(x, 2)) == pytest.approx(0.0, abs=1e-9)
    assert grassmann_distance(q, np.eye(5)[:, :2]) < 0.1
    wide = rng.standard_normal((6, 20))  # d > n uses the SVD path
    qw = subspace_basis(wide, 3)
    np.testing.assert_allclose(qw.T @ qw, np.eye(3), atol=1e-12)
    with pytest.raises(ValueError, match="r must be"):
        subspace_basis(x, 6)


# ----------------------------------------------------------------------------- Menger curvature


def test_collinear_points_have_zero_curvature():
    assert menger_curvature(1.0, 2.0, 3.0) == 0.0
    assert menger_curvature(0.5, 0.5, 1.0) == 0.0


@pytest.mark.parametrize("a", [1e-3, 1.0, 7.0])
def test_equilateral_triangle(a):
    assert menger_curvature(a, a, a) == pytest.approx(np.sqrt(3) / a, rel=1e-12)


def test_right_triangle_345_in_any_order():
    sides = np.array([[3, 4, 5], [5, 3, 4], [4, 5, 3]], dtype=float).T
    np.testing.assert_allclose(menger_curvature(*sides), 0.4, rtol=1e-12)


def test_degenerate_and_needle_triangles():
    assert menger_curvature(0.0, 1.0, 1.0) == 0.0
    # three points 1e-3 rad apart on the unit circle: curvature 1
    chord = 2 * np.sin(np.array([0.5e-3, 0.5e-3, 1e-3]))
    assert menger_curvature(*chord) == pytest.approx(1.0, rel=1e-6)


def test_curvature_rejects_impossible_sides():
    with pytest.raises(ValueError, match="triangle inequality"):
        menger_curvature(1.0, 1.0, 3.0)
    with pytest.raises(ValueError, match="non-negative"):
        menger_curvature(-1.0, 1.0, 1.0)


# ----------------------------------------------------------------------------- Frenet


def test_frenet_closed_form_geodesic_and_corner():
    rng = np.random.default_rng(3)
    e = np.eye(5)
    t = 0.3
    c, s = np.cos(t), np.sin(t)
    q0 = e[:, [0, 1]]
    q1 = np.stack([e[0], c * e[1] + s * e[2]], axis=1)
    q2_geodesic = np.stack([e[0], np.cos(2 * t) * e[1] + np.sin(2 * t) * e[2]], axis=1)
    q2_corner = np.stack([c * e[0] + s * e[3], c * e[1] + s * e[2]], axis=1)

    straight = frenet(np.stack([plane_data(q, rng) for q in (q0, q1, q2_geodesic)]))
    assert straight.rank == 2
    np.testing.assert_allclose(straight.velocity, [t, t], atol=1e-12)
    assert straight.displacement == pytest.approx(2 * t, abs=1e-12)
    np.testing.assert_allclose(straight.curvature, [0.0], atol=1e-6)

    # sides t, t, sqrt(2) t: a right isosceles triangle, circumradius sqrt(2) t / 2
    corner = frenet(np.stack([plane_data(q, rng) for q in (q0, q1, q2_corner)]))
    assert corner.displacement == pytest.approx(np.sqrt(2) * t, abs=1e-12)
    np.testing.assert_allclose(corner.curvature, [np.sqrt(2) / t], rtol=1e-9)
    assert corner.mean_velocity == pytest.approx(t)
    assert corner.mean_curvature == pytest.approx(np.sqrt(2) / t)


def test_frenet_layers_rotated_within_their_subspace_do_not_move():
    rng = np.random.default_rng(4)
    x = plane_data(np.eye(6)[:, :2], rng)
    layers = []
    for angle in (0.0, 0.4, 1.3, 2.0):
        rot = np.eye(6)
        rot[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
        layers.append(x @ rot * (1 + angle) + angle)
    res = frenet(np.stack(layers))
    assert res.velocity.tolist() == [0.0, 0.0, 0.0]
    assert res.curvature.tolist() == [0.0, 0.0]
    assert res.displacement == 0.0


@pytest.mark.parametrize(
    "variance, rank", [(0.5, 1), (0.8, 2), (0.9, 3), (0.94, 3), (0.95, 4), (0.99, 5), (1.0, 5)]
)
def test_frenet_rank_rule_on_known_spectrum(variance, rank):
    rng = np.random.default_rng(5)
    z = rng.standard_normal((100, 5))
    z = np.linalg.qr(z - z.mean(axis=0))[0]  # centred orthonormal columns
    x = (z * np.sqrt([50.0, 30.0, 14.0, 4.0, 2.0])) @ rotation(rng, 8)[:5]
    res = frenet(np.stack([rng.standard_normal((100, 8)), x]), variance=variance)
    assert res.rank == rank


@pytest.mark.parametrize("n, d, variance", [(80, 10, 0.95), (80, 10, 0.5), (8, 30, 0.95)])
def test_frenet_matches_pairwise_scipy_reference(n, d, variance):
    """Eigen path (d <= n, subset and full) and SVD path (d > n) against subspace_angles."""
    from scipy.linalg import subspace_angles

    layers = structured_layers(seed=16, n_layers=4, n=n, d=d)
    res = frenet(layers, variance=variance)
    q = [np.linalg.svd(x - x.mean(axis=0))[2][: res.rank].T for x in layers]

    def dist(a, b):
        return np.sqrt(np.sum(subspace_angles(q[a], q[b]) ** 2))

    np.testing.assert_allclose(res.velocity, [dist(0, 1), dist(1, 2), dist(2, 3)], atol=1e-10)
    assert res.displacement == pytest.approx(dist(0, 3), abs=1e-10)
    expected = menger_curvature(res.velocity[:-1], res.velocity[1:], [dist(0, 2), dist(1, 3)])
    np.testing.assert_allclose(res.curvature, expected, rtol=1e-8)


def test_frenet_result_shapes_and_frozen():
    res = frenet(structured_layers(n_layers=5))
    assert isinstance(res, FrenetResult)
    assert res.velocity.shape == (4,) and res.curvature.shape == (3,)
    assert isinstance(res.rank, int) and isinstance(res.displacement, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.rank = 3
    two = frenet(structured_layers(n_layers=2))
    assert two.curvature.shape == (0,) and np.isnan(two.mean_curvature)


def test_frenet_rejects_constant_final_layer_and_bad_variance():
    layers = structured_layers(n_layers=3)
    layers[-1] = 1.0
    with pytest.raises(ValueError, match="zero variance"):
        frenet(layers)
    with pytest.raises(ValueError, match="variance must be"):
        frenet(structured_layers(), variance=1.5)


# ----------------------------------------------------------------------------- NRS


def knn_reference(x, k):
    """Per-sample loop: k most cosine-similar others, ties to the lower index."""
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    sim = u @ u.T
    out = []
    for i in range(len(x)):
        order = [j for j in np.argsort(-sim[i], kind="stable") if j != i]
        out.append(set(order[:k]))
    return out


def test_nrs_matches_a_per_sample_reference_with_ties():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((30, 4))
    a[10:20] = a[:10]  # exact duplicates: ties at the k-th neighbour
    b = a + 0.5 * rng.standard_normal(a.shape)
    k = 4
    ref_a, ref_b = knn_reference(a, k), knn_reference(b, k)
    expected = np.mean([len(sa & sb) / k for sa, sb in zip(ref_a, ref_b)])
    assert nrs(np.stack([a, b]), k)[0] == pytest.approx(expected, abs=1e-12)


def test_nrs_chance_level_for_independent_layers():
    rng = np.random.default_rng(7)
    layers = rng.standard_normal((5, 300, 16))
    raw = nrs(layers, k=10)
    adj = nrs(layers, k=10, adjusted=True)
    np.testing.assert_allclose(raw, 10 / 299, atol=0.02)
    assert np.all(np.abs(adj) < 0.03)
    np.testing.assert_allclose(adj, (raw - 10 / 299) / (1 - 10 / 299))


def test_nrs_rejects_k_too_large():
    layers = np.random.default_rng(8).standard_normal((2, 8, 3))
    with pytest.raises(ValueError, match=r"too few samples for k.*k=10.*n_samples=8"):
        nrs(layers, k=10)
    with pytest.raises(ValueError, match="too few samples"):
        nrs(layers, k=8)
    assert nrs(layers, k=7).tolist() == [1.0]  # every other sample is a neighbour
    with pytest.raises(ValueError, match="adjusted NRS is undefined"):
        nrs(layers, k=7, adjusted=True)


def test_nrs_rejects_zero_norm_sample():
    layers = np.random.default_rng(9).standard_normal((2, 20, 3))
    layers[1, 4] = 0.0
    with pytest.raises(ValueError, match=r"layer 1 .*zero norm"):
        nrs(layers, k=3)


# ----------------------------------------------------------------------------- GFMI


def test_gfmi_final_layer_is_exactly_one():
    out = gfmi(structured_layers(n_layers=4))
    assert out.shape == (4,)
    assert out[-1] == 1.0


def test_gfmi_near_zero_for_independent_representation():
    for seed in range(3):
        rng = np.random.default_rng(seed)
        final = mixture(rng, n=300)
        assert abs(gfmi(np.stack([rng.standard_normal((300, 16)), final]))[0]) < 0.05


def test_gfmi_decreases_as_noise_grows():
    scales = [0.0, 0.25, 0.5, 1.0, 2.0]
    curves = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        final = mixture(rng, n=240)
        noisy = [final + s * final.std() * rng.standard_normal(final.shape) for s in scales]
        curves.append(gfmi(np.stack(noisy + [final]))[:-1])
    mean = np.mean(curves, axis=0)
    assert mean[0] == 1.0
    assert np.all(np.diff(mean) < 0), mean
    assert mean[-1] < 0.3


def test_gfmi_constant_layer_scores_zero():
    layers = structured_layers(n_layers=3)
    layers[0] = 2.5
    assert gfmi(layers)[0] == 0.0


@pytest.mark.parametrize("linkage", ["ward", "average", "complete", "single"])
def test_gfmi_linkages(linkage):
    out = gfmi(structured_layers(n_layers=3), linkage=linkage)
    assert out[-1] == 1.0 and np.all(out <= 1.0)


@pytest.mark.parametrize("n", [3, 5, 7])
def test_gfmi_on_too_few_samples_is_an_error_naming_the_minimum(n):
    """Three samples gave [1, -0.5, -0.5]: chance-corrected MI on a handful of points is noise."""
    from lrd.metrics.gfmi import MIN_SAMPLES

    layers = structured_layers(n_layers=3, n=40)[:, :n]
    with pytest.raises(ValueError, match=f"at least {MIN_SAMPLES} samples, got {n}"):
        gfmi(layers)
    assert MIN_SAMPLES == 8 and np.all(np.isfinite(gfmi(structured_layers(n_layers=3, n=40)[:, :MIN_SAMPLES])))


def test_gfmi_levels_above_n_are_dropped_and_validated():
    layers = structured_layers(n_layers=3, n=40)
    np.testing.assert_array_equal(
        gfmi(layers, levels=(2, 4, 40, 1000)), gfmi(layers, levels=(2, 4))
    )
    with pytest.raises(ValueError, match="no level below n_samples=40"):
        gfmi(layers, levels=(64,))
    with pytest.raises(ValueError, match="must be >= 2"):
        gfmi(layers, levels=(1, 4))
    with pytest.raises(ValueError, match="linkage must be"):
        gfmi(layers, linkage="centroid")


# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Metric:
    """One measurement, as a function of layers (n_layers, n, d) -> scores, and its properties."""

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    n_out: Callable[[int], int]  # number of scores for n_layers layers
    bounds: tuple[float, float]
    identity: float | None = None  # value on identical layers
    invariances: frozenset = field(default_factory=frozenset)


ALL = frozenset({"common_rotation", "layer_rotation", "layer_scale", "translation", "sample_scale"})
METRICS = [
    Metric("frenet.velocity", lambda x: frenet(x).velocity, lambda n: n - 1,
           (0.0, np.inf), 0.0, frozenset({"common_rotation", "layer_scale", "translation"})),
    Metric("frenet.curvature", lambda x: frenet(x).curvature, lambda n: n - 2,
           (0.0, np.inf), 0.0, frozenset({"common_rotation", "layer_scale", "translation"})),
    Metric("frenet.displacement", lambda x: np.array([frenet(x).displacement]), lambda n: 1,
           (0.0, np.inf), 0.0, frozenset({"common_rotation", "layer_scale", "translation"})),
    Metric("nrs", lambda x: nrs(x, k=5), lambda n: n - 1, (0.0, 1.0), 1.0,
           frozenset({"common_rotation", "layer_rotation", "layer_scale", "sample_scale"})),
    Metric("nrs.adjusted", lambda x: nrs(x, k=5, adjusted=True), lambda n: n - 1,
           (-5 / (119 - 5), 1.0), 1.0,
           frozenset({"common_rotation", "layer_rotation", "layer_scale", "sample_scale"})),
    Metric("gfmi", lambda x: gfmi(x), lambda n: n, (-0.2, 1.0), 1.0,
           frozenset({"common_rotation", "layer_rotation", "layer_scale", "translation"})),
    Metric("mean_cosine_similarity", mean_cosine_similarity, lambda n: n, (-1.0, 1.0), None,
           frozenset({"common_rotation", "layer_rotation", "layer_scale", "sample_scale"})),
]


def transform(kind, layers, rng):
    n_layers, n, d = layers.shape
    if kind == "common_rotation":
        return layers @ rotation(rng, d)
    if kind == "layer_rotation":
        return np.stack([x @ rotation(rng, d) for x in layers])
    if kind == "layer_scale":
        return layers * rng.uniform(0.1, 10.0, (n_layers, 1, 1))
    if kind == "translation":
        return layers + 5.0 * rng.standard_normal((n_layers, 1, d))
    if kind == "sample_scale":
        return layers * rng.uniform(0.1, 10.0, (n_layers, n, 1))
    raise AssertionError(kind)


CASES = [(m, kind) for m in METRICS for kind in sorted(ALL) if kind in m.invariances]


@pytest.mark.parametrize("metric, kind", CASES, ids=[f"{m.name}-{k}" for m, k in CASES])
def test_invariance(metric, kind):
    layers = structured_layers(seed=11)
    before = metric.fn(layers)
    after = metric.fn(transform(kind, layers, np.random.default_rng(12)))
    np.testing.assert_allclose(after, before, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("metric", METRICS, ids=[m.name for m in METRICS])
def test_shape_and_bounds(metric):
    layers = structured_layers(seed=13, n_layers=5)
    out = metric.fn(layers)
    assert out.shape == (metric.n_out(5),)
    lo, hi = metric.bounds
    assert np.all((out >= lo - 1e-12) & (out <= hi + 1e-12)), out


IDENTITY = [m for m in METRICS if m.identity is not None]


@pytest.mark.parametrize("metric", IDENTITY, ids=[m.name for m in IDENTITY])
def test_identical_layers(metric):
    x = structured_layers(seed=14, n_layers=1)[0]
    np.testing.assert_allclose(metric.fn(np.stack([x, x, x])), metric.identity, atol=1e-12)


@pytest.mark.parametrize("metric", METRICS, ids=[m.name for m in METRICS])
def test_rejects_non_finite(metric):
    layers = structured_layers(seed=15, n_layers=3)
    layers[1, 3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        metric.fn(layers)


@pytest.mark.parametrize("metric", METRICS, ids=[m.name for m in METRICS])
def test_rejects_wrong_rank_input(metric):
    with pytest.raises(ValueError, match="shape"):
        metric.fn(np.zeros((10, 4)))


# ----------------------------------------------------------------------------- profile


def test_profile_rows_and_scores_are_consistent():
    from lrd.metrics import lrd_profile, model_scores, profile_rows

    rng = np.random.default_rng(0)
    layers = np.cumsum(rng.normal(size=(5, 60, 8)), axis=0)  # a random walk over 4 blocks
    profile = lrd_profile(layers, k=5)
    rows = profile_rows(profile, model="m", task="t")
    counts = rows.groupby("measurement").size()
    assert counts["velocity"] == 4 and counts["curvature"] == 3 and counts["GFMI"] == 5
    assert rows["depth"].between(0, 1).all()
    scores = model_scores(profile)
    vel = rows.loc[rows.measurement == "velocity", "value"]
    assert scores["mean velocity"] == pytest.approx(vel.mean())
    assert scores["d_0L"] == pytest.approx(profile.frenet.displacement)
    assert scores["mean GFMI"] == pytest.approx(profile.gfmi[:-1].mean())  # layer L (1 by construction) left out
    assert rows.loc[rows.measurement == "GFMI", "value"].iloc[-1] == 1.0


def test_profile_adjusted_nrs_equals_direct_computation():
    from lrd.metrics import lrd_profile

    layers = np.random.default_rng(1).normal(size=(4, 50, 6))
    np.testing.assert_allclose(lrd_profile(layers, k=5).nrs_adjusted, nrs(layers, 5, adjusted=True))
