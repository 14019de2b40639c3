"""Per-block removal sweep, two savings measured on one panel decoder:

1. naive (every removal from the embeddings) against resumed (each removal starts from the
   intact run's recorded input of the removed block): same numbers, fewer block evaluations;
2. the output head applied only at the scored positions (``lrd.engine.scoring.model_logits`` for the
   families of ``PLAIN_HEADS``) against the causal LM's own forward with ``logits_to_keep``
   (the head over every position from the first scored one): same numbers, a fraction of the
   head's work, which matters for large vocabularies (Gemma 3: 262k tokens).

Prints times, work and the speed-ups.

    .venv/bin/python benchmarks/ablation.py [model] [task] [n_items] [threads]
"""

from __future__ import annotations

import sys
import time
from unittest import mock

import numpy as np
import torch

import lrd
from lrd.methods.relevance import naive_removal_lls, removal_sweep
from lrd.engine.scoring import build_requests


def main(name: str = "smollm2", task: str = "copa", n: int = 8, threads: int = 0) -> None:
    if threads:
        torch.set_num_threads(threads)
    model = lrd.load_model(name)
    req = build_requests(model, lrd.load_task(task).split("test").subset(n, seed=0))
    sets = [[l] for l in range(1, model.n_layers + 1)]
    t0 = time.perf_counter()
    naive = naive_removal_lls(model, req, sets)
    t_naive = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = removal_sweep(model, req, sets)
    t_fast = time.perf_counter() - t0
    with mock.patch("lrd.engine.scoring.PLAIN_HEADS", frozenset()):  # the causal LM's own head over the window
        t0 = time.perf_counter()
        window = removal_sweep(model, req, sets)
        t_window = time.perf_counter() - t0
    diff = float(np.abs(naive - fast.lls).max())
    diff_head = float(np.abs(window.lls - fast.lls).max())
    print(f"{name} on {task}: {n} items, {len(req.item)} requests, {req.n_tokens} tokens, {model.n_layers} blocks, "
          f"{torch.get_num_threads()} threads, vocabulary {model.model.config.vocab_size}")
    print(f"naive   : {len(sets) + 1} full forwards            {t_naive:7.1f} s")
    print(f"resumed : {fast.block_forwards:.1f} full-forward equivalents {t_fast:7.1f} s")
    print(f"resumed, head over the logits_to_keep window    {t_window:7.1f} s")
    print(f"speed-up of resuming: {t_naive / t_fast:.2f}x (work ratio {(len(sets) + 1) / fast.block_forwards:.2f}x); "
          f"max |difference| of log-likelihoods {diff:.2e}")
    print(f"speed-up of the head at scored positions only: {t_window / t_fast:.2f}x; "
          f"max |difference| {diff_head:.2e}")
    if diff > 1e-3 or diff_head > 1e-3:
        raise SystemExit("the sweeps differ")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*(args[:2]), *(int(a) for a in args[2:4]))
