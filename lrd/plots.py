"""Figures of the book: one call per figure, from tidy result tables, in one style.

Every figure is drawn inside :func:`use_book_style` (a seaborn theme sized for the book's text
column: 7 inches at 100 dpi, tick labels 10.5 pt, so text is as large as the book's smallest
body text), colours models with :func:`model_palette` (the colour-blind-safe Okabe-Ito colours,
one fixed colour per panel model in every chapter) and tells encoders from decoders by line
style (:func:`kind_dashes`: encoders solid, decoders dashed). New figure functions should do the
same::

    with use_book_style():
        grid = sns.relplot(..., palette=model_palette(models), style="architecture",
                           dashes=kind_dashes())
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import matplotlib as mpl
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from lrd.report import RESULT_COLUMNS

#: Okabe & Ito (2008) colour-blind-safe colours (black last, for an eighth series).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: The offline panel in its fixed colour order: a model keeps its colour across chapters.
PANEL = ("minilm", "mpnet", "smollm2", "gemma3", "qwen")
#: Width of a figure that fills the book's text column, in inches (at :data:`DPI`).
BOOK_WIDTH = 7.0
DPI = 100
BOOK_RC = {"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": 11, "axes.titlesize": 11.5,
           "axes.labelsize": 11, "xtick.labelsize": 10.5, "ytick.labelsize": 10.5, "legend.fontsize": 10.5,
           "legend.title_fontsize": 11, "lines.linewidth": 1.8, "lines.markersize": 4.5,
           "axes.spines.top": False, "axes.spines.right": False}


@contextlib.contextmanager
def use_book_style() -> Iterator[None]:
    """Draw inside the book's style (seaborn ``whitegrid``, :data:`BOOK_RC`); restores the rc after."""
    with mpl.rc_context(), sns.axes_style("whitegrid"):
        mpl.rcParams.update(BOOK_RC)
        mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=list(OKABE_ITO))
        yield


def model_palette(models: Iterable[str] = ()) -> dict[str, str]:
    """A fixed colour per model: the panel's five in their fixed colours, others after them.

    >>> model_palette(["qwen", "my/model"])["qwen"] == model_palette()["qwen"]
    True
    """
    palette = dict(zip(PANEL, OKABE_ITO))
    others = sorted(m for m in dict.fromkeys(models) if m not in palette)
    spare = [c for c in OKABE_ITO if c not in palette.values()]
    for i, m in enumerate(others):
        palette[m] = spare[i % len(spare)] if spare else OKABE_ITO[i % len(OKABE_ITO)]
    return palette


def model_kinds(models: Iterable[str]) -> dict[str, str]:
    """Architecture of each model ("encoder"/"decoder") for the offline panel, else "other"."""
    from lrd.assets import MODEL_PACKS

    return {m: MODEL_PACKS[m].info.get("kind", "other") if m in MODEL_PACKS else "other" for m in models}


def kind_dashes() -> dict[str, tuple]:
    """Line style per architecture: encoders solid, decoders dashed, others dotted."""
    return {"encoder": (), "decoder": (4, 1.6), "other": (1, 1.4)}


def _model_legend(figure, data: pd.DataFrame, hue: str, *, title: str | None = None) -> None:
    """One legend entry per model, in its colour and its architecture's line style, above the
    panels, under the figure's ``title``."""
    from matplotlib.lines import Line2D

    palette, dashes = model_palette(data[hue].unique()), kind_dashes()
    kinds = data.groupby(hue, sort=False)["architecture"].first()
    handles = [Line2D([], [], color=palette[m], marker="o", markersize=4.5,
                      **({"dashes": dashes[k]} if dashes.get(k) else {"linestyle": "-"})) for m, k in kinds.items()]
    labels = [f"{m} ({k})" for m, k in kinds.items()]
    figure.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 3),
                  frameon=False, handlelength=2.6, title=title, title_fontproperties={"size": 11.5})


