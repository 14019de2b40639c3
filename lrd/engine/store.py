"""Where lrd keeps its files, and how it writes them: the one module that knows the disk layout.

``$LRD_HOME`` (default ``~/.cache/lrd``) holds the offline packs (:mod:`lrd.engine.packs`), the
hidden states (:mod:`lrd.engine.extract`), the cached unit results (:mod:`lrd.engine.cache`),
completed model configs (:mod:`lrd.engine.models`) and the content hashes of model files
(:func:`content_sha256`).
Every file is written through a locked temporary sibling renamed into place
(:func:`atomic_write`), so a reader never sees half a file, and the debris of killed writers is
removed once no live process holds it (:func:`remove_stale_temp_files`).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import socket
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator


def lrd_home() -> Path:
    """Root of the lrd cache: ``$LRD_HOME`` if set, else ``~/.cache/lrd``; always absolute (a
    relative ``$LRD_HOME`` is taken from the current folder, where the user typed it; a chapter's
    kernel, which runs in its output folder, is handed the absolute path:
    :func:`lrd.book.run.absolute_paths`)."""
    return Path(os.path.abspath(Path(os.environ.get("LRD_HOME") or Path.home() / ".cache" / "lrd").expanduser()))


def nearest_existing(path: Path) -> Path:
    """``path`` if it exists, else the nearest path above it that does (where it would be made)."""
    existing = Path(os.path.abspath(path))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return existing


def write_error(folder: Path) -> OSError | None:
    """None when a file can be created in the existing ``folder`` (one is created there and
    removed: permissions alone do not tell, e.g. a read-only mount or root), else the error."""
    try:
        tempfile.TemporaryFile(dir=folder, prefix=".lrd-write-check-").close()
    except OSError as err:
        return err
    return None


def check_home() -> OSError | None:
    """Check ``$LRD_HOME`` (:func:`lrd_home`) before any work: what writing there meets.

    Returns None when files can be written there (or where it would be made), else the error
    of a write (a read-only home: lrd reads a complete cache from it, and a command that would
    write there refuses before it starts: :class:`HomeReadOnly`).

    Raises
    ------
    ValueError
        The home, or a path above it, is a file: it names the file and the fix.
    """
    home = lrd_home()
    existing = nearest_existing(home)
    if not existing.is_dir():
        where = "is a file" if existing == home else f"is under {existing}, which is a file"
        raise ValueError(f"LRD_HOME {home} {where}, not a folder; set LRD_HOME to a folder (or unset it for "
                         f"{Path.home() / '.cache' / 'lrd'})")
    return write_error(existing)


class HomeReadOnly(ValueError):
    """What a command would write into a read-only ``$LRD_HOME`` (``what``, e.g. "2 of 5 units of
    lrd_families are not cached: they would be written there"), refused before it starts;
    ``why`` is the error a write met (:func:`check_home`)."""

    def __init__(self, what: str, why: OSError) -> None:
        home = lrd_home()
        super().__init__(f"LRD_HOME {home} cannot be written ({why.strerror or type(why).__name__}), and {what}; "
                         "set LRD_HOME to a writable folder (a copy of this one keeps its cache; lrd reads a "
                         "complete cache from a read-only folder)")


#: The errors of a write that found no room: the disk is full, or the user's quota is reached.
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


class DiskFull(OSError):
    """A write that found no room (``errno`` ENOSPC or EDQUOT): its message (:func:`disk_full`)
    names the file, the space left on its disk, where else to write and what was kept."""

    def __str__(self) -> str:
        return self.strerror


def _size(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


def disk_full(err: OSError, path: Path | str | None, *, scratch: bool = False) -> DiskFull:
    """``err`` (no room: :data:`NO_SPACE`), met writing ``path`` (None: not known), as a
    :class:`DiskFull` that says which file, how much space is free there, what to do (free
    space, or point at another disk ``$LRD_HOME`` when the file is in the cache, ``$TMPDIR``
    for ``scratch`` files, else the output option) and what was kept: every file lrd wrote
    before is whole (:func:`atomic_write`), so cached results stay valid and the same command
    goes on from them."""
    import shutil

    if isinstance(err, DiskFull):
        return err
    home = lrd_home()
    target = Path(os.path.abspath(path)) if path else home
    where = nearest_existing(target)
    where = where if where.is_dir() else where.parent
    try:
        free = f"{_size(shutil.disk_usage(where).free)} free in {where}"
    except OSError:
        free = f"free space in {where} unknown"
    if not path:
        which, move = f"(the write did not name its file; {free}, $LRD_HOME)", "$LRD_HOME, -o or --output-dir"
    elif target.is_relative_to(home):
        which, move = f"writing {target} ({free})", "$LRD_HOME (the cache; a new one starts empty)"
    elif scratch:
        which, move = f"writing {target} ({free})", "$TMPDIR (lrd's scratch files)"
    else:
        which, move = f"writing {target} ({free})", "the output (-o or --output-dir)"
    room = "disk quota exceeded" if err.errno == errno.EDQUOT else "no space left on the device"
    return DiskFull(err.errno, f"{room} {which}; free space there, or point {move} at a disk with room. Every file "
                               "written before is whole (each is written in full, then renamed into place): "
                               "cached results stay valid, and the same command goes on from them",
                    str(target) if path else None)


@contextmanager
def space_named(path: Path | str, *, scratch: bool = False) -> Iterator[None]:
    """Turn a write's "no room" error (:data:`NO_SPACE`) inside the block into :func:`disk_full`
    naming ``path`` (``scratch``: a temporary file)."""
    try:
        yield
    except DiskFull:
        raise
    except OSError as err:
        if err.errno not in NO_SPACE:
            raise
        raise disk_full(err, path, scratch=scratch) from err


#: The folders under :func:`lrd_home`, by what they hold.
FOLDERS = {"model": "models", "data": "data", "states": "states", "results": "results", "wheels": "wheels",
           "configs": "configs", "locks": "locks", "hashes": "hashes"}


def folder(kind: str) -> Path:
    """Where lrd keeps ``kind`` (a key of :data:`FOLDERS`): offline model and data packs, hidden
    states, cached unit results, downloaded wheels, model configs as transformers completes
    them (:func:`lrd.engine.models.completed_config_text`), the lock files of
    :func:`computing`, and the remembered sha256 of model files (:func:`content_sha256`).

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
    files that live writers hold are kept). A write that finds no room raises :class:`DiskFull`,
    which names ``path`` and the space left there.
    """
    with space_named(path):
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


# --------------------------------------------------------------------------------------------
# Content hashes of files, remembered by the file's identity

_SHA_CHUNK = 1 << 22


def _identity(path: Path) -> tuple[str, os.stat_result]:
    """What identifies one version of a file without reading it: its absolute path, and the
    device, inode, size, modification and status-change times of the file it leads to
    (``ctime`` cannot be set back by ``touch``: rewriting a file in place changes it even when
    its mtime is restored)."""
    st = os.stat(path)  # follows links: the file itself
    ident = f"{os.path.abspath(path)}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
    return ident, st


def _same_version(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


_KNOWN: dict[str, str] = {}  # identity -> sha256, what this process has read from or written to the memo


def content_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's whole content, computed once per version of the file.

    The digest is remembered in ``$LRD_HOME/hashes`` under a hash of the file's identity
    (absolute path, device, inode, size, ``mtime_ns``, ``ctime_ns``; :func:`_identity`),
    written atomically, so a later call (another process, another run) pays one ``stat`` and
    one small read (in the same process, the ``stat`` only). Any change to the file (rewritten in place, replaced, touched) gives a new
    identity and a new hash. A file that changes while it is hashed is hashed again; when the
    memo cannot be written (a read-only ``$LRD_HOME``) the hash is computed every time.

    Examples
    --------
    >>> import tempfile, hashlib
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     _ = f.write(b"abc"); f.flush()
    ...     content_sha256(f.name) == hashlib.sha256(b"abc").hexdigest()
    True
    """
    path = Path(path)
    ident, st = _identity(path)
    if (known := _KNOWN.get(ident)) is not None:
        return known
    memo = folder("hashes") / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.sha256"
    try:
        known = memo.read_text()
        if len(known) == 64:
            _KNOWN[ident] = known
            return known
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        pass
    for _ in range(3):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(_SHA_CHUNK):
                h.update(block)
            after = os.fstat(f.fileno())
        if _same_version(st, after):
            break
        ident, st = _identity(path)  # written to while read: hash the new version
        memo = folder("hashes") / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.sha256"
    else:
        return h.hexdigest()  # still changing: not remembered
    digest = _KNOWN[ident] = h.hexdigest()
    try:
        atomic_write(memo, lambda f: f.write(digest.encode()), ".sha256.tmp")
    except OSError:
        pass  # a read-only $LRD_HOME: hashed again next time
    return digest


