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


def _panel(n_enc: int, n_dec: int, tasks: int, *, separated: bool, seed: int = 0) -> pd.DataFrame:
    """Scores of n_enc encoders and n_dec decoders on several tasks: 'sep' separates the
    architectures on every task when ``separated``; 'noise' never relates to them."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        for m in range(n_enc + n_dec):
            enc = m < n_enc
            rows.append({"model": f"m{m}", "kind": "encoder" if enc else "decoder", "task": f"t{t}",
                         "sep": (0.0 if enc else 10.0) + rng.random() if separated else rng.random(),
                         "noise": rng.random(), "final": rng.random()})
    return pd.DataFrame(rows)


def test_separation_test_one_encoder_three_decoders_cannot_beat_chance():
    from lrd.stats import architecture_verdicts, separation_test

    df = _panel(1, 3, 2, separated=True)
    t = separation_test(df, ["sep"])
    assert t.exact and t.n_permutations == 4
    assert t.statistic == 2 and t.p_min == pytest.approx(0.25) and t.p_value >= 0.25
    arch, final = architecture_verdicts(df, ["sep"], ["final"])
    assert arch.word == "not testable" and final.word == "not testable"
    assert "1 encoders" in arch.evidence or "1 encoder" in arch.evidence


def test_separation_test_closed_form_two_against_two():
    from lrd.stats import separation_test

    # one task, distinct values: of the 6 ways to choose 2 of 4 models, 2 separate ({low two}, {high two})
    df = pd.DataFrame({"model": list("abcd"), "kind": ["e", "e", "d", "d"], "task": "x", "s": [0., 1, 2, 3]})
    t = separation_test(df, ["s"])
    assert t.statistic == 1 and t.p_value == pytest.approx(2 / 6) and t.p_min == pytest.approx(2 / 6)


def test_separation_test_is_significant_on_a_large_separated_panel_and_invariant_to_monotone_maps():
    from lrd.stats import architecture_verdicts, separation_test

    df = _panel(4, 6, 3, separated=True)
    t = separation_test(df, ["sep"])
    assert t.statistic == 3 and t.p_value == pytest.approx(1 / 210) == t.p_min
    df2 = df.assign(sep=np.exp(df["sep"]) * 3 - 1)  # strictly increasing: same orderings
    assert separation_test(df2, ["sep"]) == t
    arch, final = architecture_verdicts(df, ["sep", "noise"], ["final"])
    assert arch.word == "reproduced" and arch.p_value <= 0.05
    assert final.word == "reproduced"  # the final-layer noise does not separate beyond chance


def test_more_scores_tried_never_lower_the_p_value():
    from lrd.stats import separation_test

    df = _panel(3, 4, 2, separated=False, seed=3)
    one = separation_test(df, ["noise"])
    both = separation_test(df, ["noise", "final"])
    assert both.p_value >= one.p_value and both.n_comparisons == 2


def test_monte_carlo_separation_test_agrees_with_exact():
    from lrd.stats import separation_test

    df = _panel(3, 5, 2, separated=False, seed=1)
    exact = separation_test(df, ["noise", "final"])
    mc = separation_test(df, ["noise", "final"], max_exact=10, n_permutations=4000)
    assert exact.exact and not mc.exact
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.03)


def test_separation_test_validates_input():
    from lrd.stats import separation_test

    df = _panel(2, 2, 2, separated=True)
    with pytest.raises(ValueError, match="two groups"):
        separation_test(df.assign(kind="encoder"), ["sep"])
    with pytest.raises(ValueError, match="non-finite"):
        separation_test(df.assign(sep=np.nan), ["sep"])
    with pytest.raises(ValueError, match="incomplete"):
        separation_test(df.iloc[1:], ["sep"])


def test_task_verdict_uses_a_within_model_permutation_test():
    from lrd.stats import task_verdict

    rng = np.random.default_rng(0)
    rows = [{"model": f"m{m}", "task": f"t{t}", "s": 3.0 * t + 0.1 * rng.random(), "n": rng.random()}
            for m in range(5) for t in range(4)]
    df = pd.DataFrame(rows)
    strong = task_verdict(df, ["s", "n"], n_permutations=999)
    assert strong.word == "reproduced" and strong.p_value == pytest.approx(1 / 1000)
    assert str(strong).startswith("reproduced: the task explains 100% of the variance of s")
    weak = task_verdict(df, ["n"], n_permutations=999)
    assert weak.word == "not reproduced" and weak.p_value > 0.05
    assert task_verdict(df[df.task == "t0"], ["s"]).word == "not testable"
    tiny = task_verdict(df[df.model == "m0"].iloc[:2], ["s"], n_permutations=200)  # 2 orderings in all
    assert tiny.word == "not testable"


def test_verdict_word_rules():
    from lrd.stats import verdict_word

    assert verdict_word(0.25, 0.25) == "not testable"
    assert verdict_word(0.01, 0.005) == "reproduced"
    assert verdict_word(0.01, 0.005, complete=False) == "partly reproduced"
    assert verdict_word(0.2, 0.005) == "not reproduced"
    with pytest.raises(ValueError, match="p-values"):
        verdict_word(1.5, 0.1)


def test_profile_adjusted_nrs_equals_direct_computation():
    from lrd.metrics import nrs

    layers = np.random.default_rng(1).normal(size=(4, 50, 6))
    np.testing.assert_allclose(lrd_profile(layers, k=5).nrs_adjusted, nrs(layers, 5, adjusted=True))
