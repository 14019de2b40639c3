"""The four judges of Skean et al. (:mod:`lrd.verdicts.layer_choice`): each ``*_result`` function
computes a claim's numbers (a :class:`~lrd.verdicts.result.Result`), and each ``judge_*``
function writes them as a verdict through :mod:`lrd.verdicts.wording.layer_choice`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as _sp

from lrd.verdicts.claims import SKEAN_GAIN_RANGE, Scope, claim as _claim
from lrd.verdicts.layer_choice.tables import (HALVES, PAPER_BAND, PAPER_CHOICE_GAIN, PAPER_DIRECTIONS,
                                              cross_fitted_gain, in_scope_models, label_free_choice,
                                              model_correlations, model_gains, paper_gain, per_model_band_gains,
                                              require_defined, sample_interval)
from lrd.verdicts.layer_choice.valleys import VALLEY_BAND, VALLEY_MARGIN, per_model_valleys, valley_depths
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import (equivalence_sign_flip_test, sign_flip_min_p_test, sign_flip_power, sign_flip_test,
                                two_group_permutation_test)
from lrd.verdicts.wording import layer_choice as wording
from lrd.verdicts.wording.layer_choice import STATES_NORMED

__all__ = ["GAIN_ESTIMATORS", "OFTEN_READINGS", "gain_result", "judge_gain", "valley_result", "judge_valley",
           "metrics_track_result", "judge_metrics_track", "choice_result", "judge_choice"]

#: The estimators of the gain :func:`judge_gain` takes: the paper's (the layers in the band, no
#: choice) and the cross-fitted best intermediate layer (chosen on one half, scored on the other).
GAIN_ESTIMATORS = ("band", "cross-fitted best")
#: The readings of the abstract's "often improving" :func:`judge_gain` takes: the mean gain over
#: models, or the share of a model's tasks where the chosen layers beat the last (against one half).
OFTEN_READINGS = ("mean", "share")


def _scoped(results: pd.DataFrame, scope: Scope | None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of the models in ``scope`` (:func:`in_scope_models`), and the models left out."""
    inside = in_scope_models(results, scope)
    return results[results["model"].map(inside).astype(bool)], [m for m, keep in inside.items() if not keep]


def _scope_facts(scope: Scope | None, note: str | None) -> dict:
    """The facts every scoped judge's sentences quote: the scope's text and kinds, and the caller's note."""
    return {"scope": scope.text if scope is not None else None,
            "scope_kinds": tuple(scope.kinds) if scope is not None and scope.kinds else None, "note": note}


def _task_gains(results: pd.DataFrame, estimator: str, band: tuple[float, float]) -> tuple[pd.DataFrame, str]:
    """One row per (model, task) of ``estimator``'s chosen score and the last layer's: the table
    (``chosen``, ``last``, ``gain``) and the name of its chosen column."""
    if estimator == "band":
        return paper_gain(results, band=band), "band"
    if estimator == "cross-fitted best":
        return cross_fitted_gain(results), "best (cross-fitted)"
    raise ValueError(f"estimator must be one of {GAIN_ESTIMATORS}, got {estimator!r}")


def _model_statistic(table: pd.DataFrame, chosen: str, *, often: str, relative: bool,
                     counted: bool = True) -> pd.Series:
    """Per model, the unit of the gain's test: its relative gain (or gain in points) of the task-mean
    score (``often="mean"``), or the share of its tasks whose chosen score beats the last, ties
    counted half (``often="share"``). A relative gain is undefined (NaN) where a model's last layer
    scores 0: refused for models the judge counts (``counted``), shown for the others."""
    if often == "mean":
        means = model_gains(table, chosen=chosen)
        if not relative:
            return means[chosen] - means["last"]
        return require_defined(means["relative gain"]) if counted else means["relative gain"]
    if often == "share":
        wins = np.sign(table["gain"].to_numpy())
        return pd.Series((wins + 1) / 2, index=table["model"].to_numpy()).groupby(level=0, sort=False).mean()
    raise ValueError(f"often must be one of {OFTEN_READINGS}, got {often!r}")


