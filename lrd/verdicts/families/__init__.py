r"""Verdicts on the claims of the LRD families chapter (Jiang, Yang, Tam 2026).

The paper applies its three families of layer-wise measurements (Frenet, NRS, GFMI) to 31
models on 30 MTEB tasks and reports (abstract, Sec. 1):

* ``lrd.architecture``: LRD reveals architectural differences (encoder against decoder models);
* ``lrd.final_layer``: ... that are not apparent from final-layer representations alone;
* ``lrd.task``: ... and task-level differences;
* ``lrd.complementarity``: the three families are complementary rather than redundant.

One judge function per claim turns the chapter's tidy tables into a :class:`lrd.verdicts.Verdict`
by a stated permutation test whose unit is the model, and one :class:`NullModel` per claim
simulates its inputs under the test's null for :func:`lrd.verdicts.null_calibration`.

Each judge ``x_verdict`` is ``wording.x(x_result(...))``: ``x_result`` runs the test and returns
a :class:`~lrd.verdicts.result.Result` (numbers only), :mod:`lrd.verdicts.wording.families`
writes its sentences. The package's modules: :mod:`~lrd.verdicts.families.measures` (the
scores, curves and margins), :mod:`~lrd.verdicts.families.architecture` (``lrd.architecture``,
``lrd.final_layer``), :mod:`~lrd.verdicts.families.task` (``lrd.task``),
:mod:`~lrd.verdicts.families.complementarity` (``lrd.complementarity``) and
:mod:`~lrd.verdicts.families.nulls` (the null models).

Tables
------
``scores``: one row per (model, task) with ``model``, ``kind`` (``"encoder"``/``"decoder"``),
``task``, ``N`` (texts) and the model-level scores of :func:`lrd.metrics.model_scores` plus
``"final mean cosine"``. ``results``: the tidy per-layer rows of :func:`lrd.metrics.profile_rows`
(``model, task, measurement, layer, depth, value``).

References
----------
Jiang, Yang, Tam, "Layer-wise Representation Dynamics", arXiv:2605.12714 (2026): abstract;
Sec. 1 (three complementary families); Sec. 2.3 (distinct roles); Sec. 3.1 (the Frenet rank r
fixed by the final layer's 95% variance).
"""

from __future__ import annotations

from lrd.verdicts.families.architecture import (architecture_result, architecture_verdict, final_layer_result,
                                                final_layer_verdict, kind_counts, measure_relabelling_test)
from lrd.verdicts.families.complementarity import (complementarity_model_tests, complementarity_result,
                                                   complementarity_verdict, curve_reliability, family_correlations,
                                                   family_pairs, judged_rho, redundancy_table, spearman_rows)
from lrd.verdicts.families.measures import (COMPLEMENTARITY_MARGIN, FAMILY_CURVES, FINAL_LAYER_SCORES,
                                            FINAL_LAYER_STATISTICS, LRD_SCORES, RANK_FREE_SCORES, UNDEFINED_RHO)
from lrd.verdicts.families.nulls import (ARCHITECTURE_NULL, COMPLEMENTARITY_NULL, FAMILIES_DESIGN, FINAL_LAYER_NULL,
                                         POWER_FAMILY_RHO, POWER_KIND_SHIFT, TASK_NULL, latent_weight,
                                         redundancy_boundary, simulate_task_edge)
from lrd.verdicts.families.task import (equal_sample_tasks, factor_word, residual_after_final_layer, task_group_tests,
                                        task_result, task_shares, task_verdict)

__all__ = ["residual_after_final_layer", "LRD_SCORES", "measure_relabelling_test", "FINAL_LAYER_SCORES",
           "FINAL_LAYER_STATISTICS", "RANK_FREE_SCORES", "FAMILY_CURVES", "COMPLEMENTARITY_MARGIN", "UNDEFINED_RHO",
           "kind_counts", "architecture_result", "architecture_verdict", "final_layer_result", "final_layer_verdict",
           "equal_sample_tasks", "task_shares", "task_result", "task_verdict", "factor_word", "task_group_tests",
           "spearman_rows", "family_pairs", "family_correlations", "curve_reliability", "redundancy_table",
           "judged_rho", "complementarity_result", "complementarity_verdict", "complementarity_model_tests",
           "POWER_KIND_SHIFT", "FAMILIES_DESIGN", "POWER_FAMILY_RHO", "simulate_task_edge", "latent_weight",
           "redundancy_boundary", "ARCHITECTURE_NULL", "FINAL_LAYER_NULL", "TASK_NULL", "COMPLEMENTARITY_NULL"]
