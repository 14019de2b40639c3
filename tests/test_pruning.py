"""Prune rules, budget rounding and the tests against random pruning: closed forms."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from lrd.metrics.frenet import FrenetResult
from lrd.metrics.profile import LRDProfile
from lrd.pruning import (BUDGETS, PRUNE_RULES, best_median_verdict, budget_blocks, budget_pattern_verdict,
                         budget_plan, measurement_scores, only_rule_verdict, rule_summary, sign_flip_test, winners)


@pytest.mark.parametrize("n, want", [(30, [2, 3, 5, 6]), (18, [1, 2, 3, 4]), (24, [1, 2, 4, 5]),
                                     (12, [1, 1, 2, 2]), (6, [1, 1, 1, 1]), (2, [1, 1, 1, 1])])
def test_budgets_round_half_up_with_at_least_one_block(n, want):
    assert [budget_blocks(n, p) for p in BUDGETS] == want


def test_budget_rounding_half_up_not_to_even():
    assert budget_blocks(10, 0.25) == 3  # 2.5 -> 3 (Python's round would give 2)
    assert budget_blocks(10, 0.95) == 9  # 9.5 -> 10, capped at L - 1


def test_budget_rejects_bad_input():
    with pytest.raises(ValueError, match="fraction"):
        budget_blocks(10, 1.5)
    with pytest.raises(ValueError, match="at least 2 blocks"):
        budget_blocks(1, 0.1)


def _profile() -> LRDProfile:
    """L = 5 blocks with known signals.

    velocity into blocks 1..5: [0.5, 0.1, 0.3, 0.05, 0.9] -> Frenet order 4, 2, 3, 1, 5
    adjusted NRS across blocks: [0.2, 0.9, 0.4, 0.8, 0.1] -> NRS order (highest first) 2, 4, 3, 1, 5
    GFMI layers 0..5: [0.1, 0.2, 0.6, 0.62, 0.95, 1.0] -> |change| [0.1, 0.4, 0.02, 0.33, 0.05]
        -> GFMI order 3, 5, 1, 4, 2
    """
    fr = FrenetResult(2, np.array([0.5, 0.1, 0.3, 0.05, 0.9]), np.zeros(4), 1.0, 0.37, 0.0)
    nrs = np.array([0.2, 0.9, 0.4, 0.8, 0.1])
    return LRDProfile(fr, nrs, nrs, np.array([0.1, 0.2, 0.6, 0.62, 0.95, 1.0]))


RULE_TABLE = [  # rule, k, blocks removed
    ("Frenet (velocity)", 1, (4,)), ("Frenet (velocity)", 2, (2, 4)), ("Frenet (velocity)", 3, (2, 3, 4)),
    ("NRS", 1, (2,)), ("NRS", 2, (2, 4)), ("NRS", 3, (2, 3, 4)),
    ("GFMI", 1, (3,)), ("GFMI", 2, (3, 5)), ("GFMI", 3, (1, 3, 5)),
    ("cosine (BI)", 1, (5,)), ("cosine (BI)", 2, (1, 5)), ("cosine (BI)", 3, (1, 2, 5)),
    ("angular (Gromov)", 1, (2,)), ("angular (Gromov)", 2, (2, 3)), ("angular (Gromov)", 3, (1, 2, 3)),
]


@pytest.mark.parametrize("rule, k, removed", RULE_TABLE)
def test_each_rule_removes_the_blocks_it_says(rule, k, removed):
    scores = {**measurement_scores(_profile()), "cosine (BI)": np.array([0.2, 0.3, 0.4, 0.5, 0.1])}
    d = np.full((6, 6), 0.9)
    for a, b, v in ((1, 2, 0.1), (1, 3, 0.2), (0, 3, 0.3)):  # closest: 1->2 (k=1), 1->3 (k=2), 0->3 (k=3)
        d[a, b] = d[b, a] = v
    fractions = {1: 0.2, 2: 0.4, 3: 0.6}  # of L = 5 blocks
    plan = budget_plan(scores, 5, [fractions[k]], distance=d, n_random=0)
    row = plan[plan["rule"] == rule]
    assert len(row) == 1 and row["k"].iloc[0] == k and row["removed"].iloc[0] == removed


def test_random_orders_are_nested_distinct_and_every_rule_is_described():
    plan = budget_plan({"GFMI": np.arange(30.0)}, 30, BUDGETS, n_random=5)
    rand = plan[plan["rule"] == "random"]
    assert rand["seed"].nunique() == 5 and set(rand["k"]) == {2, 3, 5, 6}
    for _, part in rand.groupby("seed"):
        sets = [set(s) for s in part.sort_values("k")["removed"]]
        assert all(a < b for a, b in zip(sets, sets[1:]))  # nested budgets
    assert len({r for r in rand.loc[rand["k"] == 6, "removed"]}) > 1
    assert set(plan["rule"]) <= set(PRUNE_RULES)


def test_budget_plan_checks_score_lengths():
    with pytest.raises(ValueError, match="one value per block"):
        budget_plan({"GFMI": np.ones(4)}, 5)


def test_sign_flip_p_value_equals_enumeration():
    d = np.array([0.3, -0.1, 0.2, 0.05, -0.02])
    flips = np.array([(np.array(s) * d).mean() for s in itertools.product((1, -1), repeat=5)])
    t = sign_flip_test(d)
    assert t.exact and t.p_value == pytest.approx((flips >= d.mean() - 1e-12).mean())
    assert t.p_min == pytest.approx(1 / 32)
    assert sign_flip_test(-np.abs(d)).p_value == 1.0


def _changes(gfmi_delta: float, nrs_delta: float, n_pairs: int = 6) -> pd.DataFrame:
    """Random changes -0.2 +- small per seed; GFMI and NRS shifted from random by fixed deltas."""
    rows = []
    for p in range(n_pairs):
        for f in (0.15, 0.2):
            rand = [-0.2 + 0.01 * s for s in range(5)]
            rows += [{"model": f"m{p}", "task": "t", "rule": "random", "seed": s, "fraction": f, "change": v}
                     for s, v in enumerate(rand)]
            base = np.mean(rand)
            rows += [{"model": f"m{p}", "task": "t", "rule": "GFMI", "seed": -1, "fraction": f,
                      "change": base + gfmi_delta + 0.001 * p},
                     {"model": f"m{p}", "task": "t", "rule": "NRS", "seed": -1, "fraction": f,
                      "change": base + nrs_delta - 0.001 * p},
                     {"model": f"m{p}", "task": "t", "rule": "Frenet (velocity)", "seed": -1, "fraction": f,
                      "change": base - 0.1}]
    return pd.DataFrame(rows)


def test_summary_and_verdicts_on_a_constructed_table():
    s = rule_summary(_changes(0.15, -0.05))
    g = s[s["rule"] == "GFMI"]
    assert g["beats random"].all() and (g["p"] == 1 / 64).all() and g["above random spread"].all()
    assert not s.loc[s["rule"] == "NRS", "beats random"].any()
    assert (s["random lo"] <= s["random median"]).all() and (s["random median"] <= s["random hi"]).all()
    assert only_rule_verdict(s).word == "reproduced"
    assert best_median_verdict(s).word == "reproduced"
    assert budget_pattern_verdict(s, "NRS", beats_at=[]).word == "reproduced"
    assert budget_pattern_verdict(s, "GFMI", beats_at=[0.15]).word == "partly reproduced"
    assert set(winners(s)["winner"]) == {"GFMI"}
    both = rule_summary(_changes(0.15, 0.15))
    assert only_rule_verdict(both).word == "partly reproduced"
    assert best_median_verdict(both).word == "not testable"  # margin within random's spread
    worse = rule_summary(_changes(-0.15, 0.15))
    assert only_rule_verdict(worse).word == "not reproduced" and best_median_verdict(worse).word == "not reproduced"


def test_verdicts_not_testable_with_too_few_pairs():
    s = rule_summary(_changes(0.15, -0.05, n_pairs=3))  # 2^3 sign patterns: p >= 1/8
    assert only_rule_verdict(s).word == "not testable"
    assert budget_pattern_verdict(s, "NRS", beats_at=[]).word == "not testable"


def test_summary_by_kind_keeps_groups_apart():
    c = pd.concat([_changes(0.15, -0.05).assign(kind="encoder"), _changes(-0.15, 0.15).assign(kind="decoder")])
    s = rule_summary(c, by="kind")
    w = winners(s, by="kind").set_index(["kind", "fraction"])["winner"]
    assert (w.loc["encoder"] == "GFMI").all() and (w.loc["decoder"] == "NRS").all()


def test_encoder_removal_sets_match_removed_layers(tiny_encoder):
    import torch

    from lrd.ablation import removed_layers
    from lrd.extract import pool
    from lrd.relevance import encoder_removal_states

    texts = ["the cat sat on the mat", "a dog", "the model is very good and not bad"]
    sets = [[2, 3], [1, 3], []]
    pooled, _ = encoder_removal_states(tiny_encoder, texts, sets=sets, batch_size=2)
    tok = tiny_encoder.tokenizer
    for row, s in enumerate(sets, start=1):
        for i, t in enumerate(texts):
            enc = tok([t], return_tensors="pt")
            with removed_layers(tiny_encoder, s), torch.no_grad():
                want = pool(tiny_encoder.model(**enc).last_hidden_state, enc["attention_mask"], "mean")[0]
            np.testing.assert_allclose(pooled[row, i], want.numpy(), rtol=1e-4, atol=1e-5)
