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
# # LRD measurement families: Frenet, NRS and GFMI
#
# Jiang, Yang and Tam (2026) describe how pooled representations move from layer to layer with
# three families of measurements, and report (abstract):
#
# > {glue:text}`lrd_families-claim_differences`
#
# This chapter measures the three families on our offline panel, encoder embedders against
# decoders, on several task types, and checks that claim. The paper's per-model tables were not
# available to us, so there is no number-by-number comparison: we test the claim as stated.
#
# **The families.** Layer $l$ of a model gives $X_l \in \mathbb R^{N \times d}$, the pooled
# states of $N$ texts, $l = 0..L$.
#
# * **Frenet** (as in the paper). Centre $X_l$ and take $Q_l$, its top-$r$ right singular vectors,
#   with $r$ the smallest rank explaining {glue:text}`lrd_families-variance` of the variance of the centred final layer (one $r$
#   for all layers). The Grassmann distance is
#   $d(a,b) = \big(\sum_i \theta_i^2\big)^{1/2}$, $\theta_i = \arccos \sigma_i(Q_a^\top Q_b)$;
#   the velocity is $s_l = d(l, l+1)$, the Menger curvature
#   $\kappa_{l+1} = 4A / \big(d(l,l+1)\, d(l+1,l+2)\, d(l,l+2)\big)$ with $A$ the Heron area of the
#   triangle of the three distances, and the end-to-end displacement is $d_{0,L}$.
# * **NRS**, *our reconstruction* (the paper's formula is not public): the mean fraction of each
#   text's $k$ ({glue:text}`lrd_families-k`) nearest neighbours (cosine) at layer $l$ that are still among its $k$ nearest at
#   layer $l+1$; the adjusted version subtracts the chance overlap $k/(N-1)$ and rescales so that
#   identical neighbourhoods give 1 and random ones 0.
# * **GFMI**, *our reconstruction*: each layer is centred and its rows normalised; a Ward
#   dendrogram is cut into 2, 4, 8, 16 and 32 clusters (the filtration levels); GFMI$_l$ is the
#   mean adjusted mutual information between layer $l$'s and the final layer's partitions over the
#   levels. It is 1 at the final layer, about 0 for an unrelated representation, and invariant to
#   rotation, scaling and translation (`lrd.metrics.gfmi` documents the construction and its tests).

# %% tags=["parameters"]
models = ["minilm", "mpnet", "smollm2", "gemma3", "qwen"]  # offline keys, hub ids or folders
tasks = ["sst2", "mrpc", "lee50", "arc_easy"]  # classification, pair, STS, multiple-choice prompts
n_samples = 300  # texts per task (Lee-50 has only 50 documents)
pooling = "mean"
k = 10  # NRS neighbourhood size
variance = 0.95  # Frenet rank rule
device = "cpu"
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd

import lrd
from lrd.metrics import lrd_profile, mean_cosine_similarity, model_scores, profile_rows
from lrd.papers import LRD_CLAIMS
from lrd.report import Glue, save_results
from lrd.stats import architecture_verdicts, separation_table, task_verdict, variance_explained

lrd.book.check_parameters("lrd_families", globals())
glue = Glue("lrd_families")
glue("claim_differences", LRD_CLAIMS["differences"].text)
glue("variance", f"{variance:.0%}")
glue("k", k)
task_data = {t: lrd.load_task(t, n=n_samples) for t in tasks}

rows, scores = [], []
for name in models:
    model = lrd.load_model(name, device=device)
    for task, data in task_data.items():
        states = lrd.extract(model, data.texts[:n_samples], pooling=pooling)
        profile = lrd_profile(states, k=k, variance=variance)
        rows.append(profile_rows(profile, model=name, task=task))
        scores.append({"model": name, "kind": model.kind, "task": task, "N": states.shape[1],
                       **model_scores(profile), "final mean cosine": mean_cosine_similarity(states)[-1]})
    del model
results = pd.concat(rows, ignore_index=True)
scores = pd.DataFrame(scores)
csv_path = save_results(results, "lrd_families", results_dir)

# %% [markdown]
# ## Per-layer curves
#
# Depth is normalised to $l/L$; quantities of a transition $l \to l+1$ (velocity, NRS) sit at
# $l + \tfrac12$. Each panel is one task, measured on at most {glue:text}`lrd_families-n_samples` texts
# ({glue:text}`lrd_families-pooling` pooling).

# %% tags=["hide-input"]
glue("n_samples", n_samples)
glue("pooling", pooling)
lrd.plots.layer_curves(results, "velocity", col="task", ylabel="Grassmann velocity (rad)")

# %% tags=["hide-input"]
lrd.plots.layer_curves(results, "curvature", col="task", ylabel="Menger curvature")

# %% tags=["hide-input"]
lrd.plots.layer_curves(results, "NRS (adjusted)", col="task", ylabel=f"NRS, chance-adjusted (k={k})")

