"""The claims of Ulanovski et al., NeurIPS 2026 (ILSE), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.

The paper is read from its digest (``shared/papers/004_*.txt``, in Chinese): where a quote comes
from the digest's Chinese it says "(our translation of the digest)"; the abstract (v3) is quoted
as :data:`lrd.verdicts.claims.CLAIMS` quotes it.
"""

from __future__ import annotations

from lrd.verdicts import fusion
from lrd.verdicts.claims import (CLAIMS, ILSE_KINDS, ILSE_MAPPING_STD_PP, ILSE_MAX_GAIN_PP, ILSE_MAX_PARAM_SHARE,
                                 ILSE_PARAMS_RANGE, ILSE_TABLE1_PARAMS_RANGE)
from lrd.verdicts.spec import Rule, Specification, Table, level_rule

__all__ = ["SPECIFICATIONS"]

# --- shared wording -----------------------------------------------------------------------------

_MODELS_SCOPE = ("The paper evaluates '13 tasks and 9 LLMs' (abstract v3); its v1 abstract (arXiv:2603.22665v1, not in "
                 "our digest) gives their sizes: '9 pre-trained LLMs ranging from 14 million to 8 billion parameters'. "
                 "The authors' README (github.com/tomulanovski/ILSE, README.md, 'Models and tasks'): 'Models "
                 "reported in the paper: Pythia-410M, Gemma2-2B, Llama3-8B. The scaling analysis sweeps Pythia 14M "
                 "through 2.8B.' Table 1 holds the three named models (main experiments; our translation of the "
                 "digest) and the limitations say 'the experiments cover models up to 8B' (Limitations; our "
                 "translation of the digest). The paper states no narrower scope for its claims: the models counted "
                 "are those of 14M to 8B parameters (the rule params_range, the paper's range). What the book adds is "
                 "labelled as its rules: which kinds of model are 'pre-trained LLMs' (the rule kinds: by default the "
                 "panel's sentence embedders are left out).")

_SCORES = Table("scores", "one row per (model, task, method, seed): columns model, task, method, seed, score "
                          "(accuracy for classification, Spearman for STS, as fractions 0-1); methods named as in "
                          "fusion._LABELS ('last', 'best', 'mean', 'elmo', 'mlp', 'deepset', 'dwatt', 'fc', 'cayley')")
_ITEMS = Table("items", "one row per (model, classification task, method, seed, test item): columns model, task, "
                        "method, seed, item, correct (0/1), as lrd.aggregation.scores.item_outcomes returns them; "
                        "optional: with it, the per-model evidence (crossed-factor t-test per model, Holm over the "
                        "models) goes beside the verdict", required=False)
_BASE_PARAMS = Table("base_params", "a mapping model -> base-model parameter count (the chapter's shares table), "
                                    "covering every model of the other tables; optional: with it only the models "
                                    "within params_range are counted, the others are named in the evidence; "
                                    "None counts every model", required=False)
_MODEL_KINDS = Table("model_kinds", "a mapping model -> kind ('decoder' for the autoregressive language models, "
                                    "'encoder' for the sentence embedders; lrd.engine.models.model_kinds), covering "
                                    "every model of the other tables; optional: with it only the kinds of the rule "
                                    "kinds are counted, the others are named in the evidence; None counts every kind",
                     required=False)


def _params_rule() -> Rule:
    return Rule(
        "params_range", ILSE_PARAMS_RANGE, "book",
        "The paper's range: '9 pre-trained LLMs ranging from 14 million to 8 billion parameters' (abstract v1, "
        "arXiv:2603.22665v1); the authors' README: 'The scaling analysis sweeps Pythia 14M through 2.8B' (README.md, "
        "'Models and tasks'). The book's part is only the exact bounds, inclusive: Pythia-14M's 14,067,712 parameters "
        "(the Pythia model cards' parameter table) and Llama-3-8B's 8,030,261,248 (the Hugging Face checkpoint). "
        "Alternative: the range of the three models of Table 1 (Pythia-410M's 405,334,016 to Llama-3-8B; the book's "
        "earlier default), which leaves out models of 14M-405M parameters that the paper (v1 abstract, README) "
        "evaluated.",
        alternatives=(ILSE_TABLE1_PARAMS_RANGE,),
        label="model sizes counted (base-model parameters, inclusive)")


