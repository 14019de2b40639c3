"""benchmarks/compare_results.py: "behaviour unchanged" is checked field by field on two
executed books' results folders; its verdicts on hand-made folders."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compare_results():
    spec = importlib.util.spec_from_file_location("compare_results", ROOT / "benchmarks" / "compare_results.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_results"] = module
    spec.loader.exec_module(module)
    return module


def _folder(path: Path, *, p_value=0.0312, score=0.5, seconds=12.0, evidence="p = 0.031") -> Path:
    path.mkdir()
    glued = {"ch-verdict": {"claim": "x.y", "outcome": "inconclusive", "p_value": p_value, "evidence": evidence,
                            "per_model": [{"model": "a", "p": 0.5}]},
             "ch-n_models": 8, "ch-train_seconds": seconds}
    (path / "ch.json").write_text(json.dumps(glued))
    (path / "ch_seconds.json").write_text(json.dumps({"train": seconds}))
    pd.DataFrame({"model": ["a", "b"], "value": [score, float("nan")]}).to_csv(path / "ch.csv", index=False)
    return path


def test_identical_folders_have_no_difference_and_wall_times_are_ignored(compare_results, tmp_path):
    old, new = _folder(tmp_path / "old"), _folder(tmp_path / "new", seconds=99.0)
    assert compare_results.main([str(old), str(new)]) == 0


@pytest.mark.parametrize("change", [{"p_value": 0.0313}, {"score": 0.5000001}, {"evidence": "p = 0.032"}])
def test_any_changed_field_or_cell_is_a_difference(compare_results, tmp_path, change, capsys):
    old, new = _folder(tmp_path / "old"), _folder(tmp_path / "new", **change)
    assert compare_results.main([str(old), str(new)]) == 1
    assert "1 differences" in capsys.readouterr().out


def test_a_tolerance_admits_float_noise_but_not_words(compare_results, tmp_path):
    old, new = _folder(tmp_path / "old"), _folder(tmp_path / "new", score=0.5 * (1 + 1e-12))
    assert compare_results.main([str(old), str(new), "--rtol", "1e-9"]) == 0
    words = _folder(tmp_path / "words", evidence="p = 0.032")
    assert compare_results.main([str(old), str(words), "--rtol", "1e-9"]) == 1


def test_a_file_on_one_side_only_is_reported(compare_results, tmp_path, capsys):
    old, new = _folder(tmp_path / "old"), _folder(tmp_path / "new")
    (new / "ch.csv").unlink()
    assert compare_results.main([str(old), str(new)]) == 2
    assert "ch.csv: only in the old folder" in capsys.readouterr().out
