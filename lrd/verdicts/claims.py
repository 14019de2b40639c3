"""The papers this book reproduces, and the claims it judges: one row per claim.

Everything here is quoted or planned, nothing is measured. Each :class:`Claim` holds the
paper's words (English abstracts verbatim; claims from the body are our translation of the
digests in ``shared/papers/``, marked as such in ``source``), the paper's own number where it
gives one (``paper_effect``), whether the book judges it by a statistical **test** or by a
**demonstration** (a construction or arithmetic that holds by design), and, for tests, the
``lrd sweep`` command that would run them on hub models (this offline machine cannot). What
panel would decide a test is computed, not written here: :func:`lrd.verdicts.planning.decisive_design`
simulates it from the claim's power model (``book/plan.json``, the appendix "What would decide
each claim"); only a test without a power model names its panel in words (``panel``).

Every claim of :data:`CLAIMS` gets exactly one verdict in the book (a test checks the
dashboard against this table); chapters glue verdicts with :meth:`lrd.book.glue.Glue.verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Sequence

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Paper", "Scope", "OUT_OF_SCOPE", "Claim", "CLAIMS", "PAPERS", "claim", "claims_of", "LRD", "SKEAN", "ABLATION", "ILSE",
           "SKEAN_GAIN_RANGE", "SKEAN_LLM_SCOPE", "ILSE_MAX_GAIN_PP", "ILSE_MAX_PARAM_SHARE", "ILSE_MAPPING_STD_PP",
           "ILSE_DEFAULTS",
           "ILSE_TABLE_ROWS", "COSINE_MISESTIMATE_SHARE", "ILSE_PARAMS_RANGE",
           "ILSE_PAPER_STATES", "ILSE_PAPER_MODELS", "ILSE_TABLE1_PARAMS_RANGE", "ILSE_KINDS", "CLAIM_GROUPINGS", "GROUPING_TEXT", "grouping_of", "grouping_table"]


@dataclass(frozen=True)
class Paper:
    key: str  # BibTeX key in references.bib
    authors: str
    title: str
    venue: str

    def cite(self) -> str:
        return f"{self.authors}, “{self.title}”, {self.venue}"


#: How a verdict labels the models or cells it shows but does not count.
OUT_OF_SCOPE = "out of the paper's scope"


@dataclass(frozen=True)
class Scope:
    """The scope a judge counts for a claim, as data: what the paper states, or, where the book adds
    a cut of its own (a kind of model, a graph's sparsity), that cut: its ``text`` says which part is
    the book's ("the book's rule", "a restriction of the book's") and the claim's specification
    gives it as a rule of origin "book" with its alternatives. A judge counts only what lies inside it.

    Models or cells outside the scope are shown, labelled out of scope (the paper's or the book's
    rule's, as the verdict says), and never counted for or against the claim (a claim stated for
    14M-8B models says nothing about a 70B one).

    Attributes
    ----------
    text : str
        The scope in words, with its source in the paper.
    params : (float, float), optional
        Base-model parameters, inclusive bounds (the paper's smallest and largest models).
    sparser_graph : bool
        Only layer counts at which the construction is sparser than the complete graph, as
        every model of the paper is (the threshold is arithmetic: :func:`lrd.verdicts.fusion.sparser_from`).
    kinds : tuple of str, optional
        Only models of these kinds (the results' ``kind`` column: ``"decoder"`` for the
        autoregressive language models, ``"encoder"`` for the sentence embedders).
    """

    text: str
    params: tuple[float, float] | None = None
    sparser_graph: bool = False
    kinds: tuple[str, ...] | None = None

    def in_params(self, base_params: float) -> bool:
        """Whether a model of ``base_params`` parameters is within :attr:`params` (True without bounds)."""
        return self.params is None or self.params[0] <= base_params <= self.params[1]


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as the book judges it.

    Attributes
    ----------
    id : str
        ``"<paper>.<name>"``, e.g. ``"skean.gain"``; the verdict's glue key is
        ``<chapter>-verdict_<name>``.
    paper : Paper
    chapter : str
        The chapter that records its verdict.
    label : str
        A short label for the dashboard (one line).
    text : str
        The claim, quoted (``source`` says from where, and whether it is our translation).
    source : str
    kind : {"test", "demonstration"}
    paper_effect : str, optional
        The paper's number or direction, quoted, shown beside ours.
    panel : str, optional
        For a test without a power model only (the planner cannot simulate it): the panel it
        would need, in words. Every other test's panel is computed by
        :func:`lrd.verdicts.planning.decisive_design`.
    sweep : str, optional
        The ``lrd sweep`` command that would run such a panel (needs the hub).
    scope : Scope, optional
        The scope the judge counts (models, cells, layer counts): the paper's, or a book rule's
        cut, which :class:`Scope` says how to tell apart; None: every model of the panel.
    """

    id: str
    paper: Paper
    chapter: str
    label: str
    text: str
    source: str
    kind: Literal["test", "demonstration"] = "test"
    paper_effect: str | None = None
    panel: str | None = None
    sweep: str | None = None
    scope: Scope | None = None

    @property
    def name(self) -> str:
        return self.id.split(".", 1)[1]


# --- papers -------------------------------------------------------------------------------------

LRD = Paper("jiang2026lrd", "Jingzhou Jiang, Yi Yang, Kar Yan Tam",
            "Layer-wise Representation Dynamics: An Empirical Investigation Across Embedders and Base LLMs",
            "arXiv:2605.12714 (2026)")
SKEAN = Paper("skean2025layer", "Oscar Skean, Md Rifat Arefin, Dan Zhao, Niket Patel, Jalal Naghiyev, Yann LeCun, "
              "Ravid Shwartz-Ziv", "Layer by Layer: Uncovering Hidden Representations in Language Models",
              "ICML 2025, PMLR 267:55854-55875")
ABLATION = Paper("hinostroza2026rethinking",
                 "Cristian Hinostroza, Rodrigo Toro Icarte, Christ Devia, Andres Carvallo, Eugenio Herrera-Berg, "
                 "Denis Parra, Jorge F. Silva",
                 "Rethinking Layer Relevance in Large Language Models Beyond Cosine Similarity",
                 "arXiv:2605.14075 (2026), ICLR 2026")
ILSE = Paper("ulanovski2026ilse", "Tom Ulanovski, Eyal Blyachman, Maya Bechler-Speicher",
             "Improving LLM Final Representations with Inter-Layer Geometry",
             "arXiv:2603.22665 v3 (NeurIPS 2026); code: github.com/tomulanovski/ILSE, PyPI package ilge 0.1.0")
PAPERS = {p.key: p for p in (LRD, SKEAN, ABLATION, ILSE)}

# --- hub models a sweep would run (design facts, not measurements) -------------------------------

_EMBEDDERS = ('"sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2", '
              '"BAAI/bge-small-en-v1.5", "intfloat/e5-small-v2"')
_DECODERS = '"EleutherAI/pythia-160m", "EleutherAI/pythia-410m", "Qwen/Qwen2.5-0.5B", "HuggingFaceTB/SmolLM2-360M"'
_BASE_LLMS = ('"EleutherAI/pythia-160m", "EleutherAI/pythia-410m", "EleutherAI/pythia-1b", "Qwen/Qwen2.5-0.5B", '
              '"HuggingFaceTB/SmolLM2-360M"')


def _sweep(chapter: str, models: str) -> str:
    return f"lrd sweep {chapter} -p models '[{models}]'"


_PRUNING_SWEEP = (_sweep("selection_and_pruning", f"{_EMBEDDERS}, {_DECODERS}")
                  + f" -p pruning_models '[{_EMBEDDERS}, {_DECODERS}]' -p mc_tasks '[\"sciq\"]' -p n_items 100")


# --- the papers' scopes (quoted facts, not measurements) ----------------------------------------

#: The book's one rule for contrastive sentence embedders in the claims of Skean et al. (ICML 2025)
#: that compare a model's layers: they count where the paper states the claim across architectures
#: (skean.gain, whose own scope is None), and where it states it for autoregressive models
#: (skean.metrics_track, skean.choice) they are shown, labelled out of scope, never counted: this
#: scope (the rule ``scope`` of each, the other reading its alternative). Their last layer is trained contrastively *as the embedding*, which bears on which
#: layer embeds best and on how a metric tracks the layers' scores. The paper's models are
#: "Transformers (Pythia, LLaMA3), SSMs (Mamba), BERT and bidirectional-attention models (LLM2vec)"
#: (report digest ``shared/papers/002``, Sec. 2.1, our translation), LLM2vec among them a
#: bidirectional model trained contrastively (BehnamGhader et al., COLM 2024); the paper states no
#: exclusion, so the rule is the book's (``lrd.verdicts.specifications.skean2025.embedder_rule``). In
#: this book's panel the results' ``kind`` column says which: every ``"encoder"`` is a sentence
#: embedder (all-MiniLM-L6-v2, all-mpnet-base-v2, e5-small, EmbeddingGemma), every ``"decoder"`` an
#: autoregressive language model; a masked LM such as BERT, in the paper's scope, would need a kind of
#: its own.
SKEAN_LLM_SCOPE = Scope(
    "autoregressive language models only (the panel's decoders), as the paper's Pythia (its DiME number is "
    "Pythia's, report digest 002, Sec. 3.1) and its autoregressive models whose entropy valley goes with their "
    "performance (Sec. 3.2); the panel's contrastive sentence embedders (its encoders), whose last layer is "
    "trained contrastively as the embedding, are shown and not counted. A reading of the book's: the paper states "
    "no exclusion, and its models also include BERT and LLM2vec (report digest 002, Sec. 2.1), a bidirectional "
    "model trained contrastively (BehnamGhader et al., COLM 2024)",
    kinds=("decoder",))


#: The ILSE paper's models span 14M to 8B parameters: "9 pre-trained LLMs ranging from 14 million to 8
#: billion parameters" (abstract v1, arXiv:2603.22665v1; the v3 abstract says "9 LLMs"), and the authors'
#: README (github.com/tomulanovski/ILSE, README.md, "Models and tasks", commit e503592): "Models reported
#: in the paper: Pythia-410M, Gemma2-2B, Llama3-8B. The scaling analysis sweeps Pythia 14M through 2.8B."
#: Bounds: total parameters of Pythia-14M (the Pythia model cards' "Naming convention and parameter
#: count" table, :data:`ILSE_PAPER_MODELS`) and of Llama-3-8B (8,030,261,248, the Hugging Face checkpoint
#: meta-llama/Meta-Llama-3-8B; Meta's model card: 8B), inclusive.
ILSE_PARAMS_RANGE = (14_067_712, 8_030_261_248)
#: The range of the three models of the paper's Table 1 (Pythia-410M to Llama3-8B): not the paper's
#: scope, an alternative of the book's size rule (the models whose cells the digest reports).
ILSE_TABLE1_PARAMS_RANGE = (405_334_016, 8_030_261_248)
#: The book's reading of "pre-trained LLMs": autoregressive (decoder) language models only, as every
#: model the paper and its code name; the panel's sentence embedders (kind "encoder") are left out.
ILSE_KINDS = ("decoder",)
#: States (blocks + 1) of the paper's three models: Pythia-410M 24 blocks (Biderman et al., Table 1),
#: Gemma2-2B 26 (Gemma Team 2024, Table 1), Llama3-8B 32 (Meta's model card).
ILSE_PAPER_STATES = {"Pythia-410M": 25, "Gemma2-2B": 27, "Llama3-8B": 33}
#: The paper's own models as far as its text and its authors' code name them, with their sizes (quoted
#: facts): name -> total parameters, hidden size, blocks, and the source. The seven Pythia sizes are
#: those of the README's scaling sweep ("Pythia 14M through 2.8B") that the authors' code lists
#: (experiments/utils/model_definitions/text_automodel_wrapper.py, ``Pythia_sizes``: 14m, 70m, 160m,
#: 410m, 1b, 1.4b, 2.8b, 6.9b); with Gemma2-2B and Llama3-8B they are nine, the abstract's count (our
#: inference: the paper's list of its nine is not in our text).
ILSE_PAPER_MODELS: dict[str, dict] = {
    **{f"Pythia-{size}": {"params": params, "hidden_size": hidden, "blocks": blocks,
                          "source": "Pythia model cards, 'Naming convention and parameter count' (total params); "
                                    "Biderman et al., ICML 2023, Table 1 (layers, model dim; 14M: its model card)"}
       for size, params, hidden, blocks in (("14M", 14_067_712, 128, 6), ("70M", 70_426_624, 512, 6),
                                            ("160M", 162_322_944, 768, 12), ("410M", 405_334_016, 1024, 24),
                                            ("1B", 1_011_781_632, 2048, 16), ("1.4B", 1_414_647_808, 2048, 24),
                                            ("2.8B", 2_775_208_960, 2560, 32))},
    "Gemma2-2B": {"params": 590_118_912 + 2_024_517_888, "hidden_size": 2304, "blocks": 26,
                  "source": "Gemma Team 2024 (Gemma 2), Table 2 (embedding + non-embedding parameters) and "
                            "Table 1 (d_model, layers)"},
    "Llama3-8B": {"params": 8_030_261_248, "hidden_size": 4096, "blocks": 32,
                  "source": "the Hugging Face checkpoint meta-llama/Meta-Llama-3-8B (total parameters; Meta's "
                            "model card: 8B, 32 layers, dimension 4096)"},
}

_ILSE_MODELS = ("'9 pre-trained LLMs ranging from 14 million to 8 billion parameters' (abstract v1, "
                "arXiv:2603.22665v1; the authors' README: 'Models reported in the paper: Pythia-410M, Gemma2-2B, "
                "Llama3-8B. The scaling analysis sweeps Pythia 14M through 2.8B'; Limitations: 'experiments cover "
                "up to 8B')")
_ILSE_PARAMS_SCOPE = Scope("the abstract's share is stated for the paper's " + _ILSE_MODELS, params=ILSE_PARAMS_RANGE)
_ILSE_GAIN_SCOPE = Scope("'improvements of up to 40 percentage points in accuracy' (abstract v3) is the largest gain "
                         "over the paper's own results: its 13 tasks on its " + _ILSE_MODELS,
                         params=ILSE_PARAMS_RANGE)
#: The aggregator claims are stated for the paper's models: the panel's are counted within their sizes.
_ILSE_SIZE_SCOPE = Scope("the paper's " + _ILSE_MODELS, params=ILSE_PARAMS_RANGE)
_ILSE_LLMS = ('"EleutherAI/pythia-410m", "EleutherAI/pythia-1b", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-1.5B", '
              '"google/gemma-2-2b"')
_ILSE_GRAPH_SCOPE = Scope("layer counts at which the SL(2, Z_n) graph has fewer edges than the complete graph of the "
                          "states, as the three models of the paper's Table 1 (25 to 33 states: Pythia-410M, Gemma2-2B, "
                          "Llama3-8B); a restriction of the book's: Pythia-14M and -70M of the paper's scaling sweep "
                          "(authors' README) have 6 blocks (7 states), where the Cayley graph is not the sparser one",
                          sparser_graph=True)
_COSINE_SCOPE = Scope("decoder LLMs (the paper studies LLMs; OLMo-7B among them), blocks of one model, tasks above "
                      "measured chance")


# --- the claims ---------------------------------------------------------------------------------

_CLAIMS = [
    # Jiang, Yang, Tam 2026 (LRD)
    Claim("lrd.architecture", LRD, "lrd_families", "LRD separates encoders from decoders",
          "Applying LRD to 31 models (encoder-based and decoder-based embedders, plus base LLMs) on 30 MTEB tasks "
          "reveals architectural and task-level differences that are not apparent from final-layer "
          "representations alone.", "abstract",
          paper_effect="architectural differences on 31 models x 30 MTEB tasks (no test stated)",
          sweep=_sweep("lrd_families", f"{_EMBEDDERS}, {_DECODERS}")),
    Claim("lrd.final_layer", LRD, "lrd_families", "final-layer statistics miss what LRD shows",
          "[...] differences that are not apparent from final-layer representations alone.", "abstract",
          paper_effect="not apparent from the final layer alone (no final-layer statistic reported)",
          sweep=_sweep("lrd_families", f"{_EMBEDDERS}, {_DECODERS}")),
    Claim("lrd.task", LRD, "lrd_families", "dataset differences beyond final-layer statistics",
          "[...] reveals architectural and task-level differences that are not apparent from final-layer "
          "representations alone.", "abstract",
          paper_effect="task-level differences on 30 MTEB tasks of five types (no test stated)",
          sweep=_sweep("lrd_families", _EMBEDDERS)),
    Claim("lrd.complementarity", LRD, "lrd_families", "no two families with strongly correlated layer curves",
          "Each family targets a different aspect of the layer sequence; the three are complementary rather than "
          "redundant: one measures global subspace motion, one local nearest-neighbour retention, the third "
          "alignment with the final layer.", "Sec. 1, Introduction (our translation of the digest)",
          paper_effect="complementary, not redundant (no measurement given)",
          sweep=_sweep("lrd_families", _EMBEDDERS)),
    Claim("lrd.selection", LRD, "selection_and_pruning", "all three model-level scores predict MTEB rank",
          "For selection, all three model-level scores correlate positively with downstream MTEB performance [...]",
          "abstract", paper_effect="all three rho > 0 (abstract; per-score rho not in our digest)",
          sweep=_sweep("selection_and_pruning", f"{_EMBEDDERS}, {_DECODERS}")),
    Claim("lrd.selection_strongest", LRD, "selection_and_pruning", "d_0L is the strongest of the three scores",
          "[...] with end-to-end subspace displacement (d_{0,L}) the strongest [...]", "abstract",
          paper_effect="d_0L has the largest rho (abstract)",
          sweep=_sweep("selection_and_pruning", f"{_EMBEDDERS}, {_DECODERS}")),
    Claim("lrd.selection_llm", LRD, "selection_and_pruning",
          "same direction on small LLMs, multiple choice, not MMLU",
          "[...] and the same direction holds on a smaller base-LLM MMLU panel.", "abstract",
          paper_effect="same direction on the base-LLM MMLU panel (6 base LLMs in the pool, Introduction)",
          sweep=_sweep("selection_and_pruning", _BASE_LLMS) + " -p mc_tasks '[\"sciq\"]'"),
    Claim("lrd.pruning_gfmi_only", LRD, "selection_and_pruning", "only GFMI beats random at 15% and 20%",
          "For pruning, GFMI is the only measurement-guided rule that beats Random at the 15% and 20% budgets "
          "[...]", "abstract", paper_effect="GFMI alone beats Random at 15% and 20% (effect sizes not in our digest)",
          sweep=_PRUNING_SWEEP),
    Claim("lrd.pruning_gfmi_median", LRD, "selection_and_pruning", "GFMI has the best median change at every budget",
          "[...] and has the best median change at every budget.", "abstract",
          paper_effect="best median change at every budget (the digest names 15% and 20%; ours 5-20%)",
          sweep=_PRUNING_SWEEP),
    Claim("lrd.pruning_frenet", LRD, "selection_and_pruning", "Frenet works only at the lightest budget",
          "Frenet is effective only at the lightest budget [...]", "abstract",
          paper_effect="beats Random at the lightest budget only (its size not in our digest; ours 5%)",
          sweep=_PRUNING_SWEEP),
    Claim("lrd.pruning_nrs", LRD, "selection_and_pruning", "NRS does not transfer to pruning",
          "[...] while NRS does not transfer from model selection to pruning.", "abstract",
          paper_effect="no better than Random", sweep=_PRUNING_SWEEP),
    # Skean et al., ICML 2025 (Layer by Layer)
    Claim("skean.gain", SKEAN, "mid_layer", "the 40-60%-depth layers beat the last (mean gain)",
          "However, our analysis shows that intermediate layers can encode even richer representations, often "
          "improving performance on a wide range of downstream tasks.", "abstract",
          paper_effect="intermediate layers (e.g. Pythia-410M's at 40%-60% depth) 2%-16% above the last on average "
                       "(Fig. 1; report digest, our translation)",
          sweep=_sweep("mid_layer", _BASE_LLMS)),
    Claim("skean.valley", SKEAN, "mid_layer", "decoders show a mid-depth entropy valley, encoders do not",
          "Our framework highlights how each model layer balances information compression and signal "
          "preservation, revealing why mid-depth embeddings can exceed the last layer's performance.", "abstract",
          paper_effect="valley in autoregressive models, flat in BERT (Fig. 2a)",
          sweep=_sweep("mid_layer", f"{_EMBEDDERS}, {_BASE_LLMS}")),
    Claim("skean.metrics_track", SKEAN, "mid_layer", "in LLMs, prompt entropy or DiME ranks layers as scores do",
          "The mid-layer entropy valley of autoregressive models (Fig. 2a) goes with their high downstream "
          "performance, suggesting that moderate compression filters noise and keeps the key features.",
          "report digest (shared/papers/002), main results 2 (our translation)",
          paper_effect="prompt entropy low (Fig. 2a) and DiME high at the better layers (report digest, our "
                       "translation)",
          scope=SKEAN_LLM_SCOPE,
          sweep=_sweep("mid_layer", _BASE_LLMS)),
    Claim("skean.choice", SKEAN, "mid_layer", "in LLMs a DiME-chosen layer beats the last",
          "Pythia's intermediate layer chosen by DiME scores 3% above the final layer on the MTEB average.",
          "report digest (shared/papers/002), main results 1 (our translation)",
          paper_effect="+3% (Pythia, DiME-chosen layer, MTEB average)",
          scope=SKEAN_LLM_SCOPE,
          sweep=_sweep("mid_layer", _BASE_LLMS)),
    # Hinostroza et al. 2026 (Beyond cosine)
    Claim("cosine.theory", ABLATION, "cosine_vs_ablation", "a block can have ~0 cosine relevance yet be crucial",
          "Our theoretical analysis shows that a layer can exhibit an arbitrarily low cosine similarity score "
          "while still being crucial to the model's performance.", "abstract", kind="demonstration",
          paper_effect="removal can take accuracy from perfect to zero (Introduction)"),
    Claim("cosine.correlation", ABLATION, "cosine_vs_ablation", "cosine vs removal-cost correlation is weak or moderate",
          "empirical evidence from a range of LLMs confirms that the correlation between cosine similarity and "
          "actual performance degradation is often weak or moderate", "abstract",
          paper_effect="weak or moderate, depending on the model (abstract, Introduction)",
          sweep="lrd sweep cosine_vs_ablation -p models '[\"EleutherAI/pythia-410m\", \"Qwen/Qwen2.5-0.5B\"]' "
                "-p pruning_models '[]' -p n_items 128"),
    Claim("cosine.misestimate", ABLATION, "cosine_vs_ablation",
          "cosine ranks blocks no better than unrelated rankings",
          "As a result, in more than 90% of the cases we study, cosine similarity either over- or under-estimates "
          "the true relevance of the layer.", "Introduction (our translation of the digest)",
          paper_effect="> 90% of cases (the paper's description; judged against the share unrelated rankings give)",
          scope=_COSINE_SCOPE,
          sweep="lrd sweep cosine_vs_ablation -p n_items 128"),
    Claim("cosine.dataset", ABLATION, "cosine_vs_ablation", "removal relevance depends on the dataset",
          "This visualisation gives a view sharply different from cosine similarity's, revealing that layer "
          "relevance varies across datasets [...]", "Introduction, Figure 1A (our translation of the digest)",
          paper_effect="relevance varies across 10 datasets (OLMo, Figure 1A)",
          sweep="lrd sweep cosine_vs_ablation -p tasks '[\"sciq\", \"arc_easy\", \"piqa\"]' -p n_items 128"),
    Claim("cosine.pruning", ABLATION, "cosine_vs_ablation", "pruning by accuracy drop beats pruning by cosine",
          "We propose a more robust metric for assessing layer relevance: the actual drop in model accuracy "
          "resulting from the removal of a layer. [...] this approach offers a more accurate picture of layer "
          "importance, allowing for more informed pruning strategies and lightweight models.", "abstract",
          paper_effect="better than cosine, Taylor, FinerCut (Sec. 6)", panel="at least 5 models, each pruned (exact sign-flip over models: p >= 2^-n)",
          sweep=_sweep("cosine_vs_ablation", _BASE_LLMS) + f" -p pruning_models '[{_BASE_LLMS}]'"),
    Claim("cosine.olmo", ABLATION, "cosine_vs_ablation", "OLMo's layer 16: low cosine relevance, -66% when removed",
          "For example, layer 16 of OLMo appears to have low relevance according to cosine similarity (Figure 1B, "
          "low-relevance layers in yellow). However, removing it lowers the average accuracy over the ten datasets "
          "shown by 66%. In fact, removing layer 16 alone brings OLMo's performance on ARC-C down to chance.",
          "Introduction, Figure 1 (our translation of the digest)", paper_effect="-66% average accuracy; ARC-C at chance",
          panel="OLMo-7B (allenai/OLMo-7B-hf)",
          sweep="lrd sweep cosine_vs_ablation -p models '[\"allenai/OLMo-7B-hf\"]' -p pruning_models '[]' "
                "-p device cuda"),
    # Ulanovski et al., NeurIPS 2026 (ILSE, Cayley-Encoder)
    Claim("ilse.fc", ILSE, "cayley_aggregation", "an FC-graph GNN beats the existing aggregations",
          "a lightweight Graph Neural Network over a fully connected graph of LLM layers is more efficient and "
          "achieves significantly stronger predictive performance than existing approaches.", "abstract (v3)",
          paper_effect="FC above Best layer and DWAtt (Table 1: 3 models x 5 tasks)", scope=_ILSE_SIZE_SCOPE, sweep=_sweep("cayley_aggregation", _ILSE_LLMS)),
    Claim("ilse.cayley_performance", ILSE, "cayley_aggregation", "Cayley-Encoder predicts better than FC",
          "We then introduce the Cayley-Encoder, which further improves both efficiency and predictive performance "
          "by replacing the fully connected graph with a Cayley graph over SL(2, Z_n).", "abstract (v3)",
          paper_effect="Cayley against FC per cell (Table 1)", scope=_ILSE_SIZE_SCOPE, sweep=_sweep("cayley_aggregation", _ILSE_LLMS)),
    Claim("ilse.cayley_efficiency", ILSE, "cayley_aggregation", "the Cayley graph is sparser and lighter than FC",
          "[...] further improves both efficiency [...] by replacing the fully connected graph with a Cayley graph "
          "over SL(2, Z_n).", "abstract (v3); memory: token-level ablation (digest)", kind="demonstration",
          paper_effect="12.0x-34.3x less GPU memory on token graphs (Gemma2-2B)", scope=_ILSE_GRAPH_SCOPE),
    Claim("ilse.baselines", ILSE, "cayley_aggregation", "Cayley-Encoder beats every baseline",
          "In an evaluation of Cayley-Encoder across 13 tasks and 9 LLMs, Cayley-Encoder consistently outperforms "
          "baselines [...]", "abstract (v3)", paper_effect="above Last, Best layer and DWAtt (Table 1)",
          scope=_ILSE_SIZE_SCOPE, sweep=_sweep("cayley_aggregation", _ILSE_LLMS)),
    Claim("ilse.gain", ILSE, "cayley_aggregation", "up to 40 points: the paper's own maximum, not testable",
          "[...] achieving improvements of up to 40 percentage points in accuracy [...]", "abstract (v3)",
          paper_effect="up to 40 points (the largest over the paper's own 13 tasks x 9 LLMs)", scope=_ILSE_GAIN_SCOPE),
    Claim("ilse.parameters", ILSE, "cayley_aggregation", "at most 0.1% extra parameters",
          "[...] while introducing at most 0.1% additional parameters relative to the LLM size.", "abstract (v3)",
          kind="demonstration", paper_effect="<= 0.1% (its 9 LLMs, 14M to 8B)", scope=_ILSE_PARAMS_SCOPE),
    Claim("ilse.few_shot", ILSE, "cayley_aggregation", "8-32 shots beat full-data DWAtt and Last",
          "Strong few-shot learning: on Banking77 and MTOP, the Cayley-Encoder needs only 8-32 labelled examples "
          "per class for its accuracy to exceed the DWAtt and Last Layer baselines trained on the full data.",
          "Key findings (our translation of the digest)", paper_effect="8-32 shots > full-data DWAtt, Last",
          scope=_ILSE_SIZE_SCOPE, sweep=_sweep("cayley_aggregation", _ILSE_LLMS)),
    Claim("ilse.mapping", ILSE, "cayley_aggregation", "robust to the layer-to-node mapping (std <= 1.5 points)",
          "The layer-to-node mapping is robust to permutation: over 10 random layer-node mappings at fixed "
          "hyper-parameters, every standard deviation stays within 1.5%, so the gain comes from the graph's "
          "expansion and connectivity, not from particular adjacencies of layers.",
          "Key findings (our translation of the digest)", paper_effect="std <= 1.5 points over 10 mappings",
          scope=Scope("'over 10 random layer-node mappings at fixed hyper-parameters' (Key findings; our translation "
                      "of the digest; the models and tasks of this ablation are not named there), on the paper's "
                      + _ILSE_MODELS, params=ILSE_PARAMS_RANGE),
          sweep="lrd sweep cayley_aggregation -p n_mappings 20"),
]

#: Every claim the book judges, by id.
CLAIMS: dict[str, Claim] = {c.id: c for c in _CLAIMS}
if len(CLAIMS) != len(_CLAIMS):
    raise RuntimeError("duplicate claim ids in lrd.verdicts.claims")


#: Which models a claim's test compares or pools, in the grouping its paper uses
#: (:mod:`lrd.engine.kinds`): ``"backbone"`` (encoder against decoder stacks: the LRD paper's
#: encoder-based embedders against decoder-based embedders and base LLMs), ``"attention"``
#: (bidirectional against causal: Layer by Layer's autoregressive against bidirectional models),
#: ``"language models"`` (the causal LMs only), ``"pruned models"`` (those a chapter prunes) or
#: ``"every model"`` (each model a unit, whatever its kind) or ``"paper's model"`` (a claim about
#: one checkpoint of the paper, tested only on it). Every claim has one entry.
CLAIM_GROUPINGS: dict[str, str] = {
    **{c: "every model" for c in CLAIMS},
    "lrd.architecture": "backbone", "lrd.final_layer": "backbone", "skean.valley": "attention",
    "lrd.selection_llm": "language models",
    # skean.choice's scope (SKEAN_LLM_SCOPE): the paper's number is Pythia's, the panel's language models only
    "skean.choice": "language models",
    **{c: "language models" for c in CLAIMS if c.startswith("cosine.") and c not in ("cosine.theory", "cosine.olmo")},
    **{c: "pruned models" for c in CLAIMS if c.startswith("lrd.pruning") or c == "cosine.pruning"},
    **{c.id: "demonstration" for c in _CLAIMS if c.kind == "demonstration"},
    "cosine.olmo": "paper's model",
}

#: What each grouping means, for the chapters and the dashboard.
GROUPING_TEXT = {
    "backbone": "encoder-based models (BERT-style stacks) against decoder-based ones (decoder-family stacks, "
                "whatever their attention), as the LRD paper groups its embedders and base LLMs",
    "attention": "bidirectional models against causal (autoregressive) ones, as Layer by Layer groups them",
    "language models": "the causal language models only",
    "pruned models": "the models the chapter prunes",
    "every model": "every model of the panel, each one unit",
    "paper's model": "the paper's own model only (a claim about one checkpoint; no other model is a test of it)",
    "demonstration": "no panel: a construction, arithmetic or the paper's own numbers",
}


def grouping_of(claim_id: str) -> str:
    """The grouping a claim's test uses (:data:`CLAIM_GROUPINGS`)."""
    return CLAIM_GROUPINGS[claim(claim_id).id]


def grouping_table(kinds: "pd.DataFrame", chapter: str, *, pruned: Sequence[str] = ()) -> "pd.DataFrame":
    """Which models each claim of ``chapter`` uses, and how it groups them: one row per claim.

    Parameters
    ----------
    kinds : DataFrame
        One row per model with ``model``, ``attention``, ``backbone`` and ``role``
        (:func:`lrd.engine.models.model_kinds`).
    chapter : str
    pruned : sequence of str
        The models the chapter prunes (claims grouped ``"pruned models"``).

    Returns
    -------
    DataFrame
        ``claim`` (its label), ``grouping`` (:data:`GROUPING_TEXT`) and ``models``: for a
        two-group grouping each group's models (``"bidirectional: a, b; causal: c"``), else the
        models it uses.

    Examples
    --------
    >>> import pandas as pd
    >>> k = pd.DataFrame({"model": ["a", "b"], "attention": ["bidirectional", "causal"],
    ...                   "backbone": ["encoder", "decoder"], "role": ["embedder", "language model"]})
    >>> grouping_table(k, "mid_layer").set_index("claim").loc["decoders show a mid-depth entropy valley, encoders do not", "models"]
    'bidirectional: a; causal: b'
    """
    import pandas as pd

    rows = []
    for c in claims_of(chapter).values():
        by = CLAIM_GROUPINGS[c.id]
        if by in ("backbone", "attention"):
            models = "; ".join(f"{label}: {', '.join(kinds.loc[kinds[by] == label, 'model'])}"
                               for label in dict.fromkeys(kinds[by]))
        elif by == "language models":
            models = ", ".join(kinds.loc[kinds["role"] == "language model", "model"]) or "none"
        elif by == "pruned models":
            models = ", ".join(pruned) or "none"
        elif by == "demonstration":
            models = "-"
        elif by == "paper's model":
            models = "none of the panel"
        else:
            models = ", ".join(kinds["model"])
        rows.append({"claim": c.label, "grouping": GROUPING_TEXT[by], "models": models})
    return pd.DataFrame(rows, columns=["claim", "grouping", "models"])


def claim(claim_id: str) -> Claim:
    """The claim with this id; a KeyError listing the known ids otherwise."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim {claim_id!r}; claims: {', '.join(CLAIMS)}") from None


def claims_of(chapter: str) -> dict[str, Claim]:
    """The claims a chapter judges, by short name (``"gain"`` for ``"skean.gain"``)."""
    return {c.name: c for c in CLAIMS.values() if c.chapter == chapter}


# --- the papers' numbers (quoted; the unit the paper states) -----------------------------------

#: Range of the average gain of intermediate layers over the last layer across Skean et al.'s
#: models on 32 MTEB tasks (Fig. 1; the report digest ``shared/papers/002``, Sec. 2 step 1: "2%-16%").
SKEAN_GAIN_RANGE = (0.02, 0.16)
#: Hinostroza et al., Introduction: cosine over- or under-estimates relevance in "more than 90%" of the
#: cases studied (digest: "在我们研究的超过90%的案例中").
COSINE_MISESTIMATE_SHARE = 0.90
#: Ulanovski et al., abstract: "improvements of up to 40 percentage points in accuracy".
ILSE_MAX_GAIN_PP = 40.0
#: Ulanovski et al., abstract: "at most 0.1% additional parameters relative to the LLM size".
ILSE_MAX_PARAM_SHARE = 0.001
#: Ulanovski et al., key findings: standard deviation over 10 random mappings within 1.5%.
ILSE_MAPPING_STD_PP = 1.5

#: The encoder's defaults, from the paper's code: ilge 0.1.0 ``tuning.recommended_config("cayley")``
#: (GIN, hidden 256, 1 message-passing layer, 1 MLP layer in GIN, mean pooling, dropout 0.1, Adam
#: lr 1e-3, weight decay 1e-4, batch 64) and DWAtt's settings from ILSE ``gnn_models.DWAttEncoder``.
ILSE_DEFAULTS = {"hidden": 256, "gnn_layers": 1, "dropout": 0.1, "lr": 1e-3, "weight_decay": 1e-4, "batch_size": 64}

#: The paper's main classification table (accuracy, %), as the NeurIPS digest in
#: ``shared/papers/004_*.txt`` reports it: model -> method -> task -> accuracy.
ILSE_TABLE_ROWS: dict[str, dict[str, dict[str, float]]] = {
    model: {method: dict(zip(("Banking77", "Emotion", "MTOP Domain", "MTOP Intent", "Poem Sentiment"), row))
            for method, row in rows.items()}
    for model, rows in {
        "Pythia-410M": {"last": (61.17, 33.48, 80.88, 66.97, 42.40), "best": (66.67, 35.02, 83.78, 71.18, 45.67),
                        "dwatt": (83.23, 58.60, 98.03, 91.66, 70.87), "fc": (90.65, 75.61, 98.68, 95.04, 75.77),
                        "cayley": (89.43, 73.83, 98.77, 94.72, 70.87)},
        "Gemma2-2B": {"last": (62.16, 26.89, 80.79, 68.02, 35.67), "best": (72.31, 31.27, 87.09, 75.36, 42.79),
                      "dwatt": (88.82, 61.22, 98.39, 90.93, 67.79), "fc": (92.39, 79.90, 99.07, 95.34, 77.12),
                      "cayley": (92.58, 69.60, 99.16, 96.43, 83.27)},
        "Llama3-8B": {"last": (68.25, 34.23, 84.42, 73.39, 40.96), "best": (71.93, 38.42, 89.01, 78.17, 47.02),
                      "dwatt": (90.04, 66.55, 97.97, 92.41, 75.00), "fc": (92.38, 71.64, 98.99, 96.19, 77.98),
                      "cayley": (92.85, 73.43, 99.03, 96.46, 79.04)},
    }.items()
}
