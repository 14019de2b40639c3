"""A content-addressed cache of computed results (metric tables, scores, arrays), written atomically.

A result is stored under ``$LRD_HOME/results/<name>-<key>.lrd`` where ``key`` hashes everything
the result depends on:

* the **inputs**: the model's fingerprint (:func:`lrd.engine.models.fingerprint`, the same that keys
  the hidden-state cache), the task's content (every row, :func:`task_digest`) and the
  parameters of the computation;
* the **code**: the source of the computing function and of every ``lrd`` module it imports,
  transitively (:func:`code_digest`), plus the versions of the numerical libraries
  (:data:`LIBRARIES`). Editing any of those modules, or upgrading numpy, torch, ..., gives new
  keys, so a result computed by older code is never returned; the old entry is simply unused.

Writes go through a locked temporary sibling renamed into place (:func:`atomic_write`, shared
with :mod:`lrd.engine.extract`), so a killed writer leaves no entry, only a hidden ``.tmp`` file that
the next writer removes once no live process holds it.

Every entry (here and in the hidden-state cache of :mod:`lrd.engine.extract`) starts with a one-line
header holding the sha256 and length of its payload (:func:`write_checked`); the payload is
verified before it is read (:func:`open_checked`). An entry that fails the check,
or whose load fails in any way, is reported (a line naming the file, on the terminal:
:func:`lrd.engine.progress.notice`), removed and recomputed:
a damaged file is never served, and never makes every rerun crash.

No entry can run code when it is read. The checksum says an entry is whole, not who wrote it,
and ``$LRD_HOME/results`` may be shared (a cluster's cache): so results are stored as data
only (:mod:`lrd.engine.codec`: a JSON structure and ``.npy`` arrays, no pickle), the hidden
states as ``.npy`` arrays read with ``allow_pickle=False``. A result a unit returns that this
format cannot hold fails when it is stored, naming its type. Entries of older lrd versions
(``.pkl`` pickles) are never read, whatever their name.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import os
import re
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from lrd.engine import codec
from lrd.engine.store import atomic_write, folder  # noqa: F401  (atomic_write: re-exported)

#: Libraries whose versions are part of every result key (an upgrade can change numbers).
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "torch", "transformers", "mteb")


def results_dir(root: str | Path | None = None) -> Path:
    """Where results are cached: ``root``, or ``$LRD_HOME/results``."""
    return Path(root) if root is not None else folder("results")


def stable_json(value: Any) -> Any:
    """``json.dumps(default=...)`` hook giving the same text in every process.

    Sets become sorted lists (a set's iteration order follows ``PYTHONHASHSEED``), numpy
    scalars their value, other objects their ``str``; an object whose text holds a memory
    address (``<... at 0x7f...>``) differs between processes, so it is a TypeError.
    """
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda v: json.dumps(v, sort_keys=True, default=stable_json))
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy scalar
        return value.item()
    text = str(value)
    if re.search(r" at 0x[0-9a-fA-F]+", text):
        raise TypeError(f"{text} has no stable text form (its repr holds a memory address), so it cannot "
                        "enter a cache key; pass plain values (numbers, strings, lists, dicts)")
    return text


def digest(payload: Any) -> str:
    """sha256 (32 hex digits) of a JSON-able payload, with sorted keys; the same in every process
    (:func:`stable_json`)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=stable_json).encode()).hexdigest()[:32]


# --------------------------------------------------------------------------------------------
# Checked entries: a header with the payload's sha256, verified before anything reads it

_HEADER = b"lrd-entry 1 sha256 "
_HEADER_SIZE = len(_HEADER) + 64 + 1 + 20 + 1  # "<prefix><64 hex> <20-digit length>\n"
_CHUNK = 1 << 20


class CorruptEntry(ValueError):
    """A cache file whose payload does not match its header (or has no valid header)."""


class _HashingWriter:
    """A binary file's ``write`` that also hashes and counts what passes through."""

    def __init__(self, f: BinaryIO):
        self.f, self.sha, self.length = f, hashlib.sha256(), 0

    def write(self, data) -> int:
        self.sha.update(data)
        self.length += memoryview(data).nbytes
        return self.f.write(data)

    def flush(self) -> None:
        self.f.flush()


def write_checked(path: Path, write: Callable[[BinaryIO], None], suffix: str) -> None:
    """Write an entry atomically (:func:`atomic_write`): a header line holding the sha256 and
    length of the payload (``lrd-entry 1 sha256 <64 hex> <20-digit length>``), then the payload,
    which ``write(f)`` writes to ``f`` (streamed and hashed on the way: nothing is held twice)."""

    def checked(f: BinaryIO) -> None:
        f.write(b"\0" * _HEADER_SIZE)  # filled in once the payload is known
        out = _HashingWriter(f)
        write(out)
        f.seek(0)
        f.write(_HEADER + f"{out.sha.hexdigest()} {out.length:020d}\n".encode())
        f.seek(0, os.SEEK_END)

    atomic_write(path, checked, suffix)


