"""How far a verdict's numbers move when the book is executed again elsewhere.

The same code executed on another CPU, with another precision kernel or another number of threads,
computes hidden states that differ in their last bits (bfloat16 matrix products accumulate in a
different order on AMX tiles, AVX-512 BF16 and AVX2 units), and every statistic downstream moves
with them. A *re-execution record* keeps the verdicts of one executed book (or of some chapters)
together with what was executed on: machine, oneDNN ISA setting, dtype, threads, commit, date and
library versions. Records of one *group* ran the same code and profile and differ only in the
hardware or precision; :func:`movement` tabulates, per verdict, how far each number moved between
them and whether the outcome changed. A verdict whose outcome changes between two records of a
group is **not robust to re-execution**.

Records are committed in ``benchmarks/rerun/*.json`` and rendered in the manual by the
``{lrd-reexecution}`` directive (:mod:`lrd.book.sphinxext`), so no number of that page is typed.

    # one record from an executed book's (or chapter's) results folder
    python -m lrd.book.rerun save RESULTS --name ci-amx-bf16 --group "ci, bfloat16 kernels" \\
        --isa "default (AMX)" --dtype bfloat16 --profile ci
    # per verdict, how far its numbers moved between records
    python -m lrd.book.rerun compare benchmarks/rerun/ci-amx-bf16.json benchmarks/rerun/ci-avx2-bf16.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from lrd.book.findings import KEPT, verdict_records

ROOT = Path(__file__).resolve().parents[2]
#: Where the committed re-execution records live (one JSON file each).
RECORDS = ROOT / "benchmarks" / "rerun"
#: The numbers of a verdict whose movement is tabulated (``per_model`` is compared by its count).
NUMBERS = ("p_value", "p_against", "effect", "per_model")
#: Libraries whose version can move a number (the unit cache keys on the same list).
LIBRARIES = ("torch", "transformers", "numpy", "scipy", "sklearn", "pandas", "mteb")


def number(verdict: dict, field: str) -> float | None:
    """The value of ``field`` in a verdict record as one number, or None when it has none.

    ``per_model`` (``[k, n]``: k of n models) is compared by k; a missing or non-finite value is None.

    >>> number({"per_model": [3, 8]}, "per_model"), number({"p_value": 0.5}, "p_value")
    (3.0, 0.5)
    >>> number({"effect": None}, "effect") is None, number({"effect": float("nan")}, "effect") is None
    (True, True)
    """
    value = verdict.get(field)
    if field == "per_model" and isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def spread(values: Iterable[float | None]) -> float | None:
    """Largest minus smallest of the values that exist (None when none does; 0 when one does).

    >>> spread([0.0078, 0.0156, None]), spread([None, None]) is None, spread([0.5])
    (0.0078, True, 0.0)
    """
    present = [v for v in values if v is not None]
    return max(present) - min(present) if present else None


def movement(records: list[dict]) -> list[dict]:
    """Per verdict, its outcome and numbers in every record and how far each number moved.

    Parameters
    ----------
    records
        Re-execution records (``name`` and ``verdicts``, the latter a list of verdict records with
        at least ``claim`` and ``outcome``), all of one group.

    Returns
    -------
    list of dict
        One row per claim found in any record, in the order of first appearance: ``claim``,
        ``chapter``, ``outcomes`` (record name -> outcome, None where the record has no verdict
        for the claim), ``values`` (field -> {record name -> number}), ``moved`` (field -> spread,
        for the fields of :data:`NUMBERS` any record has), ``robust`` (every record that has the
        claim gives it the same outcome, and at least two have it; None when fewer than two do)
        and ``identical`` (no number moved at all).

    >>> a = {"name": "A", "verdicts": [{"claim": "c", "outcome": "reproduced", "p_value": 0.0078}]}
    >>> b = {"name": "B", "verdicts": [{"claim": "c", "outcome": "reproduced", "p_value": 0.0156}]}
    >>> row = movement([a, b])[0]
    >>> row["moved"], row["robust"], row["identical"]
    ({'p_value': 0.0078}, True, False)
    """
    names = [r["name"] for r in records]
    by_record = [{v["claim"]: v for v in r["verdicts"]} for r in records]
    claims: list[str] = []
    for r in records:
        claims += [v["claim"] for v in r["verdicts"] if v["claim"] not in claims]
    rows = []
    for claim in claims:
        found = {n: got.get(claim) for n, got in zip(names, by_record)}
        outcomes = {n: (v or {}).get("outcome") for n, v in found.items()}
        values = {f: {n: number(v, f) if v else None for n, v in found.items()} for f in NUMBERS}
        moved = {f: spread(vals.values()) for f, vals in values.items() if spread(vals.values()) is not None}
        present = [o for o in outcomes.values() if o is not None]
        chapter = next((v.get("chapter") for v in found.values() if v), None)
        rows.append({"claim": claim, "chapter": chapter, "outcomes": outcomes, "values": values, "moved": moved,
                     "robust": len(set(present)) == 1 if len(present) >= 2 else None,
                     "identical": all(m == 0 for m in moved.values())})
    return rows


def summary(rows: list[dict]) -> dict[str, Any]:
    """Counts over :func:`movement`'s rows: ``n`` (verdicts in at least two records), ``identical``,
    ``moved`` (numbers moved, outcome kept), ``not_robust`` (claims whose outcome changed) and the
    largest move of each number (``largest``: field -> (spread, claim)).

    >>> rows = [{"claim": "a", "robust": True, "identical": True, "moved": {"p_value": 0.0}},
    ...         {"claim": "b", "robust": False, "identical": False, "moved": {"p_value": 0.3}}]
    >>> s = summary(rows); s["n"], s["identical"], s["moved"], s["not_robust"], s["largest"]["p_value"]
    (2, 1, 0, ['b'], (0.3, 'b'))
    """
    compared = [r for r in rows if r["robust"] is not None]
    largest: dict[str, tuple[float, str]] = {}
    for r in compared:
        for field, m in r["moved"].items():
            if field not in largest or m > largest[field][0]:
                largest[field] = (m, r["claim"])
    return {"n": len(compared), "identical": sum(r["identical"] for r in compared),
            "moved": sum(r["robust"] and not r["identical"] for r in compared),
            "not_robust": [r["claim"] for r in compared if not r["robust"]], "largest": largest}


def groups(records: list[dict]) -> dict[str, list[dict]]:
    """Records by their ``group`` (a name, or a list of names: a record compared in several groups),
    groups in order of first appearance, records by name within one.

    >>> g = groups([{"name": "b", "group": "x"}, {"name": "a", "group": ["x", "y"]}, {"name": "c", "group": "y"}])
    >>> [(k, [r["name"] for r in v]) for k, v in g.items()]
    [('x', ['a', 'b']), ('y', ['a', 'c'])]
    """
    out: dict[str, list[dict]] = {}
    for r in records:
        for name in [r["group"]] if isinstance(r["group"], str) else r["group"]:
            out.setdefault(name, []).append(r)
    return {k: sorted(v, key=lambda r: r["name"]) for k, v in out.items()}


def _fmt(value: float | None, field: str) -> str:
    if value is None:
        return ""
    if field == "per_model":
        return f"{value:.0f}"
    return f"{value:.3g}" if value != 0 else "0"


def _cell(row: dict, field: str, names: list[str]) -> str:
    vals = [row["values"][field][n] for n in names]
    if all(v is None for v in vals):
        return ""
    if len({v for v in vals}) == 1:
        return _fmt(vals[0], field)
    return " / ".join(_fmt(v, field) or "-" for v in vals) + f" (moved {_fmt(row['moved'][field], field)})"


def records_markdown(records: list[dict]) -> str:
    """One line per record: its name and what it was executed on (a MyST list).

    >>> print(records_markdown([{"name": "A", "machine": "Intel", "isa": "AMX", "dtype": "bfloat16",
    ...     "threads": 2, "commit": "abc", "date": "2026-12-06", "profile": "ci", "chapters": ["x"]}]))
    - **A**: Intel; kernels AMX; bfloat16, 2 threads; commit abc, 2026-12-06; ci profile (x)
    """
    lines = []
    for r in records:
        threads = f", {r['threads']} threads" if r.get("threads") else ""
        chapters = f" ({', '.join(r['chapters'])})" if r.get("chapters") else ""
        note = f". {r['note']}" if r.get("note") else ""
        lines.append(f"- **{r['name']}**: {r['machine']}; kernels {r['isa']}; {r['dtype']}{threads}; "
                     f"commit {r['commit']}, {r['date']}; {r['profile']} profile{chapters}{note}")
    return "\n".join(lines)


def movement_markdown(records: list[dict]) -> str:
    """A group's records (:func:`records_markdown`), a sentence of counts, and one table row per
    verdict whose numbers moved: each number in every record (in the order the records are listed)
    and how far it moved; a verdict whose outcome changed is marked **not robust**.

    >>> a = {"name": "A", "verdicts": [{"claim": "c", "outcome": "reproduced", "p_value": 0.01}]}
    >>> b = {"name": "B", "verdicts": [{"claim": "c", "outcome": "inconclusive", "p_value": 0.09}]}
    >>> text = movement_markdown([a | {"machine": "m", "isa": "i", "dtype": "d", "commit": "x", "date": "t",
    ...     "profile": "ci"}, b | {"machine": "m", "isa": "j", "dtype": "d", "commit": "x", "date": "t", "profile": "ci"}])
    >>> "0.01 / 0.09 (moved 0.08)" in text, "**not robust**" in text
    (True, True)
    """
    names = [r["name"] for r in records]
    rows = movement(records)
    s = summary(rows)
    fields = [f for f in NUMBERS if any(f in r["moved"] for r in rows)]
    heads = {"p_value": "p", "p_against": "p against", "effect": "effect", "per_model": "models"}
    k = len(s["not_robust"])
    not_robust = (f"{k} changed outcome and {'is' if k == 1 else 'are'} not robust to re-execution: "
                  + ", ".join(f"`{c}`" for c in s["not_robust"])) if k else "none changed outcome"
    text = [records_markdown(records), "",
            f"Of the {s['n']} verdicts in these records, {s['identical']} {'is' if s['identical'] == 1 else 'are'} "
            f"identical in every number, {s['moved']} kept {'its' if s['moved'] == 1 else 'their'} outcome with "
            f"numbers that moved, and {not_robust}."
            + (" Each number below is given in the order " + ", ".join(f"**{n}**" for n in names) + "."
               if s["n"] > s["identical"] else ""),
            ""]
    moved = [r for r in rows if r["robust"] is not None and not r["identical"]]
    if moved:
        text += ["| claim | outcome | " + " | ".join(heads[f] for f in fields) + " |",
                 "|---|---|" + "---|" * len(fields)]
        for r in moved:
            outs = [r["outcomes"][n] for n in names if r["outcomes"][n] is not None]
            outcome = outs[0] if r["robust"] else " / ".join(str(o) for o in r["outcomes"].values()) + ": **not robust**"
            text.append(f"| `{r['claim']}` | {outcome} | " + " | ".join(_cell(r, f, names) for f in fields) + " |")
    return "\n".join(text)


def rerun_markdown(records: list[dict]) -> str:
    """Every group of records, one section each (:func:`movement_markdown`), for the ``{lrd-reexecution}``
    directive."""
    text = []
    for group, members in groups(records).items():
        text += [f"**{group}**", "", movement_markdown(members), ""]
    return "\n".join(text)


def claim_reexecution(claim: str, records: list[dict], *, profile: str | None = None) -> str:
    """A few words for a verdict's fold: how far its numbers moved between recorded builds.

    For every group of :func:`groups` whose records were executed at ``profile`` (None: any) and
    of which at least two have a verdict for ``claim``: the builds compared (record names, which
    carry the machine and commit), then "identical" where no number moved, else whether the
    outcome stayed and the numbers of :data:`NUMBERS` that moved, by how much. A verdict whose
    outcome changed between two builds is not robust to re-execution, and the words say so. ""
    when no group has the claim twice. The records are of the commits they name: a claim whose
    judge changed since reads the past code's movement.

    >>> a = {"name": "A", "group": "g", "profile": "ci", "verdicts": [{"claim": "c", "outcome": "reproduced",
    ...      "p_value": 0.0078, "effect": 0.5}]}
    >>> b = {"name": "B", "group": "g", "profile": "ci", "verdicts": [{"claim": "c", "outcome": "reproduced",
    ...      "p_value": 0.0156, "effect": 0.5}]}
    >>> claim_reexecution("c", [a, b], profile="ci")
    'A against B: reproduced in both, p moved by 0.0078'
    >>> c = {**b, "name": "C", "commit": "new", "verdicts": [{"claim": "c", "outcome": "inconclusive", "p_value": 0.2}]}
    >>> claim_reexecution("c", [a, c])
    'A against C (code differs): reproduced / inconclusive, not robust to re-execution; p moved by 0.192'
    >>> claim_reexecution("c", [a, a | {"name": "A2"}]), claim_reexecution("c", [a, b], profile="default")
    ('A against A2: identical', '')
    """
    words = {"p_value": "p", "p_against": "p against", "effect": "the effect", "per_model": "the per-model count"}
    parts = []
    for members in groups([r for r in records if profile is None or r.get("profile") == profile]).values():
        rows = [r for r in movement(members) if r["claim"] == claim and r["robust"] is not None]
        if not rows:
            continue
        row = rows[0]
        names = [n for n, o in row["outcomes"].items() if o is not None]
        builds = ", ".join(names[:-1]) + f" against {names[-1]}"
        by_name = {r["name"]: r for r in members}
        commits = {by_name[n].get("commit") for n in names}
        kernels = {(by_name[n].get("isa"), by_name[n].get("dtype")) for n in names}
        what = [w for w, differs in (("other kernels", len(kernels) > 1), ("code differs", len(commits) > 1)) if differs]
        if what:
            builds += f" ({', '.join(what)})"
        if row["identical"] and row["robust"]:
            parts.append(f"{builds}: identical")
            continue
        outs = [row["outcomes"][n] for n in names]
        outcome = (f"{outs[0]} in {'both' if len(outs) == 2 else 'all'}" if row["robust"]
                   else " / ".join(outs) + ", not robust to re-execution")
        moved = [f"{words[f]} by {_fmt(row['moved'][f], f)}" for f in NUMBERS if row["moved"].get(f)]
        text = f"{builds}: {outcome}"
        if moved:
            text += (", " if row["robust"] else "; ") + moved[0].replace(" by ", " moved by ", 1)
            text += "".join(f", {m}" for m in moved[1:])
        parts.append(text)
    return "; ".join(parts)


# ---- records on disk -------------------------------------------------------------------------

def load_records(folder: Path = RECORDS) -> list[dict]:
    """Every record (``*.json``) in ``folder``, sorted by file name."""
    return [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]


def library_versions() -> dict[str, str]:
    """The installed version of each library of :data:`LIBRARIES` (missing ones left out)."""
    import importlib

    out = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.import_module(name).__version__
        except Exception:  # noqa: BLE001 - a library that is not installed is simply not recorded
            continue
    return out


def machine() -> str:
    """The CPU's model name and the bfloat16 units it has (from ``/proc/cpuinfo`` where there is one)."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    units = [f for f in ("amx_bf16", "avx512_bf16", "avx512f", "avx2") if f in flags]
    return f"{name} ({', '.join(units)}), {os.cpu_count()} cores" if units else f"{name}, {os.cpu_count()} cores"


