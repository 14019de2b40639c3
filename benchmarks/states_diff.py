"""How far the hidden states of two runs differ: the same state cache entries in two ``LRD_HOME``s.

A state entry's key holds the model, the texts, the options and the code, not the CPU's kernel, so
two runs of one chapter with separate ``LRD_HOME``s under different ``ONEDNN_MAX_CPU_ISA`` settings
(or on two machines) write entries of the same names; this prints, for each name in both, the
share of the pooled states' entries that differ and the largest difference relative to the
layer's largest magnitude (first layer, largest over layers, last layer).

    LRD_HOME=/tmp/home-a lrd run lrd_families --profile ci -p dtype bfloat16 -o /tmp/a/lrd_families.ipynb
    LRD_HOME=/tmp/home-b ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 lrd run lrd_families --profile ci -p dtype bfloat16 -o /tmp/b/lrd_families.ipynb
    python benchmarks/states_diff.py /tmp/home-a/states /tmp/home-b/states
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np


def load(path: Path) -> np.ndarray:
    """A state cache entry's array (its first line is the entry's checksum header)."""
    raw = Path(path).read_bytes()
    return np.load(io.BytesIO(raw[raw.index(b"\n") + 1:]), allow_pickle=False)


def main(argv: list[str]) -> int:
    a_dir, b_dir = Path(argv[0]), Path(argv[1])
    for p in sorted(a_dir.glob("*.npy")):
        q = b_dir / p.name
        if not q.exists():
            continue
        a, b = load(p).astype(np.float64), load(q).astype(np.float64)
        if a.shape != b.shape:
            print(f"{p.name}: shapes differ {a.shape} {b.shape}")
            continue
        d = np.abs(a - b)
        axes = tuple(range(1, a.ndim))
        rel = d.max(axis=axes) / np.maximum(np.abs(a).max(axis=axes), 1e-30)
        print(f"{p.name[:41]} {str(a.shape):15s} {(d > 0).mean():7.2%} of entries differ; largest relative: "
              f"first layer {rel[0]:.1e}, largest {rel.max():.1e} (layer {rel.argmax()}), last {rel[-1]:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
