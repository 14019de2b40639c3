"""The ``cayley_aggregation`` chapter's units (Ulanovski et al., NeurIPS 2026): every
aggregation method trained on each model's states of each task, the Cayley encoder's
ablations, the few-shot runs; and the chapter's tables."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task, task_type
from lrd.units.base import Unit
from lrd.units.records import require, require_columns

#: Columns of the few-shot runs' per-item outcomes (:attr:`FewShotScores.items`).
FEW_SHOT_ITEM_COLUMNS = ["model", "task", "shots", "method", "seed", "item", "correct"]


@dataclass(frozen=True, eq=False)
class TaskScores:
    """Every method on one model's states of one task (:func:`cayley_task_scores`).

    Attributes
    ----------
    scores : DataFrame
        One row per method and seed (``model, task, method, seed, score``, ...).
    items : DataFrame
        Classification: whether each seed's prediction of each test item is right
        (:func:`lrd.aggregation.scores.item_outcomes`); empty for STS.
    model : dict
        The model facts the parameter share needs: ``n_params, hidden_size, n_states, kind, source``.
    seconds : dict
        ``extract`` and ``train`` wall times (volatile).
    """

    scores: pd.DataFrame
    items: pd.DataFrame
    model: dict
    seconds: dict

    def __post_init__(self):
        require_columns(self.scores, ["model", "task", "method", "seed", "score"], self, "scores")
        require(isinstance(self.items, pd.DataFrame), self, "items must be a DataFrame")
        missing = [k for k in ("n_params", "hidden_size", "n_states", "kind", "source") if k not in self.model]
        require(not missing, self, f"model lacks {missing}")
        require(set(self.seconds) == {"extract", "train"}, self, f"seconds must hold extract and train, got {self.seconds}")


@dataclass(frozen=True, eq=False)
class VariantScores:
    """The Cayley encoder's ablations on one model and task (:func:`cayley_ablation`): one row
    per variant and seed."""

    scores: pd.DataFrame

    def __post_init__(self):
        require_columns(self.scores, ["variant", "seed", "score"], self, "scores")


@dataclass(frozen=True, eq=False)
class FewShotScores:
    """Few-shot accuracy on one model and task (:func:`cayley_few_shot`): one row per shot
    count, method and seed; ``items`` the per-item outcomes (``model, task, shots, method, seed,
    item, correct``) that the per-model evidence of the few-shot claim tests."""

    scores: pd.DataFrame
    items: pd.DataFrame

    def __post_init__(self):
        require_columns(self.scores, ["model", "task", "shots", "method", "seed", "score"], self, "scores")
        require_columns(self.items, FEW_SHOT_ITEM_COLUMNS, self, "items")


def fusion_task(task: str, n_samples: int):
    """``(data, full, texts)`` of a task in the Cayley chapter: the ``n_samples`` subset, the
    whole task for STS (all 1225 Lee-50 pairs) else the subset, and the texts to extract (the
    subset's when they cover the full task's)."""
    data = load_task(task, n=n_samples)
    full = load_task(task) if data.type == "sts" else data
    texts = data.texts if set(full.texts) <= set(data.texts) else full.texts
    return data, full, texts


def _fusion_states(model: LoadedModel, *, task: str, n_samples: int, **_) -> tuple:
    """:func:`fusion_task`'s ``(data, full, texts)`` and the states every unit of this chapter
    trains on: the mean-pooled states of every layer for those texts (``lrd.extract``, cached).
    Each unit's ``prepare`` step too: the book extracts them with every core before the units
    train on one-thread workers."""
    from lrd.engine.extract import extract

    data, full, texts = fusion_task(task, n_samples)
    return data, full, texts, extract(model, texts, pooling="mean")


def _train_options(seeds, max_epochs, patience, train_threads, gnn_layers, device="cpu") -> dict:
    """Training settings of every aggregation method: on the unit's model's ``device``."""
    from lrd.aggregation.training import TrainConfig

    config = TrainConfig(max_epochs=max_epochs, patience=patience, threads=train_threads, device=str(device))
    return dict(seeds=list(seeds), config=config, gnn_layers=gnn_layers)


def cayley_task_scores(model: LoadedModel, *, task: str, n_samples: int, methods: Sequence[str], seeds: Sequence[int],
                       gnn_layers: int, max_epochs: int, patience: int, train_threads: int | None) -> TaskScores:
    """Every aggregation method trained on one model's states of one task (:class:`TaskScores`)."""
    from lrd.aggregation.scores import item_outcomes, task_scores

    t0 = time.perf_counter()
    _, full, texts, states = _fusion_states(model, task=task, n_samples=n_samples)
    t1 = time.perf_counter()
    scores = task_scores(states, full, list(methods), texts=texts,
                         **_train_options(seeds, max_epochs, patience, train_threads, gnn_layers, model.device))
    scores = scores.assign(model=model.name, task=task)
    items = item_outcomes(scores) if "correct" in scores else pd.DataFrame()
    return TaskScores(scores.drop(columns="correct", errors="ignore"), items,
                      {"n_params": model.n_params, "hidden_size": model.hidden_size, "n_states": model.n_layers + 1,
                       "kind": model.kind, "source": model.upstream},
                      {"extract": t1 - t0, "train": time.perf_counter() - t1})


