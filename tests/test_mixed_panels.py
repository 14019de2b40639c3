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

Two controls show the invariance is not vacuous: the same alternatives applied to an in-scope
model move the numbers (negative control), and so do the left-out rows' alternatives when a rule
counts them (mutation control: the scope rule's other value, a wider ``params_range`` and no
``kinds``, ``alpha`` above the pairs' ``p_chance``, no ``informative`` column or chance table).

How each claim leaves models out (see each case's ``how``): the Skean claims by the rule
``scope`` (:func:`lrd.verdicts.specifications.skean2025.embedder_rule`: skean.metrics_track and
skean.choice by default, skean.gain, which counts every model, under its alternative
:data:`lrd.verdicts.claims.SKEAN_LLM_SCOPE`),
skean.valley by kind (neither "encoder" nor "decoder"), the ILSE claims by size and kind
(:func:`lrd.verdicts.fusion.panel.size_scope`: ``params_range`` on ``base_params``, ``kinds`` on
``model_kinds``), the cosine claims by measured chance (model-task pairs with ``p_chance > alpha``),
the LRD pruning claims by the ``informative`` column (pairs not above measured chance) and, for
their per-model count, the pruning chance table; cosine.pruning only in its per-model count (its
test over models reads every pruned decoder's curves, as its specification says). The ILSE
demonstrations (parameters, cayley_efficiency) are checked on hand-built tables (no simulation).
:data:`EXCLUDE_NOTHING` lists the claims whose judge counts everything it is given.

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

SEEDS = (0, 1, 2)
#: The controls' draw: a seed whose panels carry no per-item outcomes (the slow per-model tests).
CONTROL_SEED = SEEDS[1]
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
    one in-scope model's rows (the negative control), and the in-scope panel alone."""

    tables: dict
    outside: Mask
    inside: Mask | None
    reference: dict | None = None
    choices: dict = dataclasses.field(default_factory=dict)


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
        return Panel(tables, out, _models(["m0"]), _drop(tables, out))
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
    return Panel(tables, out, _models(["m0"]), _drop(tables, out))


def _correct_favour(better: str) -> Callable:
    def favour(name, rows, col, sign):
        mine = (rows["rule"] == better).to_numpy()
        return np.where(mine, 1.0, 0.0) if sign > 0 else np.where(mine, 0.0, 1.0)
    return favour


# ---- Jiang et al., pruning: the `informative` column and the pruning chance table -------------------

def _lrd_pruning(claim: str) -> Callable[[int, str], Panel]:
    """A model at chance on every task (a copy of m0's rows) and m7 at chance on t2: their changes
    marked ``informative`` False (pruning.mark_informative), their items' pairs not above chance."""
    def build(seed, model):
        t = simulate(claim, seed=seed, model=model)
        changes = _copy_model(t["changes"], "m0", [AT_CHANCE])
        below = {(AT_CHANCE, "t1"), (AT_CHANCE, "t2"), ("m7", "t2")}
        pairs = zip(changes["model"], changes["task"])
        changes = changes.assign(informative=[p not in below for p in pairs])
        models = ["m0", "m1", "m7", AT_CHANCE]  # the per-item tests are slow: four models carry items
        tasks = list(pd.unique(changes["task"]))
        rng = np.random.default_rng(seed)
        rules = [r for r in pd.unique(changes["rule"])]
        rows = [{"model": m, "task": task, "rule": rule, "seed": s, "fraction": f, "item": i,
                 "correct": int(rng.random() < (0.7 if rule == "GFMI" else 0.6))}
                for m in models for task in tasks for rule in rules
                for s in ((0, 1, 2) if rule == "random" else (-1,))
                for f in sorted(pd.unique(changes["fraction"])) for i in range(12)]
        items = pd.DataFrame(rows)
        chance = pd.DataFrame([{"model": m, "task": task, "items": 12, "accuracy": 0.6, "chance": 0.25,
                                "p": 0.5 if (m, task) in below else 0.001, "above chance": (m, task) not in below}
                               for m in models for task in tasks])
        tables = {**t, "changes": changes, **({"items": items, "chance": chance} if _with_items(seed, model) else {})}
        out = _pairs(below)
        return Panel(tables, out, _models(["m0"]), _drop(tables, out))
    return build


def _rule_favour(rule: str) -> Callable:
    def favour(name, rows, col, sign):
        mine = (rows["rule"] == rule).to_numpy()
        if col == "correct":
            return np.where(mine == (sign > 0), 1.0, 0.0)
        return np.where(mine == (sign > 0), 0.5, -0.5)
    return favour


# ---- the cases ----------------------------------------------------------------------------------------

_SKEAN_COLUMNS = {"results": ("value",)}
_PRUNING_COLUMNS = {"changes": ("change",), "items": ("correct",)}

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
         _cosine("cosine.correlation"), {"agreement": _AGREEMENT}, _agreement_favour),
    Case("cosine.misestimate", "model-task pairs not above measured chance (chance p_chance > alpha)",
         _cosine("cosine.misestimate"), {"agreement": _AGREEMENT, "unrelated": ("misestimated",)}, _agreement_favour),
    Case("cosine.dataset", "task pairs with a task not above measured chance (chance p_chance > alpha)",
         _cosine("cosine.dataset"), {"task_agreement": ("r", "reliability_a", "reliability_b", "r_corrected")},
         _agreement_favour),
    Case("cosine.pruning", "per-model count only: items of pairs not above measured chance (the test over models "
         "reads every pruned decoder's curves)", _cosine_pruning, {"items": ("correct",)},
         _correct_favour("accuracy (calibration)"), control="per_model"),
    *(Case(c, "changes' informative column (pairs not above measured chance); items of pairs not above the "
           "pruning chance table's chance", _lrd_pruning(c), _PRUNING_COLUMNS, _rule_favour(rule))
      for c, rule in (("lrd.pruning_gfmi_only", "GFMI"), ("lrd.pruning_gfmi_median", "GFMI"),
                      ("lrd.pruning_frenet", "Frenet (velocity)"), ("lrd.pruning_nrs", "NRS"))),
]

_IDS = [f"{c.claim}" + ("[ablation out]" if c.claim == "ilse.mapping" and "itself" in c.how else "") for c in CASES]


def _judge(case: Case, panel: Panel, tables: dict):
    return judge(case.claim, tables, **panel.choices)


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_left_out_models_never_move_the_verdict(case):
    """The verdict's numbers on the mixed panel equal the in-scope panel's, whatever the left-out
    rows show (every alternative of MODES), for each seed and simulated model."""
    seeds = SEEDS if case.models != ("fixed",) else (0,)
    for model in case.models:
        for seed in seeds:
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
    if c.startswith("lrd.pruning"):
        tables["changes"] = tables["changes"].drop(columns="informative")
        return dataclasses.replace(panel, tables={k: v for k, v in tables.items() if k != "chance"})
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
    "lrd.task": "every model counted (a block of the within-model permutation)",
    "lrd.complementarity": "every model's correlations counted",
    "lrd.selection": "every model with every score and a downstream score counted (orderings within kind)",
    "lrd.selection_strongest": "every model with every score and a downstream score counted",
    "lrd.selection_llm": "every model of `scores` counted; the chapter passes its decoders only "
                         "(per_model.loc[decoders]); `sources` and `chance` are read for the note only",
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
