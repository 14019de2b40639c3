"""Figures of the book: one call per figure, from tidy result tables, in one style.

Every figure is drawn inside :func:`use_book_style` (a seaborn theme sized for the book's text
column) and is :data:`BOOK_WIDTH` (7 in at :data:`DPI`) wide or narrower, legends inside that
width, so every piece of text in it is at least as large as the book's body text where the
page shows it (:func:`min_font_pt`; ``tests/test_plots.py`` checks every figure function, and
``tests/test_book.py`` the body size and column width in the built book). Figures colour models
with :func:`model_palette` (the colour-blind-safe Okabe-Ito colours, one fixed colour per panel
model in every chapter) and tell encoders from decoders by line style (:func:`kind_dashes`:
encoders solid, decoders dashed). New figure functions should do the same and return the
closed figure::

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

from lrd.tables import RESULT_COLUMNS

#: Okabe & Ito (2008) colour-blind-safe colours (black last, for an eighth series).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: Colours of models outside the panel: seaborn's "dark" palette (none is an Okabe-Ito colour).
EXTRA = ("#001c7f", "#b1400d", "#12711c", "#8c0800", "#591e71", "#592f0d", "#a23582", "#3c3c3c", "#b8850a",
         "#006374")
#: The offline panel in its fixed colour order: a model keeps its colour across chapters.
PANEL = ("minilm", "mpnet", "smollm2", "gemma3", "qwen", "e5small", "embeddinggemma", "qwen15")
#: Width of a figure that fills the book's text column, in inches (at :data:`DPI`).
BOOK_WIDTH = 7.0
DPI = 100
#: The book's body text, in CSS pixels (the theme's 16 px), and the width an output image may
#: take in the text column (672 px in a 1280-px-wide window); ``tests/test_book.py`` measures
#: both in the built book.
BODY_FONT_PX = 16
COLUMN_PX = 672


def min_font_pt(image_width_px: float) -> float:
    """Smallest font size (points) whose text is as large as the body text on the page, in an
    image ``image_width_px`` pixels wide drawn at :data:`DPI`: the page shrinks a wider image
    to :data:`COLUMN_PX`, and its text with it.

    >>> round(min_font_pt(BOOK_WIDTH * DPI), 2)  # a figure exactly BOOK_WIDTH wide
    12.0
    >>> round(min_font_pt(400), 2)  # a narrower one is shown at its natural size
    11.52
    """
    shown = min(1.0, COLUMN_PX / image_width_px)
    return BODY_FONT_PX * 72 / DPI / shown


#: Text sizes (points): at least :func:`min_font_pt` of a figure :data:`BOOK_WIDTH` wide, with
#: room for the margin that ``bbox_inches="tight"`` adds when the notebook saves it.
TEXT_PT = 12.5
#: ``text.parse_math`` off: titles, legends and tick labels carry model and task names, which a
#: user chooses; two ``$`` in one (a folder ``a$\frac{$b``) were read as mathtext, and a figure
#: failed to draw (no figure of the book uses mathtext).
BOOK_RC = {"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": TEXT_PT, "axes.titlesize": 13,
           "axes.labelsize": 13, "xtick.labelsize": TEXT_PT, "ytick.labelsize": TEXT_PT, "legend.fontsize": TEXT_PT,
           "legend.title_fontsize": 13, "figure.titlesize": 13, "figure.labelsize": 13,
           "lines.linewidth": 1.8, "lines.markersize": 4.5, "axes.spines.top": False, "axes.spines.right": False,
           "text.parse_math": False}


@contextlib.contextmanager
def use_book_style() -> Iterator[None]:
    """Draw inside the book's style (seaborn ``whitegrid``, :data:`BOOK_RC`); restores the rc after."""
    with mpl.rc_context(), sns.axes_style("whitegrid"):
        mpl.rcParams.update(BOOK_RC)
        mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=list(OKABE_ITO))
        yield


