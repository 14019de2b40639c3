"""lrd.verdicts: the one verdict path (claims table, record, outcome rule, tests, null calibration)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from lrd.book.glue import Glue
from lrd.verdicts import CLAIMS, NULL_MODELS, OUTCOMES, Verdict, calibration, decide
from lrd.verdicts.calibration import UNTESTABLE_BY_DESIGN, monte_carlo_bound, null_calibration
from lrd.verdicts.specifications import SPECIFICATIONS
from lrd.verdicts.stats import (equivalence_sign_flip_test, mean_interval, models_for_sign_flip, perfectly_separated,
                                separation_table, separation_test, sign_flip_max_test, sign_flip_min_p_test,
                                sign_flip_test, smallest_two_group_panel, spearman_permutation_test, two_group_p_min,
                                two_group_permutation_test, variance_explained, within_block_permutation_test)

# ---- the outcome rule ----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, outcome", [
    (dict(p_value=1 / 32, p_min=1 / 32), "reproduced"),
    (dict(p_value=0.05, p_min=1 / 32), "reproduced"),
    (dict(p_value=0.06, p_min=1 / 32), "inconclusive"),
    (dict(p_value=0.5, p_against=0.03, p_min=1 / 32), "contradicted"),
    (dict(p_value=0.5, p_against=0.2, p_min=1 / 32), "inconclusive"),
    (dict(p_value=0.1, p_min=0.1), "not testable"),
    # issue 48: "reproduced" unattainable (p_min > alpha), so no "contradicted" either
    (dict(p_value=0.5, p_against=0.04, p_min=0.1), "not testable"),
    (dict(p_value=0.5, p_against=1 / 32, p_min=1 / 16), "not testable"),
    (dict(p_value=0.5, p_against=0.05, p_min=0.05), "contradicted"),
    (dict(), "not testable"),
])
def test_decide_test_outcomes(kwargs, outcome):
    assert decide("test", **kwargs) == outcome


def test_decide_demonstrations_are_never_reproduced():
    assert decide("demonstration", holds=True) == "demonstrated"
    assert decide("demonstration", holds=False) == "contradicted"
    with pytest.raises(ValueError, match="holds"):
        decide("demonstration", p_value=0.01, p_min=0.01, holds=True)
    with pytest.raises(ValueError, match="holds"):
        decide("demonstration")


@pytest.mark.parametrize("kwargs, match", [
    (dict(p_value=0.01), "p_min"),
    (dict(p_value=0.01, p_min=0.1), "inconsistent"),
    (dict(p_value=1.5, p_min=0.1), "probability"),
    (dict(p_value=float("nan"), p_min=0.1), "probability"),
    (dict(p_value=0.2, p_min=0.01, holds=True), "demonstrations"),
])
def test_decide_rejects_inconsistent_numbers(kwargs, match):
    with pytest.raises(ValueError, match=match):
        decide("test", **kwargs)


def test_outcomes_cover_what_decide_returns():
    seen = {decide("test", p_value=p, p_against=a, p_min=m) for p, a, m in
            itertools.product([0.01, 0.5], [None, 0.01], [0.01, 0.2]) if p >= m}
    seen |= {decide("test"), decide("demonstration", holds=True), decide("demonstration", holds=False)}
    assert seen == set(OUTCOMES)


def test_outcome_rules_are_the_rules_decide_applies():
    """The words the book prints for each outcome (intro, via ``{lrd-outcomes}``) name the numbers
    :func:`decide` uses: one case per clause, including the two a reader would not guess (no
    contradiction on a panel that cannot reach 0.05 in the paper's direction; a failed demonstration)."""
    from lrd.verdicts.record import OUTCOME_RULES

    assert list(OUTCOME_RULES) == list(OUTCOMES)
    rules = OUTCOME_RULES
    assert "paper's direction" in rules["reproduced"] and decide("test", p_value=0.05, p_min=0.01) == "reproduced"
    assert "could also have said reproduced" in rules["contradicted"]  # issue 48: both outcomes open
    assert decide("test", p_value=0.5, p_against=0.01, p_min=0.05) == "contradicted"
    assert "even where its test against the claim" in rules["not testable"]
    assert decide("test", p_value=0.5, p_against=0.01, p_min=0.25) == "not testable"
    assert "demonstration" in rules["contradicted"] and decide("demonstration", holds=False) == "contradicted"
    assert "at most 0.05" in rules["inconclusive"] and decide("test", p_value=0.3, p_min=0.05) == "inconclusive"
    assert "above 0.05" in rules["not testable"] and decide("test", p_value=0.3, p_min=0.0501) == "not testable"
    assert "could not be run" in rules["not testable"] and decide("test") == "not testable"


def test_intro_renders_the_outcome_rules_and_the_dashboard_states_multiplicity():
    from pathlib import Path

    from lrd.book.sphinxext import multiplicity_markdown, outcomes_markdown

    intro = (Path(__file__).resolve().parent.parent / "book" / "intro.md").read_text()
    assert "```{lrd-outcomes}" in intro and "`reproduced`: the test" not in intro  # no hand-typed copy
    assert all(f"`{o}`" in outcomes_markdown() for o in OUTCOMES)
    rows = [Verdict("skean.gain", "test", "x", test="t", p_value=0.03, p_min=0.004).record(),
            Verdict("skean.choice", "test", "x", test="t", p_value=0.04, p_min=0.004).record(),
            Verdict("lrd.selection", "test", "x", test="t", p_value=0.2, p_min=0.1).record()]  # cannot reach 0.05
    text = multiplicity_markdown(rows)
    assert "2 claims were tested" in text and "about 0.1 of them" in text
    assert '0 of the 2 "reproduced" keep an adjusted p ≤ 0.05 (`skean.gain` 0.06; `skean.choice` 0.06)' in text


def test_holm_closed_form_and_family_wise_error():
    from lrd.verdicts.stats import holm

    np.testing.assert_allclose(holm([0.01, 0.02, 0.03, 0.5]), [0.04, 0.06, 0.06, 0.5])
    np.testing.assert_allclose(holm([0.9, 0.9]), [1.0, 1.0])
    # 20 independent true nulls: any Holm-adjusted p <= 0.05 in at most ~5% of families
    rng = np.random.default_rng(0)
    rejected = np.mean([(holm(rng.uniform(size=20)) <= 0.05).any() for _ in range(4000)])
    assert rejected <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 4000)


