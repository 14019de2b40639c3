"""The ``mid_layer`` chapter's units (Skean et al., ICML 2025): every layer's MTEB-protocol
score and the mid-layer metrics of each model; and the chapter's tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from lrd.engine.models import LoadedModel
from lrd.engine.tasks import load_task
from lrd.tables import RESULT_COLUMNS
from lrd.units.base import Unit
from lrd.units.records import require, require_frames


@dataclass(frozen=True, eq=False)
class MidLayerModel:
    """Everything the chapter measures on one model (:func:`mid_layer_model`).

    Attributes
    ----------
    kind : {"encoder", "decoder"}
    source : str
        Where the weights come from.
    rows : list of DataFrame
        Tidy per-layer tables (:data:`lrd.tables.RESULT_COLUMNS`): scores, pooled, token and
        invariance metrics.
    normed : list of DataFrame
        Decoders: the scores with (``"final norm": "on"``) and without the final norm; else empty.
    prompts : list of DataFrame
        Each prompt's prompt entropy at every layer (``token_task``;
        :func:`lrd.methods.crossfit.prompt_entropy_rows`): the unit of the per-model valley test.
    """

    kind: str
    source: str
    rows: list
    normed: list
    prompts: list = field(default_factory=list)

    def __post_init__(self):
        require(self.kind in ("encoder", "decoder"), self, f"kind must be 'encoder' or 'decoder', got {self.kind!r}")
        require_frames(self.rows, RESULT_COLUMNS, self, "rows")
        require_frames(self.normed, [*RESULT_COLUMNS, "final norm"], self, "normed")
        require_frames(self.prompts, ["model", "task", "prompt", "layer", "depth", "value"], self, "prompts")


def mid_layer_model(model: LoadedModel, *, tasks: Sequence[str], n_samples: int, n_bootstrap: int, pooling: str,
                    token_task: str, n_token_prompts: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    norm_task: str, n_permutations: int) -> MidLayerModel:
    """Everything the mid-layer chapter measures on one model: every layer's MTEB-protocol
    score per task (on every evaluation row and on each half of them, and its label-permutation
    chance from ``n_permutations`` shuffles, the halves cross-fitted: :func:`lrd.methods.crossfit.layer_scores`), pooled metrics
    per task, token metrics, augmentation-invariance metrics, and (decoders) scores with and
    without the final norm (:class:`MidLayerModel`).

    One forward pass per task feeds its pooled states, their final-norm variant (decoders with a
    final norm: scored on every task, on all rows and on each cross-fitted half, as
    ``"score (final norm)"`` and ``"score (final norm) half 1"``/``"... half 2"``,
    :data:`lrd.methods.crossfit.FINAL_NORM_SCORE`, the states the paper's code scores; for
    ``norm_task`` also the on/off comparison) and, for ``token_task`` (which must be among
    ``tasks``), the token states (:func:`lrd.methods.suite.task_pass`); the augmented views of
    ``aug_task`` take one more pass.
    """
    from lrd.methods.crossfit import FINAL_NORM_SCORE, layer_scores, prompt_entropy_rows
    from lrd.methods.suite import invariance_metrics, pooled_metrics, task_pass, token_rows, view_states

    for option, value in {"token_task": token_task, "aug_task": aug_task, "norm_task": norm_task}.items():
        if value and value not in tasks:
            raise ValueError(f"{option} {value!r} is not one of tasks {list(tasks)}; add it to tasks or choose one of them")
    name = model.name
    task_data = {t: load_task(t, n=n_samples) for t in tasks}
    rows, normed, prompts = [], [], []
    for task, data in task_data.items():  # one forward pass per task, whatever it feeds
        run = task_pass(model, data.texts, pooling=pooling, final_norm=model.has_final_norm,
                        n_token_prompts=n_token_prompts if task == token_task else 0)
        scores = layer_scores(run.states, data, model=name, n_bootstrap=n_bootstrap, halves=True,
                              n_permutations=n_permutations)
        rows += [scores, pooled_metrics(run.states, model=name, task=task)]
        if run.tokens is not None:
            rows.append(token_rows(run.tokens, model=name, task=task))
            prompts.append(prompt_entropy_rows(run.tokens, model=name, task=task))
        if run.normed is not None:  # every layer through the final norm, as the paper's code scores it
            both = layer_scores(run.normed, data, model=name, n_bootstrap=n_bootstrap, halves=True)
            rows.append(both.assign(measurement=both["measurement"].str.replace("score", FINAL_NORM_SCORE, n=1,
                                                                                regex=False)))
            on = both[both["measurement"] == "score"]
            if task == norm_task:
                normed += [on.assign(**{"final norm": "on"}),
                           scores[scores["measurement"] == "score"].assign(**{"final norm": "off"})]
    views = view_states(model, task_data[aug_task].texts[:n_aug_prompts], n_views=n_views, pooling=pooling)
    rows.append(invariance_metrics(views, model=name, task=aug_task))
    return MidLayerModel(model.kind, model.upstream, rows, normed, prompts)


def _mid_layer_states(model: LoadedModel, *, tasks: Sequence[str], n_samples: int, pooling: str, aug_task: str,
                      n_aug_prompts: int, n_views: int, token_task: str = "", n_token_prompts: int = 0, **_) -> None:
    """The ``prepare`` step of a :func:`mid_layer_model` unit: the pooled states it reads, cached
    (every task with its final-norm variant where the model has one, and the augmented views).
    ``lrd book`` runs it with every core before the units score their layers on one-thread
    workers (:data:`lrd.units.sweep.SINGLE_THREADED`). ``token_task`` is left to the unit: its
    token states are not cached, so the unit runs that pass whatever is cached, and the same
    pass caches its pooled states."""
    from lrd.methods.suite import task_pass, view_states

    texts = {t: load_task(t, n=n_samples).texts for t in tasks}
    for t in tasks:
        if not (t == token_task and n_token_prompts):
            task_pass(model, texts[t], pooling=pooling, final_norm=model.has_final_norm)
    view_states(model, texts[aug_task][:n_aug_prompts], n_views=n_views, pooling=pooling)


def mid_layer_units(*, models: Sequence[str], tasks: Sequence[str], n_samples: int, n_bootstrap: int, pooling: str,
                    token_task: str, n_token_prompts: int, aug_task: str, n_aug_prompts: int, n_views: int,
                    norm_task: str, n_permutations: int, device: str = "cpu", dtype: str = "bfloat16") -> list[Unit]:
    """One unit per model (:func:`mid_layer_model`)."""
    params = dict(tasks=list(tasks), n_samples=n_samples, n_bootstrap=n_bootstrap, pooling=pooling,
                  token_task=token_task, n_token_prompts=n_token_prompts, aug_task=aug_task,
                  n_aug_prompts=n_aug_prompts, n_views=n_views, norm_task=norm_task, n_permutations=n_permutations)
    read = tuple(dict.fromkeys([(t, n_samples) for t in tasks]))
    return [Unit("mid_layer", mid_layer_model, m, params, tasks=read, device=device, dtype=dtype,
                 prepare=_mid_layer_states) for m in models]


@dataclass(frozen=True, eq=False)
class MidLayerTables:
    """The chapter's tables: ``results`` (every tidy row, with each model's ``kind``),
    ``kinds`` and ``sources`` (model -> kind, source), ``normed`` (the final-norm rows, a list
    of tables; empty without a decoder) and ``prompts`` (each prompt's prompt entropy per layer,
    with each model's ``kind``)."""

    results: pd.DataFrame
    kinds: dict
    sources: dict
    normed: list
    prompts: pd.DataFrame


def mid_layer_tables(models: Sequence[str], records: Sequence[MidLayerModel]) -> MidLayerTables:
    """Gather the records of ``models`` (in order) into the chapter's tables."""
    require(len(models) == len(records), records, f"one record per model: {len(models)} models, {len(records)} records")
    kinds = {m: r.kind for m, r in zip(models, records)}
    results = pd.concat([row for r in records for row in r.rows], ignore_index=True)
    results["kind"] = results["model"].map(kinds)
    frames = [p for r in records for p in r.prompts]
    prompts = (pd.concat(frames, ignore_index=True) if frames
               else pd.DataFrame(columns=["model", "task", "prompt", "layer", "depth", "value"]))
    prompts["kind"] = prompts["model"].map(kinds)
    return MidLayerTables(results, kinds, {m: r.source for m, r in zip(models, records)},
                          [n for r in records for n in r.normed], prompts)
