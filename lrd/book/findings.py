"""What the book found, in a few sentences: counts per outcome per paper, the decisive verdicts,
and why the panel cannot decide the rest, computed from the verdict records of a built book.

The same functions write the landing page's opening (``{lrd-findings}``, gathered at build time
by :mod:`lrd.book.sphinxext`) and the README's "What the book found" block
(``python -m lrd.book.findings``), so neither is ever typed by hand. The README block is rendered
from a committed snapshot, ``book/findings.json``, which that command writes from a built book's
``book/results``; a test fails when the README differs from the snapshot, when the snapshot
misses a claim of :data:`lrd.verdicts.CLAIMS`, or when a book built here at the defaults found
something else.

    python -m lrd.book.findings                     # from ./book/results: snapshot + README block
    python -m lrd.book.findings --results /other/clone/book/results
    python -m lrd.book.findings --check             # exit 1 when the README block is stale
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "book" / "findings.json"
README = ROOT / "README.md"

#: Outcomes in the order the book reports them (:func:`lrd.verdicts.decide`).
OUTCOMES = ("reproduced", "contradicted", "inconclusive", "not testable", "demonstrated")
#: The fields of a verdict record the snapshot keeps.
KEPT = ("claim", "chapter", "section", "paper", "label", "kind", "outcome", "p_value", "p_against", "p_min", "effect",
        "effect_format", "power", "per_model", "per_model_label", "robust", "flips")
#: What the headline calls a decision that Holm's adjustment keeps but one alternative of the
#: book's rules changes (:func:`headline_outcomes`): counted apart, not as decided.
NOT_ROBUST = "not robust"
#: The outcomes that decide a claim (a demonstration decides it by construction).
DECIDED = ("reproduced", "contradicted", "demonstrated")

BEGIN, END = "<!-- findings:begin", "<!-- findings:end -->"


def verdict_records(results: Path, chapters: Iterable[str] | None = None) -> list[dict]:
    """Every verdict record in ``results/<chapter>.json``, in book order (``chapters``, default
    every JSON file there, sorted)."""
    results = Path(results)
    names = list(chapters) if chapters is not None else sorted(p.stem for p in results.glob("*.json"))
    found = []
    for name in names:
        path = results / f"{name}.json"
        if path.is_file():
            found += json.loads(path.read_text()).get("verdicts", [])
    return found


def _short_authors(authors: str) -> str:
    names = [a.strip() for a in re.sub(r"\bet al\.?", "", authors).split(",") if a.strip()]
    last = names[0].split()[-1] if names else authors
    return f"{last} et al." if len(names) > 2 else " and ".join(n.split()[-1] for n in names)


def paper_name(key: str) -> str:
    """``"Skean et al. 2025"`` for a key of :data:`lrd.verdicts.PAPERS`."""
    from lrd.verdicts import PAPERS

    paper = PAPERS.get(key)
    year = re.search(r"(19|20)\d\d", key)
    return f"{_short_authors(paper.authors) if paper else key} {year.group(0) if year else ''}".strip()


def counts(records: list[dict], outcomes: dict[str, str] | None = None) -> dict[str, Counter]:
    """Outcome counts per paper key, papers in :data:`lrd.verdicts.PAPERS` order; ``outcomes``
    (claim -> outcome, e.g. :func:`adjusted`) replaces the records' own."""
    from lrd.verdicts import PAPERS

    per = {key: Counter() for key in PAPERS}
    for r in records:
        per.setdefault(r["paper"], Counter())[(outcomes or {}).get(r["claim"], r["outcome"])] += 1
    return {k: c for k, c in per.items() if c}


def _as_tests(records: list[dict]) -> list[dict]:
    """Records with their ``kind`` (a snapshot written before it kept the field: a verdict with a
    p-value is a test, one without a demonstration or untestable)."""
    return [r if r.get("kind") else {**r, "kind": "test" if r.get("p_value") is not None else "demonstration"}
            for r in records]


