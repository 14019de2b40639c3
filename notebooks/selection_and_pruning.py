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
# > {glue:text}`selection_and_pruning-claim_selection` {glue:text}`selection_and_pruning-claim_selection_strongest` {glue:text}`selection_and_pruning-claim_selection_llm`
#
# > {glue:text}`selection_and_pruning-claim_pruning_gfmi_only` {glue:text}`selection_and_pruning-claim_pruning_gfmi_median`
# > {glue:text}`selection_and_pruning-claim_pruning_frenet` {glue:text}`selection_and_pruning-claim_pruning_nrs`
#
# This chapter runs both applications on our offline panel with every layer-relevance signal
# this book implements: the LRD families (chapter *LRD measurement families*), the mid-layer
# metrics of {cite:t}`skean2025layer` (chapter *Mid-layer superiority*) and the relevance
# measures of {cite:t}`hinostroza2026rethinking` (chapter *Cosine similarity against
# ablation*), using the same functions and the same cached extractions as those chapters.
# Each of the six claims is judged by a stated test whose unit is the **model** (a model's
# tasks are averaged first: they are not independent draws), with the smallest p-value our
# panel can reach beside it (`lrd.verdicts.selection`, `lrd.verdicts.pruning`).

# %% tags=["parameters"]
models = ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]  # offline keys, hub ids or folders
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
margin = 0.02  # non-superiority margin of "does not beat random", score points on the 0-1 scale (lrd.verdicts.pruning)
batch_size = 32
threads = 0  # torch CPU threads, 0 for torch's default (all cores); 1 is faster on a CPU shared with other jobs
device = "cpu"
dtype = "bfloat16"  # what the models compute in: "float32", "bfloat16" (accelerators, CPUs with AVX512-BF16) or "float16" (accelerators); in every cache key
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd

import lrd
from lrd.methods.pruning import PRUNE_RULES, budget_blocks
from lrd.book.glue import save_results
from lrd.engine.models import model_kinds
from lrd.verdicts.claims import grouping_table
from lrd.units import compute
from lrd.units.selection_and_pruning import selection_and_pruning_units, selection_tables
from lrd.verdicts.pruning import (PRUNING_RECONSTRUCTION, chance_table, rule_item_tests, mark_informative, rule_summary, winners)
from lrd.verdicts.stats import permutation_p_min, sign_flip_p_min
from lrd.verdicts.selection import (LRD_SCORES, selection_table)

glue = lrd.book.open_chapter("selection_and_pruning", globals(),
                             claims={"claim_{name}": "text", "paper_{name}": "paper_effect"})


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
units = selection_and_pruning_units(
    models=models, tasks=tasks, n_samples=n_samples, pooling=pooling, k=k, variance=variance, n_bootstrap=n_bootstrap,
    aug_task=aug_task, n_aug_prompts=n_aug_prompts, n_views=n_views, mc_tasks=mc_tasks, n_items=n_items,
    n_calibration=n_calibration, calibration_task=calibration_task, n_encoder_calibration=n_encoder_calibration,
    pruning_models=pruning_models, budgets=budgets, n_random=n_random, batch_size=batch_size, device=device, dtype=dtype)
tables = selection_tables(models, compute(units))  # one cached unit per model (lrd.units.selection_and_pruning)
scores, changes, dime_rows, kinds, sources = tables.scores, tables.changes, tables.dime, tables.kinds, tables.sources
n_blocks, plans, mc_intact, mc_items, seconds = tables.n_blocks, tables.plans, tables.mc_intact, tables.mc_items, tables.seconds
item_changes = tables.item_changes  # pruned decoders' per-item outcomes: the per-model evidence of the prune rules
csv_path = save_results(scores, "selection_and_pruning", results_dir)

# %% [markdown]
# **Which models each test uses.** Model selection ranks every model of the panel; the base-LLM
# claim ranks the language models only (of which the table of the first chapter says which are
# base and which instruction-tuned); the pruning claims are judged on the models pruned:

# %% tags=["hide-input"]
grouping_table(model_kinds(models), "selection_and_pruning", pruned=pruning_models)

# %% [markdown]
# **What the decoders' accuracy is worth.** A multiple-choice accuracy on a few items is only
# a downstream score if it is above chance. Chance is measured, not assumed: the accuracy of
# the same answers when the gold labels are randomly reassigned to the items (10 000
# permutations; this keeps a model's preference for one answer position and the share of each
# gold position, so a model that always picks the first choice is exactly at chance). Intact
# decoders on {glue:text}`selection_and_pruning-mc_tasks`:

# %% tags=["hide-input"]
chance = chance_table(mc_items)
glue("n_dec_above", int(chance.groupby("model")["above chance"].all().sum()))
glue("n_dec_total", chance["model"].nunique())
lrd.tables.rounded(chance.set_index(["model", "task"]))

# %% [markdown]
# {glue:text}`selection_and_pruning-n_dec_above` of {glue:text}`selection_and_pruning-n_dec_total`
# decoders are above chance (p <= 0.05) on every multiple-choice task. Where a decoder is not,
# its multiple-choice accuracy ranks nothing and its pruning changes are noise: such
# model-task pairs are left out of the pruning tests below, and each verdict names them.
#
# ## Model selection
#
# The model-level scores of the LRD paper (end-to-end displacement $d_{0,L}$, mean
# chance-adjusted NRS over the transitions, mean GFMI over layers $0..L-1$; {py:func}`lrd.metrics.model_scores`,
# our reconstruction of scores the paper's digest does not fully define) and two of the mid-layer
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
LRD = list(LRD_SCORES)
OTHER_SCORES = ["mean dataset entropy", "DiME"]
lrd.tables.rounded(scores.set_index(["model", "task"])[LRD + ["mean dataset entropy", "last-layer score"]])

# %% [markdown]
# Averaged over tasks, one row per model, beside the downstream scores:

# %% tags=["hide-input"]
per_model = scores.groupby("model", sort=False)[LRD + ["mean dataset entropy", "last-layer score"]].mean()
per_model["DiME"] = pd.Series(dime_rows)
per_model["kind"] = pd.Series(kinds)
embedding_avg = per_model.pop("last-layer score").rename("embedding average")
mc_avg = pd.Series(mc_intact, name="multiple-choice accuracy", dtype=float)
lrd.tables.rounded(per_model.join(embedding_avg).join(mc_avg))

# %% [markdown]
# Spearman's $\rho$ of each score with the downstream score across models, and its exact
# one-sided p-value: the share of the $n!$ assignments of the downstream scores to the models
# whose $\rho$ is at least as large (each score on its own here; the verdicts below test the
# three LRD scores jointly). With {glue:text}`selection_and_pruning-n_sel` models the smallest
# possible p-value is {glue:text}`selection_and_pruning-p_min_sel` (a perfect ranking); with
# {glue:text}`selection_and_pruning-n_dec` decoders it is {glue:text}`selection_and_pruning-p_min_dec`.

# %% tags=["hide-input"]
n_sel, n_dec = int(embedding_avg.notna().sum()), len(mc_avg)
glue("n_sel", n_sel)
glue("p_min_sel", f"{permutation_p_min(n_sel):.3g}")
glue("n_dec", n_dec)
glue("p_min_dec", f"{permutation_p_min(n_dec):.3g}" if n_dec else "n/a")
ALL_SCORES = LRD + OTHER_SCORES
tables = {"embedding average (all models)": selection_table(per_model, embedding_avg, ALL_SCORES)}
if len(mc_avg) >= 2:
    tables["multiple-choice accuracy (decoders)"] = selection_table(per_model.loc[mc_avg.index], mc_avg, ALL_SCORES)
lrd.tables.rounded(pd.concat(tables, names=["downstream", "score"]))

# %% tags=["hide-input"] mystnb={"figure": {"name": "selection_and_pruning-fig-selection", "caption": "Embedding average (mean MTEB main score of the last layer over the embedding tasks) against each model-level LRD score, one point per model (encoders circles, decoders squares)."}}
lrd.book.plots.selection_scatter(per_model, embedding_avg, LRD, ylabel="embedding average")

