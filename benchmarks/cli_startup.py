"""How long ``lrd --help`` and ``lrd sweep all --dry-run`` take, before and after a change.

    git archive <old commit> | tar -x -C /tmp/before            # the code before, as a tree
    python benchmarks/cli_startup.py --before /tmp/before        # this tree is "after"
    python benchmarks/cli_startup.py --before /tmp/before --repeats 5

Each command runs ``--repeats`` times per tree in a fresh interpreter (with ``PYTHONPATH`` set to
the tree, so both trees use this environment's libraries and the same ``$LRD_HOME``), before
and after alternating so a change in the machine's load hits both; the minimum is reported (on
a machine shared with other work, the minimum is the least disturbed run), with the ratio
before / after. ``--dry-run`` reads the offline packs' configs and tasks; run it once first so
the file system cache is warm for both trees.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"lrd --help": ["--help"], "lrd sweep all --dry-run": ["sweep", "all", "--dry-run"]}


def run_once(tree: Path, args: list[str]) -> float:
    """Wall seconds of one ``lrd ARGS`` on the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from lrd.cli import main; sys.exit(main(sys.argv[1:]))"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tree, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"lrd {' '.join(args)} failed on {tree}:\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="source tree of the code before the change")
    parser.add_argument("--after", type=Path, default=ROOT, help="source tree of the code after (default: this one)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'command':<26} {'before (s)':>11} {'after (s)':>10} {'before / after':>15}   (minimum of {args.repeats})")
    for label, cli_args in COMMANDS.items():
        times = {"before": [], "after": []}
        for _ in range(args.repeats):
            for which in ("before", "after"):
                times[which].append(run_once(getattr(args, which), cli_args))
        before, after = min(times["before"]), min(times["after"])
        print(f"{label:<26} {before:>11.2f} {after:>10.2f} {before / after:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
