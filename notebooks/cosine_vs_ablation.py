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
# costs (abstract):
#
# > {glue:text}`cosine_vs_ablation-claim_proxy`
#
# This chapter measures both notions of relevance on our offline decoders and encoders, tests
# the paper's claims, builds the paper's theoretical counterexample as a runnable network, and
# compares pruning rules. The paper's code and per-model tables were not available to us: we
# test its claims as stated in the abstract.
#
# **Two relevances.** Block $l$ maps the residual stream $h_{l-1}$ to $h_l$. Its *cosine
# relevance* (ShortGPT's Block Influence) is
# $R^{\cos}_l = 1 - \overline{\cos(h_{l-1,t}, h_{l,t})}$, the mean over all tokens of all inputs,
# from one forward pass. Its *accuracy relevance* is $R^{\mathrm{acc}}_l = \mathrm{acc} -
# \mathrm{acc}_{\setminus l}$, the accuracy lost when the block is skipped (the residual stream
# passes it unchanged; `lrd.ablation.removed_layers`). Accuracy is the multiple-choice `acc` of
# lm-evaluation-harness: the choice with the highest summed log-likelihood of its continuation
# (`lrd.scoring`, checked against the harness's own `HFLM` in the tests).

# %% tags=["parameters"]
models = ["smollm2", "gemma3"]  # decoders: offline keys, hub ids or folders (add "qwen": ~2x the cost of both)
tasks = ["sciq", "arc_easy"]  # offline multiple-choice tasks on which our small decoders are well above chance
n_items = 32  # evaluation items per task (fixed seeded subset of the test split)
n_calibration = 16  # calibration items per task (train split) for the pruning ranking
pruning_model = "gemma3"  # the decoder whose pruning curves are drawn
pruning_ks = [2, 4]  # numbers of blocks removed
n_random = 5  # random pruning orders
encoders = ["minilm"]  # add "mpnet" (12 blocks, ~5x the cost of minilm)
encoder_task = "sst2"
n_encoder = 500  # texts, as the other embedding chapters
encoder_scorer = "mteb"  # lrd.relevance.ENCODER_SCORERS: "mteb" or "probe"
n_boot = 1000  # bootstrap resamples of items
margin = 0.3333  # over/under-estimation margin in percentile ranks
batch_size = 32
threads = 0  # torch CPU threads, 0 = torch default (all cores); 1 is faster on a CPU shared with other jobs
device = "cpu"
results_dir = "results"

# %% tags=["hide-input"]
import time

import numpy as np
import pandas as pd

import lrd
from lrd.agreement import (bootstrap_rank_correlations, correlation_verdict, counterexample_verdict,
                           estimation_shares, pruning_verdict, strength)
from lrd.counterexample import counterexample
from lrd.papers import ABLATION_CLAIMS
from lrd.relevance import ENCODER_SCORER_DESCRIPTIONS, pruning_table
from lrd.report import Glue, per_layer, save_results
from lrd.units import compute, cosine_vs_ablation_units

import torch

lrd.book.check_parameters("cosine_vs_ablation", globals())
if threads:
    torch.set_num_threads(threads)
glue = Glue("cosine_vs_ablation")
for key in ("proxy", "theory", "correlation", "pruning", "olmo"):
    glue(f"claim_{key}", ABLATION_CLAIMS[key].text)
t_start = time.perf_counter()
work = {"block forwards": 0.0, "token passes": 0.0, "seconds": 0.0}


# %% [markdown]
# ## Both relevances, per decoder, block and task
#
# Each decoder is scored on {glue:text}`cosine_vs_ablation-n_items` test items of each task, once
# intact and once with each block removed. The sweep resumes every removal from the intact
# run's recorded input of the removed block, so blocks before it are never recomputed
# (`lrd.relevance.removal_sweep`; exact, see `benchmarks/ablation.py`).