def adjusted(records: list[dict]) -> tuple[dict[str, str], dict]:
    """``(claim -> outcome after Holm's adjustment, the adjustment's numbers)``: the claims tested
    at once, adjusted as :func:`lrd.verdicts.record.adjusted_outcomes` says."""
    from lrd.verdicts.record import adjusted_outcomes, multiplicity

    tests = _as_tests(records)
    return adjusted_outcomes(tests), multiplicity(tests)


def robustness_checked(records: list[dict]) -> bool:
    """Whether the records say if the book's rules decide them (a snapshot written before the
    records kept ``robust`` does not: its verdicts read as "not checked")."""
    return any(r.get("robust") is not None for r in records)


def headline_outcomes(records: list[dict]) -> dict[str, str]:
    """claim -> the outcome the headline counts: after Holm's adjustment (:func:`adjusted`), and a
    decision (:data:`DECIDED`) that an alternative of one of the book's rules changes (its record's
    ``robust`` False) counted apart as :data:`NOT_ROBUST`. A record without ``robust`` (not
    checked) keeps its adjusted outcome.

    Examples
    --------
    >>> rows = [{"claim": "skean.gain", "kind": "test", "outcome": "reproduced", "p_value": 0.001, "p_min": 0.001,
    ...          "robust": True},
    ...         {"claim": "skean.choice", "kind": "test", "outcome": "reproduced", "p_value": 0.001, "p_min": 0.001,
    ...          "robust": False},
    ...         {"claim": "skean.valley", "kind": "test", "outcome": "reproduced", "p_value": 0.04, "p_min": 0.001,
    ...          "robust": False}]
    >>> headline_outcomes(rows)  # Holm over three: 0.003, 0.003, 0.04: each kept
    {'skean.gain': 'reproduced', 'skean.choice': 'not robust', 'skean.valley': 'not robust'}
    >>> rows.append({"claim": "skean.metrics_track", "kind": "test", "outcome": "reproduced", "p_value": 0.04,
    ...              "p_min": 0.001, "robust": True})
    >>> headline_outcomes(rows)  # Holm over four: 0.004, 0.004, 0.08, 0.08: Holm first, then robustness
    {'skean.gain': 'reproduced', 'skean.choice': 'not robust', 'skean.valley': 'inconclusive', 'skean.metrics_track': 'inconclusive'}
    """
    after, _ = adjusted(records)
    robust = {r["claim"]: r.get("robust") for r in records}
    return {c: NOT_ROBUST if o in DECIDED and robust.get(c) is False else o for c, o in after.items()}


def _count_text(c: Counter) -> str:
    parts = [f"{c[o]} {o}" for o in (*OUTCOMES, NOT_ROBUST) if c[o]]
    return ", ".join(parts) if parts else "no verdict"


def _p(value: float) -> str:
    return f"{value:.2g}"


def undecided_reason(records: list[dict], n_models: int | None = None) -> str:
    """One sentence: why the claims left open (not testable, inconclusive) stay open on this panel."""
    open_ = [r for r in records if r["outcome"] in ("not testable", "inconclusive")]
    if not open_:
        return "Every claim was decided on this panel."
    bound = [r for r in open_ if r["outcome"] == "not testable" and r.get("p_min") is not None]
    absent = [r for r in open_ if r["outcome"] == "not testable" and r.get("p_min") is None]
    weak = [r for r in open_ if r["outcome"] == "inconclusive"]
    panel = f"{n_models} models" if n_models else "models"
    parts = []
    if bound:
        lo, hi = min(r["p_min"] for r in bound), max(r["p_min"] for r in bound)
        span = _p(lo) if lo == hi else f"{_p(lo)} to {_p(hi)}"
        parts.append(f"for {len(bound)}, the model is the unit of the test and {panel} (fewer in the groups a claim "
                     f"compares) cannot reach p ≤ 0.05 whatever the data (smallest attainable p {span})")
    if absent:
        verb = "needs" if len(absent) == 1 else "need"
        parts.append(f"{len(absent)} {verb} models or data the offline panel lacks or has too few of")
    if weak:
        parts.append(f"{len(weak)} {'was' if len(weak) == 1 else 'were'} testable here and came out inconclusive")
    return "The panel cannot decide the rest: " + "; ".join(parts) + "."