def gain_result(results: pd.DataFrame, *, paper_low: float = SKEAN_GAIN_RANGE[0],
                band: tuple[float, float] = PAPER_BAND, relative: bool = True, scope: Scope | None = None,
                estimator: str = "band", often: str = "mean", alpha: float = ALPHA, note: str | None = None) -> Result:
    """The numbers of :func:`judge_gain` (same parameters).

    ``case``: ``"tested"``, or ``"no model in scope"`` (no number). ``facts``: ``left_out`` (each
    model outside the scope and its statistic, shown), ``n_models``, ``wins`` (models above the
    last), ``normed`` (models scored through the final norm; band only), ``crossed`` (the
    cross-fitted best layer's mean relative gain, shown; band with halves only), ``spread`` and
    the readings applied (``paper_low``, ``band``, ``relative``, ``estimator``, ``often``).
    """
    if often not in OFTEN_READINGS:
        raise ValueError(f"often must be one of {OFTEN_READINGS}, got {often!r}")
    scope = scope or _claim("skean.gain").scope
    kept, outside = _scoped(results, scope)
    full, chosen = _task_gains(results, estimator, band)
    shown = _model_statistic(full[full["model"].isin(outside)], chosen, often=often, relative=relative,
                             counted=False) if outside else pd.Series(dtype=float)
    facts = {**_scope_facts(scope, note), "left_out": {m: float(x) for m, x in shown.items()},
             "paper_low": paper_low, "band": tuple(band), "relative": relative, "estimator": estimator, "often": often}
    if kept.empty:
        return Result("skean.gain", "test", case="no model in scope", alpha=alpha, facts=facts)
    table = full[full["model"].isin(set(kept["model"]))]
    g = _model_statistic(table, chosen, often=often, relative=relative).to_numpy()
    x = g - 0.5 if often == "share" else g
    test = sign_flip_test(x)
    below = (sign_flip_test(-x) if often == "share" else equivalence_sign_flip_test(x, paper_low, lower=-math.inf))
    n, wins = len(g), int((x > 0).sum())
    measured = set(pd.unique(results["measurement"]))
    with_halves = estimator == "band" and set(HALVES) <= measured
    normed = int(table.groupby("model")["states"].first().eq(STATES_NORMED).sum()) if estimator == "band" else None
    crossed = float(model_gains(cross_fitted_gain(kept))["relative gain"].mean()) if with_halves else None
    spread = float(x.std(ddof=1)) if n > 1 else None
    power = sign_flip_power(paper_low, spread, n, alpha=alpha) if spread is not None and often == "mean" else None
    per_shown = None
    if with_halves:
        per = per_model_band_gains(kept, band=band)
        per_shown = (int((per["p (Holm)"] <= alpha).sum()), len(per))
    return Result("skean.gain", "test", statistic=test.statistic, p_value=test.p_value, p_against=below.p_value,
                  p_min=test.p_min, effect=float(g.mean()), ci=sample_interval(g), power=power, per_model=per_shown,
                  alpha=alpha,
                  facts={**facts, "n_models": n, "wins": wins, "normed": normed, "crossed": crossed, "spread": spread})


