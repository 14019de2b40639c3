"""Every claim's specification, by paper, and the two entry points a researcher calls on their own tables.

- :func:`judge` ``(claim_id, tables, **choices)``: the claim's verdict on its tables, in the
  chapter's tidy format (each specification's :attr:`~lrd.verdicts.spec.Specification.tables`
  says which), with any of the book's rules replaced by name.
- :func:`simulate` ``(claim_id, design, seed=...)``: tables that :func:`judge` accepts, drawn by
  the claim's null model (``model="null"``), at the edge of the paper's effect (``"edge"``), or
  at the paper's effect (``"power"``): the simulations behind the null-calibration appendix.

One module per paper, mirroring the chapters: :mod:`~lrd.verdicts.specifications.jiang2026`
(LRD), :mod:`~lrd.verdicts.specifications.skean2025` (Layer by Layer),
:mod:`~lrd.verdicts.specifications.hinostroza2026` (Beyond cosine) and
:mod:`~lrd.verdicts.specifications.ulanovski2026` (ILSE).

Examples
--------
>>> from lrd.verdicts.specifications import judge, simulate
>>> verdict = judge("skean.gain", simulate("skean.gain", seed=1))
>>> verdict.claim, verdict.outcome in ("reproduced", "contradicted", "inconclusive", "not testable")
('skean.gain', True)
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import numpy as np

from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.record import Verdict
from lrd.verdicts.spec import NullModel, Specification
from lrd.verdicts.specifications import hinostroza2026, jiang2026, skean2025, ulanovski2026

__all__ = ["DRAWS", "SPECIFICATIONS", "specification", "judge", "simulate", "null_models"]

#: Claim id -> its :class:`~lrd.verdicts.spec.Specification`, in the order of :data:`lrd.verdicts.claims.CLAIMS`.
SPECIFICATIONS: dict[str, Specification] = {
    s.id: s for s in sorted((*jiang2026.SPECIFICATIONS, *skean2025.SPECIFICATIONS, *hinostroza2026.SPECIFICATIONS,
                             *ulanovski2026.SPECIFICATIONS), key=lambda s: list(CLAIMS).index(s.id))}

if list(SPECIFICATIONS) != list(CLAIMS):
    raise RuntimeError("every claim needs exactly one specification: missing "
                       f"{sorted(set(CLAIMS) - set(SPECIFICATIONS))}, unknown {sorted(set(SPECIFICATIONS) - set(CLAIMS))}")


def specification(claim_id: str) -> Specification:
    """The specification of ``claim_id`` (``"skean.gain"``)."""
    try:
        return SPECIFICATIONS[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim {claim_id!r}; claims: {', '.join(SPECIFICATIONS)}") from None


def null_models() -> dict[str, NullModel]:
    """Claim id -> its null model, for every claim that has one (the tests the appendix calibrates)."""
    return {cid: s.null for cid, s in SPECIFICATIONS.items() if s.null is not None}


def judge(claim_id: str, tables: Mapping[str, Any], *, note: str | None = None, **choices: Any) -> Verdict:
    """The verdict on ``claim_id`` from its tables, under the book's rules or ``choices``.

    Parameters
    ----------
    claim_id : str
        A claim of :data:`lrd.verdicts.claims.CLAIMS`.
    tables : mapping
        Table name -> table, as the specification's :attr:`~lrd.verdicts.spec.Specification.tables`
        describe them (what the chapter computes, or :func:`simulate` draws). A rule's name here
        (a simulation that fixes a rule of its own) is taken as a choice.
    note : str, optional
        A sentence the verdict adds to its evidence (presentation only: no number depends on it).
    **choices
        Rules of the specification replaced by name (``margin=0.2``); the rest keep the book's
        values. A name that is not one of the claim's rules is refused.

    Returns
    -------
    Verdict
        Its outcome computed from its numbers (:func:`lrd.verdicts.record.decide`).
    """
    spec = specification(claim_id)
    rules = {r.name for r in spec.rules}
    # a simulation may fix a rule of its own (fewer resamples for speed): a rule named in
    # ``tables`` is taken as a choice, and a choice passed here overrides it
    choices = {**{k: v for k, v in tables.items() if k in rules}, **choices}
    tables = {k: v for k, v in tables.items() if k not in rules}
    declared = {t.name for t in spec.tables}
    unknown = sorted(set(tables) - declared)
    if unknown:
        raise ValueError(f"{claim_id}: {', '.join(unknown)} is not a table of this claim; its tables: "
                         f"{', '.join(sorted(declared)) or 'none'}")
    missing = sorted(t.name for t in spec.tables if t.required and t.name not in tables)
    if missing:
        raise ValueError(f"{claim_id}: the table(s) {', '.join(missing)} are needed (see "
                         f"lrd.verdicts.specifications.specification({claim_id!r}).tables)")
    unknown = sorted(set(choices) - rules)
    if unknown:
        raise ValueError(f"{claim_id}: {', '.join(unknown)} is not a rule of this claim; its rules: "
                         f"{', '.join(sorted(rules)) or 'none'}")
    verdict = spec.judge(**tables, **choices, **({} if note is None else {"note": note}))
    if verdict.claim != claim_id:
        raise RuntimeError(f"the judge of {claim_id} returned a verdict on {verdict.claim!r}")
    return verdict


#: The models :func:`simulate` draws by, and the :class:`~lrd.verdicts.spec.NullModel` attribute of each.
DRAWS = {"null": "simulate", "edge": "effect", "power": "power_effect"}


def simulate(claim_id: str, design: Mapping[str, Any] | None = None, *, seed: int | np.random.Generator = 0,
             model: Literal["null", "edge", "power"] = "null") -> dict[str, Any]:
    """Tables for :func:`judge`, drawn by the claim's null or effect model.

    Parameters
    ----------
    claim_id : str
        A claim judged by a test with a null model (:func:`null_models`).
    design : mapping, optional
        The design's size (its parameters: the null model's
        :attr:`~lrd.verdicts.spec.NullModel.design`, e.g. ``{"n_models": 8}``); default the
        book's default panel.
    seed : int or numpy.random.Generator
    model : {"null", "edge", "power"}
        ``"null"``: the test's null hypothesis; ``"edge"``: the paper's claim holding at the edge
        least favourable to "contradicted"; ``"power"``: the paper's effect as the paper states it.
    """
    spec = specification(claim_id)
    if spec.null is None:
        why = "a demonstration" if spec.claim.kind == "demonstration" else "a test no panel of the book can run"
        raise ValueError(f"{claim_id} is {why}: it has no null model to simulate")
    if model not in DRAWS:
        raise ValueError(f"model must be one of {', '.join(DRAWS)}, got {model!r}")
    draw = spec.null.at(**(design or {})).draw(DRAWS[model])
    if draw is None:
        raise ValueError(f"{claim_id}: no {model!r} model is registered for this claim")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return draw(rng)
