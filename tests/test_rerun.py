"""lrd.book.rerun: how far each verdict's numbers moved between re-executions, and which outcomes changed."""

import json
import math

import pytest

from lrd.book import rerun


def _record(name, verdicts, group="g", **meta):
    base = {"name": name, "group": group, "machine": "m", "isa": "default", "dtype": "bfloat16", "threads": 2,
            "profile": "ci", "chapters": ["c"], "commit": "abc", "date": "2026-12-06"}
    return base | meta | {"verdicts": verdicts}


def _v(claim, outcome="reproduced", **numbers):
    return {"claim": claim, "chapter": "c", "outcome": outcome} | numbers


def test_identical_records_move_nothing():
    vs = [_v("a", p_value=0.01, effect=0.5, per_model=[3, 8]), _v("b", "inconclusive", p_value=0.4, p_against=0.7)]
    rows = rerun.movement([_record("A", vs), _record("B", [dict(v) for v in vs])])
    assert [r["claim"] for r in rows] == ["a", "b"]
    assert all(r["robust"] and r["identical"] for r in rows)
    assert all(m == 0 for r in rows for m in r["moved"].values())
    s = rerun.summary(rows)
    assert (s["n"], s["identical"], s["moved"], s["not_robust"]) == (2, 2, 0, [])


def test_spread_is_largest_minus_smallest_over_every_record():
    rows = rerun.movement([_record("A", [_v("a", p_value=0.0078, effect=0.24)]),
                           _record("B", [_v("a", p_value=0.0156, effect=0.07)]),
                           _record("C", [_v("a", p_value=0.0100, effect=0.30)])])
    assert rows[0]["moved"]["p_value"] == pytest.approx(0.0156 - 0.0078)
    assert rows[0]["moved"]["effect"] == pytest.approx(0.30 - 0.07)
    assert rows[0]["robust"] and not rows[0]["identical"]
    # the order of the records does not change what moved
    again = rerun.movement([_record("C", [_v("a", p_value=0.0100, effect=0.30)]),
                            _record("A", [_v("a", p_value=0.0078, effect=0.24)]),
                            _record("B", [_v("a", p_value=0.0156, effect=0.07)])])
    assert again[0]["moved"] == pytest.approx(rows[0]["moved"])


def test_an_outcome_that_changes_is_not_robust():
    rows = rerun.movement([_record("A", [_v("a", "reproduced", p_value=0.04), _v("b", p_value=0.001)]),
                           _record("B", [_v("a", "inconclusive", p_value=0.06), _v("b", p_value=0.001)])])
    s = rerun.summary(rows)
    assert s["not_robust"] == ["a"] and s["identical"] == 1 and s["moved"] == 0
    text = rerun.movement_markdown([_record("A", [_v("a", "reproduced", p_value=0.04)]),
                                    _record("B", [_v("a", "inconclusive", p_value=0.06)])])
    assert "reproduced / inconclusive: **not robust**" in text
    assert "1 changed outcome and is not robust to re-execution: `a`" in text


def test_per_model_is_compared_by_its_count_and_missing_numbers_are_skipped():
    rows = rerun.movement([_record("A", [_v("a", per_model=[2, 8], p_against=None, effect=float("nan"))]),
                           _record("B", [_v("a", per_model=[5, 8], p_against=None, effect=float("nan"))])])
    assert rows[0]["moved"] == {"per_model": 3.0}


def test_a_claim_in_one_record_only_is_not_judged():
    rows = rerun.movement([_record("A", [_v("a", p_value=0.1), _v("b", p_value=0.2)]),
                           _record("B", [_v("a", p_value=0.1)])])
    b = next(r for r in rows if r["claim"] == "b")
    assert b["robust"] is None and b["outcomes"] == {"A": "reproduced", "B": None}
    assert rerun.summary(rows)["n"] == 1


def test_markdown_lists_each_record_and_only_the_verdicts_that_moved():
    a = _record("A", [_v("a", p_value=0.01), _v("b", p_value=0.5)], machine="Intel (amx_bf16)", isa="AMX")
    b = _record("B", [_v("a", p_value=0.02), _v("b", p_value=0.5)], machine="Intel (amx_bf16)", isa="AVX2")
    text = rerun.movement_markdown([a, b])
    assert "- **A**: Intel (amx_bf16); kernels AMX; " in text and "; kernels AVX2; " in text
    assert "| `a` | reproduced | 0.01 / 0.02 (moved 0.01) |" in text
    assert "| `b` |" not in text
    assert "1 is identical in every number, 1 kept its outcome" in text


def test_groups_render_one_section_each():
    recs = [_record("A", [_v("a")], group="x"), _record("B", [_v("a")], group="x"), _record("C", [_v("a")], group="y")]
    text = rerun.rerun_markdown(recs)
    assert text.index("**x**") < text.index("**y**")


def test_committed_records_are_complete_and_each_group_compares_one_profile():
    recs = rerun.load_records()
    assert recs, "benchmarks/rerun holds the measured records"
    for r in recs:
        for key in ("name", "group", "machine", "isa", "dtype", "profile", "commit", "date", "verdicts"):
            assert r.get(key) not in (None, ""), (r.get("name"), key)
        assert all(v.get("claim") and v.get("outcome") for v in r["verdicts"])
        json.dumps(r)
    for group, members in rerun.groups(recs).items():
        assert len(members) >= 2, group
        assert len({m["profile"] for m in members}) == 1, group
        assert len({m["name"] for m in members}) == len(members), group


def test_number_reads_fields_as_finite_floats():
    assert rerun.number({"p_value": 1}, "p_value") == 1.0
    assert rerun.number({"p_value": True}, "p_value") is None
    assert rerun.number({"per_model": []}, "per_model") is None
    assert rerun.number({}, "effect") is None
    assert math.isclose(rerun.number({"effect": -0.25}, "effect"), -0.25)


def test_each_verdict_s_fold_says_how_far_it_moved_between_the_builds_of_its_profile():
    from lrd.book.rerun import claim_reexecution
    from lrd.book.tested import details_markdown

    def rec(name, profile, outcome, p):
        return {"name": name, "group": profile, "profile": profile,
                "verdicts": [{"claim": "skean.gain", "outcome": outcome, "p_value": p}]}

    records = [rec("A", "default", "reproduced", 0.01), rec("B", "default", "inconclusive", 0.2),
               rec("C", "ci", "reproduced", 0.01), rec("D", "ci", "reproduced", 0.01)]
    default = claim_reexecution("skean.gain", records, profile="default")
    assert "not robust to re-execution" in default and "0.19" in default and "C" not in default
    assert claim_reexecution("skean.gain", records, profile="ci") == "C against D: identical"
    assert claim_reexecution("skean.valley", records) == ""
    fold = details_markdown({"claim": "skean.gain", "outcome": "reproduced", "reexecution": default})
    assert "**Re-executed**" in fold and "earlier commits" in fold and "A against B" in fold
    assert "Re-executed" not in details_markdown({"claim": "skean.gain", "outcome": "reproduced"})


def test_the_committed_default_records_give_every_default_verdict_a_movement():
    from lrd.book.rerun import claim_reexecution, load_records

    records = load_records()
    default = {v["claim"] for r in records if r["profile"] == "default" for v in r["verdicts"]}
    assert default, "no default-profile record committed"
    assert all(claim_reexecution(c, records, profile="default") for c in default)
