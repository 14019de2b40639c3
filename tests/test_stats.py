"""lrd.stats and lrd.metrics.profile: verdict helpers on known cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lrd.metrics import lrd_profile, model_scores, profile_rows
from lrd.stats import perfectly_separated, separation_table, variance_explained


def test_perfect_separation_cases():
    assert perfectly_separated([1, 2, 5, 6], ["a", "a", "b", "b"])
    assert perfectly_separated([5, 6, 1, 2], ["a", "a", "b", "b"])
    assert not perfectly_separated([1, 5, 2, 6], ["a", "a", "b", "b"])
    assert not perfectly_separated([1, 2, 2, 3], ["a", "a", "b", "b"])  # a tie overlaps
    with pytest.raises(ValueError, match="two groups"):
        perfectly_separated([1, 2, 3], ["a", "b", "c"])


def test_separation_table_counts_tasks():
    scores = pd.DataFrame({"kind": ["e", "d"] * 4, "task": ["t1", "t1", "t2", "t2"] * 2,
                           "x": [0, 1, 0, 1, 0.1, 0.9, 2, -1], "y": [0, 1, 5, 6, 1, 0, 2, 9]})
    table = separation_table(scores, ["x", "y"])
    assert table.loc["x", "t1"] and not table.loc["x", "t2"]
    assert table.loc["x", "separated on"] == 1 and table.loc["y", "separated on"] == 1


def test_variance_explained_closed_forms():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [1.0, 1.0, 3.0, 3.0]})
    assert variance_explained(df, "y", "g") == pytest.approx(1.0)
    df["y"] = [1.0, 3.0, 1.0, 3.0]
    assert variance_explained(df, "y", "g") == pytest.approx(0.0)
    df["y"] = [0.0, 2.0, 4.0, 6.0]  # group means 1 and 5, grand mean 3: 16 / 20
    assert variance_explained(df, "y", "g") == pytest.approx(0.8)


def test_profile_rows_and_scores_are_consistent():
    rng = np.random.default_rng(0)
    layers = np.cumsum(rng.normal(size=(5, 60, 8)), axis=0)  # a random walk over 4 blocks
    profile = lrd_profile(layers, k=5)
    rows = profile_rows(profile, model="m", task="t")
    counts = rows.groupby("measurement").size()
    assert counts["velocity"] == 4 and counts["curvature"] == 3 and counts["GFMI"] == 5
    assert rows["depth"].between(0, 1).all()
    scores = model_scores(profile)
    vel = rows.loc[rows.measurement == "velocity", "value"]
    assert scores["mean velocity"] == pytest.approx(vel.mean())
    assert rows.loc[rows.measurement == "GFMI", "value"].iloc[-1] == 1.0


def _separation(counts: dict[str, int]) -> pd.DataFrame:
    return pd.DataFrame({"separated on": counts})


@pytest.mark.parametrize("lrd, final, expected_arch, expected_final", [
    ({"d": 4, "v": 1}, {"r": 1}, "reproduced: d separates", "reproduced: final-layer statistics separate them on at most 1"),
    ({"d": 2, "v": 1}, {"r": 3}, "partly reproduced: the best LRD score (d) separates them on 2 of 4",
     "not reproduced on our panel: a final-layer statistic (r)"),
    ({"d": 0, "v": 0}, {"r": 2}, "not reproduced: no LRD score", "not testable"),
])
def test_architecture_verdicts(lrd, final, expected_arch, expected_final):
    from lrd.stats import architecture_verdicts

    arch, fin = architecture_verdicts(_separation({**lrd, **final}), list(lrd), list(final), 4)
    assert arch.startswith(expected_arch) and fin.startswith(expected_final)


def test_task_verdict_compares_task_with_model_share():
    from lrd.stats import task_verdict

    shares = pd.DataFrame({"task": {"a": 0.7, "b": 0.1}, "model": {"a": 0.2, "b": 0.8}})
    assert task_verdict(shares, 3).startswith("reproduced: the task explains 70% of the variance of a")
    assert task_verdict(shares, 1).startswith("not testable")
    shares["task"] = [0.1, 0.2]
    assert task_verdict(shares, 3).startswith("not reproduced")


def test_profile_adjusted_nrs_equals_direct_computation():
    from lrd.metrics import nrs

    layers = np.random.default_rng(1).normal(size=(4, 50, 6))
    np.testing.assert_allclose(lrd_profile(layers, k=5).nrs_adjusted, nrs(layers, 5, adjusted=True))
