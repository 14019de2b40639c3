"""Remove transformer blocks from a loaded model, temporarily and exactly.

``removed_layers(model, [3, 7])`` makes the model skip blocks 3 and 7: the residual stream
leaves block 2 and enters block 4 unchanged. Inside the ``with`` block the model is, module for
module, the model one would build with those blocks deleted from its block list and its config
adjusted (``num_hidden_layers``, the per-layer ``layer_types`` that select local/global
attention in Gemma 3 and sliding windows in Qwen2, and each attention module's ``layer_idx``
that indexes the KV cache). On exit, also after an exception, the original block list, config
values and ``layer_idx`` values are put back: nothing is copied, so no weights can change.

Layer numbers follow Hugging Face ``hidden_states``: block ``l`` (1..L) produces layer ``l``;
layer 0 is the embedding output and cannot be removed.

References
----------
Hinostroza et al., "Rethinking Layer Relevance in Large Language Models Beyond Cosine
Similarity", arXiv:2605.14075 (2026): relevance as the accuracy lost when one layer is removed.
Gromov et al., "The Unreasonable Ineffectiveness of the Deeper Layers", ICLR 2025.
"""

from __future__ import annotations

from contextlib import contextmanager
from collections.abc import Iterable
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from lrd.engine.models import LoadedModel, _get, architecture_row

__all__ = ["removed_layers", "replaced_blocks", "anatomy"]


def anatomy(model: LoadedModel | torch.nn.Module) -> tuple[torch.nn.Module, dict]:
    """The Hugging Face module and where its blocks, final norm and embeddings live: its
    ``ARCHITECTURES`` row, or derived from the model (:func:`lrd.engine.models.derive_anatomy`).

    Raises
    ------
    NotImplementedError
        For a family without a row whose anatomy cannot be derived, naming the row to add.
    """
    if isinstance(model, LoadedModel):
        return model.model, model.anatomy
    return model, architecture_row(model)


def _install_output_hooks(hf: torch.nn.Module) -> None:
    """Install transformers' hidden-state capturing hooks (5.x) while every block is in place,
    each block hooked exactly once.

    transformers installs them lazily, on the first forward that asks for hidden states, on
    the blocks present then: a first forward inside a removal would leave the removed blocks
    without hooks for ever after. So they are installed here, before any removal. Installing
    on a wrapper (``*ForCausalLM``) re-installs on the base model inside it unconditionally, so
    a wrapper whose base model already has its hooks (a forward of ``base_model`` ran) is only
    marked as hooked; hooking it again would record every block twice.
    """
    try:
        from transformers.modeling_utils import PreTrainedModel
        from transformers.utils.output_capturing import maybe_install_capturing_hooks
    except ImportError:  # transformers 4.x collects hidden states without hooks
        return
    flag = "_output_capturing_hooks_installed"  # what maybe_install_capturing_hooks checks and sets
    for m in hf.modules():  # outer models first
        if not isinstance(m, PreTrainedModel) or getattr(m, flag, False):
            continue
        inner_hooked = any(isinstance(s, PreTrainedModel) and getattr(s, flag, False)
                           for s in m.modules() if s is not m)
        if inner_hooked:
            setattr(m, flag, True)
        else:
            maybe_install_capturing_hooks(m)  # hooks m and every model inside it, once


def _configs(hf: torch.nn.Module, parent: torch.nn.Module) -> list[Any]:
    """Every distinct config object the model's forward may read the layer count from."""
    out: list[Any] = []
    for cfg in (getattr(hf, "config", None), getattr(parent, "config", None)):
        for c in (cfg, getattr(cfg, "text_config", None)):
            if c is not None and hasattr(c, "num_hidden_layers") and all(c is not o for o in out):
                out.append(c)
    return out


