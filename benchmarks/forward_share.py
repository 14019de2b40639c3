"""What share of the book's time is spent inside the models' forward passes (the floor).

Reads a py-spy raw profile of a book run, recorded with the sub-processes (every chapter's
kernel, the Dask workers):

    lrd book &                                   # or `make book`
    py-spy record --pid $(pgrep -f "lrd book") --subprocesses --format raw -r 10 -o book.prof
    python benchmarks/forward_share.py book.prof --rate 10

Per process, its busy seconds (samples of threads that were running, / rate) and the seconds
whose stack holds a frame of ``transformers/models/`` (the model's own code: extraction, removal
sweeps, scoring), for the main thread and for worker threads (Dask's training workers).
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("--rate", type=float, default=10.0, help="py-spy's sampling rate (-r)")
    args = parser.parse_args()
    busy, forward, command = defaultdict(float), defaultdict(float), {}
    for line in open(args.profile):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        pid, cmd = re.findall(r'process (\d+):"([^"]*)"', stack)[-1]
        command[pid] = cmd
        thread = "workers" if "Thread._bootstrap" in stack else "main"
        if thread == "workers" and "distributed/threadpoolexecutor" not in stack:
            continue  # the kernel's messaging threads (heartbeat, iostream) wait, they do not compute
        busy[pid, thread] += int(count) / args.rate
        if "transformers/models/" in stack:
            forward[pid, thread] += int(count) / args.rate
    print(f"{'pid':>7} {'thread':8s} {'busy s':>8s} {'forward s':>9s} {'share':>6s}  command")
    for key in sorted(busy, key=lambda k: int(k[0])):
        if busy[key] >= 1:
            print(f"{key[0]:>7} {key[1]:8s} {busy[key]:8.0f} {forward[key]:9.0f} {forward[key] / busy[key]:6.0%}  "
                  f"{command[key[0]][-60:]}")
    total, fwd = sum(busy.values()), sum(forward.values())
    print(f"all: busy {total:.0f} s, inside forward passes {fwd:.0f} s ({fwd / total:.0%})")


if __name__ == "__main__":
    main()
