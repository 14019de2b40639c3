"""The numbers of the cosine judges (lrd.verdicts.agreement.*_result), checked on hand-computable
cases without reading a sentence: bootstrap p-values (1 + #against) / (1 + B), exact sign-flip
p-values 2^-n, the not-testable branches by their ``case``."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts.agreement import (correlation_result, dataset_result, misestimate_result, olmo_result,
                                    pruning_result, theory_result)


def _chance(pairs, p=0.001):
    return pd.DataFrame({"model": [m for m, _ in pairs], "task": [t for _, t in pairs], "acc": 0.8, "chance": 0.5,
                         "p_chance": p, "p_min_chance": 0.001})


def _agreement(values: dict, n_boot: int) -> pd.DataFrame:
    """One model 'm', task 't', replicates 0..n_boot, every column at the given per-replicate values."""
    return pd.DataFrame({"model": "m", "task": "t", "replicate": np.arange(n_boot + 1),
                         **{k: np.broadcast_to(np.asarray(v, dtype=float), n_boot + 1) for k, v in values.items()}})


def test_pruning_result_is_the_exact_sign_flip_test_over_models():
    # five models, the accuracy-drop ranking better in each: every sign flip but the observed one
    # has a smaller mean, so p = 1/2^5 (and p_min too); against, every flip reaches -mean: p = 1
    d = np.array([0.1, 0.2, 0.05, 0.3, 0.15])
    curves = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(5)], 2),
                           "rule": ["accuracy (calibration)", "cosine (BI)"] * 5, "seed": -1, "k": 2,
                           "acc": np.ravel([[0.5 + x, 0.5] for x in d])})
    r = pruning_result(curves)
    assert r.case == "tested"
    assert r.p_value == pytest.approx(1 / 32) and r.p_min == pytest.approx(1 / 32)
    assert r.p_against == pytest.approx(1.0)
    assert r.effect == pytest.approx(d.mean()) and r.statistic == pytest.approx(d.mean())
    assert r.per_model is None and r.facts["budgets"] == [2] and r.facts["n_models"] == 5
    assert [m["random"] for m in r.facts["models"]] == [None] * 5
    assert r.outcome == "reproduced"


def test_pruning_without_a_pruned_model_is_not_testable():
    curves = pd.DataFrame({"model": ["m", "m"], "rule": ["accuracy (calibration)", "cosine (BI)"], "seed": -1,
                           "k": 0, "acc": [0.7, 0.7]})
    r = pruning_result(curves, note="n")
    assert r.case == "no model pruned" and r.p_value is None and r.p_min is None and r.facts["note"] == "n"
    assert r.outcome == "not testable"


@pytest.mark.parametrize("n_boot", [19, 39])
def test_correlation_result_bootstrap_p_values_by_hand(n_boot):
    # every resample's corrected correlation is 0.1, inside +-0.7: p = 1/(1 + B) for the equivalence,
    # and no resample reaches +-0.7, so against p = min(1, 2 * 1) = 1
    agreement = _agreement({"r_corrected": 0.1, "r": 0.05, "reliability": 0.25}, n_boot)
    r = correlation_result(agreement, _chance([("m", "t")]))
    assert r.p_value == pytest.approx(1 / (1 + n_boot)) and r.p_min == pytest.approx(1 / (1 + n_boot))
    assert r.p_against == 1.0
    assert r.effect == pytest.approx(0.1) and r.ci == pytest.approx((0.1, 0.1))
    assert r.per_model == (int(1 / (1 + n_boot) <= 0.05), 1)
    assert r.facts["n_boot"] == n_boot and r.facts["chance_above"] == 1 and r.facts["chance_pairs"] == 1


def test_an_undefined_correction_counts_against_the_claim():
    # 19 resamples, two undefined (NaN): each side's p = (1 + 2)/20
    v = np.full(20, 0.1)
    v[[3, 7]] = np.nan
    r = correlation_result(_agreement({"r_corrected": v, "r": 0.05, "reliability": 0.25}, 19), _chance([("m", "t")]))
    assert r.p_value == pytest.approx(3 / 20)
    assert r.ci[0] == pytest.approx(np.quantile(np.where(np.isnan(v[1:]), -1.0, v[1:]), 0.025))


def test_correlation_and_misestimate_without_signal_are_not_testable():
    agreement = _agreement({"r_corrected": 0.1, "r": 0.05, "reliability": 0.25, "misestimated": 0.5,
                            "unrelated": 0.6, "rank_reliability": 0.9}, 9)
    chance = _chance([("m", "t")], p=0.2)  # the intact model is not above measured chance
    for r in (correlation_result(agreement, chance),
              misestimate_result(agreement, chance, pd.DataFrame(columns=["model", "task", "permutation",
                                                                          "misestimated"]))):
        assert r.case == "no signal" and r.p_value is None and r.p_min is None
        assert (r.facts["chance_above"], r.facts["chance_pairs"]) == (0, 1)
        assert r.outcome == "not testable"


def test_misestimate_result_p_against_and_the_permutation_p_by_hand():
    # share 0.2 against unrelated rankings' 0.8 in every resample: the difference -0.6 is below
    # -delta = -0.1 in all 19, so p_against = 1/20; no permutation draw (all 0.8) is at or below
    # 0.2, so the permutation p = 1/(1 + 99); "reproduced" is never concluded (p = 1)
    agreement = _agreement({"misestimated": 0.2, "unrelated": 0.8, "rank_reliability": 0.9}, 19)
    draws = pd.DataFrame({"model": "m", "task": "t", "permutation": np.arange(99), "misestimated": 0.8})
    r = misestimate_result(agreement, _chance([("m", "t")]), draws)
    assert r.p_value == 1.0 and r.p_against == pytest.approx(1 / 20) and r.p_min == pytest.approx(1 / 20)
    assert r.effect == pytest.approx(-0.6) and r.facts["delta"] == pytest.approx(0.1)
    (row,) = r.facts["models"]
    assert row["p_random"] == pytest.approx(1 / 100) and r.facts["n_perm"] == 99
    assert r.per_model is None and r.outcome == "contradicted"


def test_dataset_result_by_hand_and_its_untestable_cases():
    table = pd.DataFrame({"model": "m", "task_a": "s", "task_b": "t", "replicate": np.arange(20), "r": 0.4,
                          "reliability_a": 0.8, "reliability_b": 0.8, "r_corrected": 0.5})
    r = dataset_result(table, _chance([("m", "s"), ("m", "t")]))
    assert r.p_value == pytest.approx(1 / 20) and r.p_against == pytest.approx(1.0) and r.per_model == (1, 1)
    assert r.facts["models"][0]["pairs"] == 1
    assert dataset_result(table.iloc[:0], _chance([])).case == "no task pairs"
    assert dataset_result(table, _chance([("m", "s"), ("m", "t")], p=0.5)).case == "no signal"


def test_theory_and_olmo_results():
    r = theory_result(NS(cosine_relevance=np.array([0.3, 4e-5, 0.2]), accuracy=1.0,
                         accuracy_without=np.array([1.0, 0.5, 1.0]), chance=0.5))
    assert r.kind == "demonstration" and r.holds and r.facts["block"] == 2 and r.facts["cosine"] == 4e-5
    # the least-cosine block's removal leaves the network above chance: the construction fails
    assert not theory_result(NS(cosine_relevance=np.array([0.3, 4e-5]), accuracy=1.0,
                                accuracy_without=np.array([1.0, 0.9]), chance=0.5)).holds
    o = olmo_result()
    assert o.case == "not in panel" and o.p_value is None and o.outcome == "not testable"