# ---- the record -------------------------------------------------------------------------------------


def test_verdict_outcome_is_computed_and_checked_against_the_claims_table():
    v = Verdict("skean.gain", "test", "gain in 5 of 5 models", test="sign-flip", statistic=0.04, p_value=1 / 32,
                p_min=1 / 32, effect=0.04, ci=(0.01, 0.07))
    assert v.outcome == "reproduced" and str(v).startswith("reproduced: ")
    with pytest.raises(AttributeError):
        v.outcome = "reproduced"  # a property: no hand-written outcome
    with pytest.raises(KeyError, match="unknown claim"):
        Verdict("skean.nothing", "test", "x")
    with pytest.raises(ValueError, match="demonstration"):
        Verdict("cosine.theory", "test", "x", test="t", p_value=0.01, p_min=0.01)
    with pytest.raises(ValueError, match="names its test"):
        Verdict("skean.gain", "test", "x", p_value=0.01, p_min=0.01)
    with pytest.raises(ValueError, match="evidence"):
        Verdict("skean.gain", "test", " ")
    assert Verdict.untestable("cosine.olmo", "OLMo is not in the panel").outcome == "not testable"


def test_glue_records_verdicts_and_refuses_anything_else(tmp_path):
    glue = Glue("mid_layer", record_only=True)
    v = Verdict("skean.gain", "test", "gain", test="sign-flip", p_value=1 / 32, p_min=1 / 32, effect=0.0412345,
                ci=(0.01, 0.07))
    key = glue.verdict(v, section="best-layer")
    assert key == "mid_layer-verdict_gain" and glue.values[key] == "reproduced: gain"
    for bad in ("reproduced: it holds", "reproduced", {"outcome": "reproduced"}):
        with pytest.raises(TypeError, match="computed"):
            glue.verdict(bad)
    with pytest.raises(ValueError, match="twice"):
        glue.verdict(v)
    with pytest.raises(ValueError, match="judged in chapter"):
        glue.verdict(Verdict.untestable("cosine.olmo", "absent"))
    record = json.loads(glue.save(tmp_path).read_text())["verdicts"][0]
    assert record["outcome"] == "reproduced" and record["claim"] == "skean.gain" and record["section"] == "best-layer"
    assert record["effect"] == 0.0412 and record["ci"] == [0.01, 0.07]  # rounded like every glued value
    assert record["paper"] == CLAIMS["skean.gain"].paper.key and record["label"] == CLAIMS["skean.gain"].label


def test_claims_table_is_complete_and_consistent():
    from lrd import book

    chapters = set(book.chapters())
    for c in CLAIMS.values():
        assert c.chapter in chapters, c.id
        assert c.kind in ("test", "demonstration")
        assert c.label and len(c.label) <= 60, c.id  # one scannable dashboard line
        if c.kind == "test":  # its decisive panel is computed from its power model, else named in words
            null = SPECIFICATIONS[c.id].null if c.id in SPECIFICATIONS else None
            planned = null is not None and null.power_effect is not None
            assert planned != bool(c.panel), f"{c.id}: a planned test's panel is computed, never typed"


# ---- the tests behind the verdicts ----------------------------------------------------------------


