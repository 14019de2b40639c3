"""The specifications of Skean et al. (lrd.verdicts.specifications.skean2025): each book rule moves the
verdict the way its meaning says, on constructed tables with known answers; the paper's rules quote
a location."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts.claims import SKEAN_LLM_SCOPE

from lrd.verdicts import layer_choice
from lrd.verdicts.claims import Scope
from lrd.verdicts.specifications import judge, simulate, specification
from lrd.verdicts.specifications.skean2025 import SPECIFICATIONS

LOCATION = re.compile(r"\b(Sec\.|Section|Fig\.|Figure|Table|abstract)", re.IGNORECASE)
HALVES = layer_choice.HALVES


def _rows(model, kind, measurement, curve, task="t0"):
    n = len(curve) - 1
    return [{"model": model, "task": task, "measurement": measurement, "layer": l, "depth": l / n,
             "value": float(v), "kind": kind} for l, v in enumerate(curve)]


# --- the paper's rules and scopes say where -------------------------------------------------------

@pytest.mark.parametrize("spec", SPECIFICATIONS, ids=lambda s: s.id)
def test_paper_rules_and_scope_quote_a_location(spec):
    assert LOCATION.search(spec.scope), spec.id
    for rule in spec.rules:
        if rule.origin == "paper":
            assert LOCATION.search(rule.reason), (spec.id, rule.name)
            assert not rule.alternatives
        else:
            assert rule.reason.strip()


def test_the_paper_s_numbers_are_the_judges_defaults():
    assert specification("skean.gain").rule("paper_low").value == 0.02
    assert specification("skean.gain").rule("band").value == (0.4, 0.6)
    assert specification("skean.choice").rule("paper_choice_gain").value == 0.03
    assert specification("skean.choice").rule("metric").value == "DiME"


# --- skean.gain: relative or in points ------------------------------------------------------------

def _gain_table(levels, gains_pp, n_blocks=10, kind="decoder", prefix="m"):
    """One task per model; every layer scores ``level`` but those at 40-60% depth (4, 5, 6 of 10),
    which score ``level + gain`` (in points)."""
    rows = []
    for i, (level, gain) in enumerate(zip(levels, gains_pp)):
        curve = np.full(n_blocks + 1, level)
        curve[[4, 5, 6]] += gain
        rows += _rows(f"{prefix}{i}", kind, "score", curve)
    return pd.DataFrame(rows)


def test_gain_relative_or_in_points_is_the_closed_form_and_can_reverse_the_sign():
    # one model at a low level gains +0.02 points (+20%), four at 0.9 lose 0.01 (-1.1%)
    levels, gains = [0.1, 0.9, 0.9, 0.9, 0.9], [0.02, -0.01, -0.01, -0.01, -0.01]
    table = {"results": _gain_table(levels, gains)}
    relative = judge("skean.gain", table)
    points = judge("skean.gain", table, relative=False)
    assert relative.effect == pytest.approx(np.mean(np.array(gains) / np.array(levels)))
    assert points.effect == pytest.approx(np.mean(gains))
    assert relative.effect > 0 > points.effect
    assert points.p_value > relative.p_value
    assert "points" in points.effect_label and "relative" in relative.effect_label


def test_gain_paper_low_higher_makes_against_easier():
    # relative gains 1%-3% around 2%: below 2% is not shown, below 16% is plain
    table = {"results": _gain_table([0.5] * 6, [0.005, 0.015, 0.0075, 0.0125, 0.01, 0.009])}
    low, high = judge("skean.gain", table), judge("skean.gain", table, paper_low=0.16)
    assert low.p_against > 0.05
    assert high.p_against == pytest.approx(1 / 64)  # every model below 16%: the smallest p of 6 models
    assert high.p_value == low.p_value and high.outcome == low.outcome == "reproduced"  # above 0 in every model


def test_alpha_is_the_gain_verdict_s_level_and_its_power_s():
    # 7 models (p_min = 2^-7 < 0.01), one of them below the last: p = 2/128, between 0.01 and 0.05
    table = {"results": _gain_table([0.5] * 7, [0.02] * 6 + [-0.01])}
    at = {a: judge("skean.gain", table, alpha=a) for a in (0.01, 0.05, 0.1)}
    assert [v.p_value for v in at.values()] == pytest.approx([2 / 128] * 3)
    assert [at[a].alpha for a in at] == [0.01, 0.05, 0.1]
    assert at[0.05].outcome == at[0.1].outcome == "reproduced" and at[0.01].outcome == "inconclusive"
    assert at[0.01].power < at[0.05].power < at[0.1].power  # the power "at alpha"
    r = layer_choice.gain_result(table["results"], alpha=0.01)
    assert r.alpha == 0.01 and r.outcome == "inconclusive" and r.p_value == at[0.01].p_value
    assert judge("skean.gain", table) == at[0.05]  # the book's level is the default


# --- skean.valley: band and margin ----------------------------------------------------------------

def _valley_results(dip_blocks, depth=0.2, n_blocks=20, n_dec=5, n_enc=4):
    rows = []
    for i in range(n_dec + n_enc):
        kind = "decoder" if i < n_dec else "encoder"
        curve = np.full(n_blocks + 1, 0.7)
        if kind == "decoder":
            curve[list(dip_blocks)] -= depth
        rows += _rows(f"m{i}", kind, "prompt entropy", curve)
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # equal valleys: Welch's interval
def test_valley_band_matching_the_dip_measures_its_full_depth():
    # the decoders dip by 0.2 at blocks 6-14 of 20 (depth 0.3-0.7); encoders flat
    table = {"results": _valley_results(range(6, 15))}
    default = judge("skean.valley", table)  # band 0.25-0.75: blocks 5-15, the dip diluted to 9/11
    narrow = judge("skean.valley", table, band=(0.3, 0.7))  # blocks 6-14: the whole dip
    wide = judge("skean.valley", table, band=(0.2, 0.8))  # blocks 4-16: 9/13
    assert narrow.effect == pytest.approx(0.2)
    assert default.effect == pytest.approx(0.2 * 9 / 11)
    assert wide.effect == pytest.approx(0.2 * 9 / 13)


def test_valley_wider_margin_of_flat_makes_encoders_flat_easier():
    # deep decoder valleys, encoders' valleys 0.04 over 300 noisy prompts: near the book's margin
    tables = layer_choice.simulate_valleys(np.random.default_rng(0), decoder_valley=0.2, encoder_valley=0.04)
    p = {m: judge("skean.valley", tables, margin=m).p_value for m in (0.025, 0.05, 0.1)}
    assert p[0.1] <= p[0.05] <= p[0.025]
    assert p[0.1] < p[0.025]
    assert judge("skean.valley", tables, margin=0.1).outcome == "reproduced"
    assert judge("skean.valley", tables, margin=0.025).outcome != "reproduced"  # 0.04 is not flat within 0.025


# --- skean.metrics_track: which metrics are tested ------------------------------------------------

def _metric_table(n_models=6, n_blocks=8, entropy_sign=+1):
    """The score rises with depth (by 0.03 a layer, noise 1e-4); DiME follows it, prompt entropy follows
    it too (``entropy_sign=+1``: against the paper's negative sign) or mirrors it (-1)."""
    rng = np.random.default_rng(1)
    rows = []
    score = 0.5 + 0.03 * np.arange(n_blocks + 1)
    for i in range(n_models):
        for h in HALVES:
            rows += _rows(f"m{i}", "decoder", h, score + rng.normal(0, 1e-4, n_blocks + 1))
        rows += _rows(f"m{i}", "decoder", "DiME", score)
        rows += _rows(f"m{i}", "decoder", "prompt entropy", entropy_sign * score)
    return {"results": pd.DataFrame(rows)}


def test_metrics_track_a_metric_reversed_in_every_model_fails_alone_but_not_with_dime():
    table = _metric_table(entropy_sign=+1)  # prompt entropy high where the score is: against the paper
    both = judge("skean.metrics_track", table)
    entropy_only = judge("skean.metrics_track", table, directions={"prompt entropy": -1})
    dime_only = judge("skean.metrics_track", table, directions={"DiME": +1})
    assert both.outcome == dime_only.outcome == "reproduced"
    assert entropy_only.outcome == "contradicted"
    assert entropy_only.effect == pytest.approx(-1.0) and dime_only.effect == pytest.approx(1.0)
    assert both.p_value >= dime_only.p_value  # the family's adjustment costs, never helps


# --- skean.choice: direction, scope, relative, the paper's 3% --------------------------------------

def _choice_table(n_dec=5, n_enc=3, n_blocks=8):
    """DiME highest at block 3 (scoring 0.06 above the last, 0.8) and lowest at block 6 (0.06 below)."""
    rng = np.random.default_rng(2)
    rows = []
    score = np.full(n_blocks + 1, 0.8)
    score[3], score[6] = 0.86, 0.74
    dime = np.zeros(n_blocks + 1)
    dime[3], dime[6] = 1.0, -1.0
    for i in range(n_dec + n_enc):
        kind = "decoder" if i < n_dec else "encoder"
        for task in ("t0", "t1"):
            for h in HALVES:
                rows += _rows(f"m{i}", kind, h, score + rng.normal(0, 1e-3, n_blocks + 1), task)
        rows += _rows(f"m{i}", kind, "DiME", dime)
    return {"results": pd.DataFrame(rows)}


def test_choice_lowest_metric_picks_the_worse_layer():
    table = _choice_table()
    high, low = judge("skean.choice", table), judge("skean.choice", table, higher_is_better=False)
    assert high.effect == pytest.approx(0.06 / 0.8, abs=2e-3) and high.outcome == "reproduced"
    assert low.effect == pytest.approx(-0.06 / 0.8, abs=2e-3) and low.outcome == "contradicted"


def test_choice_scope_of_every_model_counts_the_encoders():
    table = _choice_table(n_dec=5, n_enc=3)
    book = judge("skean.choice", table)
    everyone = judge("skean.choice", table, scope=Scope("every model"))
    assert book.p_min == pytest.approx(2 ** -5) and everyone.p_min == pytest.approx(2 ** -8)
    assert book.per_model[1] == 5 and everyone.per_model[1] == 8
    assert "left out by the book's scope rule" in book.evidence and "left out" not in everyone.evidence


def test_choice_points_and_relative_differ_by_the_last_layer_s_level():
    table = _choice_table()
    relative, points = judge("skean.choice", table), judge("skean.choice", table, relative=False)
    assert points.effect == pytest.approx(relative.effect * 0.8, rel=1e-2)  # last layer at 0.8


def test_choice_paper_gain_moves_the_power_only():
    tables = simulate("skean.choice", {"layers": (12,) * 6, "kinds": ("decoder",) * 6}, seed=4, model="power")
    book = judge("skean.choice", tables)
    double = judge("skean.choice", tables, paper_choice_gain=0.06)
    assert (double.p_value, double.p_against, double.outcome) == (book.p_value, book.p_against, book.outcome)
    assert 0 < book.power < double.power


# --- the one rule on contrastive sentence embedders (issue 48) -------------------------------------

def test_one_scope_rule_for_the_embedders_counts_them_where_the_paper_s_models_would():
    """One rule, stated once, with one criterion: the embedders count where the paper states the
    claim across architectures (gain: Sec. 3.1 and highlight 1), not where it states it for
    autoregressive models (metrics_track: Sec. 3.2; choice: Pythia); the other reading is the
    alternative; the valley keeps its groups."""
    from lrd.verdicts.claims import CLAIMS, SKEAN_LLM_SCOPE
    from lrd.verdicts.specifications.skean2025 import EVERY_MODEL

    assert SKEAN_LLM_SCOPE.kinds == ("decoder",) and "A reading of the book's" in SKEAN_LLM_SCOPE.text
    rules = {c: specification(c).rule("scope") for c in ("skean.gain", "skean.metrics_track", "skean.choice")}
    criterion = rules["skean.gain"].reason.split(". ", 1)[0]
    for c, rule in rules.items():
        assert rule.origin == "book" and rule.value is None and rule.reason.startswith(criterion)
        assert "LLM2vec" in rule.reason
    assert CLAIMS["skean.gain"].scope is None and rules["skean.gain"].alternatives == (SKEAN_LLM_SCOPE,)
    assert "highlight 1" in rules["skean.gain"].reason and "Sec. 3.1" in rules["skean.gain"].reason
    for c in ("skean.metrics_track", "skean.choice"):
        assert CLAIMS[c].scope is SKEAN_LLM_SCOPE and rules[c].alternatives == (EVERY_MODEL,)
    assert "Sec. 3.2" in rules["skean.metrics_track"].reason
    valley = specification("skean.valley")
    assert "scope" not in {r.name for r in valley.rules} and "is not applied here" in valley.scope


def test_gain_counts_every_model_and_the_alternative_the_language_models_only():
    """Five decoders gain 10%, three embedders lose 20%: the book counts all eight (their mean), the
    alternative counts the decoders only (p = 1/32, reproduced) and names the embedders."""
    table = {"results": pd.concat([_gain_table([0.5] * 5, [0.05] * 5),
                                   _gain_table([0.5] * 3, [-0.1] * 3, kind="encoder", prefix="e")])}
    book, decoders = judge("skean.gain", table), judge("skean.gain", table, scope=SKEAN_LLM_SCOPE)
    assert decoders.p_value == decoders.p_min == 1 / 32 and decoders.effect == pytest.approx(0.1)
    assert decoders.outcome == "reproduced"
    assert "e0 -20.0%" in decoders.evidence and "left out by the book's scope rule" in decoders.evidence
    assert book.p_min == 1 / 256 and book.effect == pytest.approx((5 * 0.1 - 3 * 0.2) / 8)
    embedders_only = {"results": _gain_table([0.5] * 5, [0.05] * 5, kind="encoder")}
    assert judge("skean.gain", embedders_only, scope=SKEAN_LLM_SCOPE).outcome == "not testable"
    assert judge("skean.gain", embedders_only).outcome == "reproduced"


def test_gain_often_as_a_share_of_tasks():
    """Three tasks per model, the band above the last in two of them and below in the third, in
    each of 6 decoders: a share of 2/3 > 1/2 in every model (p = 1/64), while the mean gain is
    below 0 (the losing task loses more)."""
    rows = []
    for i in range(6):
        for task, gain in (("a", 0.01), ("b", 0.01), ("c", -0.05)):
            curve = np.full(11, 0.5)
            curve[[4, 5, 6]] += gain
            rows += _rows(f"m{i}", "decoder", "score", curve, task=task)
    table = {"results": pd.DataFrame(rows)}
    mean, share = judge("skean.gain", table), judge("skean.gain", table, often="share")
    assert mean.effect < 0 and mean.outcome == "contradicted"
    assert share.effect == pytest.approx(2 / 3) and share.p_value == 1 / 64 and share.outcome == "reproduced"
    assert share.power is None and "share" in share.effect_label


def test_gain_cross_fitted_best_reads_the_halves():
    """Layer 2 of 10 (outside the band) is best on both halves, 0.1 above the last; the band scores as
    the last: the band says 0, the cross-fitted best layer says +20% in every model."""
    rows = []
    for i in range(5):
        curve = np.full(11, 0.5)
        curve[2] = 0.6
        for h in ("score", *HALVES):
            rows += _rows(f"m{i}", "decoder", h, curve)
    table = {"results": pd.DataFrame(rows)}
    band, best = judge("skean.gain", table), judge("skean.gain", table, estimator="cross-fitted best")
    assert band.effect == pytest.approx(0) and band.outcome != "reproduced"
    assert best.effect == pytest.approx(0.2) and best.p_value == 1 / 32 and best.outcome == "reproduced"
    with pytest.raises(ValueError, match="estimator"):
        judge("skean.gain", table, estimator="best")


# --- the mixed panel of issue 48: simulated -------------------------------------------------------

#: Four sentence embedders and six decoders: the smallest panel like the chapter's on which the
#: decoders alone can reach p <= 0.05 (1/64), so both outcomes are open.
_TESTABLE = {"layers": (6, 12, 12, 24, 30, 18, 24, 28, 24, 16), "kinds": ("encoder",) * 4 + ("decoder",) * 6,
             "n_tasks": 4}


def _rate(design, model, outcome, n, **choices):
    seeds = np.random.SeedSequence(48).spawn(n)
    return np.mean([judge("skean.gain", simulate("skean.gain", design, seed=np.random.default_rng(s), model=model),
                          **choices).outcome == outcome for s in seeds])


@pytest.mark.simulation
def test_the_edge_and_the_mixed_panel_are_rarely_contradicted():
    """The paper's edge in the claim's scope (every model's band exactly 2% above the last) says
    "contradicted" in at most 5% + 2 SE of panels at the chapter's design (3.5% of 200 when
    written). Issue 48's referee's mixed panel (decoders at 2%, sentence embedders at 0%) is the
    edge of the decoders-only alternative: there, at the chapter's 4 decoders "contradicted" is
    never said ("reproduced" was not attainable), and with 6 decoders at most 5% + 2 SE."""
    from lrd.verdicts.layer_choice import simulate_gain_effect

    assert _rate(None, "edge", "contradicted", 100) <= 0.05 + 2 * (0.05 * 0.95 / 100) ** 0.5
    seeds = np.random.SeedSequence(48).spawn(100)
    for design, n in ((None, 40), (_TESTABLE, 100)):
        outcomes = [judge("skean.gain", simulate_gain_effect(np.random.default_rng(s), embedder_gain=0.0,
                                                             **(design or {})), scope=SKEAN_LLM_SCOPE).outcome
                    for s in seeds[:n]]
        assert outcomes.count("contradicted") / n <= (0 if design is None else 0.05 + 2 * (0.05 * 0.95 / n) ** 0.5)
    tables = simulate("skean.gain", seed=0, model="edge")["results"]
    assert tables.groupby("kind")["model"].nunique().to_dict() == {"decoder": 4, "encoder": 4}


@pytest.mark.simulation
def test_the_null_panel_is_rarely_reproduced():
    """Every layer equally good in expectation: "reproduced" in at most 5% + 2 SE of panels at the
    chapter's design (8 models counted; 4.3% of 300 when written), never with the decoders only
    (p >= 1/16), and at most 5% + 2 SE where six decoders can reach 0.05."""
    bound = 0.05 + 2 * (0.05 * 0.95 / 100) ** 0.5
    assert _rate(None, "null", "reproduced", 100) <= bound
    assert _rate(None, "null", "reproduced", 40, scope=SKEAN_LLM_SCOPE) == 0
    assert _rate(_TESTABLE, "null", "reproduced", 100, scope=SKEAN_LLM_SCOPE) <= bound
