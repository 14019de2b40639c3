"""The claims of Skean et al., ICML 2025 (Layer by Layer), as the book judges them: one :class:`~lrd.verdicts.spec.Specification` each.

Each specification is read top to bottom: the paper's words (its claim), the scope the paper states,
the book's operationalisation, and every rule the judge uses, the paper's or the book's.

Where the paper is cited, the text is that of the two digests in ``shared/papers/``: ``001`` (a
summary, with the paper's English abstract) and ``002`` (a longer report, in Chinese). Quotes from
``002`` are our translation of the digest, marked so; its sections are numbered as the digest numbers
them (Sec. 2 "research process and methods", Sec. 3 "main results").
"""

from __future__ import annotations

from lrd.verdicts import layer_choice
from lrd.verdicts.claims import CLAIMS, SKEAN_GAIN_RANGE, SKEAN_LLM_SCOPE, Scope
from lrd.verdicts.spec import Rule, Specification, Table, level_rule

__all__ = ["SPECIFICATIONS"]

_T = "(our translation of the digest)"

#: The paper's Fig. 1 sentence, which gives both the band and the range (report digest 002).
_FIG1 = ("report digest 002, Sec. 2, key experimental step 1 (Fig. 1): \"intermediate layers (e.g. Pythia-410m's "
         f"layers at 40%-60% depth) perform on average 2%-16% better than the final layer\" {_T}")
#: The paper's DiME sentence (report digest 002).
_DIME = ("report digest 002, Sec. 3.1: \"Pythia's intermediate layer scores 3% above the final layer on the MTEB "
         f"average (chosen by the DiME metric)\" {_T}")

#: The tidy per-layer score rows every mid-layer judge reads (lrd.units.mid_layer_model).
_SCORES = ("one row per (model, task, measurement, layer); columns model, task, measurement, layer, depth (l/L), "
           "value and kind ('encoder' or 'decoder', one per model). Measurements: 'score' (the layer's score on every "
           "evaluation row, in the task's own unit on [0, 1]), 'score half 1' and 'score half 2' (the two cross-fitted "
           "halves of the rows, each scored with fits of its own), and for decoders with a final norm "
           f"'{layer_choice.FINAL_NORM_SCORE}' and its two halves (every layer passed through the final norm)")

#: The relative-or-points rule, shared by the gain and the choice.
_RELATIVE_REASON = ("the book's reading: the paper's percentages ('2%-16%', '3%') do not say whether they are relative "
                    "to the last layer's score or points of the MTEB average; the book reads them as relative gains "
                    "of each model's task-mean score, g = (chosen - last) / |last|. In points (False) the same "
                    "threshold is read as score points (of 1); relative gains divide each model's gain by its last layer's level, "
                    "so a model whose last layer scores low weighs more in the mean")

#: The paper's models, quoted (report digest 002): the scope every Skean claim starts from.
_PAPER_MODELS = ("the models are \"Transformers (Pythia, LLaMA3), SSMs (Mamba), BERT and bidirectional-attention "
                 "models (LLM2vec), from the ten-million to the billion parameter scale\" (report digest 002, Sec. 2.1 "
                 f"{_T})")

#: The alternative to the book's rule on contrastive sentence embedders (:func:`embedder_rule`): every
#: model of the panel counted.
EVERY_MODEL = Scope("every model of the panel counted, contrastive sentence embedders included (the alternative "
                    "to the book's rule)")


def _alpha(judged: str) -> Rule:
    """The test's level, a rule of every test of this paper: ``judged`` says what it decides in the judge."""
    return level_rule(f"the level of {judged}: the paper states no test and no level (the digests 001 and 002 give "
                      "averages and curves, no p-value); 0.05 is the convention every verdict of the book uses")


#: Where the paper states the mid-layer advantage across architectures (report digest 002).
_ACROSS = ("report digest 002, Sec. 3.1: \"in every architecture tested, intermediate layers beat the final layer "
           "on at least some tasks (Fig. 1)\" and research highlight 1: \"consistency across architectures: the "
           f"mid-layer advantage is verified in Transformers, SSMs and vision models\" {_T}")


