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
# # Cosine similarity against ablation as a measure of layer relevance
#
# {cite:t}`hinostroza2026rethinking` argue that the cosine similarity between a layer's input and
# output, the usual way to call a layer unimportant, is a poor guide to what removing the layer
# costs. This chapter measures both notions of relevance on our offline decoders and an encoder,
# judges each of the paper's claims by a stated test, builds a network that illustrates the
# paper's theoretical point, and compares pruning rules. The paper's code and per-model tables
# were not available to us; we quote its claims from the abstract and from a digest of its
# introduction (our translation), and say where a procedure is our reconstruction.
#
# **Two relevances.** Block $l$ maps the residual stream $h_{l-1}$ to $h_l$. Its *cosine
# relevance* (ShortGPT's Block Influence) is
# $R^{\cos}_l = 1 - \overline{\cos(h_{l-1,t}, h_{l,t})}$, the mean over all tokens of all inputs,
# from one forward pass. Its *accuracy relevance* is $R^{\mathrm{acc}}_l = \mathrm{acc} -
# \mathrm{acc}_{\setminus l}$, the accuracy lost when the block is skipped (the residual stream
# passes it unchanged; {py:func}`lrd.removed_layers`). Accuracy is the multiple-choice `acc` of
# lm-evaluation-harness: the choice with the highest summed log-likelihood of its continuation
# (`lrd.engine.scoring`, checked against the harness's own `HFLM` in the tests).
#
# **Our decoders are not the paper's**: {glue:text}`cosine_vs_ablation-panel_note`. Accuracy
# relevance counts for a decoder and task only where the intact model is above *measured*
# chance: the intact model's predictions scored against gold answers drawn at random among each
# item's choices ({glue:text}`cosine_vs_ablation-n_chance` permutations,
# `lrd.engine.scoring.permuted_gold_accuracy`), one-sided p at most 0.05. A model that guesses moves its
# accuracy by noise when a block is removed, and no correlation with that noise means anything.

# %% tags=["parameters"]
models = ["smollm2", "gemma3", "qwen"]  # decoders: offline keys, hub ids or folders (add "qwen15": ~3x qwen's cost)
tasks = ["sciq", "arc_easy"]  # offline multiple-choice tasks (measured chance: the table below)
n_items = 32  # evaluation items per task (fixed seeded subset of the test split)
n_calibration = 16  # calibration items per task (train split) for the pruning ranking
pruning_models = ["smollm2", "gemma3"]  # decoders (of `models`) that are pruned
pruning_ks = [2, 4]  # numbers of blocks removed
n_random = 5  # random pruning orders
encoders = ["minilm"]  # add "mpnet" (12 blocks, ~5x the cost of minilm)
encoder_task = "sst2"
n_encoder = 500  # texts, as the other embedding chapters
encoder_scorer = "mteb"  # lrd.methods.relevance.ENCODER_SCORERS: "mteb" or "probe"
n_boot = 1000  # bootstrap resamples of items
n_splits = 20  # random half splits averaged in the split-half reliability
strong = 0.7  # equivalence margin of "weak or moderate": the conventional moderate/strong cut
margin = 0.1  # over/under-estimation margin in percentile ranks (our reconstruction)
min_reliability = 0.7  # least ranking reliability for a mis-estimation share to count
same = 0.9  # corrected between-task correlation above which two tasks' relevance counts as the same
batch_size = 32
threads = 0  # torch CPU threads, 0 for torch's default (all cores); 1 is faster on a CPU shared with other jobs
device = "cpu"
dtype = "bfloat16"  # what the models compute in: "float32", "bfloat16" (accelerators, CPUs with AVX512-BF16) or "float16" (accelerators); in every cache key
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd

import lrd
from lrd.methods.counterexample import counterexample
from lrd.methods.relevance import ENCODER_SCORER_DESCRIPTIONS
from lrd.book.glue import save_results
from lrd.engine.models import model_kinds, model_sources
from lrd.engine.packs import MODEL_PACKS
from lrd.verdicts.claims import COSINE_MISESTIMATE_SHARE, grouping_table
from lrd.units import compute
from lrd.units.cosine_vs_ablation import (collect_decoders, cosine_vs_ablation_units, encoder_tables,
                                          pruning_curves_table, pruning_items_table)
