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
    grid = sns.relplot(data=data, x="depth", y="value", hue=hue, style=style, col=col, kind="line",
                       marker="o", markersize=3, height=3.6, aspect=1.4)
    grid.set_axis_labels("depth (layer / L)", ylabel or measurement)
    plt.close(grid.figure)
    return grid.figure


def correlation_heatmap(table: pd.DataFrame, *, index: str = "model", title: str | None = None):
    """Heatmap of a (rows x metrics) table of correlations in [-1, 1], annotated.

    Returns
    -------
    matplotlib.figure.Figure
    """
    data = table.set_index(index) if index in table else table
    fig, ax = plt.subplots(figsize=(1.3 * data.shape[1] + 2, 0.5 * data.shape[0] + 1.5))
    sns.heatmap(data.astype(float), vmin=-1, vmax=1, cmap="RdBu_r", annot=True, fmt=".2f", ax=ax,
                cbar_kws={"label": "Spearman correlation with the score"})
    if title:
        ax.set_title(title)
    plt.close(fig)
    return fig