def _kinds_rule() -> Rule:
    return Rule(
        "kinds", ILSE_KINDS, "book",
        "The paper says '9 pre-trained LLMs' (abstract v1; '9 LLMs', abstract v3) and every model it or its "
        "README names is an autoregressive language model (Pythia, Gemma2, Llama3; main experiments, Table 1). The "
        "book reads 'pre-trained LLMs' as decoder language models and leaves the panel's sentence embedders (kind "
        "'encoder': contrastively trained bidirectional encoders whose last layer is trained as the embedding) out: "
        "they are not LLMs in the paper's sense, and the paper's premise, that the final layer of an LLM leaves "
        "task signal in the others, is about models whose last layer is trained for next-token prediction. The "
        "paper states no kind in words, so this is the book's reading. Alternative: every kind (the embedders in).",
        alternatives=(None,), label="kinds of model counted")


def _alpha(judged: str) -> Rule:
    """The test's level, a rule of every test of this paper (ilse.gain, never tested, has none): ``judged``
    says what it decides in the judge."""
    return level_rule(f"the level of {judged}: the paper states no test and no level (abstract v3; our digest gives "
                      "scores and the mapping ablation's standard deviations, no p-value); 0.05 is the convention every verdict of the book "
                      "uses")


#: What the level decides in the judges of 'above every one' (fusion.above_result).
_ABOVE_ALPHA = ("(reproduced when p <= alpha; contradicted when the test against gives p_against <= alpha), of the "
                "power at the paper's Table 1 mean differences and of the per-model count beside it (a model shown "
                "when its Holm-adjusted p <= alpha)")


_ABOVE_TEST = ("exact one-sided sign-flip test over the models of the per-model differences d_m (null: each d_m "
               "symmetric about 0, the methods exchangeable within a model; exact p >= 2^-M with M models)")

# --- ilse.fc ------------------------------------------------------------------------------------------

FC = Specification(
    claim=CLAIMS['ilse.fc'],
    judge=fusion.judge_fc,
    tables=(_SCORES, _ITEMS, _BASE_PARAMS, _MODEL_KINDS),
    scope=_MODELS_SCOPE,
    estimand=("for each existing approach b, d_m = (1/|T_m|) sum_t (s_bar_{m,t,FC} - s_bar_{m,t,b}): model m's "
              "mean over its tasks T_m (classification and STS alike) of the FC-Encoder's seed-mean score minus "
              "b's; the claim is that every b has E[d_m] > 0 ('above every one')"),
    unit="the model (a base LLM or embedder): its tasks share its hidden states and its seeds only redraw the "
         "training noise, so both are averaged inside the model",
    test=("per approach, an " + _ABOVE_TEST + "; 'above every one' is an intersection-union test, p = max over the "
          "approaches (Berger 1982); against: FC below at least one approach, the min-p over joint sign flips of the "
          "models all comparisons share (Westfall-Young)"),
    rules=(
        Rule("existing", fusion.EXISTING_APPROACHES, "book",
             "The abstract names the existing approaches in the sentence before the claim: 'Existing approaches "
             "therefore either search for the best layer for each task or apply expensive attention-based "
             "mechanisms to learn inter-layer aggregation' (abstract v3); the research background names them the "
             "best single layer and depth-wise attention (DWAtt) (our translation of the digest). The book's default "
             "adds a learned scalar mix of layers (ELMo-style), which the paper does not name: a stricter claim than "
             "the paper's, the book's choice. The last layer is left out: beating it is ilse.baselines' and "
             "ilse.gain's claim. The two the paper names, and Table 1's baselines (with the last layer, without "
             "ELMo), are the alternatives.",
             alternatives=(fusion.PAPER_BASELINES, ("best", "dwatt")),
             label="the existing approaches"),
        _params_rule(),
        _kinds_rule(),
        _alpha("the intersection-union of the sign-flip tests, p = max over the approaches " + _ABOVE_ALPHA),
    ),
    null=fusion.FC_NULL,
)

# --- ilse.cayley_performance ----------------------------------------------------------------------

CAYLEY_PERFORMANCE = Specification(
    claim=CLAIMS['ilse.cayley_performance'],
    judge=fusion.judge_cayley_performance,
    tables=(_SCORES, _ITEMS, _BASE_PARAMS, _MODEL_KINDS),
    scope=_MODELS_SCOPE,
    estimand=("d_m = (1/|T_m|) sum_t (s_bar_{m,t,Cayley} - s_bar_{m,t,FC}): model m's mean over its tasks of the "
              "Cayley-Encoder's seed-mean score minus the FC-Encoder's; the claim is E[d_m] > 0"),
    unit="the model (tasks and seeds averaged inside it)",
    test=("an " + _ABOVE_TEST + "; against: Cayley below FC (the same test the other way)"),
    rules=(_params_rule(), _kinds_rule(), _alpha("the sign-flip test of Cayley above FC " + _ABOVE_ALPHA)),
    null=fusion.CAYLEY_PERFORMANCE_NULL,
)

