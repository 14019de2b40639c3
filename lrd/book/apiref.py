"""Sphinx extension of the API reference (``book/manual/api.md``): autodoc, autosummary and
napoleon, with two repairs for a package that re-exports its public names.

- **One object, two paths.** A function is documented under the name a reader calls
  (``lrd.extract``) while docstrings name it by its defining module
  (``lrd.engine.extract.extract``): a Python cross-reference that finds no target, but names the
  same function, class, method or container as a documented entry, links to that entry. A name
  that is no documented object stays unresolved, and the strict build (``-n``) says so.
- **A re-exported constant keeps its comment.** autodoc reads a constant's ``#:`` comment from the
  module it is documented in (``lrd.verdicts``), and otherwise shows its type's docstring (a dict's);
  here it shows the ``#:`` comment of the ``lrd`` module that defines it, or nothing.

Enable with ``sphinx: extra_extensions: [lrd.book.apiref]`` in ``_config.yml`` (it loads autodoc,
autosummary and napoleon itself).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from typing import Any

from sphinx import addnodes

#: Kinds of object matched by identity: values such as ``3`` or ``"mean"`` are shared by unrelated
#: names, so they never make two names one.
_MATCHED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, types.ModuleType,
            property, dict, list, tuple, frozenset, set)


_MISSING = object()


def _lookup(path: str) -> Any:
    """The object a dotted path names (module, then attributes), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - any failure means "not this prefix"
            continue
        for name in parts[cut:]:
            if isinstance(obj, type):
                fields = getattr(obj, "__dataclass_fields__", {})
                found = inspect.getattr_static(obj, name, _MISSING)
                obj = fields.get(name) if found is _MISSING else found  # a dataclass field without default
            else:
                obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _key(obj: Any) -> int | None:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return id(obj) if isinstance(obj, _MATCHED) else None


def _documented(env) -> dict[int, str]:
    """id of each documented object -> its documented name (computed once per build)."""
    cache = getattr(env, "_lrd_documented", None)
    objects = env.get_domain("py").objects
    if cache is None or cache[0] != len(objects):
        found = {}
        for name, entry in objects.items():
            if entry.aliased:
                continue
            key = _key(_lookup(name)) if name.startswith("lrd") else None
            if key is not None:
                found.setdefault(key, name)
        cache = env._lrd_documented = (len(objects), found)
    return cache[1]


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def _source(node) -> str:
    """Where a node was written: the nearest source among it and its parents."""
    return next((str(a.source) for a in _ancestors(node) if getattr(a, "source", None)), "")


def _homes(path: str, obj: Any) -> list[str]:
    """The modules of ``lrd`` that define the object ``path`` names (a constant: every module
    holding it under that name)."""
    if inspect.ismodule(obj):
        return [obj.__name__]
    if isinstance(getattr(obj, "__module__", None), str):
        return [obj.__module__]
    attr = path.rsplit(".", 1)[-1]
    return [m for m in sorted(sys.modules) if (m == "lrd" or m.startswith("lrd.")) and obj is not None
            and vars(sys.modules[m]).get(attr, None) is obj]


def _contexts(node) -> list[str]:
    """Where a reference's relative name may live, most specific first: the documented module and
    class, and for a reference inside a docstring, the documented object, its parents and the
    modules that define them (``:func:`power``` in a docstring of ``lrd.verdicts.calibration``)."""
    module, cls = node.get("py:module"), node.get("py:class")
    found = [f"{module}.{cls}" if module and cls else None, module]
    source = _source(node)
    if "docstring of " in source:
        parts = source.split("docstring of ", 1)[1].split(":", 1)[0].split(".")
        for cut in range(len(parts), 0, -1):
            parent = ".".join(parts[:cut])
            found += [parent, *_homes(parent, _lookup(parent))]
    return list(dict.fromkeys(c for c in found if c))


def resolve_alias(app, env, node, contnode):
    """``missing-reference``: link a Python reference to the documented entry of the same object.

    Failing that, a reference written in a docstring (or in an autosummary row, the first line of
    a docstring rendered in full below it) to an object of ``lrd`` that exists but is not on the
    API page is shown as code, unlinked; any other miss is left to warn.
    """
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    candidates = [target, *(f"{c}.{target}" for c in _contexts(node))]
    documented = _documented(env)
    exists = False
    for path in candidates:
        obj = _lookup(path) if path.startswith("lrd") else None
        exists = exists or obj is not None
        key = _key(obj)
        if key in documented:
            domain = env.get_domain("py")
            for role in (node["reftype"], "obj"):
                ref = domain.resolve_xref(env, node["refdoc"], app.builder, role, documented[key], node, contnode)
                if ref is not None:
                    return ref
    source = _source(node)
    in_signature = any(isinstance(a, addnodes.desc_signature) for a in _ancestors(node))
    if in_signature or (exists and "docstring of " in source) or "<autosummary>" in source:
        return contnode  # the reference's text, as written, without a link
    return None


def constant_comment(app, what: str, name: str, obj: Any, options, lines: list[str]) -> None:
    """``autodoc-process-docstring`` (before napoleon): a re-exported constant's ``#:`` comment."""
    if what != "data" or inspect.ismodule(obj) or inspect.isclass(obj) or callable(obj):
        return
    from sphinx.pycode import ModuleAnalyzer

    def comment(module: str, attr: str) -> list[str] | None:
        try:
            docs = ModuleAnalyzer.for_module(module).find_attr_docs()
        except Exception:  # noqa: BLE001 - no source to read
            return None
        return list(docs[("", attr)]) if ("", attr) in docs else None

    module, attr = name.rsplit(".", 1)
    if comment(module, attr) is not None:
        return  # autodoc found it where it is documented
    for other in sorted(m for m in sys.modules if m == "lrd" or m.startswith("lrd.")):
        if other != module and vars(sys.modules[other]).get(attr, None) is obj:
            found = comment(other, attr)
            if found is not None:
                lines[:] = found
                return
    lines[:] = []  # what is left is the docstring of the value's type


def setup(app) -> dict:
    for extension in ("sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon"):
        app.setup_extension(extension)
    app.connect("missing-reference", resolve_alias)
    app.connect("autodoc-process-docstring", constant_comment, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
