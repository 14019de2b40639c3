"""The claims of Jiang, Yang, Tam 2026 (LRD), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.

What we have of the paper is its abstract (English, verbatim in :data:`lrd.verdicts.claims.CLAIMS`)
and a Chinese digest of Sec. 1-3.1 (``shared/papers/000_0fc8dfb86db790fa.txt``): the text stops
inside the Frenet definitions, before NRS and GFMI are defined and before the setup (Sec. 4) and
the two application studies (Sec. 5-6). So the paper states no test, no level, no margin, no
model-level aggregation other than :math:`d_{0,L}`, and no panel of its selection and pruning
studies that we could quote; every such number below is the book's, and says so. Quotes from
the body are our translation of the digest, marked as such.
"""

from __future__ import annotations

from lrd.methods.pruning import MEASUREMENT_RULES
from lrd.verdicts import families
from lrd.verdicts import pruning
from lrd.verdicts import selection
from lrd.verdicts.claims import CLAIMS
from lrd.verdicts.spec import Rule, Specification, Table, level_rule

__all__ = ["SPECIFICATIONS"]

# --- the paper's words, quoted once -----------------------------------------------------------------

_POOL = ("Abstract: 'Applying LRD to 31 models (encoder-based and decoder-based embedders, plus base LLMs) on 30 MTEB "
         "tasks'; Sec. 1 (our translation of the digest): 'The model pool contains 25 embedders (encoder-based and "
         "decoder-based) and 6 base LLMs. The tasks include classification, retrieval, semantic textual similarity, "
         "reranking and duplicate detection.'")
_NO_SIZES = "The paper states no bound on model size or layer count for this claim."
_DIGEST_STOPS = ("The digest stops in Sec. 3.1, before the setup (Sec. 4) and the application studies (Sec. 5-6), so "
                 "which of the 31 models enter this study, and how many, is not in our text.")

# --- the book's rules that recur ----------------------------------------------------------------------


def _alpha(judged: str) -> Rule:
    return level_rule(f"the level of {judged}: the paper states no test and no level (abstract, Sec. 1-3.1 of the "
                      "digest); 0.05 is the convention every verdict of the book uses")


def _column(name: str, value: str, what: str) -> Rule:
    return Rule(name, value, "book",
                f"the column of the chapter's table that holds {what} (a name, not a statistic); another column "
                "would judge another claim, so no alternative is offered", label=f"{name} column")


def _wording(name: str, value: str, what: str) -> Rule:
    return Rule(name, value, "book",
                f"wording only: {what}; no number and no outcome depends on it (it belongs with the judges' "
                "presentation parameters, as 'note')", label=name)


_KINDS_RULES = (
    _column("group", "kind", "each model's kind ('encoder' or 'decoder'). The paper names three kinds (Sec. 1, our "
                             "translation of the digest: 'encoder-based embedders and decoder-based embedders and "
                             "base LLMs'); the book pools the last two as decoders and contrasts them with the "
                             "first, its reading of 'architectural differences' (the paper's Sec. 4, where its "
                             "contrast would be, is not in our text)"),
    _column("within", "task", "the task: a separation is counted per task"),
    Rule("unit", "model", "book",
         "the unit of analysis: the kinds are relabelled between models, a model's tasks together (a model's tasks "
         "are not independent draws of its architecture); the column of the chapter's table that names the model. "
         "Relabelling (model, task) cells instead would treat tasks as independent replicates: no alternative",
         label="unit column"),
)

_FAMILIES_MEASURES = Rule(
    "measures", families.LRD_SCORES, "book",
    "the model-level LRD scores: d_0L (the paper's, Sec. 3.1 defines d_{a,b}; the abstract names 'end-to-end "
    "subspace displacement d_{0,L}') and the means over layers of velocity, curvature, chance-adjusted NRS and GFMI, "
    "our reconstruction of 'model-level scores' the digest does not define (NRS and GFMI are themselves "
    "reconstructions). The statistic takes the best of them, and the null the maximum inside every relabelling, so "
    "more scores cost no validity, only some power",
    alternatives=(("d_0L",), families.RANK_FREE_SCORES, ("d_0L", "mean velocity", "mean curvature")),
    label="LRD scores")

_SCORES_TABLE = ("One row per (model, task): model, kind ('encoder' or 'decoder'), task, N (the number of texts), and "
                 "one column per model-level score of lrd.metrics.model_scores: d_0L, mean velocity, mean curvature, "
                 "mean NRS (adjusted), mean GFMI")

