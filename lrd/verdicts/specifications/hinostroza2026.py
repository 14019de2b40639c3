"""The claims of Hinostroza et al. 2026 (Beyond cosine), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.

The paper is read in its digest (``shared/papers/003``, in Chinese, cut part-way through Sec. 2):
the quotes below are **our translation of the digest**, located by the section of the paper
they come from. The digest holds the abstract, the Introduction (with Figures 1 and 2) and part
of the related work; the theory section, the correlation procedure and Sec. 6 (pruning) are not
in it, so every number of those parts that the judges use is the book's.

Some of the book's choices are made before the judges, in the tables they read (not rules of a
judge, so not :class:`~lrd.verdicts.spec.Rule` s here; each table's description names them): the
correlation (Pearson, ``agreement_table(method=)``), the over/under-estimation margin of the
mis-estimation share (:data:`lrd.verdicts.agreement.ESTIMATION_MARGIN`, ``agreement_table(margin=)``
and ``unrelated_draws(margin=)``; the chapter's parameter ``margin``), the bootstrap resamples
and half splits (``replicates_of(n_boot=, n_splits=)``) and, for pruning, which blocks each rule
removes (:func:`lrd.methods.relevance.calibration_plan`).
"""

from __future__ import annotations

from lrd.verdicts import agreement
from lrd.verdicts.agreement import MIN_RELIABILITY, SAME_RELEVANCE, STRONG_CORRELATION
from lrd.verdicts.claims import CLAIMS, COSINE_MISESTIMATE_SHARE
from lrd.verdicts.spec import Rule, Specification, Table, level_rule

__all__ = ["SPECIFICATIONS"]

#: Where the paper's quotes come from (every quote below is ours, from the Chinese digest).
_DIGEST = "our translation of the digest, shared/papers/003"

#: The chance table, read by every test of the chapter's decoders.
_CHANCE = Table(
    "chance",
    "lrd.verdicts.agreement.chance_table: one row per decoder and task; columns model, task, acc (intact "
    "accuracy on the evaluation items), chance (mean accuracy of the same predictions scored against gold answers "
    "permuted among each item's choices), p_chance ((1 + #{permuted >= acc}) / (1 + N)) and p_min_chance (the same "
    "for a perfect score). The judge keeps the decoder-task pairs with p_chance <= alpha and counts them in its "
    "evidence.")

#: The level, a rule of every test of this paper.
_ALPHA_REASON = ("the book's conventional level, 0.05 (lrd.verdicts.record.ALPHA); the paper states no test, so no "
                 "level. In this judge it is the verdict's level (reproduced when p <= alpha, contradicted when "
                 "p_against <= alpha) and the level of the measured-chance filter (a decoder-task pair counts when "
                 "p_chance <= alpha)")


def _alpha(extra: str = "") -> Rule:
    return level_rule(_ALPHA_REASON + extra)


THEORY = Specification(
    claim=CLAIMS['cosine.theory'],
    judge=agreement.judge_theory,
    tables=(
        Table("toy",
              "not a table but one record, lrd.methods.counterexample.CounterexampleResult (counterexample() at its "
              "defaults: a 3-block residual network on n = 1000 balanced two-class inputs, our construction): "
              "cosine_relevance (per block l = 1..3, 1 - mean cos(h_{l-1}, h_l)), accuracy (the intact network's), "
              "accuracy_without (per block, the accuracy with block l removed: its input passed through) and chance "
              "(the share of the majority class, 0.5)"),
    ),
    scope=("none stated beyond 'a layer': an existence statement, 'Our theoretical analysis shows that a layer can "
           "exhibit an arbitrarily low cosine similarity score while still being crucial to the model's performance' "
           "(abstract), 'we give a formal proof [...] removing such a layer may drastically change the model's output, "
           "possibly taking its accuracy from perfect to zero' (Introduction; " + _DIGEST + "). The class of networks "
           "the proof covers is in the paper's theory section, which the digest does not hold."),
    estimand=("for the block l* of least cosine relevance c_l* in the book's toy network: c_l*, the intact accuracy A "
              "and the accuracy without that block A_-l*, against the toy's chance (0.5)"),
    unit="none: one constructed network, evaluated on its n inputs; nothing is sampled (a demonstration)",
    test=("a demonstration, checked: 'demonstrated' when c_l* < max_cosine, A >= min_accuracy and A_-l* <= "
          "max_without (None: the toy's chance), else 'contradicted'. It holds by construction: the network is ours, "
          "an illustration of the paper's proof, not the proof"),
    rules=(
        Rule("max_cosine", 1e-3, "book",
             "'arbitrarily low' (abstract) read as a cosine relevance below 1e-3, two orders of magnitude below the "
             "toy's other two blocks (about 0.1): a convention, the paper gives no number. The toy's block 2 lies "
             "between 1e-5 and 1e-4 (tests/test_spec_hinostroza2026.py::"
             "test_theory_flips_under_a_stricter_cosine_bound_or_the_paper_s_literal_zero), so 1e-5 flips the "
             "verdict; its cosine relevance scales as c^2 / (2 |h|^2) with the write size c of block 2, so a smaller "
             "c meets any bound (the verdict is of the construction at its defaults)",
             alternatives=(1e-2, 1e-4, 1e-5), label="largest cosine relevance of the crucial block"),
        Rule("min_accuracy", 1.0, "paper",
             "'possibly taking its accuracy from perfect to zero' (Introduction; " + _DIGEST + "): the intact "
             "network is perfect", label="least intact accuracy"),
        Rule("max_without", None, "book",
             "None: the toy's chance (0.5, the majority class's share). The paper says 'to zero' (Introduction); "
             "the book asks for chance, the floor a network without its label-carrying block reaches when it "
             "predicts one class for every input (and what the paper's own OLMo example reports: removing layer "
             "16 'brings OLMo's performance on ARC-C down to chance', Introduction). 0.0 is the paper's literal "
             "word; the toy does not reach it",
             alternatives=(0.0,), label="largest accuracy without the block"),
    ),
    null=None,
)

