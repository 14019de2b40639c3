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

Batched: model inputs are deduplicated (choices whose model input is identical, such as
one-token answers to the same context, share one forward row, as the harness's one-token cache
does), sorted by length, left-padded with explicit ``position_ids``, and the language-model head
is applied only to the positions that predict continuation tokens (``logits_to_keep``).

References
----------
Gao et al., lm-evaluation-harness v0.4 (``lm_eval/api/task.py``, ``lm_eval/models/huggingface.py``).
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from tqdm import tqdm

from lrd.models import LoadedModel
from lrd.tasks import Task

__all__ = ["MCRequests", "build_requests", "loglikelihoods", "mc_accuracy", "forward_batches"]


@dataclass(frozen=True)
class MCRequests:
    """A tokenised multiple-choice task.

    Attributes
    ----------
    inputs : list of list of int
        Unique model inputs ``(context + continuation)[:-1]`` (left-truncated to ``max_length``).
    input_index : ndarray of shape (n_requests,)
        Which input each request reads its log-probabilities from.
    continuations : list of list of int
        Continuation tokens of each request (they end the request's input, shifted by one).
    item : ndarray of shape (n_requests,)
        Item (question) of each request; requests of an item are consecutive, in choice order.
    choice : ndarray of shape (n_requests,)
        Choice index of each request within its item.
    labels : ndarray of shape (n_items,)
        Index of the correct choice.
    completion_len : ndarray of shape (n_requests,)
        Characters of each choice without the target delimiter (for ``acc_norm``).
    """

    inputs: list[list[int]]
    input_index: np.ndarray
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


def build_requests(model: LoadedModel, task: Task, *, max_length: int = 1024,
                   target_delimiter: str = " ") -> MCRequests:
    """Tokenise a multiple-choice task into deduplicated model inputs.

    Parameters
    ----------
    model : LoadedModel
        A decoder (its tokenizer is used).
    task : Task
        Of type ``multiple_choice`` (columns ``contexts``, ``choices``, ``label``).
    max_length : int
        Inputs longer than this keep their last ``max_length`` tokens (as the harness).
    target_delimiter : str
        Prefix of each choice that is not part of the choice text (``acc_norm`` lengths).
    """
    if task.type != "multiple_choice":
        raise ValueError(f"task {task.name!r} is {task.type!r}; multiple-choice scoring needs a multiple_choice task")
    if model.kind != "decoder":
        raise ValueError(f"{model.name} is an {model.kind}; log-likelihood scoring needs a decoder")
    unique: dict[tuple[int, ...], int] = {}
    index, conts, item, choice, clen = [], [], [], [], []
    for i, (ctxs, chs) in enumerate(zip(task.frame["contexts"], task.frame["choices"])):
        for j, (ctx, ch) in enumerate(zip(ctxs, chs)):
            c, k = _encode_pair(model.tokenizer, ctx, ch)
            if not k:
                raise ValueError(f"choice {ch!r} of item {i} of {task.name} encodes to no tokens")
            if not c:
                c = [model.tokenizer.bos_token_id or model.tokenizer.eos_token_id]
            x = tuple((c + k)[-(max_length + 1):][:-1])
            index.append(unique.setdefault(x, len(unique)))
            conts.append(k[-len(x):] if len(k) > len(x) else k)
            item.append(i)
            choice.append(j)
            clen.append(len(ch[len(target_delimiter):] if ch.startswith(target_delimiter) else ch))
    return MCRequests([list(x) for x in unique], np.asarray(index), conts, np.asarray(item), np.asarray(choice),
                      task.frame["label"].to_numpy().astype(int), np.asarray(clen, dtype=float))


def _batches(requests: MCRequests, batch_size: int) -> list[np.ndarray]:
    order = np.argsort([-len(x) for x in requests.inputs], kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def _keep(requests: MCRequests, rows: np.ndarray) -> int:
    """How many final positions of a batch carry continuation predictions."""
    need = {r: 0 for r in rows.tolist()}
    for j, r in enumerate(requests.input_index):
        if r in need:
            need[r] = max(need[r], len(requests.continuations[j]))
    return max(need.values())


def _encode_batch(model: LoadedModel, requests: MCRequests, rows: np.ndarray) -> dict:
    seqs = [requests.inputs[r] for r in rows]
    width = max(map(len, seqs))
    pad = model.tokenizer.pad_token_id or 0
    ids = torch.tensor([[pad] * (width - len(s)) + s for s in seqs], device=model.device)
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs], device=model.device)
    return {"input_ids": ids, "attention_mask": mask, "position_ids": (mask.cumsum(-1) - 1).clamp_min(0)}


