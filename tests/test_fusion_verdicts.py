"""lrd.verdicts.fusion: the ILSE / Cayley-Encoder claims judged by tests with the model as unit.

Closed-form cases: every model gains -> p = 1/2^n; "beats every baseline" is the largest of
the per-baseline p-values; a strong effect the other way is contradicted; too few models are
not testable; few-shot runs are compared with the full-data references; a maximum over cells
is not credited for its selection; the spread over mappings follows the chi-square law.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from lrd.aggregation.summary import cell_wins, layer_graphs, paper_summary, summarize
from lrd.verdicts.claims import ILSE_TABLE_ROWS
from lrd.verdicts.fusion import (judge_baselines, judge_cayley_efficiency, judge_cayley_performance, judge_fc,
                                 judge_few_shot, judge_gain, judge_mapping, judge_parameters, model_differences,
                                 gain_headroom, gain_by_model, in_param_scope, paper_largest_gains, paper_model_shares, mapping_components, sparser_from)
from lrd.verdicts.stats import holm, sign_flip_test


def scores_table(gains: dict[str, list[float]], *, n_tasks: int = 2, seeds=(0, 1, 2), base: float = 0.6,
                 method: str = "cayley", noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Scores of ``method`` at ``base + gain`` and each reference at ``base``, per model.

    ``gains``: reference -> one gain per model (the same on every task and seed).
    """
    rng = np.random.default_rng(seed)
    n_models = len(next(iter(gains.values())))
    rows = []
    for i, t, s in itertools.product(range(n_models), range(n_tasks), seeds):
        rows.append({"model": f"m{i}", "task": f"t{t}", "method": method, "seed": s, "score": base})
        for ref, g in gains.items():
            rows.append({"model": f"m{i}", "task": f"t{t}", "method": ref, "seed": s,
                         "score": base - g[i] + noise * rng.normal()})
    return pd.DataFrame(rows)


# ---- model-level differences ------------------------------------------------------------------

def test_model_differences_average_seeds_then_tasks():
    rows = [("a", "x", "fc", 0, 0.9), ("a", "x", "fc", 1, 0.7), ("a", "x", "last", 0, 0.5),  # seed mean 0.8 - 0.5
            ("a", "y", "fc", 0, 0.6), ("a", "y", "last", 0, 0.6),  # 0
            ("a", "z", "fc", 0, 0.9),  # no 'last': not a cell of the comparison
            ("b", "x", "fc", 0, 0.1), ("b", "x", "last", 0, 0.3)]
    scores = pd.DataFrame(rows, columns=["model", "task", "method", "seed", "score"])
    d = model_differences(scores, "fc", "last")
    assert d.to_dict() == pytest.approx({"a": 0.15, "b": -0.2})
    assert model_differences(scores, "fc", "dwatt").empty


def test_model_differences_refuse_non_finite_scores():
    scores = scores_table({"last": [0.1] * 5}).assign(score=np.nan)
    with pytest.raises(ValueError, match="non-finite"):
        model_differences(scores, "cayley", "last")


# ---- Cayley / FC against baselines: sign-flip over models, intersection-union ------------------

def test_every_model_gaining_over_every_baseline_gives_p_one_over_two_to_the_n():
    v = judge_baselines(scores_table({"last": [0.1] * 5, "best": [0.05] * 5, "dwatt": [0.02] * 5}))
    assert v.p_value == v.p_min == 1 / 32
    assert v.outcome == "reproduced"
    assert v.effect == pytest.approx(2.0)  # binding comparison: DWAtt, in points
    assert "intersection-union" in v.test and "5 models" in v.test


def test_beating_every_baseline_takes_the_largest_p_value():
    gains = {"last": [0.1, 0.2, 0.3, 0.1, 0.2], "best": [0.1, 0.1, 0.1, -0.02, 0.1], "dwatt": [0.1] * 5}
    v = judge_baselines(scores_table(gains))
    per = [sign_flip_test(np.array(g)).p_value for g in gains.values()]
    assert v.p_value == pytest.approx(max(per)) and max(per) > 1 / 32
    assert v.effect_label.startswith("mean gain over Best layer")


def test_more_wins_than_losses_is_not_reproduction():
    """The old rule (a majority of winning cells) would say "partly reproduced" here."""
    v = judge_baselines(scores_table({"last": [0.1, 0.1, 0.1, -0.1, -0.1], "best": [0.1] * 5, "dwatt": [0.1] * 5}))
    assert v.outcome == "inconclusive"


def test_strong_effect_the_other_way_is_contradicted():
    v = judge_cayley_performance(scores_table({"fc": [-0.05] * 5}))
    assert v.p_against == 1 / 32 and v.outcome == "contradicted"


