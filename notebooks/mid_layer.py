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
# > {glue:text}`mid_layer-claim_intermediate`
#
# and, in the caption of their Figure 1, "{glue:text}`mid_layer-claim_consistent`" They explain
# it with a suite of label-free representation metrics (abstract: "{glue:text}`mid_layer-claim_metrics`"),
# among which a mid-depth drop of prompt entropy in autoregressive models, the "compression
# valley" ("{glue:text}`mid_layer-claim_compression`").
#
# This chapter scores every layer of our offline panel on {glue:text}`mid_layer-n_tasks` tasks
# from one extraction per model and task, compares the best layer with the last, measures the
# paper's metrics per layer and asks whether they pick a good layer without labels.
#
# **Per-layer evaluation.** `lrd.evaluate_layers` takes the $(L+1, N, d)$ array of
# `lrd.extract` and applies MTEB's protocol for the task type with the same scikit-learn
# estimators and samples as `mteb` 2.x (a test checks the classification path against
# `mteb.evaluate` on a local task): logistic
# regression on 8 examples per label, 10 experiments, test accuracy (classification); average
# precision of the cosine similarity (pair classification); Spearman correlation of the cosine
# similarity with the human score (STS); MiniBatchKMeans V-measure over 10 bootstrap samples
# (clustering; MTEB draws 16 384 texts per bootstrap, we draw as many as the set has, and run
# {glue:text}`mid_layer-n_bootstrap` bootstraps where MTEB runs 10, to fit the time budget).
#
# **Metrics** (`lrd.metrics`). For rows $Z$ (tokens of a prompt, or prompts of a dataset),
# centred and L2-normalised, the matrix-based entropy is
# $S_1(Z) = -\sum_i \lambda_i \log \lambda_i$ over the eigenvalues of $ZZ^\top / \operatorname{tr}(ZZ^\top)$,
# divided by $\log \min(n, d)$; *prompt entropy* averages it over prompts' token matrices,
# *dataset entropy* takes it over the prompts' pooled vectors. *Curvature* is the mean angle
# between consecutive token steps $z_{k+1} - z_k$. *InfoNCE* ($\tau = 0.1$, reported as
# $1 - \mathcal L/\log N$), *LiDAR* (entropy of $S_w^{-1/2} S_b S_w^{-1/2}$ over
# {glue:text}`mid_layer-n_views` views, $\delta = 10^{-4}$) and *DiME* (10 permutations) compare
# embeddings of augmented views (nlpaug split, random-character and keyboard augmentations, as
# in the paper's code); the views are L2-normalised, our choice where the code feeds raw means.

# %% tags=["parameters"]
models = ["minilm", "mpnet", "smollm2", "gemma3", "qwen"]  # offline keys, hub ids or folders
tasks = ["sst2", "sarcasm", "mmlu_subject", "lee50"]  # also: tweet_sentiment, mrpc (pair classification)
n_samples = 300  # rows per task; 300 shares SST-2 and Lee-50 states with lrd_families and all with cayley_aggregation (cache)
n_bootstrap = 3  # clustering experiments per layer (MTEB uses 10; k-means dominates the CPU time)
pooling = "mean"
token_task = "sarcasm"  # task whose prompts feed the token-level metrics (one of tasks; same forward pass)
n_token_prompts = 300  # prompts of token_task for prompt entropy and curvature (tokens come from the task's own pass)
aug_task = "sarcasm"  # task whose prompts are augmented (InfoNCE, LiDAR, DiME); short headlines keep views cheap
n_aug_prompts = 16  # prompts augmented
n_views = 16  # views per prompt (LiDAR; InfoNCE and DiME use the first two)
norm_task = "sarcasm"  # task of the final-norm on/off comparison (decoders; one of tasks, same forward pass; "" skips it)
device = "cpu"
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd

import lrd

from lrd.evaluate import chance_score
from lrd.layer_choice import (best_vs_last, choice_verdict, gain_verdict, label_free_choice,
                              metric_correlations, valley_drop, valley_verdict)
from lrd.papers import MID_LAYER_CLAIMS, SKEAN_GAIN_RANGE
from lrd.report import Glue, save_results
from lrd.units import compute, mid_layer_units

lrd.book.check_parameters("mid_layer", globals())
for option, value in {"token_task": token_task, "aug_task": aug_task, "norm_task": norm_task}.items():
    if value and value not in tasks:
        raise ValueError(f"{option} {value!r} is not one of tasks {tasks}; add it to tasks or choose one of them")
