"""The families judges' measures and the book's values: which scores, which curves, which margins.

Numbers and column names only, shared by the judges (:mod:`lrd.verdicts.families`) and their
null models (:mod:`lrd.verdicts.families.nulls`).
"""

from __future__ import annotations

__all__ = ["LRD_SCORES", "FINAL_LAYER_SCORES", "FINAL_LAYER_STATISTICS", "RANK_FREE_SCORES", "FAMILY_CURVES",
           "COMPLEMENTARITY_MARGIN", "UNDEFINED_RHO"]

#: Model-level LRD scores (one number per model and task; :func:`lrd.metrics.model_scores`).
#: d_0L is the paper's; the means over layers (velocity, curvature, NRS, GFMI) are our
#: reconstruction of "model-level scores" the paper does not define in the text we have.
LRD_SCORES = ("d_0L", "mean velocity", "mean curvature", "mean NRS (adjusted)", "mean GFMI")
#: Statistics of the final layer alone: the Frenet rank r (smallest rank explaining 95% of the
#: final layer's variance) and the mean pairwise cosine of the final layer.
FINAL_LAYER_SCORES = ("rank r", "final mean cosine")
#: The final layer's own statistics as rich as the LRD families: its rank and mean cosine
#: (spectral), the mean cosine to its k nearest neighbours (NRS's ingredient) and the share of its
#: variance between its Ward clusters at GFMI's levels (GFMI's ingredient; lrd.metrics.final_layer).
FINAL_LAYER_STATISTICS = FINAL_LAYER_SCORES + ("final kNN cosine", "final cluster share")
#: LRD scores that do not depend on the Frenet rank r (NRS and GFMI never use it; every Frenet
#: distance does, since d(a, b) <= sqrt(r) pi / 2 and r is fixed by each task's final layer).
RANK_FREE_SCORES = ("mean NRS (adjusted)", "mean GFMI")
#: One per-layer curve per family (measurement names of :func:`lrd.metrics.profile_rows`).
FAMILY_CURVES = {"Frenet": "velocity", "NRS": "NRS (adjusted)", "GFMI": "GFMI"}
#: Margin of "not strongly correlated": two families' per-layer curves are strongly correlated when they
#: order a model's layers alike with Spearman |rho| >= 0.7, the book's cut for a "strong"
#: correlation elsewhere (lrd.verdicts.agreement.STRONG_CORRELATION: Dancey and Reidy's labels as
#: tabulated by Akoglu, Turk. J. Emerg. Med. 18 (2018) 91-93); 0.8 and 0.9 are the alternatives of
#: its Rule (at 0.9, two families
#: whose curves agree at |rho| 0.85 would pass as "not redundant" almost always).
COMPLEMENTARITY_MARGIN = 0.7
#: The correlation counted where the correction for the curves' noise is undefined (a reliability
#: <= 0 or missing): 1, redundant, since the noise leaves redundancy open (the book's choice;
#: None in the judges: the raw correlation instead).
UNDEFINED_RHO = 1.0

