"""Sphinx extension of the book: the landing page's findings and verdict dashboard, and the
chapters' opening.

``{lrd-specifications}`` lists every claim's specification (:mod:`lrd.book.specs`);
``{lrd-findings}`` states what the book found in a few sentences (:mod:`lrd.book.findings`);
``{lrd-verdicts}`` renders the dashboard, one line per claim of the claims table, grouped by
paper; ``{lrd-verdict-figure}`` draws every claim's outcome and strength in one figure
(:func:`lrd.book.plots.verdict_overview`). All three read, at build time, each chapter's results
JSON (``results/<chapter>.json`` beside the executed notebook, written by
:meth:`lrd.book.glue.Glue.save`) for every chapter of the book's ``_toc.yml``, so a chapter added
to the table of contents appears without editing the landing page. A chapter that was not
executed, failed, or recorded no verdict gets a line per claim saying so.

Every chapter page opens with its claim: :func:`open_with_the_claim` folds the re-run box into a
dropdown and removes the parameters cells' inputs. Enable with
``sphinx: extra_extensions: [lrd.book.sphinxext]`` in ``_config.yml``.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from lrd.book import markup
from lrd.verdicts.claims import CLAIMS, claims_of

CLASS = "lrd-verdicts"


def toc_files(root: Path) -> list[str]:
    """Every ``file`` entry of ``root/_toc.yml``, in order, the root page excluded."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                found.append(str(node["file"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc.get("parts", toc.get("chapters", [])))
    return [os.path.splitext(f)[0] for f in found]