@contextmanager
def open_checked(path: Path) -> Iterator[BinaryIO]:
    """The file at ``path``, positioned at its payload, after verifying the payload's sha256 and
    length against the header (read in 1 MiB chunks: the payload is not held twice in memory).

    Raises
    ------
    FileNotFoundError
        No such entry.
    CorruptEntry
        No valid header, a different length or a different checksum.
    """
    with open(path, "rb") as f:
        line = f.readline(_HEADER_SIZE)
        fields = line[len(_HEADER):].split() if line.startswith(_HEADER) and line.endswith(b"\n") else []
        if len(fields) != 2 or not fields[1].isdigit():
            raise CorruptEntry(f"{path} has no lrd-entry header (written by an older lrd, or damaged)")
        want, length = fields[0].decode("ascii", "replace"), int(fields[1])
        h, n = hashlib.sha256(), 0
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
        if n != length or h.hexdigest() != want:
            raise CorruptEntry(f"{path} is damaged: its payload ({n} bytes) does not match the checksum "
                               f"and length ({length} bytes) written with it")
        f.seek(len(line))
        yield f


def discard(path: Path, err: BaseException) -> None:
    """Report an unusable cache entry (one line naming the file and the reason, on the terminal
    of the ``lrd`` command, never in a chapter's outputs: :func:`lrd.engine.progress.notice`)
    and remove it."""
    from lrd.engine.progress import notice

    notice(f"lrd: cache entry {path} could not be used ({type(err).__name__}: {err}); "
           "it was removed and will be recomputed")
    path.unlink(missing_ok=True)


