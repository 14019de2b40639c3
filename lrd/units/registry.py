"""Which function declares each chapter's units: a lazy registry of ``"module:function"``
strings (as lm-evaluation-harness's ``lm_eval/api/registry.py``), so that listing the chapters
or checking a name imports no chapter module (and no torch)."""

from __future__ import annotations

import importlib
import inspect
from typing import Callable

#: Chapter -> ``"module:function"`` of the function that declares its units from its parameters.
CHAPTER_UNITS: dict[str, str] = {
    "models_and_tasks": "lrd.units.models_and_tasks:models_and_tasks_units",
    "lrd_families": "lrd.units.lrd_families:lrd_families_units",
    "mid_layer": "lrd.units.mid_layer:mid_layer_units",
    "cosine_vs_ablation": "lrd.units.cosine_vs_ablation:cosine_vs_ablation_units",
    "cayley_aggregation": "lrd.units.cayley_aggregation:cayley_aggregation_units",
    "selection_and_pruning": "lrd.units.selection_and_pruning:selection_and_pruning_units",
    "null_calibration": "lrd.units.registry:no_units",  # the appendix simulates null panels; it runs no model
    "authors_code": "lrd.units.registry:no_units",  # the appendix reads other chapters' units (lrd.units.authors_code)
}


def no_units() -> list:
    """The units of a chapter that runs no model: none."""
    return []


def declaration(chapter: str) -> Callable:
    """The function that declares ``chapter``'s units, imported on first use.

    Raises
    ------
    ValueError
        ``chapter`` is not registered; the message lists the chapters that are.
    """
    if chapter not in CHAPTER_UNITS:
        raise ValueError(f"chapter {chapter!r} declares no units; chapters with units: {', '.join(CHAPTER_UNITS)}")
    module, _, name = CHAPTER_UNITS[chapter].partition(":")
    return getattr(importlib.import_module(module), name)


def units(chapter: str, parameters: dict | None = None, *, checked: bool = False) -> list:
    """Every unit a chapter computes with ``parameters`` (the rest from the notebook's defaults).

    Parameters are checked as for ``lrd run`` (:func:`lrd.book.notebooks.validate_parameters`)
    unless ``checked`` says the caller did already (``lrd sweep`` checks every chapter once,
    before anything loads).
    """
    from lrd.book.notebooks import default_parameters, validate_parameters

    declaration(chapter)  # an unregistered chapter is named as such before its notebook is read
    defaults = default_parameters(chapter)
    values = dict(parameters or {})
    if not checked:
        values, _ = validate_parameters(chapter, values, defaults=defaults)
    return declared(chapter, {**defaults, **values})


def declared(chapter: str, values: dict) -> list:
    """The units ``chapter`` declares for ``values``, a complete set of its parameters (those its
    declaration does not take are ignored), unchecked: :func:`units` checks and fills them."""
    declare = declaration(chapter)
    wanted = inspect.signature(declare).parameters
    found = declare(**{k: v for k, v in values.items() if k in wanted})
    return [u for part in found.values() for u in part] if isinstance(found, dict) else list(found)


def unit_functions() -> dict:
    """Every unit function of every chapter module, by name: the functions of a registered
    declaration's module that take the loaded ``model`` first (imports every chapter module)."""
    found = {}
    for spec in CHAPTER_UNITS.values():
        module = importlib.import_module(spec.partition(":")[0])
        for name, f in sorted(vars(module).items()):
            if (inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_")
                    and list(inspect.signature(f).parameters)[:1] == ["model"]):
                found[name] = f
    return found
