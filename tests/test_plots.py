"""Every figure of the book reads at book width: its text is at least the body text's size.

A notebook saves a figure as a PNG (``bbox_inches="tight"``, at the figure's dpi); the page
shows it at its natural width, or shrunk to the text column when it is wider
(``lrd.book.plots.COLUMN_PX``; ``tests/test_book.py`` measures the column and the body text in the
built book). Each figure function is drawn on data the size of the book's default panel.
"""

from __future__ import annotations

import inspect
import io

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from lrd.book import plots
from lrd.tables import per_layer

MODELS = {"minilm": 6, "mpnet": 12, "smollm2": 30, "gemma3": 26, "qwen": 24}  # the panel's block counts
DECODERS = {m: n for m, n in MODELS.items() if m in ("smollm2", "gemma3", "qwen")}
RNG = np.random.default_rng(0)


def _curves(measurement: str, tasks=("sst2", "sarcasm", "mmlu_subject", "lee50"), **extra) -> pd.DataFrame:
    return pd.concat([per_layer(RNG.random(n + 1), model=m, task=t, measurement=measurement).assign(**extra)
                      for m, n in MODELS.items() for t in tasks], ignore_index=True)


def _relevance() -> pd.DataFrame:
    rows = [per_layer(RNG.random(n), model=m, task=t, measurement=kind, layers=np.arange(1, n + 1))
            for m, n in DECODERS.items() for t in ("sciq", "arc_easy") for kind in ("cosine relevance",
                                                                                   "accuracy relevance")]
    return pd.concat(rows, ignore_index=True)


def _methods() -> pd.DataFrame:
    from lrd.aggregation.encoders import METHODS

    return pd.DataFrame([{"model": m, "task": t, "method": k, "mean": RNG.random(), "std": 0.02}
                         for m in MODELS for t in ("mmlu_subject", "tweet_sentiment", "sst2", "sarcasm", "lee50")
                         for k in METHODS])


def _winners() -> pd.DataFrame:
    from lrd.methods.pruning import PRUNE_RULES

    return pd.DataFrame([{"kind": kind, "rule": r, "fraction": f, "median change": -RNG.random() / 5,
                          "random median": -0.1, "beats random": bool(RNG.random() < 0.3)}
                         for kind in ("encoder", "decoder") for r in PRUNE_RULES for f in (0.05, 0.1, 0.15, 0.2)])


def _selection():
    measures = ["d_0L", "mean NRS (adjusted)", "mean GFMI"]
    scores = pd.DataFrame(RNG.random((len(MODELS), 3)), index=list(MODELS), columns=measures)
    scores["kind"] = ["encoder", "encoder", "decoder", "decoder", "decoder"]
    return (scores, pd.Series(RNG.random(len(MODELS)), index=list(MODELS)), measures), {"ylabel": "embedding average"}


def _verdicts():
    from lrd.verdicts import CLAIMS

    outcomes = ["reproduced", "contradicted", "inconclusive", "not testable", "demonstrated"]
    records = [{"claim": c.id, "paper": c.paper.key, "label": c.label, "outcome": outcomes[i % 5],
                "p_value": None if i % 5 == 4 else float(RNG.uniform(1e-3, 1)),
                "p_min": None if i % 5 == 4 else 1 / 2 ** (1 + i % 8)} for i, c in enumerate(CLAIMS.values())]
    return (records,), {"papers": {r["paper"]: r["paper"] for r in records}}


