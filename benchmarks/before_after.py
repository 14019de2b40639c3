"""Every claim's verdict in two builds of the book, side by side: what a change did to the verdicts.

    python benchmarks/before_after.py BEFORE AFTER [--out table.md]

BEFORE and AFTER are each a findings snapshot (``book/findings.json``, e.g. an old commit's, read with
``git show <commit>:book/findings.json > before.json``) or a built book's ``results`` folder (its
snapshot is made from the records, as ``python -m lrd.book.findings`` makes it). Prints a Markdown
table, one row per claim in the claims' order: the outcome, p, p against, power and per-model count
before and after, whether the book's rules decide it (robust, or the choices that flip it) and the
outcome the headline counts (after Holm's adjustment over the claims tested, and "not robust" for a
decision that a book choice changes: :func:`lrd.book.findings.headline_outcomes`). A snapshot
written before a field existed shows "-" for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lrd.book.findings import headline_outcomes, snapshot
from lrd.verdicts.claims import CLAIMS


def load(source: Path) -> dict:
    """A findings snapshot from a ``findings.json`` or from a built book's ``results`` folder."""
    if source.is_dir():
        return snapshot(source, commit="(results)", date="")
    return json.loads(source.read_text())


def _num(value, fmt: str = "{:.3g}") -> str:
    if value is None:
        return "-"
    try:
        return fmt.format(float(value))
    except (TypeError, ValueError):
        return str(value)


def _per_model(r: dict) -> str:
    pm = r.get("per_model")
    return f"{pm[0]}/{pm[1]}" if isinstance(pm, (list, tuple)) and len(pm) == 2 else "-"


def _robust(r: dict) -> str:
    if r.get("robust") is None:
        return "-"
    if r["robust"]:
        return "robust"
    flips = r.get("flips") or []
    return "flips: " + "; ".join(f"{f.get('rule')} = {f.get('value')} gives {f.get('outcome')}" for f in flips)


def _pair(a: str, b: str) -> str:
    return a if a == b else f"{a} → {b}"


def table(before: dict, after: dict) -> str:
    """The Markdown table of every claim of :data:`~lrd.verdicts.claims.CLAIMS` in the two snapshots."""
    old = {r["claim"]: r for r in before["verdicts"]}
    new = {r["claim"]: r for r in after["verdicts"]}
    head_old, head_new = headline_outcomes(before["verdicts"]), headline_outcomes(after["verdicts"])
    rows = ["| claim | outcome | p | p against | power | per model | the book's rules (after) | headline |",
            "|---|---|---|---|---|---|---|---|"]
    for c in CLAIMS:
        a, b = old.get(c, {}), new.get(c, {})
        rows.append("| " + " | ".join([
            f"`{c}`",
            _pair(a.get("outcome", "-"), b.get("outcome", "-")),
            _pair(_num(a.get("p_value")), _num(b.get("p_value"))),
            _pair(_num(a.get("p_against")), _num(b.get("p_against"))),
            _pair(_num(a.get("power"), "{:.2f}"), _num(b.get("power"), "{:.2f}")),
            _pair(_per_model(a), _per_model(b)),
            _robust(b).replace("|", "/"),
            _pair(head_old.get(c, "-"), head_new.get(c, "-")),
        ]) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="findings.json or a built book's results folder")
    ap.add_argument("after", type=Path, help="findings.json or a built book's results folder")
    ap.add_argument("--out", type=Path, help="write the table here too")
    a = ap.parse_args(argv)
    before, after = load(a.before), load(a.after)
    text = (f"Before: commit {before.get('commit', '?')} ({before.get('date', '')}); "
            f"after: commit {after.get('commit', '?')} ({after.get('date', '')}).\n\n" + table(before, after) + "\n")
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
