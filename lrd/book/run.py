"""Execute chapters with papermill, open each with its re-run header, build the Jupyter Book.

Parameters are checked before a chapter runs (:func:`lrd.book.notebooks.validate_parameters`);
the executed notebook is put in place whole (:func:`lrd.engine.store.atomic_write`).
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from lrd.book import markup
from lrd.book.notebooks import BOOK, ROOT, default_parameters, profile, source_notebook, validate_parameters
from lrd.book.parameters import shadowed_models
from lrd.engine.store import DiskFull, space_named

#: Packages whose versions the re-run header of every chapter lists.
HEADER_PACKAGES = ("lrd", "torch", "transformers", "numpy", "scikit-learn", "mteb", "papermill")


def rerun_command(chapter: str, parameters: dict | None = None, profile_name: str = "default") -> str:
    """The ``lrd run`` command line that repeats an execution, each word quoted for a POSIX shell.

    ``parameters`` are the values the chapter ran with, as :func:`lrd.book.notebooks.check_chapters`
    passed them: a model folder or ``results_dir`` that the user typed as a relative path is
    here the absolute folder it named, so the command repeats the run from any folder."""
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

    Folded (a dropdown that stays in the page), so the chapter opens with its claim. Lists the
    exact ``lrd run`` command (:func:`rerun_command`), every parameter with its default (read
    from the notebook's ``parameters`` cell) and the value of this execution, the package
    versions and the wall time of this execution.

    Every value is the user's text (a model name, a folder, a string) and is written for the
    place it lands in (:mod:`lrd.book.markup`): the command in a code fence longer than any
    backtick run in it, values in code spans (escaped for the table), and the box's own fence
    longer than anything inside, so no name can close a fence or a span, or reach the page as
    HTML.
    """
    defaults = default_parameters(chapter)
    used = {**defaults, **profile(profile_name, chapter), **(parameters or {})}
    rows = "\n".join(f"| {markup.cell(k)} | {markup.cell(json.dumps(v))} | {markup.cell(json.dumps(used[k]))} |"
                     for k, v in defaults.items())
    ran = "; ".join(f"{k}: {', '.join(markup.text(x) for x in (v if isinstance(v, list) else [v]))}"
                    for k, v in used.items() if k in ("models", "tasks", "task"))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    took = f"in {wall_seconds:.0f} s " if wall_seconds is not None else ""
    command = rerun_command(chapter, parameters, profile_name)
    code = markup.fence(command)
    body = f"""{code}bash
{command}
{code}

Ran on {ran}. Executed {took}on {when} ({platform.machine()}, {_versions()}). The source is
`notebooks/{chapter}.py`; the download button at the top of the page gives this executed
notebook. Override any parameter with `-p name value` (JSON), a declared profile with
`--profile`, or run the notebook with plain papermill (see {{doc}}`run_on_your_model`).

| parameter | default | this run |
|---|---|---|
{rows}"""
    box = markup.fence(body, at_least=4)
    return f"""{box}{{admonition}} Re-run this chapter
:class: tip lrd-rerun dropdown

{body}
{box}"""


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
    whole (a failed write leaves the previous one); a chapter that raised is kept, to show the error
    (where the disk has no room for it, papermill's error says so: ``notebook_lost``).
    The kernel is handed the relative paths of its environment as the caller meant them
    (:func:`absolute_paths`); an interrupted run (Ctrl-C, SIGTERM under ``lrd``) shuts its kernel
    down and leaves nothing in the temporary folder, the kernel's connection file included.
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
    output = Path(os.path.abspath(output)) if output else BOOK / f"{chapter}.ipynb"
    if shadowed := shadowed_models(chapter, params, output.parent):  # the kernel runs in the output folder
        raise ValueError("; ".join(shadowed))
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src, executed = Path(tmp) / f"{chapter}.ipynb", Path(tmp) / "executed.ipynb"
        # executed into scratch, then put in place whole: a full disk or an interrupted run never
        # leaves a truncated notebook at `output`; a chapter that raised is kept, to show the error
        with space_named(tmp, scratch=True):  # papermill's own writes there
            nbformat.write(source_notebook(chapter), src)
            kernel_log = _kernel_log_path(chapter)
            managers: list = []
            try:  # the kernel's stderr goes to its log: its notices reach ours through a side channel
                with open(kernel_log, "wb") as klog, _notices_relayed():
                    manager = kernel_manager(klog, absolute_paths(os.environ), managers, tmp)  # before papermill's chdir
                    papermill.execute_notebook(str(src), str(executed), parameters=params, kernel_name="python3",
                                               cwd=str(output.parent), progress_bar=progress, log_output=False,
                                               config=kernel_config(), kernel_manager_class=manager)
            except PapermillExecutionError as err:
                err.kernel_log = _kept_log(kernel_log)
                try:
                    _put_in_place(executed, output)
                except DiskFull as full:  # the chapter's error comes first; the notebook's loss is said with it
                    err.notebook_lost = full
                raise
            finally:
                _shut_down(managers)
                _kept_log(kernel_log)
            given = {k: params.get(k, v) for k, v in (parameters or {}).items()}  # as checked: folders absolute
            add_rerun_header(executed, chapter, parameters=given, profile_name=profile_name)
        _put_in_place(executed, output)
    return output


def _notices_relayed():
    """The side channel of :func:`lrd.engine.progress.notice` (a damaged cache entry recomputed, a
    lock wait, a pack rebuilt), opened unless the caller opened one (``lrd run`` from a terminal,
    with its progress bars): the kernel's own stderr goes to a log file, not to ours."""
    import contextlib

    from lrd.engine import progress

    return contextlib.nullcontext() if os.environ.get(progress.NOTICE_ENV) else progress.relay(bars=False)


def _kernel_log_path(chapter: str) -> Path:
    """A new file for a kernel's own stderr: under ``$LRD_HOME/logs``, else the temporary folder."""
    from datetime import datetime, timezone

    from lrd.engine.store import lrd_home

    name = f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-kernel-{chapter}-{os.getpid()}.log"
    for folder in (lrd_home() / "logs", Path(tempfile.gettempdir()) / "lrd-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).touch()
            return folder / name
        except OSError:
            continue
    return Path(os.devnull)


def _kept_log(path: Path) -> Path | None:
    """``path`` if it holds anything; an empty log is removed (None)."""
    try:
        if path.stat().st_size:
            return path
        if path != Path(os.devnull):
            path.unlink()
    except OSError:
        pass
    return None


def kernel_manager(stderr, environ: dict[str, str] | None = None, made: list | None = None,
                   folder: str | Path | None = None):
    """The kernel manager class papermill starts a chapter's kernel with: the kernel process's
    environment is updated with ``environ`` (:func:`absolute_paths`, taken before papermill
    enters the notebook's output folder, where it starts the kernel), its connection file (with
    the key that signs the kernel's messages) is made in ``folder`` (the run's private scratch
    folder, removed however the run ends) rather than loose in the temporary folder, each
    manager is appended to ``made`` (for :func:`_shut_down`), and the kernel's own stderr goes
    to the open file ``stderr`` instead of the terminal. What a cell writes still
    reaches the notebook (ipykernel forwards it as messages); what goes to the file is ipykernel's
    log (its notices when the kernel is interrupted or shut down mid-cell, e.g. after Ctrl-C or
    a failed cell: a traceback of a closed socket) and ipykernel's echo of the cells' low-level
    output (``os.write(2, ...)``, C libraries), which the notebook has too."""
    from jupyter_client.manager import AsyncKernelManager

    class LrdKernelManager(AsyncKernelManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if folder is not None and not self.connection_file:
                self.connection_file = str(Path(folder) / f"kernel-{len(made or [])}.json")
            if made is not None:
                made.append(self)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw.setdefault("stderr", stderr)
            kw["env"] = {**(kw.get("env") or os.environ), **(environ or {})}
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    return LrdKernelManager


def _shut_down(managers: list) -> None:
    """Kill the kernel processes of ``managers`` still running: what papermill leaves when lrd is
    interrupted (Ctrl-C, SIGTERM: :class:`lrd.cli.Terminated`) while a kernel starts (its
    shutdown covers the rest). The process itself, not the manager's asynchronous shutdown,
    which an interrupted start leaves in a state it refuses."""
    for km in managers:
        process = getattr(km.provisioner, "process", None) if km.provisioner is not None else None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)


#: Environment variables that hold a path a chapter's kernel reads: lrd's cache, the scratch
#: folder, the caches of the libraries the chapters call. The kernel runs in the notebook's
#: output folder, where a relative one would name another place than the user's.
PATH_VARIABLES = ("LRD_HOME", "TMPDIR", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE",
                  "TORCH_HOME", "XDG_CACHE_HOME", "MPLCONFIGDIR", "IPYTHONDIR")
#: Those that hold a list of paths (``os.pathsep``): where Python finds modules, lrd included.
PATH_LISTS = ("PYTHONPATH",)


def absolute_paths(env) -> dict[str, str]:
    """The variables of ``env`` among :data:`PATH_VARIABLES` and :data:`PATH_LISTS` that hold a
    relative path, made absolute from the current folder (where the user typed them), as a
    chapter's kernel is handed them; ``~`` is left to the kernel, which expands it alike, and an
    empty value stays empty.

    Examples
    --------
    >>> env = absolute_paths({"LRD_HOME": "cache", "HF_HOME": "~/hf", "PYTHONPATH": "src:/opt/x", "HOME": "h"})
    >>> sorted(env), env["LRD_HOME"] == os.path.abspath("cache")
    (['LRD_HOME', 'PYTHONPATH'], True)
    >>> env["PYTHONPATH"] == f"{os.path.abspath('src')}:/opt/x"
    True
    """
    def absolute(value: str) -> str:
        return value if os.path.isabs(os.path.expanduser(value)) else os.path.abspath(value)

    found = {name: absolute(env[name]) for name in PATH_VARIABLES if env.get(name)}
    found |= {name: os.pathsep.join(absolute(p) for p in env[name].split(os.pathsep))  # an empty entry: this folder,
              for name in PATH_LISTS if env.get(name)}                                 # as Python reads it
    return {name: value for name, value in found.items() if value != env[name]}


def kernel_config():
    """The ``traitlets`` configuration of the kernels papermill starts: CurveZMQ transport
    encryption where the kernel declares support (``KernelManager.transport_encryption="auto"``,
    jupyter_client 8.10), so that ipykernel does not warn on every run that it is "running over TCP
    without encryption" (its code and outputs in plain text on local ports). A kernel without
    support starts as before, with ipykernel's warning."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport_encryption": "auto"}})


def _put_in_place(executed: Path, output: Path) -> None:
    """Copy the notebook papermill executed to ``output`` atomically, recording ``output`` as
    its papermill output path."""
    import nbformat

    from lrd.engine.store import atomic_write

    nb = nbformat.read(executed, as_version=4)
    nb.metadata.setdefault("papermill", {})["output_path"] = str(output)
    text = nbformat.writes(nb).encode()
    atomic_write(output, lambda f: f.write(text), ".ipynb.tmp")


class BuildFailed(RuntimeError):
    """``jupyter-book build`` failed: its first warnings and errors (``problems``) and the log
    file with its whole output (``log``)."""

    def __init__(self, problems: list[str], log: Path, strict: bool) -> None:
        self.problems, self.log = problems, log
        first = "".join(f"\n  {p}" for p in problems[:BUILD_PROBLEMS_SHOWN])
        more = f"\n  ... {len(problems) - BUILD_PROBLEMS_SHOWN} more" if len(problems) > BUILD_PROBLEMS_SHOWN else ""
        hint = "; `lrd book --no-execute --lenient` builds without turning warnings into errors" if strict else ""
        super().__init__(f"jupyter-book build failed with {len(problems)} warning(s) or error(s); the whole output is "
                         f"in {log}{hint}:{first}{more}" if problems else
                         f"jupyter-book build failed; its whole output is in {log}{hint}")


#: How many of a failed build's warnings :class:`BuildFailed` names.
BUILD_PROBLEMS_SHOWN = 5


def build_problems(text: str) -> list[str]:
    """The warning and error lines of Sphinx / jupyter-book output, in order, each once."""
    marks = ("WARNING:", "ERROR:", "CRITICAL:", "Exception occurred", "Error:")
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if any(m in line for m in marks)))


def build_book(root: Path = ROOT, *, strict: bool = True) -> Path:
    """``jupyter-book build`` of ``root``; with ``strict``, warnings fail (``-W -n --keep-going``).

    Its output goes to ``root/_build/jupyter-book.log``; a failed build raises
    :class:`BuildFailed`, which names its first warnings and that log.
    """
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    log = Path(root) / "_build" / "jupyter-book.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as f:
        done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise BuildFailed(build_problems(log.read_text(errors="replace")), log, strict)
    return root / "_build" / "html" / "index.html"