def summary(records: list[dict], *, n_models: int | None = None) -> dict[str, Any]:
    """The numbers the landing page and the README state, from verdict records: each outcome's
    count as judged (``total``, ``papers``) and after Holm's adjustment over the claims tested
    (``adjusted``, ``papers_adjusted``, ``outcomes_adjusted``; :func:`adjusted`). Where the
    records say whether the book's rules decide them (:func:`robustness_checked`), the adjusted
    counts are the headline's (:func:`headline_outcomes`): a decision that an alternative of the
    book's rules changes is counted apart, under :data:`NOT_ROBUST` (``not_robust`` lists them;
    ``not_checked``, the decisions whose records do not say; ``decided_elsewhere``, the claims left
    undecided at the book's rules that an alternative of them would decide, never counted:
    :func:`decided_by_an_alternative`)."""
    total = Counter(r["outcome"] for r in records)
    checked = robustness_checked(records)
    outcomes, m = adjusted(records)
    holm_moved = any(outcomes.get(r["claim"], r["outcome"]) != r["outcome"] for r in records)
    if checked:
        outcomes = headline_outcomes(records)
    kinds = (*OUTCOMES, NOT_ROBUST) if checked else OUTCOMES
    after = Counter(outcomes.get(r["claim"], r["outcome"]) for r in records)
    extra = {} if not checked else {
        "robustness": True, "holm_moved": holm_moved,
        "not_robust": [r for r in records if outcomes.get(r["claim"]) == NOT_ROBUST],
        "not_checked": [r["claim"] for r in records if r.get("robust") is None and outcomes.get(r["claim"]) in DECIDED],
        "decided_elsewhere": [r for r in records if outcomes.get(r["claim"], r["outcome"]) not in (*DECIDED, NOT_ROBUST)
                              and decided_by_an_alternative(r)]}
    return {**extra, "n_claims": len(records), "n_models": n_models, "total": {o: total[o] for o in OUTCOMES},
            "adjusted": {o: after[o] for o in kinds}, "outcomes_adjusted": outcomes,
            "p_holm": m["p_holm"], "p_against_holm": m["p_against_holm"], "n_tested": m["n_tested"],
            "papers": {k: {o: c[o] for o in OUTCOMES} for k, c in counts(records).items()},
            "papers_adjusted": {k: {o: c[o] for o in kinds} for k, c in counts(records, outcomes).items()},
            "decisive": [r for r in records if r["outcome"] in ("reproduced", "contradicted")],
            "reason": undecided_reason(records, n_models)}


def flips_text(flips, sep: str = "; ") -> str:
    """Alternatives of the book's rules in words, ``label = value gives outcome`` joined by ``sep``.

    >>> flips_text([{"rule": "band", "value": "0.3", "outcome": "inconclusive"}])
    'band = 0.3 gives inconclusive'
    """
    return sep.join(f"{f.get('label') or f['rule']} = {f['value']} gives {f['outcome']}" for f in flips or [])


def decided_by_an_alternative(record: dict) -> list[dict]:
    """The flips of a verdict (its record's ``flips``: the book's alternative rules that change its
    outcome) that reach a decision (:data:`DECIDED`): for an undecided verdict, what a referee who
    preferred that reading would call it.

    >>> decided_by_an_alternative({"outcome": "not testable", "flips": [
    ...     {"rule": "scope", "value": "every model", "outcome": "contradicted"},
    ...     {"rule": "band", "value": "(0.3, 0.7)", "outcome": "inconclusive"}]})
    [{'rule': 'scope', 'value': 'every model', 'outcome': 'contradicted'}]
    """
    return [f for f in record.get("flips") or [] if f.get("outcome") in DECIDED]


