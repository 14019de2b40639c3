"""Input checks shared by every metric."""

from __future__ import annotations

import numpy as np


def check_layers(layers: np.ndarray, *, min_samples: int = 2, dtype=np.float64) -> np.ndarray:
    """Validate a stack of layer representations and return it as a float array.

    Parameters
    ----------
    layers : array-like of shape (n_layers, n_samples, d_model)
    min_samples : int
        Smallest number of samples the metric can work with.

    Raises
    ------
    ValueError
        If the array is not 3-D, has too few samples, or holds NaN/inf.
    """
    x = np.asarray(layers, dtype=dtype)
    if x.ndim != 3:
        raise ValueError(
            f"expected layers of shape (n_layers, n_samples, d_model), got shape {x.shape}; "
            "stack per-layer matrices with lrd.extract(...) or np.stack"
        )
    if x.shape[1] < min_samples:
        raise ValueError(f"need at least {min_samples} samples, got {x.shape[1]}")
    if not np.all(np.isfinite(x)):
        bad = np.unique(np.nonzero(~np.isfinite(x))[0]).tolist()
        raise ValueError(
            f"layers contain NaN or inf (layers {bad}); the model produced non-finite states: "
            "check the dtype (use float32) and the input texts"
        )
    return x


# A layer whose samples differ from their mean by less than this fraction of
# the layer's largest entry is treated as constant (all samples identical).
_CONSTANT_RTOL = 1e-12


def constant_layers(x: np.ndarray, *, rtol: float = _CONSTANT_RTOL) -> list[int]:
    """Indices of the layers of ``x`` (n_layers, n, d) in which every sample is the same vector.

    A sample spread below ``rtol`` times the layer's largest absolute entry counts as
    identical (float rounding of a constant layer); an all-zero layer is constant.
    """
    spread = np.ptp(x, axis=1).max(axis=-1)  # (n_layers,)
    scale = np.abs(x).max(axis=(1, 2))
    return np.flatnonzero(spread <= rtol * scale).tolist()
