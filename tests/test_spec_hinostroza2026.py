"""The specifications of Hinostroza et al. 2026 (Beyond cosine): each book rule moves the verdict the
way its meaning says, on tables where the answer is known in closed form; the paper's rules and
scopes say where in the paper they are."""

from __future__ import annotations

import inspect
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts import agreement
from lrd.verdicts.record import ALPHA
from lrd.verdicts.specifications import hinostroza2026, judge, simulate, specification

CLAIM_IDS = [s.id for s in hinostroza2026.SPECIFICATIONS]
#: A location in the paper: a section, table, figure, the abstract or the Introduction.
LOCATION = re.compile(r"\b(Sec\.|Section|Table|Fig\.|Figure|abstract|Introduction)", re.IGNORECASE)


def _chance(pairs, p=0.001) -> pd.DataFrame:
    return pd.DataFrame({"model": [m for m, _ in pairs], "task": [t for _, t in pairs], "acc": 0.8, "chance": 0.25,
                         "p_chance": p, "p_min_chance": 0.001})


def _agreement(r_corrected: np.ndarray, model: str = "m", task: str = "t") -> pd.DataFrame:
    """One decoder and task; replicate 0 and the resamples 1..B with the given corrected correlations."""
    n = len(r_corrected)
    return pd.DataFrame({"model": model, "task": task, "replicate": np.arange(n), "r": r_corrected * 0.9,
                         "reliability": 0.81, "r_corrected": r_corrected})


def _p(count: int, n_boot: int) -> float:
    return (1 + count) / (1 + n_boot)


# --- the paper's rules and scopes say where they are ----------------------------------------------

@pytest.mark.parametrize("cid", CLAIM_IDS)
def test_the_paper_s_rules_and_every_scope_name_their_place_in_the_paper(cid):
    spec = specification(cid)
    assert LOCATION.search(spec.scope), f"{cid}: the scope names no location in the paper"
    assert "our translation of the digest" in spec.scope
    for rule in spec.rules:
        if rule.origin == "paper":
            assert LOCATION.search(rule.reason), f"{cid}: {rule.name} quotes the paper without its location"
            assert not rule.alternatives


def test_every_rule_is_the_judge_s_own_constant():
    """The value is the judge's default object, not a copy that could drift from it."""
    for spec in hinostroza2026.SPECIFICATIONS:
        defaults = {n: p.default for n, p in inspect.signature(spec.judge).parameters.items()}
        for rule in spec.rules:
            assert rule.value is defaults[rule.name] or rule.value == defaults[rule.name], (spec.id, rule.name)
    assert specification("cosine.correlation").rule("margin").value is agreement.STRONG_CORRELATION
    assert specification("cosine.dataset").rule("same").value is agreement.SAME_RELEVANCE
    assert specification("cosine.misestimate").rule("min_reliability").value is agreement.MIN_RELIABILITY
    assert all(s.rule("alpha").value is ALPHA for s in hinostroza2026.SPECIFICATIONS[1:5])


def test_olmo_declares_no_table_because_its_judge_reads_none():
    spec = specification("cosine.olmo")
    takes = [n for n in inspect.signature(spec.judge).parameters if n != "note"]
    assert takes == [] and spec.tables == () and spec.rules == ()
    assert judge("cosine.olmo", {}).outcome == "not testable"


# --- cosine.theory ---------------------------------------------------------------------------------

def test_theory_flips_under_a_stricter_cosine_bound_or_the_paper_s_literal_zero():
    """The toy's crucial block has cosine relevance between 1e-5 and 1e-4 and falls to chance (0.5),
    not to zero: the book's bound and its reading of 'to zero' as 'to chance' decide the verdict."""
    from lrd.methods.counterexample import counterexample
    toy = counterexample()
    assert 1e-5 < toy.cosine_relevance.min() < 1e-4 and toy.accuracy_without.min() == toy.chance == 0.5
    assert judge("cosine.theory", {"toy": toy}).outcome == "demonstrated"
    assert judge("cosine.theory", {"toy": toy}, max_cosine=1e-2).outcome == "demonstrated"
    assert judge("cosine.theory", {"toy": toy}, max_cosine=1e-4).outcome == "demonstrated"
    assert judge("cosine.theory", {"toy": toy}, max_cosine=1e-5).outcome == "contradicted"
    assert judge("cosine.theory", {"toy": toy}, max_without=0.0).outcome == "contradicted"
    for rule in specification("cosine.theory").book_rules:  # every alternative runs
        for value in rule.alternatives:
            assert judge("cosine.theory", {"toy": toy}, **{rule.name: value}).claim == "cosine.theory"


