"""lrd.verdicts.selection: Spearman tests over models and the two selection verdicts, on known cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from lrd.verdicts.selection import (LRD_SCORES, judge_selection, judge_selection_llm, judge_selection_strongest,
                                    selection_table, spearman_difference_test, spearman_interval)
from lrd.verdicts.stats import spearman_permutation_test


def _enumerated_p(x, y):
    rho = spearmanr(x, y).statistic
    perms = [spearmanr(x, np.asarray(y)[list(p)]).statistic for p in itertools.permutations(range(len(y)))]
    return rho, np.mean(np.array(perms) >= rho - 1e-12)


@pytest.mark.parametrize("x, y", [([1.0, 2, 3, 4, 5], [2.0, 1, 4, 3, 5]),
                                  ([0.3, 0.1, 0.2, 0.9], [5.0, 6, 1, 2]),
                                  ([1.0, 1, 2, 3], [1.0, 2, 2, 4])])  # with ties
def test_p_value_equals_enumeration(x, y):
    rho, p = _enumerated_p(x, y)
    t = spearman_permutation_test(np.array(x), np.array(y))
    assert t.exact and t.statistic == pytest.approx(rho) and t.p_value == pytest.approx(p)


def test_p_min_by_panel_size():
    assert spearman_permutation_test(np.arange(5.0), np.arange(5.0)).p_min == pytest.approx(1 / 120)
    three = spearman_permutation_test(np.arange(3.0), np.arange(3.0))
    assert three.p_value == pytest.approx(1 / 6) and three.p_min == pytest.approx(1 / 6)


def _centred(x):
    r = np.argsort(np.argsort(x)).astype(float) - (len(x) - 1) / 2
    return r / np.sqrt((r ** 2).sum())


@pytest.mark.parametrize("a, b, y", [([3.0, 1, 4, 1.5, 5, 9], [2.0, 7, 1, 8, 2.5, 8.5], [1.0, 2, 3, 4, 5, 6]),
                                     ([0.2, 0.5, 0.1, 0.9, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5], [5.0, 3, 4, 1, 2])])
def test_difference_test_equals_enumerated_within_model_swaps(a, b, y):
    """p = share of the 2^n ways of swapping the two scores' ranks within models whose rho
    difference is at least the observed one (no ties, so ranks are plain orderings)."""
    ra, rb, ry = _centred(np.array(a)), _centred(np.array(b)), _centred(np.array(y))
    observed = (ra - rb) @ ry
    swaps = [((np.where(s, rb, ra) - np.where(s, ra, rb)) @ ry)
             for s in itertools.product((False, True), repeat=len(a))]
    t = spearman_difference_test(np.array(a), np.array(b), np.array(y))
    assert t.statistic * len(a) == pytest.approx(spearmanr(a, y).statistic - spearmanr(b, y).statistic)
    assert t.p_value == pytest.approx(np.mean(np.array(swaps) >= observed - 1e-12))


def test_difference_test_closed_forms():
    perfect = spearman_difference_test(np.arange(6.0), -np.arange(6.0), np.arange(6.0))
    assert perfect.p_value == perfect.p_min == pytest.approx(1 / 64)
    # five models: the middle downstream rank contributes nothing, so at best 1/16 > 0.05
    five = spearman_difference_test(np.arange(5.0), -np.arange(5.0), np.arange(5.0))
    assert five.p_min == pytest.approx(1 / 16)
    same = spearman_difference_test(np.arange(6.0), np.arange(6.0) ** 3, np.arange(6.0))  # same ranks
    assert same.p_value == 1.0


def test_spearman_interval_brackets_rho_and_widens_with_fewer_models():
    lo, hi = spearman_interval(0.5, 30)
    assert lo < 0.5 < hi
    lo5, hi5 = spearman_interval(0.5, 5)
    assert lo5 < lo and hi5 > hi
    assert spearman_interval(0.9, 3) == (-1.0, 1.0)
    with pytest.raises(ValueError, match="correlation"):
        spearman_interval(1.5, 10)


def _panel(n: int, seed: int = 0, *, noise=(0.05, 0.6, 0.6)):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    models = [f"m{i}" for i in range(n)]
    x = np.stack([y + s * rng.normal(size=n) for s in noise])
    return pd.DataFrame(x.T, index=models, columns=list(LRD_SCORES)), pd.Series(y, index=models)


def test_selection_is_the_intersection_union_of_per_score_ordering_tests():
    scores, down = _panel(7)  # d_0L nearly perfect, the other two positive but weaker
    v = judge_selection(scores, down)
    per = [spearman_permutation_test(scores[m].to_numpy(), down.to_numpy()).p_value for m in LRD_SCORES]
    assert v.p_value == pytest.approx(max(per))
    assert "intersection-union" in v.test


def test_all_scores_positive_takes_the_largest_per_score_p():
    """Two scores rank 7 models perfectly, the third weakly (rho 0.64): the old min-rho test under
    joint orderings gave p = 0.019 ("reproduced"), as it tests the global null; the third score's
    own p is 0.055, and "every score positive" cannot be stronger than its weakest part."""
    models = [f"m{i}" for i in range(7)]
    down = pd.Series(np.arange(7.0), index=models)
    scores = pd.DataFrame({"d_0L": np.arange(7.0), "mean NRS (adjusted)": np.arange(7.0),
                           "mean GFMI": [3, 0, 1, 2, 6, 4, 5.0]}, index=models)
    v = judge_selection(scores, down)
    assert v.p_value == pytest.approx(spearman_permutation_test(scores["mean GFMI"].to_numpy(), down.to_numpy()).p_value)
    assert v.p_value > 0.05 and v.outcome == "inconclusive" and "mean GFMI" in v.effect_label


def test_a_score_that_only_separates_the_kinds_does_not_select_models():
    """Encoders score higher downstream than LMs; the third score puts the encoders first but ranks
    the models backwards within each kind. Across kinds its rho is positive (the old test said
    "reproduced", p = 0.034); with orderings within kind it is reversed beyond chance."""
    models = [f"m{i}" for i in range(8)]
    down = pd.Series([5, 6, 7, 8, 1, 2, 3, 4.0], index=models)
    scores = pd.DataFrame({"d_0L": down.to_numpy(), "mean NRS (adjusted)": down.to_numpy(),
                           "mean GFMI": [8, 7, 6, 5, 4, 3, 2, 1.0], "kind": ["encoder"] * 4 + ["decoder"] * 4},
                          index=models)
    v = judge_selection(scores, down)
    assert v.outcome == "contradicted" and v.p_against == pytest.approx(1 / 288)  # 4! 4! orderings, the worst
    assert v.p_min == pytest.approx(1 / 576) and "within kind (encoder 4, decoder 4)" in v.evidence
    mixed = judge_selection(scores, down, stratify=None)  # the kinds mixed: confounded, rho positive
    assert mixed.outcome != "contradicted" and mixed.statistic > 0


def test_strongest_takes_the_largest_p_of_the_difference_tests():
    scores, down = _panel(40)
    v = judge_selection_strongest(scores, down)
    diffs = [spearman_difference_test(scores["d_0L"].to_numpy(), scores[m].to_numpy(), down.to_numpy())
             for m in LRD_SCORES[1:]]
    assert v.p_value == pytest.approx(max(d.p_value for d in diffs)) and v.outcome == "reproduced"
    # the same scores with d_0L no better than the others: all positive, yet d_0L is not the strongest
    alike, down = _panel(40, noise=(0.6, 0.6, 0.6))
    assert judge_selection(alike, down).outcome == "reproduced"
    tied = judge_selection_strongest(alike, down)
    assert tied.outcome == "inconclusive" and tied.p_value > 0.05


def test_five_perfect_models_cannot_show_the_strongest_score():
    models = list("abcde")
    down = pd.Series([0.1, 0.2, 0.3, 0.4, 0.5], index=models)
    scores = pd.DataFrame({"d_0L": [1, 2, 3, 4, 5.0], "mean NRS (adjusted)": [1, 2, 3, 5, 4.0],
                           "mean GFMI": [2, 1, 3, 4, 5.0]}, index=models)
    # the rank differences from d_0L sit on two models each: 2^-2 is the best the strongest part can do
    v = judge_selection_strongest(scores, down)
    assert v.outcome == "not testable" and v.p_min == pytest.approx(1 / 4)
    # all three positive: testable; the weakest score's own ordering test binds (5 of 120 orderings)
    assert judge_selection(scores, down).p_value == pytest.approx(5 / 120)
    table = selection_table(scores, down, list(LRD_SCORES))
    assert table.loc["d_0L", "rho"] == pytest.approx(1) and table.loc["d_0L", "p"] == pytest.approx(1 / 120)
    assert (table["n"] == 5).all()


def test_a_score_reversed_beyond_chance_contradicts():
    scores, down = _panel(8, noise=(0.01, 0.01, 0.01))
    v = judge_selection(scores.assign(**{"mean GFMI": -scores["mean GFMI"]}), down)
    assert v.outcome == "contradicted" and v.p_against <= 0.05


def test_too_few_models_or_missing_scores():
    scores, down = _panel(4)
    assert judge_selection(scores.iloc[:1], down).outcome == "not testable"
    with pytest.raises(ValueError, match="lacks the measures"):
        judge_selection(scores.drop(columns="d_0L"), down)
    with pytest.raises(ValueError, match="strongest"):
        judge_selection_strongest(scores, down, strongest="DiME")


def test_three_decoders_are_not_testable_and_the_note_names_the_panel():
    scores, down = _panel(3, noise=(0.01, 0.01, 0.01))
    sources = {"m0": "A/a-Instruct (GGUF Q4_1)", "m1": "B/b (base, GGUF Q4_K_M)", "m2": "C/c-Instruct (GGUF)"}
    chance = pd.DataFrame({"model": ["m0"], "task": ["copa"], "accuracy": [0.5], "chance": [0.5], "p": [0.6],
                           "above chance": [False]})
    v = judge_selection_llm(scores, down, sources=sources, chance=chance)
    assert v.outcome == "not testable" and v.p_min == pytest.approx(1 / 6)
    assert "2 of 3 instruct-tuned and 3 of 3 dequantised from GGUF" in v.note
    assert "m0 on copa" in v.note


def test_decoders_same_direction_on_a_large_panel():
    scores, down = _panel(7, noise=(0.01, 0.01, 0.01))
    v = judge_selection_llm(scores, down)
    assert v.outcome == "reproduced" and v.p_value == pytest.approx(1 / 5040)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="finite"):
        spearman_permutation_test(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="n_units"):
        spearman_permutation_test(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="same length"):
        spearman_difference_test(np.ones(3), np.ones(4), np.ones(3))


def test_stratified_orderings_are_every_within_stratum_permutation_once_and_read_only():
    """The orderings the selection verdicts' exact permutation tests enumerate (computed once per
    strata): each is a permutation that keeps every unit in its stratum, none twice, and there
    are as many as the product of the strata's factorials."""
    from lrd.verdicts.selection import stratified_orderings

    for strata in ([0] * 5, [0, 1, 0, 1, 1, 0, 0, 1], [2, 2, 0, 1, 1, 0]):
        s = np.asarray(strata)
        perms, exact = stratified_orderings(s)
        groups = [np.flatnonzero(s == g) for g in set(strata)]
        assert exact and len(perms) == np.prod([math.factorial(len(g)) for g in groups])
        assert len({tuple(p) for p in perms}) == len(perms)  # each ordering once
        assert (np.sort(perms, axis=1) == np.arange(len(s))).all()  # each a permutation
        assert (s[perms] == s).all()  # within strata only
        assert (perms[0] == np.arange(len(s))).all()  # the identity first (the observed ordering)
        with pytest.raises(ValueError):
            perms[0, 0] = 1  # shared by every call: read-only
    again, _ = stratified_orderings(np.array([0, 1, 0, 1, 1, 0, 0, 1]))
    assert again is stratified_orderings(np.array([0, 1, 0, 1, 1, 0, 0, 1]))[0]