def test_below_one_baseline_is_a_union_judged_by_joint_sign_flips():
    """Below Last in every model: the opposite patterns of Best and DWAtt are as extreme, so
    p_against = 2 / 2^n (min-p over joint flips), not 1 / 2^n; Bonferroni would give 3 / 2^n."""
    v = judge_baselines(scores_table({"last": [-0.05] * 5, "best": [0.1] * 5, "dwatt": [0.1] * 5}))
    assert v.p_against == pytest.approx(2 / 32) and v.outcome == "inconclusive"
    v = judge_baselines(scores_table({"last": [-0.05] * 6, "best": [0.1] * 6, "dwatt": [0.1] * 6}))
    assert v.p_against == pytest.approx(2 / 64) and v.outcome == "contradicted"
    v = judge_baselines(scores_table({"last": [-0.05] * 5, "best": [-0.02] * 5, "dwatt": [-0.1] * 5}))
    assert v.p_against == pytest.approx(1 / 32) and v.outcome == "contradicted"  # correlated: no penalty


def test_too_few_models_are_not_testable():
    v = judge_fc(scores_table({"best": [0.1] * 3, "elmo": [0.1] * 3, "dwatt": [0.1] * 3}, method="fc"))
    assert v.p_value == v.p_min == 1 / 8 and v.outcome == "not testable"


def test_the_aggregator_claims_count_only_models_of_the_papers_sizes():
    """The paper's claims are stated for LLMs of 14M to 8B parameters (abstract v1). Six models
    outside (70B) losing to FC and two in-range ones: counted, every model would say
    "contradicted" (p_against 1/256); two models in scope cannot reach 0.05, and the others are
    named, not counted."""
    scores = scores_table({"fc": [-0.05] * 8})
    sizes = {f"m{i}": (1.5e9 if i < 2 else 7e10) for i in range(8)}
    assert judge_cayley_performance(scores).outcome == "contradicted"
    v = judge_cayley_performance(scores, base_params=sizes)
    assert v.outcome == "not testable" and v.p_min == 1 / 4
    assert "out of the paper's scope (outside its 14.1M-8.0B parameters; shown, not counted): m2 (70.0B)" in v.evidence
    # five models in range decide it, whatever the small ones do
    mixed = scores_table({"last": [0.1] * 5 + [-0.2] * 3, "best": [0.05] * 5 + [-0.2] * 3,
                          "dwatt": [0.02] * 5 + [-0.2] * 3})
    sizes = {f"m{i}": (1.0e9 if i < 5 else 7e10) for i in range(8)}
    assert judge_baselines(mixed).outcome == "inconclusive"  # the small models hid it
    assert judge_baselines(mixed, base_params=sizes).outcome == "reproduced"
    assert judge_fc(scores_table({"best": [0.1] * 3}, method="fc"), existing=("best",),
                    base_params=dict.fromkeys(["m0", "m1", "m2"], 7e10)).outcome == "not testable"
    with pytest.raises(ValueError, match="no parameter count"):
        judge_fc(scores_table({"best": [0.1] * 3}, method="fc"), existing=("best",), base_params={"m0": 1e9})


def test_the_book_s_kinds_rule_leaves_the_sentence_embedders_out_and_says_so():
    """Five decoders above and three sentence embedders of the paper's sizes below: by the book's
    reading of "pre-trained LLMs" (kinds, decoders only) the five decide it (p = 1/32); every kind
    counted (the alternative), the embedders hide it."""
    mixed = scores_table({"last": [0.1] * 5 + [-0.2] * 3, "best": [0.05] * 5 + [-0.2] * 3,
                          "dwatt": [0.02] * 5 + [-0.2] * 3})
    sizes = dict.fromkeys([f"m{i}" for i in range(8)], 1e8)
    kinds = {f"m{i}": ("decoder" if i < 5 else "encoder") for i in range(8)}
    v = judge_baselines(mixed, base_params=sizes, model_kinds=kinds)
    assert v.outcome == "reproduced" and v.p_value == pytest.approx(1 / 32)
    assert "left out by the book's rule kinds (counts decoder models only; shown, not counted): m5 (encoder)" in v.evidence
    assert judge_baselines(mixed, base_params=sizes, model_kinds=kinds, kinds=None).outcome == "inconclusive"
    with pytest.raises(ValueError, match="no kind"):
        judge_baselines(mixed, base_params=sizes, model_kinds={"m0": "decoder"})


def test_tasks_of_one_model_are_not_units():
    """Five tasks of two models: p_min is 1/4 (two models), not 1/32."""
    v = judge_cayley_performance(scores_table({"fc": [0.1, 0.1]}, n_tasks=5))
    assert v.p_min == 1 / 4 and v.outcome == "not testable"


def test_fc_skips_approaches_not_run_and_is_untestable_without_any():
    v = judge_fc(scores_table({"best": [0.1] * 5}, method="fc"))
    assert v.p_value == 1 / 32 and v.evidence.endswith("; not run: Weighted (ELMo), DWAtt")
    v = judge_fc(scores_table({"last": [0.1] * 5}, method="fc"))
    assert v.outcome == "not testable" and v.p_value is None


def test_effect_interval_is_over_models():
    v = judge_cayley_performance(scores_table({"fc": [0.01, 0.02, 0.03, 0.04, 0.05]}))
    lo, hi = sp.t.interval(0.95, 4, loc=3.0, scale=sp.sem([1, 2, 3, 4, 5]))
    assert v.effect == pytest.approx(3.0) and v.ci == pytest.approx((lo, hi))