def judge_gain(results: pd.DataFrame, *, paper_low: float = SKEAN_GAIN_RANGE[0],
               band: tuple[float, float] = PAPER_BAND, relative: bool = True, scope: Scope | None = None,
               estimator: str = "band", often: str = "mean", alpha: float = ALPHA,
               note: str | None = None) -> Verdict:
    r"""``skean.gain``: in the models of ``scope``, the layers at 40-60% depth score above the last
    layer (the paper's estimator), read as the mean gain over models.

    **Scope** (default None: the claim's, every model, as the paper states the gain across
    architectures; the book's rule 'scope', whose alternative
    :data:`lrd.verdicts.claims.SKEAN_LLM_SCOPE` leaves out contrastive sentence embedders, whose last
    layer is trained as the embedding: they are then shown with their gains and never counted,
    :func:`in_scope_models`).

    For each model :math:`m` in scope, :math:`g_m = (\bar b_m - \bar\ell_m)/|\bar\ell_m|`, the relative
    gain of the task-mean score of the layers at depth ``band`` over the last layer's
    (:func:`paper_gain`), both on the states the paper's code scores (through the final norm
    where the model has one). **Test**: exact one-sided sign-flip test of :math:`\bar g > 0` over
    models (null: each :math:`g_m` is symmetric about 0, as when the band and the last layer
    are equally good; p >= :math:`2^{-n}`). No layer is chosen by its score, so the test stays
    valid when the fits' noise is shared between halves or layers. **Against**: the sign-flip
    non-superiority test of :math:`\bar g <` ``paper_low`` (the paper's lower end, 2%). Effect:
    :math:`\bar g` with its t-interval. **Power**: the probability of "reproduced" if every
    model's gain were ``paper_low`` with the spread across models observed here
    (:func:`lrd.verdicts.stats.sign_flip_power`). Shown beside it, not tested: the best
    intermediate layer, cross-fitted (:func:`cross_fitted_gain`), when the halves are present.
    **Per model** (with the halves): the models whose band beats the last over their independent
    (task, half) replicates, Holm-adjusted (:func:`per_model_band_gains`).

    The book's readings, each with its alternative (the specification's rules):

    - ``relative=False`` measures :math:`g_m` in the score's own points, :math:`\bar b_m - \bar\ell_m`,
      instead of relative to :math:`|\bar\ell_m|` (the paper's "2%-16%" does not say which;
      ``paper_low`` is then read in points).
    - ``estimator="cross-fitted best"``: the best intermediate layer chosen on one half of each
      task's rows and scored on the other (:func:`cross_fitted_gain`, the halves as the model
      returns them) instead of the band; the same tests.
    - ``often="share"``: the abstract's "often improving" read as a share: per model, the share
      :math:`s_m` of its tasks where the chosen layers score above the last (a tie counts half);
      sign-flip test over models of :math:`\bar s - 1/2 > 0` (more often than not), against: the
      same test of :math:`1/2 - \bar s` (less often than not). No paper number: no power.

    ``alpha``: the test's level (the book's 0.05, :data:`lrd.verdicts.record.ALPHA`; the paper states
    no test): of the verdict, of the power and of the per-model count (Holm-adjusted p <= alpha).

    Paper: report digest ``shared/papers/002``, Sec. 2 step 1, Fig. 1 ("intermediate layers, e.g.
    Pythia-410M's at 40%-60% depth, score 2%-16% above the final layer on average", our translation).
    """
    return wording.gain(gain_result(results, paper_low=paper_low, band=band, relative=relative, scope=scope,
                                    estimator=estimator, often=often, alpha=alpha, note=note))


def _welch_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float] | None:
    if len(a) < 2 or len(b) < 2 or (a.var() == 0 and b.var() == 0):
        return None
    ci = _sp.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    return float(ci.low), float(ci.high)


def valley_result(results: pd.DataFrame, *, prompts: pd.DataFrame | None = None, measurement: str = "prompt entropy",
                  band: tuple[float, float] = VALLEY_BAND, margin: float = VALLEY_MARGIN, alpha: float = ALPHA,
                  note: str | None = None) -> Result:
    """The numbers of :func:`judge_valley` (same parameters).

    ``case``: ``"tested"``, or ``"one kind"`` (the panel lacks decoders or encoders; no number).
    ``facts``: ``short`` (models left out, too few blocks for a mid band), ``n_decoders``,
    ``n_encoders``, ``decoders`` and ``encoders`` (the smallest and largest valley of each kind),
    ``over_prompts`` (whether "flat" was tested per encoder over its prompts), ``flat_p`` (that
    test's p), ``spread`` and the rules applied (``measurement``, ``band``, ``margin``).
    """
    depths = valley_depths(results, measurement=measurement, band=band)
    short = depths.loc[depths["valley"].isna(), "model"].tolist()
    depths = depths[depths["kind"].isin(["encoder", "decoder"]) & depths["valley"].notna()]
    dec = (depths["kind"] == "decoder").to_numpy()
    v = depths["valley"].to_numpy()
    facts = {"note": note, "short": short, "measurement": measurement, "band": tuple(band), "margin": margin,
             "n_decoders": int(dec.sum()), "n_encoders": int((~dec).sum())}
    if dec.all() or not dec.any():
        return Result("skean.valley", "test", case="one kind", alpha=alpha, facts=facts)
    relabel = two_group_permutation_test(v, dec)
    reverse = two_group_permutation_test(v, dec, alternative="less")
    above = sign_flip_test(v[dec])
    per_model, shown = None, None
    if prompts is not None and len(prompts):
        per_model = per_model_valleys(prompts[prompts["model"].isin(depths["model"])], band=band, margin=margin)
    over_prompts = per_model is not None and set(per_model["model"]) == set(depths["model"])
    if over_prompts:
        enc_rows = per_model[per_model["kind"] == "encoder"]
        flat_p = float(enc_rows["p flat"].max())
        flat_p_min = float(enc_rows["p flat min"].max())
        dec_rows = per_model[per_model["kind"] == "decoder"]
        shown = (int((dec_rows["p valley (Holm)"] <= alpha).sum()), len(dec_rows))
    else:
        flat = equivalence_sign_flip_test(v[~dec], margin)
        flat_p, flat_p_min = flat.p_value, flat.p_min
    p = max(relabel.p_value, above.p_value, flat_p)
    p_min = max(relabel.p_min, above.p_min, flat_p_min)
    spread = float(v[dec].std(ddof=1)) if dec.sum() > 1 else None
    power = sign_flip_power(margin, spread, int(dec.sum()), alpha=alpha) if spread is not None else None
    return Result("skean.valley", "test", statistic=relabel.statistic, p_value=p, p_against=reverse.p_value,
                  p_min=p_min, effect=relabel.statistic, ci=_welch_interval(v[dec], v[~dec]), power=power,
                  per_model=shown, alpha=alpha,
                  facts={**facts, "n_models": len(v), "decoders": (float(v[dec].min()), float(v[dec].max())),
                         "encoders": (float(v[~dec].min()), float(v[~dec].max())), "over_prompts": over_prompts,
                         "flat_p": flat_p, "spread": spread})