from lrd.verdicts.agreement import (agreement_summary, agreement_table, chance_table, estimation_by_margin,
                                    decoder_note, pruning_model_tests, replicates_of, task_agreement_table,
                                    unrelated_draws)

glue = lrd.book.open_chapter("cosine_vs_ablation", globals(), claims={
    "claim_{name}": "text", "claim_{name}_source": "source", "claim_{name}_number": "paper_effect"})
note = decoder_note(model_kinds(models).merge(model_sources(models), on="model"))  # carried by every verdict
_ = glue("panel_note", note)  # (the last line of the cell: its key is not shown)

# %% [markdown]
# ## Both relevances, per decoder, block and task
#
# Each decoder is scored on {glue:text}`cosine_vs_ablation-n_items` test items of each task, once
# intact and once with each block removed. The sweep resumes every removal from the intact
# run's recorded input of the removed block, so blocks before it are never recomputed
# (`lrd.methods.relevance.removal_sweep`; exact, see `benchmarks/ablation.py`). The claims are
# about decoders, so the tests use the panel's causal language models (the table below); of the
# offline panel's language models the removal sweeps leave out {glue:text}`cosine_vs_ablation-left_out`
# for the book's time budget (`-p models` adds them).

# %% tags=["hide-input"]
glue("n_items", n_items)
units = cosine_vs_ablation_units(models=models, tasks=tasks, n_items=n_items, n_calibration=n_calibration,
                                 pruning_models=pruning_models, pruning_ks=pruning_ks, n_random=n_random,
                                 encoders=encoders, encoder_task=encoder_task, n_encoder=n_encoder,
                                 encoder_scorer=encoder_scorer, batch_size=batch_size, device=device, dtype=dtype)
runs = collect_decoders(models, compute(units["decoders"]))  # one cached unit per decoder (lrd.units.cosine_vs_ablation.ablation_decoder)
relevance = runs.relevance
csv_path = save_results(relevance, "cosine_vs_ablation", results_dir)
panel_lms = [k for k, pack in MODEL_PACKS.items() if pack.info.get("kind") == "decoder"]
glue("left_out", ", ".join(m for m in panel_lms if m not in models) or "none")
glue("n_chance", len(next(iter(runs.chance_null.values()))))
chance = chance_table(runs.accuracy, runs.chance_null)
grouping_table(model_kinds([*models, *encoders]), "cosine_vs_ablation", pruned=pruning_models)

# %% [markdown]
# The paper's Figure 1 on our panel: cosine relevance (left) and accuracy relevance (right) of
# every block (x axis) for every task (rows), one row of panels per decoder. Accuracy relevance
# is measured on few items, so single blocks differ by multiples of
# {glue:text}`cosine_vs_ablation-quantum` (one item of {glue:text}`cosine_vs_ablation-n_items`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-heatmaps", "caption": "Cosine relevance (left) and accuracy relevance (right) of every block of each decoder, per task."}}
glue("quantum", 1 / n_items)
lrd.book.plots.relevance_heatmaps(relevance)

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-scatter", "caption": "Accuracy relevance against cosine relevance, one point per decoder block and task."}}
wide = relevance.pivot_table(index=["model", "task", "layer"], columns="measurement", values="value").reset_index()
lrd.book.plots.relevance_scatter(wide)