def verified(name: str, key: str, root: str | Path | None = None) -> str:
    """``"cached"``, ``"missing"`` or ``"damaged"``: whether the entry exists, its payload
    matches its checksum and starts as a data document does (:func:`open_checked`: the whole
    file is read, nothing is decoded, nothing is removed). For ``lrd sweep --dry-run``, which
    must count a damaged entry (or a pickle put in its place) as one to compute."""
    try:
        with open_checked(entry_path(name, key, root)) as f:
            return "cached" if f.read(len(codec.MAGIC)) == codec.MAGIC else "damaged"
    except FileNotFoundError:
        return "missing"
    except (CorruptEntry, OSError):
        return "damaged"


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` (None when it is not a Python source module)."""
    return _find_module_file(name)


#: The ``lrd`` package's folder: its modules' files are found there without importing them.
_PACKAGE = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def _find_module_file(name: str) -> Path | None:
    """An ``lrd`` module's file from the package's folder (``importlib.util.find_spec`` would
    import its parent packages, e.g. all of ``lrd.metrics`` and scikit-learn, to find
    ``lrd.metrics.gfmi``); other modules through ``find_spec``."""
    if name == "lrd" or name.startswith("lrd."):
        parts = name.split(".")[1:]
        folder = _PACKAGE.joinpath(*parts)
        for path in ([folder.with_suffix(".py")] if parts else []) + [folder / "__init__.py"]:
            if path.is_file():
                return path
        return None
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec and spec.origin and spec.origin.endswith(".py") else None


def _lrd_imports(path: Path) -> set[str]:
    """``lrd`` modules imported anywhere in a source file (top level or inside functions)."""
    return set(_parsed_imports(str(path), path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=None)
def _parsed_imports(path: str, mtime_ns: int) -> frozenset[str]:
    """:func:`_lrd_imports` of one version of a file (parsed once per process and version)."""
    path = Path(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("lrd.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "lrd" or node.module.startswith("lrd."):
                if node.module != "lrd":
                    found.add(node.module)
                # `from lrd import stats` / `from lrd.metrics import frenet`: submodules too
                found |= {f"{node.module}.{a.name}" for a in node.names if _module_file(f"{node.module}.{a.name}")}
    return frozenset(found)


@functools.cache
def module_closure(*roots: str) -> tuple[str, ...]:
    """The ``lrd`` modules ``roots`` import, transitively (by reading their sources), sorted.

    ``lrd/__init__.py`` is not followed (it imports every module); ``import lrd`` followed by
    ``lrd.x(...)`` is not seen, so library modules import what they use by name.
    """
    seen: set[str] = set()
    todo = [r for r in roots if r != "lrd"]
    while todo:
        name = todo.pop()
        if name in seen or (path := _module_file(name)) is None:
            continue
        seen.add(name)
        todo += [m for m in _lrd_imports(path) if m not in seen]
    return tuple(sorted(seen))


def code_digest(func: Callable, modules: Iterable[str] = ()) -> str:
    """Hash of the code behind ``func``: its own source, the source of every ``lrd`` module its
    module imports (transitively, :func:`module_closure`) and of ``modules``, and the versions
    of :data:`LIBRARIES` and of lrd.

    Any edit to one of those files changes the digest (and so every key built on it).
    """
    from lrd._version import __version__

    h = hashlib.sha256(inspect.getsource(func).encode())
    for name in module_closure(func.__module__, *modules):
        h.update(name.encode() + b"\0" + _module_file(name).read_bytes())
    h.update(json.dumps({"lrd": __version__, **library_versions(metadata.version)}, sort_keys=True).encode())
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def library_versions(lookup: Callable[[str], str] = metadata.version) -> dict[str, str | None]:
    """The installed versions of :data:`LIBRARIES` (None when absent), looked up once per
    process (each lookup reads package metadata from disk) and per ``lookup`` function."""
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = lookup(lib)
        except metadata.PackageNotFoundError:
            versions[lib] = None
    return versions


def task_digest(task) -> str:
    """Content hash of a :class:`lrd.engine.tasks.Task`: name, type, labels and every row."""
    frame = task.frame
    payload = {"name": task.name, "type": task.type, "labels": task.label_names, "columns": list(frame.columns),
               "rows": frame.to_json(orient="values", default_handler=str)}
    return digest(payload)


#: The suffix of result entries (data only, :mod:`lrd.engine.codec`), and of the pickles older
#: lrd versions wrote, which are never read.
SUFFIX, LEGACY_SUFFIX = ".lrd", ".pkl"


def entry_path(name: str, key: str, root: str | Path | None = None) -> Path:
    """The cache file of a result (``<root>/<name>-<key>.lrd``)."""
    return results_dir(root) / f"{name}-{key}{SUFFIX}"


_MISSING = object()


def load(name: str, key: str, root: str | Path | None = None, default: Any = _MISSING) -> Any:
    """The cached result, or ``default`` (a KeyError when no default) when there is none.

    The entry's checksum is verified before it is read (:func:`open_checked`), and what is read
    is data only (:func:`lrd.engine.codec.load`: nothing in the file is executed). A damaged
    entry, or one whose load fails in any way (not a data document, e.g. a pickle put in its
    place; a record class that is gone; a MemoryError, ...), is reported (:func:`discard`: a line
    naming the file), deleted, and counts as missing, so the caller recomputes it. So is a pickle
    an older lrd wrote under the same name (``.pkl``), which is never unpickled.
    """
    path = entry_path(name, key, root)
    try:
        with open_checked(path) as f:
            return codec.load(f)
    except FileNotFoundError:
        legacy = path.with_suffix(LEGACY_SUFFIX)
        if legacy.is_file():
            discard(legacy, codec.BadPayload("a pickle written by an older lrd; pickles can run code when read, "
                                             "so lrd never reads them"))
    except Exception as err:  # any failure to load means the entry is unusable: recompute it
        discard(path, err)
    if default is _MISSING:
        raise KeyError(f"no cached result {path.name} in {path.parent}")
    return default


def save(name: str, key: str, value: Any, root: str | Path | None = None) -> Path:
    """Store ``value`` (DataFrame, array, dict, unit record, ...: what :mod:`lrd.engine.codec`
    holds) atomically, with the checksum of its payload (:func:`write_checked`); its path.

    Raises
    ------
    lrd.engine.codec.UnsupportedValue
        A part of ``value`` that is not data the cache can hold (named with its type and place);
        nothing is written.
    """
    path = entry_path(name, key, root)
    write_checked(path, lambda f: codec.dump(value, f), f"{SUFFIX}.tmp")
    _say_legacy(path.parent)
    return path


_LEGACY_SAID: set[Path] = set()


def _say_legacy(folder: Path) -> None:
    """Once per process and folder: say how many pickles of older lrd versions lie in ``folder``
    (never read, only taking space) and how to remove them."""
    if folder in _LEGACY_SAID:
        return
    _LEGACY_SAID.add(folder)
    old = sum(1 for _ in folder.glob(f"*{LEGACY_SUFFIX}"))
    if old:
        from lrd.engine.progress import notice

        notice(f"lrd: {folder} holds {old} result entries of an older lrd ({LEGACY_SUFFIX} pickles), which lrd "
               f"never reads (pickles can run code when read); `rm {folder}/*{LEGACY_SUFFIX}` reclaims their space")


def contains(name: str, key: str, root: str | Path | None = None) -> bool:
    return entry_path(name, key, root).is_file()
