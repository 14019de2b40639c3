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
# # Appendix: where the book follows the authors' code
#
# The book reproduces four papers, so its measurements should be the papers' measurements. Put
# beside the authors' public code (OFSkean/information_flow for {cite:t}`skean2025layer`,
# icip-cas/ShortGPT for block influence, tomulanovski/ILSE for the Cayley-Encoder), lrd computed
# something else in a few places. For each, one decision: where a verdict compares our number
# with the paper's, the measurement under its plain name computes what the paper's code
# computes, and the paper's formula is a named option computed **from the same states** (no
# extra forward pass); where the authors' code has a defect, lrd keeps the right computation and
# says why. The formulas and the authors' files are in the docstrings of `lrd.metrics.entropy`,
# `lrd.metrics.curvature`, {py:func}`lrd.metrics.augmentation.dime`, `lrd.methods.relevance` and
# `lrd.aggregation.cayley`; each variant is pinned by a closed form in `tests/test_fidelity.py`.
#
# information_flow holds two generations of the metric code: `experiments/utils/misc/metric_utils.py`
# (September 2024) and `experiments/utils/metrics/metric_functions.py` (later). The older one
# measures curvature between consecutive tokens and InfoNCE SimCLR-style over both views; the
# paper defines curvature on consecutive token *steps* and InfoNCE between the two views, as
# the newer one does, so the book follows the newer generation. Both clamp the entropy's matrix
# at 0 and build `d x d` DiME kernels when there are more prompts than dimensions.
#
# This page reads the records of the chapters' own units, declared from each chapter's
# parameters under the profile `chapter_profile` (so a built book finds them cached).

# %% tags=["parameters"]
models = ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]  # the mid-layer chapter's panel (its default)
chapter_profile = "default"  # the profile the other chapters ran with: their units (and caches) are read
results_dir = "results"

# %% tags=["hide-input"]
import math

import lrd

from lrd.aggregation.cayley import ilse_layout
from lrd.units import compute
from lrd.units.authors_code import DECLARATIONS, authors_code_units
from lrd.units.cosine_vs_ablation import collect_decoders
from lrd.units.mid_layer import mid_layer_tables
from lrd.verdicts.fidelity import (cayley_configurations, decisions, relevance_variants, variant_differences,
                                   variant_verdicts)
from lrd.verdicts.layer_choice import panel_note

glue = lrd.book.open_chapter("authors_code", globals())  # an appendix: it compares computations, it judges no claim
parameters = {ch: {**lrd.book.default_parameters(ch), **lrd.book.profile(chapter_profile, ch)} for ch in DECLARATIONS}
units = authors_code_units(parameters=parameters, models=models)
tables = mid_layer_tables(models, compute(units["mid_layer"]))
results, note = tables.results, panel_note(tables.kinds, tables.sources)
glue("n_models", len(models))
glue("n_rows", len(decisions()))

# %% [markdown]
# ## The decisions
#
# One row per place where lrd and the authors' code differ ({glue:text}`authors_code-n_rows` rows).

# %% tags=["hide-input"]
decisions().set_index("measurement")

# %% [markdown]
# ## Entropy, curvature and DiME on the panel
#
# For each of the {glue:text}`authors_code-n_models` models of the mid-layer chapter's panel,
# the largest difference over layers between the paper's code and the formula (each curve the
# mean over the tasks it is measured on), the mean difference, and whether the deepest
# intermediate layer moves. The clamp moves prompt entropy by up to
# {glue:text}`authors_code-max_prompt_entropy` and dataset entropy by up to
# {glue:text}`authors_code-max_dataset_entropy` (normalised, in [0, 1]); curvature moves by up to
# {glue:text}`authors_code-max_curvature` rad; DiME by up to {glue:text}`authors_code-max_dime`
# nats (the two DiME variants coincide when the prompts are no more than the dimensions, as here).

