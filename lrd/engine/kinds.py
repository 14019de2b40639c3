"""What kind of model each model is, in the groupings the papers use.

The papers group their models in different ways, and a claim is tested on the grouping its
paper states:

- **backbone** (Jiang, Yang, Tam 2026, LRD, abstract and Sec. 1): encoder-based embedders
  against decoder-based embedders and base LLMs, i.e. a BERT-style encoder stack against a
  decoder-family stack (Llama, Qwen, Gemma, ...) whatever its attention mask. EmbeddingGemma
  (a Gemma 3 decoder stack run with bidirectional attention) is decoder-based.
- **attention** (Skean et al., ICML 2025, Fig. 2a): autoregressive (causal) against
  bidirectional models. EmbeddingGemma is bidirectional.
- **role**: an embedder (loaded with ``AutoModel``, or as the encoder of an encoder-decoder family
  saved alone, e.g. ``T5EncoderModel``; its states pooled into one vector per text)
  or a language model (loaded with ``AutoModelForCausalLM``; the LRD paper's MMLU panel, the
  removal sweeps of Hinostroza et al.).
- **tuning**: a language model is ``"base"`` (pretrained only) or ``"instruct"`` (tuned to
  follow instructions); an embedder is ``"embedding"`` (tuned for sentence embeddings).

Each is read from the model's config (``model_type``, ``use_bidirectional_attention``,
``is_decoder``, ``architectures``) and, for an offline pack, from what its pack states
(:attr:`lrd.engine.packs.Pack.info`: ``kind``, ``tuning``). A hub model's tuning is read from
its name (``instruct``, ``chat``, ``-it``): a heuristic, stated as such in the table.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ModelKind", "GROUPINGS", "model_kind", "grouped", "DECODER_FAMILIES"]

#: ``model_type`` values of decoder-family stacks (causal LMs, or their backbones run as embedders).
#: The one list of which families are decoders. :data:`lrd.engine.models.ARCHITECTURES` states a
#: different fact, where a family's blocks, final norm and embeddings live, for the families whose
#: anatomy is not derived (encoders too); its decoder rows are the members of this set it holds
#: (tests/test_kinds.py::test_the_anatomy_table_s_decoder_rows_are_the_decoder_families_in_it).
DECODER_FAMILIES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3",
    "gemma3_text", "phi", "phi3", "olmo", "olmo2", "granite", "smollm3", "gpt2", "gpt_neox", "gptj", "opt",
    "falcon", "bloom", "mpt", "starcoder2", "stablelm", "cohere", "deepseek_v2", "deepseek_v3",
})

#: The groupings a claim can use: the attribute and its two labels, first the one the papers
#: call "encoders" (the contrast's reference group), then "decoders".
GROUPINGS: dict[str, tuple[str, str]] = {
    "backbone": ("encoder", "decoder"),
    "attention": ("bidirectional", "causal"),
}

_INSTRUCT = re.compile(r"instruct|chat|(?:^|[-_/])it(?:$|[-_ ])", re.IGNORECASE)


@dataclass(frozen=True)
class ModelKind:
    """The kind of one model.

    Attributes
    ----------
    attention : {"causal", "bidirectional"}
    backbone : {"encoder", "decoder"}
        A BERT-style encoder stack or a decoder-family stack (:data:`DECODER_FAMILIES`).
    role : {"embedder", "language model"}
    tuning : {"base", "instruct", "embedding"}
    tuning_source : {"pack", "config", "name"}
        Where ``tuning`` was read: the pack's statement, the config, or the model's name (a heuristic).
    """

    attention: str
    backbone: str
    role: str
    tuning: str
    tuning_source: str = "pack"

    @property
    def family(self) -> str:
        """The LRD paper's three families (plus instruct LMs): "encoder-based embedder",
        "decoder-based embedder", "base LLM" or "instruct LLM"."""
        if self.role == "embedder":
            return f"{self.backbone}-based embedder"
        return "instruct LLM" if self.tuning == "instruct" else "base LLM"

    def row(self) -> dict:
        """The attributes and the family, for a table."""
        return {**asdict(self), "family": self.family}


def model_kind(config: Any, *, kind: str, info: dict | None = None, name: str = "") -> ModelKind:
    """The kind of a model from its config and what its pack states.

    Parameters
    ----------
    config : transformers.PretrainedConfig
        The model's config (a multimodal config's ``text_config`` is read).
    kind : {"encoder", "decoder"}
        How lrd loads it: ``"encoder"`` with ``AutoModel`` (an embedder), ``"decoder"`` with
        ``AutoModelForCausalLM`` (a language model); :func:`lrd.engine.models.load_model`'s choice.
    info : dict, optional
        The pack's :attr:`~lrd.engine.packs.Pack.info` (``tuning`` is read from it).
    name : str
        The model's name or hub id (the tuning heuristic of models without a pack).

    Examples
    --------
    >>> from types import SimpleNamespace as C
    >>> model_kind(C(model_type="gemma3_text", use_bidirectional_attention=True), kind="encoder").family
    'decoder-based embedder'
    >>> model_kind(C(model_type="qwen2"), kind="decoder", name="Qwen/Qwen2.5-0.5B-Instruct").tuning
    'instruct'
    """
    if kind not in ("encoder", "decoder"):
        raise ValueError(f"kind must be 'encoder' or 'decoder', got {kind!r}")
    config = getattr(config, "text_config", None) or config
    model_type = getattr(config, "model_type", "")
    archs = getattr(config, "architectures", None) or []
    decoder_stack = (model_type in DECODER_FAMILIES or bool(getattr(config, "is_decoder", False))
                     or any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs))
    bidirectional = bool(getattr(config, "use_bidirectional_attention", False)) or not decoder_stack
    role = "embedder" if kind == "encoder" else "language model"
    info = info or {}
    if role == "embedder":
        tuning, source = "embedding", "pack" if info else "config"
    elif "tuning" in info:
        tuning, source = info["tuning"], "pack"
    else:
        tuning, source = ("instruct" if _INSTRUCT.search(name) else "base"), "name"
    if tuning not in ("base", "instruct", "embedding"):
        raise ValueError(f"tuning must be 'base', 'instruct' or 'embedding', got {tuning!r}")
    return ModelKind("bidirectional" if bidirectional else "causal", "decoder" if decoder_stack else "encoder",
                     role, tuning, source)


def grouped(frame: "pd.DataFrame", kinds: "pd.DataFrame", by: str) -> "pd.DataFrame":
    """``frame`` with its ``kind`` column set to the two-group label of grouping ``by``
    (:data:`GROUPINGS`): ``"encoder"`` for the first label, ``"decoder"`` for the second, the
    words the contrast tests of :mod:`lrd.verdicts` read. ``frame`` needs a ``model`` column."""
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; one of {sorted(GROUPINGS)}")
    first, second = GROUPINGS[by]
    labels = kinds.set_index("model")[by].map({first: "encoder", second: "decoder"})
    missing = sorted(set(frame["model"]) - set(labels.index))
    if missing:
        raise ValueError(f"no kind for models {missing}; pass model_kinds() of every model in the frame")
    return frame.assign(kind=frame["model"].map(labels).to_numpy())