def test_theory_needs_a_perfect_intact_network_and_reads_chance_from_the_toy():
    def toy(accuracy, without, chance=0.5):
        return SimpleNamespace(cosine_relevance=np.array([0.3, 4e-5, 0.2]), accuracy=accuracy,
                               accuracy_without=np.array([accuracy, without, accuracy]), chance=chance)

    assert judge("cosine.theory", {"toy": toy(1.0, 0.5)}).outcome == "demonstrated"
    assert judge("cosine.theory", {"toy": toy(0.99, 0.5)}).outcome == "contradicted"  # not perfect
    assert judge("cosine.theory", {"toy": toy(1.0, 0.3, chance=0.25)}).outcome == "contradicted"  # above chance
    assert judge("cosine.theory", {"toy": toy(1.0, 0.3, chance=0.25)}, max_without=0.3).outcome == "demonstrated"
    assert judge("cosine.theory", {"toy": toy(1.0, 0.0)}, max_without=0.0).outcome == "demonstrated"


# --- cosine.correlation ------------------------------------------------------------------------------

def test_a_wider_correlation_margin_makes_the_claim_easier_and_the_contradiction_harder():
    """Corrected correlations of the resamples spread evenly over [0.5, 0.9]: the bootstrap p-values
    are the closed-form counts, and they move monotonically with the margin."""
    n_boot = 99
    boot = np.linspace(0.5, 0.9, n_boot)
    tables = {"agreement": _agreement(np.r_[0.7, boot]), "chance": _chance([("m", "t")])}
    seen = {}
    for margin in sorted((0.7, *specification("cosine.correlation").rule("margin").alternatives)):
        v = judge("cosine.correlation", tables, margin=margin)
        assert v.p_value == pytest.approx(_p(int((boot >= margin).sum()), n_boot))  # p+ (no replicate <= -margin)
        assert v.p_against == pytest.approx(min(1.0, 2 * _p(int((boot < margin).sum()), n_boot)))
        seen[margin] = v
    margins = sorted(seen)
    assert all(seen[a].p_value >= seen[b].p_value for a, b in zip(margins, margins[1:]))
    assert all(seen[a].p_against <= seen[b].p_against for a, b in zip(margins, margins[1:]))
    assert seen[0.5].outcome == "contradicted" and seen[0.7].outcome == "inconclusive"


def test_alpha_is_the_correlation_verdict_s_level_and_its_chance_filter():
    n_boot = 99
    boot = np.r_[np.full(97, 0.2), 0.75, 0.8]  # 2 of 99 resamples at or above 0.7: p = 3/100
    tables = {"agreement": _agreement(np.r_[0.2, boot]), "chance": _chance([("m", "t")], p=0.02)}
    at = {a: judge("cosine.correlation", tables, alpha=a) for a in (ALPHA, 0.1)}
    assert at[ALPHA].p_value == pytest.approx(_p(2, n_boot)) == at[0.1].p_value
    assert at[ALPHA].outcome == at[0.1].outcome == "reproduced"
    strict = judge("cosine.correlation", tables, alpha=0.01)  # the pair is no longer above measured chance
    assert strict.outcome == "not testable" and "0 of 1 decoder-task pairs" in strict.evidence
    tables["chance"] = _chance([("m", "t")])
    strict = judge("cosine.correlation", tables, alpha=0.01)
    assert strict.p_value == pytest.approx(0.03) and strict.outcome == "inconclusive"  # p_min 0.01 <= alpha


# --- cosine.misestimate -----------------------------------------------------------------------------

def _misestimate_tables(rank_reliability: np.ndarray, difference: np.ndarray) -> dict:
    n = len(difference)
    agreement_ = pd.DataFrame({"model": "m", "task": "t", "replicate": np.arange(n), "misestimated": 0.6 + difference,
                               "rank_reliability": rank_reliability, "unrelated": 0.6})
    unrelated = pd.DataFrame({"model": "m", "task": "t", "permutation": np.arange(199),
                              "misestimated": np.linspace(0.4, 0.8, 199)})
    return {"agreement": agreement_, "chance": _chance([("m", "t")]), "unrelated": unrelated}


def test_min_reliability_widens_the_interval_and_leaves_p_against():
    """A stricter floor leaves out more resamples of the interval (counted at its ends, -1 and +1):
    the interval can only widen; the test against the claim reads every resample."""
    rng = np.random.default_rng(0)
    n_boot = 199
    reliability = np.r_[0.9, np.linspace(0.5, 0.95, n_boot)]  # none below 0.5, ~44% below 0.7
    difference = np.r_[-0.2, rng.normal(-0.2, 0.05, n_boot)]
    tables = _misestimate_tables(reliability, difference)
    rule = specification("cosine.misestimate").rule("min_reliability")
    floors = sorted((rule.value, *rule.alternatives))
    verdicts = [judge("cosine.misestimate", tables, min_reliability=f) for f in floors]
    assert len({v.p_against for v in verdicts}) == 1
    assert verdicts[0].p_against == _p(int(((0.6 + difference[1:]) - 0.6 >= -(1 - 0.9)).sum()), n_boot)
    assert all(v.p_value == 1.0 for v in verdicts)  # the paper's direction is never concluded
    lows, highs = [v.ci[0] for v in verdicts], [v.ci[1] for v in verdicts]
    assert lows == sorted(lows, reverse=True) and highs == sorted(highs)
    assert lows[-1] < lows[0] and highs[-1] > highs[0]  # 0.5 leaves out none, 0.8 two thirds
    assert lows[-1] == -1.0 and highs[-1] == 1.0


