"""The `lrd` command's environment, signals and outputs (issue 46, items 6, 11, 12, 13, 14): a
relative LRD_HOME (and -o, --output-dir) is taken where the user typed it, not in the kernel's
folder; a file or a read-only LRD_HOME is refused before any kernel where a write would be needed;
SIGTERM cleans up as Ctrl-C does and exits 143; a full disk names the file, the space left and
what was kept; `lrd report -o x.json` never writes two outputs to one path."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import lrd.book as book
import lrd.book.run as run
from lrd.cli import main
from lrd.engine import store

REPO = Path(__file__).resolve().parents[1]
CHAPTER = "models_and_tasks"


def _tiny_chapter(monkeypatch, *cells: str) -> None:
    """Every chapter's source is a notebook of ``cells`` (after a parameters cell)."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
                *(nbformat.v4.new_code_cell(c) for c in cells)]
    monkeypatch.setattr(run, "source_notebook", lambda chapter: nb)


def _ran(monkeypatch) -> list[dict]:
    """Record the chapters `lrd run` executes instead of executing them."""
    calls: list[dict] = []

    def record(chapter, **kwargs):
        calls.append({"chapter": chapter, **kwargs})
        return kwargs.get("output") or Path("unused.ipynb")

    monkeypatch.setattr(book, "run_chapter", record)
    return calls


# --------------------------------------------------------------------------------------------
# Item 6: paths in the environment and on the command line are the user's, not the kernel's


def test_lrd_home_is_absolute_from_where_it_was_typed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LRD_HOME", "my-home")
    assert store.lrd_home() == tmp_path / "my-home"
    monkeypatch.setenv("LRD_HOME", "~/elsewhere")
    assert store.lrd_home() == Path.home() / "elsewhere"


def test_a_relative_lrd_home_reaches_the_kernel_as_the_caller_s_folder(tmp_path, monkeypatch):
    """The kernel runs in the output folder: a relative LRD_HOME resolved there rebuilt every
    pack inside it. Through `lrd run`, with -o relative too and a relative PYTHONPATH entry."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "probe_here.py").write_text("WHERE = 'the caller'\n")
    monkeypatch.setenv("LRD_HOME", "home")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    _tiny_chapter(monkeypatch, "import os, probe_here\nprint(os.environ['LRD_HOME'])\nprint(os.getcwd())\n"
                               "print(probe_here.WHERE)")
    assert main(["run", CHAPTER, "-o", "out/chapter.ipynb"]) == 0
    executed = nbformat.read(tmp_path / "out" / "chapter.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in executed.cells[-1].outputs).splitlines()
    assert text == [str(tmp_path / "home"), str(tmp_path / "out"), "the caller"]
    assert not (tmp_path / "out" / "home").exists()


def test_only_relative_paths_are_made_absolute_for_the_kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = run.absolute_paths({"LRD_HOME": "h", "TMPDIR": "/abs/tmp", "HF_HOME": "~/hf", "XDG_CACHE_HOME": "",
                              "PYTHONPATH": f"a{os.pathsep}{os.pathsep}/b", "OTHER": "rel"})
    assert env == {"LRD_HOME": str(tmp_path / "h"),
                   "PYTHONPATH": os.pathsep.join([str(tmp_path / "a"), str(tmp_path), "/b"])}


def test_output_paths_are_absolute_before_any_chapter_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = _ran(monkeypatch)
    assert main(["run", CHAPTER, "-o", "rel/x.ipynb"]) == 0
    assert main(["run", CHAPTER, "--output-dir", "notebooks"]) == 0
    assert [c["output"] for c in calls] == [tmp_path / "rel" / "x.ipynb", tmp_path / "notebooks" / f"{CHAPTER}.ipynb"]


# --------------------------------------------------------------------------------------------
# Item 11: a file or a read-only LRD_HOME, refused before any kernel starts


@pytest.mark.parametrize("under", [False, True])
def test_a_file_as_lrd_home_is_refused_at_once_naming_it(tmp_path, monkeypatch, capsys, under):
    (tmp_path / "f").write_text("")
    home = tmp_path / "f" / "home" if under else tmp_path / "f"
    monkeypatch.setenv("LRD_HOME", str(home))
    calls = _ran(monkeypatch)
    for argv in (["run", CHAPTER], ["fetch"], ["report", "minilm"]):
        assert main(argv) == 2, argv
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"lrd {argv[0]}: error: LRD_HOME {home} ")
        assert ("which is a file" if under else "is a file, not a folder") in line
        assert "set LRD_HOME to a folder" in line
    assert calls == []


def test_check_home_tells_a_read_only_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LRD_HOME", str(tmp_path / "new"))
    assert store.check_home() is None  # made on first write
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        writable = store.write_error(folder) is None  # root writes anyway
        monkeypatch.setenv("LRD_HOME", str(folder if not writable else "/sys/lrd-home"))
        assert isinstance(store.check_home(), OSError)
    finally:
        folder.chmod(0o755)


@pytest.fixture
def read_only_home(tmp_path, monkeypatch) -> Path:
    """An LRD_HOME where a write fails as on a read-only mount (root writes through permissions);
    other folders (the outputs) are writable."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("LRD_HOME", str(home))
    write_error = store.write_error
    monkeypatch.setattr(store, "write_error", lambda folder: OSError(errno.EROFS, "Read-only file system")
                        if Path(folder) == home else write_error(folder))
    monkeypatch.chdir(tmp_path)  # lrd report's default output
    return home


