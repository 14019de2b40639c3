"""benchmarks/dtype_effect.py: the README's half-precision figures come from a script that compares
two executed books' results; its arithmetic on hand-made tables."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dtype_effect():
    spec = importlib.util.spec_from_file_location("dtype_effect", ROOT / "benchmarks" / "dtype_effect.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dtype_effect"] = module
    spec.loader.exec_module(module)
    return module


def _tidy(values):
    return pd.DataFrame({"model": ["a", "a", "b", "b"], "task": "t", "measurement": ["GFMI", "NRS", "GFMI", "NRS"],
                         "layer": [1, 1, 1, 1], "value": values})


def test_largest_change_per_measurement_absolute_and_relative(dtype_effect):
    out = dtype_effect.table_changes(_tidy([2.0, 0.5, -4.0, 0.25]), _tidy([2.5, 0.5, -4.1, 0.0])).set_index("measurement")
    assert out.loc["GFMI", "max |change|"] == pytest.approx(0.5)
    assert out.loc["GFMI", "relative"] == pytest.approx(0.5 / 4.0)  # over the largest |value| of the reference
    assert out.loc["NRS", "max |change|"] == pytest.approx(0.25)
    assert out.loc["NRS", "relative"] == pytest.approx(0.25 / 0.5)
    assert (out["rows"] == 2).all() and (out["unmatched"] == 0).all()


def test_rows_match_on_keys_not_on_order(dtype_effect):
    ref = _tidy([1.0, 2.0, 3.0, 4.0])
    shuffled = ref.iloc[::-1].reset_index(drop=True)
    out = dtype_effect.table_changes(ref, shuffled)
    assert (out["max |change|"] == 0).all()
    extra = pd.concat([ref, ref.iloc[:1].assign(model="c")], ignore_index=True)
    assert (dtype_effect.table_changes(ref, extra)["unmatched"] == 1).all()


def test_verdicts_that_change_their_outcome_are_counted(tmp_path, dtype_effect, capsys):
    def write(folder, outcome, p):
        folder.mkdir()
        verdict = {"key": "ch-claim", "outcome": outcome, "effect": 0.1, "p_value": p}
        (folder / "ch.json").write_text(json.dumps({"verdicts": [verdict]}))
        _tidy([1.0, 2.0, 3.0, 4.0]).to_csv(folder / "ch.csv", index=False)

    write(tmp_path / "f32", "reproduced", 0.01)
    write(tmp_path / "bf16", "inconclusive", 0.2)
    tables, verdicts = dtype_effect.compare(tmp_path / "f32", tmp_path / "bf16")
    assert verdicts["changed"].tolist() == [True]
    assert dtype_effect.main([str(tmp_path / "f32"), str(tmp_path / "bf16")]) == 0
    assert "1 of 1 verdicts changed their outcome" in capsys.readouterr().out


def test_a_choice_column_is_compared_not_matched(dtype_effect):
    ref = pd.DataFrame({"rule": ["GFMI", "GFMI", "random"], "seed": [0, 1, 0], "removed": ["[3]", "[4]", None],
                        "score": [0.5, 0.6, 0.7]})
    other = ref.assign(removed=["[3]", "[2]", None], score=[0.5, 0.5, 0.7])
    out = dtype_effect.table_changes(ref, other, ("removed",)).set_index(["measurement", "column"])
    assert out.loc[("GFMI", "removed"), "differ"] == 1  # seed 1 removes block 2, not 4
    assert out.loc[("GFMI", "score"), "max |change|"] == pytest.approx(0.1)
    assert out.loc[("GFMI", "score"), "differ"] == 1
    assert out.loc[("random", "removed"), "differ"] == 0  # missing in both: the same
    assert (out["unmatched"] == 0).all()  # rows are matched although a choice changed
    assert dtype_effect.table_changes(ref, other)["unmatched"].eq(2).all()  # as a key: unmatched
