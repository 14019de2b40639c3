"""The plan of what would decide each claim: its decisive panel, named hub models, the command and the cost.

:func:`lrd.verdicts.planning.plan_all` finds, per claim, the smallest simulated panel (in units:
models, or random mappings) whose power at the claim's simulated effect reaches 80%, with its false
"reproduced" and false "contradicted" rates there. This module names real hub models for that panel
(:func:`hub_models`: the smallest base decoders and encoders of :data:`lrd.units.panels.MODELS`,
within the paper's size range where its claim states one), the ``lrd sweep`` command that runs the
claim's chapter on them, and its estimated cost (:func:`lrd.units.cost.chapter_estimate` of that
command's parameters: forward-pass FLOPs on the models' published sizes, the measured fits, and the
time to download and read each model). Where the panel needs more models of a kind than the table
names within the paper's scope, it says how many are missing instead of inventing them.

Written to ``book/plan.json`` by::

    python -m lrd.units.plan --out book/plan.json --results <built book>/book/results --jobs 2

and rendered by the ``{lrd-plan}`` directive on the appendix page "What would decide each claim".
After a change to some claims only, ``--claims a,b`` recomputes theirs and keeps the others, noting the
update (its date, commit and claims) in the plan's ``updates``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from lrd.units.cost import GPU, UTILISATION, chapter_estimate
from lrd.units.panels import Panel, models_within, panel_parameters
from lrd.verdicts.claims import CLAIMS, ILSE_PARAMS_RANGE
from lrd.verdicts.planning import kind_counts, plan_all

__all__ = ["MODEL_KINDS", "cost_of", "hub_models", "main", "make_plan", "merge_plans"]

#: The kind of hub model a claim's units are where its design counts "models" without a kind: "half"
#: for a panel of encoders and decoders in equal numbers (as the book's), else one kind. A design's
#: random mappings are trained on one decoder.
MODEL_KINDS = {"lrd.complementarity": "half", "lrd.selection": "half", "lrd.selection_strongest": "half"}

#: Base-model parameter range of the claims whose paper states one (inclusive).
PARAMS_RANGES = {c: ILSE_PARAMS_RANGE for c in CLAIMS if c.startswith("ilse.")}


def _needed(claim_id: str, design: dict) -> dict[str, int]:
    counts = kind_counts(design)
    need = {"encoder": counts.get("encoder", 0), "decoder": counts.get("decoder", 0)}
    n = counts.get("model", 0)
    if MODEL_KINDS.get(claim_id) == "half":
        need["encoder"] += n // 2
        need["decoder"] += n - n // 2
    else:
        need["decoder"] += n
    if counts.get("mapping"):
        need["decoder"] = max(need["decoder"], 1)
    return {k: v for k, v in need.items() if v}


def hub_models(claim_id: str, design: dict) -> dict:
    """Hub models for a planned design: the smallest base decoders (and encoders) of the table within
    the claim's parameter range, as many as the design counts of each kind.

    Returns
    -------
    dict with ``models`` (hub ids), ``needed`` and ``available`` (kind -> count) and ``missing``
    (kind -> how many more the design needs than the table names within the paper's scope).
    """
    params = PARAMS_RANGES.get(claim_id)
    pools = {"decoder": models_within(kind="decoder", training="base", params=params),
             "encoder": models_within(kind="encoder", params=params)}
    need = _needed(claim_id, design)
    chosen, missing = [], {}
    for kind, n in need.items():
        pool = [m.hub_id for m in pools[kind]]
        chosen += pool[:n]
        if n > len(pool):
            missing[kind] = n - len(pool)
    return {"models": chosen, "needed": need, "available": {k: len(v) for k, v in pools.items() if k in need},
            "missing": missing}


def _command(chapter: str, parameters: dict) -> str:
    return f"lrd sweep {chapter} " + " ".join(f"-p {k} '{json.dumps(v)}'" for k, v in parameters.items())


def cost_of(plan: dict) -> dict | None:
    """The hub models, command and estimated cost of a plan record that reached its power (None if not).

    Returns
    -------
    dict with ``models``, ``needed``, ``available``, ``missing`` (:func:`hub_models`), ``command``,
    ``gpu_hours`` (forward passes at :data:`lrd.units.cost.UTILISATION` of the device's bf16 peak),
    ``load_hours`` (downloading and reading each model once), ``cpu_hours`` (fits, measured on this
    project's machine) and ``device``.
    """
    if not plan.get("reached"):
        return None
    claim_id = plan["claim"]
    chapter = CLAIMS[claim_id].chapter
    hub = hub_models(claim_id, plan["design"])
    if not hub["models"]:
        return {**hub, "command": None, "gpu_hours": None, "load_hours": None, "cpu_hours": None, "device": None}
    parameters = panel_parameters(chapter, Panel(f"plan for {claim_id}", tuple(hub["models"]),
                                                 f"the planned panel of {claim_id}"))
    if "n_mappings" in plan["design"]:
        parameters["n_mappings"] = int(plan["design"]["n_mappings"])
    estimate = chapter_estimate(chapter, parameters)
    return {**hub, "command": _command(chapter, parameters), "gpu_hours": estimate.gpu_hours,
            "load_hours": estimate.load_hours, "cpu_hours": estimate.cpu_hours,
            "device": f"{GPU[0]} at an assumed {UTILISATION:.0%} of its bf16 peak"}


def _commit() -> str:
    """This checkout's commit, with "+uncommitted" where lrd/ differs from it (the plan names the code it ran)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", str(here.parent)], capture_output=True,
                               text=True, cwd=here, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+uncommitted" if dirty else "")


def make_plan(*, n_walk: int = 40, n_draws: int = 100, seed: int = 0, target: float = 0.8, jobs: int = 1,
              progress=None, results: Path | None = None, claims: list[str] | None = None) -> dict:
    """The whole plan: every claim's (or ``claims``') :func:`~lrd.verdicts.planning.plan_all` record
    with its cost, each walk starting from the design the built book at ``results`` executed
    (:func:`lrd.book.designs.executed_designs`, as the null-calibration appendix), else from the
    claim's null model's."""
    from lrd.book.designs import executed_designs

    unknown = sorted(set(claims or ()) - set(CLAIMS))
    if unknown:
        raise ValueError(f"unknown claims {unknown}; the claims are {', '.join(CLAIMS)}")
    started = time.perf_counter()
    designs = executed_designs(results) if results is not None else {}
    plans = plan_all(claims, n_walk=n_walk, n_draws=n_draws, seed=seed, target=target, jobs=jobs, progress=progress,
                     designs=designs)
    for p in plans:
        p["cost"] = cost_of(p)
    commit = _commit()
    return {"date": date.today().isoformat(), "commit": commit, "n_walk": n_walk, "n_draws": n_draws, "seed": seed,
            "target": target, "seconds": round(time.perf_counter() - started, 1), "plans": plans}


def merge_plans(old: dict, new: dict) -> dict:
    """``old`` with the plans of ``new`` in place of its own for the same claims (in ``old``'s order,
    new claims last) and the update noted in ``updates``: date, commit, claims, seconds. The walk's
    settings must be the same, or the page's one line on them would be wrong."""
    settings = ("n_walk", "n_draws", "seed", "target")
    if any(old[k] != new[k] for k in settings):
        raise ValueError("the update's settings differ from the plan's "
                         f"({ {k: (old[k], new[k]) for k in settings if old[k] != new[k]} }): recompute every claim")
    fresh = {p["claim"]: p for p in new["plans"]}
    plans = [fresh.pop(p["claim"], p) for p in old["plans"]] + list(fresh.values())
    update = {"date": new["date"], "commit": new["commit"], "claims": [p["claim"] for p in new["plans"]],
              "seconds": new["seconds"]}
    return {**old, "plans": plans, "updates": [*old.get("updates", []), update]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lrd.units.plan", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("book/plan.json"))
    ap.add_argument("--n-walk", type=int, default=40)
    ap.add_argument("--n-draws", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", type=float, default=0.8)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--results", type=Path, help="a built default book's results folder: each walk starts from the "
                    "design its chapters executed (default: each claim's null model's restated design)")
    ap.add_argument("--claims", help="comma-separated claim ids: recompute these only and keep the others of --out")
    a = ap.parse_args(argv)
    claims = [c.strip() for c in a.claims.split(",") if c.strip()] if a.claims else None
    if claims and not a.out.exists():
        ap.error(f"--claims updates an existing plan, and {a.out} does not exist")

    def progress(done, total, claim):
        print(f"\rplan: {done}/{total} ({claim})".ljust(60), end="", file=sys.stderr, flush=True)

    plan = make_plan(n_walk=a.n_walk, n_draws=a.n_draws, seed=a.seed, target=a.target, jobs=a.jobs, progress=progress,
                     results=a.results, claims=claims)
    print(file=sys.stderr)
    if claims:
        plan = merge_plans(json.loads(a.out.read_text()), plan)
    tmp = a.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(plan, indent=1, allow_nan=False) + "\n")
    tmp.replace(a.out)
    print(f"plan: {len(plan['plans'])} claims -> {a.out} ({plan['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
