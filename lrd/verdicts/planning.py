"""What would decide each claim: the smallest simulated panel at which its test has the power asked.

For a claim judged by a test with null and effect models (:func:`lrd.verdicts.simulate`), a
*design* is the size of the panel its null model draws (``{"n_models": 8}``,
``{"layers": (...), "kinds": (...), "n_tasks": 4}``). :func:`decisive_design` adds **units**,
what the test counts as independent (models, or random mappings for ``ilse.mapping``), and keeps
what each unit is measured on (tasks, items, seeds, prompts) at the book's design:

* every count of units is multiplied by a factor of :data:`FACTORS`, **each kind separately**
  (rounded up), so a panel of encoders and decoders keeps its mix; kinds the claim does not count
  (``counted_kinds``) are kept at the book's number;
* at each factor, ``n_walk`` panels are drawn from the claim's ``power`` model and judged by the
  claim's own judge; the first factor whose share of "reproduced" reaches ``target`` is a
  candidate, and its power is estimated again on ``n_draws`` fresh panels: the design is kept only
  if that fresh estimate reaches ``target`` too (the walk's estimate is selected, so biased up),
  else the walk goes on;
* at the design kept, the false "reproduced" (null model) and false "contradicted" (edge model)
  rates are estimated on ``n_draws`` panels each, with exact (Clopper-Pearson) 95% intervals.

What this does not do, and the page says: it does not add data per model (the simulations draw
models without model-to-model differences beyond their noise, so more tasks or items would look
more decisive than they are; and the papers fix their task sets); it plans each claim alone, at
its own level ``alpha``, with no adjustment for the many claims tested at once; the effect is each
claim's own ``power`` model (its ``power_panel`` text), the book's reconstruction where the paper
states no size; and the grid of factors means the smallest decisive panel may lie between two of them.

Examples
--------
>>> scaled({"n_models": 8, "n_tasks": 4}, 2)
{'n_models': 16, 'n_tasks': 4}
>>> scaled({"layers": (6, 12, 30), "kinds": ("encoder", "encoder", "decoder"), "n_tasks": 4}, 1.5)["kinds"]
('encoder', 'encoder', 'encoder', 'decoder', 'decoder')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lrd.verdicts.record import ALPHA
from lrd.verdicts.specifications import DRAWS, judge, simulate, specification

__all__ = ["FACTORS", "UNITS", "UNIT_KINDS", "Plan", "decisive_design", "design_words", "exact_interval", "kind_counts",
           "plan_all", "rates", "scaled", "unit_count"]

#: Design parameters that count the test's units (models, or random mappings).
UNITS: tuple[str, ...] = ("n_models", "n_encoders", "n_decoders", "n", "layers", "kinds", "n_mappings")

#: The count parameters of a design and the kind of unit each counts ("model" where it names no kind).
UNIT_KINDS: dict[str, str] = {"n_encoders": "encoder", "n_decoders": "decoder", "n_models": "model", "n": "model",
                              "n_mappings": "mapping"}

#: The factors the units are walked by, from the book's design.
FACTORS: tuple[float, ...] = (1, 1.5, 2, 3, 4, 6, 8)


def kind_counts(design: Mapping[str, Any]) -> dict[str, int]:
    """The design's units by kind ("model" where the design names no kind).

    >>> kind_counts({"layers": (6, 12, 30), "kinds": ("encoder", "encoder", "decoder")})
    {'encoder': 2, 'decoder': 1}
    >>> kind_counts({"n_encoders": 3, "n_decoders": 5}), kind_counts({"n": 8}), kind_counts({"n_mappings": 20})
    ({'encoder': 3, 'decoder': 5}, {'model': 8}, {'mapping': 20})
    """
    if "kinds" in design:
        kinds = list(design["kinds"])
        return {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    if "layers" in design:
        return {"model": len(design["layers"])}
    out = {}
    for p, kind in UNIT_KINDS.items():
        if p in design:
            out[kind] = out.get(kind, 0) + int(design[p])
    return out


def unit_count(design: Mapping[str, Any]) -> int:
    """The number of units of a design.

    >>> unit_count({"n_encoders": 3, "n_decoders": 5, "n_tasks": 4}), unit_count({"layers": (1, 2), "kinds": ("a", "b")})
    (8, 2)
    """
    return sum(kind_counts(design).values())


def scaled(design: Mapping[str, Any], factor: float, *, counted_kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """``design`` with its units multiplied by ``factor``, each kind separately (rounded up); a
    per-model tuple extended by repeating each kind's own entries; kinds outside ``counted_kinds``
    (None: every kind) kept as they are."""
    out = dict(design)

    def grow(kind: str, n: int) -> int:
        return n if counted_kinds is not None and kind not in counted_kinds else max(1, math.ceil(n * factor))

    if "kinds" in design:
        kinds, layers = list(design["kinds"]), list(design.get("layers", design["kinds"]))
        new_kinds, new_layers = [], []
        for kind in dict.fromkeys(kinds):
            own = [layer for layer, k in zip(layers, kinds) if k == kind]
            n = grow(kind, len(own))
            new_kinds += [kind] * n
            new_layers += [own[i % len(own)] for i in range(n)]
        out["kinds"] = tuple(new_kinds)
        if "layers" in design:
            out["layers"] = tuple(new_layers)
        return out
    if "layers" in design:
        layers = list(design["layers"])
        out["layers"] = tuple(layers[i % len(layers)] for i in range(grow("model", len(layers))))
        return out
    for p, kind in UNIT_KINDS.items():
        if p in design:
            out[p] = grow(kind, int(design[p]))
    return out


def exact_interval(hits: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial share ``hits / n``.

    >>> [round(x, 3) for x in exact_interval(0, 100)]
    [0.0, 0.036]
    """
    from scipy.stats import binomtest

    ci = binomtest(int(hits), int(n)).proportion_ci(level, method="exact")
    return float(ci.low), float(ci.high)


