"""The appendix "What would decide each claim", rendered from the plan (``book/plan.json``).

The plan is computed by ``python -m lrd.units.plan`` (:mod:`lrd.units.plan`, from the claims'
own null and effect simulations, :mod:`lrd.verdicts.planning`) and committed with its date, commit
and number of simulated panels; the ``{lrd-plan}`` directive renders it, so no number of the page
is typed. The dashboard links each undecided verdict to its claim's entry here (:func:`anchor`).
"""

from __future__ import annotations

import json
from pathlib import Path
from lrd.book import markup

__all__ = ["PLAN", "anchor", "claim_plan_text", "load_plan", "plan_claims", "plan_line", "plan_markdown",
           "power_model_text", "why_not"]

ROOT = Path(__file__).resolve().parents[2]
#: Where the committed plan lives.
PLAN = ROOT / "book" / "plan.json"

def anchor(claim_id: str) -> str:
    """The appendix's target name for a claim (``"decide-skean-gain"``).

    >>> anchor("lrd.pruning_gfmi_only")
    'decide-lrd-pruning-gfmi-only'
    """
    return "decide-" + claim_id.replace(".", "-").replace("_", "-")


def load_plan(path: Path = PLAN) -> dict | None:
    """The committed plan, or None where there is none."""
    return json.loads(Path(path).read_text()) if Path(path).is_file() else None


def _interval(plan: dict, name: str) -> str:
    low, high = plan["intervals"][name]
    return f"{plan[name]:.2f} (95% interval {low:.2f} to {high:.2f})"


def _words(design: dict | None) -> str:
    from lrd.verdicts.planning import design_words

    return design_words(design) if design else ""


def _factor(f: float) -> str:
    return f"{f:g}×"


def _hours(x: float) -> str:
    return "under 0.01" if x < 0.01 else f"about {x:.2g}"


def why_not(p: dict) -> str:
    """Why no panel of the walk decided a claim, from the plan's numbers.

    >>> why_not({"untestable": True})
    'the judge tests none of the simulated panels (no p-value): no panel of this kind decides it'
    >>> why_not({"untestable": False, "against": 0.7, "curve": [[1, 0.0]], "alpha": 0.05})
    "the simulated effect goes against the claim: at some size of the walk the judge calls 70% of the power model's panels 'contradicted'"
    """
    if p.get("untestable"):
        return "the judge tests none of the simulated panels (no p-value): no panel of this kind decides it"
    against = p.get("against")
    if against is not None and against >= 0.5:
        return (f"the simulated effect goes against the claim: at some size of the walk the judge calls "
                f"{against:.0%} of the power model's panels 'contradicted'")
    best = max((c[1] for c in p.get("curve", [])), default=0.0)
    if best <= p.get("alpha", 0.05):
        return ("the test says 'reproduced' on almost none of the simulated panels at any size: adding models does "
                "not add what this test counts (its statistic, or its unit within a model, is not helped by more "
                "models under this simulation)")
    last = p["curve"][-1]
    top = max(p["curve"], key=lambda c: c[1])
    if last[1] < top[1] / 2:
        return (f"its power falls as models are added (at most {top[1]:.2f}, at {_factor(top[0])}; {last[1]:.2f} at "
                f"{_factor(last[0])}): the test's statistic weakens as the panel grows")
    return f"its power grows too slowly: {last[1]:.2f} at {_factor(last[0])} the book's units"


def power_model_text(claim_id: str) -> str:
    """What the claim's power model simulates, in words, at the book's design (its ``power_panel``)."""
    from lrd.verdicts.specifications import specification

    null = specification(claim_id).null
    return null.describe("power_panel") if null is not None and null.power_effect is not None else ""


