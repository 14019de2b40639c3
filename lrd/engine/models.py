"""Load a model by offline key, Hugging Face hub id or local folder, and know its anatomy.

Layer numbering follows Hugging Face ``hidden_states``: layer 0 is the embedding output and
layer ``l`` (1..L) the output of transformer block ``l``.
"""

from __future__ import annotations

import difflib
import errno
import functools
import hashlib
import inspect
import json
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from importlib import metadata
from typing import TYPE_CHECKING, Any, Callable, Sequence

from lrd.engine import packs
from lrd.engine.cache import stable_json
from lrd.engine.kinds import DECODER_FAMILIES, ModelKind, model_kind
from lrd.engine.store import atomic_write, content_sha256, folder as lrd_folder

if TYPE_CHECKING:  # torch is imported where a model is loaded or probed: declaring units needs none
    import pandas as pd
    import torch

# Where each architecture keeps its blocks, final norm and token embeddings, as attribute
# paths from the loaded model object (the base model for encoders, the *ForCausalLM for
# decoders). One table, not hasattr chains. A model whose family has no row has its anatomy
# derived from the module tree and checked on a probe input (:func:`derive_anatomy`); a row
# overrides that, and is what to add for a family the derivation cannot read. A decoder family's
# row is written from its *ForCausalLM; the same family loaded with AutoModel (the base model,
# e.g. EmbeddingGemma's Gemma3TextModel) reads it below the base-model prefix ("model."), see
# :func:`architecture_row`.
#
# Which families are decoders is not this table's fact but :data:`lrd.engine.kinds.DECODER_FAMILIES`
# (every decoder-family ``model_type``, with a row here or not: a family without a row has its
# anatomy derived); a decoder family's row here must be one of them, an encoder family's row must
# not (tests/test_kinds.py::test_the_anatomy_table_s_decoder_rows_are_the_decoder_families_in_it).
ARCHITECTURES: dict[str, dict[str, str | None]] = {
    # encoders (loaded with AutoModel)
    "bert": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    "roberta": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    "xlm-roberta": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    "mpnet": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    "deberta-v2": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    "electra": {"blocks": "encoder.layer", "final_norm": None, "embeddings": "embeddings"},
    # decoders (loaded with AutoModelForCausalLM)
    **{
        name: {"blocks": "model.layers", "final_norm": "model.norm", "embeddings": "model.embed_tokens"}
        for name in ["llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text",
                     "phi3", "olmo", "olmo2", "granite", "smollm3"]
    },
    "gpt2": {"blocks": "transformer.h", "final_norm": "transformer.ln_f", "embeddings": "transformer.wte"},
    "gpt_neox": {"blocks": "gpt_neox.layers", "final_norm": "gpt_neox.final_layer_norm",
                 "embeddings": "gpt_neox.embed_in"},
    "opt": {"blocks": "model.decoder.layers", "final_norm": "model.decoder.final_layer_norm",
            "embeddings": "model.decoder.embed_tokens"},
}


def _get(obj: Any, path: str) -> Any:
    return reduce(getattr, path.split("."), obj)


#: Config attributes that give the number of transformer blocks, in the order they are tried.
LAYER_COUNT_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")


def _layer_count(config: Any) -> int | None:
    config = getattr(config, "text_config", None) or config
    for key in LAYER_COUNT_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _add_a_row(model_type: str, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"cannot derive the anatomy of architecture {model_type!r}: {what}. Add a row to "
        f"lrd.engine.models.ARCHITECTURES giving the attribute paths of its blocks (the ModuleList), final norm "
        f"(None when the last block's output is the model's output) and token embeddings, e.g. "
        f"ARCHITECTURES[{model_type!r}] = {{'blocks': 'model.layers', 'final_norm': 'model.norm', "
        f"'embeddings': 'model.embed_tokens'}}")


def _block_list(hf: torch.nn.Module, n_layers: int, model_type: str) -> str:
    """Path of the ``nn.ModuleList`` of ``n_layers`` modules of one class, the shallowest one."""
    import torch

    found = [name for name, m in hf.named_modules() if name and isinstance(m, torch.nn.ModuleList)
             and len(m) == n_layers and len({type(b) for b in m}) == 1]
    if not found:
        raise _add_a_row(model_type, f"no nn.ModuleList of {n_layers} blocks (its config's layer count) was found")
    depth = min(n.count(".") for n in found)
    shallowest = [n for n in found if n.count(".") == depth]
    if len(shallowest) > 1:
        raise _add_a_row(model_type, f"several block lists could be the transformer blocks ({', '.join(shallowest)})")
    return shallowest[0]


def _probe_ids(hf: torch.nn.Module, n_tokens: int = 7) -> torch.Tensor:
    import torch

    vocab = hf.get_input_embeddings().num_embeddings
    return (torch.arange(n_tokens) * 7 + 3).remainder(vocab)[None]


def _first_tensor(args: tuple, kwargs: dict) -> torch.Tensor | None:
    import torch

    return next((a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)), None)


def _final_norm(hf: torch.nn.Module, blocks_path: str, model_type: str) -> str | None:
    """Path of the module that maps the last block's output to the model's last hidden state,
    found on a probe input: ``None`` when the output is the last block's own (encoders); else
    the first module called after the last block whose input is that block's output and whose
    output is the model's last hidden state. Anything else is an error naming the table."""
    import torch

    blocks = _get(hf, blocks_path)
    inside = {id(m) for m in blocks.modules()}
    base = hf.base_model
    seen: list[tuple[str, torch.Tensor | None, Any]] = []
    record = {"last": None}

    def on_block(module, args, output):
        record["last"] = output[0] if isinstance(output, tuple) else output
        seen.clear()  # only what runs after the last block counts

    def on_module(name):
        def hook(module, args, kwargs, output):
            if record["last"] is not None:
                seen.append((name, _first_tensor(args, kwargs), output))
        return hook

    handles = [blocks[-1].register_forward_hook(on_block)]
    handles += [m.register_forward_hook(on_module(name), with_kwargs=True) for name, m in hf.named_modules()
                if name and id(m) not in inside and m is not base and not isinstance(m, torch.nn.ModuleList)]
    ids = _probe_ids(hf).to(next(hf.parameters()).device)
    kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if "use_cache" in inspect.signature(base.forward).parameters:
        kwargs["use_cache"] = False
    try:
        with torch.no_grad():
            out = base(**kwargs)
    finally:
        for h in handles:
            h.remove()
    last, h = out[0] if isinstance(out, tuple) else out.last_hidden_state, record["last"]
    if h is None or h.shape != last.shape:
        raise _add_a_row(model_type, f"its last block ({blocks_path}.{len(blocks) - 1}) did not produce "
                         "the model's last hidden state on a probe input")

    def same(a: Any, b: torch.Tensor) -> bool:
        if not isinstance(a, torch.Tensor) or a.shape != b.shape:
            return False
        a, b = a.float(), b.float()
        return bool(torch.allclose(a, b, rtol=1e-3, atol=1e-3 * float(b.abs().max().clamp_min(1e-6))))

    if torch.equal(h, last):
        return None
    for name, x, y in seen:
        if x is not None and same(x, h) and same(y, last):
            return name
    raise _add_a_row(model_type, "no module applied after the last block maps its output to the model's last "
                     "hidden state on a probe input (a final norm followed by a projection, or no final norm "
                     "module at all)")


