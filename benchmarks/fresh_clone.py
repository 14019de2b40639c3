"""What a new user meets: a fresh clone's install, fetch, cold and warm book, and tests, timed.

Clones the repository (its committed HEAD) into a new folder and runs the README's commands
there, in order, with an ``LRD_HOME`` of its own: empty by default (so ``make fetch`` builds
every pack), or holding links to the model and data packs of ``--packs-from`` (then the book
is cold in its caches but nothing is downloaded). It times each step, measures the disk the
clone and its ``LRD_HOME`` take after it, reads each chapter's time from ``lrd book``'s log,
and prints markdown tables headed by the date, commit, CPU, cores and memory: the figures of
the README's "The two commands" and of ``book/run_on_your_model.md``, pasted as printed.

    python benchmarks/fresh_clone.py                                   # every step (an hour or more on 2 cores)
    python benchmarks/fresh_clone.py --steps install,fetch             # a part (clone is always first)
    python benchmarks/fresh_clone.py --packs-from ~/.cache/lrd --steps install,fetch,book-cold,book-warm
    python benchmarks/fresh_clone.py --save                            # also keep the record (below)
    python benchmarks/fresh_clone.py --readme                          # README block from the records

``--save`` keeps the measurement as ``benchmarks/fresh_clone/<date>-<commit>.json``: the book's
performance page renders the newest figure of each step (:func:`current_figures`) and one line per
record, newest first (:func:`history_table`), and the README's "cold times" block quotes the newest
record of each step (``--readme`` writes it; a test fails when it is stale).

Every step's output goes to ``<workdir>/logs/<step>.log``. Run it on a quiet machine: times
on a shared one are inflated (the load average at the start is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Step:
    """One command of a new user's first session, run in the clone."""

    name: str
    command: tuple[str, ...]
    needs: str | None  # the step that must run before it
    what: str


#: The steps in the order a new user runs them (the README's commands).
STEPS = (
    Step("clone", ("git", "clone", "--quiet", "--no-hardlinks"), None, "a fresh clone of the committed HEAD"),
    Step("install", ("make", "install"), "clone", "venv, CPU torch, Jupyter Book 1.x, mteb, ..."),
    Step("fetch", ("make", "fetch"), "install", "the offline model and data packs into LRD_HOME"),
    Step("book-cold", ("make", "book"), "fetch", "every chapter at its defaults, empty caches, strict build"),
    Step("book-warm", ("make", "book"), "book-cold", "the same again: every unit and state cached"),
    Step("test", ("make", "test"), "fetch", "unit, integration, nbval and book tests"),
)
BY_NAME = {s.name: s for s in STEPS}
#: Where ``--save`` keeps each measurement, one JSON file per run.
RECORDS = ROOT / "benchmarks" / "fresh_clone"
README = ROOT / "README.md"
BEGIN, END = "<!-- fresh-clone:begin", "<!-- fresh-clone:end -->"


@dataclass
class Outcome:
    """What one step took: wall seconds, exit status, disk after it (bytes), chapter seconds."""

    step: Step
    seconds: float
    returncode: int
    checkout_bytes: int
    home_bytes: int
    chapters: dict[str, float] = field(default_factory=dict)


def selected_steps(spec: str) -> list[Step]:
    """The steps named in ``spec`` (comma-separated, or "all"), in run order, clone first.

    A step whose prerequisite is not selected is an error naming it: ``make fetch`` in a clone
    without ``.venv`` would install first and time both as "fetch".
    """
    names = [s.name for s in STEPS] if spec == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown step(s) {', '.join(unknown)}; steps: {', '.join(BY_NAME)} (or all)")
    chosen = {"clone", *names}
    for name in chosen:
        need = BY_NAME[name].needs
        if need and need not in chosen:
            raise ValueError(f"step {name!r} needs {need!r} before it in the same clone; add it: --steps "
                             + ",".join(s.name for s in STEPS if s.name in chosen | {need} and s.name != "clone"))
    return [s for s in STEPS if s.name in chosen]


CHAPTER_LINE = re.compile(r"^lrd book: executed (\S+) \((\d+(?:\.\d+)?) s\)", re.MULTILINE)


def chapter_seconds(log: str) -> dict[str, float]:
    """Each chapter's wall seconds from ``lrd book``'s own lines ("lrd book: executed X (12.3 s)").

    >>> chapter_seconds("lrd book: executed mid_layer (486.2 s)\\nother\\nlrd book: executed lrd_families (61.0 s)")
    {'mid_layer': 486.2, 'lrd_families': 61.0}
    """
    return {name: float(s) for name, s in CHAPTER_LINE.findall(log)}


