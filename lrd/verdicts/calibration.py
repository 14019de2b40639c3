r"""Null calibration: would a verdict say "reproduced" on noise, or "contradicted" where the paper is right?

For every claim judged by a test, a :class:`NullModel` simulates the claim's input tables
under the null hypothesis that its test assumes (scores exchangeable across layers, models or
rules) and hands them to the same function the chapter calls to judge the claim.
:func:`null_calibration` returns the rate at which the verdict comes out "reproduced"; a
valid test keeps it at or below alpha (0.05), up to Monte Carlo error
:math:`\sqrt{\alpha(1-\alpha)/n}`. Where a :class:`NullModel` also simulates the paper's effect
as the paper states it, at the least favourable point for a contradiction (``effect``),
:func:`contradiction_rate` returns the rate of a false "contradicted", held to the same bound.
With :math:`n \ge` :func:`simulations_needed` (845) the bound :math:`\alpha + 2\,\mathrm{SE}` is below 6.5%.

A null model whose design has a size (models of each kind, tasks) declares it in
:attr:`NullModel.design`; :func:`calibration_table` takes the design an executed chapter ran
(``designs``, read by :func:`lrd.book.designs.executed_designs`) and says in its "design" column
whether each row ran at that design, at the default panel's restated in the null model, or at a
fixed one.

The null models come from the claims' specifications (:mod:`lrd.verdicts.specifications`,
one module per paper): :data:`NULL_MODELS` maps each claim id to its :class:`NullModel`.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable, Mapping

import numpy as np

from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.record import ALPHA, Verdict
from lrd.verdicts.spec import NullModel, bind_design
from lrd.verdicts.specifications import null_models

__all__ = ["NullModel", "NULL_MODELS", "null_model", "null_calibration", "contradiction_rate", "power", "calibration_table",
           "simulations_needed", "monte_carlo_bound", "UNTESTABLE_BY_DESIGN", "DEFAULT_DESIGN"]

# NullModel is defined in lrd.verdicts.spec and kept importable from here.


#: Claim id -> its :class:`NullModel`, read from the claims' specifications
#: (:func:`lrd.verdicts.specifications.null_models`). Every test-kind claim has one except
#: those of :data:`UNTESTABLE_BY_DESIGN`.
NULL_MODELS: dict[str, NullModel] = null_models()

#: Test-kind claims that no panel of this book can test (the paper's own model is needed);
#: their verdict is "not testable" without a test, so there is nothing to calibrate.
UNTESTABLE_BY_DESIGN = ("cosine.olmo",)


def null_model(claim_id: str) -> NullModel:
    """The :class:`NullModel` of a claim (from its specification)."""
    if claim_id not in CLAIMS:
        raise KeyError(f"unknown claim {claim_id!r}; claims: {', '.join(CLAIMS)}")
    if claim_id not in NULL_MODELS:
        kind = CLAIMS[claim_id].kind
        why = "a demonstration has no null" if kind == "demonstration" else "no null model is registered"
        raise KeyError(f"claim {claim_id!r}: {why}; registered: {', '.join(NULL_MODELS) or 'none'}")
    found = NULL_MODELS[claim_id]
    if not isinstance(found, NullModel):
        raise TypeError(f"the null model of {claim_id} is not a NullModel")
    return found


def _design_key(design: Mapping[str, Any] | None) -> tuple:
    return tuple(sorted((design or {}).items()))


def _outcome_chunk(claim_id: str, which: str, design: tuple, seed: int, start: int, stop: int) -> tuple[str, ...]:
    """The verdicts' outcomes on panels ``start`` to ``stop - 1`` drawn by the claim's null model's
    ``which`` simulation at ``design``. Panel :math:`i` draws from the generator of
    ``SeedSequence(seed, spawn_key=(i,))``, the :math:`i`-th child of ``SeedSequence(seed).spawn``,
    so a table computed in chunks, in any order and by any number of processes, is the table
    computed in one piece."""
    model = null_model(claim_id)
    draw = bind_design(getattr(model, which), dict(design))
    out = []
    for i in range(start, stop):
        verdict = model.judge(**draw(np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))))
        if verdict.claim != claim_id:
            raise ValueError(f"the null model of {claim_id}: its judge returned a verdict on {verdict.claim!r}")
        out.append(verdict.outcome)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _outcomes(claim_id: str, simulate: Callable, design: tuple, n: int, seed: int) -> tuple[str, ...]:
    """The verdicts' outcomes on ``n`` panels drawn by ``simulate`` (one of the claim's null
    model's simulations) at ``design`` (remembered: the power and the contradiction rate read the
    same panels where the effect simulation is the same; keyed by the simulation itself, so a
    null model replaced at run time is simulated afresh)."""
    model = null_model(claim_id)
    which = next(w for w in ("simulate", "effect", "power_effect") if getattr(model, w) is simulate)
    return _outcome_chunk(claim_id, which, design, seed, 0, n)


def _check_n(n: int) -> None:
    """``n`` simulated panels must be a positive integer."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")


