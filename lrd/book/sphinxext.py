"""Sphinx extension of the book: the verdict dashboard of the landing page.

``{lrd-verdicts}`` (a directive without arguments) renders one table row per recorded claim of
every chapter listed in the book's ``_toc.yml``. The rows are read, at build time, from each
chapter's results JSON (``results/<chapter>.json`` beside the executed notebook, written by
:meth:`lrd.book.glue.Glue.save`), so a chapter added to the table of contents appears without
editing the landing page. A chapter that was not executed, failed, or recorded no verdict gets
a row saying so. Enable with ``sphinx: extra_extensions: [lrd.book.sphinxext]`` in ``_config.yml``.
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

from lrd.verdicts.claims import claims_of

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


def _escape(text: Any) -> str:
    """Recorded text shown literally: MyST markup characters escaped, on one line."""
    return re.sub(r"([\\`*_{}\[\]()<>#+!|$~])", r"\\\1", str(text)).replace("\n", " ")


def _fmt(value: Any, fmt: str) -> str:
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return f"{value:.3g}"


def effect_text(r: dict) -> str:
    """``effect [low, high]`` in the verdict's format, or "" without an effect."""
    if r.get("effect") is None:
        return ""
    fmt = r.get("effect_format") or "{:.3g}"
    text = _fmt(r["effect"], fmt)
    if r.get("ci"):
        lo, hi = r["ci"]
        text += f" [{_fmt(lo, fmt)}, {_fmt(hi, fmt)}]"
    return text


def p_text(r: dict) -> str:
    """``p`` with the best p this panel allows, or the kind of verdict when there is no test."""
    if r.get("kind") == "demonstration":
        return "demonstration"
    if r.get("p_value") is None:
        return "not run"
    best = f" (best {r['p_min']:.2g})" if r.get("p_min") is not None else ""
    return f"{r['p_value']:.2g}{best}"


def table_markdown(rows: list[dict], fromdoc: str) -> str:
    """The dashboard as a MyST ``list-table``, one scannable line per claim (links relative to ``fromdoc``).

    Columns: the claim's short label (linked to the chapter section holding the evidence; with the
    grouping its test uses, :data:`lrd.verdicts.claims.CLAIM_GROUPINGS`, unless every model), the
    paper, the outcome, our effect with its 95% interval and what it measures, the paper's
    number, p with the best p this panel allows, and for claims this panel cannot test, the
    panel that would and its ``lrd sweep`` command.
    """
    lines = ["```{list-table}", ":header-rows: 1", f":class: {CLASS}", ":widths: 22 9 11 20 14 10 14", "",
             "* - Claim", "  - Paper", "  - Outcome", "  - Ours [95% CI]", "  - Paper's", "  - p (best possible)",
             "  - To test it"]
    here = os.path.dirname(fromdoc)
    for r in rows:
        target = os.path.relpath(r["docname"], here or ".") + ".ipynb"
        anchor = f"#{r['section']}" if r.get("section") else ""
        if "status" in r:
            lines += [f"* - [{r['chapter']}]({target}{anchor})", "  - ", f"  - **{r['status'].split(':')[0]}**",
                      f"  - {_escape(r['status'])}", "  - ", "  - ", "  - "]
            continue
        ours = effect_text(r)
        if ours and r.get("effect_label"):
            ours = f"{_escape(ours)} ({_escape(r['effect_label'])})"
        elif ours:
            ours = _escape(ours)
        todo = ""
        if r["outcome"] == "not testable" and r.get("panel"):
            todo = _escape(r["panel"]) + (f": `{r['sweep']}`" if r.get("sweep") else "")
        on = f" ({_escape(r['grouping'])})" if r.get("grouping") and r["grouping"] != "every model" else ""
        lines += [f"* - [{_escape(r['label'])}]({target}{anchor}){on}", f"  - {{cite:p}}`{r['paper']}`",
                  f"  - **{r['outcome']}**", f"  - {ours}", f"  - {_escape(r.get('paper_effect') or '')}",
                  f"  - {p_text(r)}", f"  - {todo}"]
    return "\n".join(lines + ["```", ""])


class VerdictsDirective(SphinxDirective):
    """``{lrd-verdicts}``: the verdict dashboard gathered from every chapter's results."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir)
        rows = []
        for docname in toc_files(root):
            if (root / f"{docname}.md").is_file():  # a plain page, not a chapter
                continue
            found, deps = chapter_rows(root, docname)
            rows += found
            for dep in deps:
                self.env.note_dependency(str(dep))
        container = nodes.container(classes=[f"{CLASS}-box"])
        self.state.nested_parse(table_markdown(rows, self.env.docname).splitlines(), self.content_offset,
                                container)
        return [container]


def setup(app) -> dict:
    app.add_directive("lrd-verdicts", VerdictsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
