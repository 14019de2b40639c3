"""The judges of Hinostroza et al.'s claims (:mod:`lrd.verdicts.agreement`): each ``x_result``
computes a claim's numbers as a :class:`~lrd.verdicts.result.Result` and ``judge_x`` turns it into
the verdict through :mod:`lrd.verdicts.wording.agreement`, the only place that writes its sentences."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from lrd.verdicts.agreement.relevance import (MIN_RELIABILITY, SAME_RELEVANCE, STRONG_CORRELATION,
                                              bootstrap_quantile)
from lrd.verdicts.claims import COSINE_MISESTIMATE_SHARE
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import crossed_t_test, holm, mean_interval, monte_carlo_p, sign_flip_test, tolerance
from lrd.verdicts.wording import agreement as wording
from lrd.verdicts.wording.agreement import PAPER_MODELS

__all__ = ["decoder_panel", "decoder_note", "theory_result", "correlation_result", "misestimate_result",
           "dataset_result", "pruning_result", "olmo_result", "judge_theory", "judge_correlation", "judge_misestimate",
           "judge_dataset", "judge_pruning", "judge_olmo", "pruning_model_tests", "PRUNING_MODEL_COLUMNS"]


def decoder_panel(panel: pd.DataFrame) -> dict:
    """The counts :func:`decoder_note` words: ``n`` language models, the ``instruct`` ones and the
    ``gguf`` ones (dequantised from GGUF), by name, from a panel of columns ``model, tuning, weights``.

    >>> decoder_panel(pd.DataFrame({"model": ["a", "b"], "tuning": ["instruct", "base"], "weights": ["GGUF", ""]}))
    {'n': 2, 'instruct': ['a'], 'gguf': ['a']}
    """
    missing = {"model", "tuning", "weights"} - set(panel.columns)
    if missing:
        raise ValueError(f"panel lacks columns {sorted(missing)}; pass model_kinds(models) merged with "
                         "model_sources(models) on 'model'")
    if panel.empty:
        return {"n": 0, "instruct": [], "gguf": []}
    return {"n": len(panel), "instruct": panel.loc[panel["tuning"] == "instruct", "model"].tolist(),
            "gguf": panel.loc[panel["weights"].str.contains("GGUF", case=False), "model"].tolist()}


def decoder_note(panel: pd.DataFrame, *, paper: str = PAPER_MODELS) -> str:
    """What a reader must know of the language models the cosine claims are tested on.

    ``panel`` has one row per model with columns ``model``, ``tuning`` ("base" or "instruct",
    :func:`lrd.engine.models.model_kinds`) and ``weights`` (what was done to them,
    :func:`lrd.engine.models.model_sources`; "" when unknown). Computed from the panel the chapter
    ran, so that the note never names a model that was not measured.

    >>> decoder_note(pd.DataFrame({"model": ["a", "b"], "tuning": ["instruct", "base"],
    ...                            "weights": ["GGUF Q4_1 dequantised to fp32", "as published"]}))
    "instruction-tuned: 1 of 2 language models (a); dequantised from GGUF: 1 of 2 (a); the paper's LLMs include OLMo and LLaMA-3-8B"
    >>> decoder_note(pd.DataFrame({"model": [], "tuning": [], "weights": []}))
    "no language model was measured; the paper's LLMs include OLMo and LLaMA-3-8B"
    """
    return wording.decoder_note(decoder_panel(panel), paper=paper)


# --- panel helpers -------------------------------------------------------------------------------

def _bootstrap_p(replicates: np.ndarray, supports: Callable[[np.ndarray], np.ndarray]) -> float:
    """(1 + #replicates not supporting) / (1 + B); a NaN replicate supports nothing."""
    v = np.asarray(replicates, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(v) & supports(np.where(np.isfinite(v), v, 0.0))
    return monte_carlo_p(int((~ok).sum()), len(v))


def _above_chance(table: pd.DataFrame, chance: pd.DataFrame, alpha: float,
                  keys: tuple[str, ...] = ("task",)) -> pd.DataFrame:
    """The rows of ``table`` whose model-task pairs (each of ``keys``) have intact accuracy above
    measured chance (``p_chance <= alpha``)."""
    rows = list(zip(chance["model"].to_numpy(object), chance["task"].to_numpy(object)))
    known = set(rows)
    above = {k for k, p in zip(rows, chance["p_chance"].to_numpy(float)) if p <= alpha}
    keep = np.ones(len(table), dtype=bool)
    models = table["model"].to_numpy(object)
    for key in keys:
        pairs = list(zip(models, table[key].to_numpy(object)))
        missing = sorted(set(pairs) - known)
        if missing:
            raise ValueError(f"no chance row for {missing}")
        keep &= np.fromiter((p in above for p in pairs), dtype=bool, count=len(pairs))
    return table[keep]


def _per_model(table: pd.DataFrame, columns: tuple[str, ...], *, group: str = "task") -> dict[str, dict[str, np.ndarray]]:
    """Per column and model: an array (n_tasks, n_boot + 1) of ``column`` by task (or task pair,
    ``group``) and replicate (NaN where a replicate is missing)."""
    replicate = table["replicate"].to_numpy()
    width = int(replicate.max()) + 1
    values = {c: table[c].to_numpy(dtype=float) for c in columns}
    out: dict[str, dict[str, list]] = {c: {} for c in columns}
    keys = zip(table["model"].to_numpy(object), table[group].to_numpy(object))
    index: dict[tuple, list] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    for (model, _), idx in index.items():
        idx = np.asarray(idx)
        for c in columns:
            row = np.full(width, np.nan)
            row[replicate[idx]] = values[c][idx]
            out[c].setdefault(model, []).append(row)
    return {c: {m: np.vstack(rows) for m, rows in by.items()} for c, by in out.items()}


def _count_at(p_holm, alpha: float) -> tuple[int, int] | None:
    """``per_model`` of a verdict: (k, M), the k of the M models whose Holm-adjusted p-value (one per
    model, ``p_holm``) is at most ``alpha`` (as :func:`lrd.verdicts.record.per_model_count`); None
    without models.

    >>> _count_at(holm([0.001, 0.04, 0.5]), 0.05)
    (1, 3)
    """
    p = [float(x) for x in p_holm]
    return (sum(x <= alpha for x in p), len(p)) if p else None


def _chance_facts(chance: pd.DataFrame, alpha: float, note: str) -> dict:
    """How many decoder-task pairs are above measured chance at ``alpha`` (and the note carried)."""
    return {"chance_above": int((chance["p_chance"] <= alpha).sum()), "chance_pairs": len(chance), "note": note}


# --- the judges ------------------------------------------------------------------------------------

def theory_result(toy, *, max_cosine: float = 1e-3, min_accuracy: float = 1.0,
                  max_without: float | None = None) -> Result:
    """The numbers of :func:`judge_theory`: the block of least cosine relevance, its relevance and
    the accuracy with and without it (``facts``), ``holds`` as defined there.

    >>> from types import SimpleNamespace as NS
    >>> r = theory_result(NS(cosine_relevance=np.array([0.3, 4e-5, 0.2]), accuracy=1.0,
    ...                      accuracy_without=np.array([1.0, 0.5, 1.0]), chance=0.5))
    >>> r.holds, r.facts["block"], r.facts["without"]
    (True, 2, 0.5)
    """
    cos = np.asarray(toy.cosine_relevance, dtype=float)
    block = int(np.argmin(cos))
    without = float(np.asarray(toy.accuracy_without, dtype=float)[block])
    ceiling = toy.chance if max_without is None else max_without
    holds = bool(cos[block] < max_cosine and toy.accuracy >= min_accuracy and without <= ceiling)
    return Result("cosine.theory", "demonstration", holds=holds,
                  facts={"n_blocks": len(cos), "block": block + 1, "cosine": float(cos[block]),
                         "accuracy": toy.accuracy, "without": without, "chance": toy.chance})


def judge_theory(toy, *, max_cosine: float = 1e-3, min_accuracy: float = 1.0,
                 max_without: float | None = None) -> Verdict:
    """Demonstration of "a layer can have arbitrarily low cosine relevance and still be crucial".

    ``toy`` is a :class:`lrd.methods.counterexample.CounterexampleResult` (``cosine_relevance``,
    ``accuracy``, ``accuracy_without``, ``chance``). It holds when the block of least cosine
    relevance has relevance below ``max_cosine`` while the intact network is perfect (accuracy at
    least ``min_accuracy``, 1) and the network without that block is at chance (accuracy at most
    ``max_without``; None: the toy's ``chance``). The network is our construction illustrating the
    paper's theoretical result, not a reproduction of its proof: it holds by design.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> judge_theory(NS(cosine_relevance=np.array([0.3, 4e-5, 0.2]), accuracy=1.0,
    ...                 accuracy_without=np.array([1.0, 0.5, 1.0]), chance=0.5)).outcome
    'demonstrated'
    """
    return wording.theory(theory_result(toy, max_cosine=max_cosine, min_accuracy=min_accuracy,
                                        max_without=max_without))


def panel_bootstrap_result(claim: str, per_model: dict[str, np.ndarray], p_value: list[float],
                           p_against: list[float], *, alpha: float, facts: dict) -> Result:
    """The result of an intersection-union test over models, each with its bootstrap replicates.

    ``per_model``: model -> (observed, replicate 1, ..., replicate B) of the noise-corrected
    statistic; ``p_value`` and ``p_against``: each model's p in and against the paper's direction.
    The panel's p is the largest model's (intersection-union), its smallest attainable
    :math:`1/(1+B)`; the effect is the mean over models (None where a model's is undefined), its
    interval the 2.5% and 97.5% quantiles of the mean's replicates; ``facts`` gains ``n_boot`` and
    ``n_models``.
    """
    stack = np.vstack(list(per_model.values()))
    n_boot = stack.shape[1] - 1
    effect = float(stack[:, 0].mean()) if np.isfinite(stack[:, 0]).all() else None  # undefined in a model
    mean_boot = stack[:, 1:].mean(0)
    return Result(claim, "test", statistic=effect, p_value=max(p_value), p_against=max(p_against),
                  p_min=monte_carlo_p(0, n_boot), effect=effect,
                  ci=(bootstrap_quantile(mean_boot, 0.025, -1.0), bootstrap_quantile(mean_boot, 0.975, 1.0)),
                  per_model=_count_at(holm(p_value), alpha), alpha=alpha,
                  facts={**facts, "n_boot": n_boot, "n_models": len(per_model)})


def correlation_result(agreement: pd.DataFrame, chance: pd.DataFrame, *, margin: float = STRONG_CORRELATION,
                       alpha: float = ALPHA, note: str = "") -> Result:
    """The numbers of :func:`judge_correlation` (``case`` "no signal" where no decoder-task pair
    is above measured chance); ``facts["models"]``: per decoder its uncorrected correlation,
    reliability, corrected correlation and 95% bootstrap interval."""
    if not 0 < margin < 1:
        raise ValueError(f"margin must be in (0, 1), got {margin!r}")
    kept = _above_chance(agreement, chance, alpha)
    claim = "cosine.correlation"
    facts = _chance_facts(chance, alpha, note)
    if kept.empty:
        return Result(claim, "test", case="no signal", alpha=alpha, facts=facts)
    arrays = _per_model(kept, ("r_corrected", "r", "reliability"))
    per_model = {m: a.mean(0) for m, a in arrays["r_corrected"].items()}  # NaN if any task's is
    p_value, p_against, rows = [], [], []
    for model, v in per_model.items():
        boot = v[1:]
        p_value.append(max(_bootstrap_p(boot, lambda x: x < margin), _bootstrap_p(boot, lambda x: x > -margin)))
        p_against.append(min(1.0, 2 * min(_bootstrap_p(boot, lambda x: x >= margin),
                                          _bootstrap_p(boot, lambda x: x <= -margin))))
        rows.append({"model": model, "r": float(arrays["r"][model][:, 0].mean()),
                     "reliability": float(arrays["reliability"][model][:, 0].mean()), "corrected": float(v[0]),
                     "low": bootstrap_quantile(boot, 0.025, -1), "high": bootstrap_quantile(boot, 0.975, 1)})
    return panel_bootstrap_result(claim, per_model, p_value, p_against, alpha=alpha,
                                  facts={**facts, "models": rows, "margin": margin})


def judge_correlation(agreement: pd.DataFrame, chance: pd.DataFrame, *, margin: float = STRONG_CORRELATION,
                      alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "the correlation between cosine similarity and performance degradation is often
    weak or moderate" (abstract): an equivalence test of :math:`|r_c| < m` per model.

    For each model (tasks above measured chance only), :math:`r_c` is the mean over its tasks of
    the noise-corrected correlation of accuracy relevance with cosine relevance (column
    ``r_corrected`` of :func:`agreement_table`). Equivalence by two one-sided bootstrap tests over
    items: :math:`p_m = \max(p^{+}, p^{-})` with
    :math:`p^{+} = (1 + \#\{b: r_{c,b} \ge m\})/(1 + B)` and :math:`p^{-}` likewise for
    :math:`r_{c,b} \le -m` (a replicate whose correction is undefined counts against).
    Against, "strong" (:math:`|r_c| \ge m`): the one-sided test of the better direction,
    doubled. Panel: intersection-union over models (:math:`\max_m p_m`). Noise (reliability near
    0) leaves the correction undefined or large, so it gives "inconclusive", never "reproduced".

    Parameters
    ----------
    agreement : DataFrame from :func:`agreement_table`
    chance : DataFrame from :func:`chance_table`
    margin : float
        :math:`m`, default :data:`STRONG_CORRELATION` (0.7, the conventional moderate/strong cut).
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``) and of the per-model count.
    note : str
        What the panel's language models are (:func:`decoder_note`), carried by the verdict; every
        judge of this module takes it.
    """
    return wording.correlation(correlation_result(agreement, chance, margin=margin, alpha=alpha, note=note))


def _mean_over_tasks(draws: pd.DataFrame) -> np.ndarray:
    """Per permutation (ascending), the mean over tasks (sorted) of ``misestimated``: the numbers of
    ``draws.pivot_table(index="permutation", columns="task", values="misestimated").mean(axis=1)``,
    read off a grid where every (permutation, task) has one finite value (as :func:`unrelated_draws`
    gives), else from that pivot table."""
    p_codes, permutations = pd.factorize(draws["permutation"], sort=True)
    t_codes, tasks = pd.factorize(draws["task"], sort=True)
    cell = p_codes * len(tasks) + t_codes
    values = draws["misestimated"].to_numpy(dtype=float)
    if (len(draws) == 0 or len(draws) != len(permutations) * len(tasks) or (p_codes < 0).any() or (t_codes < 0).any()
            or np.bincount(cell, minlength=len(draws)).max() != 1 or not np.isfinite(values).all()):
        return draws.pivot_table(index="permutation", columns="task", values="misestimated").mean(axis=1).to_numpy()
    grid = np.empty(len(draws))
    grid[cell] = values
    return grid.reshape(len(permutations), len(tasks)).mean(1)  # contiguous rows: pandas' summation order


def misestimate_result(agreement: pd.DataFrame, chance: pd.DataFrame, unrelated: pd.DataFrame, *,
                       share: float = COSINE_MISESTIMATE_SHARE, min_reliability: float = MIN_RELIABILITY,
                       alpha: float = ALPHA, note: str = "") -> Result:
    """The numbers of :func:`judge_misestimate` (``case`` "no signal" where no decoder-task pair
    is above measured chance); ``p_value`` is 1 by design; ``facts["models"]``: per decoder its
    share, the unrelated rankings' share, the difference's bootstrap interval, ``p_against``, the
    permutation p against unrelated rankings and the ranking reliability."""
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share!r}")
    delta = 1 - share
    kept = _above_chance(agreement, chance, alpha)
    claim = "cosine.misestimate"
    facts = _chance_facts(chance, alpha, note)
    if kept.empty:
        return Result(claim, "test", case="no signal", alpha=alpha, facts=facts)
    arrays = _per_model(kept, ("misestimated", "rank_reliability", "unrelated"))
    observed = {m: a.mean(0) for m, a in arrays["misestimated"].items()}
    chance_share = {m: a.mean(0) for m, a in arrays["unrelated"].items()}
    kept_pairs = set(zip(kept["model"], kept["task"]))
    null = unrelated[[(m, t) in kept_pairs for m, t in zip(unrelated["model"].to_numpy(dtype=object),
                                                              unrelated["task"].to_numpy(dtype=object))]]
    with np.errstate(invalid="ignore"):
        excess = {m: np.where((arrays["rank_reliability"][m] >= min_reliability).all(0), v - chance_share[m], np.nan)
                  for m, v in observed.items()}
    p_against, rows = [], []
    n_perm = None
    for model, v in excess.items():
        draws = _mean_over_tasks(null[null["model"] == model])
        if not len(draws):
            raise ValueError(f"{model}: no permutation draws in `unrelated` (run unrelated_draws on the same replicates)")
        n_perm = len(draws) if n_perm is None else min(n_perm, len(draws))
        s0 = observed[model][0]
        boot = v[1:]
        diff = observed[model] - chance_share[model]  # every replicate: noise errs towards inconclusive here
        p_against.append(_bootstrap_p(diff[1:], lambda x: x < -delta))
        rows.append({"model": model, "share": float(s0), "unrelated": float(chance_share[model][0]),
                     "low": bootstrap_quantile(boot, 0.025, -1), "high": bootstrap_quantile(boot, 0.975, 1),
                     "p_against": p_against[-1],
                     "p_random": monte_carlo_p(int((draws <= s0 + tolerance()).sum()), len(draws)),
                     "rank_reliability": float(arrays["rank_reliability"][model][:, 0].mean())})
    stack = np.vstack(list(excess.values()))
    effect = float(np.mean([observed[m][0] - chance_share[m][0] for m in observed]))
    n_boot = stack.shape[1] - 1
    mean_boot = stack[:, 1:].mean(0)
    # p = 1: no valid test of "no better than random" under item noise (see judge_misestimate)
    return Result(claim, "test", statistic=effect, p_value=1.0, p_against=max(p_against),
                  p_min=monte_carlo_p(0, n_boot), effect=effect,
                  ci=(bootstrap_quantile(mean_boot, 0.025, -1.0), bootstrap_quantile(mean_boot, 0.975, 1.0)),
                  alpha=alpha, facts={**facts, "models": rows, "share": share, "delta": delta, "n_boot": n_boot,
                                      "n_models": len(excess), "n_perm": n_perm})


def judge_misestimate(agreement: pd.DataFrame, chance: pd.DataFrame, unrelated: pd.DataFrame, *,
                      share: float = COSINE_MISESTIMATE_SHARE, min_reliability: float = MIN_RELIABILITY,
                      alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "in more than 90% of the cases cosine over- or under-estimates a layer's
    relevance" (Introduction), judged against the share that unrelated rankings give.

    The share of mis-estimated blocks (:func:`estimation_shares` at the margin of ``agreement``)
    depends on the margin, and rankings unrelated to each other already mis-estimate most blocks
    at ours (the share :math:`u` below): a share above 90% would need cosine to be *worse* than random. So the
    paper's 90% is shown as its description, and the claim is read on the scale it implies:
    cosine places blocks no better than rankings unrelated to removal cost, up to the 10% of
    cases the paper leaves (:math:`\delta = 1 - 0.9`). Per model, :math:`s` is the share averaged
    over its tasks above measured chance and :math:`u` the unrelated rankings' (exact) share:

    * **reproduced** ("no better than unrelated rankings", :math:`s > u - \delta`) cannot be shown
      by the measured share: item noise in the accuracy drops pulls :math:`s` towards :math:`u`
      without bound (pure noise gives :math:`s = u`) and the bootstrap over items does not
      reproduce that pull (simulated just below the edge :math:`s = u - \delta`, a bootstrap
      equivalence test says "reproduced" more often than its level allows). So :math:`p = 1`
      (``tests/test_agreement.py::test_misestimation_is_judged_against_unrelated_rankings``): the
      verdict is "contradicted" or "inconclusive", and the difference with its bootstrap interval
      is shown as evidence. No
      other statistic mends this, per model or across models: blocks whose removal costs nearly
      the same (most blocks of a small decoder) are ordered by differences far below what a few
      hundred items resolve, so a panel whose true share is well below :math:`u - \delta` (those
      near-ties ordered as cosine orders them) gives nearly the same data as one at :math:`u`
      (the same in the limit of exact ties), and a test valid at that least favourable null has
      almost no power anywhere. So the verdict carries no per-model count, and says why
      (``per_model_label``);
    * **contradicted** (cosine ranks blocks better than unrelated rankings by more than the
      :math:`\delta` the claim leaves, :math:`s < u - \delta`): the one-sided bootstrap test of
      :math:`d = s - u`, :math:`p_\text{against} = (1 + \#\{b: d_b \ge -\delta\})/(1 + B)`.
      Item noise pulls :math:`d` towards 0, and the resamples further, so this side errs towards
      "inconclusive". The permutation test of the share against unrelated rankings
      (:func:`unrelated_draws`; exact, but of "better than random" at all, which the claim allows
      up to :math:`\delta`) is shown beside it as evidence, not as the test;

    both intersection-union over models.

    Parameters
    ----------
    agreement : DataFrame from :func:`agreement_table`
    chance : DataFrame from :func:`chance_table`
    unrelated : DataFrame from :func:`unrelated_draws` (same replicates and margin)
    share : float
        The paper's share (0.9); :math:`\delta = 1 - ` ``share``.
    min_reliability : float
        Default :data:`MIN_RELIABILITY`.
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``).
    """
    return wording.misestimate(misestimate_result(agreement, chance, unrelated, share=share,
                                                  min_reliability=min_reliability, alpha=alpha, note=note))


def dataset_result(task_agreement: pd.DataFrame, chance: pd.DataFrame, *, same: float = SAME_RELEVANCE,
                   alpha: float = ALPHA, note: str = "") -> Result:
    """The numbers of :func:`judge_dataset` (``case`` "no task pairs" where no decoder was
    measured on two tasks, "no signal" where none is above measured chance on two);
    ``facts["models"]``: per decoder its mean corrected between-task correlation, 95% bootstrap
    interval, number of task pairs and mean uncorrected correlation."""
    claim = "cosine.dataset"
    if task_agreement.empty:
        return Result(claim, "test", case="no task pairs", alpha=alpha, facts={"note": note})
    kept = _above_chance(task_agreement, chance, alpha, keys=("task_a", "task_b"))
    facts = _chance_facts(chance, alpha, note)
    if kept.empty:
        return Result(claim, "test", case="no signal", alpha=alpha, facts=facts)
    kept = kept.assign(pair=[f"{a} / {b}" for a, b in zip(kept["task_a"], kept["task_b"])])
    arrays = _per_model(kept, ("r_corrected", "r"), group="pair")
    per_model = {m: a.mean(0) for m, a in arrays["r_corrected"].items()}
    p_value, p_against, rows = [], [], []
    for model, v in per_model.items():
        boot = v[1:]
        p_value.append(_bootstrap_p(boot, lambda x: x < same))
        p_against.append(_bootstrap_p(boot, lambda x: x > same))
        rows.append({"model": model, "corrected": float(v[0]), "low": bootstrap_quantile(boot, 0.025, -1),
                     "high": bootstrap_quantile(boot, 0.975, 1), "pairs": len(arrays["r"][model]),
                     "r": float(arrays["r"][model][:, 0].mean())})
    return panel_bootstrap_result(claim, per_model, p_value, p_against, alpha=alpha,
                                  facts={**facts, "models": rows, "same": same})


def judge_dataset(task_agreement: pd.DataFrame, chance: pd.DataFrame, *, same: float = SAME_RELEVANCE,
                  alpha: float = ALPHA, note: str = "") -> Verdict:
    r"""Verdict on "layer relevance differs across datasets" (Introduction, Figure 1A).

    Within a model, two tasks' accuracy relevances agree up to item noise when their
    noise-corrected between-task correlation (:func:`task_agreement_table`) is 1: the
    within-task split-half reliability is the ceiling that noise allows, and a task's
    difficulty scales its drops without changing which blocks matter (shuffling items between
    tasks of different difficulty would not be a valid null). Per model, :math:`\bar r_c` is the
    mean over pairs of tasks above measured chance. A correlation below 1 is near-automatic as
    items grow (any real difference between two tasks, however small, shows), so the claim is
    judged against a substantive margin, the same ``same`` that defines "the same relevance":
    reproduced when :math:`\bar r_c <` ``same`` (the tasks share less than ``same``\ :sup:`2` of
    their relevance's variance), :math:`p = (1 + \#\{b: \bar r_{c,b} \ge \text{same}\})/(1 + B)`;
    contradicted (relevance the same on every task): :math:`\bar r_c >` ``same`` by the mirror
    test; undefined corrections count against both; intersection-union over models.

    Parameters
    ----------
    task_agreement : DataFrame from :func:`task_agreement_table`
    chance : DataFrame from :func:`chance_table`
    same : float
        Default :data:`SAME_RELEVANCE`.
    alpha : float
        The verdict's level; also the level of the measured-chance filter (a model-task pair
        counts when ``p_chance <= alpha``) and of the per-model count.
    """
    return wording.dataset(dataset_result(task_agreement, chance, same=same, alpha=alpha, note=note))


#: Columns of :func:`pruning_model_tests`.
PRUNING_MODEL_COLUMNS = ["model", "tasks", "items", "difference", "low", "high", "p", "p (Holm)"]


def pruning_model_tests(items: pd.DataFrame, chance: pd.DataFrame | None = None, *,
                        better: str = "accuracy (calibration)", worse: str = "cosine (BI)",
                        alpha: float = ALPHA) -> pd.DataFrame:
    r"""Per pruned model, does the ``better`` ranking prune better than the ``worse`` one, over
    the model's test items?

    For model :math:`m`, task :math:`t` and test item :math:`i`,
    :math:`x_{ti} = \frac1K\sum_k (c_{ti}(\text{better}, k) - c_{ti}(\text{worse}, k))`, the
    difference in 0/1 correctness averaged over the :math:`K` budgets (the statistic of
    :func:`judge_pruning` per item). The model's effect :math:`\bar d = \frac1T\sum_t \bar x_t`
    is tested one-sided ("better above worse") by Student's t with the items as the unit
    (:func:`lrd.verdicts.stats.crossed_t_test`; both rules are deterministic, so each task is one
    row of items); Holm adjusts over the models. Tasks whose intact model is not above measured
    chance (``chance``, :func:`chance_table`) are left out, as in the chapter's other per-model
    tests; a model with none is left out.

    Parameters
    ----------
    items : DataFrame
        ``model, task, rule, seed, k, item, correct`` (:func:`lrd.units.cosine_vs_ablation.pruning_items_table`).
    chance : DataFrame, optional
        :func:`chance_table`.

    Returns
    -------
    DataFrame :data:`PRUNING_MODEL_COLUMNS` (``low, high``: the two-sided 95% t-interval).

    Examples
    --------
    >>> items = pd.DataFrame({"model": "m", "task": "t", "rule": np.repeat(["accuracy (calibration)", "cosine (BI)"], 4),
    ...                       "seed": 0, "k": 1, "item": [0, 1, 2, 3] * 2, "correct": [1, 1, 1, 0, 0, 1, 0, 0]})
    >>> pruning_model_tests(items)[["difference", "items"]].values.tolist()
    [[0.5, 4.0]]
    """
    need = {"model", "task", "rule", "seed", "k", "item", "correct"}
    if not need <= set(items.columns):
        raise ValueError(f"items need columns {sorted(need)}, got {sorted(items.columns)}")
    if chance is not None and len(items):
        items = _above_chance(items, chance, alpha)
    rows = []
    kept = items[items["rule"].isin([better, worse]) & (items["k"] > 0)]
    for model, part in kept.groupby("model", sort=False):
        tables = []
        for task, cell in part.groupby("task", sort=False):
            grid = cell.pivot_table(index=["k", "item"], columns="rule", values="correct", aggfunc="mean")
            if not {better, worse} <= set(grid.columns):
                raise ValueError(f"{model} / {task}: the items need both rules {better!r} and {worse!r}")
            diff = (grid[better] - grid[worse]).groupby(level="item").mean().to_numpy(dtype=float)
            tables.append(diff[None, :])
        if not tables:
            continue
        t = crossed_t_test(tables)
        rows.append({"model": model, "tasks": len(tables), "items": sum(x.shape[1] for x in tables),
                     "difference": t["mean"], "low": t["low"], "high": t["high"], "p": t["p"]})
    table = pd.DataFrame(rows, columns=PRUNING_MODEL_COLUMNS[:-1])
    return table.assign(**{"p (Holm)": holm(table["p"].to_numpy()) if len(table) else []})


def pruning_result(curves: pd.DataFrame, *, better: str = "accuracy (calibration)", worse: str = "cosine (BI)",
                   random: str = "random", alpha: float = ALPHA, note: str = "", items: pd.DataFrame | None = None,
                   chance: pd.DataFrame | None = None) -> Result:
    """The numbers of :func:`judge_pruning` (``case`` "no model pruned" where ``curves`` has no
    budget above 0); ``facts["models"]``: per model the two rules' accuracy and the random orders'
    (None where absent), ``facts["budgets"]``, and from ``items`` the per-model count (Holm).

    >>> curves = pd.DataFrame({"model": np.repeat(["a", "b"], 2), "rule": ["accuracy (calibration)", "cosine (BI)"] * 2,
    ...                        "seed": -1, "k": 1, "acc": [0.6, 0.5, 0.7, 0.4]})
    >>> r = pruning_result(curves)
    >>> r.p_value, r.p_min, round(r.effect, 3)
    (0.25, 0.25, 0.2)
    """
    need = {"model", "rule", "seed", "k", "acc"}
    if not need <= set(curves.columns):
        raise ValueError(f"curves need columns {sorted(need)}, got {sorted(curves.columns)}")
    claim = "cosine.pruning"
    pruned = curves[curves["k"] > 0]
    cells: dict[tuple, list] = {}  # (model, rule, seed) -> accuracies over budgets
    for key, acc in zip(zip(pruned["model"].to_numpy(object), pruned["rule"].to_numpy(object),
                            pruned["seed"].to_numpy()), pruned["acc"].to_numpy(float)):
        cells.setdefault(key, []).append(acc)
    rules: dict[str, dict[str, list]] = {}  # model -> rule -> mean accuracy per seed
    for (model, rule, _), accs in cells.items():
        rules.setdefault(model, {}).setdefault(rule, []).append(float(np.mean(accs)))
    if not rules:
        return Result(claim, "test", case="no model pruned", alpha=alpha, facts={"note": note})
    missing = {m: sorted({better, worse} - set(r)) for m, r in rules.items() if not {better, worse} <= set(r)}
    if missing:
        raise ValueError(f"every pruned model needs both rules {better!r} and {worse!r}; missing {missing}")
    by = {m: {rule: float(np.median(v)) for rule, v in r.items()} for m, r in rules.items()}
    d = np.array([r[better] - r[worse] for r in by.values()])
    rows = [{"model": model, "better": r[better], "worse": r[worse], "random": r.get(random)} for model, r in by.items()]
    test, against = sign_flip_test(d), sign_flip_test(-d)
    per_model, n_tested = None, 0
    if items is not None and len(items):
        table = pruning_model_tests(items, chance, better=better, worse=worse, alpha=alpha)
        per_model, n_tested = _count_at(table["p (Holm)"], alpha), len(table)
    return Result(claim, "test", statistic=float(d.mean()), p_value=test.p_value, p_against=against.p_value,
                  p_min=test.p_min, effect=float(d.mean()), ci=mean_interval(d) if len(d) > 1 else None,
                  per_model=per_model, alpha=alpha,
                  facts={"note": note, "models": rows, "budgets": sorted(pruned["k"].unique().tolist()),
                         "n_models": len(d), "n_tested": n_tested})


def judge_pruning(curves: pd.DataFrame, *, better: str = "accuracy (calibration)", worse: str = "cosine (BI)",
                  random: str = "random", alpha: float = ALPHA, note: str = "", items: pd.DataFrame | None = None,
                  chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on "pruning by the accuracy drop beats pruning by cosine" (abstract, Sec. 6).

    Per pruned model :math:`m`, :math:`d_m` is the mean over budgets :math:`k > 0` of the
    evaluation accuracy (mean over tasks) of the ``better`` rule minus the ``worse`` rule's
    (random orders: median over seeds). Exact one-sided sign-flip test over models (the unit
    that varies independently; :math:`p \ge 2^{-n}`, so 5 models are needed to reach 0.05),
    and the same test of :math:`-d` against.

    Parameters
    ----------
    curves : DataFrame with columns ``model, rule, seed, k, acc``
    random : str
        The rule whose curve (median over seeds) the evidence shows beside the two compared; no
        number of the test reads it.
    alpha : float
        The verdict's level; also the level of the measured-chance filter and of the per-model
        count (Holm) of the evidence from ``items``.
    items : DataFrame, optional
        The pruned models' per-item correctness (:func:`lrd.units.cosine_vs_ablation.pruning_items_table`):
        the evidence per model beside the verdict (:func:`pruning_model_tests`, Holm over the models).
    chance : DataFrame, optional
        :func:`chance_table`: the tasks the per-model tests keep.
    """
    return wording.pruning(pruning_result(curves, better=better, worse=worse, random=random, alpha=alpha, note=note,
                                          items=items, chance=chance))


def olmo_result(*, note: str = "") -> Result:
    """The OLMo layer-16 example: ``case`` "not in panel" (OLMo is not in the offline panel)."""
    return Result("cosine.olmo", "test", case="not in panel", facts={"note": note})


def judge_olmo(*, note: str = "") -> Verdict:
    """Verdict on the OLMo layer-16 example: not testable, OLMo is not in the offline panel."""
    return wording.olmo(olmo_result(note=note))
