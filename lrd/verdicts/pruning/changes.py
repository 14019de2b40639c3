r"""The pruning chapter's tables at the model level: chance, per-model changes against random, summaries,
and the per-item tests inside each pruned decoder (:mod:`lrd.verdicts.pruning`'s statistics).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.record import ALPHA
from lrd.verdicts.stats import (accuracy_permutation_test, crossed_t_test, holm, intersection_union_by_model,
                                mean_interval, sign_flip_test)

__all__ = ["DEFAULT_MARGIN", "ModelChanges", "chance_table", "mark_informative", "model_level", "model_changes",
           "SUMMARY_COLUMNS", "rule_summary", "winners", "RULE_ITEM_COLUMNS", "rule_item_tests", "per_model_holm"]

#: Non-superiority margin for "does not beat random", in points of the downstream score on its 0-1
#: scale (accuracy, MTEB main score): a rule whose mean change beats random's by less than two
#: points is, for choosing which blocks to drop, no better than random. A smaller margin is a
#: stricter claim and needs more models to show.
DEFAULT_MARGIN = 0.02


_KEY = ["model", "rule", "fraction"]


# --- chance and the informative pairs ------------------------------------------------------------

def chance_table(items: Mapping[str, Mapping[str, Mapping[str, Sequence[int]]]], *, n_permutations: int = 10000,
                 seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    r"""Intact multiple-choice accuracy of each model and task against its measured chance.

    Parameters
    ----------
    items : dict model -> task -> {"pred": chosen answers, "gold": correct answers}
        One entry per evaluation item of the intact model.

    Returns
    -------
    DataFrame ``model, task, items, accuracy, chance, p, above chance``: ``chance`` is the mean
    accuracy under random assignments of the gold labels to the items (exactly
    :math:`\sum_v a_v b_v / n^2` for :math:`a_v, b_v` predictions and golds of label :math:`v`);
    ``p`` the permutation p-value of :func:`lrd.verdicts.stats.accuracy_permutation_test`;
    ``above chance`` is ``p <= alpha``.
    """
    rows = []
    for model, tasks in items.items():
        for task, got in tasks.items():
            pred, gold = np.asarray(got["pred"]), np.asarray(got["gold"])
            test = accuracy_permutation_test(pred, gold, n_permutations=n_permutations, seed=seed)
            labels = np.union1d(pred, gold)
            chance = sum(int((pred == v).sum()) * int((gold == v).sum()) for v in labels) / len(gold) ** 2
            rows.append({"model": model, "task": task, "items": len(gold), "accuracy": test.statistic,
                         "chance": chance, "p": test.p_value, "above chance": test.p_value <= alpha})
    return pd.DataFrame(rows, columns=["model", "task", "items", "accuracy", "chance", "p", "above chance"])


def mark_informative(changes: pd.DataFrame, chance: pd.DataFrame) -> pd.DataFrame:
    """``changes`` with a boolean column ``informative``: False for the (model, task) pairs that
    ``chance`` (:func:`chance_table`) finds not above chance, True for the others (including pairs
    it does not list: their chance was not measured)."""
    if chance.empty:
        return changes.assign(informative=True)
    below = {(m, t) for m, t, ok in chance[["model", "task", "above chance"]].itertuples(index=False) if not ok}
    return changes.assign(informative=[(m, t) not in below for m, t in zip(changes["model"], changes["task"])])


# --- the model as the unit -------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelChanges:
    """Changes averaged within each model (the unit of every test): arrays over rule, budget, model.

    Attributes
    ----------
    models, rules : tuple of str
        The models, and the rules other than random.
    fractions : ndarray of shape (F,)
        The budgets.
    change : ndarray of shape (R, F, M)
        The rule's change averaged over the model's tasks; NaN where the rule has no row.
    random : ndarray of shape (R, F, M)
        Random's change (seeds averaged per task) averaged over the same tasks as the rule's.
    tasks : ndarray of shape (R, F, M)
        How many tasks were averaged.
    kinds : dict
        Model -> kind, where the changes name it.
    """

    models: tuple
    rules: tuple
    fractions: np.ndarray
    change: np.ndarray
    random: np.ndarray
    tasks: np.ndarray
    kinds: dict

    def _at(self, rule: str, fraction: float) -> tuple[int, int] | None:
        where = [i for i, f in enumerate(self.fractions) if abs(f - fraction) <= 1e-9]
        return (self.rules.index(rule), where[0]) if rule in self.rules and where else None

    def vs_random(self, rule: str, fraction: float) -> np.ndarray:
        """:math:`D_m` of ``rule`` at ``fraction``, over the models that have it."""
        at = self._at(rule, fraction)
        if at is None:
            return np.array([])
        d = self.change[at] - self.random[at]
        return d[np.isfinite(d)]

    def versus(self, rule: str, other: str, fraction: float) -> np.ndarray:
        """Per-model change of ``rule`` minus ``other``'s at ``fraction`` (models that have both)."""
        a, b = self._at(rule, fraction), self._at(other, fraction)
        if a is None or b is None:
            return np.array([])
        d = self.change[a] - self.change[b]
        return d[np.isfinite(d)]

    def budgets(self, rule: str) -> list[float]:
        """The budgets at which ``rule`` was run on some model."""
        if rule not in self.rules:
            return []
        return [float(f) for f, ran in zip(self.fractions, (self.tasks[self.rules.index(rule)] > 0).any(-1)) if ran]

    def median_change(self, rule: str, fraction: float) -> float:
        at = self._at(rule, fraction)
        values = self.change[at] if at is not None else np.array([])
        return float(np.median(values[np.isfinite(values)])) if np.isfinite(values).any() else float("nan")


