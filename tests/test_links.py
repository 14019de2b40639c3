"""Links that work where the reader is: every relative link of the pages a forge renders (README,
CONTRIBUTING, the book's markdown sources) resolves to a file of this repository, and none of
them types the published site's address (the book workflow derives it from the repository).
The external links are checked by Sphinx's ``linkcheck`` in the book workflow."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Markdown links and images, ``[text](target)`` / ``![alt](target)``, and autolinks ``<https://...>``.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<(https?://[^>\s]+)>")


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "book").rglob("*.md"))]


def links(text: str) -> list[str]:
    """Every link target in a markdown text, code spans and fenced blocks left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [a or b for a, b in LINK.findall(text)]


def labels(root: Path = ROOT) -> set[str]:
    """The MyST targets ``(name)=`` of the book's pages: ``[text](name)`` links to one (Sphinx
    resolves it; the strict build fails on one that does not)."""
    pages = [*(root / "book").rglob("*.md"), *(root / "notebooks").glob("*.py")]
    return {m for p in pages if p.is_file() for m in re.findall(r"^\s*(?:# )?\(([\w.-]+)\)=\s*$", p.read_text(), re.M)}


def broken(page: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``page`` that name no file or folder inside ``root`` (nor a MyST
    target of the book)."""
    wrong = []
    targets = labels(root)
    for target in links(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#") or target in targets:
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists() or root.resolve() not in (path, *path.parents):
            wrong.append(target)
    return wrong


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    assert broken(page) == []


def test_the_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "book" / "p.md"
    page.parent.mkdir()
    (tmp_path / "book" / "l.md").write_text("(a-label)=\n# A\n")
    page.write_text("[label](a-label) [ok](p.md) [gone](book/nowhere.md#x) ![pic](missing.png) `[code](x.md)` "
                    "[web](https://example.org) <https://example.org/a>\n```\n[fenced](y.md)\n```\n")
    assert links(page.read_text()) == ["a-label", "p.md", "book/nowhere.md#x", "missing.png", "https://example.org",
                                       "https://example.org/a"]
    assert broken(page, tmp_path) == ["book/nowhere.md#x", "missing.png"]
    assert broken(page, tmp_path / "elsewhere") == ["a-label", "p.md", "book/nowhere.md#x", "missing.png"]


def test_no_page_types_the_published_address():
    """The site is where the book workflow publishes (GitHub Pages of the repository it runs in):
    a typed address is dead in every fork and before Pages is enabled."""
    typed = [f"{p.relative_to(ROOT)}: {m}" for p in [*pages(), ROOT / "CITATION.cff", ROOT / "_config.yml"]
             for m in re.findall(r"https?://[\w.-]+\.github\.io\S*", p.read_text())]
    assert typed == []
