# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Mid-layer superiority: every layer scored, and the metrics that predict it
#
# {cite:t}`skean2025layer` evaluate the output of every layer of a language model as a text
# embedding and report (abstract):
#
# > {glue:text}`mid_layer-claim_gain`
#
# They explain it with a suite of label-free representation metrics, among which a mid-depth drop
# of prompt entropy in autoregressive models, the "compression valley" (report digest, Sec. 2; the
# abstract: "{glue:text}`mid_layer-claim_valley`"), which goes with their better layers
# ("{glue:text}`mid_layer-claim_metrics_track`", report digest, our translation).
#
# This chapter scores every layer of our offline panel on {glue:text}`mid_layer-n_tasks` tasks
# from one extraction per model and task, compares the best layer with the last, measures the
# paper's metrics per layer and asks whether they track the score and pick a good layer without
# labels. Each of the four claims is judged by a stated test whose unit is the **model** (a
# model's tasks share its layers, so they are averaged before the test); a panel too small for
# a test to reach $p \le 0.05$ gets "not testable", never a verdict by count, and never
# "contradicted" either: a test against the claim decides only where the claim's own test could
# have said "reproduced".
#
# **Which models count.** One rule of the book for the three claims that compare a model's
# layers (the rule `scope` of their specifications, each with the other reading as its
# alternative): the sentence embedders count where the paper states the claim across
# architectures, and not where it states it for autoregressive models. A sentence embedder's last
# layer, trained contrastively as the embedding, is fitted to the very use on which these claims
# compare its layers, yet the paper's own models (Pythia, LLaMA3, Mamba, BERT and LLM2vec, report
# digest, Sec. 2.1, our translation) include LLM2vec, a bidirectional model trained contrastively.
# The gain is stated across architectures (report digest, Sec. 3.1 and highlight 1), so every model
# counts; the metrics' relation (stated for autoregressive models, Sec. 3.2) and the DiME choice
# (Pythia's number) count the language models only: {glue:text}`mid_layer-llm_scope`. The valley
# claim keeps the sentence embedders: they are its bidirectional group (below).
#
# **Per-layer evaluation.** {py:func}`lrd.evaluate_layers` takes the $(L+1, N, d)$ array of
# {py:func}`lrd.extract` and applies MTEB's protocol for the task type with the same scikit-learn
# estimators and samples as `mteb` 2.x (a test checks the classification path against
# `mteb.evaluate` on a local task): logistic
# regression on 8 examples per label, 10 experiments, test accuracy (classification); average
# precision of the cosine similarity (pair classification); Spearman correlation of the cosine
# similarity with the human score (STS); MiniBatchKMeans V-measure over bootstrap samples
# (clustering; MTEB draws 16 384 texts per bootstrap, we draw as many as the set has, and run
# {glue:text}`mid_layer-n_bootstrap` bootstraps where MTEB runs 10, to fit the time budget).
#
# **Two halves, cross-fitted.** Each task's evaluation units (the test rows of a classification
# task, the pairs of a pair or STS task, the rows of a clustering task) are split once into two
# fixed halves (`lrd.methods.evaluate.evaluation_halves`), and everything fitted is fitted again
# on each half's own rows (`lrd.methods.crossfit.fitting_rows`): a classification half trains its
# classifiers on its own half of the training rows, a clustering half fits its k-means on its
# own rows; pairs are scored by their cosine. A layer chosen on one half is credited with its
# score on the other, and no fit is shared by the two, so the fits' noise cannot make a choice
# pay on the other half.
#
# **Through the final norm.** The paper's code truncates the model, so every layer it scores
# has passed the final norm; Hugging Face returns only the last layer through it. Each decoder
# with a final norm is therefore also scored on every task with the norm applied to every
# layer (`"score (final norm)"`), the states the paper's estimator below reads.
#
# **Chance, measured.** The score a representation unrelated to the labels gets is measured, not
# assumed: the labels (classes, human scores, pair labels) are shuffled across the rows
# {glue:text}`mid_layer-n_permutations` times and the same evaluator is run again on the same
# states (`lrd.methods.crossfit.evaluate_layer_halves`).
#
# **Metrics** ({py:mod}`lrd.metrics`). For rows $Z$ (tokens of a prompt, or prompts of a dataset),
# centred and L2-normalised, the matrix-based entropy is
# $S_1(Z) = -\sum_i \lambda_i \log \lambda_i$ over the eigenvalues of $ZZ^\top / \operatorname{tr}(ZZ^\top)$,
# divided by $\log \min(n, d)$, computed as the paper's code does, with the matrix's negative
# entries clamped at 0 (see "The paper's code against the paper's formula" below); *prompt
# entropy* averages it over prompts' token matrices, *dataset entropy* takes it over the
# prompts' pooled vectors. *Curvature* is the mean angle between consecutive token steps
# $z_{k+1} - z_k$ (the code's: of the centred, L2-normalised tokens, the angle of $|\cos|$). *InfoNCE* ($\tau = 0.1$, reported as
# $1 - \mathcal L/\log N$), *LiDAR* (entropy of $S_w^{-1/2} S_b S_w^{-1/2}$ over
# {glue:text}`mid_layer-n_views` views, $\delta = 10^{-4}$) and *DiME* (10 permutations) compare
# embeddings of augmented views (nlpaug split, random-character and keyboard augmentations, as
# in the paper's code); the views are L2-normalised, our choice where the code feeds raw means.

