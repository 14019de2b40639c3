"""The package's floors (``shared/design/layout.md``): no import circle, no import running back
up, no chapter unit module importing ``lrd.verdicts`` or ``lrd.book``, nothing inside the package
importing the face ``lrd``.

The graph is read from the sources (every ``import`` and ``from ... import``, at module level or
inside a function: a lazy import is still a dependency), so the test needs nothing installed
and fails on the line that breaks a rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lrd"

#: Each floor and the floors it may import (itself included). Anything else runs back up.
ALLOWED = {
    "lrd._version": set(),
    "lrd.tables": set(),
    "lrd._lazy": set(),
    "lrd.engine": {"lrd.engine", "lrd.tables", "lrd._version"},
    "lrd.metrics": {"lrd.metrics", "lrd.tables"},
    "lrd.aggregation": {"lrd.aggregation", "lrd.tables"},
    "lrd.methods": {"lrd.methods", "lrd.engine", "lrd.metrics", "lrd.tables"},
    "lrd.verdicts": {"lrd.verdicts", "lrd.metrics", "lrd.methods", "lrd.aggregation", "lrd.tables"},
    # the book reads the engine's vocabularies (poolings, task types, packs) to check parameters,
    # and its store to write files; it never imports the units
    "lrd.book": {"lrd.book", "lrd.verdicts", "lrd.methods", "lrd.aggregation", "lrd.metrics", "lrd.engine",
                 "lrd.tables", "lrd._version", "lrd._lazy"},
    "lrd.units": {"lrd.units", "lrd.book", "lrd.verdicts", "lrd.methods", "lrd.aggregation", "lrd.metrics",
                  "lrd.engine", "lrd.tables", "lrd._version", "lrd._lazy"},
    # `lrd report`: the chapters' units for one model, reduced and rendered; nothing below imports it
    "lrd.report": {"lrd.report", "lrd.units", "lrd.book", "lrd.verdicts", "lrd.methods", "lrd.aggregation",
                   "lrd.metrics", "lrd.engine", "lrd.tables", "lrd._version", "lrd._lazy"},
    "lrd.cli": {"lrd.report", "lrd.units", "lrd.book", "lrd.verdicts", "lrd.methods", "lrd.aggregation",
                "lrd.metrics", "lrd.engine", "lrd.tables", "lrd._version", "lrd._lazy"},
    "lrd": {"lrd._version"},  # the face names its exports as strings and imports them on first use
}

#: The chapters' unit modules: rewording a claim, a plot or a glued sentence must not reach them.
CHAPTER_UNIT_MODULES = ("models_and_tasks", "lrd_families", "mid_layer", "cosine_vs_ablation", "cayley_aggregation",
                        "selection_and_pruning")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, modules: dict[str, Path], name: str | None = None) -> list[tuple[str, int]]:
    """``(imported lrd module, line)`` for every import in ``path``; ``from pkg import name``
    counts as importing ``pkg.name`` when that is a module, else ``pkg``."""
    found = []
    name = name or _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name == "lrd" or a.name.startswith("lrd.")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module != "lrd" and not module.startswith("lrd."):
                continue
            for a in node.names:
                sub = f"{module}.{a.name}"
                found.append((sub if sub in modules else module, node.lineno))
    return found


def floor_of(module: str) -> str:
    """The floor a module belongs to: its first two name parts (``lrd.engine.cache`` ->
    ``lrd.engine``), or the face ``lrd``."""
    return ".".join(module.split(".")[:2])


def graph() -> dict[str, list[tuple[str, int]]]:
    modules = _modules()
    return {name: imports(path, modules) for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), or a module
    importing itself."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, ()):
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_belongs_to_a_floor():
    assert {floor_of(m) for m in _modules()} <= set(ALLOWED)
    assert sum(len(found) for found in graph().values()) > 100  # the graph was read


def test_no_import_runs_back_up():
    wrong = [f"{m}:{line} imports {target} ({floor_of(target)} is above {floor_of(m)})"
             for m, found in graph().items() for target, line in found
             if floor_of(target) not in ALLOWED[floor_of(m)] and target != "lrd"]
    assert wrong == []


def test_nothing_inside_the_package_imports_the_face():
    wrong = [f"{m}:{line}" for m, found in graph().items() if m != "lrd" for target, line in found if target == "lrd"]
    assert wrong == [], "import the module that defines a name (lrd.engine.models), not the face lrd"


def test_the_import_graph_has_no_circle():
    edges = {m: {t for t, _ in found if t != "lrd" and t != m} for m, found in graph().items()}
    assert cycles(edges) == []


@pytest.mark.parametrize("chapter", CHAPTER_UNIT_MODULES)
def test_no_chapter_unit_module_imports_verdicts_or_book(chapter):
    module = f"lrd.units.{chapter}"
    assert module in _modules()
    wrong = [f"{module}:{line} imports {target}" for target, line in graph()[module]
             if floor_of(target) in ("lrd.verdicts", "lrd.book")]
    assert wrong == []


def test_the_checks_catch_an_upward_import_and_a_circle(tmp_path):
    """The rules are not vacuous: a metrics module importing the book, and two modules
    importing each other, are found."""
    modules = {"lrd.metrics.x": tmp_path / "x.py", "lrd.book.glue": tmp_path / "glue.py"}
    (tmp_path / "x.py").write_text("def f():\n    from lrd.book.glue import Glue\n")
    found = imports(tmp_path / "x.py", modules, "lrd.metrics.x")
    assert found == [("lrd.book.glue", 2)] and floor_of(found[0][0]) not in ALLOWED["lrd.metrics"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
