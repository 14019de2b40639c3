"""Degenerate inputs fed to every metric: each gives its documented value or a clear ValueError.

One row per metric. To add a metric, append a ``Row`` to ``ROWS``:

* ``fn``: layers (n_layers, n_samples, d) -> array of scores (wrap dataclass results, fix options);
* ``min_samples``: the fewest samples it accepts (one fewer must raise a ValueError naming samples);
* ``min_layers``: the fewest layers (1 or 2; with 2, a single layer must raise naming layers);
* ``constant_middle`` / ``constant_last``: what a layer with all samples identical gives, in the
  middle (layer 1 of 3) or as the last layer: ``RAISES`` (a ValueError naming the problem) or a
  function ``check(out)`` that asserts the documented value.

Every row is then also run on duplicate rows, integer input and float16 input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from lrd.metrics import frenet, gfmi, mean_cosine_similarity, nrs

RAISES = "raises"
CONSTANT_MESSAGE = r"identical|same direction|zero variance"


@dataclass(frozen=True)
class Row:
    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    min_samples: int
    min_layers: int
    constant_middle: str | Callable[[np.ndarray], None]
    constant_last: str | Callable[[np.ndarray], None]


def _at(index: int, value: float):
    def check(out):
        assert out[index] == pytest.approx(value, abs=1e-12), out
    return check


ROWS = [
    Row("frenet.velocity", lambda x: frenet(x).velocity, 2, 2, RAISES, RAISES),
    Row("frenet.curvature", lambda x: frenet(x).curvature, 2, 2, RAISES, RAISES),
    Row("frenet.displacement", lambda x: np.array([frenet(x).displacement]), 2, 2, RAISES, RAISES),
    Row("nrs", lambda x: nrs(x, k=5), 6, 2, RAISES, RAISES),
    Row("nrs.adjusted", lambda x: nrs(x, k=5, adjusted=True), 7, 2, RAISES, RAISES),
    Row("gfmi", lambda x: gfmi(x), 8, 2, _at(1, 0.0), RAISES),
    Row("mean_cosine_similarity", mean_cosine_similarity, 2, 1, _at(1, 1.0), _at(-1, 1.0)),
]
IDS = [r.name for r in ROWS]


def layers(n_layers=3, n=40, d=8, seed=0):
    """Generic, structured layers: a shared mixture through drifting maps, plus an offset."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 4)) + 3.0 * rng.standard_normal((5, 4))[rng.integers(0, 5, n)]
    maps = rng.standard_normal((n_layers, 4, d))
    return z @ maps + 0.3 * rng.standard_normal((n_layers, n, d)) + rng.standard_normal((n_layers, 1, d))


def _finite(out):
    out = np.asarray(out)
    assert np.all(np.isfinite(out)), out
    return out


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_too_few_samples_is_an_error_naming_samples(row):
    with pytest.raises(ValueError, match="samples"):
        row.fn(layers(n=row.min_samples - 1))
    _finite(row.fn(layers(n=row.min_samples)))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_single_layer(row):
    x = layers(n_layers=1)
    if row.min_layers > 1:
        with pytest.raises(ValueError, match="layers"):
            row.fn(x)
    else:
        _finite(row.fn(x))


@pytest.mark.parametrize("position", ["constant_middle", "constant_last"])
@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_constant_layer(row, position):
    x = layers()
    x[1 if position == "constant_middle" else -1] = np.linspace(1.0, 2.0, x.shape[-1])
    expected = getattr(row, position)
    if expected == RAISES:
        with pytest.raises(ValueError, match=CONSTANT_MESSAGE):
            row.fn(x)
    else:
        expected(_finite(row.fn(x)))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_duplicate_rows_give_deterministic_finite_scores(row):
    x = layers(n=40)
    x[:, 20:] = x[:, :20]  # every sample twice
    first = _finite(row.fn(x))
    np.testing.assert_array_equal(row.fn(x.copy()), first)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_integer_input_is_computed_as_float(row):
    x = np.round(10 * layers()).astype(np.int64)
    np.testing.assert_allclose(row.fn(x), _finite(row.fn(x.astype(np.float64))), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_float16_input_is_computed_in_float64(row):
    x = layers().astype(np.float16)
    np.testing.assert_allclose(row.fn(x), _finite(row.fn(x.astype(np.float64))), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_float16_overflow_is_reported_as_non_finite(row):
    x = layers().astype(np.float16)
    x[1, 0, 0] = np.inf  # what a float16 model gives when an activation overflows
    with pytest.raises(ValueError, match="NaN or inf"):
        row.fn(x)


def test_subspace_basis_of_a_constant_layer_is_an_error():
    from lrd.metrics import subspace_basis

    with pytest.raises(ValueError, match="zero variance"):
        subspace_basis(np.tile([1.0, 2.0, 3.0], (10, 1)), 1)