# %% tags=["hide-input"]
glue("n_items", n_items)
rows, correct, acc_norm, chance, plan = [], {}, {}, {}, None
units = cosine_vs_ablation_units(models, tasks, n_items, n_calibration, pruning_model, pruning_ks, n_random, encoders,
                                 encoder_task, n_encoder, encoder_scorer, batch_size=batch_size, device=device)
for name, done in zip(models, compute(units["decoders"])):  # one cached unit per decoder (lrd.units.ablation_decoder)
    rows += done["rows"]
    correct.update({(name, t): v for t, v in done["correct"].items()})
    acc_norm.update({(name, t): v for t, v in done["acc_norm"].items()})
    chance.update({(name, t): v for t, v in done["chance"].items()})
    plan = done["plan"] if name == pruning_model else plan
    work = {k: v + done["work"][k] for k, v in work.items()}
relevance = pd.concat(rows, ignore_index=True)
csv_path = save_results(relevance, "cosine_vs_ablation", results_dir)

# %% [markdown]
# The paper's Figure 1 on our panel: cosine relevance (left) and accuracy relevance (right) of
# every block (x axis) for every task (rows), one row of panels per decoder. Accuracy relevance
# is measured on few items, so single blocks differ by multiples of
# {glue:text}`cosine_vs_ablation-quantum` (one item of {glue:text}`cosine_vs_ablation-n_items`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-heatmaps", "caption": "Cosine relevance (left) and accuracy relevance (right) of every block of each decoder, per task."}}
glue("quantum", 1 / n_items)
lrd.plots.relevance_heatmaps(relevance)

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-scatter", "caption": "Accuracy relevance against cosine relevance, one point per decoder block and task."}}
wide = relevance.pivot_table(index=["model", "task", "layer"], columns="measurement", values="value").reset_index()
lrd.plots.relevance_scatter(wide)

# %% [markdown]
# ## Does cosine relevance rank blocks like accuracy relevance?
#
# Spearman's $\rho$ and Kendall's $\tau$ between the two relevances over the blocks of each
# decoder and task, with 95% percentile intervals from {glue:text}`cosine_vs_ablation-n_boot`
# bootstrap resamples of the items (cosine relevance, computed from all tokens, held fixed).
# We call $|\rho| < 0.4$ weak, $< 0.7$ moderate, else strong.
#
# **Over- and under-estimation** (our rule; the paper does not define one): both relevances
# are turned into percentile ranks within the decoder and task; cosine *over-estimates* a block
# whose cosine rank exceeds its accuracy rank by more than {glue:text}`cosine_vs_ablation-margin`
# of the range, and *under-estimates* it when the accuracy rank exceeds the cosine rank by that
# much.

# %% tags=["hide-input"]
glue("n_boot", n_boot)
glue("margin", f"{margin:.0%}")
agree = []
for (name, task), c in correct.items():
    part = wide[(wide["model"] == name) & (wide["task"] == task)].sort_values("layer")
    cos, acc = part["cosine relevance"].to_numpy(), part["accuracy relevance"].to_numpy()
    corr = bootstrap_rank_correlations(c, cos, n_boot=n_boot)
    est = estimation_shares(cos, acc, margin=margin)
    agree.append({"model": name, "task": task, "acc (intact)": c[0].mean(), "n items": c.shape[1],
                  "chance": chance[name, task], "acc_norm (intact)": acc_norm[name, task],
                  **corr, "strength": strength(corr["spearman"]),
                  "over": est["over"], "under": est["under"], "blocks under-estimated": est["layers_under"]})
agree = pd.DataFrame(agree)
lrd.report.rounded(agree)

# %% [markdown]
# Cosine relevance over-estimates {glue:text}`cosine_vs_ablation-share_over` and under-estimates
# {glue:text}`cosine_vs_ablation-share_under` of the blocks (averaged over decoders and
# tasks). The mean Spearman correlation is {glue:text}`cosine_vs_ablation-mean_spearman`; the
# intact accuracies and chance (the expected accuracy of guessing) are in the table.
#
# **When accuracy relevance is signal.** If the intact model answers at chance, removing a block
# changes its accuracy by noise, and no correlation with it means anything. A model-task pair
# counts for the verdict only when the lower end of the exact 95% binomial interval of its intact
# accuracy lies above chance; among those, a pair is clearly weak or moderate when its bootstrap
# interval of $\rho$ lies inside $(-0.7, 0.7)$ (`lrd.agreement.correlation_verdict`). With no
# pair that counts, or intervals too wide to tell, the claim is not testable on our panel.

