"""Time the lrd measurement families on model-sized data and check Frenet against a reference.

Data: N = 1000 samples, d = 896 (Qwen2-0.5B's width), 26 arrays = layer 0
(embeddings) plus 25 blocks, float64. Every layer is a mixture of 16 clusters
in a latent space, mapped to d by a mixing matrix that drifts from layer to
layer, plus a shared offset (anisotropy) and noise with a decaying spectrum,
so ranks, neighbourhoods and clusters all change smoothly. Frenet is timed at
two latent sizes, 64 (95%-variance rank r = 30) and 512 (r = 103), because its
cost and the reference's both depend on r; NRS and GFMI on the first.

Two references compute the same Frenet distances: the "cached" one takes a
scipy SVD per layer once and ``scipy.linalg.subspace_angles`` per pair; the "naive"
one is a per-pair function of the definition that rebuilds both bases for every pair. Distance =
sqrt(sum of squared angles).

Times: lrd best of 3 runs, cached reference best of 2, naive reference 1 run; float64. Run:

    .venv/bin/python benchmarks/metrics.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from lrd.metrics import frenet, gfmi, nrs

N_SAMPLES, D_MODEL, N_LAYERS, CLUSTERS = 1000, 896, 26, 16


def make_layers(seed: int = 0, *, latent_dim: int = 64) -> np.ndarray:
    """Structured random states of shape (N_LAYERS, N_SAMPLES, D_MODEL)."""
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((CLUSTERS, latent_dim))
    latent = centres[rng.integers(0, CLUSTERS, N_SAMPLES)]
    latent = latent + rng.standard_normal((N_SAMPLES, latent_dim))
    mixing = rng.standard_normal((latent_dim, D_MODEL)) / np.sqrt(latent_dim)
    offset = 5.0 * rng.standard_normal(D_MODEL)
    noise_scale = 0.5 * np.exp(-np.arange(D_MODEL) / 200.0)
    layers = np.empty((N_LAYERS, N_SAMPLES, D_MODEL))
    for layer in range(N_LAYERS):
        mixing = mixing + 0.15 * rng.standard_normal(mixing.shape) / np.sqrt(latent_dim)
        noise = rng.standard_normal((N_SAMPLES, D_MODEL)) * noise_scale
        layers[layer] = latent @ mixing + offset + noise
    return layers


def reference_frenet(layers: np.ndarray, variance: float = 0.95):
    """Rank, consecutive distances, skip-one distances and d(0, L), one pair at a time."""
    bases = []
    spectra = []
    for x in layers:
        _, s, vt = scipy.linalg.svd(x - x.mean(axis=0), full_matrices=False)
        spectra.append(s)
        bases.append(vt)
    explained = np.cumsum(spectra[-1] ** 2) / np.sum(spectra[-1] ** 2)
    r = int(np.argmax(explained >= variance) + 1)
    q = [vt[:r].T for vt in bases]

    def dist(a, b):
        return float(np.sqrt(np.sum(scipy.linalg.subspace_angles(q[a], q[b]) ** 2)))

    n = len(q)
    consecutive = np.array([dist(i, i + 1) for i in range(n - 1)])
    skip = np.array([dist(i, i + 2) for i in range(n - 2)])
    return r, consecutive, skip, dist(0, n - 1)


def naive_reference_distances(layers: np.ndarray, r: int) -> np.ndarray:
    """The same distances as a per-pair function would compute them: bases rebuilt for every pair.

    ``d(a, b) = ||subspace_angles(basis(X_a), basis(X_b))||`` called for every consecutive
    pair, every skip-one pair and (0, L), with ``basis`` a scipy SVD: what a straightforward
    implementation of the definition does when nothing is cached.
    """
    def basis(x):
        return scipy.linalg.svd(x - x.mean(axis=0), full_matrices=False)[2][:r].T

    def dist(a, b):
        return float(np.sqrt(np.sum(scipy.linalg.subspace_angles(basis(layers[a]), basis(layers[b])) ** 2)))

    n = len(layers)
    pairs = [(i, i + 1) for i in range(n - 1)] + [(i, i + 2) for i in range(n - 2)] + [(0, n - 1)]
    return np.array([dist(a, b) for a, b in pairs])


def heron_curvature(a, b, c):
    s = (a + b + c) / 2
    area = np.sqrt(np.clip(s * (s - a) * (s - b) * (s - c), 0, None))
    return 4 * area / (a * b * c)


def timed(fn, repeats: int = 3):
    """Result and best-of-``repeats`` wall time (the minimum filters out noise from other load)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, min(times)


def compare_frenet(layers: np.ndarray) -> bool:
    res, t_fast = timed(lambda: frenet(layers))
    (r, consecutive, skip, displacement), t_ref = timed(
        lambda: reference_frenet(layers), repeats=2
    )
    if r != res.rank:
        raise SystemExit(f"rank mismatch: lrd {res.rank}, reference {r}")
    dist_diff = max(np.abs(res.velocity - consecutive).max(), abs(res.displacement - displacement))
    ref_curvature = heron_curvature(consecutive[:-1], consecutive[1:], skip)
    curv_diff = np.abs(res.curvature - ref_curvature).max()
    print(f"rank r = {res.rank}: mean velocity {res.mean_velocity:.4f} rad, "
          f"mean curvature {res.mean_curvature:.4f}, displacement {res.displacement:.4f} rad")
    print(f"frenet: {t_fast:.2f} s  reference (bases cached per layer): {t_ref:.2f} s  "
          f"speedup: {t_ref / t_fast:.1f}x  max|diff|: {dist_diff:.1g}  (curvature max|diff|: {curv_diff:.1g})")
    naive, t_naive = timed(lambda: naive_reference_distances(layers, res.rank), repeats=1)
    n_steps = len(res.velocity)
    naive_diff = max(np.abs(naive[:n_steps] - res.velocity).max(), abs(naive[-1] - res.displacement))
    print(f"frenet: {t_fast:.2f} s  naive per-pair reference (bases rebuilt per pair): {t_naive:.2f} s  "
          f"speedup: {t_naive / t_fast:.1f}x  max|diff|: {naive_diff:.1g}")
    return dist_diff <= 1e-6 and naive_diff <= 1e-6, t_ref / t_fast >= 5, t_naive / t_fast >= 5



def main() -> None:
    print(f"data: {N_LAYERS} arrays (layer 0 + {N_LAYERS - 1} blocks) x N={N_SAMPLES} "
          f"x d={D_MODEL}, float64; best of 3 runs (cached reference: best of 2, naive: 1 run)")
    layers = make_layers()
    checks = [compare_frenet(layers), compare_frenet(make_layers(latent_dim=512))]

    _, t_nrs = timed(lambda: nrs(layers, k=10))
    _, t_nrs_adj = timed(lambda: nrs(layers, k=10, adjusted=True))
    print(f"nrs (k=10): {t_nrs:.2f} s  adjusted: {t_nrs_adj:.2f} s")
    _, t_gfmi = timed(lambda: gfmi(layers))
    print(f"gfmi (ward, levels 2..32): {t_gfmi:.2f} s")
    for (same, cached, naive), r in zip(checks, ("r=30", "r=103")):
        print(f"frenet {r}: values equal to 1e-6: {'yes' if same else 'NO'}; >= 5x vs cached-basis reference: "
              f"{'met' if cached else 'missed'}; >= 5x vs naive per-pair reference: {'met' if naive else 'missed'}")


if __name__ == "__main__":
    main()
