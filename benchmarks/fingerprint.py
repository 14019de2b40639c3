"""What hashing a model's files costs: the fingerprint of an offline pack, cold and warm.

    python benchmarks/fingerprint.py                 # every built model pack
    python benchmarks/fingerprint.py qwen --warm 5

The fingerprint (:func:`lrd.engine.models.source_fingerprint`) hashes every file of the
model's folder in full, once per version of each file (:func:`lrd.engine.store.content_sha256`
remembers the hash by the file's identity in ``$LRD_HOME/hashes``). "Cold" is the first call
with an empty memo: every byte read and hashed (the pack's verification against its manifest
included); the operating system's page cache is whatever it is (a pack just built or used is
in it; a pack read from a cold disk adds the disk's read time). "Warm" is a later call, as every
run after the first pays: the minimum of ``--warm`` calls, each in this process with the memo
on disk and the in-process memo cleared, as a new process finds it (a ``stat`` and a small
read per file; a second call in one process pays the ``stat`` only). Runs in a private ``$LRD_HOME`` whose
``models`` folder links to the real one; the real packs are only read.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def measure(key: str, warm: int) -> tuple[float, float, float, int]:
    """(cold seconds, warm seconds, GB hashed, files) of ``source_fingerprint(key)``."""
    import shutil

    from lrd.engine.models import completed_config_text, model_files, source_fingerprint
    from lrd.engine.packs import MODEL_PACKS
    from lrd.engine import store
    from lrd.engine.store import folder

    path = MODEL_PACKS[key].path
    completed_config_text(path)  # the config's own memo, not what is measured here
    shutil.rmtree(folder("hashes"), ignore_errors=True)
    t0 = time.perf_counter()
    cold_fp = source_fingerprint(key)
    cold = time.perf_counter() - t0
    times = []
    for _ in range(warm):
        store._KNOWN.clear()  # what a new process knows: the memo on disk only
        t0 = time.perf_counter()
        assert source_fingerprint(key) == cold_fp
        times.append(time.perf_counter() - t0)
    files = model_files(path)
    return cold, min(times), sum(f.stat().st_size for f in files) / 1e9, len(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("keys", nargs="*", help="model packs (default: every built one)")
    parser.add_argument("--warm", type=int, default=5, help="warm calls (the minimum is reported)")
    args = parser.parse_args(argv)
    real = Path(os.environ.get("LRD_HOME") or Path.home() / ".cache" / "lrd").expanduser()
    with tempfile.TemporaryDirectory(prefix="lrd-fp-bench-") as home:
        os.symlink(real / "models", Path(home) / "models")
        os.environ["LRD_HOME"] = home
        from lrd.engine.packs import MANIFEST, MODEL_PACKS

        keys = args.keys or [k for k, p in MODEL_PACKS.items() if (p.path / MANIFEST).is_file()]
        print(f"{'pack':<8} {'files':>5} {'GB':>6} {'cold s':>7} {'GB/s':>6} {'warm ms':>8}")
        for key in keys:
            cold, warm, gb, n = measure(key, args.warm)
            print(f"{key:<8} {n:>5} {gb:>6.2f} {cold:>7.2f} {gb / cold:>6.2f} {warm * 1e3:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