# %% tags=["hide-input"]
glue("share_over", f"{agree['over'].mean():.0%}")
glue("share_under", f"{agree['under'].mean():.0%}")
glue("mean_spearman", f"{agree['spearman'].mean():.2f}")
glue.verdict("correlation", claim=ABLATION_CLAIMS["correlation"], verdict=correlation_verdict(agree),
             section="does-cosine-relevance-rank-blocks-like-accuracy-relevance")

# %% [markdown]
# ## Encoders: the same question with an embedding score
#
# For the encoders, accuracy is replaced by an embedding score of the mean-pooled final-layer
# states of {glue:text}`cosine_vs_ablation-encoder_task` ({glue:text}`cosine_vs_ablation-n_encoder`
# texts): {glue:text}`cosine_vs_ablation-encoder_scorer`, intact and with each block removed
# (resumed sweep as for the decoders). The score is a parameter (`encoder_scorer`).

# %% tags=["hide-input"]
glue("encoder_task", encoder_task)
glue("n_encoder", n_encoder)
glue("encoder_scorer", ENCODER_SCORER_DESCRIPTIONS[encoder_scorer])
enc_rows, enc_agree = [], []
data = lrd.load_task(encoder_task, n=n_encoder)
for name, done in zip(encoders, compute(units["encoders"])):  # one cached unit per encoder (lrd.units.ablation_encoder)
    cos, score = done["cos"], done["score"]
    layers = np.arange(1, len(cos) + 1)
    enc_rows += [per_layer(cos, model=name, task=encoder_task, measurement="cosine relevance", layers=layers),
                 per_layer(score[0] - score[1:], model=name, task=encoder_task, measurement="accuracy relevance",
                           layers=layers)]
    rho = pd.Series(score[0] - score[1:]).corr(pd.Series(cos), method="spearman")
    enc_agree.append({"model": name, "score (intact)": score[0], "spearman": rho, "strength": strength(rho)})
encoder_relevance = pd.concat(enc_rows, ignore_index=True)
lrd.report.rounded(pd.DataFrame(enc_agree))

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-encoder-heatmaps", "caption": "Cosine relevance (left) and embedding-score relevance (right) of every block of each encoder."}}
lrd.plots.relevance_heatmaps(encoder_relevance)

# %% [markdown]
# ## A layer with almost no cosine relevance that the network cannot do without
#
# The paper's theoretical point, built: a residual network $h \mapsto h + f_l(h)$ of three
# blocks on inputs $x = M e_0 + s\,a\,e_1 + \varepsilon$ with label $s = \pm 1$. Blocks 1 and 3
# add large, label-independent vectors; block 2 writes $c \tanh(k h_1)$ into a fresh
# coordinate, which is the only one the classifier reads. Block 2 barely moves the state
# (cosine relevance about $c^2 / 2\|h\|^2$), but without it the read-out coordinate is 0 for every
# input and the classifier answers one class (`lrd.counterexample`).

# %% tags=["hide-input"]
toy = counterexample()
toy_table = pd.DataFrame({"block": [1, 2, 3], "cosine relevance": toy.cosine_relevance,
                          "accuracy without the block": toy.accuracy_without,
                          "accuracy relevance": toy.accuracy_relevance})