def folder_bytes(path: Path) -> int:
    """Disk used under ``path`` (allocated blocks, as ``du``), not following symbolic links;
    a file with several hard links counts once."""
    if not path.exists():
        return 0
    seen, total = set(), 0
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            st = os.lstat(os.path.join(folder, name))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def machine() -> dict[str, str]:
    """Date (UTC), CPU model, cores, memory, GPU and OS of this machine, and its load now."""
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        info = Path("/proc/cpuinfo").read_text()
        cpu = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), cpu)
        kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
        memory = f"{kb / 2 ** 20:.0f} GB"
    except (OSError, StopIteration, ValueError):
        pass
    gpu = "no GPU"
    if shutil.which("nvidia-smi"):
        found = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip().splitlines()
        gpu = "; ".join(found) or gpu
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    now = datetime.now(timezone.utc)
    return {"date": now.strftime("%Y-%m-%d"), "time": now.strftime("%H:%M"), "cpu": cpu, "cores": str(os.cpu_count()),
            "memory": memory or "unknown", "gpu": gpu, "os": platform.platform(), "load": load}


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds:.0f} s ({seconds / 60:.1f} min)"


def report(outcomes: list[Outcome], info: dict[str, str], *, commit: str, home_note: str) -> str:
    """The markdown that the README and ``book/run_on_your_model.md`` quote."""
    lines = [f"Measured {info['date']} with `python benchmarks/fresh_clone.py` on {info['cpu']} ({info['cores']} "
             f"cores, {info['memory']} RAM, {info['gpu']}; {info['os']}), commit {commit}, {home_note}; load "
             f"average at the start {info['load']}.", "",
             "| step | command | wall time | disk after the step |", "|---|---|---|---|"]
    for o in outcomes:
        status = "" if o.returncode == 0 else f" (failed, exit {o.returncode})"
        command = "git clone" if o.step.name == "clone" else " ".join(o.step.command)
        lines.append(f"| {o.step.name}: {o.step.what} | `{command}` | {_duration(o.seconds)}{status} | "
                     f"checkout {_size(o.checkout_bytes)}, `LRD_HOME` {_size(o.home_bytes)} |")
    books = {o.step.name: o.chapters for o in outcomes if o.chapters}
    if books:
        names = list(dict.fromkeys(c for chapters in books.values() for c in chapters))
        lines += ["", "| chapter | " + " | ".join(books) + " |", "|---" * (len(books) + 1) + "|"]
        lines += [f"| `{c}` | " + " | ".join(_duration(b[c]) if c in b else "" for b in books.values()) + " |"
                  for c in names]
    done = {o.step.name: o for o in outcomes if o.returncode == 0}
    if {"install", "fetch", "book-cold"} <= set(done):
        total = sum(done[n].seconds for n in ("clone", "install", "fetch", "book-cold"))
        lines += ["", f"From `git clone` to a built book: {_duration(total)}, "
                      f"{_size(done['book-cold'].checkout_bytes + done['book-cold'].home_bytes)} of disk."]
    return "\n".join(lines)


def to_record(outcomes: list[Outcome], info: dict[str, str], *, commit: str, home_note: str) -> dict:
    """A measurement as plain data: what :func:`report` prints, kept as ``benchmarks/fresh_clone/*.json``."""
    return {"info": info, "commit": commit, "home_note": home_note,
            "outcomes": [{"step": o.step.name, "seconds": round(o.seconds, 1), "returncode": o.returncode,
                          "checkout_bytes": o.checkout_bytes, "home_bytes": o.home_bytes, "chapters": o.chapters}
                         for o in outcomes]}


def from_record(record: dict) -> tuple[list[Outcome], dict[str, str], str, str]:
    """The arguments of :func:`report` back from :func:`to_record`'s data."""
    outcomes = [Outcome(BY_NAME[o["step"]], o["seconds"], o["returncode"], o["checkout_bytes"], o["home_bytes"],
                        dict(o.get("chapters") or {})) for o in record["outcomes"]]
    return outcomes, record["info"], record["commit"], record["home_note"]


def records(folder: Path = RECORDS) -> list[dict]:
    """Every kept measurement, newest first (by date and UTC start time, older records without a
    time first on their day, then file name)."""
    found = [json.loads(p.read_text()) | {"file": p.name} for p in sorted(folder.glob("*.json"))]
    return sorted(found, key=lambda r: (r["info"]["date"], r["info"].get("time", ""), r["file"]), reverse=True)


