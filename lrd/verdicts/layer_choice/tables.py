"""The mid-layer chapter's tables: per-layer scores read per model, the paper's gain, the
cross-fitted best layer, the metrics' correlations, the label-free choice, chance and the final
norm (:mod:`lrd.verdicts.layer_choice`). Numbers and column names; the sentences are
:mod:`lrd.verdicts.wording.layer_choice`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.methods.crossfit import FINAL_NORM_SCORE
from lrd.tables import RESULT_COLUMNS
from lrd.verdicts.claims import Scope
from lrd.verdicts.stats import average_ranks, holm, mean_interval, mean_intervals, sign_flip_test
from lrd.verdicts.wording import layer_choice as wording
from lrd.verdicts.wording.layer_choice import CHOSEN_ON_HALF, STATES_NORMED, STATES_RETURNED

__all__ = ["HALVES", "METRICS", "PAPER_DIRECTIONS", "PAPER_BAND", "PAPER_CHOICE_GAIN", "FINAL_NORM_HALVES",
           "per_model_arrays", "intermediate_layers", "band_layers", "paper_gain", "per_model_band_gains",
           "cross_fitted_gain", "model_gains", "metric_correlations", "model_correlations", "in_scope_models",
           "label_free_choice", "chance_table", "FinalNormComparison", "final_norm_comparison", "panel_note",
           "sample_interval", "sample_intervals", "require_defined"]

#: The measurements holding each layer's score on the two halves of a task's evaluation rows.
HALVES = ("score half 1", "score half 2")
#: The label-free metrics of the chapter (:mod:`lrd.methods.suite`).
METRICS = ("prompt entropy", "dataset entropy", "effective rank", "curvature", "InfoNCE", "LiDAR", "DiME")
#: The sign the paper gives a metric's relation with the score across layers: prompt entropy is
#: low where the score is high (the "compression valley" of autoregressive models goes with their
#: best layers, Fig. 2a, report digest ``shared/papers/002`` Sec. 3.2) and the DiME-chosen layer
#: scores above the last (Sec. 3.1). The digests give no sign for the other metrics: they are
#: shown, not tested.
PAPER_DIRECTIONS = {"prompt entropy": -1, "DiME": +1}


#: The depth band at which the paper reads its gain: "intermediate layers (e.g. Pythia-410M's layers
#: at 40%-60% depth) score 2%-16% above the final layer on average" (report digest
#: ``shared/papers/002``, key experimental steps, step 1, Fig. 1; our translation).
PAPER_BAND = (0.4, 0.6)

#: The paper's DiME-chosen layer: "3% above the final layer on the MTEB average" (Pythia;
#: report digest ``shared/papers/002``, main results 1).
PAPER_CHOICE_GAIN = 0.03


def per_model_arrays(results: pd.DataFrame, measurements) -> dict[str, tuple[list, np.ndarray, np.ndarray]]:
    """Per model: its tasks, its layers (ascending) and an array (n_tasks, n_layers, n_measurements)."""
    measurements = list(measurements)
    rows = results[results["measurement"].isin(measurements)]
    missing = sorted(set(measurements) - set(pd.unique(rows["measurement"])))
    if missing:
        raise ValueError(f"results lack the measurements {missing}; the mid-layer unit writes them "
                         "(lrd.units.mid_layer_model, lrd.methods.crossfit.layer_scores(..., halves=True))")
    m_codes, models = pd.factorize(rows["model"])
    t_codes, tasks = pd.factorize(rows["task"])
    k_codes, found = pd.factorize(rows["measurement"])
    layer = rows["layer"].to_numpy()
    layers = np.unique(layer)
    grid = np.full((len(models), len(tasks), len(layers), len(measurements)), np.nan)
    where = np.array([measurements.index(k) for k in found])
    index = (m_codes, t_codes, np.searchsorted(layers, layer), where[k_codes])
    grid[index] = rows["value"].to_numpy(dtype=float)
    counts = np.bincount(m_codes, minlength=len(models))
    out = {}
    for i, model in enumerate(models):
        present = ~np.isnan(grid[i])
        has_task, has_layer = present.any((1, 2)), present.any((0, 2))
        block = grid[i][has_task][:, has_layer]
        if counts[i] != block.size or np.isnan(block).any():
            raise ValueError(f"model {model!r}: every task needs exactly one finite value of each of {measurements} "
                             "at every layer (a value is missing, repeated or NaN)")
        out[model] = ([t for t, keep in zip(tasks, has_task) if keep], layers[has_layer], block)
    return out


def intermediate_layers(layers: np.ndarray) -> np.ndarray:
    """Positions of the layers strictly between the embeddings and the last layer."""
    if len(layers) < 3:
        raise ValueError(f"need at least 3 layers (embeddings, one intermediate, last), got {len(layers)}")
    return np.arange(1, len(layers) - 1)


def band_layers(layers: np.ndarray, band: tuple[float, float] = PAPER_BAND) -> np.ndarray:
    r"""Positions of the layers whose depth :math:`l/L` lies in ``band`` (inclusive).

    Where no layer falls in the band (few layers: with :math:`L = 3` the depths are 0, 1/3, 2/3
    and 1), the one intermediate layer nearest the band's centre (the shallower on a tie).

    >>> band_layers(np.arange(13)).tolist()  # L = 12: depths 5/12, 6/12, 7/12
    [5, 6, 7]
    >>> band_layers(np.arange(4)).tolist()  # L = 3: none in [0.4, 0.6]; 1/3 and 2/3 tie, the shallower
    [1]
    """
    pool = intermediate_layers(np.asarray(layers))
    lo, hi = band
    if not 0 < lo <= hi < 1:
        raise ValueError(f"band must satisfy 0 < low <= high < 1, got {band}")
    depth = np.asarray(layers, dtype=float) / layers[-1]
    inside = pool[(depth[pool] >= lo - 1e-12) & (depth[pool] <= hi + 1e-12)]
    if len(inside):
        return inside
    return pool[[int(np.argmin(np.round(np.abs(depth[pool] - (lo + hi) / 2), 9)))]]  # ties: the shallower


def paper_gain(results: pd.DataFrame, *, band: tuple[float, float] = PAPER_BAND) -> pd.DataFrame:
    r"""The paper's estimator of the mid-layer gain: one row per (model, task).

    With :math:`s_l` layer :math:`l`'s score on every evaluation row and :math:`B` the layers at
    depth :math:`l/L \in` ``band`` (:func:`band_layers`),

    .. math:: \text{band} = \frac{1}{|B|}\sum_{l \in B} s_l, \qquad \text{last} = s_L .

    No layer is chosen by its score, so no row is credited for a choice it made (nothing to
    cross-fit), and the noise of the fits, exchangeable across layers, cancels in expectation.
    The states are those the paper's code scores: through the model's final norm where it has
    one (:data:`lrd.methods.crossfit.FINAL_NORM_SCORE`, decoders: the code truncates the model,
    so every layer it scores has passed the norm), else as the model returns them (encoders:
    every layer ends in its own norm).

    Returns
    -------
    DataFrame
        ``model, task, states, band layers, band, last, gain``.
    """
    normed_models = set(results.loc[results["measurement"] == FINAL_NORM_SCORE, "model"])
    parts = []
    if normed_models:
        parts.append((per_model_arrays(results[results["model"].isin(normed_models)], [FINAL_NORM_SCORE]),
                      STATES_NORMED))
    rest = results[~results["model"].isin(normed_models)]
    if (rest["measurement"] == "score").any():
        parts.append((per_model_arrays(rest, ["score"]), STATES_RETURNED))
    if not parts:
        raise ValueError("results hold no 'score' rows: the mid-layer unit writes them")
    order = list(pd.unique(results["model"]))
    found = {m: (per[m], states) for per, states in parts for m in per}
    rows = []
    for model in (m for m in order if m in found):
        (tasks, layers, s), states = found[model]
        b = band_layers(layers, band)
        for t, task in enumerate(tasks):
            rows.append({"model": model, "task": task, "states": states,
                         "band layers": ", ".join(str(int(layers[j])) for j in b),
                         "band": float(s[t, b, 0].mean()), "last": float(s[t, -1, 0])})
    table = pd.DataFrame(rows)
    table["gain"] = table["band"] - table["last"]
    return table


#: The two cross-fitted halves of the score through the final norm (decoders with one).
FINAL_NORM_HALVES = (f"{FINAL_NORM_SCORE} half 1", f"{FINAL_NORM_SCORE} half 2")


def per_model_band_gains(results: pd.DataFrame, *, band: tuple[float, float] = PAPER_BAND) -> pd.DataFrame:
    r"""Per model, the paper's estimator on each of its independent replicates, and a test per model.

    A replicate is one (task, half): the half's rows, scored with fits made on its own rows
    (:mod:`lrd.methods.crossfit`), so the replicates of a model share neither rows nor fits and
    are independent given the model. On each, :math:`d = \bar s_B - s_L` (the band's mean score
    minus the last layer's, in the task's own points) on the states the paper's estimator reads
    (the halves through the final norm where the model has them). ``p``: exact one-sided
    sign-flip test over the model's :math:`2T` replicates (:math:`p \ge 2^{-2T}`); ``p (Holm)``:
    Holm-adjusted over the models.

    Returns
    -------
    DataFrame
        Index ``model``; ``states``, ``replicates``, ``mean difference``, ``ci``, ``p``, ``p (Holm)``.
    """
    normed = set(results.loc[results["measurement"] == FINAL_NORM_HALVES[0], "model"])
    parts = []
    if normed:
        parts.append((per_model_arrays(results[results["model"].isin(normed)], FINAL_NORM_HALVES), STATES_NORMED))
    rest = results[~results["model"].isin(normed)]
    if len(rest):
        parts.append((per_model_arrays(rest, HALVES), STATES_RETURNED))
    rows, samples = [], []
    for per, states in parts:
        for model, (_, layers, s) in per.items():
            b = band_layers(layers, band)
            d = (s[:, b, :].mean(1) - s[:, -1, :]).ravel()  # (tasks x halves,)
            test = sign_flip_test(d)
            rows.append({"model": model, "states": states, "replicates": len(d), "mean difference": float(d.mean()),
                         "ci": None, "p": test.p_value, "p min": test.p_min})
            samples.append(d)
    for row, ci in zip(rows, sample_intervals(samples)):  # filled in at once
        row["ci"] = ci
    order = list(pd.unique(results["model"]))
    table = pd.DataFrame(rows).set_index("model").loc[[m for m in order if m in {r["model"] for r in rows}]]
    table["p (Holm)"] = holm(table["p"].to_numpy())
    return table


def cross_fitted_gain(results: pd.DataFrame) -> pd.DataFrame:
    r"""The best intermediate layer, cross-fitted, against the last layer: one row per (model, task).

    With :math:`s^{(1)}_l, s^{(2)}_l` the scores of layer :math:`l` on the two halves of a
    task's evaluation rows and :math:`j_h = \arg\max_{0<l<L} s^{(h)}_l` the layer chosen on half
    :math:`h`,

    .. math:: \text{best} = \tfrac12\left(s^{(2)}_{j_1} + s^{(1)}_{j_2}\right), \qquad
              \text{last} = \tfrac12\left(s^{(1)}_L + s^{(2)}_L\right),

    so no row that chose a layer also credits it: if every layer were equally good, the
    expected gain would be 0 (choosing and crediting on the same rows, an intermediate layer is
    "best" with probability :math:`(L-1)/(L+1)`).

    Returns
    -------
    DataFrame
        ``model, task, layer chosen on half 1, layer chosen on half 2, best (cross-fitted), last, gain``.
    """
    cols: dict[str, list] = {k: [] for k in ("model", "task", *CHOSEN_ON_HALF,
                                             "best (cross-fitted)", "last")}
    for model, (tasks, layers, s) in per_model_arrays(results, HALVES).items():
        pool = intermediate_layers(layers)
        s1, s2 = s[..., 0], s[..., 1]
        j1, j2 = pool[s1[:, pool].argmax(1)], pool[s2[:, pool].argmax(1)]
        t = np.arange(len(tasks))
        for key, value in (("model", [model] * len(tasks)), ("task", tasks), (CHOSEN_ON_HALF[0], layers[j1]),
                           (CHOSEN_ON_HALF[1], layers[j2]), ("best (cross-fitted)", (s2[t, j1] + s1[t, j2]) / 2),
                           ("last", (s1[:, -1] + s2[:, -1]) / 2)):
            cols[key].extend(value)
    table = pd.DataFrame(cols)
    table["gain"] = table["best (cross-fitted)"] - table["last"]
    return table


def _relative(chosen: np.ndarray, last: np.ndarray, models) -> np.ndarray:
    """(chosen - last) / |last| per model; NaN where the last layer's mean score is 0 (undefined: a
    judge refuses it only for a model it counts, :func:`require_defined`)."""
    chosen, last = np.asarray(chosen, dtype=float), np.asarray(last, dtype=float)
    out = np.full(len(last), np.nan)
    defined = last != 0
    out[defined] = (chosen[defined] - last[defined]) / np.abs(last[defined])
    return out


def require_defined(gains: pd.Series) -> pd.Series:
    """``gains`` (model -> relative gain) of the models a judge counts, refused where one is undefined.

    >>> float(require_defined(pd.Series({"a": 0.1}))["a"])
    0.1
    >>> require_defined(pd.Series({"a": float("nan")}))
    Traceback (most recent call last):
    ValueError: the last layer's mean score is 0 for ['a']: a relative gain is undefined
    """
    zero = [m for m, v in gains.items() if np.isnan(v)]
    if zero:
        raise ValueError(f"the last layer's mean score is 0 for {zero}: a relative gain is undefined")
    return gains


def model_gains(table: pd.DataFrame, *, chosen: str = "best (cross-fitted)") -> pd.DataFrame:
    r"""Per model, the mean over tasks of the ``chosen`` and last scores and the relative gain
    :math:`(\bar s_{\text{chosen}} - \bar s_L)/|\bar s_L|` of the task-mean score (as the paper's gain
    on the MTEB average)."""
    means = table.groupby("model", sort=False)[[chosen, "last"]].mean()
    means["relative gain"] = _relative(means[chosen].to_numpy(), means["last"].to_numpy(), means.index)
    return means


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of matching rows of x and y (..., n_layers); 0 where either is constant."""
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(-1, keepdims=True), ry - ry.mean(-1, keepdims=True)
    den = np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))
    return np.divide((rx * ry).sum(-1), den, out=np.zeros(den.shape), where=den > 0)