def _brute_force_sign_flip(d):
    means = [np.mean(np.array(s) * d) for s in itertools.product((1, -1), repeat=len(d))]
    return np.mean(np.array(means) >= d.mean() - 1e-12)


@pytest.mark.parametrize("d", [[0.3, -0.1, 0.2, 0.05, 0.4], [1.0, 2.0, 3.0], [-1.0, -2.0, 0.5, 0.1]])
def test_sign_flip_equals_brute_force(d):
    d = np.array(d)
    assert sign_flip_test(d).p_value == pytest.approx(_brute_force_sign_flip(d))


def test_sign_flip_monte_carlo_is_close_to_exact():
    d = np.random.default_rng(1).normal(0.2, 1.0, size=12)
    exact = sign_flip_test(d).p_value
    mc = sign_flip_test(d, max_exact=1, n_permutations=20000, seed=3)
    assert not mc.exact and abs(mc.p_value - exact) < 0.02


def test_equivalence_test_is_two_one_sided_tests():
    d = np.array([0.1, -0.2, 0.05, 0.15, -0.05])
    t = equivalence_sign_flip_test(d, 1.0)
    assert t.p_value == max(sign_flip_test(1.0 - d).p_value, sign_flip_test(d + 1.0).p_value) == 1 / 32
    assert equivalence_sign_flip_test(d, 0.1).p_value > 0.05  # some differences lie outside +-0.1
    one_sided = equivalence_sign_flip_test(np.array([5.0, 6, 7, 8, 9]), 10.0, lower=-math.inf)
    assert one_sided.p_value == 1 / 32


def test_spearman_permutation_exact_p_is_the_share_of_orderings():
    x, y = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
    rho = sp.spearmanr(x, y).statistic
    null = [sp.spearmanr(x, y[list(p)]).statistic for p in itertools.permutations(range(4))]
    t = spearman_permutation_test(x, y)
    assert t.statistic == pytest.approx(rho) and t.p_value == pytest.approx(np.mean(np.array(null) >= rho - 1e-12))
    assert t.p_min == pytest.approx(1 / 24)


def test_mean_interval_is_the_student_t_interval():
    x = np.array([0.1, 0.4, 0.2, 0.3, 0.25])
    lo, hi = mean_interval(x)
    ref = sp.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sp.sem(x))
    assert (lo, hi) == pytest.approx(ref)


def test_accuracy_permutation_test_measures_chance_from_the_labels():
    """Always answering the majority gold position is exactly at chance; a perfect model on
    balanced labels is above it with p at the Monte Carlo floor; p is the share of permuted
    golds scoring at least as well (brute force over all distinct gold orderings of 6 items)."""
    from lrd.verdicts.stats import accuracy_permutation_test

    majority = accuracy_permutation_test(np.zeros(8, int), np.array([0, 0, 0, 1, 0, 0, 0, 1]))
    assert majority.statistic == 0.75 and majority.p_value == 1.0 and majority.p_min == 1.0
    perfect = accuracy_permutation_test(np.array([0, 1] * 10), np.array([0, 1] * 10), n_permutations=2000)
    assert perfect.p_value == perfect.p_min == pytest.approx(1 / 2001)
    pred, gold = np.array([0, 1, 1, 0, 1, 0]), np.array([0, 1, 0, 0, 1, 1])
    orderings = {p for p in itertools.permutations(gold)}  # each distinct ordering equally likely
    exact = np.mean([np.mean(np.array(o) == pred) >= np.mean(pred == gold) for o in orderings])
    assert accuracy_permutation_test(pred, gold, n_permutations=20000).p_value == pytest.approx(exact, abs=0.01)
    with pytest.raises(ValueError, match="same non-empty"):
        accuracy_permutation_test(np.zeros(3, int), np.zeros(4, int))


def test_panel_sizes_for_alpha():
    assert models_for_sign_flip(0.05) == 5 and 2 ** -5 <= 0.05 < 2 ** -4
    assert two_group_p_min(2, 3) == pytest.approx(0.1)
    k, m = smallest_two_group_panel(0.05)
    assert two_group_p_min(k, m) <= 0.05 and two_group_p_min(k, m - 1) > 0.05


# ---- separation of two groups, a factor within blocks, the largest of several sign-flip means ---------


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
    one_kind = separation_table(scores.assign(kind="e"), ["x", "y"])  # nothing to separate
    assert one_kind["separated on"].tolist() == [0, 0] and list(one_kind.columns) == ["separated on"]


def test_variance_explained_closed_forms():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [1.0, 1.0, 3.0, 3.0]})
    assert variance_explained(df, "y", "g") == pytest.approx(1.0)
    df["y"] = [1.0, 3.0, 1.0, 3.0]
    assert variance_explained(df, "y", "g") == pytest.approx(0.0)


