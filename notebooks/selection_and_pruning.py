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
# # Label-free model selection and measurement-guided pruning: every signal head to head
#
# {cite:t}`jiang2026lrd` put their layer-wise measurements to two uses (abstract):
#
# > {glue:text}`selection_and_pruning-claim_selection`
#
# > {glue:text}`selection_and_pruning-claim_pruning` {glue:text}`selection_and_pruning-claim_frenet_nrs`
#
# This chapter runs both applications on our offline panel with every layer-relevance signal
# this book implements: the LRD families (chapter *LRD measurement families*), the mid-layer
# metrics of {cite:t}`skean2025layer` (chapter *Mid-layer superiority*) and the relevance
# measures of {cite:t}`hinostroza2026rethinking` (chapter *Cosine similarity against
# ablation*), using the same functions and the same cached extractions as those chapters.

# %% tags=["parameters"]
models = ["minilm", "mpnet", "smollm2", "gemma3", "qwen"]  # offline keys, hub ids or folders
tasks = ["sst2", "sarcasm", "mmlu_subject", "lee50"]  # embedding tasks, as mid_layer (its cached states)
n_samples = 300  # rows per embedding task, as mid_layer and lrd_families (shared cache)
pooling = "mean"
k = 10  # NRS neighbourhood size
variance = 0.95  # Frenet rank rule
n_bootstrap = 3  # clustering experiments per score, as mid_layer
aug_task = "sarcasm"  # DiME: task whose prompts are augmented, as mid_layer (its cached views)
n_aug_prompts = 16
n_views = 16
mc_tasks = ["copa"]  # decoders' downstream score: multiple-choice accuracy (add "arc_easy": ~3x the cost)
n_items = 24  # evaluation items per multiple-choice task (test split)
n_calibration = 8  # calibration items per multiple-choice task (train split): decoders' labelled rules
calibration_task = "mrpc"  # texts whose LRD profile guides the label-free rules; encoders' labelled rules
n_encoder_calibration = 100  # rows (pairs) of calibration_task that rank the encoders' labelled rules
pruning_models = ["minilm", "smollm2", "gemma3"]  # models pruned (mpnet: ~5x minilm's cost; qwen: ~3x smollm2's)
budgets = [0.05, 0.10, 0.15, 0.20]  # shares of blocks removed
n_random = 5  # random prune orders
batch_size = 32
threads = 0  # torch CPU threads, 0 = torch default (all cores); 1 is faster on a CPU shared with other jobs
device = "cpu"
results_dir = "results"

# %% tags=["hide-input"]
import time

import pandas as pd
import torch

import lrd
from lrd.papers import LRD_CLAIMS
from lrd.pruning import (PRUNE_RULES, best_median_verdict, budget_blocks, budget_pattern_verdict, only_rule_verdict,
                         rule_summary, winners)
from lrd.report import Glue, save_results
from lrd.selection import selection_table, selection_verdict
from lrd.units import compute, selection_and_pruning_units

lrd.book.check_parameters("selection_and_pruning", globals())
if threads:
    torch.set_num_threads(threads)
glue = Glue("selection_and_pruning")
for key in ("selection", "pruning", "pruning_frenet_nrs"):
    glue(f"claim_{'frenet_nrs' if key == 'pruning_frenet_nrs' else key}", LRD_CLAIMS[key].text)
t_start = time.perf_counter()


# %% [markdown]
# ## One pass over the panel
#
# For every model: its pooled states on the {glue:text}`selection_and_pruning-n_tasks`
# embedding tasks ({glue:text}`selection_and_pruning-n_samples` rows each, the same extraction
# as the mid-layer chapter, so they come from the cache), the LRD profile and the mid-layer
# metrics of each, and the MTEB main score of its last layer; for decoders, the
# multiple-choice accuracy on {glue:text}`selection_and_pruning-n_items` test items of each of
# {glue:text}`selection_and_pruning-mc_tasks`; and for the models we prune, every prune rule's
# removal sets scored on the same tasks.

# %% tags=["hide-input"]
score_rows, dime_rows, kinds, n_blocks, change_rows, plans, mc_intact, seconds = [], {}, {}, {}, [], {}, {}, {}
units = selection_and_pruning_units(models, tasks, n_samples, pooling, k, variance, n_bootstrap, aug_task, n_aug_prompts,
                                    n_views, mc_tasks, n_items, n_calibration, calibration_task, n_encoder_calibration,
                                    pruning_models, budgets, n_random, batch_size, device=device)
