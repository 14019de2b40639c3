"""The unit machinery: a chapter's expensive work as cached calls of plain functions.

A **unit** is one call of a unit function of a chapter's module (:mod:`lrd.units.mid_layer`,
...), e.g. ``lrd_families_profile(model, task="sst2", n_samples=300, ...)``: it extracts a
model's states for a task and computes that chapter's measurements on them, and returns a small
frozen record checked when built. The chapters call these functions (through :func:`compute`),
and so does ``lrd sweep`` (:mod:`lrd.units.sweep`) on a Dask cluster; there is no second
implementation. Every unit's result is cached by :mod:`lrd.engine.cache` under a key of

* the unit's function name and parameters,
* the model's fingerprint (:func:`lrd.engine.models.source_fingerprint`: known from the files
  for an offline key or local folder without loading the model; a hub model is loaded to know
  it), which includes the dtype the model computes in (``float32`` by default),
* the content of every task the unit reads (:func:`lrd.engine.cache.task_digest`),
* the code it runs (:func:`unit_code`): the unit function's source, the sources of the
  same-module helpers and record classes it uses, and of every ``lrd`` module these import,
  transitively, plus library versions (:func:`unit_code_digest`),
* the float-noise perturbation ``LRD_PERTURB`` when it is set (:mod:`lrd.engine.perturb`).

So a chapter executed after a sweep (or a second time) loads its units from the cache
without loading any model; any change to the code a unit runs recomputes it, and nothing
else does. The device is not part of the key (as for the hidden-state cache): units computed
on a GPU worker serve a chapter executed on a CPU.

Unit functions take the loaded model first and keyword parameters that are JSON values; they
import what they use inside their body or name it at module level (both are seen by
:func:`unit_code`).
"""

from __future__ import annotations

import functools
import gc
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from lrd.engine import cache
from lrd.engine.models import LoadedModel, load_model, model_source, source_fingerprint
from lrd.engine.perturb import perturbation_level
from lrd.engine.tasks import load_task, task_identity
from lrd.units.records import relabel

#: Modules every unit depends on besides its own code: model loading and tasks.
COMMON_MODULES = ("lrd.engine.models", "lrd.engine.tasks")


# --------------------------------------------------------------------------------------------
# The unit record, its key, and the serial runner


@dataclass(frozen=True)
class Unit:
    """One cached call ``func(load_model(model, device, dtype=dtype), **params)``.

    Attributes
    ----------
    chapter : str
        The chapter that declares it.
    func : callable
        A unit function of this module.
    model : str
        Offline key, local folder or hub id, as the chapter's parameter gives it.
    params : dict
        Keyword arguments (JSON values); all of them enter the key.
    tasks : tuple of (str, int or None)
        ``(name, n)`` of every task the unit reads with :func:`lrd.load_task`; their content
        enters the key.
    device : str
        Where the model runs; not part of the key.
    dtype : str
        What the model computes in (``"float32"``, ``"bfloat16"``, ``"float16"``); part of the
        key through the model's fingerprint.
    prepare : callable, optional
        ``prepare(model, **params)`` computes and caches the unit's forward passes (its hidden
        states) and nothing else, so that the unit itself, run afterwards on a one-thread
        worker, finds them cached and does only its single-threaded work
        (:func:`lrd.units.sweep.prepare_units`). Not part of the key: what it caches is keyed by its own content.
    """

    chapter: str
    func: Callable
    model: str
    params: dict = field(default_factory=dict)
    tasks: tuple = ()
    device: str = "cpu"
    dtype: str = "float32"
    prepare: Callable | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def label(self) -> str:
        """Human-readable identity: ``lrd_families_profile(minilm, task=sst2)``."""
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items() if k in ("task", "tasks", "variant"))
        return f"{self.name}({self.model}{', ' + shown if shown else ''})"

    def key(self, model_fingerprint: str | None = None) -> str | None:
        """The cache key; None when the model is a hub id not yet loaded (pass its fingerprint)."""
        fp = model_fingerprint or source_fingerprint(self.model, self.dtype)
        if fp is None:
            return None
        payload = {"unit": self.name, "model": fp, "params": self.params,
                   "tasks": [[t, n, _task_digest(t, n)] for t, n in self.tasks], "code": unit_code_digest(self.func)}
        level = perturbation_level()  # LRD_PERTURB: perturbed results are cached apart from exact ones
        return cache.digest({**payload, "perturb": level} if level else payload)

    def is_cached(self, root=None) -> bool | None:
        """Whether the result is in the cache (None when unknown: a hub model not loaded)."""
        key = self.key()
        return None if key is None else cache.contains(self.name, key, root)


