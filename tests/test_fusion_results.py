"""lrd.verdicts.fusion's *_result functions: the judges' numbers on hand-computable panels, no English read.

Each judge ``judge_x`` is ``wording.fusion.x(x_result(...))``; these tests check ``x_result``'s
:class:`lrd.verdicts.result.Result` (statistics, p-values, p_min, effect, case, facts) alone.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from lrd.verdicts.fusion import (EXISTING_APPROACHES, fc_result, few_shot_result, gain_result, mapping_result,
                                 parameters_result, size_scope)


def constant_scores(n_models: int, fc: float = 0.9, other: float = 0.5, methods=EXISTING_APPROACHES,
                    n_seeds: int = 2) -> pd.DataFrame:
    """One task per model, every seed the same: FC at ``fc``, every other method at ``other``."""
    rows = [{"model": f"m{i}", "task": "t", "method": m, "seed": s, "score": fc if m == "fc" else other}
            for i in range(n_models) for m in ("fc", *methods) for s in range(n_seeds)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n_models", [3, 5, 6])
def test_fc_above_every_approach_in_every_model_has_the_exact_sign_flip_p_of_one_over_two_to_the_n(n_models):
    r = fc_result(constant_scores(n_models), kinds=None)
    assert r.case == "tested"
    assert r.p_value == pytest.approx(0.5 ** n_models)   # every difference positive: 1 of 2^n sign patterns
    assert r.p_min == pytest.approx(0.5 ** n_models)
    assert r.statistic == pytest.approx(0.4) and r.effect == pytest.approx(40.0)   # 0.9 - 0.5, in points
    assert r.p_against == pytest.approx(1.0)   # no model below any approach
    assert [c[2:] for c in r.facts["comparisons"]] == [(n_models, n_models)] * len(EXISTING_APPROACHES)
    assert r.facts["n_models"] == n_models and r.facts["skipped"] == []
    assert r.per_model is None and r.outcome == ("reproduced" if 0.5 ** n_models <= 0.05 else "not testable")


def test_fc_with_one_model_below_is_not_shown_and_its_p_counts_the_patterns():
    scores = constant_scores(5)
    scores.loc[(scores["model"] == "m0") & (scores["method"] == "fc"), "score"] = 0.1   # m0: FC 0.4 below
    r = fc_result(scores, kinds=None)
    # sign flips of five differences of size 0.4: a mean at least the observed (4 - 1) x 0.4 / 5 needs at
    # most one negative: 5 + 1 of the 32 patterns
    assert r.p_value == pytest.approx(6 / 32)
    assert r.statistic == pytest.approx((4 * 0.4 - 0.4) / 5)


def test_fc_untestable_cases_carry_no_p_value_and_say_why_by_their_case():
    only_fc = constant_scores(4, methods=("mean",))
    r = fc_result(only_fc, kinds=None)
    assert (r.case, r.p_value, r.p_min, r.outcome) == ("not run", None, None, "not testable")
    assert r.facts["left_out"] == {}
    tiny = {f"m{i}": 1e6 for i in range(4)}   # every model below the paper's 14M parameters
    r = fc_result(constant_scores(4), base_params=tiny, kinds=None)
    assert (r.case, r.p_value) == ("no model counted", None)
    assert [m for m, _ in r.facts["left_out"]["outside"]] == ["m0", "m1", "m2", "m3"]


def test_size_scope_returns_the_models_left_out_and_why_as_data():
    frame = pd.DataFrame({"model": ["a", "b", "c"]})
    (kept,), left_out = size_scope("ilse.fc", {"a": 1e6, "b": 1e9, "c": 1e9}, frame, kinds=("decoder",),
                                   model_kinds={"a": "decoder", "b": "decoder", "c": "encoder"})
    assert kept["model"].tolist() == ["b"]
    assert left_out["outside"] == [("a", 1e6)] and left_out["other_kind"] == [("c", "encoder")]
    assert left_out["kinds"] == ("decoder",)
    assert size_scope("ilse.fc", None, frame)[1] == {}   # nothing left out: an empty (false) dict


def test_few_shot_without_a_full_data_reference_is_not_testable_and_names_it():
    full = constant_scores(3, methods=("dwatt",))   # no full-data last layer
    few = pd.DataFrame([{"model": f"m{i}", "task": "t", "shots": k, "method": "cayley", "seed": 0, "score": 0.8}
                        for i in range(3) for k in (8, 16)])
    r = few_shot_result(few, full, kinds=None)
    assert (r.case, r.p_value, r.p_min) == ("references not run", None, None)
    assert r.facts["missing"] == ["Last layer"]


def test_mapping_result_is_the_chi_square_bound_of_a_two_by_two_grid():
    # mappings differ by 2 points, no residual: MS_a = 4, MS_e = 0, sigma_a^2 = (4 - 0) / 2 = 2
    ablation = pd.DataFrame({"variant": ["random mapping 0"] * 2 + ["random mapping 1"] * 2, "seed": [0, 1, 0, 1],
                             "score": [0.01, 0.02, 0.03, 0.04]})
    r = mapping_result(ablation, paper_std_pp=1.5, n_draws=2000)
    x = 1 * 4.0 / (2 * 1.5 ** 2)   # (m - 1) MS_a / (n c^2)
    assert r.case == "tested"
    assert r.statistic == pytest.approx(x)
    assert r.p_value == pytest.approx(sp.chi2.cdf(x, 1))
    assert r.effect == pytest.approx(math.sqrt(2.0)) and r.p_min == 0.0
    assert r.facts["df"] == 1 and (r.facts["m"], r.facts["n_seeds"]) == (2, 2)


def test_mapping_result_with_one_mapping_is_not_testable():
    ablation = pd.DataFrame({"variant": ["random mapping 0"] * 3, "seed": [0, 1, 2], "score": [0.8, 0.81, 0.79]})
    r = mapping_result(ablation)
    assert (r.case, r.p_value, r.statistic, r.facts["m"]) == ("too few mappings", None, None, 1)


def test_gain_result_of_one_cell_is_its_gain_with_an_interval_around_it_and_no_p():
    items = pd.DataFrame({"model": "a", "task": "x", "method": np.repeat(["last", "cayley"], 4), "seed": 0,
                          "item": [0, 1, 2, 3] * 2, "correct": [0, 0, 1, 1, 1, 1, 1, 1]})
    r = gain_result(items, n_boot=50, kinds=None)
    # the Cayley-Encoder right on every item, the last layer on half: a gain of 50 points (the item
    # bootstrap's simultaneous interval around it)
    assert r.case == "described" and r.p_value is None and r.outcome == "not testable"
    assert r.effect == pytest.approx(50.0)
    assert r.ci[0] <= 50.0 <= r.ci[1]
    assert (r.facts["model"], r.facts["task"], r.facts["n_cells"], r.facts["n_seeds"]) == ("a", "x", 1, 1)


def test_gain_result_counts_the_paper_s_cells_at_or_above_its_number():
    r = gain_result(pd.DataFrame(columns=["model", "task", "method", "seed", "item", "correct"]), kinds=None)
    assert r.case == "no cells" and r.effect is None
    assert r.facts["paper_cells"] == 15 and 0 <= r.facts["n_paper_cells"] <= 15
    assert r.facts["paper_top"][2] == max(row[2] for row in r.facts["paper_rows"])


def test_parameters_result_holds_only_when_every_counted_share_is_within_the_paper_s():
    shares = pd.DataFrame({"model": ["small", "large"], "params": [3e5, 3e5], "base_params": [2.3e7, 1.5e9],
                           "share": [3e5 / 2.3e7, 3e5 / 1.5e9]})
    r = parameters_result(shares, paper_share=0.001, kinds=None)
    assert r.holds is False and r.outcome == "contradicted"   # 3e5 / 2.3e7 = 1.3% > 0.1%
    assert r.facts["panel_within"] == 1 and len(r.facts["panel"]) == 2
    r = parameters_result(shares, paper_share=0.02, kinds=None)
    assert r.holds is True and r.facts["panel_within"] == 2
