"""lrd.verdicts.selection's *_result functions: the judges' numbers on hand-computable panels, no English read."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts.selection import (LRD_SCORES, selection_llm_result, selection_result, selection_strongest_result,
                                    spearman_interval)


def _panel(n: int, kinds=None, sign=(1, 1, 1)) -> tuple[pd.DataFrame, pd.Series]:
    """``n`` models whose scores rank them as the downstream score (or backwards, ``sign`` -1)."""
    models = [f"m{i}" for i in range(n)]
    y = pd.Series(np.arange(n, dtype=float), index=models)
    scores = pd.DataFrame({m: s * y for m, s in zip(LRD_SCORES, sign)}, index=models)
    return (scores.assign(kind=kinds) if kinds is not None else scores), y


def test_selection_result_perfect_ranking_reaches_one_over_n_factorial():
    scores, y = _panel(5)
    r = selection_result(scores, y)
    assert r.p_value == pytest.approx(1 / math.factorial(5)) and r.p_min == pytest.approx(1 / 120)
    assert r.statistic == pytest.approx(1.0) and r.facts["rho"] == pytest.approx([1.0] * 3)
    assert r.ci == pytest.approx(spearman_interval(1.0, 5)) and r.p_against == 1.0
    assert r.facts["kinds"] is None and r.facts["exact"] and r.facts["n_orderings"] == 120


def test_selection_result_orders_only_within_kinds():
    scores, y = _panel(6, kinds=["encoder", "decoder"] * 3)
    r = selection_result(scores, y)
    assert r.p_min == pytest.approx(1 / (math.factorial(3) ** 2)) and r.p_value == pytest.approx(1 / 36)
    assert r.facts["kinds"] == [["encoder", 3], ["decoder", 3]] and r.facts["n_orderings"] == 36


def test_selection_result_one_score_backwards_binds_and_is_against():
    scores, y = _panel(5, sign=(1, 1, -1))
    r = selection_result(scores, y)
    assert r.facts["binding"] == 2 and r.statistic == pytest.approx(-1.0)
    # against: the largest -rho over the scores is 1 at the identity (the backward score) and at the
    # reversed ordering (the two forward scores): 2 of the 5! orderings
    assert r.p_value == 1.0 and r.p_against == pytest.approx(2 / 120)
    assert r.outcome == "contradicted"


def test_selection_strongest_result_sign_flip_minimum_and_too_few_models():
    scores, y = _panel(6, sign=(1, -1, -1))
    r = selection_strongest_result(scores, y)
    assert r.p_value == r.p_min == pytest.approx(1 / 2 ** 6)  # every model's contribution positive
    assert r.statistic == pytest.approx(2.0) and r.facts["margins"] == pytest.approx({m: 2.0 for m in LRD_SCORES[1:]})
    assert r.p_against == 1.0  # Bonferroni over the 2 reverse tests, capped
    # five models: the middle downstream rank contributes nothing, so p_min = 2^-4
    assert selection_strongest_result(*_panel(5, sign=(1, -1, -1))).p_min == pytest.approx(1 / 16)
    few = selection_strongest_result(*_panel(1))
    assert few.case == "too few" and few.p_value is None and few.outcome == "not testable"


def test_selection_llm_result_counts_sources_and_decoders_below_chance():
    scores, y = _panel(3)
    chance = pd.DataFrame({"model": ["m0", "m1", "x"], "task": "mmlu", "accuracy": [0.3, 0.6, 0.2],
                           "chance": 0.25, "p": [0.3, 0.001, 0.5], "above chance": [False, True, False]})
    r = selection_llm_result(scores, y, sources={"m0": "a-Instruct", "m1": "b.GGUF", "m2": "c-instruct-gguf"},
                             chance=chance)
    assert (r.facts["instruct"], r.facts["gguf"]) == (2, 2)
    assert r.facts["below_chance"] == [["m0", "mmlu", 0.3, 0.25, 0.3]]  # x is not a decoder of the panel
    assert r.p_min == pytest.approx(1 / 6) and r.outcome == "not testable"
    assert selection_llm_result(scores.iloc[:1], y).case == "too few"
