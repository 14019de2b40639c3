"""Specification sensitivity of an executed book: every verdict judged again, from the tables its
chapter saved, under each alternative of each of the book's rules.

The tables are those :meth:`lrd.book.glue.Glue.save` keeps under ``<results>/<chapter>.tables/``;
the rules and their alternatives are the claims' specifications
(:mod:`lrd.verdicts.specifications`); :func:`lrd.verdicts.sensitivity.sensitivity` does the
judging. A verdict that one of the book's choices flips is not decided by the data alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from lrd.book.glue import saved_tables
from lrd.book.specs import rule_value
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.sensitivity import sensitivity

__all__ = ["SENSITIVITY_COLUMNS", "sensitivity_table"]

#: Columns of :func:`sensitivity_table`.
SENSITIVITY_COLUMNS = ("claim", "chapter", "outcome", "choices tried", "robust", "flipped by")


def sensitivity_table(results: str | Path, chapters: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per verdict whose chapter saved its tables: its outcome, how many alternatives of the
    book's rules were tried, whether every one gives the same outcome, and those that do not.

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
        saved = saved_tables(results, chapter)
        for claim_id in [c for c in CLAIMS if c in saved]:
            inputs = saved[claim_id]
            s = sensitivity(claim_id, inputs["tables"], note=inputs["note"], **inputs["choices"])
            rows.append({"claim": claim_id, "chapter": chapter, "outcome": s.primary.outcome,
                         "choices tried": len(s.alternatives), "robust": s.robust,
                         "flipped by": "; ".join(f"{a.rule} = {rule_value(a.value)}: {a.outcome}" for a in s.flips)})
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))
