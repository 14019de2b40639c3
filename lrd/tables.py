"""The tidy per-layer result schema and the one rounding of the chapters' tables.

Every measurement of the book is a long table with :data:`RESULT_COLUMNS` (one row per model,
task, measurement and layer, built by :func:`per_layer`); tables are shown rounded by
:func:`rounded`. Imports nothing from lrd: every floor may use it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

RESULT_COLUMNS = ["model", "task", "measurement", "layer", "depth", "value"]


def per_layer(values: np.ndarray, *, model: str, task: str, measurement: str,
              layers: np.ndarray | None = None, n_layers: int | None = None) -> pd.DataFrame:
    """One tidy row per layer: ``model, task, measurement, layer, depth, value``.

    ``depth`` is ``layer / n_layers`` in [0, 1] (layer 0 = embeddings), so models of different
    depth share one axis. ``layers`` defaults to ``0 .. len(values) - 1`` and ``n_layers`` to
    ``len(values) - 1``.
    """
    values = np.asarray(values, dtype=float)
    layers = np.arange(len(values)) if layers is None else np.asarray(layers)
    n_layers = len(values) - 1 if n_layers is None else n_layers
    return pd.DataFrame({"model": model, "task": task, "measurement": measurement, "layer": layers,
                         "depth": layers / n_layers, "value": values})[RESULT_COLUMNS]


#: Decimals of the numbers in the chapters' tables (:func:`rounded`). Scores are means of
#: 0/1 outcomes over tens of items (steps of 0.005 and more) and the metrics carry about six
#: significant digits through float noise (``tests/test_stability.py``), so three decimals show
#: what the measurement resolves and stay put on other processors.
TABLE_DIGITS = 3


#: Decimals of glued floats (:class:`Glue`).
GLUE_DIGITS = 4


def rounded(values: Any, digits: int = TABLE_DIGITS) -> Any:
    """``values`` rounded to ``digits`` decimals for display, with no negative zero.

    The one rounding of the chapters' tables: a DataFrame, Series, array or number. A value
    within float noise of zero prints as ``0.0`` whatever its sign (plain rounding prints
    ``-0.0`` for a tiny negative one, which another processor may compute as positive).
    Non-float columns are left as they are.

    Examples
    --------
    >>> rounded(pd.DataFrame({"model": ["a", "b"], "gain": [0.12345, -1e-9]}))
      model   gain
    0     a  0.123
    1     b  0.000
    >>> rounded(-4e-5, 4)
    0.0
    """
    if isinstance(values, pd.DataFrame):
        out = values.round(digits)
        floats = out.select_dtypes("floating").columns
        out[floats] = out[floats] + 0.0  # -0.0 + 0.0 == +0.0
        return out
    if isinstance(values, (pd.Series, np.ndarray)):
        out = values.round(digits)
        return out + 0.0 if np.issubdtype(out.dtype, np.floating) else out
    return round(float(values), digits) + 0.0