def metric_correlations(results: pd.DataFrame, *, metrics=METRICS) -> pd.DataFrame:
    """Spearman correlation across layers between each metric and the score, per model and task.

    The score is the mean of the two halves' scores (:data:`HALVES`). A metric measured on the
    task itself (dataset entropy, effective rank) is correlated with that task's score; one
    measured on other prompts (prompt entropy and curvature on the token task, InfoNCE, LiDAR and
    DiME on the augmented prompts) enters as the mean of its curves over the tasks it was
    measured on, a property of the model's layers. A constant curve correlates 0.

    Returns
    -------
    DataFrame
        Long: ``model, task, metric, rho``; metrics absent for a model are left out.
    """
    scores = per_model_arrays(results, HALVES)
    present = set(results["measurement"].unique())
    cols: dict[str, list] = {"model": [], "task": [], "metric": [], "rho": []}
    for metric in (m for m in metrics if m in present):
        for model, (measured_on, layers, values) in per_model_arrays(results, [metric]).items():
            if model not in scores:
                continue
            tasks, scored, s = scores[model]
            if not np.array_equal(layers, scored):
                raise ValueError(f"model {model!r}: metric {metric!r} needs a value at every scored layer")
            curves = dict(zip(measured_on, values[..., 0]))
            fallback = values[..., 0].mean(0)
            x = np.stack([curves.get(t, fallback) for t in tasks])
            for key, value in (("model", [model] * len(tasks)), ("task", tasks), ("metric", [metric] * len(tasks)),
                               ("rho", _spearman_rows(x, s.mean(-1)))):
                cols[key].extend(value)
    if not cols["rho"]:
        raise ValueError(f"results hold none of the metrics {list(metrics)} for a scored model")
    return pd.DataFrame(cols)


