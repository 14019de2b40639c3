"""Run chapters (jupytext sources) with papermill and assemble the Jupyter Book.

Chapters are the notebooks listed in ``_toc.yml`` (``book/<chapter>``); their sources are
``notebooks/<chapter>.py``. Parameter profiles other than the notebook defaults are declared
in ``notebooks/profiles.yml`` (the ``ci`` profile is what nbval re-executes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BOOK = ROOT / "book"
NBVAL = ROOT / "tests" / "nbval"


def chapters(root: Path = ROOT) -> list[str]:
    """Chapter names in book order, read from ``_toc.yml`` (notebook entries only)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    entries: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                entries.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return [Path(e).name for e in entries if (root / "notebooks" / f"{Path(e).name}.py").is_file()]


def profile(name: str, chapter: str) -> dict:
    """Parameters of a declared profile for a chapter (``{}`` for the defaults)."""
    if name in ("default", "full"):
        return {}
    profiles = yaml.safe_load((NOTEBOOKS / "profiles.yml").read_text())
    if name not in profiles:
        raise KeyError(f"unknown profile {name!r}; declared in notebooks/profiles.yml: {sorted(profiles)}")
    return dict(profiles[name].get(chapter, {}))


def source_notebook(chapter: str):
    """The chapter's jupytext source as an nbformat notebook."""
    import jupytext

    path = NOTEBOOKS / f"{chapter}.py"
    if not path.is_file():
        known = [p.stem for p in NOTEBOOKS.glob("*.py")]
        raise FileNotFoundError(f"no chapter {chapter!r} (no {path}); chapters: {sorted(known)}")
    return jupytext.read(path)


def run_chapter(chapter: str, *, parameters: dict | None = None, profile_name: str = "default",
                output: Path | None = None, progress: bool = True) -> Path:
    """Execute one chapter with papermill; returns the executed notebook's path.

    ``parameters`` override the profile, which overrides the notebook defaults. The notebook
    runs with its output folder as working directory (so its ``results/`` land beside it).
    """
    import nbformat
    import papermill

    params = {**profile(profile_name, chapter), **(parameters or {})}
    output = Path(output) if output else BOOK / f"{chapter}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{chapter}.ipynb"
        nbformat.write(source_notebook(chapter), src)
        papermill.execute_notebook(str(src), str(output), parameters=params, kernel_name="python3",
                                   cwd=str(output.parent), progress_bar=progress, log_output=False)
    return output


def build_book(root: Path = ROOT, *, strict: bool = True) -> Path:
    """``jupyter-book build`` of ``root``; with ``strict``, warnings fail (``-W -n --keep-going``)."""
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    subprocess.run(cmd, check=True)
    return root / "_build" / "html" / "index.html"


def parse_parameter(value: str) -> Any:
    """``-p key value`` values: JSON when it parses (numbers, lists, null), else a string."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value
