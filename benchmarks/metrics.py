"""Time the lrd measurement families on model-sized data and check Frenet against a reference.

Data: N = 1000 samples, d = 896 (Qwen2-0.5B's width), 26 arrays = layer 0
(embeddings) plus 25 blocks, float64. Every layer is a mixture of 16 clusters
in a latent space, mapped to d by a mixing matrix that drifts from layer to
layer, plus a shared offset (anisotropy) and noise with a decaying spectrum,
so ranks, neighbourhoods and clusters all change smoothly. Frenet is timed at
two latent sizes, 64 (95%-variance rank r = 30) and 512 (r = 103), because its
cost and the reference's both depend on r; NRS and GFMI on the first.

The reference computes the same Frenet distances the straightforward way: a
scipy SVD per layer and ``scipy.linalg.subspace_angles`` per pair, distance =
sqrt(sum of squared angles).

Times are the best of 3 runs (reference: 2), float64 throughout. Run:

    PYTHONPATH=. .venv/bin/python benchmarks/metrics.py
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
    print(f"frenet: {t_fast:.2f} s  reference: {t_ref:.2f} s  speedup: {t_ref / t_fast:.1f}x  "
          f"max|diff|: {dist_diff:.1g}  (curvature max|diff|: {curv_diff:.1g})")
    return dist_diff <= 1e-6 and t_ref / t_fast >= 5


def main() -> None:
    print(f"data: {N_LAYERS} arrays (layer 0 + {N_LAYERS - 1} blocks) x N={N_SAMPLES} "
          f"x d={D_MODEL}, float64; best of 3 runs (reference: best of 2)")
    layers = make_layers()
    ok = [compare_frenet(layers), compare_frenet(make_layers(latent_dim=512))]

    _, t_nrs = timed(lambda: nrs(layers, k=10))
    _, t_nrs_adj = timed(lambda: nrs(layers, k=10, adjusted=True))
    print(f"nrs (k=10): {t_nrs:.2f} s  adjusted: {t_nrs_adj:.2f} s")
    _, t_gfmi = timed(lambda: gfmi(layers))
    print(f"gfmi (ward, levels 2..32): {t_gfmi:.2f} s")
    print("frenet targets (speedup >= 5x, max|diff| <= 1e-6):",
          ", ".join("met" if o else "missed" for o in ok))


if __name__ == "__main__":
    main()
