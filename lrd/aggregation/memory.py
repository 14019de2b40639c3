"""Peak memory of message passing on token-level layer graphs (layers x tokens nodes).

The measurement runs a :class:`lrd.aggregation.encoders.GraphEncoder` with per-edge (scatter)
aggregation, forward and backward, on a synthetic input of the right shape (one sequence of
``tokens`` tokens, ``num_states`` states of width ``dim`` each): a cost of the method, so no
model is needed. On CPU the peak is read from the PyTorch profiler's allocation events
(``profile_memory=True``): every allocation and free by a torch operator, in time order; the
peak of their running sum is the most memory torch held at once above what existed before the
call. On CUDA it is ``torch.cuda.max_memory_allocated`` above the starting allocation.

References
----------
Ulanovski, Blyachman and Bechler-Speicher, arXiv:2603.22665 (efficiency of sparse Cayley
graphs against the fully connected layer graph); the ``ilge`` package's per-token aggregator.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from lrd.aggregation.encoders import GraphEncoder
from lrd.aggregation.cayley import cayley_graph, complete_graph, smallest_n


@contextlib.contextmanager
def _quiet():
    """Silence the profiler's start/stop lines, which its C++ side writes to file descriptors 1 and 2."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def peak_memory(fn: Callable[[], object], *, device: str = "cpu") -> int:
    """Peak bytes allocated by torch while ``fn()`` runs, above the allocation at its start."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - start)
    from torch.profiler import ProfilerActivity, profile

    with _quiet(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e.time_range.start, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage)
    return int(max(0, np.cumsum([m for _, m in events]).max())) if events else 0


def token_graph(graph: str, num_nodes: int) -> tuple[np.ndarray, int]:
    """Edge index and node count of the FC or Cayley graph on ``num_nodes`` layer-token nodes."""
    if graph == "fc":
        return complete_graph(num_nodes), num_nodes
    if graph == "cayley":
        g = cayley_graph(smallest_n(num_nodes))
        return g.edge_index, g.num_nodes
    raise ValueError(f"graph must be 'fc' or 'cayley', got {graph!r}")


def token_graph_memory(num_states: int, tokens: Sequence[int], *, dim: int, hidden: int = 256,
                       graphs: Sequence[str] = ("fc", "cayley"), max_edges: int = 1_000_000,
                       device: str = "cpu", seed: int = 0) -> pd.DataFrame:
    """Peak memory of one forward and backward pass of GIN message passing on token-level graphs.

    Parameters
    ----------
    num_states : int
        States per token (L + 1).
    tokens : sequence of int
        Sequence lengths T; the graph has ``num_states * T`` real nodes.
    dim, hidden : int
        Width of each state and of the encoder.
    max_edges : int
        Graphs with more directed edges are not run (their row has ``peak_bytes`` NaN): the
        fully connected graph grows as (S T)^2.

    Returns
    -------
    DataFrame with columns ``graph, tokens, nodes, edges, peak_bytes``.
    """
    rows = []
    for graph in graphs:
        for t in tokens:
            real = num_states * t
            if graph == "fc" and real * (real - 1) > max_edges:  # skip before building the edge list
                rows.append({"graph": graph, "tokens": t, "nodes": real, "edges": real * (real - 1),
                             "peak_bytes": float("nan")})
                continue
            edges, nodes = token_graph(graph, real)
            peak = float("nan")
            if edges.shape[1] <= max_edges:
                torch.manual_seed(seed)
                enc = GraphEncoder(dim, edges, nodes, np.arange(real), hidden=hidden, dropout=0.0,
                                   aggregation="scatter").to(device)
                x = torch.randn(1, real, dim, device=device)
                peak = peak_memory(lambda: enc(x).sum().backward(), device=device)
            rows.append({"graph": graph, "tokens": t, "nodes": nodes, "edges": edges.shape[1], "peak_bytes": peak})
    return pd.DataFrame(rows)
