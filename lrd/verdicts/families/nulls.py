"""The families claims' null and effect models (:mod:`lrd.verdicts.calibration`): their inputs simulated
under each test's null, at the claim's edge and at an assumed effect.

The designs' words come from :mod:`lrd.verdicts.wording.families`.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.verdicts.families.architecture import architecture_verdict, final_layer_verdict
from lrd.verdicts.families.complementarity import complementarity_verdict, family_pairs, spearman_rows
from lrd.verdicts.families.measures import COMPLEMENTARITY_MARGIN, FINAL_LAYER_SCORES, FINAL_LAYER_STATISTICS, \
    LRD_SCORES, RANK_FREE_SCORES
from lrd.verdicts.families.task import task_verdict
from lrd.verdicts.spec import NullModel
from lrd.verdicts.wording import families as wording

__all__ = ["POWER_KIND_SHIFT", "FAMILIES_DESIGN", "POWER_FAMILY_RHO", "simulate_task_edge", "latent_weight",
           "redundancy_boundary", "ARCHITECTURE_NULL", "FINAL_LAYER_NULL", "TASK_NULL", "COMPLEMENTARITY_NULL"]


def _scores_panel(rng: np.random.Generator, n_encoders: int, n_decoders: int, n_tasks: int,
                  measures: Sequence[str]) -> pd.DataFrame:
    """A panel whose scores are i.i.d. noise: kinds are exchangeable between models."""
    n = n_encoders + n_decoders
    models = [f"m{i}" for i in range(n)]
    frame = pd.DataFrame({"model": np.repeat(models, n_tasks),
                          "kind": np.repeat(["encoder"] * n_encoders + ["decoder"] * n_decoders, n_tasks),
                          "task": np.tile([f"t{t}" for t in range(n_tasks)], n), "N": 300})
    return frame.assign(**{m: rng.normal(size=len(frame)) for m in measures})


#: The kind effect the power simulations give a score that shows architecture, in noise sd
#: (assumed: the paper reports no effect size).
POWER_KIND_SHIFT = 1.5


#: The default book's panel for the families claims (`lrd_families` at its defaults: minilm, mpnet,
#: e5small against the five decoder-based models, on 4 tasks), restated; the appendix reads the
#: executed chapter's instead (``lrd.book.designs``).
FAMILIES_DESIGN = {"n_encoders": 3, "n_decoders": 5, "n_tasks": 4}


def _simulate_architecture(rng: np.random.Generator, shift: float = 0.0, *,
                           n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                           n_decoders: int = FAMILIES_DESIGN["n_decoders"],
                           n_tasks: int = FAMILIES_DESIGN["n_tasks"]) -> dict:
    """The kinds exchangeable: no LRD score separates them (the null's edge, and the claim's); with
    ``shift``, every LRD score moved by that many noise sd in decoders."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, LRD_SCORES)
    moved = shift * (frame["kind"] == "decoder").to_numpy()
    return {"scores": frame.assign(**{m: frame[m] + moved for m in LRD_SCORES})}


ARCHITECTURE_NULL = NullModel(
    _simulate_architecture, architecture_verdict, effect=_simulate_architecture,
    power_effect=functools.partial(_simulate_architecture, shift=POWER_KIND_SHIFT), design=FAMILIES_DESIGN,
    **wording.architecture_null(POWER_KIND_SHIFT))


