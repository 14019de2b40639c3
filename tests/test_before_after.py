"""benchmarks/before_after.py: every claim's verdict in two findings snapshots, side by side."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from lrd.verdicts.claims import CLAIMS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def before_after():
    spec = importlib.util.spec_from_file_location("before_after", ROOT / "benchmarks" / "before_after.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["before_after"] = module
    spec.loader.exec_module(module)
    return module


def _snapshot(**gain) -> dict:
    record = {"claim": "skean.gain", "paper": "skean2025layer", "kind": "test", "label": "gain", "outcome": "inconclusive",
              "p_value": 0.3, "p_min": 0.004, "p_against": 0.5, "power": 0.4, "per_model": [2, 8], **gain}
    return {"commit": "c", "date": "d", "verdicts": [record]}


def test_a_row_per_claim_and_arrows_only_where_a_number_moved(before_after, tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_snapshot()))
    new = _snapshot(outcome="contradicted", p_against=0.01, robust=False,
                    flips=[{"rule": "scope", "value": "decoders", "outcome": "not testable"}])
    text = before_after.table(before_after.load(old), new)
    rows = text.splitlines()[2:]
    assert len(rows) == len(CLAIMS)
    gain = next(r for r in rows if r.startswith("| `skean.gain`"))
    assert "inconclusive → contradicted" in gain and "0.5 → 0.01" in gain and "| 0.3 |" in gain
    assert "flips: scope = decoders gives not testable" in gain
    assert "inconclusive → not robust" in gain  # the headline counts a decision a book choice changes apart
    other = next(r for r in rows if r.startswith("| `skean.valley`"))
    assert other.count("| - ") >= 5  # a claim neither snapshot has