CORRELATION = Specification(
    claim=CLAIMS['cosine.correlation'],
    judge=agreement.judge_correlation,
    tables=(
        Table("agreement",
              "lrd.verdicts.agreement.agreement_table: one row per decoder (model), task and replicate (0: the "
              "evaluation items as measured; 1..B: bootstrap resamples of the items, B = 1000 in the chapter, 100 "
              "in the null model). The judge reads model, task, replicate, r (Pearson correlation over blocks of the "
              "accuracy relevance a_l = mean correctness intact - without block l with the cosine relevance, which "
              "is held fixed), reliability (split-half reliability R of a over blocks: the mean correlation of two "
              "random halves of the items, stepped up by Spearman-Brown) and r_corrected (r / sqrt(R), clipped to "
              "[-1, 1], NaN where R <= 0). Its other columns (n_items, spearman, rank_reliability, over, under, "
              "misestimated, unrelated) are not read here"),
        _CHANCE,
    ),
    scope=("'empirical evidence from a range of LLMs' (abstract); 'the correlation [...] is often weak or moderate, "
           "depending on the model' (Introduction; " + _DIGEST + "). Neither names the models, their sizes or "
           "the tasks; the digest names OLMo (Figure 1) and LLaMA-3-8B (Figure 2) among the paper's LLMs, and "
           "stops before the section that reports the correlations. 'Tasks above measured chance' is the book's "
           "filter, not the paper's scope."),
    estimand=("per decoder m, r_c,m: the mean over its tasks above measured chance of the noise-corrected Pearson "
              "correlation r_c = r / sqrt(R) between accuracy relevance and cosine relevance over its blocks. The "
              "claim, read as 'weak or moderate': |r_c,m| < margin in every decoder of the panel. The paper says "
              "'often weak or moderate, depending on the model' (Introduction): requiring it of every decoder is "
              "the book's stricter reading (with few decoders, 'often' cannot be told from 'always'); the Pearson "
              "correlation and the noise correction are the book's too, the digest names neither"),
    unit=("within a decoder, the evaluation item (resampled with replacement; each task resampled independently; "
          "blocks are the coordinates of the correlation, not units). Across decoders, each decoder is its own test: "
          "the verdict is about the panel's decoders, not a population of models"),
    test=("per decoder, equivalence by two one-sided percentile-bootstrap tests over items, p_m = max(p+, p-) with "
          "p+ = (1 + #{b: r_c,b >= margin}) / (1 + B) and p- likewise for r_c,b <= -margin (a replicate whose "
          "correction is undefined counts against); null: |r_c| >= margin (strong) in at least one decoder; panel "
          "p = max_m p_m (intersection-union, Berger 1982). Against ('strong in every decoder'): per decoder the "
          "better of the one-sided tests of r_c >= margin and r_c <= -margin, doubled; the maximum over decoders"),
    rules=(
        Rule("margin", STRONG_CORRELATION, "book",
             "the equivalence margin of 'weak or moderate': 0.7, the conventional cut between a moderate and a "
             "strong correlation (Dancey and Reidy's labels, as tabulated by Akoglu, Turk. J. Emerg. Med. 18 (2018) "
             "91-93). The paper gives no number. Stricter readings of 'not strong': 0.5 (Cohen 1988's 'large' "
             "correlation) and 0.6 (where 'strong' starts in Evans 1996's labels); looser: 0.8 (Evans's 'very "
             "strong')",
             alternatives=(0.5, 0.6, 0.8), label="equivalence margin |r|"),
        _alpha("; and of the per-model count (Holm over the decoders)"),
    ),
    null=agreement.CORRELATION_NULL,
)