def _kinds_panel(n_first: int, n_second: int, tasks: int, *, seed: int = 0, separated: bool = False) -> pd.DataFrame:
    """Scores of two kinds of models on several tasks: 'sep' separates them on every task when
    ``separated``; 'noise' and 'other' never relate to them."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        for m in range(n_first + n_second):
            first = m < n_first
            rows.append({"model": f"m{m}", "kind": "encoder" if first else "decoder", "task": f"t{t}",
                         "sep": (0.0 if first else 10.0) * separated + rng.random(), "noise": rng.random(),
                         "other": rng.random()})
    return pd.DataFrame(rows)


def _brute_force_separation(df, measures, baseline=(), alternative="greater"):
    """Every choice of the first group, the statistic recomputed from separation_table."""
    models = sorted(df["model"].unique())
    n_first = df.groupby("model")["kind"].first().eq("encoder").sum()

    def stat(kinds):
        relabelled = df.assign(kind=df["model"].map(kinds))
        counts = separation_table(relabelled, list(measures) + list(baseline))["separated on"]
        return counts[list(measures)].max() - (counts[list(baseline)].max() if baseline else 0)

    observed = stat(df.groupby("model")["kind"].first().to_dict())
    null = [stat({m: "encoder" if m in chosen else "decoder" for m in models})
            for chosen in itertools.combinations(models, n_first)]
    return observed, np.mean([v >= observed if alternative == "greater" else v <= observed for v in null])


@pytest.mark.parametrize("n_first, n_second, baseline, alternative", [
    (2, 3, (), "greater"), (3, 3, ("other",), "greater"), (3, 4, ("other",), "less"), (2, 4, ("sep",), "greater")])
def test_separation_test_equals_brute_force(n_first, n_second, baseline, alternative):
    df = _kinds_panel(n_first, n_second, 3, seed=n_first + n_second)
    df["sep"] = df["sep"] + 0.8 * (df["kind"] == "decoder")  # separates on some tasks
    t = separation_test(df, ["sep", "noise"], baseline=list(baseline), alternative=alternative)
    observed, p = _brute_force_separation(df, ["sep", "noise"], baseline, alternative)
    assert t.exact and t.statistic == observed and t.p_value == pytest.approx(p)
    assert t.p_min == pytest.approx(two_group_p_min(n_first, n_second))


def test_separation_test_closed_forms():
    one_against_three = _kinds_panel(1, 3, 2, separated=True)
    t = separation_test(one_against_three, ["sep"])
    assert t.n_permutations == 4 and t.statistic == 2 and t.p_min == pytest.approx(0.25) and t.p_value >= 0.25
    # one task, distinct values: of the 6 ways to choose 2 of 4 models, 2 separate ({low two}, {high two})
    df = pd.DataFrame({"model": list("abcd"), "kind": ["e", "e", "d", "d"], "task": "x", "s": [0., 1, 2, 3]})
    assert separation_test(df, ["s"]).p_value == pytest.approx(2 / 6)
    big = _kinds_panel(4, 6, 3, separated=True)
    t = separation_test(big, ["sep"])
    assert t.statistic == 3 and t.p_value == pytest.approx(1 / 210) == t.p_min
    assert separation_test(big.assign(sep=np.exp(big["sep"]) * 3 - 1), ["sep"]) == t  # monotone map: same orders
    assert separation_test(big, ["sep", "noise"]).p_value >= t.p_value  # more scores tried never lower p


def test_separation_test_monte_carlo_agrees_with_exact_and_never_undercuts_the_design():
    df = _kinds_panel(3, 5, 2, seed=1)
    exact = separation_test(df, ["noise", "other"])
    mc = separation_test(df, ["noise", "other"], max_exact=10, n_permutations=4000)
    assert exact.exact and not mc.exact and mc.p_value == pytest.approx(exact.p_value, abs=0.03)
    sep = separation_test(_kinds_panel(2, 2, 2, separated=True), ["sep"], max_exact=1, n_permutations=5000)
    assert sep.p_value >= sep.p_min == pytest.approx(1 / 3)


def test_separation_test_validates_input():
    df = _kinds_panel(2, 2, 2, separated=True)
    with pytest.raises(ValueError, match="two groups"):
        separation_test(df.assign(kind="encoder"), ["sep"])
    with pytest.raises(ValueError, match="non-finite"):
        separation_test(df.assign(sep=np.nan), ["sep"])
    with pytest.raises(ValueError, match="incomplete"):
        separation_test(df.iloc[1:], ["sep"])
    with pytest.raises(ValueError, match="lack the columns"):
        separation_test(df, ["sep"], baseline=["nothing"])
    with pytest.raises(ValueError, match="alternative"):
        separation_test(df, ["sep"], alternative="two-sided")


def _blocks_panel(n_models, n_tasks, *, seed=0, effect=0.0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"model": f"m{m}", "task": f"t{t}", "s": effect * t + rng.normal() + 3 * m,
                          "n": rng.normal()} for m in range(n_models) for t in range(n_tasks)])


def test_within_block_test_equals_brute_force_over_every_shuffle():
    df = _blocks_panel(3, 3, seed=4, effect=0.7)
    t = within_block_permutation_test(df, ["s", "n"])
    blocks = [np.flatnonzero(df["model"] == m) for m in df["model"].unique()]

    y = df[["s", "n"]].to_numpy() - df.groupby("model")[["s", "n"]].transform("mean").to_numpy()  # within-model
    tasks = df["task"].to_numpy()

    def stat(order):  # eta squared of the shuffled task labels, row by row
        labels = tasks[order]
        between = sum((labels == t).sum() * y[labels == t].mean(0) ** 2 for t in np.unique(labels))
        return float((between / (y ** 2).sum(0)).max())

    null = []
    for choice in itertools.product(itertools.permutations(range(3)), repeat=3):  # all (3!)^3 shuffles
        order = np.arange(len(df))
        for idx, perm in zip(blocks, choice):
            order[idx] = idx[list(perm)]
        null.append(stat(order))
    observed = stat(np.arange(len(df)))
    assert t.exact and t.statistic == pytest.approx(observed)
    assert t.p_value == pytest.approx(np.mean(np.array(null) >= observed - 1e-12))
    assert t.p_min == pytest.approx(1 / 36) and t.n_permutations == 36  # (3!)^2: renaming the tasks changes nothing


def test_within_block_test_closed_forms_and_monte_carlo():
    same = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "s": [0., 1, 5, 6]})
    t = within_block_permutation_test(same, ["s"])
    assert t.statistic == 1.0 and t.p_value == t.p_min == 0.5  # swapping one model's tasks: 1 of 2 distinct shuffles
    strong = _blocks_panel(5, 3, effect=50.0)
    t = within_block_permutation_test(strong, ["s", "n"])
    assert t.exact and t.p_value == t.p_min == pytest.approx(1 / 6 ** 4)
    mc = within_block_permutation_test(strong, ["s", "n"], max_exact=10, n_permutations=999)
    assert not mc.exact and mc.p_min == pytest.approx(1 / 1000) and mc.p_value < 0.01
    noise = _blocks_panel(4, 3, seed=2)
    exact, mc = within_block_permutation_test(noise, ["n"]), within_block_permutation_test(noise, ["n"], max_exact=1)
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.03)


def test_within_block_test_validates_the_design():
    df = _blocks_panel(3, 3)
    with pytest.raises(ValueError, match="incomplete"):
        within_block_permutation_test(df.iloc[1:], ["s"])
    with pytest.raises(ValueError, match="two values"):
        within_block_permutation_test(df[df.task == "t0"], ["s"])
    with pytest.raises(ValueError, match="non-finite"):
        within_block_permutation_test(df.assign(s=np.inf), ["s"])


def test_sign_flip_min_p_test_equals_brute_force_and_reduces_to_the_sign_flip_test():
    d = np.random.default_rng(5).normal(0.3, 1.0, size=(6, 3))
    patterns = np.array(list(itertools.product((1, -1), repeat=6)))
    means = patterns @ d / 6

    def min_p(row):
        return min(np.mean(means[:, j] >= means[row, j] - 1e-12) for j in range(3))

    null = np.array([min_p(i) for i in range(len(patterns))])
    t = sign_flip_min_p_test(d)
    assert t.exact and t.n_comparisons == 3 and t.statistic == pytest.approx(d.mean(0).max())
    assert t.p_value == pytest.approx(np.mean(null <= min_p(0) + 1e-12))
    assert t.p_min == pytest.approx(np.mean(null <= null.min() + 1e-12))
    assert sign_flip_min_p_test(d[:, 0]).p_value == pytest.approx(sign_flip_test(d[:, 0]).p_value)
    # a score far below 0 does not hide one above it (its flips top it only under the reversed signs)
    far = np.column_stack([np.full(6, 0.1), np.full(6, -5.0)])
    assert sign_flip_min_p_test(far).p_value == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="finite"):
        sign_flip_min_p_test(np.array([[np.nan]]))


def test_sign_flip_max_test_equals_brute_force_and_reduces_to_the_sign_flip_test():
    d = np.random.default_rng(4).normal(0.2, 1.0, size=(6, 3))
    patterns = np.array(list(itertools.product((1, -1), repeat=6)))
    null = (patterns @ d / 6).max(1)
    t = sign_flip_max_test(d)
    assert t.exact and t.n_comparisons == 3 and t.statistic == pytest.approx(d.mean(0).max())
    assert t.p_value == pytest.approx(np.mean(null >= d.mean(0).max() - 1e-12))
    assert sign_flip_max_test(d[:, 0]).p_value == pytest.approx(sign_flip_test(d[:, 0]).p_value)
    # a column far below 0 ties with the best one under the reversed signs: 2 of 32 patterns
    far = np.column_stack([np.full(5, 0.5), np.full(5, -0.5)])
    assert sign_flip_max_test(far).p_value == pytest.approx(2 / 32)
    with pytest.raises(ValueError, match="finite"):
        sign_flip_max_test(np.array([[np.nan]]))


def test_two_group_permutation_test_equals_brute_force():
    x = np.array([0.3, 0.9, 0.1, 0.7, 0.5, 0.8])
    first = np.array([0, 1, 0, 1, 0, 1], dtype=bool)
    observed = x[first].mean() - x[~first].mean()
    null = [x[list(c)].mean() - np.delete(x, list(c)).mean() for c in itertools.combinations(range(6), 3)]
    t = two_group_permutation_test(x, first)
    assert t.statistic == pytest.approx(observed) and t.p_value == pytest.approx(np.mean(np.array(null) >= observed - 1e-12))
    assert t.p_value == t.p_min == pytest.approx(1 / 20)  # the three largest values form the first group
    less = two_group_permutation_test(x, first, alternative="less")
    assert less.p_value == pytest.approx(1.0) and less.statistic == pytest.approx(observed)
    with pytest.raises(ValueError, match="at least one unit"):
        two_group_permutation_test(x, np.ones(6, dtype=bool))


# ---- null calibration -------------------------------------------------------------------------------


def test_every_tested_claim_has_a_null_model():
    tested = {c.id for c in CLAIMS.values() if c.kind == "test"} - set(UNTESTABLE_BY_DESIGN)
    assert tested - set(NULL_MODELS) == set(), "claims judged by a test need a null model in NULL_MODELS"
    assert set(NULL_MODELS) <= tested


@pytest.mark.simulation
@pytest.mark.parametrize("claim_id", sorted(NULL_MODELS))
def test_null_calibration_holds(claim_id):
    n = 200
    rate = null_calibration(claim_id, n=n, seed=0)
    assert rate <= monte_carlo_bound(n), f"{claim_id}: 'reproduced' on {rate:.1%} of null panels"


@pytest.mark.simulation
@pytest.mark.parametrize("claim_id", sorted(NULL_MODELS))
def test_false_contradiction_rate_holds(claim_id):
    n = 200
    rate = calibration.contradiction_rate(claim_id, n=n, seed=0)
    if rate is None:
        pytest.skip(f"{claim_id}: the paper's effect is not simulated yet")
    assert rate <= monte_carlo_bound(n), f"{claim_id}: 'contradicted' on {rate:.1%} of panels where the paper is right"


def test_enough_simulations_for_a_two_standard_error_bound_below_six_and_a_half_percent():
    n = calibration.simulations_needed()
    assert monte_carlo_bound(n, k=2.0) < 0.065 <= monte_carlo_bound(n - 1, k=2.0)


def test_null_calibration_detects_a_verdict_that_passes_on_noise(monkeypatch):
    """A judge that counts wins (the old rule) is caught: the calibration is not vacuous."""
    def count_wins(d):
        wins = int((d > 0).sum())
        return Verdict("skean.gain", "test", f"{wins} wins", test="count of wins", p_value=0.01 if wins >= 3 else 0.5,
                       p_min=0.01)

    bad = calibration.NullModel(lambda rng: {"d": rng.normal(size=5)}, count_wins, "5 models, noise")
    monkeypatch.setitem(NULL_MODELS, "skean.gain", bad)
    assert null_calibration("skean.gain", n=200) > monte_carlo_bound(200)


def test_null_calibration_rejects_bad_arguments():
    with pytest.raises(KeyError, match="unknown claim"):
        null_calibration("nope.nothing")
    with pytest.raises(KeyError, match="demonstration"):
        null_calibration("cosine.theory")
    with pytest.raises(ValueError, match="positive integer"):
        null_calibration("skean.gain", n=0)


@pytest.mark.simulation
def test_the_calibration_table_does_not_depend_on_its_workers(monkeypatch):
    """The null_calibration appendix shares the claims among processes: every panel draws from
    its own generator spawned from the seed, so the table is the one a single process computes."""
    few = {c: NULL_MODELS[c] for c in ["skean.gain", "lrd.task", "cosine.correlation"]}
    monkeypatch.setattr(calibration, "NULL_MODELS", few)
    one = calibration.calibration_table(n=12, seed=3, workers=1)
    assert sorted(one["claim"]) == sorted(few)
    pd.testing.assert_frame_equal(one, calibration.calibration_table(n=12, seed=3, workers=2))
    monkeypatch.setattr(calibration, "CHUNK", 5)  # chunks of 5, 5 and 2 panels: the same panels, the same table
    pd.testing.assert_frame_equal(one, calibration.calibration_table(n=12, seed=3, workers=2))
    serial = one.set_index("claim")  # and the rates one claim's serial functions give
    for claim in few:
        assert serial.loc[claim, "rate reproduced"] == calibration.null_calibration(claim, n=12, seed=3)
        against = calibration.contradiction_rate(claim, n=12, seed=3)
        assert (against is None and np.isnan(serial.loc[claim, "rate contradicted"])) or \
            serial.loc[claim, "rate contradicted"] == against
    with pytest.raises(ValueError, match="workers"):
        calibration.calibration_table(n=12, workers=-1)


def test_the_power_reads_its_own_panels_only_where_the_effect_s_are_not_the_same(monkeypatch):
    """``n_power``: a power simulation of its own draws its first n_power panels (the same panels
    as at n, so its rate is the rate of those); a power read off the effect's panels keeps all n."""
    few = {c: NULL_MODELS[c] for c in ["lrd.task", "lrd.pruning_nrs"]}
    monkeypatch.setattr(calibration, "NULL_MODELS", few)
    own = {c: calibration._simulations(c)["power_effect"] == "power_effect" for c in few}
    assert own == {"lrd.task": True, "lrd.pruning_nrs": False}  # the second reads the effect's panels
    full = calibration.calibration_table(n=12, seed=3).set_index("claim")
    cut = calibration.calibration_table(n=12, seed=3, n_power=5).set_index("claim")
    for claim in few:
        expected = calibration.power(claim, n=5 if own[claim] else 12, seed=3)
        assert cut.loc[claim, "power"] == expected
        assert cut.loc[claim, "power simulations"] == (5 if own[claim] else 12)
        assert full.loc[claim, "power simulations"] == 12
    pd.testing.assert_frame_equal(full.drop(columns=["power", "power simulations"]),
                                  cut.drop(columns=["power", "power simulations"]))
    with pytest.raises(ValueError, match="positive integer"):
        calibration.calibration_table(n=12, n_power=0)


