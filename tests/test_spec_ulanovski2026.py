"""The ILSE specifications (lrd.verdicts.specifications.ulanovski2026): the paper's rules quote a
location, and each book rule moves the verdict the way its meaning says when set to an alternative,
on constructed tables whose answer is known in closed form."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts import fusion
from lrd.verdicts.claims import CLAIMS, ILSE_KINDS, ILSE_PARAMS_RANGE, ILSE_TABLE1_PARAMS_RANGE
from lrd.verdicts.specifications import judge, specification

ILSE = [cid for cid in CLAIMS if cid.startswith("ilse.")]
LOCATION = re.compile(r"abstract|Sec\. \d|Table \d|Fig\. \d|Key findings|Limitations|ablation")


def scores_table(gains: dict[str, list[float]], *, method: str, n_tasks: int = 2, base: float = 0.6) -> pd.DataFrame:
    """``method`` at ``base`` and each reference at ``base - gain`` (one gain per model), 2 seeds."""
    n_models = len(next(iter(gains.values())))
    rows = []
    for i, t, s in itertools.product(range(n_models), range(n_tasks), (0, 1)):
        rows.append({"model": f"m{i}", "task": f"t{t}", "method": method, "seed": s, "score": base})
        for ref, g in gains.items():
            rows.append({"model": f"m{i}", "task": f"t{t}", "method": ref, "seed": s, "score": base - g[i]})
    return pd.DataFrame(rows)


def items_table(accuracy: dict[tuple[str, str, str], float], n_items: int = 100, seeds=(0, 1)) -> pd.DataFrame:
    """Correctness with exactly ``accuracy`` per (model, task, method), the same on every seed."""
    rows = []
    for (model, task, method), acc in accuracy.items():
        k = int(round(acc * n_items))
        for s, i in itertools.product(seeds, range(n_items)):
            rows.append({"model": model, "task": task, "method": method, "seed": s, "item": i,
                         "correct": int(i < k)})
    return pd.DataFrame(rows)


# ---- what a referee reads ------------------------------------------------------------------------

@pytest.mark.parametrize("cid", ILSE)
def test_the_paper_s_rules_and_the_scope_say_where_in_the_paper(cid):
    spec = specification(cid)
    assert LOCATION.search(spec.scope), f"{cid}: the scope names no location in the paper"
    for rule in spec.rules:
        if rule.origin == "paper":
            assert LOCATION.search(rule.reason), f"{cid}: {rule.name} quotes no location"
        else:
            assert rule.alternatives, f"{cid}: book rule {rule.name} offers no alternative"


def test_the_size_rule_is_the_claims_own_scope_and_the_same_object_in_every_judge():
    for cid in ILSE:
        spec = specification(cid)
        if "params_range" in {r.name for r in spec.rules}:
            assert spec.rule("params_range").value is ILSE_PARAMS_RANGE
            assert CLAIMS[cid].scope.params == ILSE_PARAMS_RANGE


# ---- params_range: a wider range counts more models ----------------------------------------------

def test_the_size_rule_is_the_paper_s_range_from_14m_and_table_1_s_range_is_its_alternative():
    assert ILSE_PARAMS_RANGE == (14_067_712, 8_030_261_248)  # Pythia-14M to Llama-3-8B (abstract v1: 14M to 8B)
    for cid in ILSE:
        spec = specification(cid)
        if "params_range" in {r.name for r in spec.rules}:
            assert spec.rule("params_range").alternatives == (ILSE_TABLE1_PARAMS_RANGE,)
            assert spec.rule("kinds").value == ILSE_KINDS and spec.rule("kinds").origin == "book"
        assert "410M-8B" not in spec.scope and "410M to 8B" not in spec.scope


def test_the_table_1_range_leaves_out_a_70m_model_the_paper_s_range_counts():
    scores = scores_table({"last": [0.1] * 6, "best": [0.05] * 6, "dwatt": [0.02] * 6}, method="cayley")
    base_params = {f"m{i}": 1.5e9 for i in range(5)} | {"m5": 7.0e7}  # m5: a 70M decoder, as Pythia-70M
    tables = {"scores": scores, "base_params": base_params}
    default = judge("ilse.baselines", tables)
    table1 = judge("ilse.baselines", tables, params_range=ILSE_TABLE1_PARAMS_RANGE)
    assert "6 models" in default.test and "m5" not in default.evidence
    assert "5 models" in table1.test and "m5 (70.0M)" in table1.evidence
    assert default.p_value == pytest.approx(1 / 64) and table1.p_value == pytest.approx(1 / 32)


def test_every_kind_counts_the_sentence_embedders_the_default_leaves_out():
    scores = scores_table({"last": [0.1] * 6, "best": [0.05] * 6, "dwatt": [0.02] * 6}, method="cayley")
    tables = {"scores": scores, "base_params": {f"m{i}": 1e8 for i in range(6)},
              "model_kinds": {f"m{i}": ("encoder" if i == 5 else "decoder") for i in range(6)}}
    default, every = judge("ilse.baselines", tables), judge("ilse.baselines", tables, kinds=None)
    assert default.p_value == pytest.approx(1 / 32) and "m5 (encoder)" in default.evidence
    assert every.p_value == pytest.approx(1 / 64) and "m5" not in every.evidence


def test_the_size_rule_at_its_default_is_the_claim_s_scope_bit_for_bit():
    frame = pd.DataFrame({"model": ["tiny", "llm", "huge"], "score": [0.1, 0.2, 0.3]})
    sizes = {"tiny": 2.3e7, "llm": 1.5e9, "huge": 7e10}
    assert fusion.size_scope("ilse.fc", sizes, frame)[1] == fusion.size_scope("ilse.fc", sizes, frame,
                                                                               params=ILSE_PARAMS_RANGE)[1]
    shares = pd.DataFrame({"model": ["tiny", "llm"], "params": [3e5, 3e5], "base_params": [2.3e7, 1.5e9],
                           "share": [3e5 / 2.3e7, 3e5 / 1.5e9]})
    default = judge("ilse.parameters", {"shares": shares})
    assert "14.1M-8.0B" in default.evidence and not default.holds  # the 23M decoder's 1.3% counts against
    table1 = judge("ilse.parameters", {"shares": shares}, params_range=ILSE_TABLE1_PARAMS_RANGE)
    assert table1.holds and "tiny (23.0M)" in table1.evidence


# ---- ilse.fc: which approaches are "existing" ---------------------------------------------------

def test_dropping_elmo_from_the_existing_approaches_turns_a_loss_into_a_reproduction():
    gains = {"best": [0.1] * 6, "dwatt": [0.05] * 6, "elmo": [-0.05] * 6, "last": [0.2] * 6}
    tables = {"scores": scores_table(gains, method="fc")}
    default = judge("ilse.fc", tables)  # FC below ELMo in every model
    table1 = judge("ilse.fc", tables, existing=fusion.PAPER_BASELINES)
    assert default.outcome == "contradicted" and default.p_value == 1.0
    assert table1.outcome == "reproduced" and table1.p_value == pytest.approx(1 / 64)


# ---- the level alpha -------------------------------------------------------------------------------

def test_alpha_is_the_cayley_verdict_s_level_and_its_per_model_count_s():
    # 7 models (p_min = 2^-7 < 0.01), Cayley 1 point below FC in one and 5 to 20 above in six: the sign-flip
    # p is 2/128, between 0.01 and 0.05; per model (100 items, 2 seeds), m1's 5 points have a Holm p near 0.025
    leads = [-0.01, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2]
    accuracy = {}
    for i, d in enumerate(leads):
        accuracy.update({(f"m{i}", "t0", "cayley"): 0.6, (f"m{i}", "t0", "fc"): 0.6 - d})
    tables = {"scores": scores_table({"fc": leads}, method="cayley"), "items": items_table(accuracy)}
    at = {a: judge("ilse.cayley_performance", tables, alpha=a) for a in (0.01, 0.05, 0.1)}
    assert [v.p_value for v in at.values()] == pytest.approx([2 / 128] * 3)
    assert [at[a].alpha for a in at] == [0.01, 0.05, 0.1]
    assert at[0.05].outcome == at[0.1].outcome == "reproduced" and at[0.01].outcome == "inconclusive"
    assert at[0.01].per_model == (5, 7) and at[0.05].per_model == at[0.1].per_model == (6, 7)
    r = fusion.cayley_performance_result(tables["scores"], items=tables["items"], alpha=0.01)
    assert r.alpha == 0.01 and r.outcome == "inconclusive" and r.per_model == (5, 7)
    assert judge("ilse.cayley_performance", tables) == at[0.05]  # the book's level is the default


# ---- ilse.few_shot: every shot count, or 32 only -------------------------------------------------

def test_reading_the_shots_as_32_only_forgives_a_loss_at_8_shots():
    full = scores_table({"dwatt": [0.0] * 6, "last": [0.0] * 6}, method="fc")  # references at 0.6
    rows = [{"model": f"m{i}", "task": f"t{t}", "shots": k, "method": "cayley", "seed": s, "score": 0.6 + lead}
            for i, t, s, (k, lead) in itertools.product(range(6), range(2), (0, 1), ((8, -0.05), (16, 0.02),
                                                                                     (32, 0.05)))]
    tables = {"few_shot": pd.DataFrame(rows), "scores": full}
    every = judge("ilse.few_shot", tables)
    at_32 = judge("ilse.few_shot", tables, shots=(32, 32))
    from_16 = judge("ilse.few_shot", tables, shots=(16, 32))
    assert every.outcome == "contradicted" and every.p_value == 1.0
    assert at_32.outcome == from_16.outcome == "reproduced"
    assert at_32.p_value == from_16.p_value == pytest.approx(1 / 64)


# ---- ilse.gain: not testable; the reference moves only the description ----------------------------

def _gain_items():
    # m0/t0: last 30%, Cayley 80% (a 50-point gain); m0/t1: last 75%, Cayley 95% (20 points)
    acc = {("m0", "t0", "last"): 0.3, ("m0", "t0", "cayley"): 0.8, ("m0", "t0", "best"): 0.6,
           ("m0", "t1", "last"): 0.75, ("m0", "t1", "cayley"): 0.95, ("m0", "t1", "best"): 0.8}
    return items_table(acc)


def test_the_gain_over_the_best_layer_is_smaller_than_over_the_last_and_neither_is_a_test():
    items = _gain_items()
    last = judge("ilse.gain", {"items": items, "n_boot": 199})
    best = judge("ilse.gain", {"items": items, "n_boot": 199}, reference="best")
    assert last.effect == pytest.approx(50.0) and best.effect == pytest.approx(20.0)
    assert last.outcome == best.outcome == "not testable"
    assert "Table 1's largest: 47.6" in last.paper_effect and "Table 1's largest: 40.5" in best.paper_effect


# ---- ilse.mapping: "learns the task" -------------------------------------------------------------

def _ablation(mean: float, sd: float = 0.002, n_mappings: int = 10, n_seeds: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"variant": f"random mapping {i}", "seed": s, "score": mean + rng.normal(0, sd)}
                         for i in range(n_mappings) for s in range(n_seeds)])


def test_a_stricter_margin_above_chance_puts_a_barely_learning_encoder_out_of_scope():
    ablation = _ablation(0.53)  # 3 points above a majority class at 50%
    default = judge("ilse.mapping", {"ablation": ablation, "chance": 0.5})
    strict = judge("ilse.mapping", {"ablation": ablation, "chance": 0.5}, above_chance_pp=5.0)
    loose = judge("ilse.mapping", {"ablation": ablation, "chance": 0.5}, above_chance_pp=0.0)
    assert default.outcome == loose.outcome == "reproduced"  # mapping component ~0.1 points << 1.5
    assert strict.outcome == "not testable" and "not 5 points above" in strict.evidence
    assert default.p_value == loose.p_value


def test_the_pivot_seed_moves_only_the_monte_carlo_p_against():
    ablation = _ablation(0.8, sd=0.015)
    a = judge("ilse.mapping", {"ablation": ablation, "n_draws": 2000})
    b = judge("ilse.mapping", {"ablation": ablation, "n_draws": 2000}, seed=1)
    assert a.p_value == b.p_value and a.statistic == b.statistic
    assert a.p_against != b.p_against and abs(a.p_against - b.p_against) < 0.05


# ---- ilse.cayley_efficiency: how much lighter, and where -----------------------------------------

def _graphs_and_memory(ratios: dict[int, float]):
    graphs = pd.DataFrame({"model": ["m"], "states": [25], "cayley_nodes": [120], "cayley_edges": [480],
                           "fc_edges": [600]})
    memory = pd.DataFrame([{"graph": g, "tokens": t, "edges": (100 * t if g == "cayley" else 1000 * t),
                            "peak_bytes": (1e6 * r if g == "fc" else 1e6)} for t, r in ratios.items()
                           for g in ("fc", "cayley")])
    return {"graphs": graphs, "memory": memory}


def test_the_paper_s_factor_of_12_is_stricter_than_any_saving():
    tables = _graphs_and_memory({8: 1.5, 64: 5.0})
    assert judge("ilse.cayley_efficiency", tables).holds
    assert judge("ilse.cayley_efficiency", tables, min_memory_ratio=2.0).holds
    assert not judge("ilse.cayley_efficiency", tables, min_memory_ratio=12.0).holds


def test_every_length_must_save_when_memory_at_is_every():
    tables = _graphs_and_memory({8: 0.9, 64: 5.0})  # heavier at 8 tokens, lighter at 64
    longest = judge("ilse.cayley_efficiency", tables)
    every = judge("ilse.cayley_efficiency", tables, memory_at="every")
    assert longest.holds and "token graph of 64 tokens" in longest.evidence
    assert not every.holds and "0.9x-5.0x" in every.evidence
    with pytest.raises(ValueError, match="memory_at"):
        judge("ilse.cayley_efficiency", tables, memory_at="shortest")