def derive_anatomy(model: torch.nn.Module) -> dict[str, str | None]:
    """Where a transformers model keeps its blocks, final norm and token embeddings.

    Read from the module tree, for a family without a row in :data:`ARCHITECTURES`:

    * ``blocks``: the shallowest ``nn.ModuleList`` holding as many modules of one class as the
      config has layers (``num_hidden_layers`` or its equivalent, :data:`LAYER_COUNT_KEYS`);
    * ``embeddings``: the module ``get_input_embeddings()`` returns;
    * ``final_norm``: checked on a probe input (one forward of 7 tokens through the base model):
      ``None`` when the model's last hidden state is the last block's output, else the first
      module run after the last block that maps that output to the last hidden state (the final
      norm of a pre-norm decoder).

    Parameters
    ----------
    model : transformers model
        The loaded model (a ``*ForCausalLM`` or a base model), with every block in place.

    Returns
    -------
    dict
        ``{"blocks": path, "final_norm": path or None, "embeddings": path}``, attribute paths from
        ``model``, as the rows of :data:`ARCHITECTURES`.

    Raises
    ------
    NotImplementedError
        When one of them cannot be found or checked; the message says what row to add.
    """
    config = getattr(model, "config", None)
    model_type = getattr(getattr(config, "text_config", None) or config, "model_type", type(model).__name__)
    n_layers = _layer_count(config)
    if n_layers is None:
        raise _add_a_row(model_type, f"its config has none of {', '.join(LAYER_COUNT_KEYS)}")
    blocks = _block_list(model, n_layers, model_type)
    embedding = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    embeddings = next((name for name, m in model.named_modules() if m is embedding and name), None)
    if embeddings is None:
        raise _add_a_row(model_type, "get_input_embeddings() gives no module of the model")
    return {"blocks": blocks, "final_norm": _final_norm(model, blocks, model_type), "embeddings": embeddings}


def architecture_row(model: torch.nn.Module, model_type: str | None = None) -> dict[str, str | None]:
    """The model's :data:`ARCHITECTURES` row, or, for a family without one, :func:`derive_anatomy`."""
    config = getattr(model, "config", None)
    types = [model_type, getattr(config, "model_type", None), getattr(getattr(config, "text_config", None),
                                                                      "model_type", None)]
    row = next((ARCHITECTURES[t] for t in types if t in ARCHITECTURES), None)
    return _below_base_prefix(dict(row), model) if row is not None else derive_anatomy(model)


def _below_base_prefix(row: dict[str, str | None], model: torch.nn.Module) -> dict[str, str | None]:
    """A wrapper's row read from the base model itself: ``model.layers`` -> ``layers`` when
    ``model`` is a base model (no ``model`` attribute of its own) and every path starts there."""
    prefix = getattr(model, "base_model_prefix", "")
    paths = [v for v in row.values() if v is not None]
    if not prefix or hasattr(model, prefix) or not all(v.startswith(prefix + ".") for v in paths):
        return row
    return {k: None if v is None else v[len(prefix) + 1:] for k, v in row.items()}


@dataclass
class LoadedModel:
    """A model with its tokenizer and the facts the measurements need.

    A model loaded with ``lazy=True`` reads its weights the first time ``model`` is used (a
    forward pass, its blocks, ``summary()``); everything else is known from its folder. A unit
    whose forward passes are cached never reads them.

    Attributes
    ----------
    name : str
        What the user asked for (offline key, hub id or folder).
    model, tokenizer
        The Hugging Face objects, model in eval mode on ``device``.
    kind : {"encoder", "decoder"}
    n_layers : int
        Number of transformer blocks L; extraction returns L + 1 layers.
    hidden_size : int
    n_params : int
    device : torch.device
    source : str
        Folder or hub id passed to ``from_pretrained``.
    load_seconds : float
        Wall time of loading (weights and tokenizer; for a deferred model, what has been read so far).
    fingerprint : str
        Content hash of config and weights; keys the hidden-state cache.
    config : transformers.PretrainedConfig
        The model's config (known before its weights: ``load_model(..., lazy=True)``).
    missing_head : tuple of str
        A decoder's language-model head weights its checkpoint lacks (a base model saved without
        its head, embeddings untied): its hidden states are intact, its next-token scores would
        be random; :meth:`require_lm_head` refuses it. Empty when the head was loaded or tied.
    """

    name: str
    model: torch.nn.Module
    tokenizer: Any
    kind: str
    n_layers: int
    hidden_size: int
    n_params: int
    device: torch.device
    source: str
    load_seconds: float
    fingerprint: str
    model_type: str = ""
    info: dict = field(default_factory=dict)
    config: Any = None
    missing_head: tuple[str, ...] = ()
    _anatomy: tuple | None = field(default=None, repr=False, compare=False)
    _read_weights: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.config is None and self.model is not None:
            self.config = self.model.config
        if self.model is None:
            if self._read_weights is None:
                raise ValueError("LoadedModel needs its model, or a function that reads its weights (_read_weights)")
            del self.model  # read on first use (__getattr__)

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup fails: ``model`` of a deferred model not yet read
        read = self.__dict__.get("_read_weights")
        if name != "model" or read is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        t0 = time.perf_counter()
        self.model = read()
        self._read_weights = None
        self.load_seconds += time.perf_counter() - t0
        return self.model

    def require_lm_head(self, why: str = "scoring text needs the language-model head") -> None:
        """Raise a ``ValueError`` naming the missing head weights and the fix when the model has
        no language-model head of its own (:attr:`missing_head`); ``why`` says what needs it."""
        if self.missing_head:
            problem = LoadingReport(missing_head=self.missing_head).head_problem(self.name)
            raise ValueError(f"{problem} ({why})")

    @property
    def anatomy(self) -> dict[str, str | None]:
        """Attribute paths of blocks / final norm / embeddings, from the family's row of
        ``ARCHITECTURES``, or derived from the model (:func:`derive_anatomy`, once)."""
        if self._anatomy is None or self._anatomy[0] != self.model_type:
            self._anatomy = (self.model_type, architecture_row(self.model, self.model_type))
        return self._anatomy[1]

    @property
    def blocks(self) -> torch.nn.ModuleList:
        """The model's transformer blocks (``len == n_layers``)."""
        return _get(self.model, self.anatomy["blocks"])

    @property
    def model_kind(self) -> ModelKind:
        """Attention, backbone, role and tuning, the groupings the papers use
        (:func:`lrd.engine.kinds.model_kind`)."""
        return model_kind(self.config, kind=self.kind, info=self.info, name=self.name)

    @property
    def final_norm(self) -> torch.nn.Module | None:
        path = self.anatomy["final_norm"]
        return None if path is None else _get(self.model, path)

    @property
    def has_final_norm(self) -> bool:
        """Whether the model has a final norm (decoders do, encoders not), from its family's
        :data:`ARCHITECTURES` row while the weights are unread, else from the model itself."""
        if "model" not in vars(self) and self.model_type in ARCHITECTURES:
            return ARCHITECTURES[self.model_type]["final_norm"] is not None
        return self.final_norm is not None

    @property
    def upstream(self) -> str:
        """Where the weights come from (an offline pack's upstream model, else the folder or hub id)."""
        return self.info.get("upstream", self.source)

    def summary(self) -> dict:
        """One row for a table of models (no timings: those vary from run to run); an offline
        pack's licence and what was done to its weights come from its :class:`~lrd.engine.packs.Pack`."""
        kind = self.model_kind
        return {"model": self.name, "source": self.upstream, "kind": self.kind,
                "family": kind.family, "attention": kind.attention, "architecture": self.model_type, "parameters (M)": round(self.n_params / 1e6, 1),
                "layers": self.n_layers, "hidden size": self.hidden_size,
                "weights": self.info.get("weights", ""), "computes in": _dtype_name(next(self.model.parameters()).dtype),
                "licence": self.info.get("licence", "")}

    def __repr__(self) -> str:
        return (f"LoadedModel({self.name!r}, kind={self.kind!r}, n_layers={self.n_layers}, "
                f"hidden_size={self.hidden_size}, n_params={self.n_params:,}, device={str(self.device)!r})")


