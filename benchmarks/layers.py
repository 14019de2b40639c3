"""Per-layer evaluation from ONE extraction against the paper code's way (one truncated model per layer).

The paper's code (OFSkean/information_flow) scores layer l by cutting the model after block l
and running it again, so an (L+1)-layer curve costs L+1 forward passes over the data; lrd
pools all L+1 hidden states of one pass. For decoders the truncated model applies the final
norm to its last state, so we compare against ``lrd.extract(..., final_norm=True)``.

    .venv/bin/python benchmarks/layers.py [model] [task] [n]

prints both wall times, their ratio (expected about L/2 or better) and the largest difference
between the two score curves.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

import numpy as np
import torch

import lrd
from lrd.engine.models import ARCHITECTURES, LoadedModel


@contextmanager
def truncated(model: LoadedModel, n_blocks: int):
    """Keep only the first ``n_blocks`` transformer blocks inside the block; restore them after."""
    parent_path, _, attr = ARCHITECTURES[model.model_type]["blocks"].rpartition(".")
    parent = model.model
    for name in parent_path.split(".") if parent_path else []:
        parent = getattr(parent, name)
    full, n_layers = getattr(parent, attr), model.n_layers
    text_cfg = getattr(model.model.config, "text_config", None) or model.model.config
    try:
        setattr(parent, attr, torch.nn.ModuleList(list(full)[:n_blocks]))
        text_cfg.num_hidden_layers = model.n_layers = n_blocks
        yield model
    finally:
        setattr(parent, attr, full)
        text_cfg.num_hidden_layers = model.n_layers = n_layers


def main(name: str = "minilm", task_name: str = "sst2", n: int = 200) -> None:
    model = lrd.load_model(name)
    task = lrd.load_task(task_name, n=n)
    norm = model.final_norm is not None
    t0 = time.perf_counter()
    ours = lrd.evaluate_layers(lrd.extract(model, task.texts, cache=False, final_norm=norm), task)
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    theirs = []
    for layer in range(1, model.n_layers + 1):
        with truncated(model, layer):
            last = lrd.extract(model, task.texts, cache=False)[-1:]
        theirs.append(lrd.evaluate_layers(last, task)[0])
    t_theirs = time.perf_counter() - t0
    diff = float(np.abs(np.asarray(theirs) - ours[1:]).max())
    print(f"{name} ({model.n_layers} blocks), {task_name}, {len(task.texts)} texts")
    print(f"one extraction, all {model.n_layers + 1} layers : {t_ours:8.1f} s")
    print(f"truncated model per layer (1..{model.n_layers})   : {t_theirs:8.1f} s")
    print(f"ratio                               : {t_theirs / t_ours:8.1f}x (L/2 = {model.n_layers / 2:.1f})")
    print(f"max |score difference| over layers  : {diff:.2e}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*args[:2], *(int(a) for a in args[2:3]))