def layer_curves(results: pd.DataFrame, measurement: str, *, hue: str = "model", col: str | None = None,
                 col_wrap: int | None = 2, ylabel: str | None = None, title: str | None = None,
                 kinds: dict[str, str] | None = None):
    """Per-layer curves of one measurement against normalised depth, one line per ``hue``.

    Parameters
    ----------
    results : DataFrame
        Tidy rows with columns ``model, task, measurement, layer, depth, value``.
    measurement : str
        Which measurement to plot.
    hue, col : str
        Column for line colour, and optionally for one panel per value.
    col_wrap : int, optional
        Panels per row when ``col`` is given.
    kinds : dict, optional
        Architecture per model (line style); default: a ``kind`` column, else the offline panel's.

    Returns
    -------
    matplotlib.figure.Figure
        Closed (so notebooks show it once, as the cell's value), :data:`BOOK_WIDTH` wide.
    """
    missing = set(RESULT_COLUMNS) - set(results.columns)
    if missing:
        raise ValueError(f"results lack columns {sorted(missing)}; build them with lrd.report.per_layer")
    data = results[results["measurement"] == measurement].copy()
    if data.empty:
        raise ValueError(f"no rows for measurement {measurement!r}; have {sorted(results['measurement'].unique())}")
    if "kind" in data.columns and kinds is None:
        data["architecture"] = data["kind"]
    else:
        kinds = kinds or model_kinds(data["model"].unique())
        data["architecture"] = data["model"].map(kinds).fillna("other")
    n_cols = min(col_wrap or 1, data[col].nunique()) if col else 1
    width = BOOK_WIDTH / n_cols
    palette = model_palette(data[hue].unique()) if hue == "model" else None
    with use_book_style():
        grid = sns.relplot(data=data, x="depth", y="value", hue=hue, style="architecture", col=col,
                           col_wrap=col_wrap if col else None, kind="line", marker="o", markeredgewidth=0,
                           palette=palette or "colorblind", dashes=kind_dashes(), legend=hue != "model",
                           height=width / (1.35 if col else 2.0), aspect=1.35 if col else 2.0,
                           facet_kws={"sharey": True})
        grid.set_axis_labels("depth (layer / L)", ylabel or measurement)
        grid.set(xticks=[0, 0.25, 0.5, 0.75, 1], xticklabels=["0", "", "0.5", "", "1"], xlim=(-0.02, 1.02))
        if col:
            grid.set_titles("{col_name}")
        if palette:
            _model_legend(grid.figure, data, hue, title=title)
        elif title:
            grid.figure.suptitle(title, y=1.07)
        grid.figure.set_size_inches(BOOK_WIDTH, grid.figure.get_size_inches()[1])
    plt.close(grid.figure)
    return grid.figure


def relevance_heatmaps(relevance: pd.DataFrame, *, measures: tuple[str, str] = ("cosine relevance", "accuracy relevance")):
    """Heatmaps of two layer relevances, layers x tasks, one row of panels per model.

    Parameters
    ----------
    relevance : DataFrame
        Tidy rows with columns ``model, task, measurement, layer, value`` (block numbers 1..L).
    measures : two measurement names, one column of panels each.

    Returns
    -------
    matplotlib.figure.Figure (closed)
    """
    models = list(dict.fromkeys(relevance["model"]))
    if not models:
        raise ValueError("relevance is empty")
    fig, axes = plt.subplots(len(models), 2, figsize=(11, 2.2 + 2.0 * len(models)), squeeze=False)
    for r, model in enumerate(models):
        for c, measure in enumerate(measures):
            part = relevance[(relevance["model"] == model) & (relevance["measurement"] == measure)]
            if part.empty:
                raise ValueError(f"no {measure!r} rows for {model!r}")
            grid = part.pivot_table(index="task", columns="layer", values="value", sort=False)
            sns.heatmap(grid, ax=axes[r, c], cmap="viridis" if c == 0 else "RdBu_r",
                        center=None if c == 0 else 0.0, cbar_kws={"label": measure})
            axes[r, c].set_title(f"{model}: {measure}", fontsize=10)
            axes[r, c].set_xlabel("removed block (layer)")
            axes[r, c].set_ylabel("")
    fig.tight_layout()
    plt.close(fig)
    return fig


def pruning_curves(curves: pd.DataFrame, *, score: str = "acc", chance: float | None = None):
    """Accuracy against the number of removed blocks, one line per pruning rule.

    Random rules are drawn as their median over seeds with a band from the minimum to the maximum.

    Parameters
    ----------
    curves : DataFrame with columns ``rule, seed, k`` and ``score``.
    chance : float, optional
        Drawn as a dotted line.
    """
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for rule, part in curves.groupby("rule", sort=False):
        g = part.groupby("k")[score]
        med = g.median()
        line, = ax.plot(med.index, med.values, marker="o", label=rule)
        if part["seed"].nunique() > 1:
            ax.fill_between(med.index, g.min().values, g.max().values, alpha=0.2, color=line.get_color())
    if chance is not None:
        ax.axhline(chance, ls=":", color="grey", label="chance")
    ax.set_xlabel("blocks removed")
    ax.set_ylabel(f"mean {score} over tasks (evaluation split)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig


def relevance_scatter(table: pd.DataFrame, *, x: str = "cosine relevance", y: str = "accuracy relevance"):
    """One panel per model: accuracy relevance against cosine relevance of every block and task."""
    grid = sns.relplot(data=table, x=x, y=y, hue="task", col="model", kind="scatter", height=3.4,
                       facet_kws={"sharex": False, "sharey": False})
    for ax in grid.axes.flat:
        ax.set_xscale("log")
        ax.axhline(0, color="grey", lw=0.8)
    plt.close(grid.figure)
    return grid.figure
