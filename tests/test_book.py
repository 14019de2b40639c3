"""The book builds, strictly, from the executed reference notebooks, and reads right in a browser."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from lrd import book
from lrd.book import plots
from lrd.book.sphinxext import dashboard_rows

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The book built strictly (``-W -n --keep-going``: a missing glue key fails) from the ci
    reference notebooks and their results."""
    site = tmp_path_factory.mktemp("book") / "site"
    (site / "book").mkdir(parents=True)
    for f in ("_config.yml", "_toc.yml", "references.bib"):
        shutil.copy(ROOT / f, site / f)
    shutil.copytree(ROOT / "_static", site / "_static")  # the book's stylesheet
    for page in (ROOT / "book").rglob("*.md"):  # the landing page and the manual
        (site / page.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, site / page.relative_to(ROOT))
    for chapter in book.chapters():
        shutil.copy(ROOT / "tests" / "nbval" / f"{chapter}.ipynb", site / "book" / f"{chapter}.ipynb")
    shutil.copytree(ROOT / "tests" / "nbval" / "results", site / "book" / "results",
                    ignore=lambda _, names: [n for n in names if n.endswith(".csv") and n != "null_calibration.csv"])
    book.build_book(site, strict=True)
    return site


@pytest.mark.book
def test_book_builds_strictly_from_executed_chapters(site):
    assert (site / "_build" / "html" / "index.html").is_file()
    html = (site / "_build" / "html" / "book" / "models_and_tasks.html").read_text()
    assert "<table" in html and "<img" in html
    # glued numbers appear in the prose
    nb = json.loads((ROOT / "tests" / "nbval" / "models_and_tasks.ipynb").read_text())
    glued = [o["data"]["application/papermill.record/text/plain"] for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "application/papermill.record/text/plain" in o.get("data", {})]
    assert glued and all(v.strip("'") in html for v in glued)
    assert (site / "_build" / "html" / "_static" / "mathjax" / "tex-chtml.js").is_file()  # offline MathJax
    # the dashboard shows the appendix's simulated power, its design and effect on hover
    assert "simulated in the appendix, design" in (site / "_build" / "html" / "book" / "intro.html").read_text()
    # the manual is a part of the book, after the chapters: every page of it built
    import yaml

    parts = {p["caption"]: [c["file"] for c in p["chapters"]] for p in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]}
    assert list(parts)[:3] == ["Chapters", "Appendices", "Manual"]
    assert len(parts["Manual"]) >= 8
    for page in parts["Manual"]:
        assert (site / "_build" / "html" / f"{page}.html").is_file(), page


# ---- the browser test ------------------------------------------------------------------------

def _chromium() -> str | None:
    return os.environ.get("LRD_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser test needs the playwright package (pip install -e '.[dev]')")
    exe = _chromium()
    if exe is None:
        pytest.skip("browser test needs a system Chromium: `apt-get install chromium` (Debian/Ubuntu), "
                    "or set LRD_CHROMIUM to a Chrome/Chromium executable")
    return sync_playwright, exe


PAGE_CHECKS = """() => {
  const main = document.querySelector('main') || document.body;
  const math = [...main.querySelectorAll('.math')];
  return {
    errors: main.querySelectorAll('.output.error, .output.traceback, .output.stderr, .problematic, .system-message').length,
    text: main.innerText,
    images: [...main.querySelectorAll('img')].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0,
                                                       w: i.getBoundingClientRect().width})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    math: math.length,
    typeset: math.filter(m => m.querySelector('mjx-container') || m.tagName === 'MJX-CONTAINER').length,
    dashboard: document.querySelectorAll('table.lrd-verdicts tbody tr').length,
    body: parseFloat(getComputedStyle(main.querySelector('article p') || main).fontSize),
    outputs: [...main.querySelectorAll('.cell_output img')].map(i => ({src: i.src, w: i.getBoundingClientRect().width,
                                                                      natural: i.naturalWidth})),
    tables: [...main.querySelectorAll('article table')].map(t => {
      const article = t.closest('article');
      let box = t.parentElement;  // the nearest scroll container inside the text column, if any
      while (box !== article && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
      const scrolls = box !== article, style = getComputedStyle(box);
      return {head: t.innerText.slice(0, 40).replace(/\s+/g, ' '),
              wide: t.scrollWidth > box.clientWidth + 1, scrolls,
              right: (scrolls ? box : t).getBoundingClientRect().right, edge: article.getBoundingClientRect().right,
              bar: scrolls ? box.offsetHeight - box.clientHeight - parseFloat(style.borderTopWidth)
                             - parseFloat(style.borderBottomWidth) : 0};
    }),
    uncaptioned: [...main.querySelectorAll('.cell_output img')].filter(i => {
      const fig = i.closest('figure');
      return !fig || !/Fig\.\s*\d/.test((fig.querySelector('figcaption') || {}).innerText || '');
    }).length,
  };
}"""