# ---- few-shot: against the full-data references ------------------------------------------------

def few_shot_tables(shot_gain: dict[int, list[float]], *, refs=("dwatt", "last"), few_refs_score: float = 0.0):
    """Full-data references at 0.6; few-shot Cayley at 0.6 + gain per model; few-shot references
    (which the claim does not compare with) at ``few_refs_score``."""
    n_models = len(next(iter(shot_gain.values())))
    full = scores_table({r: [0.0] * n_models for r in refs})
    full = full[full["method"] != "cayley"]
    rows = []
    for k, gains in shot_gain.items():
        for i, t, s in itertools.product(range(n_models), range(2), (0, 1)):
            rows.append({"model": f"m{i}", "task": f"t{t}", "shots": k, "method": "cayley", "seed": s,
                         "score": 0.6 + gains[i]})
            rows += [{"model": f"m{i}", "task": f"t{t}", "shots": k, "method": r, "seed": s, "score": few_refs_score}
                     for r in refs]
    return pd.DataFrame(rows), full


def test_few_shot_is_compared_with_full_data_references():
    few, full = few_shot_tables({8: [0.05] * 5, 16: [0.06] * 5, 32: [0.07] * 5})
    v = judge_few_shot(few, full)
    assert v.p_value == 1 / 32 and v.outcome == "reproduced"
    assert "full-data DWAtt at 8 shots" in v.evidence and v.effect == pytest.approx(5.0)
    # few-shot references far above (or below) change nothing: they are not the claim's comparison
    few_high, _ = few_shot_tables({8: [0.05] * 5, 16: [0.06] * 5, 32: [0.07] * 5}, few_refs_score=0.99)
    assert judge_few_shot(few_high, full).p_value == 1 / 32


def test_few_shot_must_hold_at_every_shot_count_it_covers():
    few, full = few_shot_tables({4: [-0.3] * 6, 8: [-0.05] * 6, 16: [0.06] * 6, 32: [0.07] * 6})
    v = judge_few_shot(few, full)
    assert v.outcome == "contradicted" and "4 shots" not in v.evidence  # 4 is outside 8-32
    assert judge_few_shot(few, full, shots=(16, 32)).outcome == "reproduced"


def test_few_shot_without_full_data_dwatt_is_not_testable():
    few, full = few_shot_tables({8: [0.05] * 5})
    v = judge_few_shot(few, full[full["method"] != "dwatt"])
    assert v.outcome == "not testable" and "DWAtt" in v.evidence
    assert judge_few_shot(few[few["shots"] == 99], full).outcome == "not testable"


# ---- the largest gain: a maximum over cells ------------------------------------------------------

def items_table(cell_gains: dict[tuple[str, str], float], *, n_items: int = 200, seeds=(0, 1), noise: bool = False,
                seed: int = 0) -> pd.DataFrame:
    """Per cell, the last layer right on a share ``0.3`` of the items and Cayley on ``0.3 + gain``
    (deterministically, or drawn at random with ``noise``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for (model, task), g in cell_gains.items():
        for method, p in (("last", 0.3), ("cayley", 0.3 + g)):
            for s in seeds:
                right = rng.random(n_items) < p if noise else np.arange(n_items) < round(p * n_items)
                rows.append(pd.DataFrame({"model": model, "task": task, "method": method, "seed": s,
                                          "item": np.arange(n_items), "correct": right.astype(np.int8)}))
    return pd.concat(rows, ignore_index=True)


def test_gain_is_not_testable_on_any_panel_and_describes_the_panel_s_gains():
    """"Up to 40 points" is the paper's own maximum: a panel with a 60-point cell does not
    reproduce it and one with 10-point cells does not contradict it; both are "not testable",
    with the panel's largest gain (exact here: deterministic items) as a description."""
    for cells, largest in (({("a", "x"): 0.6, ("b", "x"): 0.1}, 60.0), ({("a", "x"): 0.1, ("b", "x"): 0.05}, 10.0)):
        v = judge_gain(items_table(cells, n_items=1000), n_boot=99)
        assert v.outcome == "not testable" and v.p_value is None and v.p_against is None
        assert v.effect == pytest.approx(largest) and v.ci[0] <= largest <= v.ci[1]
        assert "a / x" in v.evidence and "description, not a test" in v.evidence


def test_the_claim_rests_on_the_paper_s_table_1_largest_gains_computed_not_typed():
    """By hand from Table 1 (the digest): Cayley minus Last is largest at Pythia-410M Emotion
    73.83 - 33.48 = 40.35, Gemma2-2B Poem Sentiment 83.27 - 35.67 = 47.60, Llama3-8B Emotion
    73.43 - 34.23 = 39.20; three of the 15 cells reach 40 (the two above and Gemma2-2B Emotion
    69.60 - 26.89 = 42.71)."""
    paper = paper_largest_gains("cayley", "last").set_index("model")
    assert paper["largest gain"].to_dict() == pytest.approx({"Pythia-410M": 40.35, "Gemma2-2B": 47.60,
                                                             "Llama3-8B": 39.20})
    assert paper["task"].to_dict() == {"Pythia-410M": "Emotion", "Gemma2-2B": "Poem Sentiment", "Llama3-8B": "Emotion"}
    v = judge_gain(items_table({("a", "x"): 0.2}, n_items=100), n_boot=99)
    assert "47.6 points (Gemma2-2B / Poem Sentiment)" in v.evidence and "3 of 15 cells at 40 or more" in v.evidence
    assert "Table 1's largest: 47.6" in v.paper_effect