def newest(step: str, kept: list[dict]) -> tuple[dict, dict] | None:
    """The newest record in which ``step`` succeeded, and that step's outcome."""
    for record in kept:
        for o in record["outcomes"]:
            if o["step"] == step and o["returncode"] == 0:
                return record, o
    return None


def newest_real_fetch(kept: list[dict]) -> tuple[dict, dict] | None:
    """The newest record whose ``make fetch`` succeeded and built packs into ``LRD_HOME``, and
    that outcome: linked packs (``--packs-from``) leave ``LRD_HOME`` empty, and are no measurement
    of ``make fetch``."""
    return next(((r, o) for r in kept for o in r["outcomes"]
                 if o["step"] == "fetch" and o["returncode"] == 0 and o["home_bytes"] > 0), None)


def _machine(info: dict) -> str:
    return f"{info['cpu']}, {info['cores']} cores, {info['memory']} RAM, {info['gpu']}"


def _when(record: dict) -> str:
    info = record["info"]
    return info["date"] + (f" {info['time']}" if info.get("time") else "")


def current_figures(kept: list[dict]) -> str:
    """Markdown: the newest measurement of each figure a new user meets (the cold book, the
    tests, a real fetch, the way from ``git clone`` to a built book), each with its date and
    commit, then the cold book's seconds per chapter in that record.

    >>> print(current_figures([]))
    No fresh-clone measurement is kept yet (`python benchmarks/fresh_clone.py --save`).
    """
    if not kept:
        return "No fresh-clone measurement is kept yet (`python benchmarks/fresh_clone.py --save`)."
    lines = ["| figure | wall time | measured | commit | machine |", "|---|---|---|---|---|"]
    found = {"book-cold": newest("book-cold", kept), "test": newest("test", kept), "fetch": newest_real_fetch(kept)}
    for step, what in (("book-cold", "`make book`, every chapter at its defaults, empty caches"),
                       ("test", "`make test`, after `make book` in the same clone"),
                       ("fetch", "`make fetch`, models and data downloaded and built into an empty `LRD_HOME`")):
        if found[step] is None:
            lines.append(f"| {what} | not measured yet | | | |")
            continue
        record, o = found[step]
        extra = f", {_size(o['home_bytes'])} in `LRD_HOME`" if step == "fetch" else ""
        lines.append(f"| {what} | {_duration(o['seconds'])}{extra} | {_when(record)} | {record['commit']} | "
                     f"{_machine(record['info'])} |")
    if found["book-cold"] is not None:
        record, o = found["book-cold"]
        done = {x["step"]: x for x in record["outcomes"] if x["returncode"] == 0}
        if {"clone", "install", "fetch", "book-cold"} <= set(done):
            total = sum(done[n]["seconds"] for n in ("clone", "install", "fetch", "book-cold"))
            packs = "packs built" if done["fetch"]["home_bytes"] > 0 else "packs linked, not counted in the disk"
            lines.append(f"| from `git clone` to a built book ({packs}) | "
                         f"{_duration(total)}, {_size(o['checkout_bytes'] + o['home_bytes'])} of disk | "
                         f"{_when(record)} | {record['commit']} | {_machine(record['info'])} |")
        if o.get("chapters"):
            lines += ["", f"Per chapter, in the cold book of {record['commit']} ({_when(record)}):", "",
                      "| chapter | wall time |", "|---|---|"]
            lines += [f"| `{c}` | {_duration(s)} |" for c, s in o["chapters"].items()]
    return "\n".join(lines)


def _cell(record: dict, step: str) -> str:
    o = next((x for x in record["outcomes"] if x["step"] == step), None)
    if o is None:
        return ""
    if o["returncode"] != 0:
        return f"failed (exit {o['returncode']}) after {_duration(o['seconds'])}"
    if step == "fetch":
        return (f"{_duration(o['seconds'])}, {_size(o['home_bytes'])}" if o["home_bytes"] > 0
                else f"{o['seconds']:.0f} s, packs linked")
    return _duration(o["seconds"])