OVERLAY_PAGE_SCROLLBAR = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = 'html { scrollbar-width: none; }';
  document.head.appendChild(style);
});"""

UNRESOLVED = re.compile(r"\{(glue|glue:\w+|cite|cite:\w+|numref|ref|doc|eq|math)\}`|\\\(|\\\[|```")


def _link_ok(href: str, html_root: Path) -> bool:
    url = urlparse(href)
    if url.scheme != "file":
        return True  # external links are not checked offline
    target = Path(unquote(url.path))
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return False
    if url.fragment and target.suffix == ".html":
        return f'id="{unquote(url.fragment)}"' in target.read_text()
    return True


@pytest.mark.book
def test_every_page_renders_in_a_headless_browser(site):
    sync_playwright, exe = _browser()
    html_root = site / "_build" / "html"
    pages = sorted(p for p in html_root.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts
                   and p.name not in ("genindex.html", "search.html", "index.html"))
    expected_rows = len(dashboard_rows(site))
    chapters = {f"book/{c}.html" for c in book.chapters()}
    problems = []
    with sync_playwright() as p:
        # overlay scrollbars, as on macOS and phones: a scroll container shows nothing until touched
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--enable-features=OverlayScrollbar"],
                                    ignore_default_args=["--hide-scrollbars"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        # Chromium 15x and later ignore the OverlayScrollbar feature: the page's own scrollbar then
        # takes 15 px of the window and the text column shrinks below COLUMN_PX. Hide that one
        # scrollbar, as an overlay does; scroll containers inside the page keep theirs.
        context.add_init_script(OVERLAY_PAGE_SCROLLBAR)
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())  # offline: nothing but the built files
        page = context.new_page()
        for path in pages:
            name = path.relative_to(html_root).as_posix()
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_function("() => !window.MathJax || !MathJax.startup || MathJax.startup.promise"
                                   " .then(() => true)", timeout=20000)
            page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
            got = page.evaluate(PAGE_CHECKS)
            if got["errors"]:
                problems.append(f"{name}: {got['errors']} error outputs or unresolved references")
            for match in UNRESOLVED.finditer(got["text"]):
                problems.append(f"{name}: unresolved markup {match.group(0)!r}")
            problems += [f"{name}: image {i['src']} did not load" for i in got["images"] if not (i["ok"] and i["w"] > 0)]
            problems += [f"{name}: broken link {h}" for h in set(got["links"]) if not _link_ok(h, html_root)]
            if got["uncaptioned"]:
                problems.append(f"{name}: {got['uncaptioned']} output figures without a numbered caption "
                                "(cell metadata mystnb={'figure': {'name': ..., 'caption': ...}})")
            for t in got["tables"]:
                if t["right"] > t["edge"] + 1:
                    problems.append(f"{name}: table {t['head']!r} runs past the text column")
                elif t["wide"] and t["bar"] <= 0:
                    problems.append(f"{name}: table {t['head']!r} is wider than the column and its scrollbar is "
                                    "hidden, so it looks cut off (_static/lrd.css)")
            if got["body"] != plots.BODY_FONT_PX and name.startswith("book/"):
                problems.append(f"{name}: body text is {got['body']} px; lrd.book.plots.BODY_FONT_PX says "
                                f"{plots.BODY_FONT_PX} (figure text is sized against it)")
            problems += [f"{name}: figure {i['src'].rsplit('/', 1)[-1]} shown {i['w']:.0f} px wide, narrower than "
                         f"lrd.book.plots.COLUMN_PX ({plots.COLUMN_PX}) allows: its text is smaller than the body's"
                         for i in got["outputs"] if i["w"] < min(i["natural"], plots.COLUMN_PX) - 1]
            if got["typeset"] != got["math"]:
                problems.append(f"{name}: {got['math'] - got['typeset']} of {got['math']} formulas not typeset")
            if name == "book/intro.html":
                problems += _landing_problems(page, got, expected_rows)
            if name in chapters:
                problems += [f"{name}: {p}" for p in _opening_problems(page)]
            if name == "book/lrd_families.html":
                assert got["math"] > 0 and got["images"], "the chapter should have formulas and figures"
        browser.close()
    assert not problems, "\n".join(problems)


#: The dashboard's cells whose text is cut: an element with hidden overflow narrower than its
#: content, or a cell that ends in an ellipsis.
TRUNCATED_CELLS = """() => [...document.querySelectorAll('table.lrd-verdicts td, table.lrd-verdicts th')].filter(c =>
  [c, ...c.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
  || c.getBoundingClientRect().right > c.closest('table').getBoundingClientRect().right + 1
  || /(…|\\.\\.\\.)$/.test(c.innerText.trim())).map(c => c.innerText.trim().slice(0, 60))"""

LANDING_CHECKS = """() => {
  const TRUNCATED = """ + TRUNCATED_CELLS + """;
  const rows = [...document.querySelectorAll('table.lrd-verdicts tbody tr')];
  const first = rows.length ? rows[0].getBoundingClientRect() : null;
  const findings = document.querySelector('.lrd-findings');
  const table = document.querySelector('table.lrd-verdicts');
  return {
    heights: rows.map(r => r.getBoundingClientRect().height),
    line: parseFloat(getComputedStyle(document.querySelector('article p')).lineHeight),
    onScreen: first ? rows.filter(r => r.getBoundingClientRect().bottom <= first.top + innerHeight).length : 0,
    truncated: TRUNCATED(),
    sideways: [...document.querySelectorAll('table.lrd-verdicts')].filter(
      t => t.scrollWidth > t.parentElement.clientWidth + 1).length,
    pageWidth: document.documentElement.scrollWidth, viewWidth: innerWidth,
    findings: findings ? findings.innerText : '',
    findingsFirst: !!(findings && table && (findings.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING)),
    figure: !!document.querySelector('.lrd-verdict-figure img'),
  };
}"""


def _landing_problems(page, got: dict, expected_rows: int) -> list[str]:
    """The landing page opens with what the book found, then a dashboard read at a glance."""
    land = page.evaluate(LANDING_CHECKS)
    problems = []
    if got["dashboard"] != expected_rows:
        problems.append(f"dashboard has {got['dashboard']} lines, expected one per claim ({expected_rows})")
    if land["truncated"]:
        problems.append(f"dashboard at 1280 px: {len(land['truncated'])} cells cut short: {land['truncated'][:5]}")
    tall = [h for h in land["heights"] if h > 3.5 * land["line"]]
    if tall:
        problems.append(f"dashboard: {len(tall)} claims take more than three lines of text (up to {max(tall):.0f} px)")
    if land["onScreen"] < min(10, expected_rows):
        problems.append(f"dashboard: {land['onScreen']} claims on one 1280 x 900 screen, fewer than ten")
    if land["sideways"] or land["pageWidth"] > land["viewWidth"]:
        problems.append("dashboard scrolls sideways")
    text = land["findings"]
    opened = land["findingsFirst"] and re.search(r"Of the \d+ (judged )?claims", text) and (
        "cannot decide" in text or "Every claim was decided" in text)
    if not opened:
        problems.append(f"landing page does not open with the findings above the dashboard: {land['findings'][:80]!r}")
    if not land["figure"]:
        problems.append("landing page has no figure of every claim's outcome and strength")
    return problems


OPENING_CHECKS = """() => {
  const article = document.querySelector('main article');
  const top = article.querySelector('section');
  const claim = top.querySelector(':scope > blockquote') || top.querySelector(':scope > p');
  const box = article.querySelector('.lrd-rerun');
  const inputs = [...article.querySelectorAll('.tag_parameters .cell_input, .tag_injected-parameters .cell_input')];
  return {claim: claim ? claim.getBoundingClientRect().bottom : null, height: innerHeight,
          box: box ? {h: box.getBoundingClientRect().height, folded: box.classList.contains('toggle-hidden'),
                      text: box.innerText} : null,
          inputs: inputs.filter(i => i.getBoundingClientRect().height > 0).length};
}"""


def _opening_problems(page) -> list[str]:
    """A chapter opens with its claim: on the first screen, the re-run box folded (a dropdown that
    stays in the page), the parameters cells' inputs not shown."""
    got = page.evaluate(OPENING_CHECKS)
    problems = []
    if got["claim"] is None or got["claim"] > got["height"]:
        problems.append(f"the claim ends at {got['claim']} px, below the first {got['height']} px screen")
    box = got["box"]
    if box is None or not box["folded"] or box["h"] > 80 or "Re-run this chapter" not in box["text"]:
        problems.append(f"the re-run box is not a folded dropdown: {box and {k: box[k] for k in ('h', 'folded')}}")
    if got["inputs"]:
        problems.append(f"{got['inputs']} parameters cell inputs are shown")
    return problems


@pytest.mark.book
def test_the_dashboard_reads_on_a_phone(site):
    """At 390 px (a phone) each claim is a card: no cell cut short, nothing scrolls sideways."""
    sync_playwright, exe = _browser()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page.goto((site / "_build" / "html" / "book" / "intro.html").as_uri(), wait_until="load")
        truncated = page.evaluate(TRUNCATED_CELLS)
        sideways = page.evaluate("() => document.documentElement.scrollWidth > innerWidth + 1")
        rows = page.evaluate("() => document.querySelectorAll('table.lrd-verdicts tbody tr').length")
        browser.close()
    assert rows == len(dashboard_rows(site))
    assert truncated == [] and not sideways, (truncated[:5], sideways)


def test_the_truncation_check_finds_a_cut_cell(tmp_path):
    """The check is live: a cell cut by an ellipsis, and one whose text ends in "…", are found."""
    sync_playwright, exe = _browser()
    page_html = tmp_path / "t.html"
    page_html.write_text('<table class="lrd-verdicts" style="width:200px;table-layout:fixed"><tbody><tr>'
                         '<td style="white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
                         'a claim far too long for its narrow column</td><td>the paper said…</td><td>fine</td>'
                         '</tr></tbody></table>')
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(page_html.as_uri())
        found = page.evaluate(TRUNCATED_CELLS)
        browser.close()
    assert found == ["a claim far too long for its narrow column", "the paper said…"]


#: Where ``make screenshot`` writes the README's picture of the dashboard, and the phone's.
SCREENSHOT = ROOT / "docs" / "dashboard.png"
PHONE_SCREENSHOT = ROOT / "docs" / "dashboard-phone.png"


@pytest.mark.book
def test_dashboard_screenshot(request, tmp_path):
    """The README's picture: the landing page's dashboard at 1280 x 900. From the book
    built here (``LRD_SCREENSHOT_BOOK=_build/html``, ``make screenshot``: written to docs/), else
    from the ci book, into a temporary folder."""
    sync_playwright, exe = _browser()
    built = os.environ.get("LRD_SCREENSHOT_BOOK")
    html_root = Path(built).resolve() if built else request.getfixturevalue("site") / "_build" / "html"
    if built:  # the README's pictures show the book it describes: the default one
        from lrd.book.findings import build_profile

        results = html_root.parents[1] / "book" / "results"
        built_with = build_profile(results, book.chapters()) if results.is_dir() else "unknown (no book/results)"
        assert built_with == "default", (
            f"{html_root} was built with the {built_with!r} parameters; the README's pictures come from the "
            "default book (`make book`, then `make screenshot`)")
    shots = {(1280, 900): SCREENSHOT if built else tmp_path / "dashboard.png",
             (390, 844): PHONE_SCREENSHOT if built else tmp_path / "dashboard-phone.png"}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        for (width, height), out in shots.items():
            out.parent.mkdir(parents=True, exist_ok=True)
            page = browser.new_page(viewport={"width": width, "height": height})
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
            page.goto((html_root / "book" / "intro.html").as_uri(), wait_until="load")
            page.evaluate("() => document.querySelector('.lrd-verdicts-box').scrollIntoView()")
            page.screenshot(path=str(out))
        browser.close()
    import matplotlib.image

    for (width, height), out in shots.items():
        image = matplotlib.image.imread(out)
        assert image.shape[:2] == (height, width)
        assert (image[..., :3] < 0.5).mean() > 0.01, f"the screenshot {out.name} is blank"
