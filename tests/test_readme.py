"""The README a newcomer reads in two minutes: short, what / found / how to run, and every number
in it generated (a test fails when a generated block is stale), nothing about who built it where."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from lrd import book
from lrd.book import findings
from lrd.verdicts import CLAIMS, PAPERS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_is_short_and_answers_what_found_and_how():
    lines = README.splitlines()
    assert len(lines) <= 150, f"the README has {len(lines)} lines; the manual belongs in the book (book/manual/)"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## What the book found", "## The two commands"]
    for command in ("make book", "make test", "lrd run", "lrd report", "lrd sweep"):
        assert command in README, command
    for paper in PAPERS.values():  # the four papers, by first author
        assert findings.paper_name(paper.key).split()[0] in README


def test_readme_picture_is_the_committed_screenshot():
    import matplotlib.image

    picture = re.search(r"!\[[^\]]+\]\(([^)]+\.png)\)", README)
    assert picture, "the README shows no picture"
    path = ROOT / picture.group(1)
    assert path.is_file(), f"{picture.group(1)} is not committed: make screenshot"
    assert matplotlib.image.imread(path).shape[:2] == (900, 1280)  # written by tests/test_book.py


def test_readme_links_every_manual_page_of_the_book():
    """What left the README is a page of the book: the README links each page of the Manual part,
    by its source in the repository (readable in a clone and on any forge)."""
    import yaml

    parts = {p["caption"]: [c["file"] for c in p["chapters"]] for p in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]}
    linked = {target.removesuffix(".md") for target in re.findall(r"\]\((book/[\w/]+\.md)\)", README)}
    assert set(parts["Manual"]) <= linked, f"manual pages the README does not link: {set(parts['Manual']) - linked}"


def _reader_facing() -> dict[str, str]:
    pages = {p.relative_to(ROOT).as_posix(): p.read_text() for p in (ROOT / "book").rglob("*.md")}
    pages |= {f"notebooks/{p.name}": p.read_text() for p in (ROOT / "notebooks").glob("*.py")}
    return {"README.md": README, "CONTRIBUTING.md": (ROOT / "CONTRIBUTING.md").read_text(), **pages}


@pytest.mark.parametrize("pattern, what", [
    (r"\bissues? #?\d+", "an issue number (the changelog may keep them)"),
    (r"(?<![\w.~])/(root|home|work|Users)/", "an absolute path of a build machine"),
    (r"\b(was|were) (not )?lent\b|\bsessions?\b", "who had which machine"),
])
def test_only_the_project_speaks(pattern, what):
    found = [f"{name}: {m.group(0)!r}" for name, text in _reader_facing().items()
             for m in re.finditer(pattern, text, re.IGNORECASE)]
    assert not found, f"reader-facing text with {what}:\n" + "\n".join(found)


# ---- what the book found: a block generated from the last build's verdicts ---------------------

@pytest.fixture(scope="module")
def snapshot() -> dict:
    assert findings.SNAPSHOT.is_file(), "book/findings.json is missing: `python -m lrd.book.findings` after `make book`"
    return json.loads(findings.SNAPSHOT.read_text())


def test_findings_block_is_rendered_from_the_snapshot(snapshot):
    """Edit neither by hand: `python -m lrd.book.findings` writes both from a built book."""
    assert findings.current_block(README) == findings.readme_block(snapshot), (
        "the README's findings block is stale: run `python -m lrd.book.findings` after `make book`")
    assert f"commit {snapshot['commit']}" in README and snapshot["date"] in README


def test_findings_snapshot_judges_every_claim_of_the_claims_table(snapshot):
    """A claim added, removed, renamed or moved to another paper makes the snapshot stale."""
    records = snapshot["verdicts"]
    assert sorted(r["claim"] for r in records) == sorted(CLAIMS), "book/findings.json is stale: rebuild the book"
    for r in records:
        claim = CLAIMS[r["claim"]]
        assert (r["label"], r["paper"], r["chapter"]) == (claim.label, claim.paper.key, claim.chapter), r["claim"]
        assert r["outcome"] in findings.OUTCOMES
        if r["outcome"] == "reproduced":
            assert r["p_value"] is not None and r["p_value"] <= 0.05, r["claim"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", snapshot["date"]) and re.fullmatch(r"[0-9a-f]{7,40}", snapshot["commit"])


def test_findings_snapshot_matches_the_book_built_here(snapshot):
    """When `make book` has built every chapter here at its defaults, the snapshot must say what
    that build found (else the README quotes an older book)."""
    results = ROOT / "book" / "results"
    for chapter in book.chapters():
        path = ROOT / "book" / f"{chapter}.ipynb"
        if not (path.is_file() and (results / f"{chapter}.json").is_file()):
            pytest.skip(f"no book built here ({path.relative_to(ROOT)} or its results missing)")
        if nbformat.read(path, as_version=4).metadata.get("papermill", {}).get("parameters"):
            pytest.skip(f"{chapter} was executed with non-default parameters")
    built = {r["claim"]: r["outcome"] for r in findings.verdict_records(results, book.chapters())}
    kept = {r["claim"]: r["outcome"] for r in snapshot["verdicts"]}
    assert built == kept, ("the README's findings are stale against the book built here: run "
                           "`python -m lrd.book.findings`; differing: "
                           + ", ".join(f"{c}: {kept.get(c)} -> {o}" for c, o in built.items() if kept.get(c) != o))


def _records(p_a: float = 0.01, p_against_d: float = 0.02) -> list[dict]:
    return [{"claim": "a", "paper": "skean2025layer", "label": "x", "outcome": "reproduced", "p_value": p_a,
             "p_min": 0.004, "p_against": 1.0},
            {"claim": "b", "paper": "skean2025layer", "label": "y", "outcome": "not testable", "p_value": 0.5,
             "p_min": 0.25, "p_against": 0.6},
            {"claim": "c", "paper": "jiang2026lrd", "label": "z", "outcome": "not testable", "p_value": None,
             "p_min": None},
            {"claim": "d", "paper": "jiang2026lrd", "label": "w", "outcome": "contradicted", "p_value": 0.9,
             "p_min": 0.004, "p_against": p_against_d}]


def test_findings_sentences_count_every_outcome_per_paper():
    # Holm over the two tests that could reach 0.05 (a, d), in each direction: 0.02 for a; 0.08 against d (not kept)
    s = findings.summary(_records(p_against_d=0.04), n_models=8)
    text = findings.sentences(s)
    assert text[0] == ("Of the 4 claims of the four papers, after Holm's adjustment for the 2 claims tested at once, "
                       "the book reproduced 1, contradicted 0, left 1 inconclusive, found 2 not testable on its panel "
                       "of 8 models and demonstrated 0 by construction; judged each alone, it reproduced 1, "
                       "contradicted 1 and left 0 inconclusive.")
    assert text[1] == ("By paper, after the adjustment: Jiang et al. 2026: 1 inconclusive, 1 not testable (judged alone: "
                       "1 contradicted, 1 not testable); Skean et al. 2025: 1 reproduced, 1 not testable.")
    assert text[2] == "Reproduced, each judged alone: *x* (Skean et al. 2025, p = 0.01, 0.02 after Holm's adjustment)."
    assert text[3] == ("Contradicted, each judged alone: *w* (Jiang et al. 2026, p against the claim = 0.04, "
                       "0.08 after Holm's adjustment: not kept).")
    assert "for 1, the model is the unit" in text[-1] and "smallest attainable p 0.25" in text[-1]
    assert "1 needs models or data the offline panel lacks" in text[-1]


def test_findings_headline_names_the_adjustment_only_when_it_changes_a_count():
    s = findings.summary(_records(p_against_d=0.01), n_models=8)  # against: 0.01 x 3 = 0.03, kept
    assert s["adjusted"] == s["total"]
    assert findings.sentences(s)[0] == (
        "Of the 4 claims of the four papers, the book reproduced 1, contradicted 1, left 0 inconclusive, found 2 not "
        "testable on its panel of 8 models and demonstrated 0 by construction.")
    assert "(judged alone" not in findings.sentences(s)[1]


def _robust(records: list[dict], robust: dict[str, bool]) -> list[dict]:
    return [{**r, "chapter": "mid_layer", "robust": robust.get(r["claim"]), "flips": [] if robust.get(r["claim"]) else
             [{"rule": "margin", "label": "margin", "value": "0.01", "outcome": "inconclusive"}]} for r in records]


def test_findings_headline_decides_a_claim_only_when_kept_after_holm_and_robust():
    """Holm-kept and robust: decided; kept but flipped by one of the book's alternatives: counted
    apart as "not robust", the unadjusted counts beside."""
    records = _robust(_records(p_against_d=0.01), {"a": True, "b": True, "c": True, "d": False})
    s = findings.summary(records, n_models=8)
    assert s["adjusted"]["reproduced"] == 1 and s["adjusted"]["contradicted"] == 0
    assert s["adjusted"][findings.NOT_ROBUST] == 1 and [r["claim"] for r in s["not_robust"]] == ["d"]
    text = findings.sentences(s)
    assert text[0] == ("Of the 4 claims of the four papers, "  # Holm keeps both decisions here: only robustness moves
                       "counting a decision only where every alternative of the book's rules leaves it unchanged, "
                       "the book reproduced 1, contradicted 0, left 0 inconclusive, found 2 not testable on its panel "
                       "of 8 models and demonstrated 0 by construction; 1 more decision is not robust: an alternative "
                       "of the book's rules changes it; judged each alone, it reproduced 1, contradicted 1 and left 0 "
                       "inconclusive.")
    assert text[1] == ("By paper, after the adjustment: Jiang et al. 2026: 1 not testable, 1 not robust (judged alone: "
                       "1 contradicted, 1 not testable); Skean et al. 2025: 1 reproduced, 1 not testable.")
    assert "Not robust (each decided alone, changed by one of the book's alternative rules): *w* (Jiang et al. 2026, " \
           "contradicted; margin = 0.01 gives inconclusive)." in text
    block = findings.readme_block({"date": "2026-01-01", "commit": "abcdef1", "verdicts": records, "n_models": 8})
    assert "| paper | reproduced | contradicted | inconclusive | not testable | demonstrated | not robust |" in block
    assert "| Jiang et al. 2026 | 0 | 0 (1 alone) | 0 | 1 | 0 | 1 (0 alone) |" in block


def test_findings_headline_holm_comes_before_robustness():
    """A decision Holm does not keep is inconclusive, robust or not; a robust kept one is decided."""
    records = _robust(_records(p_against_d=0.04), {"a": True, "d": False})
    s = findings.summary(records, n_models=8)
    assert s["outcomes_adjusted"] == {"a": "reproduced", "b": "not testable", "c": "not testable", "d": "inconclusive"}
    assert not s["not_robust"] and s["adjusted"][findings.NOT_ROBUST] == 0
    assert findings.sentences(s)[0].startswith("Of the 4 claims of the four papers, after Holm's adjustment for the 2 "
                                               "claims tested at once, the book reproduced 1")


def test_findings_reads_a_snapshot_written_before_robustness_as_not_checked():
    """An older snapshot (no ``robust``) renders as before: no "not robust" column, no robustness words."""
    s = findings.summary(_records(p_against_d=0.01), n_models=8)
    assert not findings.robustness_checked(_records()) and "robustness" not in s
    block = findings.readme_block({"date": "2026-01-01", "commit": "abcdef1", "verdicts": [{**r, "chapter": "mid_layer"} for r in _records()], "n_models": 8})
    assert findings.NOT_ROBUST not in block and "alternative" not in block
    assert findings.KEPT[-2:] == ("robust", "flips")


def test_findings_snapshot_of_a_build_keeps_the_robustness_and_the_block_counts_it():
    """`python -m lrd.book.findings --results <dir>` on a build whose chapters judged through
    Glue.judge: the snapshot keeps robust and flips, and the block has the "not robust" column."""
    results = ROOT / "tests" / "nbval" / "results"  # the ci references, executed with this code
    snap = findings.snapshot(results, commit="abcdef1", date="2026-01-01", chapters=["mid_layer"])
    assert snap["verdicts"] and all(isinstance(r["robust"], bool) and isinstance(r["flips"], list)
                                    for r in snap["verdicts"])
    block = findings.readme_block(snap)
    assert f"| {findings.NOT_ROBUST} |" in block and "counted apart" in block
