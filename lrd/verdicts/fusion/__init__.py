r"""Verdicts on the ILSE / Cayley-Encoder claims (Ulanovski, Blyachman and Bechler-Speicher).

One judge function per claim: tidy tables in, a :class:`lrd.verdicts.Verdict` out. The unit
of every comparison of methods is the **model**: a model's cells are first averaged over
seeds, then its tasks are averaged, and the paired differences of those model means are
tested by exact sign-flip tests (:func:`lrd.verdicts.stats.sign_flip_test`). Tasks of one
model share its states and are not independent; seeds only re-draw the training noise.

=====================  ==============================================================  ===========
claim                  test                                                            unit
=====================  ==============================================================  ===========
ilse.fc                FC above each existing approach; intersection-union, p = max    model
ilse.cayley_perf...    Cayley above FC                                                 model
ilse.baselines         Cayley above each of the paper's baselines; p = max             model
ilse.few_shot          Cayley at 8-32 shots above full-data DWAtt and Last; p = max    model
ilse.gain              largest cell gain over the last layer against 40 points:         test items
                       simultaneous bootstrap (max statistic) / intersection-union      and seeds
ilse.mapping           std over random layer-to-node mappings against 1.5 points       mapping
                       (chi-square test of a variance)
ilse.parameters        demonstration: trainable share of the base model (arithmetic)
ilse.cayley_eff...     demonstration: edge counts and measured peak memory
=====================  ==============================================================  ===========

"Beats every one" is the intersection of one-sided hypotheses: it is shown when every
comparison is significant, so its p-value is the largest of theirs (an intersection-union
test needs no multiplicity correction; Berger, Technometrics 24 (1982) 295-300). Its opposite
(below at least one) is a union, judged by the min-p of the comparisons under sign flips
applied to a model's differences in all comparisons together (Westfall-Young,
:func:`lrd.verdicts.stats.sign_flip_min_p_test`).

References
----------
Ulanovski, Blyachman and Bechler-Speicher, "Improving LLM Final Representations with
Inter-Layer Geometry", arXiv:2603.22665 v3 (NeurIPS 2026): abstract, Table 1, the ablations and
key findings (the digest in ``shared/papers/004_*.txt``).
Romano and Wolf, "Exact and approximate stepdown methods for multiple hypothesis testing",
JASA 100 (2005) 94-108 (the bootstrap of the maximum).
Owen, "The pigeonhole bootstrap", Ann. Appl. Stat. 1 (2007) 386-411 (resampling two crossed
factors, here seeds and test items).

The package: :mod:`~lrd.verdicts.fusion.panel` (the model-level tables and the models a claim
counts), :mod:`~lrd.verdicts.fusion.above` (fc, cayley_performance, baselines, few_shot),
:mod:`~lrd.verdicts.fusion.gain`, :mod:`~lrd.verdicts.fusion.mapping`,
:mod:`~lrd.verdicts.fusion.demonstrations` and :mod:`~lrd.verdicts.fusion.nulls`. Each judge
``judge_x`` is ``wording.fusion.x(x_result(...))``: ``x_result`` returns the numbers
(:class:`lrd.verdicts.result.Result`), :mod:`lrd.verdicts.wording.fusion` writes the sentences.
"""

from __future__ import annotations

from lrd.verdicts.claims import OUT_OF_SCOPE
from lrd.verdicts.fusion.above import (above_result, baselines_result, cayley_performance_result, fc_result,
                                       few_shot_result, judge_baselines, judge_cayley_performance, judge_fc,
                                       judge_few_shot, per_model_numbers, power_numbers)
from lrd.verdicts.fusion.demonstrations import (cayley_efficiency_result, in_param_scope, judge_cayley_efficiency,
                                                judge_parameters, paper_model_shares, parameters_result, sparser_from)
from lrd.verdicts.fusion.gain import (GAIN_MODEL_COLUMNS, gain_bootstrap, gain_by_model, gain_cells, gain_design,
                                      gain_headroom, gain_result, judge_gain, paper_largest_gains)
from lrd.verdicts.fusion.mapping import (judge_mapping, majority_accuracy, mapping_components, mapping_grid,
                                         mapping_model_tests, mapping_result, mapping_test)
from lrd.verdicts.fusion.nulls import (BASELINES_NULL, CAYLEY_PERFORMANCE_NULL, FC_NULL, FEW_SHOT_DESIGN, FEW_SHOT_NULL,
                                       FUSION_DESIGN, GAIN_NULL, MAPPING_DESIGN, MAPPING_NULL, PAPER_STAND_INS,
                                       POWER_FEW_SHOT_LEAD, exchangeable_scores, simulate_few_shot, simulate_gain,
                                       simulate_mapping, simulate_methods, simulate_paper_effect)
from lrd.verdicts.fusion.panel import (EXISTING_APPROACHES, FEW_SHOT_REFERENCES, METHOD_LABELS, PAPER_BASELINES,
                                       POINTS, cell_means, cube, differences, few_shot_item_tests, item_matrices,
                                       method_label, model_differences, paper_cell_differences, paper_mean_difference,
                                       per_model_item_tests, per_model_pair_tests, require_columns, size_scope,
                                       holm_count)
from lrd.verdicts.stats import crossed_mean_test
from lrd.verdicts.wording.fusion import ENCODER_RECONSTRUCTION

#: The methods' display names under the name the specification's tables quote (:data:`METHOD_LABELS`).
_LABELS = METHOD_LABELS

__all__ = ["EXISTING_APPROACHES", "PAPER_BASELINES", "FEW_SHOT_REFERENCES", "METHOD_LABELS", "POINTS", "method_label",
           "model_differences", "judge_fc", "judge_cayley_performance", "judge_baselines", "judge_few_shot",
           "judge_gain", "judge_mapping", "judge_parameters", "judge_cayley_efficiency",
           "fc_result", "cayley_performance_result", "baselines_result", "few_shot_result", "gain_result",
           "mapping_result", "parameters_result", "cayley_efficiency_result", "above_result", "per_model_numbers",
           "power_numbers", "gain_design", "gain_by_model", "gain_headroom", "gain_cells", "gain_bootstrap",
           "GAIN_MODEL_COLUMNS", "paper_largest_gains", "paper_model_shares", "ENCODER_RECONSTRUCTION",
           "mapping_components", "mapping_grid", "mapping_test", "mapping_model_tests", "majority_accuracy",
           "per_model_item_tests", "per_model_pair_tests", "few_shot_item_tests", "crossed_mean_test",
           "paper_mean_difference", "paper_cell_differences", "sparser_from", "in_param_scope", "size_scope",
           "OUT_OF_SCOPE", "holm_count", "require_columns", "cube", "cell_means", "differences", "item_matrices",
           "FUSION_DESIGN", "FEW_SHOT_DESIGN", "MAPPING_DESIGN", "PAPER_STAND_INS", "POWER_FEW_SHOT_LEAD",
           "exchangeable_scores", "simulate_methods", "simulate_paper_effect", "simulate_few_shot", "simulate_gain",
           "simulate_mapping", "FC_NULL", "CAYLEY_PERFORMANCE_NULL", "BASELINES_NULL", "FEW_SHOT_NULL", "GAIN_NULL",
           "MAPPING_NULL"]