# %% tags=["parameters"]
models = ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]  # offline keys, hub ids or folders
tasks = ["sst2", "sarcasm", "mmlu_subject", "lee50"]  # also: tweet_sentiment, mrpc (pair classification)
n_samples = 300  # rows per task; 300 shares SST-2 and Lee-50 states with lrd_families and all with cayley_aggregation (cache)
n_bootstrap = 3  # clustering experiments per layer (MTEB uses 10; k-means dominates the CPU time)
n_permutations = 3  # label permutations per task and layer: the measured chance (classification retrains per permutation)
pooling = "mean"
token_task = "sarcasm"  # task whose prompts feed the token-level metrics (one of tasks; same forward pass)
n_token_prompts = 300  # prompts of token_task for prompt entropy and curvature (tokens come from the task's own pass)
aug_task = "sarcasm"  # task whose prompts are augmented (InfoNCE, LiDAR, DiME); short headlines keep views cheap
n_aug_prompts = 16  # prompts augmented
n_views = 16  # views per prompt (LiDAR; InfoNCE and DiME use the first two)
norm_task = "sarcasm"  # task of the final-norm on/off comparison (decoders; one of tasks, same forward pass; "" skips it)
device = "cpu"
dtype = "bfloat16"  # what the models compute in: "float32", "bfloat16" (accelerators, CPUs with AVX512-BF16) or "float16" (accelerators); in every cache key. The precision section of the manual says what bfloat16 moves
results_dir = "results"

# %% tags=["hide-input"]
import lrd

from lrd.book.glue import save_results
from lrd.engine.kinds import grouped
from lrd.engine.models import model_kinds
from lrd.verdicts.claims import grouping_table
from lrd.units import compute
from lrd.units.mid_layer import mid_layer_tables, mid_layer_units
from lrd.verdicts.claims import SKEAN_GAIN_RANGE, SKEAN_LLM_SCOPE, claim
from lrd.verdicts.layer_choice import (chance_table, cross_fitted_gain, final_norm_comparison, in_scope_models,
                                       label_free_choice, model_correlations,
                                       model_gains, panel_note, paper_gain, per_model_band_gains, per_model_valleys,
                                       valley_depths)
from lrd.verdicts.layer_choice import VALLEY_MARGIN

# the parameters are checked (also: token_task, aug_task and norm_task among tasks) and the claims glued
glue = lrd.book.open_chapter("mid_layer", globals(), claims={"claim_{name}": "text", "paper_{name}": "paper_effect"})
glue("n_tasks", len(tasks))
glue("n_views", n_views)
glue("n_bootstrap", n_bootstrap)
glue("n_permutations", n_permutations)
task_data = {t: lrd.load_task(t, n=n_samples) for t in tasks}

units = mid_layer_units(models=models, tasks=tasks, n_samples=n_samples, n_bootstrap=n_bootstrap, pooling=pooling,
                        token_task=token_task, n_token_prompts=n_token_prompts, aug_task=aug_task,
                        n_aug_prompts=n_aug_prompts, n_views=n_views, norm_task=norm_task,
                        n_permutations=n_permutations, device=device, dtype=dtype)
