"""Executed notebooks and results files are written whole or not at all (a full disk, a crash)."""

from __future__ import annotations

import errno
import json
import shutil

import nbformat
import pandas as pd
import pytest

from lrd import book
from lrd.book.glue import Glue, save_results

CHAPTER = "models_and_tasks"


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def _papermill(monkeypatch, run):
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", lambda src, out, **kw: run(src, out))


def _half_written(src, out):
    data = open(src, "rb").read()
    with open(out, "wb") as f:
        f.write(data[:len(data) // 2])
    _disk_full()


def test_a_run_that_fills_the_disk_leaves_the_previous_notebook(tmp_path, monkeypatch):
    """`lrd run -o` on a full disk left a truncated, invalid notebook."""
    output = tmp_path / "out.ipynb"
    output.write_text("previous")
    _papermill(monkeypatch, _half_written)
    with pytest.raises(OSError, match="no space left on the device writing "):  # names where: test_cli_hardening
        book.run_chapter(CHAPTER, output=output, progress=False)
    assert output.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.ipynb"]


def test_a_chapter_that_raises_is_kept_whole_to_show_the_error(tmp_path, monkeypatch):
    from papermill.exceptions import PapermillExecutionError

    def failing(src, out):
        shutil.copy(src, out)
        raise PapermillExecutionError(0, 1, "boom", "RuntimeError", "boom", [])

    output = tmp_path / "out.ipynb"
    _papermill(monkeypatch, failing)
    with pytest.raises(PapermillExecutionError):
        book.run_chapter(CHAPTER, output=output, progress=False)
    nbformat.validate(nbformat.read(output, as_version=4))


def test_a_run_writes_the_notebook_with_its_header_in_one_piece(tmp_path, monkeypatch):
    output = tmp_path / "out.ipynb"
    _papermill(monkeypatch, lambda src, out: shutil.copy(src, out))
    assert book.run_chapter(CHAPTER, output=output, progress=False) == output
    nb = nbformat.read(output, as_version=4)
    assert any("lrd-rerun-header" in c.metadata.get("tags", []) for c in nb.cells)
    assert nb.metadata.papermill.output_path == str(output)
    assert [p.name for p in tmp_path.iterdir()] == ["out.ipynb"]


def test_results_json_and_csv_survive_a_failed_write(tmp_path, monkeypatch):
    glue = Glue("demo", record_only=True)
    glue("value", 0.5)
    json_path = glue.save(tmp_path)
    csv_path = save_results(pd.DataFrame({"layer": [0, 1], "value": [0.1, 0.2]}), "demo", tmp_path)
    before = json_path.read_text(), csv_path.read_text()
    assert json.loads(before[0])["demo-value"] == 0.5
    glue("value", 123.456)
    monkeypatch.setattr("lrd.engine.store.os.fsync", _disk_full)  # the write fails before it is complete
    with pytest.raises(OSError):
        glue.save(tmp_path)
    with pytest.raises(OSError):
        save_results(pd.DataFrame({"layer": [0, 1], "value": [9.0, 9.0]}), "demo", tmp_path)
    assert (json_path.read_text(), csv_path.read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.csv", "demo.json"]