# %% [markdown]
# ## Does cosine relevance rank blocks like accuracy relevance?
#
# The paper (abstract):
#
# > {glue:text}`cosine_vs_ablation-claim_correlation`
#
# A claim that a correlation is *not strong* cannot be reproduced by failing to find a strong
# one: few items make accuracy relevance noisy, and noise pulls every correlation towards 0. So
# the correlation is first **corrected for the noise of the accuracy drops**. The items are split
# at random into halves ({glue:text}`cosine_vs_ablation-n_splits` splits), the two halves'
# relevance vectors are correlated over blocks and stepped up to the full length
# (Spearman-Brown): that is the reliability $R$ of the accuracy relevance, and the corrected
# correlation is $r / \sqrt{R}$ (Spearman's correction for attenuation; cosine relevance, a mean
# over every token, is held fixed). We use Pearson's $r$, for which the correction follows from
# classical test theory; for a rank correlation it does not (near-tied blocks stay shuffled
# however many items are added, and the corrected value stays biased towards 0), so Spearman's
# $\rho$ is shown uncorrected. The correlation type, the
# correction and the margin are our reconstruction: the paper's procedure is not in the text we
# have.
#
# **The test** (`lrd.verdicts.agreement.judge_correlation`): per decoder, the corrected
# correlation averaged over its tasks above chance; an equivalence test of
# $|r| <$ {glue:text}`cosine_vs_ablation-strong` (the conventional cut between moderate and
# strong) by two one-sided bootstrap tests over {glue:text}`cosine_vs_ablation-n_boot` resamples
# of the items; the claim is about the panel's models, so it must hold for every decoder
# (intersection-union test: $p = \max_m p_m$). A resample whose reliability is not positive has
# no defined correction and counts against any conclusion: noise gives "inconclusive", never
# "reproduced".

# %% tags=["hide-input"]
glue("n_boot", n_boot)
glue("n_splits", n_splits)
for name, value in lrd.book.designs.cosine_panel(runs.correct).items():  # the panel the appendix calibrates at
    glue(name, value)
glue("n_tasks", len(tasks))  # with block_counts, n_items and n_splits: the design the appendix calibrates at
glue("strong", strong)
reps = replicates_of(runs.correct, runs.cosine, n_boot=n_boot, n_splits=n_splits)
agreement = agreement_table(reps, margin=margin)
summary = agreement_summary(agreement, chance)
glue("spearman_max", f"{summary['spearman'].max():.2f}")
_ = glue.judge("cosine.correlation", {"agreement": agreement, "chance": chance}, margin=strong, note=note,
               section="does-cosine-relevance-rank-blocks-like-accuracy-relevance")
lrd.tables.rounded(summary.drop(columns=["over", "under", "mis-estimated", "unrelated"]))

# %% [markdown]
# The table gives, per decoder and task: intact accuracy, measured chance and the permutation
# p-value of the difference; Pearson's $r$, the split-half reliability of the accuracy relevance,
# the corrected correlation with its 95% bootstrap interval; and Spearman's $\rho$ with the
# reliability of the ranking. **Verdict:** {glue:text}`cosine_vs_ablation-verdict_correlation`
#
# The verdict rests on our choice of Pearson's $r$. Spearman's $\rho$, uncorrected and so if
# anything pulled towards 0, reaches {glue:text}`cosine_vs_ablation-spearman_max` on our panel:
# where it exceeds {glue:text}`cosine_vs_ablation-strong`, a reading of the claim as a rank
# correlation would call that decoder's correlation strong.
#
# ## Does cosine mis-estimate more than 90% of the blocks?
#
# The paper ({glue:text}`cosine_vs_ablation-claim_misestimate_source`):
#
# > {glue:text}`cosine_vs_ablation-claim_misestimate`
#
# The paper's definition of over- and under-estimation is not in the text we have. **Our
# reconstruction:** both relevances become percentile ranks within the decoder and task; cosine
# *over-estimates* a block whose cosine rank exceeds its accuracy rank by more than
# {glue:text}`cosine_vs_ablation-margin` of the range, and *under-estimates* it when the accuracy
# rank exceeds the cosine rank by that much. The share depends on that margin, and noise pulls it
# towards what **unrelated** rankings give (accuracy relevance assigned to blocks at random, an
# exact expectation): the table below shows both against the margin. At a margin of 0 every
# block whose two ranks differ at all counts, so even unrelated rankings mis-estimate nearly all
# blocks; at a third of the range, unrelated rankings mis-estimate fewer than half ($(1 - m)^2$
# for untied ranks).

# %% tags=["hide-input"]
glue("margin", f"{margin:.0%}")
lrd.tables.rounded(estimation_by_margin(reps).rename(columns={"ours": "share mis-estimated (ours)",
                                                               "unrelated": "share mis-estimated (unrelated rankings)"}))