# %% [markdown]
# **How the selection claim is judged.** The claim has two parts, judged as two claims:
#
# 1. *All three scores correlate positively*: the statistic is the *smallest* of the three
#    correlations, and the same permutation of the downstream scores is applied to all three,
#    so "all three positive" is tested once, not three times.
# 2. *$d_{0,L}$ is the strongest*: for each other score, the difference of the two correlations
#    is a sum of one contribution per model, $\sum_m (a_m - b_m) y_m$ over centred ranks;
#    swapping the two scores' ranks within a model flips its contribution, so a sign-flip test
#    over models asks whether $d_{0,L}$ tracks the downstream score better than chance would
#    allow. The model of middle downstream rank contributes nothing, so this part needs six
#    models to reach 0.05 ({glue:text}`selection_and_pruning-n_sel` here).
#
# Part 1 is contradicted if some score correlates negatively beyond chance, part 2 if another
# score is stronger than $d_{0,L}$ beyond chance (Bonferroni over those tests). The decoder claim ("the same
# direction") is part 1 alone on the decoders' multiple-choice accuracy. Our decoders are not
# the paper's base LLMs: {glue:text}`selection_and_pruning-decoder_sources`.
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_selection` ({glue:text}`selection_and_pruning-paper_selection`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_selection` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_selection_strongest` ({glue:text}`selection_and_pruning-paper_selection_strongest`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_selection_strongest` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_selection_llm` ({glue:text}`selection_and_pruning-paper_selection_llm`) |
# | **Our verdict (decoders, multiple-choice accuracy)** | {glue:text}`selection_and_pruning-verdict_selection_llm` |

# %% tags=["hide-input"]
decoders = list(mc_avg.index)
glue("decoder_sources", "; ".join(f"{m} is {sources[m]}" for m in decoders) or "none in this panel")
downstream_note = f"downstream score: mean MTEB main score of the last layer over {', '.join(tasks)}"
_ = glue.judge("lrd.selection", {"scores": per_model, "downstream": embedding_avg}, note=downstream_note,
               section="model-selection")
_ = glue.judge("lrd.selection_strongest", {"scores": per_model, "downstream": embedding_avg}, note=downstream_note,
               section="model-selection")
_ = glue.judge("lrd.selection_llm", {"scores": per_model.loc[decoders], "downstream": mc_avg, "sources": sources,
                                    "chance": chance},
               downstream_name=f"multiple-choice accuracy on {', '.join(mc_tasks)} ({n_items} items each)",
               section="model-selection")

# %% [markdown]
# ## Pruning
#
# Each rule orders the blocks of a model, and a budget removes the first $k$ of them, all at
# once (`lrd.methods.pruning`, one sentence per rule; the three LRD rules are **our reconstruction**:
# the paper's digest does not define them to the letter):
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
# equals {py:func}`lrd.removed_layers` (tested). **Downstream score**: multiple-choice
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
lrd.tables.rounded(changes.pivot_table(index=["kind", "model", "task"], columns=["fraction", "rule"], values="change",
                                       aggfunc="median").T)

# %% [markdown]
# The table above gives the change of the downstream score (pruned minus intact; random: the
# median over seeds) for every model, task, budget and rule. **The unit is the model**: a
# model's tasks are averaged (random's seeds first), and a rule's difference from random is
# taken within each model. Summarised over the {glue:text}`selection_and_pruning-n_units`
# pruned models whose scores are informative: each rule's median change, random's median, the
# mean difference from random with its 95% interval, and whether the rule **beats random**
# (exact one-sided sign-flip test over models; the smallest p-value
# {glue:text}`selection_and_pruning-n_units` models allow is
# {glue:text}`selection_and_pruning-p_min_units`, so fewer than five models can never show it).

# %% tags=["hide-input"]
informative = mark_informative(changes, chance)
summary = rule_summary(informative)
n_units = int(max(summary["models"], default=0))
glue("n_units", n_units)
glue("p_min_units", f"{sign_flip_p_min(n_units):.2g}" if n_units else "n/a (no model)")
lrd.tables.rounded(summary.set_index(["fraction", "rule"]).sort_index())

# %% [markdown]
# ## Which signal wins at which budget
#
# {numref}`selection_and_pruning-fig-winners` separates encoders from decoders: every cell is
# a rule's median change minus random's median at one budget (over models, each model's tasks
# averaged), the box marks the best rule of each budget and a dot the rules that beat random
# beyond chance within that kind (with few models per kind this may be impossible: the smallest
# attainable p-value is {glue:text}`selection_and_pruning-p_min_kind`). The boxes describe;
# they are not tests.

# %% tags=["hide-input"] mystnb={"figure": {"name": "selection_and_pruning-fig-winners", "caption": "Median change of the downstream score (pruned minus intact, over models, each model's tasks averaged) minus random pruning's, per prune rule and budget, for encoders and decoders; boxed: the best rule at each budget (a description); dot: beats random beyond chance (sign-flip test over models)."}}
by_kind = rule_summary(informative, by="kind")
glue("p_min_kind", ", ".join(f"{g}s {p:.2g}" for g, p in by_kind.groupby("kind")["p_min"].max().items())
     if not by_kind.empty else "n/a")
lrd.book.plots.pruning_winners(by_kind)

# %% tags=["hide-input"]
lrd.tables.rounded(winners(by_kind, by="kind").set_index(["kind", "fraction"]))

# %% [markdown]
# ## The pruning claims against our measurement
#
# Each claim is a test over models ($D_m$: a rule's change minus random's, model $m$'s tasks
# averaged):
#
# * "beats random" at a budget: exact sign-flip test of $\bar D > 0$;
# * "does not beat random" is a claim of absence, so it needs a **non-superiority test**: the
#   mean advantage over random is below a margin $m$ = {glue:text}`selection_and_pruning-margin`
#   points of the score (sign flips of $m - D$; our choice of margin: two points on the 0-1
#   scale, below which a rule is no better than random for choosing which blocks to drop). A
#   panel too small to show anything therefore cannot "reproduce" an absence;
# * a claim made of several parts needs every part (intersection-union: the largest p-value);
# * "best median change" compares GFMI with each other measurement rule by a paired sign-flip
#   test of the per-model difference at every budget (our reconstruction of the paper's
#   comparison of medians).
#
# {glue:text}`selection_and_pruning-reconstruction`
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_pruning_gfmi_only` ({glue:text}`selection_and_pruning-paper_pruning_gfmi_only`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_pruning_gfmi_only` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_pruning_gfmi_median` ({glue:text}`selection_and_pruning-paper_pruning_gfmi_median`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_pruning_gfmi_median` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_pruning_frenet` ({glue:text}`selection_and_pruning-paper_pruning_frenet`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_pruning_frenet` |
# | **Paper** (abstract) | {glue:text}`selection_and_pruning-claim_pruning_nrs` ({glue:text}`selection_and_pruning-paper_pruning_nrs`) |
# | **Our verdict** | {glue:text}`selection_and_pruning-verdict_pruning_nrs` |
#
# Caveats: our panel prunes {glue:text}`selection_and_pruning-n_pruned` models
# ({glue:text}`selection_and_pruning-n_units` with informative scores) against the paper's 31,
# so with fewer than five every pruning claim is "not testable" here; decoders are evaluated on
# few items (accuracy moves in steps of {glue:text}`selection_and_pruning-quantum`) and are
# instruct-tuned or base models dequantised from GGUF, not the paper's models; on the small
# encoders a 5% budget already removes a whole block. The chapter ran in
# {glue:text}`selection_and_pruning-minutes` minutes.

# %% tags=["hide-input"]
glue("n_pruned", len(plans))
glue("quantum", f"{1 / n_items:.3f}")
glue("margin", f"{margin:.2f}")
glue("reconstruction", "Reconstructions: " + PRUNING_RECONSTRUCTION + ".")
section = "the-pruning-claims-against-our-measurement"
pruning_tables = {"changes": informative, "items": item_changes, "chance": chance}
_ = glue.judge("lrd.pruning_gfmi_only", pruning_tables, margin=margin, section=section)
_ = glue.judge("lrd.pruning_gfmi_median", pruning_tables, section=section)
_ = glue.judge("lrd.pruning_frenet", pruning_tables, margin=margin, section=section)
_ = glue.judge("lrd.pruning_nrs", pruning_tables, margin=margin, section=section)
save_results(informative.assign(removed=informative["removed"].map(lambda s: " ".join(map(str, s)))),
             "selection_and_pruning_changes", results_dir)
glue_path = glue.save(results_dir)

# %% [markdown]
# **Per model.** Beside each cross-model verdict, the evidence in each pruned decoder above
# measured chance, over its multiple-choice test items: a rule's correctness on an item minus
# each random order's (the items and random's orders as two crossed random factors,
# `lrd.verdicts.stats.crossed_t_test`), one-sided t-tests of "beats random", Holm-adjusted over
# the decoders within each rule and budget (`p (Holm)`; a verdict's per-model count takes the
# largest p of its comparisons first). Encoders' scores (MTEB main scores) have no items, and
# claims of absence need far more items than these to show per model.

# %% tags=["hide-input"]
lrd.tables.rounded(rule_item_tests(item_changes, [("GFMI", "random", b) for b in budgets]
                                   + [("Frenet (velocity)", "random", b) for b in budgets]
                                   + [("NRS", "random", b) for b in budgets], chance=chance, combine=False), 3)

# %% tags=["hide-input", "nbval-ignore-output"]
glue("minutes", f"{glue.minutes():.1f}", volatile=True)
pd.DataFrame(seconds).T.round(0)  # wall seconds per model: scores, prune orders, total (with evaluation)