def _units_state(monkeypatch, state: str) -> list[dict]:
    """Every unit's state is ``state``; the calls to lrd.units.sweep.status are recorded."""
    import lrd.units.sweep as sweep

    calls: list[dict] = []

    def status(units, root=None, *, build=True):
        calls.append({"n": len(units), "build": build})
        return [(u, state) for u in units]

    monkeypatch.setattr(sweep, "status", status)
    return calls


def test_a_read_only_home_with_units_to_compute_is_refused_before_any_kernel(read_only_home, monkeypatch, capsys):
    calls, checked = _ran(monkeypatch), _units_state(monkeypatch, "missing")
    assert main(["run", CHAPTER, "--profile", "ci"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"lrd run: error: LRD_HOME {read_only_home} cannot be written (Read-only file system), "
                           f"and 2 of 2 units of {CHAPTER} are not cached (the first: ")
    assert "): they would be written there; set LRD_HOME to a writable folder" in line
    assert calls == [] and checked == [{"n": 2, "build": False}]  # no pack built to tell
    monkeypatch.setattr(book, "build_book", lambda **kw: pytest.fail("built"))
    assert main(["book"]) == 2 and "are not cached" in capsys.readouterr().err
    assert main(["sweep", CHAPTER, "--profile", "ci"]) == 2
    assert "cannot be written" in capsys.readouterr().err.splitlines()[-1]


def test_a_write_that_telling_the_units_apart_needs_is_refused_too(read_only_home, monkeypatch, capsys):
    """A model's completed config, remembered on first use, is written while the units are keyed."""
    import lrd.units.sweep as sweep

    memo = read_only_home / "configs" / ".abc-123.json.tmp"

    def status(units, root=None, *, build=True):
        raise OSError(errno.EROFS, "Read-only file system", str(memo))

    calls = _ran(monkeypatch)
    monkeypatch.setattr(sweep, "status", status)
    assert main(["run", CHAPTER, "--profile", "ci"]) == 2
    assert f"and reading the units of {CHAPTER} writes there ({memo}); set LRD_HOME" in capsys.readouterr().err
    assert calls == []


def test_a_read_only_home_with_every_unit_cached_runs(read_only_home, monkeypatch, capsys):
    calls, _ = _ran(monkeypatch), _units_state(monkeypatch, "cached")
    assert main(["run", CHAPTER, "--profile", "ci"]) == 0
    assert [c["chapter"] for c in calls] == [CHAPTER]
    assert main(["sweep", CHAPTER, "--profile", "ci", "--dry-run"]) == 0  # lists, writes nothing


def test_a_writable_home_is_not_checked_unit_by_unit(lrd_home, monkeypatch):
    calls, checked = _ran(monkeypatch), _units_state(monkeypatch, "missing")
    assert main(["run", CHAPTER, "--profile", "ci"]) == 0
    assert len(calls) == 1 and checked == []


def test_lrd_fetch_on_a_read_only_home_refuses_only_what_it_would_build(read_only_home, monkeypatch, capsys):
    import lrd.cli as cli
    from lrd.engine import packs

    fetched = []
    monkeypatch.setattr(packs, "fetch", lambda keys, **kw: fetched.append(keys) or {k: "up to date" for k in keys})
    monkeypatch.setattr(cli, "_built", lambda key: key != "lee")
    assert main(["fetch", "minilm", "lee"]) == 2
    err = capsys.readouterr().err
    assert "and the packs lee are not built: they would be built there; set LRD_HOME" in err and fetched == []
    assert main(["fetch", "minilm"]) == 0 and fetched == [["minilm"]]
    assert main(["fetch", "--force", "minilm"]) == 2
    assert "the packs minilm are to rebuild (--force)" in capsys.readouterr().err


def test_lrd_report_on_a_read_only_home_is_refused_once_its_units_are_planned(read_only_home, monkeypatch, capsys):
    import lrd.report

    _units_state(monkeypatch, "missing")

    class Planned:
        label = "probe(minilm)"

    def build(models, *, check_planned, **kw):
        check_planned({"minilm": {"layers": [Planned()], "blocks": [Planned()]}})
        pytest.fail("computed on a read-only home")

    monkeypatch.setattr(lrd.report, "build_report", build)
    assert main(["report", "minilm"]) == 2
    assert "2 of 2 units of the report of minilm are not cached (the first: probe(minilm))" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Item 12: SIGTERM as Ctrl-C: the kernel shut down, temporaries removed, one line, exit 143

_SLEEPING_RUN = """
import sys
import nbformat
import lrd.book.run as run
nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                       "display_name": "Python 3"}})
nb.cells = [nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("import os, time\\nopen(%r, 'w').write(str(os.getpid()))\\ntime.sleep(120)")]
run.source_notebook = lambda chapter: nb
from lrd.cli import main
sys.exit(main(["run", "models_and_tasks", "-o", %r]))
"""


def _gone(pid: int, wait: float = 10.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait:
        if store.process_state(pid) == "dead":
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("sig, status, said", [(signal.SIGTERM, 143, "terminated (SIGTERM), and cleaned up"),
                                               (signal.SIGINT, 130, "interrupted")])
def test_a_signal_while_the_kernel_runs_leaves_nothing_behind(tmp_path, sig, status, said):
    tmp, pid_file = tmp_path / "tmp", tmp_path / "kernel.pid"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "LRD_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    script = _SLEEPING_RUN % (str(pid_file), str(tmp_path / "out" / "x.ipynb"))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while not pid_file.exists() or not pid_file.read_text():  # the kernel runs its cell
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 120, "the kernel did not start"
            time.sleep(0.1)
        kernel = int(pid_file.read_text())
        assert any(tmp.rglob("kernel-*.json"))  # the kernel's connection file, with its key
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, err
    assert err.splitlines()[-1] == f"lrd run: {said}" + (" (a chapter's kernel shut down, temporary files removed); "
                                                         "what was cached stays valid, and the same command goes on "
                                                         "from there" if sig == signal.SIGTERM else "")
    assert sorted(p.name for p in tmp.iterdir()) == []  # no notebook, no connection file, no side channel
    assert _gone(kernel)


def test_sigterm_inside_lrd_is_one_line_and_exit_143_and_the_handler_is_restored(monkeypatch, capsys):
    from lrd.cli import Terminated

    before = signal.getsignal(signal.SIGTERM)

    def run_chapter(chapter, **kwargs):
        assert signal.getsignal(signal.SIGTERM) is not before
        raise Terminated()

    monkeypatch.setattr(book, "run_chapter", run_chapter)
    assert main(["run", CHAPTER]) == 143
    assert capsys.readouterr().err.splitlines()[-1].startswith("lrd run: terminated (SIGTERM)")
    assert signal.getsignal(signal.SIGTERM) is before


# --------------------------------------------------------------------------------------------
# Item 13: a full disk names the file, the space left, the fix and what was kept


def _no_room(code: int = errno.ENOSPC):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    return fail


def test_a_full_disk_in_an_atomic_write_names_the_file_and_the_space_left(lrd_home, tmp_path, monkeypatch):
    monkeypatch.setattr("lrd.engine.store.os.fsync", _no_room())
    entry = lrd_home / "results" / "unit" / "entry.json"
    with pytest.raises(store.DiskFull) as caught:
        store.atomic_write(entry, lambda f: f.write(b"{}"), ".json.tmp")
    text = str(caught.value)
    assert text.startswith(f"no space left on the device writing {entry} (")
    assert f" free in {entry.parent})" in text and "point $LRD_HOME (the cache" in text
    assert "cached results stay valid" in text
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(entry)
    assert list(entry.parent.iterdir()) == []  # its temporary file removed
    page = tmp_path / "out" / "page.html"
    monkeypatch.setattr("lrd.engine.store.os.fsync", _no_room(errno.EDQUOT))
    with pytest.raises(store.DiskFull, match=r"^disk quota exceeded writing .*page\.html .*point the output \(-o"):
        store.atomic_write(page, lambda f: f.write(b"<html>"), ".html.tmp")


def test_a_notebook_that_finds_no_room_is_one_line_naming_it(lrd_home, tmp_path, monkeypatch, capsys):
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", lambda src, out, **kw: shutil.copy(src, out))
    monkeypatch.setattr("lrd.engine.store.os.fsync", _no_room())
    out = tmp_path / "out" / "x.ipynb"
    assert main(["run", CHAPTER, "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[1].startswith(f"lrd run: error: no space left on the device writing {out} ("), err
    assert "or point the output (-o or --output-dir) at a disk with room" in err[1]
    assert "cached results stay valid" in err[1] and not out.exists()


def _failing_in_cell_3(src, out, **kw):
    """papermill's execution of a chapter whose cell 3 raised: the notebook written, then the error."""
    from papermill.exceptions import PapermillExecutionError

    shutil.copy(src, out)
    raise PapermillExecutionError(0, 3, "x", "ValueError", "bad layer", [])


def test_a_failed_chapter_whose_notebook_finds_no_room_says_both(lrd_home, tmp_path, monkeypatch, capsys):
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", _failing_in_cell_3)
    monkeypatch.setattr("lrd.engine.store.os.fsync", _no_room())
    out = tmp_path / "x.ipynb"
    assert main(["run", CHAPTER, "-o", str(out)]) == 1
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith(f"lrd run: error: {CHAPTER} failed in cell 3: ValueError: bad layer; the executed notebook "
                           f"was not written either: no space left on the device writing {out} (")


def test_lrd_book_says_which_failed_chapter_lost_its_notebook(lrd_home, tmp_path, monkeypatch, capsys):
    import papermill

    import lrd.cli as cli

    monkeypatch.setattr(papermill, "execute_notebook", _failing_in_cell_3)
    monkeypatch.setattr("lrd.engine.store.os.fsync", _no_room())
    for module in (book, run):
        monkeypatch.setattr(module, "BOOK", tmp_path / "book")
    monkeypatch.setattr(book, "chapters", lambda: [CHAPTER])
    monkeypatch.setattr(cli, "_book_units", lambda *a, **k: None)
    monkeypatch.setattr(book, "build_book", lambda **kw: tmp_path / "index.html")
    assert main(["book"]) == 1
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "FAILED" in x]
    assert (f"lrd book: {CHAPTER} FAILED (ValueError: bad layer) in cell 3; the executed notebook was not written "
            f"either: no space left on the device writing {tmp_path / 'book' / CHAPTER}.ipynb (") in line


def test_scratch_with_no_room_names_tmpdir(tmp_path, monkeypatch):
    import papermill

    monkeypatch.setenv("TMPDIR", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    monkeypatch.setattr(papermill, "execute_notebook", _no_room())
    with pytest.raises(store.DiskFull, match=rf"writing {tmp_path / 'scratch'}/\S+ \(.*point \$TMPDIR"):
        book.run_chapter(CHAPTER, output=tmp_path / "x.ipynb", progress=False)
    assert list((tmp_path / "scratch").iterdir()) == []


# --------------------------------------------------------------------------------------------
# Item 14: `lrd report -o x.json` wrote the page, then the JSON over it


@pytest.mark.parametrize("name", ["page.json", "PAGE.JSON"])
def test_a_json_name_for_the_report_is_refused_with_the_fix(tmp_path, monkeypatch, capsys, name):
    import lrd.report

    build_report = lrd.report.build_report
    monkeypatch.setattr(lrd.report, "build_report", lambda *a, **k: pytest.fail("a report was computed"))
    assert main(["report", "minilm", "-o", str(tmp_path / name)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    html = (tmp_path / name).with_suffix(".html")
    assert f"both would be {tmp_path / name}; name the page, e.g. -o {html} (writes {html.name} and {name})" in line
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="both would be"):  # the library refuses it too, before any model is read
        build_report(["no-such-model"], output=tmp_path / name)


def test_the_page_and_its_json_are_two_paths(tmp_path, monkeypatch, capsys):
    import lrd.report

    seen = []

    def build(models, *, output, **kw):
        seen.append(output)
        page, data = lrd.report.output_paths(output)
        page.write_text("<html>")
        data.write_text('{"models": []}')
        return page, data

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(lrd.report, "build_report", build)
    assert main(["report", "minilm", "-o", "both"]) == 0
    assert seen == [tmp_path / "both"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["both", "both.json"]


def test_a_config_memo_is_not_needed_on_a_read_only_home(tiny_encoder_dir, tmp_path, monkeypatch):
    """completed_config_text is a memo: on a read-only $LRD_HOME it is computed and not written
    (the same text as where it is written), so reading a complete cache there needs no write."""
    import os

    from lrd.engine import models

    monkeypatch.setenv("LRD_HOME", str(tmp_path / "home"))
    written = models.completed_config_text(tiny_encoder_dir)
    assert written is not None and list((tmp_path / "home" / "configs").glob("*.json"))
    monkeypatch.setenv("LRD_HOME", str(tmp_path / "ro"))
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o555)
    real = models.atomic_write

    def refused(path, *a, **k):  # as a read-only mount answers, whoever we are (root ignores mode bits)
        raise PermissionError(13, "Read-only file system", str(path))

    monkeypatch.setattr(models, "atomic_write", refused)
    try:
        assert models.completed_config_text(tiny_encoder_dir) == written
    finally:
        monkeypatch.setattr(models, "atomic_write", real)
        os.chmod(tmp_path / "ro", 0o755)
    assert not (tmp_path / "ro" / "configs").exists() or not list((tmp_path / "ro" / "configs").glob("*.json"))
