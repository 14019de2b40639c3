"""The claims of Hinostroza et al. 2026 (Beyond cosine), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.
"""

from __future__ import annotations

from lrd.verdicts import agreement
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.spec import Rule, Specification, Table

__all__ = ["SPECIFICATIONS"]

THEORY = Specification(
    claim=CLAIMS['cosine.theory'],
    judge=agreement.judge_theory,
    tables=(),
    scope=CLAIMS['cosine.theory'].scope.text if CLAIMS['cosine.theory'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=None,
)

CORRELATION = Specification(
    claim=CLAIMS['cosine.correlation'],
    judge=agreement.judge_correlation,
    tables=(),
    scope=CLAIMS['cosine.correlation'].scope.text if CLAIMS['cosine.correlation'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=agreement.CORRELATION_NULL,
)

MISESTIMATE = Specification(
    claim=CLAIMS['cosine.misestimate'],
    judge=agreement.judge_misestimate,
    tables=(),
    scope=CLAIMS['cosine.misestimate'].scope.text if CLAIMS['cosine.misestimate'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=agreement.MISESTIMATE_NULL,
)

DATASET = Specification(
    claim=CLAIMS['cosine.dataset'],
    judge=agreement.judge_dataset,
    tables=(),
    scope=CLAIMS['cosine.dataset'].scope.text if CLAIMS['cosine.dataset'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=agreement.DATASET_NULL,
)

PRUNING = Specification(
    claim=CLAIMS['cosine.pruning'],
    judge=agreement.judge_pruning,
    tables=(),
    scope=CLAIMS['cosine.pruning'].scope.text if CLAIMS['cosine.pruning'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=agreement.PRUNING_NULL,
)

OLMO = Specification(
    claim=CLAIMS['cosine.olmo'],
    judge=agreement.judge_olmo,
    tables=(),
    scope=CLAIMS['cosine.olmo'].scope.text if CLAIMS['cosine.olmo'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=None,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (THEORY, CORRELATION, MISESTIMATE, DATASET, PRUNING, OLMO,)
