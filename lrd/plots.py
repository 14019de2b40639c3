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


def method_scores(summary: pd.DataFrame, *, ylabel: str = "test score", title: str | None = None):
    """Mean score (± std over seeds) of every aggregation method, one panel per task.

    ``summary`` has columns ``model, task, method, mean, std`` (:func:`lrd.fusion_verdicts.summarize`).
    """
    import numpy as np

    from lrd.aggregation import METHOD_LABELS, METHODS

    tasks = list(dict.fromkeys(summary["task"]))
    models = list(dict.fromkeys(summary["model"]))
    methods = [m for m in METHODS if m in set(summary["method"])]
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 0.28 * len(methods) * len(models) ** 0.5 + 2),
                             sharey=True, squeeze=False)
    offsets = np.linspace(-0.3, 0.3, len(models)) if len(models) > 1 else np.zeros(1)
    palette = sns.color_palette("colorblind", len(models))
    for ax, task in zip(axes[0], tasks):
        part = summary[summary["task"] == task]
        for off, model, colour in zip(offsets, models, palette):
            rows = part[part["model"] == model].set_index("method").reindex(methods)
            ax.errorbar(rows["mean"], np.arange(len(methods)) + off, xerr=rows["std"], fmt="o", ms=3.5,
                        color=colour, label=model, capsize=2)
        ax.set_title(task)
        ax.set_xlabel(ylabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(np.arange(len(methods)), [METHOD_LABELS[m] for m in methods])
    axes[0, 0].invert_yaxis()
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    plt.close(fig)
    return fig


def few_shot_curves(summary: pd.DataFrame, *, ylabel: str = "test accuracy"):
    """Few-shot accuracy against examples per class, one line per method, one panel per task."""
    from lrd.aggregation import METHOD_LABELS

    data = summary.assign(method=summary["method"].map(METHOD_LABELS))
    grid = sns.relplot(data=data, x="shots", y="mean", hue="method", col="task", kind="line", marker="o",
                       height=3.2, aspect=1.2, facet_kws={"sharey": False})
    for ax, (_, part) in zip(grid.axes.flat, data.groupby("task", sort=False)):
        for _, line in part.groupby("method"):
            ax.fill_between(line["shots"], line["mean"] - line["std"], line["mean"] + line["std"], alpha=0.12)
    grid.set(xscale="log", xticks=sorted(data["shots"].unique()))
    for ax in grid.axes.flat:
        ax.set_xticklabels([str(s) for s in sorted(data["shots"].unique())])
    grid.set_axis_labels("examples per class", ylabel)
    plt.close(grid.figure)
    return grid.figure


def graph_memory(memory: pd.DataFrame):
    """Peak memory of message passing against sequence length, FC against Cayley (log-log)."""
    data = memory.dropna(subset=["peak_bytes"]).assign(MiB=lambda d: d["peak_bytes"] / 2 ** 20)
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    for graph, part in data.groupby("graph"):
        ax.plot(part["tokens"], part["MiB"], marker="o", label={"fc": "fully connected", "cayley": "Cayley"}[graph])
    ax.set(xscale="log", yscale="log", xlabel="tokens (graph nodes = states x tokens)", ylabel="peak memory (MiB)")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    plt.close(fig)
    return fig
