"""What ``lrd report`` says about one model, computed by the chapters' own units.

A report is no second implementation: it declares the units of four chapters for one model
(:func:`report_units`; :mod:`lrd.units.registry`), runs them through the same cache
(:func:`lrd.units.base.run_unit`), gathers their records with each chapter's own tables function,
and reduces those tables to a practitioner's answers with pure functions (one per section):

* :func:`layer_answer` -- which layer to embed from (``mid_layer``'s units: Skean et al. 2025);
* :func:`block_answer` -- which blocks can go (``selection_and_pruning``'s pruning units);
* :func:`movement_answer` -- how the representation moves (``lrd_families``: Jiang et al. 2026;
  ``mid_layer``'s prompt entropy);
* :func:`aggregation_answer` -- what layer aggregation buys (``cayley_aggregation``'s task
  scores: Ulanovski et al. 2026).

A section whose units fail (e.g. a model the removal code cannot handle) is reported with the
reason; the other sections are still computed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

#: The chapters a report reads, by section.
SECTIONS = {"layers": "mid_layer", "blocks": "selection_and_pruning", "movement": "lrd_families",
            "aggregation": "cayley_aggregation"}

#: The profile of ``notebooks/profiles.yml`` a report runs at unless told otherwise: the
#: chapters' own parameters with smaller sizes, so that a small model's report is quick cold.
DEFAULT_PROFILE = "report"

#: Methods of the aggregation section (the chapter's names): the baselines and the two encoders.
AGGREGATION_METHODS = ("last", "best", "fc", "cayley")

#: The LRD prune rules (label-free signals of Jiang et al. 2026, Sec. 5).
LRD_RULES = ("Frenet (velocity)", "NRS", "GFMI")

#: How the summary names a task type.
TASK_TYPE_NAMES = {"classification": "Classification", "clustering": "Clustering", "sts": "STS",
                   "pair_classification": "Pair classification"}

#: Layer-wise measurements drawn in the movement section.
MOVEMENT_MEASUREMENTS = ("velocity", "NRS (adjusted)", "GFMI")


# --------------------------------------------------------------------------------------------
# Declaring and computing the units


def chapter_parameters(chapter: str, model: str, *, profile: str = DEFAULT_PROFILE, parameters: dict | None = None,
                       device: str = "cpu") -> dict:
    """One chapter's parameters for a report on ``model``: the profile's values, then the given
    ``parameters`` that the chapter knows (of their types: :func:`lrd.book.notebooks.coerce_parameters`),
    with ``models`` set to ``[model]`` (and the pruned model, for the blocks section, unless its
    config gives it fewer than :data:`MIN_PRUNED_BLOCKS` blocks: the section then says it does
    not apply, :func:`block_answer`, instead of the chapters' checks refusing the report). A task
    option (``token_task``, ``aug_task``, ``norm_task``) that is not among the tasks becomes the
    first task, as the chapters require. The value rules are checked by
    :func:`report_parameters`; the names by :func:`lrd.report.check_parameters`."""
    from lrd.book.notebooks import coerce_parameters, default_parameters, profile as profile_of

    defaults = default_parameters(chapter)
    given = {**profile_of(profile, chapter), **{k: v for k, v in (parameters or {}).items() if k in defaults}}
    values, _ = coerce_parameters(chapter, given, defaults=defaults)  # a task string is a list below
    values["models"] = [model]
    if "device" in defaults and "device" not in (parameters or {}):
        values["device"] = device
    if chapter == "selection_and_pruning":
        values["pruning_models"] = [model] if prunable(model) else []
    tasks = values.get("tasks", defaults.get("tasks"))
    for option in ("token_task", "aug_task", "norm_task"):
        if option in defaults and tasks and values.get(option, defaults[option]) not in tasks:
            values[option] = tasks[0]
    return values


#: The fewest blocks a pruned model has: pruning removes blocks and keeps at least one.
MIN_PRUNED_BLOCKS = 2


def prunable(model: str) -> bool:
    """Whether the blocks section applies to ``model``: ``False`` when its config gives fewer than
    :data:`MIN_PRUNED_BLOCKS` blocks (:func:`lrd.book.parameters.model_blocks`), else ``True``."""
    from lrd.book.parameters import model_blocks

    blocks = model_blocks(model)
    return blocks is None or blocks >= MIN_PRUNED_BLOCKS


def not_prunable_text(n_blocks: int) -> str:
    """Why the blocks section does not apply to a model of ``n_blocks`` blocks."""
    return (f"the model has {n_blocks} block{'' if n_blocks == 1 else 's'}; pruning removes blocks and keeps at "
            f"least one, so it needs {MIN_PRUNED_BLOCKS} or more: this section does not apply to it")


def report_parameters(model: str, *, profile: str = DEFAULT_PROFILE, parameters: dict | None = None,
                      device: str = "cpu") -> dict[str, dict]:
    """chapter -> the checked parameters of each section's chapter for ``model``
    (:func:`chapter_parameters`, then the chapters' own checks, :func:`lrd.book.notebooks.check_chapters`,
    as ``lrd run``'s); a ``ValueError`` naming every bad value."""
    from lrd.book.notebooks import check_chapters

    plan, _ = check_chapters({c: chapter_parameters(c, model, profile=profile, parameters=parameters, device=device)
                              for c in SECTIONS.values()})
    return plan


def report_units(model: str, *, profile: str = DEFAULT_PROFILE, parameters: dict | None = None,
                 device: str = "cpu", plan: dict[str, dict] | None = None) -> dict[str, list]:
    """The units of every section for ``model``: section -> list of :class:`lrd.units.base.Unit`.

    Parameters are checked by the chapters' own rules (:func:`report_parameters`) before any
    model loads, unless ``plan`` gives them checked. The aggregation section keeps only the
    per-task scores (no ablation, no few-shot runs).
    """
    from lrd.units.registry import units

    if plan is None:
        plan = report_parameters(model, profile=profile, parameters=parameters, device=device)
    out = {}
    for section, chapter in SECTIONS.items():
        declared = units(chapter, plan[chapter], checked=True)
        if section == "aggregation":
            declared = [u for u in declared if u.name == "cayley_task_scores"]
        out[section] = declared
    return out


@dataclass
class Computed:
    """The records of one model's units by section, or the error that stopped a section."""

    model: str
    records: dict[str, list] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    statuses: dict[str, list[str]] = field(default_factory=dict)


def compute_report_units(model: str, planned: dict[str, list], *, log: Callable[[str], None] | None = None,
                         root=None) -> Computed:
    """Run every section's units (each from the cache or computed and cached), one model load.

    A unit that raises stops its section only: the error is kept for the page, and the other
    sections are still computed. ``log`` receives one line per unit (what the CLI shows).
    """
    from lrd.units.base import ModelSlot, run_unit

    log = log or (lambda line: None)
    done = Computed(model)
    slot = ModelSlot()
    try:
        for section, todo in planned.items():
            t0, records, statuses = time.perf_counter(), [], []
            try:
                for i, unit in enumerate(todo, 1):
                    t1 = time.perf_counter()
                    if not unit.is_cached(root):
                        log(f"{section} {i}/{len(todo)}: {unit.label} computing ...")
                    value, status = run_unit(unit, slot, root=root)
                    records.append(value)
                    statuses.append(status)
                    log(f"{section} {i}/{len(todo)}: {unit.label} {status} ({time.perf_counter() - t1:.1f} s)")
            except Exception as err:  # reported on the page; the other sections go on
                done.errors[section] = f"{type(err).__name__}: {err}"
                log(f"{section}: FAILED ({done.errors[section]})")
            else:
                done.records[section] = records
                done.statuses[section] = statuses
            done.seconds[section] = time.perf_counter() - t0
    finally:
        slot.clear()
    return done


# --------------------------------------------------------------------------------------------
# The sections: pure reductions of the chapters' tables


def _half_gains(results: pd.DataFrame) -> dict[str, list[float]]:
    r"""Per task, the gain estimated on each half alone: the layer chosen on half 1 scored on half 2
    against the last layer on half 2, :math:`s^{(2)}_{j_1} - s^{(2)}_L`, and the converse. Two
    out-of-sample estimates whose spread shows how much a task's gain moves with its rows."""
    out = {}
    wide = results[results["measurement"].isin(["score half 1", "score half 2"])].pivot_table(
        index=["task", "layer"], columns="measurement", values="value")
    for task, part in wide.groupby(level="task", sort=False):
        s1, s2 = part["score half 1"].to_numpy(), part["score half 2"].to_numpy()
        pool = np.arange(1, len(s1) - 1)
        j1, j2 = pool[s1[pool].argmax()], pool[s2[pool].argmax()]
        out[task] = [float(s2[j1] - s2[-1]), float(s1[j2] - s1[-1])]
    return out


def layer_answer(results: pd.DataFrame, task_types: dict[str, str]) -> dict:
    r"""Which layer to embed from, per task and per task type (``mid_layer``'s results).

    Per task, the best intermediate layer **cross-fitted** (chosen on one half of the evaluation
    rows, scored on the other, swapped and averaged: :func:`lrd.verdicts.layer_choice.cross_fitted_gain`)
    against the last layer. Per task type, the mean gain over its tasks with a 95% t-interval
    (over tasks, which are not independent samples: a spread, not a test). The label-free choice
    is DiME's (:func:`lrd.verdicts.layer_choice.label_free_choice`): one layer for every task,
    and how often it agrees with the cross-fitted choice (its layer is one of the two halves' choices).

    Returns
    -------
    dict with ``tasks`` (one dict per task), ``types`` (per task type), ``label_free`` and
    ``curves`` (the per-layer scores, for the figure).
    """
    from lrd.verdicts.layer_choice import cross_fitted_gain, label_free_choice
    from lrd.verdicts.stats import mean_interval

    gains = cross_fitted_gain(results)
    halves = _half_gains(results)
    chance = results[results["measurement"] == "chance"].groupby("task")["value"].mean().astype(float).to_dict()
    tasks = [{"task": d["task"], "type": task_types.get(d["task"], "?"),
              "layers chosen (half 1, half 2)": [int(d["layer chosen on half 1"]), int(d["layer chosen on half 2"])],
              "best (cross-fitted)": float(d["best (cross-fitted)"]), "last": float(d["last"]), "gain": float(d["gain"]),
              "gain on each half": halves[d["task"]], "chance": chance.get(d["task"])}
             for d in gains.to_dict("records")]
    types = []
    for kind in dict.fromkeys(t["type"] for t in tasks):
        part = [t for t in tasks if t["type"] == kind]
        g = np.array([t["gain"] for t in part])
        each = [x for t in part for x in t["gain on each half"]]
        types.append({"type": kind, "tasks": [t["task"] for t in part], "mean gain": float(g.mean()),
                      "interval": mean_interval(g) if len(g) > 1 else None, "half estimates": [min(each), max(each)],
                      "typical depth": float(np.mean([np.mean(t["layers chosen (half 1, half 2)"]) for t in part]))})
    label_free = None
    if (results["measurement"] == "DiME").any():
        choice = label_free_choice(results, metric="DiME").iloc[0]
        chosen = int(choice["chosen layer"])
        agree = [chosen in t["layers chosen (half 1, half 2)"] for t in tasks]
        label_free = {"metric": "DiME", "layer": chosen, "depth": float(choice["chosen depth"]),
                      "score": float(choice["chosen"]), "last": float(choice["last"]),
                      "agrees on": int(sum(agree)), "of tasks": len(agree)}
    scores = results[results["measurement"] == "score"]
    n_layers = int(scores["layer"].max()) if len(scores) else 0
    curves = {task: part.sort_values("layer")["value"].astype(float).tolist()
              for task, part in scores.groupby("task", sort=False)}
    return {"tasks": tasks, "types": types, "label_free": label_free, "n_layers": n_layers, "curves": curves}


def block_answer(changes: pd.DataFrame, plan: pd.DataFrame | None, n_blocks: int, mc_items: dict | None = None) -> dict:
    r"""Which blocks can go (``selection_and_pruning``'s units for this model).

    For each prune rule and budget (share of blocks removed): the change of the downstream score
    (pruned minus intact, mean over tasks) and random orders' (the seeds' mean), and their
    difference. The removal sets of the accuracy and cosine rules and of the best LRD rule; the
    best LRD rule is chosen on these same tasks (largest mean difference from random over the
    budgets), so its advantage is optimistic: a description, not a test. The agreement of the
    cosine rule with the accuracy rule is the Jaccard overlap of their removal sets per budget
    (1: a cosine-based pruning tool removes the blocks accuracy would).

    A decoder's downstream score is multiple-choice accuracy on few items (``mc_items``): its
    intact accuracy is given with its measured chance (labels permuted over items,
    :func:`lrd.verdicts.pruning.chance_table`) and the step one item makes, so that a change can
    be read against them.
    """
    from lrd.verdicts.pruning import model_changes

    if changes.empty and n_blocks < MIN_PRUNED_BLOCKS:
        raise ValueError(not_prunable_text(n_blocks))
    if changes.empty:
        raise ValueError("no pruning changes: the model was not pruned (pruning_models)")
    table = model_changes(changes)
    rows = [{"rule": d["rule"], "fraction": float(d["fraction"]), "change": float(d["change"]),
             "random change": float(d["random change"]), "vs random": float(d["vs random"])}
            for d in table.to_dict("records")]
    lrd = [r for r in LRD_RULES if r in set(table["rule"])]
    best = max(lrd, key=lambda r: table.loc[table["rule"] == r, "vs random"].mean()) if lrd else None
    sets: dict[str, dict[str, list[int]]] = {}
    overlap = []
    if plan is not None and not plan.empty:
        for rule in ["accuracy (calibration)", "cosine (BI)", best]:
            if rule is None:
                continue
            part = plan[plan["rule"] == rule].drop_duplicates("fraction")  # deterministic: one set per budget
            if not part.empty:
                sets[rule] = {f"{float(f):.0%}": sorted(int(b) for b in s)
                              for f, s in zip(part["fraction"], part["removed"])}
        if {"accuracy (calibration)", "cosine (BI)"} <= set(sets):
            for budget, acc in sets["accuracy (calibration)"].items():
                cos = sets["cosine (BI)"].get(budget, [])
                union = set(acc) | set(cos)
                overlap.append({"budget": budget, "jaccard": len(set(acc) & set(cos)) / len(union) if union else 1.0})
    ks = {}
    if plan is not None and not plan.empty:
        ks = {f"{float(f):.0%}": int(k) for f, k in zip(plan["fraction"], plan["k"])}
    for r in rows:
        r["blocks removed"] = ks.get(f"{r['fraction']:.0%}")
    accuracy = None
    if mc_items:
        from lrd.verdicts.pruning import chance_table

        accuracy = [{k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in row.items()
                     if k != "model"} | {"step": 1 / row["items"]}
                    for row in chance_table({"m": mc_items}).to_dict("records")]
        for row in accuracy:
            row["items"], row["above chance"] = int(row["items"]), bool(row["above chance"])
    return {"n_blocks": n_blocks, "multiple choice": accuracy, "rules": rows, "best LRD rule": best, "removal sets": sets,
            "cosine vs accuracy": overlap}


def movement_answer(family: pd.DataFrame, scores: pd.DataFrame, mid: pd.DataFrame | None,
                    panel: pd.DataFrame | None = None) -> dict:
    """How the representation moves (``lrd_families``' profiles; ``mid_layer``'s prompt entropy).

    The per-layer curves of :data:`MOVEMENT_MEASUREMENTS` averaged over tasks, the prompt
    entropy curve, the model-level LRD scores (mean over tasks), and, for each score, where the
    model sits among the panel models whose results are cached at the same parameters (rank
    1 = highest; ``panel``: one row per panel model and task, as ``scores``).
    """
    curves = {}
    for m in MOVEMENT_MEASUREMENTS:
        part = family[family["measurement"] == m]
        if len(part):
            mean = part.groupby("layer")["value"].mean()
            curves[m] = {"layers": [int(x) for x in mean.index], "values": [float(v) for v in mean]}
    if mid is not None and (mid["measurement"] == "prompt entropy").any():
        mean = mid[mid["measurement"] == "prompt entropy"].groupby("layer")["value"].mean()
        curves["prompt entropy"] = {"layers": [int(x) for x in mean.index], "values": [float(v) for v in mean]}
    numeric = [c for c in scores.columns if c not in ("model", "kind", "task", "N")
               and pd.api.types.is_numeric_dtype(scores[c])]
    own = scores[numeric].mean()
    position = {}
    if panel is not None and len(panel):
        others = panel.groupby("model")[numeric].mean()
        for c in numeric:
            values = pd.concat([others[c], pd.Series({"this model": own[c]})])
            position[c] = {"rank": int((values > own[c]).sum()) + 1, "of": len(values),
                           "panel": {m: float(v) for m, v in others[c].items()}}
    return {"curves": curves, "scores": {c: float(own[c]) for c in numeric}, "panel position": position}


def aggregation_answer(scores: pd.DataFrame, methods: Sequence[str] = AGGREGATION_METHODS) -> dict:
    """What aggregation buys (``cayley_aggregation``'s task scores for this model).

    Per task and method the test score, mean over seeds with its range; the Cayley and FC
    encoders' gains over the last and the best single layer (mean over tasks).
    """
    have = [m for m in methods if m in set(scores["method"])]
    per = scores[scores["method"].isin(have)].groupby(["task", "method"])["score"].agg(["mean", "min", "max"])
    tasks = {}
    for (task, method), r in per.iterrows():
        tasks.setdefault(task, {})[method] = {"mean": float(r["mean"]), "min": float(r["min"]), "max": float(r["max"])}
    gains = {}
    for enc in ("cayley", "fc"):
        for base in ("last", "best"):
            d = [t[enc]["mean"] - t[base]["mean"] for t in tasks.values() if enc in t and base in t]
            if d:
                gains[f"{enc} - {base}"] = float(np.mean(d))
    return {"methods": have, "tasks": tasks, "gains": gains}


# --------------------------------------------------------------------------------------------
# One model's report


def _section(answers: dict, errors: dict, name: str, build: Callable[[], Any]) -> None:
    try:
        answers[name] = build()
    except Exception as err:  # said on the page instead of the section
        errors[name] = f"{type(err).__name__}: {err}"


def _panel_scores(chapter_params: dict, model: str, *, root=None) -> pd.DataFrame | None:
    """``lrd_families`` model-level scores of the offline panel models whose units are cached at
    these parameters (nothing is computed)."""
    from lrd.engine.packs import MODEL_PACKS
    from lrd.units.base import load_result
    from lrd.units.lrd_families import lrd_families_units

    from lrd.book.notebooks import default_parameters

    params = {**default_parameters("lrd_families"), **chapter_params}
    rows = []
    for other in MODEL_PACKS:
        if other == model:
            continue
        todo = lrd_families_units(models=[other], tasks=params["tasks"], n_samples=params["n_samples"],
                                  pooling=params["pooling"], k=params["k"], variance=params["variance"],
                                  dtype=params["dtype"], task_groups=params["task_groups"])
        if all(u.is_cached(root) for u in todo):  # the same tasks as this model's, or none
            got = [load_result(u, u.key(), root) for u in todo]
            rows += [g.scores for g in got] if all(g is not None for g in got) else []
    return pd.DataFrame(rows) if rows else None


def model_report(model: str, computed: Computed, *, profile: str = DEFAULT_PROFILE, parameters: dict | None = None,
                 root=None) -> dict:
    """Every section's answer for one model from its computed records (JSON-ready)."""
    from lrd.engine.tasks import task_type
    from lrd.units.cayley_aggregation import TaskScores
    from lrd.units.lrd_families import family_tables
    from lrd.units.mid_layer import mid_layer_tables
    from lrd.units.selection_and_pruning import selection_tables

    answers: dict[str, Any] = {}
    errors = {k: f"its units failed: {v}" for k, v in computed.errors.items()}
    rec = computed.records
    mid = mid_layer_tables([model], rec["layers"]) if "layers" in rec else None
    facts = {}
    if mid is not None:
        facts = {"kind": mid.kinds[model], "source": mid.sources[model]}
        tasks = list(dict.fromkeys(mid.results["task"]))
        _section(answers, errors, "layers", lambda: layer_answer(mid.results, {t: task_type(t) for t in tasks}))
    if "blocks" in rec:
        sel = selection_tables([model], rec["blocks"])
        _section(answers, errors, "blocks", lambda: block_answer(sel.changes, sel.plans.get(model), sel.n_blocks[model],
                                                                 sel.mc_items.get(model)))
    if "movement" in rec:
        fam = family_tables(rec["movement"])
        fam_params = chapter_parameters("lrd_families", model, profile=profile, parameters=parameters)
        _section(answers, errors, "movement", lambda: movement_answer(
            fam.results, fam.scores, mid.results if mid is not None else None,
            _panel_scores(fam_params, model, root=root)))
    if "aggregation" in rec:
        scores = pd.concat([r.scores for r in rec["aggregation"] if isinstance(r, TaskScores)], ignore_index=True)
        _section(answers, errors, "aggregation", lambda: aggregation_answer(scores))
    return {"model": model, **facts, "sections": answers, "missing": errors,
            "seconds": {k: round(v, 1) for k, v in computed.seconds.items()},
            "cached": {k: v.count("cached") for k, v in computed.statuses.items()},
            "summary": summary_lines(answers)}


def summary_lines(answers: dict) -> list[str]:
    """The page's summary box: each section's answer in one plain sentence with its uncertainty."""
    from lrd.report.page import fixed

    lines = []
    layers = answers.get("layers")
    if layers:
        for t in layers["types"]:
            low, high = (fixed(x, signed=True) for x in (t["interval"] or t["half estimates"]))
            spread = (f"95% interval over its {len(t['tasks'])} tasks {low} to {high}" if t["interval"] else
                      f"one task; the two halves' estimates {low} and {high}")
            where = f"around layer {t['typical depth']:.0f} of {layers['n_layers']}"
            lines.append(f"{TASK_TYPE_NAMES.get(t['type'], t['type'])} ({', '.join(t['tasks'])}): the best intermediate layer ({where}, "
                         f"chosen on half of the rows, scored on the other half) scores {fixed(t['mean gain'], signed=True)} against "
                         f"the last layer ({spread}).")
        lf = layers["label_free"]
        if lf:
            lines.append(f"Without labels, DiME picks layer {lf['layer']}; it agrees with the labelled choice on "
                         f"{lf['agrees on']} of {lf['of tasks']} tasks.")
    blocks = answers.get("blocks")
    if blocks and blocks["rules"]:
        acc = [r for r in blocks["rules"] if r["rule"] == "accuracy (calibration)"]
        if acc:
            light = min(acc, key=lambda r: r["fraction"])
            heavy = max(acc, key=lambda r: r["fraction"])
            def n(r):
                return f"{r['blocks removed']} of {blocks['n_blocks']} blocks" if r["blocks removed"] else f"{r['fraction']:.0%} of the blocks"

            def change(r, key="change"):
                return fixed(r[key], signed=True)

            text = (f"Dropping {n(light)} by measured accuracy relevance changes the score by {change(light)} "
                    f"(random orders {change(light, 'random change')})")
            if heavy["blocks removed"] != light["blocks removed"]:
                text += f"; {n(heavy)} by {change(heavy)} (random {change(heavy, 'random change')})"
            for mc in blocks.get("multiple choice") or []:
                text += (f" (multiple-choice accuracy on {mc['items']} {mc['task']} items, steps of {fixed(mc['step'])}; "
                         f"intact {fixed(mc['accuracy'])} against a measured chance of {fixed(mc['chance'])}"
                         f"{'' if mc['above chance'] else ', not above chance: the changes are noise'})")
            lines.append(text + ".")
        if blocks["cosine vs accuracy"]:
            j = np.mean([o["jaccard"] for o in blocks["cosine vs accuracy"]])
            lines.append(f"A cosine-based pruner would remove {'mostly the same' if j >= 0.5 else 'different'} blocks "
                         f"(mean overlap with the accuracy rule {j:.2f}, 1 = identical).")
    agg = answers.get("aggregation")
    if agg and agg["gains"]:
        parts = ", ".join(f"{k} {fixed(v, signed=True)}" for k, v in agg["gains"].items())
        lines.append(f"Aggregating layers (mean over tasks, test scores): {parts}.")
    return lines
