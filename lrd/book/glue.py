"""Tidy result tables and glued numbers for the book.

Every number in a chapter's prose is glued (myst-nb ``glue``) under the key
``<chapter>-<name>``; :class:`Glue` also writes the same keys to ``results/<chapter>.json`` so
that the README and tests can quote and check them. Floats are rounded so that re-executions on
other machines print the same digits (what nbval compares): glued values to
:data:`lrd.tables.GLUE_DIGITS` decimals, tables by :func:`lrd.tables.rounded`.

Verdicts on the papers' claims are recorded with :meth:`Glue.verdict`, one call per claim; they
go into the same JSON under ``"verdicts"`` (a list of :data:`VERDICT_FIELDS` records), which the
book's landing page gathers into its verdict dashboard (``lrd.book.sphinxext``).
"""

from __future__ import annotations

import json
import numbers
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np
import pandas as pd

from lrd.book import markup
from lrd.engine.store import atomic_write
from lrd.tables import GLUE_DIGITS, rounded

if TYPE_CHECKING:
    from lrd.verdicts import Verdict


#: Fields of one verdict record in ``results/<chapter>.json["verdicts"]``: the
#: :meth:`lrd.verdicts.Verdict.record` fields, where it was recorded and, for a verdict judged
#: through :meth:`Glue.judge`, what it tested and whether the book's rules decide it
#: (:func:`lrd.book.tested.context`: ``robust``, ``flips``, ``n_alternatives``, ``rules``, ``llm_panel``).
VERDICT_FIELDS = ("key", "chapter", "section", "claim", "kind", "outcome", "evidence", "test", "statistic", "p_value",
                  "p_against", "against", "p_min", "effect", "ci", "effect_label", "effect_format", "paper_effect",
                  "holds", "reconstruction", "note", "power", "power_label", "per_model", "per_model_label", "alpha", "paper", "label", "claim_text", "claim_source", "panel",
                  "sweep", "grouping", "robust", "flips", "n_alternatives", "rules", "llm_panel")


def _plain_deep(value: Any, digits: int) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain_deep(v, digits) for v in value]
    return _plain(value, digits)


def _plain(value: Any, digits: int) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return rounded(value, digits)
    return value


