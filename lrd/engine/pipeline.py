"""Feeding an accelerator: host work beside the forward pass, one transfer per batch.

On a GPU the forward pass is queued and runs while Python goes on, until something needs its
result on the host (``.cpu()``, ``.item()``, a Python ``if`` on a device tensor): each such
point drains the queue and leaves the GPU idle while the host tokenises, pads and launches the
next batch. The pieces here keep the host ahead of the device:

- :func:`prefetch` runs a generator (tokenising and padding the next batches) in a background
  thread; the Rust tokenizers and numpy release the GIL while they work. On the CPU it runs
  the same generator inline: there a feeding thread only competes with torch's threads.
- :func:`pad_rows` pads token-id lists into ``(input_ids, attention_mask)`` with numpy, as the
  tokenizer's ``pad`` does, in a fraction of its time (no per-row Python dicts).
- :class:`HostCopy` starts a batch's result on its way to (pinned) host memory without waiting,
  and is read one batch later, when the device has long finished it.
- :func:`accelerator_batch_tokens` sizes token-budget batches from the device's free memory.

On the CPU every piece is the identity or a plain call, so ``device="cpu"`` takes the same
code path with the same batches and the same numbers.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, Sequence, TypeVar

import numpy as np
import torch

__all__ = ["prefetch", "pad_rows", "HostCopy", "accelerator_batch_tokens", "on_accelerator"]

T = TypeVar("T")
_DONE = object()


def on_accelerator(device: str | torch.device) -> bool:
    """True for any device but the CPU."""
    return torch.device(device).type != "cpu"


def prefetch(items: Iterable[T], depth: int = 2, *, background: bool = True) -> Iterator[T]:
    """Iterate ``items`` with up to ``depth`` of them produced ahead, in a background thread.

    An exception raised while producing an item is raised here, at that item. Closing the
    returned generator early (``break``, an exception in the loop body) stops the producer
    after the item it is working on; nothing is left running.

    Parameters
    ----------
    items : iterable
        Typically a generator that tokenises and pads batches.
    depth : int
        Items held ready at most (a bounded queue: memory stays bounded).
    background : bool
        ``False`` produces each item inline, when it is asked for, in the calling thread: what
        the CPU wants (``background=on_accelerator(device)``), where a feeding thread has no
        device to overlap with and can only compete with torch's own threads (on 2 cores a
        removal sweep was no faster with it). Inline keeps the CPU path as it was before the
        thread, one thread fewer per call.
    """
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    if not background:
        return _inline(items)
    return _threaded(items, depth)


def _inline(items: Iterable[T]) -> Iterator[T]:
    yield from items  # closing this closes ``items`` too (GeneratorExit goes through ``yield from``)


def _threaded(items: Iterable[T], depth: int) -> Iterator[T]:
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
        except BaseException as err:  # handed to the consumer, raised there
            put((False, err))
            return
        put((True, _DONE))

    worker = threading.Thread(target=produce, name="lrd-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = ready.get()
            if not ok:
                raise item
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        worker.join()


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int, side: str = "right",
             pin: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-id lists padded to the longest: ``(input_ids, attention_mask)``, int64, shape (B, T).

    The same tensors as ``tokenizer.pad({"input_ids": rows}, return_tensors="pt")`` with the
    tokenizer's ``pad_token_id`` and ``padding_side`` (tested), built in numpy.

    Parameters
    ----------
    rows : sequence of sequences of int
    pad_id : int
        Written at padded positions (masked out; its value does not reach any real token).
    side : {"right", "left"}
    pin : bool
        Return page-locked (pinned) tensors, which copy to a GPU without blocking the host.
    """
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left', got {side!r}")
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    width = int(lengths.max(initial=0))
    flat = np.fromiter((t for r in rows for t in r), dtype=np.int64, count=int(lengths.sum()))
    cols = np.arange(width)
    mask = cols[None, :] < lengths[:, None] if side == "right" else cols[None, :] >= width - lengths[:, None]
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    ids[mask] = flat  # row-major: each row's tokens, in order, at its real positions
    out = torch.from_numpy(ids), torch.from_numpy(mask.astype(np.int64))
    return tuple(t.pin_memory() for t in out) if pin else out


class HostCopy:
    """A device tensor on its way to host memory; :meth:`result` waits for it.

    On an accelerator the copy goes into a pinned buffer with ``non_blocking=True`` and an
    event marks its end, so the host can queue the next batch's forward pass before reading
    this one. On the CPU the tensor is kept as it is (no copy).
    """

    def __init__(self, tensor: torch.Tensor):
        if tensor.device.type == "cpu":
            self._host, self._event = tensor, None
            return
        self._host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=tensor.device.type == "cuda")
        self._host.copy_(tensor, non_blocking=True)
        self._event = torch.cuda.Event() if tensor.device.type == "cuda" else None
        if self._event is not None:
            self._event.record()
        elif hasattr(torch, "accelerator"):  # another accelerator: wait now (no events needed)
            torch.accelerator.synchronize()

    def result(self) -> np.ndarray:
        """The tensor as a numpy array, once its copy has finished."""
        if self._event is not None:
            self._event.synchronize()
        return self._host.numpy()


def accelerator_batch_tokens(n_layers: int, hidden_size: int, intermediate_size: int | None, element_size: int,
                             device: str | torch.device, *, fraction: float = 0.5,
                             copies: int = 2) -> int | None:
    """Padded tokens per batch that fit in ``fraction`` of the device's free memory (CUDA only).

    An estimate of the memory one token of an extraction holds at the peak of its forward
    pass: every layer's hidden state (``n_layers + 1`` of ``hidden_size``; ``copies`` of them,
    for the final-norm variants and the float32 upcast of pooling), plus one block's
    temporaries (queries, keys, values, the MLP's gated intermediate):

    .. math:: b = s \\left(c (L + 1) d + 4 d + 3 d_{ff}\\right)

    with element size ``s`` (4 for float32, 2 for bfloat16). Returns
    ``fraction * free / b`` (at least 1), or ``None`` on the CPU and on accelerators whose free
    memory torch does not report (then batches are capped by ``batch_size`` alone).
    """
    device = torch.device(device)
    if device.type != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info(device)
    d_ff = intermediate_size or 4 * hidden_size
    per_token = element_size * (copies * (n_layers + 1) * hidden_size + 4 * hidden_size + 3 * d_ff)
    return max(1, int(fraction * free // per_token))
