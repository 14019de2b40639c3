"""Multiple-choice scoring by log-likelihood, as lm-evaluation-harness scores it.

Each candidate ``i`` of an item is a request ``(context_i, continuation_i)``; its score is

.. math:: \\ell_i = \\sum_{t \\in \\text{continuation}_i} \\log p(x_t \\mid x_{<t}),

tokenised as the harness does (``HFLM._encode_pair``: trailing spaces of the context move to the
continuation; the whole string and the context are encoded with the tokenizer's default special
tokens and the continuation is the difference). Then

.. math::

    \\mathrm{acc} = [\\arg\\max_i \\ell_i = y], \\qquad
    \\mathrm{acc\\_norm} = [\\arg\\max_i \\ell_i / |c_i| = y],

with :math:`|c_i|` the length in characters of the choice text without the target delimiter
(``lm_eval.api.task.ConfigurableTask.process_results``, ``completion_len``).

Batched, and the shared context computed once: the choices of an item with a common context are
packed into one row (the context, then each choice's tokens), with a block-causal attention mask
(a choice sees the context and itself, never another choice) and position ids that restart
after the context for every choice, which is exactly what scoring each choice on its own
computes. Identical rows are computed once; rows are sorted by length and left-padded, and the
language-model head is applied only from the first position that predicts a continuation token
(``logits_to_keep``). Packing is skipped where a row would exceed a sliding-attention window.

References
----------
Gao et al., lm-evaluation-harness v0.4 (``lm_eval/api/task.py``, ``lm_eval/models/huggingface.py``).
"""

from __future__ import annotations

import inspect
import sys
from contextlib import closing
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from lrd.engine.extract import batch_token_limit, batches_by_length
from lrd.engine.models import LoadedModel
from lrd.engine.perturb import perturb
from lrd.engine.pipeline import HostCopy, on_accelerator, prefetch
from lrd.engine.tasks import Task

__all__ = ["MCRequests", "build_requests", "loglikelihoods", "mc_accuracy", "permuted_gold_accuracy", "forward_batches",
           "request_logprobs"]


@dataclass(frozen=True)
class MCRequests:
    """A tokenised multiple-choice task, packed into model input rows.

    Attributes
    ----------
    inputs : list of list of int
        Unique model input rows. A row is either one request's ``(context + continuation)[:-1]``
        or, when the choices of an item share their context, the context once followed by
        every choice's ``continuation[:-1]`` (each choice attends to the context and to itself).
    segments : list of list of int
        Per row token: 0 for the (shared) context, ``j >= 1`` for choice segment ``j``.
    positions : list of list of int
        Position ids of each row's tokens (each choice segment continues after the context).
    input_index : ndarray of shape (n_requests,)
        The row each request reads its log-probabilities from.
    targets : list of list of int
        For each request, the row positions whose next-token distribution scores its
        continuation tokens (in order).
    continuations : list of list of int
        Continuation tokens of each request.
    item, choice : ndarray of shape (n_requests,)
        Item of each request (requests of an item are consecutive) and choice index within it.
    labels : ndarray of shape (n_items,)
        Index of the correct choice.
    completion_len : ndarray of shape (n_requests,)
        Characters of each choice without the target delimiter (for ``acc_norm``).
    """

    inputs: list[list[int]]
    segments: list[list[int]]
    positions: list[list[int]]
    input_index: np.ndarray
    targets: list[list[int]]
    continuations: list[list[int]]
    item: np.ndarray
    choice: np.ndarray
    labels: np.ndarray
    completion_len: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.labels)

    @property
    def n_tokens(self) -> int:
        return sum(len(x) for x in self.inputs)


def _encode_pair(tok, context: str, continuation: str) -> tuple[list[int], list[int]]:
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        continuation, context = context[-n_spaces:] + continuation, context[:-n_spaces]
    whole = tok(context + continuation)["input_ids"]
    ctx = tok(context)["input_ids"]
    return ctx, whole[len(ctx):]


def _window(model: LoadedModel) -> int | None:
    """The sliding-attention window, if any layer uses one (packed rows must fit inside it)."""
    cfg = model.config
    types = getattr(cfg, "layer_types", None) or []
    if getattr(cfg, "sliding_window", None) and ("sliding_attention" in types or getattr(cfg, "use_sliding_window", False)):
        return int(cfg.sliding_window)
    return None


