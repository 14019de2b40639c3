"""A judge's numbers, before any sentence: the typed result every judge returns.

A judge (``lrd.verdicts.fusion.gain_result``, ...) computes a :class:`Result`: the test's
statistic, p-values, smallest attainable p, effect and interval, power and per-model count, plus
``facts``, the names and numbers its sentences quote (models kept and left out, design sizes,
the rule values used). The sentences are written from a result in one place,
:mod:`lrd.verdicts.wording`, whose functions turn a result into a :class:`~lrd.verdicts.record.Verdict`
(:meth:`Result.verdict`); the outcome still follows from the numbers alone
(:func:`lrd.verdicts.record.decide`). A test of a judge checks its result's numbers without
parsing English, and a change of wording touches no statistic.

Examples
--------
>>> r = Result("skean.gain", "test", statistic=0.04, p_value=1 / 32, p_min=1 / 32, facts={"n_models": 5})
>>> r.outcome
'reproduced'
>>> r.verdict(evidence=f"gain in {r.facts['n_models']} of 5 models", test="exact sign-flip test").outcome
'reproduced'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal

from lrd.verdicts.record import ALPHA, Verdict, decide

__all__ = ["NUMBER_FIELDS", "Result"]

#: The :class:`~lrd.verdicts.record.Verdict` fields a result carries (numbers, never words).
NUMBER_FIELDS = ("statistic", "p_value", "p_against", "p_min", "effect", "ci", "holds", "power", "per_model", "alpha")


@dataclass(frozen=True)
class Result:
    """What a judge measured for one claim: numbers only.

    Attributes
    ----------
    claim : str
        The claim's id.
    kind : {"test", "demonstration"}
    case : str
        Which of the judge's branches produced it ("tested", "no model in scope", "one seed", ...):
        the wording picks its sentences by it.
    statistic, p_value, p_against, p_min, effect, ci, holds, power, per_model, alpha
        As on :class:`~lrd.verdicts.record.Verdict` (``per_model`` is (k, M)).
    facts : mapping
        The names and numbers the sentences quote (read-only): counts, models, design sizes, the
        values of the book's rules that were applied. Numbers and names, never sentences.
    """

    claim: str
    kind: Literal["test", "demonstration"]
    case: str = "tested"
    statistic: float | None = None
    p_value: float | None = None
    p_against: float | None = None
    p_min: float | None = None
    effect: float | None = None
    ci: tuple[float, float] | None = None
    holds: bool | None = None
    power: float | None = None
    per_model: tuple[int, int] | None = None
    alpha: float = ALPHA
    facts: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))
        if self.ci is not None:
            object.__setattr__(self, "ci", (float(self.ci[0]), float(self.ci[1])))

    @property
    def outcome(self) -> str:
        """The outcome its numbers give (:func:`~lrd.verdicts.record.decide`)."""
        return decide(self.kind, p_value=self.p_value, p_against=self.p_against, p_min=self.p_min,
                      holds=self.holds, alpha=self.alpha)

    def numbers(self) -> dict:
        """The verdict's number fields, as keyword arguments of :class:`~lrd.verdicts.record.Verdict`."""
        return {name: getattr(self, name) for name in NUMBER_FIELDS}

    def verdict(self, evidence: str, **words) -> Verdict:
        """The verdict with this result's numbers and the given sentences (``test``, ``against``,
        ``effect_label``, ``effect_format``, ``paper_effect``, ``reconstruction``, ``note``,
        ``power_label``, ``per_model_label``). Only :mod:`lrd.verdicts.wording` calls it.

        A word field that names a number field is refused: the numbers come from the result.
        """
        clash = set(words) & set(NUMBER_FIELDS)
        if clash:
            raise TypeError(f"Result.verdict: {sorted(clash)} are numbers, taken from the result; pass words only")
        allowed = {f.name for f in fields(Verdict)} - set(NUMBER_FIELDS) - {"claim", "kind", "evidence"}
        unknown = set(words) - allowed
        if unknown:
            raise TypeError(f"Result.verdict: unknown word fields {sorted(unknown)}; fields: {sorted(allowed)}")
        return Verdict(self.claim, self.kind, evidence, **self.numbers(), **words)