def test_the_paper_s_share_sets_delta_of_the_test_against():
    """delta = 1 - share: a difference of -0.2 on every resample is below -delta at 0.9 (contradicted),
    not below -0.25 at a share of 0.75."""
    n_boot = 99
    tables = _misestimate_tables(np.full(n_boot + 1, 0.9), np.full(n_boot + 1, -0.2))
    assert judge("cosine.misestimate", tables).outcome == "contradicted"
    assert judge("cosine.misestimate", tables).p_against == pytest.approx(_p(0, n_boot))
    assert judge("cosine.misestimate", tables, share=0.75).p_against == 1.0


# --- cosine.dataset ---------------------------------------------------------------------------------

def test_a_stricter_margin_of_the_same_relevance_makes_the_claim_harder():
    n_boot = 99
    boot = np.linspace(0.7, 0.94, n_boot)
    task_agreement = pd.DataFrame({"model": "m", "task_a": "a", "task_b": "b", "replicate": np.arange(n_boot + 1),
                                   "r": np.r_[0.86, boot] * 0.8, "reliability_a": 0.8, "reliability_b": 0.8,
                                   "r_corrected": np.r_[0.86, boot]})
    tables = {"task_agreement": task_agreement, "chance": _chance([("m", "a"), ("m", "b")])}
    seen = {}
    for same in sorted((0.9, *specification("cosine.dataset").rule("same").alternatives)):
        v = judge("cosine.dataset", tables, same=same)
        assert v.p_value == pytest.approx(_p(int((boot >= same).sum()), n_boot))
        assert v.p_against == pytest.approx(_p(int((boot <= same).sum()), n_boot))
        seen[same] = v
    assert seen[0.8].p_value > seen[0.9].p_value > seen[0.95].p_value
    assert seen[0.8].p_against < seen[0.9].p_against < seen[0.95].p_against
    assert (seen[0.95].outcome, seen[0.9].outcome) == ("reproduced", "inconclusive")


# --- cosine.pruning ----------------------------------------------------------------------------------

def _curves(d: list[float], extra: str | None = None) -> pd.DataFrame:
    rows = []
    for m, diff in enumerate(d):
        for k in (0, 2, 4):
            rows.append({"model": f"m{m}", "rule": "cosine (BI)", "seed": -1, "k": k, "acc": 0.6})
            rows.append({"model": f"m{m}", "rule": "accuracy (calibration)", "seed": -1, "k": k,
                         "acc": 0.6 + (diff if k else 0.0)})
            if extra:
                rows.append({"model": f"m{m}", "rule": extra, "seed": -1, "k": k, "acc": 0.6 + (2 * diff if k else 0)})
            for seed in range(3):
                rows.append({"model": f"m{m}", "rule": "random", "seed": seed, "k": k, "acc": 0.5 + 0.01 * seed})
    return pd.DataFrame(rows)


def test_alpha_decides_the_pruning_verdict_against_the_smallest_p_five_models_reach():
    """Five models all favouring the accuracy ranking: the exact sign-flip p is 2^-5 = 0.031, below
    0.05 and 0.1, above 0.01, which five models can never reach (not testable)."""
    curves = {"curves": _curves([0.1, 0.05, 0.2, 0.01, 0.03])}
    v = {a: judge("cosine.pruning", curves, alpha=a) for a in (0.01, ALPHA, 0.1)}
    assert v[ALPHA].p_value == pytest.approx(2 ** -5) == v[0.01].p_min
    assert (v[0.01].outcome, v[ALPHA].outcome, v[0.1].outcome) == ("not testable", "reproduced", "reproduced")


def test_the_random_baseline_is_presentation_only_and_another_cosine_rule_can_be_judged():
    curves = _curves([0.1, 0.05, 0.2, 0.01, -0.03], extra="angular (Gromov)")
    base = judge("cosine.pruning", {"curves": curves})
    hidden = judge("cosine.pruning", {"curves": curves}, random="no such rule")
    assert (hidden.p_value, hidden.p_against, hidden.effect) == (base.p_value, base.p_against, base.effect)
    assert "(random 0.510)" in base.evidence and "random" not in hidden.evidence.split(":", 1)[1]
    gromov = judge("cosine.pruning", {"curves": curves}, worse="angular (Gromov)")  # the paper's Figure 2 comparator
    assert gromov.effect == pytest.approx(-base.effect) and gromov.p_value > base.p_value


def test_the_null_model_s_tables_run_under_every_alternative_and_the_defaults_are_the_chapter_s():
    for cid in ("cosine.correlation", "cosine.dataset", "cosine.pruning", "cosine.misestimate"):
        spec = specification(cid)
        tables = simulate(cid, seed=7)
        default = judge(cid, tables)
        assert default == judge(cid, tables, **{r.name: r.value for r in spec.rules})
        assert default.alpha == ALPHA