class Glue:
    """Glue namespaced, rounded values into a chapter and record them.

    Examples
    --------
    >>> g = Glue("demo", display=False, record_only=True)
    >>> g("answer", 0.123456789)
    'demo-answer'
    >>> g.values
    {'demo-answer': 0.1235}
    """

    def __init__(self, chapter: str, *, digits: int = GLUE_DIGITS, display: bool = False, record_only: bool = False):
        self.chapter, self.digits, self.display, self.record_only = chapter, digits, display, record_only
        self.values: dict[str, Any] = {}
        self.verdicts: list[dict[str, Any]] = []
        self.tests_no_claims = False
        #: What each claim's judge read, by claim id, as ``{"tables", "choices", "note"}`` (from :meth:`judge`).
        self.judged: dict[str, dict[str, Any]] = {}
        self.started = time.perf_counter()

    def minutes(self) -> float:
        """Wall minutes since the chapter opened (:func:`lrd.book.opening.open_chapter`); volatile."""
        return (time.perf_counter() - self.started) / 60

    def __call__(self, name: str, value: Any, *, volatile: bool = False) -> str:
        """Glue ``value`` as ``<chapter>-<name>``; ``volatile=True`` (wall times, rates) puts it
        into the page but not into the results JSON, whose values must not change run to run."""
        key = f"{self.chapter}-{name}"
        value = _plain(value, self.digits)
        if not volatile:
            self.values[key] = value
        if not self.record_only:
            from myst_nb import glue

            glue(key, value, display=self.display)
        return key

    def verdict(self, verdict: "Verdict", *, section: str | None = None) -> str:
        """Record the verdict on one claim and glue it as ``<chapter>-verdict_<name>``.

        Parameters
        ----------
        verdict : lrd.verdicts.Verdict
            Built by a judge function of :mod:`lrd.verdicts` from a stated test (or a labelled
            demonstration); its outcome follows from its numbers. Anything else (a string, a
            hand-written outcome) is a TypeError. The claim must belong to this chapter
            (:data:`lrd.verdicts.CLAIMS`) and be recorded once.
        section : str, optional
            Anchor of the chapter section holding the evidence (the heading's slug, e.g.
            ``"encoders-against-decoders"``); the dashboard links to it.

        Returns
        -------
        str
            The glue key of the verdict text (``"<outcome>: <evidence>"``), for ``{glue:text}``.
            For a claim judged through :meth:`judge`, the verdict is judged again under each
            alternative of each of the book's rules (:func:`lrd.book.tested.context`): the text
            ends with whether that changes its outcome, the record keeps which choices do, and
            the chapter shows, folded under the cell, what the verdict tests
            (:func:`lrd.book.tested.details_markdown`).
        """
        from lrd.book.tested import context, details_markdown, sensitivity_text
        from lrd.verdicts import CLAIMS, Verdict

        if not isinstance(verdict, Verdict):
            raise TypeError(f"a verdict must be an lrd.verdicts.Verdict built by a test or a demonstration, got "
                            f"{type(verdict).__name__} {verdict!r}; outcomes are computed, never written by hand")
        claim = CLAIMS[verdict.claim]
        if claim.chapter != self.chapter:
            raise ValueError(f"claim {claim.id!r} is judged in chapter {claim.chapter!r}, not {self.chapter!r}")
        key = f"{self.chapter}-{claim.name}"
        if any(r["key"] == key for r in self.verdicts):
            raise ValueError(f"the verdict on {claim.id!r} is recorded twice in chapter {self.chapter!r}")
        record = {k: _plain_deep(v, self.digits) for k, v in verdict.record().items()}
        if record["outcome"] == "reproduced" and not (record["p_value"] is not None
                                                     and record["p_value"] <= record["alpha"]):
            raise ValueError(f"{claim.id}: 'reproduced' needs p <= {record['alpha']}")
        text = str(verdict)
        judged = self.judged.get(verdict.claim)
        if judged is not None:
            record.update(context(verdict.claim, judged["tables"], verdict, note=judged["note"],
                                  choices=judged["choices"]))
            line = sensitivity_text(record)
            text = f"{text.rstrip('. ')}. {line[0].upper()}{line[1:]}."
        self.verdicts.append({"key": key, "chapter": self.chapter, "section": section, **record})
        if judged is not None and not self.record_only:
            from IPython.display import Markdown, display

            body = details_markdown(record)
            fence = markup.fence(body, at_least=4)
            display(Markdown(f"{fence}{{dropdown}} What this verdict tests: {markup.text(claim.label)}\n"
                             f":class-container: lrd-verdict-tested\n\n{body}\n{fence}"))
        return self(f"verdict_{claim.name}", text)

    def judge(self, claim_id: str, tables: dict[str, Any], *, section: str | None = None, note: str | None = None,
              record: bool = True, **choices: Any) -> "Verdict":
        """Judge ``claim_id`` on ``tables`` through its specification, record the verdict
        (:meth:`verdict`) and keep the tables, so that :meth:`save` writes what the judge read.

        ``judge(claim_id, saved["tables"], **saved["choices"])`` on what :func:`saved_tables`
        reads back gives the same verdict (:func:`lrd.verdicts.specifications.judge`).

        Parameters
        ----------
        claim_id : str
        tables : dict
            The claim's tables (its specification's ``tables``).
        section : str, optional
            As for :meth:`verdict`.
        note : str, optional
            A sentence the verdict adds to its evidence (the chapter's panel note).
        record : bool
            False: judge and keep the tables, and leave recording the verdict to a later
            :meth:`verdict` call (a chapter that glues numbers of the verdict before it).
        **choices
            The chapter's values of the claim's rules (its parameters); the rest are the book's.

        Returns
        -------
        Verdict
        """
        from lrd.verdicts.specifications import judge

        verdict = judge(claim_id, tables, note=note, **choices)
        self.judged[claim_id] = {"tables": dict(tables), "choices": dict(choices), "note": note}
        if record:
            self.verdict(verdict, section=section)
        return verdict

    def no_claims(self) -> None:
        """Declare that this chapter tests no paper claim (an introductory chapter): the verdict
        dashboard then lists no row for it instead of reporting its verdicts missing."""
        if self.verdicts:
            raise ValueError(f"chapter {self.chapter!r} recorded verdicts; it cannot also declare no claims")
        self.tests_no_claims = True

    def save(self, folder: str | Path = "results") -> Path:
        """Write the glued values and the verdict records to ``<folder>/<chapter>.json``.

        The records go under ``"verdicts"``; the key is absent when the chapter recorded no
        verdict and did not declare :meth:`no_claims` (the dashboard then reports it missing).
        """
        path = Path(folder) / f"{self.chapter}.json"
        recorded = {r["claim"] for r in self.verdicts}
        for claim_id, judged in self.judged.items():
            if claim_id in recorded:
                save_tables(judged, tables_path(folder, self.chapter, claim_id))
        record = {**self.values, **({"verdicts": self.verdicts} if self.verdicts or self.tests_no_claims else {})}
        text = (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()
        atomic_write(path, lambda f: f.write(text), ".json.tmp")  # never half a file (a full disk)
        return path


def tables_path(folder: str | Path, chapter: str, claim_id: str) -> Path:
    """Where :meth:`Glue.save` keeps what the judge of ``claim_id`` read: ``<folder>/<chapter>.tables/<claim_id>.lrd``."""
    return Path(folder) / f"{chapter}.tables" / f"{claim_id}.lrd"


def _storable(value: Any) -> Any:
    """A judge's input as data the codec stores: a dataclass instance (a method's result record)
    as ``{"$record": its fields}``, read back as a namespace with the same attributes."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"$record": {f.name: _storable(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {k: _storable(v) for k, v in value.items()}
    return value


def _restored(value: Any) -> Any:
    from types import SimpleNamespace

    if isinstance(value, dict):
        if set(value) == {"$record"}:
            return SimpleNamespace(**{k: _restored(v) for k, v in value["$record"].items()})
        return {k: _restored(v) for k, v in value.items()}
    return value


def save_tables(judged: dict[str, Any], path: str | Path) -> Path:
    """Write one claim's judged inputs (``{"tables", "choices", "note"}``) to ``path``, atomically,
    in the result cache's data-only format (:mod:`lrd.engine.codec`: nothing in it can run)."""
    from lrd.engine import codec

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    value = _storable(judged)
    atomic_write(path, lambda f: codec.dump(value, f), ".lrd.tmp")
    return path


def saved_claims(folder: str | Path, chapter: str) -> list[str]:
    """The claim ids whose judged inputs the chapter saved under ``<folder>/<chapter>.tables/``, sorted
    (no file is read: :func:`saved_tables` loads them)."""
    return [path.stem for path in sorted((Path(folder) / f"{chapter}.tables").glob("*.lrd"))]


def saved_tables(folder: str | Path, chapter: str, claims: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Claim id -> ``{"tables", "choices", "note"}`` as the chapter's judges read them
    (what :meth:`Glue.save` wrote under ``<folder>/<chapter>.tables/``); ``claims``: only these."""
    from lrd.engine import codec

    wanted = None if claims is None else set(claims)
    found = {}
    for claim in saved_claims(folder, chapter):
        if wanted is not None and claim not in wanted:
            continue
        with open(Path(folder) / f"{chapter}.tables" / f"{claim}.lrd", "rb") as f:
            found[claim] = _restored(codec.load(f))
    return found


def save_results(results: pd.DataFrame, chapter: str, folder: str | Path = "results") -> Path:
    """Write a chapter's tidy result table to ``<folder>/<chapter>.csv``, atomically."""
    path = Path(folder) / f"{chapter}.csv"
    text = results.to_csv(index=False).encode()
    atomic_write(path, lambda f: f.write(text), ".csv.tmp")
    return path