def model_level(changes: pd.DataFrame, *, random: str = "random") -> ModelChanges:
    r"""Average each model's changes over its tasks (random's over its seeds first): :class:`ModelChanges`.

    Parameters
    ----------
    changes : DataFrame
        One row per ``model, task, rule, seed, fraction`` with the score ``change`` (pruned minus
        intact); optional ``kind``; rows with ``informative`` False are left out.
    random : the rule name of random pruning

    Raises
    ------
    ValueError
        On missing columns, no random rows, or a rule's (model, task, budget) without random's.
    """
    need = {"model", "task", "rule", "seed", "fraction", "change"}
    if need - set(changes.columns):
        raise ValueError(f"changes lacks columns {sorted(need - set(changes.columns))}")
    c = changes[changes["informative"].astype(bool)] if "informative" in changes else changes
    if c.empty:
        empty = np.zeros((0, 0, 0))
        return ModelChanges((), (), np.array([]), empty, empty, empty.astype(int), {})
    codes, names = zip(*(pd.factorize(c[col].round(9) if col == "fraction" else c[col], sort=True)
                         for col in ("rule", "fraction", "model", "task")))
    if random not in list(names[0]):
        raise ValueError(f"no {random!r} rows: add random orders (n_random >= 1)")
    shape = tuple(len(n) for n in names)
    flat = np.ravel_multi_index(codes, shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
    sums = np.bincount(flat, weights=c["change"].to_numpy(dtype=float), minlength=int(np.prod(shape))).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_task = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    ri = list(names[0]).index(random)
    keep = [i for i in range(shape[0]) if i != ri]
    own, rand = per_task[keep], per_task[ri][None]
    has = np.isfinite(own)
    lacking = has & ~np.isfinite(rand)
    if lacking.any():
        r, f, m, t = (int(i[0]) for i in np.nonzero(lacking))
        raise ValueError(f"no {random!r} change for model {names[2][m]!r}, task {names[3][t]!r}, budget "
                         f"{names[1][f]} where {names[0][keep[r]]!r} has one: random must run wherever a rule does")
    n_tasks = has.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        change = np.where(n_tasks > 0, np.where(has, own, 0).sum(-1) / n_tasks, np.nan)
        random_change = np.where(n_tasks > 0, np.where(has, rand, 0).sum(-1) / n_tasks, np.nan)
    kinds = dict(zip(c["model"], c["kind"])) if "kind" in c else {}
    return ModelChanges(tuple(names[2]), tuple(names[0][keep]), np.asarray(names[1], dtype=float), change,
                        random_change, n_tasks, kinds)


def model_changes(changes: pd.DataFrame, *, random: str = "random") -> pd.DataFrame:
    r"""Per model, rule and budget: the change averaged over tasks, random's, and the difference :math:`D`.

    The table of :func:`model_level`: ``model, [kind,] rule, fraction, change, random change,
    vs random, tasks`` (rules other than ``random``); random's change is averaged over its seeds
    per task, then over the same tasks as the rule's.
    """
    cube = model_level(changes, random=random)
    r, f, m = np.nonzero(cube.tasks > 0)
    out = pd.DataFrame({"model": np.asarray(cube.models, dtype=object)[m],
                        "rule": np.asarray(cube.rules, dtype=object)[r],
                        "fraction": cube.fractions[f], "change": cube.change[r, f, m],
                        "random change": cube.random[r, f, m], "tasks": cube.tasks[r, f, m]})
    out["vs random"] = out["change"] - out["random change"]
    if cube.kinds:
        out.insert(1, "kind", out["model"].map(cube.kinds))
    return out.sort_values(_KEY, ignore_index=True)[[c for c in ("model", "kind", "rule", "fraction", "change",
                                                                  "random change", "vs random", "tasks") if c in out]]


#: Columns of :func:`rule_summary` after its grouping keys.
SUMMARY_COLUMNS = ["models", "median change", "random median", "mean vs random", "ci low", "ci high", "p", "p_min",
                   "beats random"]


def rule_summary(changes: pd.DataFrame, *, by: str | None = None, random: str = "random",
                 alpha: float = ALPHA) -> pd.DataFrame:
    """Per rule and budget, over models: median change, random's median, mean difference with its interval, the test.

    Parameters
    ----------
    changes : DataFrame
        As for :func:`model_changes`.
    by : str, optional
        A column (e.g. ``"kind"``) to summarise each group of models separately.

    Returns
    -------
    DataFrame ``[by,] rule, fraction, models, median change, random median, mean vs random,
    ci low, ci high, p, p_min, beats random``: medians and means over models (each model's
    tasks averaged first); ``p`` the exact sign-flip p-value of "beats random" over models.
    """
    table = model_changes(changes, random=random)
    keys = ([by] if by else []) + ["rule", "fraction"]
    if table.empty:  # no informative pruned model: the same columns, no row
        return pd.DataFrame(columns=[*keys, *SUMMARY_COLUMNS])
    rows = []
    for key, part in table.groupby(keys):
        d = part["vs random"].to_numpy()
        test = sign_flip_test(d)
        lo, hi = mean_interval(d) if len(d) > 1 else (np.nan, np.nan)
        rows.append({**dict(zip(keys, key)), "models": len(d), "median change": float(part["change"].median()),
                     "random median": float(part["random change"].median()), "mean vs random": test.statistic,
                     "ci low": lo, "ci high": hi, "p": test.p_value, "p_min": test.p_min,
                     "beats random": test.p_value <= alpha})
    return pd.DataFrame(rows, columns=[*keys, *SUMMARY_COLUMNS])


def winners(summary: pd.DataFrame, *, by: str | None = None) -> pd.DataFrame:
    """The rule with the highest median change at each budget (and group), its margin over the
    runner-up, and random's median (a description: no test)."""
    keys = ([by] if by else []) + ["fraction"]
    rows = []
    for key, part in summary.groupby(keys):
        part = part.sort_values("median change", ascending=False)
        top = part.iloc[0]
        second = part.iloc[1]["median change"] if len(part) > 1 else np.nan
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))), "winner": top["rule"],
                     "median change": top["median change"], "margin": top["median change"] - second,
                     "random median": top["random median"], "beats random": top["beats random"]})
    return pd.DataFrame(rows, columns=[*keys, "winner", "median change", "margin", "random median", "beats random"])


