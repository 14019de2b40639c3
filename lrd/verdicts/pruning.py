r"""Verdicts on LRD's pruning claims: does a measurement-guided prune rule beat random pruning?

The chapter prunes each model with every rule of :data:`lrd.methods.pruning.PRUNE_RULES` at each
budget and records the change of the downstream score, :math:`\Delta = \text{score}_\text{pruned}
- \text{score}_\text{intact}`, per model, task, rule, budget (and seed for random). **The unit of
every test is the model**: a model's tasks are not independent draws, so its changes are averaged
over tasks first (random's over its seeds, then over tasks), giving per model :math:`m`, rule
:math:`r` and budget :math:`b`

.. math:: D_{m,r,b} = \bar\Delta_{m,r,b} - \bar\Delta_{m,\text{random},b},

the rule's change minus random's on the same model (:func:`model_changes`).

* **beats random** at a budget: the one-sided exact sign-flip test of :math:`\bar D > 0` over
  models (:func:`lrd.verdicts.stats.sign_flip_test`; null: each model's difference is as likely
  to have either sign).
* **does not beat random**: a claim of absence, judged by a non-superiority test with margin
  :math:`m` (default :data:`DEFAULT_MARGIN`): sign flips of :math:`m - D`
  (:func:`lrd.verdicts.stats.equivalence_sign_flip_test` with ``lower=-inf``) show that the mean
  advantage over random is below :math:`m`. A rule worse than random also "does not beat" it,
  so the test is one-sided. Without it, a small panel would "show" absence by low power.

Claims made of several parts (GFMI beats random at 15% *and* 20% *and* the other rules do not)
are intersection-union tests: p is the largest of the parts' p-values, no correction needed.
The opposite conclusion (``p_against``) is a union of the parts' opposite tests, so those are
Bonferroni-corrected.

Decoders are evaluated by multiple-choice accuracy on few items; where a decoder's intact
accuracy is not above chance, measured by permuting the gold labels
(:func:`lrd.verdicts.stats.accuracy_permutation_test`, :func:`chance_table`), removing blocks
cannot lower it by much nor raise it, so its changes would pull every rule toward "no
different from random" (and toward a spurious "does not beat random"). Such model-task pairs are
excluded (:func:`mark_informative`), and every verdict says which.

The prune rules, budgets and the budget rounding are our reconstruction (:mod:`lrd.methods.pruning`).

References
----------
Jiang, Yang, Tam, "Layer-wise Representation Dynamics", arXiv:2605.12714 (2026), abstract.
Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics 24 (1982)
295-300 (intersection-union tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.methods.pruning import MEASUREMENT_RULES
from lrd.verdicts.spec import NullModel
from lrd.verdicts.record import ALPHA, Verdict, holm_over, per_model_count
from lrd.verdicts.stats import (PermutationTest, accuracy_permutation_test, crossed_t_test, equivalence_sign_flip_test,
                                holm, intersection_union_by_model, mean_interval, sign_flip_test)

__all__ = ["DEFAULT_MARGIN", "PRUNING_RECONSTRUCTION", "ModelChanges", "chance_table", "mark_informative",
           "rule_item_tests",
           "model_level", "model_changes",
           "rule_summary", "winners", "judge_pruning_gfmi_only", "judge_pruning_gfmi_median", "judge_pruning_frenet",
           "judge_pruning_nrs", "GFMI_ONLY_NULL", "GFMI_MEDIAN_NULL", "FRENET_NULL", "NRS_NULL"]

#: Non-superiority margin for "does not beat random", in points of the downstream score on its 0-1
#: scale (accuracy, MTEB main score): a rule whose mean change beats random's by less than two
#: points is, for choosing which blocks to drop, no better than random. A smaller margin is a
#: stricter claim and needs more models to show.
DEFAULT_MARGIN = 0.02

PRUNING_RECONSTRUCTION = (
    "the prune rules are our reconstruction (lrd.methods.pruning.PRUNE_RULES; Frenet removes the blocks of smallest "
    "Grassmann velocity, NRS those of highest chance-adjusted retention, GFMI those of smallest |GFMI change|), "
    "as are the budgets (5, 10, 15, 20% of the blocks; the paper's digest names 15% and 20%), the rounding "
    "k = max(1, floor(pL + 1/2)) and the model-level difference (tasks and random seeds averaged)")

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


def _per_model(items: pd.DataFrame | None, comparisons: Sequence[tuple[str, str, float]], label: str, *,
               chance: pd.DataFrame | None, margin: float | None = None, alpha: float = ALPHA) -> dict:
    """``per_model`` and ``per_model_label`` from :func:`rule_item_tests` (nothing without items)."""
    if items is None or items.empty:
        return {}
    table = rule_item_tests(items, comparisons, chance=chance, margin=margin)
    if table.empty:
        return {}
    per = table.drop_duplicates("model")
    return per_model_count(per["p (all, Holm)"], f"pruned decoders in which {label}, over their multiple-choice test "
                                                 f"items (crossed-factor t-test per model, random's orders as the "
                                                 f"second factor; largest p over the comparisons; "
                                                 f"{holm_over(len(per), 'decoder', ' above measured chance')}; "
                                                 f"encoders' scores have "
                                                 f"no items)", alpha=alpha)


# --- the judges -----------------------------------------------------------------------------------

def _budget(f: float) -> str:
    return f"{f:.0%}"


def _count(n: int, plural: str) -> str:
    """``"1 model"``, ``"3 models"``."""
    return f"{n} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"


def _bonferroni(tests: Sequence[PermutationTest]) -> float:
    return min(1.0, len(tests) * min(t.p_value for t in tests))


def _non_superior(d: np.ndarray, margin: float) -> PermutationTest:
    return equivalence_sign_flip_test(d, margin, lower=-np.inf)


def _prepare(changes: pd.DataFrame, random: str) -> tuple[ModelChanges, str]:
    """Task-averaged changes and a sentence naming the excluded (model, task) pairs."""
    cube = model_level(changes, random=random)
    excluded = ""
    if "informative" in changes and not changes["informative"].all():
        pairs = changes.loc[~changes["informative"].astype(bool), ["model", "task"]].drop_duplicates()
        excluded = ("; left out as not above measured chance: "
                    + ", ".join(f"{m}/{t}" for m, t in pairs.itertuples(index=False)))
    return cube, excluded


def _missing(claim: str, cube: ModelChanges, needs: Sequence[tuple[str, float]], excluded: str) -> Verdict | None:
    """An untestable verdict when a needed (rule, budget) has no model left, else None."""
    lacking = [(r, f) for r, f in needs if len(cube.vs_random(r, f)) == 0]
    if not lacking:
        return None
    return Verdict.untestable(claim, "no pruned model with an informative score for "
                              + ", ".join(f"{r} at {_budget(f)}" for r, f in lacking) + excluded,
                              reconstruction=PRUNING_RECONSTRUCTION)


def _common(claim: str, evidence: str, *, test: str, support: Sequence[PermutationTest],
            opposite: Sequence[PermutationTest], against: str, effect: np.ndarray, effect_label: str,
            n: int, margin: float | None, excluded: str, alpha: float, per_model: dict | None = None) -> Verdict:
    margin_text = f"; non-superiority margin m = {margin:+.3f} of the score" if margin is not None else ""
    return Verdict(claim, "test", evidence + excluded, test=test + f" (units: {_count(n, 'models')})",
                   statistic=float(effect.mean()), p_value=max(t.p_value for t in support),
                   p_min=max(t.p_min for t in support), p_against=_bonferroni(opposite),
                   against=against + f" (Bonferroni over {len(opposite)} tests)",
                   effect=float(effect.mean()), ci=mean_interval(effect) if len(effect) > 1 else None,
                   effect_label=effect_label, effect_format="{:+.3f}",
                   reconstruction=PRUNING_RECONSTRUCTION + margin_text, alpha=alpha, **(per_model or {}))


def judge_pruning_gfmi_only(changes: pd.DataFrame, *, rule: str = "GFMI",
                            others: Sequence[str] = tuple(r for r in MEASUREMENT_RULES if r != "GFMI"),
                            budgets: Sequence[float] = (0.15, 0.20), margin: float = DEFAULT_MARGIN,
                            random: str = "random", alpha: float = ALPHA, items: pd.DataFrame | None = None,
                            chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_gfmi_only``: ``rule`` beats random at every one of ``budgets``, and no
    rule of ``others`` does.

    Intersection-union test, :math:`p = \max` of: the sign-flip p-value of :math:`\bar D_{\text{GFMI},b} > 0`
    at each budget :math:`b`, and the non-superiority p-value of :math:`\bar D_{r,b} < m` for each
    other measurement rule :math:`r` and budget. ``p_against`` (Bonferroni): GFMI shown not to beat
    random by :math:`m` at some budget, or another rule shown to beat random. Unit: the model.
    Paper: abstract ("GFMI is the only measurement-guided rule that beats Random at the 15% and
    20% budgets"). With ``items`` (pruned decoders' per-item outcomes) and ``chance``, the evidence
    per model: in how many decoders GFMI beats random at every one of ``budgets`` over their test
    items (:func:`rule_item_tests`; the other rules' part, an absence, has no per-model test).
    """
    cube, excluded = _prepare(changes, random)
    needs = [(r, b) for r in (rule, *others) for b in budgets]
    if (bad := _missing("lrd.pruning_gfmi_only", cube, needs, excluded)) is not None:
        return bad
    own = {b: cube.vs_random(rule, b) for b in budgets}
    rest = {(r, b): cube.vs_random(r, b) for r in others for b in budgets}
    beats = {b: sign_flip_test(d) for b, d in own.items()}
    below = {k: _non_superior(d, margin) for k, d in rest.items()}
    binding = min(own, key=lambda b: own[b].mean())
    n = max(len(d) for d in own.values())
    evidence = (f"{rule} minus random, mean over {_count(n, 'models')}: "
                + ", ".join(f"{_budget(b)} {own[b].mean():+.3f} (p = {beats[b].p_value:.2g})" for b in budgets)
                + "; the other measurement rules minus random: "
                + ", ".join(f"{r} at {_budget(b)} {rest[r, b].mean():+.3f} (below +{margin:.2f}: p = "
                            f"{below[r, b].p_value:.2g})" for r, b in rest))
    return _common("lrd.pruning_gfmi_only", evidence,
                   test=(f"intersection-union of exact sign-flip tests ({rule} beats random at "
                         f"{', '.join(map(_budget, budgets))}) and non-superiority sign-flip tests (the other rules "
                         f"do not)"),
                   support=[*beats.values(), *below.values()],
                   opposite=[*(_non_superior(d, margin) for d in own.values()),
                             *(sign_flip_test(d) for d in rest.values())],
                   against=f"{rule} shown not to beat random by {margin:.2f} at some budget, or another rule shown to",
                   effect=own[binding], effect_label=f"{rule} minus random at {_budget(binding)} (its weaker budget), "
                                                     f"mean over models", n=n, margin=margin, excluded=excluded,
                   alpha=alpha, per_model=_per_model(items, [(rule, random, b) for b in budgets],
                                                     f"{rule} beats random at {' and '.join(map(_budget, budgets))}",
                                                     chance=chance, alpha=alpha))