def model_correlations(results: pd.DataFrame, *, metrics=METRICS) -> pd.DataFrame:
    """:func:`metric_correlations` averaged over each model's tasks: models x metrics (unsigned)."""
    corr = metric_correlations(results, metrics=metrics)
    table = corr.groupby(["model", "metric"], sort=False)["rho"].mean().unstack("metric")
    return table[[m for m in metrics if m in table.columns]]


def in_scope_models(results: pd.DataFrame, scope: Scope | None) -> dict[str, bool]:
    """Per model of ``results``, whether it lies in ``scope`` (its :attr:`Scope.kinds`, read from
    the results' ``kind`` column); every model when the scope names no kinds.

    >>> r = pd.DataFrame({"model": ["a", "a", "b"], "kind": ["encoder", "encoder", "decoder"]})
    >>> in_scope_models(r, Scope("autoregressive models", kinds=("decoder",)))
    {'a': False, 'b': True}
    """
    models = list(dict.fromkeys(results["model"]))
    if scope is None or scope.kinds is None:
        return dict.fromkeys(models, True)
    if "kind" not in results.columns:
        raise ValueError(f"the claim's scope ({scope.text}) needs the results' 'kind' column (encoder or decoder "
                         f"per model), as the mid_layer unit writes it")
    kinds = results.groupby("model", sort=False)["kind"].first()
    return {m: kinds[m] in scope.kinds for m in models}