def _task_digest(name: str, n: int | None) -> str:
    """The content digest of task ``name`` (``n`` rows), computed once per process and build of
    its data packs (:func:`lrd.engine.tasks.task_identity`): a persistent Dask worker whose
    packs were rebuilt computes it again, so its keys stay those of the client."""
    return _task_digest_of(name, n, task_identity(name))


@functools.lru_cache(maxsize=256)
def _task_digest_of(name: str, n: int | None, identity: tuple | None) -> str:
    return cache.task_digest(load_task(name, n=n))


def _code_of(obj) -> list[types.CodeType]:
    """The code objects of a function (with its nested functions and comprehensions), or of
    every method a class defines (a record's ``__post_init__`` check)."""
    if inspect.isclass(obj):
        found = [f.__code__ for f in vars(obj).values() if inspect.isfunction(f)]
    else:
        found = [obj.__code__]
    todo = list(found)
    while todo:
        for const in todo.pop().co_consts:
            if isinstance(const, types.CodeType):
                found.append(const)
                todo.append(const)
    return found


def _referenced(func: Callable) -> tuple[list[Callable], set[str]]:
    """Same-module functions and classes (the unit's record) ``func`` uses by name, and the
    other lrd modules it uses.

    Names are visited in sorted order, so the helpers come in the same order in every process
    (iterating a set of strings would follow ``PYTHONHASHSEED``).
    """
    helpers, modules = [], set()
    code_names = {name for code in _code_of(func) for name in code.co_names}
    globals_ = sys.modules[func.__module__].__dict__
    for name in sorted(code_names):
        obj = globals_.get(name)
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith("lrd.") and obj.__name__ != func.__module__:
                modules.add(obj.__name__)
            continue
        mod = getattr(obj, "__module__", None) or ""
        if mod == func.__module__ and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj is not func:
            helpers.append(obj)
        elif mod.startswith("lrd.") and mod != func.__module__:
            modules.add(mod)
    return helpers, modules


def _imported_in_body(func: Callable) -> set[str]:
    """``lrd`` modules a function (or a class's methods) imports inside its body."""
    import ast
    import textwrap

    found = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(func)))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("lrd."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("lrd.")}
    return found


def unit_code(func: Callable) -> tuple[list[Callable], tuple[str, ...]]:
    """What a unit runs: its function with the helpers and record classes of its own module
    that it uses (transitively, sorted by name), and the ``lrd`` modules these use, with
    :data:`COMMON_MODULES`, closed under their imports (:func:`lrd.engine.cache.module_closure`).

    Only modules a unit really imports are listed: a chapter's unit module imports neither
    ``lrd.verdicts`` nor ``lrd.book`` (``tests/test_layers.py``), and neither the package face
    ``lrd`` nor this module are followed, so rewording a verdict, a plot or a glued sentence,
    or editing the unit machinery, changes no unit key.
    """
    seen, todo, modules = [], [func], set(COMMON_MODULES)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.append(f)
        helpers, mods = _referenced(f)
        todo += helpers
        modules |= mods | _imported_in_body(f)
    # in name order, not discovery order: the key must not depend on how the walk went
    return sorted(seen, key=lambda f: f.__qualname__), cache.module_closure(*sorted(modules))


def unit_modules(func: Callable) -> tuple[str, ...]:
    """The ``lrd`` modules whose source enters a unit's key (:func:`unit_code`), sorted."""
    return unit_code(func)[1]


