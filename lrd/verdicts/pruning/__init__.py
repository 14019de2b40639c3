r"""Verdicts on LRD's pruning claims: does a measurement-guided prune rule beat random pruning?

The chapter prunes each model with every rule of :data:`lrd.methods.pruning.PRUNE_RULES` at each
budget and records the change of the downstream score, :math:`\Delta = \text{score}_\text{pruned}
- \text{score}_\text{intact}`, per model, task, rule, budget (and seed for random). **The unit of
every test is the model**: a model's tasks are not independent draws, so its changes are averaged
over tasks first (random's over its seeds, then over tasks), giving per model :math:`m`, rule
:math:`r` and budget :math:`b`

.. math:: D_{m,r,b} = \bar\Delta_{m,r,b} - \bar\Delta_{m,\text{random},b},

the rule's change minus random's on the same model (:func:`model_changes`).

* **beats random** at a budget: the one-sided exact sign-flip test of :math:`\bar D > 0` over
  models (:func:`lrd.verdicts.stats.sign_flip_test`; null: each model's difference is as likely
  to have either sign).
* **does not beat random**: a claim of absence, judged by a non-superiority test with margin
  :math:`m` (default :data:`DEFAULT_MARGIN`): sign flips of :math:`m - D`
  (:func:`lrd.verdicts.stats.equivalence_sign_flip_test` with ``lower=-inf``) show that the mean
  advantage over random is below :math:`m`. A rule worse than random also "does not beat" it,
  so the test is one-sided. Without it, a small panel would "show" absence by low power.

Claims made of several parts (GFMI beats random at 15% *and* 20% *and* the other rules do not)
are intersection-union tests: p is the largest of the parts' p-values, no correction needed.
The opposite conclusion (``p_against``) is a union of the parts' opposite tests, so those are
Bonferroni-corrected.

Decoders are evaluated by multiple-choice accuracy on few items; where a decoder's intact
accuracy is not above chance, measured by permuting the gold labels
(:func:`lrd.verdicts.stats.accuracy_permutation_test`, :func:`chance_table`), removing blocks
cannot lower it by much nor raise it, so its changes would pull every rule toward "no
different from random" (and toward a spurious "does not beat random"). Such model-task pairs are
excluded (:func:`mark_informative`), and every verdict says which.

The prune rules, budgets and the budget rounding are our reconstruction (:mod:`lrd.methods.pruning`).

References
----------
Jiang, Yang, Tam, "Layer-wise Representation Dynamics", arXiv:2605.12714 (2026), abstract.
Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics 24 (1982)
295-300 (intersection-union tests).

The package: :mod:`.changes` (chance, the model-level changes, the summaries and the per-item
tests), :mod:`.judges` (each claim's :class:`~lrd.verdicts.result.Result` and verdict),
:mod:`.nulls` (the null and effect models of :mod:`lrd.verdicts.calibration`); the sentences are
:mod:`lrd.verdicts.wording.pruning`'s.
"""

from lrd.verdicts.pruning.changes import (DEFAULT_MARGIN, RULE_ITEM_COLUMNS, SUMMARY_COLUMNS, ModelChanges,
                                          chance_table, mark_informative, model_changes, model_level, per_model_holm,
                                          rule_item_tests, rule_summary, winners)
from lrd.verdicts.pruning.judges import (frenet_result, gfmi_median_result, gfmi_only_result, judge_pruning_frenet,
                                         judge_pruning_gfmi_median, judge_pruning_gfmi_only, judge_pruning_nrs,
                                         nrs_result)
from lrd.verdicts.pruning.nulls import FRENET_NULL, GFMI_MEDIAN_NULL, GFMI_ONLY_NULL, NRS_NULL
from lrd.verdicts.wording.pruning import PRUNING_RECONSTRUCTION

__all__ = ["DEFAULT_MARGIN", "PRUNING_RECONSTRUCTION", "ModelChanges", "chance_table", "mark_informative",
           "rule_item_tests",
           "model_level", "model_changes",
           "rule_summary", "winners", "judge_pruning_gfmi_only", "judge_pruning_gfmi_median", "judge_pruning_frenet",
           "judge_pruning_nrs", "GFMI_ONLY_NULL", "GFMI_MEDIAN_NULL", "FRENET_NULL", "NRS_NULL",
           "gfmi_only_result", "gfmi_median_result", "frenet_result", "nrs_result", "per_model_holm"]
