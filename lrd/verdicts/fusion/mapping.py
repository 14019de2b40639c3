"""ilse.mapping: the layer-to-node mapping's own variance component against the paper's 1.5 points.

The two-way (mappings x seeds) random model, its chi-square bound and generalized p-value
(:func:`judge_mapping`), the same per model (:func:`mapping_model_tests`), and
:func:`mapping_result`, the numbers of :func:`judge_mapping` (its sentences:
:func:`lrd.verdicts.wording.fusion.mapping`).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from lrd.verdicts.claims import ILSE_KINDS, ILSE_MAPPING_STD_PP, ILSE_PARAMS_RANGE
from lrd.verdicts.fusion.panel import POINTS, cube, holm_count, require_columns, size_scope
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import holm, monte_carlo_p
from lrd.verdicts.wording import fusion as words

__all__ = ["mapping_components", "mapping_grid", "mapping_test", "mapping_result", "judge_mapping",
           "majority_accuracy", "mapping_model_tests"]


def mapping_components(runs: np.ndarray) -> dict:
    r"""Two-way ANOVA of a (mappings, seeds) grid of scores: mapping and seed noise.

    Model :math:`y_{is} = \mu + a_i + b_s + e_{is}`, :math:`a_i \sim N(0, \sigma_a^2)` the
    mapping's effect, :math:`b_s` a training seed shared by the mappings, :math:`e_{is} \sim
    N(0, \sigma_e^2)` the training noise. With :math:`m` mappings and :math:`n` seeds,

    .. math:: MS_a = \frac{n}{m-1}\sum_i (\bar y_{i\cdot} - \bar y)^2, \quad
              MS_e = \frac{1}{(m-1)(n-1)}\sum_{i,s}(y_{is} - \bar y_{i\cdot} - \bar y_{\cdot s} + \bar y)^2,

    :math:`E[MS_a] = \sigma_e^2 + n\sigma_a^2`, :math:`E[MS_e] = \sigma_e^2`, and
    :math:`\hat\sigma_a^2 = \max(0, (MS_a - MS_e)/n)`.

    Returns
    -------
    dict with ``m, n, ms_a, df_a, ms_e, df_e`` (``ms_e`` None when n = 1) and ``var_a``.

    Examples
    --------
    >>> c = mapping_components(np.array([[1.0, 2.0], [3.0, 4.0]]))  # mappings differ by 2, no residual
    >>> c["ms_a"], c["ms_e"], c["var_a"]
    (4.0, 0.0, 2.0)
    """
    runs = np.asarray(runs, dtype=float)
    m, n = runs.shape
    means = runs.mean(1)
    ms_a = n * float(means.var(ddof=1))
    if n < 2:
        return {"m": m, "n": n, "ms_a": ms_a, "df_a": m - 1, "ms_e": None, "df_e": 0, "var_a": None}
    resid = runs - means[:, None] - runs.mean(0)[None, :] + runs.mean()
    df_e = (m - 1) * (n - 1)
    ms_e = float((resid ** 2).sum() / df_e)
    return {"m": m, "n": n, "ms_a": ms_a, "df_a": m - 1, "ms_e": ms_e, "df_e": df_e,
            "var_a": max(0.0, (ms_a - ms_e) / n)}


def mapping_result(ablation: pd.DataFrame, *, paper_std_pp: float = ILSE_MAPPING_STD_PP,
                   prefix: str = "random mapping", n_draws: int = 20000, seed: int = 0,
                   mappings: pd.DataFrame | None = None, chance: float | None = None,
                   model: str | None = None, base_params: Mapping[str, float] | None = None,
                   above_chance_pp: float | None = None,
                   params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                   model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
                   alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_mapping` (same parameters). ``case``: ``"tested"``, ``"too few
    mappings"``, ``"model not counted"`` or ``"does not learn"``; ``per_model`` from
    :func:`mapping_model_tests` (``facts``: its grid, the models out of its scope)."""
    claim = "ilse.mapping"
    require_columns(ablation, {"variant", "seed", "score"}, "ablation")
    learns_pp = paper_std_pp if above_chance_pp is None else above_chance_pp
    facts = {"paper_std_pp": paper_std_pp, "learns_pp": learns_pp}
    per_model = None
    table = (mapping_model_tests(mappings, paper_std_pp=paper_std_pp, prefix=prefix, chance=chance,
                                 base_params=base_params, above_chance_pp=above_chance_pp, params_range=params_range,
                                 model_kinds=model_kinds, kinds=kinds)
             if mappings is not None and len(mappings) else None)
    if table is not None and len(table):  # a model's grid needs 2+ mappings
        inside = table[table["in scope"]]
        per_model = holm_count(inside["p (Holm)"], alpha=alpha)
        facts.update(grid=(int(table["mappings"].min()), int(table["seeds"].min())),
                     per_model_out=table.loc[~table["in scope"], "model"].tolist())
    if (base_params is not None or model_kinds is not None) and model is None:
        raise ValueError("judge_mapping: base_params and model_kinds need the ablation model's name (model=)")
    runs = mapping_grid(ablation, prefix)
    m, n_seeds = runs.shape
    facts.update(m=m, n_seeds=n_seeds)
    if m < 2 or n_seeds < 1:
        return Result(claim, "test", "too few mappings", per_model=per_model, alpha=alpha, facts=facts)
    if base_params is not None or model_kinds is not None:
        (kept,), left_out = size_scope(claim, base_params, pd.DataFrame({"model": [model]}), params=params_range,
                                       kinds=kinds, model_kinds=model_kinds)
        if kept.empty:
            return Result(claim, "test", "model not counted", per_model=per_model, alpha=alpha,
                          facts=dict(facts, left_out=left_out))
    if chance is not None and runs.mean() < (chance * POINTS + learns_pp):
        return Result(claim, "test", "does not learn", alpha=alpha,
                      facts=dict(facts, mean=runs.mean(), chance=chance * POINTS))
    t = mapping_test(runs, paper_std_pp, n_draws=n_draws, seed=seed)
    facts.update(df=t["df"], per_run=t["per_run"], seed_sd=t["seed_sd"], f_p=t["f_p"])
    return Result(claim, "test", "tested", statistic=t["x"], p_value=t["p"], p_against=t["p_against"], p_min=0.0,
                  effect=t["effect"], ci=t["ci"], per_model=per_model, alpha=alpha, facts=facts)


def judge_mapping(ablation: pd.DataFrame, *, paper_std_pp: float = ILSE_MAPPING_STD_PP,
                  prefix: str = "random mapping", n_draws: int = 20000, seed: int = 0,
                  mappings: pd.DataFrame | None = None, chance: float | None = None,
                  model: str | None = None, base_params: Mapping[str, float] | None = None,
                  above_chance_pp: float | None = None,
                  params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
                  alpha: float = ALPHA) -> Verdict:
    r"""ilse.mapping: the layer-to-node mapping moves the score by at most 1.5 points (std).

    The paper's 1.5% is the spread of one run per mapping; with ~150 test rows and ~128 training
    rows that spread is mostly training noise (the seeds at one mapping spread as much), so it
    says nothing about the mapping. The claim ("the gain comes from the graph, not from
    particular adjacencies") is about the mapping's own component :math:`\sigma_a` of a
    mapping x seed grid (:func:`mapping_components`, in points), against :math:`c` = ``paper_std_pp``:

    * **reproduced** (:math:`\sigma_a < c`): :math:`p = F_{\chi^2_{m-1}}((m-1) MS_a / (n c^2))`.
      Under :math:`\sigma_a \ge c`, :math:`(m-1)MS_a/(n c^2) \ge (m-1)MS_a/(\sigma_e^2 + n\sigma_a^2)
      \sim \chi^2_{m-1}`, so the test is exact at :math:`\sigma_e = 0` and conservative with seed
      noise (the seed noise must be averaged away by seeds, it is never credited to the claim);
    * **contradicted** (:math:`\sigma_a > c`, beyond the seed noise): the generalized p-value
      of the pivot :math:`R = ((m-1)MS_a/U_a - df_e MS_e/U_e)/n`, :math:`U_a \sim \chi^2_{m-1}`,
      :math:`U_e \sim \chi^2_{df_e}` (Tsui and Weerahandi, JASA 84 (1989) 602-607):
      :math:`p_\text{against} = P(R \le c^2)` (``n_draws`` draws); needs 2+ seeds.

    The interval is the generalized 95% interval of :math:`\sigma_a`; the evidence also gives the
    F-test of any mapping effect against the seed noise, :math:`MS_a / MS_e \sim F_{m-1, df_e}`.

    Parameters
    ----------
    ablation : DataFrame
        Columns ``variant, seed, score``; the mappings are the variants starting with ``prefix``;
        seeds that trained every mapping form the grid.
    mappings : DataFrame, optional
        Every model's grid (``model, variant, seed, score``): the evidence per model beside the
        verdict (:func:`mapping_model_tests`, Holm over the models whose encoder learns the task).
    chance : float, optional
        The majority class's accuracy on the task's test items: the scope of the per-model
        evidence (:func:`mapping_model_tests`).
    model, base_params : str and mapping, optional
        The ablation model and every model's base parameter count: with them, a model outside
        the paper's sizes (the claim's :attr:`~lrd.verdicts.claims.Claim.scope`) is not tested
        ("not testable" for the ablation model), as in :func:`size_scope`; ``params_range`` the
        bounds of the paper's sizes, as in :func:`judge_fc`.
    above_chance_pp : float, optional
        With ``chance``: the points above the majority class's accuracy that a mean score over the
        mappings needs for the encoder to count as learning the task (our reconstruction of
        "learns"); None: ``paper_std_pp``.
    alpha : float
        The test's level (the book's 0.05, :data:`lrd.verdicts.record.ALPHA`; the paper states no
        test): of the verdict and of the per-model count (Holm-adjusted p <= alpha).

    References
    ----------
    Ulanovski et al., key findings (our translation of the digest): over 10 random layer-node
    mappings at fixed hyper-parameters, every standard deviation stays within 1.5%.
    Searle, Casella and McCulloch, *Variance Components* (Wiley 1992), Sec. 3.5 (the one-way
    and two-way random models).
    """
    return words.mapping(mapping_result(ablation, paper_std_pp=paper_std_pp, prefix=prefix, n_draws=n_draws,
                                        seed=seed, mappings=mappings, chance=chance, model=model,
                                        base_params=base_params, above_chance_pp=above_chance_pp,
                                        params_range=params_range, model_kinds=model_kinds, kinds=kinds,
                                        alpha=alpha))


def mapping_grid(runs: pd.DataFrame, prefix: str) -> np.ndarray:
    """The (mappings, seeds) grid of scores in points of the variants starting with ``prefix``,
    keeping the seeds that trained every mapping (shape ``(0, 0)`` when there is none)."""
    rows = runs[runs["variant"].astype(str).str.startswith(prefix)]
    if not len(rows):
        return np.zeros((0, 0))
    grid = cube(rows, ("variant", "seed"), "score")[0]
    return grid[:, np.isfinite(grid).all(0)] * POINTS


def mapping_test(runs: np.ndarray, paper_std_pp: float, *, n_draws: int = 20000, seed: int = 0) -> dict:
    r"""The tests of :func:`judge_mapping` on one (mappings, seeds) grid of scores in points:
    ``p`` (chi-square bound, "below"), ``p_against`` (generalized p-value, "above"; None with one
    seed), ``effect`` (the component's std), ``ci`` (its generalized 95% interval), the statistic
    ``x`` and its ``df``, and the descriptive ``per_run``, ``seed_sd``, ``f_p``."""
    m, n_seeds = runs.shape
    c = mapping_components(runs)
    df, c2 = c["df_a"], paper_std_pp ** 2
    x = df * c["ms_a"] / (n_seeds * c2)
    out = {"df": df, "x": x, "p": float(_sp.chi2.cdf(x, df)), "p_against": None, "ci": None,
           "per_run": float(runs.var(axis=0, ddof=1).mean()) ** 0.5,
           "seed_sd": float(runs.var(axis=1, ddof=1).mean()) ** 0.5 if n_seeds > 1 else None, "f_p": None,
           "effect": math.sqrt(c["ms_a"] / n_seeds)}
    if c["ms_e"] is not None:
        rng = np.random.default_rng(seed)
        r = (df * c["ms_a"] / rng.chisquare(df, n_draws) - c["df_e"] * c["ms_e"] / rng.chisquare(c["df_e"], n_draws))
        r = r / n_seeds
        sd = np.sqrt(np.clip(r, 0, None))
        out.update(p_against=float(monte_carlo_p((r <= c2).sum(), n_draws)), effect=math.sqrt(c["var_a"]),
                   ci=(float(np.quantile(sd, 0.025)), float(np.quantile(sd, 0.975))),
                   f_p=float(_sp.f.sf(c["ms_a"] / c["ms_e"], df, c["df_e"])) if c["ms_e"] > 0 else 0.0)
    return out


def majority_accuracy(task) -> float:
    """Accuracy of predicting the test split's most frequent class: the score of an aggregator
    that learned nothing (every classification score of the Cayley chapter is on that split,
    :func:`lrd.aggregation.scores.classification_scores`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(labels=[0, 0, 1, 1, 0, 1], frame=pd.DataFrame({"split": ["train"] * 2 + ["test"] * 4}))
    >>> majority_accuracy(t)   # test labels 1, 1, 0, 1
    0.75
    """
    is_test = task.frame["split"].to_numpy() == "test"
    labels = np.asarray(task.labels)[is_test]
    if labels.size == 0:
        raise ValueError(f"task {getattr(task, 'name', '?')!r} has no test items")
    return float(np.unique(labels, return_counts=True)[1].max() / labels.size)


def mapping_model_tests(mappings: pd.DataFrame, *, paper_std_pp: float = ILSE_MAPPING_STD_PP,
                        prefix: str = "random mapping", chance: float | None = None, n_draws: int = 20000,
                        seed: int = 0, base_params: Mapping[str, float] | None = None,
                        above_chance_pp: float | None = None,
                        params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS) -> pd.DataFrame:
    r"""Per model, is the layer-to-node mapping's own component below the paper's bound?

    Each model's (mappings, seeds) grid of scores is judged as :func:`judge_mapping` judges the
    ablation model's: the chi-square bound of the mapping means,
    :math:`p = F_{\chi^2_{m-1}}((m-1) MS_a / (n c^2))`, exact at no seed noise and conservative
    with it (the seed noise counts against the claim; simulated per model in
    ``tests/test_fusion_verdicts.py``); Holm adjusts over the models. The unit inside a model is
    the trained run (a mapping and a seed).

    **Scope**: "the mapping does not matter" says something only where the encoder learns the
    task; an encoder that predicts one class for every mapping has no spread to show. With
    ``chance`` (the majority class's accuracy, :func:`lrd.aggregation.scores.majority_accuracy`),
    a model whose grid's mean score is not above ``chance`` by ``above_chance_pp`` points (None:
    ``paper_std_pp``; our reconstruction of "learns") is shown, out of scope, and left out of Holm;
    so is, with ``base_params``, a model outside the paper's sizes (:func:`size_scope`, within
    ``params_range``).

    Returns
    -------
    DataFrame ``model, mappings, seeds, mean score, in scope, component (points), low, high, p,
    p (Holm)`` (``p (Holm)`` NaN out of scope); models with fewer than 2 mappings trained with a
    common seed are left out.
    """
    require_columns(mappings, {"model", "variant", "seed", "score"}, "mappings")
    (sized,), _ = size_scope("ilse.mapping", base_params, mappings, params=params_range, kinds=kinds,
                             model_kinds=model_kinds)
    learns_pp = paper_std_pp if above_chance_pp is None else above_chance_pp
    in_size = set(sized["model"])
    columns = ["model", "mappings", "seeds", "mean score", "in scope", "component (points)", "low", "high", "p"]
    rows = []
    for model, grid in mappings.groupby("model", sort=False):
        runs = mapping_grid(grid, prefix)
        if runs.shape[0] < 2 or runs.shape[1] < 1:
            continue
        t = mapping_test(runs, paper_std_pp, n_draws=n_draws, seed=seed)
        low, high = t["ci"] if t["ci"] is not None else (math.nan, math.nan)
        mean = float(runs.mean()) / POINTS
        rows.append({"model": model, "mappings": runs.shape[0], "seeds": runs.shape[1], "mean score": mean,
                     "in scope": (chance is None or mean >= chance + learns_pp / POINTS) and model in in_size,
                     "component (points)": t["effect"], "low": low, "high": high, "p": t["p"]})
    table = pd.DataFrame(rows, columns=columns)
    adjusted = np.full(len(table), np.nan)
    inside = table["in scope"].to_numpy(dtype=bool)
    adjusted[inside] = holm(table.loc[inside, "p"].to_numpy())
    return table.assign(**{"p (Holm)": adjusted})