# --------------------------------------------------------------------------------------------
# One process computes an entry; the others wait, and say for whom

#: Seconds a process waits on :func:`computing`'s lock before it says who holds it, and between
#: its further messages.
LOCK_NOTICE_AFTER_S = 2.0
LOCK_NOTICE_EVERY_S = 60.0


def _holder_file(lock_file: Path) -> Path:
    return lock_file.with_name(lock_file.name + ".holder")


def _write_holder(lock_file: Path, entry: Path) -> None:
    """Record who holds ``lock_file`` (pid, host, command, entry, start time) beside it."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv)[:300],
            "entry": str(entry), "since": time.time()}
    try:
        atomic_write(_holder_file(lock_file), lambda f: f.write(json.dumps(info).encode()), ".holder.tmp")
    except OSError:
        pass  # the lock works without it; waiters then cannot say who holds it


def _read_holder(lock_file: Path) -> dict | None:
    try:
        info = json.loads(_holder_file(lock_file).read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("pid"), int) else None


def process_state(pid: int) -> str:
    """``"running"``, ``"stopped"`` (SIGSTOP, or traced), ``"dead"`` or ``"unknown"`` for a
    process of this host (from ``/proc/<pid>/stat`` where there is one, else ``kill(pid, 0)``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        state = stat[stat.rindex(")") + 2:].split()[0]
        return {"T": "stopped", "t": "stopped", "Z": "dead", "X": "dead"}.get(state, "running")
    except FileNotFoundError:
        return "dead" if Path("/proc/self").exists() else _kill_zero(pid)
    except (OSError, ValueError, IndexError):
        return _kill_zero(pid)


def _kill_zero(pid: int) -> str:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "dead"
    except OSError:
        return "running"  # exists, owned by someone else
    return "running"


def holder_says(lock_file: Path, entry: Path, waited: float) -> tuple[str, bool]:
    """The message a waiter shows, and whether the holder is known to be dead.

    A holder of this host whose pid no longer exists cannot hold an OS lock itself (``flock``
    locks die with their process): the lock is held by a process that inherited it (a child
    started while it was held), and waiting for that one is pointless.
    """
    info = _read_holder(lock_file)
    where = f"waiting {waited:.0f} s for the lock of cache entry {entry.name} ({lock_file})"
    if info is None:
        return f"{where}, held by a process that did not say who it is (an older lrd)", False
    who = f"pid {info['pid']} on {info.get('host', '?')} ({info.get('command', '?')!s})"
    since = f", since {time.time() - float(info.get('since', time.time())):.0f} s"
    if info.get("host") != socket.gethostname():
        return f"{where}, held by {who}{since}; another host: lrd cannot check whether it is alive", False
    state = process_state(info["pid"])
    if state == "dead":
        return f"{where}: its holder {who} has ended; computing it here without the lock", True
    if state == "stopped":
        return (f"{where}, held by {who}{since}, which is STOPPED: resume it (kill -CONT {info['pid']}) or end "
                f"it (kill {info['pid']}); waiting", False)
    return f"{where}, held by {who}{since}, which is computing it; waiting", False


@contextmanager
def computing(entry: Path, *, notice_after: float = LOCK_NOTICE_AFTER_S,
              notice_every: float = LOCK_NOTICE_EVERY_S) -> Iterator[None]:
    """Hold the lock of a cache ``entry`` while computing it: one process computes, the others wait.

    Two processes that need the same missing entry (``lrd report`` beside ``lrd book``, two
    sweeps or their workers on one ``$LRD_HOME``) would otherwise both compute it. The caller checks the
    cache again once it holds the lock, and finds the entry the other process wrote. The lock
    is an OS file lock (``filelock``) in ``$LRD_HOME/locks``, named by the entry; it is released
    when the ``with`` block ends or its holder dies. Lock files are never deleted (deleting one
    while another process waits on it would let a third take a second lock).

    The holder writes its pid, host and command beside the lock (``<lock>.holder``). A waiter
    says on the terminal (:func:`lrd.engine.progress.notice`) who holds the entry after
    ``notice_after`` seconds, then every ``notice_every`` seconds: a stopped holder (SIGSTOP)
    is named as such, with the command that resumes it, and waited for (it may be resumed); a
    holder of this host that has ended (the lock then held by a process it started) is not
    waited for: the entry is computed here without the lock (writes are atomic, so the only
    cost of computing it twice is the time).
    """
    from filelock import FileLock, Timeout

    from lrd.engine.progress import notice

    locks = folder("locks")
    locks.mkdir(parents=True, exist_ok=True)
    lock_file = locks / f"{entry.parent.name}-{entry.name}.lock"
    lock = FileLock(lock_file)
    t0, next_notice = time.monotonic(), notice_after
    while True:
        try:
            lock.acquire(timeout=min(0.25, max(notice_after, 0.01)))
            break
        except Timeout:
            waited = time.monotonic() - t0
            if waited < next_notice:
                continue
            message, dead = holder_says(lock_file, entry, waited)
            if dead:  # seen twice: not a new holder that has yet to write its name over a dead one's
                time.sleep(0.5)
                message, dead = holder_says(lock_file, entry, time.monotonic() - t0)
            notice(f"lrd: {message}")
            if dead:
                yield
                return
            next_notice = waited + notice_every
    try:
        _write_holder(lock_file, entry)
        yield
    finally:
        _holder_file(lock_file).unlink(missing_ok=True)
        lock.release()