def label_free_choice(results: pd.DataFrame, *, metric: str = "DiME", higher_is_better: bool = True,
                      scope: Scope | None = None) -> pd.DataFrame:
    """Choose each model's layer by a label-free metric; its score against the last layer's.

    The metric's curve (mean over the tasks it was measured on) picks one intermediate layer per
    model (``0 < l < L``: the embeddings and the last layer are the trivial choices), used for
    every task; both layers are scored by the mean of the two halves' scores (the rows the gain
    uses), averaged over the model's tasks.

    Per model, the evidence of that model alone: ``p``, the exact one-sided sign-flip test over
    its (task, half) replicates of "the chosen layer scores above the last" (each half scored
    with fits of its own rows, :mod:`lrd.methods.crossfit`, so the replicates are independent
    given the model; :math:`p \ge 2^{-2T}`), and ``p (Holm)`` adjusted over the models in
    ``scope`` (:func:`in_scope_models`; NaN for the others, which are shown, not counted).

    Returns
    -------
    DataFrame
        Index ``model``; ``chosen layer``, ``chosen depth``, ``chosen``, ``last`` (mean scores),
        ``replicates``, ``p``, ``relative gain``, ``in scope`` and ``p (Holm)``.
    """
    scores = per_model_arrays(results, HALVES)
    if not (results["measurement"] == metric).any():
        raise ValueError(f"no rows for metric {metric!r}")
    out = []
    for model, (_, layers, values) in per_model_arrays(results, [metric]).items():
        if model not in scores:
            continue
        _, scored, s = scores[model]
        if not np.array_equal(layers, scored):
            raise ValueError(f"model {model!r}: metric {metric!r} needs a value at every scored layer")
        pool = intermediate_layers(layers)
        curve = values[..., 0].mean(0)[pool]  # mean over the tasks it was measured on
        j = pool[curve.argmax() if higher_is_better else curve.argmin()]
        mean = s.mean(-1).mean(0)  # halves, then tasks
        d = (s[:, j, :] - s[:, -1, :]).ravel()  # per (task, half): independent replicates (cross-fitted halves)
        test = sign_flip_test(d)
        out.append({"model": model, "chosen layer": int(layers[j]), "chosen depth": layers[j] / layers[-1],
                    "chosen": mean[j], "last": mean[-1], "replicates": len(d), "p": test.p_value})
    table = pd.DataFrame(out).set_index("model")
    table["relative gain"] = _relative(table["chosen"].to_numpy(), table["last"].to_numpy(), table.index)
    inside = in_scope_models(results, scope)
    table["in scope"] = [inside[m] for m in table.index]
    table["p (Holm)"] = np.nan
    if table["in scope"].any():
        table.loc[table["in scope"], "p (Holm)"] = holm(table.loc[table["in scope"], "p"].to_numpy())
    return table