def rates(claim_id: str, design: Mapping[str, Any] | None = None, *, n_draws: int = 100, seed: int = 0,
          models: Sequence[str] = ("power", "null", "edge")) -> dict[str, Any]:
    """Outcome counts of the claim's judge on ``n_draws`` panels drawn at ``design`` by each model.

    Returns
    -------
    dict with, for each model asked that the claim registers, ``<name>`` (the share), ``<name>_hits``
    and ``<name>_untested`` (the share of draws with no p-value: the judge could not test them),
    ``name`` being ``power`` ("reproduced" under the paper's effect), ``false_reproduced``
    ("reproduced" under the null) or ``false_contradicted`` ("contradicted" at the claim's edge);
    ``power_contradicted`` (the share "contradicted" under the paper's effect); and ``n``.
    """
    if isinstance(n_draws, bool) or not isinstance(n_draws, int) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}")
    wanted = {"power": ("power", "reproduced"), "null": ("false_reproduced", "reproduced"),
              "edge": ("false_contradicted", "contradicted")}
    out: dict[str, Any] = {"n": n_draws}
    null = specification(claim_id).null
    for i, model in enumerate(models):
        if null is None or getattr(null, DRAWS[model]) is None:
            continue  # the claim registers no such model
        name, outcome = wanted[model]
        rng = np.random.default_rng([seed, i])
        hits = untested = against = 0
        for _ in range(n_draws):
            verdict = judge(claim_id, simulate(claim_id, design, seed=rng, model=model))
            hits += verdict.outcome == outcome
            untested += verdict.p_value is None
            against += verdict.outcome == "contradicted"
        out.update({name: hits / n_draws, f"{name}_hits": hits, f"{name}_untested": untested / n_draws})
        if model == "power":
            out["power_contradicted"] = against / n_draws
    return out