MISESTIMATE = Specification(
    claim=CLAIMS['cosine.misestimate'],
    judge=agreement.judge_misestimate,
    tables=(
        Table("agreement",
              "lrd.verdicts.agreement.agreement_table, built at the over/under-estimation margin m (book: "
              "ESTIMATION_MARGIN = 0.1 of the percentile range, the chapter's `margin`; our reconstruction, the "
              "paper's definition is not in the digest): one row per decoder, task and replicate (0: the items as "
              "measured; 1..B: bootstrap resamples). The judge reads model, task, replicate, misestimated (over + "
              "under: the share of blocks whose cosine and accuracy percentile ranks lie more than m apart), "
              "rank_reliability (split-half reliability of the accuracy ranking, Spearman halves) and unrelated "
              "(the exact expected share when the measured accuracy relevances are assigned to blocks at random)"),
        _CHANCE,
        Table("unrelated",
              "lrd.verdicts.agreement.unrelated_draws on the same replicates and margin: one row per decoder, task "
              "and permutation (n_perm of them; the chapter draws n_boot); columns model, task, permutation, "
              "misestimated (the share when the measured accuracy ranks are permuted over blocks). Read for the "
              "permutation p shown beside the test, not by the test"),
    ),
    scope=("'in more than 90% of the cases we study' (Introduction; " + _DIGEST + "): the cases are the paper's "
           "(its LLMs, layers and datasets), which the digest does not enumerate; it names OLMo on ten datasets "
           "(Figure 1) and LLaMA-3-8B (Figure 2), and does not define a 'case'. Reading a case as a block of a "
           "decoder (its tasks averaged), and the over/under-estimation as percentile ranks more than m apart, is "
           "the book's. The claim's registered scope (decoder LLMs, blocks of one model, tasks above measured "
           "chance) is the book's reading: the paper states no scope beyond 'the cases we study'."),
    estimand=("per decoder, d = s - u: s the share of blocks mis-estimated by cosine (percentile ranks more than m "
              "apart), averaged over its tasks above measured chance; u the share unrelated rankings give (exact). "
              "The claim read on that scale: s > u - delta with delta = 1 - share (cosine places blocks no better "
              "than rankings unrelated to removal cost, up to the 10% of cases the paper leaves)"),
    unit=("within a decoder, the evaluation item (resampled with replacement, tasks independently); decoders "
          "combined by intersection-union (the verdict is about the panel's decoders)"),
    test=("the paper's direction is not tested: p = 1 by design, because item noise pulls s towards u and the "
          "bootstrap does not reproduce that pull (tests/test_agreement.py::"
          "test_misestimation_is_judged_against_unrelated_rankings), so the verdict is 'contradicted' or "
          "'inconclusive'. Against the claim: per decoder the one-sided percentile-bootstrap test over items of "
          "d < -delta, p_against = (1 + #{b: d_b >= -delta}) / (1 + B); the maximum over decoders "
          "(intersection-union). Beside it, as evidence only: the permutation p of s against unrelated rankings"),
    rules=(
        Rule("share", COSINE_MISESTIMATE_SHARE, "paper",
             "'in more than 90% of the cases we study, cosine similarity either over- or under-estimates the true "
             "relevance of the layer' (Introduction; " + _DIGEST + "). The book reads it on the scale of unrelated "
             "rankings, delta = 1 - 0.9 (a reading stated in the test, not a different number)",
             label="the paper's share"),
        Rule("min_reliability", MIN_RELIABILITY, "book",
             "0.7, the usual minimum reliability of a usable measurement (Nunnally 1978): a resample whose accuracy "
             "ranking is less reliable than this on any task is left out of the interval shown for d (counted at "
             "the interval's ends). It changes the interval (the verdict's ci and each decoder's interval), not "
             "p_against, which reads every resample (tests/test_spec_hinostroza2026.py::"
             "test_min_reliability_widens_the_interval_and_leaves_p_against). 0.5 and 0.8 are the looser and "
             "stricter floors a referee could ask for",
             alternatives=(0.5, 0.8), label="least ranking reliability"),
        _alpha(),
    ),
    null=agreement.MISESTIMATE_NULL,
)

