r"""Verdicts on LRD's model-selection claims: do the model-level scores rank models like their downstream score?

For a panel of :math:`n` models with a label-free score :math:`s_m` and a downstream score
:math:`y_m`, the agreement is Spearman's rank correlation
:math:`\rho(s, y) = \operatorname{corr}(\operatorname{rank}(s), \operatorname{rank}(y))`. The unit of
every test is the **model** (a model's tasks are averaged before it enters).

Two claims of Jiang, Yang, Tam (2026, abstract):

* ``lrd.selection``: "all three model-level scores correlate positively with downstream MTEB
  performance, with end-to-end subspace displacement (:math:`d_{0,L}`) the strongest". Judged as
  **two parts that must both hold** (an intersection-union test, :func:`judge_selection`):
  *all three positive* by the exact Spearman permutation test of the smallest of the three
  correlations (:func:`lrd.verdicts.stats.spearman_permutation_test`, ``statistic="min"``), and
  *:math:`d_{0,L}` the strongest* by a paired test of :math:`\rho(d_{0,L}, y) - \rho(s, y)` against
  each other score (:func:`spearman_difference_test`). "Reproduced" needs both at p <= 0.05.
* ``lrd.selection_llm``: "the same direction holds on a smaller base-LLM MMLU panel": all three
  correlate positively on the decoders (:func:`judge_selection_llm`); the direction, not the
  ranking of the scores.

With :math:`n` models no ordering test can give p below :math:`1/n!` (1/120 for 5 models, 1/6
for 3 decoders), and the difference test ignores the model of middle downstream rank when
:math:`n` is odd (its centred rank is 0), so it needs 6 models to reach 0.05
(:math:`2^{-5} < 0.05 < 2^{-4}`).

References
----------
Jiang, Yang, Tam, "Layer-wise Representation Dynamics", arXiv:2605.12714 (2026), abstract and
Sec. 6 (model selection by :math:`d_{0,L}`, mean NRS and mean GFMI).
Bonett, Wright, "Sample size requirements for estimating Pearson, Kendall and Spearman
correlations", Psychometrika 65 (2000) 23-28 (the interval of :func:`spearman_interval`).
"""

from __future__ import annotations

import math
from functools import lru_cache, partial
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.spec import NullModel
from lrd.verdicts.stats import PermutationTest, all_orderings, average_ranks, rank_rows, sign_flip_test, spearman_permutation_test
from lrd.verdicts.wording import selection as wording

__all__ = ["LRD_SCORES", "selection_table", "spearman_difference_test", "spearman_interval", "stratified_orderings",
           "selection_result", "judge_selection", "selection_strongest_result", "judge_selection_strongest",
           "selection_llm_result", "judge_selection_llm", "simulate_selection", "simulate_selection_effect",
           "SELECTION_NULL", "STRONGEST_NULL", "SELECTION_LLM_NULL"]

#: The three model-level scores of the paper, as :func:`lrd.metrics.model_scores` names them.
LRD_SCORES = ("d_0L", "mean NRS (adjusted)", "mean GFMI")


def _centred_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks (ties averaged) centred and scaled to unit norm, so that ``r_a @ r_y`` is Spearman's rho."""
    r = average_ranks(x) - (len(x) + 1) / 2
    norm = float(np.sqrt((r ** 2).sum()))
    return r / norm if norm > 0 else r


