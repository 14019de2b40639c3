"""lrd.book.designs: the appendix calibrates each claim at the design its chapter ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lrd.book.designs import DESIGN_SOURCES, executed_designs
from lrd.verdicts import calibration

NBVAL_RESULTS = Path(__file__).parent / "nbval" / "results"


def _families(folder: Path, **glued) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lrd_families.json"
    path.write_text(json.dumps({f"lrd_families-{k}": v for k, v in glued.items()}))
    return path


def test_designs_are_read_from_the_executed_chapter(tmp_path):
    _families(tmp_path / "results", n_encoders=2, n_decoders=6, n_tasks=5, n_models=8,
              equal_tasks="sst2, mrpc", other="ignored")
    designs = executed_designs(tmp_path / "results")
    assert designs["lrd.architecture"] == ({"n_encoders": 2, "n_decoders": 6, "n_tasks": 5},
                                           "executed lrd_families (results/lrd_families.json): n_encoders, "
                                           "n_decoders, n_tasks")
    assert designs["lrd.task"][0] == {"n_encoders": 2, "n_decoders": 6, "n_tasks": 2}  # the tasks of equal size
    assert designs["lrd.complementarity"][0] == {"n_models": 8, "n_tasks": 5}
    assert executed_designs(tmp_path / "nothing here") == {}  # no chapter ran: the restated defaults


def test_a_stale_or_odd_results_file_fails_early_with_the_fix(tmp_path):
    _families(tmp_path, n_encoders=3, n_decoders=5)
    with pytest.raises(ValueError, match=r"no glued 'n_tasks'.*re-run `lrd run lrd_families`"):
        executed_designs(tmp_path)
    _families(tmp_path, n_encoders="3", n_decoders=5, n_tasks=4, n_models=8, equal_tasks="sst2")
    with pytest.raises(ValueError, match="n_encoders of lrd.architecture's design must be a count"):
        executed_designs(tmp_path)


def test_the_mid_layer_panel_is_read_as_block_counts_and_kinds(tmp_path):
    import pandas as pd

    from lrd.book.designs import mid_layer_panel

    results = pd.DataFrame({"model": ["b"] * 4 + ["a"] * 3, "layer": [0, 1, 2, 3, 0, 1, 2],
                            "kind": ["decoder"] * 4 + ["encoder"] * 3})
    glued = {**mid_layer_panel(results), "n_tasks": 2, "n_token_prompts": 40}
    assert glued["block_counts"] == "3, 2" and glued["model_kinds"] == "decoder, encoder"  # the panel's order
    (tmp_path / "mid_layer.json").write_text(json.dumps({f"mid_layer-{k}": v for k, v in glued.items()}))
    design, _ = executed_designs(tmp_path)["skean.gain"]
    assert design == {"layers": (3, 2), "kinds": ("decoder", "encoder"), "n_tasks": 2}
    assert calibration.null_model("skean.gain").at(**design).describe("panel").endswith(
        "2 models (1 decoders) x 2 tasks, 2-3 blocks; noise per layer: fits 2% (shared by the halves), rows 2% per "
        "half, roughness 2%")
    valley, _ = executed_designs(tmp_path)["skean.valley"]
    assert valley == {"layers": (3, 2), "kinds": ("decoder", "encoder"), "n_prompts": 40}
    assert calibration.null_model("skean.valley").at(**valley).describe("panel").startswith(
        "1 encoders and 1 decoders (2-3 blocks), 40 prompts each")


def test_every_design_source_names_parameters_of_its_null_model():
    for claim, (_, fields) in DESIGN_SOURCES.items():
        assert set(fields) <= set(calibration.null_model(claim).design), claim


def test_the_ci_reference_results_give_the_ci_panel():
    """The committed ci results: the design read agrees with what the chapter printed."""
    glued = json.loads((NBVAL_RESULTS / "lrd_families.json").read_text())
    design, source = executed_designs(NBVAL_RESULTS)["lrd.final_layer"]
    assert design == {"n_encoders": glued["lrd_families-n_encoders"], "n_decoders": glued["lrd_families-n_decoders"],
                      "n_tasks": glued["lrd_families-n_tasks"]}
    assert source.endswith("(results/lrd_families.json): n_encoders, n_decoders, n_tasks")
    cayley = json.loads((NBVAL_RESULTS / "cayley_aggregation.json").read_text())
    designs = executed_designs(NBVAL_RESULTS)
    # the aggregator claims are calibrated at the models of the paper's sizes only
    n_models, n_seeds = cayley["cayley_aggregation-n_models_in_scope"], cayley["cayley_aggregation-n_seeds"]
    assert n_models < cayley["cayley_aggregation-n_models"]  # the ci panel's minilm is a sentence embedder (rule kinds)
    assert designs["ilse.fc"][0] == {"n_models": n_models, "n_tasks": cayley["cayley_aggregation-n_tasks"],
                                     "n_seeds": n_seeds}
    assert designs["ilse.few_shot"][0]["n_tasks"] == cayley["cayley_aggregation-n_few_shot_tasks"]
    assert designs["ilse.mapping"][0] == {"n_mappings": cayley["cayley_aggregation-n_mappings"], "n_seeds": n_seeds}
    assert designs["ilse.gain"][0] == {k: cayley[f"cayley_aggregation-gain_{k}"]
                                       for k in ("n_models", "n_tasks", "n_seeds", "n_items")}
    pruned = json.loads((NBVAL_RESULTS / "selection_and_pruning.json").read_text())["selection_and_pruning-n_units"]
    assert {designs[c][0]["n_models"] for c in ("lrd.pruning_nrs", "lrd.pruning_frenet")} == {pruned}


def test_the_cosine_panel_is_each_decoder_s_block_count_in_panel_order():
    import numpy as np
    from lrd.book.designs import cosine_panel

    correct = {("b", "t1"): np.zeros((19, 4)), ("b", "t2"): np.zeros((19, 4)), ("a", "t1"): np.zeros((31, 4))}
    assert cosine_panel(correct) == {"block_counts": "18, 30"}