def _simulate_final_layer(rng: np.random.Generator, final_shift: float = 1.5, *,
                          n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                          n_decoders: int = FAMILIES_DESIGN["n_decoders"],
                          n_tasks: int = FAMILIES_DESIGN["n_tasks"]) -> dict:
    """Every measure shifted alike by kind (LRD and final-layer measures exchangeable): the kinds
    differ, the two sets show it equally; with ``final_shift`` the final-layer measures shifted
    by that instead (0: the final layer shows no difference, the LRD scores do)."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, LRD_SCORES + FINAL_LAYER_SCORES)
    decoder = (frame["kind"] == "decoder").to_numpy()
    return {"scores": frame.assign(**{m: frame[m] + (1.5 if m in LRD_SCORES else final_shift) * decoder
                                      for m in LRD_SCORES + FINAL_LAYER_SCORES})}


def _simulate_final_layer_effect(rng: np.random.Generator, **design: int) -> dict:
    """The claim at its edge for a contradiction: the LRD scores and the final-layer statistics
    shifted alike by kind (LRD no worse)."""
    return _simulate_final_layer(rng, **design)


FINAL_LAYER_NULL = NullModel(
    _simulate_final_layer, final_layer_verdict, effect=_simulate_final_layer_effect,
    power_effect=functools.partial(_simulate_final_layer, final_shift=0.0), design=FAMILIES_DESIGN,
    **wording.final_layer_null())


def simulate_task_edge(rng: np.random.Generator, own_task: float = 0.0,
                        carriers: Sequence[str] = FINAL_LAYER_STATISTICS, *,
                        n_encoders: int = FAMILIES_DESIGN["n_encoders"],
                        n_decoders: int = FAMILIES_DESIGN["n_decoders"], n_tasks: int = 3) -> dict:
    """The composite null's edge at the chapter's design (default: 8 models, the 3 of its tasks
    of equal size): the tasks move the final layer's statistics (:data:`FINAL_LAYER_STATISTICS`),
    and the LRD scores only through those of them named in ``carriers`` (each score a model
    effect plus a mix of the carriers plus noise); with ``own_task``, each LRD score also has task
    effects of its own (sd ``own_task``), beyond the final layer's."""
    frame = _scores_panel(rng, n_encoders, n_decoders, n_tasks, FINAL_LAYER_STATISTICS)
    t, m = pd.factorize(frame["task"])[0], pd.factorize(frame["model"])[0]
    for j in FINAL_LAYER_STATISTICS:
        frame[j] = frame[j] + 2 * rng.normal(size=n_tasks)[t] + rng.normal(size=n_encoders + n_decoders)[m]
    carriers = list(carriers)
    for k in RANK_FREE_SCORES:
        w = rng.normal(size=len(carriers))
        frame[k] = (frame[carriers].to_numpy() @ w + rng.normal(size=n_encoders + n_decoders)[m]
                    + 0.5 * rng.normal(size=len(frame)))
        if own_task:
            frame[k] = frame[k] + own_task * rng.normal(size=n_tasks)[t]
    # the bootstrap interval does not enter the outcome: left out to keep the calibration fast
    return {"scores": frame, "n_bootstrap": 0, "n_permutations": 2000}


TASK_NULL = NullModel(
    simulate_task_edge, task_verdict, effect=simulate_task_edge,
    power_effect=functools.partial(simulate_task_edge, own_task=1.0), design={**FAMILIES_DESIGN, "n_tasks": 3},
    **wording.task_null())


#: Mean |Spearman| between two families' curves in the power simulation of complementarity.
POWER_FAMILY_RHO = 0.5


@functools.lru_cache(maxsize=None)
def latent_weight(target: float, n: int, draws: int = 4000) -> float:
    """Weight c of a shared latent curve such that two curves of ``n`` points, c z + sqrt(1 - c^2) e,
    have mean Spearman |rho| equal to ``target`` (bisection on a fixed Monte Carlo sample)."""
    rng = np.random.default_rng(12345)
    z, e1, e2 = rng.normal(size=(3, draws, n))
    lo, hi = 0.0, 1.0
    for _ in range(30):
        c = (lo + hi) / 2
        s = math.sqrt(1 - c * c)
        if np.abs(spearman_rows(c * z + s * e1, c * z + s * e2)).mean() < target:
            lo = c
        else:
            hi = c
    return (lo + hi) / 2


def redundancy_boundary(rng: np.random.Generator, n_models: int = 8, n_tasks: int = 4, n_layers: int = 12,
                         margin: float = COMPLEMENTARITY_MARGIN, target: float | None = None) -> dict:
    """Correlation tables at the boundary of the null: Frenet and NRS at mean |rho| = margin (the
    least favourable case of the intersection-union test; ``target`` another value), GFMI unrelated to both."""
    c = latent_weight(margin if target is None else target, n_layers)
    s = math.sqrt(1 - c * c)
    z = rng.normal(size=(n_models, n_tasks, n_layers))
    curves = {"Frenet": c * z + s * rng.normal(size=z.shape), "NRS": c * z + s * rng.normal(size=z.shape),
              "GFMI": rng.normal(size=z.shape)}
    pairs = family_pairs(list(curves))
    rho = np.stack([spearman_rows(curves[a], curves[b]) for a, b in pairs], -1)  # (models, tasks, pairs)
    cells = np.indices(rho.shape).reshape(3, -1)
    return {"correlations": pd.DataFrame({"model": np.char.add("m", cells[0].astype(str)),
                                          "task": np.char.add("t", cells[1].astype(str)),
                                          "pair": np.array([f"{a}-{b}" for a, b in pairs])[cells[2]],
                                          "rho": rho.ravel()}),
            # the judge's margin where the boundary is placed elsewhere (at its default, the judge's own)
            **({} if margin == COMPLEMENTARITY_MARGIN else {"margin": margin})}


COMPLEMENTARITY_NULL = NullModel(
    redundancy_boundary, complementarity_verdict, effect=redundancy_boundary,
    power_effect=functools.partial(redundancy_boundary, target=POWER_FAMILY_RHO), design={"n_models": 8, "n_tasks": 4},
    **wording.complementarity_null(COMPLEMENTARITY_MARGIN, POWER_FAMILY_RHO))
