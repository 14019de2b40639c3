"""Model selection by Spearman correlation with exact permutation p-values."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from lrd.selection import selection_table, selection_verdict, spearman_permutation_test


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


def test_min_statistic_over_scores_is_joint_and_invariant_to_monotone_maps():
    y = np.array([1.0, 2, 3, 4, 5])
    x = np.array([[1.0, 2, 3, 4, 5], [5.0, 4, 3, 2, 1]])
    t = spearman_permutation_test(x, y, statistic="min")
    assert t.statistic == pytest.approx(-1) and t.p_value == 1.0  # one score reversed: "all positive" fails
    u = spearman_permutation_test(np.exp(x[:1]), y ** 3)
    assert u.statistic == pytest.approx(1) and u.p_value == pytest.approx(1 / 120)


def test_selection_table_and_verdict():
    models = list("abcde")
    down = pd.Series([0.1, 0.2, 0.3, 0.4, 0.5], index=models)
    scores = pd.DataFrame({"d_0L": [1, 2, 3, 4, 5.0], "NRS": [1, 2, 3, 5, 4.0], "GFMI": [2, 1, 3, 4, 5.0]},
                          index=models)
    table = selection_table(scores, down, ["d_0L", "NRS", "GFMI"])
    assert table.loc["d_0L", "rho"] == pytest.approx(1) and table.loc["d_0L", "p"] == pytest.approx(1 / 120)
    assert (table["n"] == 5).all()
    v = selection_verdict(scores, down, ["d_0L", "NRS", "GFMI"], strongest="d_0L")
    assert v.word == "reproduced" and "strongest d_0L" in v.evidence
    assert selection_verdict(scores, down, ["d_0L", "NRS", "GFMI"], strongest="NRS").word == "partly reproduced"
    few = selection_verdict(scores.iloc[:3], down, ["d_0L"], strongest="d_0L")
    assert few.word == "not testable" and "no result can have p below 0.17" in few.evidence


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="finite"):
        spearman_permutation_test(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="n_units"):
        spearman_permutation_test(np.ones(3), np.ones(4))
