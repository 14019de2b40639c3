"""The mid-layer chapter's per-layer scoring: cross-fitted halves, the final norm, each prompt's entropy.

:func:`evaluate_layer_halves` scores every layer of a task on all its evaluation units (MTEB's
protocol, :func:`lrd.methods.evaluate.evaluate_layers`), on each half of them
(:func:`lrd.methods.evaluate.evaluation_halves`), and under permuted labels. The halves are
**cross-fitted**: everything fitted is fitted again on each half's own rows
(:func:`fitting_rows`): a classification half trains its classifiers on its own half of the
training rows (:func:`training_halves`, stratified by label) and tests on its own test rows; a
clustering half draws its k-means bootstraps from its own rows; a pair or STS half scores its
own pairs (a cosine per pair: nothing is fitted). No fit is shared by the two halves, so the
noise of the fits cannot make a layer chosen on one half pay on the other (issue 31; each
half's score depends on its own rows alone: ``tests/test_crossfit.py::test_halves_are_cross_fitted``).

:data:`FINAL_NORM_SCORE` names the score of states passed through a decoder's final norm (the
states the paper's code scores), and :func:`prompt_entropy_rows` keeps each prompt's entropy
curve (the unit of the per-model valley test).

References
----------
Skean et al., "Layer by Layer", ICML 2025, Section 4 (per-layer MTEB evaluation), Fig. 2a.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lrd.engine.tasks import Task
from lrd.methods.evaluate import (MTEB_SEED, _checked, _classification_split, _run, evaluate_layers, evaluation_halves,
                                  n_evaluation_units)
from lrd.metrics.entropy import prompt_entropy
from lrd.tables import per_layer

__all__ = ["FINAL_NORM_SCORE", "LayerEvaluation", "training_halves", "fitting_rows", "evaluate_layer_halves",
           "layer_scores", "prompt_entropy_rows"]

#: The measurement name of a layer's score on states passed through the model's final norm
#: (decoders with one: every layer as the paper's code scores it, Skean et al.'s truncated model).
FINAL_NORM_SCORE = "score (final norm)"


def training_halves(task: Task, *, seed: int = MTEB_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Split a classification task's **training** rows into two halves, stratified by label.

    Within each label the training rows are permuted by ``numpy.random.default_rng([seed, 1])``
    and dealt alternately to half 1 and half 2 (so each half holds every label that has at
    least two training rows, and the two halves' sizes differ by at most one per label).

    Returns
    -------
    tuple of two int arrays
        Row indices into ``task.frame`` (sorted) of the training rows of each half.
    """
    tr, _ = _classification_split(task)
    y = task.labels[tr]
    rng = np.random.default_rng([seed, 1])
    first, second = [], []
    for label in np.unique(y):
        rows = rng.permutation(tr[y == label])
        first.append(rows[0::2])
        second.append(rows[1::2])
    return np.sort(np.concatenate(first)), np.sort(np.concatenate(second))


def fitting_rows(task: Task, *, seed: int = MTEB_SEED) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of ``task.frame`` each half of :func:`evaluation_halves` fits **and** scores on.

    Classification: half h's test rows (:func:`evaluation_halves`) and half h of the training
    rows (:func:`training_halves`); clustering: half h's rows. The two sets are disjoint, so a
    half's score is a function of its own rows' states and labels only (cross-fitting). Pair
    classification and STS fit nothing (a cosine per pair): None, and each half is scored on
    its own pairs.
    """
    if task.type == "classification":
        _, te = _classification_split(task)
        tests = evaluation_halves(task, seed=seed)
        trains = training_halves(task, seed=seed)
        return tuple(np.sort(np.concatenate([train, te[test]])) for train, test in zip(trains, tests))
    if task.type == "clustering":
        return evaluation_halves(task, seed=seed)
    return None


def _rows_of(task: Task, rows: np.ndarray) -> Task:
    return replace(task, frame=task.frame.iloc[rows].reset_index(drop=True))


def _half_scores(x: np.ndarray, task: Task, halves: tuple[np.ndarray, np.ndarray], split_seed: int,
                 **options) -> np.ndarray:
    """Every layer's score on each half, cross-fitted (:func:`fitting_rows`): (2, L+1)."""
    rows = fitting_rows(task, seed=split_seed)
    if rows is None:  # nothing fitted: each half's pairs scored on the same similarities
        return _run(x, task, [task.labels], list(halves), **options)[0]
    out = []
    for half in rows:
        sub = _rows_of(task, half)
        if task.type == "classification" and np.unique(sub.labels[_classification_split(sub)[0]]).size < 2:
            raise ValueError(f"task {task.name!r}: a half of its training rows holds one label only; "
                             "cross-fitted halves need at least two training rows of two labels")
        out.append(_run(x[:, half], sub, [sub.labels], [np.arange(n_evaluation_units(sub))], **options)[0, 0])
    return np.stack(out)


@dataclass(frozen=True)
class LayerEvaluation:
    """Every layer's main score on a task: on all evaluation units, on each half, and under permuted labels.

    Attributes
    ----------
    score : ndarray of shape (n_layers + 1,)
        On every evaluation unit (:func:`lrd.methods.evaluate.evaluate_layers`).
    halves : ndarray of shape (2, n_layers + 1)
        On the units of each half of :func:`lrd.methods.evaluate.evaluation_halves`, cross-fitted
        (:func:`fitting_rows`: each half's classifiers and partitions fitted on its own rows).
    chance : ndarray of shape (n_permutations, n_layers + 1)
        On every unit after shuffling the labels (class labels, human scores or pair labels)
        across units: the score a representation unrelated to the labels gets, measured with the
        same evaluator on the same rows.
    """

    score: np.ndarray
    halves: np.ndarray
    chance: np.ndarray


