r"""Which layer to embed with: the mid-layer chapter's tables and its verdicts on Skean et al. (ICML 2025).

Pure functions over the chapter's tidy per-layer table (columns ``model, task, measurement,
layer, depth, value`` and, for the valley, ``kind``), as :func:`lrd.units.mid_layer_model`
returns it: ``"score"`` (every evaluation row), ``"score half 1"`` and ``"score half 2"`` (the
two halves of :func:`lrd.methods.evaluate.evaluation_halves`, cross-fitted:
:mod:`lrd.methods.crossfit`), ``"score (final norm)"`` (decoders, every layer through the final
norm), ``"chance"`` and ``"chance max"`` (the label-permutation null of the same evaluator) and
one row per layer of each label-free metric; for the valley also each prompt's entropy curve.

Four claims of :data:`lrd.verdicts.claims.CLAIMS` are judged here, each by one function:

=====================  ==========================================================================
``skean.gain``         :func:`judge_gain`: the paper's estimator, the layers at 40-60% depth
                       against the last layer, both through the final norm as the paper's code
                       scores them (:func:`paper_gain`); sign-flip test over models. The best
                       intermediate layer, **cross-fitted** (chosen on one half of a task's rows,
                       scored on the other with fits of its own, and swapped), is shown beside it.
``skean.valley``       :func:`judge_valley`: the mid-band contrast of prompt entropy (the middle
                       against the line through the blocks on either side), decoders against
                       encoders (relabelling the kinds), above 0 in decoders (sign flips over
                       decoders) and within a margin in every encoder (equivalence over its
                       prompts); all three must hold. Per model: shown in k of M decoders (Holm).
``skean.metrics_track``  :func:`judge_metrics_track`: per model, the Spearman correlation across
                       layers between a metric and the score, in the paper's direction (prompt
                       entropy, DiME); sign-flip test over models of the better of them.
``skean.choice``       :func:`judge_choice`: the DiME-chosen intermediate layer against the last;
                       sign-flip test over models.
=====================  ==========================================================================

The unit of every cross-model test is the **model**: the tasks of one model share its layers and
are not independent, so each model's tasks are averaged first (per-model evidence takes the
model's items, prompts for the valley, as its unit). Scores of different task types
(accuracy, average precision, Spearman, V-measure) are averaged as the MTEB average is.

The package's modules: :mod:`~lrd.verdicts.layer_choice.tables` (the chapter's tables),
:mod:`~lrd.verdicts.layer_choice.valleys` (the valley statistic), :mod:`~lrd.verdicts.layer_choice.judges`
(each claim's numbers, ``*_result``, and its verdict, ``judge_*``, whose sentences are
:mod:`lrd.verdicts.wording.layer_choice`'s) and :mod:`~lrd.verdicts.layer_choice.nulls` (the null
and effect models). Every name is importable from here.

References
----------
Skean et al., "Layer by Layer: Uncovering Hidden Representations in Language Models", ICML 2025:
Figure 1 (the gain; report digest Sec. 2 step 1), Figure 2a (the valley), the metrics and DiME (report
digest Sec. 2.1 and 3).
"""

from __future__ import annotations

from lrd.methods.crossfit import FINAL_NORM_SCORE
from lrd.verdicts.layer_choice.judges import (GAIN_ESTIMATORS, OFTEN_READINGS, choice_result, gain_result,
                                              judge_choice, judge_gain, judge_metrics_track, judge_valley,
                                              metrics_track_result, valley_result)
from lrd.verdicts.layer_choice.nulls import (BOOK_DESIGN, BOOK_MODELS, CHOICE_NULL, EMBEDDER_EDGE_GAIN, GAIN_NULL,
                                             METRICS_TRACK_NULL, POWER_METRIC_PEAK, VALLEY_DESIGN, VALLEY_NULL,
                                             MidLayerDesign, design_metric, simulate_design, simulate_gain_effect,
                                             simulate_valleys)
from lrd.verdicts.layer_choice.tables import (FINAL_NORM_HALVES, HALVES, METRICS, PAPER_BAND, PAPER_CHOICE_GAIN,
                                              PAPER_DIRECTIONS, FinalNormComparison, band_layers, chance_table,
                                              cross_fitted_gain, final_norm_comparison, in_scope_models,
                                              intermediate_layers, label_free_choice, metric_correlations,
                                              model_correlations, model_gains, panel_note, paper_gain,
                                              per_model_arrays, per_model_band_gains, sample_interval,
                                              sample_intervals)
from lrd.verdicts.layer_choice.valleys import (VALLEY_BAND, VALLEY_MARGIN, per_model_valleys, prompt_valleys,
                                               valley_contrast, valley_depths, valley_drop)
from lrd.verdicts.stats import holm

__all__ = ["FINAL_NORM_HALVES", "per_model_band_gains", "VALLEY_BAND", "VALLEY_MARGIN", "valley_contrast", "prompt_valleys", "per_model_valleys", "holm",
           "PAPER_BAND", "band_layers", "paper_gain", "MidLayerDesign", "BOOK_DESIGN", "BOOK_MODELS", "simulate_design",
           "HALVES", "EMBEDDER_EDGE_GAIN", "METRICS", "PAPER_DIRECTIONS", "valley_drop", "valley_depths", "cross_fitted_gain",
           "model_gains", "metric_correlations", "model_correlations", "label_free_choice", "chance_table", "FinalNormComparison", "final_norm_comparison", "panel_note",
           "judge_gain", "judge_valley", "GAIN_ESTIMATORS", "OFTEN_READINGS",
           "judge_metrics_track", "judge_choice", "in_scope_models", "GAIN_NULL", "VALLEY_NULL", "METRICS_TRACK_NULL", "CHOICE_NULL",
           "gain_result", "valley_result", "metrics_track_result", "choice_result", "FINAL_NORM_SCORE",
           "PAPER_CHOICE_GAIN", "VALLEY_DESIGN", "POWER_METRIC_PEAK", "simulate_valleys", "simulate_gain_effect",
           "design_metric", "per_model_arrays", "intermediate_layers", "sample_interval", "sample_intervals"]