@dataclass(frozen=True)
class Plan:
    """The panel that would decide one claim.

    Attributes
    ----------
    claim : str
    executed : dict
        The design the walk starts from (the book's default design, as the claim's null model restates it).
    factor : float or None
        The first factor of the walk whose power reached ``target`` in the walk and again on fresh
        draws; None if none did.
    design : dict or None
        The design at that factor.
    curve : tuple of (float, float)
        (factor, power in the walk) at every factor walked.
    checks : tuple of (float, float)
        (factor, fresh power) of every candidate re-estimated (a candidate below ``target`` on
        fresh draws was not kept).
    power, false_reproduced, false_contradicted : float or None
        At ``design``, each over ``n_draws`` fresh panels; their exact 95% intervals in ``intervals``.
    n_walk, n_draws, target, alpha
        Panels per step of the walk, panels per rate at the design, the power asked, the level.
    counted_kinds : tuple of str or None
        The kinds whose units were scaled (None: every kind).
    untestable : bool
        The judge tested no draw at the book's design (no p-value): the claim is not a test on such panels.
    against : float or None
        The largest share, over the steps of the walk, of the power model's panels that the judge
        calls "contradicted" (high: the simulated effect goes against the claim).
    at_largest : (float, float) or None
        (largest factor, its power in a walk step) where the walk stopped before it: a power that
        falls again as models are added shows there.
    source : str
        Where the starting design was read.
    """

    claim: str
    executed: Mapping[str, Any]
    factor: float | None
    design: Mapping[str, Any] | None
    curve: tuple[tuple[float, float], ...]
    checks: tuple[tuple[float, float], ...]
    power: float | None
    false_reproduced: float | None
    false_contradicted: float | None
    intervals: Mapping[str, tuple[float, float]]
    n_walk: int
    n_draws: int
    target: float
    alpha: float = ALPHA
    counted_kinds: tuple[str, ...] | None = None
    untestable: bool = False
    against: float | None = None
    at_largest: tuple[float, float] | None = None
    source: str = "the null model's restated design"

    @property
    def reached(self) -> bool:
        """Whether some factor reached the target power, in the walk and on fresh draws."""
        return self.factor is not None

    @property
    def calibration(self) -> str | None:
        """"above alpha" where an error rate's exact 95% interval lies above ``alpha``; "consistent"
        where both intervals reach down to ``alpha`` or below; None where not simulated."""
        bounds = [self.intervals.get(k) for k in ("false_reproduced", "false_contradicted")]
        if self.design is None or any(b is None for b in bounds):
            return None
        return "above alpha" if any(low > self.alpha for low, _ in bounds) else "consistent"

    def record(self) -> dict:
        """A JSON-ready dict of every field, with ``reached`` and ``calibration``."""
        def plain(d):
            return None if d is None else {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}
        return {"claim": self.claim, "executed": plain(self.executed), "factor": self.factor,
                "design": plain(self.design), "curve": [list(c) for c in self.curve],
                "checks": [list(c) for c in self.checks], "power": self.power,
                "false_reproduced": self.false_reproduced, "false_contradicted": self.false_contradicted,
                "intervals": {k: list(v) for k, v in self.intervals.items()}, "n_walk": self.n_walk,
                "n_draws": self.n_draws, "target": self.target, "alpha": self.alpha,
                "counted_kinds": None if self.counted_kinds is None else list(self.counted_kinds),
                "reached": self.reached, "calibration": self.calibration, "untestable": self.untestable,
                "against": self.against,
                "at_largest": None if self.at_largest is None else list(self.at_largest), "source": self.source}


def counted_kinds_of(claim_id: str) -> tuple[str, ...] | None:
    """The kinds of model a claim's judge counts at the book's rules (its Scope's ``kinds``, from the
    rule 'scope' or the claim's own scope); None: every kind.

    >>> counted_kinds_of("skean.choice"), counted_kinds_of("lrd.architecture")
    (('decoder',), None)
    """
    spec = specification(claim_id)
    for rule in spec.rules:
        if rule.name == "scope" and getattr(rule.value, "kinds", None):
            return tuple(rule.value.kinds)
    scope = spec.claim.scope
    return tuple(scope.kinds) if scope is not None and scope.kinds else None


def decisive_design(claim_id: str, design: Mapping[str, Any] | None = None, *, target: float = 0.8,
                    factors: Sequence[float] = FACTORS, n_walk: int = 40, n_draws: int = 100,
                    seed: int = 0, source: str | None = None) -> Plan:
    """The smallest panel (in units) at which the claim's test reaches ``target`` power.

    Parameters
    ----------
    claim_id : str
        A claim whose specification has a null model with a ``power`` model.
    design : mapping, optional
        Where the walk starts (default: the null model's design, the book's default panel).
    target : float
        The power asked (0.8: the convention of a decisive design).
    factors : sequence of float
        Increasing factors to walk.
    n_walk : int
        Panels drawn at each factor of the walk.
    n_draws : int
        Panels drawn to check a candidate's power, and per error rate at the design kept.
    seed : int
        The draws' seed (each factor, check and model its own stream).
    source : str, optional
        Where ``design`` was read (e.g. the executed chapter), for the record.

    Returns
    -------
    Plan
    """
    spec = specification(claim_id)
    if spec.null is None or spec.null.power_effect is None:
        raise ValueError(f"{claim_id} has no power model to plan with (a demonstration, or no effect simulated)")
    if not (0 < target < 1):
        raise ValueError(f"target must be a power in (0, 1), got {target!r}")
    start = dict(spec.null.design if design is None else design)
    source = source or ("the null model's restated design" if design is None else "given")
    if not set(start) & set(UNITS):
        raise ValueError(f"{claim_id}'s design {sorted(start)} counts no units ({', '.join(UNITS)})")
    kinds = counted_kinds_of(claim_id)
    curve, checks = [], []
    against = 0.0
    found = None
    untestable = False
    for k, factor in enumerate(factors):
        at = scaled(start, factor, counted_kinds=kinds)
        r = rates(claim_id, at, n_draws=n_walk, seed=seed + 1000 * k, models=("power",))
        curve.append((float(factor), float(r["power"])))
        against = max(against, float(r["power_contradicted"]))
        if k == 0 and r["power_untested"] == 1.0:
            untestable = True
            break
        if r["power"] < target:
            continue
        fresh = rates(claim_id, at, n_draws=n_draws, seed=seed + 10 ** 6 + k, models=("power",))
        checks.append((float(factor), float(fresh["power"])))
        if fresh["power"] >= target:
            found = (float(factor), at, fresh)
            break
    if found is None:
        return Plan(claim_id, start, None, None, tuple(curve), tuple(checks), None, None, None, {}, n_walk, n_draws,
                    target, counted_kinds=kinds, untestable=untestable, against=against, source=source)
    factor, at, fresh = found
    largest = None
    if factor < factors[-1]:  # does the power hold as models are added? (a statistic may weaken with size)
        r = rates(claim_id, scaled(start, factors[-1], counted_kinds=kinds), n_draws=n_walk, seed=seed + 3 * 10 ** 6,
                  models=("power",))
        largest = (float(factors[-1]), float(r["power"]))
    r = rates(claim_id, at, n_draws=n_draws, seed=seed + 2 * 10 ** 6, models=("null", "edge"))
    intervals = {"power": exact_interval(fresh["power_hits"], n_draws)}
    for name in ("false_reproduced", "false_contradicted"):
        if name in r:
            intervals[name] = exact_interval(r[f"{name}_hits"], n_draws)
    return Plan(claim_id, start, factor, at, tuple(curve), tuple(checks), fresh["power"], r.get("false_reproduced"),
                r.get("false_contradicted"), intervals, n_walk, n_draws, target, counted_kinds=kinds,
                against=against, at_largest=largest, source=source)