tables = mid_layer_tables(models, compute(units))  # one cached unit per model (lrd.units.mid_layer.mid_layer_model)
results, kinds, sources, normed = tables.results, tables.kinds, tables.sources, tables.normed
note = panel_note(kinds, sources)  # the decoders the base-LLM claims are tested on (or: none)
glue("n_models", len(models))
model_kind = model_kinds(models)  # attention, backbone, role, tuning (lrd.engine.kinds)
glue("n_encoders", int((model_kind["attention"] == "bidirectional").sum()))
glue("n_decoders", int((model_kind["attention"] == "causal").sum()))
for name, value in lrd.book.designs.mid_layer_panel(results).items():  # the panel the appendix calibrates at
    glue(name, value)
glue("panel_note", note)
glue("llm_scope", SKEAN_LLM_SCOPE.text[0].upper() + SKEAN_LLM_SCOPE.text[1:])
glue("n_gain_models", sum(in_scope_models(results, claim("skean.gain").scope).values()))
csv_path = save_results(results, "mid_layer", results_dir)

# %% [markdown]
# **Which models each test uses.** The valley claim contrasts causal (autoregressive) models
# with bidirectional ones, the paper's grouping; the gain counts every model, each one unit; the
# metrics and the DiME choice count the causal language models and show the sentence embedders
# without counting them:

# %% tags=["hide-input"]
grouping_table(model_kind, "mid_layer")

# %% [markdown]
# ## Every layer's score
#
# One panel per task; depth is $l/L$ (0 = embeddings, 1 = last block); {glue:text}`mid_layer-pooling`
# pooling over {glue:text}`mid_layer-n_samples` rows per task.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-scores", "caption": "MTEB main score of every layer's pooled embedding against depth $l/L$, one panel per task."}}
glue("pooling", pooling)
glue("n_samples", n_samples)
lrd.book.plots.layer_curves(results, "score", col="task", col_wrap=3, ylabel="MTEB main score")

# %% [markdown]
# ## Chance, measured
#
# For each model and task: the mean score over layers and permutations with shuffled labels
# (chance), the largest such score of any layer (chance max), the best and the last layer's
# scores, and whether each lies above every permuted-label score. A label-blind partition of a
# few hundred rows into many clusters has a large V-measure: {glue:text}`mid_layer-clustering_chance`. In
# {glue:text}`mid_layer-n_no_layer_above_chance` of {glue:text}`mid_layer-n_pairs` model-task
# pairs no layer scores above every permuted-label score: there, which layer is "best" is noise.

# %% tags=["hide-input"]
chance = chance_table(results)
clustering = chance[chance["task"].map(lambda t: task_data[t].type) == "clustering"]
# two decimals: a clustering score (k-means, then V-measure) moves in the third with float noise in the states
glue("clustering_chance", f"on the clustering task the chance level ranges from {clustering['chance'].min():.2f} to "
     f"{clustering['chance'].max():.2f} (a formula would have said 0)" if len(clustering) else
     "this run has no clustering task, so that chance level is not measured here")
glue("n_no_layer_above_chance", int((~chance["best above chance"]).sum()))
glue("n_pairs", len(chance))
lrd.tables.rounded(chance.set_index(["model", "task"]), digits=2)

# %% [markdown]
# ## Best layer against the last
#
# > {glue:text}`mid_layer-claim_gain` ({cite:t}`skean2025layer`, abstract; the paper's number:
# > {glue:text}`mid_layer-paper_gain`)
#
# The paper reads its gain at the layers of 40%-60% depth (Pythia-410M, Fig. 1): **the paper's
# estimator** is the mean score of the layers at depth $l/L \in [0.4, 0.6]$ (the intermediate
# layer nearest 0.5 where none falls in it) against the last layer, both through the final norm
# where the model has one, as the paper's code scores them (`lrd.verdicts.layer_choice.paper_gain`).
# It chooses no layer by its score, so nothing needs cross-fitting. Per model (our
# reconstruction: the paper's averaging is not stated beyond its Figure 1), the gain is
# relative to the task-mean score of the last layer. The abstract's "often improving" is read
# as **the mean gain over models** (the book's reading, not the paper's words). **Test**: exact
# one-sided sign-flip test over the {glue:text}`mid_layer-n_gain_models` models of the claim's
# scope (every model, the sentence embedders included; null: each model's gain is symmetric
# about 0; the smallest attainable p is $2^{-n}$), and a sign-flip non-superiority test of "the
# mean gain is below the paper's {glue:text}`mid_layer-paper_gain_low`". The verdict also gives
# the test's **power**: the probability of "reproduced" if every counted model gained the paper's
# {glue:text}`mid_layer-paper_gain_low`, with the spread across models observed here. The
# book's readings have alternatives the judge honours, each shown in the null-calibration
# appendix's sensitivity table: the cross-fitted best intermediate layer instead of the band
# (`estimator`), "often" as the share of a model's tasks where the band beats the last, against
# one half (`often`), the gain in points (`relative`), and the language models only (`scope`).
#
# Shown beside it, not tested: the best intermediate layer, **cross-fitted** (chosen on one half
# of a task's evaluation rows, scored on the other, and swapped,
# $\tfrac12\big(s^{(2)}_{j_1} + s^{(1)}_{j_2}\big)$, against the last layer on the same
# halves), on the states as the model returns them. Choosing and crediting on the same rows
# would favour an intermediate layer even when all layers are equally good (one of the $L-1$
# intermediate ones is "best" with probability $(L-1)/(L+1)$).

