"""The ``models_and_tasks`` chapter's units: each model of the panel loaded once, its summary
row, load time and per-layer mean cosine on the probe task; and the chapter's tables."""

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
class PanelProbe:
    """One model of the panel (:func:`models_and_tasks_probe`).

    Attributes
    ----------
    summary : dict
        The panel row (:meth:`lrd.engine.models.LoadedModel.summary`), with ``"model"``.
    load_seconds : float
        Wall time of loading the model (volatile).
    curve : DataFrame
        Per-layer mean cosine on the probe task (:data:`lrd.tables.RESULT_COLUMNS`).
    """

    summary: dict
    load_seconds: float
    curve: pd.DataFrame

    def __post_init__(self):
        require(isinstance(self.summary, dict) and "model" in self.summary, self,
                f"summary must be a dict with a 'model' entry, got {self.summary!r}")
        require(self.load_seconds >= 0, self, f"load_seconds must be at least 0, got {self.load_seconds}")
        require_columns(self.curve, RESULT_COLUMNS, self, "curve")


def models_and_tasks_probe(model: LoadedModel, *, task: str, n_samples: int | None, pooling: str) -> PanelProbe:
    """The panel row of a model, its load time, and its per-layer mean cosine on ``task``."""
    from lrd.engine.extract import extract_shared
    from lrd.metrics.cosine import mean_cosine_similarity
    from lrd.tables import per_layer

    # the final-norm variant from the same pass: the mid-layer chapter scores these texts with it
    states = extract_shared(model, load_task(task, n=n_samples).texts, pooling=pooling)
    return PanelProbe(model.summary(), model.load_seconds,
                      per_layer(mean_cosine_similarity(states), model=model.name, task=task, measurement="mean cosine"))


def models_and_tasks_units(*, models: Sequence[str], task: str, n_samples: int | None, pooling: str = "mean",
                           device: str = "cpu", dtype: str = "bfloat16") -> list[Unit]:
    """One unit per model (:func:`models_and_tasks_probe`)."""
    return [Unit("models_and_tasks", models_and_tasks_probe, m, dict(task=task, n_samples=n_samples, pooling=pooling),
                 tasks=((task, n_samples),), device=device, dtype=dtype) for m in models]


@dataclass(frozen=True, eq=False)
class PanelTables:
    """The chapter's tables: ``panel`` (one row per model, indexed by model), ``timings``
    (load time per model, s, one decimal) and ``results`` (the per-layer curves, tidy)."""

    panel: pd.DataFrame
    timings: pd.DataFrame
    results: pd.DataFrame


def panel_tables(models: Sequence[str], probes: Sequence[PanelProbe]) -> PanelTables:
    """Gather the probes of ``models`` (in order) into the chapter's tables."""
    require(len(models) == len(probes), probes, f"one probe per model: {len(models)} models, {len(probes)} probes")
    return PanelTables(
        panel=pd.DataFrame([p.summary for p in probes]).set_index("model"),
        timings=pd.DataFrame([{"model": m, "load time (s)": round(p.load_seconds, 1)} for m, p in zip(models, probes)]),
        results=pd.concat([p.curve for p in probes], ignore_index=True))