def embedder_rule(what: str, *, across_architectures: bool) -> Rule:
    """The book's one rule on the panel's contrastive sentence embedders in the three Skean claims
    that compare a model's layers, as the rule ``scope`` of their judges (None: the claim's own
    :class:`~lrd.verdicts.claims.Scope`).

    The criterion is the paper's statement of each claim. Where the paper states it across
    architectures (``across_architectures``: skean.gain, :data:`_ACROSS`), every model counts, the
    embedders included, as the paper's own models include a contrastively trained bidirectional
    one (LLM2vec), and the alternative, :data:`lrd.verdicts.claims.SKEAN_LLM_SCOPE`, counts the
    language models only. Where the paper states it for autoregressive models (skean.metrics_track:
    the entropy valley of autoregressive models, report digest 002 Sec. 3.2; skean.choice: Pythia's
    number, Sec. 3.1), the language models count and the alternative, :data:`EVERY_MODEL`, adds the
    embedders. Either way the embedders' last layer is trained contrastively as the embedding, the
    use on which the claims compare the layers: ``what`` says what that would do in the claim.
    skean.valley does not use the rule (its claim contrasts autoregressive with bidirectional
    models; its specification says why)."""
    criterion = ("The book's rule, one for the three Skean claims that compare a model's layers: the embedders "
                 "count where the paper states the claim across architectures, and not where it states it for "
                 "autoregressive models")
    if across_architectures:
        return Rule("scope", None, "book",
                    f"{criterion}. This claim is stated across architectures ({_ACROSS}; {_PAPER_MODELS}, among "
                    "them LLM2vec, a bidirectional model trained contrastively, BehnamGhader et al., COLM 2024), so "
                    f"None means every model of the panel, its contrastive sentence embedders included. Their last "
                    f"layer is trained as the embedding, though; {what}. The alternative counts the autoregressive "
                    f"language models only ({SKEAN_LLM_SCOPE.text})",
                    alternatives=(SKEAN_LLM_SCOPE,), label="models counted (every model, embedders included)")
    return Rule("scope", None, "book",
                f"{criterion}. This claim is stated for autoregressive models, so None means the claim's scope "
                f"({SKEAN_LLM_SCOPE.text}); {what}. The alternative counts every model, the contrastive sentence "
                f"embedders included, as the paper's models include LLM2vec ({_PAPER_MODELS})",
                alternatives=(EVERY_MODEL,), label="models counted (language models only)")


