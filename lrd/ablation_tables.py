"""The ``cosine_vs_ablation`` chapter's tables, assembled from its units' results.

No model runs here: :func:`lrd.units.ablation_decoder` and :func:`lrd.units.ablation_encoder`
measured everything; these functions gather their outputs into the tidy tables and per-pair
arrays that the chapter shows and that :mod:`lrd.verdicts.agreement` judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.methods.relevance import pruning_table
from lrd.tables import RESULT_COLUMNS, per_layer

__all__ = ["DecoderRuns", "collect_decoders", "pruning_curves_table", "encoder_tables"]


@dataclass
class DecoderRuns:
    """Every decoder's removal sweeps, by ``(model, task)``.

    Attributes
    ----------
    relevance : DataFrame
        Tidy rows ``model, task, measurement, layer, depth, value`` (cosine and accuracy relevance).
    correct : dict (model, task) -> ndarray of shape (L + 1, n_items)
        0/1 correctness, row 0 intact, row ``l`` without block ``l``.
    chance_null : dict (model, task) -> ndarray of shape (n_permutations,)
        Intact accuracy under permutations of the gold choice (measured chance).
    acc_norm : dict (model, task) -> float
        Intact length-normalised accuracy.
    plans : dict model -> DataFrame
        Pruning plans (``rule, seed, k, removed`` and one accuracy column per task) of the pruned models.
    work : dict
        ``block forwards``, ``token passes``, ``seconds`` summed over decoders.
    """

    relevance: pd.DataFrame
    correct: dict = field(default_factory=dict)
    chance_null: dict = field(default_factory=dict)
    acc_norm: dict = field(default_factory=dict)
    plans: dict = field(default_factory=dict)
    work: dict = field(default_factory=dict)

    @property
    def accuracy(self) -> dict:
        """Intact accuracy by (model, task)."""
        return {k: float(c[0].mean()) for k, c in self.correct.items()}

    @property
    def cosine(self) -> dict:
        """Cosine relevance of blocks 1..L by (model, task)."""
        rows = self.relevance[self.relevance["measurement"] == "cosine relevance"]
        return {(m, t): part.sort_values("layer")["value"].to_numpy()
                for (m, t), part in rows.groupby(["model", "task"], sort=False)}


def collect_decoders(models: Sequence[str], results: Sequence[dict]) -> DecoderRuns:
    """Gather the results of :func:`lrd.units.ablation_decoder`, one per model, in order."""
    if len(models) != len(results):
        raise ValueError(f"one result per model: {len(models)} models, {len(results)} results")
    rows, runs = [], DecoderRuns(pd.DataFrame(), work={"block forwards": 0.0, "token passes": 0.0, "seconds": 0.0})
    for name, done in zip(models, results):
        rows += done["rows"]
        for task, c in done["correct"].items():
            runs.correct[name, task] = c
            runs.chance_null[name, task] = np.asarray(done["chance"][task], dtype=float)
            runs.acc_norm[name, task] = float(done["acc_norm"][task])
        if done["plan"] is not None:
            runs.plans[name] = done["plan"]
        runs.work = {k: v + done["work"][k] for k, v in runs.work.items()}
    runs.relevance = pd.concat(rows, ignore_index=True)
    return runs


def pruning_curves_table(runs: DecoderRuns, tasks: Sequence[str]) -> pd.DataFrame:
    """Pruning curves of every pruned model: ``model, rule, seed, k, removed, acc`` (mean over
    ``tasks``), with ``k = 0`` rows at the intact accuracy (:func:`lrd.methods.relevance.pruning_table`)."""
    cols = ["model", "rule", "seed", "k", "removed", "acc"]
    frames = [pruning_table(plan, float(np.mean([runs.correct[model, t][0].mean() for t in tasks])), tasks)
              .assign(model=model)[cols] for model, plan in runs.plans.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def encoder_tables(encoders: Sequence[str], results: Sequence[dict], task: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Encoders' relevance rows (cosine relevance and the embedding score's drop per removed
    block) and one summary row per encoder (intact score, Spearman correlation of the two)."""
    rows, summary = [], []
    for name, done in zip(encoders, results):
        cos, score = np.asarray(done["cos"]), np.asarray(done["score"])
        layers = np.arange(1, len(cos) + 1)
        drop = score[0] - score[1:]
        rows += [per_layer(cos, model=name, task=task, measurement="cosine relevance", layers=layers),
                 per_layer(drop, model=name, task=task, measurement="accuracy relevance", layers=layers)]
        summary.append({"model": name, "score (intact)": float(score[0]),
                        "spearman": float(pd.Series(drop).corr(pd.Series(cos), method="spearman"))})
    if not rows:
        return pd.DataFrame(columns=RESULT_COLUMNS), pd.DataFrame(columns=["model", "score (intact)", "spearman"])
    return pd.concat(rows, ignore_index=True), pd.DataFrame(summary)
