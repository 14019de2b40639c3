"""Verdicts on the papers' claims: the claims table, the Verdict record, the tests, the null calibration.

One path for every claim: a chapter calls a judge function of this package on its tables, the
judge runs a stated test (or a labelled demonstration) and returns a :class:`Verdict`, whose
outcome :func:`decide` computes from the numbers; the chapter glues it with
:meth:`lrd.book.glue.Glue.verdict`, which refuses anything else. :func:`null_calibration` checks
that each test would not say "reproduced" on noise.

Each claim is specified in one place (:mod:`lrd.verdicts.specifications`, one module per paper):
the paper's words and scope, the book's rules, the judge, the null model. :func:`judge` and
:func:`simulate` are the entry points on a researcher's own tables; :func:`sensitivity` judges
again under every alternative of every book rule. A judge computes a :class:`Result` (numbers
only) and :mod:`lrd.verdicts.wording` writes its sentences; :func:`decisive_design` finds the
smallest simulated panel at which a claim's test has 80% power.
"""

from lrd.verdicts.calibration import NULL_MODELS, NullModel, calibration_table, null_calibration
from lrd.verdicts.claims import CLAIMS, PAPERS, Claim, Paper, claim, claims_of
from lrd.verdicts.planning import Plan, decisive_design
from lrd.verdicts.record import ALPHA, OUTCOMES, Verdict, decide
from lrd.verdicts.result import Result
from lrd.verdicts.sensitivity import Sensitivity, sensitivity
from lrd.verdicts.spec import Rule, Specification, Table
from lrd.verdicts.specifications import SPECIFICATIONS, judge, simulate, specification

__all__ = ["ALPHA", "CLAIMS", "NULL_MODELS", "OUTCOMES", "PAPERS", "SPECIFICATIONS", "Claim", "NullModel", "Paper", "Plan",
           "Result", "Rule", "Sensitivity", "Specification", "Table", "Verdict", "calibration_table", "claim", "claims_of",
           "decide", "decisive_design", "judge", "null_calibration", "sensitivity", "simulate", "specification"]
