"""ilse.gain: the largest cell gain over the last layer, a maximum over the paper's own cells.

The per-cell gains of a method over a reference (mean over seeds and test items), their
pigeonhole bootstrap, the paper's own largest gains, and :func:`gain_result`, the numbers of
:func:`judge_gain` (its sentences: :func:`lrd.verdicts.wording.fusion.gain`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.claims import ILSE_KINDS, ILSE_MAX_GAIN_PP, ILSE_PARAMS_RANGE, ILSE_TABLE_ROWS
from lrd.verdicts.fusion.panel import (POINTS, item_matrices, method_label, paper_cell_differences, require_columns,
                                       size_scope)
from lrd.verdicts.record import Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.wording import fusion as words

__all__ = ["gain_headroom", "GAIN_MODEL_COLUMNS", "gain_cells", "gain_design", "gain_bootstrap", "gain_by_model",
           "paper_largest_gains", "gain_result", "judge_gain"]


def gain_headroom(items: pd.DataFrame, *, reference: str = "last") -> pd.DataFrame:
    """Per (model, task) cell, the reference's accuracy and the points it leaves below 100.

    Returns
    -------
    DataFrame ``model, task, accuracy, headroom_pp`` (accuracy: mean over seeds and items).

    Examples
    --------
    >>> items = pd.DataFrame({"model": "a", "task": "x", "method": "last", "seed": 0, "item": [0, 1, 2, 3],
    ...                       "correct": [1, 1, 1, 0]})
    >>> gain_headroom(items)[["accuracy", "headroom_pp"]].values.tolist()
    [[0.75, 25.0]]
    """
    require_columns(items, {"model", "task", "method", "correct"}, "items")
    ref = items[items["method"] == reference]
    acc = ref.groupby(["model", "task"], sort=False)["correct"].mean().rename("accuracy").reset_index()
    return acc.assign(headroom_pp=(1 - acc["accuracy"]) * POINTS)


#: Columns of :func:`gain_by_model` and :func:`paper_largest_gains`.
GAIN_MODEL_COLUMNS = ["model", "cells", "largest gain", "task", "reference accuracy"]


def gain_cells(items: pd.DataFrame, method: str, reference: str) -> tuple[list, list]:
    """Every (model, classification task) with both methods, and its (seeds, items) matrix of
    correctness differences ``method - reference``."""
    if not len(items):
        return [], []
    return item_matrices(items, method, reference)


def gain_design(items: pd.DataFrame, *, method: str = "cayley", reference: str = "last",
                base_params: Mapping[str, float] | None = None,
                params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS) -> dict[str, int]:
    """The cells :func:`judge_gain` describes on ``items``: their distinct models and tasks, their
    seeds, and the median number of test items per task (the appendix simulates the claim at it).
    With ``base_params`` (and ``model_kinds``), only the models the claim counts (:func:`size_scope`).

    Examples
    --------
    >>> items = pd.DataFrame({"model": "a", "task": "x", "method": np.repeat(["last", "cayley"], 4), "seed": 0,
    ...                       "item": [0, 1, 2, 3] * 2, "correct": [1, 0, 0, 0, 1, 1, 1, 1]})
    >>> gain_design(items)
    {'n_models': 1, 'n_tasks': 1, 'n_seeds': 1, 'n_items': 4}
    """
    (items,), _ = size_scope("ilse.gain", base_params, items, params=params_range, kinds=kinds,
                             model_kinds=model_kinds)
    kept = list(zip(*gain_cells(items, method, reference)))
    if not kept:
        return {"n_models": 0, "n_tasks": 0, "n_seeds": 0, "n_items": 0}
    per_task = {t: m.shape[1] for (_, t), m in kept}
    return {"n_models": len({mdl for (mdl, _), _ in kept}), "n_tasks": len(per_task),
            "n_seeds": int(kept[0][1].shape[0]), "n_items": int(np.median(list(per_task.values())))}


def gain_bootstrap(cells: list, mats: list, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Each cell's gain :math:`\hat g_c` in points and its ``n_boot`` pigeonhole-bootstrap
    replicates, shape (B, cells): seeds resampled once for all cells, test items once per task
    (the models of a task share them); and the number of seeds."""
    rng = np.random.default_rng(seed)
    n_seeds = {m.shape[0] for m in mats}
    if len(n_seeds) != 1:
        raise ValueError(f"cells have different numbers of seeds {sorted(n_seeds)}; run every method with the "
                         f"same seeds")
    (s,) = n_seeds
    seed_w = rng.multinomial(s, np.full(s, 1 / s), size=n_boot)  # (B, s), shared by all cells
    item_w = {}
    for (_, task), m in zip(cells, mats):
        if task not in item_w:
            item_w[task] = rng.multinomial(m.shape[1], np.full(m.shape[1], 1 / m.shape[1]), size=n_boot)
        elif item_w[task].shape[1] != m.shape[1]:
            raise ValueError(f"task {task!r} has test sets of different sizes across models")
    g = np.array([m.mean() for m in mats]) * POINTS
    boot = np.stack([((seed_w @ m) * item_w[task]).sum(1) / m.size for (_, task), m in zip(cells, mats)], 1) * POINTS
    return g, boot, s


