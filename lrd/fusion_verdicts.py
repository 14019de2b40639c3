"""Tables and plain verdicts for the Cayley-aggregation chapter, computed from scored runs.

``scores`` tables have one row per ``model, task, method, seed`` with a ``score`` (accuracy,
or Spearman for STS). Every verdict starts with "reproduced", "partly reproduced", "not
reproduced" or "not testable", then ": " and the evidence.

References
----------
Ulanovski, Blyachman and Bechler-Speicher, arXiv:2603.22665 v3, abstract (the claims).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lrd.aggregation import METHOD_LABELS, METHODS

BASELINES = ("last", "best", "mean", "elmo", "mlp", "deepset", "dwatt")


def summarize(scores: pd.DataFrame, by: tuple[str, ...] = ("model", "task", "method")) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1) and count of ``score`` over seeds."""
    out = scores.groupby(list(by), sort=False)["score"].agg(["mean", "std", "count"]).reset_index()
    return out.fillna({"std": 0.0})


def paper_layout(summary: pd.DataFrame, *, scale: float = 100.0, digits: int = 1) -> pd.DataFrame:
    """The paper's layout: one block of method rows per model, one column per task, "mean ± std"."""
    cell = summary.assign(cell=[f"{m * scale:.{digits}f} ± {s * scale:.{digits}f}"
                                for m, s in zip(summary["mean"], summary["std"])])
    order = {m: i for i, m in enumerate(METHODS)}
    table = cell.pivot_table(index=["model", "method"], columns="task", values="cell", aggfunc="first", sort=False)
    models = list(dict.fromkeys(summary["model"]))
    table = table.reindex(sorted(table.index, key=lambda k: (models.index(k[0]), order.get(k[1], 99))))
    table.index = pd.MultiIndex.from_tuples([(m, METHOD_LABELS.get(k, k)) for m, k in table.index],
                                            names=["model", "method"])
    return table[list(dict.fromkeys(summary["task"]))]


def wins(summary: pd.DataFrame, method: str, other: str) -> tuple[int, int]:
    """Model-task cells where ``method``'s mean beats ``other``'s, and the cells both have."""
    wide = summary.pivot_table(index=["model", "task"], columns="method", values="mean")
    if method not in wide or other not in wide:
        return 0, 0
    both = wide[[method, other]].dropna()
    return int((both[method] > both[other]).sum()), len(both)


def _level(won: int, total: int) -> str:
    if total == 0:
        return "not testable"
    return "reproduced" if won == total else "partly reproduced" if 2 * won >= total else "not reproduced"


def verdict_outperforms(summary: pd.DataFrame, method: str = "cayley",
                        baselines: tuple[str, ...] = BASELINES) -> str:
    """Does ``method`` beat every baseline in every model-task cell (mean over seeds)?"""
    counts = {b: wins(summary, method, b) for b in baselines if b != method}
    counts = {b: c for b, c in counts.items() if c[1]}
    if not counts:
        return "not testable: no baseline was run"
    worst = min(counts, key=lambda b: counts[b][0] / counts[b][1])
    level = _level(*counts[worst])
    detail = ", ".join(f"{METHOD_LABELS[b]} in {w}/{n}" for b, (w, n) in counts.items())
    return f"{level}: {METHOD_LABELS[method]} has the higher mean against {detail} model-task cells"


def verdict_fc(summary: pd.DataFrame, existing: tuple[str, ...] = ("best", "elmo", "dwatt")) -> str:
    """Does the FC-Encoder beat the existing approaches (best layer, layer weighting, DWAtt)?"""
    return verdict_outperforms(summary, "fc", existing)


def verdict_cayley_vs_fc(summary: pd.DataFrame, memory: pd.DataFrame | None = None) -> str:
    """Cayley against FC: predictive performance per cell, and peak memory on token graphs."""
    won, total = wins(summary, "cayley", "fc")
    if total == 0:
        return "not testable: Cayley- and FC-Encoder were not both run"
    text = f"Cayley-Encoder has the higher mean in {won}/{total} model-task cells"
    if memory is not None and not memory.empty:
        wide = memory.pivot_table(index="tokens", columns="graph", values="peak_bytes").dropna()
        if len(wide):
            t = wide.index.max()
            text += (f"; on a token-level graph of {t} tokens its message passing peaks at "
                     f"{wide.loc[t, 'cayley'] / wide.loc[t, 'fc']:.1%} of the FC graph's memory")
    return f"{_level(won, total)}: {text}"


def max_gain(summary: pd.DataFrame, method: str = "cayley", reference: str = "last") -> tuple[float, str]:
    """Largest gain of ``method`` over ``reference`` (in score units) and its ``model/task`` cell."""
    wide = summary.pivot_table(index=["model", "task"], columns="method", values="mean")
    gain = (wide[method] - wide[reference]).dropna()
    if gain.empty:
        return float("nan"), ""
    cell = gain.idxmax()
    return float(gain.max()), f"{cell[0]}/{cell[1]}"


def verdict_gain(summary: pd.DataFrame, paper_pp: float) -> str:
    """The paper's "up to ``paper_pp`` percentage points" over the last layer, against ours."""
    gain, cell = max_gain(summary)
    if not np.isfinite(gain):
        return "not testable: Cayley-Encoder and last layer were not both run"
    ours = 100 * gain
    if ours >= paper_pp:
        return f"reproduced: up to {ours:.1f} points over the last layer ({cell})"
    if ours > 0:
        return f"partly reproduced: gains over the last layer reach {ours:.1f} points ({cell}), not {paper_pp:.0f}"
    return f"not reproduced: the Cayley-Encoder never beats the last layer (best difference {ours:.1f} points)"


def verdict_parameters(shares: pd.DataFrame, paper_share: float) -> str:
    """Trainable parameters of the Cayley-Encoder as a share of each base model."""
    if shares.empty:
        return "not testable: no model"
    worst = shares.loc[shares["share"].idxmax()]
    best = shares.loc[shares["share"].idxmin()]
    span = f"{best['share']:.2%} ({best['model']}) to {worst['share']:.2%} ({worst['model']})"
    if worst["share"] <= paper_share:
        return f"reproduced: {span} of the base model's parameters"
    under = int((shares["share"] <= paper_share).sum())
    level = "partly reproduced" if under else "not reproduced"
    return (f"{level}: {span}; {under} of {len(shares)} models are within {paper_share:.1%} (our models have "
            f"{shares['base_params'].min() / 1e6:.0f}M to {shares['base_params'].max() / 1e6:.0f}M parameters, "
            "the paper's 14M to 8B)")


def verdict_few_shot(summary: pd.DataFrame, references: tuple[str, ...] = ("last", "best")) -> str:
    """Few-shot: does the Cayley-Encoder beat the single-layer probes at every shot count?"""
    if summary.empty or "shots" not in summary:
        return "not testable: no few-shot runs"
    won, total = 0, 0
    for _, part in summary.groupby("shots"):
        for ref in references:
            w, n = wins(part, "cayley", ref)
            won, total = won + w, total + n
    shots = ", ".join(str(s) for s in sorted(summary["shots"].unique()))
    return (f"{_level(won, total)}: the Cayley-Encoder has the higher mean in {won}/{total} comparisons with "
            f"{' and '.join(METHOD_LABELS[r] for r in references)} ({shots} examples per class)")