def _is_decoder(config: Any) -> bool:
    """Whether a config is a causal LM: its architectures name a causal-LM head or its family is
    a decoder family (:data:`lrd.engine.kinds.DECODER_FAMILIES`) with a row in
    :data:`ARCHITECTURES`; never when its attention is bidirectional
    (``use_bidirectional_attention``, e.g. EmbeddingGemma's Gemma 3 backbone)."""
    if getattr(config, "use_bidirectional_attention", False):
        return False
    archs = getattr(config, "architectures", None) or []
    return (any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)
            or (config.model_type in DECODER_FAMILIES and config.model_type in ARCHITECTURES))


def fingerprint(model: torch.nn.Module, source: str | None = None) -> str:
    """Content hash of a model: what keys the hidden-state and result caches.

    The config (as transformers completes it, :func:`_config_text`) and the full sha256 of every
    file of the model's folder (:func:`model_files`: weights, tokenizer, config, ...), each
    hashed once per version of the file (:func:`lrd.engine.store.content_sha256`). The folder is
    ``source`` when it is one (an offline pack, a local folder), or, for a hub id, the model's
    snapshot in the local hub cache. Only a model with no files known (a hub id not found in
    the cache, a model built in memory) is identified by its config, revision and a strided
    sample of every tensor.
    """
    if source and Path(source).is_dir():
        folder = Path(source)
    else:
        folder = _hub_snapshot(source, getattr(model.config, "_commit_hash", None)) if source else None
    return _fingerprint(_config_text(model.config.to_dict()), folder, model)


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that its fingerprint hashes, sorted: every file at its top
    level (what ``from_pretrained`` reads from) except hidden files, Markdown documents and an
    offline pack's manifest (which says what the files were, not what they are)."""
    return sorted(p for p in Path(folder).iterdir()
                  if p.is_file() and not p.name.startswith(".") and p.name != packs.MANIFEST
                  and p.suffix.lower() != ".md")


def _hub_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The folder of ``repo_id``'s snapshot ``revision`` in the local hub cache, if it is there."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json", revision=revision or None)
    except Exception:  # noqa: BLE001  (not a repo id the cache knows: no files to hash)
        return None
    return Path(found).parent if isinstance(found, str) and Path(found).is_file() else None


# Config entries that say where a model was loaded from, not what it is: left out of the
# fingerprint, so the same files give the same cache keys wherever $LRD_HOME or the folder lives.
_LOCATION_KEYS = ("_name_or_path", "_commit_hash")


def _config_text(config: dict) -> str:
    """The config as the fingerprint hashes it: canonical JSON without :data:`_LOCATION_KEYS`."""
    config = {k: v for k, v in config.items() if k not in _LOCATION_KEYS}
    return json.dumps(config, sort_keys=True, default=stable_json)