def gain_by_model(items: pd.DataFrame, *, method: str = "cayley", reference: str = "last",
                  base_params: Mapping[str, float] | None = None,
                  params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                  model_kinds: Mapping[str, str] | None = None,
                  kinds: Sequence[str] | None = ILSE_KINDS) -> pd.DataFrame:
    """Per model, its largest cell gain of ``method`` over ``reference`` (classification tasks,
    accuracy points, mean over seeds and test items): a description, not a test (``ilse.gain``
    is a maximum over the paper's own cells, :func:`judge_gain`). With ``base_params`` (and
    ``model_kinds``), only the models the claim counts (:func:`size_scope`).

    Returns
    -------
    DataFrame :data:`GAIN_MODEL_COLUMNS` (``reference accuracy``: the reference's accuracy, 0-1,
    in the cell of the largest gain).

    Examples
    --------
    >>> items = pd.DataFrame({"model": "a", "task": "x", "method": np.repeat(["last", "cayley"], 4), "seed": 0,
    ...                       "item": [0, 1, 2, 3] * 2, "correct": [0, 0, 0, 0, 1, 1, 1, 0]})
    >>> gain_by_model(items)[["model", "cells", "largest gain", "reference accuracy"]].values.tolist()
    [['a', 1, 75.0, 0.0]]
    """
    (items,), _ = size_scope("ilse.gain", base_params, items, params=params_range, kinds=kinds,
                             model_kinds=model_kinds)
    cells, mats = gain_cells(items, method, reference)
    if not cells:
        return pd.DataFrame(columns=GAIN_MODEL_COLUMNS)
    acc = {(r.model, r.task): r.accuracy for r in gain_headroom(items, reference=reference).itertuples()}
    gains = pd.DataFrame({"model": [m for m, _ in cells], "task": [t for _, t in cells],
                          "gain": [float(x.mean()) * POINTS for x in mats]})
    rows = []
    for model, g in gains.groupby("model", sort=False):
        top = g.loc[g["gain"].idxmax()]
        rows.append({"model": model, "cells": len(g), "largest gain": float(top["gain"]), "task": top["task"],
                     "reference accuracy": float(acc[model, top["task"]])})
    return pd.DataFrame(rows, columns=GAIN_MODEL_COLUMNS)


def paper_largest_gains(method: str = "cayley", reference: str = "last",
                        table: dict[str, dict[str, dict[str, float]]] = ILSE_TABLE_ROWS) -> pd.DataFrame:
    """Per model of the paper's Table 1 (:data:`lrd.verdicts.claims.ILSE_TABLE_ROWS`, as our digest
    gives it), its largest gain of ``method`` over ``reference`` in points: what "up to 40
    points" rests on. Computed from the quoted table, never typed.

    Examples
    --------
    >>> t = {"M": {"cayley": {"a": 80.0, "b": 60.0}, "last": {"a": 35.0, "b": 50.0}}}
    >>> paper_largest_gains(table=t).values.tolist()
    [['M', 2, 45.0, 'a', 0.35]]
    """
    rows = []
    for model, methods in table.items():
        if method not in methods or reference not in methods:
            continue
        gains = {t: methods[method][t] - methods[reference][t] for t in methods[method]}
        task = max(gains, key=gains.get)
        rows.append({"model": model, "cells": len(gains), "largest gain": gains[task], "task": task,
                     "reference accuracy": methods[reference][task] / POINTS})
    return pd.DataFrame(rows, columns=GAIN_MODEL_COLUMNS)


