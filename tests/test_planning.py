"""What would decide each claim (issue 50): the planner's walk, its committed plan, and its page."""

from __future__ import annotations

import json
import math

import pytest

from lrd.book.plan import anchor, claim_plan_text, load_plan, plan_line, plan_markdown
from lrd.verdicts.planning import (Plan, counted_kinds_of, decisive_design, design_words, exact_interval,
                                   kind_counts, rates, scaled, unit_count)
from lrd.verdicts.specifications import SPECIFICATIONS, specification


def _planned_claims() -> list[str]:
    return [c for c, s in SPECIFICATIONS.items() if s.null is not None and s.null.power_effect is not None]


def test_scaling_grows_each_kind_separately_and_keeps_the_uncounted_kinds():
    d = {"layers": (6, 12, 30, 18, 24), "kinds": ("encoder", "encoder", "decoder", "decoder", "decoder"), "n_tasks": 3}
    s = scaled(d, 1.5)
    assert kind_counts(s) == {"encoder": 3, "decoder": 5}  # ceil(2 * 1.5), ceil(3 * 1.5): the mix kept
    assert [l for l, k in zip(s["layers"], s["kinds"]) if k == "encoder"] == [6, 12, 6]  # a kind's own depths
    assert s["n_tasks"] == 3  # what each model is measured on stays
    only = scaled(d, 4, counted_kinds=("decoder",))
    assert kind_counts(only) == {"encoder": 2, "decoder": 12}
    assert scaled({"n_models": 5}, 1.5) == {"n_models": 8} and scaled(d, 1) == d
    assert unit_count(s) == 8 and unit_count({"n_encoders": 2, "n_decoders": 3, "n_tasks": 9}) == 5


def test_the_counted_kinds_come_from_the_claim_s_scope_rule():
    assert counted_kinds_of("skean.choice") == ("decoder",)  # the book counts its language models only
    assert counted_kinds_of("skean.metrics_track") == ("decoder",)  # stated for autoregressive models
    assert counted_kinds_of("skean.gain") is None  # stated across architectures: every model counted
    for c in _planned_claims():
        assert unit_count(specification(c).null.design) > 0, c


def test_a_design_in_words_counts_models_by_kind():
    assert design_words({"n_encoders": 1, "n_decoders": 5, "n_tasks": 4}) == "1 encoder and 5 decoders, 4 tasks"


def test_exact_intervals_cover_the_share_and_bound_zero_hits():
    low, high = exact_interval(5, 100)
    assert low < 0.05 < high and round(high, 3) == 0.113
    assert exact_interval(0, 100)[0] == 0.0 and exact_interval(100, 100)[1] == 1.0


def test_the_walk_keeps_a_step_only_when_fresh_panels_confirm_it():
    unreachable = decisive_design("lrd.pruning_frenet", factors=(1,), target=0.99, n_walk=10, n_draws=10)
    assert not unreachable.reached and unreachable.design is None and unreachable.power is None
    assert [f for f, _ in unreachable.curve] == [1.0]
    easy = decisive_design("lrd.selection", factors=(1, 8), target=0.05, n_walk=20, n_draws=20)
    assert easy.reached and easy.factor == 1.0 and easy.design == dict(specification("lrd.selection").null.design)
    assert easy.checks[-1] == (1.0, easy.power) and easy.power >= 0.05  # the kept power is the fresh one
    low, high = easy.intervals["power"]
    assert low <= easy.power <= high
    assert easy.false_reproduced is not None and easy.false_contradicted is not None
    assert easy.calibration in ("consistent", "above alpha")


def test_a_claim_that_is_never_a_test_is_untestable_and_the_page_says_why_a_walk_fails():
    from lrd.book.plan import why_not

    plan = decisive_design("ilse.gain", n_walk=5, n_draws=5)
    assert plan.untestable and not plan.reached and len(plan.curve) == 1
    assert "no p-value" in why_not(plan.record())
    against = {"untestable": False, "against": 0.9, "curve": [[1, 0.0]], "alpha": 0.05}
    assert "goes against the claim" in why_not(against)
    flat = {"untestable": False, "against": 0.0, "curve": [[1, 0.0], [8, 0.02]], "alpha": 0.05}
    assert "almost none" in why_not(flat)
    slow = {"untestable": False, "against": 0.0, "curve": [[1, 0.1], [8, 0.6]], "alpha": 0.05}
    assert "too slowly" in why_not(slow)
    falls = {"untestable": False, "against": 0.0, "curve": [[1, 0.2], [1.5, 0.0], [8, 0.0]], "alpha": 0.05}
    assert "falls as models are added" in why_not(falls)


def test_rates_refuse_a_bad_number_of_draws_and_skip_a_model_the_claim_lacks():
    with pytest.raises(ValueError, match="n_draws"):
        rates("lrd.selection", n_draws=0)
    r = rates("cosine.pruning", n_draws=2, models=("power", "null"))  # no power model registered
    assert "power" not in r and "false_reproduced" in r


def test_calibration_says_above_alpha_only_where_the_interval_lies_above_it():
    def plan(fr, fc):
        return Plan("lrd.selection", {"n": 8}, 1.0, {"n": 8}, ((1.0, 0.9),), ((1.0, 0.9),), 0.9, fr[0] / 100,
                    fc[0] / 100, {"false_reproduced": exact_interval(*fr), "false_contradicted": exact_interval(*fc)},
                    40, 100, 0.8)
    assert plan((5, 100), (7, 100)).calibration == "consistent"  # 7/100: interval 0.029-0.139 reaches 0.05
    assert plan((12, 100), (0, 100)).calibration == "above alpha"  # 12/100: interval from 0.064


