"""ilse.parameters and ilse.cayley_efficiency: the demonstrations (arithmetic and one measurement).

:func:`parameters_result` and :func:`cayley_efficiency_result` return the numbers (``holds``
and the rows the sentences quote); :func:`judge_parameters` and :func:`judge_cayley_efficiency`
write them as verdicts (:mod:`lrd.verdicts.wording.fusion`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from lrd.aggregation.cayley import cayley_graph, smallest_n
from lrd.verdicts.claims import (ILSE_KINDS, ILSE_MAX_PARAM_SHARE, ILSE_PAPER_MODELS, ILSE_PAPER_STATES,
                                 ILSE_PARAMS_RANGE, Scope, claim as claim_entry)
from lrd.verdicts.fusion.panel import require_columns, size_scope
from lrd.verdicts.record import Verdict
from lrd.verdicts.result import Result
from lrd.verdicts.wording import fusion as words

__all__ = ["in_param_scope", "paper_model_shares", "parameters_result", "judge_parameters", "sparser_from",
           "cayley_efficiency_result", "judge_cayley_efficiency"]


def in_param_scope(shares: pd.DataFrame, scope: Scope | None = None) -> pd.Series:
    """Per row of ``shares`` (column ``base_params``), whether the model is within the paper's sizes."""
    scope = scope or claim_entry("ilse.parameters").scope
    return shares["base_params"].map(lambda b: scope.in_params(float(b))).astype(bool)


def paper_model_shares(n_classes: int = 77, *, method: str = "cayley", hidden: int = 256,
                       models: Mapping[str, dict] = ILSE_PAPER_MODELS, **encoder) -> pd.DataFrame:
    """The parameter arithmetic on the paper's own models (:data:`lrd.verdicts.claims.ILSE_PAPER_MODELS`:
    quoted sizes), with ``n_classes`` classes (default Banking77's 77) and the encoder's
    reconstructed configuration (:data:`ENCODER_RECONSTRUCTION`; ``encoder`` as for
    :func:`lrd.aggregation.scores.parameter_share`).

    Returns
    -------
    DataFrame ``model, params, base_params, share, projection_share`` (the input projection
    alone, ``d * hidden + hidden`` parameters, over the base model's), one row per model.
    """
    from lrd.aggregation.scores import parameter_share

    rows = []
    for name, m in models.items():
        r = parameter_share(m["params"], m["hidden_size"], m["blocks"] + 1, n_classes, method=method, hidden=hidden,
                            **encoder)
        rows.append({"model": name, "params": r["params"], "base_params": r["base_params"], "share": r["share"],
                     "projection_share": (m["hidden_size"] * hidden + hidden) / m["params"]})
    return pd.DataFrame(rows, columns=["model", "params", "base_params", "share", "projection_share"])


def parameters_result(shares: pd.DataFrame, *, paper_share: float = ILSE_MAX_PARAM_SHARE,
                      reference: pd.DataFrame | None = None,
                      params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                      model_kinds: Mapping[str, str] | None = None,
                      kinds: Sequence[str] | None = ILSE_KINDS) -> Result:
    """The numbers of :func:`judge_parameters` (same parameters): ``holds`` (every counted share
    at most ``paper_share``) and, in ``facts``, the rows (model, share) of the paper's models in
    and out of ``params_range``, those above the share (with their input projection's share when
    given) and the panel's models counted."""
    require_columns(shares, {"model", "params", "base_params", "share"}, "shares")
    if reference is not None:
        require_columns(reference, {"model", "params", "base_params", "share"}, "reference")
    scope = Scope("", params=tuple(params_range))
    (inside,), left_out = size_scope("ilse.parameters", dict(zip(shares["model"], shares["base_params"])), shares,
                                     params=params_range, kinds=kinds, model_kinds=model_kinds)
    ref = reference if reference is not None else shares.iloc[:0]
    ref_in = ref[in_param_scope(ref, scope)] if len(ref) else ref
    ref_out = ref[~in_param_scope(ref, scope)] if len(ref) else ref
    if not len(inside) and not len(ref_in):
        sizes = f"{words.size_words(params_range[0])}-{words.size_words(params_range[1])}"
        raise ValueError(f"no model counted ({sizes} parameters): pass the arithmetic on the paper's models as "
                         f"`reference` (paper_model_shares)")
    over = ref_in[ref_in["share"] > paper_share]
    counted = pd.concat([t for t in (ref_in, inside) if len(t)], ignore_index=True)
    return Result("ilse.parameters", "demonstration", holds=bool((counted["share"] <= paper_share).all()), facts={
        "paper_share": paper_share, "params_range": tuple(params_range), "left_out": left_out,
        "kinds": tuple(kinds) if kinds is not None and model_kinds is not None else None,
        "reference_in": [(r.model, r.share) for r in ref_in.itertuples()],
        "reference_within": int((ref_in["share"] <= paper_share).sum()),
        "reference_over": list(over["model"]),
        "projection_over": ([(r.model, r.projection_share) for r in over.itertuples()]
                            if "projection_share" in over else None),
        "reference_out": [(r.model, r.share) for r in ref_out.itertuples()],
        "panel": [(r.model, r.share) for r in inside.itertuples()],
        "panel_within": int((inside["share"] <= paper_share).sum())})


