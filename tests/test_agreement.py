"""Agreement statistics, pruning rules and verdicts: closed forms and invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from lrd.agreement import (bootstrap_rank_correlations, correlation_verdict, estimation_shares,
                           intact_accuracy_interval, pruning_sets, pruning_verdict, strength)
from lrd.relevance import (ENCODER_SCORER_DESCRIPTIONS, ENCODER_SCORERS, angular_distance, encoder_removal_states,
                           gromov_block, mteb_score, probe_accuracy)


def _correct(drops: list[int], n: int = 20) -> np.ndarray:
    """Correctness (L + 1, n): intact all right, block l loses drops[l-1] items."""
    c = np.ones((len(drops) + 1, n))
    for l, d in enumerate(drops, start=1):
        c[l, :d] = 0
    return c


def test_rank_correlation_is_one_for_the_same_order_and_minus_one_reversed():
    cos = np.array([0.1, 0.2, 0.3, 0.4])
    same = bootstrap_rank_correlations(_correct([1, 3, 6, 10]), cos, n_boot=50)
    rev = bootstrap_rank_correlations(_correct([10, 6, 3, 1]), cos, n_boot=50)
    assert same["spearman"] == pytest.approx(1) and same["kendall"] == pytest.approx(1)
    assert rev["spearman"] == pytest.approx(-1) and rev["kendall"] == pytest.approx(-1)
    assert same["spearman_lo"] <= same["spearman"] <= same["spearman_hi"]


def test_rank_correlation_is_invariant_to_item_order_and_monotone_maps():
    rng = np.random.default_rng(0)
    c = (rng.random((7, 30)) < 0.6).astype(float)
    cos = rng.random(6)
    a = bootstrap_rank_correlations(c, cos, n_boot=10)
    b = bootstrap_rank_correlations(c[:, rng.permutation(30)], np.exp(cos), n_boot=10)
    assert a["spearman"] == pytest.approx(b["spearman"]) and a["kendall"] == pytest.approx(b["kendall"])


def test_rank_correlation_validates_shapes():
    with pytest.raises(ValueError, match="L \\+ 1"):
        bootstrap_rank_correlations(np.ones((3, 5)), np.ones(3))


def test_estimation_shares_closed_form():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    assert estimation_shares(x, x) == {"over": 0.0, "under": 0.0, "layers_over": [], "layers_under": []}
    rev = estimation_shares(x, x[::-1], margin=1 / 3)
    assert rev["over"] == 0.25 and rev["layers_over"] == [4] and rev["layers_under"] == [1]


def test_strength_labels():
    assert [strength(r) for r in (0.1, -0.5, 0.9)] == ["weak", "moderate", "strong"]


def test_pruning_sets_remove_lowest_and_gromov_blocks():
    d = np.full((5, 5), 0.9)
    d[2, 4] = d[4, 2] = 0.1  # layers 2 -> 4 closest: blocks 3, 4
    plan = pruning_sets({"s": np.array([4.0, 1.0, 3.0, 2.0])}, [1, 2], distance=d, n_random=3)
    got = {(r, k): s for r, k, s in plan[plan["seed"] < 1][["rule", "k", "removed"]].itertuples(index=False)}
    assert got["s", 1] == (2,) and got["s", 2] == (2, 4) and got["angular (Gromov)", 2] == (3, 4)
    assert gromov_block(d, 2) == [3, 4]
    rand = plan[plan["rule"] == "random"]
    assert rand["seed"].nunique() == 3 and all(len(s) == k for s, k in zip(rand["removed"], rand["k"]))


def test_angular_distance_closed_form():
    x = np.zeros((3, 2, 2))
    x[0, :, 0] = 1.0
    x[1, :, 0] = 2.0  # same direction
    x[2, :, 1] = 1.0  # orthogonal
    d = angular_distance(x)
    np.testing.assert_allclose(d, [[0, 0, 0.5], [0, 0, 0.5], [0.5, 0.5, 0]], atol=1e-12)


def test_verdicts_read_their_tables():
    assert correlation_verdict(pd.DataFrame({"spearman": [0.2, 0.5]})).startswith("reproduced")
    assert correlation_verdict(pd.DataFrame({"spearman": [0.9, 0.8]})).startswith("not reproduced")
    curves = pd.DataFrame({"rule": ["accuracy (calibration)", "cosine (BI)"], "seed": -1, "k": 2, "acc": [0.7, 0.5]})
    assert pruning_verdict(curves).startswith("reproduced")
    assert pruning_verdict(curves.assign(acc=[0.4, 0.5])).startswith("not reproduced")
    # random orders spreading 0.3 make a 0.2 difference noise; spreading 0.1, they do not
    noisy = pd.concat([curves, pd.DataFrame({"rule": "random", "seed": [0, 1, 2], "k": 2, "acc": [0.3, 0.6, 0.45]})])
    assert pruning_verdict(noisy).startswith("not testable: the two rules differ by no more than random")
    tight = noisy.assign(acc=[0.7, 0.5, 0.5, 0.6, 0.55])
    assert pruning_verdict(tight).startswith("reproduced")


def test_correlation_verdict_is_not_testable_when_no_intact_accuracy_is_clearly_above_chance():
    # 16 items, chance 1/2: 11 of 16 right (69%) has an exact 95% interval reaching below 1/2; 15 of 16 does not
    assert intact_accuracy_interval(11, 16)[0] < 0.5 < intact_accuracy_interval(15, 16)[0]
    weak = {"spearman": [0.1, -0.2], "spearman_lo": [-0.3, -0.5], "spearman_hi": [0.4, 0.2], "n items": 16,
            "chance": [0.5, 0.25]}
    near_chance = correlation_verdict(pd.DataFrame({**weak, "acc (intact)": [11 / 16, 6 / 16]}))
    assert near_chance.startswith("not testable: no model-task pair has intact accuracy clearly above chance")
    assert "includes 0 in 2 of 2" in near_chance
    # one pair clearly above chance (15/16 vs 1/2), its interval inside (-0.7, 0.7): that pair alone decides
    one = correlation_verdict(pd.DataFrame({**weak, "acc (intact)": [15 / 16, 6 / 16]}))
    assert one.startswith("reproduced:") and "in all 1 model-task pairs" in one and "above chance" in one
    # above chance, but the intervals reach |rho| >= 0.7 without being clearly strong: the data cannot tell
    wide = correlation_verdict(pd.DataFrame({**weak, "spearman_lo": [-0.6, -0.8], "spearman_hi": [0.9, 0.5],
                                             "acc (intact)": [1.0, 1.0]}))
    assert wide.startswith("not testable: the 95% intervals")
    strong = correlation_verdict(pd.DataFrame({**weak, "spearman": [0.9, 0.85], "spearman_lo": [0.75, 0.72],
                                               "spearman_hi": [0.95, 0.9], "acc (intact)": [1.0, 1.0]}))
    assert strong.startswith("not reproduced")


def test_encoder_sweep_matches_removed_layers(tiny_encoder):
    from lrd.ablation import removed_layers
    from lrd.extract import pool

    texts = ["the cat sat on the mat", "a dog", "the model is very good and not bad"]
    pooled, cos = encoder_removal_states(tiny_encoder, texts, batch_size=2)
    tok = tiny_encoder.tokenizer
    for l in (0, 2):
        for i, t in enumerate(texts):
            enc = tok([t], return_tensors="pt")
            with removed_layers(tiny_encoder, [l] if l else []), torch.no_grad():
                want = pool(tiny_encoder.model(**enc).last_hidden_state, enc["attention_mask"], "mean")[0]
            np.testing.assert_allclose(pooled[l, i], want.numpy(), rtol=1e-4, atol=1e-5)
    assert cos.shape == (3,) and np.all((cos >= 0) & (cos <= 2))


def test_probe_accuracy_separable_and_invariant_to_rotation():
    from lrd.tasks import Task

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 40)
    x = rng.normal(size=(80, 5)) + 10 * y[:, None]
    frame = pd.DataFrame({"text": ["t"] * 80, "label": y, "split": np.tile(["train", "test"], 40)})
    task = Task("toy", "classification", frame, ("a", "b"), "test")
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    assert probe_accuracy(x, task) == 1.0 == probe_accuracy(x @ q, task)


def test_mteb_scorer_is_the_mid_layer_evaluation_of_one_layer():
    from lrd.evaluate import evaluate_layers
    from lrd.tasks import Task

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 40)
    x = rng.standard_normal((80, 6)) + 3.0 * y[:, None]  # separable: every protocol scores 1
    frame = pd.DataFrame({"text": [f"t{i}" for i in range(80)], "label": y, "split": ["train", "test"] * 40})
    task = Task("toy", "classification", frame, ("a", "b"), "test")
    assert set(ENCODER_SCORERS) == set(ENCODER_SCORER_DESCRIPTIONS)
    assert mteb_score(x, task) == evaluate_layers(x[None], task)[0] == 1.0
    noise = rng.standard_normal((80, 6))
    assert mteb_score(noise, task) == pytest.approx(evaluate_layers(noise[None], task)[0])
    assert mteb_score(noise, task) < 0.8
