"""Per-block removal sweep: naive (every removal from the embeddings) against resumed (each
removal starts from the intact run's recorded input of the removed block). Same numbers,
fewer block evaluations. Prints times, work and the speed-up.

    .venv/bin/python benchmarks/ablation.py [model] [task] [n_items]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

import lrd
from lrd.relevance import naive_removal_lls, removal_sweep
from lrd.scoring import build_requests


def main(name: str = "smollm2", task: str = "copa", n: int = 8) -> None:
    torch.set_num_threads(1)  # shared CPU: one thread avoids OpenMP oversubscription
    model = lrd.load_model(name)
    req = build_requests(model, lrd.load_task(task).split("test").subset(n, seed=0))
    sets = [[l] for l in range(1, model.n_layers + 1)]
    t0 = time.perf_counter()
    naive = naive_removal_lls(model, req, sets)
    t_naive = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = removal_sweep(model, req, sets)
    t_fast = time.perf_counter() - t0
    diff = float(np.abs(naive - fast.lls).max())
    print(f"{name} on {task}: {n} items, {len(req.item)} requests, {req.n_tokens} tokens, {model.n_layers} blocks")
    print(f"naive   : {len(sets) + 1} full forwards            {t_naive:7.1f} s")
    print(f"resumed : {fast.block_forwards:.1f} full-forward equivalents {t_fast:7.1f} s")
    print(f"speed-up: {t_naive / t_fast:.2f}x (work ratio {(len(sets) + 1) / fast.block_forwards:.2f}x); "
          f"max |difference| of log-likelihoods {diff:.2e}")
    if diff > 1e-3:
        raise SystemExit("resumed sweep differs from the naive one")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*(args[:2]), *(int(a) for a in args[2:3]))