def _parse_time(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _failure(nb: dict) -> str | None:
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return f"{out.get('ename', 'error')}: {out.get('evalue', '')}".strip()[:160]
    if nb.get("metadata", {}).get("papermill", {}).get("exception"):
        return "papermill recorded an exception"
    return None


def chapter_rows(root: Path, docname: str) -> tuple[list[dict], list[Path]]:
    """Dashboard rows for the chapter ``docname`` (a toc entry without extension).

    Returns the rows and the files they were read from (for Sphinx's dependency tracking).
    A row is a verdict record of :data:`lrd.book.glue.VERDICT_FIELDS`, or ``{"chapter", "status"}``
    for a chapter that is not executed, failed, left results older than its execution, or
    recorded no verdict, and for each claim of the chapter (:func:`lrd.verdicts.claims_of`) that
    its results do not judge. A chapter that declared
    it tests no claim (:meth:`lrd.book.glue.Glue.no_claims`) has no row.
    """
    name = Path(docname).name
    nb_path = root / f"{docname}.ipynb"
    results = nb_path.parent / "results" / f"{name}.json"
    if not nb_path.is_file():
        return [{"chapter": name, "docname": docname, "status": "not executed: no executed notebook"}], []
    nb = json.loads(nb_path.read_text())
    failure = _failure(nb)
    if failure:
        return [{"chapter": name, "docname": docname, "status": f"failed: {failure}"}], [nb_path]
    if not results.is_file():
        return [{"chapter": name, "docname": docname, "status": f"no results: {results.name} missing"}], [nb_path]
    started = nb.get("metadata", {}).get("papermill", {}).get("start_time")
    if started and datetime.fromtimestamp(results.stat().st_mtime, timezone.utc) < _parse_time(started):
        return [{"chapter": name, "docname": docname,
                 "status": f"stale results: {results.name} predates this execution"}], [nb_path, results]
    record = json.loads(results.read_text())
    if "verdicts" not in record:
        return [{"chapter": name, "docname": docname, "status": "no verdict recorded"}], [nb_path, results]
    verdicts = record["verdicts"]  # [] when the chapter declared that it tests no claim
    rows = [{**v, "docname": docname} for v in verdicts]
    judged = {v.get("claim") for v in verdicts}
    rows += [{"chapter": name, "docname": docname, "status": f"no verdict recorded: {c.id} ({c.label})"}
             for c in claims_of(name).values() if c.id not in judged]
    return rows, [nb_path, results]


def _fmt(value: Any, fmt: str) -> str:
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return f"{value:.3g}"


#: The sphinx-design badge of each outcome (the colours of :data:`lrd.book.plots.OUTCOME_COLOURS`
#: are the badges' in ``_static/lrd.css``); a row without a verdict gets the dark badge.
BADGES = {"reproduced": "bdg-success", "contradicted": "bdg-danger", "inconclusive": "bdg-warning",
          "not testable": "bdg-secondary", "demonstrated": "bdg-info"}

#: A number as a paper states it: "2%-16%", "40 points", "<= 0.1%", "12.0x-34.3x".
_NUMBER = re.compile(r"(?<![A-Za-z_\d])(?:[<>]=?\s?|[-+~])?\d[\d.,]*\s?(?:%|x|points)?(?:\s?(?:-|to)\s?\d[\d.,]*\s?(?:%|x|points)?)?")


def paper_short(text: str | None) -> str:
    """The paper's number in a few characters: its first number, else its statement without the
    parenthesised source (never cut: the dashboard's cells wrap).

    >>> paper_short("intermediate layers 2%-16% above the last on average (Fig. 1)")
    '2%-16%'
    >>> paper_short("intermediate layers (e.g. Pythia-410M's at 40%-60% depth) 2%-16% above the last")
    '2%-16%'
    >>> paper_short("no better than Random (Table 2)")
    'no better than Random'
    """
    if not text:
        return ""
    main = re.sub(r"\([^()]*\)", "", text).strip() or text  # "(Table 1: ...)" is a source or an example, not the number
    found = _NUMBER.search(main)
    return re.sub(r"\s+", " ", found.group(0).strip() if found else main)


def _role_text(text: str) -> str:
    """Text safe inside a MyST role: no backticks, no parentheses (``{abbr}`` splits on them)."""
    return str(text).replace("`", "'").replace("(", "[").replace(")", "]").replace("\n", " ")


def dashboard_rows(root: Path) -> list[dict]:
    """One row per claim of every chapter of ``root/_toc.yml``, in book order: its verdict record,
    or a status row (``"status"``) when the chapter or the claim has no verdict. A chapter-wide
    status (not executed, failed, stale) gives a row to each of its claims (:func:`lrd.verdicts.claims_of`);
    a chapter with no claims in the claims table keeps its one status row."""
    rows = []
    for docname in toc_files(root):
        if (root / f"{docname}.md").is_file():  # a plain page, not a chapter
            continue
        found, _ = chapter_rows(root, docname)
        for r in found:
            claims = claims_of(r["chapter"]) if "status" in r and "claim" not in r else {}
            if "status" in r and claims and not r["status"].startswith("no verdict recorded: "):
                rows += [{**r, "claim": c.id, "label": c.label, "paper": c.paper.key} for c in claims.values()]
            elif "status" in r and r["status"].startswith("no verdict recorded: "):
                cid = r["status"].split(": ", 1)[1].split(" ", 1)[0]
                c = claims.get(cid) or CLAIMS.get(cid)
                rows.append({**r, "claim": cid, "label": c.label if c else cid, "paper": c.paper.key if c else None})
            else:
                rows.append(r)
    return rows


#: The appendix whose simulated power the dashboard shows for a verdict that carries none.
APPENDIX = "null_calibration"


def appendix_power(root: Path) -> dict[str, tuple[float, str]]:
    """Per claim, the power the null-calibration appendix simulated, and its label: at which effect
    and design (``results/null_calibration.csv``, written when the appendix ran); empty when it has
    not run. Power is the share of "reproduced" verdicts on panels drawn at the paper's effect."""
    import pandas as pd

    for docname in toc_files(root):
        if Path(docname).name == APPENDIX:
            path = (root / docname).parent / "results" / f"{APPENDIX}.csv"
            if not path.is_file():
                return {}
            table = pd.read_csv(path)
            return {r["claim"]: (float(r["power"]), f"simulated in the appendix, design {r['design']}: "
                                                    f"{r['power panel']}")
                    for r in table.to_dict("records") if r["power"] == r["power"]}
    return {}


def with_appendix_power(rows: list[dict], appendix: dict[str, tuple[float, str]]) -> list[dict]:
    """``rows`` with the appendix's power (:func:`appendix_power`) for verdicts that carry none of
    their own; a verdict's own power (computed at its panel's spread) is kept."""
    return [{**r, "power": appendix[r["claim"]][0], "power_label": appendix[r["claim"]][1]}
            if "outcome" in r and r.get("power") is None and r.get("claim") in appendix else r for r in rows]


def with_reexecution(rows: list[dict], root: Path) -> list[dict]:
    """``rows`` with, on each verdict, how far its numbers moved between the recorded builds of its
    chapter's profile (``reexecution``: :func:`lrd.book.rerun.claim_reexecution` over
    ``benchmarks/rerun``; the fold shows it). A chapter executed with custom parameters has none."""
    from lrd.book.findings import build_profile
    from lrd.book.rerun import claim_reexecution, load_records

    records = load_records()
    if not records:
        return rows
    profiles: dict[str, str] = {}
    out = []
    for r in rows:
        if "outcome" not in r or not r.get("claim"):
            out.append(r)
            continue
        docname = r.get("docname", "")
        if docname not in profiles:
            results = (root / docname).parent / "results"
            profiles[docname] = build_profile(results, [Path(docname).name])
        moved = claim_reexecution(r["claim"], records, profile=profiles[docname]) if profiles[docname] != "custom" else ""
        out.append({**r, "reexecution": moved} if moved else r)
    return out


def _power_cell(row: dict) -> str:
    """The power in a few characters, what it was simulated at on hover."""
    if row.get("power") is None:
        return ""
    text = f"{row['power']:.0%}"
    return f"{{abbr}}`{text} ({_role_text(row['power_label'])})`" if row.get("power_label") else text


def _status_kind(status: str) -> str:
    return status.split(":")[0]


def per_model_text(row: dict) -> str:
    """Beside the cross-model outcome, the per-model evidence in a few characters ("k/M" models
    in which the per-model test, Holm-adjusted over the panel, shows the effect), its label on
    hover; "n/a" with the reason on hover for a per-model claim that cannot have one; "" for a
    population claim.

    >>> per_model_text({"per_model": [3, 8], "per_model_label": "shown in 3 of 8 models (Holm)"})
    ' {abbr}`3/8 (shown in 3 of 8 models [Holm])`'
    >>> per_model_text({"per_model": None})
    ''
    >>> per_model_text({"per_model": None, "per_model_label": "no per-model test: not identifiable"})
    ' {abbr}`n/a (no per-model test: not identifiable)`'
    """
    if row.get("per_model") is None:
        return f" {{abbr}}`n/a ({_role_text(row['per_model_label'])})`" if row.get("per_model_label") else ""
    k, m = row["per_model"]
    return f" {{abbr}}`{k}/{m} ({_role_text(row.get('per_model_label') or 'models in which the effect shows')})`"


def table_markdown(rows: list[dict], fromdoc: str, *, specs_page: bool = False, plan: dict | None = None,
                   decide_page: str | None = None) -> str:
    """The dashboard as MyST: per paper, a heading line and a ``list-table`` with one line per claim
    (links relative to ``fromdoc``).

    Columns: the claim's short label, linked to the chapter section that defines its effect and
    holds the evidence; the outcome as a coloured badge; our effect beside the paper's number, in
    a few characters (the paper's whole statement on hover); p with the smallest p this panel
    allows; and the test's power where a verdict records it or the appendix simulated it
    (:func:`with_appendix_power`), what it was computed at on hover. Beside the outcome, for a per-model
    phenomenon, in how many models the per-model test shows it (:func:`per_model_text`); for a
    decision that Holm's adjustment over the claims tested at once does not keep
    (:func:`lrd.verdicts.record.adjusted_outcomes`), "not kept after Holm", and each paper's tally
    counts the adjusted outcomes, those judged alone beside them. Where the records say whether the
    book's rules decide them (:func:`lrd.book.tested.context`), a decision kept after Holm that an
    alternative of the book's rules changes is marked "not robust" and counted apart
    (:func:`lrd.book.findings.headline_outcomes`). Under each claim's label, a fold
    (:func:`lrd.book.tested.fold_html`) holds the paper's words, what the book tests, the language
    models of the panel, every rule with its value, and the sensitivity, one line when closed
    (``specs_page``: it links the claim's specification). With ``plan`` (:func:`lrd.book.plan.load_plan`)
    and the docname of its page (``decide_page``), an undecided claim's outcome cell links its entry
    there ("plan": what would decide it) and the folded list below names its computed design instead of the
    claim's panel text. Below the tables, folded, what panel and
    ``lrd sweep`` command would decide each claim this panel cannot test.
    """
    from lrd.verdicts import PAPERS

    power = any(r.get("power") is not None for r in rows)
    head = ["* - Claim", "  - Outcome", "  - Ours · paper", "  - p (best)"] + (["  - Power"] if power else [])
    widths = "42 18 26 14" if not power else "40 16 26 10 8"
    here = os.path.dirname(fromdoc)
    groups: dict[str | None, list[dict]] = {}
    for r in rows:
        groups.setdefault(r.get("paper"), []).append(r)
    order = [k for k in PAPERS if k in groups] + [k for k in groups if k not in PAPERS]
    lines: list[str] = []
    todo: list[str] = []
    from lrd.book.findings import NOT_ROBUST, decided_by_an_alternative, flips_text, headline_outcomes, robustness_checked
    from lrd.book.plan import anchor as plan_anchor
    from lrd.book.plan import claim_plan_text, plan_claims
    from lrd.book.tested import fold_html
    from lrd.verdicts.record import ALPHA, adjusted_outcomes

    judged = [r for r in rows if "outcome" in r]
    after = headline_outcomes(judged) if robustness_checked(judged) else adjusted_outcomes(judged)
    kept = adjusted_outcomes(judged)
    spec_ref = specs_page
    planned_claims = plan_claims(plan) if plan is not None and decide_page is not None else set()
    for key in order:
        group = groups[key]
        counted, alone = {}, {}
        for r in group:
            o = _status_kind(r["status"]) if "status" in r else r["outcome"]
            alone[o] = alone.get(o, 0) + 1
            o = after.get(r.get("claim"), o) if "status" not in r else o
            counted[o] = counted.get(o, 0) + 1
        tally = ", ".join(f"{n} {o}" for o, n in counted.items())
        if counted != alone:
            tally += (" after Holm's adjustment" + (", the decisions a book choice changes apart" if NOT_ROBUST in counted
                                                    else "") + " (judged alone: ") + ", ".join(f"{n} {o}" for o, n in alone.items()) + ")"
        title = f"{{cite:t}}`{key}`" if key in PAPERS else "Chapters without a claim of the claims table"
        lines += [f"**{title}**: {tally}", "", "```{list-table}", ":header-rows: 1", f":class: {CLASS}",
                  f":widths: {widths}", "", *head]
        for r in group:
            target = os.path.relpath(r["docname"], here or ".") + ".ipynb"
            anchor = f"#{r['section']}" if r.get("section") else ""
            label = markup.text(r.get("label") or r["chapter"])
            if "status" in r:
                kind = _status_kind(r["status"])
                cells = [f"[{label}]({target}{anchor})", f"{{bdg-dark}}`{_role_text(kind)}`",
                         f"{{abbr}}`{_role_text(kind)} ({_role_text(r['status'])})`", ""] + ([""] if power else [])
            else:
                ours = ""
                if r.get("effect") is not None:
                    ours = _fmt(r["effect"], r.get("effect_format") or "{:.3g}")
                paper = paper_short(r.get("paper_effect"))
                said = _role_text(r.get("paper_effect") or "")
                beside = " · ".join(x for x in (markup.text(ours) if ours else "–",
                                               f"{{abbr}}`{_role_text(paper)} ({said})`" if paper else "") if x)
                explained = "; ".join(x for x in (r.get("effect_label"), _interval(r)) if x)
                if explained and ours:
                    beside = f"{{abbr}}`{_role_text(ours)} ({_role_text(explained)})`" + (
                        f" · {{abbr}}`{_role_text(paper)} ({said})`" if paper else "")
                outcome = f"{{{BADGES.get(r['outcome'], 'bdg-dark')}}}`{r['outcome']}`" + per_model_text(r)
                flips = flips_text(r.get("flips"))
                if kept.get(r.get("claim"), r["outcome"]) != r["outcome"]:
                    outcome += (f" {{abbr}}`not kept after Holm (its Holm-adjusted p is above {ALPHA:g}: "
                                f"see Many claims at once, below)`")
                    if r.get("robust") is False and flips:  # and a book choice changes it too
                        outcome += f" {{abbr}}`not robust (a book choice changes it: {_role_text(flips)})`"
                elif after.get(r.get("claim")) == NOT_ROBUST:
                    outcome += f" {{abbr}}`not robust (a book choice changes it: {_role_text(flips)})`"
                elif decided_by_an_alternative(r):
                    flips = flips_text(decided_by_an_alternative(r))
                    outcome += f" {{abbr}}`not robust (a book choice would decide it, not counted: {_role_text(flips)})`"
                decided = after.get(r.get("claim"), r["outcome"]) in ("reproduced", "contradicted", "demonstrated")
                planned = r.get("claim") in planned_claims
                if planned and not decided:
                    outcome += f" · {{ref}}`plan <{plan_anchor(r['claim'])}>`"
                cells = [f"[{label}]({target}{anchor})\n" + "\n".join(fold_html(r, indent="    ", spec_ref=spec_ref)),
                         outcome, beside, p_text(r)] + ([_power_cell(r)] if power else [])
                if r["outcome"] == "not testable" and (planned or r.get("panel")):
                    design = claim_plan_text(plan, r["claim"]) if planned else ""
                    todo.append(f"- [{label}]({target}{anchor}): "
                                + (design if design else markup.text(r['panel'])
                                   + (f"; `{r['sweep']}`" if r.get("sweep") else "")))
            lines += [f"* - {cells[0]}"] + [f"  - {c}" for c in cells[1:]]
        lines += ["```", ""]
    lines += [multiplicity_markdown([r for r in rows if "outcome" in r]), ""]
    if todo:
        lines += ["````{dropdown} What would decide the claims this panel cannot test", ":class-container: lrd-verdicts-todo",
                  "", *todo, "````", ""]
    return "\n".join(lines)


def multiplicity_markdown(records: list[dict]) -> str:
    """One paragraph under the dashboard: how many false "reproduced" its tested claims would give if
    every null were true, and which decisions survive Holm's adjustment over them
    (:func:`lrd.verdicts.record.multiplicity`).

    >>> from lrd.verdicts import Verdict
    >>> rows = [Verdict("skean.gain", "test", "x", test="t", p_value=0.01, p_min=0.004).record(),
    ...         Verdict("skean.choice", "test", "x", test="t", p_value=0.5, p_min=0.004).record()]
    >>> print(multiplicity_markdown(rows))  # doctest: +ELLIPSIS
    **Many claims at once.** 2 claims were tested on panels that could reach p ≤ 0.05. If none of their effects existed, about 0.1 of them would say "reproduced" by chance ... 1 of the 1 "reproduced" keep an adjusted p ≤ 0.05 (`skean.gain` 0.02); no claim is "contradicted".
    """
    from lrd.verdicts.record import multiplicity

    m = multiplicity(records)
    a = f"{m['alpha']:g}"
    if not m["n_tested"]:
        return f"**Many claims at once.** No claim was tested on a panel that could reach p ≤ {a}."

    def kept(claims: list[str], adjusted: dict, outcome: str, which: str = "") -> str:
        if not claims:
            return f"no claim is \"{outcome}\""
        shown = "; ".join(f"`{c}` {adjusted.get(c, 1.0):.2g}" for c in claims)
        return (f"{len([c for c in claims if adjusted.get(c, 1.0) <= m['alpha']])} of the {len(claims)} "
                f"\"{outcome}\" keep an adjusted p{which} ≤ {a} ({shown})")

    return (f"**Many claims at once.** {m['n_tested']} claims were tested on panels that could reach p ≤ {a}. "
            f"If none of their effects existed, about {m['expected_false']:.2g} of them would say \"reproduced\" "
            f"by chance (each test's false-\"reproduced\" rate is at most {a}: the null-calibration appendix), and "
            f"the chance of at least one would be up to {min(1.0, m['expected_false']):.0%}. With Holm's adjustment "
            f"over those {m['n_tested']} (the chance of any false decision at most {a}): "
            f"{kept(m['reproduced'], m['p_holm'], 'reproduced')}; "
            f"{kept(m['contradicted'], m['p_against_holm'], 'contradicted', ' against the claim')}.")


def _interval(r: dict) -> str:
    """``95% interval lo to hi`` in the verdict's format, or "" without one."""
    if not r.get("ci"):
        return ""
    fmt = r.get("effect_format") or "{:.3g}"
    lo, hi = r["ci"]
    return f"95% interval {_fmt(lo, fmt)} to {_fmt(hi, fmt)}"


def p_text(r: dict) -> str:
    """``p`` with the best p this panel allows, or the kind of verdict when there is no test; a
    contradiction shows the p of the test against the claim (the others on hover)."""
    if r.get("kind") == "demonstration":
        return "by design"
    if r.get("p_value") is None:
        return "no test"
    best = f" ({r['p_min']:.2g})" if r.get("p_min") is not None else ""
    if r.get("outcome") == "contradicted" and r.get("p_against") is not None:  # decided by the test against
        return (f"{{abbr}}`against {r['p_against']:.2g} (p in the paper's direction {r['p_value']:.2g}"
                + (f", best possible {r['p_min']:.2g}" if r.get("p_min") is not None else "") + ")`")
    return f"{r['p_value']:.2g}{best}"


class VerdictsDirective(SphinxDirective):
    """``{lrd-verdicts}``: the verdict dashboard gathered from every chapter's results."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir)
        _note_dependencies(self.env, root)
        container = nodes.container(classes=[f"{CLASS}-box"])
        rows = with_reexecution(with_appendix_power(dashboard_rows(root), appendix_power(root)), root)
        specs = any(Path(d).name == "specifications" for d in toc_files(root))
        decide = next((d for d in toc_files(root) if Path(d).name == "decide"), None)
        from lrd.book.plan import load_plan

        plan = load_plan() if decide else None
        self.state.nested_parse(table_markdown(rows, self.env.docname, specs_page=specs, plan=plan,
                                               decide_page=decide).splitlines(),
                                self.content_offset, container)
        return [container]


def _note_dependencies(env, root: Path) -> None:
    for docname in toc_files(root):
        if not (root / f"{docname}.md").is_file():
            for dep in chapter_rows(root, docname)[1]:
                env.note_dependency(str(dep))


def _verdicts_of(rows: list[dict]) -> list[dict]:
    return [r for r in rows if "status" not in r]


class FindingsDirective(SphinxDirective):
    """``{lrd-findings}``: what the book found, in a few sentences (:mod:`lrd.book.findings`),
    from the same records as the dashboard."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from lrd.book.findings import OUTCOMES, n_models_of, sentences, summary

        root = Path(self.env.srcdir)
        _note_dependencies(self.env, root)
        rows = dashboard_rows(root)
        records = _verdicts_of(rows)
        results = root / "book" / "results"
        s = summary(records, n_models=n_models_of(results))
        here = os.path.dirname(self.env.docname)

        def link(r: dict) -> str:
            return os.path.relpath(r["docname"], here or ".") + ".ipynb" + (f"#{r['section']}" if r.get("section") else "")

        text = sentences(s, cite=lambda key: f"{{cite:t}}`{key}`", link=link)
        missing = len(rows) - len(records)
        if missing:
            text.insert(1, f"{missing} of the {len(rows)} claims have no verdict in this build "
                           "(their chapters were not executed, failed, or recorded none); the dashboard says which.")
        text[0] = text[0].replace(f"Of the {s['n_claims']} claims", f"Of the {s['n_claims']} judged claims") \
            if missing else text[0]
        assert set(s["total"]) == set(OUTCOMES)
        container = nodes.container(classes=["lrd-findings"])
        self.state.nested_parse("\n\n".join(text).splitlines(), self.content_offset, container)
        return [container]


class VerdictFigureDirective(SphinxDirective):
    """``{lrd-verdict-figure}``: :func:`lrd.book.plots.verdict_overview` of every recorded verdict,
    drawn at build time into ``_build/lrd/`` and shown as a numbered figure (its content is the caption)."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        from lrd.book import plots
        from lrd.book.findings import paper_name
        from lrd.verdicts import PAPERS

        root = Path(self.env.srcdir)
        _note_dependencies(self.env, root)
        records = _verdicts_of(dashboard_rows(root))
        records.sort(key=lambda r: list(PAPERS).index(r["paper"]) if r["paper"] in PAPERS else len(PAPERS))
        out = root / "_build" / "lrd" / "verdict_overview.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        if not records:
            return [nodes.paragraph(text="No verdict is recorded in this build: no overview figure.")]
        fig = plots.verdict_overview(records, papers={k: paper_name(k) for k in PAPERS})
        fig.savefig(out, bbox_inches="tight", dpi=fig.dpi)
        caption = "\n".join(self.content) or "Every claim's outcome and strength."
        text = ["```{figure} /_build/lrd/verdict_overview.png", ":name: verdict-overview", "", caption, "```"]
        container = nodes.container(classes=["lrd-verdict-figure"])
        self.state.nested_parse(text, self.content_offset, container)
        return [container]


def fresh_clone_module():
    """``benchmarks/fresh_clone.py`` of this checkout, loaded as a module (it is a script, not part of the package)."""
    import importlib.util
    import sys

    from lrd.book.notebooks import ROOT

    if "lrd_fresh_clone" not in sys.modules:
        spec = importlib.util.spec_from_file_location("lrd_fresh_clone", ROOT / "benchmarks" / "fresh_clone.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["lrd_fresh_clone"] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["lrd_fresh_clone"]


class FreshCloneDirective(SphinxDirective):
    """``{lrd-fresh-clone}``: the newest figures of ``benchmarks/fresh_clone.py``'s kept
    measurements (``benchmarks/fresh_clone/*.json``): the cold book, the tests and a real fetch,
    each from the newest record that has it, and the newest cold book's seconds per chapter
    (``current_figures`` of that script)."""

    has_content = False
    #: What the directive renders: the script's ``(kept) -> markdown`` functions by name, each
    #: with the title of the dropdown that folds it (None: shown).
    parts: tuple[tuple[str, str | None], ...] = (("current_figures", None),)

    def run(self) -> list[nodes.Node]:
        fc = fresh_clone_module()
        kept = fc.records()
        self.env.note_dependency(str(fc.RECORDS))  # a record added re-reads the page (the folder's mtime)
        for record in kept:
            self.env.note_dependency(str(fc.RECORDS / record["file"]))
        text = []
        for part, fold in self.parts:
            shown = getattr(fc, part)(kept)
            if shown:
                text += [shown, ""] if fold is None else [f"````{{dropdown}} {fold}", "", shown, "````", ""]
        container = nodes.container(classes=["lrd-fresh-clone"])
        self.state.nested_parse("\n".join(text).splitlines(), self.content_offset, container)
        return [container]


class FreshCloneHistoryDirective(FreshCloneDirective):
    """``{lrd-fresh-clone-history}``: one line per kept measurement, newest first
    (``history_table``), then each chapter's seconds in every cold book (``chapter_table``)."""

    parts = (("history_table", None), ("chapter_table", "Each chapter's seconds in every cold make book"))


#: Classes of the code cells whose input a chapter page does not show: the notebook's
#: ``parameters`` cell and papermill's injected one (the folded re-run box lists every value).
HIDDEN_INPUTS = ("tag_parameters", "tag_injected-parameters")


def open_with_the_claim(app, doctree) -> None:
    """A chapter opens with its claim: the re-run box (``lrd-rerun``) is folded into a dropdown
    that stays in the page, and the parameters cells' inputs are removed (a cell left empty goes)."""
    for node in list(doctree.findall(nodes.Element)):
        classes = node.get("classes", [])
        if "lrd-rerun" in classes and "dropdown" not in classes:
            classes.append("dropdown")
        if isinstance(node, nodes.container) and any(c in classes for c in HIDDEN_INPUTS):
            for child in list(node.children):
                if "cell_input" in child.get("classes", []):
                    node.remove(child)
            if not any(isinstance(c, nodes.Element) and c.astext().strip() for c in node.children) \
                    and node.parent is not None:
                node.parent.remove(node)


def outcomes_markdown() -> str:
    """The outcome definitions as a MyST list, one badge and rule per outcome, from
    :data:`lrd.verdicts.record.OUTCOME_RULES` (the rules :func:`lrd.verdicts.record.decide` applies).

    >>> print(outcomes_markdown().splitlines()[0])
    - {bdg-success}`reproduced`: a test whose one-sided p-value in the paper's direction is at most 0.05;
    """
    from lrd.verdicts.record import OUTCOME_RULES

    items = list(OUTCOME_RULES.items())
    return "\n".join(f"- {{{BADGES[o]}}}`{o}`: {rule}{'.' if i == len(items) - 1 else ';'}"
                     for i, (o, rule) in enumerate(items))


class OutcomesDirective(SphinxDirective):
    """``{lrd-outcomes}``: what each outcome of the dashboard means (:func:`outcomes_markdown`)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        container = nodes.container(classes=["lrd-outcomes"])
        self.state.nested_parse(outcomes_markdown().splitlines(), self.content_offset, container)
        return [container]


class PlanDirective(SphinxDirective):
    """``{lrd-plan}``: what would decide each claim, from the committed plan (:func:`lrd.book.plan.plan_markdown`)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from lrd.book.plan import PLAN, load_plan, plan_markdown

        if PLAN.is_file():
            self.env.note_dependency(str(PLAN))
        container = nodes.container(classes=["lrd-plan"])
        self.state.nested_parse(plan_markdown(load_plan()).splitlines(), self.content_offset, container)
        return [container]


class SpecificationsDirective(SphinxDirective):
    """``{lrd-specifications}``: every claim's specification (:func:`lrd.book.specs.specifications_markdown`)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from lrd.book.specs import specifications_markdown

        container = nodes.container(classes=["lrd-specifications"])
        self.state.nested_parse(specifications_markdown().splitlines(), self.content_offset, container)
        return [container]


class ReexecutionDirective(SphinxDirective):
    """``{lrd-reexecution}``: per verdict, how far its numbers moved between re-executions on other hardware
    or precision (:func:`lrd.book.rerun.rerun_markdown` of the records in ``benchmarks/rerun/``)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from lrd.book.rerun import RECORDS, load_records, rerun_markdown

        self.env.note_dependency(str(RECORDS))
        for path in sorted(RECORDS.glob("*.json")):
            self.env.note_dependency(str(path))
        container = nodes.container(classes=["lrd-reexecution"])
        self.state.nested_parse(rerun_markdown(load_records()).splitlines(), self.content_offset, container)
        return [container]


def setup(app) -> dict:
    app.add_directive("lrd-outcomes", OutcomesDirective)
    app.add_directive("lrd-specifications", SpecificationsDirective)
    app.add_directive("lrd-plan", PlanDirective)
    app.add_directive("lrd-verdicts", VerdictsDirective)
    app.add_directive("lrd-findings", FindingsDirective)
    app.add_directive("lrd-verdict-figure", VerdictFigureDirective)
    app.add_directive("lrd-fresh-clone", FreshCloneDirective)
    app.add_directive("lrd-fresh-clone-history", FreshCloneHistoryDirective)
    app.add_directive("lrd-reexecution", ReexecutionDirective)
    app.connect("doctree-read", open_with_the_claim)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