DATASET = Specification(
    claim=CLAIMS['cosine.dataset'],
    judge=agreement.judge_dataset,
    tables=(
        Table("task_agreement",
              "lrd.verdicts.agreement.task_agreement_table: one row per decoder, pair of its tasks (task_a, task_b) "
              "and replicate (0: the items as measured; b >= 1 pairs the b-th resamples of the two tasks, drawn "
              "independently); columns model, task_a, task_b, replicate, r (Pearson correlation over blocks of the "
              "two tasks' accuracy relevances), reliability_a, reliability_b (their split-half reliabilities) and "
              "r_corrected (r / sqrt(R_a R_b), clipped to [-1, 1], NaN where either reliability is <= 0)"),
        _CHANCE,
    ),
    scope=("OLMo on the ten datasets of Figure 1A: 'this visualisation [...] reveals that layer relevance varies "
           "across datasets, and highlights the key role of layers 8 and 16 in OLMo's performance' (Introduction, "
           "Figure 1A; " + _DIGEST + "). No other model or dataset is named for this claim in the digest. Testing it "
           "on the book's own decoders and tasks (those above measured chance), and reading 'varies' as a "
           "noise-corrected between-task correlation below the rule same, extends OLMo's figure: the book's "
           "reading, not the paper's scope."),
    estimand=("per decoder, rbar_c: the mean over pairs of its tasks (both above measured chance) of the "
              "noise-corrected between-task correlation of accuracy relevance over blocks (1 when the tasks' "
              "relevances agree up to item noise and a difficulty factor). The claim: rbar_c < same (the tasks share "
              "less than same^2 of their relevance's variance) in every decoder"),
    unit=("within a decoder, the evaluation item of each task (tasks resampled independently); decoders combined "
          "by intersection-union"),
    test=("per decoder, the one-sided percentile-bootstrap test of rbar_c < same, p = (1 + #{b: rbar_c,b >= same}) "
          "/ (1 + B) (an undefined correction counts against the claim, and against the contradiction); null: "
          "rbar_c >= same in at least one decoder; panel p = max over decoders (intersection-union). Against ('the "
          "same relevance in every decoder'): the mirror test of rbar_c > same, maximum over decoders"),
    rules=(
        Rule("same", SAME_RELEVANCE, "book",
             "0.9: a noise-corrected between-task correlation above which two tasks' relevance counts as the same "
             "(they share more than 81% of its variance). The paper shows the variation in a heat map (Figure 1A) "
             "without a number; a correlation below 1 is near-automatic as items grow, so the book judges against "
             "a substantive margin, a convention. 0.8 and 0.95 are the looser and stricter readings of 'the same'",
             alternatives=(0.8, 0.95), label="margin of 'the same relevance'"),
        _alpha("; and of the per-model count (Holm over the decoders)"),
    ),
    null=agreement.DATASET_NULL,
)