# --- lrd.architecture ---------------------------------------------------------------------------------

ARCHITECTURE = Specification(
    claim=CLAIMS['lrd.architecture'],
    judge=families.architecture_verdict,
    tables=(Table("scores", _SCORES_TABLE + " (the chapter's FamilyTables.scores)."),),
    scope=(_POOL + " The architectural differences are stated over this pool; Sec. 1 (our translation of the "
           "digest): 'encoder-based embedders and decoder-based embedders and base LLMs may organise the same "
           "samples through different layer-wise structures before producing their final-layer states'. Which "
           "kinds the paper contrasts (three, or encoder against decoder) is in its Sec. 4, not in our text: the "
           "two-way contrast, encoder-based against decoder-based embedders and base LLMs pooled, is the book's "
           "(the rule group). " + _NO_SIZES),
    estimand=("S = max over the LRD scores m of #{tasks t : m puts every encoder below every decoder, or every encoder "
              "above every decoder, on t}; effect S / (number of tasks)."),
    unit="the model: which models are encoders is relabelled, each model's tasks together.",
    test=("exact one-sided permutation test (lrd.verdicts.stats.separation_test): under the null the kinds are "
          "exchangeable between models, and p is the share of the C(n, k) choices of which k of the n models are "
          "encoders whose statistic (the maximum over the scores, inside each relabelling) is at least S; "
          "p_min = 1/C(n, k). Reproduced when p <= alpha; no opposite test (a separation cannot be negative)."),
    rules=(_FAMILIES_MEASURES, *_KINDS_RULES, _alpha("the relabelling test")),
    null=families.ARCHITECTURE_NULL,
)

# --- lrd.final_layer ----------------------------------------------------------------------------------

FINAL_LAYER = Specification(
    claim=CLAIMS['lrd.final_layer'],
    judge=families.final_layer_verdict,
    tables=(Table("scores", _SCORES_TABLE + ", and the final-layer statistics 'rank r' (the Frenet rank, smallest "
                            "rank explaining 95% of the final layer's variance) and 'final mean cosine' (the final "
                            "layer's mean pairwise cosine)."),),
    scope=(_POOL + " The abstract states the comparison ('not apparent from final-layer representations alone') over "
           "the same pool, without naming a final-layer statistic. " + _NO_SIZES),
    estimand=("D = S(LRD scores) - S(final-layer statistics), the difference of the separation counts of "
              "lrd.architecture (best of each set); effect D / (number of tasks)."),
    unit="the model (kinds relabelled between models, each model's tasks together).",
    test=("intersection-union (p = the larger) of two exact one-sided tests of D > 0: the kinds relabelled jointly "
          "for both sets (C(n, k) choices), and the measures relabelled between the two sets (C(7, 5) = 21 splits, "
          "so a best of five gains nothing over a best of two by selection). p_against: the other tails of both "
          "(final-layer statistics separate more), the larger of the two."),
    rules=(
        _FAMILIES_MEASURES,
        Rule("final", families.FINAL_LAYER_SCORES, "book",
             "the paper names no final-layer statistic (abstract: 'not apparent from final-layer representations "
             "alone'); the book takes two: the Frenet rank r, which the paper fixes from the final layer alone "
             "(Sec. 3.1, our translation of the digest: 'the smallest rank explaining 95% of the variance of the "
             "final-layer representation X_L'), and the final layer's mean pairwise cosine (its anisotropy). A "
             "referee may ask for either alone",
             alternatives=(("rank r",), ("final mean cosine",)), label="final-layer statistics"),
        *_KINDS_RULES, _alpha("the intersection-union test")),
    null=families.FINAL_LAYER_NULL,
)

# --- lrd.task ----------------------------------------------------------------------------------------