def judge_pruning_gfmi_median(changes: pd.DataFrame, *, rule: str = "GFMI",
                              others: Sequence[str] = tuple(r for r in MEASUREMENT_RULES if r != "GFMI"),
                              budgets: Sequence[float] | None = None, random: str = "random",
                              alpha: float = ALPHA, items: pd.DataFrame | None = None,
                              chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_gfmi_median``: ``rule`` prunes better than each rule of ``others`` at every budget.

    For each other rule :math:`r` and budget :math:`b`, the per-model difference of changes
    :math:`\bar\Delta_{m,\text{GFMI},b} - \bar\Delta_{m,r,b}` (tasks averaged) by an exact
    sign-flip test over models; intersection-union, :math:`p = \max` over rules and budgets.
    ``p_against`` (Bonferroni): some other rule better beyond chance somewhere. The paper compares
    median changes over model-task pairs; with the model as unit we test the paired difference
    (our reconstruction; medians over models are shown beside it). Paper: abstract ("has the
    best median change at every budget"), against the other measurement-guided rules.
    """
    cube, excluded = _prepare(changes, random)
    budgets = [float(b) for b in cube.fractions] if budgets is None else list(budgets)
    if not budgets:
        return Verdict.untestable("lrd.pruning_gfmi_median", f"no pruned model with an informative score{excluded}",
                                  reconstruction=PRUNING_RECONSTRUCTION)
    if (bad := _missing("lrd.pruning_gfmi_median", cube, [(r, b) for r in (rule, *others) for b in budgets],
                        excluded)) is not None:
        return bad
    diffs = {(r, b): cube.versus(rule, r, b) for r in others for b in budgets}
    tests = {k: sign_flip_test(d) for k, d in diffs.items()}
    binding = min(diffs, key=lambda k: diffs[k].mean())
    n = max(len(d) for d in diffs.values())
    med = {(r, b): cube.median_change(r, b) for r in (rule, *others) for b in budgets}
    best = {b: max(others, key=lambda r: med[r, b]) for b in budgets}
    evidence = (f"median change over {_count(n, 'models')}, {rule} against the best other rule: "
                + "; ".join(f"{_budget(b)} {med[rule, b]:+.3f} vs {best[b]} {med[best[b], b]:+.3f}" for b in budgets)
                + f"; paired tests of {rule} minus each other rule over models: largest p = "
                + f"{max(t.p_value for t in tests.values()):.2g} ({binding[0]} at {_budget(binding[1])}: mean "
                + f"{diffs[binding].mean():+.3f})")
    return _common("lrd.pruning_gfmi_median", evidence,
                   test=(f"intersection-union of exact sign-flip tests of {rule} minus each of {', '.join(others)} "
                         f"at each of {len(budgets)} budgets"),
                   support=list(tests.values()), opposite=[sign_flip_test(-d) for d in diffs.values()],
                   against="another measurement rule prunes better than GFMI at some budget",
                   effect=diffs[binding], effect_label=(f"{rule} minus {binding[0]} at {_budget(binding[1])} (the "
                                                        f"smallest lead), mean over models"),
                   n=n, margin=None, excluded=excluded, alpha=alpha,
                   per_model=_per_model(items, [(rule, r, b) for r in others for b in budgets],
                                        f"{rule} is above each of {', '.join(others)} at every budget", chance=chance,
                                        alpha=alpha))


def judge_pruning_frenet(changes: pd.DataFrame, *, rule: str = "Frenet (velocity)", lightest: float | None = None,
                         margin: float = DEFAULT_MARGIN, random: str = "random", alpha: float = ALPHA,
                         items: pd.DataFrame | None = None, chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_frenet``: ``rule`` beats random at the lightest budget and at no other.

    Intersection-union, :math:`p = \max` of the sign-flip p-value of :math:`\bar D_{\text{Frenet},b_0} > 0`
    at the lightest budget :math:`b_0` and the non-superiority p-values of
    :math:`\bar D_{\text{Frenet},b} < m` at every other budget. ``p_against`` (Bonferroni):
    Frenet shown not to beat random by :math:`m` at :math:`b_0`, or shown to beat random at
    another budget. Unit: the model. Paper: abstract ("Frenet is effective only at the lightest
    budget").
    """
    cube, excluded = _prepare(changes, random)
    budgets = cube.budgets(rule)
    lightest = (min(budgets) if budgets else None) if lightest is None else lightest
    rest = [b for b in budgets if not np.isclose(b, lightest)]
    if lightest is None or not rest:
        return Verdict.untestable("lrd.pruning_frenet", f"{rule} needs the lightest budget and a heavier one with an "
                                  f"informative score, got budgets {[_budget(b) for b in budgets]}{excluded}",
                                  reconstruction=PRUNING_RECONSTRUCTION)
    if (bad := _missing("lrd.pruning_frenet", cube, [(rule, lightest)], excluded)) is not None:
        return bad
    d = {b: cube.vs_random(rule, b) for b in [lightest, *rest]}
    beats, below = sign_flip_test(d[lightest]), {b: _non_superior(d[b], margin) for b in rest}
    n = len(d[lightest])
    evidence = (f"{rule} minus random, mean over {_count(n, 'models')}: at the lightest budget {_budget(lightest)} "
                f"{d[lightest].mean():+.3f} (p = {beats.p_value:.2g}); at "
                + ", ".join(f"{_budget(b)} {d[b].mean():+.3f} (below +{margin:.2f}: p = {below[b].p_value:.2g})"
                            for b in rest))
    return _common("lrd.pruning_frenet", evidence,
                   test=(f"intersection-union of an exact sign-flip test ({rule} beats random at {_budget(lightest)}) "
                         f"and non-superiority sign-flip tests at {', '.join(map(_budget, rest))}"),
                   support=[beats, *below.values()],
                   opposite=[_non_superior(d[lightest], margin), *(sign_flip_test(d[b]) for b in rest)],
                   against=(f"{rule} shown not to beat random by {margin:.2f} at {_budget(lightest)}, or shown to beat "
                            f"it at a heavier budget"),
                   effect=d[lightest], effect_label=f"{rule} minus random at {_budget(lightest)}, mean over models",
                   n=n, margin=margin, excluded=excluded, alpha=alpha,
                   per_model=_per_model(items, [(rule, random, lightest)],
                                        f"{rule} beats random at {_budget(lightest)} (the heavier budgets' part, an "
                                        f"absence, has no per-model test)", chance=chance, alpha=alpha))


def judge_pruning_nrs(changes: pd.DataFrame, *, rule: str = "NRS", margin: float = DEFAULT_MARGIN,
                      random: str = "random", alpha: float = ALPHA, items: pd.DataFrame | None = None,
                      chance: pd.DataFrame | None = None) -> Verdict:
    r"""Verdict on ``lrd.pruning_nrs``: ``rule`` does not beat random at any budget (NRS does not transfer to pruning).

    A claim of absence: non-superiority at every budget, :math:`p = \max_b` of the sign-flip
    p-values of :math:`m - D_{\text{NRS},b}` (mean advantage over random below :math:`m`).
    ``p_against`` (Bonferroni over budgets): NRS beats random beyond chance at some budget. Unit:
    the model. Paper: abstract ("NRS does not transfer from model selection to pruning").
    """
    cube, excluded = _prepare(changes, random)
    budgets = cube.budgets(rule)
    if not budgets:
        return Verdict.untestable("lrd.pruning_nrs", f"no pruned model with an informative score for {rule}{excluded}",
                                  reconstruction=PRUNING_RECONSTRUCTION)
    d = {b: cube.vs_random(rule, b) for b in budgets}
    below = {b: _non_superior(d[b], margin) for b in budgets}
    binding = max(budgets, key=lambda b: d[b].mean())
    n = max(len(x) for x in d.values())
    evidence = (f"{rule} minus random, mean over {_count(n, 'models')}: "
                + ", ".join(f"{_budget(b)} {d[b].mean():+.3f} (below +{margin:.2f}: p = {below[b].p_value:.2g})"
                            for b in budgets))
    return _common("lrd.pruning_nrs", evidence,
                   test=f"intersection-union of non-superiority sign-flip tests at {', '.join(map(_budget, budgets))}",
                   support=list(below.values()), opposite=[sign_flip_test(d[b]) for b in budgets],
                   against=f"{rule} beats random at some budget",
                   effect=d[binding], effect_label=f"{rule} minus random at {_budget(binding)} (its best budget), "
                                                   f"mean over models",
                   n=n, margin=margin, excluded=excluded, alpha=alpha,
                   per_model=_per_model(items, [(rule, random, b) for b in budgets],
                                        f"{rule} is shown not to beat random by {margin:.2f} or more at every budget "
                                        f"(non-superiority)", chance=chance, margin=margin, alpha=alpha))


# --- null models (lrd.verdicts.calibration) ----------------------------------------------------------

_N_MODELS, _TASKS, _SEEDS, _BUDGETS = 8, ("t1", "t2"), 3, (0.05, 0.10, 0.15, 0.20)
_RULES = ("Frenet (velocity)", "NRS", "GFMI")


def _simulate_changes(rng: np.random.Generator, shift: Mapping[tuple[str, float], float],
                      n_models: int = _N_MODELS) -> pd.DataFrame:
    """A changes table of ``n_models`` models x 2 tasks x 4 budgets: random (3 seeds) and the three rules.

    Each model has its own level per budget (shared by all rules: what the model-level
    difference removes), each task and seed independent noise; rule ``r`` at budget ``b`` moves
    away from random by ``shift[r, b]`` (0 if absent) plus noise symmetric about it, the same
    within a model's tasks.
    """
    names = ("random",) * _SEEDS + _RULES
    seeds = tuple(range(_SEEDS)) + (-1,) * len(_RULES)
    m, b, t, r = (a.ravel() for a in np.meshgrid(np.arange(n_models), np.arange(len(_BUDGETS)),
                                                   np.arange(len(_TASKS)), np.arange(len(names)), indexing="ij"))
    level = -0.05 - 0.3 * np.asarray(_BUDGETS)[None] + 0.05 * rng.normal(size=(n_models, len(_BUDGETS)))
    moved = np.array([[shift.get((rule, f), 0.0) for f in _BUDGETS] for rule in _RULES])  # (rules, budgets)
    moved = moved[None] + 0.03 * rng.normal(size=(n_models, len(_RULES), len(_BUDGETS)))
    rule_index = r - _SEEDS
    offset = np.where(rule_index >= 0, moved[m, np.maximum(rule_index, 0), b], 0.0)
    change = level[m, b] + offset + 0.02 * rng.normal(size=len(m))
    return pd.DataFrame({"model": np.array([f"m{i}" for i in range(n_models)], dtype=object)[m], "task": np.array(_TASKS)[t],
                         "rule": np.array(names)[r], "seed": np.array(seeds)[r],
                         "fraction": np.asarray(_BUDGETS)[b], "change": change})


def _boundary(parts: Sequence[dict]):
    """A simulation drawing one of ``parts`` (rule shifts with one part of the claim at its null
    boundary) uniformly, at ``n_models`` models."""
    def simulate(rng: np.random.Generator, n_models: int = _N_MODELS) -> dict:
        return {"changes": _simulate_changes(rng, parts[int(rng.integers(len(parts)))], n_models)}
    return simulate


def _edge(shift: Mapping[tuple[str, float], float]):
    """A simulation of the claim at its edge for a contradiction: the rules shifted by ``shift``."""
    def simulate(rng: np.random.Generator, n_models: int = _N_MODELS) -> dict:
        return {"changes": _simulate_changes(rng, shift, n_models)}
    return simulate


_FAR = 0.3  # a shift that makes a part of the claim hold on every simulated panel
_M = DEFAULT_MARGIN
_HEAVY = (0.15, 0.20)
#: The lead over random the power simulations give a rule where the claim says it beats random
#: (assumed: the paper's sizes are not in our digest): three margins.
_LEAD = 3 * _M
_NO_SIZE = "assumed: the paper's sizes are not in our digest"
#: The pruning nulls' default design, when no executed chapter gives one: larger than the default
#: book's (which prunes too few models for a sign-flip test over models to reach p <= 0.05, so its
#: verdicts are "not testable"); the appendix simulates at the executed chapter's count of pruned
#: models (``lrd.book.designs``), where false "reproduced" and the power may be 0 by construction.
_DESIGN = {"n_models": _N_MODELS}
_LARGER = ("restated, larger than the default book's: its pruned models are too few to reach p <= 0.05 (its "
           "verdicts say 'not testable', power 0)")
_AT_RANDOM = _edge({})  # every rule at random's level: NRS's claim as stated, and the edge of GFMI's median claim
GFMI_ONLY_NULL = NullModel(
    _boundary([
        # GFMI no different from random at one of 15%, 20% (far above at the other), the others far below
        {("GFMI", o): (0.0 if o == b else _FAR) for o in _BUDGETS}
        | {("Frenet (velocity)", o): -_FAR for o in _BUDGETS} | {("NRS", o): -_FAR for o in _BUDGETS}
        for b in _HEAVY] + [
        # GFMI far above random, one other rule at exactly the margin at one of 15%, 20%
        {("GFMI", o): _FAR for o in _BUDGETS} | {(r, o): (_M if (r, o) == (other, b) else -_FAR)
                                                for r in ("Frenet (velocity)", "NRS") for o in _BUDGETS}
        for other in ("Frenet (velocity)", "NRS") for b in _HEAVY]), judge_pruning_gfmi_only,
    f"{{n_models}} models x {len(_TASKS)} tasks, random with {_SEEDS} seeds; one part of the claim at its null "
    f"boundary (drawn): GFMI no different from random at 15% or 20%, or Frenet or NRS beating it by exactly the "
    f"margin +{_M}; the other parts far from theirs",
    effect=_edge({("GFMI", b): _M for b in _HEAVY} | {(r, b): 0.0 for r in ("Frenet (velocity)", "NRS") for b in _HEAVY}),
    effect_panel=f"the claim at its edge: GFMI beating random by exactly the margin +{_M} at 15% and 20%, Frenet and "
                 f"NRS no different from random there",
    power_effect=_edge({("GFMI", b): _LEAD for b in _HEAVY}),
    power_panel=f"the same design, GFMI ahead of random by {_LEAD:g} at 15% and 20% ({_NO_SIZE}), Frenet and NRS at "
                f"random's level at every budget", design=_DESIGN, design_label=_LARGER)
GFMI_MEDIAN_NULL = NullModel(
    _boundary([
        {("GFMI", o): _FAR for o in _BUDGETS} | {(r, o): (_FAR if (r, o) == (other, b) else 0.0)
                                                for r in ("Frenet (velocity)", "NRS") for o in _BUDGETS}
        for other in ("Frenet (velocity)", "NRS") for b in _BUDGETS]), judge_pruning_gfmi_median,
    f"{{n_models}} models x {len(_TASKS)} tasks; GFMI exchangeable with one other rule at one budget (drawn), far "
    f"above both elsewhere", effect=_AT_RANDOM,
    effect_panel="the claim at its edge: GFMI exchangeable with the other rules at every budget",
    power_effect=_edge({("GFMI", b): _LEAD for b in _BUDGETS}),
    power_panel=f"the same design, GFMI ahead of random by {_LEAD:g} at every budget ({_NO_SIZE}), Frenet and NRS at "
                f"random's level", design=_DESIGN, design_label=_LARGER)
FRENET_NULL = NullModel(
    _boundary([
        {("Frenet (velocity)", b): -_FAR for b in _BUDGETS[1:]},  # Frenet = random at the lightest budget
        {("Frenet (velocity)", _BUDGETS[0]): _FAR} | {("Frenet (velocity)", b): _M for b in _BUDGETS[1:]},
    ]), judge_pruning_frenet,
    f"{{n_models}} models x {len(_TASKS)} tasks; half the panels Frenet no different from random at 5%, half far "
    f"above it at 5% and at the margin +{_M} at 10-20%",
    effect=_edge({("Frenet (velocity)", _BUDGETS[0]): _M}),
    effect_panel=f"the claim at its edge: Frenet beating random by exactly the margin +{_M} at 5%, no different from "
                 f"it at 10-20%",
    power_effect=_edge({("Frenet (velocity)", _BUDGETS[0]): _LEAD}),
    power_panel=f"the same design, Frenet ahead of random by {_LEAD:g} at 5% ({_NO_SIZE}), at random's level at "
                f"10-20%", design=_DESIGN, design_label=_LARGER)
NRS_NULL = NullModel(
    _boundary([{("NRS", o): (_M if o == b else -_FAR) for o in _BUDGETS} for b in _BUDGETS]),
    judge_pruning_nrs,
    f"{{n_models}} models x {len(_TASKS)} tasks; NRS beats random by exactly the margin +{_M} at one budget (drawn), "
    f"far below it at the others", effect=_AT_RANDOM,
    effect_panel="the claim at its edge: NRS no different from random at every budget",
    power_effect=_AT_RANDOM,
    power_panel="the same design, NRS at random's level at every budget: the claim as the paper states it",
    design=_DESIGN, design_label=_LARGER)