def chance_table(results: pd.DataFrame) -> pd.DataFrame:
    """Each (model, task)'s scores beside its label-permutation chance.

    Columns: ``chance`` (mean over layers and permutations of the permuted-label score),
    ``chance max`` (the largest permuted-label score of any layer), ``best`` and ``last`` (the
    best and last layers' scores on every row), and ``best above chance`` / ``last above chance``
    (above every permuted-label score of any layer of that model and task).
    """
    per = per_model_arrays(results, ("score", "chance", "chance max"))
    out = []
    for model, (tasks, _, s) in per.items():
        for t, task in enumerate(tasks):
            top = s[t, :, 2].max()
            out.append({"model": model, "task": task, "chance": s[t, :, 1].mean(), "chance max": top,
                        "best": s[t, :, 0].max(), "last": s[t, -1, 0], "best above chance": bool(s[t, :, 0].max() > top),
                        "last above chance": bool(s[t, -1, 0] > top)})
    return pd.DataFrame(out)


@dataclass(frozen=True, eq=False)
class FinalNormComparison:
    """The decoders' scores with and without the final norm (:func:`final_norm_comparison`).

    Attributes
    ----------
    scores : DataFrame
        Tidy rows (:data:`lrd.tables.RESULT_COLUMNS` and ``"final norm"``: ``"on"`` or ``"off"``)
        of the ``"score"`` measurement; empty, with those columns, when nothing was compared.
    changes : DataFrame
        Index ``(model, layer)``, columns ``off``, ``on`` and ``change`` (on minus off).
    models : list of str
        The decoders compared, in order.
    mean_change : float or None
        Mean absolute change of the score over the decoders' layers; None without a decoder.
    best_moves : int or None
        Decoders whose best layer differs with the norm on; None without a decoder.
    finding : str
        One sentence for the prose: the numbers, or why there is nothing to compare.
    """

    scores: pd.DataFrame
    changes: pd.DataFrame
    models: list
    mean_change: float | None
    best_moves: int | None
    finding: str

    def glued(self) -> dict:
        """The chapter's glue values, by name: ``norm_finding`` and ``norm_n_models``, and,
        when decoders were compared, ``norm_mean_change`` and ``norm_best_moves``."""
        measured = {"norm_mean_change": self.mean_change, "norm_best_moves": self.best_moves} if self.models else {}
        return {"norm_finding": self.finding, "norm_n_models": len(self.models), **measured}