def history_table(kept: list[dict]) -> str:
    """Markdown: one line per kept record, in the order of ``kept`` (:func:`records`: newest
    first): its date, commit, cold ``make book``, ``make test``, ``make fetch`` (built, with
    ``LRD_HOME``'s size, or over linked packs) and machine; a step the record did not run is empty.

    >>> print(history_table([]))
    | date | commit | `make book` (cold) | `make test` | `make fetch` | machine |
    |---|---|---|---|---|---|
    """
    lines = ["| date | commit | `make book` (cold) | `make test` | `make fetch` | machine |", "|---|---|---|---|---|---|"]
    lines += [f"| {_when(r)} | {r['commit']} | {_cell(r, 'book-cold')} | {_cell(r, 'test')} | {_cell(r, 'fetch')} | "
              f"{_machine(r['info'])} |" for r in kept]
    return "\n".join(lines)


def chapter_table(kept: list[dict]) -> str:
    """Markdown: each chapter's seconds in every record's cold ``make book``, one column per
    record that has them (newest first), one row per chapter (in the order the newest book ran
    them, then chapters only older books had); empty where a book did not run the chapter."""
    books = [(r, o) for r in kept for o in r["outcomes"] if o["step"] == "book-cold" and o.get("chapters")]
    if not books:
        return ""
    names = list(dict.fromkeys(c for _, o in books for c in o["chapters"]))
    lines = ["| chapter | " + " | ".join(f"{r['commit']} ({r['info']['date'][5:]})" for r, _ in books) + " |",
             "|---" * (len(books) + 1) + "|"]
    lines += [f"| `{c}` | " + " | ".join(f"{o['chapters'][c]:.0f}" if c in o["chapters"] else "" for _, o in books)
              + " |" for c in names]
    return "\n".join(lines)


def busy_note(info: dict, *, threshold: float = 0.5) -> str:
    """", with other work running (load average ... at the start)" where the machine's 1-minute load
    average at the start was above ``threshold``; "" otherwise or when it is unknown: a time measured
    on a busy machine is an upper bound.

    >>> busy_note({"load": "1.7, 2.5, 2.3"}), busy_note({"load": "0.0, 0.1, 0.0"}), busy_note({})
    (', with other work running (load average 1.7, 2.5, 2.3 at the start)', '', '')
    """
    try:
        first = float(str(info.get("load", "")).split(",")[0])
    except ValueError:
        return ""
    return f", with other work running (load average {info['load']} at the start)" if first > threshold else ""


def readme_block(kept: list[dict]) -> str:
    """The README's block of the two commands' cold times, from the newest records (markers included)."""
    lines = [f"{BEGIN}: generated by `python benchmarks/fresh_clone.py --readme` from benchmarks/fresh_clone/; "
             "do not edit -->"]
    for step, command, what in (("book-cold", "make book", "every chapter at its defaults, empty caches"),
                                ("test", "make test", "unit, integration, nbval and book tests")):
        found = newest(step, kept)
        if found is None:
            lines.append(f"- `{command}` ({what}): not measured yet.")
            continue
        record, o = found
        info = record["info"]
        before = [f"`{' '.join(BY_NAME[x['step']].command)}`" for x in record["outcomes"][:record["outcomes"].index(o)]
                  if x["step"] != "clone"]
        lines.append(f"- `{command}` ({what}): {_duration(o['seconds'])} in a fresh clone after "
                     f"{', '.join(before)}, measured {info['date']} at commit {record['commit']} on {info['cpu']} "
                     f"({info['cores']} cores, {info['memory']} RAM, {info['gpu']}){busy_note(info)}"
                     + ("; not measured again since" if record is not kept[0] else "") + ".")
    fetched = newest_real_fetch(kept)
    if fetched is None:  # linked packs leave LRD_HOME empty: only a real download and build counts
        lines.append("- `make fetch` (the offline models and data, downloaded and built): not measured yet.")
    else:
        record, o = fetched
        info = record["info"]
        lines.append(f"- `make fetch` (the offline models and data, downloaded and built into an empty `LRD_HOME`): "
                     f"{_duration(o['seconds'])}, {_size(o['home_bytes'])} in `LRD_HOME`, measured {info['date']} "
                     f"at commit {record['commit']} on {info['cpu']} ({info['cores']} cores, {info['memory']} RAM, "
                     f"{info['gpu']})" + ("; not measured again since" if record is not kept[0] else "") + ".")
    lines.append(END)
    return "\n".join(lines)


def write_readme(kept: list[dict], readme: Path = README) -> bool:
    """Replace the README's block with :func:`readme_block`; True when it changed."""
    text = readme.read_text()
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{readme.name} has no {BEGIN} ... {END} block")
    new = text[:start] + readme_block(kept) + text[stop + len(END):]
    readme.write_text(new)
    return new != text


