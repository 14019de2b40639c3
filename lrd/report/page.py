"""The report as one self-contained HTML page: figures inline (PNG data URIs), no script, no
network, the book's typography; one column per model."""

from __future__ import annotations

import base64
import html
import io
import json
from typing import Sequence

#: The page's style: the book's fonts and colours, columns that wrap at a laptop's width.
CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #222;
       max-width: 1400px; margin: 0 auto; padding: 1.5rem; line-height: 1.5; font-size: 16px; }
h1 { font-size: 1.8rem; margin-bottom: .2rem; } h2 { font-size: 1.35rem; margin-top: 2.2rem;
     border-bottom: 1px solid #ddd; padding-bottom: .2rem; } h3 { font-size: 1.05rem; margin: .6rem 0 .3rem; }
.models { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1.5rem; }
.summary { background: #f3f7fb; border-left: 4px solid #2a6fb0; padding: .6rem 1rem; border-radius: 4px; }
.summary li { margin: .25rem 0; }
.missing { background: #fff6e5; border-left: 4px solid #d08a00; padding: .5rem .8rem; border-radius: 4px; }
.note { color: #555; font-size: .92rem; }
table { border-collapse: collapse; font-size: .9rem; margin: .4rem 0; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid #e4e4e4; padding: .2rem .5rem; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; height: auto; }
code { background: #f2f2f2; padding: 0 .2rem; border-radius: 3px; }
"""

#: What each section answers and which chapter (and paper) it comes from.
SECTION_TITLES = {
    "layers": ("Which layer to embed from", "mid_layer", "Skean et al., ICML 2025"),
    "blocks": ("Which blocks can go", "selection_and_pruning", "Jiang, Yang, Tam 2026; Hinostroza et al. 2026"),
    "movement": ("How the representation moves", "lrd_families", "Jiang, Yang, Tam 2026; Skean et al. 2025"),
    "aggregation": ("What aggregation buys", "cayley_aggregation", "Ulanovski et al., NeurIPS 2026"),
}


def _esc(x) -> str:
    return html.escape(str(x))


def fixed(x, digits: int = 3, *, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals (a sign always, with ``signed``), never a negative zero: a
    change of -0.0001 reads "+0.000", not "-0.000" (a loss that is not there); "n/a" for None.

    >>> fixed(-0.0001, signed=True), fixed(-0.0004), fixed(0.1234, 2), fixed(None)
    ('+0.000', '0.000', '0.12', 'n/a')
    """
    if x is None:
        return "n/a"
    x = round(float(x), digits) + 0.0  # -0.0 + 0.0 is 0.0
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _num(x, digits: int = 3) -> str:
    return fixed(x, digits)


def _table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _png(fig, alt: str = "figure") -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _figure(draw, alt: str = "figure", *, layers: bool = False) -> str:
    """A figure drawn in the book's style, as an inline PNG (``alt``: what it shows, in words);
    ``layers``: its x axis counts layers, ticked at whole numbers (:func:`lrd.book.plots.tidy_axes`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lrd.book.plots import tidy_axes, use_book_style

    with use_book_style():
        fig, ax = plt.subplots(figsize=(5.6, 3.2))
        draw(ax)
        tidy_axes(ax, integer_x=layers)
        return _png(fig, alt)


def _layers(a: dict) -> str:
    def draw(ax):
        for task, values in a["curves"].items():
            ax.plot(range(len(values)), values, marker="o", ms=3, label=task)
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylabel("task score")
        ax.legend(fontsize=9, frameon=False)

    rows = [(t["task"], t["type"], ", ".join(map(str, t["layers chosen (half 1, half 2)"])), _num(t["best (cross-fitted)"]),
             _num(t["last"]), fixed(t["gain"], signed=True), ", ".join(fixed(g, signed=True) for g in t["gain on each half"]),
             _num(t.get("chance"))) for t in a["tasks"]]
    out = _figure(draw, layers=True) + _table(["task", "type", "layers chosen (halves)", "best (cross-fitted)", "last", "gain",
                                  "gain on each half", "chance"], rows)
    lf = a["label_free"]
    if lf:
        out += (f'<p>Label-free: DiME picks layer {lf["layer"]} (depth {lf["depth"]:.2f}), mean score '
                f'{_num(lf["score"])} against the last layer\'s {_num(lf["last"])}; it is one of the labelled '
                f'choices on {lf["agrees on"]} of {lf["of tasks"]} tasks.</p>')
    return out + ('<p class="note">The best layer is chosen on one half of each task\'s evaluation rows and '
                  'scored on the other (then swapped): no row both chooses and credits a layer. Chance: the same '
                  'evaluation with the labels permuted (mean over layers and permutations); a clustering score '
                  'on few rows is far above 0 by chance alone.</p>')


def _blocks(a: dict) -> str:
    rules = sorted({r["rule"] for r in a["rules"]})
    fractions = sorted({r["fraction"] for r in a["rules"]})
    by = {(r["rule"], r["fraction"]): r for r in a["rules"]}

    def draw(ax):
        for rule in rules:
            ax.plot([f * 100 for f in fractions], [by[(rule, f)]["change"] if (rule, f) in by else float("nan")
                                                   for f in fractions], marker="o", ms=3, label=rule)
        ax.plot([f * 100 for f in fractions], [next((r["random change"] for r in a["rules"] if r["fraction"] == f),
                                                    float("nan")) for f in fractions],
                color="0.4", ls="--", label="random orders (mean)")
        ax.set_xlabel("blocks removed (%)")
        ax.set_ylabel("score change")
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1))

    rows = [(rule, *[fixed(by[(rule, f)]["vs random"], signed=True) if (rule, f) in by else "" for f in fractions])
            for rule in rules]
    blocks = {r["fraction"]: r.get("blocks removed") for r in a["rules"]}
    heads = [f"{f:.0%}" + (f" ({blocks[f]} of {a['n_blocks']})" if blocks.get(f) else "") for f in fractions]
    out = _figure(draw) + ("<h3>Score change minus random orders', per budget (blocks removed)</h3>"
                           "<p class=\"note\">Mean over tasks; above 0: the rule keeps more of the score than "
                           "removing random blocks.</p>") + _table(["rule", *heads], rows)
    if a["removal sets"]:
        budgets = list(next(iter(a["removal sets"].values())))
        out += "<h3>Blocks removed</h3>" + _table(
            ["rule", *budgets], [(r, *[" ".join(map(str, s.get(b, []))) for b in budgets])
                                 for r, s in a["removal sets"].items()])
    for mc in a.get("multiple choice") or []:
        out += (f'<p>Downstream score: multiple-choice accuracy on {mc["items"]} {_esc(mc["task"])} items (one item '
                f'moves it by {fixed(mc["step"])}); intact {fixed(mc["accuracy"])}, chance measured by permuting the labels '
                f'{fixed(mc["chance"])} (p = {mc["p"]:.2g}{"" if mc["above chance"] else ": not above chance, so the changes are noise"}).</p>')
    if a["best LRD rule"]:
        out += (f'<p class="note">The LRD rule shown ({_esc(a["best LRD rule"])}) is the best of the three on these '
                'same tasks: its advantage is optimistic (chosen and scored on the same rows).</p>')
    if a["cosine vs accuracy"]:
        out += "<p>Cosine rule against accuracy rule, overlap of the removed blocks (Jaccard): " + ", ".join(
            f"{o['budget']} {fixed(o['jaccard'], 2)}" for o in a["cosine vs accuracy"]) + ".</p>"
    return out


def _movement(a: dict) -> str:
    names = list(a["curves"])

    def draw(ax):
        for name in names:
            c = a["curves"][name]
            v = c["values"]
            lo, hi = min(v), max(v)
            ax.plot(c["layers"], [(x - lo) / (hi - lo) if hi > lo else 0.5 for x in v], marker="o", ms=3, label=name)
        ax.set_xlabel("layer")
        ax.set_ylabel("value (min-max scaled)")
        ax.legend(fontsize=8, frameon=False)

    drawn = f"per-layer curves of {', '.join(names)}"
    out = _figure(draw, alt=drawn, layers=True) if names else ""
    rows = []
    for name, value in a["scores"].items():
        pos = a["panel position"].get(name)
        rows.append((name, _num(value), f"{pos['rank']} of {pos['of']}" if pos else "no cached panel model"))
    out += _table(["model-level score (mean over tasks)", "value", "rank among the panel (1 = highest)"], rows)
    said = f"The figure draws the {_esc(drawn)} (mean over tasks; prompt entropy on mid_layer's token task). " \
        if names else ""
    return out + (f'<p class="note">{said}Curves are scaled to their own range so that they share one axis; '
                  'the table gives the model-level values.</p>')


def _aggregation(a: dict) -> str:
    methods = a["methods"]
    rows = [(task, *[f"{fixed(m[x]['mean'])} ({fixed(m[x]['min'])}-{fixed(m[x]['max'])})" if x in m else ""
                     for x in methods])
            for task, m in a["tasks"].items()]
    out = _table(["task", *methods], rows)
    if a["gains"]:
        out += "<p>Mean over tasks: " + ", ".join(f"{_esc(k)} {fixed(v, signed=True)}" for k, v in a["gains"].items()) + ".</p>"
    return out + '<p class="note">Test scores, mean over seeds (range in brackets).</p>'


RENDER = {"layers": _layers, "blocks": _blocks, "movement": _movement, "aggregation": _aggregation}


def render_page(reports: Sequence[dict], *, command: str = "", json_name: str = "report.json") -> str:
    """The whole page for one or more models' :func:`lrd.report.data.model_report`."""
    cols = []
    for r in reports:
        items = "".join(f"<li>{_esc(line)}</li>" for line in r["summary"]) or "<li>No section could be computed.</li>"
        cols.append(f'<div><h3>{_esc(r["model"])}</h3><p class="note">{_esc(r.get("kind", ""))} '
                    f'{_esc(r.get("source", ""))}</p><ul class="summary">{items}</ul></div>')
    parts = [f'<h2 id="summary">Summary</h2><div class="models">{"".join(cols)}</div>']
    for key, (title, chapter, paper) in SECTION_TITLES.items():
        cols = []
        for r in reports:
            if key in r["sections"]:
                body = RENDER[key](r["sections"][key])
            else:
                why = r["missing"].get(key, "not computed")
                body = f'<p class="missing">This section is missing: {_esc(why)}</p>'
            cols.append(f'<div><h3>{_esc(r["model"])}</h3>{body}</div>')
        parts.append(f'<h2 id="{key}">{_esc(title)}</h2><p class="note">From the book\'s <code>{chapter}</code> '
                     f'chapter ({_esc(paper)}), through its cached units.</p><div class="models">{"".join(cols)}</div>')
    names = ", ".join(r["model"] for r in reports)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>lrd report: {_esc(names)}</title><style>{CSS}</style></head><body>"
            f"<h1>lrd report: {_esc(names)}</h1><p class=\"note\">What four papers on layer-wise representations "
            f"say about this model, measured on it. Made by <code>{_esc(command)}</code>; every number is in "
            f"<code>{_esc(json_name)}</code> beside this page.</p>{''.join(parts)}</body></html>")


def to_json(reports: Sequence[dict], **meta) -> str:
    """The reports as JSON (every number of the page)."""
    return json.dumps({**meta, "models": list(reports)}, indent=1, default=float)