# %% tags=["hide-input"]
glue("paper_gain_low", f"{SKEAN_GAIN_RANGE[0]:.0%}")
band = paper_gain(results)
lrd.tables.rounded(band.set_index(["model", "task"]))

# %% [markdown]
# Per model, the task-mean scores of the band and of the last layer, and the relative gain (the
# test's unit; `counted`: in the claim's scope, every model):

# %% tags=["hide-input"]
_ = glue.judge("skean.gain", {"results": results}, note=note, section="best-layer-against-the-last")
per_model = model_gains(band, chosen="band")
per_model["kind"] = per_model.index.map(kinds)
per_model["counted"] = per_model.index.map(in_scope_models(results, claim("skean.gain").scope))
lrd.tables.rounded(per_model)

# %% [markdown]
# The evidence of each model alone (beside the verdict, which is the test over models): the
# band minus the last layer on each of the model's (task, half) replicates, which share neither
# rows nor fits, in the task's own points; an exact sign-flip test per model, Holm-adjusted over
# the models.

# %% tags=["hide-input"]
lrd.tables.rounded(per_model_band_gains(results).drop(columns="p min"), digits=3)

# %% [markdown]
# The cross-fitted best intermediate layer (shown, not tested), per model and task:

# %% tags=["hide-input"]
gains = cross_fitted_gain(results)
lrd.tables.rounded(gains.set_index(["model", "task"]))

# %% [markdown]
# **Verdict**: {glue:text}`mid_layer-verdict_gain`. The panel against the paper's:
# {glue:text}`mid_layer-panel_note`.
#
# ## Entropy across depth: is there a compression valley?
#
# > {glue:text}`mid_layer-claim_valley` ({cite:t}`skean2025layer`, abstract; the paper's
# > figure: {glue:text}`mid_layer-paper_valley`)
#
# Prompt entropy ({glue:text}`mid_layer-n_token_prompts` prompts of {glue:text}`mid_layer-token_task`)
# and dataset entropy (every task) per layer. A valley is a middle lying below its sides: the
# **mid-band contrast** $v$ is how far the mean entropy of the blocks at depth 0.25-0.75 lies
# below the straight line through the blocks on either side (the embeddings left out), our
# reconstruction (the paper shows the curves without a scalar). It is 0 in expectation when the
# layers are exchangeable and on a straight line, and a dip at block 1 makes it negative, so
# neither noise nor an early drop counts as a valley. The paper contrasts autoregressive models
# with bidirectional ones (BERT), so here "decoders" are the causal models and "encoders" the
# bidirectional ones, a bidirectional decoder-based embedder among them (the table above). The
# book's rule that leaves the contrastive sentence embedders out of the other claims is not
# applied here: they are this panel's only bidirectional models, and the rule's reason (a last
# layer trained as the embedding) bears on which layer scores best, not on whether the entropy
# curve is flat. They are sentence embedders, not BERT's masked LM: their flatness may owe
# something to their training, which this panel cannot check.
# **Test**: three one-sided tests must all hold (the largest p-value counts): the decoders' mean
# valley is deeper than the encoders' (relabelling the kinds among the models:
# $p \ge 1/\binom{n}{k}$), the decoders' valleys lie above 0 (sign flips over decoders:
# $p \ge 2^{-n_{dec}}$), and "encoders do not": each encoder's valley lies within
# $\pm$ {glue:text}`mid_layer-valley_margin` (an equivalence test over its prompts, our margin).
# With {glue:text}`mid_layer-n_encoders` bidirectional and {glue:text}`mid_layer-n_decoders`
# causal models the smallest attainable p is {glue:text}`mid_layer-valley_p_min`. Beside the
# verdict, the evidence per model: each model's valley over its prompts (the prompts are the
# unit), with the decoders' p-values Holm-adjusted over the decoders and the encoders' flatness
# over the encoders.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-prompt-entropy", "caption": "Normalised prompt entropy (mean matrix-based entropy of each prompt's token matrix) against depth $l/L$."}}
glue("n_token_prompts", min(n_token_prompts, len(task_data[token_task].texts)))
glue("token_task", token_task)
lrd.book.plots.layer_curves(results[results["task"] == token_task], "prompt entropy", col=None,
                       ylabel="prompt entropy (normalised)")

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-dataset-entropy", "caption": "Normalised dataset entropy (matrix-based entropy of the pooled prompts) against depth $l/L$, one panel per task."}}
lrd.book.plots.layer_curves(results, "dataset entropy", col="task", col_wrap=3, ylabel="dataset entropy (normalised)")

