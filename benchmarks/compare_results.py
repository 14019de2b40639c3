"""Are two executed books the same? Every glued value, verdict field and table cell, side by side.

A refactor that must not change behaviour is checked by building the default book cold with the
old code and with the new, then comparing the two ``results`` folders field by field:

    python benchmarks/compare_results.py OLD/book/results NEW/book/results
    python benchmarks/compare_results.py OLD/book/results NEW/book/results --rtol 1e-9

Compared: each chapter's glued values and verdicts (``results/<chapter>.json``, every field,
verdict evidence sentences included), and each table (``results/*.csv``, every cell, rows in
order). Floats are equal when ``|a - b| <= atol + rtol |b|`` (default: exactly equal); strings
exactly. Volatile entries (wall times: ``*_seconds.json``, glued names ending in ``seconds``)
are skipped. Prints one line per difference (at most ``--show`` per file) and a summary; exits 1
when anything differs, 2 when a file is missing on one side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

#: Glued names and files whose values are wall times (differ on every run).
VOLATILE_SUFFIXES = ("seconds", "_seconds.json")


def _close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b or abs(a - b) <= atol + rtol * abs(b)
    return a == b


def json_differences(old: Any, new: Any, *, path: str = "", rtol: float = 0.0,
                     atol: float = 0.0) -> Iterator[tuple[str, Any, Any]]:
    """``(path, old, new)`` for every leaf of two JSON documents that differs (a key on one side
    only counts as a difference with ``None`` on the other)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if str(key).endswith(VOLATILE_SUFFIXES):
                continue
            yield from json_differences(old.get(key), new.get(key), path=f"{path}/{key}", rtol=rtol, atol=atol)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            yield from json_differences(a, b, path=f"{path}[{i}]", rtol=rtol, atol=atol)
    elif not _close(old, new, rtol, atol):
        yield path, old, new


def table_differences(old: pd.DataFrame, new: pd.DataFrame, *, rtol: float = 0.0,
                      atol: float = 0.0) -> Iterator[tuple[str, Any, Any]]:
    """``(row/column, old, new)`` for every cell of two tables that differs; a different shape
    or column list is one difference."""
    if list(old.columns) != list(new.columns) or old.shape != new.shape:
        yield "shape", (old.shape, list(old.columns)), (new.shape, list(new.columns))
        return
    for column in old.columns:
        for i, (a, b) in enumerate(zip(old[column].tolist(), new[column].tolist())):
            if (a != a and b != b) or _close(a, b, rtol, atol):  # NaN on both sides is equal
                continue
            yield f"row {i}/{column}", a, b


def compare(old_dir: Path, new_dir: Path, *, rtol: float = 0.0, atol: float = 0.0,
            show: int = 10) -> tuple[int, int, list[str]]:
    """Compare every JSON and CSV file of two results folders: ``(differences, fields compared
    in files with differences or not, missing files)``, printing each difference."""
    names = sorted({p.name for p in old_dir.iterdir()} | {p.name for p in new_dir.iterdir()})
    names = [n for n in names if n.endswith((".json", ".csv")) and not n.endswith(VOLATILE_SUFFIXES)]
    missing, total = [], 0
    for name in names:
        a, b = old_dir / name, new_dir / name
        if not (a.is_file() and b.is_file()):
            missing.append(name)
            print(f"{name}: only in {'the old' if a.is_file() else 'the new'} folder")
            continue
        if name.endswith(".json"):
            found = list(json_differences(json.loads(a.read_text()), json.loads(b.read_text()), rtol=rtol, atol=atol))
        else:
            found = list(table_differences(pd.read_csv(a), pd.read_csv(b), rtol=rtol, atol=atol))
        total += len(found)
        print(f"{name}: {'identical' if not found else f'{len(found)} differences'}")
        for where, x, y in found[:show]:
            print(f"    {where}: {str(x)[:120]!s} -> {str(y)[:120]!s}")
        if len(found) > show:
            print(f"    ... and {len(found) - show} more")
    return total, len(names), missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="results folder of the reference build")
    parser.add_argument("new", type=Path, help="results folder of the build to check")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for floats (default 0: exact)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance for floats (default 0)")
    parser.add_argument("--show", type=int, default=10, help="differences printed per file")
    args = parser.parse_args(argv)
    for folder in (args.old, args.new):
        if not folder.is_dir():
            parser.error(f"{folder} is not a folder; give two executed books' results folders (book/results)")
    total, files, missing = compare(args.old, args.new, rtol=args.rtol, atol=args.atol, show=args.show)
    print(f"{files} files, {total} differences, {len(missing)} missing on one side")
    return 2 if missing else (1 if total else 0)


if __name__ == "__main__":
    sys.exit(main())