TASK = Specification(
    claim=CLAIMS['lrd.task'],
    judge=families.task_verdict,
    tables=(
        Table("scores", "One row per (model, task) of tasks measured on the same number of texts "
                        "(families.equal_sample_tasks): model, task, N (equal on every row), the rank-free LRD "
                        "scores 'mean NRS (adjusted)' and 'mean GFMI', the final layer's statistics 'rank r', "
                        "'final mean cosine', 'final kNN cosine' and 'final cluster share' (lrd.metrics.final_layer; "
                        "a statistic of the rule final that is missing makes the claim not testable), and optionally "
                        "'task type' (the task's type: the factor is called 'task' only where every type has two or "
                        "more datasets, else 'dataset')."),
        Table("groups", "Optional: one row per (model, task, group) of disjoint groups of each task's texts: model, "
                        "task, group, N (texts per group) and the same LRD scores computed on the group "
                        "(FamilyTables.group_scores); read for the note only (per model, do the datasets differ "
                        "beyond the sampling of texts: expected, not part of the verdict).",
              required=False),
    ),
    scope=(_POOL + " The task-level differences are stated over the 30 MTEB tasks of five types (Sec. 1, our "
           "translation of the digest: 'through these model-task pairs we can compare layer-wise behaviour across "
           "architectures and task types'). " + _NO_SIZES
           + " Sec. 3 (our translation of the digest): 'for each task, we fix a set of N samples' (N per task, not "
             "stated in the digest)."),
    estimand=("the largest share of each rank-free LRD score's within-model variance that the task (dataset) "
              "explains once each score is regressed on model effects and the final layer's statistics (partial "
              "eta^2 of the residuals, max over the scores); effect: that share, with a percentile bootstrap "
              "interval over models. The share before the regression is shown, not tested: different datasets "
              "always differ, so 'the scores differ between tasks' is a null known false before any data."),
    unit="the model: residuals are shuffled between each model's tasks; only task differences that recur across "
         "models count.",
    test=("within-model permutation test on the residuals after model effects and the final layer's statistics "
          "(Kennedy's residual permutation, an approximation whose size the appendix simulates; exact over the "
          "(T!)^(M-1) distinct shuffles up to 20000, else n_permutations Monte Carlo draws). Not testable where "
          "M T - M - J < T (J statistics). No opposite test: a share cannot be negative. The factor is worded "
          "'dataset' unless two or more datasets per task type are used."),
    rules=(
        Rule("measures", families.RANK_FREE_SCORES, "book",
             "the LRD scores that never use the Frenet rank r: r is fixed per task by the final layer's 95% variance "
             "(Sec. 3.1, our translation of the digest) and every Grassmann distance is at most sqrt(r) pi / 2, so a "
             "task difference in d_0L, velocity or curvature can come from the final layer's rank alone. A referee "
             "may test either score alone",
             alternatives=(("mean NRS (adjusted)",), ("mean GFMI",)), label="LRD scores"),
        Rule("final", families.FINAL_LAYER_STATISTICS, "book",
             "'not apparent from final-layer representations alone' (abstract; Sec. 1 contribution (2), our "
             "translation of the digest) tested as a task effect left after regressing on the final layer's own "
             "statistics; the paper names none. The book gives the final layer a baseline as rich as the families: "
             "its rank r and mean cosine (spectral), the mean cosine to its k nearest neighbours (what NRS tracks "
             "across layers) and the share of its variance between its Ward clusters at GFMI's levels (what GFMI "
             "tracks): with two scalars only, a third final-layer property that carries the task differences would "
             "read as 'beyond the final layer' (simulated: tests/test_verdicts_families.py). The two scalars of "
             "lrd.final_layer are the referee's alternative (a poorer baseline, favouring the claim)",
             alternatives=(families.FINAL_LAYER_SCORES,), label="final-layer baseline"),
        _column("factor", "task", "the task (dataset), the factor whose effect is tested"),
        Rule("block", "model", "book",
             "the unit of analysis: tasks are shuffled within each model (the column of the chapter's table that "
             "names the model); shuffling across models would count model differences as task differences: no "
             "alternative", label="block (unit) column"),
        _column("size", "N", "each task's number of texts, which must be equal on every row (every LRD score "
                             "depends on N); the judge refuses unequal N"),
        _column("rank", "rank r", "the Frenet rank r, read only for the note (how much of r the task explains)"),
        Rule("n_permutations", 5000, "book",
             "a Monte Carlo count, used only beyond 20000 distinct shuffles (the exact test below that): 5000 draws "
             "give p to about +-0.006 at p = 0.05 (the null model's simulations fix 2000, to keep the appendix fast)",
             alternatives=(20000,),
             label="Monte Carlo shuffles"),
        Rule("n_bootstrap", 2000, "book",
             "resamples of the effect's 95% percentile interval over models; the interval does not enter the "
             "outcome (the null model's simulations fix 0)",
             label="bootstrap resamples"),
        Rule("seed", 0, "book", "the random seed of the bootstrap (the residual test's Monte Carlo shuffles use "
                                "seed + 1); another seed moves a Monte Carlo p by its Monte Carlo error only",
             alternatives=(1, 2), label="seed"),
        _alpha("the residual permutation test"),
    ),
    null=families.TASK_NULL,
)

