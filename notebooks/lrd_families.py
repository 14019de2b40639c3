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
# > {glue:text}`lrd_families-claim_architecture`
#
# and, of the families themselves ({glue:text}`lrd_families-claim_complementarity_source`):
#
# > {glue:text}`lrd_families-claim_complementarity`
#
# This chapter measures the three families on our offline panel, encoder-based models against
# decoder-based ones, on several task types, and judges four claims: the architectural differences, that
# the final layer alone does not show them, the task-level differences, and the families'
# complementarity. The paper's per-model tables were not available to us and it states no test
# for these claims, so there is no number-by-number comparison: each claim is judged by a
# permutation test whose unit is the model, stated where it is used. Our decoder-based models are
# {glue:text}`lrd_families-decoders`, of the families listed below, smaller than the paper's
# (GGUF checkpoints are dequantised).
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
models = ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]  # offline keys, hub ids or folders
tasks = ["sst2", "mrpc", "lee50", "arc_easy"]  # classification, pair, STS, multiple-choice prompts
n_samples = 300  # texts per task (Lee-50 has only 50 documents)
pooling = "mean"
k = 10  # NRS neighbourhood size
variance = 0.95  # Frenet rank rule
task_groups = 4  # disjoint groups of each task's texts, scored apart: replicates for the per-model test of task dependence and the curves' noise (0: none)
device = "cpu"
dtype = "bfloat16"  # what the models compute in: "float32", "bfloat16" (accelerators, CPUs with AVX512-BF16) or "float16" (accelerators); in every cache key
results_dir = "results"

# %% tags=["hide-input"]
import lrd
from lrd.engine.kinds import grouped
from lrd.engine.models import model_kinds
from lrd.engine.packs import MODEL_PACKS
from lrd.verdicts.claims import grouping_table
from lrd.book.glue import save_results
from lrd.units import compute
from lrd.units.lrd_families import family_tables, lrd_families_units
from lrd.verdicts.families import (COMPLEMENTARITY_MARGIN, FINAL_LAYER_SCORES, FINAL_LAYER_STATISTICS, LRD_SCORES,
                                   RANK_FREE_SCORES,
                                   complementarity_model_tests, equal_sample_tasks,
                                   curve_reliability, family_correlations, redundancy_table,
                                   task_group_tests,
                                   task_shares)
from lrd.verdicts.stats import relabellings, separation_table, two_group_p_min

glue = lrd.book.open_chapter("lrd_families", globals(),
                             claims={"claim_{name}": "text", "claim_{name}_source": "source", "paper_{name}": "paper_effect"})
glue("variance", f"{variance:.0%}")
glue("k", k)
# one cached unit per (model, task): extraction, Frenet, NRS, GFMI (lrd.units; `lrd sweep` runs them on a cluster)
tables = family_tables(compute(lrd_families_units(models=models, tasks=tasks, n_samples=n_samples, pooling=pooling, k=k,
                                                  variance=variance, device=device, dtype=dtype,
                                                  task_groups=task_groups)))
results, scores = tables.results, tables.scores
csv_path = save_results(results, "lrd_families", results_dir)
kinds = model_kinds(models)  # attention, backbone, role, tuning of each model (lrd.engine.kinds)
scores = grouped(scores, kinds, "backbone")  # the LRD paper's grouping: encoder-based against decoder-based
decoders = ", ".join(MODEL_PACKS[m].upstream if m in MODEL_PACKS else m
                     for m in scores.loc[scores["kind"] == "decoder", "model"].unique()) or "none"
glue("decoders", decoders)
families = kinds.groupby("family", sort=False)["model"].agg(", ".join)
glue("families", "; ".join(f"{f}s: {m}" for f, m in families.items()))
panel_note = (f"Grouped by backbone, the panel's decoder-based models are {decoders}; the paper's are "
              f"decoder-based embedders and base LLMs.")

# %% [markdown]
# **Which models each test uses.** The panel's families, as the paper names them, are
# {glue:text}`lrd_families-families`. The architecture claims contrast encoder-based models with
# decoder-based ones, the paper's grouping (a decoder-based embedder counts with the decoders);
# the other two claims take every model as one unit:

