"""What a model's precision changes in the book: two executed books' results, side by side.

Each chapter writes its per-layer table (``results/<chapter>.csv``) and its glued values and
verdicts (``results/<chapter>.json``) beside the executed notebook. Given the ``results``
folders of two runs of the same code with different ``-p dtype`` (the reference float32),
this prints, per chapter and measurement, the largest change of a per-layer value (absolute,
and relative to the largest magnitude of that measurement in the reference), and every
verdict whose outcome or p-value moved.

    for ch in models_and_tasks lrd_families mid_layer cosine_vs_ablation selection_and_pruning \\
              cayley_aggregation; do
        lrd run $ch -p dtype bfloat16 -o /tmp/bf16/$ch.ipynb
    done
    python benchmarks/dtype_effect.py book/results /tmp/bf16/results
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: Columns that hold measured numbers in the chapters' tables; every other column is a key.
VALUE_COLUMNS = {"value", "score", "epochs", "rank r", "d_0L", "mean velocity", "mean curvature", "mean NRS",
                 "mean NRS (adjusted)", "mean GFMI", "mean dataset entropy", "last-layer score", "change",
                 "intact"}
#: Columns of a table that hold a choice made from measured numbers (the blocks a prune rule
#: removes, the layer the ``best`` baseline picks): compared as values (how many rows chose
#: differently), not used to match rows.
CHOICE_COLUMNS = {"selection_and_pruning_changes": ("removed",), "cayley_aggregation": ("layer",)}
#: Columns that name what a value measures (one row of the printed table per distinct value).
MEASURE_COLUMNS = ("measurement", "method", "rule")


def table_changes(reference: pd.DataFrame, other: pd.DataFrame, choices: tuple[str, ...] = ()) -> pd.DataFrame:
    """Largest change of each measured column, per measurement, between two tidy tables.

    Rows are matched on every column that is neither a value nor one of ``choices``. Returns one row per
    (measurement, column) with ``rows`` (matched), ``unmatched`` (rows in either table only),
    ``differ`` (matched rows whose value or choice differs), ``max |change|`` and ``relative``
    (that change over the largest ``|value|`` of the measurement in the reference).
    """
    values = [c for c in reference.columns if (c in VALUE_COLUMNS or c in choices) and c in other.columns]
    keys = [c for c in reference.columns if c not in VALUE_COLUMNS and c not in choices and c in other.columns]
    ref = reference.assign(_n=reference.groupby(keys, dropna=False).cumcount())  # repeated keys: in order
    oth = other.assign(_n=other.groupby(keys, dropna=False).cumcount())
    both = ref.merge(oth, on=keys + ["_n"], how="outer", suffixes=("", " (other)"), indicator=True)
    matched = both[both["_merge"] == "both"]
    unmatched = int((both["_merge"] != "both").sum())
    measure = next((c for c in MEASURE_COLUMNS if c in keys), None)
    groups = matched.groupby(measure, dropna=False) if measure else [("all", matched)]
    rows = []
    for name, part in groups:
        for col in values:
            if col in choices:
                x, y = part[col], part[f"{col} (other)"]
                differ = int((~((x == y) | (x.isna() & y.isna()))).sum())  # both missing: the same choice
                rows.append({"measurement": name, "column": col, "rows": len(part), "unmatched": unmatched,
                             "differ": differ, "max |change|": float("nan"), "relative": float("nan")})
                continue
            a = pd.to_numeric(part[col], errors="coerce").to_numpy(dtype=float)
            b = pd.to_numeric(part[f"{col} (other)"], errors="coerce").to_numpy(dtype=float)
            ok = np.isfinite(a) & np.isfinite(b)
            if not ok.any():
                continue
            change = np.abs(a[ok] - b[ok])
            scale = np.abs(a[ok]).max()
            rows.append({"measurement": name, "column": col, "rows": int(ok.sum()), "unmatched": unmatched,
                         "differ": int((change > 0).sum()), "max |change|": float(change.max()),
                         "relative": float(change.max() / scale) if scale > 0 else float("nan")})
    return pd.DataFrame(rows)


def verdict_changes(reference: dict, other: dict) -> pd.DataFrame:
    """Every verdict of a chapter's results JSON with its outcome, effect and p-value in both runs."""
    ref = {v["key"]: v for v in reference.get("verdicts", [])}
    oth = {v["key"]: v for v in other.get("verdicts", [])}
    rows = []
    for key in dict.fromkeys([*ref, *oth]):
        a, b = ref.get(key, {}), oth.get(key, {})
        rows.append({"verdict": key, "outcome": a.get("outcome"), "outcome (other)": b.get("outcome"),
                     "effect": a.get("effect"), "effect (other)": b.get("effect"),
                     "p": a.get("p_value"), "p (other)": b.get("p_value"),
                     "changed": a.get("outcome") != b.get("outcome")})
    return pd.DataFrame(rows)


def compare(reference: Path, other: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both comparisons for every chapter found in both folders."""
    tables, verdicts = [], []
    for csv in sorted(reference.glob("*.csv")):
        if (other / csv.name).exists():
            t = table_changes(pd.read_csv(csv), pd.read_csv(other / csv.name), CHOICE_COLUMNS.get(csv.stem, ()))
            tables.append(t.assign(table=csv.stem))
    for js in sorted(reference.glob("*.json")):
        if (other / js.name).exists():
            a, b = json.loads(js.read_text()), json.loads((other / js.name).read_text())
            if "verdicts" in a or "verdicts" in b:
                verdicts.append(verdict_changes(a, b).assign(chapter=js.stem))
    cat = lambda parts: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()  # noqa: E731
    return cat(tables), cat(verdicts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path, help="results folder of the float32 run (e.g. book/results)")
    parser.add_argument("other", type=Path, help="results folder of the run in another dtype")
    args = parser.parse_args(argv)
    for folder in (args.reference, args.other):
        if not folder.is_dir():
            parser.error(f"{folder} is not a folder; pass the results/ folder beside the executed notebooks")
    tables, verdicts = compare(args.reference, args.other)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print("## per-layer values: largest change per measurement")
    cols = ["table", "measurement", "column", "rows", "unmatched", "differ", "max |change|", "relative"]
    print(tables[cols].to_string(index=False, float_format=lambda x: f"{x:.3g}") if len(tables) else "(none)")
    if len(tables):
        print("\n## per table: the measurement that moved most (relative to its largest reference value)")
        top = tables.loc[tables.groupby("table")["relative"].idxmax(), ["table", "measurement", "column",
                                                                       "max |change|", "relative"]]
        print(top.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    print("\n## verdicts")
    cols = ["chapter", "verdict", "outcome", "outcome (other)", "effect", "effect (other)", "p", "p (other)"]
    print(verdicts[cols].to_string(index=False) if len(verdicts) else "(none)")
    changed = verdicts[verdicts["changed"]] if len(verdicts) else verdicts
    print(f"\n{len(changed)} of {len(verdicts)} verdicts changed their outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main())
