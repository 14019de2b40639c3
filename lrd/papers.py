"""Deprecated: the claims table lives in :mod:`lrd.verdicts.claims` (kept until every chapter is ported)."""

from lrd.verdicts.claims import (ABLATION, ILSE, ILSE_DEFAULTS, ILSE_MAX_GAIN_PP, ILSE_MAX_PARAM_SHARE,  # noqa: F401
                                 ILSE_TABLE_ROWS, LRD, SKEAN, SKEAN_GAIN_RANGE, Claim, Paper)
