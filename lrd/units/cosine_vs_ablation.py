"""The ``cosine_vs_ablation`` chapter's units (Hinostroza et al. 2026): each decoder's removal
sweeps (relevance, per-item correctness, measured chance, the pruning plan) and each
encoder's cosine relevance and embedding score with each block removed; and the chapter's
tables (no model runs there: the units measured everything; the tables gather their records
into what the chapter shows and :mod:`lrd.verdicts.agreement` judges)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task
from lrd.tables import RESULT_COLUMNS, per_layer
from lrd.units.base import Unit
from lrd.units.common import mc_split
from lrd.units.records import require, require_frames


@dataclass(frozen=True, eq=False)
class DecoderSweeps:
    """One decoder's removal sweeps on every task (:func:`ablation_decoder`).

    Attributes
    ----------
    rows : list of DataFrame
        Relevance rows per task (:data:`lrd.tables.RESULT_COLUMNS`).
    correct : dict task -> ndarray of shape (L + 1, n_items)
        0/1 correctness, row 0 intact, row ``l`` without block ``l``.
    acc_norm : dict task -> float
        Intact length-normalised accuracy.
    chance : dict task -> ndarray
        The intact run's accuracy under permutations of the gold choice within items.
    plan : DataFrame or None
        The calibration plan with each task's pruned accuracies (pruned models only).
    work : dict
        ``block forwards``, ``token passes``, ``seconds``.
    plan_correct : dict task -> ndarray of shape (len(plan), n_items)
        0/1 correctness of each plan row's pruned model on the task's test items (pruned models
        only; empty otherwise): the per-model evidence of ``cosine.pruning``.
    """

    rows: list
    correct: dict
    acc_norm: dict
    chance: dict
    plan: pd.DataFrame | None
    work: dict
    plan_correct: dict = field(default_factory=dict)

    def __post_init__(self):
        require_frames(self.rows, RESULT_COLUMNS, self, "rows")
        require(set(self.correct) == set(self.acc_norm) == set(self.chance), self,
                "correct, acc_norm and chance must hold the same tasks")
        require(all(np.ndim(c) == 2 for c in self.correct.values()), self,
                "correct[task] must be a (L + 1, n_items) array")
        require(all(isinstance(v, numbers.Real) for v in self.acc_norm.values()), self, "acc_norm values must be numbers")
        require(self.plan is None or isinstance(self.plan, pd.DataFrame), self, "plan must be a DataFrame or None")
        require(set(self.work) == {"block forwards", "token passes", "seconds"}, self,
                f"work must hold block forwards, token passes and seconds, got {sorted(self.work)}")
        require(not self.plan_correct or (self.plan is not None and set(self.plan_correct) == set(self.correct)), self,
                "plan_correct needs a plan and must hold every task")
        require(all(np.shape(c) == (len(self.plan), np.shape(self.correct[t])[1])
                    for t, c in self.plan_correct.items()), self,
                "plan_correct[task] must be a (len(plan), n_items) array")


@dataclass(frozen=True, eq=False)
class EncoderRemoval:
    """One encoder's cosine relevance of blocks 1..L and its embedding score intact, then with
    each block removed (:func:`ablation_encoder`)."""

    cos: np.ndarray
    score: np.ndarray

    def __post_init__(self):
        require(np.ndim(self.cos) == 1 and np.ndim(self.score) == 1 and len(self.score) == len(self.cos) + 1, self,
                f"cos must hold L values and score L + 1, got {np.shape(self.cos)} and {np.shape(self.score)}")


def ablation_decoder(model: LoadedModel, *, tasks: Sequence[str], n_items: int, n_calibration: int,
                     pruning: bool, pruning_ks: Sequence[int], n_random: int, batch_size: int,
                     n_chance: int = 1000) -> DecoderSweeps:
    """One decoder's removal sweeps on every task: relevance rows, per-item correctness of the
    intact and single-removal runs, intact acc_norm, measured chance (``chance[task]``: the
    intact run's accuracy under ``n_chance`` permutations of the gold choice within items,
    :func:`lrd.engine.scoring.permuted_gold_accuracy`) and, for the pruning model (``pruning``), the
    calibration plan with each task's pruned accuracies; plus the work done (``block forwards``,
    ``token passes``, ``seconds``)."""
    from lrd.methods.relevance import calibration_plan, pruning_correct, relevance_rows, removal_sweep
    from lrd.engine.scoring import build_requests, mc_accuracy, permuted_gold_accuracy

    name = model.name
    work = {"block forwards": 0.0, "token passes": 0.0, "seconds": 0.0}

    def tally(sweep, requests):
        work["block forwards"] += sweep.block_forwards
        work["token passes"] += sweep.block_forwards * requests.n_tokens
        work["seconds"] += sweep.seconds

    rows, correct, acc_norm, chance, plan, plan_correct = [], {}, {}, {}, None, {}
    for task in tasks:
        split = mc_split(task, "test", n_items)
        req = build_requests(model, split)
        sets = [[l] for l in range(1, model.n_layers + 1)]
        if pruning:  # rank blocks on the calibration split first (once)
            if plan is None:
                calib = {t: build_requests(model, mc_split(t, "train", n_calibration)) for t in tasks}
                plan, cal_sweeps = calibration_plan(model, calib, list(pruning_ks), n_random=n_random,
                                                    batch_size=batch_size)
                for sw, r in zip(cal_sweeps, calib.values()):
                    tally(sw, r)
            sets = sets + [list(s) for s in plan["removed"]]
        sweep = removal_sweep(model, req, sets, batch_size=batch_size)
        tally(sweep, req)
        r, c = relevance_rows(sweep, req, model=name, task=task)
        rows.append(r)
        correct[task] = c
        acc_norm[task] = mc_accuracy(sweep.lls[:1], req)["acc_norm"].mean()
        chance[task] = permuted_gold_accuracy(sweep.lls[0], req, n_permutations=n_chance, seed=0)
        if pruning:
            item_correct = pruning_correct(sweep, req, plan)
            plan[task] = item_correct.mean(1)
            plan_correct[task] = item_correct.astype(np.int8)
    return DecoderSweeps(rows, correct, acc_norm, chance, plan, work, plan_correct)


def ablation_encoder(model: LoadedModel, *, task: str, n_encoder: int, encoder_scorer: str,
                     batch_size: int) -> EncoderRemoval:
    """One encoder's cosine relevance and embedding score (intact, then each block removed)."""
    from lrd.methods.relevance import ENCODER_SCORERS, encoder_removal_states

    data = load_task(task, n=n_encoder)
    pooled, cos = encoder_removal_states(model, data.texts, batch_size=batch_size)
    return EncoderRemoval(np.asarray(cos), np.array([ENCODER_SCORERS[encoder_scorer](p, data) for p in pooled]))


