"""The chapters' expensive work as cached units: one function call per model (and task).

A **unit** is one call of a plain function of this module, e.g.
``lrd_families_profile(model, task="sst2", n_samples=300, ...)``: it extracts a model's states
for a task and computes that chapter's measurements on them. The chapters call these functions
(through :func:`compute`), and so does ``lrd sweep`` (:mod:`lrd.sweep`) on a Dask cluster;
there is no second implementation. Every unit's result is cached by :mod:`lrd.engine.cache` under a
key of

* the unit's function name and parameters,
* the model's fingerprint (:func:`lrd.engine.models.source_fingerprint`: known from the files for an
  offline key or local folder without loading the model; a hub model is loaded to know it),
* the content of every task the unit reads (:func:`lrd.engine.cache.task_digest`),
* the code: the unit function's source, the source of the same-module helpers it calls and of
  every ``lrd`` module it uses, transitively, plus library versions (:func:`unit_code_digest`),
* the float-noise perturbation ``LRD_PERTURB`` when it is set (:mod:`lrd.engine.perturb`).

So a chapter executed after a sweep (or a second time) loads its units from the cache
without loading any model; any change to the code a unit runs recomputes it. The device is
not part of the key (as for the hidden-state cache): units computed on a GPU worker serve a
chapter executed on a CPU.

Unit functions take the loaded model first and keyword parameters that are JSON values; they
import what they use inside their body or name it at module level (both are seen by
:func:`unit_code_digest`).
"""

from __future__ import annotations

import functools
import gc
import inspect
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from lrd.engine import cache
from lrd.engine.models import LoadedModel, load_model, source_fingerprint
from lrd.engine.perturb import perturbation_level
from lrd.engine.tasks import load_task

#: Modules every unit depends on besides its own code: model loading and tasks.
COMMON_MODULES = ("lrd.engine.models", "lrd.engine.tasks")


# --------------------------------------------------------------------------------------------
# The unit record, its key, and the serial runner


@dataclass(frozen=True)
class Unit:
    """One cached call ``func(load_model(model, device), **params)``.

    Attributes
    ----------
    chapter : str
        The chapter that declares it.
    func : callable
        A unit function of this module.
    model : str
        Offline key, local folder or hub id, as the chapter's parameter gives it.
    params : dict
        Keyword arguments (JSON values); all of them enter the key.
    tasks : tuple of (str, int or None)
        ``(name, n)`` of every task the unit reads with :func:`lrd.load_task`; their content
        enters the key.
    device : str
        Where the model runs; not part of the key.
    """

    chapter: str
    func: Callable
    model: str
    params: dict = field(default_factory=dict)
    tasks: tuple = ()
    device: str = "cpu"

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def label(self) -> str:
        """Human-readable identity: ``lrd_families_profile(minilm, task=sst2)``."""
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items() if k in ("task", "tasks", "variant"))
        return f"{self.name}({self.model}{', ' + shown if shown else ''})"

    def key(self, model_fingerprint: str | None = None) -> str | None:
        """The cache key; None when the model is a hub id not yet loaded (pass its fingerprint)."""
        fp = model_fingerprint or source_fingerprint(self.model)
        if fp is None:
            return None
        payload = {"unit": self.name, "model": fp, "params": self.params,
                   "tasks": [[t, n, _task_digest(t, n)] for t, n in self.tasks], "code": unit_code_digest(self.func)}
        level = perturbation_level()  # LRD_PERTURB: perturbed results are cached apart from exact ones
        return cache.digest({**payload, "perturb": level} if level else payload)

    def is_cached(self, root=None) -> bool | None:
        """Whether the result is in the cache (None when unknown: a hub model not loaded)."""
        key = self.key()
        return None if key is None else cache.contains(self.name, key, root)


@functools.cache
def _task_digest(name: str, n: int | None) -> str:
    return cache.task_digest(load_task(name, n=n))


def _referenced(func: Callable) -> tuple[list[Callable], set[str]]:
    """Same-module functions ``func`` calls by name, and the other lrd modules it uses.

    Names are visited in sorted order, so the helpers come in the same order in every process
    (iterating a set of strings would follow ``PYTHONHASHSEED``).
    """
    helpers, modules = [], set()
    code_names = set(func.__code__.co_names)
    for const in func.__code__.co_consts:  # nested functions and comprehensions
        if isinstance(const, types.CodeType):
            code_names |= set(const.co_names)
    for name in sorted(code_names):
        obj = func.__globals__.get(name)
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith("lrd.") and obj.__name__ != __name__:
                modules.add(obj.__name__)
            continue
        mod = getattr(obj, "__module__", None) or ""
        if mod == func.__module__ and inspect.isfunction(obj) and obj is not func:
            helpers.append(obj)
        elif mod.startswith("lrd") and mod not in (func.__module__, "lrd"):
            modules.add(mod)
    return helpers, modules


