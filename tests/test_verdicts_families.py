"""lrd.verdicts.families: the four LRD-families claims judged on tables whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lrd.metrics import lrd_profile, profile_rows
from lrd.verdicts.families import (COMPLEMENTARITY_MARGIN, FINAL_LAYER_SCORES, FINAL_LAYER_STATISTICS, LRD_SCORES,
                                   RANK_FREE_SCORES, architecture_verdict,
                                   complementarity_verdict, equal_sample_tasks, family_correlations,
                                   final_layer_verdict, residual_after_final_layer, task_shares, task_verdict)


def _panel(n_enc: int, n_dec: int, n_tasks: int, *, seed: int = 0, separating=(), n_texts: int = 300) -> pd.DataFrame:
    """Model-level scores of encoders and decoders, i.i.d. noise except the ``separating``
    columns, which put every encoder below every decoder on every task."""
    rng = np.random.default_rng(seed)
    n = n_enc + n_dec
    df = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(n)], n_tasks),
                       "kind": np.repeat(["encoder"] * n_enc + ["decoder"] * n_dec, n_tasks),
                       "task": np.tile([f"t{t}" for t in range(n_tasks)], n), "N": n_texts})
    for col in LRD_SCORES + FINAL_LAYER_SCORES:
        df[col] = rng.random(len(df)) + (10.0 * (df["kind"] == "decoder") if col in separating else 0.0)
    return df


# ---- lrd.architecture ---------------------------------------------------------------------------


def test_architecture_separated_on_every_task_of_a_balanced_panel_is_reproduced():
    v = architecture_verdict(_panel(4, 4, 3, separating=("mean GFMI",)))
    assert v.outcome == "reproduced" and v.p_value == pytest.approx(2 / 70) == v.p_min  # C(8,4) = 70, halves alike
    assert v.effect == 1.0 and v.statistic == 3 and "mean GFMI" in v.evidence


def test_architecture_on_two_encoders_and_three_decoders_is_not_testable():
    v = architecture_verdict(_panel(2, 3, 4, separating=LRD_SCORES))
    assert v.outcome == "not testable" and v.p_min == pytest.approx(1 / 10) and v.effect == 1.0
    assert "no result can have p below 0.1" in v.evidence


def test_architecture_noise_is_not_reproduced_and_one_kind_is_not_testable():
    assert architecture_verdict(_panel(4, 4, 3, seed=3)).outcome == "inconclusive"
    one_kind = architecture_verdict(_panel(3, 0, 2))
    assert one_kind.outcome == "not testable" and one_kind.p_value is None
    assert "encoders and decoders" in one_kind.evidence


# ---- lrd.final_layer --------------------------------------------------------------------------


def test_final_layer_lrd_separating_where_the_final_layer_does_not_is_reproduced():
    v = final_layer_verdict(_panel(4, 4, 3, separating=LRD_SCORES))  # every LRD score, no final-layer one
    assert v.outcome == "reproduced" and v.p_value == pytest.approx(1 / 21) and v.statistic >= 2  # C(7, 5) splits
    assert v.effect > 0 and "rank r" in v.reconstruction


def test_one_lrd_score_of_five_is_what_exchangeable_measures_give():
    """One separating measure among 7 lands among the 5 LRD scores with probability 5/7: the old
    test (kinds relabelled only) said "reproduced" (p = 2/70); with the measures exchangeable
    between the sets it is 15/21."""
    v = final_layer_verdict(_panel(4, 4, 3, separating=("d_0L",)))
    assert v.p_value == pytest.approx(15 / 21) and v.outcome == "inconclusive"


def test_equal_shift_by_kind_is_not_reproduced():
    """Every measure shifted alike by kind (the issue's null): the best of 5 beats the best of 2 by
    selection on some panels; relabelling the measures removes that (the old rule: 7-9%)."""
    hits = 0
    for seed in range(150):
        df = _panel(4, 4, 3, seed=seed)
        shift = 1.5 * (df["kind"] == "decoder")
        df = df.assign(**{m: rng_scale * df[m] + shift for m, rng_scale in
                          zip(LRD_SCORES + FINAL_LAYER_SCORES, [3.5] * 7)})  # uniform noise of sd ~1
        hits += final_layer_verdict(df).outcome == "reproduced"
    assert hits / 150 <= 0.05


def test_final_layer_separating_more_than_lrd_is_contradicted():
    v = final_layer_verdict(_panel(4, 4, 3, separating=FINAL_LAYER_SCORES))
    assert v.outcome == "contradicted" and v.p_against <= 0.05 and v.effect < 0


def test_final_layer_separating_as_well_as_lrd_is_not_reproduced():
    v = final_layer_verdict(_panel(4, 4, 3, separating=("d_0L", "rank r")))
    assert v.statistic == 0 and v.outcome == "inconclusive"


def test_final_layer_is_not_reproduced_by_low_power():
    """The old rule called the final-layer half "reproduced" whenever final-layer statistics did
    not separate the kinds beyond chance, however close they came to the LRD scores: on this
    panel (4 encoders, 4 decoders) the best LRD score separates 2 of 3 tasks (p = 2/70) and the
    rank r 1 (p = 0.14), and it said "reproduced". One task more is no evidence that the final
    layer misses what LRD shows."""
    df = _panel(4, 4, 3, seed=1)
    dec = df["kind"] == "decoder"
    df.loc[dec & df.task.isin(["t0", "t1"]), "d_0L"] += 10.0
    df.loc[dec & (df.task == "t2"), "rank r"] += 10.0
    v = final_layer_verdict(df)
    assert "on 2 of 3 tasks" in v.evidence and "(rank r) on 1" in v.evidence and v.statistic == 1
    assert v.outcome == "inconclusive" and v.p_value > 0.05


# ---- lrd.task -----------------------------------------------------------------------------------


def _task_panel(n_models: int, n_tasks: int, *, seed: int = 0, nrs_effect: float = 0.0, rank_effect: float = 0.0):
    """Scores whose task effect lives in NRS (``nrs_effect``) or in the Frenet rank r alone
    (``rank_effect``: r, and with it d_0L and velocity, grow with the task)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for t in range(n_tasks):
            r = 10 + rank_effect * t + rng.integers(0, 2)
            rows.append({"model": f"m{m}", "task": f"t{t}", "N": 300, "rank r": r,
                         "d_0L": np.sqrt(r) * (0.5 + 0.01 * rng.random()),
                         "mean velocity": np.sqrt(r) * (0.1 + 0.01 * rng.random()),
                         "mean curvature": rng.random(),
                         "mean NRS (adjusted)": 0.3 + nrs_effect * t + 0.01 * rng.normal() + 0.1 * m,
                         "mean GFMI": rng.random(), "final mean cosine": rng.random(),
                         "final kNN cosine": rng.random(), "final cluster share": rng.random()})
    return pd.DataFrame(rows)


def _plain_task_test(df, measures=RANK_FREE_SCORES):
    """The old judgement's first half: does the task move the scores within models (a null known false)."""
    from lrd.verdicts.stats import within_block_permutation_test

    return within_block_permutation_test(df, list(measures), n_permutations=2000)


def test_task_effect_recurring_in_every_model_is_reproduced_at_the_smallest_p():
    v = task_verdict(_task_panel(5, 3, nrs_effect=0.2))
    assert v.outcome == "reproduced" and v.p_value == pytest.approx(1 / 6 ** 4) == v.p_min
    assert v.effect > 0.8 and v.ci[0] <= v.effect <= v.ci[1]  # noise covariates absorb a little of the task
    assert "mean NRS (adjusted)" in v.evidence and "not tested" in v.evidence


def test_task_effect_carried_by_the_final_layer_rank_alone_is_not_reproduced():
    """The confound of issue 16: r is fixed by each task's final layer and bounds every Grassmann
    distance, so d_0L differs between tasks when only r does. The old judgement (all LRD scores)
    reproduced the claim on such a panel; the rank-free scores do not."""
    df = _task_panel(5, 3, rank_effect=20)
    assert _plain_task_test(df, LRD_SCORES).p_value <= 0.05  # what the old judgement saw
    v = task_verdict(df)
    assert v.outcome == "inconclusive" and v.p_value > 0.05
    assert "Frenet scores" in v.note and "of r's within-model variance" in v.note
    assert set(RANK_FREE_SCORES).isdisjoint({"d_0L", "mean velocity", "mean curvature"})


def test_task_verdict_panels_that_cannot_test_it():
    tiny = task_verdict(_task_panel(2, 2, nrs_effect=1.0))
    assert tiny.outcome == "not testable" and "no residual degree of freedom" in tiny.evidence  # 4 cells, 6 terms
    small = task_verdict(_task_panel(4, 3, nrs_effect=1.0))  # M(T - 1) = 8 >= T + 4: the smallest with T = 3
    assert small.p_min == pytest.approx(1 / 6 ** 3) and small.outcome == "reproduced"
    one = task_verdict(_task_panel(4, 1))
    assert one.outcome == "not testable" and one.p_value is None


def test_task_verdict_refuses_tasks_of_different_sample_sizes():
    df = _task_panel(3, 3)
    df.loc[df.task == "t0", "N"] = 50
    with pytest.raises(ValueError, match="equal_sample_tasks"):
        task_verdict(df)
    assert set(equal_sample_tasks(df)["task"]) == {"t1", "t2"}


def _group_scores(n_models: int, n_tasks: int, n_groups: int, *, shift: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Rank-free scores on disjoint text groups: i.i.d. noise (sd 1) per group, task t moved by
    ``shift * t`` in mean NRS, each model at its own level."""
    rng = np.random.default_rng(seed)
    m, t, g = np.meshgrid(np.arange(n_models), np.arange(n_tasks), np.arange(n_groups), indexing="ij")
    m, t, g = m.ravel(), t.ravel(), g.ravel()
    return pd.DataFrame({"model": [f"m{i}" for i in m], "task": [f"t{j}" for j in t], "group": g, "N": 75,
                         "mean NRS (adjusted)": 5.0 * m + shift * t + rng.normal(size=len(m)),
                         "mean GFMI": rng.normal(size=len(m))})


def test_per_model_task_test_keeps_its_size_and_finds_a_task_shift():
    """Under 'the task does not matter' (groups exchangeable between tasks) the per-model test
    rejects in at most 5% of models (+ 2 standard errors), with the largest share over two
    scores taken inside each permutation; a shift of 2 noise sd between tasks is found in nearly
    every model; Holm adjusts over the models."""
    from lrd.verdicts.families import task_group_tests

    n = 400
    null = task_group_tests(_group_scores(n, 3, 4), n_permutations=199)
    assert len(null) == n and (null["p"] <= 0.05).mean() <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    assert (null["groups"] == 4).all() and (null["texts per group"] == 75).all()
    shifted = task_group_tests(_group_scores(8, 3, 4, shift=2.0), n_permutations=999)
    assert (shifted["p (Holm)"] <= 0.05).mean() >= 0.75
    assert (shifted["p (Holm)"] >= shifted["p"]).all() and set(shifted["measure"]) == {"mean NRS (adjusted)"}
    assert task_group_tests(_group_scores(8, 3, 4, shift=2.0), tasks=["t0"]).empty  # one task: nothing to test


def test_task_verdict_gives_its_per_model_evidence_from_text_groups():
    panel = _task_panel(5, 3, nrs_effect=0.2)
    v = task_verdict(panel, groups=_group_scores(5, 3, 4, shift=3.0))
    assert v.per_model is None and "in 5 of 5 models" in v.note and "not part of the verdict" in v.note
    flat = task_verdict(panel, groups=_group_scores(5, 3, 4))
    assert flat.outcome == v.outcome and flat.p_value == v.p_value  # the verdict does not read the groups


def test_task_shares_are_partial_eta_squared():
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["x", "y"] * 2, "s": [0.0, 1.0, 10.0, 11.0]})
    shares = task_shares(df, ["s"])
    assert shares.loc["s", "task share"] == pytest.approx(1.0)  # within each model, the task is everything
    assert shares.loc["s", "model share"] == pytest.approx(100 / 101)  # raw: SS_model 100 of SS_total 101


# ---- lrd.complementarity ------------------------------------------------------------------------


def _correlations(values: np.ndarray) -> pd.DataFrame:
    """values (n_models, 3 pairs): one task per model."""
    return pd.DataFrame([{"model": f"m{m}", "task": "t", "pair": p, "rho": values[m, j]}
                         for m in range(len(values)) for j, p in enumerate(["Frenet-NRS", "Frenet-GFMI", "NRS-GFMI"])])


def test_complementarity_unrelated_curves_reproduce_and_redundant_ones_contradict():
    low = complementarity_verdict(_correlations(np.full((5, 3), 0.2)))
    assert low.outcome == "reproduced" and low.p_value == 1 / 32 and low.effect == pytest.approx(0.2)
    high = np.full((6, 3), 0.2)
    high[:, 1] = -0.99  # Frenet and GFMI order the layers in reverse: as redundant as +0.99
    v = complementarity_verdict(_correlations(high))
    assert v.outcome == "contradicted" and v.p_against == 2 / 64 and v.effect == pytest.approx(0.99)
    assert "Frenet-GFMI" in v.effect_label


def test_complementarity_needs_every_pair_and_enough_models():
    one_redundant = np.full((5, 3), 0.1)
    one_redundant[:, 2] = [0.95, 0.85, 0.92, 0.88, 0.91]  # NRS-GFMI hovers at a margin of 0.9
    assert complementarity_verdict(_correlations(one_redundant), margin=0.9).outcome == "inconclusive"
    assert complementarity_verdict(_correlations(one_redundant)).outcome != "reproduced"  # the book's 0.7
    few = complementarity_verdict(_correlations(np.full((3, 3), 0.1)))
    assert few.outcome == "not testable" and few.p_min == 1 / 8
    with pytest.raises(ValueError, match="margin"):
        complementarity_verdict(_correlations(np.full((5, 3), 0.1)), margin=1.5)


def test_complementarity_skips_constant_curves_and_says_so():
    one = _correlations(np.full((5, 3), 0.2))
    c = pd.concat([one, one.assign(task="u", rho=0.4)], ignore_index=True)  # two tasks per model
    c.loc[0, "rho"] = np.nan  # m0's Frenet-NRS on task t: the mean is over task u alone
    v = complementarity_verdict(c)
    assert "1 of 30 correlations skipped" in v.evidence and v.outcome == "reproduced" and "5 models" in v.evidence
    assert v.effect == pytest.approx((0.4 + 4 * 0.3) / 5)
    dropped = complementarity_verdict(one.assign(rho=np.where(one.index == 0, np.nan, 0.2)))
    assert "over 4 models" in dropped.evidence  # m0 has no Frenet-NRS correlation left


def _results(curves: dict[str, np.ndarray], model="m", task="t") -> pd.DataFrame:
    rows = []
    for name, values in curves.items():
        layers = np.arange(len(values)) + (0.5 if name != "GFMI" else 0.0)
        rows += [{"model": model, "task": task, "measurement": name, "layer": l, "depth": 0.0, "value": v}
                 for l, v in zip(layers, values)]
    return pd.DataFrame(rows)


def test_family_correlations_closed_forms():
    velocity = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    gfmi = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 1.0])  # midpoints rise: the reverse of the velocity
    c = family_correlations(_results({"velocity": velocity, "NRS (adjusted)": velocity ** 2, "GFMI": gfmi}))
    rho = c.set_index("pair")["rho"]
    assert rho["Frenet-NRS"] == pytest.approx(1.0) and rho["Frenet-GFMI"] == pytest.approx(-1.0)
    assert (c["transitions"] == 5).all() and len(c) == 3
    flat = family_correlations(_results({"velocity": velocity, "NRS (adjusted)": np.ones(5), "GFMI": gfmi}))
    assert flat["rho"].isna().sum() == 2  # a constant curve has no correlation


def test_family_correlations_refuse_what_they_cannot_correlate():
    short = _results({"velocity": np.ones(2), "NRS (adjusted)": np.ones(2), "GFMI": np.ones(3)})
    with pytest.raises(ValueError, match="at least 3"):
        family_correlations(short)
    with pytest.raises(ValueError, match="lack the measurements"):
        family_correlations(short[short.measurement != "GFMI"])


def test_family_correlations_on_a_real_profile():
    scales = 1.0 / (1.0 + np.arange(20)) ** 1.5  # a decaying spectrum: the 95% rank r is below d
    layers = np.cumsum(np.random.default_rng(0).normal(size=(7, 60, 20)) * scales, axis=0)
    rows = profile_rows(lrd_profile(layers, k=5), model="m", task="t")
    c = family_correlations(rows)
    assert len(c) == 3 and c["rho"].between(-1, 1).all() and (c["transitions"] == 6).all()
    assert rows.loc[rows.measurement == "velocity", "value"].std() > 0


def _through_the_final_layer(n_models=5, n_tasks=3, seed=0):
    """The task moves the final layer's rank r; the LRD scores follow r (and a model effect)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for t in range(n_tasks):
            r = 10 + 5 * t + rng.normal()
            rows.append({"model": f"m{m}", "task": f"t{t}", "N": 300, "rank r": r, "final mean cosine": rng.normal(),
                         "mean NRS (adjusted)": 0.1 * m + 0.02 * r + 0.001 * rng.normal(),
                         "mean GFMI": 0.2 * m - 0.03 * r + 0.001 * rng.normal()})
    return pd.DataFrame(rows)


def test_task_differences_the_final_layer_shows_are_not_lrds():
    """Issue 31: the claim says LRD shows task differences the final layer cannot; the old judge
    tested only that the task moves the LRD scores, so it said "reproduced" when they merely follow
    the final layer's rank r (91.5% of 200 such panels at the default design). Regressing out the
    final-layer statistics leaves nothing for the task."""
    df = _through_the_final_layer()
    assert _plain_task_test(df).p_value <= 0.05  # the old judgement's first half
    with pytest.raises(ValueError, match="known before any data"):
        task_verdict(df, final=None)
    v = task_verdict(df, final=FINAL_LAYER_SCORES)
    assert v.outcome != "reproduced" and "regressed out" in v.evidence


def test_residual_after_final_layer_closed_form_and_small_designs():
    df = _through_the_final_layer()
    exact = df.assign(**{"mean NRS (adjusted)": 0.1 * df["model"].str[1:].astype(int) + 0.02 * df["rank r"]})
    resid = residual_after_final_layer(exact, ["mean NRS (adjusted)"], ["rank r"])
    assert np.abs(resid["mean NRS (adjusted)"]).max() < 1e-10
    assert residual_after_final_layer(_through_the_final_layer(2, 2), ["mean GFMI"], ["rank r", "final mean cosine"]) is None
    assert "no residual degree of freedom" in task_verdict(_through_the_final_layer(2, 2), final=FINAL_LAYER_SCORES,
                                                           n_bootstrap=0).evidence
    lacking = task_verdict(_through_the_final_layer())  # the rich baseline's columns are not in the table
    assert lacking.outcome == "not testable" and "final kNN cosine" in lacking.evidence


def _noisy_family_results(n_models: int, *, rho: float, noise: float, n_groups: int = 4, n_layers: int = 14,
                          n_tasks: int = 1, shared: bool = False,
                          seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-layer curves whose true Frenet and NRS curves correlate at ``rho`` (GFMI unrelated);
    the full-sample curves carry noise ``noise / sqrt(G)``, each of G text groups ``noise``.
    With ``shared``, the true curves are c z + sqrt(1 - c^2) e (two independent e), c such that
    their mean |Spearman| is ``rho``."""
    from lrd.verdicts.families import latent_weight

    rng = np.random.default_rng(seed)
    c = latent_weight(rho, n_layers) if shared else rho
    z, e, e2, g = rng.normal(size=(4, n_models, n_tasks, n_layers))
    first = c * z + np.sqrt(1 - c ** 2) * e2 if shared else z
    true = np.stack([first, c * z + np.sqrt(1 - c ** 2) * e, g])  # (3 measurements, models, tasks, layers)
    names = np.array(["velocity", "NRS (adjusted)", "GFMI"])

    def frame(values: np.ndarray, **extra) -> pd.DataFrame:
        i, m, t, l = np.indices(values.shape).reshape(4, -1)
        return pd.DataFrame({"model": np.char.add("m", m.astype(str)), "task": np.char.add("t", t.astype(str)),
                             **extra, "measurement": names[i], "layer": l + 0.5, "value": values.ravel()})

    full = frame(true + noise / np.sqrt(n_groups) * rng.normal(size=true.shape))
    groups = [frame(true + noise * rng.normal(size=true.shape), group=k) for k in range(n_groups)]
    return full, pd.concat(groups, ignore_index=True)


@pytest.mark.simulation
def test_complementarity_per_model_size_and_power_with_noisy_curves():
    """The per-model test (tasks as replicates, corrected |rho|) at the boundary: true Frenet and
    NRS curves at mean |Spearman| 0.9, measured on 4 text groups with noise (reliability of a
    group's curve about 0.8): a model is declared complementary at most 5% of the time (+2 SE);
    at mean |rho| 0.5 most models are. The uncorrected correlations, fed the same test, would
    pass far more often at the boundary (the noise favours "complementary"). At the margin 0.9
    (the alternative of the book's rule), where the boundary is."""
    from lrd.verdicts.families import complementarity_model_tests, curve_reliability

    n = 300
    results, groups = _noisy_family_results(n, rho=0.9, noise=0.5, n_tasks=4, shared=True, seed=3)
    corrected = family_correlations(results, reliability=curve_reliability(groups))
    size = (complementarity_model_tests(corrected, margin=0.9).drop_duplicates("model")["p (all)"] <= 0.05).mean()
    assert size <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    raw = (complementarity_model_tests(family_correlations(results), margin=0.9).drop_duplicates("model")["p (all)"] <= 0.05).mean()
    assert raw > size
    results, groups = _noisy_family_results(100, rho=0.5, noise=0.5, n_tasks=4, shared=True, seed=4)
    table = complementarity_model_tests(family_correlations(results, reliability=curve_reliability(groups)),
                                        margin=0.9)
    assert (table.drop_duplicates("model")["p (all)"] <= 0.05).mean() > 0.5


def test_complementarity_per_model_closed_form_and_count():
    from lrd.verdicts.families import complementarity_model_tests

    c = _correlations(np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]] * 3))  # 6 models, one task each
    c = pd.concat([c, c.assign(task="u", rho=c["rho"] + 0.1)], ignore_index=True)  # two tasks per model
    t = complementarity_model_tests(c)
    row = t[(t["model"] == "m0") & (t["pair"] == "Frenet-NRS")].iloc[0]  # |rho| 0.1 and 0.2
    se = np.std([0.1, 0.2], ddof=1) / np.sqrt(2)
    assert row["mean |rho|"] == pytest.approx(0.15) and row["p"] == pytest.approx(
        stats.t.sf((COMPLEMENTARITY_MARGIN - 0.15) / se, 1))
    assert (t.groupby("model")["p (all)"].nunique() == 1).all()
    v = complementarity_verdict(c)
    assert v.per_model[1] == 6 and "Holm over the 6 models" in v.per_model_label


def test_complementarity_corrects_for_the_curves_noise():
    """Frenet and NRS truly redundant (rho 0.97) but measured with noise: the raw correlations fall
    below the 0.9 margin and the old verdict says "reproduced"; corrected by the curves'
    split-group reliability they do not, and the verdict says so."""
    from lrd.verdicts.families import curve_reliability

    results, groups = _noisy_family_results(8, rho=0.97, noise=0.8)
    raw = family_correlations(results)
    assert complementarity_verdict(raw, margin=0.9).outcome == "reproduced"  # noise made them look complementary
    reliability = curve_reliability(groups)
    assert set(reliability["family"]) == {"Frenet", "NRS", "GFMI"} and (reliability["groups"] == 4).all()
    corrected = family_correlations(results, reliability=reliability)
    pair = corrected[corrected["pair"] == "Frenet-NRS"]
    assert pair["rho_corrected"].abs().mean() > pair["rho"].abs().mean()
    v = complementarity_verdict(corrected, margin=0.9)
    assert v.outcome != "reproduced" and "corrected for the curves' noise" in v.evidence
    # noise-free groups: reliability 1, the correction changes nothing
    clean_results, clean_groups = _noisy_family_results(3, rho=0.5, noise=0.0)
    clean = family_correlations(clean_results, reliability=curve_reliability(clean_groups))
    assert np.allclose(clean["rho_corrected"], clean["rho"])


# ---- issue 48: lrd.task against a rich final-layer baseline, complementarity as "not near-identical" -----


def _rates(draw, judge, n: int, **choices) -> dict[str, float]:
    outcomes = [judge(**{**draw(np.random.default_rng(s)), **choices}).outcome for s in range(n)]
    return {o: outcomes.count(o) / n for o in ("reproduced", "contradicted", "inconclusive", "not testable")}


def _bound(n: int, level: float = 0.05) -> float:
    return level + 2 * np.sqrt(level * (1 - level) / n)


@pytest.mark.simulation
def test_task_null_at_the_chapter_s_design_keeps_its_size_and_a_true_effect_is_never_contradicted():
    """The chapter's design (8 models x its 3 datasets of equal size): datasets that move the final
    layer's four statistics, with LRD scores that only follow them, read "reproduced" in at most 5%
    (+2 SE) of panels; a dataset effect of LRD's own never reads "contradicted" (no opposite test)."""
    from lrd.verdicts.families import simulate_task_edge

    n = 150
    null = _rates(simulate_task_edge, task_verdict, n)
    assert null["reproduced"] <= _bound(n) and null["not testable"] == 0
    effect = _rates(lambda r: simulate_task_edge(r, own_task=1.0), task_verdict, n)
    assert effect["contradicted"] == 0 and effect["reproduced"] > null["reproduced"]


@pytest.mark.simulation
def test_a_third_final_layer_property_carrying_the_datasets_fools_two_scalars_not_the_rich_baseline():
    """The referee's case: the LRD scores follow the final layer's neighbourhood tightness (kNN cosine),
    which the two scalars (rank r, mean cosine) do not hold. Against the two scalars the judge says
    "reproduced" far above 5%; against the rich baseline it keeps its size."""
    from lrd.verdicts.families import simulate_task_edge

    n = 150
    draw = lambda r: simulate_task_edge(r, carriers=("final kNN cosine",))  # noqa: E731
    poor = _rates(draw, task_verdict, n, final=FINAL_LAYER_SCORES)
    rich = _rates(draw, task_verdict, n)
    assert poor["reproduced"] > 0.2 and rich["reproduced"] <= _bound(n)


def test_the_task_factor_is_called_dataset_unless_two_datasets_per_type():
    one = _task_panel(5, 4, nrs_effect=0.2).assign(**{"task type": lambda d: d["task"]})  # one dataset per type
    two = one.assign(**{"task type": lambda d: d["task"].map({"t0": "a", "t1": "a", "t2": "b", "t3": "b"})})
    v1, v2 = task_verdict(one, n_bootstrap=0), task_verdict(two, n_bootstrap=0)
    assert "x 4 datasets" in v1.evidence and "not shown to be a task-type difference" in v1.note
    assert "x 4 tasks" in v2.evidence and "task-type" not in v2.note
    assert (v1.p_value, v1.outcome) == (v2.p_value, v2.outcome)  # the wording, not the test
    assert "x 4 datasets" in task_verdict(_task_panel(5, 4, nrs_effect=0.2), n_bootstrap=0).evidence  # no types


@pytest.mark.simulation
def test_complementarity_near_identical_at_0_85_passes_only_the_laxest_margin():
    """Two families whose curves agree at mean |rho| 0.85 (8 models x 4 tasks x 12 transitions):
    the book's margin 0.7 never calls them "not near-identical" (at most 5% + 2 SE); the laxest
    alternative, 0.9, does in most panels: the margin decides it, and the book's is the strict one.
    At the margin itself the test keeps its size both ways."""
    from lrd.verdicts.families import redundancy_boundary

    n = 200
    near = lambda r: redundancy_boundary(r, target=0.85)  # noqa: E731
    assert COMPLEMENTARITY_MARGIN == 0.7
    assert _rates(near, complementarity_verdict, n)["reproduced"] <= _bound(n)
    assert _rates(near, complementarity_verdict, n, margin=0.9)["reproduced"] > 0.5
    edge = _rates(redundancy_boundary, complementarity_verdict, n)
    assert edge["reproduced"] <= _bound(n) and edge["contradicted"] <= _bound(n)
    unrelated = _rates(lambda r: redundancy_boundary(r, target=0.3), complementarity_verdict, 50)
    assert unrelated["contradicted"] == 0 and unrelated["reproduced"] > 0.9


def test_complementarity_verdict_reads_as_not_strongly_correlated():
    v = complementarity_verdict(_correlations(np.full((5, 3), 0.2)))
    assert "test of: every pair below |rho| 0.7 (not strongly correlated)" in v.evidence
    assert "not strongly correlated" in v.reconstruction
    assert "complementarity proper" in v.reconstruction


def test_final_layer_statistics_closed_forms_and_invariances():
    from lrd.metrics.final_layer import cluster_share, final_layer_statistics, knn_cosine

    assert knn_cosine(np.eye(5), k=3) == pytest.approx(0.0, abs=1e-12)  # orthogonal: every cosine 0
    x = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])  # cosines 0.6 (1-2), 0 (1-3), 0.8 (2-3)
    assert knn_cosine(x, k=1) == pytest.approx((0.6 + 0.8 + 0.8) / 3)
    assert knn_cosine(x, k=2) == pytest.approx((0.6 + 0 + 0.6 + 0.8 + 0 + 0.8) / 6)
    rng = np.random.default_rng(0)
    y = rng.normal(size=(60, 8)) + np.repeat(rng.normal(size=(3, 8)) * 3, 20, axis=0)  # three clusters
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    scaled = 2.5 * y[:, None] * np.abs(rng.normal(size=(60, 1, 1)))  # rescale each sample
    assert knn_cosine(y @ q, k=5) == pytest.approx(knn_cosine(y, k=5))
    assert knn_cosine(scaled[:, 0], k=5) == pytest.approx(knn_cosine(y, k=5))
    assert cluster_share(y @ q * 3.0 + 7.0 * 0) == pytest.approx(cluster_share(y))  # rotation, scale
    iso = cluster_share(rng.normal(size=(60, 8)))
    assert cluster_share(y, levels=(4,)) > 0.6 > iso  # three real clusters against isotropic noise
    stats_ = final_layer_statistics(np.stack([rng.normal(size=(60, 8)), y]), k=5)
    assert stats_ == {"final kNN cosine": knn_cosine(y, 5), "final cluster share": cluster_share(y)}
    with pytest.raises(ValueError, match="k must lie"):
        knn_cosine(y, k=60)
    with pytest.raises(ValueError, match="zero norm"):
        knn_cosine(np.zeros((3, 2)), k=1)
    assert set(FINAL_LAYER_STATISTICS) == set(FINAL_LAYER_SCORES) | set(stats_)
