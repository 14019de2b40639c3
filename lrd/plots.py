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
