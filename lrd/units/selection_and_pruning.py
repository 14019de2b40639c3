"""The ``selection_and_pruning`` chapter's units (Jiang, Yang, Tam 2026): each model's
label-free scores, downstream scores and, for the pruned models, every prune rule's plan and
score changes; and the chapter's tables."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task
from lrd.units.base import Unit
from lrd.units.common import mc_split
from lrd.units.records import require, require_frames

#: Columns of a plan's score changes (:func:`lrd.methods.pruning.plan_changes`).
CHANGE_COLUMNS = ["model", "kind", "task", "rule", "seed", "fraction", "k", "removed", "score", "intact", "change"]
#: Columns of a pruned decoder's per-item outcomes (:attr:`SelectionModel.item_changes`).
ITEM_CHANGE_COLUMNS = ["model", "task", "rule", "seed", "fraction", "item", "correct", "intact"]


@dataclass(frozen=True, eq=False)
class SelectionModel:
    """One model of the chapter (:func:`selection_model`).

    Attributes
    ----------
    kind : {"encoder", "decoder"}
    source : str
        Where the weights come from.
    n_blocks : int
    score_rows : list of dict
        Model-level scores per embedding task (LRD scores, mean dataset entropy, last-layer score).
    dime : float
        Mean DiME on the augmentation task.
    plan : DataFrame or None
        Every prune rule's removal sets per budget (pruned models).
    changes : list of DataFrame
        Score changes per task of the plan (:data:`CHANGE_COLUMNS`; pruned models).
    mc_intact : float or None
        Decoders: mean intact multiple-choice accuracy.
    mc_items : dict or None
        Decoders: ``{task: {"pred": [...], "gold": [...]}}`` of the intact model.
    item_changes : DataFrame or None
        Pruned decoders: every plan row's correctness on every multiple-choice test item, beside
        the intact model's (:data:`ITEM_CHANGE_COLUMNS`): the items are the unit of the per-model
        evidence of the prune rules.
    seconds : dict
        Wall times (volatile).
    """

    kind: str
    source: str
    n_blocks: int
    score_rows: list
    dime: float
    plan: pd.DataFrame | None
    changes: list
    mc_intact: float | None
    mc_items: dict | None
    seconds: dict
    item_changes: pd.DataFrame | None = None

    def __post_init__(self):
        require(self.kind in ("encoder", "decoder"), self, f"kind must be 'encoder' or 'decoder', got {self.kind!r}")
        require(all(isinstance(r, dict) and {"model", "task"} <= set(r) for r in self.score_rows), self,
                "score_rows must be dicts with model and task")
        require_frames(self.changes, CHANGE_COLUMNS, self, "changes")
        require(self.plan is not None or not self.changes, self, "changes without a plan")
        require((self.mc_intact is None) == (self.mc_items is None), self, "mc_intact and mc_items come together")
        require(self.kind == "decoder" or self.mc_intact is None, self, "only decoders have multiple-choice scores")
        if self.item_changes is not None:
            require_frames([self.item_changes], ITEM_CHANGE_COLUMNS, self, "item_changes")


def _mc_choices(lls: np.ndarray, item: np.ndarray) -> np.ndarray:
    """The chosen answer of each item: the argmax of its choices' log-likelihoods (ties to the
    first choice, as :func:`lrd.engine.scoring.mc_accuracy`'s ``acc``); ``item`` gives each request's item."""
    starts = np.flatnonzero(np.r_[True, np.diff(item) != 0])
    return np.array([int(np.argmax(lls[a:b])) for a, b in zip(starts, np.r_[starts[1:], len(item)])])


def _mc_removal_scores(model: LoadedModel, sets, *, mc_tasks, n_items: int,
                       batch_size: int) -> tuple[dict, dict, dict]:
    """Accuracy of every removal set on every multiple-choice task (resumed sweep), the intact
    model's chosen and gold answer per item (``{task: {"pred": [...], "gold": [...]}}``: what a
    label-permutation chance test needs), and every set's per-item correctness (``{task: {set:
    int8 array}}``, the intact model under ``()``)."""
    from lrd.methods.relevance import removal_sweep
    from lrd.engine.scoring import build_requests, mc_accuracy

    out, items, correct = {}, {}, {}
    for t in mc_tasks:
        req = build_requests(model, mc_split(t, "test", n_items))
        sweep = removal_sweep(model, req, sets, batch_size=batch_size)
        acc = mc_accuracy(sweep.lls, req)["acc"]  # (sets, items)
        out[t] = {tuple(s): float(a) for s, a in zip(sweep.sets, acc.mean(1))}
        correct[t] = {tuple(s): a.astype(np.int8) for s, a in zip(sweep.sets, acc)}
        items[t] = {"pred": _mc_choices(sweep.lls[0], req.item).tolist(), "gold": np.asarray(req.labels).tolist()}
    return out, items, correct


def plan_item_changes(plan: pd.DataFrame, correct: dict, *, model: str) -> pd.DataFrame:
    """Every plan row's per-item correctness on every task (:data:`ITEM_CHANGE_COLUMNS`), beside
    the intact model's (``correct[task][()]``)."""
    frames = []
    for task, by_set in correct.items():
        intact = np.asarray(by_set[()])
        n = len(intact)
        for rule, seed, fraction, removed in plan[["rule", "seed", "fraction", "removed"]].itertuples(index=False):
            frames.append(pd.DataFrame({"model": model, "task": task, "rule": rule, "seed": seed, "fraction": fraction,
                                        "item": np.arange(n), "correct": np.asarray(by_set[tuple(removed)]),
                                        "intact": intact}))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ITEM_CHANGE_COLUMNS))


