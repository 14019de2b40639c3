"""ilse.fc, ilse.cayley_performance, ilse.baselines, ilse.few_shot: one method above every reference.

Per model, the task means of seed-mean differences are tested by exact one-sided sign-flip
tests; "above every one" is their intersection-union (p = max), its opposite the min-p over
joint sign flips (:mod:`lrd.verdicts.fusion`). Each ``*_result`` returns the numbers
(:class:`lrd.verdicts.result.Result`); ``judge_*`` writes them as a verdict
(:mod:`lrd.verdicts.wording.fusion`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.claims import ILSE_KINDS, ILSE_PARAMS_RANGE
from lrd.verdicts.fusion.panel import (EXISTING_APPROACHES, FEW_SHOT_REFERENCES, PAPER_BASELINES, POINTS, cell_means,
                                       cube, differences, few_shot_item_tests, holm_count, method_label,
                                       paper_mean_difference, per_model_item_tests, require_columns, size_scope)
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.stats import mean_interval, sign_flip_min_p_test, sign_flip_power, sign_flip_test
from lrd.verdicts.wording import fusion as words

__all__ = ["above_result", "per_model_numbers", "power_numbers", "fc_result", "cayley_performance_result",
           "baselines_result", "few_shot_result", "judge_fc", "judge_cayley_performance", "judge_baselines",
           "judge_few_shot"]


def power_numbers(values: dict[str, np.ndarray], paper: dict[str, float | None], *, alpha: float = ALPHA) -> dict:
    """``power`` at level ``alpha`` at the paper's Table 1 mean differences (``paper``: reference label -> effect or
    None), the spread across models as observed: the smallest of the comparisons' powers, an
    upper bound for "above every one"; and the facts its label quotes (``power_known``: (reference,
    effect in points) of those in the paper's table, ``power_left``: the others). Empty when no
    reference is in the paper's table."""
    known = {k: e for k, e in paper.items() if e is not None and k in values and len(values[k]) > 1}
    if not known:
        return {}
    powers = {k: sign_flip_power(e, float(values[k].std(ddof=1)), len(values[k]), alpha=alpha)
              for k, e in known.items()}
    return {"power": min(powers.values()), "power_known": [(k, e * POINTS) for k, e in known.items()],
            "power_left": [k for k in values if k not in known]}


def per_model_numbers(table: pd.DataFrame, alpha: float = ALPHA) -> tuple[int, int] | None:
    """(k, M): the models of a per-model table (``p (all, Holm)``) at most ``alpha``; None without models."""
    if table.empty:
        return None
    return holm_count(table.drop_duplicates("model")["p (all, Holm)"], alpha=alpha)


def above_result(claim: str, method: str, diffs: dict[str, tuple[list, np.ndarray]], *,
                 per_model: tuple[int, int] | None = None, paper: dict[str, float | None] | None = None,
                 left_out: dict | None = None, alpha: float = ALPHA, **facts) -> Result:
    """``method`` above every reference: one-sided sign-flip test per reference, p = max.

    ``diffs``: reference label -> (models, per-model differences in score units); a reference
    with no model (not run) is skipped (``facts["skipped"]``). ``case``: ``"tested"``, or
    ``"no model counted"`` / ``"not run"`` when no reference has a model. ``alpha``: the test's
    level (the result's, and the power's).
    """
    left_out = left_out or {}
    skipped = [k for k, dv in diffs.items() if not len(dv[1])]
    diffs = {k: dv for k, dv in diffs.items() if len(dv[1])}
    facts = dict(facts, method=method, method_label=method_label(method), left_out=left_out)
    if not diffs:
        return Result(claim, "test", "no model counted" if left_out else "not run", alpha=alpha, facts=facts)
    values = {k: v for k, (_, v) in diffs.items()}
    ups = {k: sign_flip_test(d) for k, d in values.items()}
    binding = max(ups, key=lambda k: (ups[k].p_value, -values[k].mean()))
    # against: below at least one reference (a union): min-p over joint sign flips of the models
    # that every comparison has
    common = set.intersection(*(set(models) for models, _ in diffs.values()))
    joint = np.stack([[v for m, v in zip(*diffs[r]) if m in common] for r in values], 1)
    p_against = sign_flip_min_p_test(-joint).p_value if len(common) else None
    d = values[binding] * POINTS
    power = power_numbers(values, paper or {}, alpha=alpha)
    facts.update(comparisons=[(ref, float(x.mean() * POINTS), int((x > 0).sum()), len(x)) for ref, x in values.items()],
                 skipped=skipped, binding=binding, n_models=max(len(x) for x in values.values()),
                 n_common=len(common), exact=bool(ups[binding].exact),
                 power_known=power.get("power_known"), power_left=power.get("power_left"))
    return Result(claim, "test", "tested", statistic=float(values[binding].mean()),
                  p_value=max(t.p_value for t in ups.values()), p_against=p_against,
                  p_min=max(t.p_min for t in ups.values()), effect=float(d.mean()),
                  ci=(tuple(float(x) for x in mean_interval(d)) if len(d) > 1 else None),
                  power=power.get("power"), per_model=per_model, alpha=alpha, facts=facts)


def _item_count(items: pd.DataFrame | None, method: str, references: Sequence[str], *,
                alpha: float = ALPHA) -> tuple[int, int] | None:
    """(k, M) of :func:`per_model_item_tests` at ``alpha`` (None without items)."""
    if items is None or not len(items):
        return None
    return per_model_numbers(per_model_item_tests(items, method, references), alpha=alpha)


def fc_result(scores: pd.DataFrame, *, existing: Sequence[str] = EXISTING_APPROACHES,
              items: pd.DataFrame | None = None, base_params: Mapping[str, float] | None = None,
              params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
              model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
              alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_fc` (same parameters)."""
    (scores, items), out = size_scope("ilse.fc", base_params, scores, items, params=params_range, kinds=kinds,
                                       model_kinds=model_kinds)
    cells, labels = cell_means(scores)
    diffs = {method_label(b): differences(cells, labels, "fc", b) for b in existing}
    return above_result("ilse.fc", "fc", diffs, per_model=_item_count(items, "fc", existing, alpha=alpha),
                        paper={method_label(b): paper_mean_difference("fc", b) for b in existing}, left_out=out,
                        alpha=alpha, references=[method_label(b) for b in existing])


def cayley_performance_result(scores: pd.DataFrame, *, items: pd.DataFrame | None = None,
                              base_params: Mapping[str, float] | None = None,
                              params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                              model_kinds: Mapping[str, str] | None = None,
                              kinds: Sequence[str] | None = ILSE_KINDS, alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_cayley_performance` (same parameters)."""
    (scores, items), out = size_scope("ilse.cayley_performance", base_params, scores, items, params=params_range,
                                       kinds=kinds, model_kinds=model_kinds)
    diffs = {method_label("fc"): differences(*cell_means(scores), "cayley", "fc")}
    return above_result("ilse.cayley_performance", "cayley", diffs,
                        per_model=_item_count(items, "cayley", ("fc",), alpha=alpha),
                        paper={method_label("fc"): paper_mean_difference("cayley", "fc")}, left_out=out,
                        alpha=alpha, references=[method_label("fc")])


def baselines_result(scores: pd.DataFrame, *, baselines: Sequence[str] = PAPER_BASELINES,
                     items: pd.DataFrame | None = None, base_params: Mapping[str, float] | None = None,
                     params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                     model_kinds: Mapping[str, str] | None = None,
                     kinds: Sequence[str] | None = ILSE_KINDS, alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_baselines` (same parameters)."""
    (scores, items), out = size_scope("ilse.baselines", base_params, scores, items, params=params_range,
                                       kinds=kinds, model_kinds=model_kinds)
    cells, labels = cell_means(scores)
    diffs = {method_label(b): differences(cells, labels, "cayley", b) for b in baselines}
    return above_result("ilse.baselines", "cayley", diffs,
                        per_model=_item_count(items, "cayley", baselines, alpha=alpha),
                        paper={method_label(b): paper_mean_difference("cayley", b) for b in baselines},
                        left_out=out, alpha=alpha, references=[method_label(b) for b in baselines])


def few_shot_result(few_shot: pd.DataFrame, scores: pd.DataFrame, *, method: str = "cayley",
                    references: Sequence[str] = FEW_SHOT_REFERENCES, shots: tuple[int, int] = (8, 32),
                    few_shot_items: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
                    base_params: Mapping[str, float] | None = None,
                    params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                    model_kinds: Mapping[str, str] | None = None,
                    kinds: Sequence[str] | None = ILSE_KINDS, alpha: float = ALPHA) -> Result:
    """The numbers of :func:`judge_few_shot` (same parameters); ``case`` ``"panel empty"``,
    ``"references not run"``, ``"no few-shot run"`` or those of :func:`above_result`."""
    claim = "ilse.few_shot"
    require_columns(few_shot, {"model", "task", "shots", "method", "score"}, "few_shot")
    (few_shot, scores, few_shot_items, items), out = size_scope(claim, base_params, few_shot, scores, few_shot_items,
                                                                items, params=params_range, kinds=kinds,
                                                                model_kinds=model_kinds)
    facts = {"method": method, "method_label": method_label(method), "shots": tuple(shots),
             "references": [method_label(r) for r in references], "left_out": out}
    if scores.empty and out:
        return Result(claim, "test", "panel empty", alpha=alpha, facts=facts)
    full, labels = cell_means(scores)
    missing = [r for r in references if r not in labels["method"]]
    if missing:
        return Result(claim, "test", "references not run", alpha=alpha,
                      facts=dict(facts, missing=[method_label(r) for r in missing]))
    few = few_shot[(few_shot["method"] == method) & few_shot["shots"].between(*shots)]
    if few.empty:
        return Result(claim, "test", "no few-shot run", alpha=alpha, facts=facts)
    cells, few_labels = cube(few, ("model", "task", "shots"), "score",
                             levels={"model": labels["model"], "task": labels["task"]})
    ks = sorted(few_labels["shots"])
    few_cells = {k: cells[:, :, few_labels["shots"].index(k)][:, :, None] for k in ks}
    diffs = {(r, k): differences(few_cells[k], {**labels, "method": [method]}, method,
                                 full[:, :, labels["method"].index(r)])
             for k in ks for r in references}
    per_model = None
    if few_shot_items is not None and items is not None:
        per_model = per_model_numbers(few_shot_item_tests(few_shot_items, items, method=method,
                                                          references=references, shots=shots), alpha=alpha)
    named = {(method_label(r), k): d for (r, k), d in diffs.items()}  # the wording names them
    return above_result(claim, method, named, per_model=per_model, left_out=out, alpha=alpha, shots=tuple(shots),
                        references=[method_label(r) for r in references])


def judge_fc(scores: pd.DataFrame, *, existing: Sequence[str] = EXISTING_APPROACHES,
             items: pd.DataFrame | None = None, base_params: Mapping[str, float] | None = None,
             params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
             alpha: float = ALPHA) -> Verdict:
    r"""ilse.fc: the FC-Encoder predicts better than every existing approach.

    For each approach :math:`b`, the per-model differences :math:`d_m = \text{FC} - b`
    (:func:`model_differences`) are tested by an exact one-sided sign-flip test (null: each
    :math:`d_m` is symmetric about 0, i.e. the methods are exchangeable within a model).
    "Beats every one" is an intersection-union test: p = max over approaches. Unit: the model.

    Parameters
    ----------
    scores : DataFrame
        Columns ``model, task, method, seed, score``; every task (classification and STS).
    existing : sequence of str
        The existing approaches (default :data:`EXISTING_APPROACHES`); those not run are skipped.
    items : DataFrame, optional
        Per-item correctness (``model, task, method, seed, item, correct``): with it, the evidence
        per model beside the verdict (:func:`per_model_item_tests`, Holm over the models).
    base_params : mapping, optional
        Model -> base-model parameters: only models within the paper's sizes are counted
        (:func:`size_scope`; the claim's :attr:`~lrd.verdicts.claims.Claim.scope`), the others are
        named in the evidence. None counts every model.
    params_range : (float, float)
        The parameter counts (inclusive) that are the paper's sizes, with ``base_params``
        (default :data:`lrd.verdicts.claims.ILSE_PARAMS_RANGE`, Pythia-14M to Llama3-8B: the
        paper's 14M-8B, abstract v1).
    model_kinds : mapping, optional
        Model -> kind (``"decoder"``, ``"encoder"``): with it only the ``kinds`` are counted
        (:func:`size_scope`), the others named in the evidence. None counts every kind.
    kinds : sequence of str, optional
        The book's reading of "pre-trained LLMs" (default :data:`lrd.verdicts.claims.ILSE_KINDS`,
        decoders only); None: every kind.
    alpha : float
        The test's level (the book's 0.05, :data:`lrd.verdicts.record.ALPHA`; the paper states no
        test): of the verdict, of the power and of the per-model count (Holm-adjusted p <= alpha).

    References
    ----------
    Ulanovski et al., abstract (v3) and Table 1.
    """
    return words.fc(fc_result(scores, existing=existing, items=items, base_params=base_params,
                              params_range=params_range, model_kinds=model_kinds, kinds=kinds, alpha=alpha))


def judge_cayley_performance(scores: pd.DataFrame, *, items: pd.DataFrame | None = None,
                             base_params: Mapping[str, float] | None = None,
                             params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
                             alpha: float = ALPHA) -> Verdict:
    r"""ilse.cayley_performance: the Cayley-Encoder predicts better than the FC-Encoder.

    Exact one-sided sign-flip test of the per-model differences Cayley - FC (task means of
    seed means); null: exchangeable within a model. Unit: the model. With ``items``, the
    evidence per model (:func:`per_model_item_tests`); with ``base_params``, only the models of
    the paper's sizes (:func:`size_scope`; ``params_range`` their bounds), as in :func:`judge_fc`;
    ``alpha`` the test's level, as there.

    References
    ----------
    Ulanovski et al., abstract (v3): "further improves both efficiency and predictive performance".
    """
    return words.cayley_performance(cayley_performance_result(
        scores, items=items, base_params=base_params, params_range=params_range, model_kinds=model_kinds, kinds=kinds,
        alpha=alpha))


def judge_baselines(scores: pd.DataFrame, *, baselines: Sequence[str] = PAPER_BASELINES,
                    items: pd.DataFrame | None = None, base_params: Mapping[str, float] | None = None,
                    params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
                    alpha: float = ALPHA) -> Verdict:
    r"""ilse.baselines: the Cayley-Encoder beats every baseline.

    As :func:`judge_fc`, for Cayley against each baseline (default the paper's Table 1
    baselines, :data:`PAPER_BASELINES`); intersection-union, p = max. Unit: the model. With
    ``items``, the evidence per model (:func:`per_model_item_tests`); with ``base_params``, only
    the models of the paper's sizes (:func:`size_scope`; ``params_range`` their bounds); ``alpha``
    the test's level, as in :func:`judge_fc`.

    References
    ----------
    Ulanovski et al., abstract (v3): "consistently outperforms baselines"; Table 1.
    """
    return words.baselines(baselines_result(scores, baselines=baselines, items=items, base_params=base_params,
                                            params_range=params_range, model_kinds=model_kinds, kinds=kinds,
                                            alpha=alpha))


def judge_few_shot(few_shot: pd.DataFrame, scores: pd.DataFrame, *, method: str = "cayley",
                   references: Sequence[str] = FEW_SHOT_REFERENCES, shots: tuple[int, int] = (8, 32),
                   few_shot_items: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
                   base_params: Mapping[str, float] | None = None,
                   params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                 model_kinds: Mapping[str, str] | None = None, kinds: Sequence[str] | None = ILSE_KINDS,
                   alpha: float = ALPHA) -> Verdict:
    r"""ilse.few_shot: with 8-32 examples per class, Cayley beats DWAtt and Last trained on the full data.

    For every reference :math:`r` (full data) and every shot count :math:`k` in ``shots``
    (inclusive), the per-model differences

    .. math:: d_m = \frac{1}{|T_m|}\sum_t (\bar s^{(k)}_{m,t,\text{Cayley}} - \bar s_{m,t,r})

    (seed means; tasks of the few-shot runs) are tested by an exact one-sided sign-flip test;
    the claim holds at every shot count it covers against both references, so p = max over
    (reference, k) (intersection-union). Unit: the model.

    Parameters
    ----------
    few_shot : DataFrame
        Columns ``model, task, shots, method, seed, score``.
    scores : DataFrame
        The full-data scores (``model, task, method, seed, score``) holding the references.
    shots : (int, int)
        The range of examples per class the claim covers.
    few_shot_items, items : DataFrame, optional
        Per-item correctness of the few-shot and the full-data runs: with both, the evidence per
        model (:func:`few_shot_item_tests`: test items and seeds as the unit, Holm over the
        models) goes beside the cross-model verdict.
    base_params : mapping, optional
        Model -> base-model parameters: only the models of the paper's sizes are counted
        (:func:`size_scope`; ``params_range`` their bounds, as in :func:`judge_fc`).
    alpha : float
        The test's level, as in :func:`judge_fc`.

    References
    ----------
    Ulanovski et al., key findings (our translation of the digest): "on Banking77 and MTOP
    the Cayley-Encoder needs only 8-32 labelled examples per class to exceed DWAtt and the
    last layer trained on the full data".
    """
    return words.few_shot(few_shot_result(few_shot, scores, method=method, references=references, shots=shots,
                                          few_shot_items=few_shot_items, items=items, base_params=base_params,
                                          params_range=params_range, model_kinds=model_kinds, kinds=kinds,
                                          alpha=alpha))
