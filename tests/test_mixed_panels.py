"""Mixed panels: a claim's verdict never moves with the models (or model-task cells) its judge leaves out.

The book's calibration issue asks for each tested claim's false "reproduced" and false
"contradicted" rates "at the executed design *including mixed panels*: in-scope models at the
claim's edge while out-of-scope or ambiguous models take any value". The null-calibration
appendix simulates the in-scope rates; this file shows that, for every judge that counts only
part of what it is given, the verdict is invariant to whatever the left-out part shows, so the
mixed-panel rates are the in-scope ones for every value the left-out models take.

For each such claim, on tables drawn by its ``edge`` and ``null`` models (:func:`lrd.verdicts.simulate`)
and widened, where the simulation carries none, with rows of out-of-scope models (the mapping
the judge reads, ``base_params`` / ``model_kinds``, passed as the chapter passes it):

1. the verdict on the mixed panel is judged, and again on the in-scope panel alone;
2. the out-of-scope rows' values are replaced by extreme or adversarial alternatives (huge
   positive, huge negative, heavy-tailed noise, values that would make the claim look reproduced,
   values that would make it look contradicted) and the claim judged again;
3. the verdict's numbers (outcome, statistic, p_value, p_against, p_min, effect, ci, power,
   per_model, holds) are identical every time. The evidence sentence may name the left-out
   models and show their own numbers (words only).

The same holds on one draw (:data:`POWER_SEED`) of the claim's ``power`` model, the paper's effect
as it states it, for every covered claim that has one (all but cosine.pruning and the two ILSE
demonstrations: :func:`test_every_power_model_is_drawn`).

Two controls show the invariance is not vacuous: the same alternatives applied to an in-scope
model move the numbers (negative control), and so do the left-out rows' alternatives when a rule
counts them (mutation control: the scope rule's other value, a wider ``params_range`` and no
``kinds``, ``alpha`` above the pairs' ``p_chance``, no ``informative`` column or chance table, the
small task measured on as many texts, a downstream score for the encoders, a defined correlation
for the constant curve).

How each claim leaves models out (see each case's ``how``): the Skean claims by the rule
``scope`` (:func:`lrd.verdicts.specifications.skean2025.embedder_rule`: skean.metrics_track and
skean.choice by default, skean.gain, which counts every model, under its alternative
:data:`lrd.verdicts.claims.SKEAN_LLM_SCOPE`),
skean.valley by kind (neither "encoder" nor "decoder"), the ILSE claims by size and kind
(:func:`lrd.verdicts.fusion.panel.size_scope`: ``params_range`` on ``base_params``, ``kinds`` on
``model_kinds``), the cosine claims by measured chance (model-task pairs with ``p_chance > alpha``),
the LRD pruning claims by the ``informative`` column (pairs not above measured chance) and, for
their per-model count, the pruning chance table; cosine.pruning only in its per-model count (its
test over models reads every pruned decoder's curves, as its specification says);
lrd.selection_llm by the downstream score (a model of ``scores`` without one is not ranked:
:func:`lrd.verdicts.selection._models`); lrd.complementarity by defined correlations (a model
without one for some pair of families in any task, e.g. a curve constant in every task, is left
out of the test over models, which the evidence now says, naming it; in the per-model count its p
is 1). The ILSE demonstrations (parameters, cayley_efficiency) are checked on hand-built tables
(no simulation). :data:`EXCLUDE_NOTHING` lists the claims whose judge counts everything it is given.

**Chance columns.** Where pairs are left out by measured chance, the chance table's rows of the
left-out pairs are perturbed too (:data:`CHANCE_MODES`: p just above alpha, 1, anywhere in
(alpha, 1] or unmeasured, NaN; accuracy, chance and ``p_min_chance`` anything), with and without
the measurements' alternatives, and the numbers do not move; the mutation control moves their p to
alpha itself (the filter's inclusive bound) and below, and the pairs then count. For the pruning
claims the chance table is lrd.verdicts.pruning.chance_table's, whose filter reads its boolean
``above chance`` (decided at the table's own alpha, 0.05), not ``p`` or the judge's ``alpha``.

**Exclusions made by the chapter, not the judge.** Where a chapter filters its tables before the
judge, the panel's ``chapter`` step (:class:`Panel`) runs the chapter's own function, from
:mod:`lrd`, on every judged panel, so the invariance covers the chapter's route:

- lrd.task: notebooks/lrd_families.py passes ``equal = equal_sample_tasks(scores)``
  (:func:`lrd.verdicts.families.equal_sample_tasks`: the tasks measured on the largest number of
  texts N) as the judge's ``scores``; the judge refuses tasks of different N (ValueError) and reads
  ``groups`` only for the tasks of ``scores`` (words only: the note's count of models whose
  datasets differ, :func:`test_task_groups_of_a_left_out_task_never_change_the_verdict_or_its_words`).
- lrd.pruning_*: notebooks/selection_and_pruning.py computes ``chance = chance_table(mc_items)`` and
  ``informative = mark_informative(changes, chance)``
  (:func:`lrd.verdicts.pruning.mark_informative`: ``informative`` False for the pairs whose
  ``above chance`` is False) and passes ``informative`` as ``changes``; the judges drop the rows with
  ``informative`` False (:func:`lrd.verdicts.pruning.model_level`) and, for the per-item count,
  apply mark_informative to the items themselves (:func:`lrd.verdicts.pruning.rule_item_tests`).
- lrd.selection_llm: notebooks/selection_and_pruning.py passes ``per_model.loc[decoders]`` with
  ``decoders = list(mc_avg.index)``, the models with a multiple-choice accuracy, which only
  decoders have (:class:`lrd.units.selection_and_pruning.SelectionModel` refuses one for an
  encoder). The filter repeats the judge's own: it ranks only the models with a downstream score,
  so the case passes every model's scores and checks the verdict equals the decoders' alone.

No notebook needed a change: two chapters' filters are already functions of :mod:`lrd`, tested
here through the chapter's call, and the third repeats the judge's own rule.

Per-item outcomes (the per-model count beside a verdict) are slow to test: one panel per claim,
the edge model's first seed, carries them.

An out-of-scope model whose last layer's mean score is exactly 0 (its relative gain undefined) is
shown and never stops a judge.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np
import pandas as pd
import pytest

from lrd.verdicts import judge, simulate
from lrd.verdicts.claims import ILSE_PARAMS_RANGE, SKEAN_LLM_SCOPE
from lrd.verdicts.families import equal_sample_tasks, family_correlations
from lrd.verdicts.families.measures import FAMILY_CURVES, FINAL_LAYER_STATISTICS, RANK_FREE_SCORES
from lrd.verdicts.pruning import mark_informative
from lrd.verdicts.record import ALPHA
from lrd.verdicts.selection import LRD_SCORES
from lrd.verdicts.specifications import specification

SEEDS = (0, 1, 2)
#: The controls' draw: a seed whose panels carry no per-item outcomes (the slow per-model tests).
CONTROL_SEED = SEEDS[1]
#: The power model's draw (one seed: the invariance, not the power, is tested).
POWER_SEED = SEEDS[0]
#: The draws of the cases added for the chapters' own exclusions and the complementarity judge's
#: (lrd.task, lrd.selection_llm, lrd.complementarity): two seeds keep the file's runtime modest.
NEW_SEEDS = SEEDS[:2]
#: The verdict's numbers that must not move (``outcome`` is computed from them).
FIELDS = ("outcome", "statistic", "p_value", "p_against", "p_min", "effect", "ci", "power", "per_model", "holds")
#: The alternatives the left-out rows take.
MODES = ("huge+", "huge-", "noise", "reproduced", "contradicted")


def _norm(x):
    """A value comparable with ``==``, NaN included (NaN -> "nan"), numpy scalars as Python's."""
    if isinstance(x, (tuple, list)):
        return tuple(_norm(v) for v in x)
    if isinstance(x, (np.floating, float)):
        return "nan" if math.isnan(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def numbers(verdict) -> dict:
    return {f: _norm(getattr(verdict, f)) for f in FIELDS}


# ---- the panels ------------------------------------------------------------------------------------

Mask = Callable[[str, pd.DataFrame], np.ndarray]


@dataclasses.dataclass
class Panel:
    """One mixed panel: the tables (and choices) the judge reads, which rows it must leave out,
    one in-scope model's rows (the negative control), and the in-scope panel alone.

    ``chapter``: the chapter's own step between its tables and the judge, where the chapter (not
    the judge) leaves rows out (equal_sample_tasks, mark_informative); every judgement of the
    panel goes through it. ``chance_out``: the chance table's rows of the pairs left out by
    measured chance (the cosine and pruning claims)."""

    tables: dict
    outside: Mask
    inside: Mask | None
    reference: dict | None = None
    choices: dict = dataclasses.field(default_factory=dict)
    chapter: Callable[[dict], dict] | None = None
    chance_out: Mask | None = None


@dataclasses.dataclass(frozen=True)
class Chance:
    """The chance table a claim's judge (or the chapter's step before it) reads to leave pairs out:
    its p-value column (a pair counts when ``p <= alpha``), its other numeric columns, and the
    boolean decided by p where the filter reads that instead (pruning's ``above chance``)."""

    table: str
    p: str
    values: tuple[str, ...]
    flag: str | None = None


@dataclasses.dataclass
class Case:
    """How to build a claim's mixed panels and which values its left-out rows may take."""

    claim: str
    how: str
    build: Callable[[int, str], Panel]
    columns: dict  # table name -> the value columns replaced
    favour: Callable[[str, pd.DataFrame, str, int], np.ndarray]  # (table, rows, column, +1/-1) -> values
    models: tuple = ("edge", "null")
    control: str = "p_effect"  # what the negative control must move: "p_effect", "per_model" or "holds"
    chance: Chance | None = None  # the chance table of a filter by measured chance
    seeds: tuple = SEEDS  # the draws of each of ``models`` in the invariance test


def _models(names) -> Mask:
    names = set(names)
    return lambda name, frame: frame["model"].isin(names).to_numpy() if "model" in frame else np.zeros(len(frame), bool)


def _pairs(pairs, keys=("task",)) -> Mask:
    """Rows whose (model, task) pair, for any of ``keys``, is in ``pairs``."""
    pairs = set(pairs)

    def mask(name, frame):
        if "model" not in frame:
            return np.zeros(len(frame), bool)
        hit = np.zeros(len(frame), bool)
        for key in keys:
            if key in frame:
                hit |= np.fromiter(((m, t) in pairs for m, t in zip(frame["model"], frame[key])), bool, len(frame))
        return hit
    return mask


def _either(*masks: Mask) -> Mask:
    return lambda name, frame: np.logical_or.reduce([m(name, frame) for m in masks])


def _drop(tables: dict, mask: Mask) -> dict:
    return {k: (v[~mask(k, v)] if isinstance(v, pd.DataFrame) else v) for k, v in tables.items()}


def _copy_model(frame: pd.DataFrame, source: str, names) -> pd.DataFrame:
    """``frame`` with ``source``'s rows copied under each of ``names``."""
    return pd.concat([frame, *(frame[frame["model"] == source].assign(model=n) for n in names)], ignore_index=True)


def perturb(case: Case, panel: Panel, mask: Mask, mode: str, seed: int = 0) -> dict:
    """The panel's tables with the rows of ``mask`` set to the alternative ``mode``."""
    rng = np.random.default_rng(seed)
    out = dict(panel.tables)
    for name, columns in case.columns.items():
        frame = out.get(name)
        if frame is None:
            continue
        hit = mask(name, frame)
        if not hit.any():
            continue
        frame = frame.copy()
        rows = frame[hit]
        for col in columns:
            v = rows[col].to_numpy(dtype=float)
            if mode == "huge+":
                new = v * 1e6 + 1e6
            elif mode == "huge-":
                new = -v * 1e6 - 1e6
            elif mode == "noise":
                new = rng.standard_cauchy(len(v)) * 1e3
            elif mode in ("reproduced", "contradicted"):
                new = case.favour(name, rows, col, 1 if mode == "reproduced" else -1)
            else:
                raise ValueError(mode)
            frame[col] = frame[col].astype(float)
            frame.loc[hit, col] = np.asarray(new, dtype=float)
        out[name] = frame
    return out


def _with_items(seed: int, model: str) -> bool:
    """Whether a panel carries per-item outcomes (the per-model count beside the verdict): the
    per-item tests are the slow part, so one panel per claim, the edge model's first seed."""
    return seed == SEEDS[0] and model == "edge"


# ---- Skean et al.: the rule `scope` (kind column of the results) -----------------------------------

def _skean_favour(name, rows, col, sign):
    """Per (measurement, depth): the chosen (intermediate) layers better than the last, DiME high and
    prompt entropy low at the better layers (sign +1), or the last layer best and the metrics
    pointing away from it (sign -1)."""
    d = rows["depth"].to_numpy(dtype=float)
    bump = 1 - 2 * np.abs(d - 0.5)
    m = rows["measurement"].astype(str).to_numpy()
    score = 0.5 + 0.5 * bump if sign > 0 else 0.5 + 0.5 * d
    dime = bump if sign > 0 else 1 - d
    entropy = 1 - bump if sign > 0 else d
    return np.where(np.char.startswith(m.astype(str), "score"), score,
                    np.where(m == "DiME", dime, np.where(m == "prompt entropy", entropy, 0.5 + d)))


def _skean(claim: str, choices: dict) -> Callable[[int, str], Panel]:
    def build(seed, model):
        t = simulate(claim, seed=seed, model=model)
        kinds = t["results"].groupby("model", sort=False)["kind"].first()
        out = kinds.index[kinds != "decoder"].tolist()  # the simulated encoders: contrastive sentence embedders
        inside = kinds.index[kinds == "decoder"].tolist()
        assert out and inside
        return Panel(t, _models(out), _models(inside[:1]), _drop(t, _models(out)), dict(choices))
    return build


def _valley(seed, model):
    t = simulate("skean.valley", seed=seed, model=model)
    decoder = t["results"].loc[t["results"]["kind"] == "decoder", "model"].iloc[0]
    extra = {"ssm": "ssm", "unlabelled": None}  # a kind of its own (the paper's Mamba) and no kind (grouped(): NaN)
    tables = {}
    for name, frame in t.items():
        added = [frame[frame["model"] == decoder].assign(model=m, kind=k) for m, k in extra.items()]
        tables[name] = pd.concat([frame, *added], ignore_index=True)
    out = _models(extra)
    return Panel(tables, out, _models([decoder]), _drop(tables, out))


# ---- ILSE: size_scope (params_range on base_params, kinds on model_kinds) ---------------------------

#: Out of scope: just above the paper's largest (8,030,261,248), far above, just below its smallest
#: (14,067,712), and a sentence embedder of a counted size.
OUTSIDERS = {"llama-8b-plus-one": (ILSE_PARAMS_RANGE[1] + 1, "decoder"), "giant-70b": (7.0e10, "decoder"),
             "pythia-below": (ILSE_PARAMS_RANGE[0] - 1, "decoder"), "embedder": (1.1e8, "encoder")}


def _ilse_sizes(models) -> tuple[dict, dict]:
    """base_params and model_kinds of the panel's models: the in-scope ones at the range's two
    inclusive bounds and inside it, the outsiders as :data:`OUTSIDERS`."""
    inside = [m for m in models if m not in OUTSIDERS]
    sizes = [ILSE_PARAMS_RANGE[0], ILSE_PARAMS_RANGE[1], *([4.1e8] * len(inside))]
    base = {m: float(s) for m, s in zip(inside, sizes)}
    kinds = dict.fromkeys(inside, "decoder")
    base.update({m: float(p) for m, (p, _) in OUTSIDERS.items()})
    kinds.update({m: k for m, (_, k) in OUTSIDERS.items()})
    return base, kinds


def _items(models, tasks, methods, rng, *, seeds=(0, 1, 2), n_items=16, extra=None) -> pd.DataFrame:
    rows = [{"model": m, "task": t, "method": me, "seed": s, "item": i, **(extra or {}),
             "correct": int(rng.random() < 0.6 + 0.02 * k)}
            for m in models for t in tasks for k, me in enumerate(methods) for s in seeds for i in range(n_items)]
    return pd.DataFrame(rows)


def _ilse_method_favour(claimed: str) -> Callable:
    def favour(name, rows, col, sign):
        mine = (rows["method"] == claimed).to_numpy()
        return np.where(mine, 1.0, 0.0) if sign > 0 else np.where(mine, 0.0, 1.0)
    return favour


def _ilse(claim: str, frames: tuple[str, ...], *, items: bool = False) -> Callable[[int, str], Panel]:
    def build(seed, model):
        t = simulate(claim, seed=seed, model=model)
        source = t[frames[0]]["model"].iloc[0]
        tables = dict(t)
        for name in frames:
            tables[name] = _copy_model(t[name], source, OUTSIDERS)
        models = list(dict.fromkeys(tables[frames[0]]["model"]))
        if items and _with_items(seed, model):  # per-item outcomes, for the per-model count beside the verdict
            scores = tables["scores"]
            tables["items"] = _items(models, pd.unique(scores["task"]), list(pd.unique(scores["method"])),
                                     np.random.default_rng(seed))
        base, kinds = _ilse_sizes(models)
        tables.update(base_params=base, model_kinds=kinds)
        inside = [m for m in models if m not in OUTSIDERS]
        out = _models(OUTSIDERS)
        return Panel(tables, out, _models(inside[-1:]), _drop(tables, out))
    return build


def _mapping(ablation_in_scope: bool) -> Callable[[int, str], Panel]:
    """ilse.mapping: the verdict tests one ablation model's grid; the per-model count tests every
    model's grid (``mappings``). Out of scope: the outsiders' grids, and in the second panel the
    ablation model itself (the verdict then tests nothing, whatever its grid shows)."""
    def build(seed, model):
        t = simulate("ilse.mapping", seed=seed, model=model)
        rng = np.random.default_rng(seed)
        grid = t["ablation"]
        inside = ["abl", "m1", "m2"]
        jitter = {m: 0 if m == "abl" else rng.normal(0, 0.01, len(grid)) for m in (*inside, *OUTSIDERS)}
        mappings = pd.concat([grid.assign(model=m, score=grid["score"] + j) for m, j in jitter.items()],
                             ignore_index=True)
        base, kinds = _ilse_sizes([*inside, *OUTSIDERS])
        tables = {**t, "mappings": mappings, "base_params": base, "model_kinds": kinds,
                  "model": "abl" if ablation_in_scope else "giant-70b"}
        if ablation_in_scope:
            out = _models(OUTSIDERS)
            ctrl = _either(_models(["abl"]), lambda name, frame: np.full(len(frame), name == "ablation"))
            return Panel(tables, out, ctrl, _drop(tables, out))
        out = _either(_models(OUTSIDERS), lambda name, frame: np.full(len(frame), name == "ablation"))
        return Panel(tables, out, None)
    return build


def _mapping_favour(name, rows, col, sign):
    variant = rows["variant"].astype(str).str.extract(r"(\d+)$")[0].astype(float).to_numpy()
    # +1: every mapping alike (the claim's "robust"); -1: mappings 5 points apart each
    return np.full(len(rows), 0.8) + 1e-3 * rows["seed"].to_numpy() if sign > 0 else 0.3 + 0.05 * variant


def _parameters(seed, model):
    inside = {"a": 4.1e8, "b": ILSE_PARAMS_RANGE[0] * 100, "c": ILSE_PARAMS_RANGE[1]}
    models = [*inside, *OUTSIDERS]
    base, kinds = _ilse_sizes(models)
    base.update(inside)
    params = {m: 1e-4 * base[m] for m in models}
    shares = pd.DataFrame({"model": models, "params": [params[m] for m in models],
                           "base_params": [base[m] for m in models], "share": [params[m] / base[m] for m in models]})
    tables = {"shares": shares, "model_kinds": kinds}
    out = _models(OUTSIDERS)
    return Panel(tables, out, _models(["a"]), _drop(tables, out))


def _share_favour(name, rows, col, sign):
    return np.full(len(rows), 0.0 if sign > 0 else 0.5)


def _efficiency(seed, model):
    # in scope: the paper's three state counts (25-33), Cayley sparser; out: 7 and 5 states (below sparser_from)
    graphs = pd.DataFrame({"model": ["pythia-410m", "gemma2-2b", "llama3-8b", "pythia-14m", "five-states"],
                           "states": [25, 27, 33, 7, 5], "cayley_nodes": [120, 120, 120, 24, 24],
                           "cayley_edges": [480, 480, 480, 96, 96], "fc_edges": [600, 702, 1056, 42, 20]})
    memory = pd.DataFrame(columns=["graph", "tokens", "edges", "peak_bytes"])
    tables = {"graphs": graphs, "memory": memory}
    out = _models(["pythia-14m", "five-states"])
    return Panel(tables, out, _models(["gemma2-2b"]), _drop(tables, out))


def _edges_favour(name, rows, col, sign):
    sparse = (col == "cayley_edges") == (sign > 0)
    return np.full(len(rows), 0.0 if sparse else 1e6)


# ---- Hinostroza et al.: model-task pairs above measured chance (p_chance <= alpha) ----------------

AT_CHANCE = "at-chance"


def _cosine(claim: str) -> Callable[[int, str], Panel]:
    """A decoder at chance on every task (a copy of m0's rows) and one task of m2 at chance."""
    frame = "task_agreement" if claim == "cosine.dataset" else "agreement"

    def build(seed, model):
        t = simulate(claim, seed=seed, model=model)
        tables = dict(t)
        for name in (frame, "unrelated"):
            if name in tables:
                tables[name] = _copy_model(tables[name], "m0", [AT_CHANCE])
        chance = _copy_model(t["chance"], "m0", [AT_CHANCE])
        below = {(AT_CHANCE, task) for task in chance.loc[chance["model"] == AT_CHANCE, "task"]} | {("m2", "t1")}
        hit = np.fromiter(((m, k) in below for m, k in zip(chance["model"], chance["task"])), bool, len(chance))
        chance.loc[hit, "p_chance"] = 0.5
        tables["chance"] = chance
        out = _pairs(below, keys=("task_a", "task_b") if frame == "task_agreement" else ("task",))
        return Panel(tables, out, _models(["m0"]), _drop(tables, out), chance_out=_pairs(below))
    return build


def _agreement_favour(name, rows, col, sign):
    weak = sign > 0  # +1: cosine and removal agree weakly, misestimate every block, pairs of tasks unalike
    value = {"r": 0.0, "r_corrected": 0.0, "spearman": 0.0, "misestimated": 1.0, "over": 0.5, "under": 0.5,
             "unrelated": 0.0} if weak else {"r": 1.0, "r_corrected": 1.0, "spearman": 1.0, "misestimated": 0.0,
                                              "over": 0.0, "under": 0.0, "unrelated": 1.0}
    if name == "unrelated":
        return np.full(len(rows), 0.0 if weak else 1.0)
    return np.full(len(rows), value.get(col, 1.0))  # reliabilities: 1


_AGREEMENT = ("r", "reliability", "r_corrected", "spearman", "rank_reliability", "over", "under", "misestimated",
              "unrelated")


def _cosine_pruning(seed, model):
    """cosine.pruning: the test over models reads every pruned decoder's curves (the spec: "the test
    over models does not read" chance); the per-model count reads the items of the pairs above
    measured chance only: m6 at chance on both tasks, m7 on t1."""
    t = simulate("cosine.pruning", seed=seed, model=model)
    curves = t["curves"]
    models = ["m0", "m1", "m6", "m7"]  # the per-item tests are the slow part: four decoders carry items
    rng = np.random.default_rng(seed)
    rows = [{"model": m, "task": task, "rule": rule, "seed": -1, "k": k, "item": i,
             "correct": int(rng.random() < (0.75 if rule == "accuracy (calibration)" else 0.6))}
            for m in models for task in ("t0", "t1") for rule in ("accuracy (calibration)", "cosine (BI)")
            for k in sorted(pd.unique(curves["k"])) for i in range(16)]
    items = pd.DataFrame(rows)
    below = {("m6", "t0"), ("m6", "t1"), ("m7", "t1")}
    chance = pd.DataFrame([{"model": m, "task": task, "acc": 0.7, "chance": 0.5,
                            "p_chance": 0.5 if (m, task) in below else 0.001, "p_min_chance": 0.001}
                           for m in models for task in ("t0", "t1")])
    tables = {**t, "items": items, "chance": chance}
    out = _pairs(below)
    return Panel(tables, out, _models(["m0"]), _drop(tables, out), chance_out=out)


def _correct_favour(better: str) -> Callable:
    def favour(name, rows, col, sign):
        mine = (rows["rule"] == better).to_numpy()
        return np.where(mine, 1.0, 0.0) if sign > 0 else np.where(mine, 0.0, 1.0)
    return favour


# ---- Jiang et al., pruning: the `informative` column and the pruning chance table -------------------

def _mark_informative(tables: dict) -> dict:
    """The pruning chapter's step before its judges (notebooks/selection_and_pruning.py:
    ``informative = mark_informative(changes, chance)``): the changes' ``informative`` column from
    the chance table's ``above chance``."""
    return {**tables, "changes": mark_informative(tables["changes"], tables["chance"])}


def _lrd_pruning(claim: str) -> Callable[[int, str], Panel]:
    """A model at chance on every task (a copy of m0's rows) and m7 at chance on t2: the chance
    table (every model and task, lrd.verdicts.pruning.chance_table's columns) finds them not above
    chance, the chapter's step marks their changes ``informative`` False (:func:`_mark_informative`)
    and the per-item count leaves their items out."""
    def build(seed, model):
        t = simulate(claim, seed=seed, model=model)
        changes = _copy_model(t["changes"], "m0", [AT_CHANCE])
        below = {(AT_CHANCE, "t1"), (AT_CHANCE, "t2"), ("m7", "t2")}
        tasks = list(pd.unique(changes["task"]))
        chance = pd.DataFrame([{"model": m, "task": task, "items": 12, "accuracy": 0.6, "chance": 0.25,
                                "p": 0.5 if (m, task) in below else 0.001, "above chance": (m, task) not in below}
                               for m in pd.unique(changes["model"]) for task in tasks])
        tables = {**t, "changes": changes, "chance": chance}
        if _with_items(seed, model):
            models = ["m0", "m1", "m7", AT_CHANCE]  # the per-item tests are slow: four models carry items
            rng = np.random.default_rng(seed)
            rules = [r for r in pd.unique(changes["rule"])]
            rows = [{"model": m, "task": task, "rule": rule, "seed": s, "fraction": f, "item": i,
                     "correct": int(rng.random() < (0.7 if rule == "GFMI" else 0.6))}
                    for m in models for task in tasks for rule in rules
                    for s in ((0, 1, 2) if rule == "random" else (-1,))
                    for f in sorted(pd.unique(changes["fraction"])) for i in range(12)]
            tables["items"] = pd.DataFrame(rows)
        out = _pairs(below)
        return Panel(tables, out, _models(["m0"]), _drop(tables, out), chapter=_mark_informative, chance_out=out)
    return build


def _rule_favour(rule: str) -> Callable:
    def favour(name, rows, col, sign):
        mine = (rows["rule"] == rule).to_numpy()
        if col == "correct":
            return np.where(mine == (sign > 0), 1.0, 0.0)
        return np.where(mine == (sign > 0), 0.5, -0.5)
    return favour


# ---- Jiang et al., the other claims: the chapter's equal-N tasks, the decoders' downstream score, ----------
# ---- and the models the complementarity test cannot correlate -----------------------------------------------

SMALL_TASK = "t-small"


def _equal_sample(tables: dict) -> dict:
    """The LRD-families chapter's step before ``lrd.task`` (notebooks/lrd_families.py:
    ``equal = equal_sample_tasks(scores)``, the judge's ``scores``)."""
    return {**tables, "scores": equal_sample_tasks(tables["scores"])}


def _task_groups(scores: pd.DataFrame, rng: np.random.Generator, n_groups: int = 3) -> pd.DataFrame:
    """Scores on ``n_groups`` disjoint groups of each task's texts (FamilyTables.group_scores): each
    cell's score plus noise, on a third of its texts."""
    cells = scores.loc[np.repeat(np.arange(len(scores)), n_groups), ["model", "task", "N", *RANK_FREE_SCORES]]
    noise = rng.normal(0, 0.5, (len(cells), len(RANK_FREE_SCORES)))
    return cells.assign(group=np.tile(np.arange(n_groups), len(scores)), N=cells["N"].to_numpy() // n_groups,
                        **{m: cells[m].to_numpy(dtype=float) + noise[:, k]
                           for k, m in enumerate(RANK_FREE_SCORES)}).reset_index(drop=True)


def _task(seed, model, *, groups: bool = False):
    """lrd.task: a fourth task measured on half the texts (a copy of the first task's rows), left
    out by the chapter's equal_sample_tasks. With ``groups``, the text groups of every task too
    (the judge reads them for the tasks of ``scores`` only, for words: the note's count of models
    whose datasets differ; slow, so one test carries them)."""
    t = simulate("lrd.task", seed=seed, model=model)
    scores = t["scores"]
    first = scores["task"].iloc[0]
    small = scores[scores["task"] == first].assign(task=SMALL_TASK, N=scores["N"] // 2)
    scores = pd.concat([scores, small], ignore_index=True)
    tables = {**t, "scores": scores}
    if groups:
        tables["groups"] = _task_groups(scores, np.random.default_rng(seed))

    def out(name, frame):
        return (frame["task"] == SMALL_TASK).to_numpy() if "task" in frame else np.zeros(len(frame), bool)
    return Panel(tables, out, _models(["m0"]), _drop(tables, out), chapter=_equal_sample)


def _task_favour(name, rows, col, sign):
    # +1: the small task far from the others in every LRD score, its final layer like theirs; -1: no difference
    if col in RANK_FREE_SCORES:
        return np.full(len(rows), 10.0 if sign > 0 else 0.0)
    return np.zeros(len(rows))


def _index(names) -> Mask:
    """Rows of a table indexed by model (the selection claims' ``scores``)."""
    names = set(names)
    return lambda name, frame: frame.index.isin(names) if "model" not in frame else np.zeros(len(frame), bool)


def _selection_llm(seed, model):
    """lrd.selection_llm: two encoders' scores (copies of two decoders', kind "encoder") beside the
    decoders', no downstream score (only decoders have a multiple-choice accuracy): the judge ranks
    the models with a score and a downstream score (lrd.verdicts.selection._models). The chapter
    passes ``per_model.loc[decoders]`` (``decoders = list(mc_avg.index)``): the same models."""
    t = simulate("lrd.selection_llm", seed=seed, model=model)
    scores = t["scores"]
    encoders = scores.iloc[:2].rename(index=lambda m: f"encoder-{m}").assign(kind="encoder")
    tables = {**t, "scores": pd.concat([scores, encoders])}
    out = _index(encoders.index)
    return Panel(tables, out, _index(scores.index[:1]), _drop(tables, out))


def _selection_favour(name, rows, col, sign):
    return np.arange(len(rows), dtype=float) * sign * 10


FLAT = "flat-nrs"


def _complementarity(seed, model):
    """lrd.complementarity: a model whose NRS curve is constant on every task (a copy of m0's rows,
    rho NaN for the two pairs with NRS) has no correlation for those pairs: the test over models
    leaves it out, whatever its one defined pair (Frenet-GFMI) shows; in the per-model count its p
    is 1 (a part missing). In scope: m1's NRS curve constant on one task only (its means over the
    other tasks count)."""
    t = simulate("lrd.complementarity", seed=seed, model=model)
    c = t["correlations"].copy()
    nrs = c["pair"].str.contains("NRS").to_numpy()
    c.loc[nrs & (c["model"] == "m1").to_numpy() & (c["task"] == c["task"].iloc[0]).to_numpy(), "rho"] = np.nan
    flat = c[c["model"] == "m0"].assign(model=FLAT)
    flat.loc[flat["pair"].str.contains("NRS"), "rho"] = np.nan
    tables = {**t, "correlations": pd.concat([c, flat], ignore_index=True)}

    def out(name, frame):  # the left-out model's defined correlations (its NaN ones stay NaN)
        return ((frame["model"] == FLAT) & frame["rho"].notna()).to_numpy()
    # no in-scope panel alone: the per-model count holds the left-out model (p 1), see
    # test_complementarity_says_which_models_it_left_out
    return Panel(tables, out, _models(["m0"]), None)


def _rho_favour(name, rows, col, sign):
    return np.full(len(rows), 0.0 if sign > 0 else 1.0)


# ---- the cases ----------------------------------------------------------------------------------------

_SKEAN_COLUMNS = {"results": ("value",)}
_PRUNING_COLUMNS = {"changes": ("change",), "items": ("correct",)}
#: The chance tables: lrd.verdicts.agreement.chance_table (the cosine chapter) and
#: lrd.verdicts.pruning.chance_table (the pruning chapter, whose filter reads ``above chance``).
_COSINE_CHANCE = Chance("chance", "p_chance", ("acc", "chance", "p_min_chance"))
_PRUNING_CHANCE = Chance("chance", "p", ("items", "accuracy", "chance"), flag="above chance")

CASES = [
    Case("skean.choice", "rule scope (default None: the claim's SKEAN_LLM_SCOPE, kinds=('decoder',)); "
         "the results' kind column", _skean("skean.choice", {}), _SKEAN_COLUMNS, _skean_favour),
    Case("skean.gain", "rule scope at its alternative SKEAN_LLM_SCOPE (default None counts every model)",
         _skean("skean.gain", {"scope": SKEAN_LLM_SCOPE}), _SKEAN_COLUMNS, _skean_favour),
    Case("skean.metrics_track", "rule scope (default None: the claim's SKEAN_LLM_SCOPE, kinds=('decoder',)); "
         "the results' kind column", _skean("skean.metrics_track", {}), _SKEAN_COLUMNS, _skean_favour),
    Case("skean.valley", "kinds other than 'encoder' and 'decoder' (an SSM, a model grouped() leaves unlabelled)",
         _valley, {"results": ("value",), "prompts": ("value",)},
         lambda name, rows, col, sign: (1 - 2 * np.abs(rows["depth"].to_numpy() - 0.5)) * sign),
    Case("ilse.fc", "size_scope: params_range on base_params, kinds on model_kinds",
         _ilse("ilse.fc", ("scores",), items=True), {"scores": ("score",), "items": ("correct",)},
         _ilse_method_favour("fc")),
    Case("ilse.cayley_performance", "size_scope: params_range on base_params, kinds on model_kinds",
         _ilse("ilse.cayley_performance", ("scores",), items=True), {"scores": ("score",), "items": ("correct",)},
         _ilse_method_favour("cayley")),
    Case("ilse.baselines", "size_scope: params_range on base_params, kinds on model_kinds",
         _ilse("ilse.baselines", ("scores",), items=True), {"scores": ("score",), "items": ("correct",)},
         _ilse_method_favour("cayley")),
    Case("ilse.few_shot", "size_scope: params_range on base_params, kinds on model_kinds",
         _ilse("ilse.few_shot", ("few_shot", "scores")), {"few_shot": ("score",), "scores": ("score",)},
         _ilse_method_favour("cayley")),
    Case("ilse.gain", "size_scope: params_range on base_params, kinds on model_kinds (not testable: the effect "
         "is the panel's largest cell gain, its interval)", _ilse("ilse.gain", ("items",)), {"items": ("correct",)},
         _ilse_method_favour("cayley")),
    Case("ilse.mapping", "size_scope on the per-model grids (mappings), the ablation model in scope",
         _mapping(True), {"mappings": ("score",), "ablation": ("score",)}, _mapping_favour),
    Case("ilse.mapping", "size_scope on the ablation model itself (out of scope: 'model not counted')",
         _mapping(False), {"mappings": ("score",), "ablation": ("score",)}, _mapping_favour),
    Case("ilse.parameters", "size_scope (demonstration): params_range on the shares' base_params, kinds",
         _parameters, {"shares": ("share",)}, _share_favour, models=("fixed",), control="holds"),
    Case("ilse.cayley_efficiency", "Scope.sparser_graph (demonstration): state counts below sparser_from",
         _efficiency, {"graphs": ("cayley_edges", "fc_edges")}, _edges_favour, models=("fixed",), control="holds"),
    Case("cosine.correlation", "model-task pairs not above measured chance (chance p_chance > alpha)",
         _cosine("cosine.correlation"), {"agreement": _AGREEMENT}, _agreement_favour, chance=_COSINE_CHANCE),
    Case("cosine.misestimate", "model-task pairs not above measured chance (chance p_chance > alpha)",
         _cosine("cosine.misestimate"), {"agreement": _AGREEMENT, "unrelated": ("misestimated",)}, _agreement_favour,
         chance=_COSINE_CHANCE),
    Case("cosine.dataset", "task pairs with a task not above measured chance (chance p_chance > alpha)",
         _cosine("cosine.dataset"), {"task_agreement": ("r", "reliability_a", "reliability_b", "r_corrected")},
         _agreement_favour, chance=_COSINE_CHANCE),
    Case("cosine.pruning", "per-model count only: items of pairs not above measured chance (the test over models "
         "reads every pruned decoder's curves)", _cosine_pruning, {"items": ("correct",)},
         _correct_favour("accuracy (calibration)"), control="per_model", chance=_COSINE_CHANCE),
    *(Case(c, "the chapter's mark_informative (the changes' informative column from the pruning chance table's "
           "'above chance'); items of pairs not above chance", _lrd_pruning(c), _PRUNING_COLUMNS, _rule_favour(rule),
           chance=_PRUNING_CHANCE)
      for c, rule in (("lrd.pruning_gfmi_only", "GFMI"), ("lrd.pruning_gfmi_median", "GFMI"),
                      ("lrd.pruning_frenet", "Frenet (velocity)"), ("lrd.pruning_nrs", "NRS"))),
    Case("lrd.task", "the chapter's equal_sample_tasks (tasks measured on fewer texts; the judge refuses mixed N); "
         "in the judge, text groups of tasks not in scores", _task,
         {"scores": (*RANK_FREE_SCORES, *FINAL_LAYER_STATISTICS), "groups": RANK_FREE_SCORES}, _task_favour,
         seeds=NEW_SEEDS),  # groups: test_task_groups_of_a_left_out_task_never_change_the_verdict_or_its_words
    Case("lrd.selection_llm", "models of scores without a downstream score (encoders: no multiple-choice accuracy); "
         "the chapter's per_model.loc[decoders] selects the same models", _selection_llm,
         {"scores": tuple(LRD_SCORES)}, _selection_favour, seeds=NEW_SEEDS),
    Case("lrd.complementarity", "models without a defined correlation for some pair in any task (a curve constant "
         "in every task); its edge model is its null model (|rho| at the margin), drawn once",
         _complementarity, {"correlations": ("rho",)}, _rho_favour, models=("null",), seeds=NEW_SEEDS),
]

_IDS = [f"{c.claim}" + ("[ablation out]" if c.claim == "ilse.mapping" and "itself" in c.how else "") for c in CASES]


def _judge(case: Case, panel: Panel, tables: dict):
    """The claim's verdict on ``tables``, through the chapter's own step where it has one."""
    return judge(case.claim, panel.chapter(tables) if panel.chapter else tables, **panel.choices)


def _assert_invariant(case: Case, model: str, seed: int) -> None:
    """The verdict's numbers on the mixed panel drawn by ``model`` equal the in-scope panel's,
    whatever the left-out rows show (every alternative of MODES)."""
    panel = case.build(seed, model)
    assert any(panel.outside(k, v).any() for k, v in panel.tables.items() if isinstance(v, pd.DataFrame)), \
        "the mixed panel has no left-out row"
    base = numbers(_judge(case, panel, panel.tables))
    if panel.reference is not None:
        alone = numbers(_judge(case, panel, panel.reference))
        assert alone == base, f"{model} seed {seed}: the in-scope panel alone gives {alone} != {base}"
    for mode in MODES:
        again = numbers(_judge(case, panel, perturb(case, panel, panel.outside, mode, seed)))
        assert again == base, f"{model} seed {seed}, left-out rows {mode}: {again} != {base}"


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_left_out_models_never_move_the_verdict(case):
    """The verdict's numbers on the mixed panel equal the in-scope panel's, whatever the left-out
    rows show (every alternative of MODES), for each seed and simulated model (edge and null)."""
    for model in case.models:
        for seed in (case.seeds if case.models != ("fixed",) else (0,)):
            _assert_invariant(case, model, seed)


def _has_power(case: Case) -> bool:
    null = specification(case.claim).null
    return case.models != ("fixed",) and null is not None and null.power_effect is not None


POWER_CASES = [c for c in CASES if _has_power(c)]


@pytest.mark.parametrize("case", POWER_CASES, ids=[i for c, i in zip(CASES, _IDS) if _has_power(c)])
def test_left_out_models_never_move_the_verdict_on_power_draws(case):
    """The same on a draw of the claim's power model (the paper's effect as it states it): the
    left-out rows of a panel where the in-scope models show the effect move nothing either."""
    _assert_invariant(case, "power", POWER_SEED)


def test_every_power_model_is_drawn():
    """Every covered claim with a power model is checked on its draws (all but cosine.pruning,
    which has none, and the demonstrations, which have no simulation)."""
    from lrd.verdicts.specifications import null_models

    powered = {c for c, n in null_models().items() if n.power_effect is not None}
    assert {c.claim for c in POWER_CASES} == powered & {c.claim for c in CASES}
    assert {c.claim for c in CASES} - {c.claim for c in POWER_CASES} == {
        "cosine.pruning", "ilse.parameters", "ilse.cayley_efficiency"}


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # an in-scope curve made flat
@pytest.mark.parametrize("case", [c for c in CASES if c.claim != "ilse.mapping" or "itself" not in c.how],
                         ids=[i for c, i in zip(CASES, _IDS) if c.claim != "ilse.mapping" or "itself" not in c.how])
def test_negative_control_in_scope_model_moves_the_verdict(case):
    """The same alternatives applied to one in-scope model do move the verdict (so the test above can fail)."""
    panel = case.build(CONTROL_SEED, case.models[0])
    base = _judge(case, panel, panel.tables)
    moved = []
    for mode in MODES:
        v = _judge(case, panel, perturb(case, panel, panel.inside, mode))
        if case.control == "p_effect":
            moved.append(_norm(v.p_value) != _norm(base.p_value) or _norm(v.effect) != _norm(base.effect))
        elif case.control == "per_model":
            moved.append(v.per_model != base.per_model)
        else:
            moved.append(v.holds != base.holds)
    assert any(moved), f"no alternative applied to an in-scope model moved {case.control}"


def _counting(case: Case, panel: Panel) -> Panel | None:
    """The same panel judged under a rule (or with a table) that counts the left-out rows: the
    mutation control, showing that the exclusion, not the judge's indifference to the values, keeps
    the verdict still. None where no rule counts them (ilse.cayley_efficiency: arithmetic)."""
    c, tables = case.claim, dict(panel.tables)
    if c in ("skean.choice", "skean.metrics_track"):
        from lrd.verdicts.specifications.skean2025 import EVERY_MODEL
        return dataclasses.replace(panel, choices={"scope": EVERY_MODEL})
    if c == "skean.gain":
        return dataclasses.replace(panel, choices={})  # the book's default: every model counted
    if c == "skean.valley":
        for name in ("results", "prompts"):
            frame = tables[name].copy()
            frame.loc[panel.outside(name, frame), "kind"] = "decoder"
            tables[name] = frame
        return dataclasses.replace(panel, tables=tables)
    if c.startswith("ilse.") and c != "ilse.cayley_efficiency":
        return dataclasses.replace(panel, choices={**panel.choices, "params_range": (1.0, 1e12), "kinds": None})
    if c in ("cosine.correlation", "cosine.misestimate", "cosine.dataset"):
        return dataclasses.replace(panel, choices={**panel.choices, "alpha": 0.6})  # the pairs at p_chance 0.5 count
    if c == "cosine.pruning":
        return dataclasses.replace(panel, tables={k: v for k, v in tables.items() if k != "chance"})
    if c.startswith("lrd.pruning"):  # without the chapter's mark_informative and the chance table
        tables["changes"] = tables["changes"].drop(columns="informative", errors="ignore")
        return dataclasses.replace(panel, tables={k: v for k, v in tables.items() if k != "chance"}, chapter=None)
    if c == "lrd.task":  # the small task measured on as many texts as the others: equal_sample_tasks keeps it
        tables["scores"] = tables["scores"].assign(N=tables["scores"]["N"].max())
        if "groups" in tables:
            tables["groups"] = tables["groups"].assign(N=tables["groups"]["N"].max())
        return dataclasses.replace(panel, tables=tables)
    if c == "lrd.selection_llm":  # the encoders given a downstream score
        scores = tables["scores"]
        hit = panel.outside("scores", scores)
        tables["downstream"] = pd.concat([tables["downstream"],
                                          pd.Series(np.linspace(-1, 1, int(hit.sum())), index=scores.index[hit])])
        return dataclasses.replace(panel, tables=tables)
    if c == "lrd.complementarity":  # the flat model's NRS curve not constant: its NaN correlations defined
        corr = tables["correlations"].copy()
        hole = (corr["model"] == FLAT).to_numpy() & corr["rho"].isna().to_numpy()
        corr.loc[hole, "rho"] = 0.3
        return dataclasses.replace(panel, tables={**tables, "correlations": corr})
    return None


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@pytest.mark.parametrize("case", [c for c in CASES if c.claim != "ilse.cayley_efficiency"],
                         ids=[i for c, i in zip(CASES, _IDS) if c.claim != "ilse.cayley_efficiency"])
def test_mutation_control_counted_rows_move_the_verdict(case):
    """Judged under a rule that counts them, the left-out rows' alternatives do move the verdict."""
    panel = _counting(case, case.build(CONTROL_SEED, case.models[0]))
    base = numbers(_judge(case, panel, panel.tables))
    moved = [numbers(_judge(case, panel, perturb(case, panel, panel.outside, mode))) != base for mode in MODES]
    assert any(moved), "counted, the left-out rows still move nothing: the invariance test would be vacuous"


#: The claims whose judge counts every model (or cell) it is given: no mixed panel to simulate.
EXCLUDE_NOTHING = {
    "lrd.architecture": "every model counted: the kind column is the grouping compared (a third kind gives "
                        "'not two kinds', no test)",
    "lrd.final_layer": "every model counted: the kind column is the grouping compared",
    "lrd.selection": "every model with every score and a downstream score counted (orderings within kind)",
    "lrd.selection_strongest": "every model with every score and a downstream score counted",
    "cosine.theory": "a demonstration on the book's toy network: no panel",
    "cosine.olmo": "no table: the panel has no OLMo",
}


def test_every_claim_is_classified():
    """Each claim is either covered above (its judge leaves some models or cells out) or listed as
    excluding nothing: a new claim must be placed in one or the other."""
    from lrd.verdicts import CLAIMS

    covered = {c.claim for c in CASES}
    assert not covered & set(EXCLUDE_NOTHING)
    assert covered | set(EXCLUDE_NOTHING) == set(CLAIMS)


# ---- an out-of-scope model never stops the judge -----------------------------------------------------

@pytest.mark.parametrize("claim, choices", [("skean.choice", {}), ("skean.gain", {"scope": SKEAN_LLM_SCOPE})],
                         ids=["skean.choice", "skean.gain[llm scope]"])
def test_an_out_of_scope_model_whose_last_layer_scores_zero_is_shown_and_never_stops_the_judge(claim, choices):
    panel = _skean(claim, choices)(0, "edge")
    base = numbers(judge(claim, panel.tables, **panel.choices))
    results = panel.tables["results"].copy()
    encoder = results.loc[results["kind"] != "decoder", "model"].iloc[0]
    last = ((results["model"] == encoder) & results["measurement"].astype(str).str.startswith("score")
            & np.isclose(results["depth"].to_numpy(dtype=float), 1.0))
    results.loc[last, "value"] = 0.0
    assert numbers(judge(claim, {**panel.tables, "results": results}, **panel.choices)) == base


# ---- the chance columns: the left-out pairs' chance values, not only their measurements ---------------

#: What a left-out pair's chance row may show while it stays left out: its p just above ``alpha``,
#: 1, anywhere in (alpha, 1], or unmeasured (NaN: ``p <= alpha`` is False); its accuracy, chance
#: and (cosine) ``p_min_chance`` anything (huge, negative, heavy-tailed, NaN).
CHANCE_MODES = ("just above", "certain chance", "uniform", "unmeasured")
CHANCE_CASES = [c for c in CASES if c.chance is not None]
_CHANCE_IDS = [c.claim for c in CHANCE_CASES]


def perturb_chance(case: Case, panel: Panel, tables: dict, mode: str, seed: int = 0) -> dict:
    """``tables`` with the chance rows of the left-out pairs (``panel.chance_out``) set to ``mode``
    (:data:`CHANCE_MODES`); a pair stays not above chance (``flag`` False where the table has one)."""
    spec, rng = case.chance, np.random.default_rng(seed)
    frame = tables[spec.table].copy()
    hit = panel.chance_out(spec.table, frame)
    assert hit.any(), "no chance row of a left-out pair"
    n, alpha = int(hit.sum()), panel.choices.get("alpha", ALPHA)
    p, other = {"just above": (np.nextafter(alpha, 1.0), 1e6), "certain chance": (1.0, -1e6),
                "uniform": (alpha + (1 - alpha) * (1 - rng.random(n)), rng.standard_cauchy(n) * 1e3),
                "unmeasured": (np.nan, np.nan)}[mode]
    frame[spec.p] = frame[spec.p].astype(float)
    frame.loc[hit, spec.p] = p
    for col in spec.values:
        frame[col] = frame[col].astype(float)
        frame.loc[hit, col] = other
    if spec.flag is not None:
        frame.loc[hit, spec.flag] = False
    return {**tables, spec.table: frame}


def cross_chance(case: Case, panel: Panel, tables: dict, p: float) -> dict:
    """``tables`` with the left-out pairs' chance p set to ``p`` (at most alpha: above chance)."""
    spec = case.chance
    frame = tables[spec.table].copy()
    hit = panel.chance_out(spec.table, frame)
    frame.loc[hit, spec.p] = p
    if spec.flag is not None:
        frame.loc[hit, spec.flag] = True
    return {**tables, spec.table: frame}


def _chance_draws(case: Case) -> list[tuple[int, str]]:
    """The draws of the chance test: for the pruning claims the draw with per-item outcomes and one
    without (the per-item tests are slow); for the cosine claims an edge, a null and, where the
    claim has one, a power draw."""
    if case.claim.startswith("lrd.pruning"):
        return [(SEEDS[0], "edge"), (CONTROL_SEED, "edge")]
    return [(SEEDS[0], "edge"), (CONTROL_SEED, "null"), *([(POWER_SEED, "power")] if _has_power(case) else [])]


@pytest.mark.parametrize("case", CHANCE_CASES, ids=_CHANCE_IDS)
def test_left_out_pairs_chance_values_never_move_the_verdict(case):
    """A pair left out by measured chance may show any chance value that keeps it out (any p above
    alpha, any accuracy and chance), together with any measurement (MODES): the verdict's numbers
    do not move."""
    for seed, model in _chance_draws(case):
        panel = case.build(seed, model)
        base = numbers(_judge(case, panel, panel.tables))
        for k, mode in enumerate(CHANCE_MODES):
            measured = MODES[k % len(MODES)] if k else None  # the first: the chance values alone
            tables = perturb(case, panel, panel.outside, measured, seed) if measured else panel.tables
            again = numbers(_judge(case, panel, perturb_chance(case, panel, tables, mode, seed)))
            assert again == base, f"{model} seed {seed}, chance {mode}, measurements {measured}: {again} != {base}"


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@pytest.mark.parametrize("case", CHANCE_CASES, ids=_CHANCE_IDS)
def test_chance_crossing_below_alpha_counts_the_left_out_pairs(case):
    """Mutation control of the chance columns: the same pairs, their chance p moved to alpha itself
    (the filter's bound, ``p <= alpha``) or far below, count, and their measurements then move the
    verdict; so the test above would fail if the judge (or the chapter's step) ignored p."""
    panel = case.build(*((SEEDS[0], "edge") if case.control == "per_model" else (CONTROL_SEED, case.models[0])))
    alpha = panel.choices.get("alpha", ALPHA)
    for p in (alpha, 1e-3):
        crossed = cross_chance(case, panel, panel.tables, p)
        base = _judge(case, panel, crossed)
        moved = []
        for mode in MODES:
            v = _judge(case, panel, cross_chance(case, panel, perturb(case, panel, panel.outside, mode), p))
            moved.append(v.per_model != base.per_model if case.control == "per_model" else numbers(v) != numbers(base))
        assert any(moved), f"at p_chance {p} the left-out pairs still move nothing"


# ---- lrd.complementarity: the models it cannot correlate, said -----------------------------------------

def test_complementarity_says_which_models_it_left_out():
    """The model whose NRS curve is constant on every task is left out of the test over models, and
    the evidence says so (how many, which); the test's numbers are those of the panel without it,
    and the per-model count holds it as not below the margin (p 1: parts missing)."""
    panel = _complementarity(SEEDS[0], "edge")
    mixed = judge("lrd.complementarity", panel.tables)
    corr = panel.tables["correlations"]
    alone = judge("lrd.complementarity", {"correlations": corr[corr["model"] != FLAT]})
    assert "1 model left out of the test over models" in mixed.evidence and FLAT in mixed.evidence
    assert "left out" not in alone.evidence
    assert {f: v for f, v in numbers(mixed).items() if f != "per_model"} == \
        {f: v for f, v in numbers(alone).items() if f != "per_model"}
    assert mixed.per_model[1] == alone.per_model[1] + 1 and mixed.per_model[0] <= alone.per_model[0]
    n = corr["model"].nunique() - 1
    assert f"over {n} models" in mixed.evidence


def _constant_curve_results(flat_tasks: int, n_models: int = 6, n_tasks: int = 3, seed: int = 0) -> pd.DataFrame:
    """Per-layer family curves (12 transitions) of ``n_models`` models on ``n_tasks`` tasks, the
    last model's NRS curve constant on its first ``flat_tasks`` tasks."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_models):
        for j in range(n_tasks):
            for family, measurement in FAMILY_CURVES.items():
                n = 13 if family == "GFMI" else 12  # GFMI per layer, the others per transition
                values = rng.normal(size=n)
                if family == "NRS" and i == n_models - 1 and j < flat_tasks:
                    values = np.full(n, 0.25)
                rows += [{"model": f"m{i}", "task": f"t{j}", "measurement": measurement,
                          "layer": l + (0.0 if family == "GFMI" else 0.5), "value": float(v)}
                         for l, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_complementarity_a_constant_curve_from_the_chapter_s_tables():
    """End to end (family_correlations, as the chapter calls it): a curve constant on every task
    of a model leaves it out of the test, said in the evidence, and its other curves' values move
    no number of the test; constant on one task only, the model stays and only that task's
    correlations with the constant curve are skipped."""
    every = _constant_curve_results(3)
    v = judge("lrd.complementarity", {"correlations": family_correlations(every)})
    assert "1 model left out of the test over models" in v.evidence and "m5" in v.evidence
    assert "over 5 models" in v.evidence and "6 of 54 correlations skipped" in v.evidence
    other = every.copy()
    hit = ((other["model"] == "m5") & (other["measurement"] != FAMILY_CURVES["NRS"])).to_numpy()
    other.loc[hit, "value"] = np.random.default_rng(9).normal(size=int(hit.sum())) * 1e3
    again = judge("lrd.complementarity", {"correlations": family_correlations(other)})
    assert numbers(again) == numbers(v)
    one = judge("lrd.complementarity", {"correlations": family_correlations(_constant_curve_results(1))})
    assert "left out" not in one.evidence and "over 6 models" in one.evidence
    assert "2 of 54 correlations skipped" in one.evidence


# ---- lrd.task: the text groups of a task the chapter leaves out ------------------------------------------

def test_task_groups_of_a_left_out_task_never_change_the_verdict_or_its_words():
    """The judge reads ``groups`` (scores on disjoint groups of each task's texts) only for the tasks
    of the ``scores`` it is given (after the chapter's equal_sample_tasks): the groups of the task
    measured on fewer texts change neither the numbers nor the words (the note's count of models
    whose datasets differ beyond the texts' sampling), whatever they show. Mutation control: that
    task measured on as many texts is kept, and its groups then move the count."""
    case = next(c for c in CASES if c.claim == "lrd.task")
    panel = _task(SEEDS[0], "edge", groups=True)
    base = _judge(case, panel, panel.tables)
    assert "differ beyond the sampling of texts" in base.note
    for mode in ("huge+", "noise"):
        again = _judge(case, panel, perturb(case, panel, panel.outside, mode))
        assert (numbers(again), again.evidence, again.note) == (numbers(base), base.evidence, base.note), mode
    kept = _counting(case, panel)
    assert _judge(case, kept, perturb(case, kept, panel.outside, "huge+")).note != _judge(case, kept, kept.tables).note
