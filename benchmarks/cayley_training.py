"""Cost of training the Cayley-Encoder: seeds vectorised with torch.vmap against one at a time,
dense adjacency products against per-edge scatter message passing, and a grid of variants x
seeds (the mapping claim's 10 mappings x 3 seeds) stacked into one vmapped run against one run
of 3 seeds per variant.

Synthetic states of a Qwen-sized model (25 states of width 896, 250 texts, 3 classes); prints
seconds per run and the ratios.

    .venv/bin/python benchmarks/cayley_training.py [--epochs 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from lrd.aggregation.encoders import make_method
from lrd.aggregation.training import Classification, TrainConfig, fit, stratified_holdout


def run(seeds, *, aggregation: str, x, y, epochs: int) -> float:
    obj = Classification(x, y)
    splits = [stratified_holdout(y.numpy()[:200], 200, 0.15, seed=s) for s in seeds]
    cfg = TrainConfig(max_epochs=epochs, patience=epochs + 1)
    start = time.perf_counter()
    fit(lambda: make_method("cayley", x.shape[2], x.shape[1], 3, aggregation=aggregation), obj,
        [t for t, _ in splits], [v for _, v in splits], seeds=seeds, config=cfg)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--variants", type=int, default=10, help="variants of the stacked grid (mappings)")
    args = parser.parse_args()
    torch.manual_seed(0)
    x, y = torch.randn(250, 25, 896), torch.randint(0, 3, (250,))
    seeds = [0, 1, 2]
    run(seeds, aggregation="dense", x=x, y=y, epochs=1)  # warm-up (first vmap trace, allocator)
    joint = run(seeds, aggregation="dense", x=x, y=y, epochs=args.epochs)
    alone = sum(run([s], aggregation="dense", x=x, y=y, epochs=args.epochs) for s in seeds)
    scatter = run(seeds, aggregation="scatter", x=x, y=y, epochs=args.epochs)
    grid = run(seeds * args.variants, aggregation="dense", x=x, y=y, epochs=args.epochs)  # every variant's members at once
    print(f"training threads {TrainConfig().threads}, {args.epochs} epochs, 3 seeds, 250 x 25 states of width 896")
    print(f"vmap over seeds, dense:   {joint:7.2f} s")
    print(f"one seed at a time, dense:{alone:7.2f} s   (vmap speed-up x{alone / joint:.2f})")
    print(f"vmap over seeds, scatter: {scatter:7.2f} s   (dense speed-up x{scatter / joint:.2f})")
    print(f"{args.variants} variants x 3 seeds in one vmapped run: {grid:7.2f} s, against {args.variants} runs of 3 seeds: "
          f"{joint * args.variants:7.2f} s   (stacking speed-up x{joint * args.variants / grid:.2f})")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
