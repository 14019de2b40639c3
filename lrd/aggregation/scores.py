"""Scoring the layer-aggregation methods on a task: classification accuracy and STS Spearman.

Each function returns one row per seed; chapters concatenate them into a tidy table with
columns ``model, task, method, seed, score`` (plus extras such as the chosen layer).

References
----------
Ulanovski, Blyachman and Bechler-Speicher, arXiv:2603.22665, section 4 (protocol: frozen
model, trained aggregator, accuracy for classification, Spearman for STS).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from lrd.aggregation.encoders import make_method
from lrd.aggregation.training import (Classification, Similarity, TrainConfig, few_shot_indices, fit, stratified_holdout,
                          torch_threads)

LAST_ONLY = ("last", "mlp")  # methods that read only the last state
UNTRAINED_STS = ("last", "best", "mean")  # raw cosine of the states, as the paper's Last-/Best-Layer


def _stack(states: np.ndarray, method: str) -> torch.Tensor:
    """(S, N, d) states -> (N, S', d) float32 tensor; S' = 1 for last-layer-only methods."""
    states = np.asarray(states, dtype=np.float32)
    if states.ndim != 3:
        raise ValueError(f"states must have shape (S, N, d), got {states.shape}")
    if not np.isfinite(states).all():
        raise ValueError("states contain non-finite values")
    x = torch.tensor(states).permute(1, 0, 2)  # a copy: cached states are read-only memory maps
    return (x[:, -1:] if method in LAST_ONLY else x).contiguous()


def classification_scores(states: np.ndarray, labels: np.ndarray, is_test: np.ndarray, method: str, *,
                          seeds: Sequence[int] = (0, 1, 2), config: TrainConfig = TrainConfig(),
                          per_class: int | None = None, **encoder) -> pd.DataFrame:
    """Test accuracy of one method, one row per seed.

    Parameters
    ----------
    states : array of shape (S, N, d)
        Pooled states of every layer (``lrd.engine.extract`` output).
    labels : int array of shape (N,)
    is_test : bool array of shape (N,)
        The task's test split; the rest is the training pool, from which each seed holds out a
        stratified ``config.val_fraction`` for early stopping.
    method : str
        One of :data:`lrd.aggregation.encoders.METHODS`.
    per_class : int, optional
        Few-shot: each seed first draws this many training examples per class.
    **encoder
        Passed to :func:`lrd.aggregation.encoders.make_method` (``gnn_layers``, ``positional``, ...).

    Returns
    -------
    DataFrame with columns ``method, seed, score, layer, epochs, correct`` (``layer``: the layer
    the 'best' method chose, else -1; ``correct``: an int8 array of shape (n_test,), 1 where
    the seed's prediction of a test item (in the order of ``np.flatnonzero(is_test)``) is
    right, so that ``score`` is its mean; :func:`item_outcomes` makes it a long table).
    """
    labels, is_test = np.asarray(labels), np.asarray(is_test, dtype=bool)
    if len(labels) != states.shape[1] or len(is_test) != len(labels):
        raise ValueError(f"{states.shape[1]} states, {len(labels)} labels, {len(is_test)} split flags")
    x = _stack(states, method)
    n_classes = int(labels.max()) + 1
    pool, test = np.flatnonzero(~is_test), np.flatnonzero(is_test)
    train, val = [], []
    for s in seeds:
        items = pool if per_class is None else pool[few_shot_indices(labels[pool], per_class, seed=s)]
        tr, va = stratified_holdout(labels[items], len(items), config.val_fraction, seed=s)
        train.append(items[tr])
        val.append(items[va])
    objective = Classification(x, torch.tensor(labels, dtype=torch.long))
    fitted = fit(lambda: make_method(method, x.shape[2], x.shape[1], n_classes, **encoder), objective, train, val,
                 seeds=seeds, config=config)
    with torch_threads(config.threads):
        predicted = fitted.predict(objective, test)
    right = predicted == torch.tensor(labels[test])[None, :, None]  # (K, n_test, G)
    layer = fitted.best_val.argmin(1)  # (K,): the 'best' method's choice; 0 for one group
    items = right[torch.arange(len(layer)), :, layer].to(torch.int8).numpy()  # (K, n_test)
    return pd.DataFrame({"method": method, "seed": list(seeds), "score": items.mean(1, dtype=np.float64),
                         "layer": layer.numpy() if right.shape[2] > 1 else -1, "epochs": fitted.epochs,
                         "correct": list(items)})


def item_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """The per-item correctness of classification scores as a long table.

    Parameters
    ----------
    scores : DataFrame
        Rows of :func:`classification_scores` (any extra key columns, e.g. ``model, task``),
        with the ``correct`` arrays; rows without one (STS) are left out.

    Returns
    -------
    DataFrame with the key columns of ``scores`` (all but ``score, layer, epochs, correct``)
    plus ``item`` (position in the test split) and ``correct`` (0 or 1).
    """
    if "correct" not in scores:
        raise ValueError("scores have no 'correct' column: item outcomes come from classification_scores")
    rows = scores[scores["correct"].map(lambda c: isinstance(c, np.ndarray))]
    keys = [c for c in rows.columns if c not in ("score", "layer", "epochs", "correct")]
    long = rows[keys + ["correct"]].explode("correct", ignore_index=True)
    long["item"] = long.groupby(keys, sort=False).cumcount()
    return long.astype({"correct": np.int8})[keys + ["item", "correct"]]


def document_folds(num_docs: int, folds: int, *, seed: int = 0) -> list[np.ndarray]:
    """Split documents ``0..num_docs-1`` into ``folds`` seeded random groups."""
    if not 2 <= folds <= num_docs:
        raise ValueError(f"folds must be in 2..{num_docs}, got {folds}")
    return np.array_split(np.random.default_rng(seed).permutation(num_docs), folds)


def _raw_cosine(states: np.ndarray, pairs: np.ndarray, method: str) -> np.ndarray:
    """(S', P) cosine of raw states for every layer (``best``), the last, or the layer mean."""
    s = np.asarray(states, dtype=np.float64)
    s = {"last": s[-1:], "mean": s.mean(0, keepdims=True), "best": s}[method]
    s = s / np.linalg.norm(s, axis=-1, keepdims=True).clip(1e-12)
    return np.einsum("lpd,lpd->lp", s[:, pairs[:, 0]], s[:, pairs[:, 1]])


def similarity_scores(states: np.ndarray, pairs: np.ndarray, scores: np.ndarray, method: str, *,
                      folds: int = 3, seeds: Sequence[int] = (0, 1, 2), config: TrainConfig = TrainConfig(),
                      pair_batch_size: int = 256, **encoder) -> pd.DataFrame:
    """Document-disjoint cross-validated Spearman correlation of one method, one row per seed.

    The documents are split into ``folds`` groups; fold f tests on the pairs with both
    documents in group f and trains on the pairs with neither (pairs across the two sides are
    not used), so no test document is seen in training. Trained methods fit the cosine of two
    embeddings to the score with MSE, early-stopped on a random ``config.val_fraction`` of the
    training pairs. ``last``, ``best`` and ``mean`` are the raw cosine of the states (``best``:
    the layer with the highest Spearman on the training pairs), as the paper's untrained
    Last-/Best-Layer rows. The score of a seed is the mean over folds.

    Parameters
    ----------
    states : array of shape (S, D, d)
        One state stack per document.
    pairs : int array of shape (P, 2)
        Document indices of each scored pair.
    scores : array of shape (P,)
        Human similarity.
    pair_batch_size : int
        Pairs per optimisation step (replaces ``config.batch_size``). Every step embeds all
        documents once, so a step costs the same for 64 or 256 pairs; larger batches make an
        epoch cheaper (our choice for the CPU budget).
    """
    config = replace(config, batch_size=pair_batch_size)
    pairs, scores = np.asarray(pairs), np.asarray(scores, dtype=np.float32)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or len(pairs) != len(scores):
        raise ValueError(f"pairs must be (P, 2) with P scores, got {pairs.shape} and {scores.shape}")
    rows = []
    for f, group in enumerate(document_folds(states.shape[1], folds)):
        in_test = np.isin(pairs, group)
        test, train = np.flatnonzero(in_test.all(1)), np.flatnonzero(~in_test.any(1))
        if method in UNTRAINED_STS:
            cos = _raw_cosine(states, pairs, method)
            layer = int(np.argmax([spearmanr(c[train], scores[train])[0] for c in cos]))
            rho = [spearmanr(cos[layer, test], scores[test])[0]] * len(seeds)
        else:
            x = _stack(states, method)
            split = [stratified_holdout(None, len(train), config.val_fraction, seed=s) for s in seeds]
            objective = Similarity(x, torch.tensor(pairs), torch.tensor(scores))
            fitted = fit(lambda: make_method(method, x.shape[2], x.shape[1], None, **encoder), objective,
                         [train[t] for t, _ in split], [train[v] for _, v in split], seeds=seeds, config=config)
            pred = fitted.predict(objective, test)[:, :, 0].numpy()
            rho = [spearmanr(p, scores[test])[0] for p in pred]
        rows += [{"method": method, "seed": s, "fold": f, "score": r} for s, r in zip(seeds, rho)]
    return pd.DataFrame(rows).groupby(["method", "seed"], as_index=False)["score"].mean()


def lee_pairs(texts: Sequence[str], task) -> tuple[np.ndarray, np.ndarray]:
    """Map an STS task's pairs onto indices of ``texts`` (which must contain every document)."""
    index = {t: i for i, t in enumerate(texts)}
    a, b = task.pairs
    missing = {t for t in a + b if t not in index}
    if missing:
        raise ValueError(f"{len(missing)} documents of the pairs are not among the extracted texts")
    return np.array([[index[s], index[t]] for s, t in zip(a, b)]), np.asarray(task.labels, dtype=np.float32)


def task_scores(states: np.ndarray, task, methods: Sequence[str], *, texts: Sequence[str] | None = None,
                **options) -> pd.DataFrame:
    """Scores of several methods on one task: classification (accuracy) or STS (Spearman).

    ``states`` are the extraction of ``texts`` (default ``task.texts``); for STS the pairs of
    ``task`` are mapped onto them. ``options`` go to :func:`classification_scores` or
    :func:`similarity_scores`.
    """
    if task.type == "sts":
        pairs, target = lee_pairs(list(task.texts if texts is None else texts), task)
        return pd.concat([similarity_scores(states, pairs, target, m, **options) for m in methods], ignore_index=True)
    is_test = task.frame["split"].to_numpy() == "test"
    return pd.concat([classification_scores(states, task.labels, is_test, m, **options) for m in methods],
                     ignore_index=True)


def encoder_variants(states: np.ndarray, task, variants: dict[str, dict], *, method: str = "cayley",
                     **options) -> pd.DataFrame:
    """Scores of one method under named encoder settings (``{"name": make_method kwargs}``)."""
    rows = [task_scores(states, task, [method], **options, **kwargs).assign(variant=name)
            for name, kwargs in variants.items()]
    return pd.concat(rows, ignore_index=True)


def few_shot_scores(states: np.ndarray, task, methods: Sequence[str], shots: Sequence[int],
                    **options) -> pd.DataFrame:
    """Accuracy of each method when every seed trains on ``k`` examples per class, for each k."""
    is_test = task.frame["split"].to_numpy() == "test"
    return pd.concat([classification_scores(states, task.labels, is_test, m, per_class=k, **options).assign(shots=k)
                      for k in shots for m in methods], ignore_index=True)


def parameter_share(base_params: int, dim: int, num_states: int, num_classes: int, *, method: str = "cayley",
                    **encoder) -> dict:
    """Trainable parameters of ``method`` (encoder and head) and their share of the base model's."""
    from lrd.aggregation.encoders import count_parameters

    n = count_parameters(make_method(method, dim, num_states, num_classes, **encoder))
    return {"method": method, "params": n, "base_params": int(base_params), "share": n / base_params}
