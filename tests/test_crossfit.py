"""lrd.methods.crossfit: the mid-layer chapter's cross-fitted halves (each half fits on its own rows)
and each prompt's entropy curve."""

from __future__ import annotations

import numpy as np
import pytest

from lrd.engine.tasks import Task
from lrd.methods.crossfit import (evaluate_layer_halves, fitting_rows, layer_scores, prompt_entropy_rows,
                                  training_halves)
from lrd.methods.evaluate import evaluate_layers, evaluation_halves
from lrd.methods.suite import token_rows
from test_evaluate import _label_blind_task, synthetic_task


def test_the_full_score_is_mteb_s_whatever_the_halves_do():
    task, layers = synthetic_task(n=200, n_classes=2, signal=0.6)
    done = evaluate_layer_halves(layers, task, n_experiments=3)
    assert done.score == pytest.approx(evaluate_layers(layers, task, n_experiments=3))


@pytest.mark.parametrize("kind", ["classification", "clustering"])
def test_halves_are_cross_fitted(kind):
    """Each half's score is a function of its own rows alone: replacing the states of every
    row half 1 does not fit or score on (half 2's test rows and training rows, or rows) leaves
    half 1's score exactly as it was, and moves half 2's. With the old evaluator both halves
    were scored by classifiers trained on every training row and by k-means on every row, so
    the fits' noise was shared by the halves (issue 31: 11% false "reproduced" for skean.gain
    with one point of shared noise)."""
    if kind == "classification":
        task, layers = synthetic_task(n=160, n_classes=2, signal=0.6)
        options = {"n_experiments": 3}
    else:
        task = _label_blind_task("clustering", n=120, n_labels=3)
        layers = np.random.default_rng(5).standard_normal((2, len(task.texts), 6))
        layers[1, :, 0] += 3 * task.labels
        options = {"n_bootstrap": 3}
    first, second = fitting_rows(task)
    assert not set(first) & set(second) and len(first) + len(second) == len(task)
    other = layers.copy()
    other[:, second] = np.random.default_rng(9).standard_normal(other[:, second].shape)
    before, after = (evaluate_layer_halves(x, task, **options).halves for x in (layers, other))
    np.testing.assert_array_equal(after[0], before[0])
    assert not np.array_equal(after[1], before[1])


def test_training_halves_keep_every_label():
    task, _ = synthetic_task(n=60, n_classes=3)
    a, b = training_halves(task)
    train = np.flatnonzero(task.frame["split"] == "train")
    assert np.array_equal(np.sort(np.r_[a, b]), train) and not set(a) & set(b)
    for half in (a, b):
        assert set(task.labels[half]) == set(task.labels[train])


def test_crossfit_halves_are_scored_on_their_own_pairs():
    """Pairs fit nothing: each half is scored on its own pairs. STS where the human score follows
    the cosine on half 1 and its opposite on half 2."""
    task = _label_blind_task("sts", n=40)
    layers = np.random.default_rng(3).standard_normal((2, len(task.texts), 8))
    assert fitting_rows(task) is None
    where = {t: i for i, t in enumerate(task.texts)}
    vectors = [(layers[1, where[u]], layers[1, where[v]]) for u, v in zip(*task.pairs)]
    sims = np.array([np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v) for u, v in vectors])
    a, b = evaluation_halves(task)
    score = sims.copy()
    score[b] = -sims[b]
    task = Task("t", "sts", task.frame.assign(score=score), None, "test")
    done = evaluate_layer_halves(layers, task)
    assert done.halves.shape == (2, 2) and done.halves[:, 1] == pytest.approx([1.0, -1.0])
    assert done.score == pytest.approx(evaluate_layers(layers, task))


def test_crossfit_layer_scores_rows():
    task, layers = synthetic_task(n=120)
    rows = layer_scores(layers, task, model="m", halves=True, n_permutations=2, n_experiments=2)
    assert set(rows["measurement"]) == {"score", "score half 1", "score half 2", "chance", "chance max"}
    assert (rows.groupby("measurement").size() == 2).all()
    assert set(layer_scores(layers, task, model="m", n_experiments=2)["measurement"]) == {"score"}
    with pytest.raises(ValueError, match="n_permutations"):
        evaluate_layer_halves(layers, task, n_permutations=-1)


def test_random_layer_scores_at_chance_and_signal_above():
    task, layers = synthetic_task(n=600, n_classes=3)
    done = evaluate_layer_halves(layers, task, n_experiments=4, n_permutations=2)
    assert abs(done.score[0] - 1 / 3) < 0.06  # 4 experiments x ~300 test rows
    assert abs(done.chance.mean() - 1 / 3) < 0.05  # permuted labels: 1 / n_classes for a balanced classifier
    assert done.score[1] > 0.7 > done.chance.max()


@pytest.mark.parametrize("kind, n_labels, low", [("sts", 0, -0.1), ("pair_classification", 2, 0.4),
                                                 ("clustering", 4, 0.0), ("clustering", 57, 0.5)])
def test_random_layer_scores_at_its_permutation_chance(kind, n_labels, low):
    """A label-blind partition of 300 rows into 57 clusters has a V-measure near 0.7, not 0: chance
    is what the same evaluator scores on the same rows with the labels shuffled."""
    task = _label_blind_task(kind, n_labels=n_labels)
    layers = np.random.default_rng(2).standard_normal((1, len(task.texts), 24))
    done = evaluate_layer_halves(layers, task, n_bootstrap=3, n_permutations=4)
    assert done.chance.shape == (4, 1) and done.halves.shape == (2, 1)
    assert abs(done.score[0] - done.chance.mean()) < 0.1
    assert done.chance.mean() > low


def test_prompt_entropy_rows_average_to_the_prompt_entropy():
    """Each prompt's curve (the per-model unit of the valley test); their mean is token_rows'
    prompt entropy, and prompts shorter than 3 tokens are left out as there."""
    rng = np.random.default_rng(0)
    tokens = [rng.normal(size=(4, t, 8)) for t in (5, 2, 7, 3)]
    rows = prompt_entropy_rows(tokens, model="m", task="t")
    assert sorted(rows["prompt"].unique()) == [0, 2, 3] and (rows.groupby("prompt").size() == 4).all()
    mean = rows.groupby("layer")["value"].mean().to_numpy()
    reference = token_rows(tokens, model="m", task="t")
    expected = reference[reference["measurement"] == "prompt entropy"].sort_values("layer")["value"].to_numpy()
    np.testing.assert_allclose(mean, expected, rtol=1e-10)
