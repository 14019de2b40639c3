"""Numbers apart from words (issue 47): the judge modules write no sentences; lrd.verdicts.wording does.

A judge module's prose is any string of five or more words outside a docstring and outside a
``raise`` (error messages name the problem and the fix, where it happens). The modules listed in
:data:`STATISTICS_MODULES` hold none: their judges return a :class:`lrd.verdicts.result.Result`
and their sentences live in :mod:`lrd.verdicts.wording`.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Judge modules whose statistics are apart from their words (each one added as it is split).
STATISTICS_MODULES: list[str] = [
    "lrd.verdicts.agreement",
    "lrd.verdicts.agreement.relevance",
    "lrd.verdicts.agreement.judges",
    "lrd.verdicts.agreement.nulls",
    "lrd.verdicts.layer_choice",
    "lrd.verdicts.layer_choice.tables",
    "lrd.verdicts.layer_choice.valleys",
    "lrd.verdicts.layer_choice.judges",
    "lrd.verdicts.layer_choice.nulls",
    "lrd.verdicts.fusion",
    "lrd.verdicts.fusion.panel",
    "lrd.verdicts.fusion.above",
    "lrd.verdicts.fusion.gain",
    "lrd.verdicts.fusion.mapping",
    "lrd.verdicts.fusion.demonstrations",
    "lrd.verdicts.fusion.nulls",
    "lrd.verdicts.families",
    "lrd.verdicts.families.architecture",
    "lrd.verdicts.families.complementarity",
    "lrd.verdicts.families.measures",
    "lrd.verdicts.families.nulls",
    "lrd.verdicts.families.task",
    "lrd.verdicts.selection",
    "lrd.verdicts.pruning",
    "lrd.verdicts.pruning.changes",
    "lrd.verdicts.pruning.judges",
    "lrd.verdicts.pruning.nulls",
]

MIN_WORDS = 5


def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string of MIN_WORDS+ words outside docstrings and raise statements.

    >>> prose('def f():\\n    "a doc string of many words here"\\n    return f"the {x} of this very long line"')
    [(3, 'the {} of this very long line')]
    >>> prose('def f():\\n    raise ValueError(f"a clear error that names the {x} fix")')
    []
    """
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                skip.add(id(body[0].value))
        if isinstance(node, ast.Raise):
            skip.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if len(text.split()) >= MIN_WORDS:
            found.append((node.lineno, text))
    return sorted(found)


def _path(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin)


@pytest.mark.parametrize("module", STATISTICS_MODULES)
def test_a_judge_module_writes_no_sentences(module):
    found = prose(_path(module).read_text())
    assert not found, f"{module} writes prose (move it to lrd.verdicts.wording): " + "; ".join(
        f"line {line}: {text[:60]!r}" for line, text in found[:10])


def test_the_prose_finder_sees_fstrings_constants_and_concatenations():
    src = ('X = ("one two three four five")\n'
           'def f(x):\n    """Doc of several words here."""\n'
           '    y = "short"\n    return f"{x} is one two three" + " and four five six seven"\n')
    assert [line for line, _ in prose(src)] == [1, 5, 5]


def test_the_wording_modules_never_import_a_judge_module():
    for path in sorted((ROOT / "lrd" / "verdicts" / "wording").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name not in STATISTICS_MODULES, f"{path.name} imports the judge module {name}"