# --- per model: the test items as the unit ---------------------------------------------------------

#: Columns of :func:`rule_item_tests`.
RULE_ITEM_COLUMNS = ["model", "comparison", "fraction", "tasks", "items", "seeds", "difference", "low", "high", "p",
                     "p (all)", "p (all, Holm)"]


def _item_tables(items: pd.DataFrame, rule: str, other: str, fraction: float) -> dict[str, list[np.ndarray]]:
    """Per model, one (seeds x items) table per task of ``rule``'s correctness minus ``other``'s
    (one row per seed of ``other``: random's orders; one row for a deterministic rule)."""
    at = items[np.isclose(items["fraction"].to_numpy(dtype=float), fraction)]
    out: dict[str, list[np.ndarray]] = {}
    for (model, task), part in at.groupby(["model", "task"], sort=False):
        own = part[part["rule"] == rule].pivot_table(index="seed", columns="item", values="correct")
        ref = part[part["rule"] == other].pivot_table(index="seed", columns="item", values="correct")
        if own.empty or ref.empty:
            continue
        if len(own) != 1 or not own.columns.equals(ref.columns):
            raise ValueError(f"{model}/{task}: {rule!r} needs one removal set per budget and the same items as "
                             f"{other!r}")
        out.setdefault(model, []).append(own.to_numpy(dtype=float)[0][None, :] - ref.to_numpy(dtype=float))
    return out