glue = Glue("mid_layer")
for key, claim in MID_LAYER_CLAIMS.items():
    glue(f"claim_{key}", claim.text)
glue("n_tasks", len(tasks))
glue("n_views", n_views)
glue("n_bootstrap", n_bootstrap)
task_data = {t: lrd.load_task(t, n=n_samples) for t in tasks}

rows, kinds, normed = [], {}, []
units = mid_layer_units(models, tasks, n_samples, n_bootstrap, pooling, token_task, n_token_prompts, aug_task,
                        n_aug_prompts, n_views, norm_task, device=device)
for name, done in zip(models, compute(units)):  # one cached unit per model (lrd.units.mid_layer_model)
    kinds[name] = done["kind"]
    rows += done["rows"]
    normed += done["normed"]
results = pd.concat(rows, ignore_index=True)
results["kind"] = results["model"].map(kinds)
csv_path = save_results(results, "mid_layer", results_dir)

# %% [markdown]
# ## Every layer's score
#
# One panel per task; depth is $l/L$ (0 = embeddings, 1 = last block); {glue:text}`mid_layer-pooling`
# pooling over {glue:text}`mid_layer-n_samples` rows per task.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-scores", "caption": "MTEB main score of every layer's pooled embedding against depth $l/L$, one panel per task."}}
glue("pooling", pooling)
glue("n_samples", n_samples)
lrd.plots.layer_curves(results, "score", col="task", col_wrap=3, ylabel="MTEB main score")

# %% [markdown]
# The score of a representation unrelated to the labels (chance), per task:

# %% tags=["hide-input"]
lrd.report.rounded(pd.Series({t: chance_score(d) for t, d in task_data.items()}, name="chance")).to_frame().T

# %% [markdown]
# ## Best layer against the last
#
# For each model and task: the best layer, its depth, its score, the last layer's score, and
# the gain (absolute and relative to the last layer).

# %% tags=["hide-input"]
scores = results[results["measurement"] == "score"]
table = best_vs_last(scores)
lrd.report.rounded(table.set_index(["model", "task"]))

# %% [markdown]
# Mean relative gain of the best layer over the last, per model, beside the paper's range of
# {glue:text}`mid_layer-paper_gain_low` to {glue:text}`mid_layer-paper_gain_high` on 32 MTEB
# tasks. The best layer is an intermediate one in {glue:text}`mid_layer-n_intermediate_best` of
# {glue:text}`mid_layer-n_pairs` model-task pairs; its mean depth is
# {glue:text}`mid_layer-mean_best_depth`.

# %% tags=["hide-input"]
glue("paper_gain_low", f"{SKEAN_GAIN_RANGE[0]:.0%}")
glue("paper_gain_high", f"{SKEAN_GAIN_RANGE[1]:.0%}")
glue("n_intermediate_best", int(table["intermediate"].sum()))
glue("n_pairs", len(table))
glue("mean_best_depth", float(table["best depth"].mean()))
per_model = table.groupby("model", sort=False)[["gain", "relative gain", "best depth"]].mean()
per_model["kind"] = per_model.index.map(kinds)
lrd.report.rounded(per_model)

# %% [markdown]
# ## Entropy across depth: is there a compression valley?
#
# Prompt entropy ({glue:text}`mid_layer-n_token_prompts` prompts of {glue:text}`mid_layer-token_task`)
# and dataset entropy (every task, averaged) per layer. A valley is a layer in the middle whose
# entropy is below both ends; its depth is $\min(S_0, S_L) - \min_{0<l<L} S_l$.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-prompt-entropy", "caption": "Normalised prompt entropy (mean matrix-based entropy of each prompt's token matrix) against depth $l/L$."}}
glue("n_token_prompts", min(n_token_prompts, len(task_data[token_task].texts)))
glue("token_task", token_task)
lrd.plots.layer_curves(results[results["task"] == token_task], "prompt entropy", col=None,
                       ylabel="prompt entropy (normalised)")

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-dataset-entropy", "caption": "Normalised dataset entropy (matrix-based entropy of the pooled prompts) against depth $l/L$, one panel per task."}}
lrd.plots.layer_curves(results, "dataset entropy", col="task", col_wrap=3, ylabel="dataset entropy (normalised)")

# %% tags=["hide-input"]
prompt = results[(results["measurement"] == "prompt entropy") & (results["task"] == token_task)]
drops = pd.DataFrame([{"model": m, "kind": kinds[m], "valley": valley_drop(p.sort_values("layer")["value"])}
                      for m, p in prompt.groupby("model", sort=False)])
