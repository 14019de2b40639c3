"""The model-level tables every ILSE / Cayley-Encoder judge reads (:mod:`lrd.verdicts.fusion`).

Per model, the seed-mean differences of two methods averaged over tasks; per model, the
crossed-factor t-tests over test items and seeds; the paper's own Table 1 differences; and the
models a claim counts (:func:`size_scope`). Numbers and names only: the sentences are in
:mod:`lrd.verdicts.wording.fusion`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.claims import ILSE_TABLE_ROWS, Scope, claim as claim_entry
from lrd.verdicts.record import ALPHA, per_model_count
from lrd.verdicts.stats import crossed_t_test, intersection_union_by_model

__all__ = ["EXISTING_APPROACHES", "PAPER_BASELINES", "FEW_SHOT_REFERENCES", "METHOD_LABELS", "POINTS", "method_label",
           "require_columns", "cube", "cell_means", "differences", "model_differences", "item_matrices",
           "per_model_item_tests", "per_model_pair_tests", "few_shot_item_tests", "paper_mean_difference",
           "paper_cell_differences", "size_scope", "holm_count"]

#: The approaches the FC-Encoder is said to beat: the best single layer, a learned weighting of
#: layers (ELMo-style scalar mix) and depth-wise attention (abstract v3: "existing approaches").
EXISTING_APPROACHES = ("best", "elmo", "dwatt")
#: The baselines of the paper's main table (Table 1): last layer, best single layer, DWAtt.
PAPER_BASELINES = ("last", "best", "dwatt")
#: The full-data references of the few-shot finding.
FEW_SHOT_REFERENCES = ("dwatt", "last")

#: The methods' display names (the tables' ``method`` and ``reference`` columns, the verdicts' labels).
METHOD_LABELS = {"last": "Last layer", "best": "Best layer", "mean": "Mean of layers", "elmo": "Weighted (ELMo)",
                 "mlp": "MLP (last layer)", "deepset": "DeepSet", "dwatt": "DWAtt", "fc": "FC-Encoder",
                 "cayley": "Cayley-Encoder"}
#: Scores are fractions (accuracy, Spearman); the paper reports points.
POINTS = 100.0


def method_label(method: str) -> str:
    """A method's display name (:data:`METHOD_LABELS`; the key itself when it has none)."""
    return METHOD_LABELS.get(method, method)


def require_columns(table: pd.DataFrame, columns: set[str], what: str) -> None:
    """Raise when ``table`` (named ``what``) lacks any of ``columns``."""
    missing = columns - set(table.columns)
    if missing:
        raise ValueError(f"{what} lacks the columns {sorted(missing)} (has {list(table.columns)})")


def holm_count(p_holm, alpha: float = ALPHA) -> tuple[int, int] | None:
    """(k, M): the M models' Holm-adjusted p-values (one per model) at most ``alpha`` (a verdict's
    ``per_model``, :func:`lrd.verdicts.record.per_model_count`); None without models.

    >>> holm_count([0.01, 0.2, 0.04]), holm_count([])
    ((2, 3), None)
    """
    return per_model_count(p_holm, "", alpha=alpha).get("per_model")


# --- model-level differences -----------------------------------------------------------------------

def cube(table: pd.DataFrame, keys: Sequence[str], value: str,
         levels: dict[str, Sequence] | None = None) -> tuple[np.ndarray, dict[str, list]]:
    """Mean of ``value`` for every combination of ``keys`` as a dense array (NaN where absent).

    ``levels`` fixes the labels of some keys (rows with other labels are dropped), so that two
    tables can be aligned; the others are the labels in order of appearance.
    """
    require_columns(table, {*keys, value}, "the table")
    values = table[value].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"{value} contains non-finite values; drop failed runs first")
    levels = levels or {}
    codes, labels = [], {}
    for k in keys:
        if k in levels:
            codes.append(pd.Index(levels[k], dtype=object).get_indexer(table[k].to_numpy(dtype=object)))
            labels[k] = list(levels[k])
        else:
            c, u = pd.factorize(table[k], sort=False)
            if (c < 0).any():
                raise ValueError(f"column {k!r} has missing values")
            codes.append(c)
            labels[k] = list(u)
    keep = np.all([c >= 0 for c in codes], axis=0) if codes else np.ones(len(table), bool)
    shape = tuple(len(labels[k]) for k in keys)
    flat = np.ravel_multi_index([c[keep] for c in codes], shape)
    size = int(np.prod(shape))
    total = np.bincount(flat, weights=values[keep], minlength=size)
    count = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan).reshape(shape), labels


