"""Cache entries carry a checksum: a damaged entry is never served, always reported, removed and recomputed.

Both caches: results (:mod:`lrd.engine.cache`, data documents of :mod:`lrd.engine.codec`) and hidden states
(:mod:`lrd.engine.extract`, arrays).
"""

from __future__ import annotations

import contextlib
import io
import pickle
import struct
import warnings

import numpy as np
import pandas as pd
import pytest

import lrd
from lrd.engine import cache
from lrd.units import Unit, run_unit
from lrd.units.base import Stored, request_labels

TEXTS = ["the cat sat on the mat", "a dog is good", "not very bad and very good text of the layer"]


def _value():
    return {"rows": pd.DataFrame({"layer": np.arange(8), "value": np.linspace(0.1, 0.8, 8)}),
            "scores": np.linspace(-1.0, 1.0, 64)}


def _same(a, b) -> bool:
    return a["rows"].equals(b["rows"]) and np.array_equal(a["scores"], b["scores"])


@contextlib.contextmanager
def _reported(name: str):
    """The block says on stderr (:func:`lrd.engine.progress.notice`) that entry ``name`` was
    unusable, and raises no warning (a warning would land in a chapter's outputs)."""
    err = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with contextlib.redirect_stderr(err):
            yield
    assert name in err.getvalue() and "recomputed" in err.getvalue(), err.getvalue()


def _unusable(path, load, *, stored_again: bool = False):
    """``load()`` reports ``path`` (a line on stderr naming it) and removes it (or, when it
    recomputes, stores it again, intact); what ``load()`` returns."""
    damaged = path.read_bytes()
    with _reported(path.name):
        out = load()
    assert path.exists() == stored_again and (not stored_again or path.read_bytes() != damaged)
    return out


def test_random_corruptions_of_a_results_entry_are_never_served(tmp_path):
    """Before checksums, 24 of 40 random 16-byte corruptions loaded, with other values."""
    rng = np.random.default_rng(0)
    for trial in range(40):
        path = cache.save("unit", "k", _value(), tmp_path)
        data = bytearray(path.read_bytes())
        at = int(rng.integers(0, len(data) - 16))
        data[at:at + 16] = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
        path.write_bytes(bytes(data))
        got = _unusable(path, lambda: cache.load("unit", "k", tmp_path, default="missing"))
        assert got == "missing", (trial, at)


def test_a_changed_float_does_not_reach_the_results(tmp_path):
    """One value set to 123.456 inside the entry (the file still decodes)."""
    path = cache.save("unit", "k", _value(), tmp_path)
    old, new = struct.pack("<d", _value()["scores"][5]), struct.pack("<d", 123.456)
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))
    assert _unusable(path, lambda: cache.load("unit", "k", tmp_path, default=None)) is None


@pytest.mark.parametrize("error", [MemoryError, SystemError, RecursionError])
def test_an_entry_whose_load_fails_is_removed_not_kept_for_every_rerun(tmp_path, monkeypatch, error):
    path = cache.save("unit", "k", _value(), tmp_path)

    def fail(*args, **kwargs):
        raise error("while decoding")

    monkeypatch.setattr(cache.codec, "load", fail)
    assert _unusable(path, lambda: cache.load("unit", "k", tmp_path, default=None)) is None


def test_an_entry_without_a_checksum_is_recomputed(tmp_path):
    """An entry of the old format (a bare pickle) is not trusted either."""
    path = cache.entry_path("unit", "k", tmp_path)
    path.write_bytes(pickle.dumps(_value()))
    assert _unusable(path, lambda: cache.load("unit", "k", tmp_path, default=None)) is None


def _double(model, *, x):
    return {"twice": 2 * x}


def test_run_unit_recomputes_a_damaged_entry(tmp_path, monkeypatch):
    monkeypatch.setattr("lrd.units.base.source_fingerprint", lambda name, dtype="float32": "fp")
    unit = Unit("test", _double, "some-model", {"x": 21})
    monkeypatch.setattr(Unit, "key", lambda self, fp=None: "key")
    path = cache.save(unit.name, "key", Stored({"twice": 123.456}, request_labels(unit)), tmp_path)
    data = path.read_bytes()
    assert data.count(b"123.456") == 1  # a float of a dict is JSON text
    path.write_bytes(data.replace(b"123.456", b"654.321"))  # same length: only the checksum tells

    class Slot:
        def get(self, name, device, dtype="float32"):
            return None

    with _reported(path.name):
        value, how = run_unit(unit, Slot(), root=tmp_path)
    assert (value, how) == ({"twice": 42}, "computed")
    assert cache.load(unit.name, "key", tmp_path).value == {"twice": 42}  # stored again, intact


# --------------------------------------------------------------------------------------------
# The hidden-state cache


def _states_entry(lrd_home):
    (path,) = (lrd_home / "states").glob("*.npy")
    return path


def test_an_overwritten_state_payload_with_its_header_intact_is_recomputed(tiny_encoder, lrd_home):
    first = lrd.extract(tiny_encoder, TEXTS)
    path = _states_entry(lrd_home)
    data = path.read_bytes()
    path.write_bytes(data[:-first.nbytes] + np.zeros_like(first).tobytes())  # the .npy header is intact
    again = _unusable(path, lambda: lrd.extract(tiny_encoder, TEXTS), stored_again=True)
    np.testing.assert_array_equal(again, first)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_state_entry_is_reported_and_recomputed(tiny_encoder, lrd_home, damage):
    first = lrd.extract(tiny_encoder, TEXTS)
    path = _states_entry(lrd_home)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "flip":
        data[-5] ^= 0x01
    else:
        data = bytearray(b"not an array")
    path.write_bytes(bytes(data))
    np.testing.assert_array_equal(_unusable(path, lambda: lrd.extract(tiny_encoder, TEXTS), stored_again=True), first)


def test_an_intact_state_entry_is_served_without_a_warning(tiny_encoder, lrd_home, recwarn):
    first = lrd.extract(tiny_encoder, TEXTS)
    from lrd.engine.extract import _cached_states

    np.testing.assert_array_equal(_cached_states(_states_entry(lrd_home)), first)
    np.testing.assert_array_equal(lrd.extract(tiny_encoder, TEXTS), first)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
