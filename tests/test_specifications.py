"""The claims' specifications (lrd.verdicts.specifications): complete, consistent with their judges,
and the entry points ``judge`` and ``simulate`` closed on each other."""

from __future__ import annotations

import inspect
import pathlib

import pytest

from lrd.verdicts import calibration
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.record import Verdict
from lrd.verdicts.spec import Rule, Specification, Table
from lrd.verdicts.specifications import SPECIFICATIONS, judge, null_models, simulate, specification

#: Judge parameters that change the wording only, never a number: not rules.
PRESENTATION = {"note"}

TESTED = sorted(null_models())


def _defaults(spec: Specification) -> dict:
    return {n: p.default for n, p in inspect.signature(spec.judge).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_every_claim_has_exactly_one_specification_in_the_claims_order():
    assert list(SPECIFICATIONS) == list(CLAIMS)
    for cid, spec in SPECIFICATIONS.items():
        assert spec.claim is CLAIMS[cid]


@pytest.mark.parametrize("cid", list(CLAIMS))
def test_a_specification_says_what_a_referee_needs(cid):
    spec = specification(cid)
    for field in ("scope", "estimand", "unit", "test"):
        assert getattr(spec, field).strip(), f"{cid}: {field} is empty"
    takes_input = any(p.default is inspect.Parameter.empty for p in inspect.signature(spec.judge).parameters.values())
    assert bool(spec.tables) == takes_input, f"{cid}: every input of the judge is a declared table"
    for rule in spec.rules:
        assert rule.reason.strip()


@pytest.mark.parametrize("cid", list(CLAIMS))
def test_every_number_a_judge_takes_is_a_declared_rule_with_the_judge_s_default(cid):
    """A default of the judge that is neither a table nor a rule would be a choice the reader cannot see."""
    spec = specification(cid)
    defaults = _defaults(spec)
    tables = {t.name for t in spec.tables}
    undeclared = sorted(set(defaults) - tables - {r.name for r in spec.rules} - PRESENTATION)
    assert not undeclared, f"{cid}: judge parameters with defaults that are neither rules nor tables: {undeclared}"
    for rule in spec.rules:
        assert rule.name in defaults, f"{cid}: rule {rule.name} has no default in the judge"
        assert rule.value == defaults[rule.name], f"{cid}: rule {rule.name} is {rule.value!r}, the judge's default {defaults[rule.name]!r}"


@pytest.mark.parametrize("cid", TESTED)
def test_judge_accepts_what_simulate_draws_for_every_model(cid):
    spec = specification(cid)
    for model, which in (("null", "simulate"), ("edge", "effect"), ("power", "power_effect")):
        if getattr(spec.null, which) is None:
            continue
        tables = simulate(cid, seed=3, model=model)
        assert set(tables) <= {t.name for t in spec.tables} | {r.name for r in spec.rules}
        verdict = judge(cid, tables)
        assert isinstance(verdict, Verdict) and verdict.claim == cid
        assert verdict == spec.judge(**simulate(cid, seed=3, model=model))  # the same draw, the same verdict


@pytest.mark.parametrize("cid", TESTED)
def test_every_alternative_of_every_book_rule_runs(cid):
    spec = specification(cid)
    tables = simulate(cid, seed=5)
    for rule in spec.book_rules:
        for value in rule.alternatives:
            assert judge(cid, tables, **{rule.name: value}).claim == cid, (rule.name, value)


def test_judge_refuses_what_is_not_a_table_or_a_rule_naming_them():
    tables = simulate("skean.gain", seed=0)
    with pytest.raises(ValueError, match="not a rule of this claim; its rules"):
        judge("skean.gain", tables, nonsense=1)
    with pytest.raises(ValueError, match="not a table of this claim"):
        judge("skean.gain", {**tables, "extra": None})
    with pytest.raises(ValueError, match="needed"):
        judge("skean.gain", {})
    with pytest.raises(KeyError, match="unknown claim"):
        judge("nope.nothing", tables)


def test_simulate_refuses_a_demonstration_and_an_unknown_model():
    with pytest.raises(ValueError, match="demonstration"):
        simulate("cosine.theory")
    with pytest.raises(ValueError, match="model must be"):
        simulate("skean.gain", model="alternative")


def test_the_appendix_reads_its_null_models_from_the_specifications_never_by_a_name_string():
    assert calibration.NULL_MODELS == null_models()
    for cid, model in calibration.NULL_MODELS.items():
        assert calibration.null_model(cid) is specification(cid).null is model
    sources = pathlib.Path(calibration.__file__).parent.rglob("*.py")
    assert not [p.name for p in sources if "importlib" in p.read_text()]


def test_a_rule_says_whose_it_is_and_why():
    with pytest.raises(ValueError, match="origin"):
        Rule("margin", 0.1, "referee", "because")
    with pytest.raises(ValueError, match="reason"):
        Rule("margin", 0.1, "book", " ")
    with pytest.raises(ValueError, match="no alternatives"):
        Rule("low", 0.02, "paper", "Sec. 4: 2%-16%", alternatives=(0.01,))


def test_a_specification_refuses_a_rule_or_table_its_judge_does_not_take():
    spec = specification("skean.gain")
    with pytest.raises(ValueError, match="not a parameter"):
        Specification(spec.claim, spec.judge, (Table("results", "rows"),), "s", "e", "u", "t",
                      rules=(Rule("not_a_parameter", 1, "book", "why"),))


def test_the_page_shows_every_claim_with_its_rules_whose_they_are_and_their_alternatives():
    from lrd.book.specs import anchor, specifications_markdown

    page = specifications_markdown()
    for cid, spec in SPECIFICATIONS.items():
        assert f"({anchor(cid)})=" in page
        for rule in spec.rules:
            assert f"`{rule.name}`" in page, (cid, rule.name)
    one = specifications_markdown([specification("skean.gain")])
    assert one.count("### ") == 1 and "Scope the paper states" in one
    for rule in specification("skean.gain").rules:
        row = next(line for line in one.splitlines() if f"`{rule.name}`" in line)
        assert ("`paper`" in row) == (rule.origin == "paper")
        assert ("none" in row.split("|")[-2]) == (not rule.alternatives)


def test_a_chapter_s_judged_tables_are_saved_and_judge_again_to_the_same_verdict(tmp_path):
    """Glue.judge keeps what the judge read; Glue.save writes it in the data-only format; the
    saved tables judged again give the recorded verdict (a test, and a demonstration whose input
    is a method's result record)."""
    from lrd.book.glue import Glue, saved_tables, tables_path
    from lrd.methods.counterexample import counterexample

    g = Glue("mid_layer", record_only=True)
    tables = simulate("skean.gain", seed=2)
    verdict = g.judge("skean.gain", tables, section="s", note="a note")
    g.save(tmp_path)
    assert tables_path(tmp_path, "mid_layer", "skean.gain").is_file()
    saved = saved_tables(tmp_path, "mid_layer")["skean.gain"]
    assert judge("skean.gain", saved["tables"], note=saved["note"], **saved["choices"]) == verdict
    assert g.verdicts[0]["outcome"] == verdict.outcome and "a note" in g.verdicts[0]["note"]

    g = Glue("cosine_vs_ablation", record_only=True)
    verdict = g.judge("cosine.theory", {"toy": counterexample()})
    g.save(tmp_path)
    saved = saved_tables(tmp_path, "cosine_vs_ablation")["cosine.theory"]
    assert judge("cosine.theory", saved["tables"]) == verdict
    with pytest.raises(ValueError, match="not a rule"):
        g.judge("cosine.theory", {"toy": counterexample()}, margin=1)


_REFERENCE_RESULTS = pathlib.Path(__file__).resolve().parent / "nbval" / "results"


@pytest.mark.parametrize("chapter", sorted({c.chapter for c in CLAIMS.values()}))
def test_an_executed_chapter_s_saved_tables_judge_again_to_its_recorded_verdicts(chapter):
    """The acceptance of the specifications: ``judge(claim_id, tables)`` on the tables an executed
    chapter saved (the ci references, re-executed by nbval) gives the verdict the dashboard shows,
    field for field."""
    import json

    from lrd.book.glue import Glue, saved_tables

    record = json.loads((_REFERENCE_RESULTS / f"{chapter}.json").read_text())
    saved = saved_tables(_REFERENCE_RESULTS, chapter)
    assert sorted(saved) == sorted(v["claim"] for v in record["verdicts"])
    for recorded in record["verdicts"]:
        inputs = saved[recorded["claim"]]
        glue = Glue(chapter, record_only=True)  # judged as the chapter judges: its sensitivity and rules too
        glue.judge(recorded["claim"], inputs["tables"], note=inputs["note"], section=recorded["section"],
                   **inputs["choices"])
        assert json.loads(json.dumps(glue.verdicts[0])) == recorded


def test_the_sensitivity_table_has_every_saved_verdict_and_names_exactly_the_choices_that_flip_it():
    from lrd.book.robustness import sensitivity_table
    from lrd.verdicts.sensitivity import sensitivity

    table = sensitivity_table(_REFERENCE_RESULTS)
    assert list(table["claim"]) == list(CLAIMS)  # every chapter saved its tables, in the claims' order
    assert (table["robust"] == (table["flipped by"] == "")).all()
    from lrd.verdicts.sensitivity import LEVEL_RULE

    assert (table["choices tried"] == [sum(len(r.alternatives) for r in specification(c).book_rules
                                           if r.name != LEVEL_RULE) for c in table["claim"]]).all()
    # ilse.parameters fails on the paper's own models from 14M (its v1 range): only the alternative range
    # of Table 1's models (410M-8B) would make it "demonstrated", and the table says so
    row = table.set_index("claim").loc["ilse.parameters"]
    assert row["outcome"] == "contradicted" and not row["robust"] and "params_range" in row["flipped by"]
    assert sensitivity("ilse.parameters", **_saved("ilse.parameters")).flips[0].outcome == "demonstrated"


def _saved(claim_id: str) -> dict:
    from lrd.book.glue import saved_tables

    inputs = saved_tables(_REFERENCE_RESULTS, CLAIMS[claim_id].chapter)[claim_id]
    return {"tables": inputs["tables"], "note": inputs["note"], **inputs["choices"]}


def test_glue_judge_records_the_sensitivity_the_rules_and_the_language_models():
    """A chapter's verdict record says whether the book's rules decide it (as
    lrd.verdicts.sensitivity does from the same tables), every rule at its value, and the
    language models of the panel as their packs state them; the glued text ends with it."""
    import json

    from lrd.book.glue import Glue
    from lrd.verdicts.sensitivity import sensitivity

    inputs = _saved("ilse.parameters")
    glue = Glue("cayley_aggregation", record_only=True)
    glue.judge("ilse.parameters", inputs.pop("tables"), **inputs)
    record = glue.verdicts[0]
    s = sensitivity("ilse.parameters", **_saved("ilse.parameters"))
    assert record["robust"] is s.robust is False and record["n_alternatives"] == len(s.alternatives)
    assert [(f["rule"], f["outcome"]) for f in record["flips"]] == [(a.rule, a.outcome) for a in s.flips]
    assert {r["name"] for r in record["rules"]} == {r.name for r in specification("ilse.parameters").rules}
    assert glue.values["cayley_aggregation-verdict_parameters"].endswith(
        f"({len(s.flips)} of the {len(s.alternatives)} alternatives of the book's rules).")
    assert json.loads(json.dumps(record)) == record
    inputs = _saved("cosine.correlation")
    glue = Glue("cosine_vs_ablation", record_only=True)
    glue.judge("cosine.correlation", inputs.pop("tables"), **inputs)
    panel = glue.verdicts[0]["llm_panel"]
    assert panel.startswith("1 language model, 135M parameters, instruct-tuned rather than base, dequantised from GGUF")
    assert "SmolLM2-135M-Instruct" in panel


#: The tests whose level decides nothing, so the level is no rule of theirs (nor a parameter of their
#: judge): each is "not testable" on every panel, with no p-value for a level to compare.
LEVEL_DECIDES_NOTHING = {
    "ilse.gain": "a maximum over the paper's own cells: described, never tested",
    "cosine.olmo": "OLMo is not in the offline panel: the judge reads no table",
}


@pytest.mark.parametrize("cid", [c for c, claim in CLAIMS.items() if claim.kind == "test"])
def test_every_test_has_the_level_alpha_as_a_book_rule_except_where_it_decides_nothing(cid):
    from lrd.verdicts.record import ALPHA
    from lrd.verdicts.spec import level_rule

    spec = specification(cid)
    takes = inspect.signature(spec.judge).parameters
    if cid in LEVEL_DECIDES_NOTHING:
        assert "alpha" not in {r.name for r in spec.rules} and "alpha" not in takes
        tables = simulate(cid, seed=0) if spec.null is not None else {}
        verdict = judge(cid, tables)
        assert verdict.p_value is None and verdict.outcome == "not testable"
        return
    rule = spec.rule("alpha")
    assert rule == level_rule(rule.reason)  # the book's 0.05, 0.01 and 0.1 its alternatives
    assert rule.value == ALPHA and rule.origin == "book" and rule.alternatives == (0.01, 0.1)
    assert takes["alpha"].default == ALPHA


def test_the_test_level_is_shown_beside_the_verdict_but_never_decides_its_robustness():
    from types import SimpleNamespace

    from lrd.book.tested import sensitivity_text
    from lrd.verdicts.sensitivity import LEVEL_RULE, Alternative, Sensitivity

    primary = SimpleNamespace(outcome="reproduced")
    level = Alternative(LEVEL_RULE, 0.01, "inconclusive", 0.03, None)
    margin = Alternative("margin", 0.8, "inconclusive", 0.2, None)
    only_level = Sensitivity(primary, (level, Alternative("margin", 0.8, "reproduced", 0.01, None)))
    assert only_level.robust and not only_level.flips and only_level.at_other_levels == (level,)
    assert only_level.counted == (only_level.alternatives[1],)
    both = Sensitivity(primary, (level, margin))
    assert not both.robust and both.flips == (margin,)
    text = sensitivity_text({"outcome": "reproduced", "robust": True, "n_alternatives": 1,
                             "levels": [{"value": "0.01", "outcome": "inconclusive"}]})
    assert text.startswith("robust: the same outcome under the one alternative of the book's rules")
    assert "alpha = 0.01 it would read 'inconclusive'" in text