def cosine_vs_ablation_units(*, models: Sequence[str], tasks: Sequence[str], n_items: int, n_calibration: int,
                             pruning_models: Sequence[str], pruning_ks: Sequence[int], n_random: int,
                             encoders: Sequence[str], encoder_task: str, n_encoder: int, encoder_scorer: str,
                             batch_size: int = 32, device: str = "cpu", dtype: str = "bfloat16",
                             n_chance: int = 1000) -> dict[str, list[Unit]]:
    """``"decoders"``: one unit per decoder (:func:`ablation_decoder`; those of ``pruning_models``
    are also pruned); ``"encoders"``: one per encoder (:func:`ablation_encoder`)."""
    outside = [m for m in pruning_models if m not in models]
    if outside:
        raise ValueError(f"pruning_models {outside} are not among the decoders {list(models)}; add them to `models` "
                         f"or drop them from `pruning_models`")
    read = tuple((t, None) for t in tasks)
    decoders = [Unit("cosine_vs_ablation", ablation_decoder, m,
                     dict(tasks=list(tasks), n_items=n_items, n_calibration=n_calibration, pruning=m in pruning_models,
                          pruning_ks=list(pruning_ks), n_random=n_random, batch_size=batch_size, n_chance=n_chance),
                     tasks=read, device=device, dtype=dtype) for m in models]
    encs = [Unit("cosine_vs_ablation", ablation_encoder, m,
                 dict(task=encoder_task, n_encoder=n_encoder, encoder_scorer=encoder_scorer, batch_size=batch_size),
                 tasks=((encoder_task, n_encoder),), device=device, dtype=dtype) for m in encoders]
    return {"decoders": decoders, "encoders": encs}


