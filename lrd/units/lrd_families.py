"""The ``lrd_families`` chapter's units: Frenet, NRS and GFMI of each model on each task
(Jiang, Yang, Tam 2026); and the chapter's tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task, task_type
from lrd.tables import RESULT_COLUMNS
from lrd.units.base import Unit
from lrd.units.records import require, require_columns


@dataclass(frozen=True, eq=False)
class FamilyProfile:
    """One model on one task (:func:`lrd_families_profile`).

    Attributes
    ----------
    kind : {"encoder", "decoder"}
    rows : DataFrame
        The per-layer LRD profile (:data:`lrd.tables.RESULT_COLUMNS`).
    scores : dict
        The model-level scores: ``model, kind, task, N``, the LRD scores, the final layer's own
        statistics (``final mean cosine``, ``final kNN cosine``, ``final cluster share``:
        :mod:`lrd.metrics.final_layer`) and the task's ``task type``.
    group_scores : list of dict
        The same LRD scores on each of ``groups`` disjoint random groups of the texts (``model,
        kind, task, group, N``, the scores): replicates of the task's scores over texts, the
        unit of the per-model test of task dependence. Empty when the groups would be too small.
    group_rows : DataFrame, optional
        The per-layer profile of each group (:data:`lrd.tables.RESULT_COLUMNS` and ``group``):
        how much the curves move with the texts, which the complementarity verdict corrects for.
    """

    kind: str
    rows: pd.DataFrame
    scores: dict
    group_scores: Sequence[dict] = ()
    group_rows: pd.DataFrame | None = None

    def __post_init__(self):
        require(self.kind in ("encoder", "decoder"), self, f"kind must be 'encoder' or 'decoder', got {self.kind!r}")
        require_columns(self.rows, RESULT_COLUMNS, self, "rows")
        missing = [k for k in ("model", "kind", "task", "N") if k not in self.scores]
        require(not missing, self, f"scores lacks {missing}")
        require(all({"model", "task", "group", "N"} <= set(g) for g in self.group_scores), self,
                "group_scores must be dicts with model, task, group and N")


def text_groups(n_texts: int, groups: int, *, seed: int = 0) -> list[np.ndarray]:
    """``groups`` disjoint random groups of ``floor(n_texts / groups)`` text indices each (a seeded
    permutation cut in equal parts; the remainder left out), sorted within each group.

    >>> [g.tolist() for g in text_groups(7, 2)]
    [[2, 3, 4], [0, 5, 6]]
    """
    size = n_texts // groups if groups > 0 else 0
    order = np.random.default_rng(seed).permutation(n_texts)
    return [np.sort(order[i * size:(i + 1) * size]) for i in range(groups)] if size else []


def lrd_families_profile(model: LoadedModel, *, task: str, n_samples: int, pooling: str, k: int,
                         variance: float, groups: int = 0) -> FamilyProfile:
    """Frenet, NRS and GFMI of one model on one task: the per-layer rows and the model-level
    scores; with ``groups``, the model-level scores on each of that many disjoint groups of the
    texts too (:func:`text_groups`), where each group holds more than ``k + 1`` texts."""
    from lrd.engine.extract import extract_shared
    from lrd.metrics import lrd_profile, mean_cosine_similarity, model_scores, profile_rows
    from lrd.metrics.final_layer import final_layer_statistics

    data = load_task(task, n=n_samples)
    # the final-norm variant from the same pass: the mid-layer chapter scores these texts with it
    states = extract_shared(model, data.texts[:n_samples], pooling=pooling)
    profile = lrd_profile(states, k=k, variance=variance)
    base = {"model": model.name, "kind": model.kind, "task": task}
    parts = [g for g in text_groups(states.shape[1], groups) if len(g) > k + 1]
    profiles = [lrd_profile(states[:, g], k=k, variance=variance) for g in parts]
    group_scores = [{**base, "group": i, "N": len(g), **model_scores(p)} for i, (g, p) in enumerate(zip(parts, profiles))]
    group_rows = (pd.concat([profile_rows(p, model=model.name, task=task).assign(group=i)
                             for i, p in enumerate(profiles)], ignore_index=True) if profiles else None)
    return FamilyProfile(model.kind, profile_rows(profile, model=model.name, task=task),
                         {**base, "N": states.shape[1], **model_scores(profile),
                          "final mean cosine": mean_cosine_similarity(states)[-1],
                          **final_layer_statistics(states, k=k), "task type": task_type(task)},
                         group_scores, group_rows)


def lrd_families_units(*, models: Sequence[str], tasks: Sequence[str], n_samples: int, pooling: str = "mean",
                       k: int = 10, variance: float = 0.95, device: str = "cpu", dtype: str = "bfloat16",
                       task_groups: int = 4) -> list[Unit]:
    """One unit per (model, task), models outermost (:func:`lrd_families_profile`; ``task_groups``
    disjoint groups of each task's texts scored apart, the chapter's parameter of that name)."""
    return [Unit("lrd_families", lrd_families_profile, m,
                 dict(task=t, n_samples=n_samples, pooling=pooling, k=k, variance=variance, groups=task_groups),
                 tasks=((t, n_samples),), device=device, dtype=dtype) for m in models for t in tasks]


@dataclass(frozen=True, eq=False)
class FamilyTables:
    """The chapter's tables: ``results`` (every per-layer profile, tidy), ``scores`` (one row
    per model and task), ``group_scores`` (one row per model, task and text group) and
    ``group_results`` (the groups' per-layer profiles, with ``group``)."""

    results: pd.DataFrame
    scores: pd.DataFrame
    group_scores: pd.DataFrame
    group_results: pd.DataFrame


def family_tables(profiles: Sequence[FamilyProfile]) -> FamilyTables:
    """Gather the units' profiles (in unit order) into the chapter's tables."""
    return FamilyTables(results=pd.concat([p.rows for p in profiles], ignore_index=True),
                        scores=pd.DataFrame([p.scores for p in profiles]),
                        group_scores=pd.DataFrame([g for p in profiles for g in p.group_scores]),
                        group_results=(pd.concat(rows, ignore_index=True)
                                       if (rows := [p.group_rows for p in profiles if p.group_rows is not None])
                                       else pd.DataFrame(columns=[*RESULT_COLUMNS, "group"])))
