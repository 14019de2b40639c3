"""Which layer to embed with: best layer against the last, label-free choices, and verdicts.

Functions over tidy per-layer tables (columns ``model, task, measurement, layer, depth, value``,
as :func:`lrd.report.per_layer` builds them) that turn the mid-layer chapter's measurements
into tables and plain verdicts on the claims of Skean et al. (ICML 2025).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr


def best_vs_last(scores: pd.DataFrame) -> pd.DataFrame:
    """Best layer against the last layer, one row per (model, task).

    Columns: ``best layer``, ``best depth`` (layer / L), ``best``, ``last``, ``gain`` (best - last),
    ``relative gain`` (gain / |last|; NaN when the last layer scores 0) and ``intermediate``
    (the best layer is strictly between the embeddings and the last layer and beats the last).
    """
    rows = []
    for (model, task), part in scores.groupby(["model", "task"], sort=False):
        part = part.sort_values("layer")
        best = part.loc[part["value"].idxmax()]
        last = part.iloc[-1]
        gain = best["value"] - last["value"]
        rel = gain / abs(last["value"]) if last["value"] != 0 else np.nan
        inner = bool(gain > 0 and 0 < best["layer"] < last["layer"])
        rows.append({"model": model, "task": task, "best layer": int(best["layer"]), "best depth": best["depth"],
                     "best": best["value"], "last": last["value"], "gain": gain, "relative gain": rel,
                     "intermediate": inner})
    return pd.DataFrame(rows)


def gain_verdict(table: pd.DataFrame, paper_range: tuple[float, float]) -> str:
    """Verdict on "intermediate layers outperform the last" from a :func:`best_vs_last` table.

    Reproduced when the best layer is an intermediate one on most (model, task) pairs and the
    mean relative gain per model reaches the paper's lower bound for every model; partly when
    either holds; not reproduced otherwise.
    """
    if table.empty:
        return "not testable: no scores"
    inner = table["intermediate"]
    share = float(inner.mean())
    per_model = table.groupby("model", sort=False)["relative gain"].mean()
    lo, hi = paper_range
    within = int((per_model >= lo).sum())
    evidence = (f"an intermediate layer beats the last on {int(inner.sum())} of {len(table)} model-task pairs; "
                f"mean relative gain per model {per_model.min():.1%} to {per_model.max():.1%} "
                f"(paper {lo:.0%}-{hi:.0%}), at least {lo:.0%} for {within} of {len(per_model)} models")
    if share > 0.5 and within == len(per_model):
        return f"reproduced: {evidence}"
    if share > 0.5 or within > 0:
        return f"partly reproduced: {evidence}"
    return f"not reproduced: {evidence}"


def valley_drop(curve: np.ndarray) -> float:
    """Depth of a mid-depth valley: ``min(curve[0], curve[-1]) - min(curve[1:-1])``.

    Positive when some intermediate layer lies below both ends (a valley), negative or 0 when
    the curve is monotone or peaks in the middle. Needs at least 3 layers.
    """
    c = np.asarray(curve, dtype=float)
    if c.ndim != 1 or len(c) < 3:
        raise ValueError(f"need a 1-D curve of at least 3 layers, got shape {c.shape}")
    return float(min(c[0], c[-1]) - c[1:-1].min())


def valley_verdict(drops: pd.DataFrame) -> str:
    """Verdict on "autoregressive models show a mid-depth entropy valley, encoders do not".

    ``drops`` has one row per model with columns ``kind`` and ``valley`` (:func:`valley_drop` of
    its prompt-entropy curve). Reproduced when every decoder has a valley and every decoder's is
    deeper than every encoder's; partly when the decoders' mean valley is deeper.
    """
    dec = drops.loc[drops["kind"] == "decoder", "valley"]
    enc = drops.loc[drops["kind"] == "encoder", "valley"]
    if dec.empty or enc.empty:
        return "not testable: the panel needs at least one decoder and one encoder"
    evidence = (f"valley depth of normalised prompt entropy: decoders {dec.min():.3f} to {dec.max():.3f}, "
                f"encoders {enc.min():.3f} to {enc.max():.3f}")
    if (dec > 0).all() and dec.min() > enc.max():
        return f"reproduced: {evidence}"
    if dec.mean() > enc.mean() and (dec > 0).any():
        return f"partly reproduced: {evidence}"
    return f"not reproduced: {evidence}"


def metric_correlations(results: pd.DataFrame, score: str, metrics: list[str]) -> pd.DataFrame:
    """Spearman correlation across layers of each metric with the score, per model and task.

    ``results`` holds both the score rows and the metric rows (same model/task/layer).
    """
    wide = results.pivot_table(index=["model", "task", "layer"], columns="measurement", values="value")
    rows = []
    for (model, task), part in wide.groupby(level=["model", "task"], sort=False):
        if score not in part or part[score].isna().all():
            continue
        row = {"model": model, "task": task}
        for m in metrics:
            ok = part[[m, score]].dropna() if m in part else pd.DataFrame()
            row[m] = spearmanr(ok[m], ok[score]).statistic if len(ok) > 2 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def label_free_choice(results: pd.DataFrame, score: str, metric: str, *, higher_is_better: bool = True,
                      exclude_ends: bool = True) -> pd.DataFrame:
    """Pick each model's layer by a label-free metric; compare its score with the last and best.

    For each (model, task) the chosen layer maximises (or minimises) ``metric`` among layers
    ``1 .. L-1`` (``exclude_ends``: the embedding layer and the last layer are the trivial
    choices). Columns: ``chosen layer``, ``chosen``, ``last``, ``best`` (scores).
    """
    wide = results.pivot_table(index=["model", "task", "layer"], columns="measurement", values="value")
    rows = []
    for (model, task), part in wide.groupby(level=["model", "task"], sort=False):
        if metric not in part or score not in part:
            continue
        part = part.droplevel(["model", "task"]).sort_index()
        cand = (part[metric].iloc[1:-1] if exclude_ends and len(part) > 2 else part[metric]).dropna()
        if cand.empty or part[score].isna().all():
            continue
        layer = cand.idxmax() if higher_is_better else cand.idxmin()
        rows.append({"model": model, "task": task, "metric": metric, "chosen layer": int(layer),
                     "chosen": part.loc[layer, score], "last": part[score].iloc[-1], "best": part[score].max()})
    return pd.DataFrame(rows)


def choice_verdict(choice: pd.DataFrame) -> str:
    """Verdict on "label-free metrics pick a layer better than the last" from :func:`label_free_choice`."""
    if choice.empty:
        return "not testable: no (model, task) pair has both the metric and the score"
    beats = int((choice["chosen"] > choice["last"]).sum())
    gap = float((choice["chosen"] - choice["last"]).mean())
    regret = float((choice["best"] - choice["chosen"]).mean())
    evidence = (f"the {choice['metric'].iloc[0]}-chosen layer beats the last on {beats} of {len(choice)} "
                f"model-task pairs (mean score change {gap:+.3f}; mean shortfall from the best layer {regret:.3f})")
    if beats == len(choice):
        return f"reproduced: {evidence}"
    if beats > len(choice) / 2:
        return f"partly reproduced: {evidence}"
    return f"not reproduced: {evidence}"
