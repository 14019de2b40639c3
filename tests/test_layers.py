"""The package's floors (``shared/design/layout.md``), enforced by import-linter.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``): imports run down the floors,
siblings on one floor joined by ``|`` never import each other, the narrower floors' forbidden
imports, no chapter unit module importing ``lrd.verdicts`` or ``lrd.book``, no import circle
among the modules of any package, nothing inside the package importing the face ``lrd``.
import-linter reads every import, at module level or inside a function (a lazy import is still a
dependency). What it cannot see, relative imports (the cache's import reader ignores them, so one
would silently drop a module from a unit's cache key), is forbidden by a test of its own here.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lrd"

pytest.importorskip("importlinter", reason="import-linter is in the dev extra: pip install -e '.[dev]'")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` over the package in ``root`` with the contracts of ``root/pyproject.toml``,
    uncached (the graph is read from the sources each time)."""
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [sys.executable, "-c",
                                                       "from importlinter.cli import lint_imports_command as c; c()"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(command + ["--no-cache", "--no-logo", str(root / "pyproject.toml")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def contract_layers() -> set[str]:
    """Every module named in the layers contract (``"a | b"`` split)."""
    from importlinter.api import read_configuration

    contracts = read_configuration(str(ROOT / "pyproject.toml"))["contracts_options"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return {name.strip() for layer in layers for name in layer.split("|")}


def test_the_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_top_level_module_is_on_a_floor():
    """A new top-level module outside the layers contract would be constrained by nothing."""
    top = {f"lrd.{p.stem}" for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    top |= {f"lrd.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert top == contract_layers()


def relative_imports(path: Path) -> list[int]:
    """Lines of ``from . import x`` / ``from .m import x`` in ``path``."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.level]


def test_no_relative_imports_in_the_package():
    """A unit's cache key hashes its import closure, read with absolute names only."""
    wrong = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PACKAGE.rglob("*.py")) for line in relative_imports(p)]
    assert wrong == []


def test_the_relative_import_check_finds_one(tmp_path):
    (tmp_path / "m.py").write_text("import os\n\ndef f():\n    from .cache import key\n")
    assert relative_imports(tmp_path / "m.py") == [4]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "lrd", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("module, line, contract", [
    ("metrics/nrs.py", "def _up():\n    from lrd.book import glue\n", "floors: imports run down"),
    ("verdicts/stats/tails.py", "from lrd.engine import kinds\n", "the verdicts never read the engine"),
    ("units/mid_layer.py", "from lrd.verdicts import record\n", "a chapter's unit module never imports"),
    ("engine/kinds.py", "import lrd.engine.store\n", None),  # allowed: inside one floor
    ("book/glue.py", "import lrd\n", "nothing inside the package imports the face"),
])
def test_the_contracts_catch_a_broken_rule(tmp_path, module, line, contract):
    """The contracts are not vacuous: one added import, in a temporary copy, breaks the named one."""
    root = _copy(tmp_path)
    path = root / "lrd" / module
    path.write_text(path.read_text() + "\n" + line)
    result = lint_imports(root)
    if contract is None:
        assert result.returncode == 0, result.stdout
    else:
        assert result.returncode != 0
        broken = result.stdout.split("Broken contracts")[-1]
        assert contract in broken, result.stdout


def test_the_contracts_catch_a_circle(tmp_path):
    root = _copy(tmp_path)
    for name, other in (("a", "b"), ("b", "a")):
        (root / "lrd" / "engine" / f"circle_{name}.py").write_text(f"import lrd.engine.circle_{other}\n")
    result = lint_imports(root)
    assert result.returncode != 0 and "no import circle" in result.stdout.split("Broken contracts")[-1], result.stdout