# %% [markdown]
# **The test** (`judge_misestimate`): unrelated rankings already reach most of any share, so
# the paper's 90% is its description, not our threshold (above it cosine would have to be worse
# than random). We read the claim as: cosine places blocks no better than unrelated rankings, up
# to the {glue:text}`cosine_vs_ablation-misestimate_delta` of the blocks that the paper's share
# leaves. Per decoder, the share at the chosen margin averaged over its tasks above chance is
# compared with the unrelated rankings' share: "contradicted" when cosine's share is below theirs
# by more than {glue:text}`cosine_vs_ablation-misestimate_delta` in every decoder (a one-sided
# bootstrap test over items, intersection-union; item noise pulls the share towards the unrelated
# rankings', so this errs towards "inconclusive"). The permutation test of "better than random at
# all", which the claim allows, is shown beside it. The opposite, "no better than random",
# cannot be shown from measured drops: item noise alone pulls the share towards the unrelated
# rankings' share, so a verdict here is "contradicted" or "inconclusive", never "reproduced".
# No other statistic would mend that, in one decoder or across them: blocks whose removal costs
# nearly the same are ordered by differences that no feasible number of items resolves, and
# ordering them as cosine does barely changes the data, so the dashboard shows no per-model
# count for this claim ("n/a").
# The difference from unrelated rankings is shown with its bootstrap interval (resamples whose
# ranking reliability is below {glue:text}`cosine_vs_ablation-min_reliability` left out).
# **Verdict:**
# {glue:text}`cosine_vs_ablation-verdict_misestimate`

# %% tags=["hide-input"]
glue("min_reliability", min_reliability)
glue("misestimate_delta", f"{1 - COSINE_MISESTIMATE_SHARE:.0%}")
unrelated = unrelated_draws(reps, margin=margin, n_perm=n_boot)
_ = glue.judge("cosine.misestimate", {"agreement": agreement, "chance": chance, "unrelated": unrelated},
               min_reliability=min_reliability, note=note, section="does-cosine-mis-estimate-more-than-90-of-the-blocks")
lrd.tables.rounded(summary[["model", "task", "items", "rank reliability", "mis-estimated", "over", "under", "unrelated"]])

# %% [markdown]
# ## Does accuracy relevance depend on the dataset?
#
# The paper ({glue:text}`cosine_vs_ablation-claim_dataset_source`):
#
# > {glue:text}`cosine_vs_ablation-claim_dataset`
#
# Two tasks of one decoder always differ somewhat: each is measured on its own items. The
# question is whether they differ beyond that noise. Shuffling items between the tasks would not
# give a valid null, because the tasks differ in difficulty (a harder task loses less when a
# block is removed, whatever the block does). Instead, the two tasks' accuracy-relevance vectors
# are correlated over blocks and corrected for the noise of both (divided by the square root of
# the product of their split-half reliabilities): a decoder whose blocks matter alike on both
# tasks, up to a factor, has corrected correlation 1, the ceiling that item noise allows.
#
# **The test** (`judge_dataset`): per decoder, the corrected between-task correlation averaged
# over its pairs of tasks above chance; "reproduced" when it is below 1 by a one-sided bootstrap
# test over items (each task resampled on its own), "contradicted" when it is above
# {glue:text}`cosine_vs_ablation-same` (the same relevance, our margin), every decoder
# (intersection-union). **Verdict:** {glue:text}`cosine_vs_ablation-verdict_dataset`

# %% tags=["hide-input"]
glue("same", same)
task_agreement = task_agreement_table(reps)
_ = glue.judge("cosine.dataset", {"task_agreement": task_agreement, "chance": chance}, same=same, note=note,
               section="does-accuracy-relevance-depend-on-the-dataset")
lrd.tables.rounded(task_agreement[task_agreement["replicate"] == 0].drop(columns="replicate"))

# %% [markdown]
# ## Encoders: the same question with an embedding score
#
# For the encoders, accuracy is replaced by an embedding score of the mean-pooled final-layer
# states of {glue:text}`cosine_vs_ablation-encoder_task` ({glue:text}`cosine_vs_ablation-n_encoder`
# texts): {glue:text}`cosine_vs_ablation-encoder_scorer`, intact and with each block removed
# (resumed sweep as for the decoders). The score is a parameter (`encoder_scorer`). This is a
# description, not a test of a claim: the paper studies decoders, and one encoder is no panel.