def _fingerprint(config_text: str, folder: Path | None, model: torch.nn.Module | None = None) -> str | None:
    h = hashlib.sha256(config_text.encode())
    if folder is not None:
        for f in model_files(folder):
            h.update(f"{f.name}\0{content_sha256(f)}\n".encode())
    elif model is None:
        return None  # a hub model: its tensors are needed
    else:
        import torch

        h.update(str(getattr(model.config, "_commit_hash", "")).encode())
        with torch.no_grad():
            for name, t in sorted(model.state_dict().items()):
                sample = t.detach().flatten()[:: max(t.numel() // 4096, 1)].to("cpu", torch.float64)
                h.update(f"{name}:{tuple(t.shape)}".encode() + sample.numpy().tobytes())
    return h.hexdigest()[:20]


def _dtype_name(dtype: Any) -> str:
    """``"float32"`` for ``torch.float32`` or ``"float32"``."""
    return str(dtype).removeprefix("torch.")


def source_fingerprint(name: str, dtype: torch.dtype | str = "float32") -> str | None:
    """:func:`fingerprint` of what ``load_model(name, dtype=dtype)`` would load, without loading it.

    Known from the files for an offline key or a local folder (the whole of every file is hashed
    the first time it is seen, then its hash is remembered by the file's identity: a ``stat``
    per file, :func:`lrd.engine.store.content_sha256`); ``None`` for a hub id, whose snapshot
    is known once it is loaded. Builds (or rebuilds) an offline pack first if it is missing or
    its files no longer match its manifest, unless :func:`lrd.engine.packs.no_fetch` is in
    effect (then :class:`lrd.engine.packs.PackNotBuilt`).

    The config enters as transformers completes it (``AutoConfig.from_pretrained(folder).to_dict()``,
    defaults included). That text is kept under ``$LRD_HOME/configs``, keyed by the sha256 of
    ``config.json``, the transformers version and the dtype (:func:`completed_config_text`), so
    listing units (``lrd sweep --dry-run``) imports neither torch nor transformers once each
    folder's config has been completed once.
    """
    source, _ = _resolve(name)
    folder = Path(source)
    if not folder.is_dir():
        return None
    text = completed_config_text(folder, dtype)
    return None if text is None else _fingerprint(text, folder)


@functools.cache
def _transformers_version() -> str:
    """The installed transformers version, read once per process (reading package metadata
    parses its METADATA file: milliseconds, once per unit key otherwise)."""
    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return "unknown"


def completed_config_text(folder: Path, dtype: torch.dtype | str = "float32") -> str | None:
    """:func:`_config_text` of the config transformers loads from ``folder`` with ``dtype``; None
    when the folder holds no readable model config (:func:`load_model` then says what is wrong).

    Content-addressed: the key is the sha256 of the folder's ``config.json`` bytes, the installed
    transformers version and the dtype name, the value the canonical text (written atomically;
    not written, and computed again next time, where ``$LRD_HOME`` is read-only).
    """
    config_file = Path(folder) / "config.json"
    if not config_file.is_file():
        return None
    version = _transformers_version()
    key = hashlib.sha256(config_file.read_bytes() + f"\0{version}\0{_dtype_name(dtype)}".encode()).hexdigest()[:32]
    memo = lrd_folder("configs") / f"{key}.json"
    if memo.is_file():
        return memo.read_text()
    with hf_progress(False):  # also silences tqdm.auto's warning when transformers is first imported
        from transformers import AutoConfig

        try:
            config = AutoConfig.from_pretrained(str(folder), trust_remote_code=False)
        except (OSError, ValueError):
            return None  # not a model folder: load_model will say what is wrong
    config.dtype = _dtype_name(dtype)  # as from_pretrained(dtype=...) records it
    text = _config_text(config.to_dict())
    try:  # a memo: a read-only $LRD_HOME computes it again next time, as the hash memo does
        memo.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(memo, lambda f: f.write(text.encode()), ".json.tmp")
    except OSError as err:
        if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
    return text


def model_source(name: str) -> str:
    """Where ``load_model(name)`` says the model comes from (``LoadedModel.summary()["source"]``):
    an offline pack's upstream model, else the folder or hub id."""
    source, info = _resolve(name)
    return info.get("upstream", source)


def offline_keys() -> list[str]:
    return sorted(packs.MODEL_PACKS)


def _resolve(name: str) -> tuple[str, dict]:
    if name in packs.MODEL_PACKS:
        pack = packs.MODEL_PACKS[name]
        return str(packs.pack_path(name)), {**pack.info, "upstream": pack.upstream, "licence": pack.licence}
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser()), {}
    return name, {}


@contextmanager
def hf_progress(enabled: bool):
    """Turn Hugging Face's own progress bars on or off inside the block, then restore them."""
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        # tqdm.auto, imported by the hub client, warns in kernels without ipywidgets
        warnings.simplefilter("ignore", TqdmWarning)
        from transformers.utils import logging as hf_logging

        was = hf_logging.is_progress_bar_enabled()
        (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
        try:
            yield
        finally:
            (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()


def hub_reachable() -> bool:
    """Whether the Hugging Face hub answers one quick HEAD request (3 s), probed once per process.

    False at once when ``HF_HUB_OFFLINE`` is set. Used to skip the hub's ~25 s of retries when
    it cannot be reached (models already in the local hub cache still load).
    """
    from huggingface_hub import constants

    return not constants.HF_HUB_OFFLINE and _probe_hub(constants.ENDPOINT)


@functools.cache
def _probe_hub(endpoint: str, timeout: float = 3.0) -> bool:
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout).close()
    except urllib.error.HTTPError:
        return True  # it answered, if only with an error status
    except (OSError, ValueError):  # URLError, timeouts, refused connections
        return False
    return True


def suggest(name: str, choices: list[str]) -> str:
    """``" Did you mean 'x'?"`` for the closest of ``choices`` (difflib), or ``""``."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def model_config(name: str):
    """The config of what :func:`load_model` would load for ``name`` (no weights are read), or a
    ``ValueError`` saying what to pass instead: an unknown offline key (with the closest one),
    a missing folder, or a hub id the hub cannot give (unreachable and not in the local cache)."""
    source, _ = _resolve(name)
    with hf_progress(False):
        return _config(name, source)


def _config(name: str, source: str):
    """The model's config, or an error that says what to pass instead.

    A hub id is looked up in the local hub cache only when the hub is unreachable
    (:func:`hub_reachable`), so a typo fails in about a second, not after retries.
    """
    from transformers import AutoConfig

    local = Path(source).is_dir()
    if local and (problem := config_file_problem(Path(source))):
        raise ValueError(f"model folder {name!r}: {problem}")
    offline = not local and not hub_reachable()
    try:  # trust_remote_code=False: refused at once, never a prompt on stdin
        return AutoConfig.from_pretrained(source, local_files_only=offline, trust_remote_code=False)
    except (OSError, ValueError) as err:
        if _asks_for_custom_code(err):
            raise _needs_code(name) from err
        if Path(source).expanduser().is_file():
            raise ValueError(f"model {name!r} is a file, not a model folder: pass the folder that holds its "
                             f"config.json, weights and tokenizer (save_pretrained output), e.g. "
                             f"{str(Path(source).expanduser().parent)!r}") from err
        if local:
            why = str(err).strip().split("\n")[0]
            raise ValueError(f"model folder {name!r} has no loadable config.json "
                             f"({type(err).__name__}: {why})") from err
        if name.startswith((".", "/", "~")) or name.count("/") > 1:
            raise ValueError(f"model folder {name!r} does not exist") from err
        hub = ("the Hugging Face hub is unreachable and the model is not in its local cache" if offline
               else "the Hugging Face hub did not provide it")
        raise ValueError(
            f"cannot load model {name!r}: it is not an offline key ({', '.join(offline_keys())}), "
            f"not a local folder, and {hub} ({type(err).__name__}).{suggest(name, offline_keys())} "
            "Offline, use one of the keys, or point at a local folder "
            "holding config.json, the weights and the tokenizer (save_pretrained output)."
        ) from err


def config_file_problem(folder: Path) -> str | None:
    """Why ``folder/config.json`` cannot be used, or ``None`` (also when there is none: the
    callers say that in their own words). Read with :mod:`json` only, no transformers:

    * not valid JSON (a truncated or damaged file): the file, where the parser stopped, the fix;
    * not a JSON object;
    * custom code: an ``auto_map`` in it (or in ``tokenizer_config.json``) names Python classes
      shipped in the folder, which transformers would import and run with
      ``trust_remote_code=True``; lrd never runs a model's own code (:func:`_custom_code_text`).
    """
    config_file = Path(folder) / "config.json"
    if not config_file.is_file():
        return None
    try:
        data = json.loads(config_file.read_bytes())
    except (ValueError, OSError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return (f"its config.json ({config_file}) is not valid JSON ({err}): the file is truncated or damaged; "
                "write it again with model.config.save_pretrained(folder), or copy it again from where the "
                "model came from")
    if not isinstance(data, dict):
        return (f"its config.json ({config_file}) is not a model config (a JSON {type(data).__name__}, not an "
                "object); write it again with model.config.save_pretrained(folder)")
    maps = {"config.json": data.get("auto_map")}
    tokenizer_config = Path(folder) / "tokenizer_config.json"
    if tokenizer_config.is_file():
        try:
            maps["tokenizer_config.json"] = json.loads(tokenizer_config.read_bytes()).get("auto_map")
        except (ValueError, OSError, AttributeError):
            pass  # the tokenizer's own loading says what is wrong with it
    found = {f: m for f, m in maps.items() if m}
    if not found:
        return None
    named = "; ".join(f"{f} maps {_auto_map_text(m)}" for f, m in found.items())
    return _custom_code_text(f"{named} (auto_map: Python files in the folder)")


def _auto_map_text(auto_map: Any) -> str:
    if isinstance(auto_map, dict):
        return ", ".join(f"{k} to {v if isinstance(v, str) else next((x for x in v if x), v)}"
                         for k, v in auto_map.items())
    return repr(auto_map)


def _custom_code_text(what: str) -> str:
    return (f"it needs custom code: {what}, which transformers would import and run "
            "(trust_remote_code=True); lrd never runs a model's own code. Pass a checkpoint of an architecture "
            "transformers itself provides (many such models have a port: look for one that loads without "
            "trust_remote_code), or, in an environment you trust, load it with trust_remote_code=True and save its "
            "weights into such an architecture with save_pretrained")


def _needs_code(name: str, what: str = "its repository ships Python code to build it") -> ValueError:
    """The error for a hub model transformers refused because it needs ``trust_remote_code``."""
    return ValueError(f"model {name!r}: {_custom_code_text(what)}")


def _asks_for_custom_code(err: BaseException) -> bool:
    """Whether transformers refused ``err`` because the model needs ``trust_remote_code``."""
    return "trust_remote_code" in str(err) or "custom code" in str(err)


def _no_tokenizer(name: str, source: str, what: str) -> ValueError:
    folder = Path(source)
    if folder.is_dir():
        where = (f"save it beside the weights in {source} (it holds "
                 f"{', '.join(sorted(p.name for p in folder.iterdir()))})")
    else:
        where = f"{source} on the hub provides none that loads; save the model and its tokenizer to a folder"
    return ValueError(f"cannot use model {name!r}: {what}. A model needs its own tokenizer: {where} with "
                      "tokenizer.save_pretrained(folder), which writes tokenizer.json or the vocabulary files")


def _check_tokenizer(tokenizer: Any, name: str, source: str) -> None:
    """Refuse a tokenizer that knows nothing but its special tokens.

    transformers builds one when a folder has no tokenizer files (a BERT folder gets the five
    ``[PAD] [UNK] [CLS] [SEP] [MASK]``): every word then maps to the unknown token and the model
    runs on nothing but ``[UNK]``.
    """
    vocab = set(tokenizer.get_vocab())
    if vocab <= set(tokenizer.all_special_tokens):
        raise _no_tokenizer(name, source, f"its tokenizer has no vocabulary, only the special tokens "
                                          f"{sorted(vocab)} (no tokenizer files were found)")


# ---- what a checkpoint holds ----------------------------------------------------------------------

#: Submodules of a base model that lrd never reads (it pools the hidden states itself): a checkpoint
#: saved without them (BERT's ``[CLS]`` pooler, e.g. ``BertModel(add_pooling_layer=False)``) is complete.
UNREAD_MODULES = ("pooler",)

#: Environment variable that opts in to checkpoints with missing weights for ``lrd run`` / ``report``
#: / ``sweep`` and their kernels (``load_model``'s ``allow_missing_weights`` default).
ALLOW_MISSING_WEIGHTS = "LRD_ALLOW_MISSING_WEIGHTS"


def model_class(config: Any, kind: str, name: str = "") -> Any:
    """The transformers auto class :func:`load_model` builds ``config`` with: a decoder with
    ``AutoModelForCausalLM``, an encoder with ``AutoModel``, and the encoder saved alone from an
    encoder-decoder family (``T5EncoderModel``, ``MT5EncoderModel``, ``UMT5EncoderModel``: the
    architecture its config names) with ``AutoModelForTextEncoding``, which builds that encoder
    and not the whole encoder-decoder.

    Raises
    ------
    ValueError
        For an encoder-decoder checkpoint (a full T5, BART, ...: ``is_encoder_decoder``, or a
        family transformers builds sequence-to-sequence LMs of, whose config does not name its
        encoder or decoder alone): lrd measures one stack of blocks; the message says how to save
        its encoder alone.
    """
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForTextEncoding
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES

    encoder = _encoder_class_name(config)
    archs = getattr(config, "architectures", None) or []
    alone = (encoder is not None and encoder in archs) or any(a.endswith("ForCausalLM") for a in archs)
    if not alone and (getattr(config, "is_encoder_decoder", False)
                      or getattr(config, "model_type", None) in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES):
        what = ", ".join(archs or [config.model_type])
        save = (f"{encoder}.from_pretrained(folder).save_pretrained(out)" if encoder else
                "its encoder class's from_pretrained(folder).save_pretrained(out)")
        raise ValueError(f"model {name!r} is an encoder-decoder ({what}): lrd measures the hidden states of one "
                         "stack of blocks, an encoder's or a decoder's, and this checkpoint holds two. To measure its "
                         f"encoder, save the encoder alone with its tokenizer: {save}; "
                         "tokenizer.save_pretrained(out); then pass out")
    if kind == "decoder":
        return AutoModelForCausalLM
    return AutoModelForTextEncoding if encoder is not None and encoder in archs else AutoModel


def _encoder_class_name(config: Any) -> str | None:
    """The encoder-only class of an encoder-decoder family (``T5EncoderModel`` for ``t5``), or None."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES

    found = MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES.get(getattr(config, "model_type", None))
    return found if isinstance(found, str) and found.endswith("EncoderModel") else None


@dataclass(frozen=True)
class LoadingReport:
    """What ``from_pretrained`` found in a checkpoint (its ``output_loading_info``), sorted into
    what lrd refuses and what it does not.

    Attributes
    ----------
    architecture : str
        The class transformers built (``LlamaForCausalLM``).
    missing : tuple of str
        Weights the architecture has and the checkpoint lacks (transformers initialises them at
        random), except the language-model head and :data:`UNREAD_MODULES`; keys transformers
        itself expects to be absent (tied weights, ``_keys_to_ignore_on_load_missing``,
        non-persistent buffers) are not in its report at all.
    unexpected : tuple of str
        Weights of the checkpoint that belong to a module of the loaded model and that the
        architecture does not have (blocks beyond the config's count); a head the loaded class does
        not build (``lm_head`` read by ``AutoModel``, a classifier) is left out.
    mismatched : tuple of str
        ``"key (checkpoint shape -> model shape)"`` for weights whose shape the config contradicts.
    missing_head : tuple of str
        The language-model head's weights when the checkpoint has none and does not tie it to the
        token embeddings (a base model saved without its head): the hidden states are intact, the
        next-token scores would come from a random matrix.
    """

    architecture: str = ""
    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()
    missing_head: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Every weight the hidden states depend on came from the checkpoint."""
        return not (self.missing or self.unexpected or self.mismatched)

    def problem(self, name: str) -> str | None:
        """Why the checkpoint cannot be measured as it is, naming the keys (summarised), or None."""
        if self.complete:
            return None
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} weights of the architecture are missing from it "
                         f"({summarise_keys(self.missing)})")
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} of its weights fit no module the config builds "
                         f"({summarise_keys(self.unexpected)})")
        if self.mismatched:
            parts.append(f"{len(self.mismatched)} of its weights have another shape than the config gives "
                         f"({'; '.join(self.mismatched[:3])}{'; ...' if len(self.mismatched) > 3 else ''})")
        return (f"model {name!r}: its checkpoint does not match its config ({self.architecture}): {'; '.join(parts)}. "
                "transformers would fill the gaps with random weights and lrd would measure them. Usually the "
                "config.json is not the one these weights were saved with (a layer count edited, weights of "
                "another model): save the model's config and weights together with model.save_pretrained(folder). "
                "To measure it anyway, with those weights random and different at every load, pass "
                f"allow_missing_weights=True to lrd.load_model, or set {ALLOW_MISSING_WEIGHTS}=1 for lrd run, "
                "report and sweep")

    def head_problem(self, name: str) -> str | None:
        """Why the model cannot score text with its language-model head, or None."""
        if not self.missing_head:
            return None
        return (f"model {name!r} has no language-model head: its checkpoint holds no {', '.join(self.missing_head)} "
                "and does not tie the head to its token embeddings (a base model saved without its head), so its "
                "next-token scores would come from a random matrix. Pass the model's *ForCausalLM checkpoint "
                "(saved from e.g. LlamaForCausalLM, with its head); chapters that read hidden states only take "
                "this folder as it is")


def summarise_keys(keys: Sequence[str], n: int = 4) -> str:
    """``"model.layers.{2,3}.mlp.up_proj.weight, ... and 14 more"``: keys that differ only in their
    numbers (block indices) shown once with the numbers in braces, the first ``n`` of those."""
    import re

    groups: dict[str, list[list[str]]] = {}
    for key in sorted(keys, key=lambda k: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", k)]):
        pattern = re.sub(r"(?<=\.)\d+(?=\.)", "{}", key)
        groups.setdefault(pattern, []).append(re.findall(r"(?<=\.)\d+(?=\.)", key))
    shown = []
    for pattern, numbers in list(groups.items())[:n]:
        for slot in range(pattern.count("{}")):
            values = list(dict.fromkeys(ns[slot] for ns in numbers))
            pattern = pattern.replace("{}", values[0] if len(values) == 1 else "{" + ",".join(values) + "}", 1)
        shown.append(pattern)
    rest = len(groups) - len(shown)
    return ", ".join(shown) + (f" and {rest} more name{'s' if rest > 1 else ''}" if rest else "")


def loading_report(model: torch.nn.Module, info: dict) -> LoadingReport:
    """Sort ``from_pretrained(..., output_loading_info=True)``'s ``info`` for ``model`` into a
    :class:`LoadingReport`."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    head_keys = {f"{n}.{p}" for n, m in model.named_modules() if head is not None and m is head and n
                 for p, _ in m.named_parameters(recurse=False)}
    missing = set(info.get("missing_keys") or ())
    children = {n for n, _ in model.named_children()} | {n for n, _ in model.base_model.named_children()}
    prefix = getattr(model, "base_model_prefix", "") + "."

    def own(key: str) -> bool:  # names a module of the model or of its base model (model.layers.4.*, layers.4.*)
        return key.split(".")[0] in children or key.removeprefix(prefix).split(".")[0] in children

    def unread(key: str) -> bool:
        return any(part in UNREAD_MODULES for part in key.removeprefix(prefix).split(".")[:2])

    return LoadingReport(
        architecture=type(model).__name__,
        missing=tuple(sorted(k for k in missing - head_keys if not unread(k))),
        unexpected=tuple(sorted(k for k in info.get("unexpected_keys") or () if own(k) and not unread(k))),
        mismatched=tuple(sorted(f"{k} ({tuple(a)} -> {tuple(b)})" for k, a, b in info.get("mismatched_keys") or ())),
        missing_head=tuple(sorted(missing & head_keys)),
    )


def _files_text(source: str, pattern: str) -> str:
    """``" (model.safetensors in /x)"``: the files of folder ``source`` matching ``pattern``, or ``""``."""
    folder = Path(source)
    files = sorted(p.name for p in folder.glob(pattern)) if folder.is_dir() else []
    return f" ({', '.join(files)} in {folder})" if files else ""


def _pickle_refused(name: str, source: str) -> ValueError:
    """The error for weights torch refuses to unpickle (``weights_only``): the file and the fix."""
    return ValueError(
        f"model {name!r}: its weights are a pickle{_files_text(source, '*.bin')} that holds more than tensors, "
        "and lrd refuses to unpickle it (unpickling runs code the file names; torch's weights_only loader stopped "
        "at an object it does not allow). Convert the weights to safetensors in an environment you trust: load the "
        "model there (from_pretrained) and save it with model.save_pretrained(folder, safe_serialization=True), "
        "which writes model.safetensors; then pass that folder")


def _unreadable_weights(name: str, source: str, err: BaseException) -> ValueError:
    """The error for a safetensors file that cannot be read: the files and the fix."""
    return ValueError(
        f"model {name!r}: its weights{_files_text(source, '*.safetensors')} cannot be read ({err}): a file is "
        "truncated or damaged; save the weights again with model.save_pretrained(folder), or copy them again from "
        "where the model came from")


def _read_checkpoint(auto: Any, name: str, source: str, *, meta: bool = False,
                     **kwargs) -> tuple[torch.nn.Module, LoadingReport]:
    """``auto.from_pretrained(source, **kwargs)`` with its loading report; on the ``meta`` device
    (the keys and shapes only, no weight read: a tenth of a second) when ``meta``. transformers'
    own load report (a warning with terminal colours) is left out: :class:`LoadingReport` says it."""
    from pickle import UnpicklingError  # torch's refusal to unpickle, caught; nothing here unpickles

    from safetensors import SafetensorError
    from transformers.utils import logging as hf_logging

    if meta:
        kwargs |= {"device_map": "meta", "use_kernels": False}
    log = hf_logging.get_logger("transformers.modeling_utils")
    log.addFilter(_no_load_report)
    try:
        model, info = auto.from_pretrained(source, output_loading_info=True, ignore_mismatched_sizes=True,
                                           trust_remote_code=False, **kwargs)
    except UnpicklingError as err:
        raise _pickle_refused(name, source) from err
    except SafetensorError as err:
        raise _unreadable_weights(name, source, err) from err
    except (OSError, ValueError) as err:
        if _asks_for_custom_code(err):
            raise _needs_code(name) from err
        if isinstance(err.__cause__ or err.__context__, UnpicklingError) or "weights_only" in str(err):
            raise _pickle_refused(name, source) from err
        raise
    finally:
        log.removeFilter(_no_load_report)
    return model, loading_report(model, info)


def _no_load_report(record: Any) -> bool:
    """A logging filter that drops transformers' LOAD REPORT (:class:`LoadingReport` says it)."""
    return "LOAD REPORT" not in record.getMessage()


def _allow_missing(allow: bool | None) -> bool:
    if allow is not None:
        return allow
    import os

    return os.environ.get(ALLOW_MISSING_WEIGHTS, "").strip().lower() not in ("", "0", "false", "no")


def checkpoint_problem(name: str, *, lm_head: bool = False, allow_missing_weights: bool | None = None) -> str | None:
    """Why :func:`load_model` would refuse ``name``, found without reading its weights, or None.

    What ``lrd run`` / ``report`` / ``sweep`` check for a local folder before any kernel starts:
    its config.json (valid JSON, no custom code: :func:`config_file_problem`), an encoder-decoder
    (:func:`model_class`), weights torch refuses to unpickle, and the checkpoint's keys against
    the architecture's, read by transformers on the ``meta`` device (:class:`LoadingReport`).
    With ``lm_head``, a decoder whose checkpoint has no language-model head is refused too (the
    chapters that score text with it); an encoder never needs one.

    For a folder, what the check found is kept under ``$LRD_HOME/configs``, keyed by the name,
    the folder's fingerprint (:func:`source_fingerprint`: its config and every file's content)
    and the transformers version, so checking a folder again (``lrd sweep --dry-run``) imports
    neither torch nor transformers.
    """
    source, info = _resolve(name)
    memo = None
    if Path(source).is_dir():
        if problem := config_file_problem(Path(source)):
            return problem
        fp = source_fingerprint(name)
        if fp is not None:
            key = hashlib.sha256(f"{name}\0{fp}\0{_transformers_version()}".encode()).hexdigest()[:32]
            memo = lrd_folder("configs") / f"checkpoint-{key}.json"
    if memo is not None and memo.is_file():
        found = json.loads(memo.read_text())
    else:
        found = _checkpoint_findings(name, source, info)
        if memo is not None:
            text = json.dumps(found, sort_keys=True)
            try:  # a memo: a read-only $LRD_HOME checks again next time
                memo.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(memo, lambda f: f.write(text.encode()), ".json.tmp")
            except OSError as err:
                if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise
    if found["error"]:
        return found["error"]
    if not _allow_missing(allow_missing_weights) and found["problem"]:
        return found["problem"]
    return found["head"] if lm_head and found["kind"] == "decoder" else None


def _checkpoint_findings(name: str, source: str, info: dict) -> dict:
    """What :func:`checkpoint_problem` reads from the checkpoint: ``error`` (it does not load at
    all), ``problem`` (weights missing or unexpected), ``head`` (no language-model head), ``kind``."""
    try:
        with hf_progress(False):
            config = _config(name, source)
            kind = info.get("kind") or ("decoder" if _is_decoder(config) else "encoder")
            auto = model_class(config, kind, name)
            report = _read_checkpoint(auto, name, source, meta=True)[1]
    except ValueError as err:
        return {"error": str(err), "problem": None, "head": None, "kind": None}
    except OSError as err:  # what from_pretrained could not find or read, in its words
        return {"error": f"model {name!r} does not load: {str(err).strip().splitlines()[0]}", "problem": None,
                "head": None, "kind": None}
    return {"error": None, "problem": report.problem(name), "head": report.head_problem(name), "kind": kind}


def device_problem(device: Any, *, name: str = "device", fix: str = "pass device={!r}") -> str | None:
    """Why ``device`` cannot compute here, or ``None``: a name torch cannot parse, a kind lrd does
    not run on, or a device this machine lacks (no CUDA, an index past the last GPU), with the
    devices it has. ``fix`` says how to pass another device, ``{}`` standing for it
    (``"pass -p device {}"`` for the command line)."""
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError) as err:  # torch's text lists every device type it parses
        why = "a kind, then an optional :index" if "Expected one of" in str(err) else str(err).strip().split("\n")[0]
        return f"{name} {device!r} is not a device torch can parse ({why}); {fix.format('cpu')}, or cuda, cuda:1, mps"
    backends = {"cuda": ("CUDA", torch.cuda), "xpu": ("XPU", getattr(torch, "xpu", None)),
                "mps": ("MPS (Apple GPU)", None)}
    if parsed.type == "cpu":
        return None
    if parsed.type not in backends:
        return f"{name} {device!r}: lrd computes on cpu, cuda, mps or xpu, not on {parsed.type}; {fix.format('cpu')}"
    label, backend = backends[parsed.type]
    if parsed.type == "mps":
        count = 1 if torch.backends.mps.is_available() else 0
    else:
        count = backend.device_count() if backend is not None and backend.is_available() else 0
    if count == 0:
        built = " (this torch is built without CUDA)" if parsed.type == "cuda" and torch.version.cuda is None else ""
        return (f"{name} {device!r}: no {label} device is available on this machine{built}; it computes on "
                f"{', '.join(_available_devices())}; {fix.format('cpu')}")
    if parsed.index is not None and parsed.index >= count:
        have = f"{parsed.type}:0" if count == 1 else f"{parsed.type}:0 to {parsed.type}:{count - 1}"
        return (f"{name} {device!r}: this machine has {count} {label} device{'s' if count > 1 else ''} ({have}); "
                f"{fix.format(f'{parsed.type}:0')}, or {parsed.type}")
    return None


