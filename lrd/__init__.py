"""lrd: layer-wise representation dynamics of language models, measured reproducibly.

The package face: every public name below is imported from its module on first use, so
``import lrd`` (and ``lrd run``'s parameter checks, which fail a bad value in about a second)
does not load torch, transformers or matplotlib until something needs them.
"""

from __future__ import annotations

from lrd._lazy import lazy_attributes
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

__getattr__, __dir__, _names = lazy_attributes(__name__, _SUBMODULES, _EXPORTS)
__all__ = sorted([*_names, "__version__"])