def _encoder_removal_scores(model: LoadedModel, sets, *, task_data: dict, n_bootstrap: int, batch_size: int) -> dict:
    """MTEB main score of every removal set on every embedding task (resumed, one pass per task)."""
    from lrd.methods.evaluate import evaluate_layers
    from lrd.methods.relevance import encoder_removal_states

    out = {}
    for t, data in task_data.items():
        pooled, _ = encoder_removal_states(model, data.texts, sets=sets, batch_size=batch_size)
        scores = evaluate_layers(pooled, data, n_bootstrap=n_bootstrap)
        out[t] = {s: float(v) for s, v in zip([()] + [tuple(x) for x in sets], scores)}
    return out


def _prune_plan(model: LoadedModel, profile_states: np.ndarray, *, k: int, variance: float, budgets, n_random: int,
                mc_tasks, n_calibration: int, encoder_calib, n_bootstrap: int, batch_size: int) -> pd.DataFrame:
    """Every rule's removal sets per budget. Label-free rules read the LRD profile of the
    calibration texts; labelled rules: decoders rank blocks on calibration items of the
    multiple-choice tasks (:func:`lrd.methods.relevance.calibration_plan`), encoders by the MTEB score
    on ``encoder_calib`` with each block removed."""
    from lrd.methods.evaluate import evaluate_layers
    from lrd.metrics import lrd_profile
    from lrd.methods.pruning import angular_distance, budget_blocks, budget_plan, budgets_of, measurement_scores
    from lrd.methods.relevance import calibration_plan, encoder_removal_states
    from lrd.engine.scoring import build_requests

    label_free = measurement_scores(lrd_profile(profile_states, k=k, variance=variance))
    if model.kind == "decoder":
        ks = sorted({budget_blocks(model.n_layers, f) for f in budgets})
        calib = {t: build_requests(model, mc_split(t, "train", n_calibration)) for t in mc_tasks}
        plan_k, _ = calibration_plan(model, calib, ks, n_random=n_random, batch_size=batch_size)
        return pd.concat([budgets_of(plan_k, model.n_layers, budgets),
                          budget_plan(label_free, model.n_layers, budgets, n_random=0)], ignore_index=True)
    pooled, cosine = encoder_removal_states(model, encoder_calib.texts, batch_size=batch_size)
    score = evaluate_layers(pooled, encoder_calib, n_bootstrap=n_bootstrap)
    signals = {"cosine (BI)": cosine, "accuracy (calibration)": score[0] - score[1:], **label_free}
    return budget_plan(signals, model.n_layers, budgets, distance=angular_distance(profile_states), n_random=n_random)


