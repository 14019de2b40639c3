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
}

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