# --- ilse.cayley_efficiency ---------------------------------------------------------------------------

CAYLEY_EFFICIENCY = Specification(
    claim=CLAIMS['ilse.cayley_efficiency'],
    judge=fusion.judge_cayley_efficiency,
    tables=(
        Table("graphs", "one row per model of the panel: columns model, states (blocks + 1), cayley_nodes (order of "
                        "the smallest SL(2, Z_n) with a node per state, virtual nodes included), cayley_edges, "
                        "fc_edges (directed edges), as lrd.aggregation.summary.layer_graphs returns them"),
        Table("memory", "one row per (graph, sequence length): columns graph ('fc' or 'cayley'), tokens, edges, "
                        "peak_bytes (measured peak memory of one forward and backward pass of token-level GIN "
                        "message passing; NaN where not run), as lrd.aggregation.memory.token_graph_memory returns "
                        "them; may be empty (then only the layer graphs are checked)"),
    ),
    scope=("The paper builds the Cayley graph over its models' layers (Pythia-410M, Gemma2-2B, Llama3-8B are the "
           "three of Table 1; main experiments) and reports its memory on token-level graphs of Gemma2-2B only: "
           "'GPU memory (MB) ... Cayley-"
           "Encoder 269 (30.7x less) ... 77 (12.0x less)' (ablation 1, token-level interaction graph; our translation "
           "of the digest). It states no layer count below which the construction is meant, and no claim that the "
           "Cayley graph is sparser at every layer count. The book counts only the layer counts at which the SL(2, Z_n) "
           "graph is sparser than the complete graph (from 11 states on, up to 33: fusion.sparser_from), which hold "
           "the three models the digest names (25-33 states); that restriction is the book's. The paper's "
           "scaling sweep (authors' README: 'Pythia 14M through 2.8B') includes Pythia-14M and -70M, of 6 blocks "
           "(7 states; Pythia model cards), where the Cayley graph is not the sparser one: the book's restriction "
           "leaves the paper's own smallest models out of this demonstration."),
    estimand=("arithmetic: directed edges of the Cayley graph against the complete graph of a model's states, and "
              "FC's measured peak memory over the Cayley graph's on a token-level graph"),
    unit="the model (its state count fixes both graphs); the token-level graph at a sequence length",
    test=("checked: the paper's models' state counts lie in the range from which the Cayley graph is sparser "
          "(fusion.sparser_from), every in-scope model of the panel has fewer Cayley than complete-graph edges, "
          "and on the token-level graph(s) compared (memory_at) the Cayley graph has fewer edges and FC's peak "
          "memory is more than min_memory_ratio times the Cayley graph's"),
    rules=(
        Rule("min_memory_ratio", 1.0, "book",
             "The abstract says the Cayley graph 'further improves ... efficiency' without a factor; the book reads "
             "'lighter' as any saving (FC's peak memory above the Cayley graph's). The paper's own factors, "
             "12.0x-34.3x (token-level ablation on Gemma2-2B; our translation of the digest), are measured at its "
             "sequence lengths and model, not the book's.",
             alternatives=(2.0, 12.0), label="FC's peak memory over Cayley's must exceed"),
        Rule("memory_at", "longest", "book",
             "The saving grows with the sequence (the complete graph's edges grow as (S T)^2), so the book compares "
             "the longest sequence at which both graphs were run, as the paper's longest inputs; the paper gives one "
             "number per task, not per length.",
             alternatives=("every",), label="token graphs compared"),
    ),
    null=None,
)

# --- ilse.baselines -----------------------------------------------------------------------------------