def cell_means(scores: pd.DataFrame) -> tuple[np.ndarray, dict[str, list]]:
    """Seed means as an array (model, task, method)."""
    return cube(scores, ("model", "task", "method"), "score")


def differences(cells: np.ndarray, labels: dict[str, list], method: str,
                other: str | np.ndarray) -> tuple[list, np.ndarray]:
    """Per model, the mean over tasks of ``method - other`` (cells where both exist): the
    models and their means. ``other`` is a method of ``cells`` or a (model, task) array."""
    methods = labels["method"]
    if method not in methods or (isinstance(other, str) and other not in methods):
        return [], np.zeros(0)
    ref = cells[:, :, methods.index(other)] if isinstance(other, str) else other
    d = cells[:, :, methods.index(method)] - ref  # (models, tasks)
    ok = np.isfinite(d)
    n = ok.sum(1)
    seen = n > 0
    return [m for m, s in zip(labels["model"], seen) if s], np.where(ok, d, 0.0).sum(1)[seen] / n[seen]

def model_differences(scores: pd.DataFrame, method: str, other: str) -> pd.Series:
    r"""Per model, the mean over its tasks of the seed-mean difference ``method - other``.

    .. math:: d_m = \frac{1}{|T_m|}\sum_{t \in T_m} (\bar s_{m,t,\text{method}} - \bar s_{m,t,\text{other}})

    over the tasks :math:`T_m` where model :math:`m` has both methods (bars: means over seeds).

    Parameters
    ----------
    scores : DataFrame
        Columns ``model, task, method, score`` (one row per seed).

    Returns
    -------
    Series indexed by model (score units); empty when a method is missing.

    Examples
    --------
    >>> scores = pd.DataFrame({"model": ["a"] * 4, "task": ["x", "x", "y", "y"], "method": ["fc", "last"] * 2,
    ...                        "seed": 0, "score": [0.9, 0.5, 0.7, 0.7]})
    >>> round(float(model_differences(scores, "fc", "last")["a"]), 6)  # (0.4 + 0.0) / 2
    0.2
    """
    models, means = differences(*cell_means(scores), method, other)
    return pd.Series(means, index=pd.Index(models, dtype=object, name="model"), name=f"{method} - {other}")


# --- per model: test items and seeds as the unit -------------------------------------------------

def per_model_item_tests(items: pd.DataFrame, method: str, references: Sequence[str]) -> pd.DataFrame:
    r"""Per model, ``method`` against each reference over its classification test items and seeds.

    For model :math:`m` and reference :math:`r`, the tasks' (seeds x items) tables of correctness
    differences (:func:`item_matrices`) give, per task, a mean and its crossed-factor variance
    (:func:`lrd.verdicts.stats.crossed_mean_test`); the model's effect is the mean over tasks,
    :math:`\bar d_m = \frac1T\sum_t \bar x_t`, with variance :math:`\sum_t V_t / T^2` (the tasks'
    training runs and test sets are independent) and Satterthwaite degrees of freedom pooled over
    the tasks' components. **Test**: one-sided Student t of :math:`\bar d_m > 0`; "above every
    reference" takes the largest of the references' p (intersection-union), and Holm adjusts that
    over the models. STS tasks have no items and are left out (the cross-model verdict keeps them).

    Returns
    -------
    DataFrame, one row per (model, reference): ``model, reference, tasks, items, seeds,
    difference (points), low, high`` (95% t-interval), ``p``; then per model ``p (all)`` (max
    over its references) and ``p (all, Holm)``.
    """
    table = per_model_pair_tests(items, [(method, r) for r in references])
    return table.drop(columns="method")


