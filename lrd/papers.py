"""The papers this book reproduces, and the claims we compare against.

Everything here is quoted from the papers (the source of each quote is given); nothing here is
measured. Chapters print these next to what they measure.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str
    authors: str
    title: str
    venue: str

    def cite(self) -> str:
        return f"{self.authors}, “{self.title}”, {self.venue}"


@dataclass(frozen=True)
class Claim:
    paper: Paper
    source: str  # where in the paper
    text: str  # quoted


LRD = Paper("jiang2026lrd", "Jingzhou Jiang, Yi Yang, Kar Yan Tam",
            "Layer-wise Representation Dynamics: An Empirical Investigation Across Embedders and Base LLMs",
            "arXiv:2605.12714 (2026)")

LRD_CLAIMS = {
    "differences": Claim(LRD, "abstract", "Applying LRD to 31 models (encoder-based and decoder-based embedders, "
                         "plus base LLMs) on 30 MTEB tasks reveals architectural and task-level differences that "
                         "are not apparent from final-layer representations alone."),
    "selection": Claim(LRD, "abstract", "For selection, all three model-level scores correlate positively with "
                       "downstream MTEB performance, with end-to-end subspace displacement (d_{0,L}) the strongest, "
                       "and the same direction holds on a smaller base-LLM MMLU panel."),
    "pruning": Claim(LRD, "abstract", "For pruning, GFMI is the only measurement-guided rule that beats Random at "
                     "the 15% and 20% budgets and has the best median change at every budget."),
    "pruning_frenet_nrs": Claim(LRD, "abstract", "Frenet is effective only at the lightest budget, while NRS does not "
                                "transfer from model selection to pruning."),
}


ABLATION = Paper("hinostroza2026rethinking",
                 "Cristian Hinostroza, Rodrigo Toro Icarte, Christ Devia, Andres Carvallo, Eugenio Herrera-Berg, "
                 "Denis Parra, Jorge F. Silva",
                 "Rethinking Layer Relevance in Large Language Models Beyond Cosine Similarity",
                 "arXiv:2605.14075 (2026), ICLR 2026")

# Quoted from the arXiv abstract (arxiv.org/abs/2605.14075, v1, 13 May 2026). The OLMo example is
# from a third-party summary of the paper (en.papernotes.org, ICLR 2026 notes), not the paper's text.
ABLATION_CLAIMS = {
    "proxy": Claim(ABLATION, "abstract", "we demonstrate that cosine similarity is a poor proxy for the actual "
                   "performance degradation caused by layer removal."),
    "theory": Claim(ABLATION, "abstract", "Our theoretical analysis shows that a layer can exhibit an arbitrarily "
                    "low cosine similarity score while still being crucial to the model's performance."),
    "correlation": Claim(ABLATION, "abstract", "empirical evidence from a range of LLMs confirms that the correlation "
                         "between cosine similarity and actual performance degradation is often weak or moderate"),
    "pruning": Claim(ABLATION, "abstract", "We propose a more robust metric for assessing layer relevance: the actual "
                     "drop in model accuracy resulting from the removal of a layer. [...] this approach offers a more "
                     "accurate picture of layer importance, allowing for more informed pruning strategies and "
                     "lightweight models."),
    "olmo": Claim(ABLATION, "third-party summary (en.papernotes.org), not verified against the paper",
                  "Layer 16 of OLMo appears \"unimportant\" by cosine similarity [...], yet removing it results in "
                  "a 66% average accuracy crash across ten datasets"),
}


ILSE = Paper("ulanovski2026ilse", "Tom Ulanovski, Eyal Blyachman, Maya Bechler-Speicher",
             "Improving LLM Final Representations with Inter-Layer Geometry",
             "arXiv:2603.22665 v3 (NeurIPS 2026); code: github.com/tomulanovski/ILSE, PyPI package ilge 0.1.0")

ILSE_CLAIMS = {
    "fc": Claim(ILSE, "abstract (v3)", "a lightweight Graph Neural Network over a fully connected graph of LLM layers "
                "is more efficient and achieves significantly stronger predictive performance than existing "
                "approaches."),
    "cayley": Claim(ILSE, "abstract (v3)", "We then introduce the Cayley-Encoder, which further improves both "
                    "efficiency and predictive performance by replacing the fully connected graph with a Cayley "
                    "graph over SL(2, Z_n)."),
    "baselines": Claim(ILSE, "abstract (v3)", "In an evaluation of Cayley-Encoder across 13 tasks and 9 LLMs, "
                       "Cayley-Encoder consistently outperforms baselines, achieving improvements of up to 40 "
                       "percentage points in accuracy, while introducing at most 0.1% additional parameters "
                       "relative to the LLM size."),
    "few_shot": Claim(ILSE, "abstract (v3)", "We further show that Cayley-Encoder is effective in few-shot regimes."),
}

# Numbers quoted from the paper's abstract (v3), the unit the abstract states.
ILSE_MAX_GAIN_PP = 40.0  # "improvements of up to 40 percentage points in accuracy"
ILSE_MAX_PARAM_SHARE = 0.001  # "at most 0.1% additional parameters relative to the LLM size"

# The encoder's defaults, from the paper's code: ilge 0.1.0 `tuning.recommended_config("cayley")`
# (GIN, hidden 256, 1 message-passing layer, 1 MLP layer in GIN, mean pooling, dropout 0.1, Adam
# lr 1e-3, weight decay 1e-4, batch 64) and DWAtt's settings from ILSE `gnn_models.DWAttEncoder`.
ILSE_DEFAULTS = {"hidden": 256, "gnn_layers": 1, "dropout": 0.1, "lr": 1e-3, "weight_decay": 1e-4, "batch_size": 64}

# The paper's per-model result rows (Pythia-410M, Gemma2-2B, Llama3-8B; its main tables) were not
# reachable from this offline machine: the arXiv HTML is stored only as its first page and neither
# the ILSE repository nor the ilge package ships the tables. Left empty on purpose; the chapter says so.
ILSE_TABLE_ROWS: dict[str, dict[str, float]] = {}


SKEAN = Paper("skean2025layer", "Oscar Skean, Md Rifat Arefin, Dan Zhao, Niket Patel, Jalal Naghiyev, Yann LeCun, "
              "Ravid Shwartz-Ziv", "Layer by Layer: Uncovering Hidden Representations in Language Models",
              "ICML 2025, PMLR 267:55854-55875")

MID_LAYER_CLAIMS = {
    "intermediate": Claim(SKEAN, "abstract", "However, our analysis shows that intermediate layers can encode even "
                          "richer representations, often improving performance on a wide range of downstream tasks."),
    "consistent": Claim(SKEAN, "Figure 1 (caption)", "Intermediate layers consistently outperform final layers on "
                        "downstream tasks."),
    "compression": Claim(SKEAN, "abstract", "Our framework highlights how each model layer balances information "
                         "compression and signal preservation, revealing why mid-depth embeddings can exceed the "
                         "last layer's performance."),
    "metrics": Claim(SKEAN, "abstract", "we propose a unified framework of representation quality metrics based on "
                     "information theory, geometry, and invariance to input perturbations."),
}

# Range of the average relative gain of the best intermediate layer over the last layer across the
# paper's models on its 32 MTEB tasks (Section 4; the paper's "2%-16%").
SKEAN_GAIN_RANGE = (0.02, 0.16)
