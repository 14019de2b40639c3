"""Every verdict judged again by the current code, dumped for a field-for-field comparison.

Judges (1) every claim on an executed book's saved tables, as the chapter does (its sensitivity
under every book rule's alternative included), and (2) every claim with a null model on tables
drawn by its null, edge and power models for a few seeds. Run it on two versions of the code and
compare the two JSON files: a refactor that changes no number and no word gives identical files.

Usage::

    python benchmarks/judge_again.py RESULTS [RESULTS ...] --out records.json [--seeds 3]
    python benchmarks/judge_again.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# the checkout this script is in, not whichever one the interpreter's editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def judged(results: Path) -> dict:
    from lrd.book.glue import Glue, saved_tables

    out = {}
    for path in sorted(results.glob("*.tables")):
        chapter = path.name[: -len(".tables")]
        record = json.loads((results / f"{chapter}.json").read_text())
        sections = {v["claim"]: v.get("section") for v in record.get("verdicts", [])}
        for claim, inputs in saved_tables(results, chapter).items():
            glue = Glue(chapter, record_only=True)
            glue.judge(claim, inputs["tables"], note=inputs["note"], section=sections.get(claim), **inputs["choices"])
            out[f"{results}:{claim}"] = json.loads(json.dumps(glue.verdicts[0]))
    return out


def simulated(seeds: int) -> dict:
    from lrd.verdicts import SPECIFICATIONS, judge, simulate

    out = {}
    for claim, spec in SPECIFICATIONS.items():
        if spec.null is None:
            continue
        for model in ("null", "edge", "power"):
            for seed in range(seeds):
                try:
                    tables = simulate(claim, seed=seed, model=model)
                except ValueError as e:
                    out[f"sim:{claim}:{model}:{seed}"] = f"ValueError: {e}"
                    continue
                out[f"sim:{claim}:{model}:{seed}"] = json.loads(json.dumps(judge(claim, tables).record()))
    return out


def compare(old: dict, new: dict) -> int:
    bad = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        bad += 1
        if not isinstance(a, dict) or not isinstance(b, dict):
            print(f"{key}: {str(a)[:200]!r} != {str(b)[:200]!r}")
            continue
        for f in sorted(set(a) | set(b)):
            if a.get(f) != b.get(f):
                print(f"{key} [{f}]:\n  old {str(a.get(f))[:400]}\n  new {str(b.get(f))[:400]}")
    print(f"{len(set(old) | set(new))} verdicts compared, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="*", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--compare", nargs=2, type=Path)
    a = ap.parse_args(argv)
    if a.compare:
        return compare(*(json.loads(p.read_text()) for p in a.compare))
    records = {}
    for results in a.results:
        records.update(judged(results))
    records.update(simulated(a.seeds))
    a.out.write_text(json.dumps(records, indent=1, sort_keys=True))
    print(f"{len(records)} verdicts -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