def judge_valley(results: pd.DataFrame, *, prompts: pd.DataFrame | None = None, measurement: str = "prompt entropy",
                 band: tuple[float, float] = VALLEY_BAND, margin: float = VALLEY_MARGIN, alpha: float = ALPHA,
                 note: str | None = None) -> Verdict:
    r"""``skean.valley``: decoders show a mid-depth valley of prompt entropy, encoders do not.

    Each model's valley :math:`v_m` is the mid-band contrast (:func:`valley_contrast`, our
    reconstruction: the paper shows the curves, Fig. 2a, without a scalar) of its normalised
    ``measurement`` curve: 0 in expectation on exchangeable layers, and a dip at block 1 does
    not count. Three one-sided tests must all reject (an intersection-union test, p = the
    largest): the decoders' mean valley deeper than the encoders' (**relabelling** the kinds
    between models, :math:`p \ge 1/\binom{n}{k}`); the decoders' valleys above 0 (**sign
    flips** over decoders, :math:`p \ge 2^{-n_{dec}}`); and "encoders do not", an
    **equivalence test** that each encoder's valley lies within +-``margin``: with
    ``prompts`` (each prompt's curve, :func:`lrd.methods.crossfit.prompt_entropy_rows`) per
    encoder over its prompts (:func:`per_model_valleys`, the largest p over encoders), else
    over encoders (sign flips, :math:`p \ge 2^{-n_{enc}}`). **Against**: the encoders' valley
    deeper than the decoders' (relabelling, other tail). Effect: decoders' mean valley minus
    encoders', Welch t-interval. **Per model** (with ``prompts``): the decoders whose valley is
    above 0 over their prompts, Holm-adjusted ("shown in k of M decoders"). **Power**: of the
    decoders' sign-flip test if every decoder's valley were ``margin`` (the smallest valley the
    book tells from flat), spread across decoders as observed; the paper gives no depth.

    ``alpha``: the test's level (the book's 0.05; the paper states no test): of the verdict, of the
    power and of the per-model count, as in :func:`judge_gain`.

    Paper: Figure 2a (a valley in autoregressive models, flat in BERT).
    """
    return wording.valley(valley_result(results, prompts=prompts, measurement=measurement, band=band, margin=margin,
                                        alpha=alpha, note=note))


