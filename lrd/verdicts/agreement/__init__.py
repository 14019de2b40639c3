r"""Judging Hinostroza et al.'s claims: does cosine relevance rank blocks like their removal cost?

The chapter ``cosine_vs_ablation`` measures, per decoder and task, the 0/1 correctness of
every evaluation item with the model intact and with each block removed, the cosine relevance
of every block, and the accuracy of the intact model's predictions under label permutations
(measured chance). This module turns those measurements into tidy tables and judges the
paper's claims on them.

**Accuracy relevance and its noise.** Block :math:`l`'s accuracy relevance is
:math:`a_l = \bar c_0 - \bar c_l`, a mean over :math:`n` items of per-item losses: with a few
dozen items most blocks differ by one or two items, so part of the spread of :math:`a` over
blocks is item noise, and noise pulls every correlation with it towards 0. The **split-half
reliability** measures how much: split the items at random into halves :math:`A, B`, correlate
the two halves' relevance vectors over blocks (:math:`r_{AB}`, averaged over ``n_splits``
random splits) and step it up to the full length (Spearman-Brown),

.. math:: R = \frac{2 r_{AB}}{1 + r_{AB}}.

A correlation with a noise-free score (cosine relevance: a mean over every token, held fixed)
is **corrected for attenuation** (Spearman 1904): :math:`r_c = r / \sqrt{R}`, clipped to
:math:`[-1, 1]`, undefined when :math:`R \le 0` (no measurable signal). Classical test theory
makes this exact in expectation for Pearson's correlation of item means, which is the
default (``method="pearson"``). It is not for rank correlations: near-tied blocks stay
shuffled however many items are added, so the split-half step-up over-states the reliability
of a ranking and the corrected Spearman correlation stays biased towards 0 (simulated at the
margin with a few dozen items, its test said "reproduced" more often than its level allows);
Spearman's rho is reported uncorrected, beside. Every number is recomputed on ``n_boot`` bootstrap resamples of the
items (the unit that varies independently within one model; halves are split by distinct
item, so a resampled duplicate never lands in both halves), which gives intervals and p-values.

**Tests.** A bootstrap p-value is :math:`(1 + \#\{b : \text{replicate } b \text{ does not
support the conclusion}\}) / (1 + B)`; a replicate whose correction is undefined (or, for the
mis-estimation share, whose ranking reliability is below ``min_reliability``) supports no
conclusion, so noise gives "inconclusive", never "reproduced" or "contradicted". The
percentile bootstrap's level is approximate: the null models of :mod:`lrd.verdicts.agreement.nulls` check it
on simulated panels (:mod:`lrd.verdicts.calibration`). Tasks of one
model are averaged first (one value per model and replicate). The claims are about the models
of the panel ("depending on the model"), so the panel verdict is an **intersection-union
test**: a conclusion holds when it holds for every model, with :math:`p = \max_m p_m` (valid at
:math:`\alpha` without correction; Berger 1982). Generalising beyond the panel's models would
need a test over models (a sign-flip test, :math:`p \ge 2^{-n}`); the pruning claim, a
comparison of two procedures, is judged that way.

**Chance is measured.** A model-task pair counts only where the intact accuracy is above its
permutation null: the same predictions scored against gold answers drawn uniformly among each
item's choices (:func:`lrd.engine.scoring.permuted_gold_accuracy`, cached with the unit), one-sided
p-value at most :math:`\alpha`.

**Where it is.** :mod:`~lrd.verdicts.agreement.relevance` (the measurements as tables),
:mod:`~lrd.verdicts.agreement.judges` (each claim's numbers as a :class:`~lrd.verdicts.result.Result`,
``x_result``, and its verdict, ``judge_x``, whose sentences :mod:`lrd.verdicts.wording.agreement`
writes) and :mod:`~lrd.verdicts.agreement.nulls` (the null models); every name is importable from
here.

References
----------
Hinostroza et al., "Rethinking Layer Relevance in Large Language Models Beyond Cosine
Similarity", arXiv:2605.14075 (2026): abstract, Sec. 1, Figures 1 and 2.
Spearman, "The proof and measurement of association between two things", Am. J. Psychol. 15
(1904) 72-101 (correction for attenuation); Brown (1910), Spearman (1910) (step-up formula).
Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics 24 (1982)
295-300 (intersection-union tests).
Efron and Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall 1993, Ch. 13, 16.

"""

from __future__ import annotations

from lrd.verdicts.agreement.judges import (PRUNING_MODEL_COLUMNS, correlation_result, dataset_result, decoder_note,
                                           decoder_panel, judge_correlation, judge_dataset, judge_misestimate,
                                           judge_olmo, judge_pruning, judge_theory, misestimate_result, olmo_result,
                                           pruning_model_tests, pruning_result, theory_result)
from lrd.verdicts.agreement.nulls import (COSINE_DESIGN, CORRELATION_NULL, DATASET_NULL, MISESTIMATE_NULL,
                                          POWER_DATASET_CORRELATION, POWER_MODERATE, PRUNING_NULL, SIMULATED_RESAMPLES)
from lrd.verdicts.agreement.relevance import (ESTIMATION_MARGIN, MIN_RELIABILITY, SAME_RELEVANCE, STRONG_CORRELATION,
                                              RelevanceReplicates, agreement_summary, agreement_table, chance_table,
                                              corrected_correlation, estimation_by_margin, estimation_shares,
                                              relevance_replicates, replicates_of, spearman_brown,
                                              task_agreement_table, unrelated_draws, unrelated_share)
from lrd.verdicts.wording.agreement import PAPER_MODELS

__all__ = ["RelevanceReplicates", "relevance_replicates", "replicates_of", "spearman_brown", "corrected_correlation",
           "estimation_shares", "unrelated_share", "agreement_table", "task_agreement_table", "chance_table",
           "agreement_summary", "estimation_by_margin", "unrelated_draws", "theory_result", "correlation_result",
           "misestimate_result", "dataset_result", "pruning_result", "olmo_result", "judge_theory", "judge_correlation",
           "judge_misestimate", "judge_dataset", "judge_pruning", "judge_olmo", "pruning_model_tests",
           "PRUNING_MODEL_COLUMNS", "decoder_panel", "decoder_note", "SIMULATED_RESAMPLES", "PAPER_MODELS",
           "STRONG_CORRELATION", "ESTIMATION_MARGIN", "MIN_RELIABILITY", "SAME_RELEVANCE", "COSINE_DESIGN",
           "POWER_MODERATE", "POWER_DATASET_CORRELATION", "CORRELATION_NULL", "MISESTIMATE_NULL", "DATASET_NULL",
           "PRUNING_NULL"]