@contextmanager
def replaced_blocks(model: LoadedModel | torch.nn.Module, blocks: Sequence[torch.nn.Module],
                    layer_types: Sequence[str] | None = None) -> Iterator[None]:
    """Run the model with another block list (the machinery of :func:`removed_layers`).

    Parameters
    ----------
    model : LoadedModel or transformers model
    blocks : sequence of modules
        The new block list, in order (original blocks, or stand-ins).
    layer_types : sequence of str, optional
        ``config.layer_types`` for the new list (attention type per position); required when
        the config has ``layer_types``.
    """
    hf, row = anatomy(model)
    _install_output_hooks(hf)
    parent_path, _, attr = row["blocks"].rpartition(".")
    parent = _get(hf, parent_path) if parent_path else hf
    original = getattr(parent, attr)
    configs = _configs(hf, parent)
    saved_cfg = [(c, c.num_hidden_layers, getattr(c, "layer_types", None)) for c in configs]
    saved_idx = [(m, m.layer_idx) for b in original for m in b.modules() if hasattr(m, "layer_idx")]
    saved_idx += [(m, m.layer_idx) for b in blocks for m in b.modules() if hasattr(m, "layer_idx")]
    saved_loaded = (model.n_layers, model.fingerprint) if isinstance(model, LoadedModel) else None
    if any(t is not None for *_, t in saved_cfg) and layer_types is None:
        raise ValueError("this model's config has per-layer layer_types: pass layer_types for the new block list")
    try:
        setattr(parent, attr, torch.nn.ModuleList(blocks))
        for c, _, types in saved_cfg:
            c.num_hidden_layers = len(blocks)
            if types is not None:
                c.layer_types = list(layer_types)
        for i, b in enumerate(blocks):  # the KV cache is indexed by position in the block list
            for m in b.modules():
                if hasattr(m, "layer_idx"):
                    m.layer_idx = i
        if saved_loaded is not None:
            model.n_layers = len(blocks)
            index = {id(b): i for i, b in enumerate(original)}
            tag = ",".join(str(index.get(id(b), "r")) for b in blocks)
            model.fingerprint = f"{saved_loaded[1]}-blocks[{tag}]"  # never hit the intact model's cache
        yield
    finally:
        setattr(parent, attr, original)
        for c, n, types in saved_cfg:
            c.num_hidden_layers = n
            if types is not None:
                c.layer_types = types
        for m, idx in saved_idx:
            m.layer_idx = idx
        if saved_loaded is not None:
            model.n_layers, model.fingerprint = saved_loaded


def _check_layers(layers: Iterable[int], n_layers: int) -> list[int]:
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise TypeError(f"layers must be a list of block numbers, got {layers!r}; pass e.g. [2] to remove block 2")
    layers = list(layers)
    bad = [i for i in layers if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer))]
    if bad:
        raise ValueError(f"layers must be integer block numbers 1..{n_layers}, got {bad!r}; "
                         "pass whole numbers such as [2] (2.0, 2.7 or True are not block numbers)")
    out = sorted({int(i) for i in layers})
    if len(out) != len(layers):
        raise ValueError(f"layers {list(layers)} repeat a layer; give each layer to remove once")
    bad = [i for i in out if not 1 <= i <= n_layers]
    if bad:
        raise ValueError(f"layers {bad} out of range: blocks are numbered 1..{n_layers} as in hidden_states "
                         "(layer 0, the embeddings, cannot be removed)")
    return out


@contextmanager
def removed_layers(model: LoadedModel | torch.nn.Module, layers: Iterable[int]) -> Iterator[Any]:
    """Skip the given transformer blocks inside a ``with`` block; restore them on exit.

    The residual stream passes removed blocks unchanged: for a block ``f_l`` with
    :math:`h_l = h_{l-1} + f_l(h_{l-1})`, removal sets :math:`h_l = h_{l-1}` and drops the index,
    exactly as a model built without that block (config adjusted) computes.

    Parameters
    ----------
    model : LoadedModel or transformers model
        What :func:`lrd.load_model` returns (offline key, folder or hub id), or a bare
        ``transformers`` model (its anatomy from ``lrd.engine.models.ARCHITECTURES`` or derived).
    layers : iterable of int
        Block numbers 1..L (hidden-states numbering). An empty iterable changes nothing.

    Yields
    ------
    LoadedModel or transformers model
        The same ``model`` object, with ``n_layers`` reduced (for a LoadedModel) and a fingerprint
        that differs from the intact model's, so :func:`lrd.engine.extract` does not reuse its cache.

    Raises
    ------
    NotImplementedError
        A family without a row in ``lrd.engine.models.ARCHITECTURES`` whose anatomy cannot be derived
        (the message says what row to add).
    ValueError
        A layer out of 1..L or repeated.

    Examples
    --------
    >>> import lrd  # doctest: +SKIP
    >>> m = lrd.load_model("smollm2")  # doctest: +SKIP
    >>> with removed_layers(m, [12]):  # doctest: +SKIP
    ...     states = lrd.extract(m, ["a text"])  # 30 layers instead of 31
    """
    hf, row = anatomy(model)
    blocks = list(_get(hf, row["blocks"]))
    drop = set(_check_layers(layers, len(blocks)))
    keep = [i for i in range(len(blocks)) if i + 1 not in drop]
    cfg = _configs(hf, hf)[0]
    types = getattr(cfg, "layer_types", None)
    with replaced_blocks(model, [blocks[i] for i in keep], None if types is None else [types[i] for i in keep]):
        yield model