# --- lrd.complementarity -----------------------------------------------------------------------------

COMPLEMENTARITY = Specification(
    claim=CLAIMS['lrd.complementarity'],
    judge=families.complementarity_verdict,
    tables=(Table("correlations", "One row per (model, task, pair of families): model, task, pair ('Frenet-NRS', "
                                  "'Frenet-GFMI', 'NRS-GFMI'), rho (Spearman correlation across the transitions "
                                  "l -> l+1 between the two families' per-layer curves: Grassmann velocity, adjusted "
                                  "NRS, GFMI at transition midpoints; NaN for a constant curve), transitions, and "
                                  "optionally rho_corrected (rho corrected for the curves' noise over the texts; "
                                  "families.family_correlations with curve_reliability)."),),
    scope=("The paper states it of the framework, not of a panel: Sec. 1 (our translation of the digest): 'each "
           "family targets a different aspect of the layer sequence; the three are complementary rather than "
           "redundant'; Sec. 2.3 (our translation of the digest): 'dominant-subspace rotation, local neighbourhood "
           "reordering and intermediate-to-final alignment are different events, even if they may produce similar "
           "aggregate similarity'. It gives no measurement of redundancy and no scope beyond the 31-model pool "
           "(abstract). " + _NO_SIZES),
    estimand=("for each pair of families, the mean over models of x_model = the model's mean |rho| over its tasks "
              "(noise-corrected where the table has rho_corrected); effect: the largest pair mean (the pair closest "
              "to redundancy), with its t-interval over models clipped to [0, 1]."),
    unit="the model: its tasks are averaged first (they share the model's layers).",
    test=("intersection-union of three one-sided non-superiority sign-flip tests of 'mean x < margin' over models "
          "(p = the largest; p_min = 2^-n); p_against: some pair's mean above the margin beyond chance (sign-flip "
          "min-p test of x - margin over the three pairs). What it tests is 'not strongly correlated', the book's "
          "reading; complementarity proper (each family adds information the others lack: an incremental "
          "prediction of model or task differences) is not tested."),
    rules=(
        Rule("margin", families.COMPLEMENTARITY_MARGIN, "book",
             "the paper gives no measurement of 'redundant' (Sec. 1); the book calls two families strongly correlated "
             "when their curves order a model's layers alike with Spearman |rho| >= 0.7, its own cut for a 'strong' "
             "correlation elsewhere (lrd.verdicts.agreement.STRONG_CORRELATION, Dancey and Reidy's labels as "
             "tabulated by Akoglu 2018). A laxer referee takes 0.8 or 0.9 ('very strong'): at 0.9, two families "
             "whose curves agree at |rho| 0.85 pass as 'not strongly correlated' in about 9 of 10 simulated panels of "
             "the chapter's design (tests/test_verdicts_families.py)",
             alternatives=(0.8, 0.9), label="near-identity margin |rho|"),
        Rule("undefined_rho", families.UNDEFINED_RHO, "book",
             "where the correction for the curves' noise is undefined (a curve's split-group reliability <= 0 or "
             "missing), the book counts |rho| as 1, redundant: the noise leaves redundancy open, so the undefined "
             "case can only count against the claim. None reads the raw rho there instead (favours the claim)",
             alternatives=(None,), label="|rho| where the noise correction is undefined"),
        _alpha("the intersection-union test and of the per-model count"),
    ),
    null=families.COMPLEMENTARITY_NULL,
)

# --- model selection ---------------------------------------------------------------------------------

_SELECTION_MEASURES = Rule(
    "measures", selection.LRD_SCORES, "book",
    "the paper's three model-level scores (abstract: 'all three model-level scores'; it names d_{0,L}); the NRS and "
    "GFMI aggregates (mean chance-adjusted NRS over the transitions, mean GFMI over layers 0..L-1, each averaged "
    "over the embedding tasks) are the book's reconstruction, the digest defines neither. The claim is about these "
    "three: another set of scores is another claim, so no alternative is offered", label="model-level scores")
