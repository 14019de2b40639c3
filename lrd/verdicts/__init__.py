"""Verdicts on the papers' claims: the claims table, the Verdict record, the tests, the null calibration.

One path for every claim: a chapter calls a judge function of this package on its tables, the
judge runs a stated test (or a labelled demonstration) and returns a :class:`Verdict`, whose
outcome :func:`decide` computes from the numbers; the chapter glues it with
:meth:`lrd.book.glue.Glue.verdict`, which refuses anything else. :func:`null_calibration` checks
that each test would not say "reproduced" on noise.
"""

from lrd.verdicts.calibration import NULL_MODELS, NullModel, calibration_table, null_calibration
from lrd.verdicts.claims import CLAIMS, PAPERS, Claim, Paper, claim, claims_of
from lrd.verdicts.record import ALPHA, OUTCOMES, Verdict, decide

__all__ = ["ALPHA", "CLAIMS", "NULL_MODELS", "OUTCOMES", "PAPERS", "Claim", "NullModel", "Paper", "Verdict",
           "calibration_table", "claim", "claims_of", "decide", "null_calibration"]