def judge_parameters(shares: pd.DataFrame, *, paper_share: float = ILSE_MAX_PARAM_SHARE,
                     reference: pd.DataFrame | None = None,
                     params_range: tuple[float, float] = ILSE_PARAMS_RANGE,
                     model_kinds: Mapping[str, str] | None = None,
                     kinds: Sequence[str] | None = ILSE_KINDS) -> Verdict:
    """ilse.parameters (demonstration): the Cayley-Encoder adds at most ``paper_share`` of the model's parameters.

    Arithmetic (trainable parameters of the encoder and head over the base model's,
    :func:`lrd.aggregation.scores.parameter_share`) on the paper's own models (``reference``,
    :func:`paper_model_shares`: its nine LLMs' quoted sizes, 14M to 8B) and on the panel's models
    the claim counts (within ``params_range``, of the ``kinds`` the book counts). Holds when every
    counted row is at most the paper's share; where the paper's own smaller models exceed it at
    the reconstructed configuration, the verdict says so ("contradicted"), never "demonstrated".

    Parameters
    ----------
    shares : DataFrame
        Columns ``model, params, base_params, share``: the panel.
    reference : DataFrame, optional
        The same columns (and optionally ``projection_share``) for the paper's own models;
        counted within ``params_range``.
    params_range : (float, float)
        The parameter counts (inclusive) counted (default the paper's 14M-8B,
        :data:`lrd.verdicts.claims.ILSE_PARAMS_RANGE`).
    model_kinds, kinds
        The panel's models' kinds and the kinds the book counts, as in :func:`judge_fc`.

    Examples
    --------
    >>> ref = pd.DataFrame({"model": ["P-14M"], "params": [119_117], "base_params": [14_067_712],
    ...                     "share": [119_117 / 14_067_712]})
    >>> judge_parameters(ref.iloc[:0], reference=ref).outcome
    'contradicted'
    """
    return words.parameters(parameters_result(shares, paper_share=paper_share, reference=reference,
                                              params_range=params_range, model_kinds=model_kinds, kinds=kinds))


def sparser_from(up_to: int) -> int:
    """The smallest state count from which, up to ``up_to`` states, the Cayley graph over
    SL(2, Z_n) (virtual nodes included) has fewer directed edges than the complete graph.

    Examples
    --------
    >>> sparser_from(33)  # 7 states: 24 nodes, 96 edges against 42; from 11 on the Cayley graph is sparser
    11
    """
    start = up_to + 1
    for s in range(up_to, 1, -1):
        if int(cayley_graph(smallest_n(s)).edge_index.shape[1]) >= s * (s - 1):
            break
        start = s
    return start