_PANEL = _wording("panel", "models", "what the units are called in the evidence ('models', 'decoders')")
_STRATIFY = Rule(
    "stratify", "kind", "book",
    "the downstream score is an embedding score and the panel mixes sentence encoders with LMs, so a score that only "
    "separates the kinds would correlate without ranking models within a kind; the downstream scores are therefore "
    "permuted within each kind (column 'kind'), the book's choice. The digest does not say which correlation the "
    "paper computes (the book's is Spearman) nor whether it stratifies; a correlation pooled over all models (not "
    "stratified: None), the plain reading of 'correlate positively', is the referee's obvious alternative",
    alternatives=(None,), label="orderings within")


def _selection_downstream(what: str) -> Table:
    return Table("downstream", f"A Series indexed by model: {what}; models missing from scores or downstream, or with "
                               "a missing value, are dropped.")


SELECTION = Specification(
    claim=CLAIMS['lrd.selection'],
    judge=selection.judge_selection,
    tables=(Table("scores", "One row per model (index: model), each score averaged over the model's embedding tasks: "
                            "d_0L, mean NRS (adjusted), mean GFMI; and kind ('encoder' or 'decoder', the strata)."),
            _selection_downstream("the model's downstream score, the mean over the embedding tasks of its last "
                                  "layer's MTEB main score (the chapter's)")),
    scope=("Abstract: 'For selection, all three model-level scores correlate positively with downstream MTEB "
           "performance'; Sec. 2.2 (our translation of the digest): the selection study 'uses the full layer-wise "
           "sequence on the same examples as label-free evidence to predict downstream MTEB performance'. "
           + _DIGEST_STOPS + " The pool is 25 embedders and 6 base LLMs (Sec. 1). " + _NO_SIZES),
    estimand=("Spearman's rho(s, y) across models between each score s and the downstream score y; effect: the rho "
              "of the binding score (the one with the largest p), with a Fisher-z interval (Bonett-Wright variance)."),
    unit="the model (its tasks averaged first).",
    test=("intersection-union of three exact one-sided permutation tests of rho(s, y) > 0 over the orderings of y "
          "within each kind (p = the largest; p_min = 1/prod_k n_k!); p_against: some score negative (the largest "
          "-rho over the scores, same orderings)."),
    rules=(_SELECTION_MEASURES, _PANEL, _alpha("the intersection-union test"), _STRATIFY),
    null=selection.SELECTION_NULL,
)

SELECTION_STRONGEST = Specification(
    claim=CLAIMS['lrd.selection_strongest'],
    judge=selection.judge_selection_strongest,
    tables=(Table("scores", "One row per model (index: model), each score averaged over the model's embedding tasks: "
                            "d_0L, mean NRS (adjusted), mean GFMI (a kind column, if any, is not read)."),
            _selection_downstream("the model's downstream score, the mean over the embedding tasks of its last "
                                  "layer's MTEB main score (the chapter's)")),
    scope=("Abstract: '[...] with end-to-end subspace displacement (d_{0,L}) the strongest'; Sec. 1 contribution (3) "
           "(our translation of the digest): 'in model selection on MTEB, all three model-level scores correlate "
           "positively with downstream performance, with d_{0,L} the strongest'. " + _DIGEST_STOPS + " " + _NO_SIZES),
    estimand="the smallest margin rho(d_0L, y) - rho(s, y) over the other two scores s (Spearman across models).",
    unit="the model: its contribution (a_m - b_m) y_m to the difference of the two correlations is sign-flipped.",
    test=("for each other score, the exact sign-flip test of rho(d_0L, y) - rho(s, y) > 0 (the two scores' ranks "
          "exchangeable within each model); intersection-union, p = the larger of the two; p_against: another score "
          "stronger (the reverse tests, Bonferroni over two). The model of middle downstream rank contributes "
          "nothing, so at least 6 models are needed to reach 0.05. The orderings are not stratified by kind."),
    rules=(_SELECTION_MEASURES,
           Rule("strongest", "d_0L", "paper",
                "abstract: 'with end-to-end subspace displacement (d_{0,L}) the strongest'; Sec. 1 contribution (3) "
                "(our translation of the digest): 'with d_{0,L} the strongest'", label="the strongest score"),
           _PANEL, _alpha("the intersection-union test")),
    null=selection.STRONGEST_NULL,
)

