"""The chapters' sources: the table of contents, parameter profiles, default parameters and
their checks (the value rules are :mod:`lrd.book.parameters`; running is :mod:`lrd.book.run`).

Chapters are the notebooks listed in ``_toc.yml`` (``book/<chapter>``); their sources are
``notebooks/<chapter>.py``. Parameter profiles other than the notebook defaults are declared
in ``notebooks/profiles.yml`` (the ``ci`` profile is what nbval re-executes).
"""

from __future__ import annotations

import ast
import copy
import difflib
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
        raise ValueError(f"unknown profile {name!r}; declared in notebooks/profiles.yml: "
                         f"{', '.join(sorted(profiles))}{_closest(name, profiles)}")
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


def _closest(name: str, choices) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` (difflib), or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _string_example(name: str, value: Any, default: Any) -> str:
    """The ``-p`` that gives string parameter ``name`` a string: a number or ``true`` quoted
    (``-p results_dir '"2024"'``), the one string of a one-item list (``'["sst2"]'`` ->
    ``sst2``), else the default."""
    if isinstance(value, (int, float)):
        return f"-p {name} '\"{json.dumps(value)}\"' (quoted, so it is not read as JSON)"
    if isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], str):
        return f"-p {name} {value[0]}"
    return f"-p {name} {default}"


def _check_value(name: str, value: Any, default: Any, notes: list[str], *, typed_as: Any = None) -> Any:
    """``value`` for a parameter whose default is ``default``: coerced, or a ValueError.

    ``typed_as``: for a ``None`` default, a typical value whose type ``value`` must have (the
    rule's :attr:`lrd.book.parameters.Rule.example`); ``None`` still passes.
    """
    shown = "null" if default is None else repr(default)
    template = default if default is not None else typed_as

    def wrong(expected: str, example: str) -> ValueError:
        return ValueError(f"parameter {name!r} expects {expected} (default {shown}), got "
                          f"{_type_name(value)} {value!r}; pass it as {example}")

    if template is None or value is None and isinstance(template, (int, float)) and not isinstance(template, bool):
        return value  # numbers take None (e.g. n_samples=None: all); the rules say where None is meaningless
    if value is None and default is None:
        return value
    if isinstance(template, list):
        item = _item_type(template)
        if not isinstance(value, (list, tuple)) and _is_a(value, item):
            notes.append(f"parameter {name!r} expects a list; using [{value!r}] "
                         f"(pass several as -p {name} '{json.dumps([value, value])}')")
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise wrong("a list", f"JSON, e.g. -p {name} '{json.dumps(template[:1])}'")
        if not all(_is_a(v, item) for v in value):
            plural = {str: "strings", int: "integers", float: "numbers"}.get(item, "values")
            if item is int and all(isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float)
                                   and v.is_integer() for v in value):  # [1e2, 8.0]: JSON reads floats
                meant = json.dumps([int(v) for v in value])
                raise ValueError(f"parameter {name!r} expects a list of integers (default {shown}), got {value!r}: "
                                 f"integers only (JSON reads 1e2 and 2.0 as floats); did you mean -p {name} '{meant}'?")
            raise wrong(f"a list of {plural}", f"JSON, e.g. -p {name} '{json.dumps(template[:2])}'")
        return list(value)
    if isinstance(template, bool):
        if not isinstance(value, bool):
            raise wrong("true or false", f"-p {name} true")
        return value
    if isinstance(template, int):
        if isinstance(value, float) and value.is_integer():  # 1e2 or 100.0: JSON reads a float
            raise ValueError(f"parameter {name!r} expects an integer (default {shown}), got float {value!r}: integers "
                             f"only (JSON reads 1e2 and 100.0 as floats); did you mean -p {name} {int(value)}?")
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer", f"-p {name} {template}")
        return value
    if isinstance(template, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number", f"-p {name} {template}")
        return float(value)
    if isinstance(template, str):
        if not isinstance(value, str):
            raise wrong("a string", _string_example(name, value, template))
        return value
    if isinstance(template, dict) and not isinstance(value, dict):
        raise wrong("a mapping", f"JSON, e.g. -p {name} '{json.dumps(template)}'")
    return value


def validate_parameters(chapter: str, parameters: dict, *, defaults: dict | None = None,
                        unknown: str = "error", resolve: bool = True) -> tuple[dict, list[str]]:
    """Check parameters against the chapter's defaults and value rules, before anything runs.

    Each value must have its default's type: a string given for a list parameter becomes a
    one-item list (with a note), a list of strings must hold strings, an integer parameter
    takes an integer (or None), a float one a number; a None default takes None or a value of
    the type of its rule's example (``n_samples``: an integer). Then the
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
    resolve : bool
        Make every path among ``parameters`` absolute, here (:func:`lrd.book.parameters.resolve_paths`:
        a model that is a folder, ``results_dir``), so that a kernel started in another folder
        reads the same one; off for the notebook's own check, which runs where the paths are read.

    Returns
    -------
    (dict, list of str)
        The coerced parameters (paths absolute, with ``resolve``) and notes to show the user.

    Raises
    ------
    ValueError
        A wrong type or an unknown name (the first one), or every bad value at once, each
        with the ``-p`` that fixes it.
    """
    from lrd.book import parameters as parameter_rules

    defaults = default_parameters(chapter) if defaults is None else defaults
    out, notes = coerce_parameters(chapter, parameters, defaults=defaults, unknown=unknown)
    parameter_rules.check_values(chapter, {**defaults, **out}, defaults)
    return (parameter_rules.resolve_paths(chapter, out) if resolve else out), notes


def coerce_parameters(chapter: str, parameters: dict, *, defaults: dict | None = None,
                      unknown: str = "error") -> tuple[dict, list[str]]:
    """The type half of :func:`validate_parameters`: each value checked against its default's
    type (a ``None`` default against its rule's :attr:`~lrd.book.parameters.Rule.example`) and
    coerced; no value rule is applied. Returns the coerced parameters and the notes."""
    from lrd.book import parameters as parameter_rules

    defaults = default_parameters(chapter) if defaults is None else defaults
    rules = parameter_rules.RULES.get(chapter, {})
    notes: list[str] = []
    out = {}
    for name, value in parameters.items():
        if name not in defaults:
            if unknown == "error":
                raise ValueError(f"unknown parameter {name!r} for chapter {chapter!r}{_closest(name, defaults)}; "
                                 f"its parameters are: {', '.join(defaults)}")
            notes.append(f"{chapter}: no parameter {name!r}; not passed to it")
            continue
        rule = rules.get(name)
        out[name] = _check_value(name, value, defaults[name], notes, typed_as=rule.example if rule else None)
    return out, notes


def check_names(parameters: dict, defaults: dict[str, dict], *, where: str) -> None:
    """A ``ValueError`` for the first name in ``parameters`` that no chapter of ``defaults``
    (chapter -> its defaults) has, with the closest known name and the list of them; ``where``
    names the chapters in the message (``"chapter 'mid_layer'"``, ``"any chapter"``)."""
    known = sorted({name for d in defaults.values() for name in d})
    if unknown := [k for k in parameters if k not in known]:
        raise ValueError(f"unknown parameter {unknown[0]!r} for {where}{_closest(unknown[0], known)}; "
                         f"known parameters: {', '.join(known)}")


def check_chapters(values: dict[str, dict], *, defaults: dict[str, dict] | None = None,
                   unknown: str = "error") -> tuple[dict, list[str]]:
    """Validate the parameters of several chapters at once (the checks of :func:`validate_parameters`),
    before any of them runs: what ``lrd run``, ``lrd sweep``, ``lrd book`` and ``lrd report``
    check. A problem several chapters share (``-p device banana``) is named once.

    Parameters
    ----------
    values : dict
        chapter -> the parameters it is given.
    defaults : dict, optional
        chapter -> its defaults (read when omitted).
    unknown : {"error", "drop"}
        What a name a chapter lacks is (:func:`validate_parameters`); ``"drop"`` for names
        meant for some of the chapters (``lrd run all``), checked by :func:`check_names`.

    Returns
    -------
    (dict, list of str)
        chapter -> checked parameters, their paths absolute (a model folder, ``results_dir``:
        :func:`lrd.book.parameters.resolve_paths`), and the notes of every chapter (each once).

    Raises
    ------
    ValueError
        The problems of every chapter together.
    """
    from lrd.book import parameters as parameter_rules

    plan, notes, errors, found = {}, [], [], {}
    for chapter, given in values.items():
        known = defaults[chapter] if defaults is not None and chapter in defaults else default_parameters(chapter)
        try:  # the types first: a wrong one is named once, as validate_parameters names it
            plan[chapter], said = coerce_parameters(chapter, given, defaults=known, unknown=unknown)
        except ValueError as err:
            errors.append(str(err))
            continue
        notes += [n for n in said if n not in notes]
        found[chapter] = parameter_rules.problems(chapter, {**known, **plan[chapter]}, known)
    if errors or any(found.values()):
        raise ValueError("\n".join([*dict.fromkeys(errors), parameter_rules.chapters_problems_text(found)]).strip())
    return {chapter: parameter_rules.resolve_paths(chapter, given) for chapter, given in plan.items()}, notes


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
                                         defaults=defaults, resolve=False)  # the kernel reads them where it runs
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


def parse_parameters(pairs) -> dict:
    """``-p KEY VALUE`` pairs as a dict (:func:`parse_parameter`); a key given twice is an error
    naming both values, never silently resolved."""
    out: dict = {}
    raw: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"-p {key} is given twice ({raw[key]} and {value}); pass it once")
        out[key], raw[key] = parse_parameter(value), value
    return out