def build_requests(model: LoadedModel, task: Task, *, max_length: int = 1024, target_delimiter: str = " ",
                   share_context: bool = True) -> MCRequests:
    """Tokenise a multiple-choice task into model input rows.

    Parameters
    ----------
    model : LoadedModel
        A decoder (its tokenizer is used).
    task : Task
        Of type ``multiple_choice`` (columns ``contexts``, ``choices``, ``label``).
    max_length : int
        Inputs longer than this keep their last ``max_length`` tokens (as the harness); items
        whose packed row would be longer are not packed.
    target_delimiter : str
        Prefix of each choice that is not part of the choice text (``acc_norm`` lengths).
    share_context : bool
        Pack the choices of an item that share its context into one row, so the context is
        computed once (exact: a block-causal attention mask and per-segment position ids).
        Identical rows are always computed once.
    """
    if task.type != "multiple_choice":
        raise ValueError(f"task {task.name!r} is {task.type!r}; multiple-choice scoring needs a multiple_choice task")
    if model.kind != "decoder":
        raise ValueError(f"{model.name} is an {model.kind}; log-likelihood scoring needs a decoder")
    limit = min(max_length, _window(model) or max_length)
    rows: dict[tuple, int] = {}
    packed: list[tuple[list[int], list[int], list[int]]] = []
    index, targets, conts, item, choice, clen = [], [], [], [], [], []

    def add(tokens, segs, pos) -> int:
        key = (tuple(tokens), tuple(segs))
        if key not in rows:
            rows[key] = len(packed)
            packed.append((list(tokens), list(segs), list(pos)))
        return rows[key]

    bos = model.tokenizer.bos_token_id if model.tokenizer.bos_token_id is not None else model.tokenizer.eos_token_id
    for i, (ctxs, chs) in enumerate(zip(task.frame["contexts"], task.frame["choices"])):
        pairs = [_encode_pair(model.tokenizer, c, ch) for c, ch in zip(ctxs, chs)]
        pairs = [(c or [bos], k) for c, k in pairs]
        if any(not k for _, k in pairs):
            raise ValueError(f"a choice of item {i} of {task.name} encodes to no tokens")
        ctx0 = pairs[0][0]
        size = len(ctx0) + sum(len(k) - 1 for _, k in pairs)
        if share_context and all(c == ctx0 for c, _ in pairs) and size <= limit:
            tokens, segs, pos, tg = list(ctx0), [0] * len(ctx0), list(range(len(ctx0))), []
            for j, (_, k) in enumerate(pairs, start=1):
                tg.append([len(ctx0) - 1] + list(range(len(tokens), len(tokens) + len(k) - 1)))
                tokens += k[:-1]
                segs += [j] * (len(k) - 1)
                pos += list(range(len(ctx0), len(ctx0) + len(k) - 1))
            r = add(tokens, segs, pos)
            index += [r] * len(pairs)
            targets += tg
        else:
            for c, k in pairs:
                x = (c + k)[-(max_length + 1):][:-1]
                k = k[-len(x):]
                index.append(add(x, [0] * len(x), range(len(x))))
                targets.append(list(range(len(x) - len(k), len(x))))
        for j, (ch, (_, k)) in enumerate(zip(chs, pairs)):
            conts.append(k[-len(targets[len(conts)]):])
            item.append(i)
            choice.append(j)
            clen.append(len(ch[len(target_delimiter):] if ch.startswith(target_delimiter) else ch))
    return MCRequests([p[0] for p in packed], [p[1] for p in packed], [p[2] for p in packed], np.asarray(index),
                      targets, conts, np.asarray(item), np.asarray(choice),
                      task.frame["label"].to_numpy().astype(int), np.asarray(clen, dtype=float))


