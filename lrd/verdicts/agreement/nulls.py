"""The null and effect models of Hinostroza et al.'s claims (:mod:`lrd.verdicts.calibration`):
simulated cosine panels at the chapter's design, at the least favourable point of each claim's null
and at its edge, for the judges of :mod:`lrd.verdicts.agreement.judges`."""

from __future__ import annotations

import math
from functools import lru_cache, partial

import numpy as np
import pandas as pd

from lrd.verdicts.agreement.judges import judge_correlation, judge_dataset, judge_misestimate, judge_pruning
from lrd.verdicts.agreement.relevance import (ESTIMATION_MARGIN, SAME_RELEVANCE, STRONG_CORRELATION, agreement_table,
                                              estimation_shares, relevance_replicates, task_agreement_table,
                                              unrelated_draws, unrelated_share)
from lrd.verdicts.claims import COSINE_MISESTIMATE_SHARE
from lrd.verdicts.spec import NullModel
from lrd.verdicts.stats import average_ranks
from lrd.verdicts.wording import agreement as wording

__all__ = ["SIMULATED_RESAMPLES", "COSINE_DESIGN", "POWER_MODERATE", "POWER_DATASET_CORRELATION", "simulate_correct",
           "with_correlation", "simulate_misestimate_edge", "CORRELATION_NULL", "MISESTIMATE_NULL", "DATASET_NULL",
           "PRUNING_NULL"]

#: Bootstrap resamples of each simulated verdict: fewer than the chapter's (1000), a cost of the
#: simulation. They set how finely a bootstrap p-value is resolved (at least 1/101), not the
#: noise the test must hold its size against, which the items and splits carry.
SIMULATED_RESAMPLES = 100

#: The default book's cosine panel, restated (``cosine_vs_ablation`` at its defaults: SmolLM2,
#: Gemma 3 and Qwen2.5 with 30, 18 and 24 blocks, on 2 multiple-choice tasks of 32 items, 20
#: half splits); the appendix reads the executed chapter's instead (``lrd.book.designs``).
COSINE_DESIGN = {"layers": (30, 18, 24), "n_tasks": 2, "n_items": 32, "n_splits": 20}


def _describe_cosine(layers: tuple, n_tasks: int, n_items: int, n_splits: int) -> str:
    return wording.describe_cosine_design(layers, n_tasks, n_items, n_splits, SIMULATED_RESAMPLES)


def _drop_profile(n_blocks: int) -> np.ndarray:
    """A realistic shape of accuracy relevance over ``n_blocks`` blocks: one block whose removal is
    catastrophic, one that matters, the rest small and nearly tied (what small decoders show)."""
    return np.r_[0.45, 0.2, np.linspace(0.0, 0.1, n_blocks - 2)]


def simulate_correct(rng: np.random.Generator, drop: np.ndarray, n_items: int, *, intact: float = 0.8) -> np.ndarray:
    """0/1 correctness (L + 1, n): item right intact with probability ``intact``; block ``l``'s
    removal turns a right item wrong with probability ``drop[l] / intact`` (expected relevance ``drop``)."""
    right = rng.random(n_items) < intact
    keep = rng.random((len(drop), n_items)) >= np.asarray(drop)[:, None] / intact
    return np.vstack([right, right[None] & keep]).astype(float)


def with_correlation(x: np.ndarray, r: float) -> np.ndarray:
    """A vector whose Pearson correlation with ``x`` is exactly ``r``."""
    z = (x - x.mean()) / x.std()
    other = np.cos(np.arange(len(x)) * 2.0)  # any fixed direction, made orthogonal to 1 and x
    other = other - other.mean() - (other @ z) / (z @ z) * z
    other = other / other.std()
    return r * z + math.sqrt(1 - r * r) * other


def _at_share(drop: np.ndarray, target: float, *, margin: float = ESTIMATION_MARGIN, seed: int = 0) -> np.ndarray:
    """A cosine relevance whose mis-estimation share against ``drop`` (:func:`estimation_shares`)
    is the smallest one at or above ``target`` among Gaussian-copula draws at correlations 0..1
    (a fixed set of draws: the same vector for the same input).

    A 24-block decoder's share moves in steps of 1/24:

    >>> drop = np.linspace(0.0, 0.5, 24)
    >>> target = unrelated_share(drop, drop, 0.1) - 0.1
    >>> s = estimation_shares(_at_share(drop, target), drop, margin=0.1)
    >>> bool(target <= s["over"] + s["under"] < target + 1 / 24)
    True
    """
    a = np.asarray(drop, dtype=float)
    z = (average_ranks(a) - (len(a) + 1) / 2) / len(a)
    z = z / z.std()
    noise = np.random.default_rng(seed).standard_normal((50, len(a)))
    r = np.linspace(0.0, 1.0, 101)[:, None, None]
    cand = (r * z + np.sqrt(1 - r * r) * noise).reshape(-1, len(a))
    est = estimation_shares(cand, np.broadcast_to(a, cand.shape), margin=margin)
    share = est["over"] + est["under"]
    ok = np.flatnonzero(share >= target - 1e-9)
    if not len(ok):
        raise ValueError(f"no draw reaches a share of {target!r}")
    return cand[ok[np.argmin(share[ok])]]