#: Every figure function with arguments like the book's largest use of it.
FIGURES = {
    "layer_curves": lambda: ((_curves("score"), "score"), {"col": "task", "col_wrap": 3, "ylabel": "MTEB main score"}),
    "relevance_heatmaps": lambda: ((_relevance(),), {}),
    "pruning_curves": lambda: ((pd.DataFrame([{"rule": r, "seed": s, "k": k, "acc": RNG.random()}
                                              for r in ("cosine (BI)", "accuracy (calibration)", "angular (Gromov)",
                                                        "Taylor (first order)", "random")
                                              for s in range(3) for k in (0, 2, 4)]),), {}),
    "relevance_scatter": lambda: ((pd.DataFrame({"cosine relevance": RNG.random(60) + 1e-3,
                                                 "accuracy relevance": RNG.normal(size=60),
                                                 "task": ["sciq", "arc_easy"] * 30,
                                                 "model": ["smollm2", "gemma3", "qwen"] * 20}),), {}),
    "variant_curves": lambda: ((pd.concat([_curves("score", ("sarcasm",), **{"final norm": v}) for v in ("on", "off")]),
                                "score"), {"style": "final norm", "ylabel": "MTEB main score"}),
    "method_scores": lambda: ((_methods(),), {"ylabel": "accuracy / Spearman"}),
    "few_shot_curves": lambda: ((_methods().query("task in ['sst2', 'tweet_sentiment']").assign(shots=8)
                                 .pipe(lambda d: pd.concat([d, d.assign(shots=16), d.assign(shots=32)])),), {}),
    "graph_memory": lambda: ((pd.DataFrame([{"graph": g, "tokens": t, "peak_bytes": float(t) ** 2 * 1e5}
                                            for g in ("fc", "cayley") for t in (8, 16, 32, 64)]),), {}),
    "correlation_heatmap": lambda: ((pd.DataFrame(RNG.uniform(-1, 1, (5, 7)), columns=[
        "prompt entropy", "dataset entropy", "effective rank", "curvature", "InfoNCE", "LiDAR", "DiME"])
        .assign(model=list(MODELS)),), {"title": "metric vs score across layers (sarcasm)"}),
    "pruning_winners": lambda: ((_winners(),), {}),
    "selection_scatter": _selection,
    "verdict_overview": _verdicts,
}

#: Functions of lrd.book.plots that draw no figure.
NOT_FIGURES = {"use_book_style", "model_palette", "model_kinds", "kind_dashes", "min_font_pt", "tidy_axes"}


def _rendered(fig) -> tuple[int, list]:
    """The PNG width a notebook saves (``bbox_inches="tight"``) and the figure's visible texts."""
    from matplotlib.text import Text

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=fig.dpi)
    width = matplotlib.image.imread(io.BytesIO(buf.getvalue())).shape[1]
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
             and (t.axes is None or t.axes.get_visible())]
    return width, texts


def test_every_figure_function_is_checked():
    functions = {n for n, f in inspect.getmembers(plots, inspect.isfunction)
                 if f.__module__ == "lrd.book.plots" and not n.startswith("_")}
    assert functions - NOT_FIGURES == set(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_text_is_at_least_the_body_size_at_book_width(name):
    args, kwargs = FIGURES[name]()
    fig = getattr(plots, name)(*args, **kwargs)
    assert fig is not None, f"{name} must return its (closed) figure"
    width, texts = _rendered(fig)
    smallest = min(texts, key=lambda t: t.get_fontsize())
    shown_px = smallest.get_fontsize() * plots.DPI / 72 * min(1.0, plots.COLUMN_PX / width)
    assert shown_px >= plots.BODY_FONT_PX - 0.05, (
        f"{name}: {smallest.get_text()!r} at {smallest.get_fontsize()} pt in a {width}-px-wide image shows at "
        f"{shown_px:.1f} px, below the body text's {plots.BODY_FONT_PX} px; needs {plots.min_font_pt(width):.1f} pt")


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figures_fit_the_column_without_shrinking_much(name):
    """A figure wider than BOOK_WIDTH (a legend outside the axes, 11-inch heatmaps) is shrunk on
    the page, and its text with it; the tight bounding box may add its margin only."""
    args, kwargs = FIGURES[name]()
    width, _ = _rendered(getattr(plots, name)(*args, **kwargs))
    assert width <= (plots.BOOK_WIDTH + 0.4) * plots.DPI, f"{name} saves {width} px wide"


def test_min_font_pt_is_the_body_size_at_the_shown_scale():
    body_pt = plots.BODY_FONT_PX * 72 / plots.DPI  # 16 px at 100 dpi
    assert plots.min_font_pt(300) == pytest.approx(body_pt)  # narrower than the column: shown 1:1
    assert plots.min_font_pt(2 * plots.COLUMN_PX) == pytest.approx(2 * body_pt)  # shown at half size
    assert plots.TEXT_PT >= plots.min_font_pt(plots.BOOK_WIDTH * plots.DPI)