@dataclass
class Batch:
    """One left-padded batch of rows: model keyword arguments and the positions it scores.

    Only the positions whose next-token distribution scores a continuation token are sent
    through the output head (the head of a 262k-token vocabulary costs more than the whole
    body of a small decoder): ``flat_rows[p], flat_positions[p]`` is scored position ``p``,
    ``flat_targets[p]`` the token it must predict and ``flat_requests[p]`` the index, within
    ``requests``, of the request it belongs to.
    """

    rows: np.ndarray
    kwargs: dict  # input_ids, attention_mask (2-D, or 4-D block-causal when rows are packed), position_ids
    token_mask: torch.Tensor  # (B, W) bool, real tokens
    requests: list[int]  # request indices scored by this batch
    flat_rows: torch.Tensor
    flat_positions: torch.Tensor
    flat_targets: torch.Tensor
    flat_requests: torch.Tensor
    n_real: int = 0  # real (unpadded) tokens, counted on the host

    def to(self, device: str | torch.device) -> "Batch":
        """This batch with every tensor on ``device`` (non-blocking from pinned memory)."""
        move = lambda t: t.to(device, non_blocking=True)  # noqa: E731
        return Batch(self.rows, {k: move(v) for k, v in self.kwargs.items()}, move(self.token_mask), self.requests,
                     move(self.flat_rows), move(self.flat_positions), move(self.flat_targets),
                     move(self.flat_requests), self.n_real)


def _encode_batch(model: LoadedModel, requests: MCRequests, rows: np.ndarray, req_of_row: dict, *,
                  pin: bool = False) -> Batch:
    """The batch of ``rows`` on the host (pinned with ``pin``); :meth:`Batch.to` moves it."""
    width = max(len(requests.inputs[r]) for r in rows)
    pad = model.tokenizer.pad_token_id or 0
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    pos = torch.zeros((len(rows), width), dtype=torch.long)
    seg = torch.full((len(rows), width), -1, dtype=torch.long)
    for b, r in enumerate(rows):
        n = len(requests.inputs[r])
        ids[b, width - n:] = torch.tensor(requests.inputs[r])
        pos[b, width - n:] = torch.tensor(requests.positions[r])
        seg[b, width - n:] = torch.tensor(requests.segments[r])
    real = seg >= 0
    if (seg > 0).any():  # packed rows: block-causal mask, pads attend to themselves only
        causal = torch.tril(torch.ones(width, width, dtype=torch.bool))
        same = (seg[:, :, None] == seg[:, None, :]) | (seg[:, None, :] == 0)
        mask = causal & same & real[:, None, :] & real[:, :, None]
        mask |= torch.eye(width, dtype=torch.bool)[None] & ~real[:, :, None]
        attn = mask[:, None]
    else:
        attn = real.long()
    reqs = [j for r in rows.tolist() for j in req_of_row[r]]
    b_of = {r: b for b, r in enumerate(rows.tolist())}
    flat_rows, flat_pos, flat_tgt, flat_req = [], [], [], []
    for k, j in enumerate(reqs):
        r = requests.input_index[j]
        offset = width - len(requests.inputs[r])
        flat_rows += [b_of[r]] * len(requests.targets[j])
        flat_pos += [offset + t for t in requests.targets[j]]
        flat_tgt += list(requests.continuations[j])
        flat_req += [k] * len(requests.targets[j])
    host = lambda t: t.pin_memory() if pin else t  # noqa: E731
    as_long = lambda x: host(torch.tensor(x, dtype=torch.long))  # noqa: E731
    return Batch(rows, {"input_ids": host(ids), "attention_mask": host(attn), "position_ids": host(pos)}, host(real),
                 reqs, as_long(flat_rows), as_long(flat_pos), as_long(flat_tgt), as_long(flat_req), int(real.sum()))


def request_logprobs(model: LoadedModel, batch: Batch, requests: MCRequests, logits: torch.Tensor) -> torch.Tensor:
    """Summed continuation log-probability of each request of a batch, shape (len(batch.requests),).

    ``logits`` are the model's logits at the batch's scored positions, shape (P, V)
    (:func:`model_logits`): :math:`\\log p(y_p) = z_{p, y_p} - \\operatorname{logsumexp}_v z_{p, v}`,
    summed over each request's positions.
    """
    z = logits.float()
    lp = z.gather(-1, batch.flat_targets[:, None]).squeeze(-1) - torch.logsumexp(z, dim=-1)
    return torch.zeros(len(batch.requests), dtype=lp.dtype, device=lp.device).index_add(0, batch.flat_requests, lp)