def test_min_p_sign_flip_is_westfall_young_over_joint_flips():
    d = np.array([[0.3, -0.1], [0.2, 0.4], [-0.05, 0.1], [0.4, 0.2], [0.1, 0.3]])
    patterns = np.array(list(itertools.product((1, -1), repeat=5)), dtype=float)
    null = patterns @ d / 5  # (32, 2)
    p_of = lambda m, j: np.mean(null[:, j] >= m - 1e-12)  # noqa: E731
    p_patterns = np.array([min(p_of(null[i, 0], 0), p_of(null[i, 1], 1)) for i in range(32)])
    observed = min(p_of(d[:, 0].mean(), 0), p_of(d[:, 1].mean(), 1))
    t = sign_flip_min_p_test(d)
    assert t.p_value == pytest.approx(np.mean(p_patterns <= observed + 1e-12))
    assert sign_flip_min_p_test(d[:, :1]).p_value == sign_flip_test(d[:, 0]).p_value  # one comparison
    same = np.stack([d[:, 1], d[:, 1], d[:, 1]], 1)
    assert sign_flip_min_p_test(same).p_value == sign_flip_test(d[:, 1]).p_value  # identical: no penalty


@pytest.mark.simulation
def test_power_is_the_rate_of_reproduced_at_the_papers_effect():
    """skean.gain's power at the paper's 2%: a rate, between its false-reproduced rate and 1, on a
    larger panel and on the chapter's eight models (every model counts in its scope; with the four
    language models alone, the alternative, p >= 1/16); a claim without a simulated effect has none."""
    six = {"layers": (6, 12, 12, 24, 30, 18, 24, 28, 24, 16), "kinds": ("encoder",) * 4 + ("decoder",) * 6}
    strength = calibration.power("skean.gain", n=40, seed=0, design=six)
    assert 0.2 < strength <= 1
    assert 0 < calibration.power("skean.gain", n=10, seed=0) <= 1  # eight models: p >= 1/256
    assert calibration.power("cosine.pruning", n=5) is None
    assert 0 < calibration.power("skean.metrics_track", n=20, seed=0, design=six) <= 1  # the paper's picture, sizes assumed


