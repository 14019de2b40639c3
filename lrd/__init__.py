"""lrd: layer-wise representation dynamics of language models, measured reproducibly.

The package face: every public name below is imported from its module on first use, so
``import lrd`` (and ``lrd run``'s parameter checks, which fail a bad value in about a second)
does not load torch, transformers or matplotlib until something needs them.
"""

from __future__ import annotations

import importlib
import sys
import types

from lrd._version import __version__  # noqa: F401  (the face shows it)

#: Submodules reachable as ``lrd.<name>`` after ``import lrd``.
_SUBMODULES = ("aggregation", "book", "engine", "methods", "metrics", "tables", "units", "verdicts")
#: Re-exported names and the module that defines each.
_EXPORTS = {
    "removed_layers": "lrd.engine.ablation", "fetch": "lrd.engine.packs", "lrd_home": "lrd.engine.store",
    "evaluate_layers": "lrd.methods.evaluate", "extract": "lrd.engine.extract", "extract_variants": "lrd.engine.extract",
    "pool": "lrd.engine.extract", "LoadedModel": "lrd.engine.models", "load_model": "lrd.engine.models", "Glue": "lrd.book.glue",
    "Verdict": "lrd.verdicts", "Task": "lrd.engine.tasks", "load_task": "lrd.engine.tasks",
}

__all__ = sorted([*_SUBMODULES, *_EXPORTS, "__version__"])


class _Face(types.ModuleType):
    """Loads a public name's module on first access. ``lrd.extract`` is the function (as it
    always was); its module is ``lrd.engine.extract``, and should a submodule of the face ever
    share an exported name, binding it does not replace the export."""

    def __getattr__(self, name: str):
        if name in _SUBMODULES:
            return importlib.import_module(f"lrd.{name}")
        if name in _EXPORTS:
            value = getattr(importlib.import_module(_EXPORTS[name]), name)
            super().__setattr__(name, value)
            return value
        raise AttributeError(f"module 'lrd' has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return  # the import system binding a same-named submodule; keep the export
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *__all__})


sys.modules[__name__].__class__ = _Face