PRUNING = Specification(
    claim=CLAIMS['cosine.pruning'],
    judge=agreement.judge_pruning,
    tables=(
        Table("curves",
              "lrd.units.cosine_vs_ablation.pruning_curves_table: one row per pruned decoder, pruning rule, seed "
              "(-1 for a deterministic rule, 0.. for random orders) and budget k (blocks removed; k = 0 is the "
              "intact model and is not read); columns model, rule, seed, k, acc (evaluation accuracy of the pruned "
              "model, mean over tasks) and removed (not read). The chapter's rules are 'accuracy (calibration)', "
              "'cosine (BI)', 'Taylor (first order)', 'angular (Gromov)' and 'random'; the null model draws only "
              "the first two"),
        Table("items",
              "lrd.units.cosine_vs_ablation.pruning_items_table: one row per pruned decoder, task, rule, seed, "
              "budget and evaluation item; columns model, task, rule, seed, k, item, correct (0/1). Optional: the "
              "per-model evidence (lrd.verdicts.agreement.pruning_model_tests, t-test with items as the unit, Holm "
              "over the models) beside the verdict; without it the verdict has no per-model count",
              required=False),
        Table("chance",
              "lrd.verdicts.agreement.chance_table (as for the other claims of the chapter). Optional: the tasks "
              "above measured chance (p_chance <= alpha) that the per-model evidence from `items` keeps; the test "
              "over models does not read it",
              required=False),
    ),
    scope=("'allowing for more informed pruning strategies and lightweight models' (abstract); in the structured "
           "pruning of Sec. 6, 'in the task-dependent setting, pruning by our accuracy relevance score achieves "
           "better results than existing methods (Taylor approximation, cosine similarity, FinerCut); in the "
           "task-agnostic setting our method also performs best, although it is sensitive to the choice of "
           "calibration dataset' (Introduction, summarising Sec. 6; " + _DIGEST + "). The only model the digest "
           "names for pruning is LLaMA-3-8B (Figure 2, Gromov et al.'s task analysis, HellaSwag); Sec. 6's models "
           "and tasks are not in the digest. The book's decoders, tasks, budgets and the single cosine rule it "
           "compares with (the rule worse) are its own choices."),
    estimand=("per pruned decoder m, d_m = mean over budgets k > 0 of the evaluation accuracy of the `better` rule "
              "minus the `worse` rule's (a rule with several seeds: the median over seeds); the effect is the mean "
              "of d_m over decoders"),
    unit=("the pruned decoder: both rules are deterministic given a decoder, and its budgets and tasks are averaged "
          "within it"),
    test=("exact one-sided sign-flip test over the pruned decoders of the mean of d_m (null: the two rules "
          "exchangeable within each decoder, d_m symmetric about 0; p >= 2^-n, so 5 decoders are needed to reach "
          "0.05); against ('the cosine ranking prunes better'): the same test of -d"),
    rules=(
        Rule("better", "accuracy (calibration)", "paper",
             "the paper's procedure: 'we instead rank layers by the actual drop in accuracy on the task's training "
             "set, and prune accordingly' (Introduction, Figure 2; " + _DIGEST + "). 'accuracy (calibration)' is "
             "the book's name for it: accuracy relevance on calibration items of the tasks' train splits; its "
             "tie-break (the mean log-likelihood drop) is the book's, made in the table",
             label="the paper's rule"),
        Rule("worse", "cosine (BI)", "book",
             "the comparator: Block Influence (Men et al. 2025), one minus the cosine similarity of a block's input "
             "and output, exactly the cosine relevance the paper defines (Introduction) and one of the three cosine "
             "methods it prunes against (He et al. 2024, Men et al. 2025, Gromov et al. 2025; Introduction, "
             "summarising Sec. 6). Which of them is the book's choice. A referee would try 'angular (Gromov)', the "
             "paper's Figure 2 comparator, or 'Taylor (first order)', another method of Sec. 6: both are rules of "
             "the chapter's curves (judge('cosine.pruning', tables, worse='angular (Gromov)')), but not of the null "
             "model's simulated curves, on which every listed alternative must run, so they are named here rather "
             "than listed",
             label="the cosine rule"),
        Rule("random", "random", "book",
             "presentation only: the rule whose accuracy (median over its seeds) the evidence shows beside the two "
             "compared, as a floor; no number of the test reads it, so no alternative changes the verdict",
             label="the baseline shown"),
        _alpha("; here also of the per-model count of the evidence from `items` (Holm over the decoders)"),
    ),
    null=agreement.PRUNING_NULL,
)

OLMO = Specification(
    claim=CLAIMS['cosine.olmo'],
    judge=agreement.judge_olmo,
    # judge_olmo reads nothing (it returns 'not testable': OLMo is not in the offline panel), so no table is
    # declared: a Table must name a parameter of the judge, and inventing one would misdescribe it.
    tables=(),
    scope=("OLMo (Groeneveld et al. 2024), its layer 16, the ten datasets of Figure 1 and ARC-C: 'layer 16 of OLMo "
           "appears to have low relevance according to cosine similarity (Figure 1B) [...] removing it lowers the "
           "average accuracy over the ten datasets shown by 66% [...] removing layer 16 alone brings OLMo's "
           "performance on ARC-C down to chance' (Introduction, Figure 1; " + _DIGEST + "). The digest does not "
           "give OLMo's size; the claim's sweep runs allenai/OLMo-7B-hf."),
    estimand=("for OLMo's layer 16: its cosine relevance rank among OLMo's layers, the relative change of the mean "
              "accuracy over the paper's ten datasets when it alone is removed (the paper: -66%), and the accuracy "
              "on ARC-C without it against chance. None is estimated: the book's panel has no OLMo"),
    unit="one model and one of its layers: a case the paper reports, not a sample",
    test=("none is run: the judge returns 'not testable' (OLMo is not in the offline panel). The claim's sweep "
          "would measure OLMo-7B on a GPU, but no judge compares such a run with the paper's -66% yet"),
    rules=(),  # no level rule 'alpha' either: 'not testable' on every panel, no p-value to compare with a level
    null=None,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (THEORY, CORRELATION, MISESTIMATE, DATASET, PRUNING, OLMO,)