class _PlainTicks(mpl.ticker.ScalarFormatter):
    """Tick labels as plain numbers: no offset (``1e-14 - 1.23e-2``) and no negative zero."""

    def __init__(self) -> None:
        super().__init__(useOffset=False)

    def __call__(self, x, pos=None) -> str:
        text = super().__call__(x, pos)
        return text[1:] if text[:1] in ("-", "\u2212") and not text.strip("-\u22120.") else text


def tidy_axes(ax, *, integer_x: bool = False) -> None:
    """Ticks that read at face value, after the lines are drawn: whole numbers on an x axis of
    layers or blocks (``integer_x``: a model of 2 blocks has layers 0, 1 and 2, no 1.5), y tick
    labels without an offset or a negative zero, and lines equal up to float rounding (1e-17
    apart) drawn flat at their value instead of on an axis of rounding noise.

    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1, 2], [-0.0123, -0.0123 + 1e-16, -0.0123])
    >>> tidy_axes(ax, integer_x=True)
    >>> fig.canvas.draw()
    >>> [float(t) for t in ax.get_xticks() if 0 <= t <= 2]
    [0.0, 1.0, 2.0]
    >>> [round(float(y), 4) for y in ax.get_ylim()], ax.yaxis.get_offset_text().get_text()  # not 1e-14 - 1.23e-2
    ([-0.0623, 0.0377], '')
    >>> plt.close(fig)
    """
    import numpy as np

    if integer_x:
        ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ys = np.concatenate([np.asarray(line.get_ydata(), dtype=float).ravel() for line in ax.get_lines()] or [[]])
    ys = ys[np.isfinite(ys)]
    if ys.size:
        lo, hi = float(ys.min()), float(ys.max())
        if hi - lo <= 1e-9 * max(abs(lo), abs(hi), 1.0):  # flat but for rounding
            middle = (lo + hi) / 2
            pad = max(0.05 * abs(middle), 0.05)
            ax.set_ylim(middle - pad, middle + pad)
    ax.yaxis.set_major_formatter(_PlainTicks())


def model_palette(models: Iterable[str] = ()) -> dict[str, str]:
    """A fixed colour per model: the panel's eight in their fixed colours, others in
    :data:`EXTRA` (distinct from the panel's; they repeat only after ten other models).

    >>> model_palette(["qwen", "my/model"])["qwen"] == model_palette()["qwen"]
    True
    """
    palette = dict(zip(PANEL, OKABE_ITO))
    others = sorted(m for m in dict.fromkeys(models) if m not in palette)
    spare = [c for c in OKABE_ITO if c not in palette.values()] + [c for c in EXTRA if c not in OKABE_ITO]
    for i, m in enumerate(others):
        palette[m] = spare[i % len(spare)]
    return palette


