"""Tables of the Cayley-aggregation chapter: seed summaries, the paper's layout, the paper's own table.

``scores`` tables have one row per ``model, task, method, seed`` with a ``score`` (accuracy,
or Spearman for STS), as :mod:`lrd.aggregation.scores` returns them. Nothing here judges a claim
(that is :mod:`lrd.verdicts.fusion`); these are the tables the chapter shows.

References
----------
Ulanovski, Blyachman and Bechler-Speicher, arXiv:2603.22665 v3, Table 1 (the layout).
"""

from __future__ import annotations

import pandas as pd

from lrd.aggregation.encoders import METHOD_LABELS, METHODS
from lrd.aggregation.cayley import cayley_graph, complete_graph, smallest_n

__all__ = ["summarize", "paper_layout", "paper_summary", "cell_wins", "largest_gain", "layer_graphs"]


def summarize(scores: pd.DataFrame, by: tuple[str, ...] = ("model", "task", "method")) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1; 0 for one seed) and count of ``score`` over seeds."""
    missing = {*by, "score"} - set(scores.columns)
    if missing:
        raise ValueError(f"scores lack the columns {sorted(missing)}")
    out = scores.groupby(list(by), sort=False)["score"].agg(["mean", "std", "count"]).reset_index()
    return out.fillna({"std": 0.0})


def paper_layout(summary: pd.DataFrame, *, scale: float = 100.0, digits: int = 1) -> pd.DataFrame:
    """The paper's layout: one block of method rows per model, one column per task.

    Cells are ``"mean ± std"`` (times ``scale``) where ``summary`` has a ``std`` column, else
    the mean alone (the paper's table reports means).
    """
    with_std = "std" in summary
    cell = summary.assign(cell=[f"{m * scale:.{digits}f}" + (f" ± {s * scale:.{digits}f}" if with_std else "")
                                for m, s in zip(summary["mean"], summary["std"] if with_std else summary["mean"])])
    order = {m: i for i, m in enumerate(METHODS)}
    table = cell.pivot_table(index=["model", "method"], columns="task", values="cell", aggfunc="first", sort=False)
    models = list(dict.fromkeys(summary["model"]))
    table = table.reindex(sorted(table.index, key=lambda k: (models.index(k[0]), order.get(k[1], 99))))
    table.index = pd.MultiIndex.from_tuples([(m, METHOD_LABELS.get(k, k)) for m, k in table.index],
                                            names=["model", "method"])
    return table[list(dict.fromkeys(summary["task"]))]


def paper_summary(rows: dict[str, dict[str, dict[str, float]]]) -> pd.DataFrame:
    """The paper's table (``model -> method -> task -> accuracy in %``, as
    :data:`lrd.verdicts.claims.ILSE_TABLE_ROWS`) as a summary with columns ``model, task,
    method, mean`` (accuracy as a fraction, like ours)."""
    out = pd.DataFrame([{"model": model, "task": task, "method": method, "mean": value / 100}
                        for model, methods in rows.items() for method, cells in methods.items()
                        for task, value in cells.items()])
    unknown = set(out["method"]) - set(METHODS) if len(out) else set()
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)} in the paper's table; known: {', '.join(METHODS)}")
    return out


def cell_wins(summary: pd.DataFrame, method: str, other: str) -> tuple[int, int]:
    """Model-task cells where ``method``'s mean is above ``other``'s, and the cells both have.

    A description of a table, not a test: cells of one model are not independent.
    """
    wide = summary.pivot_table(index=["model", "task"], columns="method", values="mean")
    if method not in wide or other not in wide:
        return 0, 0
    both = wide[[method, other]].dropna()
    return int((both[method] > both[other]).sum()), len(both)


def largest_gain(summary: pd.DataFrame, method: str = "cayley", reference: str = "last") -> tuple[float, str]:
    """Largest cell gain of ``method`` over ``reference`` (score units) and its ``"model / task"``."""
    wide = summary.pivot_table(index=["model", "task"], columns="method", values="mean")
    if method not in wide or reference not in wide:
        return float("nan"), ""
    gain = (wide[method] - wide[reference]).dropna()
    if gain.empty:
        return float("nan"), ""
    model, task = gain.idxmax()
    return float(gain.max()), f"{model} / {task}"


def layer_graphs(states: dict[str, int]) -> pd.DataFrame:
    """The graphs the Cayley- and FC-Encoder build over each model's states.

    Parameters
    ----------
    states : dict
        Model -> number of states (blocks + 1, embeddings included).

    Returns
    -------
    DataFrame with columns ``model, states, n, cayley_nodes, cayley_edges, fc_edges``: the
    modulus of the smallest SL(2, Z_n) with a node per state, its order (virtual nodes
    included) and directed edges, and the directed edges of the complete graph of the states.

    Examples
    --------
    >>> layer_graphs({"six blocks": 7}).to_dict("records")[0]
    {'model': 'six blocks', 'states': 7, 'n': 3, 'cayley_nodes': 24, 'cayley_edges': 96, 'fc_edges': 42}
    """
    rows = []
    for model, s in states.items():
        g = cayley_graph(smallest_n(s))
        rows.append({"model": model, "states": int(s), "n": g.n, "cayley_nodes": g.num_nodes,
                     "cayley_edges": int(g.edge_index.shape[1]), "fc_edges": int(complete_graph(s).shape[1])})
    return pd.DataFrame(rows, columns=["model", "states", "n", "cayley_nodes", "cayley_edges", "fc_edges"])