def test_power_simulations_state_their_effect_and_exceed_the_size():
    """A power simulation other than the contradiction edge must say its design and effect (an
    assumed size is labelled so); at the assumed rho of 0.71 the selection test says "reproduced"
    more often than on its null, and its power grows with the effect."""
    from functools import partial

    from lrd.verdicts import selection

    with pytest.raises(ValueError, match="power_panel"):
        calibration.NullModel(lambda rng: {}, lambda **k: None, "p", effect=lambda rng: {}, power_effect=lambda rng: {})
    for claim in NULL_MODELS:
        model = calibration.null_model(claim)
        assert (model.power_effect is None) == (model.power_panel is None), claim
    assert "assumed" in calibration.null_model("lrd.selection").power_panel
    strong = calibration.power("lrd.selection", n=60, seed=1)
    assert strong > calibration.null_calibration("lrd.selection", n=60, seed=1) + 0.08
    weak = selection.NullModel(selection.simulate_selection, selection.judge_selection, "weak",
                               power_effect=partial(selection.simulate_selection_effect, noise=3.0), power_panel="weak")
    rng_rate = np.mean([weak.judge(**weak.power_effect(np.random.default_rng(i))).outcome == "reproduced"
                        for i in range(60)])
    assert rng_rate < strong
    # few shots: the same design with Cayley 2 points ahead says "reproduced" far more often than on its edge
    assert "assumed" in calibration.null_model("ilse.few_shot").power_panel
    assert calibration.power("ilse.few_shot", n=40, seed=2) > calibration.null_calibration("ilse.few_shot", n=40,
                                                                                           seed=2) + 0.3


