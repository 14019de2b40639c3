r"""The statistical tests behind the verdicts: permutation nulls, equivalence, intervals.

Every test here measures chance instead of assuming it: the p-value is the share of
relabellings (sign flips, orderings, group assignments) of the units that vary independently
(models, not a model's tasks) whose statistic is at least the observed one, exact where the
relabellings can be enumerated, Monte Carlo (``(1 + count) / (1 + n)``) otherwise. Each result
carries ``p_min``, the smallest p-value the design can give at all: a panel of 3 decoders can
never show a positive rank correlation beyond chance (:math:`p \ge 1/3! = 1/6`), so a verdict
on it is "not testable" rather than a failure.

Claims of **no effect** ("the correlation is weak", "NRS does not transfer") are judged by an
equivalence test with a stated margin (:func:`equivalence_sign_flip_test`, two one-sided
tests): absence of a significant effect is never read as evidence of absence.

References
----------
Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer 2005.
Schuirmann, "A comparison of the two one-sided tests procedure [...]", J. Pharmacokinet.
Biopharm. 15 (1987) 657-680 (TOST).

The package's modules, by kind: :mod:`.tails` (the tolerance, the Monte Carlo p-value and
:func:`tail_p`, the one rule of every test's tail), :mod:`.sign_flips` (paired differences),
:mod:`.ranks` (orderings: rank correlation, accuracy against chance), :mod:`.groups` (two groups
and a factor within blocks), :mod:`.intervals` (intervals and crossed t-tests), :mod:`.multiple`
(Holm, intersection-union). Every name is imported from :mod:`lrd.verdicts.stats` itself.
"""

from lrd.verdicts.stats.tails import TOLERANCE, PermutationTest, monte_carlo_p, tail_p, tolerance
from lrd.verdicts.stats.sign_flips import (equivalence_sign_flip_test, models_for_sign_flip, sign_flip_max_test,
                                           sign_flip_min_p_test, sign_flip_p_min, sign_flip_power, sign_flip_test)
from lrd.verdicts.stats.ranks import (accuracy_permutation_test, all_orderings, average_ranks, permutation_p_min,
                                      rank_rows, spearman_permutation_test)
from lrd.verdicts.stats.groups import (partial_eta_squared, perfectly_separated, relabellings, score_grid,
                                       separation_counts, separation_table, separation_test, separation_tests,
                                       smallest_two_group_panel, two_group_p_min, two_group_permutation_test,
                                       variance_explained, within_block_permutation_test)
from lrd.verdicts.stats.intervals import (crossed_components, crossed_mean_test, crossed_t_test, mean_interval,
                                          mean_intervals, satterthwaite_df)
from lrd.verdicts.stats.multiple import holm, intersection_union_by_model


__all__ = ["crossed_mean_test", "crossed_components", "satterthwaite_df", "crossed_t_test",
           "intersection_union_by_model", "PermutationTest", "sign_flip_test", "equivalence_sign_flip_test",
           "spearman_permutation_test", "mean_interval", "mean_intervals", "sign_flip_p_min", "permutation_p_min",
           "models_for_sign_flip", "relabellings", "two_group_p_min", "smallest_two_group_panel",
           "sign_flip_min_p_test", "perfectly_separated", "score_grid", "separation_counts", "separation_table",
           "separation_test", "separation_tests", "variance_explained", "partial_eta_squared",
           "within_block_permutation_test", "accuracy_permutation_test", "sign_flip_max_test",
           "two_group_permutation_test", "sign_flip_power", "holm", "TOLERANCE", "tolerance", "monte_carlo_p",
           "tail_p", "average_ranks", "rank_rows", "all_orderings"]
