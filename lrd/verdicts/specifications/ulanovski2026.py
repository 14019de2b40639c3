"""The claims of Ulanovski et al., NeurIPS 2026 (ILSE), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.
"""

from __future__ import annotations

from lrd.verdicts import fusion
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.spec import Rule, Specification, Table

__all__ = ["SPECIFICATIONS"]

FC = Specification(
    claim=CLAIMS['ilse.fc'],
    judge=fusion.judge_fc,
    tables=(),
    scope=CLAIMS['ilse.fc'].scope.text if CLAIMS['ilse.fc'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.FC_NULL,
)

CAYLEY_PERFORMANCE = Specification(
    claim=CLAIMS['ilse.cayley_performance'],
    judge=fusion.judge_cayley_performance,
    tables=(),
    scope=CLAIMS['ilse.cayley_performance'].scope.text if CLAIMS['ilse.cayley_performance'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.CAYLEY_PERFORMANCE_NULL,
)

CAYLEY_EFFICIENCY = Specification(
    claim=CLAIMS['ilse.cayley_efficiency'],
    judge=fusion.judge_cayley_efficiency,
    tables=(),
    scope=CLAIMS['ilse.cayley_efficiency'].scope.text if CLAIMS['ilse.cayley_efficiency'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=None,
)

BASELINES = Specification(
    claim=CLAIMS['ilse.baselines'],
    judge=fusion.judge_baselines,
    tables=(),
    scope=CLAIMS['ilse.baselines'].scope.text if CLAIMS['ilse.baselines'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.BASELINES_NULL,
)

GAIN = Specification(
    claim=CLAIMS['ilse.gain'],
    judge=fusion.judge_gain,
    tables=(),
    scope=CLAIMS['ilse.gain'].scope.text if CLAIMS['ilse.gain'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.GAIN_NULL,
)

PARAMETERS = Specification(
    claim=CLAIMS['ilse.parameters'],
    judge=fusion.judge_parameters,
    tables=(),
    scope=CLAIMS['ilse.parameters'].scope.text if CLAIMS['ilse.parameters'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=None,
)

FEW_SHOT = Specification(
    claim=CLAIMS['ilse.few_shot'],
    judge=fusion.judge_few_shot,
    tables=(),
    scope=CLAIMS['ilse.few_shot'].scope.text if CLAIMS['ilse.few_shot'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.FEW_SHOT_NULL,
)

MAPPING = Specification(
    claim=CLAIMS['ilse.mapping'],
    judge=fusion.judge_mapping,
    tables=(),
    scope=CLAIMS['ilse.mapping'].scope.text if CLAIMS['ilse.mapping'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=fusion.MAPPING_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (FC, CAYLEY_PERFORMANCE, CAYLEY_EFFICIENCY, BASELINES, GAIN, PARAMETERS, FEW_SHOT, MAPPING,)
