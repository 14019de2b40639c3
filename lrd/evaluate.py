"""Downstream score of every layer of a model on a task, from one extraction.

:func:`evaluate_layers` takes the ``(L + 1, N, d)`` array that :func:`lrd.extract` returns for
``task.texts`` and scores each layer with MTEB's protocol for the task type, calling the same
scikit-learn estimators and metrics on the same samples as ``mteb`` 2.x, without its per-call
overhead (datasets, dataloaders, re-encoding):

==========================  ================================================================
classification              MTEB ``AbsTaskClassification``: ``n_experiments`` times, a
                            logistic regression (L2, ``C=1``, intercept) is fit on
                            ``samples_per_label`` examples per label of the train split
                            (MTEB's undersampling, chained ``RandomState(seed)`` shuffles)
                            and scored by test accuracy; the mean is reported. We fit it to
                            convergence (:func:`mteb_classifier`), where MTEB stops lbfgs
                            after 100 iterations.
pair_classification         MTEB ``PairClassificationEvaluator``: average precision of the
                            cosine similarity of the two sides (``cosine_ap``).
sts                         MTEB ``AnySTSEvaluator``: Spearman correlation of the cosine
                            similarity with the human score (``cosine_spearman``).
clustering                  MTEB ``AbsTaskClustering``: ``n_bootstrap`` times, MiniBatchKMeans
                            (k = number of labels, ``batch_size=512``, ``n_init=1``,
                            ``random_state=seed``) on a bootstrap sample, scored by V-measure;
                            the mean is reported. MTEB draws 16 384 texts with replacement
                            per experiment; we draw ``N`` (the set has only a few hundred).
==========================  ================================================================

``tests/test_evaluate.py`` checks the classification path against ``mteb.evaluate`` itself:
with our classifier in place of MTEB's (the protocol), and with MTEB's own where its lbfgs
converges (the estimator).

**Deviation from MTEB: converged fits.** MTEB's ``LogisticRegression(max_iter=100)`` (lbfgs)
stops before convergence on raw hidden states of decoders, whose norms reach 10^3 (on 16
training rows the problem is badly conditioned): its accuracy then depends on where the
optimiser happened to stop, which moves with float noise. Multiplying the states of SmolLM2 on
SST-2 (40 rows, 31 layers, 10 experiments) by :math:`1 + 10^{-6} z` flipped 32 of 5580 test
predictions with MTEB's settings, 2 with lbfgs run to convergence at its tolerance
(``tol=1e-4``), and none with :func:`mteb_classifier`, which fits the same model to its optimum
with Newton-CG (``tol=1e-8``, 13 iterations in the median) at about the cost of MTEB's fits
(2026-12-01, shared machine; ``lrd.perturb``). Where lbfgs converges the two agree.

References
----------
Muennighoff, Tazi, Magne, Reimers, "MTEB: Massive Text Embedding Benchmark", EACL 2023.
Skean et al., "Layer by Layer", ICML 2025, Section 4 (per-layer MTEB evaluation).
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits
from sklearn.cluster import MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, v_measure_score

from lrd.metrics._validation import check_layers
from lrd.report import per_layer
from lrd.tasks import Task

MAIN_SCORES = {"classification": "accuracy", "pair_classification": "cosine_ap", "sts": "cosine_spearman",
               "clustering": "v_measure"}
MTEB_SEED = 42


def undersample(labels: np.ndarray, n_experiments: int, samples_per_label: int, seed: int) -> list[np.ndarray]:
    """The training indices of each experiment, drawn exactly as MTEB's classification does.

    One index list is shuffled in place by a fresh ``RandomState(seed)`` before each experiment
    (so shuffles chain), then the first ``samples_per_label`` indices of each label are kept.
    """
    idxs = list(range(len(labels)))
    out = []
    for _ in range(n_experiments):
        np.random.RandomState(seed).shuffle(idxs)
        count: dict = defaultdict(int)
        chosen = []
        for i in idxs:
            if count[labels[i]] < samples_per_label:
                chosen.append(i)
                count[labels[i]] += 1
        out.append(np.array(chosen))
    return out


def _cosine_pairs(x: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    a, b = x[:, left], x[:, right]  # (L+1, P, d)
    num = (a * b).sum(-1)
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _pair_index(task: Task) -> tuple[np.ndarray, np.ndarray]:
    where = {t: i for i, t in enumerate(task.texts)}
    left, right = task.pairs
    return np.array([where[t] for t in left]), np.array([where[t] for t in right])


def mteb_classifier(seed: int = MTEB_SEED) -> LogisticRegression:
    """MTEB's classifier (L2-penalised logistic regression, ``C=1``, with intercept), fit to convergence.

    Newton-CG with ``tol=1e-8`` on the largest gradient entry reaches the optimum to float
    precision in about 10-25 iterations, so predictions do not depend on float noise in the
    states beyond the optimum's own sensitivity; MTEB's lbfgs with ``max_iter=100`` often stops
    before (see the module docstring).
    """
    return LogisticRegression(solver="newton-cg", tol=1e-8, max_iter=1000, random_state=seed)


def _classification(x, task, *, n_experiments, samples_per_label, seed):
    split = task.frame["split"].to_numpy()
    y = task.labels
    tr, te = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    if len(tr) == 0 or len(te) == 0:
        raise ValueError(f"task {task.name!r} needs rows in both splits to train and test a classifier")
    experiments = undersample(y[tr], n_experiments, samples_per_label, seed)
    scores = np.zeros(len(x))
    for layer, xl in enumerate(x):
        for chosen in experiments:
            clf = mteb_classifier(seed).fit(xl[tr[chosen]], y[tr[chosen]])
            scores[layer] += accuracy_score(y[te], clf.predict(xl[te]))
    return scores / n_experiments


def _clustering(x, task, *, n_bootstrap, seed):
    y = task.labels
    k = np.unique(y).size
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(y), len(y)) for _ in range(n_bootstrap)]
    scores = np.zeros(len(x))
    for layer, xl in enumerate(x):
        for idx in draws:
            km = MiniBatchKMeans(n_clusters=k, batch_size=512, init="k-means++", n_init=1, random_state=seed)
            scores[layer] += v_measure_score(y[idx], km.fit_predict(xl[idx]))
    return scores / n_bootstrap


def evaluate_layers(layers: np.ndarray, task: Task, *, n_experiments: int = 10, samples_per_label: int = 8,
                    n_bootstrap: int = 10, seed: int = MTEB_SEED) -> np.ndarray:
    """MTEB main score of every layer on a task, from one extraction.

    Parameters
    ----------
    layers : array of shape (n_layers + 1, len(task.texts), d_model)
        ``lrd.extract(model, task.texts, ...)``: row ``i`` embeds ``task.texts[i]``.
    task : Task
        Classification, pair classification, STS or clustering (see the module docstring).
    n_experiments, samples_per_label : int
        Classification protocol (MTEB's defaults: 10 experiments, 8 examples per label).
    n_bootstrap : int
        Clustering experiments (MTEB's default 10).
    seed : int
        MTEB's task seed (42).

    Returns
    -------
    ndarray of shape (n_layers + 1,)
        The main score (see ``MAIN_SCORES``) of each layer.
    """
    x = check_layers(layers, min_samples=2, dtype=np.float64)
    if x.shape[1] != len(task.texts):
        raise ValueError(f"layers hold {x.shape[1]} texts but task {task.name!r} has {len(task.texts)}; "
                         "extract the states of task.texts (in that order)")
    # many small fits: one BLAS/OpenMP thread is much faster than oversubscribed ones. Newton-CG
    # stops with "Line Search failed" when float precision ends its descent before tol (seen at
    # tol=1e-10 on SmolLM2's states, never at 1e-8): not printed, a chapter's output is compared
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Line Search failed")
        return _evaluate(x, task, n_experiments=n_experiments, samples_per_label=samples_per_label,
                         n_bootstrap=n_bootstrap, seed=seed)


def _evaluate(x, task, *, n_experiments, samples_per_label, n_bootstrap, seed):
    if task.type == "classification":
        return _classification(x, task, n_experiments=n_experiments, samples_per_label=samples_per_label, seed=seed)
    if task.type == "clustering":
        return _clustering(x, task, n_bootstrap=n_bootstrap, seed=seed)
    if task.type in ("pair_classification", "sts"):
        sims = _cosine_pairs(x, *_pair_index(task))
        if task.type == "sts":
            return np.array([spearmanr(s, task.labels).statistic for s in sims])
        return np.array([average_precision_score(task.labels, s) for s in sims])
    raise NotImplementedError(f"task type {task.type!r} of {task.name!r} has no per-layer evaluation; "
                              f"supported: {sorted(MAIN_SCORES)}")


def chance_score(task: Task) -> float:
    """The main score a representation unrelated to the labels gets in expectation.

    Classification: ``1 / n_labels`` (the classifier is trained on the same number of
    examples of every label, so a label-blind one predicts each label equally often);
    pair classification: the positive rate (average precision of a random ranking);
    STS and clustering: 0.
    """
    y = task.labels
    if task.type == "classification":
        return 1.0 / np.unique(y[task.frame["split"].to_numpy() == "train"]).size
    if task.type == "pair_classification":
        return float(np.mean(y))
    return 0.0


def layer_scores(layers: np.ndarray, task: Task, *, model: str, **options) -> pd.DataFrame:
    """:func:`evaluate_layers` as tidy rows, ``measurement="score"`` (the task type's main score)."""
    return per_layer(evaluate_layers(layers, task, **options), model=model, task=task.name, measurement="score")