# %% tags=["hide-input"]
lrd.plots.layer_curves(results, "GFMI", col="task", ylabel="GFMI with the final layer")

# %% [markdown]
# ## Model-level scores
#
# One row per model and task: the Frenet rank $r$ (fixed by the final layer), the end-to-end
# displacement $d_{0,L}$, the mean velocity and curvature over layers, the mean NRS and the mean
# GFMI of layers $0..L-1$, and, as a final-layer-only statistic, the mean pairwise cosine of the
# final layer.

# %% tags=["hide-input"]
LRD_SCORES = ["d_0L", "mean velocity", "mean curvature", "mean NRS (adjusted)", "mean GFMI"]
FINAL_LAYER_SCORES = ["rank r", "final mean cosine"]
scores.set_index(["model", "task"]).round(3)

# %% [markdown]
# ## Encoders against decoders
#
# Does a score put every encoder on one side and every decoder on the other, task by task? The
# table counts the tasks (of {glue:text}`lrd_families-n_tasks`) on which each score separates the
# two groups. With {glue:text}`lrd_families-n_encoders` encoders and
# {glue:text}`lrd_families-n_decoders` decoders, a score with no relation to architecture
# separates them on one task by chance with probability {glue:text}`lrd_families-p_chance`.

# %% tags=["hide-input"]
from math import comb

kinds = scores.groupby("model")["kind"].first().value_counts()
n_enc, n_dec = int(kinds.get("encoder", 0)), int(kinds.get("decoder", 0))
glue("n_tasks", len(tasks))
glue("n_encoders", n_enc)
glue("n_decoders", n_dec)
glue("p_chance", 2 / comb(n_enc + n_dec, n_enc) if n_enc and n_dec else float("nan"))
separation = separation_table(scores, LRD_SCORES + FINAL_LAYER_SCORES) if n_enc and n_dec else pd.DataFrame()
separation

# %% [markdown]
# Which way round: the mean of each score by architecture. The group with the higher mean
# velocity is the {glue:text}`lrd_families-higher_mean_velocity` group, with the higher mean
# curvature the {glue:text}`lrd_families-higher_mean_curvature` group, and with the higher mean
# GFMI (earlier layers already clustered like the last) the
# {glue:text}`lrd_families-higher_mean_GFMI` group.

# %% tags=["hide-input"]
by_kind = scores.groupby("kind")[LRD_SCORES + FINAL_LAYER_SCORES].mean()
for score in ("mean velocity", "mean curvature", "mean GFMI"):
    glue(f"higher_{score.replace(' ', '_')}", by_kind[score].idxmax() if len(by_kind) > 1 else "n/a")
by_kind.round(3)

# %% [markdown]
# ## Task against model
#
# How much of the variance of each model-level score is explained by the task, and how much by
# the model ($\eta^2$ of each factor; the two need not sum to 1)? The scores depend on the
# number of texts: the Grassmann distance between $r$-dimensional subspaces is at most
# $\sqrt r\,\pi/2$, and $r$ is set by the final layer of each task's sample, so a task with
# few texts (Lee-50 has only 50 documents) has a small $r$ and small distances. To keep sample
# size out of the task effect, this comparison uses only the tasks measured on the largest
# number of texts ({glue:text}`lrd_families-n_equal`): {glue:text}`lrd_families-equal_tasks`.

# %% tags=["hide-input"]
equal = scores[scores["N"] == scores["N"].max()]
glue("n_equal", int(equal["N"].max()))
glue("equal_tasks", ", ".join(equal["task"].unique()))
shares = pd.DataFrame({f: {m: variance_explained(equal, m, f) for m in LRD_SCORES} for f in ("task", "model")})
shares.round(3)

# %% [markdown]
# ## The claim against our measurement
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`lrd_families-claim_differences` |
# | **Architectural differences in LRD** | {glue:text}`lrd_families-verdict_architecture` |
# | **…not apparent from the final layer alone** | {glue:text}`lrd_families-verdict_final_layer` |
# | **Task-level differences** | {glue:text}`lrd_families-verdict_task` |
#
# The panel is small ({glue:text}`lrd_families-n_models` models against the paper's 31) and
# our tasks are four offline sets rather than 30 MTEB tasks; NRS and GFMI are our
# reconstructions. The decoders are GGUF checkpoints dequantised to float32.

# %% tags=["hide-input"]
glue("n_models", len(models))
verdict_arch, verdict_final = architecture_verdicts(separation, LRD_SCORES, FINAL_LAYER_SCORES, len(tasks))
verdict_task = task_verdict(shares, equal["task"].nunique())
glue("verdict_architecture", verdict_arch)
glue("verdict_final_layer", verdict_final)
glue("verdict_task", verdict_task)
glue_path = glue.save(results_dir)
