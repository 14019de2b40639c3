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
# {cite:t}`jiang2026lrd` describe how pooled representations move from layer to layer with
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
from lrd.papers import LRD_CLAIMS
from lrd.report import Glue, save_results
from lrd.stats import architecture_verdicts, separation_table, task_verdict, variance_explained
from lrd.units import compute, lrd_families_units

lrd.book.check_parameters("lrd_families", globals())
glue = Glue("lrd_families")
glue("claim_differences", LRD_CLAIMS["differences"].text)
glue("variance", f"{variance:.0%}")
glue("k", k)
# one cached unit per (model, task): extraction, Frenet, NRS, GFMI (lrd.units; `lrd sweep` runs them on a cluster)
done = compute(lrd_families_units(models, tasks, n_samples, pooling=pooling, k=k, variance=variance, device=device))
results = pd.concat([d["rows"] for d in done], ignore_index=True)
scores = pd.DataFrame([d["scores"] for d in done])
csv_path = save_results(results, "lrd_families", results_dir)

# %% [markdown]
# ## Per-layer curves
#
# Depth is normalised to $l/L$; quantities of a transition $l \to l+1$ (velocity, NRS) sit at
# $l + \tfrac12$. Each panel is one task, measured on at most {glue:text}`lrd_families-n_samples` texts
# ({glue:text}`lrd_families-pooling` pooling); encoders are drawn solid, decoders dashed, and a
# model keeps its colour throughout the book. {numref}`lrd_families-fig-velocity` and
# {numref}`lrd_families-fig-curvature` show the Frenet family, {numref}`lrd_families-fig-nrs`
# the neighbourhoods and {numref}`lrd_families-fig-gfmi` the cluster structure.

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-velocity", "caption": "Grassmann velocity $s_l = d(l, l+1)$ between consecutive layers' top-$r$ subspaces, per task."}}
glue("n_samples", n_samples)
glue("pooling", pooling)
lrd.plots.layer_curves(results, "velocity", col="task", ylabel="Grassmann velocity (rad)")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-curvature", "caption": "Menger curvature $\\kappa_l$ of the layer trajectory on the Grassmannian, per task."}}
lrd.plots.layer_curves(results, "curvature", col="task", ylabel="Menger curvature")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-nrs", "caption": "Chance-adjusted neighbourhood retention (NRS, our reconstruction) from layer $l$ to $l+1$: 1 when every text keeps its nearest neighbours, 0 at chance."}}
lrd.plots.layer_curves(results, "NRS (adjusted)", col="task", ylabel=f"NRS, chance-adjusted (k={k})")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-gfmi", "caption": "GFMI (our reconstruction): agreement of each layer's cluster hierarchy with the final layer's, 1 at the final layer."}}
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
lrd.report.rounded(scores.set_index(["model", "task"]))

# %% [markdown]
# ## Encoders against decoders
#
# Does a score put every encoder on one side and every decoder on the other, task by task? The
# table counts the tasks (of {glue:text}`lrd_families-n_tasks`) on which each score separates the
# two groups. How strong such a count is depends on the panel: under chance, which
# {glue:text}`lrd_families-n_encoders` of the {glue:text}`lrd_families-n_models` models are the
# encoders is arbitrary, so the verdict's p-value is the share of all
# {glue:text}`lrd_families-n_relabellings` ways of choosing them under which some score
# separates the groups on at least as many tasks (an exact permutation test; the best of the
# scores is taken under every relabelling, so trying several scores is accounted for). On this
# panel no result can have a p-value below {glue:text}`lrd_families-p_min`.

# %% tags=["hide-input"]
from math import comb

kinds = scores.groupby("model")["kind"].first().value_counts()
n_enc, n_dec = int(kinds.get("encoder", 0)), int(kinds.get("decoder", 0))
glue("n_tasks", len(tasks))
glue("n_encoders", n_enc)
glue("n_decoders", n_dec)
glue("n_relabellings", comb(n_enc + n_dec, n_enc))
glue("p_min", (2 if n_enc == n_dec else 1) / comb(n_enc + n_dec, n_enc) if n_enc and n_dec else 1.0)
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
lrd.report.rounded(by_kind)

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
# The verdict's p-value shuffles each model's scores between its tasks (a permutation test of
# the largest task share over the scores).

# %% tags=["hide-input"]
equal = scores[scores["N"] == scores["N"].max()]
glue("n_equal", int(equal["N"].max()))
glue("equal_tasks", ", ".join(equal["task"].unique()))
shares = pd.DataFrame({f: {m: variance_explained(equal, m, f) for m in LRD_SCORES} for f in ("task", "model")})
lrd.report.rounded(shares)

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
# A verdict is "reproduced" only when the observed result would arise by chance with
# probability at most 0.05, and "not testable" when the panel is too small for any result to
# get there.
#
# The panel is small ({glue:text}`lrd_families-n_models` models against the paper's 31) and
# our tasks are four offline sets rather than 30 MTEB tasks; NRS and GFMI are our
# reconstructions. The decoders are GGUF checkpoints dequantised to float32.

# %% tags=["hide-input"]
glue("n_models", len(models))
verdict_arch, verdict_final = architecture_verdicts(scores, LRD_SCORES, FINAL_LAYER_SCORES)
claim = LRD_CLAIMS["differences"]
glue.verdict("architecture", claim=claim, verdict=verdict_arch, aspect="architectural differences in LRD",
             section="encoders-against-decoders")
glue.verdict("final_layer", claim=claim, verdict=verdict_final, aspect="not apparent from the final layer alone",
             section="encoders-against-decoders")
glue.verdict("task", claim=claim, verdict=task_verdict(equal, LRD_SCORES), aspect="task-level differences",
             section="task-against-model")
glue_path = glue.save(results_dir)
