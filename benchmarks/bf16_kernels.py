"""Does the CPU's kernel or the number of threads change a bfloat16 matrix product? (It does.)

One model-sized product (256 x 768 states by a 768 -> 3072 projection, fixed seed) in bfloat16 and
float32, each computed in a fresh process under every oneDNN ISA setting (``ONEDNN_MAX_CPU_ISA``:
the CPU's own kernels, those of a CPU with AVX512-BF16 but no AMX, those of an AVX2 CPU) and
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
#: ``ONEDNN_MAX_CPU_ISA`` values: the default (all the CPU has), no AMX, AVX2 only.
ISAS = ("", "AVX512_CORE_BF16", "AVX2")


def product(path: Path, isa: str, threads: int) -> dict:
    import torch

    env = dict(os.environ)
    env.pop("ONEDNN_MAX_CPU_ISA", None)
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
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
                print(f"  ISA {isa or 'default':17s} {threads:3d} threads  " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