def _rate(claim_id: str, which: str, outcome: str, n: int, seed: int, design: Mapping[str, Any] | None) -> float | None:
    _check_n(n)
    model = null_model(claim_id).at(**(design or {}))  # an unknown design parameter fails here, early
    simulate = getattr(model, which)
    if simulate is None:
        return None
    return _outcomes(claim_id, simulate, _design_key(model.design), n, seed).count(outcome) / n


def null_calibration(claim_id: str, n: int = 200, seed: int = 0, *, design: Mapping[str, Any] | None = None) -> float:
    """Rate at which the claim's verdict is "reproduced" on ``n`` panels simulated under its null.

    Each simulation draws from its own generator spawned from ``seed`` (reproducible, and
    independent of the order in which claims are calibrated). ``design`` sets parameters of the
    null model's :attr:`NullModel.design` (default: the default panel's).
    """
    return _rate(claim_id, "simulate", "reproduced", n, seed, design)


def contradiction_rate(claim_id: str, n: int = 200, seed: int = 0, *,
                       design: Mapping[str, Any] | None = None) -> float | None:
    """Rate at which the verdict is "contradicted" on ``n`` panels where the paper's effect holds
    at its edge (:attr:`NullModel.effect`); None where no such simulation is registered."""
    return _rate(claim_id, "effect", "contradicted", n, seed, design)


def power(claim_id: str, n: int = 200, seed: int = 0, *, design: Mapping[str, Any] | None = None) -> float | None:
    """Rate at which the verdict is "reproduced" on ``n`` panels drawn at the paper's effect
    (:attr:`NullModel.power_effect`): the test's power at the simulated design; None where no
    such simulation is registered."""
    return _rate(claim_id, "power_effect", "reproduced", n, seed, design)


def simulations_needed(alpha: float = ALPHA, *, below: float = 0.065, k: float = 2.0) -> int:
    r"""The smallest :math:`n` with :math:`\alpha + k\sqrt{\alpha(1-\alpha)/n} <` ``below``.

    >>> simulations_needed()
    845
    """
    return math.floor(alpha * (1 - alpha) * (k / (below - alpha)) ** 2) + 1


def monte_carlo_bound(n: int, alpha: float = ALPHA, k: float = 3.0) -> float:
    r"""The largest rate a valid test may show over ``n`` simulations: :math:`\alpha + k\sqrt{\alpha(1-\alpha)/n}`."""
    return alpha + k * math.sqrt(alpha * (1 - alpha) / n)


#: The "design" column of a claim whose design no executed chapter gave: the default panel's size,
#: restated in its null model.
DEFAULT_DESIGN = "default panel (restated)"


#: Panels per job of :func:`calibration_table`: small enough that no claim's simulations leave one
#: process working alone at the end, large enough that a job's overhead is negligible.
CHUNK = 100


def _simulations(claim_id: str) -> dict[str, str]:
    """Each of ``simulate``, ``effect`` and ``power_effect`` the claim registers -> the first of
    them with the same simulation (their panels are drawn once)."""
    model = null_model(claim_id)
    present = [w for w in ("simulate", "effect", "power_effect") if getattr(model, w) is not None]
    return {w: next(v for v in present if getattr(model, v) is getattr(model, w)) for w in present}