def cayley_efficiency_result(graphs: pd.DataFrame, memory: pd.DataFrame, *, min_memory_ratio: float = 1.0,
                             memory_at: str = "longest") -> Result:
    """The numbers of :func:`judge_cayley_efficiency` (same parameters): ``holds`` and, in
    ``facts``, the scope's first state count (``start``) and top, the in-scope models where the
    Cayley graph is not sparser (``denser``: model, Cayley edges, complete-graph edges), those out
    of scope, and the token graphs' edges and peak-memory ratios (``token``, None without both)."""
    if memory_at not in ("longest", "every"):
        raise ValueError(f"memory_at must be 'longest' or 'every', got {memory_at!r}")
    require_columns(graphs, {"model", "states", "cayley_nodes", "cayley_edges", "fc_edges"}, "graphs")
    if graphs.empty:
        raise ValueError("no model: the edge counts need at least one")
    top = int(max(graphs["states"].max(), max(ILSE_PAPER_STATES.values())))
    start = sparser_from(top)
    paper_ok = all(start <= s <= top for s in ILSE_PAPER_STATES.values())
    scoped = graphs["states"] >= start
    inside, outside = graphs[scoped], graphs[~scoped]
    denser = inside[inside["cayley_edges"] >= inside["fc_edges"]]
    layer_ok = paper_ok and denser.empty
    token, token_ok = None, True
    if len(memory):
        require_columns(memory, {"graph", "tokens", "edges", "peak_bytes"}, "memory")
        wide = memory.pivot_table(index="tokens", columns="graph", values=["edges", "peak_bytes"]).dropna()
        if len(wide) and {"fc", "cayley"} <= set(wide["peak_bytes"].columns):
            if memory_at == "longest":
                t = wide.index.max()
                row = wide.loc[t]
                ratio = row[("peak_bytes", "fc")] / row[("peak_bytes", "cayley")]
                token_ok = bool(row[("edges", "cayley")] < row[("edges", "fc")] and ratio > min_memory_ratio)
                token = {"tokens": t, "cayley_edges": row[("edges", "cayley")], "fc_edges": row[("edges", "fc")],
                         "ratio": ratio}
            else:
                ratios = wide[("peak_bytes", "fc")] / wide[("peak_bytes", "cayley")]
                fewer = wide[("edges", "cayley")] < wide[("edges", "fc")]
                token_ok = bool((fewer & (ratios > min_memory_ratio)).all())
                token = {"tokens": list(wide.index), "fewer": int(fewer.sum()), "ratio_min": ratios.min(),
                         "ratio_max": ratios.max()}
    return Result("ilse.cayley_efficiency", "demonstration", holds=layer_ok and token_ok, facts={
        "start": start, "top": top, "n_inside": len(inside), "memory_at": memory_at, "token": token,
        "denser": [(r.model, r.cayley_edges, r.fc_edges) for r in denser.itertuples()],
        "outside": [(r.model, r.states, r.cayley_nodes, r.cayley_edges, r.fc_edges) for r in outside.itertuples()]})


def judge_cayley_efficiency(graphs: pd.DataFrame, memory: pd.DataFrame, *, min_memory_ratio: float = 1.0,
                            memory_at: str = "longest") -> Verdict:
    """ilse.cayley_efficiency (demonstration): the Cayley graph is sparser and lighter than the complete graph.

    Arithmetic and one measurement, within the paper's scope (:attr:`Claim.scope`): the layer
    counts from which the Cayley graph is the sparser one (:func:`sparser_from`), which hold every
    model of the paper (:data:`lrd.verdicts.claims.ILSE_PAPER_STATES`, 25-33 states). Holds when
    the paper's models' state counts lie in that range, the in-scope models of the panel have
    fewer directed edges on the Cayley graph (the smallest SL(2, Z_n) graph with a node per
    state, virtual nodes included) than on the complete graph of their states, and, on the
    token-level graph at the longest sequence where both were run, the Cayley graph has fewer
    edges and a lower measured peak memory. A model with fewer states sits on a graph with many
    virtual nodes (24 for 7 states): shown, labelled, not counted.

    Parameters
    ----------
    graphs : DataFrame
        Columns ``model, states, cayley_nodes, cayley_edges, fc_edges`` (directed edges).
    memory : DataFrame
        Columns ``graph, tokens, edges, peak_bytes`` (:func:`lrd.aggregation.memory.token_graph_memory`);
        may be empty.
    min_memory_ratio : float
        "Lighter" reads as FC's measured peak memory more than this many times the Cayley graph's
        (default 1: any saving).
    memory_at : {"longest", "every"}
        The token graphs compared: the longest sequence where both were run (default), or every
        length where both were run (each must show it).
    """
    return words.cayley_efficiency(cayley_efficiency_result(graphs, memory, min_memory_ratio=min_memory_ratio,
                                                            memory_at=memory_at))