# %% tags=["hide-input"]
grouping_table(kinds, "lrd_families")

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
lrd.book.plots.layer_curves(results, "velocity", col="task", ylabel="Grassmann velocity (rad)")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-curvature", "caption": "Menger curvature $\\kappa_l$ of the layer trajectory on the Grassmannian, per task."}}
lrd.book.plots.layer_curves(results, "curvature", col="task", ylabel="Menger curvature")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-nrs", "caption": "Chance-adjusted neighbourhood retention (NRS, our reconstruction) from layer $l$ to $l+1$: 1 when every text keeps its nearest neighbours, 0 at chance."}}
lrd.book.plots.layer_curves(results, "NRS (adjusted)", col="task", ylabel=f"NRS, chance-adjusted (k={k})")

# %% tags=["hide-input"] mystnb={"figure": {"name": "lrd_families-fig-gfmi", "caption": "GFMI (our reconstruction): agreement of each layer's cluster hierarchy with the final layer's, 1 at the final layer."}}
lrd.book.plots.layer_curves(results, "GFMI", col="task", ylabel="GFMI with the final layer")

# %% [markdown]
# ## Model-level scores
#
# One row per model and task: the Frenet rank $r$ (fixed by the final layer), the end-to-end
# displacement $d_{0,L}$, the mean velocity and curvature over layers, the mean NRS and the mean
# GFMI of layers $0..L-1$, and the final layer's own statistics: its mean pairwise cosine, the mean
# cosine of each text to its $k$ nearest neighbours (the neighbourhoods NRS follows across layers,
# on the final layer alone) and the share of its variance between the clusters of GFMI's Ward
# partitions, averaged over the levels (the clusters GFMI follows, on the final layer alone;
# `lrd.metrics.final_layer`). The paper reports three model-level scores but its text defines only
# $d_{0,L}$; the means over layers (velocity, curvature, NRS, GFMI) are *our reconstruction* of the
# others, and the final-layer statistics are the book's.

# %% tags=["hide-input"]
lrd.tables.rounded(scores.set_index(["model", "task"]))

# %% [markdown]
# ## Encoders against decoders
#
# Does a score put every encoder on one side and every decoder on the other, task by task? The
# table counts the tasks (of {glue:text}`lrd_families-n_tasks`) on which each score separates the
# {glue:text}`lrd_families-n_encoders` encoders from the {glue:text}`lrd_families-n_decoders`
# decoders. How strong such a count is depends on the panel: under chance, which models are the
# encoders is arbitrary, so the p-value is the share of all {glue:text}`lrd_families-n_relabellings`
# ways of choosing them under which some LRD score separates the kinds on at least as many tasks
# (an exact permutation test whose unit is the model; the best score is taken under every
# relabelling, so trying several scores is accounted for). On this panel no result can have a
# p-value below {glue:text}`lrd_families-p_min`.
#
# "Not apparent from final-layer representations alone" is judged as a comparison, our
# reconstruction: the number of tasks separated by the best LRD score minus the number separated
# by the best final-layer statistic (the rank $r$ of the final layer, the final layer's mean
# cosine), with the kinds relabelled jointly for both; it is contradicted when the final layer
# separates the kinds on more tasks than LRD beyond chance. The paper reports no final-layer
# statistic to compare with.
#
# **Verdicts.** Architecture: {glue:text}`lrd_families-verdict_architecture`. Final layer:
# {glue:text}`lrd_families-verdict_final_layer`.

# %% tags=["hide-input"]
kinds = scores.groupby("model")["kind"].first().value_counts()
n_enc, n_dec = int(kinds.get("encoder", 0)), int(kinds.get("decoder", 0))
glue("n_tasks", len(tasks))
glue("n_encoders", n_enc)
glue("n_decoders", n_dec)
glue("n_relabellings", relabellings(n_enc, n_dec))
glue("p_min", f"{two_group_p_min(n_enc, n_dec):.2g}" if n_enc and n_dec else "n/a")
separation_table(scores, list(LRD_SCORES + FINAL_LAYER_SCORES))

# %% [markdown]
# Which way round: the mean of each score by architecture. The group with the higher mean
# velocity is the {glue:text}`lrd_families-higher_mean_velocity` group, with the higher mean
# curvature the {glue:text}`lrd_families-higher_mean_curvature` group, and with the higher mean
# GFMI (earlier layers already clustered like the last) the
# {glue:text}`lrd_families-higher_mean_GFMI` group.

# %% tags=["hide-input"]
by_kind = scores.groupby("kind")[list(LRD_SCORES + FINAL_LAYER_SCORES)].mean()
for score in ("mean velocity", "mean curvature", "mean GFMI"):
    glue(f"higher_{score.replace(' ', '_')}", by_kind[score].idxmax() if len(by_kind) > 1 else "n/a")
