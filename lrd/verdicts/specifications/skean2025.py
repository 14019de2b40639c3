"""The claims of Skean et al., ICML 2025 (Layer by Layer), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.
"""

from __future__ import annotations

from lrd.verdicts import layer_choice
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.spec import Rule, Specification, Table

__all__ = ["SPECIFICATIONS"]

GAIN = Specification(
    claim=CLAIMS['skean.gain'],
    judge=layer_choice.judge_gain,
    tables=(),
    scope=CLAIMS['skean.gain'].scope.text if CLAIMS['skean.gain'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=layer_choice.GAIN_NULL,
)

VALLEY = Specification(
    claim=CLAIMS['skean.valley'],
    judge=layer_choice.judge_valley,
    tables=(),
    scope=CLAIMS['skean.valley'].scope.text if CLAIMS['skean.valley'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=layer_choice.VALLEY_NULL,
)

METRICS_TRACK = Specification(
    claim=CLAIMS['skean.metrics_track'],
    judge=layer_choice.judge_metrics_track,
    tables=(),
    scope=CLAIMS['skean.metrics_track'].scope.text if CLAIMS['skean.metrics_track'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=layer_choice.METRICS_TRACK_NULL,
)

CHOICE = Specification(
    claim=CLAIMS['skean.choice'],
    judge=layer_choice.judge_choice,
    tables=(),
    scope=CLAIMS['skean.choice'].scope.text if CLAIMS['skean.choice'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=layer_choice.CHOICE_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (GAIN, VALLEY, METRICS_TRACK, CHOICE,)