def final_norm_comparison(normed: Sequence[pd.DataFrame], kinds: dict[str, str], *,
                          norm_task: str) -> FinalNormComparison:
    """The final-norm section of the mid-layer chapter: each decoder's score per layer on
    ``norm_task`` with the final norm applied to every layer (``"on"``) and without (``"off"``).

    Parameters
    ----------
    normed : sequence of DataFrame
        :attr:`lrd.units.mid_layer.MidLayerTables.normed`: tidy rows with a ``"final norm"``
        column; empty when no model of the panel is a decoder with a final norm, or when
        ``norm_task`` is ``""``.
    kinds : dict
        Model -> ``"encoder"`` or ``"decoder"``, to say why nothing was compared.
    norm_task : str
        The chapter's ``norm_task`` parameter (``""`` skips the comparison).

    Returns
    -------
    FinalNormComparison
        With no rows, its ``finding`` says why (no decoder, no final norm, or skipped) and its
        numbers are None.

    Examples
    --------
    >>> none = final_norm_comparison([], {"minilm": "encoder"}, norm_task="sst2")
    >>> print(none.finding)
    This panel has no decoder, so there is no final norm to compare: the encoders' layers do not pass through one. Add a decoder to the models to run the comparison.
    >>> none.glued()["norm_n_models"], "norm_mean_change" in none.glued()
    (0, False)
    """
    columns = [*RESULT_COLUMNS, "final norm"]
    frames = [f for f in normed if len(f)]
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    scores = scores[scores["measurement"] == "score"]
    if scores.empty:
        empty = pd.DataFrame(columns=["off", "on", "change"],
                             index=pd.MultiIndex.from_arrays([[], []], names=["model", "layer"]))
        return FinalNormComparison(scores, empty, [], None, None,
                                   wording.no_norm_comparison(norm_task, "decoder" in kinds.values()))
    changes = scores.pivot_table(index=["model", "layer"], columns="final norm", values="value")
    missing = {"on", "off"} - set(changes.columns)
    if missing:
        raise ValueError(f"final-norm rows lack the variant(s) {sorted(missing)}; each decoder needs 'on' and 'off'")
    changes = changes[["off", "on"]].assign(change=lambda c: c["on"] - c["off"])
    models = list(dict.fromkeys(scores["model"]))
    moves = sum(int(c["on"].idxmax() != c["off"].idxmax()) for _, c in changes.groupby(level="model"))
    mean = float(changes["change"].abs().mean())
    return FinalNormComparison(scores, changes, models, mean, moves, wording.norm_change(mean, moves, len(models)))