BASELINES = Specification(
    claim=CLAIMS['ilse.baselines'],
    judge=fusion.judge_baselines,
    tables=(_SCORES, _ITEMS, _BASE_PARAMS, _MODEL_KINDS),
    scope=_MODELS_SCOPE,
    estimand=("for each baseline b, d_m = (1/|T_m|) sum_t (s_bar_{m,t,Cayley} - s_bar_{m,t,b}); the claim is that "
              "every b has E[d_m] > 0 ('consistently outperforms baselines')"),
    unit="the model (tasks and seeds averaged inside it)",
    test=("per baseline, an " + _ABOVE_TEST + "; intersection-union, p = max over the baselines; against: Cayley "
          "below at least one baseline (min-p over joint sign flips, Westfall-Young)"),
    rules=(
        Rule("baselines", fusion.PAPER_BASELINES, "book",
             "The abstract says 'consistently outperforms baselines'; the baselines of the paper's Table 1 are the "
             "last layer, the best single layer and DWAtt (the paper's table; the book reads 'baselines' as those). "
             "LoRA, which the paper also compares (13 of 15 classification configurations), fine-tunes the LLM and "
             "is not run by the book. Alternatives: every baseline the chapter runs, or the two strongest of Table 1.",
             alternatives=(("last", "best", "mean", "elmo", "mlp", "deepset", "dwatt"), ("best", "dwatt")),
             label="the baselines"),
        _params_rule(),
        _kinds_rule(),
        _alpha("the intersection-union of the sign-flip tests, p = max over the baselines " + _ABOVE_ALPHA),
    ),
    null=fusion.BASELINES_NULL,
)

# --- ilse.gain ----------------------------------------------------------------------------------------

GAIN = Specification(
    claim=CLAIMS['ilse.gain'],
    judge=fusion.judge_gain,
    tables=(
        Table("items", "one row per (model, classification task, method, seed, test item): columns model, task, "
                       "method, seed, item, correct (0/1), as lrd.aggregation.scores.item_outcomes returns them; "
                       "every method run with the same seeds and, within a task, the same test items"),
        _BASE_PARAMS,
        _MODEL_KINDS,
    ),
    scope=("'achieving improvements of up to 40 percentage points in accuracy' (abstract v3; v1: 'up to 44% "
           "improvements in accuracy') is stated over the paper's own results, its 13 tasks on its 9 LLMs: the "
           "largest gain it observed, a maximum over its own cells. The paper states no other scope for this number. "
           "Our digest's Table 1 (3 models x 5 classification tasks) holds its largest cells (computed in the "
           "verdict from lrd.verdicts.claims.ILSE_TABLE_ROWS). " + _MODELS_SCOPE),
    estimand=("none tested: a maximum over the paper's own cells is not a property that another panel can "
              "reproduce or contradict (a panel whose largest gain is 13 points is consistent with 'up to 40'). "
              "Described: the paper's Table 1 largest gain of the Cayley-Encoder over the reference per model, and "
              "the panel's largest cell gain g_max = max_c g_c (g_c the mean over seeds and test items of the "
              "difference in correctness, in points) with a 95% simultaneous bootstrap interval"),
    unit="none (no test); the panel's interval resamples test items and seeds within cells (pigeonhole bootstrap)",
    test="none: 'not testable' by construction, on any panel; the panel's gains are shown as a description",
    rules=(
        Rule("method", "cayley", "paper",
             "'Cayley-Encoder consistently outperforms baselines, achieving improvements of up to 40 percentage "
             "points in accuracy' (abstract v3): the gain is the Cayley-Encoder's."),
        Rule("reference", "last", "book",
             "The abstract does not say over which baseline the 40 points are; the book reads it as the last layer, "
             "the usual practice the paper sets out to improve and where Table 1's largest gains are (our reading "
             "of the digest's table). Alternative: the best single layer. It changes only the descriptions.",
             alternatives=("best",), label="the gain's reference"),
        Rule("paper_pp", ILSE_MAX_GAIN_PP, "paper",
             "'improvements of up to 40 percentage points in accuracy' (abstract v3).",
             label="the paper's gain, points"),
        Rule("n_boot", 2000, "book",
             "Bootstrap replicates of the panel's descriptive interval; a Monte Carlo setting, the chapter's "
             "parameter n_boot (the null model's simulations fix 200).",
             alternatives=(4000,), label="bootstrap replicates"),
        Rule("seed", 0, "book", "The bootstrap's random seed; a convention (the null model's simulations draw one).",
             alternatives=(1, 2), label="bootstrap seed"),
        _params_rule(),
        _kinds_rule(),
        # no level rule 'alpha': the verdict is 'not testable' on every panel, no p-value to compare with a level
    ),
    null=fusion.GAIN_NULL,
)

# --- ilse.parameters ----------------------------------------------------------------------------------