@functools.cache
def unit_code_digest(func: Callable) -> str:
    """Hash of the code a unit runs (:func:`lrd.engine.cache.code_digest`).

    The unit function's source, the sources of the helpers of its own module that it calls
    (transitively), and every ``lrd`` module that these import or name, transitively, plus
    :data:`COMMON_MODULES` (model loading, tasks).
    """
    import ast
    import textwrap

    seen, todo, modules = [], [func], set(COMMON_MODULES)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.append(f)
        helpers, mods = _referenced(f)
        todo += helpers
        modules |= mods
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(f)))):  # imports inside the body
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lrd"):
                modules |= {node.module} if node.module != "lrd" else {f"lrd.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                modules |= {a.name for a in node.names if a.name.startswith("lrd.")}
    # joined in name order, not discovery order: the key must not depend on how the walk went
    sources = "\n".join(inspect.getsource(f) for f in sorted(seen, key=lambda f: f.__qualname__))
    return cache.digest([sources, cache.code_digest(_no_op, sorted(modules))])


def _no_op():  # the anchor of code_digest's module walk: lrd.units' own imports are not followed
    pass


_no_op.__module__ = "lrd"


class ModelSlot:
    """Loads models on demand and holds at most one at a time (memory stays bounded).

    A model that fails to load is remembered, so its remaining units fail at once with the
    same error.
    """

    def __init__(self):
        self.name: tuple | None = None
        self.model: LoadedModel | None = None
        self.error: BaseException | None = None

    def get(self, name: str, device: str = "cpu") -> LoadedModel:
        if self.name != (name, device):
            self.clear()
            self.name = (name, device)
            try:
                self.model = load_model(name, device=device)
            except Exception as err:
                self.error = err
        if self.error is not None:
            raise self.error
        return self.model

    def clear(self) -> None:
        self.name, self.model, self.error = None, None, None
        gc.collect()


def run_unit(unit: Unit, slot: ModelSlot | None = None, *, root=None) -> tuple[Any, str]:
    """The unit's result, from the cache or computed and cached; and ``"cached"`` or ``"computed"``.

    The model is loaded (through ``slot``, which keeps it for the next unit of the same
    model) only when the result must be computed, or to learn a hub model's fingerprint.
    """
    slot = slot or ModelSlot()
    key = unit.key()
    if key is None:
        key = unit.key(slot.get(unit.model, unit.device).fingerprint)
    value = cache.load(unit.name, key, root, default=None)
    if value is not None:
        return value, "cached"
    model = slot.get(unit.model, unit.device)
    value = unit.func(model, **unit.params)
    cache.save(unit.name, key, value, root)
    return value, "computed"


def compute(units: Sequence[Unit], *, root=None) -> list:
    """Results of ``units`` in order, serially, each from the cache or computed and cached.

    Consecutive units of one model share one load of it. This is what the chapters call; ``lrd
    sweep`` runs the same :func:`run_unit` on a Dask cluster first.
    """
    slot = ModelSlot()
    try:
        return [run_unit(u, slot, root=root)[0] for u in units]
    finally:
        slot.clear()


# --------------------------------------------------------------------------------------------
# models_and_tasks


def models_and_tasks_probe(model: LoadedModel, *, task: str, n_samples: int | None, pooling: str) -> dict:
    """The panel row of a model, its load time, and its per-layer mean cosine on ``task``."""
    from lrd.engine.extract import extract
    from lrd.metrics.cosine import mean_cosine_similarity
    from lrd.tables import per_layer

    states = extract(model, load_task(task, n=n_samples).texts, pooling=pooling)
    return {"summary": model.summary(), "load_seconds": model.load_seconds,
            "curve": per_layer(mean_cosine_similarity(states), model=model.name, task=task, measurement="mean cosine")}


def models_and_tasks_units(models: Sequence[str], task: str, n_samples: int | None, pooling: str = "mean",
                           device: str = "cpu") -> list[Unit]:
    """One unit per model (:func:`models_and_tasks_probe`)."""
    return [Unit("models_and_tasks", models_and_tasks_probe, m, dict(task=task, n_samples=n_samples, pooling=pooling),
                 tasks=((task, n_samples),), device=device) for m in models]


# --------------------------------------------------------------------------------------------
# lrd_families


def lrd_families_profile(model: LoadedModel, *, task: str, n_samples: int, pooling: str, k: int,
                         variance: float) -> dict:
    """Frenet, NRS and GFMI of one model on one task: the per-layer rows and the model-level scores."""
    from lrd.engine.extract import extract
    from lrd.metrics import lrd_profile, mean_cosine_similarity, model_scores, profile_rows

    data = load_task(task, n=n_samples)
    states = extract(model, data.texts[:n_samples], pooling=pooling)
    profile = lrd_profile(states, k=k, variance=variance)
    return {"kind": model.kind, "rows": profile_rows(profile, model=model.name, task=task),
            "scores": {"model": model.name, "kind": model.kind, "task": task, "N": states.shape[1],
                       **model_scores(profile), "final mean cosine": mean_cosine_similarity(states)[-1]}}


def lrd_families_units(models: Sequence[str], tasks: Sequence[str], n_samples: int, pooling: str = "mean",
                       k: int = 10, variance: float = 0.95, device: str = "cpu") -> list[Unit]:
    """One unit per (model, task), models outermost (:func:`lrd_families_profile`)."""
    return [Unit("lrd_families", lrd_families_profile, m,
                 dict(task=t, n_samples=n_samples, pooling=pooling, k=k, variance=variance),
                 tasks=((t, n_samples),), device=device) for m in models for t in tasks]


# --------------------------------------------------------------------------------------------
# cayley_aggregation


def fusion_task(task: str, n_samples: int):
    """``(data, full, texts)`` of a task in the Cayley chapter: the ``n_samples`` subset, the
    whole task for STS (all 1225 Lee-50 pairs) else the subset, and the texts to extract (the
    subset's when they cover the full task's)."""
    data = load_task(task, n=n_samples)
    full = load_task(task) if data.type == "sts" else data
    texts = data.texts if set(full.texts) <= set(data.texts) else full.texts
    return data, full, texts


def _train_options(seeds, max_epochs, patience, train_threads, gnn_layers) -> dict:
    from lrd.aggregation.training import TrainConfig

    return dict(seeds=list(seeds), config=TrainConfig(max_epochs=max_epochs, patience=patience, threads=train_threads),
                gnn_layers=gnn_layers)


def cayley_task_scores(model: LoadedModel, *, task: str, n_samples: int, methods: Sequence[str], seeds: Sequence[int],
                       gnn_layers: int, max_epochs: int, patience: int, train_threads: int | None) -> dict:
    """Every aggregation method trained on one model's states of one task: ``"scores"`` (one
    row per method and seed), ``"items"`` (classification: whether each seed's prediction of
    each test item is right, :func:`lrd.aggregation.scores.item_outcomes`; empty for STS), the model
    facts the parameter share needs, and the extraction and training seconds."""
    from lrd.engine.extract import extract
    from lrd.aggregation.scores import item_outcomes, task_scores

    _, full, texts = fusion_task(task, n_samples)
    t0 = time.perf_counter()
    states = extract(model, texts, pooling="mean")
    t1 = time.perf_counter()
    scores = task_scores(states, full, list(methods), texts=texts,
                         **_train_options(seeds, max_epochs, patience, train_threads, gnn_layers))
    scores = scores.assign(model=model.name, task=task)
    items = item_outcomes(scores) if "correct" in scores else pd.DataFrame()
    return {"scores": scores.drop(columns="correct", errors="ignore"), "items": items,
            "model": {"n_params": model.n_params, "hidden_size": model.hidden_size, "n_states": model.n_layers + 1,
                      "kind": model.kind, "source": model.summary()["source"]},
            "seconds": {"extract": t1 - t0, "train": time.perf_counter() - t1}}


def cayley_ablation(model: LoadedModel, *, task: str, n_samples: int, n_mappings: int, seeds: Sequence[int],
                    gnn_layers: int, max_epochs: int, patience: int, train_threads: int | None) -> pd.DataFrame:
    """The Cayley encoder's ablations on one model and task: positional encoding, the reference
    code's doubled edges, and ``n_mappings`` seeded random layer-to-node mappings (one row per
    variant and seed)."""
    from lrd.engine.extract import extract
    from lrd.aggregation.scores import encoder_variants

    _, full, texts = fusion_task(task, n_samples)
    states = extract(model, texts, pooling="mean")
    variants = {"identity mapping": {}, "positional encoding": {"positional": True},
                "edges listed twice (reference)": {"reference_duplicates": True},
                **{f"random mapping {i}": {"mapping_seed": 1000 + i} for i in range(n_mappings)}}
    return encoder_variants(states, full, variants, texts=texts,
                            **_train_options(seeds, max_epochs, patience, train_threads, gnn_layers)
                            ).drop(columns="correct", errors="ignore")


def cayley_few_shot(model: LoadedModel, *, task: str, n_samples: int, methods: Sequence[str], shots: Sequence[int],
                    seeds: Sequence[int], gnn_layers: int, max_epochs: int, patience: int,
                    train_threads: int | None) -> pd.DataFrame:
    """Few-shot accuracy of ``methods`` on one model and task for each number of shots per
    class (one row per shot count, method and seed)."""
    from lrd.engine.extract import extract
    from lrd.aggregation.scores import few_shot_scores

    data, _, texts = fusion_task(task, n_samples)
    states = extract(model, texts, pooling="mean")
    return few_shot_scores(states, data, list(methods), list(shots),
                           **_train_options(seeds, max_epochs, patience, train_threads, gnn_layers)
                           ).drop(columns="correct").assign(model=model.name, task=task)


def cayley_aggregation_units(models: Sequence[str], tasks: Sequence[str], n_samples: int, methods: Sequence[str],
                             seeds: Sequence[int], gnn_layers: int, max_epochs: int, patience: int,
                             ablation_model: str, ablation_task: str, n_mappings: int, few_shot: Sequence[int],
                             few_shot_tasks: Sequence[str], few_shot_methods: Sequence[str],
                             train_threads: int | None = 1, device: str = "cpu") -> dict[str, list[Unit]]:
    """The chapter's units by part: ``"scores"`` one per (model, task); ``"ablation"`` (at most
    one) on the ablation model and task, when both are in the panel; ``"few_shot"`` one per
    (model, few-shot task in the panel): the few-shot claim is tested with the model as unit."""
    train = dict(seeds=list(seeds), gnn_layers=gnn_layers, max_epochs=max_epochs, patience=patience,
                 train_threads=train_threads)

    def spec(t):
        return ((t, n_samples), (t, None)) if t == "lee50" or load_task(t, n=n_samples).type == "sts" else ((t, n_samples),)

    scores = [Unit("cayley_aggregation", cayley_task_scores, m,
                   dict(task=t, n_samples=n_samples, methods=list(methods), **train), tasks=spec(t), device=device)
              for m in models for t in tasks]
    ablation = [Unit("cayley_aggregation", cayley_ablation, ablation_model,
                     dict(task=ablation_task, n_samples=n_samples, n_mappings=n_mappings, **train),
                     tasks=spec(ablation_task), device=device)
                for _ in [0] if ablation_model in models and ablation_task in tasks]
    shots = [Unit("cayley_aggregation", cayley_few_shot, m,
                  dict(task=t, n_samples=n_samples, methods=list(few_shot_methods), shots=list(few_shot), **train),
                  tasks=spec(t), device=device)
             for m in models for t in few_shot_tasks if t in tasks]
    return {"scores": scores, "ablation": ablation, "few_shot": shots}


# --------------------------------------------------------------------------------------------
# mid_layer (wraps the functions the chapter's loop calls)


def mid_layer_model(model: LoadedModel, *, tasks: Sequence[str], n_samples: int, n_bootstrap: int, pooling: str,
                    token_task: str, n_token_prompts: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    norm_task: str, n_permutations: int) -> dict:
    """Everything the mid-layer chapter measures on one model: every layer's MTEB-protocol
    score per task (on every evaluation row and on each half of them, and its label-permutation
    chance from ``n_permutations`` shuffles: :func:`lrd.methods.evaluate.layer_scores`), pooled metrics
    per task, token metrics, augmentation-invariance metrics, and (decoders) scores with and
    without the final norm. Returns ``kind``, ``source`` (where the weights come from),
    ``rows`` and ``normed``.

    One forward pass per task feeds its pooled states, and, for ``norm_task`` and
    ``token_task`` (which must be among ``tasks``), the final-norm variant and the token states
    (:func:`lrd.methods.suite.task_pass`); the augmented views of ``aug_task`` take one more pass.
    """
    from lrd.methods.evaluate import layer_scores
    from lrd.methods.suite import invariance_metrics, pooled_metrics, task_pass, token_rows, view_states

    for option, value in {"token_task": token_task, "aug_task": aug_task, "norm_task": norm_task}.items():
        if value and value not in tasks:
            raise ValueError(f"{option} {value!r} is not one of tasks {list(tasks)}; add it to tasks or choose one of them")
    name = model.name
    task_data = {t: load_task(t, n=n_samples) for t in tasks}
    rows, normed = [], []
    for task, data in task_data.items():  # one forward pass per task, whatever it feeds
        run = task_pass(model, data.texts, pooling=pooling, final_norm=task == norm_task and model.final_norm is not None,
                        n_token_prompts=n_token_prompts if task == token_task else 0)
        scores = layer_scores(run.states, data, model=name, n_bootstrap=n_bootstrap, halves=True,
                              n_permutations=n_permutations)
        rows += [scores, pooled_metrics(run.states, model=name, task=task)]
        if run.tokens is not None:
            rows.append(token_rows(run.tokens, model=name, task=task))
        if run.normed is not None:
            normed += [layer_scores(run.normed, data, model=name, n_bootstrap=n_bootstrap).assign(**{"final norm": "on"}),
                       scores[scores["measurement"] == "score"].assign(**{"final norm": "off"})]
    views = view_states(model, task_data[aug_task].texts[:n_aug_prompts], n_views=n_views, pooling=pooling)
    rows.append(invariance_metrics(views, model=name, task=aug_task))
    return {"kind": model.kind, "source": model.summary()["source"], "rows": rows, "normed": normed}


def mid_layer_units(models: Sequence[str], tasks: Sequence[str], n_samples: int, n_bootstrap: int, pooling: str,
                    token_task: str, n_token_prompts: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    norm_task: str, n_permutations: int, device: str = "cpu") -> list[Unit]:
    """One unit per model (:func:`mid_layer_model`)."""
    params = dict(tasks=list(tasks), n_samples=n_samples, n_bootstrap=n_bootstrap, pooling=pooling,
                  token_task=token_task, n_token_prompts=n_token_prompts, aug_task=aug_task,
                  n_aug_prompts=n_aug_prompts, n_views=n_views, norm_task=norm_task, n_permutations=n_permutations)
    read = tuple(dict.fromkeys([(t, n_samples) for t in tasks]))
    return [Unit("mid_layer", mid_layer_model, m, params, tasks=read, device=device) for m in models]


# --------------------------------------------------------------------------------------------
# cosine_vs_ablation (wraps the functions the chapter's loops call)


def _mc_split(name: str, split: str, n: int):
    return load_task(name).split(split).subset(n, seed=0)


def ablation_decoder(model: LoadedModel, *, tasks: Sequence[str], n_items: int, n_calibration: int,
                     pruning: bool, pruning_ks: Sequence[int], n_random: int, batch_size: int,
                     n_chance: int = 1000) -> dict:
    """One decoder's removal sweeps on every task: relevance rows, per-item correctness of the
    intact and single-removal runs, intact acc_norm, measured chance (``chance[task]``: the
    intact run's accuracy under ``n_chance`` permutations of the gold choice within items,
    :func:`lrd.engine.scoring.permuted_gold_accuracy`) and, for the pruning model (``pruning``), the
    calibration plan with each task's pruned accuracies; plus the work done (``block forwards``,
    ``token passes``, ``seconds``)."""
    from lrd.methods.relevance import calibration_plan, pruning_accuracy, relevance_rows, removal_sweep
    from lrd.engine.scoring import build_requests, mc_accuracy, permuted_gold_accuracy

    name = model.name
    work = {"block forwards": 0.0, "token passes": 0.0, "seconds": 0.0}

    def tally(sweep, requests):
        work["block forwards"] += sweep.block_forwards
        work["token passes"] += sweep.block_forwards * requests.n_tokens
        work["seconds"] += sweep.seconds

    rows, correct, acc_norm, chance, plan = [], {}, {}, {}, None
    for task in tasks:
        split = _mc_split(task, "test", n_items)
        req = build_requests(model, split)
        sets = [[l] for l in range(1, model.n_layers + 1)]
        if pruning:  # rank blocks on the calibration split first (once)
            if plan is None:
                calib = {t: build_requests(model, _mc_split(t, "train", n_calibration)) for t in tasks}
                plan, cal_sweeps = calibration_plan(model, calib, list(pruning_ks), n_random=n_random,
                                                    batch_size=batch_size)
                for sw, r in zip(cal_sweeps, calib.values()):
                    tally(sw, r)
            sets = sets + [list(s) for s in plan["removed"]]
        sweep = removal_sweep(model, req, sets, batch_size=batch_size)
        tally(sweep, req)
        r, c = relevance_rows(sweep, req, model=name, task=task)
        rows.append(r)
        correct[task] = c
        acc_norm[task] = mc_accuracy(sweep.lls[:1], req)["acc_norm"].mean()
        chance[task] = permuted_gold_accuracy(sweep.lls[0], req, n_permutations=n_chance, seed=0)
        if pruning:
            plan[task] = pruning_accuracy(sweep, req, plan)
    return {"rows": rows, "correct": correct, "acc_norm": acc_norm, "chance": chance, "plan": plan, "work": work}


def ablation_encoder(model: LoadedModel, *, task: str, n_encoder: int, encoder_scorer: str, batch_size: int) -> dict:
    """One encoder's cosine relevance and embedding score (intact, then each block removed)."""
    from lrd.methods.relevance import ENCODER_SCORERS, encoder_removal_states

    data = load_task(task, n=n_encoder)
    pooled, cos = encoder_removal_states(model, data.texts, batch_size=batch_size)
    return {"cos": cos, "score": np.array([ENCODER_SCORERS[encoder_scorer](p, data) for p in pooled])}


def cosine_vs_ablation_units(models: Sequence[str], tasks: Sequence[str], n_items: int, n_calibration: int,
                             pruning_models: Sequence[str], pruning_ks: Sequence[int], n_random: int,
                             encoders: Sequence[str], encoder_task: str, n_encoder: int, encoder_scorer: str,
                             batch_size: int = 32, device: str = "cpu", n_chance: int = 1000) -> dict[str, list[Unit]]:
    """``"decoders"``: one unit per decoder (:func:`ablation_decoder`; those of ``pruning_models``
    are also pruned); ``"encoders"``: one per encoder (:func:`ablation_encoder`)."""
    outside = [m for m in pruning_models if m not in models]
    if outside:
        raise ValueError(f"pruning_models {outside} are not among the decoders {list(models)}; add them to `models` "
                         f"or drop them from `pruning_models`")
    read = tuple((t, None) for t in tasks)
    decoders = [Unit("cosine_vs_ablation", ablation_decoder, m,
                     dict(tasks=list(tasks), n_items=n_items, n_calibration=n_calibration, pruning=m in pruning_models,
                          pruning_ks=list(pruning_ks), n_random=n_random, batch_size=batch_size, n_chance=n_chance),
                     tasks=read, device=device) for m in models]
    encs = [Unit("cosine_vs_ablation", ablation_encoder, m,
                 dict(task=encoder_task, n_encoder=n_encoder, encoder_scorer=encoder_scorer, batch_size=batch_size),
                 tasks=((encoder_task, n_encoder),), device=device) for m in encoders]
    return {"decoders": decoders, "encoders": encs}


# --------------------------------------------------------------------------------------------
# selection_and_pruning


def _mc_choices(lls: np.ndarray, item: np.ndarray) -> np.ndarray:
    """The chosen answer of each item: the argmax of its choices' log-likelihoods (ties to the
    first choice, as :func:`lrd.engine.scoring.mc_accuracy`'s ``acc``); ``item`` gives each request's item."""
    starts = np.flatnonzero(np.r_[True, np.diff(item) != 0])
    return np.array([int(np.argmax(lls[a:b])) for a, b in zip(starts, np.r_[starts[1:], len(item)])])


def _mc_removal_scores(model: LoadedModel, sets, *, mc_tasks, n_items: int, batch_size: int) -> tuple[dict, dict]:
    """Accuracy of every removal set on every multiple-choice task (resumed sweep), and the intact
    model's chosen and gold answer per item (``{task: {"pred": [...], "gold": [...]}}``: what a
    label-permutation chance test needs)."""
    from lrd.methods.relevance import removal_sweep
    from lrd.engine.scoring import build_requests, mc_accuracy

    out, items = {}, {}
    for t in mc_tasks:
        req = build_requests(model, _mc_split(t, "test", n_items))
        sweep = removal_sweep(model, req, sets, batch_size=batch_size)
        acc = mc_accuracy(sweep.lls, req)["acc"].mean(1)
        out[t] = {tuple(s): float(a) for s, a in zip(sweep.sets, acc)}
        items[t] = {"pred": _mc_choices(sweep.lls[0], req.item).tolist(), "gold": np.asarray(req.labels).tolist()}
    return out, items


def _encoder_removal_scores(model: LoadedModel, sets, *, task_data: dict, n_bootstrap: int, batch_size: int) -> dict:
    """MTEB main score of every removal set on every embedding task (resumed, one pass per task)."""
    from lrd.methods.evaluate import evaluate_layers
    from lrd.methods.relevance import encoder_removal_states

    out = {}
    for t, data in task_data.items():
        pooled, _ = encoder_removal_states(model, data.texts, sets=sets, batch_size=batch_size)
        scores = evaluate_layers(pooled, data, n_bootstrap=n_bootstrap)
        out[t] = {s: float(v) for s, v in zip([()] + [tuple(x) for x in sets], scores)}
    return out


def _prune_plan(model: LoadedModel, profile_states: np.ndarray, *, k: int, variance: float, budgets, n_random: int,
                mc_tasks, n_calibration: int, encoder_calib, n_bootstrap: int, batch_size: int) -> pd.DataFrame:
    """Every rule's removal sets per budget. Label-free rules read the LRD profile of the
    calibration texts; labelled rules: decoders rank blocks on calibration items of the
    multiple-choice tasks (:func:`lrd.methods.relevance.calibration_plan`), encoders by the MTEB score
    on ``encoder_calib`` with each block removed."""
    from lrd.methods.evaluate import evaluate_layers
    from lrd.metrics import lrd_profile
    from lrd.methods.pruning import angular_distance, budget_blocks, budget_plan, budgets_of, measurement_scores
    from lrd.methods.relevance import calibration_plan, encoder_removal_states
    from lrd.engine.scoring import build_requests

    label_free = measurement_scores(lrd_profile(profile_states, k=k, variance=variance))
    if model.kind == "decoder":
        ks = sorted({budget_blocks(model.n_layers, f) for f in budgets})
        calib = {t: build_requests(model, _mc_split(t, "train", n_calibration)) for t in mc_tasks}
        plan_k, _ = calibration_plan(model, calib, ks, n_random=n_random, batch_size=batch_size)
        return pd.concat([budgets_of(plan_k, model.n_layers, budgets),
                          budget_plan(label_free, model.n_layers, budgets, n_random=0)], ignore_index=True)
    pooled, cosine = encoder_removal_states(model, encoder_calib.texts, batch_size=batch_size)
    score = evaluate_layers(pooled, encoder_calib, n_bootstrap=n_bootstrap)
    signals = {"cosine (BI)": cosine, "accuracy (calibration)": score[0] - score[1:], **label_free}
    return budget_plan(signals, model.n_layers, budgets, distance=angular_distance(profile_states), n_random=n_random)


def selection_model(model: LoadedModel, *, tasks: Sequence[str], n_samples: int, pooling: str, k: int,
                    variance: float, n_bootstrap: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    mc_tasks: Sequence[str], n_items: int, n_calibration: int, calibration_task: str,
                    n_encoder_calibration: int, prune: bool, budgets: Sequence[float], n_random: int,
                    batch_size: int) -> dict:
    """One model of the selection and pruning chapter: model-level scores per embedding task
    (LRD, mean dataset entropy, last-layer MTEB score), DiME, decoders' intact multiple-choice
    accuracy with each item's chosen and gold answer (``mc_items``, for the chance test) and,
    when ``prune``, every prune rule's plan and score changes per task."""
    from threadpoolctl import threadpool_limits

    from lrd.methods.evaluate import evaluate_layers
    from lrd.engine.extract import extract
    from lrd.metrics import dataset_entropy, dime, lrd_profile, model_scores
    from lrd.methods.pruning import plan_changes
    from lrd.methods.suite import view_states

    name, clock = model.name, time.perf_counter()
    task_data = {t: load_task(t, n=n_samples) for t in tasks}
    score_rows = []
    for task, data in task_data.items():
        states = extract(model, data.texts, pooling=pooling)
        profile = lrd_profile(states, k=k, variance=variance)
        with threadpool_limits(1):
            entropy = dataset_entropy(states)
        last = evaluate_layers(states[-1:], data, n_bootstrap=n_bootstrap)[0]
        score_rows.append({"model": name, "kind": model.kind, "task": task, **model_scores(profile),
                           "mean dataset entropy": float(entropy.mean()), "last-layer score": last})
    aug = task_data[aug_task] if aug_task in task_data else load_task(aug_task, n=n_samples)
    views = view_states(model, aug.texts[:n_aug_prompts], n_views=n_views, pooling=pooling)
    with threadpool_limits(1):
        dime_value = float(dime(views[:, :, 0], views[:, :, 1]).mean())
    seconds = {"scores": time.perf_counter() - clock}
    plan, changes, by_task, mc_items = None, [], None, None
    prune = prune and model.n_layers >= 2
    if prune:
        calib_data = load_task(calibration_task, n=n_samples)
        profile_states = extract(model, calib_data.texts[:n_samples], pooling=pooling)
        plan = _prune_plan(model, profile_states, k=k, variance=variance, budgets=budgets, n_random=n_random,
                           mc_tasks=mc_tasks, n_calibration=n_calibration,
                           encoder_calib=load_task(calibration_task, n=n_encoder_calibration),
                           n_bootstrap=n_bootstrap, batch_size=batch_size)
        seconds["prune orders"] = time.perf_counter() - clock - seconds["scores"]
        sets = sorted({tuple(s) for s in plan["removed"]})
        if model.kind == "decoder":
            by_task, mc_items = _mc_removal_scores(model, sets, mc_tasks=mc_tasks, n_items=n_items,
                                                   batch_size=batch_size)
        else:
            by_task = _encoder_removal_scores(model, sets, task_data=task_data, n_bootstrap=n_bootstrap,
                                              batch_size=batch_size)
        for task, got in by_task.items():
            changes.append(plan_changes(plan, got, got[()], model=name, kind=model.kind, task=task))
    mc_intact = None
    if model.kind == "decoder":
        if by_task is None:
            by_task, mc_items = _mc_removal_scores(model, [], mc_tasks=mc_tasks, n_items=n_items,
                                                   batch_size=batch_size)
        mc_intact = float(np.mean([got[()] for got in by_task.values()]))
    seconds["total"] = time.perf_counter() - clock
    return {"kind": model.kind, "source": model.summary()["source"], "n_blocks": model.n_layers,
            "score_rows": score_rows, "dime": dime_value, "plan": plan, "changes": changes, "mc_intact": mc_intact,
            "mc_items": mc_items, "seconds": seconds}


def selection_and_pruning_units(models: Sequence[str], tasks: Sequence[str], n_samples: int, pooling: str, k: int,
                                variance: float, n_bootstrap: int, aug_task: str, n_aug_prompts: int, n_views: int,
                                mc_tasks: Sequence[str], n_items: int, n_calibration: int, calibration_task: str,
                                n_encoder_calibration: int, pruning_models: Sequence[str], budgets: Sequence[float],
                                n_random: int, batch_size: int, device: str = "cpu") -> list[Unit]:
    """One unit per model (:func:`selection_model`); models of ``pruning_models`` are pruned."""
    params = dict(tasks=list(tasks), n_samples=n_samples, pooling=pooling, k=k, variance=variance,
                  n_bootstrap=n_bootstrap, aug_task=aug_task, n_aug_prompts=n_aug_prompts, n_views=n_views,
                  mc_tasks=list(mc_tasks), n_items=n_items, n_calibration=n_calibration,
                  calibration_task=calibration_task, n_encoder_calibration=n_encoder_calibration,
                  budgets=list(budgets), n_random=n_random, batch_size=batch_size)
    read = tuple(dict.fromkeys([(t, n_samples) for t in [*tasks, aug_task, calibration_task]]
                               + [(calibration_task, n_encoder_calibration)] + [(t, None) for t in mc_tasks]))
    return [Unit("selection_and_pruning", selection_model, m, {**params, "prune": m in pruning_models}, tasks=read,
                 device=device) for m in models]


# --------------------------------------------------------------------------------------------
# Chapters -> units


#: The function that declares each chapter's units from its parameters.
CHAPTER_UNITS: dict[str, Callable] = {
    "models_and_tasks": models_and_tasks_units,
    "lrd_families": lrd_families_units,
    "mid_layer": mid_layer_units,
    "cosine_vs_ablation": cosine_vs_ablation_units,
    "cayley_aggregation": cayley_aggregation_units,
    "selection_and_pruning": selection_and_pruning_units,
    "null_calibration": lambda: [],  # the appendix simulates null panels; it runs no model
}


def units(chapter: str, parameters: dict | None = None) -> list[Unit]:
    """Every unit a chapter computes with ``parameters`` (the rest from the notebook's defaults).

    Parameters are checked as for ``lrd run`` (:func:`lrd.book.validate_parameters`).
    """
    from lrd import book

    if chapter not in CHAPTER_UNITS:
        raise ValueError(f"chapter {chapter!r} declares no units; chapters with units: {', '.join(CHAPTER_UNITS)}")
    defaults = book.default_parameters(chapter)
    checked, _ = book.validate_parameters(chapter, parameters or {}, defaults=defaults)
    values = {**defaults, **checked}
    declare = CHAPTER_UNITS[chapter]
    wanted = inspect.signature(declare).parameters
    found = declare(**{k: v for k, v in values.items() if k in wanted})
    return [u for part in found.values() for u in part] if isinstance(found, dict) else list(found)