def per_model_pair_tests(items: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    r"""Per model, each ``(method, reference)`` pair over the classification test items and seeds.

    The test of :func:`per_model_item_tests` for any list of pairs (the few-shot claim compares a
    method trained on :math:`k` examples per class with references trained on the full data:
    :func:`few_shot_item_tests`). A model supports "every pair" when each pair's one-sided t-test
    does (intersection-union: ``p (all)`` is the largest p; 1 where the model lacks a pair), and
    Holm adjusts ``p (all)`` over the models.

    Returns
    -------
    DataFrame, one row per (model, pair): ``model, method, reference, tasks, items, seeds,
    difference (points), low, high, p, p (all), p (all, Holm)``.
    """
    rows = []
    for method, ref in pairs:
        cells, mats = item_matrices(items, method, ref) if len(items) else ([], [])
        by_model: dict[str, list[np.ndarray]] = {}
        for (model, _), m in zip(cells, mats):
            by_model.setdefault(model, []).append(m)
        for model, tables in by_model.items():
            test = crossed_t_test(tables)
            rows.append({"model": model, "method": method_label(method), "reference": method_label(ref), "tasks": len(tables),
                         "items": int(sum(m.shape[1] for m in tables)), "seeds": int(tables[0].shape[0]),
                         "difference (points)": test["mean"] * POINTS, "low": test["low"] * POINTS,
                         "high": test["high"] * POINTS, "p": test["p"]})
    table = pd.DataFrame(rows, columns=["model", "method", "reference", "tasks", "items", "seeds",
                                        "difference (points)", "low", "high", "p"])
    return intersection_union_by_model(table, len(pairs))


def shots_label(method: str, k: int) -> str:
    """The name of ``method`` trained on ``k`` examples per class (a column label)."""
    return f"{method_label(method)} at {k} shots"


def few_shot_item_tests(few_shot_items: pd.DataFrame, items: pd.DataFrame, *, method: str = "cayley",
                        references: Sequence[str] = FEW_SHOT_REFERENCES,
                        shots: tuple[int, int] = (8, 32)) -> pd.DataFrame:
    r"""Per model, ``method`` trained on :math:`k` examples per class against each reference
    trained on the full data, over the test items and seeds of the few-shot tasks.

    For every shot count :math:`k` in ``shots`` (inclusive) and reference :math:`r`, the (seeds x
    items) table of :math:`\text{correct}^{(k)}_{\text{method}} - \text{correct}_r` (seed
    :math:`s` of the few-shot run against seed :math:`s` of the full-data run: independent
    trainings, scored on the same test items) is tested as in :func:`per_model_pair_tests`; a
    model shows the claim when every (reference, :math:`k`) does (``p (all)``, the largest p),
    Holm over the models.

    Parameters
    ----------
    few_shot_items : DataFrame
        ``model, task, shots, method, seed, item, correct`` of the few-shot runs.
    items : DataFrame
        ``model, task, method, seed, item, correct`` of the full-data runs (the references).
    """
    few = few_shot_items[(few_shot_items["method"] == method) & few_shot_items["shots"].between(*shots)]
    if few.empty or items.empty:
        return per_model_pair_tests(pd.DataFrame(), [])
    ks = sorted(int(k) for k in few["shots"].unique())
    relabelled = few.assign(method=[shots_label(method, int(k)) for k in few["shots"]]).drop(columns="shots")
    tasks = set(few["task"])
    full = items[items["task"].isin(tasks) & items["method"].isin(references)]
    table = per_model_pair_tests(pd.concat([relabelled, full], ignore_index=True),
                                 [(shots_label(method, k), r) for k in ks for r in references])
    return table.rename(columns={"reference": "full-data reference"})


def paper_mean_difference(method: str, reference: str,
                          table: dict[str, dict[str, dict[str, float]]] = ILSE_TABLE_ROWS) -> float | None:
    r"""The paper's own effect: the mean over its Table 1 cells (3 models x 5 tasks) of ``method -
    reference``, as a fraction (the paper's points / 100); None where the table lacks either.

    Examples
    --------
    >>> round(paper_mean_difference("cayley", "last") * 100, 2)   # Table 1: Cayley 30 points above the last layer
    29.99
    >>> round(paper_mean_difference("cayley", "fc") * 100, 2)     # and half a point below FC on average
    -0.49
    >>> paper_mean_difference("fc", "elmo") is None                # ELMo is not in Table 1
    True
    """
    cells = paper_cell_differences(method, reference, table)
    return float(cells.mean()) if len(cells) else None


def paper_cell_differences(method: str, reference: str,
                           table: dict[str, dict[str, dict[str, float]]] = ILSE_TABLE_ROWS) -> np.ndarray:
    """``method - reference`` in every cell of the paper's Table 1 (3 models x 5 tasks), as
    fractions; empty where the table lacks either (:func:`paper_mean_difference` is their mean)."""
    return np.array([rows[method][t] - rows[reference][t] for rows in table.values()
                     if method in rows and reference in rows for t in rows[method]]) / POINTS


def item_matrices(items: pd.DataFrame, method: str, reference: str) -> tuple[list[tuple[str, str]], list[np.ndarray]]:
    """Per (model, task) cell, the (n_seeds, n_items) matrix of ``method - reference`` correctness."""
    require_columns(items, {"model", "task", "method", "seed", "item", "correct"}, "items")
    part = items[items["method"].isin([method, reference])]
    grid, labels = cube(part, ("model", "task", "method", "seed", "item"), "correct")
    if method not in labels["method"] or reference not in labels["method"]:
        return [], []
    diff = grid[:, :, labels["method"].index(method)] - grid[:, :, labels["method"].index(reference)]
    cells, mats = [], []
    for i, model in enumerate(labels["model"]):
        for j, task in enumerate(labels["task"]):
            m = diff[i, j]  # (seeds, items)
            m = m[:, np.isfinite(m).any(0)]
            m = m[np.isfinite(m).any(1)]
            if m.size == 0:
                continue
            if not np.isfinite(m).all():
                raise ValueError(f"{model} / {task}: the two methods' seeds do not cover the same test items")
            cells.append((model, task))
            mats.append(m)
    return cells, mats




def size_scope(claim: str, base_params: Mapping[str, float] | None, *frames: pd.DataFrame | None,
               params: tuple[float, float] | None = None, kinds: Sequence[str] | None = None,
               model_kinds: Mapping[str, str] | None = None) -> tuple[list[pd.DataFrame | None], dict]:
    """``frames`` restricted to the models within the claim's parameter range
    (:attr:`lrd.verdicts.claims.Scope.params`) and, with ``kinds`` and ``model_kinds``, to the
    model kinds the book's rule counts; and the models left out, with why.

    ``base_params`` maps every model of the frames to its base-model parameter count (the
    chapter's ``shares`` table); None counts every size, as for a panel chosen in scope.
    ``params`` (inclusive bounds) replaces the claim's range (None: the claim's); the judges
    pass their ``params_range`` rule. ``model_kinds`` maps every model to its kind
    (``"decoder"``, ``"encoder"``: :func:`lrd.engine.models.model_kinds`); ``kinds`` is the book's
    rule of which kinds count (None: every kind). Without ``model_kinds`` no kind is left out.

    Returns
    -------
    (kept frames, left out) : the frames (None stays None) and a dict, empty when no model is
    left out, else with ``outside`` (``[(model, base_params)]`` outside the ``bounds``) and
    ``bounds``, and/or ``other_kind`` (``[(model, kind)]`` of a kind not in ``kinds``) and
    ``kinds``; :func:`lrd.verdicts.wording.fusion.scope_words` names them.

    Examples
    --------
    >>> f = pd.DataFrame({"model": ["tiny", "llm", "st"], "score": [0.1, 0.2, 0.3]})
    >>> (kept,), left_out = size_scope("ilse.fc", {"tiny": 2.3e6, "llm": 1.5e9, "st": 2.3e7}, f, kinds=("decoder",),
    ...                                model_kinds={"tiny": "decoder", "llm": "decoder", "st": "encoder"})
    >>> kept["model"].tolist()
    ['llm']
    >>> left_out["outside"], left_out["other_kind"]
    ([('tiny', 2300000.0)], [('st', 'encoder')])
    """
    scope = claim_entry(claim).scope
    bounds = params if params is not None else (scope.params if scope is not None else None)
    models = list(dict.fromkeys(m for f in frames if f is not None for m in f["model"]))
    outside, left_out = [], {}
    if base_params is not None and bounds is not None:
        bounded = Scope("", params=tuple(bounds))
        missing = [m for m in models if m not in base_params]
        if missing:
            raise ValueError(f"{claim}: no parameter count for {missing}; base_params needs every model of the panel "
                             f"(the chapter's shares table: model -> base_params)")
        outside = [m for m in models if not bounded.in_params(float(base_params[m]))]
        if outside:
            left_out.update(outside=[(m, float(base_params[m])) for m in outside], bounds=tuple(bounded.params))
    if kinds is not None and model_kinds is not None:
        missing = [m for m in models if m not in model_kinds]
        if missing:
            raise ValueError(f"{claim}: no kind for {missing}; model_kinds needs every model of the panel "
                             f"(model -> 'decoder' or 'encoder')")
        other = [m for m in models if m not in outside and model_kinds[m] not in tuple(kinds)]
        outside += other
        if other:
            left_out.update(other_kind=[(m, model_kinds[m]) for m in other], kinds=tuple(kinds))
    kept = [None if f is None else f[~f["model"].isin(outside)] for f in frames]
    return kept, left_out
