"""Figures of the book: one call per figure, from tidy result tables."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from lrd.report import RESULT_COLUMNS


def layer_curves(results: pd.DataFrame, measurement: str, *, hue: str = "model", col: str | None = None,
                 col_wrap: int | None = 2, ylabel: str | None = None, title: str | None = None):
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

    Returns
    -------
    matplotlib.figure.Figure
        Closed (so notebooks show it once, as the cell's value).
    """
    missing = set(RESULT_COLUMNS) - set(results.columns)
    if missing:
        raise ValueError(f"results lack columns {sorted(missing)}; build them with lrd.report.per_layer")
    data = results[results["measurement"] == measurement]
    if data.empty:
        raise ValueError(f"no rows for measurement {measurement!r}; have {sorted(results['measurement'].unique())}")
    grid = sns.relplot(data=data, x="depth", y="value", hue=hue, col=col, col_wrap=col_wrap if col else None,
                       kind="line", marker="o",
                       markersize=4, height=3.6, aspect=1.4, facet_kws={"sharey": True})
    grid.set_axis_labels("depth (layer / L)", ylabel or measurement)
    if title:
        grid.figure.suptitle(title, y=1.03)
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