def test_gain_by_model_is_each_model_s_largest_cell():
    items = items_table({("a", "x"): 0.6, ("b", "x"): 0.1, ("b", "y"): 0.2}, n_items=100)
    table = gain_by_model(items)
    assert table["model"].tolist() == ["a", "b"] and table["cells"].tolist() == [1, 2]
    assert table["largest gain"].tolist() == pytest.approx([60.0, 20.0]) and table["task"].tolist() == ["x", "y"]
    assert table["reference accuracy"].tolist() == pytest.approx([0.3, 0.3])


def test_gain_needs_both_methods_and_a_valid_bootstrap():
    items = items_table({("a", "x"): 0.5})
    assert judge_gain(items[items["method"] == "cayley"]).outcome == "not testable"
    assert judge_gain(items.iloc[:0]).outcome == "not testable"
    with pytest.raises(ValueError, match="n_boot"):
        judge_gain(items, n_boot=10)


# ---- the spread over mappings -------------------------------------------------------------------

def mapping_table(scores: np.ndarray) -> pd.DataFrame:
    """(mappings, seeds) scores as ablation rows, with the variants that are not random mappings."""
    rows = [{"variant": f"random mapping {i}", "seed": s, "score": scores[i, s]}
            for i in range(scores.shape[0]) for s in range(scores.shape[1])]
    rows += [{"variant": "identity mapping", "seed": s, "score": 0.0} for s in range(scores.shape[1])]
    return pd.DataFrame(rows)


def test_mapping_components_are_the_two_way_anova():
    """Closed form: the mapping's component is (MS_a - MS_e) / n; the reproduction test is the
    chi-square bound of the mapping means, in points."""
    scores = np.array([[0.80, 0.81], [0.82, 0.80], [0.79, 0.83], [0.81, 0.82]])
    runs = scores * 100
    means = runs.mean(1)
    ms_a = 2 * means.var(ddof=1)
    resid = runs - means[:, None] - runs.mean(0) + runs.mean()
    ms_e = (resid ** 2).sum() / 3
    c = mapping_components(runs)
    assert c["ms_a"] == pytest.approx(ms_a) and c["ms_e"] == pytest.approx(ms_e) and c["df_e"] == 3
    v = judge_mapping(mapping_table(scores))
    x = 3 * ms_a / (2 * 1.5 ** 2)
    assert v.statistic == pytest.approx(x) and v.p_value == pytest.approx(sp.chi2.cdf(x, 3))
    assert v.effect == pytest.approx(np.sqrt(max(0.0, (ms_a - ms_e) / 2)))


def test_mapping_spread_that_is_seed_noise_is_not_contradicted():
    """The issue's case: seeds spread as much as mappings (7 points each) and the mapping has no
    effect. The old per-run chi-square test said "contradicted" (std 7 >> 1.5); the mapping's
    component is zero, so nothing contradicts the claim (and the noise forbids reproducing it)."""
    rng = np.random.default_rng(3)
    scores = 0.7 + 0.07 * rng.normal(size=(20, 3))
    v = judge_mapping(mapping_table(scores))
    assert v.outcome == "inconclusive"
    assert "std over seeds at one mapping" in v.evidence


def test_mapping_outcomes():
    rng = np.random.default_rng(0)
    assert judge_mapping(mapping_table(0.8 + 0.001 * rng.normal(size=(10, 3)))).outcome == "reproduced"
    big = 0.8 + 0.05 * rng.normal(size=(10, 1)) + 0.002 * rng.normal(size=(10, 3))  # the mapping moves 5 points
    assert judge_mapping(mapping_table(big)).outcome == "contradicted"
    assert judge_mapping(mapping_table(np.full((1, 3), 0.8))).outcome == "not testable"
    one_seed = judge_mapping(mapping_table(0.8 + 0.05 * rng.normal(size=(10, 1))))
    assert one_seed.p_against is None and one_seed.outcome != "contradicted"