def model_kinds(models: Iterable[str]) -> dict[str, str]:
    """Architecture of each model ("encoder"/"decoder") for the offline panel, else "other"."""
    from lrd.engine.packs import MODEL_PACKS

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
                  frameon=False, handlelength=2.6, title=title)


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
        raise ValueError(f"results lack columns {sorted(missing)}; build them with lrd.tables.per_layer")
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
    aspect = (1.35 if n_cols <= 2 else 1.0) if col else 2.0  # three narrow panels a row: taller, so the label fits
    palette = model_palette(data[hue].unique()) if hue == "model" else None
    with use_book_style():
        grid = sns.relplot(data=data, x="depth", y="value", hue=hue, style="architecture", col=col,
                           col_wrap=col_wrap if col else None, kind="line", marker="o", markeredgewidth=0,
                           palette=palette or "colorblind", dashes=kind_dashes(), legend=hue != "model",
                           height=width / aspect, aspect=aspect,
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
    """Heatmaps of two layer relevances, tasks x removed blocks, a row per model and measure.

    Parameters
    ----------
    relevance : DataFrame
        Tidy rows with columns ``model, task, measurement, layer, value`` (block numbers 1..L).
    measures : two measurement names; each model gets one panel per measure, one under the other.

    Returns
    -------
    matplotlib.figure.Figure (closed), :data:`BOOK_WIDTH` wide
    """
    models = list(dict.fromkeys(relevance["model"]))
    if not models:
        raise ValueError("relevance is empty")
    n_tasks = relevance["task"].nunique()
    panels = [(m, measure) for m in models for measure in measures]
    with use_book_style():
        fig, axes = plt.subplots(len(panels), 1, figsize=(BOOK_WIDTH, len(panels) * (1.0 + 0.32 * n_tasks) + 0.6),
                                 squeeze=False)
        for ax, (model, measure) in zip(axes[:, 0], panels):
            part = relevance[(relevance["model"] == model) & (relevance["measurement"] == measure)]
            if part.empty:
                raise ValueError(f"no {measure!r} rows for {model!r}")
            grid = part.pivot_table(index="task", columns="layer", values="value", sort=False)
            cosine = measure == measures[0]
            sns.heatmap(grid, ax=ax, cmap="viridis" if cosine else "RdBu_r", center=None if cosine else 0.0,
                        cbar_kws={"pad": 0.02}, xticklabels=-(-grid.shape[1] // 14))  # at most 14 block labels
            ax.set_title(f"{model}: {measure}")
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.tick_params(axis="y", rotation=0)
            ax.tick_params(axis="x", rotation=0)
        axes[-1, 0].set_xlabel("removed block (layer)")
        fig.tight_layout()
    plt.close(fig)
    return fig


def pruning_curves(curves: pd.DataFrame, *, score: str = "acc", chance: float | None = None):
    """Accuracy against the number of removed blocks, one line per pruning rule (one panel per
    ``model`` when the table has that column).

    Random rules are drawn as their median over seeds with a band from the minimum to the maximum.

    Parameters
    ----------
    curves : DataFrame with columns ``rule, seed, k``, ``score`` and optionally ``model``.
    chance : float, optional
        Drawn as a dotted line.

    Returns
    -------
    matplotlib.figure.Figure, or None when ``curves`` has no row (no model was pruned): the
    chapter's text says so, and no empty axes are drawn.
    """
    if curves.empty:
        return None
    panels = list(dict.fromkeys(curves["model"])) if "model" in curves else [None]
    n_cols = min(2, len(panels))
    n_rows = -(-len(panels) // n_cols)
    with use_book_style():
        fig, axes = plt.subplots(n_rows, n_cols, figsize=(BOOK_WIDTH, 4.4 if len(panels) == 1 else 3.6 * n_rows),
                                 squeeze=False, sharey=True)
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        for ax, model in zip(axes.flat, panels):
            part_m = curves if model is None else curves[curves["model"] == model]
            for rule, part in part_m.groupby("rule", sort=False):
                g = part.groupby("k")[score]
                med = g.median()
                line, = ax.plot(med.index, med.values, marker="o", label=rule)
                if part["seed"].nunique() > 1:
                    ax.fill_between(med.index, g.min().values, g.max().values, alpha=0.2, color=line.get_color())
            if chance is not None:
                ax.axhline(chance, ls=":", color="grey", label="chance")
            ax.set_xlabel("blocks removed")
            if model is not None:
                ax.set_title(model)
        for row in axes:
            row[0].set_ylabel(f"mean {score} over tasks\n(evaluation split)")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
        fig.tight_layout()
    plt.close(fig)
    return fig


def _top_legend(grid, n_entries: int) -> None:
    """A seaborn grid's legend moved above the panels, inside :data:`BOOK_WIDTH`."""
    if grid.legend is not None:
        sns.move_legend(grid, "lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(n_entries, 3), title=None,
                        frameon=False)


def _fit_width(grid, n_cols: int, aspect: float):
    """Resize a seaborn grid to :data:`BOOK_WIDTH` (``n_cols`` panels of ``aspect`` per row)."""
    n_rows = grid.axes.shape[0] if grid.axes.ndim == 2 else -(-len(grid.axes.flat) // n_cols)
    grid.figure.set_size_inches(BOOK_WIDTH, BOOK_WIDTH / n_cols / aspect * n_rows + 0.6)
    grid.figure.tight_layout()


def relevance_scatter(table: pd.DataFrame, *, x: str = "cosine relevance", y: str = "accuracy relevance"):
    """One panel per model: accuracy relevance against cosine relevance of every block and task.

    Returns
    -------
    matplotlib.figure.Figure (closed), :data:`BOOK_WIDTH` wide
    """
    n_cols = min(2, table["model"].nunique())
    with use_book_style():
        grid = sns.relplot(data=table, x=x, y=y, hue="task", col="model", col_wrap=n_cols, kind="scatter",
                           height=BOOK_WIDTH / n_cols / 1.2, aspect=1.2, facet_kws={"sharex": False, "sharey": False})
        for ax in grid.axes.flat:
            ax.set_xscale("log")
            ax.axhline(0, color="grey", lw=0.8)
        grid.set_titles("{col_name}")
        _top_legend(grid, table["task"].nunique())
        _fit_width(grid, n_cols, 1.2)
    plt.close(grid.figure)
    return grid.figure


def variant_curves(results: pd.DataFrame, measurement: str, *, style: str, hue: str = "model",
                   col: str | None = None, ylabel: str | None = None):
    """Per-layer curves of one measurement in two or more variants (line ``style``) per ``hue``.

    Used for the final-norm on/off comparison: ``style="final norm"``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    data = results[results["measurement"] == measurement]
    if data.empty or style not in data:
        raise ValueError(f"no rows for measurement {measurement!r} with a {style!r} column")
    n_cols = min(2, data[col].nunique()) if col else 1
    aspect = 1.3 if col else 2.0
    palette = model_palette(data[hue].unique()) if hue == "model" else None
    with use_book_style():
        grid = sns.relplot(data=data, x="depth", y="value", hue=hue, style=style, col=col,
                           col_wrap=n_cols if col else None, kind="line", marker="o", markersize=3,
                           palette=palette or "colorblind", height=BOOK_WIDTH / n_cols / aspect, aspect=aspect)
        grid.set_axis_labels("depth (layer / L)", ylabel or measurement)
        _top_legend(grid, data[hue].nunique() + data[style].nunique() + 2)
        _fit_width(grid, n_cols, aspect)
    plt.close(grid.figure)
    return grid.figure


def method_scores(summary: pd.DataFrame, *, ylabel: str = "test score", title: str | None = None):
    """Mean score (± std over seeds) of every aggregation method, one panel per task.

    ``summary`` has columns ``model, task, method, mean, std`` (:func:`lrd.aggregation.summary.summarize`).
    """
    import numpy as np

    from lrd.aggregation.encoders import METHOD_LABELS, METHODS

    tasks = list(dict.fromkeys(summary["task"]))
    models = list(dict.fromkeys(summary["model"]))
    methods = [m for m in METHODS if m in set(summary["method"])]
    n_cols = min(2, len(tasks))
    n_rows = -(-len(tasks) // n_cols)
    offsets = np.linspace(-0.3, 0.3, len(models)) if len(models) > 1 else np.zeros(1)
    palette = model_palette(models)
    with use_book_style():
        fig, axes = plt.subplots(n_rows, n_cols, sharey=True, squeeze=False,
                                 figsize=(BOOK_WIDTH, n_rows * (0.22 * len(methods) * len(models) ** 0.5 + 1.3) + 0.8))
        for ax, task in zip(axes.flat, tasks):
            part = summary[summary["task"] == task]
            for off, model in zip(offsets, models):
                rows = part[part["model"] == model].set_index("method").reindex(methods)
                ax.errorbar(rows["mean"], np.arange(len(methods)) + off, xerr=rows["std"], fmt="o", ms=3.5,
                            color=palette[model], label=model, capsize=2)
            ax.set_title(task)
            ax.grid(axis="x", alpha=0.3)
            ax.grid(axis="y", visible=False)
        for ax in axes.flat[len(tasks):]:
            ax.set_visible(False)
        for ax in axes[-1]:
            ax.set_xlabel(ylabel)
        axes[0, 0].set_yticks(np.arange(len(methods)), [METHOD_LABELS[m] for m in methods])
        axes[0, 0].invert_yaxis()
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(models), 3),
                   frameon=False, title=title)
        fig.tight_layout()
    plt.close(fig)
    return fig


def few_shot_curves(summary: pd.DataFrame, *, references: pd.DataFrame | None = None,
                    ylabel: str = "test accuracy"):
    """Few-shot accuracy against examples per class, one line per method, one panel per task.

    ``summary`` has columns ``model, task, shots, method, mean`` (seed means): each line is the
    mean over models, its band the standard deviation over models (over seeds, ``std``, when
    there is one model). ``references`` (columns ``task, method, mean``: full-data scores,
    means over models) are drawn as dashed horizontal lines.
    """
    from lrd.aggregation.encoders import METHOD_LABELS

    one_model = summary["model"].nunique() == 1
    data = (summary if one_model else
            summary.groupby(["task", "shots", "method"], sort=False)["mean"].agg(["mean", "std"]).reset_index())
    data = data.assign(method=data["method"].map(METHOD_LABELS), std=data["std"].fillna(0.0))
    n_cols = min(2, data["task"].nunique())
    with use_book_style():
        grid = sns.relplot(data=data, x="shots", y="mean", hue="method", col="task", col_wrap=n_cols, kind="line",
                           marker="o", palette="colorblind", height=BOOK_WIDTH / n_cols / 1.2, aspect=1.2,
                           facet_kws={"sharey": False})
        colours = dict(zip(data["method"].unique(), sns.color_palette("colorblind", data["method"].nunique())))
        for ax, (task, part) in zip(grid.axes.flat, data.groupby("task", sort=False)):
            for method, line in part.groupby("method"):
                ax.fill_between(line["shots"], line["mean"] - line["std"], line["mean"] + line["std"], alpha=0.12,
                                color=colours[method])
            if references is not None:
                lines = [ax.axhline(ref["mean"], color="0.3", ls=style, lw=1,
                                    label=f"{METHOD_LABELS.get(ref['method'], ref['method'])}, full data")
                         for (_, ref), style in zip(references[references["task"] == task].iterrows(),
                                                    ("--", ":", "-."))]
                if lines:
                    ax.legend(handles=lines, frameon=False, loc="lower right")
        grid.set(xscale="log", xticks=sorted(data["shots"].unique()))
        for ax in grid.axes.flat:
            ax.minorticks_off()  # log-scale minor labels (2 x 10^1, ...) would overlap the shot counts
            ax.set_xticklabels([str(s) for s in sorted(data["shots"].unique())])
        grid.set_axis_labels("examples per class", ylabel)
        grid.set_titles("{col_name}")
        _top_legend(grid, data["method"].nunique())
        _fit_width(grid, n_cols, 1.2)
    plt.close(grid.figure)
    return grid.figure


def graph_memory(memory: pd.DataFrame):
    """Peak memory of message passing against sequence length, FC against Cayley (log-log)."""
    data = memory.dropna(subset=["peak_bytes"]).assign(MiB=lambda d: d["peak_bytes"] / 2 ** 20)
    with use_book_style():
        fig, ax = plt.subplots(figsize=(5.6, 3.8))
        for graph, part in data.groupby("graph"):
            ax.plot(part["tokens"], part["MiB"], marker="o", label={"fc": "fully connected", "cayley": "Cayley"}[graph])
        ax.set(xscale="log", yscale="log", xlabel="tokens (graph nodes = states x tokens)", ylabel="peak memory (MiB)")
        ax.legend(frameon=False)
        ax.grid(alpha=0.3, which="both")
        fig.tight_layout()
    plt.close(fig)
    return fig


def correlation_heatmap(table: pd.DataFrame, *, index: str = "model", title: str | None = None):
    """Heatmap of a (rows x metrics) table of correlations in [-1, 1], annotated.

    Returns
    -------
    matplotlib.figure.Figure
    """
    data = table.set_index(index) if index in table else table
    with use_book_style():
        fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 0.5 * data.shape[0] + 2.6))
        sns.heatmap(data.astype(float), vmin=-1, vmax=1, cmap="RdBu_r", annot=True, fmt=".2f", ax=ax,
                    cbar_kws={"label": "Spearman correlation\nwith the score", "pad": 0.02})
        ax.tick_params(axis="x", rotation=35)
        plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
        ax.tick_params(axis="y", rotation=0)
        ax.set_ylabel("")
        if title:
            ax.set_title(title)
        fig.tight_layout()
    plt.close(fig)
    return fig


def pruning_winners(summary: pd.DataFrame, *, by: str = "kind", value: str = "median change",
                    baseline: str = "random median"):
    """Which prune rule wins at which budget, one heatmap panel per group of models (``by``).

    Cells: a rule's median change of the downstream score over models (each model's tasks
    averaged) minus random pruning's median, per budget; the best rule of each budget is boxed, and a dot marks
    rules that beat random beyond chance (column ``beats random``).

    Parameters
    ----------
    summary : DataFrame
        :func:`lrd.verdicts.pruning.rule_summary` with ``by``.

    Returns
    -------
    matplotlib.figure.Figure, or None when ``summary`` has no row (no informative pruned model).
    """
    if summary.empty:
        return None
    with use_book_style():
        return _pruning_winners(summary, by=by, value=value, baseline=baseline)


def _pruning_winners(summary, *, by, value, baseline):
    from matplotlib.patches import Rectangle

    from lrd.methods.pruning import PRUNE_RULES

    groups = list(pd.unique(summary[by]))
    present = set(summary["rule"])
    rules = [r for r in PRUNE_RULES if r in present] + sorted(present - set(PRUNE_RULES))
    # one panel under the other, each the full width: the annotated cells need the room
    fig, axes = plt.subplots(len(groups), 1, figsize=(BOOK_WIDTH, len(groups) * (0.42 * len(rules) + 1.0) + 0.8),
                             squeeze=False, sharex=True)
    rel = summary.assign(delta=summary[value] - summary[baseline])
    lim = max(float(rel["delta"].abs().max()), 1e-9)
    for ax, g in zip(axes[:, 0], groups):
        part = rel[rel[by] == g]
        grid = part.pivot_table(index="rule", columns="fraction", values="delta").reindex(rules)
        sns.heatmap(grid, ax=ax, cmap="RdBu", vmin=-lim, vmax=lim, annot=True, fmt="+.2f",
                    cbar_kws={"label": "median change\nminus random's", "pad": 0.02})
        for j, f in enumerate(grid.columns):
            best = grid[f].idxmax() if grid[f].notna().any() else None
            if best is not None:
                ax.add_patch(Rectangle((j, rules.index(best)), 1, 1, fill=False, lw=2.2, ec="black"))
        beats = part[part["beats random"]]
        for rule, f in beats[["rule", "fraction"]].itertuples(index=False):
            ax.plot(list(grid.columns).index(f) + 0.88, rules.index(rule) + 0.2, "o", ms=3.5, color="black")
        ax.set_xticklabels([f"{f:.0%}" for f in grid.columns])
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_title(f"{g}s" if by == "kind" else str(g))
    axes[-1, 0].set_xlabel("budget (share of blocks removed)")
    fig.tight_layout()
    plt.close(fig)
    return fig


def selection_scatter(scores: pd.DataFrame, downstream: pd.Series, measures: list[str], *,
                      ylabel: str = "downstream score"):
    """Downstream score against each model-level score, one panel per score, one point per model
    (the book's model colours; encoders circles, decoders squares).

    Parameters
    ----------
    scores : DataFrame indexed by model with the ``measures`` as columns (and ``kind``)
    downstream : Series indexed by model
    """
    with use_book_style():
        palette = model_palette(scores.index)
        fig, axes = plt.subplots(1, len(measures), figsize=(BOOK_WIDTH, 3.0), squeeze=False)
        for ax, m in zip(axes[0], measures):
            for model, row in scores.iterrows():
                if model in downstream.index:
                    ax.plot(row[m], downstream[model], "o" if row.get("kind") == "encoder" else "s",
                            color=palette[model], label=model, ms=7)
            ax.set_xlabel(m)
            ax.set_ylabel(ylabel if ax is axes[0][0] else "")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False,
                   bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout()
        plt.close(fig)
        return fig


#: The colour of each verdict outcome, in the overview figure and the dashboard's badges.
OUTCOME_COLOURS = {"reproduced": "#009E73", "contradicted": "#D55E00", "inconclusive": "#E69F00",
                   "not testable": "#8C8C8C", "demonstrated": "#0072B2"}


def _short(text: str, n: int = 34) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def verdict_overview(records: list[dict], *, papers: dict[str, str] | None = None, alpha: float = 0.05):
    """Every claim's outcome and strength at once: one row per claim, grouped by paper.

    A filled marker is the claim's p-value (log scale, stronger to the right; for a contradiction,
    the p of the test against the claim), coloured by its outcome; a bar marks the smallest p this panel could give (the test's bound), joined to it
    by a thin line; the dashed line is ``alpha``. A demonstration (no test: it holds by design)
    is a diamond at the right edge; a claim no test could run on sits at p = 1, hollow.

    Parameters
    ----------
    records : list of verdict records (``results/<chapter>.json["verdicts"]``): ``paper``,
        ``label``, ``outcome``, ``p_value``, ``p_min``
    papers : paper key -> the name shown above its claims (default: the key)
    """
    order = list(dict.fromkeys(r["paper"] for r in records))
    rows, y, ticks, heads = [], 0.0, [], []
    for key in order:
        heads.append((y, (papers or {}).get(key, key)))
        y += 1.0
        for r in (r for r in records if r["paper"] == key):
            rows.append((y, r))
            ticks.append((y, _short(r.get("label") or r.get("claim", ""))))
            y += 1.0
        y += 0.3
    ps = [v for _, r in rows for v in (r.get("p_value"), r.get("p_min")) if v]
    right = min([alpha / 20, *ps]) / 3
    with use_book_style():
        fig, ax = plt.subplots(figsize=(BOOK_WIDTH, 0.28 * y + 1.4))
        ax.set_xscale("log")
        ax.set_xlim(1.6, right)
        ax.axvline(alpha, color="0.3", ls="--", lw=1.2)
        for yy, r in rows:
            colour = OUTCOME_COLOURS.get(r["outcome"], "0.5")
            p, best = r.get("p_value"), r.get("p_min")
            if r["outcome"] == "contradicted" and r.get("p_against") is not None:
                p, best = r["p_against"], None  # decided by the test against the claim
            if r["outcome"] == "demonstrated":
                ax.plot(right * 1.6, yy, "D", color=colour, ms=8)
                continue
            if best:
                ax.plot([p or 1.0, best], [yy, yy], color="0.6", lw=1)
                ax.plot(best, yy, "|", color="0.25", ms=12, mew=2)
            ax.plot(p or 1.0, yy, "o", ms=8, color=colour, mfc=colour if p is not None else "white", mew=2)
        ax.set_yticks([t for t, _ in ticks], [label for _, label in ticks])
        for yy, name in heads:
            ax.text(1.5, yy, name, fontweight="bold", va="center", ha="left")
        ax.set_ylim(y - 0.3, -1.0)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("p-value (stronger evidence to the right)")
        handles = [mpl.lines.Line2D([], [], marker="D" if o == "demonstrated" else "o", ls="", color=c, ms=8,
                                    label=o) for o, c in OUTCOME_COLOURS.items()]
        handles.append(mpl.lines.Line2D([], [], marker="|", ls="", color="0.25", ms=12, mew=2,
                                        label="smallest p possible"))
        fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 1.0))
        ax.tick_params(axis="y", length=0)
        ax.xaxis.set_major_locator(mpl.ticker.LogLocator(numticks=6))
        fig.tight_layout()
        plt.close(fig)
        return fig
