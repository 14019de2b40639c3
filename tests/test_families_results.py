"""lrd.verdicts.families' *_result functions: the judges' numbers on hand-computable tables, no English read."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts.families import (architecture_result, complementarity_result, final_layer_result, task_result)


def _ordered_panel(n_encoders: int, n_decoders: int, tasks=("x", "y")) -> pd.DataFrame:
    """Every encoder below every decoder on every task (one score ``s``; a final-layer ``f`` that
    separates nothing)."""
    n = n_encoders + n_decoders
    models = [f"m{i}" for i in range(n)]
    return pd.DataFrame({"model": np.repeat(models, len(tasks)),
                         "kind": np.repeat(["encoder"] * n_encoders + ["decoder"] * n_decoders, len(tasks)),
                         "task": list(tasks) * n, "s": np.repeat(np.arange(n, dtype=float), len(tasks)),
                         "f": np.tile(np.arange(len(tasks), dtype=float), n)})


def test_architecture_result_counts_the_separating_relabellings_exactly():
    # 3 encoders below 4 decoders: of the C(7, 3) = 35 choices of the encoders, the 3 lowest and the 3
    # highest models separate every task (below or above), so p = 2/35 and p_min = 1/35
    r = architecture_result(_ordered_panel(3, 4), ["s"])
    assert r.case == "tested" and r.statistic == 2.0 and r.effect == 1.0
    assert r.p_value == pytest.approx(2 / 35) and r.p_min == pytest.approx(1 / 35)
    assert r.facts["test"]["n_permutations"] == math.comb(7, 3) and r.facts["top"] == "s"
    assert r.outcome == "inconclusive"  # 2/35 > 0.05 although 1/35 could have passed
    # 3 against 5: 2/56 = 1/28 passes
    wider = architecture_result(_ordered_panel(3, 5, ("x", "y", "z")), ["s"])
    assert wider.p_value == pytest.approx(2 / math.comb(8, 3)) and wider.outcome == "reproduced"


def test_architecture_and_final_layer_results_on_one_kind_are_not_testable_without_a_number():
    one_kind = _ordered_panel(4, 0)
    for result in (architecture_result(one_kind, ["s"]), final_layer_result(one_kind, ["s"], ["f"])):
        assert result.case == "not two kinds" and result.facts["counts"] == {"encoder": 4}
        assert result.p_value is None and result.p_min is None and result.outcome == "not testable"


def test_final_layer_result_difference_and_measure_splits():
    # the LRD score separates both tasks, the final-layer one neither: D = 2 of 2 tasks; the two
    # measures relabelled between the sets give C(2, 1) = 2 splits, so p_min = 1/2
    r = final_layer_result(_ordered_panel(3, 4), ["s"], ["f"])
    assert r.statistic == 2.0 and r.effect == 1.0
    assert (r.facts["top_count"], r.facts["final_top_count"]) == (2, 0)
    assert r.facts["swap"]["n"] == 2 and r.p_min == 0.5 and r.p_value == 0.5


def _correlations(table: np.ndarray) -> pd.DataFrame:
    """One task per model; ``table`` (models, 3 pairs) of rho."""
    n = len(table)
    return pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(n)], 3), "task": "t",
                         "pair": ["a-b", "a-c", "b-c"] * n, "rho": table.ravel()})


def test_complementarity_result_every_pair_below_the_margin_gives_the_exact_sign_flip_minimum():
    table = np.tile([0.1, 0.2, 0.3], (6, 1))  # six models, every pair far below 0.7
    r = complementarity_result(_correlations(table))
    assert r.p_value == r.p_min == 1 / 2 ** 6  # every difference from the margin negative: 1 of 2^6 sign patterns
    assert r.p_against == 1.0  # no pair above the margin at all
    assert r.statistic == pytest.approx(0.3) and r.facts["worst"] == "b-c"
    assert r.facts["means"] == pytest.approx([0.1, 0.2, 0.3]) and r.ci == pytest.approx((0.3, 0.3))
    assert r.per_model == (0, 6)  # one task per model: no per-model t-test can run (p = 1)
    assert r.outcome == "reproduced"


def test_complementarity_result_cases_without_a_complete_model_and_a_bad_margin():
    c = _correlations(np.full((4, 3), 0.2))
    assert complementarity_result(c[c["pair"] != "b-c"].assign(
        rho=lambda x: np.where((x["pair"] == "a-c"), np.nan, x["rho"]))).case == "no complete model"
    assert complementarity_result(c.iloc[:0]).case == "no pairs"
    with pytest.raises(ValueError):
        complementarity_result(c, margin=1.0)
    skipped = c.assign(rho=np.where(np.arange(len(c)) == 0, np.nan, c["rho"]))
    r = complementarity_result(skipped)
    assert r.facts["skipped"] == 1 and r.facts["n_models"] == 3  # the model with a constant curve drops out


def test_task_result_cases_carry_no_p_value():
    df = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 2), "task": ["x", "y"] * 3, "N": 50,
                       "s": [0.0, 1.0, 0.0, 1.0, 0.5, 1.5], "f": [0.0, 0.0, 1.0, 1.0, 0.0, 2.0]})
    one = task_result(df[df["task"] == "x"], ["s"], final=["f"], n_bootstrap=0)
    assert one.case == "one task" and one.facts["n_tasks"] == 1 and one.p_min is None
    missing = task_result(df, ["s"], final=["f", "g"], n_bootstrap=0)
    assert missing.case == "final missing" and missing.facts["missing"] == ["g"]
    # 3 models x 2 tasks, 1 statistic: 6 cells - 3 model effects - 1 slope = 2 >= 2 tasks, testable;
    # with 2 models it is 4 - 2 - 1 = 1 < 2
    assert task_result(df[df["model"] != "c"], ["s"], final=["f"], n_bootstrap=0).case == "no residual df"
    r = task_result(df, ["s"], final=["f"], n_bootstrap=0, n_permutations=100)
    assert r.case == "tested" and r.facts["plain_share"] == pytest.approx(1.0)  # the task moves s alike in every model
    assert r.p_min == pytest.approx(1 / math.factorial(2) ** 2)  # (T!)^(M-1) distinct shuffles
    with pytest.raises(ValueError):
        task_result(df.assign(N=[50, 60] * 3), ["s"], final=["f"])
