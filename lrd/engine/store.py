"""Where lrd keeps its files, and how it writes them: the one module that knows the disk layout.

``$LRD_HOME`` (default ``~/.cache/lrd``) holds the offline packs (:mod:`lrd.engine.packs`), the
hidden states (:mod:`lrd.engine.extract`), the cached unit results (:mod:`lrd.engine.cache`) and
completed model configs (:mod:`lrd.engine.models`).
Every file is written through a locked temporary sibling renamed into place
(:func:`atomic_write`), so a reader never sees half a file, and the debris of killed writers is
removed once no live process holds it (:func:`remove_stale_temp_files`).
"""

from __future__ import annotations

import functools
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

def lrd_home() -> Path:
    """Root of the lrd cache: ``$LRD_HOME`` if set, else ``~/.cache/lrd``."""
    return Path(os.environ.get("LRD_HOME") or Path.home() / ".cache" / "lrd").expanduser()


#: The folders under :func:`lrd_home`, by what they hold.
FOLDERS = {"model": "models", "data": "data", "states": "states", "results": "results", "wheels": "wheels",
           "configs": "configs", "locks": "locks"}


def folder(kind: str) -> Path:
    """Where lrd keeps ``kind`` (a key of :data:`FOLDERS`): offline model and data packs, hidden
    states, cached unit results, downloaded wheels, model configs as transformers completes
    them (:func:`lrd.engine.models.completed_config_text`), and the lock files of
    :func:`computing`.

    Examples
    --------
    >>> folder("states").name
    'states'
    """
    if kind not in FOLDERS:
        raise ValueError(f"no lrd folder for {kind!r}; folders: {', '.join(FOLDERS)}")
    return lrd_home() / FOLDERS[kind]


def remove_stale_temp_files(folder: Path, pattern: str, *, min_age: float = 60.0) -> list[Path]:
    """Delete orphaned temporary files in ``folder`` that no live writer holds.

    A file matching ``pattern`` is removed when it was not modified for ``min_age`` seconds
    and nobody holds an OS lock on it (writers such as :func:`lrd.engine.extract.extract` lock their
    temporary file while writing it; a killed writer's lock is gone). The age guard covers a
    writer between creating its file and locking it, and filesystems without locks.
    """
    removed = []
    now = time.time()
    for path in Path(folder).glob(pattern):
        try:
            if now - path.stat().st_mtime < min_age:
                continue
            with open(path, "rb") as f:
                if not _try_lock(f):
                    continue  # a live writer holds it
                path.unlink()
            removed.append(path)
        except FileNotFoundError:
            continue  # its writer renamed or removed it meanwhile
    return removed


def _try_lock(f) -> bool:
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): rely on the age guard alone
        return True
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def hold_lock(f) -> None:
    """Take an exclusive OS lock on an open file (released when it is closed or its process dies)."""
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)


_SWEPT: set[tuple[Path, str]] = set()  # (folder, pattern) already cleared of orphaned temp files


def atomic_write(path: Path, write: Callable[[BinaryIO], None], suffix: str) -> None:
    """Write ``path`` through a locked temporary sibling, then rename: readers never see half a file.

    ``write(f)`` writes the content to the open binary file ``f``. The temporary file is
    ``.<stem>-XXXX<suffix>`` (e.g. ``suffix=".npy.tmp"``); it is locked while written
    (:func:`hold_lock`). The first write into a folder also removes temporary files
    with that suffix that killed writers left there (:func:`remove_stale_temp_files`;
    files that live writers hold are kept).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if (path.parent, suffix) not in _SWEPT:
        remove_stale_temp_files(path.parent, f".*{suffix}")
        _SWEPT.add((path.parent, suffix))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=suffix)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual permissions
        with os.fdopen(fd, "wb") as f:
            hold_lock(f)
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@functools.cache
def _umask() -> int:
    """The process's file-creation mask (read once: reading it means setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def computing(entry: Path) -> Iterator[None]:
    """Hold the lock of a cache ``entry`` while computing it: one process computes, the others wait.

    Two processes that need the same missing entry (``lrd report`` beside ``lrd book``, two
    sweeps or their workers on one ``$LRD_HOME``) would otherwise both compute it. The caller checks the
    cache again once it holds the lock, and finds the entry the other process wrote. The lock
    is an OS file lock (``filelock``) in ``$LRD_HOME/locks``, named by the entry; it is released
    when the ``with`` block ends or its holder dies. Lock files are never deleted (deleting one
    while another process waits on it would let a third take a second lock).
    """
    from filelock import FileLock

    locks = folder("locks")
    locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(locks / f"{entry.parent.name}-{entry.name}.lock")
    with lock:
        yield