def cayley_ablation(model: LoadedModel, *, task: str, n_samples: int, n_mappings: int, seeds: Sequence[int],
                    gnn_layers: int, max_epochs: int, patience: int, train_threads: int | None) -> VariantScores:
    """The Cayley encoder's ablations on one model and task: positional encoding, the reference
    code's doubled edges, the reference trainers' configuration (doubled edges and, when the
    state count is one more than |SL(2, Z_n)|, the embedding state dropped:
    :func:`lrd.aggregation.cayley.ilse_layout`), and ``n_mappings`` seeded random layer-to-node mappings (one row per
    variant and seed)."""
    from lrd.aggregation.scores import encoder_variants

    _, full, texts, states = _fusion_states(model, task=task, n_samples=n_samples)
    variants = {"identity mapping": {}, "positional encoding": {"positional": True},
                "edges listed twice (reference)": {"reference_duplicates": True},
                "embeddings dropped (ILSE trainers)": {"keep_embedding_layer": False, "reference_duplicates": True},
                **{f"random mapping {i}": {"mapping_seed": 1000 + i} for i in range(n_mappings)}}
    options = _train_options(seeds, max_epochs, patience, train_threads, gnn_layers, model.device)
    return VariantScores(encoder_variants(states, full, variants, texts=texts, **options)
                         .drop(columns="correct", errors="ignore"))


def cayley_mappings(model: LoadedModel, *, task: str, n_samples: int, n_mappings: int, seeds: Sequence[int],
                    gnn_layers: int, max_epochs: int, patience: int, train_threads: int | None) -> VariantScores:
    """The Cayley encoder with ``n_mappings`` seeded random layer-to-node mappings on one model
    and task, each trained with every seed (one row per mapping and seed): the grid of the
    per-model evidence of the mapping claim (the ablation model's comes from
    :func:`cayley_ablation`)."""
    from lrd.aggregation.scores import encoder_variants

    _, full, texts, states = _fusion_states(model, task=task, n_samples=n_samples)
    variants = {f"random mapping {i}": {"mapping_seed": 1000 + i} for i in range(n_mappings)}
    options = _train_options(seeds, max_epochs, patience, train_threads, gnn_layers, model.device)
    return VariantScores(encoder_variants(states, full, variants, texts=texts, **options)
                         .drop(columns="correct", errors="ignore"))


def cayley_few_shot(model: LoadedModel, *, task: str, n_samples: int, methods: Sequence[str], shots: Sequence[int],
                    seeds: Sequence[int], gnn_layers: int, max_epochs: int, patience: int,
                    train_threads: int | None) -> FewShotScores:
    """Few-shot accuracy of ``methods`` on one model and task for each number of shots per
    class (one row per shot count, method and seed)."""
    from lrd.aggregation.scores import few_shot_scores

    from lrd.aggregation.scores import item_outcomes

    data, _, _, states = _fusion_states(model, task=task, n_samples=n_samples)
    options = _train_options(seeds, max_epochs, patience, train_threads, gnn_layers, model.device)
    scores = few_shot_scores(states, data, list(methods), list(shots), **options).assign(model=model.name, task=task)
    return FewShotScores(scores.drop(columns="correct"), item_outcomes(scores)[FEW_SHOT_ITEM_COLUMNS])