def _sim_chance(keys) -> pd.DataFrame:
    return pd.DataFrame({"model": [k[0] for k in keys], "task": [k[1] for k in keys], "acc": 0.8, "chance": 0.5,
                         "p_chance": 0.001, "p_min_chance": 0.001})


def _sim_replicates(rng: np.random.Generator, cosine: dict, drops: dict, intact: dict | None = None, *,
                    n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"],
                    ranks: bool = False) -> dict:
    """Simulated replicates of every (model, task); ``ranks`` only where the judge reads the
    rank reliability (the misestimate claim)."""
    return {key: relevance_replicates(simulate_correct(rng, drops[key], n_items, intact=(intact or {}).get(key, 0.8)),
                                      cosine[key], n_boot=SIMULATED_RESAMPLES, n_splits=n_splits,
                                      seed=int(rng.integers(2 ** 31)), ranks=ranks)
            for key in drops}


def _panel_keys(layers: tuple, n_tasks: int) -> list[tuple[int, tuple[str, str], int]]:
    """``(model index, (model, task), blocks)`` for every decoder and task of a simulated panel."""
    return [(i, (f"m{i}", f"t{t}"), n) for i, n in enumerate(layers) for t in range(n_tasks)]


#: The correlation the power simulation gives the "moderate" decoder (assumed: the paper says
#: "weak or moderate, depending on the model" without numbers); the others are weak (0.1).
POWER_MODERATE = 0.4