def n_models_of(results: Path) -> int | None:
    """The size of the panel the book ran on, as the first chapter glued it (None if absent)."""
    path = Path(results) / "models_and_tasks.json"
    if path.is_file():
        value = json.loads(path.read_text()).get("models_and_tasks-n_models")
        return int(value) if isinstance(value, (int, float)) else None
    return None


def _decisive_text(r: dict, cite, link=None, holm: dict | None = None) -> str:
    """A decisive verdict in a few words: its label (linked to its evidence by ``link(r)``), paper
    and the p that decided it (for a contradiction, the p of the test against the claim), with
    its Holm-adjusted value from ``holm`` (claim -> adjusted p) where given."""
    from lrd.verdicts import ALPHA

    label = f"[{r['label']}]({link(r)})" if link else f"*{r['label']}*"
    holm = (holm or {}).get(r["claim"])
    after = "" if holm is None else (f", {_p(holm)} after Holm's adjustment"
                                     + ("" if holm <= ALPHA else ": not kept"))
    if r.get("robust") is False and r.get("flips"):
        after += "; not robust: " + flips_text(r["flips"], ", ")
    if r["outcome"] == "contradicted" and r.get("p_against") is not None:
        return f"{label} ({cite(r['paper'])}, p against the claim = {_p(r['p_against'])}{after})"
    if r.get("p_value") is not None:
        return f"{label} ({cite(r['paper'])}, p = {_p(r['p_value'])}{after})"
    return f"{label} ({cite(r['paper'])})"


def sentences(s: dict, cite=paper_name, link=None) -> list[str]:
    """The landing page's and README's opening sentences (markdown); ``cite(key)`` names a paper,
    ``link(record)`` is where a decisive verdict's evidence is (None: no links)."""
    t, a = s["total"], s.get("adjusted", s["total"])
    robustness = bool(s.get("robustness"))
    moved = any(a[o] != t[o] for o in OUTCOMES)  # Holm's adjustment or robustness changed a count
    fragile = a.get(NOT_ROBUST, 0)
    why = [f"after Holm's adjustment for the {s['n_tested']} claims tested at once"
           if s.get("holm_moved", moved) else "",
           "counting a decision only where every alternative of the book's rules leaves it unchanged"
           if robustness and a.get(NOT_ROBUST) else ""]
    why = " and ".join(w for w in why if w)
    first = (f"Of the {s['n_claims']} claims of the four papers, " + (f"{why}, " if why else "")
             + f"the book reproduced {a['reproduced']}, contradicted {a['contradicted']}, left {a['inconclusive']} "
             f"inconclusive, found {a['not testable']} not testable on its panel"
             + (f" of {s['n_models']} models" if s.get("n_models") else "")
             + f" and demonstrated {a['demonstrated']} by construction"
             + (f"; {fragile} more {'decision is' if fragile == 1 else 'decisions are'} {NOT_ROBUST}: an "
                f"alternative of the book's rules changes {'it' if fragile == 1 else 'them'}" if fragile else "")
             + (f"; judged each alone, it reproduced {t['reproduced']}, contradicted {t['contradicted']}"
                + (f", left {t['inconclusive']} inconclusive and demonstrated {t['demonstrated']}."
                   if a["demonstrated"] != t["demonstrated"] else f" and left {t['inconclusive']} inconclusive.")
                if moved else "."))
    papers = s.get("papers_adjusted", s["papers"])

    def tally(k: str) -> str:
        alone = s["papers"].get(k, {})
        text = _count_text(Counter(papers[k]))
        return text if Counter(alone) == Counter(papers[k]) else f"{text} (judged alone: {_count_text(Counter(alone))})"

    per = "By paper, after the adjustment: " + "; ".join(f"{cite(k)}: {tally(k)}" for k in papers) + "."
    out = [first, per]
    by_outcome = {o: [r for r in s["decisive"] if r["outcome"] == o] for o in ("reproduced", "contradicted")}
    holm = {"reproduced": s.get("p_holm"), "contradicted": s.get("p_against_holm")}
    decided = [f"{o.capitalize()}, each judged alone: " + "; ".join(_decisive_text(r, cite, link, holm[o]) for r in rs)
               + "." for o, rs in by_outcome.items() if rs]
    if s.get("not_robust"):
        decided.append(f"{NOT_ROBUST.capitalize()} (each decided alone, changed by one of the book's alternative "
                       "rules): " + "; ".join(_fragile_text(r, cite, link) for r in s["not_robust"]) + ".")
    if s.get("decided_elsewhere"):
        decided.append("Undecided at the book's rules, decided (judged alone, before Holm's adjustment) under one "
                       "of their alternatives, not counted: "
                       + "; ".join(_fragile_text({**r, "flips": decided_by_an_alternative(r)}, cite, link)
                                   for r in s["decided_elsewhere"]) + ".")
    if s.get("not_checked"):
        n = len(s["not_checked"])
        decided.append(f"For {n} decision{'s' if n > 1 else ''} the record does not say whether the book's rules "
                       f"decide {'them' if n > 1 else 'it'} (not checked): " + ", ".join(s["not_checked"]) + ".")
    return out + decided + [s["reason"]]