GAIN = Specification(
    claim=CLAIMS['skean.gain'],
    judge=layer_choice.judge_gain,
    tables=(
        Table("results", _SCORES + ". The judge reads 'score' (or the final-norm score where a model has it) for "
                                   "the estimator read from the paper's Fig. 1 sentence and the halves for the "
                                   "per-model tests and the cross-fitted best layer shown beside it"),
    ),
    scope=("The paper states the claim across architectures and tasks, without a size or kind restriction: "
           "\"Through extensive experiments on 32 text-embedding tasks across various architectures (transformers, "
           "state-space models) and domains (language, vision), we demonstrate that intermediate layers consistently "
           f"provide stronger features\" (abstract, digest 001); {_PAPER_MODELS}, on \"32 MTEB text-embedding tasks "
           f"(classification, clustering, reranking ...)\" (report digest 002, Sec. 2.1 {_T}). The abstract's subject "
           "is large language models ('the outputs of large language models (LLMs) typically rely on the final "
           "layers', abstract, digest 001); the digest gives the 40%-60% band and the 2%-16% range with "
           f"Pythia-410m as its example (Fig. 1), and states the advantage across architectures ({_ACROSS}). The book "
           "counts every model of its panel, its contrastive sentence embedders included (the book's rule 'scope', "
           "one rule for the Skean claims that compare a model's layers: the embedders count where the paper states "
           "the claim across architectures; its alternative counts the autoregressive language models only, the "
           "abstract's subject). The abstract's 'often improving' is read as the mean gain over models (the book's "
           "reading, the rule 'often')"),
    estimand=(r"the mean over the models in the claim's scope of g_m = (b_m - l_m) / |l_m|, with b_m the task-mean score of model m's layers "
              r"at depth l/L in the band (their mean; the nearest intermediate layer where none falls in it) and "
              r"l_m its last layer's task-mean score, both through the final norm where the model has one (the "
              r"book's estimator read from the paper's Fig. 1 sentence, layer_choice.paper_gain); with "
              r"relative=False, g_m = b_m - l_m in score points; with estimator='cross-fitted best', b_m the "
              r"best intermediate layer chosen on one half of each task's rows and scored on the other; with "
              r"often='share', the mean over models of the share of a model's tasks whose b beats its last layer"),
    unit=("the model: each model's tasks share its layers and are averaged first (for the per-model evidence, a "
          "model's (task, half) replicates, disjoint in rows and fits)"),
    test=("exact one-sided sign-flip test over the models in the claim's scope of mean g > 0 (null: each g_m "
          "symmetric about 0, as when band and last layer are equally good; p >= 2^-n). Against: sign-flip "
          "non-superiority test of mean g < paper_low. Effect: mean g with its t-interval; power at g_m = paper_low "
          "with the observed spread. With often='share': the sign-flip tests of mean share above and below 1/2"),
    rules=(
        Rule("paper_low", SKEAN_GAIN_RANGE[0], "paper",
             f"{_FIG1}: the range's lower end, 2%. The digest does not say over what the range runs (models, tasks "
             "or layers) nor whether it is relative or in points (the rule relative); using it as the bound of the "
             "mean gain over the book's models, in the 'against' test (non-superiority) and for the power, is the "
             "book's use of the paper's number",
             label="paper's lower end of the gain"),
        Rule("band", layer_choice.PAPER_BAND, "book",
             f"{_FIG1}: the paper gives the 40%-60% band as Pythia-410m's example ('e.g.'), not as the band of "
             "every model; applying it at every model's depth l/L is the book's choice. Other models' better "
             "layers may lie elsewhere in the middle of the stack, so wider middle bands are the alternatives",
             alternatives=((0.3, 0.7), (0.25, 0.75)),
             label="depth band of the intermediate layers"),
        Rule("relative", True, "book", _RELATIVE_REASON, alternatives=(False,),
             label="gain relative to the last layer (else in points)"),
        embedder_rule("in this claim it may make the last layer look better than in a model whose last layer was "
                      "not fitted as the embedding, and the abstract's subject is LLMs' final layers", across_architectures=True),
        Rule("estimator", "band", "book",
             f"{_FIG1}: the paper's estimator reads the band's layers, none chosen by its score. The alternative is "
             "the claim's words taken as 'some intermediate layer beats the last': the best intermediate layer, "
             "cross-fitted (chosen on one half of each task's rows, scored on the other, and swapped; "
             "layer_choice.cross_fitted_gain, the halves as the model returns them). Its sign-flip null is exact only "
             "when the halves share no fit; the chapter's halves do not (lrd.methods.crossfit), the appendix's "
             "simulated design shares them (the least favourable case), where it is biased upward",
             alternatives=(), label="layers read as 'intermediate' (the band; the cross-fitted best is available as "
                                    "estimator='cross-fitted best' but not tried as an alternative: under a null "
                                    "with layer-to-layer roughness the best of the intermediate layers beats the "
                                    "last almost always, so it is uncalibrated)"),
        Rule("often", "mean", "book",
             "the abstract says intermediate layers 'often' improve performance (abstract, digest 001) and the "
             f"digest gives an average ({_FIG1}); the book reads 'often' as the mean gain over models against 0, "
             "with the paper's lower end as the bound of the test against it. The alternative reads it as a share: "
             "per model, the share of its tasks where the chosen layers beat the last, tested against one half "
             "(more often than not) over models, with no paper number and so no power",
             alternatives=("share",), label="reading of 'often' (mean gain, or share of tasks gaining)"),
        _alpha("the sign-flip test over models (reproduced when p <= alpha; contradicted when the test against, "
               "non-superiority to paper_low, gives p_against <= alpha), of the power at paper_low and of the "
               "per-model count (a model's band shown when its Holm-adjusted p <= alpha)"),
    ),
    null=layer_choice.GAIN_NULL,
)