lrd.report.rounded(drops)

# %% [markdown]
# ## The final norm
#
# Hugging Face returns the last block's output after the final norm, the other layers before
# it; the paper's code truncates the model, so every layer it scores has gone through the
# final norm. Scores of the decoders on {glue:text}`mid_layer-norm_task` with and without the
# final norm applied to every layer's tokens before pooling. The mean absolute change of the
# score over layers is {glue:text}`mid_layer-norm_mean_change`; the best layer moves for
# {glue:text}`mid_layer-norm_best_moves` of {glue:text}`mid_layer-norm_n_models` decoders.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-final-norm", "caption": "MTEB main score of the decoders' layers against depth $l/L$, with and without the final norm applied to every layer's tokens."}}
glue("norm_task", norm_task)
both = pd.concat(normed, ignore_index=True) if normed else pd.DataFrame(columns=["model", "layer", "final norm"])
changes = both.pivot_table(index=["model", "layer"], columns="final norm", values="value")
glue("norm_mean_change", float((changes["on"] - changes["off"]).abs().mean()) if normed else float("nan"))
moves = changes.groupby(level="model").apply(lambda c: c["on"].idxmax() != c["off"].idxmax()) if normed else []
glue("norm_best_moves", int(sum(moves)))
glue("norm_n_models", len(normed) // 2)
lrd.plots.variant_curves(both, "score", style="final norm", ylabel="MTEB main score") if normed else None

# %% [markdown]
# ## Do the metrics track the score?
#
# Spearman correlation across layers between each metric and the score on
# {glue:text}`mid_layer-aug_task` (the task whose prompts the token-level and augmentation
# metrics were measured on), per model.

# %% tags=["hide-input"] mystnb={"figure": {"name": "mid_layer-fig-correlations", "caption": "Spearman correlation across layers between each label-free metric and the MTEB main score, per model."}}
glue("aug_task", aug_task)
METRICS = ["prompt entropy", "dataset entropy", "effective rank", "curvature", "InfoNCE", "LiDAR", "DiME"]
corr = metric_correlations(results[results["task"] == aug_task], "score", METRICS)
lrd.plots.correlation_heatmap(corr.drop(columns="task"), title=f"metric vs score across layers ({aug_task})")

# %% [markdown]
# ## Choosing a layer without labels
#
# For each model, the layer (excluding the embedding and last layers) with the highest value of
# a metric, scored on {glue:text}`mid_layer-aug_task`, against the last and the best layer.

# %% tags=["hide-input"]
choices = pd.concat([label_free_choice(results, "score", m) for m in ("DiME", "InfoNCE", "LiDAR")], ignore_index=True)
lrd.report.rounded(choices.set_index(["metric", "model"]).drop(columns="task"))

# %% [markdown]
# ## The claims against our measurement
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`mid_layer-claim_intermediate` |
# | **Intermediate layers beat the last** | {glue:text}`mid_layer-verdict_gain` |
# | **Compression valley in decoders, not encoders** | {glue:text}`mid_layer-verdict_valley` |
# | **A label-free metric (DiME) picks a better layer than the last** | {glue:text}`mid_layer-verdict_choice` |
#
# Our panel has {glue:text}`mid_layer-n_models` small models against the paper's larger ones
# and {glue:text}`mid_layer-n_tasks` offline tasks of at most {glue:text}`mid_layer-n_samples`
# rows instead of 32 MTEB tasks; the decoders are GGUF checkpoints dequantised to float32. The
# token-level and augmentation metrics use {glue:text}`mid_layer-n_token_prompts` and
# {glue:text}`mid_layer-n_aug_prompts` prompts of one task, where the paper uses up to 1000.

# %% tags=["hide-input"]
glue("n_models", len(models))
glue("n_aug_prompts", n_aug_prompts)
glue.verdict("gain", claim=MID_LAYER_CLAIMS["intermediate"], verdict=gain_verdict(table, SKEAN_GAIN_RANGE),
             section="best-layer-against-the-last")
glue.verdict("valley", claim=MID_LAYER_CLAIMS["compression"], verdict=valley_verdict(drops),
             aspect="a mid-depth prompt-entropy valley in decoders, not encoders",
             section="entropy-across-depth-is-there-a-compression-valley")
glue.verdict("choice", claim=MID_LAYER_CLAIMS["metrics"], verdict=choice_verdict(choices[choices["metric"] == "DiME"]),
             aspect="a label-free metric (DiME) picks a better layer than the last",
             section="choosing-a-layer-without-labels")
glue_path = glue.save(results_dir)