# --------------------------------------------------------------------------------------------
# The chapter's tables


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
    plan_correct : dict (model, task) -> ndarray of shape (len(plan), n_items)
        0/1 correctness of each plan row on the task's test items (pruned models).
    work : dict
        ``block forwards``, ``token passes``, ``seconds`` summed over decoders.
    """

    relevance: pd.DataFrame
    correct: dict = field(default_factory=dict)
    chance_null: dict = field(default_factory=dict)
    acc_norm: dict = field(default_factory=dict)
    plans: dict = field(default_factory=dict)
    plan_correct: dict = field(default_factory=dict)
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


def collect_decoders(models: Sequence[str], results: Sequence[DecoderSweeps]) -> DecoderRuns:
    """Gather the records of :func:`ablation_decoder`, one per model, in order."""
    if len(models) != len(results):
        raise ValueError(f"one result per model: {len(models)} models, {len(results)} results")
    rows, runs = [], DecoderRuns(pd.DataFrame(), work={"block forwards": 0.0, "token passes": 0.0, "seconds": 0.0})
    for name, done in zip(models, results):
        rows += done.rows
        for task, c in done.correct.items():
            runs.correct[name, task] = c
            runs.chance_null[name, task] = np.asarray(done.chance[task], dtype=float)
            runs.acc_norm[name, task] = float(done.acc_norm[task])
        if done.plan is not None:
            runs.plans[name] = done.plan
        for task, c in done.plan_correct.items():
            runs.plan_correct[name, task] = c
        runs.work = {k: v + done.work[k] for k, v in runs.work.items()}
    runs.relevance = pd.concat(rows, ignore_index=True)
    return runs


def pruning_curves_table(runs: DecoderRuns, tasks: Sequence[str]) -> pd.DataFrame:
    """Pruning curves of every pruned model: ``model, rule, seed, k, removed, acc`` (mean over
    ``tasks``), with ``k = 0`` rows at the intact accuracy (:func:`lrd.methods.relevance.pruning_table`)."""
    from lrd.methods.relevance import pruning_table  # torch: imported when a table is made, not to declare units

    cols = ["model", "rule", "seed", "k", "removed", "acc"]
    frames = [pruning_table(plan, float(np.mean([runs.correct[model, t][0].mean() for t in tasks])), tasks)
              .assign(model=model)[cols] for model, plan in runs.plans.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


#: Columns of :func:`pruning_items_table`.
PRUNING_ITEM_COLUMNS = ["model", "task", "rule", "seed", "k", "item", "correct"]


def pruning_items_table(runs: DecoderRuns) -> pd.DataFrame:
    """Every pruned model's per-item correctness on every task, for each plan row:
    :data:`PRUNING_ITEM_COLUMNS` (``k`` blocks removed by ``rule``, ``seed`` of a random order)."""
    frames = []
    for (model, task), correct in runs.plan_correct.items():
        plan = runs.plans[model]
        n_rows, n_items = correct.shape
        frames.append(pd.DataFrame({"model": model, "task": task,
                                    "rule": np.repeat(plan["rule"].to_numpy(object), n_items),
                                    "seed": np.repeat(plan["seed"].to_numpy(), n_items),
                                    "k": np.repeat(plan["k"].to_numpy(), n_items),
                                    "item": np.tile(np.arange(n_items), n_rows), "correct": correct.ravel()}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PRUNING_ITEM_COLUMNS)


def encoder_tables(encoders: Sequence[str], results: Sequence[EncoderRemoval], task: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Encoders' relevance rows (cosine relevance and the embedding score's drop per removed
    block) and one summary row per encoder (intact score, Spearman correlation of the two)."""
    rows, summary = [], []
    for name, done in zip(encoders, results):
        cos, score = done.cos, done.score
        layers = np.arange(1, len(cos) + 1)
        drop = score[0] - score[1:]
        rows += [per_layer(cos, model=name, task=task, measurement="cosine relevance", layers=layers),
                 per_layer(drop, model=name, task=task, measurement="accuracy relevance", layers=layers)]
        summary.append({"model": name, "score (intact)": float(score[0]),
                        "spearman": float(pd.Series(drop).corr(pd.Series(cos), method="spearman"))})
    if not rows:
        return pd.DataFrame(columns=RESULT_COLUMNS), pd.DataFrame(columns=["model", "score (intact)", "spearman"])
    return pd.concat(rows, ignore_index=True), pd.DataFrame(summary)
