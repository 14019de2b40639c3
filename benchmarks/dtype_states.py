"""Largest relative difference of a pooled state, bfloat16 against float32, per model and layer
(300 SST-2 texts, mean pooling): max |x_bf16 - x_fp32| / max |x_fp32| over the layer.

    python benchmarks/dtype_states.py e5small embeddinggemma qwen15
"""
import sys, numpy as np, lrd
from lrd.engine.tasks import load_task
texts = load_task("sst2", n=300).texts
for name in sys.argv[1:]:
    out = {}
    for dt in ("float32", "bfloat16"):
        m = lrd.load_model(name, dtype=dt)
        out[dt] = np.asarray(lrd.extract(m, texts, pooling="mean", cache=False), dtype=np.float64)
        del m
    a, b = out["float32"], out["bfloat16"]
    rel = np.abs(a - b).max(axis=(1, 2)) / np.abs(a).max(axis=(1, 2))
    cos = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    print(f"{name:15s} largest relative difference {rel.max():.3%} (layer {rel.argmax()}), median over layers {np.median(rel):.3%}, "
          f"smallest cosine of a text's state {cos.min():.5f}", flush=True)
