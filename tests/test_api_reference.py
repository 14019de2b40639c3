"""The API reference (book/manual/api.md) lists the whole public API and is part of the book.

The page is written by hand (which names, in which order) and rendered by autodoc; these tests
fail when a public name is added to the package without a line on the page, when the page names
something that is gone, and when a chapter's ``{py:...}`` role names nothing the page documents.
The strict book build (tests/test_book.py) checks that every role resolves and that no docstring
warns.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

import lrd
import lrd.metrics
import lrd.tables
import lrd.verdicts
from lrd import book

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "manual" / "api.md"
DIRECTIVE = re.compile(r"^\.\. (currentmodule|automodule|autosummary|autofunction|autoclass|autodata)::\s*(\S*)")


def _page() -> tuple[set[str], set[str]]:
    """The page's autosummary entries and the objects its autodoc directives document, each as a
    full dotted name."""
    text = PAGE.read_text()
    blocks = re.findall(r"```\{eval-rst\}\n(.*?)```", text, flags=re.S)
    assert blocks, "the API page renders nothing with autodoc"
    listed, documented = set(), set()
    module = None
    for block in blocks:
        in_summary = False
        for line in block.splitlines():
            match = DIRECTIVE.match(line)
            if match:
                kind, arg = match.groups()
                in_summary = kind == "autosummary"
                if kind in ("currentmodule", "automodule"):
                    module = arg
                if kind == "automodule":
                    documented.add(arg)
                elif kind.startswith("auto") and kind != "autosummary":
                    documented.add(arg if "." in arg else f"{module}.{arg}")
            elif line.startswith(".. "):
                in_summary = False
            elif in_summary and line.startswith("   ") and not line.strip().startswith(":") and line.strip():
                name = line.strip().lstrip("~")
                listed.add(name if name.startswith("lrd.") else f"{module}.{name}")
    return listed, documented


def _tables_public() -> set[str]:
    """lrd.tables has no __all__: its public names are the functions, classes and constants it defines."""
    tree = ast.parse(Path(lrd.tables.__file__).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_")}


def _public() -> set[str]:
    return ({f"lrd.{n}" for n in lrd.__all__} | {f"lrd.metrics.{n}" for n in lrd.metrics.__all__}
            | {f"lrd.verdicts.{n}" for n in lrd.verdicts.__all__} | {f"lrd.tables.{n}" for n in _tables_public()})


def _same(name: str) -> object:
    module, _, attr = name.rpartition(".")
    return getattr(__import__(module, fromlist=[attr]), attr) if module else __import__(name)


def test_every_public_name_is_listed_and_documented():
    listed, documented = _page()
    missing = sorted(_public() - listed)
    assert not missing, f"public names with no autosummary line in {PAGE.relative_to(ROOT)}: {missing}"
    # every listed name is rendered on the page, under its own name or another name of the same object
    objects = {id(_same(d)) for d in documented}
    undocumented = sorted(n for n in listed if n not in documented and id(_same(n)) not in objects)
    assert not undocumented, f"listed but not rendered by an auto* directive: {undocumented}"
    stale = sorted(n for n in listed | documented if not _exists(n))
    assert not stale, f"the API page names what the package no longer has: {stale}"


def _exists(name: str) -> bool:
    try:
        _same(name)
    except (ImportError, AttributeError):
        return False
    return True


def test_api_page_is_in_the_manual():
    parts = {p["caption"]: [c["file"] for c in p["chapters"]]
             for p in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]}
    assert "book/manual/api" in parts["Manual"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "lrd.book.apiref" in config["sphinx"]["extra_extensions"]


ROLE = re.compile(r"\{py:(func|class|mod|data|meth|attr|obj)\}`(?:[^`<]*<)?~?([\w.]+)>?`")


@pytest.mark.parametrize("chapter", book.chapters())
def test_chapter_roles_name_documented_objects(chapter):
    """A ``{py:...}`` role in a chapter's prose names an object the API page renders (under that
    name or another name of the same object, as lrd.book.apiref resolves it)."""
    _, documented = _page()
    objects = {id(_same(d)) for d in documented}
    nb = book.source_notebook(chapter)
    for cell in nb.cells:
        for kind, target in ROLE.findall(cell.source):
            assert cell.cell_type == "markdown"
            assert target in documented or (_exists(target) and id(_same(target)) in objects), \
                f"{chapter}: {{py:{kind}}}`{target}` is not on the API page"
