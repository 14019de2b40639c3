"""Lazy attributes of a package (PEP 562): its public names are imported on first use.

One implementation for the subpackages whose faces must stay light (``lrd.book``,
``lrd.units``): ``import lrd.book`` loads neither papermill nor matplotlib.
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable


def lazy_attributes(package: str, submodules: tuple[str, ...], exports: dict[str, str]
                    ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    submodules : tuple of str
        Submodules reachable as ``package.<name>``.
    exports : dict
        Public name -> the module that defines it; the value is cached in the package on first use.

    Examples
    --------
    >>> getattr_, dir_, all_ = lazy_attributes("lrd", ("tables",), {"per_layer": "lrd.tables"})
    >>> all_
    ['per_layer', 'tables']
    >>> getattr_("per_layer").__name__
    'per_layer'
    """
    names = sorted([*submodules, *exports])

    def __getattr__(name: str):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__, names
