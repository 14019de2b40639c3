r"""Many tests at once: Holm's step-down adjustment, and the intersection-union p of a claim made of
several parts, per model."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["holm", "intersection_union_by_model"]


def holm(p_values: Sequence[float]) -> np.ndarray:
    r"""Holm's step-down adjustment of ``p_values`` (family-wise error over them).

    With the p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1)\, p_{(j)})`; rejecting every
    :math:`\tilde p \le \alpha` keeps the chance of any false rejection at most :math:`\alpha`
    under any dependence between the tests (Holm, Scand. J. Statist. 6 (1979) 65-70).

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([]).tolist()
    []
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p))))) if len(p) else p
    out = np.empty_like(p)
    out[order] = adjusted
    return out


def intersection_union_by_model(table: pd.DataFrame, n_parts: int, *, model: str = "model",
                                p: str = "p") -> pd.DataFrame:
    """``table`` (one row per model and part of a claim, with its ``p``) with ``p (all)``, the
    model's intersection-union p (the largest of its parts'; 1 where it lacks one of the
    ``n_parts``), and ``p (all, Holm)``, that adjusted over the models by :func:`holm`.

    >>> t = pd.DataFrame({"model": ["a", "a", "b"], "p": [0.01, 0.02, 0.001]})
    >>> intersection_union_by_model(t, 2)[["p (all)", "p (all, Holm)"]].to_numpy().tolist()
    [[0.02, 0.04], [0.02, 0.04], [1.0, 1.0]]
    """
    if table.empty:
        return table.assign(**{"p (all)": [], "p (all, Holm)": []})
    worst = table.groupby(model, sort=False)[p].agg(lambda v: v.max() if len(v) == n_parts else 1.0)
    adjusted = pd.Series(holm(worst.to_numpy()), index=worst.index)
    return table.assign(**{"p (all)": table[model].map(worst), "p (all, Holm)": table[model].map(adjusted)})
