"""Does the CPU's kernel or the number of threads change a bfloat16 matrix product? (It does.)

One model-sized product (256 x 768 states by a 768 -> 3072 projection, fixed seed) in bfloat16 and
float32, each computed in a fresh process under every kernel setting (the CPU's own kernels;
``ONEDNN_MAX_CPU_ISA``: oneDNN's of a CPU with AVX512-BF16 but no AMX, or of an AVX2 CPU;
``MKL_ENABLE_INSTRUCTIONS`` and ``ATEN_CPU_CAPABILITY``: MKL's and PyTorch's of an AVX2 CPU) and
thread count; printed: the share of the output's entries that differ from the default process's
and the largest difference relative to the output's largest magnitude.

    python benchmarks/bf16_kernels.py
    python benchmarks/bf16_kernels.py --threads 2 32
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, torch
torch.set_num_threads(int(sys.argv[2]))
g = torch.Generator().manual_seed(0)
a = torch.randn(256, 768, generator=g); w = torch.randn(3072, 768, generator=g) / 30
torch.save({str(dt): torch.nn.functional.linear(a.to(dt), w.to(dt)).float() for dt in (torch.bfloat16, torch.float32)},
           sys.argv[1])
"""
#: Kernel settings: the default (all the CPU has); oneDNN without AMX; oneDNN at AVX2; MKL and
#: PyTorch's own kernels at AVX2 (what an AVX2 CPU runs in float32).
ISAS = ("", "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16", "ONEDNN_MAX_CPU_ISA=AVX2",
        "MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2")
KNOBS = ("ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY")


def product(path: Path, isa: str, threads: int) -> dict:
    import torch

    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env |= dict(setting.split("=") for setting in isa.split())
    subprocess.run([sys.executable, "-c", CHILD, str(path), str(threads)], env=env, check=True)
    return torch.load(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[os.cpu_count() or 1, 32])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ref = product(Path(tmp) / "ref.pt", "", args.threads[0])
        print(f"against the default kernels with {args.threads[0]} threads:")
        for threads in args.threads:
            for isa in ISAS:
                got = product(Path(tmp) / "x.pt", isa, threads)
                cells = []
                for dt, y in got.items():
                    d = (y - ref[dt]).abs()
                    cells.append(f"{dt.split('.')[-1]}: {float((d > 0).float().mean()):.4%} of entries differ, "
                                 f"largest {float(d.max() / ref[dt].abs().max()):.2e}")
                print(f"  {isa or 'default':54s} {threads:3d} threads  " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
