"""Tidy result tables and glued numbers for the book.

Every number in a chapter's prose is glued (myst-nb ``glue``) under the key
``<chapter>-<name>``; :class:`Glue` also writes the same keys to ``results/<chapter>.json`` so
that the README and tests can quote and check them. Floats are rounded so that re-executions on
other machines print the same digits (what nbval compares).
"""

from __future__ import annotations

import json
import numbers
from pathlib import Path
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


def _plain(value: Any, digits: int) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return round(float(value), digits)
    return value


class Glue:
    """Glue namespaced, rounded values into a chapter and record them.

    Examples
    --------
    >>> g = Glue("demo", display=False, record_only=True)
    >>> g("answer", 0.123456789)
    'demo-answer'
    >>> g.values
    {'demo-answer': 0.1235}
    """

    def __init__(self, chapter: str, *, digits: int = 4, display: bool = False, record_only: bool = False):
        self.chapter, self.digits, self.display, self.record_only = chapter, digits, display, record_only
        self.values: dict[str, Any] = {}

    def __call__(self, name: str, value: Any) -> str:
        key = f"{self.chapter}-{name}"
        value = _plain(value, self.digits)
        self.values[key] = value
        if not self.record_only:
            from myst_nb import glue

            glue(key, value, display=self.display)
        return key

    def save(self, folder: str | Path = "results") -> Path:
        path = Path(folder) / f"{self.chapter}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.values, indent=1, sort_keys=True) + "\n")
        return path


def save_results(results: pd.DataFrame, chapter: str, folder: str | Path = "results") -> Path:
    """Write a chapter's tidy result table to ``<folder>/<chapter>.csv``."""
    path = Path(folder) / f"{chapter}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    results.to_csv(path, index=False)
    return path