def metrics_track_result(results: pd.DataFrame, *, directions: dict[str, int] | None = None,
                         scope: Scope | None = None, alpha: float = ALPHA, note: str | None = None) -> Result:
    """The numbers of :func:`judge_metrics_track` (same parameters).

    ``case``: ``"tested"``, ``"no model in scope"`` or ``"no metric measured"`` (no number).
    ``facts``: ``left_out`` (the models outside the scope), ``directions`` (the metrics asked
    for), and, tested, per metric measured on every model (``metrics``, with its ``signs``): its
    mean signed correlation (``means``), sign-flip p (``p_values``) and the models in the paper's
    direction (``agree``); ``best``, the index of the smallest-p metric, and ``n_models``.
    """
    directions = PAPER_DIRECTIONS if directions is None else directions
    if not directions or any(d not in (-1, 1) for d in directions.values()):
        raise ValueError(f"directions must map each tested metric to +1 or -1, got {directions!r}")
    scope = scope or _claim("skean.metrics_track").scope
    kept, outside = _scoped(results, scope)
    facts = {**_scope_facts(scope, note), "left_out": list(outside), "directions": list(directions)}
    if kept.empty:
        return Result("skean.metrics_track", "test", case="no model in scope", alpha=alpha, facts=facts)
    table = model_correlations(kept, metrics=list(directions)).dropna(axis=1)
    if table.empty:
        return Result("skean.metrics_track", "test", case="no metric measured", alpha=alpha, facts=facts)
    values = table.to_numpy() * np.array([directions[m] for m in table.columns])
    test = sign_flip_min_p_test(values)
    per = [sign_flip_test(values[:, k]) for k in range(values.shape[1])]
    reversed_ = [sign_flip_test(-values[:, k]) for k in range(values.shape[1])]
    best = int(np.argmin([t.p_value - 1e-9 * values[:, k].mean() for k, t in enumerate(per)]))
    r = values[:, best]
    return Result("skean.metrics_track", "test", statistic=test.statistic, p_value=test.p_value, p_min=test.p_min,
                  p_against=max(t.p_value for t in reversed_), effect=float(r.mean()), ci=sample_interval(r),
                  alpha=alpha,
                  facts={**facts, "metrics": list(table.columns), "signs": [directions[m] for m in table.columns],
                         "means": [float(values[:, k].mean()) for k in range(values.shape[1])],
                         "p_values": [t.p_value for t in per],
                         "agree": [int((values[:, k] > 0).sum()) for k in range(values.shape[1])],
                         "best": best, "n_models": len(r)})


def judge_metrics_track(results: pd.DataFrame, *, directions: dict[str, int] | None = None,
                        scope: Scope | None = None, alpha: float = ALPHA, note: str | None = None) -> Verdict:
    r"""``skean.metrics_track``: in the models of ``scope``, prompt entropy (low) or DiME (high)
    ranks the layers as their scores do.

    **Scope** (default None: the claim's, :data:`lrd.verdicts.claims.SKEAN_LLM_SCOPE`, the
    autoregressive language models for which the paper states the relation, report digest
    ``shared/papers/002`` Sec. 3.2; contrastive sentence embedders, whose last layer is trained as
    the embedding, are named, never counted; the book's rule 'scope', whose alternative
    :data:`lrd.verdicts.specifications.skean2025.EVERY_MODEL` counts every model given).

    For each model :math:`m` and metric :math:`k` of ``directions`` (default
    :data:`PAPER_DIRECTIONS`: the metrics whose sign the paper states, prompt entropy negative
    and DiME positive), :math:`r_{mk}` is the mean over tasks of the Spearman correlation across
    layers between the metric and the score (:func:`metric_correlations`), times the paper's
    sign. **Test**: the min-p sign-flip test over models (:func:`lrd.verdicts.stats.sign_flip_min_p_test`:
    each metric's own sign-flip p-value, the smallest adjusted over the same flips; the largest
    mean would be swamped by a metric reversed in every model, whose flipped mean is large): under chance
    each model's correlations are as likely to have either sign (a ranking of the layers by score
    unrelated to the metrics is as likely reversed), and the maximum is taken inside every sign
    pattern, so picking the better metric is accounted for; p >= :math:`2^{-n}`. The other
    metrics, whose sign the paper does not state, are shown but not tested (with both signs in
    the family, the reversed pattern would tie and 5 models could not reach 0.05). **Against**:
    every tested metric reversed beyond chance (intersection-union of the one-sided sign-flip
    tests of :math:`-r_k`, p = max). Effect: the smallest-p metric's mean signed correlation with
    its t-interval (biased upward by choosing it; the p-value is not).

    ``alpha``: the test's level (the book's 0.05; the paper states no test), of the verdict.

    Paper: the metric framework (abstract; Sections 3 and 5); prompt entropy's valley at the
    best layers (Fig. 2a) and DiME's choice of layer (report digest ``shared/papers/002`` Sec. 3).
    """
    return wording.metrics_track(metrics_track_result(results, directions=directions, scope=scope, alpha=alpha,
                                                      note=note))