# %% tags=["hide-input"]
glue("encoder_task", encoder_task)
glue("n_encoder", n_encoder)
glue("encoder_scorer", ENCODER_SCORER_DESCRIPTIONS[encoder_scorer])
encoder_relevance, encoder_summary = encoder_tables(encoders, compute(units["encoders"]), encoder_task)
lrd.tables.rounded(encoder_summary)

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-encoder-heatmaps", "caption": "Cosine relevance (left) and embedding-score relevance (right) of every block of each encoder."}}
lrd.book.plots.relevance_heatmaps(encoder_relevance) if encoders else None

# %% [markdown]
# ## A layer with almost no cosine relevance that the network cannot do without
#
# The paper (abstract):
#
# > {glue:text}`cosine_vs_ablation-claim_theory`
#
# The paper proves this; here it is **illustrated** by a network of our own construction (a
# demonstration that holds by design, not a reproduction of the proof): a residual network
# $h \mapsto h + f_l(h)$ of three blocks on inputs $x = M e_0 + s\,a\,e_1 + \varepsilon$ with
# label $s = \pm 1$. Blocks 1 and 3 add large, label-independent vectors; block 2 writes
# $c \tanh(k h_1)$ into a fresh coordinate, which is the only one the classifier reads. Block 2
# barely moves the state (cosine relevance about $c^2 / 2\|h\|^2$), but without it the read-out
# coordinate is 0 for every input and the classifier answers one class (`lrd.methods.counterexample`).

# %% tags=["hide-input"]
toy = counterexample()
toy_table = pd.DataFrame({"block": [1, 2, 3], "cosine relevance": toy.cosine_relevance,
                          "accuracy without the block": toy.accuracy_without,
                          "accuracy relevance": toy.accuracy_relevance})
glue("toy_cosine", f"{toy.cosine_relevance[1]:.1e}")
glue("toy_acc", f"{toy.accuracy:.0%}")
glue("toy_acc_without", f"{toy.accuracy_without[1]:.0%}")
_ = glue.judge("cosine.theory", {"toy": toy},
               section="a-layer-with-almost-no-cosine-relevance-that-the-network-cannot-do-without")
toy_table.assign(**{"cosine relevance": toy_table["cosine relevance"].map("{:.2e}".format)}).set_index("block")

# %% [markdown]
# Block 2 has cosine relevance {glue:text}`cosine_vs_ablation-toy_cosine`, the smallest of the
# three, and removing it takes accuracy from {glue:text}`cosine_vs_ablation-toy_acc` to
# {glue:text}`cosine_vs_ablation-toy_acc_without`; blocks 1 and 3 change the direction of the
# state most and can be removed without any loss. Cosine relevance measures how much a block
# moves the state, not whether anything downstream reads what it wrote.
#
# ## Pruning by each relevance
#
# The paper (abstract):
#
# > {glue:text}`cosine_vs_ablation-claim_pruning`
#
# On each decoder of {glue:text}`cosine_vs_ablation-pruning_models`, blocks are removed
# together, and the evaluation accuracy (mean over tasks) is plotted against their number.
# Rules: *cosine (BI)* removes the blocks of lowest cosine relevance; *accuracy (calibration)*
# those of lowest accuracy relevance measured on {glue:text}`cosine_vs_ablation-n_calibration`
# **train-split** items per task, disjoint from the evaluation items (ties broken by the drop in
# log-likelihood); *angular (Gromov)* the $k$ consecutive blocks $l^*+1..l^*+k$ minimising the
# angular distance $\arccos(\cos(x_{l}, x_{l+k}))/\pi$ of the last token (Gromov et al., 2025);
# *Taylor (first order)* those of smallest $|\langle \partial\mathcal L/\partial h_l, h_l -
# h_{l-1}\rangle|$ (our reconstruction of first-order importance, with respect to the block's
# output, on the calibration items); *random* {glue:text}`cosine_vs_ablation-n_random` random
# orders (median and range). Every rule except accuracy uses the same calibration items.
#
# **The test** (`judge_pruning`): per pruned decoder, the accuracy of the accuracy-drop ranking
# minus the cosine ranking's, averaged over the budgets (our summary of the paper's curves); an
# exact one-sided sign-flip test over decoders, the unit that varies independently. It needs 5
# pruned decoders to reach p <= 0.05; with {glue:text}`cosine_vs_ablation-n_pruned` the best
# possible p is {glue:text}`cosine_vs_ablation-pruning_p_min`, so on our panel the claim is not
# testable, whatever the curves show. **Verdict:** {glue:text}`cosine_vs_ablation-verdict_pruning`
#
# **Per decoder** (`pruning_model_tests`, the second table below): within one pruned decoder the
# test items vary independently. Per item, the difference in correctness between the two rankings'
# pruned models, averaged over the budgets; a one-sided t-test over the items of the tasks above
# measured chance, Holm over the pruned decoders. The dashboard's count beside the verdict is the
# decoders with `p (Holm)` at most 0.05.