def record(results: Path, *, name: str, group: str, isa: str, dtype: str, profile: str,
           chapters: Iterable[str] | None = None, commit: str | None = None, threads: int | None = None,
           machine_text: str | None = None, note: str = "") -> dict:
    """A re-execution record from an executed book's ``results`` folder (every chapter there, or ``chapters``).

    The machine, the library versions and (unless given) the thread count are this process's: save a
    record on the machine and in the environment that executed the book; the kernels it was limited
    to are given in ``isa``, since the executing process's environment is not this one's."""
    results = Path(results)
    verdicts = verdict_records(results, chapters)
    if commit is None:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "unknown"
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    return {"name": name, "group": group, "machine": machine_text or machine(), "isa": isa, "dtype": dtype,
            "threads": threads, "profile": profile,
            "chapters": sorted({v["chapter"] for v in verdicts}), "commit": commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "libraries": library_versions(),
            "note": note, "verdicts": [{k: v.get(k) for k in KEPT} for v in verdicts]}


def snapshot_record(snap: dict, *, name: str, group: str, machine_text: str, isa: str, dtype: str,
                    threads: int | None = None, note: str = "") -> dict:
    """A re-execution record from a findings snapshot (``book/findings.json``, :func:`lrd.book.findings.snapshot`),
    which keeps its commit, date, profile and verdicts but not what it was executed on (given here).

    >>> r = snapshot_record({"commit": "abc", "date": "2026-12-04", "profile": "default",
    ...     "verdicts": [{"claim": "c", "chapter": "x", "outcome": "reproduced"}]},
    ...     name="A", group="g", machine_text="AMD", isa="default", dtype="bfloat16")
    >>> r["commit"], r["chapters"], r["verdicts"][0]["p_value"] is None
    ('abc', ['x'], True)
    """
    verdicts = snap["verdicts"]
    return {"name": name, "group": group, "machine": machine_text, "isa": isa, "dtype": dtype, "threads": threads,
            "profile": snap["profile"], "chapters": sorted({v["chapter"] for v in verdicts}),
            "commit": snap["commit"], "date": snap["date"], "libraries": {}, "note": note,
            "verdicts": [{k: v.get(k) for k in KEPT} for v in verdicts]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lrd.book.rerun", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save", help="write a re-execution record from a results folder")
    s.add_argument("results", type=Path, help="a results folder, or a findings snapshot (book/findings.json)")
    s.add_argument("--name", required=True)
    s.add_argument("--group", required=True, help="records compared together (same code and profile)")
    s.add_argument("--isa", required=True, help="the kernels the run was limited to, in words (ONEDNN_MAX_CPU_ISA=..., "
                   "MKL_ENABLE_INSTRUCTIONS=..., ATEN_CPU_CAPABILITY=...; the record does not read them: the run's "
                   "environment is not this one's)")
    s.add_argument("--dtype", required=True)
    s.add_argument("--profile", help="the profile the results were executed at (a snapshot names its own)")
    s.add_argument("--commit")
    s.add_argument("--machine", help="the machine, in words (default: this one's CPU)")
    s.add_argument("--threads", type=int, help="threads the run used (default: this process's torch threads)")
    s.add_argument("--note", default="")
    s.add_argument("--chapters", nargs="+", help="only these chapters of the results folder")
    s.add_argument("--out", type=Path, default=RECORDS)
    c = sub.add_parser("compare", help="per verdict, how far its numbers moved between records")
    c.add_argument("records", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "save":
        if args.results.is_file():
            rec = snapshot_record(json.loads(args.results.read_text()), name=args.name, group=args.group,
                                  machine_text=args.machine or "unknown", isa=args.isa, dtype=args.dtype,
                                  threads=args.threads, note=args.note)
        else:
            rec = record(args.results, name=args.name, group=args.group, isa=args.isa, dtype=args.dtype,
                         profile=args.profile, commit=args.commit, threads=args.threads, machine_text=args.machine,
                         note=args.note, chapters=args.chapters)
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"{args.name}.json"
        path.write_text(json.dumps(rec, indent=1, sort_keys=False) + "\n")
        print(f"wrote {path} ({len(rec['verdicts'])} verdicts)")
        return 0
    records = [json.loads(p.read_text()) for p in args.records]
    print(movement_markdown(records))
    return 1 if summary(movement(records))["not_robust"] else 0


if __name__ == "__main__":
    sys.exit(main())
