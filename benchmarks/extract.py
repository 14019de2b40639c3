"""Benchmark lrd.engine.extract against a plain forward loop over the same batches.

For every panel model: all SST-2 validation sentences (872, the whole labelled split) through
(a) a plain ``base_model(**batch)`` loop over pre-tokenised, length-sorted batches (no hidden
states requested), (b) ``lrd.engine.extract`` cold (computes, pools every layer, writes the cache), and
(c) ``lrd.engine.extract`` warm (cache hit). Prints wall times and throughput ratios.

    python benchmarks/extract.py [--models minilm qwen] [--n 872] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

import lrd
from lrd.engine.extract import batches_by_length
from lrd.engine.tasks import load_task


def plain_loop(model: lrd.LoadedModel, texts: list[str], batch_size: int) -> float:
    tok = model.tokenizer
    ids = tok(texts, truncation=True, max_length=512)["input_ids"]
    tok.padding_side = "right"
    batches = [tok.pad({"input_ids": [ids[i] for i in idx]}, return_tensors="pt")
               for idx in batches_by_length([len(x) for x in ids], batch_size)]
    t0 = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            model.model.base_model(**{k: v.to(model.device) for k, v in batch.items()})
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["minilm", "mpnet", "smollm2", "gemma3", "qwen"])
    parser.add_argument("--n", type=int, default=None, help="number of SST-2 sentences (default: all 872)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    texts = load_task("sst2", n=args.n).texts
    print(f"{len(texts)} SST-2 sentences, batch size {args.batch_size}, torch threads {torch.get_num_threads()}")
    print(f"{'model':8s} {'plain s':>8s} {'extract s':>10s} {'ratio':>6s} {'warm s':>7s} {'cold/warm':>10s}")
    for name in args.models:
        model = lrd.load_model(name, device=args.device)
        pooling = "last" if model.kind == "decoder" else "mean"
        lrd.extract(model, texts[:8], pooling=pooling, cache=False)  # warm-up
        plain = plain_loop(model, texts, args.batch_size)
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            lrd.extract(model, texts, pooling=pooling, batch_size=args.batch_size, cache=cache, progress=False)
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            lrd.extract(model, texts, pooling=pooling, batch_size=args.batch_size, cache=cache)
            warm = time.perf_counter() - t0
        print(f"{name:8s} {plain:8.2f} {cold:10.2f} {plain / cold:6.2f} {warm:7.3f} {cold / warm:9.0f}x")
        del model


if __name__ == "__main__":
    main()