def test_mapping_per_model_is_the_ablation_test_on_each_grid_and_holds_its_size():
    """Per model the same chi-square bound as the ablation model's verdict (closed form); at the
    boundary (the mapping's component exactly 1.5 points, seed effect and training noise of up to
    4.5 points, 10 mappings x 3 seeds, the chapter's per-model grid) at most 5% (+2 SE) of models
    are declared below it; with no mapping effect and little noise most are."""
    from lrd.verdicts.fusion import mapping_model_tests

    rng = np.random.default_rng(1)
    grids = {f"m{i}": 0.8 + 0.01 * rng.normal(size=(10, 3)) for i in range(3)}
    table = mapping_model_tests(pd.concat([mapping_table(g).assign(model=m) for m, g in grids.items()]))
    assert table["mappings"].tolist() == [10] * 3 and table["seeds"].tolist() == [3] * 3
    for row in table.itertuples():
        assert row.p == pytest.approx(judge_mapping(mapping_table(grids[row.model])).p_value)
    v = judge_mapping(mapping_table(grids["m0"]), mappings=pd.concat([mapping_table(g).assign(model=m)
                                                                     for m, g in grids.items()]))
    assert v.per_model[1] == 3 and "Holm over the 3 models" in v.per_model_label

    n, c = 400, 0.015
    frames = []
    for i in range(n):
        noise = c * rng.uniform(0.0, 3.0)
        g = (0.8 + rng.normal(0, c, size=(10, 1)) + rng.normal(0, noise, size=(1, 3))
             + rng.normal(0, noise, size=(10, 3)))
        frames.append(mapping_table(g).assign(model=f"m{i}"))
    boundary = mapping_model_tests(pd.concat(frames, ignore_index=True), n_draws=200)
    assert (boundary["p"] <= 0.05).mean() <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    quiet = [mapping_table(0.8 + 0.002 * rng.normal(size=(10, 3))).assign(model=f"q{i}") for i in range(50)]
    assert (mapping_model_tests(pd.concat(quiet, ignore_index=True), n_draws=200)["p"] <= 0.05).mean() > 0.9


# ---- scope: the paper's headroom, sizes and layer counts ----------------------------------------------

def test_gain_headroom_is_the_last_layers_accuracy():
    h = gain_headroom(items_table({("a", "x"): 0.5}, n_items=100))
    assert h[["accuracy", "headroom_pp"]].values.tolist() == [[pytest.approx(0.3), pytest.approx(70.0)]]


# ---- demonstrations ----------------------------------------------------------------------------

def test_parameter_share_of_the_paper_s_smallest_model_by_hand():
    """Pythia-14M (hidden 128, 6 blocks; 14,067,712 parameters, its model card) with the
    reconstructed encoder (hidden 256, one GIN layer) and 77 classes: projection 128 x 256 + 256,
    GIN's MLP 256 x 256 + 256, LayerNorm 2 x 256, head 256 x 77 + 77."""
    by_hand = (128 * 256 + 256) + (256 * 256 + 256) + 2 * 256 + (256 * 77 + 77)
    ref = paper_model_shares(77, gnn_layers=1).set_index("model")
    assert ref.loc["Pythia-14M", "params"] == by_hand == 119_117
    assert ref.loc["Pythia-14M", "share"] == pytest.approx(by_hand / 14_067_712)  # 0.847%
    assert ref.loc["Pythia-14M", "projection_share"] == pytest.approx((128 * 256 + 256) / 14_067_712)
    assert ref.loc["Llama3-8B", "share"] < 0.001 and len(ref) == 9


def test_parameter_share_counts_the_paper_s_own_models_and_fails_where_they_exceed():
    """The abstract's 'at most 0.1%' is stated for 9 LLMs from 14M: at the reconstructed
    configuration Pythia-14M, -70M and -160M are above it, so the demonstration fails
    ("contradicted", never "demonstrated"); under the alternative range of Table 1's models
    (410M-8B) it holds. A sentence embedder of the panel is left out by the kinds rule."""
    ref = paper_model_shares(77, gnn_layers=1)
    shares = pd.DataFrame({"model": ["st", "qwen"], "params": [180_000, 450_000],
                           "base_params": [22_700_000, 494_000_000], "share": [0.0079, 0.00091]})
    kinds = {"st": "encoder", "qwen": "decoder"}
    v = judge_parameters(shares, reference=ref, model_kinds=kinds)
    assert v.kind == "demonstration" and not v.holds and v.outcome == "contradicted"
    assert "above it: Pythia-14M, Pythia-70M, Pythia-160M" in v.evidence and "6 of 9 within 0.1%" in v.evidence
    assert "qwen 0.091%" in v.evidence and "st (encoder)" in v.evidence and "reconstruction" in v.reconstruction
    table1 = judge_parameters(shares, reference=ref, model_kinds=kinds, params_range=(405_334_016, 8_030_261_248))
    assert table1.outcome == "demonstrated" and "Pythia-14M 0.847%" in table1.evidence  # shown, not counted
    assert judge_parameters(shares, reference=ref, model_kinds=kinds, kinds=None, params_range=(405_334_016,
                            8_030_261_248)).outcome == "demonstrated"  # the 22.7M embedder is outside 410M-8B
    assert judge_parameters(shares.iloc[:1], model_kinds=kinds, kinds=None).outcome == "contradicted"  # 0.79%
    with pytest.raises(ValueError, match="no model counted"):
        judge_parameters(shares.iloc[:1], model_kinds=kinds)
    assert in_param_scope(shares).tolist() == [True, True]