# %% tags=["hide-input"]
diff = variant_differences(results)
for name, key in {"prompt entropy": "max_prompt_entropy", "dataset entropy": "max_dataset_entropy",
                  "curvature": "max_curvature", "DiME": "max_dime"}.items():
    glue(key, f"{diff.loc[diff['measurement'] == name, 'max |diff|'].max():.3f}")
lrd.tables.rounded(diff.set_index(["measurement", "model"]), digits=3)

# %% [markdown]
# ## The mid-layer verdicts under both variants
#
# The chapter's judge functions, on the same rows, with the paper's code (the chapter's
# verdicts) and with the formula. {glue:text}`authors_code-n_same` of
# {glue:text}`authors_code-n_verdicts` verdicts keep their outcome.

# %% tags=["hide-input"]
both = variant_verdicts(results, token_task=parameters["mid_layer"]["token_task"], note=note)
glue("n_same", int(both["same outcome"].sum()))
glue("n_verdicts", len(both))
both

# %% [markdown]
# ## Rényi entropy of order 2
#
# `repitl`'s Frobenius shortcut divides $\lVert K \rVert_F^2$ by $m^2$ for an $m \times m$
# trace-one matrix, which adds $2 \log m$ to the formula: {glue:text}`authors_code-renyi_offset`
# nats for the dataset entropy of {glue:text}`authors_code-n_samples` prompts. The book uses
# $\alpha = 1$ throughout, so no number of the book changes; `frobenius_offset=True` reproduces
# the shortcut.

# %% tags=["hide-input"]
n_samples = parameters["mid_layer"]["n_samples"]
glue("n_samples", n_samples)
glue("renyi_offset", f"{2 * math.log(n_samples):.3f}")

# %% [markdown]
# ## Block influence of the last block
#
# ShortGPT scores the last block against Hugging Face's `hidden_states[-1]`, which has gone
# through the final norm; lrd compares the block's input with its own output, as for every
# other block. Both come from the same pass of the cosine-vs-ablation chapter's decoders. The
# last block's rank among the blocks (1: the least relevant, the first ShortGPT would remove)
# changes on {glue:text}`authors_code-n_rank_moves` of {glue:text}`authors_code-n_relevance_pairs`
# (model, task) pairs. ShortGPT also averages pad tokens into the score: a defect, which lrd
# does not follow (real tokens only).

# %% tags=["hide-input"]
cosine = parameters["cosine_vs_ablation"]
relevance = relevance_variants(collect_decoders(cosine["models"], compute(units["decoders"])).relevance)
glue("n_rank_moves", int((relevance["rank lrd"] != relevance["rank ShortGPT"]).sum()))
glue("n_relevance_pairs", len(relevance))
lrd.tables.rounded(relevance.set_index(["model", "task"]), digits=3)

# %% [markdown]
# ## The Cayley graph: ILSE's configurations
#
# ILSE's default trainers drop the embedding state when the model has one state more than an
# $SL(2, \mathbb Z_n)$ graph has nodes, and list every edge twice (four times for $n = 2$).
# The node count under each configuration for each model of the panel, then the Cayley
# ablation's accuracy under lrd's configuration, the reference's doubled edges, and ILSE's
# default trainers' configuration (doubled edges, embeddings dropped) on
# {glue:text}`authors_code-ablation_model`.

# %% tags=["hide-input"]
states = results.groupby("model", sort=False)["layer"].max() + 1
lrd.tables.rounded(states.to_frame("states").assign(
    **{"nodes, every state (lrd)": [ilse_layout(s)[1] for s in states],
       "nodes, ILSE trainers": [ilse_layout(s, keep_embedding_layer=False)[1] for s in states],
       "embeddings dropped": [bool(ilse_layout(s, keep_embedding_layer=False)[2]) for s in states]}))

# %% tags=["hide-input"]
ablation = compute(units["ablation"])
glue("ablation_model", parameters["cayley_aggregation"]["ablation_model"] if ablation else "no ablation model in the panel")
lrd.tables.rounded(cayley_configurations(ablation[0].scores if ablation else None), digits=3)

# %% tags=["hide-input"]
glue_path = glue.save(results_dir)