@functools.cache
def unit_code_digest(func: Callable) -> str:
    """Hash of the code a unit runs (:func:`unit_code`): the sources of the unit function and
    of its own module's helpers and record classes, of every module in :func:`unit_modules`,
    and the library versions (:func:`lrd.engine.cache.code_digest`)."""
    functions, modules = unit_code(func)
    sources = "\n".join(inspect.getsource(f) for f in functions)
    return cache.digest([sources, cache.code_digest(_no_op, modules)])


def _no_op():  # the anchor of code_digest's module walk: lrd.units' own imports are not followed
    pass


_no_op.__module__ = "lrd"


class ModelSlot:
    """Loads models on demand and holds at most one at a time (memory stays bounded).

    A model that fails to load is remembered, so its remaining units fail at once with the
    same error. With ``lazy`` (the default) a model's weights are read only when a unit uses
    them (:func:`lrd.engine.models.load_model`): a unit whose forward passes are cached (the
    ``prepare`` step ran them) needs its config, tokenizer and fingerprint only.
    """

    def __init__(self, lazy: bool = True):
        self.lazy = lazy
        self.name: tuple | None = None
        self.model: LoadedModel | None = None
        self.error: BaseException | None = None

    def get(self, name: str, device: str = "cpu", dtype: str = "float32") -> LoadedModel:
        if self.name != (name, device, dtype):
            self.clear()
            self.name = (name, device, dtype)
            try:
                self.model = load_model(name, device=device, dtype=dtype, lazy=self.lazy)
            except Exception as err:
                self.error = err
        if self.error is not None:
            raise self.error
        return self.model

    def clear(self) -> None:
        self.name, self.model, self.error = None, None, None
        gc.collect()


@dataclass(frozen=True)
class Stored:
    """A unit's result as the cache holds it: the record, and the labels of the request that
    computed it (``{"name": ..., "source": ...}``, :func:`request_labels`). The key is the
    model's content, so two folders with the same files share the entry; the record is given
    the labels of the request that reads it (:func:`load_result`)."""

    value: Any
    labels: dict


def request_labels(unit: Unit) -> dict[str, str]:
    """What a record names a unit's model by: ``name`` (what the request says, as
    :attr:`lrd.engine.models.LoadedModel.name`) and ``source`` (as its ``summary()`` gives it)."""
    return {"name": unit.model, "source": model_source(unit.model)}


def load_result(unit: Unit, key: str, root=None) -> Any | None:
    """The unit's cached record under ``key``, labelled for this request (:func:`relabel`:
    model name and source replaced where they differ), or None when there is none. An entry
    without labels (an older lrd's) counts as missing."""
    stored = cache.load(unit.name, key, root, default=None)
    if not isinstance(stored, Stored):
        return None
    now = request_labels(unit)
    return relabel(stored.value, {stored.labels[k]: now[k] for k in now if k in stored.labels})


def run_unit(unit: Unit, slot: ModelSlot | None = None, *, root=None) -> tuple[Any, str]:
    """The unit's result, from the cache or computed and cached; and ``"cached"`` or ``"computed"``.

    The model is loaded (through ``slot``, which keeps it for the next unit of the same
    model) only when the result must be computed, or to learn a hub model's fingerprint.
    A cached result names the model as this unit does (:func:`load_result`), whichever
    request computed it.
    """
    slot = slot or ModelSlot()
    key = unit.key()
    if key is None:
        key = unit.key(slot.get(unit.model, unit.device, unit.dtype).fingerprint)
    value = load_result(unit, key, root)
    if value is not None:
        return value, "cached"
    model = slot.get(unit.model, unit.device, unit.dtype)
    value = unit.func(model, **unit.params)
    cache.save(unit.name, key, Stored(value, request_labels(unit)), root)
    return value, "computed"


def compute(units: Sequence[Unit], *, root=None) -> list:
    """Results of ``units`` in order, serially, each from the cache or computed and cached.

    Consecutive units of one model share one load of it. This is what the chapters call; ``lrd
    sweep`` runs the same :func:`run_unit` on a Dask cluster first.
    """
    slot = ModelSlot()
    try:
        return [run_unit(u, slot, root=root)[0] for u in units]
    finally:
        slot.clear()

