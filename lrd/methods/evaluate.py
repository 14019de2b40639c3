"""Downstream score of every layer of a model on a task, from one extraction.

:func:`evaluate_layers` takes the ``(L + 1, N, d)`` array that :func:`lrd.engine.extract` returns for
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
optimiser happened to stop, which moves with float noise. :func:`mteb_classifier` fits the same
model to its optimum with Newton-CG (``tol=1e-8``), so a relative change of :math:`10^{-6}` in
the states (float noise of another CPU, ``lrd.engine.perturb``) leaves every layer's score as it
is: ``tests/test_evaluate.py::test_scores_do_not_move_with_float_noise``. Where lbfgs converges
the two agree.

:func:`evaluation_halves` splits the evaluation units in two (choose a layer on one half, score
it on the other); :func:`lrd.methods.crossfit.evaluate_layer_halves` scores every layer on each
half, fitting on each half's own rows, and measures chance as a label-permutation null of the
same evaluator on the same rows.

References
----------
Muennighoff, Tazi, Magne, Reimers, "MTEB: Massive Text Embedding Benchmark", EACL 2023.
Skean et al., "Layer by Layer", ICML 2025, Section 4 (per-layer MTEB evaluation).
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits
from sklearn.cluster import MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, v_measure_score

from lrd.metrics._validation import check_layers
from lrd.engine.tasks import Task

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


def _classification_split(task: Task) -> tuple[np.ndarray, np.ndarray]:
    split = task.frame["split"].to_numpy()
    tr, te = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    if len(tr) == 0 or len(te) == 0:
        raise ValueError(f"task {task.name!r} needs rows in both splits to train and test a classifier")
    return tr, te


def _classification(x, task, label_sets, subsets, *, n_experiments, samples_per_label, seed):
    tr, te = _classification_split(task)
    scores = np.zeros((len(label_sets), len(subsets), len(x)))
    for i, y in enumerate(label_sets):  # a classifier is trained per label set (permuted labels: refit)
        experiments = undersample(y[tr], n_experiments, samples_per_label, seed)
        for layer, xl in enumerate(x):
            for chosen in experiments:
                clf = mteb_classifier(seed).fit(xl[tr[chosen]], y[tr[chosen]])
                predicted, gold = clf.predict(xl[te]), y[te]
                scores[i, :, layer] += [accuracy_score(gold[s], predicted[s]) for s in subsets]
    return scores / n_experiments


def _clustering(x, task, label_sets, subsets, *, n_bootstrap, seed):
    k = np.unique(task.labels).size
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(task), len(task)) for _ in range(n_bootstrap)]
    member = np.zeros((len(subsets), len(task)), dtype=bool)
    for j, s in enumerate(subsets):
        member[j, s] = True
    scores = np.zeros((len(label_sets), len(subsets), len(x)))
    for layer, xl in enumerate(x):
        for idx in draws:  # the partition is label-blind: one fit serves every label set and subset
            km = MiniBatchKMeans(n_clusters=k, batch_size=512, init="k-means++", n_init=1, random_state=seed)
            clusters = km.fit_predict(xl[idx])
            for i, y in enumerate(label_sets):
                for j in range(len(subsets)):
                    keep = member[j, idx]
                    scores[i, j, layer] += v_measure_score(y[idx][keep], clusters[keep])
    return scores / n_bootstrap


def _pairs(x, task, label_sets, subsets):
    sims = _cosine_pairs(x, *_pair_index(task))  # (L+1, P), label-blind
    if task.type == "sts":
        def score(y, s):
            return [spearmanr(row[s], y[s]).statistic for row in sims]
    else:
        def score(y, s):
            return [average_precision_score(y[s], row[s]) for row in sims]
    return np.array([[score(y, s) for s in subsets] for y in label_sets])


def _scores(x, task, label_sets, subsets, *, n_experiments, samples_per_label, n_bootstrap, seed) -> np.ndarray:
    """Main score of every layer for each label set and subset of evaluation units: (n_label_sets, n_subsets, L+1)."""
    if task.type == "classification":
        return _classification(x, task, label_sets, subsets, n_experiments=n_experiments,
                               samples_per_label=samples_per_label, seed=seed)
    if task.type == "clustering":
        return _clustering(x, task, label_sets, subsets, n_bootstrap=n_bootstrap, seed=seed)
    if task.type in ("pair_classification", "sts"):
        return _pairs(x, task, label_sets, subsets)
    raise NotImplementedError(f"task type {task.type!r} of {task.name!r} has no per-layer evaluation; "
                              f"supported: {sorted(MAIN_SCORES)}")


def _checked(layers: np.ndarray, task: Task) -> np.ndarray:
    x = check_layers(layers, min_samples=2, dtype=np.float64)
    if x.shape[1] != len(task.texts):
        raise ValueError(f"layers hold {x.shape[1]} texts but task {task.name!r} has {len(task.texts)}; "
                         "extract the states of task.texts (in that order)")
    return x


def _run(x, task, label_sets, subsets, **options) -> np.ndarray:
    # many small fits: one BLAS/OpenMP thread is much faster than oversubscribed ones. Newton-CG
    # stops with "Line Search failed" when float precision ends its descent before tol (seen at
    # tol=1e-10 on SmolLM2's states, never at 1e-8), and its inner Wolfe line search warns on some
    # permuted-label fits, whose optimum is flat: neither is printed, a chapter's output is compared
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Line Search failed")
        warnings.filterwarnings("ignore", message="The line search algorithm did not converge")
        return _scores(x, task, label_sets, subsets, **options)


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
    x = _checked(layers, task)
    everything = np.arange(n_evaluation_units(task))
    return _run(x, task, [task.labels], [everything], n_experiments=n_experiments,
                samples_per_label=samples_per_label, n_bootstrap=n_bootstrap, seed=seed)[0, 0]


# --- the two halves of a task's evaluation rows, and chance by label permutation ----------------

def n_evaluation_units(task: Task) -> int:
    """How many units the main score averages over: test rows (classification), pairs (pair
    classification, STS) or rows (clustering)."""
    if task.type == "classification":
        return len(_classification_split(task)[1])
    if task.type in ("clustering", "pair_classification", "sts"):
        return len(task)
    raise NotImplementedError(f"task type {task.type!r} of {task.name!r} has no per-layer evaluation; "
                              f"supported: {sorted(MAIN_SCORES)}")


def evaluation_halves(task: Task, *, seed: int = MTEB_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Split a task's evaluation units into two fixed halves (for choosing on one, scoring on the other).

    The units are what the main score averages over: the **test rows** of a classification task
    (positions among them; the training examples stay shared, as MTEB draws them), the **pairs**
    of a pair-classification or STS task, the **rows** of a clustering task. A permutation drawn
    by ``numpy.random.default_rng(seed)`` puts its first ``ceil(n / 2)`` units in half 1 and the
    rest in half 2 (each returned sorted), so the same task always splits the same way.

    Returns
    -------
    tuple of two int arrays
        Indices of the units of half 1 and half 2; together they hold every unit once.

    Examples
    --------
    >>> import pandas as pd
    >>> from lrd.engine.tasks import Task
    >>> t = Task("t", "clustering", pd.DataFrame({"text": list("abcde"), "label": [0, 1, 0, 1, 0],
    ...                                           "split": "test"}), ("x", "y"), "doc")
    >>> a, b = evaluation_halves(t)
    >>> len(a), len(b), sorted([*a, *b]) == list(range(5))
    (3, 2, True)
    """
    n = n_evaluation_units(task)
    if n < 4:
        raise ValueError(f"task {task.name!r} has {n} evaluation units; two halves need at least 4")
    order = np.random.default_rng(seed).permutation(n)
    cut = (n + 1) // 2
    return np.sort(order[:cut]), np.sort(order[cut:])
