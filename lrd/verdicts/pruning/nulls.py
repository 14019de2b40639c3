"""The pruning claims' null and effect models (:mod:`lrd.verdicts.calibration`): simulated changes
tables with each claim at its null boundary, at its edge and at the assumed effect; their designs in
words are :func:`lrd.verdicts.wording.pruning.null_panels`'s."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.pruning.changes import DEFAULT_MARGIN
from lrd.verdicts.pruning.judges import (judge_pruning_frenet, judge_pruning_gfmi_median, judge_pruning_gfmi_only,
                                         judge_pruning_nrs)
from lrd.verdicts.spec import NullModel
from lrd.verdicts.wording.pruning import null_panels

__all__ = ["GFMI_ONLY_NULL", "GFMI_MEDIAN_NULL", "FRENET_NULL", "NRS_NULL"]

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
#: The pruning nulls' default design, when no executed chapter gives one: larger than the default
#: book's (which prunes too few models for a sign-flip test over models to reach p <= 0.05, so its
#: verdicts are "not testable"); the appendix simulates at the executed chapter's count of pruned
#: models (``lrd.book.designs``), where false "reproduced" and the power may be 0 by construction.
_DESIGN = {"n_models": _N_MODELS}
_PANELS = null_panels(n_tasks=len(_TASKS), seeds=_SEEDS, margin=_M, lead=_LEAD)
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
    effect=_edge({("GFMI", b): _M for b in _HEAVY} | {(r, b): 0.0 for r in ("Frenet (velocity)", "NRS") for b in _HEAVY}),
    power_effect=_edge({("GFMI", b): _LEAD for b in _HEAVY}), design=_DESIGN, **_PANELS["lrd.pruning_gfmi_only"])
GFMI_MEDIAN_NULL = NullModel(
    _boundary([
        {("GFMI", o): _FAR for o in _BUDGETS} | {(r, o): (_FAR if (r, o) == (other, b) else 0.0)
                                                for r in ("Frenet (velocity)", "NRS") for o in _BUDGETS}
        for other in ("Frenet (velocity)", "NRS") for b in _BUDGETS]), judge_pruning_gfmi_median,
    effect=_AT_RANDOM, power_effect=_edge({("GFMI", b): _LEAD for b in _BUDGETS}), design=_DESIGN,
    **_PANELS["lrd.pruning_gfmi_median"])
FRENET_NULL = NullModel(
    _boundary([
        {("Frenet (velocity)", b): -_FAR for b in _BUDGETS[1:]},  # Frenet = random at the lightest budget
        {("Frenet (velocity)", _BUDGETS[0]): _FAR} | {("Frenet (velocity)", b): _M for b in _BUDGETS[1:]},
    ]), judge_pruning_frenet,
    effect=_edge({("Frenet (velocity)", _BUDGETS[0]): _M}),
    power_effect=_edge({("Frenet (velocity)", _BUDGETS[0]): _LEAD}), design=_DESIGN, **_PANELS["lrd.pruning_frenet"])
NRS_NULL = NullModel(
    _boundary([{("NRS", o): (_M if o == b else -_FAR) for o in _BUDGETS} for b in _BUDGETS]),
    judge_pruning_nrs, effect=_AT_RANDOM, power_effect=_AT_RANDOM, design=_DESIGN, **_PANELS["lrd.pruning_nrs"])