for name, done in zip(models, compute(units)):  # one cached unit per model (lrd.units.selection_model)
    kinds[name], n_blocks[name], seconds[name] = done["kind"], done["n_blocks"], done["seconds"]
    score_rows += done["score_rows"]
    dime_rows[name] = done["dime"]
    change_rows += done["changes"]
    if done["plan"] is not None:
        plans[name] = done["plan"]
    if done["mc_intact"] is not None:
        mc_intact[name] = done["mc_intact"]
scores = pd.DataFrame(score_rows)
changes = pd.concat(change_rows, ignore_index=True) if change_rows else pd.DataFrame()
csv_path = save_results(scores, "selection_and_pruning", results_dir)

# %% [markdown]
# ## Model selection
#
# The model-level scores of the LRD paper (end-to-end displacement $d_{0,L}$, mean
# chance-adjusted NRS over the transitions, mean GFMI over layers $0..L-1$; `lrd.metrics.model_scores`) and two of the mid-layer
# chapter's metrics averaged over layers (normalised dataset entropy on every task; DiME on
# {glue:text}`selection_and_pruning-n_aug_prompts` augmented prompts of
# {glue:text}`selection_and_pruning-aug_task`, {glue:text}`selection_and_pruning-n_views`
# views) are label-free. A model's **downstream score** is the mean over the embedding tasks of
# its last layer's MTEB main score (the mid-layer protocol), and for decoders also the mean
# multiple-choice accuracy on {glue:text}`selection_and_pruning-mc_tasks`
# ({glue:text}`selection_and_pruning-n_items` test items each, the same items the pruning
# section evaluates), our stand-in for the paper's base-LLM MMLU panel. Per model and task:

# %% tags=["hide-input"]
glue("n_tasks", len(tasks))
glue("n_samples", n_samples)
glue("n_items", n_items)
glue("mc_tasks", ", ".join(mc_tasks))
glue("n_aug_prompts", n_aug_prompts)
glue("aug_task", aug_task)
glue("n_views", n_views)
LRD_SCORES = ["d_0L", "mean NRS (adjusted)", "mean GFMI"]
OTHER_SCORES = ["mean dataset entropy", "DiME"]
lrd.report.rounded(scores.set_index(["model", "task"])[LRD_SCORES + ["mean dataset entropy", "last-layer score"]])

# %% [markdown]
# Averaged over tasks, one row per model, beside the downstream scores:

# %% tags=["hide-input"]
per_model = scores.groupby("model", sort=False)[LRD_SCORES + ["mean dataset entropy", "last-layer score"]].mean()
per_model["DiME"] = pd.Series(dime_rows)
per_model["kind"] = pd.Series(kinds)
embedding_avg = per_model.pop("last-layer score").rename("embedding average")
mc_avg = pd.Series(mc_intact, name="multiple-choice accuracy", dtype=float)
lrd.report.rounded(per_model.join(embedding_avg).join(mc_avg))

# %% [markdown]
# Spearman's $\rho$ of each score with the downstream score across models, and its exact
# one-sided p-value: the share of the $n!$ assignments of the downstream scores to the models
# whose $\rho$ is at least as large (`lrd.selection`). **What $n$ models can show.** With
# {glue:text}`selection_and_pruning-n_sel` models the smallest possible p-value is
# {glue:text}`selection_and_pruning-p_min_sel` (a perfect ranking), so one score can reach
# $p \le 0.05$ only with a near-perfect ranking, and a single score's $\rho$ says nothing
# about which of two scores is better (their difference is well within noise). With
# {glue:text}`selection_and_pruning-n_dec` decoders the smallest p-value is
# {glue:text}`selection_and_pruning-p_min_dec`: no result on them can be told from chance.

# %% tags=["hide-input"]
from math import factorial

glue("n_sel", int(embedding_avg.notna().sum()))
glue("p_min_sel", f"{1 / factorial(int(embedding_avg.notna().sum())):.3g}")
glue("n_dec", len(mc_avg))
glue("p_min_dec", f"{1 / factorial(len(mc_avg)):.3g}" if len(mc_avg) else "n/a")
ALL_SCORES = LRD_SCORES + OTHER_SCORES
tables = {"embedding average (all models)": selection_table(per_model, embedding_avg, ALL_SCORES)}
if len(mc_avg) >= 2:
    tables["multiple-choice accuracy (decoders)"] = selection_table(per_model.loc[mc_avg.index], mc_avg, ALL_SCORES)
lrd.report.rounded(pd.concat(tables, names=["downstream", "score"]))

# %% tags=["hide-input"] mystnb={"figure": {"name": "selection_and_pruning-fig-selection", "caption": "Embedding average (mean MTEB main score of the last layer over the embedding tasks) against each model-level LRD score, one point per model (encoders circles, decoders squares)."}}
lrd.plots.selection_scatter(per_model, embedding_avg, LRD_SCORES, ylabel="embedding average")