glue("toy_cosine", f"{toy.cosine_relevance[1]:.1e}")
glue("toy_acc", f"{toy.accuracy:.0%}")
glue("toy_acc_without", f"{toy.accuracy_without[1]:.0%}")
glue.verdict("theory", claim=ABLATION_CLAIMS["theory"],
             verdict=counterexample_verdict(toy.cosine_relevance[1], toy.accuracy, toy.accuracy_without[1], toy.chance),
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
# On {glue:text}`cosine_vs_ablation-pruning_model`, blocks are removed together, and the
# evaluation accuracy (mean over tasks) is plotted against their number. Rules: *cosine (BI)*
# removes the blocks of lowest cosine relevance; *accuracy (calibration)* those of lowest
# accuracy relevance measured on {glue:text}`cosine_vs_ablation-n_calibration` **train-split**
# items per task, disjoint from the evaluation items (ties broken by the drop in log-likelihood);
# *angular (Gromov)* the $k$ consecutive blocks $l^*+1..l^*+k$ minimising the angular distance
# $\arccos(\cos(x_{l}, x_{l+k}))/\pi$ of the last token (Gromov et al., 2025); *Taylor (first
# order)* those of smallest $|\langle \partial\mathcal L/\partial h_l, h_l - h_{l-1}\rangle|$
# (our reconstruction of first-order importance, with respect to the block's output, on the
# calibration items); *random* {glue:text}`cosine_vs_ablation-n_random` random orders (median
# and range). Every rule except accuracy uses the same calibration items.

# %% tags=["hide-input"] mystnb={"figure": {"name": "cosine_vs_ablation-fig-pruning", "caption": "Evaluation accuracy (mean over tasks) of the pruning model against the number of blocks removed, per pruning rule."}}
glue("pruning_model", pruning_model)
glue("n_calibration", n_calibration)
glue("n_random", n_random)
curves = pd.DataFrame()
if plan is not None:
    curves = pruning_table(plan, np.mean([correct[pruning_model, t][0].mean() for t in tasks]), tasks)
verdict_pruning = pruning_verdict(curves) if not curves.empty else "not testable: no pruning model in the panel"
glue.verdict("pruning", claim=ABLATION_CLAIMS["pruning"], verdict=verdict_pruning, section="pruning-by-each-relevance")
lrd.plots.pruning_curves(curves) if not curves.empty else None

# %% tags=["hide-input"]
lrd.report.rounded(curves.pivot_table(index=["rule", "seed"], columns="k", values="acc")) if not curves.empty else None

# %% [markdown]
# ## The claims against our measurement
#
# | | |
# |---|---|
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_correlation` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_correlation` |
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_theory` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_theory` |
# | **Paper** (abstract) | {glue:text}`cosine_vs_ablation-claim_pruning` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_pruning` |
# | **Summary of the paper** (third party) | {glue:text}`cosine_vs_ablation-claim_olmo` |
# | **Ours** | {glue:text}`cosine_vs_ablation-verdict_olmo` |
#
# Caveats: our decoders are small (135M to 500M parameters) GGUF checkpoints dequantised to
# float32, and accuracy relevance is measured on {glue:text}`cosine_vs_ablation-n_items` items
# per task, so its per-block values are coarse (see the bootstrap intervals). The
# over/under-estimation rule and the Taylor score are our reconstructions.
#
# **Cost.** The chapter made {glue:text}`cosine_vs_ablation-block_forwards` full-model forward
# passes' worth of work over the task inputs ({glue:text}`cosine_vs_ablation-token_passes`
# token passes, at {glue:text}`cosine_vs_ablation-rate` tokens per second on this machine) and
# ran in {glue:text}`cosine_vs_ablation-minutes` minutes.

# %% tags=["hide-input"]
glue.verdict("olmo", claim=ABLATION_CLAIMS["olmo"], verdict="not testable: OLMo is not in our offline panel",
             section="the-claims-against-our-measurement")
glue("block_forwards", f"{work['block forwards']:.0f}")
glue("token_passes", f"{work['token passes']:,.0f}")
glue_path = glue.save(results_dir)

# %% tags=["hide-input", "nbval-ignore-output"]
glue("rate", f"{work['token passes'] / max(work['seconds'], 1e-9):,.0f}", volatile=True)
glue("minutes", f"{(time.perf_counter() - t_start) / 60:.1f}", volatile=True)