VALLEY = Specification(
    claim=CLAIMS['skean.valley'],
    judge=layer_choice.judge_valley,
    tables=(
        Table("results", "one row per (model, layer) of each model's mean curve of the measurement (normalised "
                         "prompt entropy, on [0, 1]); columns model, kind ('encoder' or 'decoder'), task, "
                         "measurement, layer, depth (l/L), value. Curves of several tasks are averaged per model"),
        Table("prompts", "one row per (model, prompt, layer): each prompt's own entropy curve "
                         "(lrd.methods.crossfit.prompt_entropy_rows); columns model, kind, task, prompt, layer, "
                         "depth, value. Optional: with it, 'encoders do not' is an equivalence test per encoder over "
                         "its prompts and the decoders' valleys are shown per model; without it, over encoders",
              required=False),
    ),
    scope=(f"Report digest 002, Sec. 2, key experimental step 2 {_T}: \"autoregressive models (e.g. Pythia) show a "
           "marked 'compression valley' (mid-layer compression valley): the entropy drops sharply in the middle "
           "layers (Fig. 2a). Bidirectional models (e.g. BERT): the entropy is flat, no marked compression.\" The "
           "paper states no model size. The book maps 'autoregressive' to its decoders and 'bidirectional' to its "
           "encoders (sentence embedders fine-tuned from bidirectional encoders, not BERT's masked LM itself); "
           "the paper's SSMs (Mamba, 'more uniform') have no counterpart in the panel. The book's rule on contrastive "
           "sentence embedders (the rule 'scope' of skean.gain, skean.metrics_track and skean.choice) is not applied "
           "here, a decision with its reason: the panel's encoders are all contrastive sentence embedders, and they "
           "are this claim's comparison group (the paper's 'bidirectional models'), so leaving them out would leave "
           "no claim to test; and the rule's reason, a last layer trained as the embedding, bears on which layer "
           "scores best, not on whether the entropy curve is flat. A referee may still read their contrastive "
           "training as a reason their curve is flatter than BERT's: the panel has no masked LM to check it"),
    estimand=(r"per model the mid-band contrast v_m of its normalised prompt-entropy curve (valley_contrast: the "
              r"line through the blocks below and above the band, at the band's mean depth, minus the band's mean; "
              r"the embeddings left out); the decoders' mean v minus the encoders' mean v"),
    unit="the model (the relabelling and sign-flip tests); a model's prompts, for the per-encoder equivalence test "
         "and the per-decoder evidence (the model's own curve is the estimand)",
    test=("intersection-union of three one-sided tests, p = the largest: decoders' mean v above encoders' "
          "(relabelling the kinds over models, p >= 1/C(n, k)); decoders' v above 0 (sign flips over decoders, p >= "
          "2^-n_dec); every encoder's v within +-margin (equivalence sign-flip test over its prompts, p = the largest "
          "over encoders; without prompts, over encoders). Against: the encoders' mean v above the decoders' "
          "(relabelling, other tail)"),
    rules=(
        Rule("measurement", "prompt entropy", "book",
             "the digest says the valley is of the entropy (\u201c\u71b5\u503c\u201d, Fig. 2a) without naming which "
             "of the paper's matrix entropies; the book reads prompt entropy (over a prompt's tokens), the one "
             "whose curve per prompt the prompts table holds. No alternative is listed because none runs on the "
             "judge's tables as they stand: dataset entropy is measured per task, not per prompt, and would need "
             "its own per-model evidence",
             label="entropy whose valley is measured"),
        Rule("band", layer_choice.VALLEY_BAND, "book",
             "our reconstruction of Fig. 2a's 'mid-depth': the paper shows the curves without a band or a scalar "
             "depth; [0.25, 0.75] is the middle half of the blocks, leaving a quarter on each side for the line",
             alternatives=((0.3, 0.7), (0.2, 0.8), (1 / 3, 2 / 3)),
             label="mid-depth band of the valley"),
        Rule("margin", layer_choice.VALLEY_MARGIN, "book",
             "the paper shows BERT's curve as flat (Fig. 2a) without a tolerance; the book calls a mid-band "
             "contrast within +-0.05 of the normalised entropy (on [0, 1]) flat, a convention (also the valley "
             "depth at which the power is computed)",
             alternatives=(0.025, 0.1),
             label="equivalence margin of 'flat'"),
        _alpha("the intersection-union test (reproduced when its largest p <= alpha; contradicted when the "
               "relabelling test of the encoders' valley deeper gives p_against <= alpha), of the power at a valley "
               "of margin and of the per-decoder count (Holm-adjusted p <= alpha)"),
    ),
    null=layer_choice.VALLEY_NULL,
)