def selection_model(model: LoadedModel, *, tasks: Sequence[str], n_samples: int, pooling: str, k: int,
                    variance: float, n_bootstrap: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    mc_tasks: Sequence[str], n_items: int, n_calibration: int, calibration_task: str,
                    n_encoder_calibration: int, prune: bool, budgets: Sequence[float], n_random: int,
                    batch_size: int) -> SelectionModel:
    """One model of the selection and pruning chapter: model-level scores per embedding task
    (LRD, mean dataset entropy, last-layer MTEB score), DiME, decoders' intact multiple-choice
    accuracy with each item's chosen and gold answer (``mc_items``, for the chance test) and,
    when ``prune``, every prune rule's plan and score changes per task."""
    from threadpoolctl import threadpool_limits

    from lrd.methods.evaluate import evaluate_layers
    from lrd.engine.extract import extract
    from lrd.metrics import dataset_entropy, dime, lrd_profile, model_scores
    from lrd.methods.pruning import plan_changes
    from lrd.methods.suite import view_states

    name, clock = model.name, time.perf_counter()
    task_data = {t: load_task(t, n=n_samples) for t in tasks}
    score_rows = []
    for task, data in task_data.items():
        states = extract(model, data.texts, pooling=pooling)
        profile = lrd_profile(states, k=k, variance=variance)
        with threadpool_limits(1):
            entropy = dataset_entropy(states)
        last = evaluate_layers(states[-1:], data, n_bootstrap=n_bootstrap)[0]
        score_rows.append({"model": name, "kind": model.kind, "task": task, **model_scores(profile),
                           "mean dataset entropy": float(entropy.mean()), "last-layer score": last})
    aug = task_data[aug_task] if aug_task in task_data else load_task(aug_task, n=n_samples)
    views = view_states(model, aug.texts[:n_aug_prompts], n_views=n_views, pooling=pooling)
    with threadpool_limits(1):
        dime_value = float(dime(views[:, :, 0], views[:, :, 1]).mean())
    seconds = {"scores": time.perf_counter() - clock}
    plan, changes, by_task, mc_items, item_changes = None, [], None, None, None
    prune = prune and model.n_layers >= 2
    if prune:
        calib_data = load_task(calibration_task, n=n_samples)
        profile_states = extract(model, calib_data.texts[:n_samples], pooling=pooling)
        plan = _prune_plan(model, profile_states, k=k, variance=variance, budgets=budgets, n_random=n_random,
                           mc_tasks=mc_tasks, n_calibration=n_calibration,
                           encoder_calib=load_task(calibration_task, n=n_encoder_calibration),
                           n_bootstrap=n_bootstrap, batch_size=batch_size)
        seconds["prune orders"] = time.perf_counter() - clock - seconds["scores"]
        sets = sorted({tuple(s) for s in plan["removed"]})
        if model.kind == "decoder":
            by_task, mc_items, correct = _mc_removal_scores(model, sets, mc_tasks=mc_tasks, n_items=n_items,
                                                            batch_size=batch_size)
            item_changes = plan_item_changes(plan, correct, model=name)
        else:
            by_task = _encoder_removal_scores(model, sets, task_data=task_data, n_bootstrap=n_bootstrap,
                                              batch_size=batch_size)
        for task, got in by_task.items():
            changes.append(plan_changes(plan, got, got[()], model=name, kind=model.kind, task=task))
    mc_intact = None
    if model.kind == "decoder":
        if by_task is None:
            by_task, mc_items, _ = _mc_removal_scores(model, [], mc_tasks=mc_tasks, n_items=n_items,
                                                      batch_size=batch_size)
        mc_intact = float(np.mean([got[()] for got in by_task.values()]))
    seconds["total"] = time.perf_counter() - clock
    return SelectionModel(model.kind, model.upstream, model.n_layers, score_rows, dime_value, plan, changes,
                          mc_intact, mc_items, seconds, item_changes)