def plan_line(p: dict) -> str:
    """One claim's plan in a paragraph of MyST: the panel found (or why none), its power and error
    rates with their exact intervals, the hub models, the command and the cost.

    >>> plan_line({"claim": "lrd.selection", "reached": False, "untestable": False, "curve": [[1, 0.1], [8, 0.5]],
    ...            "checks": [], "executed": {"n": 8}, "target": 0.8, "n_walk": 40, "n_draws": 100})
    "From 8 models: no panel up to 8× the units reaches power 0.8, since its power grows too slowly: 0.50 at 8× the book's units (walk: 0.1 at 1×, 0.5 at 8×)."
    """
    start = f"From {markup.text(_words(p['executed']))}"
    curve = ", ".join(f"{c[1]:.2g} at {_factor(c[0])}" for c in p["curve"])
    if p.get("untestable"):
        return f"{start}: {why_not(p)}."
    rejected = [c for c in p.get("checks", []) if p.get("factor") is None or c[0] != p["factor"]]
    again = ("; " + ", ".join(f"at {_factor(c[0])} the walk's power was not confirmed on {p['n_draws']} fresh "
                              f"panels ({c[1]:.2f})" for c in rejected)) if rejected else ""
    if not p["reached"]:
        last = p["curve"][-1][0] if p["curve"] else 1
        return (f"{start}: no panel up to {_factor(last)} the units reaches power {p['target']:g}, since "
                f"{why_not(p)} (walk: {curve}{again}).")
    text = (f"{start}: **{markup.text(_words(p['design']))}** ({_factor(p['factor'])}). Power "
            f"{_interval(p, 'power')} on {p['n_draws']} fresh panels (walk: {curve}{again})")
    if p["factor"] == 1:
        text += ("; at the book's own executed design: where the chapter's verdict is undecided, its data are noisier "
                 "or its effect smaller than this simulation assumes")
    largest = p.get("at_largest")
    if largest and largest[1] < p["target"]:
        text += (f"; **the power falls again with more models** ({largest[1]:.2f} at {_factor(largest[0])}): "
                 "the test's statistic weakens as the panel grows, so this panel is not a safe lower bound")
    rates = [f"false {name.split('_')[1]} {_interval(p, name)}" for name in ("false_reproduced", "false_contradicted")
             if p.get(name) is not None]
    if rates:
        text += "; " + ", ".join(rates)
        if p.get("calibration") == "above alpha":
            text += f" (**above {p['alpha']:g}**: the judge would need recalibrating at this panel)"
        elif p.get("calibration") == "consistent":
            text += f" (consistent with at most {p['alpha']:g})"
    cost = p.get("cost") or {}
    if cost.get("models"):
        missing = cost.get("missing") or {}
        text += (". Hub models: the smallest of the book's table"
                 + (" within the paper's size range" if p["claim"].startswith("ilse.") else ""))
        if missing:
            text += ("; **partial**: the table names " + ", ".join(
                f"{cost['available'][k]} {k}s of the {cost['needed'][k]} needed" for k in missing)
                + ", so the command runs those and its cost is theirs")
        if cost.get("command"):
            text += (f"; `{cost['command']}` would take {_hours(cost['gpu_hours'])} GPU-hours of forward passes "
                     f"({markup.text(cost['device'])}: a lower bound), {_hours(cost['load_hours'])} hours to "
                     f"download and read the models, and {_hours(cost['cpu_hours'])} CPU-hours of fits. The "
                     "smallest models may fall to chance on a task, and a claim that counts only models above "
                     "chance then counts fewer")
    return text + "."


def claim_plan_text(plan: dict | None, claim_id: str) -> str:
    """The decisive panel of a claim in a few words (for the dashboard), "" without a plan."""
    if not plan:
        return ""
    found = [p for p in plan["plans"] if p["claim"] == claim_id]
    if not found:
        return ""
    p = found[0]
    if p.get("untestable"):
        return "not a test on any panel of this kind"
    if not p["reached"]:
        return "no simulated panel up to 8× the book's units decides it"
    return f"{_words(p['design'])} (power {p['power']:.2f} in simulation)"


def plan_markdown(plan: dict | None) -> str:
    """The appendix's body: how the plan was made, then per claim (in the claims' order) its
    power model and its plan (:func:`plan_line`), each under a target of :func:`anchor`."""
    from lrd.verdicts.claims import CLAIMS

    if not plan:
        return "No plan has been computed yet (`python -m lrd.units.plan --out book/plan.json`)."
    lines = [f"Computed on {plan['date']} with the code of commit `{plan['commit']}` by `python -m lrd.units.plan` "
             f"({plan['n_walk']} simulated panels per step of the walk, {plan['n_draws']} fresh panels to confirm "
             f"a step's power and per error rate, seed {plan['seed']}; {plan['seconds'] / 60:.0f} minutes on 2 "
             "cores)."]
    for u in plan.get("updates", []):
        lines[0] += (f" Recomputed on {u['date']} with the code of commit `{u['commit']}`, the same settings: "
                     + ", ".join(f"`{c}`" for c in u["claims"]) + ".")
    lines.append("")
    by_claim = {p["claim"]: p for p in plan["plans"]}
    for claim_id in [c for c in CLAIMS if c in by_claim]:
        c = CLAIMS[claim_id]
        effect = power_model_text(claim_id)
        lines += [f"({anchor(claim_id)})=", f"### {markup.text(c.label)}", "",
                  f"`{claim_id}` ({c.chapter}). Simulated effect (the claim's power model, in words at its default "
                  f"design): {markup.text(effect)}.", "", plan_line(by_claim[claim_id]), ""]
    untested = [c for c in CLAIMS if c not in by_claim]
    if untested:
        lines += ["### Claims without a plan", "",
                  "A demonstration, or a test without a simulated effect, has no power to plan for: "
                  + ", ".join(f"`{c}`" for c in untested) + ".", ""]
    return "\n".join(lines)


def plan_claims(plan: dict | None) -> set[str]:
    """The claims the plan has an entry for."""
    return {p["claim"] for p in (plan or {}).get("plans", [])}
