"""Batches capped by padded tokens against plain batches of ``batch_size`` on CPU.

``lrd.engine.extract`` (and the multiple-choice sweeps) cap a batch at ``max_batch_tokens`` padded
tokens on CPU (``lrd.engine.extract.CPU_BATCH_TOKENS``): long texts go in small batches. This prints
the wall time of extracting the same texts with several caps and the ratio to no cap, for a
task of long, unevenly long texts (MMLU questions) and one of short ones (sarcasm headlines).

    python benchmarks/batch_tokens.py [--models qwen smollm2] [--n 160]
"""

from __future__ import annotations

import argparse
import time

import lrd

CAPS = [100_000, 2048, 1024, 512, 256]  # 100k = effectively no cap at batch size 32 and 512 tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["qwen", "smollm2", "mpnet"])
    parser.add_argument("--tasks", nargs="+", default=["mmlu_subject", "sarcasm"])
    parser.add_argument("--n", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    for name in args.models:
        model = lrd.load_model(name)
        for task in args.tasks:
            texts = lrd.load_task(task, n=300).texts[:args.n]
            times = {}
            for cap in CAPS:
                t0 = time.perf_counter()
                lrd.extract(model, texts, batch_size=args.batch_size, max_batch_tokens=cap, cache=False, progress=False)
                times[cap] = time.perf_counter() - t0
            base = times[CAPS[0]]
            print(f"{name:8s} {task:13s} " + "  ".join(
                f"{'none' if cap == CAPS[0] else cap}: {t:5.1f} s ({base / t:.2f}x)" for cap, t in times.items()), flush=True)
        del model


if __name__ == "__main__":
    main()