def _environment(home: Path) -> dict[str, str]:
    """This process's environment with ``LRD_HOME`` set and no active virtualenv on PATH (so the
    clone's Makefile builds its own ``.venv`` from the system ``python3``)."""
    env = dict(os.environ, LRD_HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    venv = env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (venv and p.startswith(venv)) and not p.endswith(f"{os.sep}.venv{os.sep}bin"))
    return env


def run(steps: list[Step], *, repo: Path, workdir: Path, packs_from: Path | None, log=print) -> list[Outcome]:
    """Run ``steps`` in a clone of ``repo`` under ``workdir``; stops after a failing step."""
    checkout, home, logs = workdir / "lrd", workdir / "lrd_home", workdir / "logs"
    home.mkdir(parents=True, exist_ok=True)
    logs.mkdir(exist_ok=True)
    for kind in ("models", "data") if packs_from else ():
        (home / kind).symlink_to((packs_from / kind).resolve(), target_is_directory=True)
    env, outcomes = _environment(home), []
    for step in steps:
        cmd = [*step.command, str(repo), str(checkout)] if step.name == "clone" else list(step.command)
        log(f"fresh_clone: {step.name}: {' '.join(cmd)} (log: {logs / step.name}.log)")
        t0 = time.perf_counter()
        with open(logs / f"{step.name}.log", "w") as out:
            code = subprocess.run(cmd, cwd=workdir if step.name == "clone" else checkout, env=env, stdout=out,
                                  stderr=subprocess.STDOUT).returncode
        seconds = time.perf_counter() - t0
        text = (logs / f"{step.name}.log").read_text(errors="replace")
        outcomes.append(Outcome(step, seconds, code, folder_bytes(checkout), folder_bytes(home),
                                chapter_seconds(text) if step.name.startswith("book") else {}))
        log(f"fresh_clone: {step.name}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {seconds:.1f} s")
        if code != 0:
            break
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="all", help=f"comma-separated, of {', '.join(BY_NAME)} (default all)")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the repository to clone (default: this one)")
    parser.add_argument("--workdir", type=Path, help="where to clone, kept afterwards (default: a new temporary "
                                                    "folder, removed afterwards unless --keep)")
    parser.add_argument("--packs-from", type=Path, metavar="LRD_HOME",
                        help="link the model and data packs of this LRD_HOME instead of fetching them")
    parser.add_argument("--keep", action="store_true", help="keep the temporary clone and its LRD_HOME")
    parser.add_argument("--save", action="store_true", help=f"keep the measurement in {RECORDS.relative_to(ROOT)}/")
    parser.add_argument("--readme", action="store_true", help="only write the README's cold-times block from the "
                                                             "kept records, and exit")
    args = parser.parse_args(argv)
    if args.readme:
        changed = write_readme(records())
        print(f"README cold-times block {'updated' if changed else 'already up to date'}")
        return 0
    try:
        steps = selected_steps(args.steps)
    except ValueError as err:
        parser.error(str(err))
    if args.packs_from and not (args.packs_from / "models").is_dir():
        parser.error(f"--packs-from {args.packs_from}: no models/ folder there (an LRD_HOME after `lrd fetch`)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.repo, capture_output=True,
                            text=True, check=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=args.repo, capture_output=True,
                      text=True).stdout.strip():
        print(f"fresh_clone: note: {args.repo} has uncommitted changes; the clone measures commit {commit}",
              file=sys.stderr)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lrd-fresh-clone-"))
    if workdir.exists() and any(workdir.iterdir()):
        parser.error(f"--workdir {workdir} is not empty; pass a new or empty folder")
    info = machine()
    try:
        outcomes = run(steps, repo=args.repo, workdir=workdir, packs_from=args.packs_from,
                       log=lambda m: print(m, file=sys.stderr, flush=True))
    finally:
        if args.workdir is None and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    home_note = ("an `LRD_HOME` linking already fetched packs (not counted in its size), empty caches"
                 if args.packs_from else "an empty `LRD_HOME`") + ", pip's download cache as found"
    print(report(outcomes, info, commit=commit, home_note=home_note))
    if args.save:
        RECORDS.mkdir(exist_ok=True)
        path = RECORDS / f"{info['date']}-{commit}.json"
        path.write_text(json.dumps(to_record(outcomes, info, commit=commit, home_note=home_note), indent=1) + "\n")
        print(f"fresh_clone: kept {path.relative_to(ROOT)}", file=sys.stderr)
    return 0 if all(o.returncode == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
