"""The book builds, strictly, from the executed reference notebooks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lrd import book

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.book
def test_book_builds_strictly_from_executed_chapters(tmp_path):
    site = tmp_path / "site"
    (site / "book").mkdir(parents=True)
    for f in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / f, site / f)
    for page in (ROOT / "book").glob("*.md"):
        shutil.copy(page, site / "book" / page.name)
    for chapter in book.chapters():
        shutil.copy(ROOT / "tests" / "nbval" / f"{chapter}.ipynb", site / "book" / f"{chapter}.ipynb")
    index = book.build_book(site, strict=True)  # -W -n --keep-going: a missing glue key fails
    assert index.is_file()
    html = (site / "_build" / "html" / "book" / "models_and_tasks.html").read_text()
    assert "<table" in html and "<img" in html
    # glued numbers appear in the prose
    nb = json.loads((ROOT / "tests" / "nbval" / "models_and_tasks.ipynb").read_text())
    glued = [o["data"]["application/papermill.record/text/plain"] for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "application/papermill.record/text/plain" in o.get("data", {})]
    assert glued and all(v.strip("'") in html for v in glued)