#: How each design parameter reads in words (singular, plural).
_NOUNS = {"n_tasks": ("task", "tasks"), "n_seeds": ("seed", "seeds"), "n_items": ("item per task", "items per task"),
          "n_prompts": ("prompt", "prompts"), "n_splits": ("random split", "random splits")}


def design_words(design: Mapping[str, Any]) -> str:
    """A design in words: its units by kind, then what each is measured on.

    >>> design_words({"layers": (6, 12, 30), "kinds": ("encoder", "encoder", "decoder"), "n_tasks": 4})
    '2 encoders and 1 decoder, 4 tasks'
    >>> design_words({"n_models": 8, "n_seeds": 1}), design_words({"n_mappings": 20, "n_seeds": 3})
    ('8 models, 1 seed', '20 random mappings, 3 seeds')
    """
    counts = kind_counts(design)
    noun = {"mapping": "random mapping"}
    units = [f"{n} {noun.get(k, k)}{'s' if n != 1 else ''}" for k, n in counts.items()]
    parts = [" and ".join(units)] if units else []
    for p, v in design.items():
        if p in _NOUNS:
            one, many = _NOUNS[p]
            parts.append(f"{v} {one if v == 1 else many}")
    return ", ".join(parts)


def _plan_task(args: tuple) -> dict:
    claim_id, n_walk, n_draws, seed, target, design, source = args
    return decisive_design(claim_id, design, n_walk=n_walk, n_draws=n_draws, seed=seed, target=target,
                           source=source).record()


def plan_all(claims: Sequence[str] | None = None, *, n_walk: int = 40, n_draws: int = 100, seed: int = 0,
             target: float = 0.8, jobs: int = 1, progress=None,
             designs: Mapping[str, tuple[Mapping[str, Any], str]] | None = None) -> list[dict]:
    """:meth:`Plan.record` of :func:`decisive_design` for every claim with a power model (or
    ``claims``), in the claims' order; ``jobs`` processes; ``progress(done, total, claim)`` after each;
    ``designs``: claim -> (starting design, where it was read), e.g. the executed chapters'
    (:func:`lrd.book.designs.executed_designs`); a claim without one starts from its null model's."""
    designs = designs or {}
    from lrd.verdicts.specifications import SPECIFICATIONS

    names = list(SPECIFICATIONS) if claims is None else list(claims)
    tasks = [(c, n_walk, n_draws, seed, target, *(designs.get(c) or (None, None))) for c in names
             if specification(c).null is not None and specification(c).null.power_effect is not None]
    out: list[dict | None] = [None] * len(tasks)
    if jobs <= 1:
        for i, t in enumerate(tasks):
            out[i] = _plan_task(t)
            if progress:
                progress(i + 1, len(tasks), t[0])
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(jobs) as pool:
            futures = {pool.submit(_plan_task, t): i for i, t in enumerate(tasks)}
            for done, f in enumerate(as_completed(futures), 1):
                out[futures[f]] = f.result()
                if progress:
                    progress(done, len(tasks), tasks[futures[f]][0])
    return [r for r in out if r is not None]