PARAMETERS = Specification(
    claim=CLAIMS['ilse.parameters'],
    judge=fusion.judge_parameters,
    tables=(
        Table("shares", "one row per model of the panel: columns model, params (trainable parameters of the "
                        "Cayley-Encoder and its head), base_params (the base model's), share (params / "
                        "base_params), as lrd.aggregation.scores.parameter_share returns them"),
        Table("reference", "the same columns for the paper's own models (fusion.paper_model_shares: the same "
                           "arithmetic at their quoted sizes, lrd.verdicts.claims.ILSE_PAPER_MODELS, with 77 "
                           "classes), plus projection_share; optional, counted within params_range",
              required=False),
        _MODEL_KINDS,
    ),
    scope=("'while introducing at most 0.1% additional parameters relative to the LLM size' (abstract v3; v1: "
           "'relative to the base LLM size'), for the paper's models: " + _MODELS_SCOPE),
    estimand="share = trainable parameters of the encoder and head / parameters of the base model, per model",
    unit="the model (its hidden size and state count fix the share)",
    test=("checked (arithmetic): every counted row, the paper's own models within params_range (their quoted sizes, "
          "the encoder's configuration our reconstruction from ilge 0.1.0's recommended_config) and the panel's "
          "models the claim counts, has share <= paper_share; a row above it makes the verdict 'contradicted'"),
    rules=(
        Rule("paper_share", ILSE_MAX_PARAM_SHARE, "paper",
             "'at most 0.1% additional parameters relative to the LLM size' (abstract v3).",
             label="the paper's share"),
        _params_rule(),
        _kinds_rule(),
    ),
    null=None,
)

# --- ilse.few_shot ------------------------------------------------------------------------------------

FEW_SHOT = Specification(
    claim=CLAIMS['ilse.few_shot'],
    judge=fusion.judge_few_shot,
    tables=(
        Table("few_shot", "one row per (model, few-shot task, shots, method, seed): columns model, task, shots "
                          "(examples per class), method, seed, score (accuracy, 0-1)"),
        Table("scores", "the full-data scores holding the references: one row per (model, task, method, seed), "
                        "columns model, task, method, seed, score"),
        Table("few_shot_items", "per-item correctness of the few-shot runs: columns model, task, shots, method, "
                                "seed, item, correct; optional: with items, the per-model evidence beside the "
                                "verdict", required=False),
        _ITEMS,
        _BASE_PARAMS,
        _MODEL_KINDS,
    ),
    scope=("'on Banking77 and MTOP, the Cayley-Encoder needs only 8-32 labelled examples per class for its "
           "accuracy to exceed the DWAtt and Last Layer baselines trained on the full data' (Key findings; our "
           "translation of the digest); the models are the paper's: " + _MODELS_SCOPE + " The book's tasks are "
           "its own few-shot tasks, not Banking77 and MTOP."),
    estimand=("for every reference r and shot count k in shots, d_m = (1/|T_m|) sum_t (s_bar^{(k)}_{m,t,Cayley} - "
              "s_bar_{m,t,r}): model m's mean over the few-shot tasks of Cayley's seed-mean score at k examples per "
              "class minus r's on the full data; the claim is that every (r, k) has E[d_m] > 0"),
    unit="the model (tasks and seeds averaged inside it)",
    test=("per (reference, shot count), an " + _ABOVE_TEST + "; intersection-union, p = max over the references and "
          "shot counts; against: below at least one (min-p over joint sign flips)"),
    rules=(
        Rule("method", "cayley", "paper",
             "'the Cayley-Encoder needs only 8-32 labelled examples per class' (Key findings; our translation of "
             "the digest)."),
        Rule("references", fusion.FEW_SHOT_REFERENCES, "paper",
             "'to exceed the DWAtt and Last Layer baselines trained on the full data' (Key findings; our "
             "translation of the digest)."),
        Rule("shots", (8, 32), "book",
             "The numbers are the paper's ('8-32 labelled examples per class', Key findings; our translation of the "
             "digest); reading them as 'at every shot count from 8 to 32 (inclusive)' is the book's, the strictest "
             "reading. 'Needs only 8-32' may also mean that, depending on the task, some count up to 32 suffices.",
             alternatives=((32, 32), (16, 32)), label="shot counts that must beat the references"),
        _params_rule(),
        _kinds_rule(),
        _alpha("the intersection-union of the sign-flip tests, p = max over the references and shot counts "
               + _ABOVE_ALPHA),
    ),
    null=fusion.FEW_SHOT_NULL,
)

# --- ilse.mapping -------------------------------------------------------------------------------------