def panel_note(kinds: dict[str, str], sources: dict[str, str]) -> str:
    """What a reader must know of the decoders when a claim about base LLMs is tested on them.

    ``kinds`` and ``sources`` map each model to its kind and to where its weights come from
    (:meth:`lrd.engine.models.LoadedModel.summary`). A panel without a decoder gets a note that
    says so: the claims are then tested on encoders only.

    >>> panel_note({"a": "decoder", "b": "decoder", "c": "encoder"},
    ...            {"a": "org/A-Instruct (GGUF Q4)", "b": "org/B (base, GGUF Q5)", "c": "org/C"})
    'instruction-tuned: 1 of 2 decoders; dequantised from GGUF: 2 of 2 (org/A-Instruct (GGUF Q4); org/B (base, GGUF Q5)); the paper tests base models'
    >>> panel_note({"c": "encoder"}, {"c": "org/C"})
    'the panel has no decoder, so the claims are tested on 1 encoder only; the paper tests base LLMs'
    """
    decoders = [sources.get(m, m) for m, k in kinds.items() if k == "decoder"]
    instruct = sum("instruct" in s.lower() for s in decoders)
    gguf = sum("gguf" in s.lower() for s in decoders)
    return wording.decoder_panel(len(kinds), decoders, instruct, gguf)


def sample_interval(values: np.ndarray) -> tuple[float, float] | None:
    """:func:`lrd.verdicts.stats.mean_interval` of ``values``; None for fewer than 2."""
    return mean_interval(values) if len(values) > 1 else None


def sample_intervals(samples: list[np.ndarray]) -> list[tuple[float, float] | None]:
    """:func:`sample_interval` of each sample, the samples of each size at once (:func:`mean_intervals`)."""
    out: list[tuple[float, float] | None] = [None] * len(samples)
    for n in {len(x) for x in samples if len(x) > 1}:
        at = [i for i, x in enumerate(samples) if len(x) == n]
        for i, (low, high) in zip(at, mean_intervals(np.stack([samples[i] for i in at]))):
            out[i] = (float(low), float(high))
    return out