# %% [markdown]
# The verdict asks for all three LRD scores together: the test statistic is the *smallest* of
# their three correlations, and the same permutation of the downstream scores is applied to
# all three, so "all three positive" is tested once, not three times.
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_selection` |
# | **All three positive, $d_{0,L}$ strongest (embedding average)** | {glue:text}`selection_and_pruning-verdict_selection` |
# | **Same direction on the decoders (multiple-choice accuracy)** | {glue:text}`selection_and_pruning-verdict_selection_llm` |

# %% tags=["hide-input"]
glue.verdict("selection", claim=LRD_CLAIMS["selection"], aspect="all three scores correlate positively, d_0L strongest",
             verdict=selection_verdict(per_model, embedding_avg, LRD_SCORES, strongest="d_0L"),
             section="model-selection")
_ = glue.verdict("selection_llm", claim=LRD_CLAIMS["selection"], aspect="same direction on a base-LLM panel",
                 verdict=selection_verdict(per_model.loc[mc_avg.index], mc_avg, LRD_SCORES, strongest="d_0L",
                                           panel="decoders") if len(mc_avg) else "not testable: no decoder in the panel",
                 section="model-selection")

# %% [markdown]
# ## Pruning
#
# Each rule orders the blocks of a model, and a budget removes the first $k$ of them, all at
# once (`lrd.pruning`, one sentence per rule):
#
# {glue:text}`selection_and_pruning-rule_list`
#
# **Budgets.** {glue:text}`selection_and_pruning-budget_list` of the $L$ blocks, rounded half
# up with at least one block: $k = \max(1, \lfloor pL + \tfrac12 \rfloor)$ (the paper does
# not say how it rounds). Per model: {glue:text}`selection_and_pruning-budget_blocks`.
#
# **Data.** The label-free rules (Frenet, NRS, GFMI, and the angular distance for encoders)
# read the LRD profile of the model's pooled states on {glue:text}`selection_and_pruning-n_samples`
# unlabelled texts of {glue:text}`selection_and_pruning-calibration_task` (our choice: a task
# that is not evaluated, whose states the LRD chapter caches). The labelled rules are ranked on
# a calibration set disjoint from the evaluation: for decoders
# {glue:text}`selection_and_pruning-n_calibration` train-split items of each multiple-choice
# task (exactly the cosine-vs-ablation chapter's `calibration_plan`: cosine, accuracy,
# Taylor, angular distance of the last token, random), for encoders the MTEB score on
# {glue:text}`selection_and_pruning-n_encoder_calibration` rows of
# {glue:text}`selection_and_pruning-calibration_task`. Random uses
# {glue:text}`selection_and_pruning-n_random` seeds. **Removal** skips the blocks (the
# residual stream passes them unchanged), computed by resuming from the intact pass, which
# equals `lrd.ablation.removed_layers` (tested). **Downstream score**: multiple-choice
# accuracy on the evaluation items for decoders; for encoders the MTEB main score of the
# pruned model's mean-pooled output on each embedding task.

# %% tags=["hide-input"]
glue("rule_list", "; ".join(f"{r}: {PRUNE_RULES[r]}" for r in PRUNE_RULES))
glue("budget_list", ", ".join(f"{b:.0%}" for b in budgets))
glue("budget_blocks", "; ".join(f"{m} (L = {n_blocks[m]}): " + ", ".join(str(budget_blocks(n_blocks[m], b))
                                                                         for b in budgets) for m in plans) or "none")
glue("calibration_task", calibration_task)
glue("n_calibration", n_calibration)
glue("n_encoder_calibration", n_encoder_calibration)
glue("n_random", n_random)
lrd.report.rounded(changes.pivot_table(index=["kind", "model", "task"], columns=["fraction", "rule"], values="change",
                                       aggfunc="median").T) if not changes.empty else None

# %% [markdown]
# The table above gives the change of the downstream score (pruned minus intact; random: the
# median over seeds) for every model, task, budget and rule. Summarised over the
# (model, task) pairs: each rule's median change, random's median and its spread (the
# smallest and largest median over pairs among the seeds), and whether the rule **beats
# random**: the paired differences between the rule's change and random's mean change on the
# same pair have a positive mean beyond chance (exact sign-flip test over the
# {glue:text}`selection_and_pruning-n_pairs` pairs; smallest attainable p
# {glue:text}`selection_and_pruning-p_min_pairs`). Pairs of the same model are not
# independent, so this p-value is optimistic; read it with the spread.

# %% tags=["hide-input"]
summary = rule_summary(changes) if not changes.empty else pd.DataFrame()
n_pairs = int(summary["pairs"].max()) if not summary.empty else 0
glue("n_pairs", n_pairs)
glue("p_min_pairs", f"{2.0 ** -n_pairs:.2g}" if n_pairs else "n/a")
lrd.report.rounded(summary.set_index(["fraction", "rule"])) if not summary.empty else None

# %% [markdown]
# ## Which signal wins at which budget
#
# {numref}`selection_and_pruning-fig-winners` separates encoders from decoders: every cell is
# a rule's median change minus random's median at one budget, the box marks the best rule of
# each budget and a dot the rules that beat random beyond chance within that kind (with few
# pairs per kind this may be impossible: the smallest attainable p-value is
# {glue:text}`selection_and_pruning-p_min_kind`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "selection_and_pruning-fig-winners", "caption": "Median change of the downstream score (pruned minus intact, over model-task pairs) minus random pruning's, per prune rule and budget, for encoders and decoders; boxed: the best rule at each budget; dot: beats random beyond chance (sign-flip test)."}}
by_kind = rule_summary(changes, by="kind") if not changes.empty else pd.DataFrame()
glue("p_min_kind", ", ".join(f"{g}s {p:.2g}" for g, p in by_kind.groupby("kind")["p_min"].max().items())
     if not by_kind.empty else "n/a")
lrd.plots.pruning_winners(by_kind) if not by_kind.empty else None

# %% tags=["hide-input"]
lrd.report.rounded(winners(by_kind, by="kind").set_index(["kind", "fraction"])) if not by_kind.empty else None

# %% [markdown]
# ## The pruning claims against our measurement
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_pruning` |
# | **GFMI the only measurement rule beating random at 15% and 20%** | {glue:text}`selection_and_pruning-verdict_gfmi_only` |
# | **GFMI best median change at every budget** | {glue:text}`selection_and_pruning-verdict_gfmi_median` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_frenet_nrs` |
# | **Frenet effective only at the lightest budget** | {glue:text}`selection_and_pruning-verdict_frenet` |
# | **NRS does not transfer to pruning** | {glue:text}`selection_and_pruning-verdict_nrs` |
#
# "Beats random" is the sign-flip test above; "best median" compares GFMI with the other two
# measurement-guided rules, and calls a margin no larger than the random orders' spread
# noise. Caveats: our panel has {glue:text}`selection_and_pruning-n_pruned` pruned models
# against the paper's 31, few evaluation items for the decoders (accuracy moves in steps of
# {glue:text}`selection_and_pruning-quantum`), NRS and GFMI are our reconstructions, and on the
# small encoders a 5% budget already removes a whole block. The chapter ran in
# {glue:text}`selection_and_pruning-minutes` minutes.