# %% tags=["hide-input"]
by_attention = grouped(results[results["task"] == token_task], model_kind, "attention")  # Layer by Layer's grouping
prompt_curves = grouped(tables.prompts, model_kind, "attention")  # each prompt's curve: the per-model unit
valley = glue.judge("skean.valley", {"results": by_attention, "prompts": prompt_curves}, note=note, record=False)
glue("valley_margin", VALLEY_MARGIN)
glue("valley_p_min", f"{valley.p_min:.3g}" if valley.p_min is not None else "undefined (one kind only)")
glue.verdict(valley, section="entropy-across-depth-is-there-a-compression-valley")
lrd.tables.rounded(valley_depths(by_attention))

# %% [markdown]
# Per model, prompts as the unit: the mean valley with its interval, the one-sided test of a
# valley (Holm over the decoders) and the equivalence test of "flat" (Holm over the encoders):

# %% tags=["hide-input"]
lrd.tables.rounded(per_model_valleys(prompt_curves).drop(columns="p flat min").set_index("model"), digits=3)

# %% [markdown]
# **Verdict**: {glue:text}`mid_layer-verdict_valley`.
#
# ## The final norm
#
# Hugging Face returns the last block's output after the final norm, the other layers before
# it; the paper's code truncates the model, so every layer it scores has gone through the
# final norm. Scores of the decoders on {glue:text}`mid_layer-norm_task` with and without the
# final norm applied to every layer's tokens before pooling. {glue:text}`mid_layer-norm_finding`

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-final-norm", "caption": "MTEB main score of the decoders' layers against depth $l/L$, with and without the final norm applied to every layer's tokens."}}
glue("norm_task", norm_task)
norm = final_norm_comparison(normed, kinds, norm_task=norm_task)  # without a decoder, its finding says so
for name, value in norm.glued().items():
    glue(name, value)
lrd.book.plots.variant_curves(norm.scores, "score", style="final norm", ylabel="MTEB main score") if norm.models else None

# %% [markdown]
# ## Do the metrics track the score?
#
# > {glue:text}`mid_layer-claim_metrics_track` (report digest of {cite:t}`skean2025layer`, our
# > translation; the paper: {glue:text}`mid_layer-paper_metrics_track`)
#
# Spearman correlation across layers between each metric and the score (mean of the two halves),
# per task, averaged over each model's tasks; metrics measured on other prompts (the token and
# augmentation metrics, on {glue:text}`mid_layer-aug_task`) enter as a property of the model's
# layers. Our reconstruction: the paper relates metrics and scores across layers without a
# stated statistic, and states the entropy relation for autoregressive models: the language
# models count, the sentence embedders are named, not counted (the book's rule above). **Test**:
# only the metrics whose sign the paper states are tested, prompt entropy (low where the score
# is high) and DiME (high where it is high), so the claim tested is "prompt entropy or DiME
# ranks a language model's layers as its score does", narrower than the paper's framework: a
# min-p sign-flip test over those models (Westfall-Young): each metric's own sign-flip p-value,
# the smallest adjusted over the same sign flips, so choosing the better of the two is accounted
# for. The effect shown is that
# metric's mean correlation, whose interval is biased upward by the choice (the p-value is not).
# The other metrics are shown, not tested.

