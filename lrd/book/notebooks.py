"""The chapters' sources: the table of contents, parameter profiles, default parameters and
their checks (the value rules are :mod:`lrd.book.parameters`; running is :mod:`lrd.book.run`).

Chapters are the notebooks listed in ``_toc.yml`` (``book/<chapter>``); their sources are
``notebooks/<chapter>.py``. Parameter profiles other than the notebook defaults are declared
in ``notebooks/profiles.yml`` (the ``ci`` profile is what nbval re-executes).
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]  # the repository (lrd/book/notebooks.py)
NOTEBOOKS = ROOT / "notebooks"
BOOK = ROOT / "book"
NBVAL = ROOT / "tests" / "nbval"


def chapters(root: Path = ROOT) -> list[str]:
    """Chapter names in book order, read from ``_toc.yml`` (notebook entries only)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    entries: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                entries.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return [Path(e).name for e in entries if (root / "notebooks" / f"{Path(e).name}.py").is_file()]


def profile(name: str, chapter: str) -> dict:
    """Parameters of a declared profile for a chapter (``{}`` for the defaults)."""
    if name in ("default", "full"):
        return {}
    profiles = yaml.safe_load((NOTEBOOKS / "profiles.yml").read_text())
    if name not in profiles:
        raise KeyError(f"unknown profile {name!r}; declared in notebooks/profiles.yml: {sorted(profiles)}")
    return dict(profiles[name].get(chapter, {}))


def source_notebook(chapter: str):
    """The chapter's jupytext source as an nbformat notebook."""
    import jupytext

    path = NOTEBOOKS / f"{chapter}.py"
    if not path.is_file():
        known = [p.stem for p in NOTEBOOKS.glob("*.py")]
        raise FileNotFoundError(f"no chapter {chapter!r} (no {path}); chapters: {sorted(known)}")
    return jupytext.read(path)


def default_parameters(chapter: str) -> dict:
    """The chapter's parameters and their defaults: its ``parameters`` cell, executed (read once
    per process and version of the source; a fresh dict each call)."""
    path = NOTEBOOKS / f"{chapter}.py"
    return copy.deepcopy(_defaults(chapter, str(path), path.stat().st_mtime_ns if path.is_file() else None))


@functools.lru_cache(maxsize=None)
def _defaults(chapter: str, path: str, mtime_ns: int | None) -> dict:
    cells = [c for c in source_notebook(chapter).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"chapter {chapter!r} must have exactly one cell tagged 'parameters', has {len(cells)}")
    defaults: dict = {}
    exec(cells[0].source, {}, defaults)
    return defaults


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _item_type(default: list) -> type:
    """The common type of a default list's items (str, int, float), or object."""
    kinds = {type(d) for d in default}
    if kinds and kinds <= {str}:
        return str
    if kinds and kinds <= {int}:
        return int
    return float if kinds and kinds <= {int, float} else object


def _is_a(value: Any, kind: type) -> bool:
    if kind is object:
        return isinstance(value, str)  # one item of an untyped list: only a bare word is unambiguous
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) if kind is float else isinstance(value, kind)