# %% tags=["hide-input"]
glue("n_pruned", len(plans))
glue("quantum", f"{1 / n_items:.3f}")
heavy = [b for b in budgets if round(b, 6) in (0.15, 0.2)]
light = [min(budgets)] if budgets else []
if summary.empty:
    v_only = v_med = v_fr = v_nrs = "not testable: no model was pruned"
else:
    v_only = only_rule_verdict(summary, fractions=heavy or budgets[-2:])
    v_med = best_median_verdict(summary)
    v_fr = budget_pattern_verdict(summary, "Frenet (velocity)", beats_at=light)
    v_nrs = budget_pattern_verdict(summary, "NRS", beats_at=[])
glue.verdict("gfmi_only", claim=LRD_CLAIMS["pruning"], verdict=v_only,
             aspect="GFMI the only measurement-guided rule beating random at 15% and 20%",
             section="the-pruning-claims-against-our-measurement")
glue.verdict("gfmi_median", claim=LRD_CLAIMS["pruning"], verdict=v_med, aspect="GFMI best median change at every budget",
             section="the-pruning-claims-against-our-measurement")
glue.verdict("frenet", claim=LRD_CLAIMS["pruning_frenet_nrs"], verdict=v_fr, aspect="Frenet effective only at the lightest budget",
             section="the-pruning-claims-against-our-measurement")
glue.verdict("nrs", claim=LRD_CLAIMS["pruning_frenet_nrs"], verdict=v_nrs, aspect="NRS does not transfer to pruning",
             section="the-pruning-claims-against-our-measurement")
if not changes.empty:
    save_results(changes.assign(removed=changes["removed"].map(lambda s: " ".join(map(str, s)))),
                 "selection_and_pruning_changes", results_dir)
glue_path = glue.save(results_dir)

# %% tags=["hide-input", "nbval-ignore-output"]
glue("minutes", f"{(time.perf_counter() - t_start) / 60:.1f}", volatile=True)
pd.DataFrame(seconds).T.round(0)  # wall seconds per model: scores, prune orders, total (with evaluation)