def _fragile_text(r: dict, cite, link=None) -> str:
    """A decision that an alternative of the book's rules changes: its label, paper, outcome and
    the alternatives that change it (``rule = value gives 'outcome'``)."""
    label = f"[{r['label']}]({link(r)})" if link else f"*{r['label']}*"
    flips = flips_text(r.get("flips"), ", ")
    return f"{label} ({cite(r['paper'])}, {r['outcome']}; {flips})"


# ---- the snapshot and the README block ---------------------------------------------------------

def snapshot(results: Path, *, commit: str, date: str, chapters: Iterable[str] | None = None,
             profile: str = "default") -> dict:
    """The committed record of what a build found: its date, commit, parameter profile, panel
    size and the kept fields of every verdict."""
    records = [{k: r.get(k) for k in KEPT if k in r} for r in verdict_records(results, chapters)]
    return {"date": date, "commit": commit, "profile": profile, "n_models": n_models_of(results), "verdicts": records}


def build_profile(results: Path, chapters: Iterable[str]) -> str:
    """The parameters the chapters beside ``results`` were executed with: "default", a declared
    profile's name (all chapters at it), or "custom"."""
    import nbformat

    from lrd import book

    chapters = list(chapters)
    used = {c: nbformat.read(Path(results).parent / f"{c}.ipynb", as_version=4).metadata.get("papermill", {})
            .get("parameters") or {} for c in chapters}
    if not any(used.values()):
        return "default"
    for name in ("ci", "report"):
        if all(used[c] == book.profile(name, c) for c in chapters):
            return name
    return "custom"


def chapter_source(record: dict) -> str:
    """Where a verdict's chapter is in the repository (a path relative to the README): its
    jupytext source, which every forge renders and every clone has."""
    return f"notebooks/{record['chapter']}.py"