# Causal-LM families whose logits are exactly ``output_logits(base_model(...).last_hidden_state)``
# (their head, plus Gemma's optional final soft-capping), checked in tests/test_scoring.py; the head
# is then applied to the scored positions only. Other models use their own forward.
PLAIN_HEADS = {"llama", "qwen2", "gemma3_text", "gpt2", "gpt_neox", "opt"}


def output_logits(model: LoadedModel, hidden: torch.Tensor) -> torch.Tensor:
    """The output head applied to final hidden states (..., d) -> (..., V), as the causal-LM
    forward applies it, including Gemma-style final soft-capping when the config sets it."""
    hf = model.model
    logits = hf.get_output_embeddings()(hidden)
    cap = getattr(hf.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return logits


def model_logits(model: LoadedModel, batch: Batch) -> torch.Tensor:
    """Logits at the batch's scored positions, shape (P, V).

    For the architectures of :data:`PLAIN_HEADS` the body runs once and the head only at the
    P scored positions; any other causal LM runs its own forward (with ``logits_to_keep`` when
    it has it) and the positions are picked from its logits, so its own logit processing applies.
    """
    hf = model.model
    if hf.config.model_type in PLAIN_HEADS:
        hidden = hf.base_model(**batch.kwargs, use_cache=False).last_hidden_state
        return output_logits(model, hidden[batch.flat_rows, batch.flat_positions])
    width = batch.kwargs["input_ids"].shape[1]
    keep = width - int(batch.flat_positions.min())
    kw = {"logits_to_keep": keep} if _supports_keep(model) else {}
    logits = hf(**batch.kwargs, use_cache=False, **kw).logits[:, -keep:]
    return logits[batch.flat_rows, batch.flat_positions - (width - keep)]


def _supports_keep(model: LoadedModel) -> bool:
    return "logits_to_keep" in inspect.signature(model.model.forward).parameters


def forward_batches(model: LoadedModel, requests: MCRequests, *, batch_size: int = 32,
                    progress: bool | None = None, max_batch_tokens: int | None = None):
    """Yield ``(batch, run)`` per length-sorted batch; ``run()`` returns ``(request indices, lls)``,
    the log-likelihoods a float32 tensor on the model's device (read it with one host copy per
    batch, e.g. :class:`lrd.engine.pipeline.HostCopy`, not one per call).

    Batches hold at most ``batch_size`` rows and ``max_batch_tokens`` padded tokens (default:
    :func:`lrd.engine.extract.batch_token_limit`, 512 on CPU, where it makes removal sweeps about
    30% faster; on a CUDA device what half its free memory holds). On an accelerator the next
    batch is encoded in a background thread (:func:`lrd.engine.pipeline.prefetch`), into pinned
    memory on CUDA; on the CPU inline.

    ``run()`` does the forward pass under whatever block list is installed when it is called;
    callers that patch the model between calls (the resumed ablation sweep) call it again.
    """
    model.require_lm_head("multiple-choice scores are the head's log-likelihoods")
    progress = sys.stderr.isatty() if progress is None else progress
    req_of_row: dict[int, list[int]] = {}
    for j, r in enumerate(requests.input_index.tolist()):
        req_of_row.setdefault(r, []).append(j)
    budget = batch_token_limit(model, max_batch_tokens)
    batches = batches_by_length([len(x) for x in requests.inputs], batch_size, budget)
    pin = torch.device(model.device).type == "cuda"
    encoded = (_encode_batch(model, requests, rows, req_of_row, pin=pin) for rows in batches)
    with closing(prefetch(encoded, background=on_accelerator(model.device))) as feed:
        for batch in tqdm(feed, total=len(batches), disable=not progress, desc=f"score {model.name}", unit="batch"):
            batch = batch.to(model.device)

            def run(batch=batch) -> tuple[list[int], torch.Tensor]:
                return batch.requests, request_logprobs(model, batch, requests, model_logits(model, batch)).detach()

            yield batch, run


@torch.inference_mode()
def loglikelihoods(model: LoadedModel, requests: MCRequests, *, batch_size: int = 32,
                   progress: bool | None = None) -> np.ndarray:
    """Log-likelihood (nats) of every request's continuation; shape (n_requests,)."""
    out = np.full(len(requests.item), np.nan)
    pending = None  # the previous batch's result, on its way to the host while this one runs
    with closing(forward_batches(model, requests, batch_size=batch_size, progress=progress)) as feed:
        for _, run in feed:
            reqs, ll = run()
            if pending is not None:
                out[pending[0]] = pending[1].result()
            pending = reqs, HostCopy(ll)
    if pending is not None:
        out[pending[0]] = pending[1].result()
    if not np.isfinite(out).all():
        raise FloatingPointError(f"{model.name} produced non-finite log-likelihoods")
    return perturb(out, tag="loglikelihoods")  # unchanged unless LRD_PERTURB is set (lrd.engine.perturb)


def _predictions(lls: np.ndarray, requests: MCRequests) -> dict[str, np.ndarray]:
    """The choice each metric picks per item (``acc``: highest log-likelihood; ``acc_norm``: per
    character); arrays of shape (..., n_items). Ties go to the first choice."""
    lls = np.asarray(lls, dtype=float)
    if lls.shape[-1] != len(requests.item):
        raise ValueError(f"lls has {lls.shape[-1]} requests, the task {len(requests.item)}")
    starts, sizes = _item_choices(requests)
    out = {}
    for name, score in (("acc", lls), ("acc_norm", lls / requests.completion_len)):
        if (sizes == sizes[0]).all():  # the usual case: fixed number of choices, vectorised
            out[name] = score.reshape(*score.shape[:-1], len(starts), sizes[0]).argmax(-1)
        else:
            out[name] = np.stack([score[..., s:s + n].argmax(-1) for s, n in zip(starts, sizes)], axis=-1)
    return out


def _item_choices(requests: MCRequests) -> tuple[np.ndarray, np.ndarray]:
    """First request and number of choices of every item."""
    starts = np.flatnonzero(np.r_[True, np.diff(requests.item) != 0])
    return starts, np.diff(np.r_[starts, len(requests.item)])


def mc_accuracy(lls: np.ndarray, requests: MCRequests) -> dict[str, np.ndarray]:
    """Per-item ``acc`` and ``acc_norm`` (0/1 arrays of shape (..., n_items)).

    ``lls`` may carry leading axes (e.g. one row per removed layer). Ties go to the first
    choice, as ``numpy.argmax`` does in the harness.
    """
    return {name: (pred == requests.labels).astype(float) for name, pred in _predictions(lls, requests).items()}


def permuted_gold_accuracy(lls: np.ndarray, requests: MCRequests, *, metric: str = "acc", n_permutations: int = 1000,
                           seed: int = 0) -> np.ndarray:
    r"""Measured chance: the accuracy of the same predictions when each item's gold answer is
    drawn uniformly among its choices, ``n_permutations`` times.

    The label-permutation null of a multiple-choice scorer on these items, from the same
    log-likelihoods: the predictions are fixed and only which choice counts as gold is
    shuffled within each item. Its mean is :math:`rac1n\sum_i 1/k_i` (:math:`k_i` choices);
    its spread is what a model that ignores the answers scores on this many items, so the
    one-sided p-value of an accuracy :math:`a` is :math:`(1 + \#\{	ext{null} \ge a\})/(1 + N)`.

    Parameters
    ----------
    lls : ndarray of shape (n_requests,)
        Log-likelihoods of one model's run (e.g. the intact model).
    requests : MCRequests
    metric : {"acc", "acc_norm"}
    n_permutations : int
    seed : int

    Returns
    -------
    ndarray of shape (n_permutations,)
    """
    lls = np.asarray(lls, dtype=float)
    if lls.ndim != 1:
        raise ValueError(f"lls must be one run, shape (n_requests,), got {lls.shape}")
    if metric not in ("acc", "acc_norm"):
        raise ValueError(f"metric must be 'acc' or 'acc_norm', got {metric!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    pred = _predictions(lls, requests)[metric]
    _, sizes = _item_choices(requests)
    gold = np.floor(np.random.default_rng(seed).random((n_permutations, len(sizes))) * sizes).astype(int)
    return (gold == pred).mean(1)