SELECTION_LLM = Specification(
    claim=CLAIMS['lrd.selection_llm'],
    judge=selection.judge_selection_llm,
    tables=(Table("scores", "One row per decoder (index: model), each score averaged over the model's embedding "
                            "tasks: d_0L, mean NRS (adjusted), mean GFMI; and kind (one kind for a panel of decoders)."),
            _selection_downstream("the decoder's multiple-choice accuracy, the mean over the chapter's "
                                  "multiple-choice tasks of the intact model (our stand-in for the paper's MMLU)"),
            Table("sources", "Optional, read for the note only: a mapping model -> upstream checkpoint name (how many "
                             "are instruct-tuned or dequantised from GGUF, where the paper uses base LLMs).",
                  required=False),
            Table("chance", "Optional, read for the note only: pruning.chance_table of the intact decoders, one row "
                            "per (model, task): items, accuracy, chance, p, above chance (the note names the decoders "
                            "not above their measured chance).", required=False)),
    scope=("Abstract: '[...] and the same direction holds on a smaller base-LLM MMLU panel'; Sec. 1 (our "
           "translation of the digest): the pool has '6 base LLMs'. The claim is stated for base (not "
           "instruction-tuned) LLMs and MMLU; the panel's size beyond 'smaller' is not in our text. " + _NO_SIZES),
    estimand=("Spearman's rho(s, y) across decoders between each score and the multiple-choice accuracy; effect: "
              "the rho of the binding score, with a Fisher-z interval."),
    unit="the decoder (its tasks averaged first).",
    test=("as lrd.selection on the decoders: intersection-union of three exact one-sided permutation tests of "
          "rho(s, y) > 0 over the orderings within kind (p = the largest; p_min = 1/n! for one kind); p_against: "
          "some score negative. The direction only: which score is strongest is not part of this claim."),
    rules=(_SELECTION_MEASURES,
           _wording("downstream_name", "multiple-choice accuracy", "what the downstream score is called in the note"),
           _alpha("the intersection-union test"), _STRATIFY),
    null=selection.SELECTION_LLM_NULL,
)

# --- pruning -----------------------------------------------------------------------------------------

_CHANGES = Table(
    "changes",
    "One row per (model, task, rule, seed, fraction): model, task, rule (the prune rule: 'random', 'Frenet "
    "(velocity)', 'NRS', 'GFMI', and any other rule of lrd.methods.pruning.PRUNE_RULES, not read), seed (random's "
    "order; -1 for a deterministic rule), fraction (the budget, share of blocks removed), change (the downstream "
    "score pruned minus intact, on its 0-1 scale); optionally kind, and informative (False for a model-task pair not "
    "above measured chance, left out: pruning.mark_informative). Random must have a row wherever a rule has one.")
_ITEMS = Table("items", "Optional, read for the per-model count beside the verdict only: pruned decoders' per-item "
                        "outcomes, one row per (model, task, rule, seed, fraction, item) with correct (0 or 1).",
               required=False)
_CHANCE = Table("chance", "Optional, with items: pruning.chance_table, one row per (model, task) with items, "
                          "accuracy, chance, p, above chance; pairs not above chance are left out of the per-model "
                          "count.", required=False)
_PRUNING_SCOPE = ("Abstract: 'We then apply LRD to two practical tasks: label-free model selection and inference-time "
                  "layer pruning'. " + _DIGEST_STOPS + " The digest names the 15% and 20% budgets (abstract; Sec. 1 "
                  "contribution (3)), 'every budget' and 'the lightest budget' (abstract), not the full set of "
                  "budgets, nor how a rule picks the blocks. " + _NO_SIZES)
_PRUNING_UNIT = ("the model: its changes are averaged over tasks (random's over its seeds first), D_{m,r,b} = rule's "
                 "change minus random's on the same model and budget.")
_MARGIN = Rule(
    "margin", pruning.DEFAULT_MARGIN, "book",
    "'does not beat Random' (the book's reading of 'the only measurement-guided rule that beats Random', 'effective "
    "only at the lightest budget' and 'does not transfer', abstract) is a claim of absence: the paper gives no size, "
    "so the book's non-superiority margin is "
    "two points of the downstream score on its 0-1 scale (a rule ahead of random by less is, for choosing blocks, no "
    "better). A stricter referee halves it, a laxer one doubles it", alternatives=(0.01, 0.04),
    label="non-superiority margin")