# ---- the committed plan ---------------------------------------------------------------------

def _plan() -> dict:
    plan = load_plan()
    if plan is None:
        pytest.fail("no book/plan.json: run `python -m lrd.units.plan --out book/plan.json --jobs 2`")
    return plan


def test_the_committed_plan_has_every_planned_claim_and_its_walk_is_consistent():
    """Stale plans fail here: a claim was added or its design's parameters changed since the plan."""
    plan = _plan()
    got = {p["claim"]: p for p in plan["plans"]}
    assert set(got) == set(_planned_claims())
    for c in _planned_claims():
        assert set(got[c]["executed"]) == set(specification(c).null.design), f"{c}: rerun python -m lrd.units.plan"
        kinds = counted_kinds_of(c)
        assert got[c]["counted_kinds"] == (None if kinds is None else list(kinds)), \
            f"{c}: its scope rule changed since the plan: python -m lrd.units.plan --claims {c}"
        assert got[c]["source"]
    for p in plan["plans"]:
        if p["reached"]:
            assert p["curve"][-1][0] == p["factor"] and p["curve"][-1][1] >= p["target"]
            assert p["checks"][-1] == [p["factor"], p["power"]] and p["power"] >= p["target"]
            assert p["cost"] is not None and p["cost"]["models"]
            low, high = p["intervals"]["power"]
            assert low <= p["power"] <= high
        else:
            assert all(power < p["target"] or any(c[0] == f for c in p["checks"]) for f, power in p["curve"])
    for stamp in [plan, *plan.get("updates", [])]:
        assert "+uncommitted" not in stamp["commit"], "compute the plan from committed code"


def test_an_update_replaces_its_claims_plans_keeps_the_others_and_says_so():
    from lrd.units.plan import merge_plans

    settings = {"n_walk": 40, "n_draws": 100, "seed": 0, "target": 0.8}
    old = {**settings, "date": "d0", "commit": "c0", "seconds": 60.0,
           "plans": [{"claim": "a", "v": 0}, {"claim": "b", "v": 0}]}
    new = {**settings, "date": "d1", "commit": "c1", "seconds": 6.0, "plans": [{"claim": "b", "v": 1}]}
    merged = merge_plans(old, new)
    assert merged["plans"] == [{"claim": "a", "v": 0}, {"claim": "b", "v": 1}] and merged["commit"] == "c0"
    assert merged["updates"] == [{"date": "d1", "commit": "c1", "claims": ["b"], "seconds": 6.0}]
    assert "Recomputed on d1 with the code of commit `c1`" in plan_markdown({**merged, "plans": []})
    with pytest.raises(ValueError, match="n_draws"):
        merge_plans(old, {**new, "n_draws": 50})


def test_the_plan_s_recommended_design_reaches_its_power_on_a_fresh_seed():
    """The issue's check: one claim's decisive design, drawn again on a seed the plan never used."""
    plan = _plan()
    fast = ("lrd.selection", "lrd.pruning_frenet", "lrd.pruning_nrs", "lrd.pruning_gfmi_median", "ilse.mapping",
            "lrd.pruning_gfmi_only", "lrd.selection_llm")
    chosen = next(p for p in plan["plans"] if p["reached"] and p["claim"] in fast)
    design = {k: tuple(v) if isinstance(v, list) else v for k, v in chosen["design"].items()}
    n = 200
    fresh = rates(chosen["claim"], design, n_draws=n, seed=987654, models=("power",))["power"]
    se = math.sqrt(chosen["target"] * (1 - chosen["target"]) / n)
    assert fresh >= chosen["target"] - 3 * se, (chosen["claim"], fresh)


def test_the_page_has_an_entry_for_each_planned_claim_with_its_simulated_effect():
    plan = _plan()
    text = plan_markdown(plan)
    for c in {p["claim"] for p in plan["plans"]}:
        assert f"({anchor(c)})=" in text
    assert text.count("Simulated effect (the claim's power model") == len(plan["plans"])
    reached = next(p for p in plan["plans"] if p["reached"])
    assert design_words(reached["design"]) in plan_line(reached) and "95% interval" in plan_line(reached)
    assert claim_plan_text(plan, reached["claim"])
    assert claim_plan_text(plan, "cosine.theory") == ""
    assert plan_markdown(None).startswith("No plan")


def test_undecided_dashboard_rows_link_their_plan_and_decided_ones_do_not():
    from lrd.book.sphinxext import table_markdown
    from lrd.verdicts.record import Verdict

    plan = {"plans": [{"claim": c, "reached": True, "design": {"n_models": 16}, "power": 0.9}
                      for c in ("skean.gain", "skean.valley")]}
    rows = [{**Verdict("skean.gain", "test", "x", test="t", p_value=0.5, p_min=0.01).record(), "docname": "book/mid_layer"},
            {**Verdict("skean.valley", "test", "x", test="t", p_value=0.001, p_min=0.001).record(), "docname": "book/mid_layer"}]
    text = table_markdown(rows, "book/intro", plan=plan, decide_page="book/decide")
    assert f"<{anchor('skean.gain')}>" in text and f"<{anchor('skean.valley')}>" not in text
    assert "decide-" not in table_markdown(rows, "book/intro")
