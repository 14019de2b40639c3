"""The claims' specifications as a page of the book: for each claim, the paper's words and scope,
the book's operationalisation, and every rule the judge uses, whose it is and why.

Rendered by the ``{lrd-specifications}`` directive (:mod:`lrd.book.sphinxext`) from
:data:`lrd.verdicts.specifications.SPECIFICATIONS`, so the page and the judges cannot disagree.
"""

from __future__ import annotations

from typing import Any, Iterable

from lrd.book import markup
from lrd.verdicts.claims import PAPERS
from lrd.verdicts.spec import Rule, Specification

__all__ = ["anchor", "rule_value", "specification_markdown", "specifications_markdown"]


def anchor(claim_id: str) -> str:
    """The page's target name of a claim's specification (``"spec-skean-gain"``).

    >>> anchor("lrd.pruning_gfmi_only")
    'spec-lrd-pruning-gfmi-only'
    """
    return "spec-" + claim_id.replace(".", "-").replace("_", "-")


def rule_value(value: Any) -> str:
    """A rule's value as the page shows it: floats to 4 significant digits, sequences joined.

    >>> rule_value((0.4, 0.6)), rule_value(0.05), rule_value("GFMI"), rule_value(None)
    ('0.4, 0.6', '0.05', 'GFMI', 'none')
    >>> rule_value((14e6, 8030261248)), rule_value(2000)
    ('1.4e+07, 8.03e+09', '2000')
    """
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) or (isinstance(value, int) and abs(value) >= 100_000):
        return f"{value:.4g}"
    if hasattr(value, "text") and isinstance(getattr(value, "text"), str):  # a Scope: its words
        return value.text
    if isinstance(value, (tuple, list)):
        return ", ".join(rule_value(v) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {rule_value(v)}" for k, v in value.items()) or "none"
    return str(value)


def short_value(value: Any, *, limit: int = 60) -> str:
    """A rule's value in a few words, for a line that lists the choices flipping a verdict: a scope
    (which the page shows whole) by its first clause, anything else as :func:`rule_value`.

    >>> from lrd.verdicts.claims import Scope
    >>> short_value(Scope("autoregressive language models only (the panel's decoders), as the paper's Pythia"))
    'autoregressive language models only'
    >>> short_value(0.05), short_value((0.4, 0.6))
    ('0.05', '0.4, 0.6')
    """
    text = rule_value(value)
    if not (hasattr(value, "text") and isinstance(getattr(value, "text"), str)):
        return text
    cuts = [i for i in (text.find(" ("), text.find(","), text.find(";")) if i > 0]
    text = text[:min(cuts)] if cuts else text
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _rules_table(rules: Iterable[Rule]) -> list[str]:
    rows = ["| rule | value | whose | why, or the paper's words | alternatives tried |", "|---|---|---|---|---|"]
    for r in rules:
        whose = "{bdg-info}`paper`" if r.origin == "paper" else "{bdg-warning}`book`"
        alternatives = "; ".join(markup.cell(rule_value(v)) for v in r.alternatives) or "none"
        rows.append(f"| {markup.text(r.label or r.name)} ({markup.cell(r.name)}) | {markup.cell(rule_value(r.value))} "
                    f"| {whose} | {markup.text(r.reason)} | {alternatives} |")
    return rows


def specification_markdown(spec: Specification) -> str:
    """One claim's specification as MyST markdown, under a target :func:`anchor`."""
    c = spec.claim
    lines = [f"({anchor(c.id)})=", f"### {markup.text(c.label)}", "",
             f"{markup.code(c.id)}, judged in the chapter {markup.code(c.chapter)}; "
             f"a {'statistical test' if c.kind == 'test' else 'demonstration'}.", "",
             f"> {markup.text(c.text)}", ">", f"> ({markup.text(c.source)})", "",
             f"- **Scope the paper states.** {markup.text(spec.scope)}",
             f"- **Estimand.** {markup.text(spec.estimand)}",
             f"- **Unit of analysis.** {markup.text(spec.unit)}",
             f"- **{'Test' if c.kind == 'test' else 'What is checked'}.** {markup.text(spec.test)}"
             + (f" Level {spec.alpha:g}." if c.kind == "test" else ""),
             "- **Tables.** " + "; ".join(f"{markup.code(t.name)}{'' if t.required else ' (optional)'}: "
                                          f"{markup.text(t.description)}" for t in spec.tables), ""]
    if spec.rules:
        n_book = len(spec.book_rules)
        lines += [f"Its rules: {len(spec.rules) - n_book} the paper's, {n_book} the book's.", ""]
        lines += _rules_table(spec.rules)
    else:
        lines.append("The judge uses no number or choice beyond its tables.")
    if spec.null is not None:
        lines += ["", f"Null model of the appendix: {markup.text(spec.null.describe('panel'))}."]
    return "\n".join(lines) + "\n"


def specifications_markdown(specs: Iterable[Specification] | None = None) -> str:
    """Every claim's :func:`specification_markdown`, grouped by paper in the claims' order."""
    if specs is None:
        from lrd.verdicts.specifications import SPECIFICATIONS
        specs = SPECIFICATIONS.values()
    specs = list(specs)
    out = []
    for key, paper in PAPERS.items():
        mine = [s for s in specs if s.claim.paper.key == key]
        if mine:
            out += [f"## {markup.text(paper.cite())}", ""] + [specification_markdown(s) for s in mine]
    return "\n".join(out)