def test_a_design_that_cannot_reach_alpha_has_power_zero_at_any_effect():
    """p_min > alpha: no data reaches p <= alpha (three models: a sign flip's smallest p is 1/8, even for
    huge effects), so the power is exactly 0 and the verdict says so; a given power is kept."""
    from lrd.verdicts.stats import sign_flip_test

    rng = np.random.default_rng(0)
    assert min(sign_flip_test(10.0 + rng.normal(size=3)).p_value for _ in range(50)) == pytest.approx(1 / 8)
    v = Verdict("lrd.pruning_nrs", "test", "three models", test="sign-flip", p_value=0.125, p_min=0.125)
    assert v.outcome == "not testable" and v.power == 0.0 and "0.125" in v.power_label
    assert Verdict("lrd.pruning_nrs", "test", "x", test="t", p_value=0.125, p_min=1 / 32).power is None
    kept = Verdict("lrd.pruning_nrs", "test", "x", test="t", p_value=0.5, p_min=0.25, power=0.0, power_label="given")
    assert kept.power_label == "given"


def test_a_null_model_runs_at_the_design_it_is_given():
    """The appendix simulates a claim at the design its chapter ran: the design reaches the
    simulated tables and the panel's words, and a design too small to reach alpha has no power."""
    default = calibration.null_model("lrd.architecture")
    small = default.at(n_encoders=2, n_decoders=2, n_tasks=3)
    assert small.describe("panel").startswith("2 encoders and 2 decoders x 3 tasks")
    assert default.describe("panel").startswith("{n_encoders} encoders and {n_decoders} decoders x {n_tasks} tasks"
                                                .format(**default.design))
    scores = small.draw("simulate")(np.random.default_rng(0))["scores"]
    assert scores.groupby("kind")["model"].nunique().to_dict() == {"decoder": 2, "encoder": 2}
    assert scores["task"].nunique() == 3
    # 2 against 2: the smallest attainable p is 1/6, so no panel says "reproduced", at any effect
    assert calibration.power("lrd.architecture", n=30, seed=0, design=small.design) == 0.0
    assert calibration.power("lrd.architecture", n=30, seed=0) > 0.2
    with pytest.raises(ValueError, match="n_layers: not a parameter"):
        default.at(n_layers=3)
    fixed = calibration.NullModel(lambda rng: {}, lambda: None, "a fixed panel")
    with pytest.raises(ValueError, match="its design is fixed"):
        fixed.at(n_models=3)