# %% tags=["hide-input"]
glue("pruning_models", ", ".join(pruning_models) or "none")
glue("n_calibration", n_calibration)
glue("n_random", n_random)
curves = pruning_curves_table(runs, tasks)
pruning_items = pruning_items_table(runs)
pruning_verdict = glue.judge("cosine.pruning", {"curves": curves, "items": pruning_items, "chance": chance}, note=note,
                             record=False)
glue("n_pruned", curves["model"].nunique())
glue("pruning_p_min", f"{pruning_verdict.p_min:.2g}" if pruning_verdict.p_min is not None else "undefined")
glue.verdict(pruning_verdict, section="pruning-by-each-relevance")

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-pruning", "caption": "Evaluation accuracy (mean over tasks) of each pruned decoder against the number of blocks removed, per pruning rule."}}
lrd.book.plots.pruning_curves(curves)

# %% tags=["hide-input"]
lrd.tables.rounded(curves.pivot_table(index=["model", "rule", "seed"], columns="k", values="acc"))

# %% tags=["hide-input"]
lrd.tables.rounded(pruning_model_tests(pruning_items, chance), 3)

# %% [markdown]
# ## The claims against our measurement
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_correlation` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_correlation` |
# | **Paper** ({glue:text}`cosine_vs_ablation-claim_misestimate_source`) | {glue:text}`cosine_vs_ablation-claim_misestimate` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_misestimate` |
# | **Paper** ({glue:text}`cosine_vs_ablation-claim_dataset_source`) | {glue:text}`cosine_vs_ablation-claim_dataset` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_dataset` |
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_theory` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_theory` |
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_pruning` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_pruning` |
# | **Paper** ({glue:text}`cosine_vs_ablation-claim_olmo_source`) | {glue:text}`cosine_vs_ablation-claim_olmo` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_olmo` |
#
# The paper's numbers beside ours: {glue:text}`cosine_vs_ablation-claim_correlation_number`
# (correlation); {glue:text}`cosine_vs_ablation-claim_misestimate_number` (mis-estimation);
# {glue:text}`cosine_vs_ablation-claim_olmo_number` (OLMo's layer 16). Caveats: our decoders are
# small (135M to 500M parameters) GGUF checkpoints dequantised to float32, two of the three
# instruct-tuned, and accuracy relevance is measured on {glue:text}`cosine_vs_ablation-n_items`
# items per task, so its per-block values are coarse (see the reliabilities). The noise
# correction, the over/under-estimation rule, the between-task test, the averages over tasks and
# budgets and the Taylor score are our reconstructions.
#
# **Cost.** The chapter made {glue:text}`cosine_vs_ablation-block_forwards` full-model forward
# passes' worth of work over the task inputs ({glue:text}`cosine_vs_ablation-token_passes`
# token passes, at {glue:text}`cosine_vs_ablation-rate` tokens per second on this machine) and
# ran in {glue:text}`cosine_vs_ablation-minutes` minutes.

# %% tags=["hide-input"]
_ = glue.judge("cosine.olmo", {}, note=note, section="the-claims-against-our-measurement")
glue("block_forwards", f"{runs.work['block forwards']:.0f}")
glue("token_passes", f"{runs.work['token passes']:,.0f}")
glue_path = glue.save(results_dir)

# %% tags=["hide-input", "nbval-ignore-output"]
glue("rate", f"{runs.work['token passes'] / max(runs.work['seconds'], 1e-9):,.0f}", volatile=True)
glue("minutes", f"{glue.minutes():.1f}", volatile=True)