def test_efficiency_counts_edges_and_reads_measured_memory():
    memory = pd.DataFrame({"graph": ["fc", "cayley", "fc", "cayley"], "tokens": [4, 4, 8, 8],
                           "edges": [2352, 600, 9506, 1200], "peak_bytes": [9e6, 2e6, np.nan, 3e6]})
    v = judge_cayley_efficiency(layer_graphs({"deep": 25, "mid": 13}), memory)
    assert v.outcome == "demonstrated" and "4 tokens" in v.evidence  # 8 tokens: FC not run
    # 7 states: more edges than FC, but below the layer counts where the graph is meant to gain (old: contradicted)
    v = judge_cayley_efficiency(layer_graphs({"deep": 25, "shallow": 7}), memory)
    assert v.outcome == "demonstrated" and "shallow: 7 states give 24 nodes and 96 edges against 42" in v.evidence
    assert "left out by the book's rule sparser_graph" in v.evidence and "from 11 states on" in v.evidence
    heavy = memory.assign(peak_bytes=[1e6, 2e6, np.nan, 3e6])
    assert judge_cayley_efficiency(layer_graphs({"deep": 25}), heavy).outcome == "contradicted"


def test_sparser_from_is_the_edge_count_crossing():
    """Closed form: 10 states sit on SL(2, Z_3) (24 nodes, 96 edges) against 90; 11 give 110."""
    assert sparser_from(33) == 11
    g = layer_graphs({"ten": 10, "eleven": 11}).set_index("model")
    assert g.loc["ten", "cayley_edges"] >= g.loc["ten", "fc_edges"]
    assert g.loc["eleven", "cayley_edges"] < g.loc["eleven", "fc_edges"]


# ---- the paper's own table -------------------------------------------------------------------------

def test_paper_table_is_read_as_a_summary():
    paper = paper_summary(ILSE_TABLE_ROWS)
    assert set(paper["method"]) == {"last", "best", "dwatt", "fc", "cayley"}
    assert len(paper) == sum(len(cells) for rows in ILSE_TABLE_ROWS.values() for cells in rows.values())
    assert paper["mean"].between(0, 1).all()
    with pytest.raises(ValueError, match="unknown methods"):
        paper_summary({"m": {"lora": {"t": 50.0}}})


def test_cell_wins_counts_cells():
    summary = summarize(scores_table({"last": [0.1, -0.1, 0.2]}, n_tasks=2))
    assert cell_wins(summary, "cayley", "last") == (4, 6)
    assert cell_wins(summary, "cayley", "dwatt") == (0, 0)


# ---- evidence per model: test items and seeds ---------------------------------------------------------

def simulated_items(n_models: int, *, methods=("cayley", "last"), effects=None, n_tasks: int = 4, n_items: int = 150,
                    seeds=(0, 1, 2), training_noise: float = 0.6, item_interaction: float = 0.5,
                    seed: int = 0) -> pd.DataFrame:
    """Per-item correctness at the Cayley chapter's design (4 classification tasks, 150 test rows,
    3 seeds): logit = item difficulty + a method's share of an item x method interaction + one
    training shift per (method, seed, task) of sd ``training_noise`` + ``effects[method]``."""
    rng = np.random.default_rng(seed)
    effects = effects or {}
    frames = []
    for m, t in itertools.product(range(n_models), range(n_tasks)):
        z = rng.normal(1.0, 1.5, n_items)
        c = rng.normal(0.0, item_interaction, (len(methods), n_items))
        for j, method in enumerate(methods):
            shift = rng.normal(0.0, training_noise, (len(seeds), 1))
            logit = z + c[j] + shift + effects.get(method, 0.0)
            correct = (rng.uniform(size=logit.shape) < 1 / (1 + np.exp(-logit))).astype(np.int8)
            frames.append(pd.DataFrame({"model": f"m{m}", "task": f"t{t}", "method": method,
                                        "seed": np.repeat(seeds, n_items), "item": np.tile(np.arange(n_items), len(seeds)),
                                        "correct": correct.ravel()}))
    return pd.concat(frames, ignore_index=True)


def test_crossed_mean_test_closed_form_and_seedless_case():
    from lrd.verdicts.fusion import crossed_mean_test

    x = np.array([[1.0, 0.0, 1.0, 2.0], [3.0, 2.0, 3.0, 4.0]])  # seed 2 is 2 above seed 1 on every item
    mean, var, df = crossed_mean_test(x)
    ms_item, ms_seed, ms_err = 2 * np.var([2, 1, 2, 3], ddof=1), 4 * np.var([1, 3], ddof=1), 0.0
    assert mean == 2.0 and var == pytest.approx((ms_item + ms_seed - ms_err) / 8)
    one = np.array([[1.0, 0.0, 1.0, 2.0]])
    assert crossed_mean_test(one)[1:] == pytest.approx((np.var(one, ddof=1) / 4, 3))


@pytest.mark.simulation
def test_per_model_test_keeps_its_size_when_training_noise_dominates():
    """Under the null (both methods drawn alike), with a training shift per seed far above the test
    items' noise, the per-model test says "above" in at most 5% of models (+ 2 standard errors);
    the same data tested over items alone (seeds averaged, their noise ignored) exceeds that, so
    the simulation can tell a test that ignores the seeds."""
    from lrd.verdicts.fusion import per_model_item_tests

    n = 300
    items = simulated_items(n, training_noise=0.6, seed=1)
    table = per_model_item_tests(items, "cayley", ["last"])
    bound = 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    assert len(table) == n and (table["p"] <= 0.05).mean() <= bound
    naive = []
    for _, g in items.groupby("model", sort=False):
        d = (g[g.method == "cayley"].groupby(["task", "item"])["correct"].mean()
             - g[g.method == "last"].groupby(["task", "item"])["correct"].mean()).to_numpy()
        naive.append(sp.ttest_1samp(d, 0.0, alternative="greater").pvalue)
    assert (np.array(naive) <= 0.05).mean() > bound


