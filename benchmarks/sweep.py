"""Serial units against `lrd sweep`'s LocalCluster, and the sweep's overhead on cached units.

    python benchmarks/sweep.py                                   # lrd_families, 3 models x 4 tasks
    python benchmarks/sweep.py --chapter models_and_tasks -p models '["minilm", "smollm2"]'
    python benchmarks/sweep.py --workers 4                       # on a bigger machine

The same unit set (a chapter's units for the given parameters) is computed into a fresh,
temporary result cache four times:

1. serially in this process with torch's and BLAS's default threads (what ``lrd run`` does);
2. serially with one thread (torch and BLAS), what each sweep worker uses on this machine;
3. on a ``LocalCluster`` of ``--workers`` one-thread workers (``lrd.units.sweep.sweep``), timed with
   and without starting the cluster;
4. the sweep again on the filled cache: its overhead per cached unit (key, file check, task
   round trip), beside the serial runner's (``lrd.units.compute``) on the same cache.

Hidden states come from the shared ``$LRD_HOME/states`` cache (extract them once first, e.g.
with ``lrd run``), so this measures model loading and the per-unit metrics, not extraction.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT = {"models": ["minilm", "smollm2", "gemma3"], "tasks": ["sst2", "mrpc", "lee50", "arc_easy"]}


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    import torch
    from threadpoolctl import threadpool_limits

    from lrd.units import sweep as lrd_sweep
    from lrd.units import compute, units

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", default="lrd_families")
    parser.add_argument("-p", "--parameter", dest="parameters", nargs=2, action="append", default=[],
                        metavar=("KEY", "VALUE"), help="chapter parameter (JSON); default: 3 models x 4 tasks")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    params = {k: json.loads(v) for k, v in args.parameters} or (DEFAULT if args.chapter == "lrd_families" else {})
    todo = units(args.chapter, params)
    print(f"{args.chapter}: {len(todo)} units over {len(lrd_sweep.batches(todo))} models; params {params}")
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {k: Path(tmp) / k for k in ("serial", "serial1", "sweep")}
        _, times["serial (default threads)"] = timed(lambda: compute(todo, root=roots["serial"]))
        threads = torch.get_num_threads()
        with threadpool_limits(1):
            torch.set_num_threads(1)
            _, times["serial (1 thread)"] = timed(lambda: compute(todo, root=roots["serial1"]))
            torch.set_num_threads(threads)

        from distributed import Client

        t0 = time.perf_counter()
        cluster = lrd_sweep.local_cluster(args.workers, dashboard_address=None)
        client = Client(cluster)
        client.run(lambda: __import__("lrd.units"))  # workers import lrd before the clock starts
        startup = time.perf_counter() - t0
        try:
            out, times[f"LocalCluster, {args.workers} workers"] = timed(
                lambda: lrd_sweep.sweep(todo, client=client, root=roots["sweep"], threads=1, progress=False))
            assert all(o.status == "computed" for o in out), lrd_sweep.summary(out)
            times[f"LocalCluster, {args.workers} workers, with startup"] = times[f"LocalCluster, {args.workers} workers"] + startup
            again, cached_sweep = timed(
                lambda: lrd_sweep.sweep(todo, client=client, root=roots["sweep"], threads=1, progress=False))
            assert all(o.status == "cached" for o in again), lrd_sweep.summary(again)
        finally:
            client.close()
            cluster.close()
        _, cached_serial = timed(lambda: compute(todo, root=roots["sweep"]))
        _, keys_only = timed(lambda: [u.key() for u in todo])

    base = times["serial (default threads)"]
    print(f"\n{'mode':45s} {'seconds':>8s} {'speed-up':>9s}")
    for mode, s in times.items():
        print(f"{mode:45s} {s:8.1f} {base / s:8.2f}x")
    one = times["serial (1 thread)"]
    par = times[f"LocalCluster, {args.workers} workers"]
    print(f"\nLocalCluster against serial with one thread (same per-worker setting): {one / par:.2f}x")
    print(f"cached units: sweep {1000 * cached_sweep / len(todo):.0f} ms per unit (all {len(todo)} in "
          f"{cached_sweep:.2f} s), serial compute() {1000 * cached_serial / len(todo):.0f} ms per unit, "
          f"of which computing the key {1000 * keys_only / len(todo):.0f} ms; cluster startup {startup:.1f} s")


if __name__ == "__main__":
    main()