def spearman_interval(rho: float, n: int, *, level: float = 0.95) -> tuple[float, float]:
    r"""Approximate interval of a Spearman correlation: Fisher's :math:`z` with Bonett and Wright's variance.

    .. math:: \tanh\Bigl(\operatorname{artanh}\rho \pm z_{(1+\text{level})/2}
              \sqrt{(1 + \rho^2/2)/(n - 3)}\Bigr)

    With :math:`n \le 3` the interval is :math:`(-1, 1)`; :math:`|\rho| = 1` is pulled to
    :math:`\pm 0.9999` so that the interval stays finite.

    >>> lo, hi = spearman_interval(0.9, 5)
    >>> round(lo, 2), round(hi, 2)
    (-0.17, 1.0)
    """
    if not (math.isfinite(rho) and -1 <= rho <= 1):
        raise ValueError(f"rho must be a correlation in [-1, 1], got {rho!r}")
    if n <= 3:
        return -1.0, 1.0
    r = float(np.clip(rho, -0.9999, 0.9999))
    half = float(_sp.norm.ppf((1 + level) / 2)) * math.sqrt((1 + r * r / 2) / (n - 3))
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def spearman_difference_test(first: np.ndarray, second: np.ndarray, downstream: np.ndarray,
                             **options) -> PermutationTest:
    r"""One-sided test of "``first`` correlates with ``downstream`` more strongly than ``second`` does".

    With unit-norm centred ranks :math:`a, b, y` of the two scores and of the downstream score
    over the same :math:`n` units, the difference of the two Spearman correlations is a sum of
    per-unit contributions

    .. math:: \rho(a, y) - \rho(b, y) = \sum_m (a_m - b_m)\, y_m = \sum_m c_m .

    Null: within each unit the two scores' ranks are exchangeable (neither score tracks the
    downstream score better); swapping them flips the sign of :math:`c_m`, so the exact
    p-value is the sign-flip test of the :math:`c_m` (:func:`lrd.verdicts.stats.sign_flip_test`;
    statistic :math:`\bar c = (\rho_a - \rho_b)/n`). A unit with :math:`c_m = 0` (the middle
    downstream rank when :math:`n` is odd, or equal ranks of the two scores) cannot flip, so
    ``p_min`` is :math:`2^{-n'}` over the :math:`n'` units with :math:`c_m \ne 0`.

    Parameters
    ----------
    first, second, downstream : arrays of shape (n_units,)

    Examples
    --------
    Six models, ``first`` ranks them perfectly and ``second`` backwards: the largest difference
    six models can show, p = 1/64.

    >>> t = spearman_difference_test(np.arange(6.), -np.arange(6.), np.arange(6.))
    >>> round(t.statistic * 6, 6), t.p_value, t.p_min
    (2.0, 0.015625, 0.015625)
    """
    a, b, y = (np.asarray(v, dtype=float) for v in (first, second, downstream))
    if not (a.ndim == b.ndim == y.ndim == 1 and len(a) == len(b) == len(y) >= 2):
        raise ValueError(f"need three 1-D arrays of the same length >= 2, got shapes {a.shape}, {b.shape}, {y.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(y).all()):
        raise ValueError("scores and downstream must be finite; drop units with missing values first")
    return _difference_test(_centred_ranks(a), _centred_ranks(b), _centred_ranks(y), **options)


def _difference_test(ra: np.ndarray, rb: np.ndarray, ry: np.ndarray, **options) -> PermutationTest:
    """:func:`spearman_difference_test` on unit-norm centred ranks."""
    contributions = (ra - rb) * ry
    contributions[np.abs(contributions) < 1e-12] = 0.0
    return sign_flip_test(contributions, **options)


def _models(scores: pd.DataFrame, downstream: pd.Series,
            measures: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list]:
    """Score matrix (n_measures, n_models) and downstream scores of the models with every value."""
    missing = [m for m in measures if m not in scores.columns]
    if missing:
        raise ValueError(f"scores lacks the measures {missing}; columns: {list(scores.columns)}")
    common = [m for m in scores.index if m in downstream.index]
    x = scores.loc[common, list(measures)].to_numpy(dtype=float).T
    y = downstream.reindex(common).to_numpy(dtype=float)
    keep = np.isfinite(x).all(0) & np.isfinite(y)
    return x[:, keep], y[keep], [m for m, k in zip(common, keep) if k]


def selection_table(scores: pd.DataFrame, downstream: pd.Series, measures: Sequence[str]) -> pd.DataFrame:
    """Spearman correlation of each model-level measure with the downstream score, one at a time.

    Parameters
    ----------
    scores : DataFrame indexed by model, one column per measure
    downstream : Series indexed by model
    measures : the columns to correlate

    Returns
    -------
    DataFrame indexed by measure: ``rho``, ``p`` (one-sided exact permutation p-value of a
    positive correlation), ``p_min``, ``n`` (models with the measure and a downstream score).
    Each row is its own test (no correction for the number of measures: the verdicts use the
    joint test of :func:`judge_selection`).
    """
    rows = {}
    for name in measures:
        x, y, _ = _models(scores, downstream, [name])
        if len(y) < 2:
            rows[name] = {"rho": np.nan, "p": np.nan, "p_min": np.nan, "n": len(y)}
            continue
        t = spearman_permutation_test(x[0], y)
        rows[name] = {"rho": t.statistic, "p": t.p_value, "p_min": t.p_min, "n": len(y)}
    return pd.DataFrame(rows).T.astype({"n": int})


def _all_positive(x: np.ndarray, y: np.ndarray) -> tuple[PermutationTest, PermutationTest, np.ndarray, np.ndarray]:
    """Joint test of all scores positive, the opposite test (some score negative), each rho, and the
    centred ranks (scores, then the downstream score last)."""
    ranks = np.stack([_centred_ranks(v) for v in (*x, y)])
    return (spearman_permutation_test(x, y, statistic="min"), spearman_permutation_test(x, -y, statistic="max"),
            ranks[:-1] @ ranks[-1], ranks)


@lru_cache(maxsize=16)
def _exact_stratified_orderings(strata: tuple) -> np.ndarray:
    """Every ordering that permutes only within strata (the product of the strata's
    factorials), read-only: computed once per strata and process (each simulated panel of the
    appendix asks for the same). Rows in the order of the strata's lexicographic permutations,
    the first stratum's slowest."""
    strata = np.asarray(strata)
    groups = [np.flatnonzero(strata == g) for g in dict.fromkeys(strata.tolist())]
    out = np.tile(np.arange(len(strata)), (math.prod(math.factorial(len(g)) for g in groups), 1))
    block = 1
    for g in reversed(groups):  # the last stratum varies fastest, as itertools.product
        perms = g[all_orderings(len(g))]  # (len(g)!, len(g))
        rows = len(out) // (block * len(perms))
        out[:, g] = np.tile(np.repeat(perms, block, axis=0), (rows, 1))
        block *= len(perms)
    out.flags.writeable = False
    return out


def stratified_orderings(strata: np.ndarray, *, max_exact: int = 40320, n_permutations: int = 20000,
                         seed: int = 0) -> tuple[np.ndarray, bool]:
    """Orderings of the units that permute only within each stratum: all of them (the product of
    the strata's factorials) up to ``max_exact``, else ``n_permutations`` uniform draws (the
    identity first)."""
    groups = [np.flatnonzero(strata == g) for g in dict.fromkeys(strata.tolist())]
    n = len(strata)
    total = math.prod(math.factorial(len(g)) for g in groups)
    if total <= max_exact:
        return _exact_stratified_orderings(tuple(strata.tolist())), True
    rng = np.random.default_rng(seed)
    out = np.tile(np.arange(n), (n_permutations, 1))
    for g in groups:
        out[1:, g] = g[np.argsort(rng.random((n_permutations - 1, len(g))), axis=1)]
    return out, False


def _strata(scores: pd.DataFrame, models: list, stratify: str | None) -> np.ndarray:
    """The stratum (model kind) of each model; one stratum when ``stratify`` is None or absent."""
    if stratify is None or stratify not in scores.columns:
        return np.zeros(len(models), dtype=int)
    kinds = scores.loc[models, stratify].astype(str).to_numpy(dtype=object)
    return pd.factorize(kinds)[0]


def _every_score_positive(x: np.ndarray, y: np.ndarray, strata: np.ndarray) -> dict:
    r"""Intersection-union test of "every score correlates positively", permuting within strata.

    Per score :math:`s`, the exact one-sided permutation p-value of :math:`\rho(s, y) > 0` over the
    orderings of :math:`y` within each stratum (the model kinds): under the null, the downstream
    scores are exchangeable *within a kind*, so a score that only separates the kinds (encoders
    from LMs) gains nothing. "Every score" holds when each does: :math:`p = \max_s p_s`
    (Berger 1982), valid for the composite null "some score's :math:`\rho \le 0`" however the
    others behave (the global min-rho test is valid only when every score is unrelated).
    Against ("some score negative"): the max over scores of :math:`-\rho` under the same orderings.
    """
    perms, exact = stratified_orderings(strata)
    rx, ry = rank_rows(x), rank_rows(y)
    null = rx @ ry[perms].T  # (scores, orderings)
    obs = rx @ ry
    tol = 1e-9
    per = (null >= obs[:, None] - tol).mean(1)
    top = (null >= null.max(1, keepdims=True) - tol).mean(1)
    neg = (-null).max(0)
    p_neg = float((neg >= (-obs).max() - tol).mean())
    if not exact:
        k = len(perms)
        per = ((null >= obs[:, None] - tol).sum(1)) / k  # the identity is among the draws
        top = np.maximum(top, 1 / k)
    return {"rho": obs, "p": per, "p_value": float(per.max()), "p_min": float(top.max()), "p_against": p_neg,
            "n_orderings": len(perms), "exact": exact, "n_strata": len(set(strata.tolist()))}


def _strata_counts(test: dict, scores: pd.DataFrame, models: list, stratify: str | None) -> list | None:
    """The kinds the orderings stay within and their numbers of models, ``[kind, count]`` in order
    of appearance; None for one kind."""
    if test["n_strata"] <= 1:
        return None
    kinds = scores.loc[models, stratify].astype(str)
    return [[k, int(c)] for k, c in kinds.value_counts(sort=False).items()]


def _positive_facts(t: dict, measures: list, n: int, kinds: list | None) -> dict:
    """The facts of an every-score-positive test (:func:`_every_score_positive`) that the sentences quote."""
    return {"n": n, "measures": measures, "rho": [float(r) for r in t["rho"]], "p": [float(p) for p in t["p"]],
            "exact": t["exact"], "n_orderings": t["n_orderings"], "kinds": kinds,
            "binding": int(np.argmax(t["p"] - 1e-9 * t["rho"]))}


def judge_selection(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                    panel: str = "models", alpha: float = ALPHA, note: str | None = None,
                    stratify: str | None = "kind") -> Verdict:
    r"""Verdict on ``lrd.selection``: every one of the ``measures`` correlates positively with the downstream score.

    Test (:func:`_every_score_positive`): per score, the exact one-sided permutation test of
    :math:`\rho(s, y) > 0` over the orderings of the downstream scores **within each model kind**
    (column ``stratify`` of ``scores``; the downstream score is an embedding score and the panel
    mixes sentence encoders with LMs, so any score that separates the kinds would correlate
    without ranking models within a kind); "every score" is an intersection-union test,
    :math:`p = \max_s p_s`. ``p_against``: some score correlates negatively beyond chance
    (:math:`\max_s -\rho(s, y)`, same orderings). Unit: the model (tasks averaged first). The
    smallest p is :math:`1/\prod_k n_k!` over the kinds' sizes. Paper: Jiang, Yang, Tam (2026),
    abstract and Sec. 6. Which score is strongest is :func:`judge_selection_strongest`.

    Parameters
    ----------
    scores : DataFrame indexed by model, with the ``measures`` as columns (and ``stratify``)
    downstream : Series indexed by model (e.g. the mean MTEB main score of the last layer)
    panel : what the units are called in the evidence ("models", "decoders")
    note : optional reader's note (e.g. what the downstream score is)
    stratify : column of ``scores`` holding the model kind; None (or absent): one kind

    Returns
    -------
    Verdict
        ``effect``: the binding (largest-p) score's correlation, with a Fisher-z interval
        (:func:`spearman_interval`).
    """
    return wording.selection(selection_result(scores, downstream, measures=measures, panel=panel, alpha=alpha,
                                              note=note, stratify=stratify))


def selection_result(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                     panel: str = "models", alpha: float = ALPHA, note: str | None = None,
                     stratify: str | None = "kind") -> Result:
    """The numbers of :func:`judge_selection`, no sentence.

    ``case``: ``"tested"`` or ``"too few"`` (fewer than 2 models with every score and a downstream
    score). Facts: ``n``, ``panel`` and ``note`` (the caller's), and for a test ``measures``, each
    score's ``rho`` and ``p``, ``binding`` (the index of the largest p's score), ``exact``,
    ``n_orderings`` and ``kinds`` (``[kind, models]`` within which the orderings run; None: one kind).

    Examples
    --------
    Four models of one kind whose every score ranks them as the downstream score: each rho is 1 and
    each p its smallest, 1/4! = 1/24.

    >>> s = pd.DataFrame({m: [1.0, 2.0, 3.0, 4.0] for m in LRD_SCORES}, index=list("abcd"))
    >>> r = selection_result(s, pd.Series([1.0, 2.0, 3.0, 4.0], index=list("abcd")))
    >>> r.statistic, r.p_value == r.p_min == 1 / 24, r.facts["kinds"]
    (1.0, True, None)
    """
    measures = list(measures)
    x, y, models = _models(scores, downstream, measures)
    n = len(y)
    if n < 2:
        return Result("lrd.selection", "test", case="too few", facts={"n": n, "panel": panel, "note": note})
    t = _every_score_positive(x, y, _strata(scores, models, stratify))
    facts = _positive_facts(t, measures, n, _strata_counts(t, scores, models, stratify))
    rho = facts["rho"][facts["binding"]]
    return Result("lrd.selection", "test", statistic=rho, p_value=t["p_value"], p_min=t["p_min"],
                  p_against=t["p_against"], effect=rho, ci=spearman_interval(rho, n), alpha=alpha,
                  facts={**facts, "panel": panel, "note": note})


def judge_selection_strongest(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                              strongest: str = "d_0L", panel: str = "models", alpha: float = ALPHA,
                              note: str | None = None) -> Verdict:
    r"""Verdict on ``lrd.selection_strongest``: ``strongest`` correlates with the downstream score more than
    every other score.

    Test: for each other score :math:`s`, :func:`spearman_difference_test` of
    :math:`\rho(\text{strongest}, y) - \rho(s, y)` (ranks of the two scores swapped within each
    model, sign flips over models); it must beat every other score, so :math:`p = \max_s p_s`
    (intersection-union, valid without correction). ``p_against``: some other score is stronger
    (difference tests the other way, Bonferroni). Unit: the model. The model at the middle
    downstream rank contributes nothing, so 5 models cannot reach 0.05.

    Returns
    -------
    Verdict
        ``effect``: the smallest margin :math:`\rho(\text{strongest}, y) - \rho(s, y)`.
    """
    return wording.selection_strongest(selection_strongest_result(scores, downstream, measures=measures,
                                                                  strongest=strongest, panel=panel, alpha=alpha,
                                                                  note=note))


def selection_strongest_result(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                               strongest: str = "d_0L", panel: str = "models", alpha: float = ALPHA,
                               note: str | None = None) -> Result:
    """The numbers of :func:`judge_selection_strongest`, no sentence.

    ``case``: ``"tested"`` or ``"too few"``. Facts: ``n``, ``panel``, ``note``, and for a test
    ``strongest`` with its correlation ``rho``, ``margins`` and ``p`` (per other score: the
    difference of correlations and its sign-flip p), ``closest`` (the smallest margin's score)
    and ``n_reverse`` (the opposite tests, Bonferroni).

    Examples
    --------
    Six models: d_0L ranks them as the downstream score, the others backwards; each difference
    test reaches its smallest p, 1/2^6.

    >>> y = pd.Series(np.arange(6.0), index=list("abcdef"))
    >>> s = pd.DataFrame({"d_0L": y, "mean NRS (adjusted)": -y, "mean GFMI": -y})
    >>> r = selection_strongest_result(s, y)
    >>> round(r.statistic, 9), r.p_value == r.p_min == 1 / 64, r.p_against
    (2.0, True, 1.0)
    """
    measures = list(measures)
    if strongest not in measures:
        raise ValueError(f"strongest={strongest!r} is not one of the measures {measures}")
    x, y, models = _models(scores, downstream, measures)
    n = len(y)
    if n < 2:
        return Result("lrd.selection_strongest", "test", case="too few", facts={"n": n, "panel": panel, "note": note})
    _, _, rhos, ranks = _all_positive(x, y)
    i, ry = measures.index(strongest), ranks[-1]
    versus = {m: _difference_test(ranks[i], ranks[j], ry) for j, m in enumerate(measures) if j != i}
    reverse = {m: _difference_test(ranks[j], ranks[i], ry) for j, m in enumerate(measures) if j != i}
    p_value = max(t.p_value for t in versus.values())
    p_min = max(t.p_min for t in versus.values())
    p_against = min(1.0, len(reverse) * min(t.p_value for t in reverse.values()))
    margins = {m: float(rhos[i] - rhos[measures.index(m)]) for m in versus}
    closest = min(margins, key=margins.get)
    return Result("lrd.selection_strongest", "test", statistic=margins[closest], p_value=p_value, p_min=p_min,
                  p_against=p_against, effect=margins[closest], alpha=alpha,
                  facts={"n": n, "panel": panel, "note": note, "strongest": strongest, "rho": float(rhos[i]),
                         "margins": margins, "p": {m: t.p_value for m, t in versus.items()}, "closest": closest,
                         "n_reverse": len(reverse)})


def judge_selection_llm(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                        sources: Mapping[str, str] | None = None, chance: pd.DataFrame | None = None,
                        downstream_name: str = "multiple-choice accuracy", alpha: float = ALPHA,
                        stratify: str | None = "kind") -> Verdict:
    r"""Verdict on ``lrd.selection_llm``: on the decoders, every score correlates positively (the same direction).

    Test: as :func:`judge_selection` on the decoders (intersection-union of per-score exact
    permutation tests, orderings within kind where ``stratify`` names one); ``p_against``: some
    score correlates negatively beyond chance (:math:`\max_s -\rho(s, y)`). Unit: the decoder.
    With 3 decoders p >= 1/6: not testable. Paper: Jiang, Yang, Tam (2026), abstract.

    Parameters
    ----------
    scores : DataFrame indexed by model (the decoders) with the ``measures`` as columns
    downstream : Series indexed by model (our stand-in for the paper's MMLU score)
    sources : dict model -> upstream name, optional
        Put in the note, with how many are instruct models and how many dequantised GGUF (the
        paper's panel is base LLMs).
    chance : DataFrame, optional
        :func:`lrd.verdicts.pruning.chance_table` of the decoders' intact accuracy: the note names
        those not above their measured chance (their downstream score then ranks nothing, which
        costs power but does not bias the test).
    downstream_name : what ``downstream`` is, for the note
    """
    return wording.selection_llm(selection_llm_result(scores, downstream, measures=measures, sources=sources,
                                                      chance=chance, downstream_name=downstream_name, alpha=alpha,
                                                      stratify=stratify))


def selection_llm_result(scores: pd.DataFrame, downstream: pd.Series, *, measures: Sequence[str] = LRD_SCORES,
                         sources: Mapping[str, str] | None = None, chance: pd.DataFrame | None = None,
                         downstream_name: str = "multiple-choice accuracy", alpha: float = ALPHA,
                         stratify: str | None = "kind") -> Result:
    """The numbers of :func:`judge_selection_llm`, no sentence.

    ``case``: ``"tested"`` or ``"too few"``. Facts: ``n``, ``downstream_name``, ``models``;
    with ``sources``, ``sources`` (each model's upstream name), ``instruct`` and ``gguf`` (how
    many are instruct-tuned, dequantised from GGUF), else None; with ``chance``,
    ``below_chance`` (``[model, task, accuracy, chance, p]`` of the decoders not above their
    measured chance), else None; and for a test the facts of :func:`selection_result`.

    Examples
    --------
    Three decoders: no ordering test can reach 0.05 (p >= 1/3! = 1/6).

    >>> s = pd.DataFrame({m: [1.0, 2.0, 3.0] for m in LRD_SCORES}, index=["d0", "d1", "d2"])
    >>> r = selection_llm_result(s, pd.Series([1.0, 2.0, 3.0], index=["d0", "d1", "d2"]),
    ...                          sources={"d0": "Qwen-Instruct", "d1": "x.gguf"})
    >>> r.p_min == 1 / 6, r.outcome, r.facts["instruct"], r.facts["gguf"]
    (True, 'not testable', 1, 1)
    """
    measures = list(measures)
    x, y, models = _models(scores, downstream, measures)
    n = len(y)
    facts = {"n": n, "downstream_name": downstream_name, "models": models, "sources": None, "instruct": None,
             "gguf": None, "below_chance": None}
    if sources:
        named = [sources.get(m, m) for m in models]
        facts.update(sources=named, instruct=sum("instruct" in s.lower() for s in named),
                     gguf=sum("gguf" in s.lower() for s in named))
    if chance is not None and not chance.empty:
        below = chance[~chance["above chance"].astype(bool) & chance["model"].isin(models)]
        facts["below_chance"] = [list(row) for row in
                                 below[["model", "task", "accuracy", "chance", "p"]].itertuples(index=False)]
    if n < 2:
        return Result("lrd.selection_llm", "test", case="too few", facts=facts)
    t = _every_score_positive(x, y, _strata(scores, models, stratify))
    facts.update(_positive_facts(t, measures, n, _strata_counts(t, scores, models, stratify)))
    rho = facts["rho"][facts["binding"]]
    return Result("lrd.selection_llm", "test", statistic=rho, p_value=t["p_value"], p_min=t["p_min"],
                  p_against=t["p_against"], effect=rho, ci=spearman_interval(rho, n), alpha=alpha, facts=facts)


# --- null models (lrd.verdicts.calibration) ------------------------------------------------------

#: The chapter's default panels, restated (the appendix reads the executed chapter's, ``lrd.book.designs``):
#: 8 models with an embedding score (4 embedders with encoder attention, 4 with causal), of
#: which 4 causal LMs for the base-LLM claim.
_BOOK_MODELS, _BOOK_LLMS = 8, 4


def simulate_selection(rng: np.random.Generator, *, n: int = _BOOK_MODELS, confound: float = 1.5) -> dict:
    """Least favourable null of "every score positive": two scores track the downstream score, the
    third is unrelated to it within each kind but, like the downstream score, separates the kinds
    (half encoders, half LMs: a kind confound that a permutation across kinds would credit)."""
    models = [f"m{i}" for i in range(n)]
    kind = np.array(["encoder", "decoder"] * (n // 2) + ["decoder"] * (n % 2), dtype=object)
    shift = np.where(kind == "encoder", confound, 0.0)
    y = shift + rng.normal(size=n)
    # the third score separates the kinds as the downstream score does, and is unrelated to it within a kind
    x = np.stack([y + 0.3 * rng.normal(size=n), y + 0.3 * rng.normal(size=n), shift + rng.normal(size=n)])
    frame = pd.DataFrame(x.T, index=models, columns=list(LRD_SCORES)).assign(kind=kind)
    return {"scores": frame, "downstream": pd.Series(y, index=models)}


def _simulate_strongest(rng: np.random.Generator, *, n: int = _BOOK_MODELS) -> dict:
    """All three scores equally related to the downstream score (d_0L exchangeable with the others)."""
    models = [f"m{i}" for i in range(n)]
    y = rng.normal(size=n)
    x = y + 0.3 * rng.normal(size=(3, n))
    return {"scores": pd.DataFrame(x.T, index=models, columns=list(LRD_SCORES)),
            "downstream": pd.Series(y, index=models)}


def _simulate_selection_llm(rng: np.random.Generator, *, n: int = _BOOK_LLMS) -> dict:
    """As :func:`simulate_selection`, on decoders of one kind (two scores track, one unrelated)."""
    out = simulate_selection(rng, n=n, confound=0.0)
    out["scores"] = out["scores"].assign(kind="decoder")
    out["scores"].index = out["downstream"].index = [f"d{i}" for i in range(n)]
    return out


def simulate_selection_effect(rng: np.random.Generator, *, kind: bool = True, noise: float = 2.0,
                               strongest: float | None = None, n: int = _BOOK_MODELS) -> dict:
    """Every score tracking the downstream score within each kind, as the downstream score plus
    ``noise`` sd (2: weakly, the paper's claim near its edge; 1: a population rho of 0.71), on
    ``n`` models, half encoders; with ``strongest``, d_0L's noise is that instead (d_0L the strongest)."""
    out = simulate_selection(rng, n=n, confound=0.0)
    y = out["downstream"].to_numpy()
    x = np.stack([y + (strongest if s == "d_0L" and strongest is not None else noise) * rng.normal(size=len(y))
                  for s in LRD_SCORES])
    out["scores"] = pd.DataFrame(x.T, index=out["scores"].index, columns=list(LRD_SCORES)).assign(
        kind=out["scores"]["kind"] if kind else "decoder")
    return out


#: The noise sd the power simulations add to the (unit-variance) downstream score to make each
#: score (the paper's abstract gives no rho): 1, a population Pearson rho of 1/sqrt(2) = 0.71.
_POWER_NOISE = 1.0
SELECTION_NULL = NullModel(
    simulate_selection, judge_selection, effect=simulate_selection_effect,
    power_effect=partial(simulate_selection_effect, noise=_POWER_NOISE), design={"n": _BOOK_MODELS},
    **wording.selection_null(_POWER_NOISE))
STRONGEST_NULL = NullModel(
    _simulate_strongest, judge_selection_strongest, effect=_simulate_strongest,
    power_effect=partial(simulate_selection_effect, kind=False, noise=_POWER_NOISE, strongest=0.3),
    design={"n": _BOOK_MODELS}, **wording.selection_strongest_null(_POWER_NOISE))
SELECTION_LLM_NULL = NullModel(
    _simulate_selection_llm, judge_selection_llm, effect=partial(simulate_selection_effect, kind=False),
    power_effect=partial(simulate_selection_effect, kind=False, noise=_POWER_NOISE), design={"n": _BOOK_LLMS},
    **wording.selection_llm_null(_POWER_NOISE))
