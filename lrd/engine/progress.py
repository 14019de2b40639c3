"""Progress of long work, shown in the terminal that runs ``lrd`` and never in the book.

Work inside a chapter (extraction, mostly) runs in a Jupyter kernel whose stderr is captured
into the notebook, so a progress bar there would end up in the book. Instead, ``lrd run`` and
``lrd book`` (when their stderr is a terminal) open a side channel: they set
``LRD_PROGRESS_FILE`` for the kernel, the kernel's bars write there (:func:`stream`), and a
thread copies what arrives to the terminal (:func:`relay`). In a plain Python session the bars
go to stderr when it is a terminal; elsewhere they are off.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterator, Sequence

ENV = "LRD_PROGRESS_FILE"
#: The side channel for one-line notices (:func:`notice`); :func:`relay` opens it also where the
#: bars stay off (stderr not a terminal), so a notice always reaches the command's stderr.
NOTICE_ENV = "LRD_NOTICE_FILE"
COLUMNS_ENV = "LRD_PROGRESS_COLUMNS"
_names: dict[tuple, str] = {}


def stream(progress: bool | None = None) -> IO[str] | None:
    """Where a progress bar should write, or ``None`` for no bar.

    ``progress=None``: stderr when it is a terminal, else the side channel of ``lrd run`` when
    one is open, else nothing. ``True``: stderr (or the side channel). ``False``: nothing.
    """
    if progress is False:
        return None
    if sys.stderr.isatty():
        return sys.stderr
    path = os.environ.get(ENV)
    if path:
        return open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (closed by release())
    return sys.stderr if progress else None


def release(out: IO[str] | None) -> None:
    """Close a stream :func:`stream` opened on the side channel (stderr stays open)."""
    if out is not None and out is not sys.stderr and out is not sys.__stderr__:
        out.close()


def columns() -> int | None:
    """Width of the terminal the bars end up in (the side channel passes it on)."""
    value = os.environ.get(COLUMNS_ENV)
    return int(value) if value and value.isdigit() else None


def name_texts(texts: Sequence[str], name: str) -> None:
    """Remember that ``texts`` are task ``name``'s, so that a bar over them can say so."""
    if len(texts):
        _names[(len(texts), texts[0], texts[-1])] = name


def describe(texts: Sequence[str]) -> str:
    """The task the texts came from (:func:`name_texts`), else their number."""
    name = _names.get((len(texts), texts[0], texts[-1])) if len(texts) else None
    return f"{name} ({len(texts)} texts)" if name else f"{len(texts)} texts"


@contextlib.contextmanager
def relay(to: IO[str] | None = None, *, interval: float = 0.2, bars: bool = True) -> Iterator[Path]:
    """Open the side channel: kernels started inside see ``LRD_NOTICE_FILE`` (and, with ``bars``,
    ``LRD_PROGRESS_FILE``), and what their notices (and bars) write there is copied to ``to``
    (stderr) while the block runs. Restores the environment on exit."""
    to = to or sys.stderr
    folder = tempfile.mkdtemp(prefix="lrd-progress-")
    path = Path(folder) / "progress"
    path.touch()
    old = {k: os.environ.get(k) for k in (ENV, COLUMNS_ENV, NOTICE_ENV)}
    os.environ[NOTICE_ENV] = str(path)
    if bars:
        os.environ[ENV] = str(path)
        os.environ[COLUMNS_ENV] = str(shutil.get_terminal_size((100, 20)).columns)
    stop = threading.Event()
    copied = [0]  # characters the pump has copied

    def pump() -> None:
        with open(path, encoding="utf-8", errors="replace") as f:
            while True:
                chunk = f.read()
                if chunk:
                    to.write(chunk)
                    to.flush()
                    copied[0] += len(chunk)
                elif stop.is_set():
                    return
                else:
                    stop.wait(interval)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(timeout=5)
        if not thread.is_alive():  # what the pump had not copied yet (a thread never scheduled on a busy CPU)
            rest = path.read_text(encoding="utf-8", errors="replace")[copied[0]:]
            if rest:
                to.write(rest)
                to.flush()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(folder, ignore_errors=True)


def notice(message: str) -> None:
    """Say ``message`` (one line) on the terminal of the ``lrd`` command, never in a notebook.

    For what a user must see but the book must not show (a damaged cache entry that is
    recomputed, a wait on another process's lock). In a chapter's kernel under ``lrd run``
    the line goes through the side channel of :func:`relay` when one is open, else to the
    stderr the kernel inherited from the ``lrd`` command (:func:`_to_kernel_terminal`), not to
    the captured stream that becomes the cell's output.
    In a plain Python session it goes to stderr.
    """
    line = message.rstrip("\n") + "\n"
    path = os.environ.get(NOTICE_ENV) or os.environ.get(ENV)
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)
            return
        except OSError:
            pass  # the channel has closed: fall back to the process's stderr
    if _in_kernel():
        _to_kernel_terminal(line)
        return
    sys.stderr.write(line)
    sys.stderr.flush()


def _in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (whose ``sys.stderr`` is captured into outputs)."""
    return type(sys.stderr).__module__.startswith("ipykernel")  # its OutStream


def terminal_fd() -> int | None:
    """In a Jupyter kernel, the file descriptor of the stderr the kernel inherited (the ``lrd``
    command's terminal), for subprocesses whose output must not land in the notebook (``pip``
    building a pack); None elsewhere (inherit stderr as usual).

    ipykernel points descriptors 1 and 2 at pipes whose content becomes the cell's output, and
    its ``sys.stderr.fileno()`` gives the copy it kept of the original descriptor 2. Without
    that copy, descriptor 2 is not captured."""
    if not _in_kernel():
        return None
    try:
        return sys.stderr.fileno()
    except (OSError, ValueError, AttributeError):
        return 2


def _to_kernel_terminal(line: str) -> None:
    """Write past the kernel's capture (:func:`terminal_fd`)."""
    try:
        os.write(terminal_fd() or 2, line.encode("utf-8", "replace"))
    except OSError:
        pass  # no terminal to tell