def selection_and_pruning_units(*, models: Sequence[str], tasks: Sequence[str], n_samples: int, pooling: str, k: int,
                                variance: float, n_bootstrap: int, aug_task: str, n_aug_prompts: int, n_views: int,
                                mc_tasks: Sequence[str], n_items: int, n_calibration: int, calibration_task: str,
                                n_encoder_calibration: int, pruning_models: Sequence[str], budgets: Sequence[float],
                                n_random: int, batch_size: int, device: str = "cpu",
                                dtype: str = "bfloat16") -> list[Unit]:
    """One unit per model (:func:`selection_model`); models of ``pruning_models`` are pruned."""
    params = dict(tasks=list(tasks), n_samples=n_samples, pooling=pooling, k=k, variance=variance,
                  n_bootstrap=n_bootstrap, aug_task=aug_task, n_aug_prompts=n_aug_prompts, n_views=n_views,
                  mc_tasks=list(mc_tasks), n_items=n_items, n_calibration=n_calibration,
                  calibration_task=calibration_task, n_encoder_calibration=n_encoder_calibration,
                  budgets=list(budgets), n_random=n_random, batch_size=batch_size)
    read = tuple(dict.fromkeys([(t, n_samples) for t in [*tasks, aug_task, calibration_task]]
                               + [(calibration_task, n_encoder_calibration)] + [(t, None) for t in mc_tasks]))
    return [Unit("selection_and_pruning", selection_model, m, {**params, "prune": m in pruning_models}, tasks=read,
                 device=device, dtype=dtype) for m in models]


@dataclass(frozen=True, eq=False)
class SelectionTables:
    """The chapter's tables, by model where a dict: ``scores`` (one row per model and
    embedding task), ``changes`` (every plan's score changes, :data:`CHANGE_COLUMNS`),
    ``dime``, ``kinds``, ``sources``, ``n_blocks``, ``plans`` (pruned models),
    ``mc_intact`` and ``mc_items`` (decoders), ``seconds``, ``item_changes`` (pruned decoders'
    per-item outcomes, :data:`ITEM_CHANGE_COLUMNS`)."""

    scores: pd.DataFrame
    changes: pd.DataFrame
    dime: dict
    kinds: dict
    sources: dict
    n_blocks: dict
    plans: dict
    mc_intact: dict
    mc_items: dict
    seconds: dict
    item_changes: pd.DataFrame


def selection_tables(models: Sequence[str], records: Sequence[SelectionModel]) -> SelectionTables:
    """Gather the records of ``models`` (in order) into the chapter's tables."""
    require(len(models) == len(records), records, f"one record per model: {len(models)} models, {len(records)} records")
    pairs = list(zip(models, records))
    changes = [c for r in records for c in r.changes]
    return SelectionTables(
        scores=pd.DataFrame([row for r in records for row in r.score_rows]),
        changes=pd.concat(changes, ignore_index=True) if changes else pd.DataFrame(columns=CHANGE_COLUMNS),
        dime={m: r.dime for m, r in pairs}, kinds={m: r.kind for m, r in pairs},
        sources={m: r.source for m, r in pairs}, n_blocks={m: r.n_blocks for m, r in pairs},
        plans={m: r.plan for m, r in pairs if r.plan is not None},
        mc_intact={m: r.mc_intact for m, r in pairs if r.mc_intact is not None},
        mc_items={m: r.mc_items for m, r in pairs if r.mc_intact is not None},
        seconds={m: r.seconds for m, r in pairs},
        item_changes=(pd.concat(items, ignore_index=True) if (items := [r.item_changes for r in records
                                                                         if r.item_changes is not None])
                      else pd.DataFrame(columns=ITEM_CHANGE_COLUMNS)))