_RANDOM = Rule("random", "random", "paper",
               "abstract: 'GFMI is the only measurement-guided rule that beats Random at the 15% and 20% budgets': the "
               "baseline is the paper's Random pruning ('random' is its rule name in the changes table; the number "
               "of random orders is the chapter's)", label="baseline rule")


def _random_read(claim: str) -> Rule:
    return Rule("random", "random", "book",
                "the rows of random pruning ('random' in the changes table). The paper's Random baseline is named "
                f"for GFMI (abstract: 'GFMI is the only measurement-guided rule that beats Random'); {claim} No "
                "alternative: the chapter runs one random baseline, and another rule in its place would judge "
                "another claim", label="baseline rule")


_GFMI_RULE = Rule("rule", "GFMI", "paper",
                  "abstract: 'GFMI is the only measurement-guided rule that beats Random at the 15% and 20% budgets "
                  "[...] and has the best median change at every budget' (how the GFMI rule picks blocks, the "
                  "smallest |GFMI change|, is the book's reconstruction: pruning.PRUNING_RECONSTRUCTION)",
                  label="the rule claimed")
_OTHERS = Rule(
    "others", tuple(r for r in MEASUREMENT_RULES if r != "GFMI"), "book",
    "the set is the paper's (abstract: 'GFMI is the only measurement-guided rule that beats Random [...]. Frenet is "
    "effective only at the lightest budget, while NRS does not transfer from model selection to pruning': the other "
    "measurement-guided rules are Frenet's and NRS's), its instances the book's: which Frenet quantity guides the "
    "Frenet rule (velocity) and how each rule picks blocks are our reconstruction (pruning.PRUNING_RECONSTRUCTION). "
    "The chapter runs no other measurement-guided rule, and a subset would be a weaker claim: no alternative",
    label="the other measurement rules")

PRUNING_GFMI_ONLY = Specification(
    claim=CLAIMS['lrd.pruning_gfmi_only'],
    judge=pruning.judge_pruning_gfmi_only,
    tables=(_CHANGES, _ITEMS, _CHANCE),
    scope=_PRUNING_SCOPE,
    estimand=("the mean over models of D_{m,GFMI,b} at each budget b of 15% and 20%, and of D_{m,r,b} for each other "
              "measurement rule r there; effect: GFMI's mean D at its weaker budget, with a t-interval."),
    unit=_PRUNING_UNIT,
    test=("intersection-union (p = the largest) of exact one-sided sign-flip tests of mean D_GFMI > 0 at each budget "
          "and non-superiority sign-flip tests of mean D_r < margin for each other rule and budget; p_against "
          "(Bonferroni): GFMI shown not to beat random by the margin somewhere, or another rule shown to beat it."),
    rules=(_GFMI_RULE, _OTHERS,
           Rule("budgets", (0.15, 0.20), "paper",
                "abstract: 'beats Random at the 15% and 20% budgets'; Sec. 1 contribution (3) (our translation of the "
                "digest): 'GFMI beats random pruning at the 15% and 20% budgets'", label="budgets"),
           _MARGIN, _RANDOM, _alpha("the intersection-union test and of the per-model count")),
    null=pruning.GFMI_ONLY_NULL,
)

PRUNING_GFMI_MEDIAN = Specification(
    claim=CLAIMS['lrd.pruning_gfmi_median'],
    judge=pruning.judge_pruning_gfmi_median,
    tables=(_CHANGES, _ITEMS, _CHANCE),
    scope=_PRUNING_SCOPE,
    estimand=("for each other measurement rule r and budget b, the mean over models of the paired difference "
              "Delta_{m,GFMI,b} - Delta_{m,r,b} (tasks averaged); effect: the smallest such mean (the binding "
              "comparison), with a t-interval. The paper speaks of the 'median change' (abstract) without saying over "
              "what units (models, tasks or model-task pairs); the book's medians over models are shown in the "
              "evidence."),
    unit="the model (its tasks averaged first).",
    test=("intersection-union (p = the largest) of exact one-sided sign-flip tests of GFMI minus each other rule at "
          "each budget; p_against (Bonferroni): another rule better beyond chance somewhere."),
    rules=(_GFMI_RULE,
           Rule("others", tuple(r for r in MEASUREMENT_RULES if r != "GFMI"), "book",
                "'the best median change' (abstract) is read against the other measurement-guided rules (the "
                "abstract's sentence is about measurement-guided rules; Frenet's and NRS's). Random is not a "
                "competitor here: its seeds enter as the baseline of the other claims, and GFMI against random is "
                "lrd.pruning_gfmi_only. A subset would be a weaker claim, so no alternative is offered",
                label="the rules compared"),
           Rule("budgets", None, "book",
                "the paper says 'at every budget' (abstract) but our text names only 15% and 20%: None judges every "
                "budget the chapter ran (5, 10, 15, 20% of the blocks, the book's reconstruction). A referee holding "
                "the paper to the budgets it names takes those two",
                alternatives=((0.15, 0.20),), label="budgets"),
           _random_read(
               "for this claim the judge reads those rows only to build the model-level table and leaves them out of "
               "the comparison: that Random is not among the rules GFMI's median must beat is the book's reading of "
               "'the best median change' (see the rule others)."),
           _alpha("the intersection-union test and of the per-model count")),
    null=pruning.GFMI_MEDIAN_NULL,
)