METRICS_TRACK = Specification(
    claim=CLAIMS['skean.metrics_track'],
    judge=layer_choice.judge_metrics_track,
    tables=(
        Table("results", _SCORES + "; plus one row per (model, task it was measured on, layer) of each label-free "
                                   "metric, measurement = the metric's name ('prompt entropy', 'DiME', and the "
                                   "others of layer_choice.METRICS, shown, not tested). The judge reads the two "
                                   "halves (their mean is the score) and the tested metrics"),
    ),
    scope=("The paper proposes the metrics as a framework without a stated model scope: \"we propose a unified "
           "framework of representation quality metrics based on information theory, geometry, and invariance to "
           "input perturbations\" (abstract, digest 001). The relation between a metric and the layers' "
           "performance, with its direction, is stated for autoregressive models: \"the mid-layer entropy valley "
           "of autoregressive models (Fig. 2a) goes with their high downstream performance\" (report digest 002, "
           f"Sec. 3.2 {_T}); DiME picks Pythia's better layer (Sec. 3.1). The book counts the autoregressive "
           "language models of its panel, for which the paper states the relation and the signs the test reads, "
           "and shows its contrastive sentence embedders without counting them (the book's rule 'scope'): an "
           "embedder's scores across layers are shaped by its contrastively trained last layer. Its alternative "
           f"counts every model, since the framework is proposed without a model scope. {_PAPER_MODELS}"),
    estimand=(r"per model m in the claim's scope and tested metric k, r_mk = s_k * (mean over tasks of the Spearman correlation across "
              r"layers between the metric and the score), s_k the paper's sign (directions); reported: the "
              r"smallest-p metric's mean r over models"),
    unit="the model (its tasks averaged first; the same sign flip applies to all of a model's metrics)",
    test=("min-p sign-flip test over models (Westfall-Young, single step): each metric's one-sided sign-flip p of "
          "mean r_k > 0, the smallest adjusted over the same flips; null: each model's correlations as likely "
          "reversed. Against: every tested metric reversed (intersection-union of one-sided sign-flip tests of "
          "-r_k, p = the largest)"),
    rules=(
        Rule("directions", None, "book",
             "None means layer_choice.PAPER_DIRECTIONS, {'prompt entropy': -1, 'DiME': +1}: the two metrics whose "
             "sign the book reads in the paper (prompt entropy low at the better layers, report digest 002 Sec. 3.2 "
             "and Fig. 2a; DiME picks the better layer, Sec. 3.1). The digests give no sign for effective rank, "
             "curvature, InfoNCE, LiDAR or dataset entropy, so they are shown, not tested; choosing which metrics "
             "form the family, and reading DiME's sign from its use to choose a layer, is the book's",
             alternatives=({"prompt entropy": -1}, {"DiME": +1}),
             label="tested metrics and their signs"),
        embedder_rule("in this claim their scores across layers, shaped by that training, are what the metrics are "
                      "asked to track, and the paper states the relation and its signs for autoregressive models "
                      f"(report digest 002, Sec. 3.2 {_T})", across_architectures=False),
        _alpha("the min-p sign-flip test over models (reproduced when p <= alpha; contradicted when every tested "
               "metric's reversed test gives p <= alpha, p_against their largest)"),
    ),
    null=layer_choice.METRICS_TRACK_NULL,
)