def _available_devices() -> list[str]:
    import torch

    found = ["cpu"]
    if torch.cuda.is_available():
        found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if torch.backends.mps.is_available():
        found.append("mps")
    return found


def _pad_token(tokenizer: Any) -> str | None:
    """The token a tokenizer without one pads with: its end-of-sequence token, else its unknown,
    beginning-of-sequence, separator or classifier token, else the token of id 0. Which one
    changes no number: padded positions are masked (the attention mask, and every pooling)."""
    for token in (tokenizer.eos_token, tokenizer.unk_token, tokenizer.bos_token, tokenizer.sep_token,
                  tokenizer.cls_token):
        if token is not None:
            return token
    return tokenizer.convert_ids_to_tokens(0)


def load_model(name: str, device: str | torch.device = "cpu", *, kind: str | None = None,
               dtype: torch.dtype | str = "float32", progress: bool | None = None, lazy: bool = False,
               allow_missing_weights: bool | None = None) -> LoadedModel:
    """Load a model for layer-wise measurement.

    Parameters
    ----------
    name : str
        An offline key (``minilm``, ``mpnet``, ``e5small``, ``embeddinggemma``, ``smollm2``, ``gemma3``,
        ``qwen``, ``qwen15``; built on first
        use by :func:`lrd.engine.packs.fetch`), a local folder, or a Hugging Face hub id.
    device : str or torch.device
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    kind : {"encoder", "decoder"}, optional
        Override the automatic choice (decoder when the config names a causal-LM head).
    dtype : torch.dtype or str
        Weights dtype (``torch.float32`` or ``"float32"``); float32 by default so that states are
        comparable across devices.
    progress : bool, optional
        Show loading progress bars; default: only when stderr is a terminal.
    lazy : bool
        Read the weights only when ``.model`` is first used; the config, the tokenizer, the
        parameter count (of the architecture built on the ``meta`` device) and the fingerprint
        (:func:`source_fingerprint`, from the files) are read now. What a cached unit or
        extraction needs, without the seconds and gigabytes of the weights. A hub id (whose
        fingerprint needs its snapshot) is loaded at once.
    allow_missing_weights : bool, optional
        Measure a checkpoint that does not match its config anyway. By default (``None``: unless
        the environment sets ``LRD_ALLOW_MISSING_WEIGHTS=1``, the opt-in of ``lrd run``, ``report``
        and ``sweep``) a checkpoint is refused when transformers reports weights of the
        architecture missing from it, weights of its modules it has no place for, or weights of
        another shape (:class:`LoadingReport`): transformers would initialise them at random,
        differently at every load. Not counted: weights transformers expects to be absent (tied,
        ``_keys_to_ignore_on_load_missing``, buffers), BERT's pooler, a head the loaded class does
        not build, and a decoder's language-model head: a base model saved without it (no
        ``lm_head.weight``, untied embeddings) loads, its hidden states intact, with
        ``missing_head`` set, and anything that scores text with the head refuses it
        (:meth:`LoadedModel.require_lm_head`).

    Returns
    -------
    LoadedModel

    Raises
    ------
    ValueError
        A model that cannot be found; a config.json that is not valid JSON, or that needs the
        model's own code (lrd never runs it); an encoder-decoder (a full T5: save its encoder
        alone, :func:`model_class`); weights only as a pickle torch refuses to unpickle; a
        checkpoint that does not match its config (above); a tokenizer without a vocabulary; a
        device this machine lacks (with the ones it has).

    Notes
    -----
    A tokenizer without a padding token pads with its end-of-sequence token, else its unknown,
    beginning-of-sequence, separator or classifier token, else the token of id 0: padded positions
    are masked by the attention mask and left out of every pooling, so which token pads changes
    no state. An encoder saved alone from an encoder-decoder family (``T5EncoderModel``,
    ``MT5EncoderModel``, ``UMT5EncoderModel``) loads as that encoder (:func:`model_class`).
    """
    import torch

    t0 = time.perf_counter()
    if isinstance(dtype, str):
        if not isinstance(getattr(torch, dtype, None), torch.dtype):
            raise ValueError(f"dtype {dtype!r} is not a torch dtype; pass e.g. 'float32' or 'bfloat16'")
        dtype = getattr(torch, dtype)
    if problem := device_problem(device):
        raise ValueError(problem)
    source, info = _resolve(name)
    with hf_progress(sys.stderr.isatty() if progress is None else progress):
        from transformers import AutoTokenizer

        config = _config(name, source)
        kind = kind or info.get("kind") or ("decoder" if _is_decoder(config) else "encoder")
        if kind not in ("encoder", "decoder"):
            raise ValueError(f"kind must be 'encoder' or 'decoder', got {kind!r}")
        auto = model_class(config, kind, name)
        offline = {} if Path(source).is_dir() or hub_reachable() else {"local_files_only": True}
        device = torch.device(device)

        def read_weights() -> torch.nn.Module:
            with hf_progress(sys.stderr.isatty() if progress is None else progress):
                return _read_checkpoint(auto, name, source, dtype=dtype, **offline)[0].to(device).eval()

        fp = source_fingerprint(name, dtype) if lazy and Path(source).is_dir() else None
        if fp is None:
            model, report = _read_checkpoint(auto, name, source, dtype=dtype, **offline)
            model = model.to(device).eval()
        else:  # the keys only (meta device): a deferred model is refused now, not when first used
            model, report = None, _read_checkpoint(auto, name, source, meta=True)[1]
        if problem := report.problem(name):
            if not _allow_missing(allow_missing_weights):
                raise ValueError(problem)
            warnings.warn(problem.split(". transformers would")[0] + " (allow_missing_weights: measured anyway, "
                          "with random weights)", stacklevel=2)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False, **offline)
        except (OSError, ValueError) as err:
            if _asks_for_custom_code(err):
                raise _needs_code(name, "its tokenizer ships Python code") from err
            raise _no_tokenizer(name, source, f"its tokenizer could not be loaded ({type(err).__name__})") from err
    _check_tokenizer(tokenizer, name, source)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = _pad_token(tokenizer)
    if model is not None:
        config, fp, n_params = model.config, fingerprint(model, source), sum(p.numel() for p in model.parameters())
    else:
        n_params = parameter_count(auto, config)
    text_cfg = getattr(config, "text_config", None) or config
    return LoadedModel(
        name=name,
        model=model,
        tokenizer=tokenizer,
        kind=kind,
        n_layers=int(text_cfg.num_hidden_layers),
        hidden_size=int(text_cfg.hidden_size),
        n_params=n_params,
        device=device,
        source=source,
        load_seconds=time.perf_counter() - t0,
        fingerprint=fp,
        model_type=text_cfg.model_type,
        info=info,
        config=config,
        missing_head=report.missing_head if kind == "decoder" else (),
        _read_weights=None if model is not None else read_weights,
    )


