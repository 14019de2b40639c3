"""Specification sensitivity of an executed book: every verdict judged again, from the tables its
chapter saved, under each alternative of each of the book's rules.

Each chapter does the judging as it records a verdict (:meth:`lrd.book.glue.Glue.judge`, through
:func:`lrd.book.tested.context`): its record in ``<results>/<chapter>.json`` keeps ``robust``,
``flips`` and ``n_alternatives``, and :func:`sensitivity_table` reads them. A record written
before the chapters did so is judged again here from the tables :meth:`lrd.book.glue.Glue.save`
keeps under ``<results>/<chapter>.tables/`` (:func:`lrd.verdicts.sensitivity.sensitivity`; the
rules and their alternatives are the claims' specifications, :mod:`lrd.verdicts.specifications`).
A verdict that one of the book's choices flips is not decided by the data alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from lrd.book.findings import verdict_records
from lrd.book.glue import saved_claims, saved_tables
from lrd.book.specs import short_value
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.sensitivity import sensitivity

__all__ = ["SENSITIVITY_COLUMNS", "sensitivity_table"]

#: Columns of :func:`sensitivity_table`.
SENSITIVITY_COLUMNS = ("claim", "chapter", "outcome", "choices tried", "robust", "flipped by")


def sensitivity_table(results: str | Path, chapters: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per verdict whose chapter saved its tables: its outcome, how many alternatives of the
    book's rules were tried, whether every one gives the same outcome, and those that do not, as
    its chapter's record says (judged again from the saved tables for a record that does not).

    Parameters
    ----------
    results : path
        An executed book's results folder (``book/results``).
    chapters : iterable of str, optional
        The chapters to read (default every chapter with a claim, in the claims' order).

    Returns
    -------
    pandas.DataFrame
        :data:`SENSITIVITY_COLUMNS`; ``flipped by`` lists ``rule = value: outcome`` per flip.
    """
    if chapters is None:
        chapters = list(dict.fromkeys(c.chapter for c in CLAIMS.values()))
    rows = []
    for chapter in chapters:
        saved = saved_claims(results, chapter)
        records = {r["claim"]: r for r in verdict_records(results, [chapter])}
        for claim_id in [c for c in CLAIMS if c in saved]:
            rows.append({"claim": claim_id, "chapter": chapter,
                         **_sensitivity_of(claim_id, results, chapter, records.get(claim_id))})
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))


def _sensitivity_of(claim_id: str, results: Path, chapter: str, record: dict | None) -> dict:
    """A row's outcome, choices tried, robust and flips: from the chapter's record where it kept
    them, else judged again from the saved ``inputs``."""
    if record is not None and record.get("robust") is not None:
        flips = record.get("flips") or []
        return {"outcome": record["outcome"], "choices tried": record.get("n_alternatives"),
                "robust": bool(record["robust"]),
                "flipped by": "; ".join(f"{f['rule']} = {f['value']}: {f['outcome']}" for f in flips)}
    inputs = saved_tables(results, chapter, [claim_id])[claim_id]  # read only where the record lacks it
    s = sensitivity(claim_id, inputs["tables"], note=inputs["note"], **inputs["choices"])
    return {"outcome": s.primary.outcome, "choices tried": len(s.counted), "robust": s.robust,
            "flipped by": "; ".join(f"{a.rule} = {short_value(a.value)}: {a.outcome}" for a in s.flips)}
