"""Named panels of real hub models, as data: what ``lrd sweep CHAPTER --panel NAME`` runs.

Each :class:`HubModel` row gives a hub id, the revision its source describes (mteb's, for the
sentence embedders; ``None``: none known here; ``lrd`` loads the hub's ``main`` at run time and
a unit's cache key records the commit it loaded), its size (total and, where the source gives it,
non-embedding parameters), layers (transformer blocks), hidden size, vocabulary, whether the
input and output embeddings are tied, its kind and training (a decoder ``"base"`` or
``"instruct"`` model; an encoder ``"mlm"`` model or ``"contrastive"`` sentence embedder), its
licence, and in ``source`` where each number comes from. Sentence embedders' revision,
parameters and embedding size (= hidden size) are those of ``mteb.get_model_meta(hub_id)``
(mteb 2.26). No number here is measured by the book: they are the models' published sizes,
used to declare units and to estimate costs (:mod:`lrd.units.cost`) without downloading a file.

A :class:`Panel` names models of this table with what it is for, and for a claim's panel the
scope its paper states, quoted with its location (``scope``): a panel never reaches beyond it.

This module imports nothing heavy (no torch, no transformers): ``lrd sweep --panel NAME
--dry-run`` lists a panel's units offline in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Kinds of model and what each may be trained as.
KINDS = {"decoder": ("base", "instruct"), "encoder": ("mlm", "contrastive")}

# Sources, named once ----------------------------------------------------------------------------
_PYTHIA = ("Biderman et al., ICML 2023, Pythia, Table 1 (layers, model dim, non-embedding parameters; the deduped "
           "and standard models share each architecture) and the github.com/EleutherAI/pythia README's table "
           "(total and non-embedding parameters); vocabulary 50304, untied "
           "(total - non-embedding = 2 x 50304 x model dim, checked by tests/test_panels.py)")
_PYTHIA_SMALL = ("github.com/EleutherAI/pythia README, model table (the 14M and 31M models were added after the "
                 "paper); vocabulary 50304, untied (total - non-embedding = 2 x 50304 x model dim)")
_QWEN = ("Qwen Team 2024, Qwen2.5 Technical Report, Table 1 (layers, tied embeddings); total and non-embedding "
         "parameters and hidden size from the model's hub card and config.json (Qwen2.5 series)")
_LLAMA32 = ("Meta, Llama 3.2 model card (1.23B / 3.21B parameters, tied embeddings); layers and hidden size from "
            "its config.json")
_LLAMA3 = "Meta, Llama 3 model card (8.03B parameters); layers and hidden size from its config.json"
_GEMMA2 = ("Gemma Team 2024, Gemma 2 report, Tables 1-2 (2B: 26 layers, model dim 2304, 590M embedding + 2024M "
           "non-embedding parameters; tied)")
_OLMO = ("Groeneveld et al. 2024, OLMo, Table 1 (7B: 32 layers, model dim 4096); parameters from the hub card "
         "(6.89B); untied, vocabulary (padded) 50304")
_BERT = "Devlin et al. 2019, BERT, Sec. 3 (BASE: L=12, H=768, 110M; LARGE: L=24, H=1024, 340M); vocabulary 30522"
_ROBERTA = "Liu et al. 2019, RoBERTa, Sec. 4-5 (BERT-BASE/LARGE shapes; 125M / 355M); vocabulary 50265"
_MTEB = "mteb 2.26 get_model_meta (revision, n_parameters, embed_dim, license)"
_OWN_PACK = "layers and vocabulary: the config.json of the book's offline pack of the same upstream model"
_BERT_SMALL = "layers: 12-layer BERT of hidden 384 (BERT-small shape; its parameter count matches, tests/test_panels.py)"


@dataclass(frozen=True)
class HubModel:
    """One model on the Hugging Face hub, with its published size.

    Attributes
    ----------
    hub_id : str
    revision : str or None
        The commit of the hub repository the source's numbers describe; ``None``: none known here.
        Not passed to the loader, which takes the hub's ``main`` (its commit enters the units' keys).
    params : int
        Total parameters (as published: a rounded figure where the source rounds).
    layers : int
        Transformer blocks (the hidden states are ``layers + 1``).
    hidden : int
        Hidden size (model dimension).
    kind : {"decoder", "encoder"}
    training : str
        A decoder's ``"base"`` or ``"instruct"``; an encoder's ``"mlm"`` or ``"contrastive"``.
    licence : str
    source : str
        Where each number comes from.
    architecture : str
        The transformers ``model_type`` of its config (what a random stand-in is built as).
    vocab : int, optional
        Rows of the input embedding.
    tied : bool, optional
        Whether the output embedding is the input one.
    non_embedding : int, optional
        Parameters outside the embedding matrices, where the source gives them.
    gated : bool
        The hub asks for an accepted licence before download.
    """

    hub_id: str
    revision: str | None
    params: int
    layers: int
    hidden: int
    kind: str
    training: str
    licence: str
    source: str
    architecture: str
    vocab: int | None = None
    tied: bool | None = None
    non_embedding: int | None = None
    gated: bool = False

    def __post_init__(self):
        if self.kind not in KINDS or self.training not in KINDS[self.kind]:
            raise ValueError(f"{self.hub_id}: kind {self.kind!r} / training {self.training!r} is not one of {KINDS}")
        if min(self.params, self.layers, self.hidden) < 1:
            raise ValueError(f"{self.hub_id}: params, layers and hidden must be positive")

    @property
    def embedding_params(self) -> int:
        """Parameters of the embedding matrices (input, and output unless tied): the published
        non-embedding count's complement, else ``vocab x hidden`` (once or twice)."""
        if self.non_embedding is not None:
            return self.params - self.non_embedding
        if self.vocab is None:
            return 0
        return self.vocab * self.hidden * (1 if self.tied or self.kind == "encoder" else 2)

    @property
    def lm_head_params(self) -> int:
        """Parameters of the output projection a decoder's scoring multiplies by (``vocab x hidden``)."""
        return (self.vocab or 0) * self.hidden if self.kind == "decoder" else 0