PRUNING_FRENET = Specification(
    claim=CLAIMS['lrd.pruning_frenet'],
    judge=pruning.judge_pruning_frenet,
    tables=(_CHANGES, _ITEMS, _CHANCE),
    scope=_PRUNING_SCOPE,
    estimand=("the mean over models of D_{m,Frenet,b} at the lightest budget b_0 and at every heavier budget; "
              "effect: the mean at b_0, with a t-interval."),
    unit=_PRUNING_UNIT,
    test=("intersection-union (p = the largest) of the exact one-sided sign-flip test of mean D > 0 at b_0 and "
          "non-superiority sign-flip tests of mean D < margin at every heavier budget; p_against (Bonferroni): "
          "Frenet shown not to beat random by the margin at b_0, or shown to beat it at a heavier budget."),
    rules=(
        Rule("rule", "Frenet (velocity)", "book",
             "the paper's Frenet rule (abstract: 'Frenet is effective only at the lightest budget'); which Frenet "
             "quantity guides it is not in our text: the book removes the blocks of smallest Grassmann velocity "
             "(pruning.PRUNING_RECONSTRUCTION). The chapter runs no curvature rule, so no alternative can be judged",
             label="the rule claimed"),
        Rule("lightest", None, "book",
             "the paper's 'lightest budget' (abstract) is not named in our text; None takes the lightest budget the "
             "chapter ran (5% of the blocks). A referee who reads the paper's budgets as starting higher takes 10%",
             alternatives=(0.10,), label="the lightest budget"),
        _MARGIN, _random_read(
            "reading 'Frenet is effective only at the lightest budget' (abstract) as 'beats Random there and not at "
            "a heavier budget' is the book's: the paper's sentence names no baseline."),
        _alpha("the intersection-union test and of the per-model count")),
    null=pruning.FRENET_NULL,
)

PRUNING_NRS = Specification(
    claim=CLAIMS['lrd.pruning_nrs'],
    judge=pruning.judge_pruning_nrs,
    tables=(_CHANGES, _ITEMS, _CHANCE),
    scope=_PRUNING_SCOPE,
    estimand=("the mean over models of D_{m,NRS,b} at every budget b the chapter ran; effect: the mean at NRS's best "
              "budget, with a t-interval."),
    unit=_PRUNING_UNIT,
    test=("intersection-union (p = the largest) of non-superiority sign-flip tests of mean D_NRS < margin at every "
          "budget (a claim of absence: without the margin a small panel would 'show' it by low power); p_against "
          "(Bonferroni over budgets): NRS beats random beyond chance at some budget."),
    rules=(
        Rule("rule", "NRS", "paper",
             "abstract: 'NRS does not transfer from model selection to pruning' (how the NRS rule picks blocks, the "
             "highest chance-adjusted retention, is the book's reconstruction: pruning.PRUNING_RECONSTRUCTION)",
             label="the rule claimed"),
        _MARGIN, _random_read(
            "reading 'NRS does not transfer from model selection to pruning' (abstract) as 'does not beat Random at "
            "any budget' is the book's: the paper's sentence names no baseline."),
        _alpha("the intersection-union test and of the per-model count")),
    null=pruning.NRS_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (ARCHITECTURE, FINAL_LAYER, TASK, COMPLEMENTARITY, SELECTION, SELECTION_STRONGEST, SELECTION_LLM, PRUNING_GFMI_ONLY, PRUNING_GFMI_MEDIAN, PRUNING_FRENET, PRUNING_NRS,)