lrd.tables.rounded(by_kind)

# %% [markdown]
# ## Task against model
#
# The paper's tasks are 30 MTEB tasks of five types; ours are one dataset per type
# ({glue:text}`lrd_families-task_types`), so a difference between our tasks is a difference
# between datasets, and the verdict says "dataset" (it would say "task" with two or more datasets
# of every type). How much of each model-level score's variance does the dataset explain once each
# model's mean is removed (the task share, a partial $\eta^2$), and how much does the model
# explain? The scores depend on the number of texts, so this comparison uses only the tasks
# measured on the largest number of texts ({glue:text}`lrd_families-n_equal`):
# {glue:text}`lrd_families-equal_tasks`. That different datasets move the scores is expected
# before any data (their texts differ), so the table shows it and the verdict does not test it.
#
# The Frenet scores carry a confound: $r$ is set by each task's final layer, and every Grassmann
# distance between $r$-dimensional subspaces is at most $\sqrt r\,\pi/2$, so a task difference in
# $d_{0,L}$, velocity or curvature can come from the final layer's rank alone (the table shows
# how much of $r$'s own variance the task explains). The verdict therefore uses only the scores
# that never involve $r$: {glue:text}`lrd_families-rank_free`.
#
# What the verdict tests is the rest of the paper's sentence: LRD "reveals architectural and
# task-level differences that are not apparent from final-layer representations alone"
# (abstract). Each score is regressed on the model's effect and the final layer's own statistics
# ({glue:text}`lrd_families-final_statistics`: as rich as the families, a spectral, a
# neighbourhood and a clustering summary of the final layer), and the p-value shuffles each
# model's residuals between its datasets (a permutation test of the largest dataset share of what
# is left, the unit the model; Kennedy's procedure, whose size the null appendix simulates); the
# interval resamples models, and with $M$ models a share of about $1/M$ arises by chance alone.
# With the two scalars $r$ and the mean cosine only (the book rule's alternative), a third
# final-layer property carrying the dataset differences would read as "beyond the final layer".
# Where the design leaves the dataset no residual degree of freedom, the verdict says so.
#
# **Verdict.** {glue:text}`lrd_families-verdict_task`

# %% tags=["hide-input"]
equal = equal_sample_tasks(scores)
glue("n_equal", int(equal["N"].max()))
glue("equal_tasks", ", ".join(equal["task"].unique()))
glue("rank_free", ", ".join(RANK_FREE_SCORES))
glue("final_statistics", ", ".join(FINAL_LAYER_STATISTICS))
glue("task_types", "; ".join(f"{t}: {', '.join(g)}" for t, g in scores.groupby("task type", sort=False)["task"].unique().items()))
lrd.tables.rounded(task_shares(equal, list(LRD_SCORES + FINAL_LAYER_STATISTICS)))

# %% [markdown]
# **Per model.** The test above asks whether task differences recur across models; whether the
# task moves *one* model's scores beyond the sampling of texts is a separate question. Each
# task's texts are cut into {glue:text}`lrd_families-task_groups` disjoint random groups, the
# rank-free scores are computed on each group, and the groups (same size in every task) are
# reassigned between tasks at random: the share of the variance over groups that the task
# explains, its largest over the scores, against those reassignments (`p`), Holm-adjusted over
# the models (`p (Holm)`). The scores are computed on a group's texts, fewer than the verdict's,
# and the "beyond the final layer" part has no per-model counterpart: this table says what was
# expected of different datasets and does not enter the verdict.

# %% tags=["hide-input"]
glue("task_groups", task_groups)
lrd.tables.rounded(task_group_tests(tables.group_scores, RANK_FREE_SCORES, tasks=equal["task"].unique()), 3)