# %% tags=["hide-input"]
glue("aug_task", aug_task)
_ = glue.judge("skean.metrics_track", {"results": results}, note=note, section="do-the-metrics-track-the-score")

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-correlations", "caption": "Spearman correlation across layers between each label-free metric and the MTEB main score, mean over each model's tasks."}}
lrd.book.plots.correlation_heatmap(model_correlations(results), title="metric vs score across layers")

# %% [markdown]
# **Verdict**: {glue:text}`mid_layer-verdict_metrics_track`.
#
# ## Choosing a layer without labels
#
# > {glue:text}`mid_layer-claim_choice` (report digest of {cite:t}`skean2025layer`, our
# > translation; the paper's number: {glue:text}`mid_layer-paper_choice`)
#
# For each model, the intermediate layer (the embeddings and the last layer excluded) with the
# highest DiME on {glue:text}`mid_layer-aug_task`, used for every task, against the last layer,
# both scored on the halves the gain uses and averaged over tasks (relative gain of the
# task-mean score: the paper's "3%" does not say whether relative or in points). DiME uses no
# labels, so choosing by it needs no cross-fitting. **Scope**: the paper states the number for
# Pythia; the book extends it to the language models and leaves out the sentence embedders (the
# book's rule above). Only those models count; the others are shown (`in scope` false) and never
# counted for or against the claim. **Test**: exact one-sided sign-flip
# test over the models in scope; against it, the same test of the chosen layer scoring below the
# last. Per model (the table's `p` and `p (Holm)`, Holm over the models in scope): the chosen
# layer against the last on the model's (task, half) replicates.

# %% tags=["hide-input"]
_ = glue.judge("skean.choice", {"results": results}, metric="DiME", note=note, section="choosing-a-layer-without-labels")
lrd.tables.rounded(label_free_choice(results, metric="DiME", scope=claim("skean.choice").scope))

# %% [markdown]
# **Verdict**: {glue:text}`mid_layer-verdict_choice`.
#
# ## The paper's code against the paper's formula
#
# The paper's code (OFSkean/information_flow) computes prompt and dataset entropy with the
# Gram matrix's negative entries clamped at 0, curvature on centred, L2-normalised tokens with
# the angle of $|\cos|$ and a repeated token's zero step counted as angle 0, and DiME with
# $d \times d$ kernels when there are more prompts than dimensions. The measurements above
# follow the code, since the verdicts compare with the paper's numbers; the formula is computed
# from the same states. The three verdicts that read these measurements, under both variants
# ({glue:text}`mid_layer-n_variant_same` of {glue:text}`mid_layer-n_variant_verdicts` keep their
# outcome), and how far the curves move (appendix {doc}`authors_code`):

# %% tags=["hide-input"]
from lrd.verdicts.fidelity import variant_differences, variant_verdicts

variants = variant_verdicts(results, token_task=token_task, note=note)
glue("n_variant_same", int(variants["same outcome"].sum()))
glue("n_variant_verdicts", len(variants))
variants

# %% tags=["hide-input"]
lrd.tables.rounded(variant_differences(results).set_index(["measurement", "model"]), digits=3)

# %% [markdown]
# ## The claims against our measurement
#
# | Claim (Skean et al.) | Verdict |
# |---|---|
# | The layers at 40-60% depth beat the last (mean gain over every model) | {glue:text}`mid_layer-verdict_gain` |
# | Decoders show a mid-depth entropy valley, encoders do not | {glue:text}`mid_layer-verdict_valley` |
# | In the language models, prompt entropy or DiME ranks the layers as the score does | {glue:text}`mid_layer-verdict_metrics_track` |
# | In the language models, a DiME-chosen layer beats the last | {glue:text}`mid_layer-verdict_choice` |
#
# Our panel has {glue:text}`mid_layer-n_models` small models against the paper's larger ones
# and {glue:text}`mid_layer-n_tasks` offline tasks of at most {glue:text}`mid_layer-n_samples`
# rows instead of 32 MTEB tasks. The paper tests base LLMs; on this panel:
# {glue:text}`mid_layer-panel_note`. The token-level and augmentation metrics use
# {glue:text}`mid_layer-n_token_prompts` and {glue:text}`mid_layer-n_aug_prompts` prompts of one
# task, where the paper uses up to 1000.

# %% tags=["hide-input"]
glue("n_aug_prompts", n_aug_prompts)
glue_path = glue.save(results_dir)
