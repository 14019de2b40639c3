"""Hidden states of every layer in one forward pass per batch, pooled on the fly, cached.

``extract(model, texts)`` returns an array of shape ``(n_layers + 1, n_texts, d_model)``:
index 0 is the embedding output, index ``l`` the output of block ``l``, exactly the tensors
Hugging Face returns as ``hidden_states`` (for most decoders the last one has the final norm
applied, since that is what ``hidden_states[-1]`` holds).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from tqdm import tqdm

from lrd.engine import progress as lrd_progress
from lrd.engine.store import computing, folder
from lrd.engine.cache import discard, open_checked, write_checked
from lrd.engine.models import LoadedModel
from lrd.engine.perturb import perturb
from lrd.engine.pipeline import HostCopy, accelerator_batch_tokens, on_accelerator, pad_rows, prefetch

POOLINGS = ("mean", "last", "cls")
EXTRACT_VERSION = "2"  # bump when extraction semantics or the entry format change: invalidates the cache
DEFAULT_MAX_LENGTH = 512  # cap of the default max_length (part of every cache key)
# Padded tokens per batch on CPU (``max_batch_tokens=None``), chosen with
# benchmarks/batch_tokens.py (it times each cap against none): long texts (MMLU questions through
# the decoders) gain most, short ones (sarcasm headlines) a little, and caps above 512 add little.
# Accelerators keep plain batches of ``batch_size``.
CPU_BATCH_TOKENS = 512
# Position ids of these architectures start after the padding index, so pad_token_id + 1
# rows of the position table are never used for real tokens.
_POSITION_OFFSET_TYPES = {"roberta", "xlm-roberta", "mpnet", "camembert", "longformer", "data2vec-text",
                          "xlm-roberta-xl", "ibert", "markuplm", "roberta-prelayernorm"}
_INSANE_LENGTH = 1_000_000  # tokenizers without a limit report int(1e30)


def _positive_int(name: str, value, *, none_ok: bool = False) -> int | None:
    """``value`` as an int, or a ValueError naming ``name`` unless it is a positive integer
    (or ``None`` when ``none_ok``)."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if none_ok else ''}, got {value!r}")
    return int(value)


def max_input_length(model: LoadedModel) -> int | None:
    """The longest input, in tokens, the model can take; None when it states no limit.

    The smaller of its position table (``max_position_embeddings``, less the padding offset of
    RoBERTa-style models) and its tokenizer's ``model_max_length``, each when it is sane
    (positive and below a million; tokenizers without a limit report ``1e30``).
    """
    cfg = model.config
    cfg = getattr(cfg, "text_config", None) or cfg
    limits = []
    positions = getattr(cfg, "max_position_embeddings", None)
    if isinstance(positions, int) and 0 < positions < _INSANE_LENGTH:
        if getattr(cfg, "model_type", "") in _POSITION_OFFSET_TYPES:
            positions -= int(getattr(cfg, "pad_token_id", None) or 0) + 1
        limits.append(positions)
    tok_limit = getattr(model.tokenizer, "model_max_length", None)
    if isinstance(tok_limit, int) and 0 < tok_limit < _INSANE_LENGTH:
        limits.append(tok_limit)
    return min(limits) if limits else None


def resolve_max_length(model: LoadedModel, max_length: int | None) -> int:
    """``max_length`` checked against :func:`max_input_length`; ``None`` -> the default.

    The default is ``min(512, max_input_length(model))``. An explicit value above the model's
    limit is a ValueError (the position table would overflow or the tokenizer was not trained
    for it).
    """
    limit = max_input_length(model)
    if max_length is None:
        return DEFAULT_MAX_LENGTH if limit is None else min(DEFAULT_MAX_LENGTH, limit)
    max_length = _positive_int("max_length", max_length, none_ok=True)
    if limit is not None and max_length > limit:
        raise ValueError(
            f"max_length={max_length} is above what {model.name} can take ({limit} tokens: its position "
            f"table and tokenizer limit); pass max_length <= {limit}, or None for the default"
        )
    return max_length