def cayley_aggregation_units(*, models: Sequence[str], tasks: Sequence[str], n_samples: int, methods: Sequence[str],
                             seeds: Sequence[int], gnn_layers: int, max_epochs: int, patience: int,
                             ablation_model: str, ablation_task: str, n_mappings: int, few_shot: Sequence[int],
                             few_shot_tasks: Sequence[str], few_shot_methods: Sequence[str],
                             train_threads: int | None = 1, device: str = "cpu",
                             dtype: str = "bfloat16", ablation_dtype: str | None = "float32",
                             per_model_mappings: int = 10) -> dict[str, list[Unit]]:
    """The chapter's units by part: ``"scores"`` one per (model, task); ``"ablation"`` (at most
    one) on the ablation model and task, when both are in the panel, its model computing in
    ``ablation_dtype`` (None: ``dtype``); ``"mappings"`` one per other model of the panel with
    ``per_model_mappings`` random layer-to-node mappings on the ablation task (none when 0 or
    the task is not in the panel): the per-model evidence of the mapping claim; ``"few_shot"``
    one per (model, few-shot task in the panel): the few-shot claim is tested with the model as
    unit."""
    train = dict(seeds=list(seeds), gnn_layers=gnn_layers, max_epochs=max_epochs, patience=patience,
                 train_threads=train_threads)

    def spec(t):
        return ((t, n_samples), (t, None)) if t == "lee50" or task_type(t) == "sts" else ((t, n_samples),)

    scores = [Unit("cayley_aggregation", cayley_task_scores, m,
                   dict(task=t, n_samples=n_samples, methods=list(methods), **train), tasks=spec(t), device=device,
                   dtype=dtype, prepare=_fusion_states)
              for m in models for t in tasks]
    ablation = [Unit("cayley_aggregation", cayley_ablation, ablation_model,
                     dict(task=ablation_task, n_samples=n_samples, n_mappings=n_mappings, **train),
                     tasks=spec(ablation_task), device=device, dtype=ablation_dtype or dtype,
                     prepare=_fusion_states)
                for _ in [0] if ablation_model in models and ablation_task in tasks]
    mappings = [Unit("cayley_aggregation", cayley_mappings, m,
                     dict(task=ablation_task, n_samples=n_samples, n_mappings=per_model_mappings, **train),
                     tasks=spec(ablation_task), device=device, dtype=dtype, prepare=_fusion_states)
                for m in models if m != ablation_model and per_model_mappings > 0 and ablation_task in tasks]
    shots = [Unit("cayley_aggregation", cayley_few_shot, m,
                  dict(task=t, n_samples=n_samples, methods=list(few_shot_methods), shots=list(few_shot), **train),
                  tasks=spec(t), device=device, dtype=dtype, prepare=_fusion_states)
             for m in models for t in few_shot_tasks if t in tasks]
    return {"ablation": ablation, "mappings": mappings, "scores": scores, "few_shot": shots}  # longest first (workers)


@dataclass(frozen=True, eq=False)
class CayleyTables:
    """The chapter's tables from its units' records.

    Attributes
    ----------
    scores, items : DataFrame
        Every method's score per (model, task, seed); per-item outcomes (classification).
    models : dict
        Model -> the facts of :attr:`TaskScores.model` (first task's unit).
    seconds : dict
        ``extract`` and ``train`` seconds summed over the units (volatile).
    ablation : DataFrame
        The ablation variants (``variant, seed, score``; empty when none ran).
    few_shot : DataFrame
        The few-shot runs (``model, task, shots, method, seed, score``; empty when none ran).
    few_shot_items : DataFrame
        Their per-item outcomes (:data:`FEW_SHOT_ITEM_COLUMNS`; empty when none ran).
    mappings : DataFrame
        The random layer-to-node mappings per model (``model, variant, seed, score``): the
        ablation model's from its ablation, the others' from their ``"mappings"`` units (empty
        when none ran).
    """

    scores: pd.DataFrame
    items: pd.DataFrame
    models: dict
    seconds: dict
    ablation: pd.DataFrame
    few_shot: pd.DataFrame
    few_shot_items: pd.DataFrame
    mappings: pd.DataFrame = None

    def __post_init__(self):
        if self.mappings is None:
            object.__setattr__(self, "mappings", pd.DataFrame(columns=["model", "variant", "seed", "score"]))


def cayley_tables(parts: dict[str, list[Unit]], done: dict[str, list]) -> CayleyTables:
    """Gather the records of :func:`cayley_aggregation_units`' parts (``done[part]`` in the
    order of ``parts[part]``) into the chapter's tables."""
    models, seconds = {}, {"extract": 0.0, "train": 0.0}
    for unit, record in zip(parts["scores"], done["scores"]):
        seconds = {k: v + record.seconds[k] for k, v in seconds.items()}
        models.setdefault(unit.model, record.model)
    grids = [r.scores.assign(model=u.model) for u, r in zip(parts["ablation"], done["ablation"])]
    grids += [r.scores.assign(model=u.model) for u, r in zip(parts.get("mappings", []), done.get("mappings", []))]
    grids = [g[g["variant"].astype(str).str.startswith("random mapping")][["model", "variant", "seed", "score"]]
             for g in grids]
    return CayleyTables(
        mappings=(pd.concat(grids, ignore_index=True) if grids
                  else pd.DataFrame(columns=["model", "variant", "seed", "score"])),
        scores=pd.concat([r.scores for r in done["scores"]], ignore_index=True),
        items=pd.concat([r.items for r in done["scores"]], ignore_index=True),
        models=models, seconds=seconds,
        ablation=done["ablation"][0].scores if done["ablation"] else pd.DataFrame(columns=["variant", "seed", "score"]),
        few_shot=(pd.concat([r.scores for r in done["few_shot"]], ignore_index=True) if done["few_shot"] else
                  pd.DataFrame(columns=["model", "task", "shots", "method", "seed", "score"])),
        few_shot_items=(pd.concat([r.items for r in done["few_shot"]], ignore_index=True) if done["few_shot"] else
                        pd.DataFrame(columns=FEW_SHOT_ITEM_COLUMNS)))