def evaluate_layer_halves(layers: np.ndarray, task: Task, *, n_permutations: int = 0, permutation_seed: int = 0,
                          split_seed: int = MTEB_SEED, **options) -> LayerEvaluation:
    """:func:`evaluate_layers`, plus the cross-fitted score on each half of the evaluation units and a
    label-permutation null.

    ``halves[h]`` is every layer's score on half ``h``'s units with every fit made on half
    ``h``'s own rows (:func:`fitting_rows`); ``score`` is MTEB's, on every unit.

    Chance is measured, not assumed: the labels are shuffled across the evaluation rows
    (``numpy.random.default_rng(permutation_seed)``, one permutation per draw) and the same
    evaluator is run again on the same states. For classification the classifier is retrained
    on the shuffled training labels; for clustering, pair classification and STS the
    label-blind part (the k-means partitions, the cosine similarities) is computed once and
    scored against every label set. A label-blind partition is far from 0 on V-measure when the
    clusters are many and the rows few (57 MMLU subjects in 300 rows), which a formula of 0
    would hide.

    Parameters
    ----------
    layers, task, **options
        As :func:`evaluate_layers` (``n_experiments``, ``samples_per_label``, ``n_bootstrap``, ``seed``).
    n_permutations : int
        Label permutations (0: no chance estimate).
    permutation_seed, split_seed : int
        Seeds of the permutations and of :func:`evaluation_halves`.
    """
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 0:
        raise ValueError(f"n_permutations must be a non-negative integer, got {n_permutations!r}")
    x = _checked(layers, task)
    opts = dict(n_experiments=10, samples_per_label=8, n_bootstrap=10, seed=MTEB_SEED) | options
    y = task.labels
    rng = np.random.default_rng(permutation_seed)
    label_sets = [y] + [y[rng.permutation(len(y))] for _ in range(n_permutations)]
    halves = evaluation_halves(task, seed=split_seed)
    everything = np.arange(n_evaluation_units(task))
    observed = _run(x, task, label_sets[:1], [everything], **opts)[0, 0]
    halved = _half_scores(x, task, halves, split_seed, **opts)
    chance = (_run(x, task, label_sets[1:], [everything], **opts)[:, 0] if n_permutations
              else np.empty((0, len(x))))
    return LayerEvaluation(observed, halved, chance)


def layer_scores(layers: np.ndarray, task: Task, *, model: str, halves: bool = False, n_permutations: int = 0,
                 permutation_seed: int = 0, **options) -> pd.DataFrame:
    """:func:`evaluate_layers` as tidy rows, ``measurement="score"`` (the task type's main score).

    With ``halves``, also ``"score half 1"`` and ``"score half 2"`` (:func:`evaluation_halves`);
    with ``n_permutations``, also ``"chance"`` (the mean over label permutations of each layer's
    score) and ``"chance max"`` (the largest), from :func:`evaluate_layer_halves`.
    """
    rows = {"model": model, "task": task.name}
    if not halves and not n_permutations:
        return per_layer(evaluate_layers(layers, task, **options), measurement="score", **rows)
    done = evaluate_layer_halves(layers, task, n_permutations=n_permutations, permutation_seed=permutation_seed,
                                 **options)
    out = [per_layer(done.score, measurement="score", **rows)]
    if halves:
        out += [per_layer(h, measurement=f"score half {i}", **rows) for i, h in enumerate(done.halves, 1)]
    if n_permutations:
        out += [per_layer(done.chance.mean(0), measurement="chance", **rows),
                per_layer(done.chance.max(0), measurement="chance max", **rows)]
    return pd.concat(out, ignore_index=True)


def prompt_entropy_rows(tokens: Sequence[np.ndarray], *, model: str, task: str, alpha: float = 1.0) -> pd.DataFrame:
    """Each prompt's normalised prompt entropy (the paper's code, as :func:`token_rows`) at every layer.

    The per-prompt terms whose mean is :func:`token_rows`' ``"prompt entropy"``: one row per
    (prompt, layer), ``model, task, prompt, layer, depth, value``, where ``prompt`` is the
    prompt's position in ``tokens``; prompts shorter than 3 tokens are left out, as there.
    Prompts are the unit of a per-model test (a model's valley, Skean et al. Fig. 2a).
    """
    kept = [(i, t) for i, t in enumerate(tokens) if t.shape[1] >= 3]
    if not kept:
        raise ValueError("every text is shorter than 3 tokens; token metrics need longer prompts")
    with threadpool_limits(1):
        curves = np.stack([prompt_entropy([t], alpha=alpha) for _, t in kept])  # (n_prompts, L + 1)
    n_prompts, n_layers = curves.shape
    layer = np.tile(np.arange(n_layers), n_prompts)
    return pd.DataFrame({"model": model, "task": task, "prompt": np.repeat([i for i, _ in kept], n_layers),
                         "layer": layer, "depth": layer / (n_layers - 1), "value": curves.ravel()})