def _pythia(size: str, layers: int, hidden: int, params: int, non_embedding: int, source: str = _PYTHIA) -> HubModel:
    return HubModel(f"EleutherAI/pythia-{size}-deduped", None, params, layers, hidden, "decoder", "base",
                    "apache-2.0", source, "gpt_neox", vocab=50304, tied=False, non_embedding=non_embedding)


def _mteb(hub_id: str, revision: str, params: int, layers: int, hidden: int, licence: str, architecture: str,
          vocab: int, layers_source: str) -> HubModel:
    return HubModel(hub_id, revision, params, layers, hidden, "encoder", "contrastive", licence,
                    f"{_MTEB}; {layers_source}", architecture, vocab=vocab, tied=None)


#: Every model a panel may name, by hub id.
MODELS: dict[str, HubModel] = {m.hub_id: m for m in [
    # Pythia, deduplicated Pile (Biderman et al. 2023)
    _pythia("14m", 6, 128, 14_067_712, 1_189_888, _PYTHIA_SMALL),
    _pythia("31m", 6, 256, 30_494_720, 4_739_072, _PYTHIA_SMALL),
    _pythia("70m", 6, 512, 70_426_624, 18_915_328),
    _pythia("160m", 12, 768, 162_322_944, 85_056_000),
    _pythia("410m", 24, 1024, 405_334_016, 302_311_424),
    _pythia("1b", 16, 2048, 1_011_781_632, 805_736_448),
    _pythia("1.4b", 24, 2048, 1_414_647_808, 1_208_602_624),
    _pythia("2.8b", 32, 2560, 2_775_208_960, 2_517_652_480),
    # Qwen2.5 base models
    HubModel("Qwen/Qwen2.5-0.5B", None, 490_000_000, 24, 896, "decoder", "base", "apache-2.0", _QWEN, "qwen2",
             vocab=151936, tied=True, non_embedding=360_000_000),
    HubModel("Qwen/Qwen2.5-1.5B", None, 1_540_000_000, 28, 1536, "decoder", "base", "apache-2.0", _QWEN, "qwen2",
             vocab=151936, tied=True, non_embedding=1_310_000_000),
    HubModel("Qwen/Qwen2.5-3B", None, 3_090_000_000, 36, 2048, "decoder", "base", "qwen-research", _QWEN, "qwen2",
             vocab=151936, tied=True, non_embedding=2_770_000_000),
    HubModel("Qwen/Qwen2.5-7B", None, 7_610_000_000, 28, 3584, "decoder", "base", "apache-2.0", _QWEN, "qwen2",
             vocab=152064, tied=False, non_embedding=6_530_000_000),
    # Llama 3.x base models (gated on the hub)
    HubModel("meta-llama/Llama-3.2-1B", None, 1_230_000_000, 16, 2048, "decoder", "base", "llama3.2", _LLAMA32,
             "llama", vocab=128256, tied=True, gated=True),
    HubModel("meta-llama/Llama-3.2-3B", None, 3_210_000_000, 28, 3072, "decoder", "base", "llama3.2", _LLAMA32,
             "llama", vocab=128256, tied=True, gated=True),
    HubModel("meta-llama/Meta-Llama-3-8B", None, 8_030_000_000, 32, 4096, "decoder", "base", "llama3", _LLAMA3,
             "llama", vocab=128256, tied=False, gated=True),
    # Gemma 2 (gated on the hub)
    HubModel("google/gemma-2-2b", None, 2_614_000_000, 26, 2304, "decoder", "base", "gemma", _GEMMA2, "gemma2",
             vocab=256000, tied=True, non_embedding=2_024_000_000, gated=True),
    # OLMo (the cosine paper's example, Hinostroza et al. 2026)
    HubModel("allenai/OLMo-7B-hf", None, 6_890_000_000, 32, 4096, "decoder", "base", "apache-2.0", _OLMO, "olmo",
             vocab=50304, tied=False),
    # MLM encoders
    HubModel("google-bert/bert-base-uncased", None, 110_000_000, 12, 768, "encoder", "mlm", "apache-2.0", _BERT,
             "bert", vocab=30522),
    HubModel("google-bert/bert-large-uncased", None, 340_000_000, 24, 1024, "encoder", "mlm", "apache-2.0", _BERT,
             "bert", vocab=30522),
    HubModel("FacebookAI/roberta-base", None, 125_000_000, 12, 768, "encoder", "mlm", "mit", _ROBERTA, "roberta",
             vocab=50265),
    HubModel("FacebookAI/roberta-large", None, 355_000_000, 24, 1024, "encoder", "mlm", "mit", _ROBERTA, "roberta",
             vocab=50265),
    # contrastive sentence embedders (mteb's model metadata)
    _mteb("sentence-transformers/all-MiniLM-L6-v2", "8b3219a92973c328a8e22fadcfa821b5dc75636a", 22_713_216, 6, 384,
          "apache-2.0", "bert", 30522, _OWN_PACK),
    _mteb("sentence-transformers/all-mpnet-base-v2", "9a3225965996d404b775526de6dbfe85d3368642", 109_486_464, 12, 768,
          "apache-2.0", "mpnet", 30527, _OWN_PACK),
    _mteb("BAAI/bge-small-en-v1.5", "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a", 33_400_000, 12, 384, "mit", "bert",
          30522, _BERT_SMALL),
    _mteb("intfloat/e5-small-v2", "dca8b1a9dae0d4575df2bf423a5edb485a431236", 33_000_000, 12, 384, "mit", "bert",
          30522, _BERT_SMALL),
    _mteb("thenlper/gte-small", "17e1f347d17fe144873b1201da91788898c639cd", 33_360_512, 12, 384, "mit", "bert",
          30522, _BERT_SMALL),
    _mteb("google/embeddinggemma-300m", "64614b0b8b64f0c6c1e52b07e4e9a4e8fe4d2da2", 307_581_696, 24, 768, "gemma",
          "gemma3_text", 262144, _OWN_PACK),
]}