CHOICE = Specification(
    claim=CLAIMS['skean.choice'],
    judge=layer_choice.judge_choice,
    tables=(
        Table("results", _SCORES + "; plus one row per (model, task it was measured on, layer) of the choosing "
                                   "metric (measurement 'DiME', on the augmented prompts). The judge reads the two "
                                   "halves (their mean scores both layers) and the metric"),
    ),
    scope=(f"{_DIME}: one model family, Pythia, an autoregressive language model, on the MTEB average; the paper "
           "states it for no other model. The book tests it on its autoregressive language models and shows its "
           "contrastive sentence embedders, whose last layer is trained contrastively as the embedding, without "
           "counting them (the book's rule 'scope', as in skean.metrics_track; skean.gain, stated across "
           "architectures, counts every model); extending "
           "Pythia's number to every decoder is the book's reading"),
    estimand=(r"the mean over in-scope models of g_m = (c_m - l_m) / |l_m|, with c_m the task-mean score of the "
              r"intermediate layer (0 < l < L) of highest mean DiME and l_m the last layer's, both on the mean of "
              r"the two halves; with relative=False, g_m = c_m - l_m in score points"),
    unit=("the model (its tasks averaged first); for the per-model evidence, its (task, half) replicates, "
          "disjoint in rows and fits"),
    test=("exact one-sided sign-flip test over in-scope models of mean g > 0 (p >= 2^-n). Against: the same test of "
          "-g (the chosen layer below the last). Effect: mean g with its t-interval; power at g_m = "
          "paper_choice_gain with the observed spread"),
    rules=(
        Rule("metric", "DiME", "paper", f"{_DIME}: the layer is chosen by DiME", label="choosing metric"),
        Rule("higher_is_better", True, "book",
             "the digest does not say whether the paper picks DiME's highest or lowest layer; DiME scores "
             "invariance to input perturbations (report digest 002, Sec. 2.1), and the book picks the layer where "
             "it is highest, reading more invariance as better (the book's reading, not a quote). The other "
             "direction is the only alternative",
             alternatives=(False,), label="choose the layer of highest metric"),
        Rule("paper_choice_gain", layer_choice.PAPER_CHOICE_GAIN, "book",
             f"{_DIME}: 3%, Pythia's number. Taking it as the effect of every in-scope model, at which the power is "
             "computed, is the book's extension of one model's number to all; it moves the power only (the "
             "outcome does not depend on it). Half and double are the alternatives",
             alternatives=(0.015, 0.06),
             label="gain of the chosen layer assumed for the power (the paper's, for Pythia)"),
        Rule("relative", True, "book", _RELATIVE_REASON, alternatives=(False,),
             label="gain relative to the last layer (else in points)"),
        embedder_rule("in this claim the paper states its number for Pythia only (report digest 002, Sec. "
                      "3.1), and the book extends it to autoregressive language models", across_architectures=False),
        _alpha("the sign-flip test over models (reproduced when p <= alpha; contradicted when the test of the chosen "
               "layer below the last gives p_against <= alpha), of the power at paper_choice_gain and of the "
               "per-model count (Holm-adjusted p <= alpha)"),
    ),
    null=layer_choice.CHOICE_NULL,
)

#: This paper's specifications, in the order of its claims.
SPECIFICATIONS = (GAIN, VALLEY, METRICS_TRACK, CHOICE,)