def choice_result(results: pd.DataFrame, *, metric: str = "DiME", higher_is_better: bool = True,
                  paper_choice_gain: float = PAPER_CHOICE_GAIN, relative: bool = True,
                  note: str | None = None, scope: Scope | None = None, alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_choice` (same parameters).

    ``case``: ``"tested"``, or ``"no model in scope"`` (no number). ``facts``: ``left_out`` (each
    model outside the scope and its relative gain, shown), ``n_models``, ``wins`` (models whose
    chosen layer scores above the last), ``depth`` (the chosen layers' mean depth), ``spread``
    and the rules applied (``metric``, ``higher_is_better``, ``paper_choice_gain``, ``relative``).
    """
    scope = scope or _claim("skean.choice").scope
    full = label_free_choice(results, metric=metric, higher_is_better=higher_is_better, scope=scope)
    table, outside = full[full["in scope"]], full[~full["in scope"]]
    facts = {**_scope_facts(scope, note), "left_out": {m: float(g) for m, g in outside["relative gain"].items()},
             "metric": metric, "higher_is_better": higher_is_better, "paper_choice_gain": paper_choice_gain,
             "relative": relative}
    if table.empty:
        return Result("skean.choice", "test", case="no model in scope", alpha=alpha, facts=facts)
    g = (require_defined(table["relative gain"]) if relative else table["chosen"] - table["last"]).to_numpy()
    test, worse = sign_flip_test(g), sign_flip_test(-g)
    n, wins = len(g), int((g > 0).sum())
    spread = float(g.std(ddof=1)) if n > 1 else None
    power = sign_flip_power(paper_choice_gain, spread, n, alpha=alpha) if spread is not None else None
    shown = (int((table["p (Holm)"] <= alpha).sum()), n)
    return Result("skean.choice", "test", statistic=test.statistic, p_value=test.p_value, p_against=worse.p_value,
                  p_min=test.p_min, effect=float(g.mean()), ci=sample_interval(g), power=power, per_model=shown,
                  alpha=alpha,
                  facts={**facts, "n_models": n, "wins": wins, "depth": float(table["chosen depth"].mean()),
                         "spread": spread})


def judge_choice(results: pd.DataFrame, *, metric: str = "DiME", higher_is_better: bool = True,
                 paper_choice_gain: float = PAPER_CHOICE_GAIN, relative: bool = True,
                 note: str | None = None, scope: Scope | None = None, alpha: float = ALPHA) -> Verdict:
    r"""``skean.choice``: the layer a label-free metric (DiME) chooses scores above the last layer.

    :func:`label_free_choice` picks one intermediate layer per model by the metric (no labels,
    so no selection bias; both layers are still scored on the halves the gain uses); the
    per-model relative gain :math:`g_m` of the task-mean score is tested by an exact one-sided
    **sign-flip test** over models (p >= :math:`2^{-n}`); against: the same test of
    :math:`-g` (the chosen layer significantly below the last). Effect: :math:`\bar g` with its
    t-interval, beside the paper's +3% (Pythia). Power: the probability of "reproduced" if every
    model's chosen layer gained ``paper_choice_gain`` (the paper's 3%), with the spread across models
    observed here. ``relative=False`` measures :math:`g_m` in the score's own points instead of
    relative to the last layer's (the paper's "3%" does not say which).

    **Scope** (:attr:`lrd.verdicts.claims.Claim.scope`, default the claim's): the paper states the
    number for Pythia, an autoregressive language model; only models of the scope's kinds are
    tested, the others (sentence embedders, whose last layer is trained as the embedding) are
    shown with their gains and never counted.

    ``alpha``: the test's level (the book's 0.05; the paper states no test): of the verdict, of the
    power and of the per-model count, as in :func:`judge_gain`.

    Paper: results on the MTEB average (report digest ``shared/papers/002`` Sec. 3.1).
    """
    return wording.choice(choice_result(results, metric=metric, higher_is_better=higher_is_better,
                                        paper_choice_gain=paper_choice_gain, relative=relative, note=note,
                                        scope=scope, alpha=alpha))