def _simulate_correlation(rng: np.random.Generator, r: float = STRONG_CORRELATION, others: float = 0.1, *,
                          layers: tuple = COSINE_DESIGN["layers"], n_tasks: int = COSINE_DESIGN["n_tasks"],
                          n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """The first decoder's cosine relevance at a correlation of exactly ``r`` with its expected
    accuracy relevance on every task, the others' at ``others``: with the defaults the least
    favourable null of "weak or moderate in every decoder" (one decoder exactly at the margin 0.7,
    the rest clearly weak); ``others = r`` puts every decoder at ``r`` (the edge of "strong in
    every decoder")."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: _drop_profile(n) for _, key, n in keys}
    cosine = {key: with_correlation(drops[key], r if i == 0 else others) for i, key, _ in keys}
    reps = _sim_replicates(rng, cosine, drops, n_items=n_items, n_splits=n_splits)
    return {"agreement": agreement_table(reps), "chance": _sim_chance(reps)}


def _misestimate_panel(rng: np.random.Generator, cosine: dict, drops: dict, *, n_items: int, n_splits: int) -> dict:
    """What :func:`judge_misestimate` reads, simulated for ``cosine`` against expected ``drops``."""
    reps = _sim_replicates(rng, cosine, drops, n_items=n_items, n_splits=n_splits, ranks=True)
    return {"agreement": agreement_table(reps, margin=ESTIMATION_MARGIN), "chance": _sim_chance(reps),
            "unrelated": unrelated_draws(reps, margin=ESTIMATION_MARGIN, n_perm=199, seed=int(rng.integers(2 ** 31)))}


@lru_cache(maxsize=None)
def _edge_cosine(n_blocks: int) -> np.ndarray:
    """The cosine relevance at the claim's edge against drops evenly spread over ``n_blocks``
    blocks (:func:`_at_share`; deterministic, so computed once per block count; read-only)."""
    drop = np.linspace(0.0, 0.5, n_blocks)
    out = _at_share(drop, unrelated_share(drop, drop, ESTIMATION_MARGIN) - (1 - COSINE_MISESTIMATE_SHARE))
    out.setflags(write=False)
    return out


def _simulate_misestimate_effect(rng: np.random.Generator, *, layers: tuple = COSINE_DESIGN["layers"],
                                 n_tasks: int = COSINE_DESIGN["n_tasks"], n_items: int = COSINE_DESIGN["n_items"],
                                 n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """The paper's point at its strongest: cosine unrelated to removal cost in every decoder."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: np.linspace(0.0, 0.5, n) for _, key, n in keys}
    cosine = {key: rng.permutation(n).astype(float) for _, key, n in keys}
    return _misestimate_panel(rng, cosine, drops, n_items=n_items, n_splits=n_splits)


def simulate_misestimate_edge(rng: np.random.Generator, *, layers: tuple = COSINE_DESIGN["layers"],
                               n_tasks: int = COSINE_DESIGN["n_tasks"], n_items: int = COSINE_DESIGN["n_items"],
                               n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """Where a "contradicted" would be false at its most likely: the first decoder at the claim's
    edge (cosine's share of mis-estimated blocks exactly :math:`\delta` below the unrelated
    rankings', the nearest a draw gets from above), the others ranking blocks as removal does
    (contradicting the claim without doubt). Drops evenly spread, so that item noise pulls little."""
    keys = _panel_keys(layers, n_tasks)
    drops = {key: np.linspace(0.0, 0.5, n) for _, key, n in keys}
    cosine = {key: _edge_cosine(n) if i == 0 else drops[key].copy() for i, key, n in keys}
    return _misestimate_panel(rng, cosine, drops, n_items=n_items, n_splits=n_splits)


#: The correlation between two tasks' expected drops in the power simulation of ``cosine.dataset``
#: (assumed: the paper shows relevance varying across datasets in a figure, without a number).
POWER_DATASET_CORRELATION = 0.5


def _simulate_dataset(rng: np.random.Generator, r: float = SAME_RELEVANCE, others: float | None = 0.0, *,
                      layers: tuple = COSINE_DESIGN["layers"], n_tasks: int = COSINE_DESIGN["n_tasks"],
                      n_items: int = COSINE_DESIGN["n_items"], n_splits: int = COSINE_DESIGN["n_splits"]) -> dict:
    """Every later task of the first decoder has expected drops at a Pearson correlation of exactly
    ``r`` with its first task's, the other decoders' at ``others`` (None: at ``r`` too); later
    tasks harder (intact accuracy 0.6, drops 0.6 times as large). With the defaults the least
    favourable null of "relevance depends on the dataset in every decoder" (one decoder at the
    margin of 'the same', 0.9, the rest clearly dependent); ``others=None`` the edge of "the same
    in every decoder"."""
    keys = _panel_keys(layers, n_tasks)
    drops, intact = {}, {}
    for i, key, n in keys:
        first = _drop_profile(n)
        if key[1] == "t0":
            drops[key] = first
            continue
        other = with_correlation(first, r if i == 0 or others is None else others) * first.std()
        drops[key], intact[key] = 0.6 * (other - other.min()), 0.6
    cosine = {key: np.arange(n, dtype=float) for _, key, n in keys}
    reps = _sim_replicates(rng, cosine, drops, intact, n_items=n_items, n_splits=n_splits)
    return {"task_agreement": task_agreement_table(reps), "chance": _sim_chance(reps)}


def _simulate_pruning(rng: np.random.Generator, n_models: int = 8) -> dict:
    """Null of "the accuracy-drop ranking prunes better": ``n_models`` models whose two rules are exchangeable."""
    rows = []
    for m in range(n_models):
        base = rng.uniform(0.5, 0.9)
        for k in (1, 2, 4):
            for rule in ("accuracy (calibration)", "cosine (BI)"):
                rows.append({"model": f"m{m}", "rule": rule, "seed": -1, "k": k,
                             "acc": base - 0.05 * k + rng.normal(0, 0.03)})
    return {"curves": pd.DataFrame(rows)}


#: Registered in :data:`lrd.verdicts.calibration.NULL_MODELS`.
CORRELATION_NULL = NullModel(_simulate_correlation, judge_correlation,
                             effect=partial(_simulate_correlation, others=STRONG_CORRELATION),
                             power_effect=partial(_simulate_correlation, r=POWER_MODERATE),
                             design=COSINE_DESIGN, describe_design=_describe_cosine,
                             **wording.correlation_null_panels(STRONG_CORRELATION, POWER_MODERATE))
MISESTIMATE_NULL = NullModel(_simulate_misestimate_effect, judge_misestimate,
                             effect=simulate_misestimate_edge, power_effect=_simulate_misestimate_effect,
                             design=COSINE_DESIGN, describe_design=_describe_cosine,
                             **wording.misestimate_null_panels(1 - COSINE_MISESTIMATE_SHARE))
DATASET_NULL = NullModel(_simulate_dataset, judge_dataset,
                         effect=partial(_simulate_dataset, others=None),
                         power_effect=partial(_simulate_dataset, r=POWER_DATASET_CORRELATION, others=None),
                         design=COSINE_DESIGN, describe_design=_describe_cosine,
                         **wording.dataset_null_panels(SAME_RELEVANCE, POWER_DATASET_CORRELATION))
PRUNING_NULL = NullModel(_simulate_pruning, judge_pruning, wording.PRUNING_NULL_PANEL,
                         effect=_simulate_pruning, effect_panel=wording.PRUNING_EFFECT_PANEL,
                         design={"n_models": 8}, design_label=wording.PRUNING_DESIGN_LABEL)