def _calibration_row(claim_id: str, n: int, seed: int, k: float, design: Mapping[str, Any] | None, source: str,
                     outcomes: Mapping[str, tuple[str, ...]] | None = None) -> dict:
    """One claim's row of :func:`calibration_table` from its simulations' ``outcomes`` (each
    simulation's n outcomes; simulated here, in one piece, where not given)."""
    model = null_model(claim_id).at(**(design or {}))
    same = _simulations(claim_id)
    if outcomes is None:
        outcomes = {w: _outcome_chunk(claim_id, w, _design_key(model.design), seed, 0, n) for w in set(same.values())}

    def rate(which, outcome):
        drawn = outcomes[same[which]] if which in same else ()
        return drawn.count(outcome) / len(drawn) if drawn else float("nan")

    return {"claim": claim_id, "label": CLAIMS[claim_id].label, "simulated panel": model.describe("panel"),
            "design": (source if model.design and (source != DEFAULT_DESIGN or not model.design_label)
                       else model.design_label or "fixed"),
            "simulations": n, "rate reproduced": rate("simulate", "reproduced"),
            "effect panel": model.describe("effect_panel") or "not simulated yet",
            "rate contradicted": rate("effect", "contradicted"),
            "power": rate("power_effect", "reproduced"),
            "power simulations": len(outcomes[same["power_effect"]]) if "power_effect" in same else 0,
            "power panel": model.describe("power_panel") or "not simulated yet",
            "MC standard error": math.sqrt(ALPHA * (1 - ALPHA) / n), "bound": monte_carlo_bound(n, k=k)}


def calibration_table(n: int = 200, seed: int = 0, *, k: float = 3.0, workers: int = 1,
                      designs: Mapping[str, tuple[Mapping[str, Any], str]] | None = None, n_power: int | None = None):
    r"""One row per registered claim: its panels, the rates of a false "reproduced" (under the
    null) and of a false "contradicted" (at the paper's effect; NaN where not simulated), the
    power (the rate of "reproduced" at the paper's effect, :func:`power`; NaN where not simulated), the
    Monte Carlo standard error and the bound :math:`\alpha + k\,\mathrm{SE}` a valid test stays under.

    ``designs`` maps a claim to ``(design, source)``: the parameters of its null model's
    :attr:`NullModel.design` that an executed chapter ran, and where they were read
    (:func:`lrd.book.designs.executed_designs`); the "design" column says, per claim, that source,
    "default panel (restated)" where the claim has none, or "fixed".

    ``n_power`` (default ``n``): the panels of a power simulation that is neither the null's nor
    the effect's (whose ``n`` panels the power reads where they are the same simulation). The
    power needs no Monte Carlo bound, only a standard error it shows
    (:math:`\le 0.5/\sqrt{n_{power}}`); column "power simulations" says how many panels each
    power came from (0: not simulated).

    ``workers`` processes share the simulations (joblib; 0: one per core) in chunks of
    :data:`CHUNK` panels, so that no claim's simulations leave one process working alone at the
    end. Every simulated panel draws from its own generator spawned from ``seed``
    (:func:`_outcome_chunk`), so the table depends neither on ``workers`` nor on the chunks.
    """
    import pandas as pd
    from joblib import Parallel, delayed

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be 0 (one per core) or a positive integer, got {workers!r}")
    designs = dict(designs or {})
    unknown = sorted(set(designs) - set(NULL_MODELS))
    if unknown:
        raise ValueError(f"designs for claims without a null model: {', '.join(unknown)}")
    for claim, (design, _) in designs.items():
        null_model(claim).at(**design)  # an unknown parameter fails before any simulation
    claims = [c for c in CLAIMS if c in NULL_MODELS]
    _check_n(n)
    n_power = n if n_power is None else n_power
    _check_n(n_power)
    keys = {c: _design_key(null_model(c).at(**designs.get(c, (None, ""))[0] or {}).design) for c in claims}

    def panels(which):  # a simulation that only the power reads needs n_power panels
        return n_power if which == "power_effect" else n

    jobs = [(c, which, start, min(start + CHUNK, panels(which))) for c in claims
            for which in sorted(set(_simulations(c).values())) for start in range(0, panels(which), CHUNK)]
    n_jobs = min(workers or os.cpu_count() or 1, len(jobs)) or 1
    chunks = Parallel(n_jobs=n_jobs, batch_size=1)(
        delayed(_outcome_chunk)(c, which, keys[c], seed, start, stop) for c, which, start, stop in jobs)
    outcomes: dict = {c: {} for c in claims}
    for (c, which, *_), chunk in zip(jobs, chunks):  # jobs in order: each claim's chunks in order of their panels
        outcomes[c][which] = outcomes[c].get(which, ()) + chunk
    rows = [_calibration_row(c, n, seed, k, *designs.get(c, (None, DEFAULT_DESIGN)), outcomes[c]) for c in claims]
    return pd.DataFrame(rows)