@dataclass(frozen=True)
class Panel:
    """Models of :data:`MODELS` run together.

    Attributes
    ----------
    name : str
    models : tuple of str
        Hub ids, keys of :data:`MODELS`.
    purpose : str
        What the panel is for.
    scope : str, optional
        For a claim's panel: the scope its paper states, quoted with its location; the panel's
        models lie within it.
    """

    name: str
    models: tuple[str, ...]
    purpose: str
    scope: str | None = None
    rows: tuple[HubModel, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        unknown = [m for m in self.models if m not in MODELS]
        if unknown or not self.models:
            raise ValueError(f"panel {self.name!r}: models not in lrd.units.panels.MODELS: {unknown or 'none given'}")
        object.__setattr__(self, "rows", tuple(MODELS[m] for m in self.models))

    def of_kind(self, kind: str) -> list[str]:
        """The panel's hub ids of one kind (``"decoder"`` or ``"encoder"``), in order."""
        return [m.hub_id for m in self.rows if m.kind == kind]


_PYTHIA_IDS = tuple(f"EleutherAI/pythia-{s}-deduped" for s in ("14m", "31m", "70m", "160m", "410m", "1b", "1.4b", "2.8b"))

#: The panels, by name.
PANELS: dict[str, Panel] = {p.name: p for p in [
    Panel("pythia-deduped", _PYTHIA_IDS, "a size sweep of one decoder family, one training set (14M to 2.8B)"),
    Panel("qwen2.5-base", ("Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-3B", "Qwen/Qwen2.5-7B"),
          "base (not instruction-tuned) decoders of one recent family, 0.5B to 7B"),
    Panel("llama3.2-base", ("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-3B"),
          "Llama 3.2 base decoders (gated: accept Meta's licence on the hub first)"),
    Panel("mlm-encoders", ("google-bert/bert-base-uncased", "google-bert/bert-large-uncased", "FacebookAI/roberta-base",
                           "FacebookAI/roberta-large"),
          "masked-language-model encoders, not trained as sentence embedders"),
    Panel("sentence-embedders", ("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2",
                                 "BAAI/bge-small-en-v1.5", "intfloat/e5-small-v2", "thenlper/gte-small",
                                 "google/embeddinggemma-300m"),
          "contrastive sentence embedders (sizes and revisions from mteb's model metadata)"),
    Panel("olmo", ("allenai/OLMo-7B-hf",), "the cosine paper's own example model (cosine.olmo)",
          scope="Hinostroza et al. 2026 (shared/papers/003): the paper's OLMo example, on OLMo-7B"),
    Panel("ilse-panel", ("EleutherAI/pythia-410m-deduped", "google/gemma-2-2b", "meta-llama/Meta-Llama-3-8B"),
          "the ILSE paper's three base models",
          scope="Ulanovski et al. 2026 (shared/papers/004, Sec. 4 and Table 1): 'Pythia-410M, Gemma2-2B, Llama3-8B'; "
                "limitations: 'experiments cover up to 8B' (the paper's Pythia-410M: the deduped weights are used here, "
                "the paper does not say which)"),
    Panel("skean-panel", ("EleutherAI/pythia-70m-deduped", "EleutherAI/pythia-160m-deduped",
                          "EleutherAI/pythia-410m-deduped", "EleutherAI/pythia-1b-deduped",
                          "EleutherAI/pythia-1.4b-deduped", "EleutherAI/pythia-2.8b-deduped",
                          "google-bert/bert-base-uncased", "google-bert/bert-large-uncased"),
          "transformer decoders and BERT encoders of the Layer-by-Layer paper's families",
          scope="Skean et al. 2025 (shared/papers/002, Sec. 1, models): 'Transformer (Pythia, LLaMA3), SSM (Mamba), "
                "BERT and bidirectional models (LLM2vec), parameters from tens of millions to billions' (Mamba and "
                "LLM2vec are not run by the book's chapters; LLaMA3 is in llama3.2-base)"),
]}


def panel(name: str) -> Panel:
    """The panel called ``name``.

    Raises
    ------
    ValueError
        No such panel; the message lists the panels.
    """
    if name not in PANELS:
        raise ValueError(f"no panel {name!r}; panels: {', '.join(PANELS)}")
    return PANELS[name]


_PACK = "the offline pack's config.json (layers, hidden, vocabulary, tying)"

#: The published sizes of the book's offline packs' upstream models, by offline key: what the cost
#: model (:mod:`lrd.units.cost`) is checked with against the book's measured cold runs. Not a
#: panel: these run offline already (``lrd sweep CHAPTER`` without ``--panel``).
OFFLINE: dict[str, HubModel] = {
    "minilm": MODELS["sentence-transformers/all-MiniLM-L6-v2"],
    "mpnet": MODELS["sentence-transformers/all-mpnet-base-v2"],
    "embeddinggemma": MODELS["google/embeddinggemma-300m"],
    "e5small": HubModel("intfloat/multilingual-e5-small", "fd1525a9fd15316a2d503bf26ab031a61d056e98", 118_000_000, 12,
                        384, "encoder", "contrastive", "mit", f"{_MTEB}; {_PACK}", "bert", vocab=250037),
    "smollm2": HubModel("HuggingFaceTB/SmolLM2-135M-Instruct", None, 135_000_000, 30, 576, "decoder", "instruct",
                        "apache-2.0", f"parameters: the model's name (135M); {_PACK}", "llama", vocab=49152, tied=True),
    "gemma3": HubModel("google/gemma-3-270m", None, 270_000_000, 18, 640, "decoder", "base", "gemma",
                       f"Google's Gemma 3 270M announcement (170M embedding, 100M transformer parameters); {_PACK}",
                       "gemma3_text", vocab=262144, tied=True, non_embedding=100_000_000),
    "qwen": HubModel("Qwen/Qwen2.5-Coder-0.5B-Instruct", None, 490_000_000, 24, 896, "decoder", "instruct",
                     "apache-2.0", f"the model's hub card (0.49B, 0.36B non-embedding); {_PACK}", "qwen2",
                     vocab=151936, tied=True, non_embedding=360_000_000),
    "qwen15": HubModel("Qwen/Qwen2.5-Coder-1.5B-Instruct", None, 1_540_000_000, 28, 1536, "decoder", "instruct",
                       "apache-2.0", f"the model's hub card (1.54B, 1.31B non-embedding); {_PACK}", "qwen2",
                       vocab=151936, tied=True, non_embedding=1_310_000_000),
}


def models_within(*, kind: str | None = None, training: str | None = None,
                  params: tuple[float, float] | None = None) -> list[HubModel]:
    """The rows of :data:`MODELS` of a kind, a training and a size range (inclusive), smallest
    first: what a planner draws a claim's panel from within the scope its paper states (e.g.
    ``params=(405_334_016, 8_030_261_248)``, the ILSE paper's Pythia-410M to Llama3-8B)."""
    lo, hi = params or (0, float("inf"))
    rows = [m for m in MODELS.values() if (kind is None or m.kind == kind)
            and (training is None or m.training == training) and lo <= m.params <= hi]
    return sorted(rows, key=lambda m: m.params)


def panel_parameters(chapter: str, name: "str | Panel") -> dict:
    """The parameters that run ``chapter`` on panel ``name`` (a name of :data:`PANELS`, or a
    :class:`Panel`): each of the chapter's model
    parameters (:data:`lrd.book.parameters.RULES`) set from the panel's models of the kind it
    takes: ``models`` (and ``encoders``) its models of that kind, a single model (the Cayley
    chapter's ``ablation_model``) its first, and the pruned models (``pruning_models``) every model
    the chapter runs. A parameter of a kind the panel lacks keeps the chapter's default where
    that may be empty or is an offline model (the cosine chapter's encoder section), else the
    panel is refused.

    Raises
    ------
    ValueError
        No such panel, or the chapter's ``models`` take a kind the panel has none of.
    """
    from lrd.book.parameters import RULES

    chosen = name if isinstance(name, Panel) else panel(name)
    name = chosen.name
    rules = RULES.get(chapter, {})
    out: dict = {}
    for key, rule in rules.items():
        if rule.model_kind is None or rule.one_of is not None:
            continue
        ids = list(chosen.models) if rule.model_kind == "any" else chosen.of_kind(rule.model_kind)
        if key == "models":
            if not ids:
                raise ValueError(f"panel {name!r} has no {rule.model_kind}s, and {chapter}'s models take "
                                 f"{rule.model_kind}s; panels with some: "
                                 + ", ".join(p.name for p in PANELS.values() if p.of_kind(rule.model_kind)))
            out[key] = ids
        elif ids:
            out[key] = ids if rule.non_empty or key.endswith("s") else ids[0]
    for key, rule in rules.items():  # the subsets of the models: every model the chapter runs
        if rule.model_kind is not None and rule.one_of is not None and rule.one_of in out:
            out[key] = list(out[rule.one_of])
    return out
