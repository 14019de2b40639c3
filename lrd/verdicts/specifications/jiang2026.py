"""The claims of Jiang, Yang, Tam 2026 (LRD), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.
"""

from __future__ import annotations

from lrd.verdicts import families
from lrd.verdicts import pruning
from lrd.verdicts import selection
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.spec import Rule, Specification, Table

__all__ = ["SPECIFICATIONS"]

ARCHITECTURE = Specification(
    claim=CLAIMS['lrd.architecture'],
    judge=families.architecture_verdict,
    tables=(),
    scope=CLAIMS['lrd.architecture'].scope.text if CLAIMS['lrd.architecture'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=families.ARCHITECTURE_NULL,
)

FINAL_LAYER = Specification(
    claim=CLAIMS['lrd.final_layer'],
    judge=families.final_layer_verdict,
    tables=(),
    scope=CLAIMS['lrd.final_layer'].scope.text if CLAIMS['lrd.final_layer'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=families.FINAL_LAYER_NULL,
)

TASK = Specification(
    claim=CLAIMS['lrd.task'],
    judge=families.task_verdict,
    tables=(),
    scope=CLAIMS['lrd.task'].scope.text if CLAIMS['lrd.task'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=families.TASK_NULL,
)

COMPLEMENTARITY = Specification(
    claim=CLAIMS['lrd.complementarity'],
    judge=families.complementarity_verdict,
    tables=(),
    scope=CLAIMS['lrd.complementarity'].scope.text if CLAIMS['lrd.complementarity'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=families.COMPLEMENTARITY_NULL,
)

SELECTION = Specification(
    claim=CLAIMS['lrd.selection'],
    judge=selection.judge_selection,
    tables=(),
    scope=CLAIMS['lrd.selection'].scope.text if CLAIMS['lrd.selection'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=selection.SELECTION_NULL,
)

SELECTION_STRONGEST = Specification(
    claim=CLAIMS['lrd.selection_strongest'],
    judge=selection.judge_selection_strongest,
    tables=(),
    scope=CLAIMS['lrd.selection_strongest'].scope.text if CLAIMS['lrd.selection_strongest'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=selection.STRONGEST_NULL,
)

SELECTION_LLM = Specification(
    claim=CLAIMS['lrd.selection_llm'],
    judge=selection.judge_selection_llm,
    tables=(),
    scope=CLAIMS['lrd.selection_llm'].scope.text if CLAIMS['lrd.selection_llm'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=selection.SELECTION_LLM_NULL,
)

PRUNING_GFMI_ONLY = Specification(
    claim=CLAIMS['lrd.pruning_gfmi_only'],
    judge=pruning.judge_pruning_gfmi_only,
    tables=(),
    scope=CLAIMS['lrd.pruning_gfmi_only'].scope.text if CLAIMS['lrd.pruning_gfmi_only'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=pruning.GFMI_ONLY_NULL,
)

PRUNING_GFMI_MEDIAN = Specification(
    claim=CLAIMS['lrd.pruning_gfmi_median'],
    judge=pruning.judge_pruning_gfmi_median,
    tables=(),
    scope=CLAIMS['lrd.pruning_gfmi_median'].scope.text if CLAIMS['lrd.pruning_gfmi_median'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=pruning.GFMI_MEDIAN_NULL,
)

PRUNING_FRENET = Specification(
    claim=CLAIMS['lrd.pruning_frenet'],
    judge=pruning.judge_pruning_frenet,
    tables=(),
    scope=CLAIMS['lrd.pruning_frenet'].scope.text if CLAIMS['lrd.pruning_frenet'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=pruning.FRENET_NULL,
)

PRUNING_NRS = Specification(
    claim=CLAIMS['lrd.pruning_nrs'],
    judge=pruning.judge_pruning_nrs,
    tables=(),
    scope=CLAIMS['lrd.pruning_nrs'].scope.text if CLAIMS['lrd.pruning_nrs'].scope else "",
    estimand="",
    unit="",
    test="",
    rules=(),
    null=pruning.NRS_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (ARCHITECTURE, FINAL_LAYER, TASK, COMPLEMENTARITY, SELECTION, SELECTION_STRONGEST, SELECTION_LLM, PRUNING_GFMI_ONLY, PRUNING_GFMI_MEDIAN, PRUNING_FRENET, PRUNING_NRS,)