def test_per_model_evidence_beside_the_verdict_is_holm_adjusted_and_intersection_union():
    from lrd.verdicts.fusion import per_model_item_tests

    effects = {"cayley": 1.5, "fc": 1.5}  # far above last; cayley and fc alike
    items = simulated_items(4, methods=("cayley", "fc", "last"), effects=effects, n_tasks=2, training_noise=0.1)
    table = per_model_item_tests(items, "cayley", ["last", "fc"])
    per = table.drop_duplicates("model")
    assert (per["p (all)"] == table.groupby("model", sort=False)["p"].max().to_numpy()).all()
    assert (table.loc[table.reference == "Last layer", "p"] < 0.01).all()
    assert (per["p (all, Holm)"] > 0.05).all()  # not above FC, so not above both
    scores = (items.groupby(["model", "task", "method", "seed"], as_index=False)["correct"].mean()
              .rename(columns={"correct": "score"}))
    v = judge_cayley_performance(scores, items=items)
    assert v.per_model[1] == 4 and "Holm" in v.per_model_label
    only_last = judge_baselines(scores, baselines=("last",), items=items)
    assert only_last.per_model == (4, 4)
    assert judge_baselines(scores, baselines=("last",)).per_model is None  # no items: no per-model evidence


def few_shot_items(n_models: int, shot_effects: dict[int, float], *, full_effect: float = 0.0, seed: int = 0):
    """Per-item outcomes of few-shot Cayley runs (effect per shot count, on the logit) and of the
    full-data DWAtt and last layer (at ``full_effect``), at the chapter's few-shot design (2 tasks)."""
    full = simulated_items(n_models, methods=("dwatt", "last"), effects={"dwatt": full_effect, "last": full_effect},
                           n_tasks=2, training_noise=0.1, seed=seed)
    few = pd.concat([simulated_items(n_models, methods=("cayley",), effects={"cayley": e}, n_tasks=2,
                                     training_noise=0.1, seed=seed + 1 + k).assign(shots=k)
                     for k, e in shot_effects.items()], ignore_index=True)
    return few, full


def test_few_shot_evidence_per_model_must_hold_at_every_shot_count_and_reference():
    from lrd.verdicts.fusion import few_shot_item_tests

    few, full = few_shot_items(4, {4: -3.0, 8: 2.0, 16: 2.0, 32: 2.0})
    table = few_shot_item_tests(few, full)
    assert len(table) == 4 * 3 * 2 and "4 shots" not in " ".join(table["method"])  # 4 is outside 8-32
    assert (table["p (all, Holm)"] < 0.05).all()
    scores = lambda t: (t.groupby([c for c in t.columns if c not in ("item", "correct")], as_index=False)["correct"]
                        .mean().rename(columns={"correct": "score"}))
    v = judge_few_shot(scores(few), scores(full), few_shot_items=few, items=full)
    assert v.per_model == (4, 4) and "Holm over the 4 models" in v.per_model_label
    # below the full-data references at 8 shots: shown in no model, whatever 16 and 32 shots do
    few_low, full = few_shot_items(4, {8: -2.0, 16: 2.0, 32: 2.0})
    assert judge_few_shot(scores(few_low), scores(full), few_shot_items=few_low, items=full).per_model == (0, 4)
    assert judge_few_shot(scores(few_low), scores(full)).per_model is None  # no items: no per-model evidence


def test_power_is_computed_at_the_paper_s_own_table_effect():
    """Cayley above the last layer: Table 1 averages 30 points, so 8 models with a 5-point spread
    give power 1; Cayley above FC: Table 1 averages -0.5 points, so power stays near alpha or
    below, whatever our panel shows."""
    scores = scores_table({"last": [0.05] * 8, "fc": [0.01] * 8}, noise=0.0)
    spread = np.linspace(-0.05, 0.05, 8)
    scores.loc[scores.method == "last", "score"] -= np.repeat(spread, 6)[: int((scores.method == "last").sum())]
    base = judge_baselines(scores, baselines=("last",))
    assert base.power == 1.0 and "+30.0" in base.power_label
    perf = judge_cayley_performance(scores)
    assert perf.power is not None and perf.power <= 0.05 and "-0.5" in perf.power_label
    fc = judge_fc(scores_table({"best": [0.02] * 8, "elmo": [0.02] * 8}, method="fc"), existing=("best", "elmo"))
    assert fc.power == 1.0 and "not included: Weighted (ELMo)" in fc.power_label


