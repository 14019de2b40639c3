"""The metric suite of Skean et al. (ICML 2025) on one model, as tidy per-layer rows.

Entry points by what they need from the model:

* :func:`task_pass`: one forward pass over a task's texts for everything a chapter needs from
  them (pooled states, optionally the final-norm variant and token states of the first prompts).
* :func:`pooled_metrics`: from an existing ``(L + 1, N, d)`` extraction (no forward pass):
  dataset entropy and effective rank.
* :func:`token_rows` (from token states) and :func:`token_metrics` (one extra pass with
  ``return_tokens=True`` over a few prompts): prompt entropy and curvature.
* :func:`invariance_metrics`: ``n_views`` augmented views of a few prompts (cached pooled
  extraction of ``n_views x n_prompts`` texts): InfoNCE and DiME on views 0 and 1, LiDAR on all.

Where the paper's code (OFSkean/information_flow) computes something else than the paper's
formula, the measurement under the plain name follows the code (the book compares it with the
paper's numbers) and the formula comes beside it under :data:`FORMULA_VARIANTS`' name, from the
same states (no extra forward pass): see :mod:`lrd.metrics.entropy`, :mod:`lrd.metrics.curvature`
and :func:`lrd.metrics.augmentation.dime`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lrd.engine.augment import augment_views
from lrd.engine.extract import extract, extract_variants
from lrd.metrics.augmentation import dime, infonce, lidar
from lrd.metrics.curvature import prompt_curvature
from lrd.metrics.entropy import dataset_entropy, effective_rank, prompt_entropy
from lrd.engine.models import LoadedModel
from lrd.tables import per_layer


#: measurement (the paper's code) -> the same measured by the formula (lrd's computation before issue 30)
FORMULA_VARIANTS = {"dataset entropy": "dataset entropy (no clamp)", "prompt entropy": "prompt entropy (no clamp)",
                    "curvature": "curvature (raw tokens, signed, zero steps dropped)", "DiME": "DiME (N x N Gram)"}


def _rows(values: dict[str, np.ndarray], *, model: str, task: str) -> pd.DataFrame:
    return pd.concat([per_layer(v, model=model, task=task, measurement=k) for k, v in values.items()],
                     ignore_index=True)


def pooled_metrics(states: np.ndarray, *, model: str, task: str, alpha: float = 1.0) -> pd.DataFrame:
    """Dataset entropy (normalised) and effective rank (of the centred states) of every layer."""
    centred = states - states.mean(axis=1, keepdims=True)
    with threadpool_limits(1):  # many small decompositions: one thread avoids oversubscription
        return _rows({"dataset entropy": dataset_entropy(states, alpha=alpha),
                      FORMULA_VARIANTS["dataset entropy"]: dataset_entropy(states, alpha=alpha, clamp=False),
                      "effective rank": effective_rank(centred)}, model=model, task=task)


@dataclass
class TaskPass:
    """What :func:`task_pass` got from one forward pass over a task's texts."""

    states: np.ndarray  # (L + 1, N, d) pooled states
    normed: np.ndarray | None  # the same with the final norm on every layer, if asked for
    tokens: list[np.ndarray] | None  # (L + 1, T_i, d) token states of the first prompts, if asked for


def task_pass(model: LoadedModel, texts: Sequence[str], *, pooling: str = "mean", final_norm: bool = False,
              n_token_prompts: int = 0, progress: bool | None = None) -> TaskPass:
    """Pooled states of ``texts`` and, from the SAME forward pass, optionally their final-norm
    variant (``final_norm``) and the token states of the first ``n_token_prompts`` texts.

    Each pooled variant is cached as :func:`lrd.engine.extract` caches it (a later ``extract`` call
    finds it); token states are not cached, so asking for them always runs the model once.
    """
    variants = [{"pooling": pooling}] + ([{"pooling": pooling, "final_norm": True}] if final_norm else [])
    tokens = None
    if n_token_prompts:
        arrays, tokens = extract_variants(model, texts, variants, return_tokens=True, progress=progress)
        tokens = tokens[:n_token_prompts]
    else:
        arrays = extract_variants(model, texts, variants, progress=progress)
    return TaskPass(arrays[0], arrays[1] if final_norm else None, tokens)


def token_rows(tokens: Sequence[np.ndarray], *, model: str, task: str, alpha: float = 1.0) -> pd.DataFrame:
    """Prompt entropy (normalised) and curvature of every layer, averaged over prompts.

    ``tokens`` are per-prompt ``(L + 1, T_i, d)`` token states (``lrd.extract(...,
    return_tokens=True)``); prompts shorter than 3 tokens are left out (curvature needs two
    steps, entropy two tokens).
    """
    tokens = [t for t in tokens if t.shape[1] >= 3]
    if not tokens:
        raise ValueError("every text is shorter than 3 tokens; token metrics need longer prompts")
    with threadpool_limits(1):
        return _rows({"prompt entropy": prompt_entropy(tokens, alpha=alpha),
                      FORMULA_VARIANTS["prompt entropy"]: prompt_entropy(tokens, alpha=alpha, clamp=False),
                      "curvature": prompt_curvature(tokens),
                      FORMULA_VARIANTS["curvature"]: prompt_curvature(tokens, normalize=False, absolute=False,
                                                                      zero_steps="drop")},
                     model=model, task=task)


def token_metrics(model: LoadedModel, texts: Sequence[str], *, task: str, alpha: float = 1.0,
                  progress: bool | None = None) -> pd.DataFrame:
    """:func:`token_rows` of ``texts``, from their own forward pass (``return_tokens=True``)."""
    _, tokens = extract(model, list(texts), pooling="mean", return_tokens=True, progress=progress)
    return token_rows(tokens, model=model.name, task=task, alpha=alpha)


def view_states(model: LoadedModel, texts: Sequence[str], *, n_views: int = 16, seed: int = 0,
                pooling: str = "mean", progress: bool | None = None) -> np.ndarray:
    """Pooled states of augmented views, shape ``(L + 1, n_prompts, n_views, d)``."""
    views = augment_views(texts, n_views, seed=seed)
    flat = extract(model, [v for view in views for v in view], pooling=pooling, progress=progress)
    return flat.reshape(flat.shape[0], n_views, len(texts), flat.shape[-1]).transpose(0, 2, 1, 3)


def invariance_metrics(states: np.ndarray, *, model: str, task: str, temperature: float = 0.1,
                       delta: float = 1e-4, n_permutations: int = 10) -> pd.DataFrame:
    """InfoNCE (views 0, 1), LiDAR (all views) and DiME (views 0, 1) of every layer.

    ``states`` is :func:`view_states`' ``(L + 1, N, K, d)`` array.
    """
    a, b = states[:, :, 0], states[:, :, 1]
    with threadpool_limits(1):
        return _rows({"InfoNCE": infonce(a, b, temperature=temperature), "LiDAR": lidar(states, delta=delta),
                      "DiME": dime(a, b, n_permutations=n_permutations),
                      FORMULA_VARIANTS["DiME"]: dime(a, b, n_permutations=n_permutations, kernel="samples")},
                     model=model, task=task)