def _check_value(name: str, value: Any, default: Any, notes: list[str]) -> Any:
    """``value`` for a parameter whose default is ``default``: coerced, or a ValueError."""
    def wrong(expected: str, example: str) -> ValueError:
        return ValueError(f"parameter {name!r} expects {expected} (default {default!r}), got "
                          f"{_type_name(value)} {value!r}; pass it as {example}")

    if default is None or value is None and isinstance(default, (int, float)) and not isinstance(default, bool):
        return value  # a None default takes anything; numbers take None (e.g. n_samples=None: all)
    if isinstance(default, list):
        item = _item_type(default)
        if not isinstance(value, (list, tuple)) and _is_a(value, item):
            notes.append(f"parameter {name!r} expects a list; using [{value!r}] "
                         f"(pass several as -p {name} '{json.dumps([value, value])}')")
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise wrong("a list", f"JSON, e.g. -p {name} '{json.dumps(default[:1])}'")
        if not all(_is_a(v, item) for v in value):
            plural = {str: "strings", int: "integers", float: "numbers"}.get(item, "values")
            raise wrong(f"a list of {plural}", f"JSON, e.g. -p {name} '{json.dumps(default[:2])}'")
        return list(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise wrong("true or false", f"-p {name} true")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer", f"-p {name} {default}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number", f"-p {name} {default}")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise wrong("a string", f"-p {name} '\"{value}\"' (quoted, so it is not read as JSON)")
        return value
    if isinstance(default, dict) and not isinstance(value, dict):
        raise wrong("a mapping", f"JSON, e.g. -p {name} '{json.dumps(default)}'")
    return value


def validate_parameters(chapter: str, parameters: dict, *, defaults: dict | None = None,
                        unknown: str = "error") -> tuple[dict, list[str]]:
    """Check parameters against the chapter's defaults and value rules, before anything runs.

    Each value must have its default's type: a string given for a list parameter becomes a
    one-item list (with a note), a list of strings must hold strings, an integer parameter
    takes an integer (or None), a float one a number; a None default takes anything. Then the
    values the chapter would run with (these over its defaults) must satisfy the chapter's
    rules (:mod:`lrd.book.parameters`: ranges, non-empty lists, kinds of task and model,
    ``token_task`` one of ``tasks``, ...), without loading a model or a data set.

    Parameters
    ----------
    chapter : str
    parameters : dict
        Name -> value, as ``lrd run -p`` parsed them.
    defaults : dict, optional
        The chapter's defaults (:func:`default_parameters` when omitted).
    unknown : {"error", "drop"}
        An unknown name is a ValueError listing the known ones, or is dropped with a note.

    Returns
    -------
    (dict, list of str)
        The coerced parameters and notes to show the user.

    Raises
    ------
    ValueError
        A wrong type or an unknown name (the first one), or every bad value at once, each
        with the ``-p`` that fixes it.
    """
    from lrd.book import parameters as parameter_rules

    defaults = default_parameters(chapter) if defaults is None else defaults
    notes: list[str] = []
    out = {}
    for name, value in parameters.items():
        if name not in defaults:
            if unknown == "error":
                raise ValueError(f"unknown parameter {name!r} for chapter {chapter!r}; "
                                 f"its parameters are: {', '.join(defaults)}")
            notes.append(f"{chapter}: no parameter {name!r}; not passed to it")
            continue
        out[name] = _check_value(name, value, defaults[name], notes)
    parameter_rules.check_values(chapter, {**defaults, **out}, defaults)
    return out, notes


def check_parameters(chapter: str, namespace: dict) -> dict:
    """Validate a notebook's parameters in place; the first line of a chapter after its parameters cell.

    For plain papermill runs (``lrd run`` already validated): the same checks as
    :func:`validate_parameters` on the values in ``namespace`` (the notebook's ``globals()``),
    coercing in place (a string for a list parameter becomes a one-item list, with a note on
    stderr). A name that papermill injected (its ``# Parameters`` cell, read from IPython's
    ``In`` history) and the parameters cell does not define is an error listing the known ones.
    Call it before the notebook assigns anything named like a parameter.

    Examples
    --------
    In the chapter's first code cell after the ``parameters`` cell::

        lrd.book.check_parameters("lrd_families", globals())  # after `import lrd`
    """
    defaults = default_parameters(chapter)
    given = {k: namespace[k] for k in defaults if k in namespace}
    extra = _injected_names(namespace, defaults)
    checked, notes = validate_parameters(chapter, {**given, **{k: namespace.get(k) for k in extra}},
                                         defaults=defaults)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    namespace.update(checked)
    return checked


def _injected_names(namespace: dict, defaults: dict) -> list[str]:
    """Names that papermill's injected ``# Parameters`` cell set and the defaults do not have.

    Read from the IPython input history in ``namespace`` (``In``); [] outside IPython.
    """
    history = namespace.get("In")
    history = history if isinstance(history, list) else []
    cells = [c for c in history if isinstance(c, str) and c.startswith("# Parameters")]
    if not cells:
        return []
    names = [t.id for node in ast.parse(cells[-1]).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)]
    return [n for n in names if n not in defaults]



def parse_parameter(value: str) -> Any:
    """``-p key value`` values: JSON when it parses (numbers, lists, null), else a string."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value
