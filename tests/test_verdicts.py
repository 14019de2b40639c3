"""lrd.verdicts: the one verdict path (claims table, record, outcome rule, tests, null calibration)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats as sp

from lrd.report import Glue
from lrd.verdicts import CLAIMS, NULL_MODELS, OUTCOMES, Verdict, calibration, decide
from lrd.verdicts.calibration import UNTESTABLE_BY_DESIGN, monte_carlo_bound, null_calibration
from lrd.verdicts.stats import (equivalence_sign_flip_test, mean_interval, models_for_sign_flip, sign_flip_max_test,
                                sign_flip_test, smallest_two_group_panel, spearman_permutation_test, two_group_p_min,
                                two_group_permutation_test)

# ---- the outcome rule ----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, outcome", [
    (dict(p_value=1 / 32, p_min=1 / 32), "reproduced"),
    (dict(p_value=0.05, p_min=1 / 32), "reproduced"),
    (dict(p_value=0.06, p_min=1 / 32), "inconclusive"),
    (dict(p_value=0.5, p_against=0.03, p_min=1 / 32), "contradicted"),
    (dict(p_value=0.5, p_against=0.2, p_min=1 / 32), "inconclusive"),
    (dict(p_value=0.1, p_min=0.1), "not testable"),
    (dict(p_value=0.5, p_against=0.04, p_min=0.1), "contradicted"),
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
        if c.kind == "test":
            assert c.panel, f"{c.id}: a test names the panel that would make it testable"


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


def test_panel_sizes_for_alpha():
    assert models_for_sign_flip(0.05) == 5 and 2 ** -5 <= 0.05 < 2 ** -4
    assert two_group_p_min(2, 3) == pytest.approx(0.1)
    k, m = smallest_two_group_panel(0.05)
    assert two_group_p_min(k, m) <= 0.05 and two_group_p_min(k, m - 1) > 0.05


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


@pytest.mark.parametrize("claim_id", sorted(NULL_MODELS))
def test_null_calibration_holds(claim_id):
    n = 200
    rate = null_calibration(claim_id, n=n, seed=0)
    assert rate <= monte_carlo_bound(n), f"{claim_id}: 'reproduced' on {rate:.1%} of null panels"


def test_null_calibration_detects_a_verdict_that_passes_on_noise(monkeypatch):
    """A judge that counts wins (the old rule) is caught: the calibration is not vacuous."""
    def count_wins(d):
        wins = int((d > 0).sum())
        return Verdict("skean.gain", "test", f"{wins} wins", test="count of wins", p_value=0.01 if wins >= 3 else 0.5,
                       p_min=0.01)

    bad = calibration.NullModel(lambda rng: {"d": rng.normal(size=5)}, count_wins, "5 models, noise")
    monkeypatch.setitem(NULL_MODELS, "skean.gain", "tests.test_verdicts:_BAD")
    monkeypatch.setattr("tests.test_verdicts._BAD", bad, raising=False)
    assert null_calibration("skean.gain", n=200) > monte_carlo_bound(200)


def test_null_calibration_rejects_bad_arguments():
    with pytest.raises(KeyError, match="unknown claim"):
        null_calibration("nope.nothing")
    with pytest.raises(KeyError, match="demonstration"):
        null_calibration("cosine.theory")
    with pytest.raises(ValueError, match="positive integer"):
        null_calibration("skean.gain", n=0)