def readme_block(snap: dict) -> str:
    """The README's "What the book found" block, rendered from a snapshot (markdown, markers included).

    Its links are relative (each chapter's source), so they work in a clone, a fork and on any
    forge; the built dashboard is named by where it is, not by a typed address."""
    s = summary(snap["verdicts"], n_models=snap.get("n_models"))
    columns = (*OUTCOMES, NOT_ROBUST) if s.get("robustness") else OUTCOMES
    header = "| paper | " + " | ".join(columns) + " |"
    after = s["papers_adjusted"]

    def cell(k: str, o: str) -> str:  # after the adjustment, the count judged alone beside it where it differs
        alone, held = s["papers"][k].get(o, 0), after[k][o]
        return str(held) if held == alone else f"{held} ({alone} alone)"

    rows = [f"| {paper_name(k)} | " + " | ".join(cell(k, o) for o in columns) + " |" for k in after]
    body = sentences(s, link=chapter_source)
    at = "" if snap.get("profile", "default") == "default" else (
        f" with the `{snap['profile']}` parameter profile (smaller than the book's defaults)")
    lines = [f"{BEGIN}: generated by `python -m lrd.book.findings` from book/findings.json; do not edit -->",
             f"From the book built on {snap['date']} at commit {snap['commit']}{at}:", "", body[0], "",
             header, "|---" * (len(columns) + 1) + "|", *rows, "",
             "Counts after Holm's adjustment over the claims tested at once"
             + (f"; a decision that an alternative of one of the book's rules changes is counted apart, as "
                f"\"{NOT_ROBUST}\"" if s.get("robustness") else "")
             + "; in brackets, where it differs, the count with each claim judged alone.", "", *[line for b in body[2:] for line in (b, "")],
             "Every claim, with its test and evidence: the dashboard on the book's landing page "
             "(`make book`, then `_build/html/index.html`); what would decide each undecided one (the smallest "
             "simulated panel with 80% power, its hub models and cost): the appendix \"What would decide each "
             "claim\", from [book/plan.json](book/plan.json).", END]
    return "\n".join(lines)


def replace_block(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """``text`` with the block between ``begin`` and ``end`` (markers included) replaced by ``block``."""
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"no {begin} ... {end} block in the README")
    return text[:start] + block + text[stop + len(end):]


def current_block(text: str, begin: str = BEGIN, end: str = END) -> str:
    """The block between ``begin`` and ``end`` of ``text``, markers included."""
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"no {begin} ... {end} block in the README")
    return text[start:stop + len(end)]


def _build_commit_and_date(results: Path) -> tuple[str, str]:
    """The commit of the checkout holding ``results`` and the date its chapters were executed."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=results, capture_output=True, text=True,
                            check=True).stdout.strip()
    times = [p.stat().st_mtime for p in Path(results).glob("*.json")]
    when = datetime.fromtimestamp(max(times), timezone.utc) if times else datetime.now(timezone.utc)
    return commit, when.strftime("%Y-%m-%d")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write book/findings.json and the README's findings block.")
    parser.add_argument("--results", type=Path, default=ROOT / "book" / "results",
                        help="a built book's results folder (default: this checkout's book/results)")
    parser.add_argument("--check", action="store_true", help="only check that the README block matches the snapshot")
    parser.add_argument("--commit", help="the commit the results were computed at (default: HEAD of their checkout)")
    parser.add_argument("--date", help="the date they were computed (default: their files' newest mtime)")
    args = parser.parse_args(argv)
    readme = README.read_text()
    if args.check:
        snap = json.loads(SNAPSHOT.read_text())
        ok = current_block(readme) == readme_block(snap)
        print("README findings block is " + ("up to date" if ok else "stale: run `python -m lrd.book.findings`"))
        return 0 if ok else 1
    from lrd import book

    if not args.results.is_dir():
        parser.error(f"--results {args.results}: no such folder (build the book first: make book)")
    commit, date = (args.commit, args.date) if args.commit and args.date else _build_commit_and_date(args.results)
    snap = snapshot(args.results, commit=args.commit or commit, date=args.date or date, chapters=book.chapters(),
                    profile=build_profile(args.results, book.chapters()))
    SNAPSHOT.write_text(json.dumps(snap, indent=1, sort_keys=True) + "\n")
    README.write_text(replace_block(readme, readme_block(snap)))
    print(f"wrote {SNAPSHOT.relative_to(ROOT)} ({len(snap['verdicts'])} verdicts, {snap['date']}, {snap['commit']}, "
          f"{snap['profile']} parameters) and the README block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