def test_the_power_simulation_draws_each_cell_s_difference_from_the_paper_s_table():
    """ilse.fc/cayley_performance/baselines: the power is simulated at the paper's Table 1 as it
    stands, cell by cell (15 cells a pair); the mean of those cells is the paper's mean difference."""
    from lrd.verdicts.fusion import simulate_paper_effect, paper_cell_differences, paper_mean_difference

    cells = paper_cell_differences("cayley", "fc")
    assert len(cells) == 15 and cells.mean() == pytest.approx(paper_mean_difference("cayley", "fc"))
    assert len(paper_cell_differences("fc", "elmo")) == 0  # ELMo is not in Table 1
    scores = simulate_paper_effect(np.random.default_rng(0), ("cayley", "fc", "elmo"), n_seeds=400)["scores"]
    wide = scores.groupby(["model", "task", "method"])["score"].mean().unstack("method")
    drawn = (wide["cayley"] - wide["fc"]).to_numpy()
    # with 400 seeds of noise 0.03 a cell mean is within 0.01 of its level: every drawn difference is a paper cell
    assert np.abs(drawn[:, None] - cells[None, :]).min(axis=1).max() < 0.01
    stand_in = (wide["cayley"] - wide["elmo"]).to_numpy()  # ELMo drawn as the best layer
    best = paper_cell_differences("cayley", "best")
    assert np.abs(stand_in[:, None] - best[None, :]).min(axis=1).max() < 0.01


def test_the_gain_power_simulation_draws_the_papers_own_cells():
    """ilse.gain's power is simulated at the paper's Table 1: each cell's true gain is one of its 15
    Cayley-minus-last cells (with many items, every simulated cell lands near one of them)."""
    import numpy as np

    from lrd.verdicts import fusion

    paper = fusion.paper_cell_differences("cayley", "last")
    items = fusion.simulate_gain(np.random.default_rng(0), n_items=20000, n_seeds=1, paper_cells=True)["items"]
    means = items.groupby(["model", "task", "method"])["correct"].mean().unstack("method")
    gains = (means["cayley"] - means["last"]).to_numpy()
    assert np.all(np.min(np.abs(gains[:, None] - paper[None, :]), axis=1) < 0.02)
    assert len(np.unique(np.round(gains, 1))) > 1  # drawn, not one value
    flat = fusion.simulate_gain(np.random.default_rng(0), n_items=20000, n_seeds=1)["items"]
    flat_means = flat.groupby(["model", "task", "method"])["correct"].mean().unstack("method")
    assert np.allclose(flat_means["cayley"] - flat_means["last"], 0.40, atol=0.02)  # the null's edge: exactly 40


def test_mapping_per_model_leaves_out_an_encoder_that_learns_nothing():
    """An encoder predicting the majority class for every mapping and seed has no spread: the old
    per-model test called that "mapping irrelevant" (p near 0); below the majority class + 1.5
    points the model is out of scope, shown and not counted, and the ablation verdict on such a
    grid is "not testable"."""
    from lrd.verdicts.fusion import mapping_model_tests

    rng = np.random.default_rng(5)
    stuck = np.full((10, 3), 0.531)
    learns = 0.8 + 0.002 * rng.normal(size=(10, 3))
    grids = pd.concat([mapping_table(stuck).assign(model="stuck"), mapping_table(learns).assign(model="learns")])
    old = mapping_model_tests(grids)
    assert (old["p"] <= 0.05).all()  # without the scope both "show" it
    table = mapping_model_tests(grids, chance=0.531).set_index("model")
    assert not table.loc["stuck", "in scope"] and np.isnan(table.loc["stuck", "p (Holm)"])
    assert table.loc["learns", "p (Holm)"] == pytest.approx(table.loc["learns", "p"])  # Holm over 1 model
    v = judge_mapping(mapping_table(learns), mappings=grids, chance=0.531)
    assert v.per_model == (1, 1) and "stuck" in v.per_model_label
    assert judge_mapping(mapping_table(stuck), chance=0.531).outcome == "not testable"


def test_mapping_is_tested_only_on_models_of_the_papers_sizes():
    """The paper's models are of 14M-8B: an ablation model of 10M is not tested (counted, it
    would say "reproduced" on this grid), and a small model's own grid is shown, not counted."""
    from lrd.verdicts.fusion import mapping_model_tests

    rng = np.random.default_rng(0)
    flat = 0.8 + 0.001 * rng.normal(size=(10, 3))
    sizes = {"small": 1.0e7, "llm": 4.9e8}
    grids = pd.concat([mapping_table(flat).assign(model=m) for m in sizes])
    assert judge_mapping(mapping_table(flat), model="small").outcome == "reproduced"  # no sizes: every model counts
    v = judge_mapping(mapping_table(flat), mappings=grids, model="small", base_params=sizes)
    assert v.outcome == "not testable" and "small (10.0M)" in v.evidence and v.per_model == (1, 1)
    assert judge_mapping(mapping_table(flat), model="llm", base_params=sizes).outcome == "reproduced"
    table = mapping_model_tests(grids, base_params=sizes).set_index("model")
    assert table["in scope"].to_dict() == {"small": False, "llm": True}
    with pytest.raises(ValueError, match="ablation model"):
        judge_mapping(mapping_table(flat), base_params=sizes)
