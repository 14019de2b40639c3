"""Execute chapters with papermill, open each with its re-run header, build the Jupyter Book.

Parameters are checked before a chapter runs (:func:`lrd.book.notebooks.validate_parameters`);
the executed notebook is put in place whole (:func:`lrd.engine.store.atomic_write`).
"""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from lrd.book.notebooks import BOOK, ROOT, default_parameters, profile, source_notebook, validate_parameters

#: Packages whose versions the re-run header of every chapter lists.
HEADER_PACKAGES = ("lrd", "torch", "transformers", "numpy", "scikit-learn", "mteb", "papermill")


def rerun_command(chapter: str, parameters: dict | None = None, profile_name: str = "default") -> str:
    """The ``lrd run`` command line that repeats an execution."""
    cmd = ["lrd", "run", chapter] + (["--profile", profile_name] if profile_name not in ("default", "full") else [])
    for key, value in (parameters or {}).items():
        cmd += ["-p", key, value if isinstance(value, str) else json.dumps(value)]
    return " ".join(shlex.quote(c) for c in cmd)


def _versions() -> str:
    found = []
    for name in HEADER_PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join([f"Python {platform.python_version()}"] + found)


def rerun_header(chapter: str, *, parameters: dict | None = None, profile_name: str = "default",
                 wall_seconds: float | None = None) -> str:
    """The MyST box that opens an executed chapter: how to re-run it, with what it ran on.

    Lists the exact ``lrd run`` command, every parameter with its default (read from the
    notebook's ``parameters`` cell) and the value of this execution, the package versions and
    the wall time of this execution.
    """
    defaults = default_parameters(chapter)
    used = {**defaults, **profile(profile_name, chapter), **(parameters or {})}
    rows = "\n".join(f"| `{k}` | `{json.dumps(v)}` | `{json.dumps(used[k])}` |" for k, v in defaults.items())
    ran = "; ".join(f"{k}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
                    for k, v in used.items() if k in ("models", "tasks", "task"))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    took = f"in {wall_seconds:.0f} s " if wall_seconds is not None else ""
    return f"""````{{admonition}} Re-run this chapter
:class: tip lrd-rerun

```bash
{rerun_command(chapter, parameters, profile_name)}
```

Ran on {ran}. Executed {took}on {when} ({platform.machine()}, {_versions()}). The source is
`notebooks/{chapter}.py`; the download button at the top of the page gives this executed
notebook. Override any parameter with `-p name value` (JSON), a declared profile with
`--profile`, or run the notebook with plain papermill (see {{doc}}`run_on_your_model`).

| parameter | default | this run |
|---|---|---|
{rows}
````"""


def add_rerun_header(path: Path, chapter: str, *, parameters: dict | None = None,
                     profile_name: str = "default") -> None:
    """Insert :func:`rerun_header` after the title cell of the executed notebook at ``path``."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if "lrd-rerun-header" not in c.metadata.get("tags", [])]
    wall = nb.metadata.get("papermill", {}).get("duration")
    cell = nbformat.v4.new_markdown_cell(rerun_header(chapter, parameters=parameters, profile_name=profile_name,
                                                      wall_seconds=wall), metadata={"tags": ["lrd-rerun-header"]})
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    nb.cells.insert(first + 1, cell)
    nbformat.write(nb, path)


def run_chapter(chapter: str, *, parameters: dict | None = None, profile_name: str = "default",
                output: Path | None = None, progress: bool = True, checked: bool = False) -> Path:
    """Execute one chapter with papermill; returns the executed notebook's path.

    ``parameters`` override the profile, which overrides the notebook defaults; all are
    checked by :func:`validate_parameters` before the notebook starts, unless ``checked`` says
    the caller checked them already, with the profile's values merged in (``lrd run`` and
    ``lrd sweep`` check every chapter once, before the first runs). The notebook runs with
    its output folder as working directory (so its ``results/`` land beside it).
    ``progress`` shows papermill's cell counter. The executed notebook opens with a re-run
    header (:func:`rerun_header`) when the execution succeeded. The notebook is put in place
    whole (a failed write leaves the previous one); a chapter that raised is kept, to show the error.
    """
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    if checked:
        params, notes = dict(parameters or {}), []
    else:
        params, notes = validate_parameters(chapter, {**profile(profile_name, chapter), **(parameters or {})})
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    output = Path(output) if output else BOOK / f"{chapter}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src, executed = Path(tmp) / f"{chapter}.ipynb", Path(tmp) / "executed.ipynb"
        nbformat.write(source_notebook(chapter), src)
        # executed into scratch, then put in place whole: a full disk or an interrupted run never
        # leaves a truncated notebook at `output`; a chapter that raised is kept, to show the error
        try:
            papermill.execute_notebook(str(src), str(executed), parameters=params, kernel_name="python3",
                                       cwd=str(output.parent), progress_bar=progress, log_output=False)
        except PapermillExecutionError:
            _put_in_place(executed, output)
            raise
        add_rerun_header(executed, chapter, parameters=parameters, profile_name=profile_name)
        _put_in_place(executed, output)
    return output


def _put_in_place(executed: Path, output: Path) -> None:
    """Copy the notebook papermill executed to ``output`` atomically, recording ``output`` as
    its papermill output path."""
    import nbformat

    from lrd.engine.store import atomic_write

    nb = nbformat.read(executed, as_version=4)
    nb.metadata.setdefault("papermill", {})["output_path"] = str(output)
    text = nbformat.writes(nb).encode()
    atomic_write(output, lambda f: f.write(text), ".ipynb.tmp")


def build_book(root: Path = ROOT, *, strict: bool = True) -> Path:
    """``jupyter-book build`` of ``root``; with ``strict``, warnings fail (``-W -n --keep-going``)."""
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    subprocess.run(cmd, check=True)
    return root / "_build" / "html" / "index.html"