def test_the_calibration_table_says_where_each_design_comes_from():
    row = calibration._calibration_row("lrd.architecture", 20, 0, 2.0, {"n_encoders": 2, "n_decoders": 3},
                                       "executed lrd_families (results/lrd_families.json)")
    assert row["design"] == "executed lrd_families (results/lrd_families.json)"
    assert row["simulated panel"].startswith("2 encoders and 3 decoders x 4 tasks")
    assert calibration._calibration_row("ilse.gain", 5, 0, 2.0, None, calibration.DEFAULT_DESIGN)["design"].startswith(
        "restated: the cells")
    executed = calibration._calibration_row("lrd.pruning_nrs", 5, 0, 2.0, {"n_models": 2}, "executed x")
    assert executed["design"] == "executed x" and executed["simulated panel"].startswith("2 models x 2 tasks")
    assert executed["power"] == 0.0 and executed["rate reproduced"] == 0.0  # 2 models: p >= 1/4, by construction
    assert calibration._calibration_row("ilse.fc", 5, 0, 2.0, None, calibration.DEFAULT_DESIGN)["design"] == (
        "default panel (restated)")
    assert calibration._calibration_row("lrd.pruning_nrs", 5, 0, 2.0, None, calibration.DEFAULT_DESIGN)[
        "design"].startswith("restated, larger than the default book's")
    with pytest.raises(ValueError, match="without a null model: cosine.theory"):
        calibration.calibration_table(n=5, designs={"cosine.theory": ({}, "x")})
    with pytest.raises(ValueError, match="n_models: not a parameter"):
        calibration.calibration_table(n=5, designs={"lrd.architecture": ({"n_models": 8}, "x")})
