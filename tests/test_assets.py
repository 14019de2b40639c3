"""lrd.assets: idempotent, atomic, self-healing packs (fake wheels), and the real packs."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest

from lrd import assets
from lrd.assets import MANIFEST, Pack, Piece


@pytest.fixture
def fake_wheels(tmp_path, monkeypatch):
    """Two local 'wheels'; pip is never called."""
    wheels = {}
    for name, members in {
        "demo-a==1.0": {"demo_a/data/part0": b"hello ", "demo_a/model/config.json": b"{}",
                        "demo_a/model/sub/w.bin": b"\x00\x01"},
        "demo-b==1.0": {"demo_b/data/part1": b"world"},
    }.items():
        path = tmp_path / f"{name.split('==')[0]}.whl"
        with zipfile.ZipFile(path, "w") as z:
            for member, data in members.items():
                z.writestr(member, data)
        wheels[name] = path
    monkeypatch.setattr(assets, "_wheel", lambda requirement, folder: wheels[requirement])
    return wheels


def _concat_pack(sha: str | None) -> Pack:
    return Pack("joined", "data", (Piece("demo-a==1.0", "demo_a/data/part0"), Piece("demo-b==1.0", "demo_b/data/part1")),
                build="copy", sha256=sha)


def test_copy_pack_builds_then_is_up_to_date(fake_wheels, lrd_home):
    pack = Pack("folder", "model", (Piece("demo-a==1.0", "demo_a/model/"),))
    log = []
    assert assets.fetch_pack(pack, log=log.append) == "built"
    assert (pack.path / "config.json").read_bytes() == b"{}"
    assert (pack.path / "sub" / "w.bin").read_bytes() == b"\x00\x01"
    manifest = json.loads((pack.path / MANIFEST).read_text())
    assert manifest["files"]["sub/w.bin"] == hashlib.sha256(b"\x00\x01").hexdigest()
    assert assets.fetch_pack(pack, log=log.append) == "up to date"
    assert "up to date" in log[-1]


def test_corrupted_file_is_detected_and_rebuilt(fake_wheels, lrd_home):
    pack = Pack("folder", "model", (Piece("demo-a==1.0", "demo_a/model/"),))
    assets.fetch_pack(pack, log=lambda m: None)
    (pack.path / "config.json").write_bytes(b"{broken")
    assert not assets.verify(pack)
    assert assets.fetch_pack(pack, log=lambda m: None) == "rebuilt"
    assert (pack.path / "config.json").read_bytes() == b"{}"
    assert assets.verify(pack)


def test_missing_file_is_detected(fake_wheels, lrd_home):
    pack = Pack("folder", "model", (Piece("demo-a==1.0", "demo_a/model/"),))
    assets.fetch_pack(pack, log=lambda m: None)
    (pack.path / "sub" / "w.bin").unlink()
    assert not assets.verify(pack)


def test_interrupted_build_leaves_nothing_half_written(fake_wheels, lrd_home, monkeypatch):
    pack = Pack("folder", "model", (Piece("demo-a==1.0", "demo_a/model/"),))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(assets, "_manifest_of", interrupted)
    with pytest.raises(KeyboardInterrupt):
        assets.fetch_pack(pack, log=lambda m: None)
    assert not pack.path.exists()
    assert list(pack.path.parent.iterdir()) == []  # no temporary folder left either


def test_concatenation_checks_the_pinned_sha256(fake_wheels, lrd_home, tmp_path):
    good = hashlib.sha256(b"hello world").hexdigest()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = assets._concatenate(_concat_pack(good), tmp_path, scratch, "joined.bin")
    assert out.read_bytes() == b"hello world"
    with pytest.raises(ValueError, match="sha256"):
        assets._concatenate(_concat_pack("0" * 64), tmp_path, scratch, "joined.bin")


def test_member_missing_from_wheel_is_named(fake_wheels, lrd_home):
    pack = Pack("nothing", "data", (Piece("demo-a==1.0", "demo_a/absent.txt"),))
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        assets.fetch_pack(pack, log=lambda m: None)
    assert not pack.path.exists()


def test_unknown_pack_key_lists_known_ones():
    with pytest.raises(KeyError, match="minilm"):
        assets.fetch(["nope"])


def test_lrd_home_follows_the_environment(lrd_home):
    assert assets.lrd_home() == lrd_home


@pytest.mark.integration
@pytest.mark.parametrize("key", sorted(assets.PACKS))
def test_real_pack_verifies_against_its_manifest(key, require_panel):
    require_panel(key)
    assert assets.verify(assets.PACKS[key])