MAPPING = Specification(
    claim=CLAIMS['ilse.mapping'],
    judge=fusion.judge_mapping,
    tables=(
        Table("ablation", "one row per (variant, seed) of the ablation model and task: columns variant, seed, score "
                          "(0-1); the random mappings are the variants whose name starts with prefix, and the seeds "
                          "that trained every mapping form the mapping x seed grid"),
        Table("mappings", "every model's grid: one row per (model, variant, seed), columns model, variant, seed, "
                          "score; optional: the per-model evidence beside the verdict (Holm over the models whose "
                          "encoder learns the task)", required=False),
        Table("chance", "a number, not a table: the majority class's accuracy on the task's test items "
                        "(fusion.majority_accuracy); optional: with it a grid whose mean score is not above_chance_pp "
                        "points above it is out of scope", required=False),
        Table("model", "a name, not a table: the ablation model (needed with base_params or model_kinds)",
              required=False),
        _BASE_PARAMS,
        _MODEL_KINDS,
    ),
    scope=("'over 10 random layer-node mappings at fixed hyper-parameters, every standard deviation stays within "
           "1.5%, so the gain comes from the graph's expansion and connectivity, not from particular adjacencies "
           "of layers' (Key findings; our translation of the digest): the models and tasks of this ablation are not "
           "named in the digest ('every standard deviation' implies several settings). " + _MODELS_SCOPE + " The "
           "book's additions are its rules: one model and task per ablation (the chapter's ablation_model), and "
           "that the encoder must learn the task (above_chance_pp); the paper states neither."),
    estimand=("sigma_a, the standard deviation of the mapping's own component a_i in the two-way random model "
              "y_is = mu + a_i + b_s + e_is of a (mappings x seeds) grid of scores in points "
              "(fusion.mapping_components); the claim is sigma_a < c, c = paper_std_pp"),
    unit="the trained run (a mapping and a seed) of one model and task; the mapping is the random factor tested",
    test=("chi-square bound of the mapping means, p = F_{chi2_{m-1}}((m-1) MS_a / (n c^2)) (exact at no seed noise, "
          "conservative with it: the seed noise counts against the claim); against: sigma_a > c beyond the seed "
          "noise, the generalized p-value of the pivot R = ((m-1)MS_a/U_a - df_e MS_e/U_e)/n, P(R <= c^2) (Tsui and "
          "Weerahandi 1989; needs 2+ seeds)"),
    rules=(
        Rule("paper_std_pp", ILSE_MAPPING_STD_PP, "paper",
             "'every standard deviation stays within 1.5%' over 10 random layer-node mappings (Key findings; our "
             "translation of the digest). The number is the paper's; reading '1.5%' as 1.5 accuracy points, and "
             "applying it to the mapping's own variance component sigma_a rather than to the raw standard deviation "
             "over mappings the paper reports (whose seeds and settings the digest does not give), is the book's "
             "(the estimand).", label="the paper's bound, points"),
        Rule("prefix", "random mapping", "book",
             "The name the chapter's unit gives the random-mapping variants (lrd.units.cayley_aggregation: "
             "'random mapping 0', ...); it selects rows and is not a statistical choice. The other variants of the "
             "ablation (identity mapping, positional encoding, doubled edges) are not random mappings.",
             alternatives=("random",), label="variants that are random mappings"),
        Rule("seed", 0, "book",
             "The seed of the generalized pivot's draws (p_against and the interval only); a convention.",
             alternatives=(1, 2), label="pivot draws' seed"),
        Rule("n_draws", 20000, "book",
             "Draws of the generalized pivot behind p_against and the interval; a Monte Carlo setting (the null "
             "model's simulations fix 4000, to keep the appendix fast).",
             alternatives=(40000,), label="pivot draws"),
        Rule("above_chance_pp", None, "book",
             "None: the paper's 1.5 points (paper_std_pp). An encoder that predicts one class for every mapping has "
             "no spread to show, so the book requires the grid's mean score to be that many points above the "
             "majority class ('learns the task', our reconstruction; the paper states no such scope).",
             alternatives=(0.0, 5.0), label="points above the majority class to learn the task"),
        _params_rule(),
        _kinds_rule(),
        _alpha("the chi-square bound of the mapping means (reproduced when p <= alpha; contradicted when the "
               "generalized p-value of sigma_a > c gives p_against <= alpha) and of the per-model count beside it "
               "(a model shown when its Holm-adjusted p <= alpha); the 95% interval of sigma_a does not depend on it"),
    ),
    null=fusion.MAPPING_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (FC, CAYLEY_PERFORMANCE, CAYLEY_EFFICIENCY, BASELINES, GAIN, PARAMETERS, FEW_SHOT, MAPPING,)