def parameter_count(auto: Any, config: Any) -> int:
    """Parameters of the model ``auto.from_config(config)`` builds, counted as
    ``model.parameters()`` does (tied weights once), on the ``meta`` device: no memory, no weights read."""
    import torch

    with torch.device("meta"):
        model = auto.from_config(config)
    return sum(p.numel() for p in model.parameters())


def model_sources(models: Sequence[str]) -> "pd.DataFrame":
    """One row per model: ``model``, ``source`` (an offline pack's upstream model, else the name)
    and ``weights`` (what was done to an offline pack's weights, e.g. "GGUF Q4_1 dequantised to
    fp32"; "" when unknown), read from the packs' records only (no config, no weights)."""
    import pandas as pd

    rows = []
    for name in models:
        _, info = _resolve(name)
        rows.append({"model": name, "source": info.get("upstream", name), "weights": info.get("weights", "")})
    return pd.DataFrame(rows, columns=["model", "source", "weights"])


def model_kinds(models: Sequence[str]) -> "pd.DataFrame":
    """One row per model: ``model``, ``attention``, ``backbone``, ``role``, ``tuning``,
    ``tuning_source`` and ``family`` (:func:`lrd.engine.kinds.model_kind`), read from configs only (no weights)."""
    import pandas as pd

    rows = []
    for name in models:
        config = model_config(name)
        _, info = _resolve(name)
        kind = info.get("kind") or ("decoder" if _is_decoder(config) else "encoder")
        rows.append({"model": name, **model_kind(config, kind=kind, info=info, name=name).row()})
    return pd.DataFrame(rows, columns=["model", "attention", "backbone", "role", "tuning", "tuning_source", "family"])