def rule_item_tests(items: pd.DataFrame, comparisons: Sequence[tuple[str, str, float]], *,
                    chance: pd.DataFrame | None = None, margin: float | None = None,
                    combine: bool = True) -> pd.DataFrame:
    r"""Per model, each ``(rule, other, budget)`` comparison over the multiple-choice test items.

    For model :math:`m` and task :math:`t`, the table :math:`x_{si} = c_i(\text{rule}) - c_{si}(\text{other})`
    of correctness differences on item :math:`i` (:math:`s` over random's orders, one row for a
    deterministic rule) is a crossed design (:func:`lrd.verdicts.stats.crossed_mean_test`: items
    and random orders as random factors); the model's difference is the mean over its tasks,
    tested one-sided by Student's t (:func:`lrd.verdicts.stats.crossed_t_test`): "rule above
    other" (:math:`\bar d > 0`), or with ``margin`` "rule not above other by ``margin`` or more"
    (:math:`m - \bar d > 0`, non-superiority). A model supports every comparison when each does
    (``p (all)``, the largest p; 1 where one is missing), Holm over the models.

    Parameters
    ----------
    items : DataFrame
        Pruned decoders' per-item outcomes (``model, task, rule, seed, fraction, item, correct``).
    comparisons : list of (rule, other, budget)
    chance : DataFrame, optional
        :func:`chance_table`: (model, task) pairs not above measured chance are left out, as in
        the cross-model verdicts.
    margin : float, optional
        Non-superiority margin, on the 0-1 scale.
    combine : bool
        True: ``p (all)`` and ``p (all, Holm)`` for a claim made of all ``comparisons``; False:
        each comparison on its own, ``p (Holm)`` over the models within it (a table of several
        claims' comparisons).
    """
    if chance is not None and not items.empty:
        items = mark_informative(items, chance)
        items = items[items["informative"]]
    rows = []
    for rule, other, fraction in comparisons:
        for model, tables in (_item_tables(items, rule, other, fraction) if not items.empty else {}).items():
            test = crossed_t_test([margin - t for t in tables] if margin is not None else tables)
            d = test["mean"] if margin is None else margin - test["mean"]
            half = test["high"] - test["mean"]
            rows.append({"model": model, "comparison": f"{rule} - {other}", "fraction": fraction,
                         "tasks": len(tables), "items": int(sum(t.shape[1] for t in tables)),
                         "seeds": int(max(t.shape[0] for t in tables)), "difference": d, "low": d - half,
                         "high": d + half, "p": test["p"]})
    table = pd.DataFrame(rows, columns=RULE_ITEM_COLUMNS[:-2])
    if not combine:
        holm_within = table.groupby(["comparison", "fraction"], sort=False)["p"].transform(lambda p: holm(p.to_numpy()))
        return table.assign(**{"p (Holm)": holm_within.to_numpy() if len(table) else []})
    return intersection_union_by_model(table, len(comparisons))


def per_model_holm(items: pd.DataFrame | None, comparisons: Sequence[tuple[str, str, float]], *,
                   chance: pd.DataFrame | None, margin: float | None = None) -> list[float]:
    """One Holm-adjusted p per pruned decoder that supports every one of ``comparisons`` over its
    test items (``p (all, Holm)`` of :func:`rule_item_tests`); empty without items."""
    if items is None or items.empty:
        return []
    table = rule_item_tests(items, comparisons, chance=chance, margin=margin)
    if table.empty:
        return []
    return [float(p) for p in table.drop_duplicates("model")["p (all, Holm)"]]