# %% [markdown]
# ## Complementary families
#
# The paper calls the three families complementary rather than redundant but gives no
# measurement. Complementarity proper, that each family adds information the other two lack, would
# be tested by an incremental prediction (of model or task differences) that this chapter does not
# run; the book tests the weaker "not strongly correlated", and the verdict reads as that. Two families
# are strongly correlated when their per-layer curves order a model's layers alike. For every model and task we take one curve per family on the
# transitions $l \to l+1$ (the Grassmann velocity, the adjusted NRS, and GFMI at the midpoint of
# each transition) and their Spearman correlation across layers; each model's mean $|\rho|$ over
# tasks is the unit. The reading holds when every pair stays below a margin of
# {glue:text}`lrd_families-margin` (the book's cut for a "strong" correlation elsewhere; 0.8 and
# 0.9 are the rule's alternatives, and at 0.9 two families agreeing at $|\rho|$ 0.85 would pass
# almost always), judged by a one-sided equivalence sign-flip test over models for each pair, all
# three required; it is contradicted when some pair lies above the margin beyond chance. Low correlations would also come from noisy curves, so each
# correlation is corrected for the curves' noise over the texts: the curves measured on the
# {glue:text}`lrd_families-task_groups` disjoint groups of texts give each family's split-group
# reliability (the mean Spearman between two groups' curves, stepped up to all the texts by
# Spearman-Brown), and the correlation is divided by the square root of the two reliabilities
# (Spearman's correction for attenuation; an undefined correction counts as redundant). The
# table gives each model's mean corrected $|\rho|$ per pair; the correction is our
# reconstruction.
#
# **Verdict.** {glue:text}`lrd_families-verdict_complementarity`

# %% tags=["hide-input"]
correlations = family_correlations(results, reliability=curve_reliability(tables.group_results)
                                   if len(tables.group_results) else None)
glue("margin", f"{COMPLEMENTARITY_MARGIN:g}")
lrd.tables.rounded(redundancy_table(correlations), 2)

# %% [markdown]
# **Per model.** The test above asks whether the panel's models, as a population, keep every pair
# below the margin; whether *one* model does is asked with its tasks as the replicates (each task
# is measured on its own texts, so a task's corrected $|\rho|$ carries both the texts' noise and
# what the task changes): for each pair, a one-sided t-test of "mean $|\rho|$ over the model's
# tasks below the margin", all three pairs required (`p (all)`, the largest), Holm-adjusted over
# the models (`p (all, Holm)`); `low` and `high` bound the mean with 95% confidence. With
# {glue:text}`lrd_families-n_family_tasks` tasks a model needs its pairs well below the margin and
# consistent across tasks.

# %% tags=["hide-input"]
glue("n_family_tasks", int(correlations.groupby("model")["task"].nunique().min()))
lrd.tables.rounded(complementarity_model_tests(correlations), 3)

# %% [markdown]
# ## The claims against our measurement
#
# | claim | paper | our verdict |
# |---|---|---|
# | **Architectural differences in LRD** | {glue:text}`lrd_families-paper_architecture` | {glue:text}`lrd_families-verdict_architecture` |
# | **…not apparent from the final layer alone** | {glue:text}`lrd_families-paper_final_layer` | {glue:text}`lrd_families-verdict_final_layer` |
# | **Task-level differences** (judged: dataset differences beyond the final layer's statistics) | {glue:text}`lrd_families-paper_task` | {glue:text}`lrd_families-verdict_task` |
# | **Complementary, not redundant** (judged: no two families strongly correlated) | {glue:text}`lrd_families-paper_complementarity` | {glue:text}`lrd_families-verdict_complementarity` |
#
# A verdict is "reproduced" only when the test's p-value in the paper's direction is at most
# 0.05, "contradicted" when the opposite is significant, "not testable" when the panel is too
# small for any result to get there, and "inconclusive" otherwise.
#
# The panel is small ({glue:text}`lrd_families-n_models` models against the paper's 31) and
# our tasks are offline sets rather than 30 MTEB tasks; NRS, GFMI, the model-level means, the
# comparison with the final layer, the final layer's statistics and the near-identity margin are
# our reconstructions. The
# decoder-based models are {glue:text}`lrd_families-decoders` ({glue:text}`lrd_families-families`):
# the paper's decoder-based embedders and base LLMs are larger.

# %% tags=["hide-input"]
glue("n_models", len(models))
_ = glue.judge("lrd.architecture", {"scores": scores}, measures=LRD_SCORES, note=panel_note,
               section="encoders-against-decoders")
_ = glue.judge("lrd.final_layer", {"scores": scores}, measures=LRD_SCORES, final=FINAL_LAYER_SCORES, note=panel_note,
               section="encoders-against-decoders")
_ = glue.judge("lrd.task", {"scores": equal, "groups": tables.group_scores}, measures=RANK_FREE_SCORES,
               section="task-against-model")
_ = glue.judge("lrd.complementarity", {"correlations": correlations}, section="complementary-families")
glue_path = glue.save(results_dir)