def gain_result(items: pd.DataFrame, *, method: str = "cayley", reference: str = "last",
                paper_pp: float = ILSE_MAX_GAIN_PP, n_boot: int = 2000, seed: int = 0,
                base_params: Mapping[str, float] | None = None,
                params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS) -> Result:
    """The numbers of :func:`judge_gain` (same parameters): ``case`` ``"described"`` (``effect``
    the panel's largest cell gain in points, ``ci`` its simultaneous interval) or ``"no cells"``;
    either way no p-value (not testable). ``facts``: the paper's largest gains per model
    (``paper_rows``: model, cells, largest gain, task), its cells at ``paper_pp`` or more, and the
    panel's largest cell, cell count, seeds and replicates."""
    claim = "ilse.gain"
    (items,), left_out = size_scope(claim, base_params, items, params=params_range, kinds=kinds,
                                    model_kinds=model_kinds)
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 19:
        raise ValueError(f"n_boot must be an integer >= 19, got {n_boot!r}")
    paper = paper_largest_gains(method, reference)
    facts = {"paper_pp": paper_pp, "method_label": method_label(method), "reference_label": method_label(reference),
             "left_out": left_out, "n_boot": n_boot,
             "paper_rows": [(r.model, r.cells, r._3, r.task) for r in paper.itertuples()],
             "paper_top": None,
             "n_paper_cells": int((paper_cell_differences(method, reference) * POINTS >= paper_pp).sum()),
             "paper_cells": int(paper["cells"].sum())}
    if len(paper):
        top_paper = paper.loc[paper["largest gain"].idxmax()]
        facts["paper_top"] = (top_paper["model"], top_paper["task"], top_paper["largest gain"])
    cells, mats = gain_cells(items, method, reference)
    if not cells:
        return Result(claim, "test", "no cells", facts=facts)
    g, boot, s = gain_bootstrap(cells, mats, n_boot, seed)
    top = int(np.argmax(g))
    low = float(g[top] - np.quantile((boot - g).max(1), 0.975))
    high = float((g + np.quantile(g - boot, 0.975, axis=0)).max())
    model, task = cells[top]
    largest = float(g[top])
    return Result(claim, "test", "described", effect=largest, ci=(min(low, largest), max(high, largest)),
                  facts=dict(facts, model=model, task=task, n_cells=len(cells), n_seeds=s))


def judge_gain(items: pd.DataFrame, *, method: str = "cayley", reference: str = "last",
               paper_pp: float = ILSE_MAX_GAIN_PP, n_boot: int = 2000, seed: int = 0,
               base_params: Mapping[str, float] | None = None,
               params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
               model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS) -> Verdict:
    r"""ilse.gain: "improvements of up to 40 percentage points in accuracy" (abstract v3): not testable.

    "Up to 40" is the largest gain over the paper's own results (13 tasks x 9 LLMs): a maximum
    over its cells, not a property of a model or a task that another panel could reproduce or
    contradict (a panel whose largest gain is 13 points is consistent with it, and one with 60
    points does not confirm it). The verdict is therefore always "not testable", with two
    descriptions beside it:

    * what the claim rests on: the paper's Table 1 as our digest gives it (3 models x 5
      classification tasks), its largest gain of ``method`` over ``reference`` per model
      (:func:`paper_largest_gains`, computed from :data:`lrd.verdicts.claims.ILSE_TABLE_ROWS`);
    * the panel's own gains: the largest cell gain :math:`\hat g_{\max} = \max_c \hat g_c` over
      the classification cells of the models the claim counts (mean over seeds and test items,
      in points; biased upward by selection), with a 95% simultaneous interval from a pigeonhole
      bootstrap over test items and seeds (``n_boot`` replicates, ``seed``): the lower bound
      :math:`\hat g_{\max} - q_{0.975}(\max_c(\hat g^*_c - \hat g_c))`, the upper the largest
      per-cell 97.5% bound.

    Parameters
    ----------
    items : DataFrame
        Columns ``model, task, method, seed, item, correct`` (0/1), as
        :func:`lrd.aggregation.scores.item_outcomes` returns them.
    paper_pp : float
        The paper's number, in points (:data:`lrd.verdicts.claims.ILSE_MAX_GAIN_PP`).
    base_params, params_range, model_kinds, kinds
        The models the claim counts, as in :func:`judge_fc`.

    References
    ----------
    Ulanovski et al., abstract (v3): "improvements of up to 40 percentage points in accuracy"; Table 1.
    """
    return words.gain(gain_result(items, method=method, reference=reference, paper_pp=paper_pp, n_boot=n_boot,
                                  seed=seed, base_params=base_params, params_range=params_range,
                                  model_kinds=model_kinds, kinds=kinds))
