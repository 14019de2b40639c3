"""Specification sensitivity: a claim's verdict under every alternative of every book rule.

A verdict that a book-chosen margin, band or cut decides is not decided by the data: for each rule
of the claim's specification that is the book's (:attr:`lrd.verdicts.spec.Rule.origin` ``"book"``),
:func:`sensitivity` judges the same tables again with each of the rule's
:attr:`~lrd.verdicts.spec.Rule.alternatives`, one rule at a time, the others at the book's values.
The verdict is **robust** when every alternative gives the primary outcome.

The test's level (the rule :data:`LEVEL_RULE`, ``alpha``) is the one book rule whose alternatives
are shown but not counted: it is not a reading of a paper but the convention every test of the
book shares, and the headline already adjusts it for the number of claims tested (Holm). Counting
it would make "robust" mean "p <= 0.01". :attr:`Sensitivity.at_other_levels` keeps what the
verdict would say at 0.01 and 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from lrd.verdicts.record import Verdict
from lrd.verdicts.specifications import judge, specification

__all__ = ["Alternative", "Sensitivity", "sensitivity", "LEVEL_RULE"]

#: The name of the test-level rule (:func:`lrd.verdicts.spec.level_rule`): shown, not counted in :attr:`Sensitivity.robust`.
LEVEL_RULE = "alpha"


@dataclass(frozen=True)
class Alternative:
    """The verdict with one book rule set to one of its alternatives."""

    rule: str
    value: Any
    outcome: str
    p_value: float | None
    p_against: float | None


@dataclass(frozen=True)
class Sensitivity:
    """The primary verdict and its verdicts under the book rules' alternatives.

    Attributes
    ----------
    primary : Verdict
        Under the book's rules (and the chapter's ``choices``).
    alternatives : tuple of Alternative
        One per (book rule, alternative value), in the specification's order.
    """

    primary: Verdict
    alternatives: tuple[Alternative, ...]

    @property
    def counted(self) -> tuple[Alternative, ...]:
        """Every alternative but the test level's (:data:`LEVEL_RULE`), the ones that decide :attr:`robust`."""
        return tuple(a for a in self.alternatives if a.rule != LEVEL_RULE)

    @property
    def robust(self) -> bool:
        """Whether every alternative of :attr:`counted` gives the primary outcome (True when there is none)."""
        return all(a.outcome == self.primary.outcome for a in self.counted)

    @property
    def flips(self) -> tuple[Alternative, ...]:
        """The alternatives of :attr:`counted` whose outcome differs from the primary's."""
        return tuple(a for a in self.counted if a.outcome != self.primary.outcome)

    @property
    def at_other_levels(self) -> tuple[Alternative, ...]:
        """The verdicts at the test level's alternatives, shown beside the verdict and not counted."""
        return tuple(a for a in self.alternatives if a.rule == LEVEL_RULE)


def sensitivity(claim_id: str, tables: Mapping[str, Any], *, note: str | None = None, primary: Verdict | None = None,
                **choices: Any) -> Sensitivity:
    """The verdict on ``claim_id`` under the book's rules and under each alternative of each book rule.

    Parameters
    ----------
    claim_id, tables, note, **choices
        As for :func:`lrd.verdicts.specifications.judge`; ``choices`` hold for every alternative
        except the one rule varied.
    primary : Verdict, optional
        The verdict under the book's rules when the caller has it already (a chapter's
        :meth:`lrd.book.glue.Glue.judge`): it is not judged again.

    Examples
    --------
    >>> from lrd.verdicts.specifications import simulate
    >>> s = sensitivity("skean.gain", simulate("skean.gain", seed=0))
    >>> s.robust == (not s.flips)
    True
    """
    if primary is None:
        primary = judge(claim_id, tables, note=note, **choices)
    found = []
    for rule in specification(claim_id).book_rules:
        for value in rule.alternatives:
            v = judge(claim_id, tables, note=note, **{**choices, rule.name: value})
            found.append(Alternative(rule.name, value, v.outcome, v.p_value, v.p_against))
    return Sensitivity(primary, tuple(found))