def pool(hidden: torch.Tensor, mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """Pool token states into one vector per sequence, ignoring padding.

    Parameters
    ----------
    hidden : tensor of shape (..., batch, seq, d)
    mask : tensor of shape (batch, seq)
        Attention mask, 1 for real tokens (padding may be on either side).
    pooling : {"mean", "last", "cls"}
        ``mean``: average over real tokens (special tokens included, as sentence-transformers);
        ``last``: the last real token (decoders); ``cls``: the first real token.

    Returns
    -------
    tensor of shape (..., batch, d)
    """
    m = mask.to(hidden.dtype)
    if pooling == "mean":  # a (1, T) @ (T, d) product per sequence: no (..., B, T, d) temporary
        return (m[:, None, :] @ hidden).squeeze(-2) / m.sum(-1, keepdim=True).clamp_min(1)
    t = mask.shape[-1]
    ar = torch.arange(t, device=mask.device)
    if pooling == "last":
        idx = torch.where(mask.bool(), ar, -1).amax(-1)
    elif pooling == "cls":
        idx = torch.where(mask.bool(), ar, t).amin(-1)
    else:
        raise ValueError(f"unknown pooling {pooling!r}; choose one of {POOLINGS}")
    gather = idx.view(*([1] * (hidden.dim() - 3)), -1, 1, 1).expand(*hidden.shape[:-2], 1, hidden.shape[-1])
    return hidden.gather(-2, gather).squeeze(-2)


def _texts_hash(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        b = t.encode()
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


def cache_key(model: LoadedModel, texts: Sequence[str], **options) -> str:
    """Content key of an extraction: model fingerprint, texts, options and code version."""
    from lrd._version import __version__

    payload = {"model": model.fingerprint, "texts": _texts_hash(texts), "n": len(texts),
               "version": f"{__version__}/{EXTRACT_VERSION}", **options}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def _atomic_save(path: Path, array: np.ndarray) -> None:
    """Write ``array`` as ``.npy`` bytes behind a checksum header (:func:`lrd.engine.cache.write_checked`),
    through a locked temporary sibling renamed into place: readers never see half a file."""
    write_checked(path, lambda f: np.save(f, array), ".npy.tmp")


def _cached_states(path: Path) -> np.ndarray | None:
    """The array stored at ``path``, or None when there is none or it is unusable.

    The checksum is verified before the array is read (:func:`lrd.engine.cache.open_checked`); a
    damaged entry or any failed load is reported (a line naming the file, on the terminal), removed, and
    recomputed by the caller.
    """
    try:
        with open_checked(path) as f:
            return np.lib.format.read_array(f, allow_pickle=False)
    except FileNotFoundError:
        return None
    except Exception as err:  # any failure to load means the entry is unusable: recompute it
        discard(path, err)
        return None


def batches_by_length(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None) -> list[np.ndarray]:
    """Indices grouped into batches of similar length (longest first), to minimise padding.

    With ``max_tokens``, a batch also holds at most ``max_tokens`` padded tokens (its size times
    its longest length; a single longer text still gets a batch of its own): long texts go in
    small batches, short ones in batches of ``batch_size``.
    """
    order = np.argsort(-np.asarray(lengths), kind="stable")
    if max_tokens is None:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    out, start = [], 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        size = int(min(batch_size, max(1, max_tokens // longest)))
        out.append(order[start:start + size])
        start += size
    return out


def _forward_kwargs(model: LoadedModel, enc: dict, padding_side: str) -> dict:
    kw = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
    if padding_side == "left" and "position_ids" in inspect.signature(model.model.base_model.forward).parameters:
        kw["position_ids"] = (enc["attention_mask"].cumsum(-1) - 1).clamp_min(0)
    if model.kind == "decoder":
        kw["use_cache"] = False
    return kw


def batch_token_limit(model: LoadedModel, max_batch_tokens: int | None) -> int | None:
    """The padded-token cap per batch: ``max_batch_tokens``; by default :data:`CPU_BATCH_TOKENS`
    on CPU and, on a CUDA device, what half its free memory holds
    (:func:`lrd.engine.pipeline.accelerator_batch_tokens`)."""
    if max_batch_tokens is not None:
        return _positive_int("max_batch_tokens", max_batch_tokens, none_ok=True)
    if not on_accelerator(model.device):
        return CPU_BATCH_TOKENS
    cfg = model.model.config
    cfg = getattr(cfg, "text_config", None) or cfg
    element = torch.tensor([], dtype=model.model.dtype).element_size()
    return accelerator_batch_tokens(model.n_layers, model.hidden_size, getattr(cfg, "intermediate_size", None),
                                    element, model.device)


def tokenized_batches(tokenizer, texts: Sequence[str], *, batch_size: int, max_batch_tokens: int | None,
                      max_length: int, padding_side: str, chunk: int | None = None, pin: bool = False):
    """Yield ``(indices, input_ids, attention_mask)`` per batch of similar-length texts.

    Texts are tokenised ``chunk`` at a time (all at once when ``chunk`` is None) and grouped by
    :func:`batches_by_length` within their chunk; ``indices`` are positions in ``texts``. With
    ``chunk`` None the batches are those of :func:`batches_by_length` over every text. Run it
    under :func:`lrd.engine.pipeline.prefetch` and the next chunk is tokenised while the current
    batches run.
    """
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        raise ValueError("the tokenizer has no padding token; set tokenizer.pad_token (lrd.load_model sets "
                         "it to the end-of-sequence token)")
    chunk = len(texts) if chunk is None else chunk
    for start in range(0, len(texts), chunk):
        part = list(texts[start:start + chunk])
        ids = tokenizer(part, truncation=True, max_length=max_length, add_special_tokens=True)["input_ids"]
        for local in batches_by_length([len(x) for x in ids], batch_size, max_batch_tokens):
            input_ids, mask = pad_rows([ids[i] for i in local], pad_id, padding_side, pin=pin)
            yield start + local, input_ids, mask


#: Texts tokenised per chunk on an accelerator, in batches: the first forward pass waits for
#: one chunk only, and each later chunk is tokenised while the one before runs.
ACCELERATOR_CHUNK_BATCHES = 4


def model_batches(model: LoadedModel, texts: Sequence[str], *, batch_size: int, max_batch_tokens: int | None,
                  max_length: int, padding_side: str):
    """:func:`tokenized_batches` as the model's device wants them: on an accelerator a chunk of
    :data:`ACCELERATOR_CHUNK_BATCHES` batches at a time (pinned on CUDA); on the CPU every text
    at once, so the batches are those of :func:`batches_by_length` over all of them."""
    return tokenized_batches(model.tokenizer, texts, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
                             max_length=max_length, padding_side=padding_side,
                             chunk=batch_size * ACCELERATOR_CHUNK_BATCHES if on_accelerator(model.device) else None,
                             pin=torch.device(model.device).type == "cuda")


def _check_finite(model: LoadedModel, array: np.ndarray) -> None:
    if not np.isfinite(array).all():
        raise FloatingPointError(
            f"{model.name} produced NaN/inf hidden states; try dtype=torch.float32 or shorter texts")


@torch.inference_mode()
def _run(model: LoadedModel, texts: Sequence[str], *, variants: Sequence[tuple[str, bool]], batch_size: int,
         max_length: int, padding_side: str, return_tokens: bool, progress: bool,
         max_batch_tokens: int | None = None, tokens_final_norm: bool = False):
    """One forward pass per batch; every ``(pooling, final_norm)`` variant pooled from it.

    On an accelerator the host stays a batch ahead: texts are tokenised and padded in a
    background thread, a chunk at a time (:data:`ACCELERATOR_CHUNK_BATCHES`), inputs come from
    pinned memory, and each batch's pooled result, every variant stacked into one
    ``(variants, L + 1, B, d)`` tensor, travels to the host in one non-blocking copy that is read
    after the next batch's forward pass has been queued. On the CPU the batches are those of
    :func:`batches_by_length` over every text, as before, produced inline (no feeding thread),
    and nothing waits.
    """
    pooled = [np.empty((model.n_layers + 1, len(texts), model.hidden_size), dtype=np.float32) for _ in variants]
    tokens: list[np.ndarray | None] = [None] * len(texts) if return_tokens else []
    out_stream = lrd_progress.stream(progress)
    bar = tqdm(total=len(texts), disable=out_stream is None, file=out_stream, ncols=lrd_progress.columns(),
               unit="text", desc=f"extract {model.name} · {lrd_progress.describe(texts)}")
    batches = model_batches(model, texts, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
                            max_length=max_length, padding_side=padding_side)
    pending: tuple[np.ndarray, HostCopy] | None = None  # the previous batch, on its way to the host
    feed = None

    def land(idx: np.ndarray, copy: HostCopy) -> None:
        result = copy.result()
        _check_finite(model, result)
        for out_array, p in zip(pooled, result):
            out_array[:, idx] = p
        bar.update(len(idx))

    try:
        # a feeding thread on accelerators only; closed in `finally`: an error here stops it at once
        feed = prefetch(batches, background=on_accelerator(model.device))
        for idx, input_ids, mask in feed:
            enc = {"input_ids": input_ids.to(model.device, non_blocking=True),
                   "attention_mask": mask.to(model.device, non_blocking=True)}
            # the base model (no LM head): hidden states are the same, and no logits are computed
            out = model.model.base_model(**_forward_kwargs(model, enc, padding_side), output_hidden_states=True)
            hidden = out.hidden_states  # L + 1 tensors (B, T, d); never stacked: pooled layer by layer
            if len(hidden) != model.n_layers + 1:
                raise RuntimeError(f"{model.name} returned {len(hidden)} hidden states, expected {model.n_layers + 1}")
            normed = None  # every layer through the final norm; the last state already has it (HF decoders)
            if tokens_final_norm or any(f for _, f in variants):
                normed = [model.final_norm(h) for h in hidden[:-1]] + [hidden[-1]]
            mask = enc["attention_mask"]
            result = torch.stack([torch.stack([pool(h.float(), mask, pooling) for h in (normed if final_norm else hidden)])
                                  for pooling, final_norm in variants])
            copy = HostCopy(result)
            if pending is not None:
                land(*pending)
            pending = (idx, copy)
            if return_tokens:
                m = mask.bool().cpu()
                hs_cpu = torch.stack([h.float().cpu() for h in (normed if tokens_final_norm else hidden)])
                for j, i in enumerate(idx):
                    tokens[i] = hs_cpu[:, j][:, m[j]].numpy()
            del out, hidden, normed, result  # free this batch's states before the next forward
        if pending is not None:
            land(*pending)
    finally:
        if feed is not None:
            feed.close()
        bar.close()
        lrd_progress.release(out_stream)
    return pooled, tokens


def _check_texts(texts) -> None:
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            f"texts must be a list of strings, got a single {type(texts).__name__} ({texts[:40]!r}); "
            "pass [text] to extract one text"
        )
    if len(texts) == 0:
        raise ValueError("texts is empty")
    if not all(isinstance(t, str) and t for t in texts):
        raise ValueError("every text must be a non-empty string")
    for i, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:  # a lone surrogate: no tokenizer, and no cache key, can take it
            raise ValueError(
                f"text {i} holds {text[err.start]!r} at character {err.start}: a lone UTF-16 surrogate, not a Unicode "
                "character (left by decoding bytes with errors='surrogateescape', or by splitting a surrogate pair), "
                "which no tokenizer can encode; clean the texts first, e.g. text.encode('utf-8', 'replace').decode() "
                "(each becomes '?'), or decode their source with errors='replace'") from None


def _variant(model: LoadedModel, variant) -> tuple[str, bool]:
    if isinstance(variant, str):
        variant = {"pooling": variant}
    unknown = set(variant) - {"pooling", "final_norm"}
    if unknown:
        raise ValueError(f"unknown variant option(s) {sorted(unknown)}; a variant sets 'pooling' and/or 'final_norm'")
    pooling, final_norm = variant.get("pooling", "mean"), bool(variant.get("final_norm", False))
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; choose one of {POOLINGS}")
    if final_norm and not model.has_final_norm:
        raise ValueError(f"{model.name} has no final norm (encoders have none); use final_norm=False")
    return pooling, final_norm


def _compute_missing(model: LoadedModel, texts: Sequence[str], resolved: list, results: list, paths: list,
                     missing: list[int], *, batch_size: int, max_batch_tokens: int | None, max_length: int,
                     padding_side: str, return_tokens: bool, progress: bool | None):
    """Run the model once for the ``missing`` variants (or the first, for ``return_tokens``),
    fill ``results`` in place and cache each computed array; the per-text token states or None."""
    if not (missing or return_tokens):
        return None
    todo = missing or [0]
    computed, tokens = _run(model, texts, variants=[resolved[i] for i in todo], batch_size=batch_size,
                            max_batch_tokens=batch_token_limit(model, max_batch_tokens),
                            max_length=max_length, padding_side=padding_side, return_tokens=return_tokens,
                            progress=progress, tokens_final_norm=resolved[0][1])
    for i, array in zip(todo, computed):
        if results[i] is None:
            results[i] = array
            if paths[i] is not None:
                _atomic_save(paths[i], array)
    return tokens


def extract_variants(model: LoadedModel, texts: Sequence[str], variants: Sequence[dict | str], *,
                     batch_size: int = 32, max_batch_tokens: int | None = None, max_length: int | None = None,
                     padding_side: str = "right", return_tokens: bool = False, cache: bool | str | Path = True, progress: bool | None = None):
    """Several poolings / final-norm settings of the same texts from ONE forward pass.

    Each variant is cached under the key :func:`extract` gives it, so
    ``extract_variants(model, texts, [{"pooling": "mean"}, {"pooling": "mean", "final_norm": True}])``
    returns exactly ``[extract(model, texts), extract(model, texts, final_norm=True)]``, but runs
    the model once for all the variants not already in the cache (and not at all when every
    variant is cached and ``return_tokens`` is False).

    Other parameters as :func:`extract`.

    Parameters
    ----------
    variants : sequence of dict or str
        ``{"pooling": ..., "final_norm": ...}`` (defaults ``"mean"``, ``False``); a string is a pooling.
    return_tokens : bool
        Also return the unpadded token states of every text, as :func:`extract` does (with the
        final norm when the first variant asks for it); the pooled variants are still cached.

    Returns
    -------
    list of ndarray, one ``(n_layers + 1, n_texts, d_model)`` array per variant
        And, with ``return_tokens``, the list of per-text token arrays.
    """
    _check_texts(texts)
    if isinstance(variants, (str, dict)) or len(variants) == 0:
        raise ValueError("variants must be a non-empty list of variants, e.g. [{'pooling': 'mean'}]")
    _positive_int("batch_size", batch_size)
    resolved = [_variant(model, v) for v in variants]
    max_length = resolve_max_length(model, max_length)  # an int before it enters the cache key
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    results: list[np.ndarray | None] = [None] * len(resolved)
    paths: list[Path | None] = [None] * len(resolved)
    if cache is not False:
        root = folder("states") if cache is True else Path(cache)
        for i, (pooling, final_norm) in enumerate(resolved):
            extra = {"final_norm": True} if final_norm else {}  # default options keep their old keys
            key = cache_key(model, texts, pooling=pooling, max_length=max_length, padding_side=padding_side, **extra)
            paths[i] = root / f"{model.fingerprint}-{key}.npy"
            results[i] = _cached_states(paths[i])
    missing = [i for i, r in enumerate(results) if r is None]
    # one process computes a missing entry while the others wait for it (lrd.engine.store.computing)
    lock = paths[missing[0]] if missing else None
    with computing(lock) if lock is not None else nullcontext():
        if lock is not None:  # written by a process we waited for?
            results = [_cached_states(p) if r is None else r for p, r in zip(paths, results)]
            missing = [i for i, r in enumerate(results) if r is None]
        tokens = _compute_missing(model, texts, resolved, results, paths, missing, batch_size=batch_size,
                                  max_batch_tokens=max_batch_tokens, max_length=max_length,
                                  padding_side=padding_side, return_tokens=return_tokens, progress=progress)
    # LRD_PERTURB (lrd.engine.perturb): float noise on the way out, after the cache, which keeps exact states
    results = [perturb(r, tag=f"extract/{p}/{f}") for r, (p, f) in zip(results, resolved)]
    if return_tokens:
        return results, [perturb(t, tag="extract/tokens") for t in tokens]
    return results


def extract(model: LoadedModel, texts: Sequence[str], pooling: str = "mean", *, batch_size: int = 32,
            max_batch_tokens: int | None = None, max_length: int | None = None, padding_side: str = "right",
            return_tokens: bool = False,
            cache: bool | str | Path = True, progress: bool | None = None, final_norm: bool = False):
    """Pooled hidden states of every layer for a list of texts.

    All L + 1 hidden states come from one forward pass per batch and are pooled before the
    next batch runs; batches are formed from texts of similar token length.

    Parameters
    ----------
    model : LoadedModel
        From :func:`lrd.load_model`; its ``device`` is used.
    texts : sequence of str
        A list (or other sequence) of texts. A single ``str`` is a TypeError, not one text:
        iterating a string gives characters, so pass ``[text]`` for one text.
    pooling : {"mean", "last", "cls"}
        See :func:`pool`. ``"last"`` is the usual choice for decoders.
    batch_size : int
        Texts per batch at most.
    max_batch_tokens : int, optional
        Padded tokens per batch at most (a longer text still gets a batch of its own); default
        :data:`CPU_BATCH_TOKENS` on CPU, where small batches of long texts are much faster, and
        no cap on an accelerator. It does not change the result beyond float rounding.
    max_length : int, optional
        Texts longer than ``max_length`` tokens are truncated. Default: 512, or the model's own
        limit when it is lower (:func:`max_input_length`: its position table and tokenizer
        ``model_max_length``); a value above that limit is a ValueError.
    padding_side : {"right", "left"}
        Right padding is exact for causal and bidirectional models alike; left padding passes
        explicit ``position_ids`` so the result is the same.
    return_tokens : bool
        Also return, per text, its unpadded token states of shape (L + 1, T_i, d) (not cached).
    cache : bool or path
        ``True``: ``$LRD_HOME/states``; a path: that folder; ``False``: no cache. Entries are
        keyed by content (model fingerprint, texts, options, code version) and written atomically.
    progress : bool, optional
        Progress bar; default: only when stderr is a terminal, or, inside a chapter executed by
        ``lrd run`` / ``lrd book`` from a terminal, in that terminal (:mod:`lrd.engine.progress`).
    final_norm : bool
        Apply the model's final norm (``model.final_norm``) to the token states of every layer
        before pooling, as a model truncated after block ``l`` would (the last layer already
        has it); decoders only.

    Returns
    -------
    ndarray of shape (n_layers + 1, n_texts, d_model), float32
        And, with ``return_tokens``, a list of ``n_texts`` arrays of shape (L + 1, T_i, d).

    Raises
    ------
    ValueError
        No texts, an empty text, or a text holding a lone UTF-16 surrogate (``"\\ud800"``, left by
        ``errors="surrogateescape"``), which no tokenizer can encode: the message names the text's
        index and the character's place; clean such texts first (``text.encode("utf-8",
        "replace").decode()``).
    """
    out = extract_variants(model, texts, [{"pooling": pooling, "final_norm": final_norm}], batch_size=batch_size,
                           max_batch_tokens=max_batch_tokens,
                           max_length=max_length, padding_side=padding_side, return_tokens=return_tokens,
                           cache=False if return_tokens else cache, progress=progress)
    if return_tokens:
        (pooled,), tokens = out
        return pooled, tokens
    return out[0]


def extract_shared(model: LoadedModel, texts: Sequence[str], pooling: str = "mean", **options) -> np.ndarray:
    """:func:`extract`, which also caches the final-norm variant of the same forward pass where
    the model has a final norm (decoders; :func:`extract_variants`).

    The mid-layer chapter scores every task both without and with the final norm; chapters
    that embed the same texts earlier call this, so that one pass serves both, and the later
    chapter finds both variants cached. The returned array is exactly ``extract(model, texts,
    pooling, **options)``.
    """
    variants = [{"pooling": pooling}] + ([{"pooling": pooling, "final_norm": True}]
                                         if model.has_final_norm else [])
    return extract_variants(model, texts, variants, **options)[0]