def _supports_keep(model: LoadedModel) -> bool:
    return "logits_to_keep" in inspect.signature(model.model.forward).parameters


def forward_batches(model: LoadedModel, requests: MCRequests, *, batch_size: int = 32,
                    progress: bool | None = None):
    """Yield ``(rows, enc, run)`` per length-sorted batch; ``run()`` returns per-request lls.

    ``run()`` does the forward pass of the batch under whatever block list is installed when
    it is called and returns ``(request_indices, log-likelihoods)``; callers that patch the
    model between calls (the resumed ablation sweep) reuse ``enc``.
    """
    progress = sys.stderr.isatty() if progress is None else progress
    req_of_row: dict[int, list[int]] = {}
    for j, r in enumerate(requests.input_index.tolist()):
        req_of_row.setdefault(r, []).append(j)
    keep_ok = _supports_keep(model)
    for rows in tqdm(_batches(requests, batch_size), disable=not progress, desc=f"score {model.name}", unit="batch"):
        enc = _encode_batch(model, requests, rows)
        k = _keep(requests, rows)
        reqs = [j for r in rows.tolist() for j in req_of_row[r]]

        def run(enc=enc, rows=rows, k=k, reqs=reqs) -> tuple[list[int], np.ndarray]:
            kw = {"logits_to_keep": k} if keep_ok else {}
            out = model.model(**enc, use_cache=False, **kw)
            logp = torch.log_softmax(out.logits[:, -k:].float(), dim=-1)  # (B, k, V)
            pos = {r: b for b, r in enumerate(rows.tolist())}
            ll = np.empty(len(reqs))
            for n, j in enumerate(reqs):
                cont = requests.continuations[j]
                lp = logp[pos[requests.input_index[j]], k - len(cont):]
                ll[n] = lp.gather(-1, torch.tensor(cont, device=lp.device)[:, None]).sum().item()
            return reqs, ll

        yield rows, enc, run


@torch.inference_mode()
def loglikelihoods(model: LoadedModel, requests: MCRequests, *, batch_size: int = 32,
                   progress: bool | None = None) -> np.ndarray:
    """Log-likelihood (nats) of every request's continuation; shape (n_requests,)."""
    out = np.full(len(requests.item), np.nan)
    for _, _, run in forward_batches(model, requests, batch_size=batch_size, progress=progress):
        reqs, ll = run()
        out[reqs] = ll
    if not np.isfinite(out).all():
        raise FloatingPointError(f"{model.name} produced non-finite log-likelihoods")
    return out


def mc_accuracy(lls: np.ndarray, requests: MCRequests) -> dict[str, np.ndarray]:
    """Per-item ``acc`` and ``acc_norm`` (0/1 arrays of shape (..., n_items)).

    ``lls`` may carry leading axes (e.g. one row per removed layer). Ties go to the first
    choice, as ``numpy.argmax`` does in the harness.
    """
    lls = np.asarray(lls, dtype=float)
    if lls.shape[-1] != len(requests.item):
        raise ValueError(f"lls has {lls.shape[-1]} requests, the task {len(requests.item)}")
    starts = np.flatnonzero(np.r_[True, np.diff(requests.item) != 0])
    sizes = np.diff(np.r_[starts, len(requests.item)])
    out = {}
    for name, score in (("acc", lls), ("acc_norm", lls / requests.completion_len)):
        if (sizes == sizes[0]).all():  # the usual case: fixed number of choices, vectorised
            pred = score.reshape(*score.shape[:-1], len(starts), sizes[0]).argmax(-1)
        else:
            pred = np.stack([score[..., s:s + n].argmax(-1) for s, n in zip(starts, sizes)], axis=-1)
        out[name] = (pred == requests.labels).astype(float)
    return out


