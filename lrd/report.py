"""Tidy result tables and glued numbers for the book.

Every number in a chapter's prose is glued (myst-nb ``glue``) under the key
``<chapter>-<name>``; :class:`Glue` also writes the same keys to ``results/<chapter>.json`` so
that the README and tests can quote and check them. Floats are rounded so that re-executions on
other machines print the same digits (what nbval compares): glued values to
:data:`GLUE_DIGITS` decimals, tables by :func:`rounded` to :data:`TABLE_DIGITS`.

Verdicts on the papers' claims are recorded with :meth:`Glue.verdict`, one call per claim; they
go into the same JSON under ``"verdicts"`` (a list of :data:`VERDICT_FIELDS` records), which the
book's landing page gathers into its verdict dashboard (``lrd.sphinxext``).
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RESULT_COLUMNS = ["model", "task", "measurement", "layer", "depth", "value"]

#: The verdict words, strongest first. A verdict string is ``"<word>: <evidence>"``.
VERDICT_WORDS = ("reproduced", "partly reproduced", "not reproduced", "not testable")

#: Fields of one verdict record in ``results/<chapter>.json["verdicts"]``.
VERDICT_FIELDS = ("key", "chapter", "paper", "paper_title", "claim", "claim_source", "aspect", "verdict",
                  "evidence", "p_value", "test", "section")


@dataclass(frozen=True)
class Verdict:
    """A verdict on a claim: one of :data:`VERDICT_WORDS`, the evidence, and its strength.

    ``p_value`` is the probability of a result at least as strong as the observed one under
    chance (exact or permutation, the number of comparisons accounted for), ``test`` says how
    it was computed; both are ``None`` where the claim is not a comparison.

    Examples
    --------
    >>> v = Verdict.parse("not reproduced on our panel: a final-layer statistic separates them")
    >>> v.word, v.evidence
    ('not reproduced', 'a final-layer statistic separates them')
    >>> str(Verdict("not testable", "one task"))
    'not testable: one task'
    """

    word: str
    evidence: str
    p_value: float | None = None
    test: str | None = None

    def __post_init__(self):
        if self.word not in VERDICT_WORDS:
            raise ValueError(f"verdict word must be one of {VERDICT_WORDS}, got {self.word!r}")
        if not str(self.evidence).strip():
            raise ValueError("a verdict needs its evidence (one line saying what was observed)")
        if self.p_value is not None and not (math.isfinite(self.p_value) and 0 <= self.p_value <= 1):
            raise ValueError(f"p_value must be a probability in [0, 1] or None, got {self.p_value!r}")

    def __str__(self) -> str:
        return f"{self.word}: {self.evidence}"

    @classmethod
    def parse(cls, text: str, *, p_value: float | None = None, test: str | None = None) -> "Verdict":
        """Split ``"<word>[ qualifier]: <evidence>"`` into a :class:`Verdict`."""
        head, sep, evidence = str(text).partition(":")
        word = next((w for w in sorted(VERDICT_WORDS, key=len, reverse=True) if head.strip().startswith(w)), None)
        if word is None or not sep:
            raise ValueError(f"a verdict must read '<word>: <evidence>' with a word of {VERDICT_WORDS}; got {text!r}")
        return cls(word, evidence.strip(), p_value, test)


def per_layer(values: np.ndarray, *, model: str, task: str, measurement: str,
              layers: np.ndarray | None = None, n_layers: int | None = None) -> pd.DataFrame:
    """One tidy row per layer: ``model, task, measurement, layer, depth, value``.

    ``depth`` is ``layer / n_layers`` in [0, 1] (layer 0 = embeddings), so models of different
    depth share one axis. ``layers`` defaults to ``0 .. len(values) - 1`` and ``n_layers`` to
    ``len(values) - 1``.
    """
    values = np.asarray(values, dtype=float)
    layers = np.arange(len(values)) if layers is None else np.asarray(layers)
    n_layers = len(values) - 1 if n_layers is None else n_layers
    return pd.DataFrame({"model": model, "task": task, "measurement": measurement, "layer": layers,
                         "depth": layers / n_layers, "value": values})[RESULT_COLUMNS]


#: Decimals of the numbers in the chapters' tables (:func:`rounded`). Scores are means of
#: 0/1 outcomes over tens of items (steps of 0.005 and more) and the metrics carry about six
#: significant digits through float noise (``tests/test_stability.py``), so three decimals show
#: what the measurement resolves and stay put on other processors.
TABLE_DIGITS = 3

#: Decimals of glued floats (:class:`Glue`).
GLUE_DIGITS = 4


def rounded(values: Any, digits: int = TABLE_DIGITS) -> Any:
    """``values`` rounded to ``digits`` decimals for display, with no negative zero.

    The one rounding of the chapters' tables: a DataFrame, Series, array or number. A value
    within float noise of zero prints as ``0.0`` whatever its sign (plain rounding prints
    ``-0.0`` for a tiny negative one, which another processor may compute as positive).
    Non-float columns are left as they are.

    Examples
    --------
    >>> rounded(pd.DataFrame({"model": ["a", "b"], "gain": [0.12345, -1e-9]}))
      model   gain
    0     a  0.123
    1     b  0.000
    >>> rounded(-4e-5, 4)
    0.0
    """
    if isinstance(values, pd.DataFrame):
        out = values.round(digits)
        floats = out.select_dtypes("floating").columns
        out[floats] = out[floats] + 0.0  # -0.0 + 0.0 == +0.0
        return out
    if isinstance(values, (pd.Series, np.ndarray)):
        out = values.round(digits)
        return out + 0.0 if np.issubdtype(out.dtype, np.floating) else out
    return round(float(values), digits) + 0.0


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

    def verdict(self, name: str, *, claim: Any, verdict: "Verdict | str", evidence: str | None = None,
                p_value: float | None = None, test: str | None = None, aspect: str | None = None,
                section: str | None = None) -> str:
        """Record the verdict on one claim and glue it as ``<chapter>-verdict_<name>``.

        Parameters
        ----------
        name : str
            Claim key within the chapter (``"architecture"``); the record's key is
            ``<chapter>-<name>``.
        claim : lrd.papers.Claim
            The paper's claim, quoted (its ``paper.key`` is the BibTeX key).
        verdict : Verdict or str
            A :class:`Verdict`, a string ``"<word>: <evidence>"``, or a bare word with
            ``evidence`` given.
        p_value, test : optional
            The chance probability of the observed result and how it was computed (taken from
            ``verdict`` when it is a :class:`Verdict`).
        aspect : str, optional
            Which part of the quoted claim this verdict is about, when one claim gets several.
        section : str, optional
            Anchor of the chapter section holding the evidence (the heading's slug, e.g.
            ``"encoders-against-decoders"``); the dashboard links to it.

        Returns
        -------
        str
            The glue key of the verdict text, for ``{glue:text}`` in the chapter.
        """
        if isinstance(verdict, Verdict):
            v = Verdict(verdict.word, evidence or verdict.evidence, verdict.p_value if p_value is None else p_value,
                        verdict.test if test is None else test)
        elif evidence is not None:
            v = Verdict(str(verdict).strip(), evidence, p_value, test)
        else:
            v = Verdict.parse(verdict, p_value=p_value, test=test)
        key = f"{self.chapter}-{name}"
        if any(r["key"] == key for r in self.verdicts):
            raise ValueError(f"verdict {name!r} recorded twice in chapter {self.chapter!r}")
        paper = claim.paper
        self.verdicts.append({"key": key, "chapter": self.chapter, "paper": paper.key, "paper_title": paper.title,
                              "claim": claim.text, "claim_source": claim.source, "aspect": aspect, "verdict": v.word,
                              "evidence": v.evidence, "p_value": None if v.p_value is None else _plain(v.p_value, 4),
                              "test": v.test, "section": section})
        return self(f"verdict_{name}", str(v))

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
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {**self.values, **({"verdicts": self.verdicts} if self.verdicts or self.tests_no_claims else {})}
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        return path


def save_results(results: pd.DataFrame, chapter: str, folder: str | Path = "results") -> Path:
    """Write a chapter's tidy result table to ``<folder>/<chapter>.csv``."""
    path = Path(folder) / f"{chapter}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    results.to_csv(path, index=False)
    return path
