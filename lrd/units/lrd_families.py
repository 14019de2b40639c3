"""The ``lrd_families`` chapter's units: Frenet, NRS and GFMI of each model on each task
(Jiang, Yang, Tam 2026); and the chapter's tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task
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
        The model-level scores: ``model, kind, task, N``, the LRD scores and ``final mean cosine``.
    """

    kind: str
    rows: pd.DataFrame
    scores: dict

    def __post_init__(self):
        require(self.kind in ("encoder", "decoder"), self, f"kind must be 'encoder' or 'decoder', got {self.kind!r}")
        require_columns(self.rows, RESULT_COLUMNS, self, "rows")
        missing = [k for k in ("model", "kind", "task", "N") if k not in self.scores]
        require(not missing, self, f"scores lacks {missing}")


def lrd_families_profile(model: LoadedModel, *, task: str, n_samples: int, pooling: str, k: int,
                         variance: float) -> FamilyProfile:
    """Frenet, NRS and GFMI of one model on one task: the per-layer rows and the model-level scores."""
    from lrd.engine.extract import extract_shared
    from lrd.metrics import lrd_profile, mean_cosine_similarity, model_scores, profile_rows

    data = load_task(task, n=n_samples)
    # the final-norm variant from the same pass: the mid-layer chapter scores these texts with it
    states = extract_shared(model, data.texts[:n_samples], pooling=pooling)
    profile = lrd_profile(states, k=k, variance=variance)
    return FamilyProfile(model.kind, profile_rows(profile, model=model.name, task=task),
                         {"model": model.name, "kind": model.kind, "task": task, "N": states.shape[1],
                          **model_scores(profile), "final mean cosine": mean_cosine_similarity(states)[-1]})


def lrd_families_units(models: Sequence[str], tasks: Sequence[str], n_samples: int, pooling: str = "mean",
                       k: int = 10, variance: float = 0.95, device: str = "cpu", dtype: str = "float32") -> list[Unit]:
    """One unit per (model, task), models outermost (:func:`lrd_families_profile`)."""
    return [Unit("lrd_families", lrd_families_profile, m,
                 dict(task=t, n_samples=n_samples, pooling=pooling, k=k, variance=variance),
                 tasks=((t, n_samples),), device=device, dtype=dtype) for m in models for t in tasks]


@dataclass(frozen=True, eq=False)
class FamilyTables:
    """The chapter's tables: ``results`` (every per-layer profile, tidy) and ``scores`` (one
    row per model and task)."""

    results: pd.DataFrame
    scores: pd.DataFrame


def family_tables(profiles: Sequence[FamilyProfile]) -> FamilyTables:
    """Gather the units' profiles (in unit order) into the chapter's tables."""
    return FamilyTables(results=pd.concat([p.rows for p in profiles], ignore_index=True),
                        scores=pd.DataFrame([p.scores for p in profiles]))
