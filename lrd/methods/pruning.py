r"""Measurement-guided layer pruning: prune orders and budgets.

Every rule turns a per-block signal into the set of blocks it removes at a budget of ``k``
blocks (blocks are numbered 1..L as in ``hidden_states``; block ``l`` maps layer ``l - 1`` to
layer ``l``). One sentence per rule (:data:`PRUNE_RULES`):

* **Frenet (velocity)**: remove the blocks with the smallest Grassmann velocity
  :math:`s_{l-1} = d(l-1, l)` first (they move the top-:math:`r` subspace least).
* **NRS**: remove the blocks with the highest chance-adjusted neighbourhood retention
  :math:`\mathrm{NRS}(l-1, l)` first (they keep every text's neighbours).
* **GFMI**: remove the blocks with the smallest GFMI change :math:`|G_l - G_{l-1}|` first
  (they change the agreement of the cluster hierarchy with the final layer least).
* **cosine (BI)**: remove the blocks of lowest cosine relevance (Block Influence) first.
* **angular (Gromov)**: remove the ``k`` consecutive blocks :math:`l^*+1..l^*+k` with
  :math:`l^* = \arg\min_l d_{\angle}(l, l+k)`.
* **accuracy (calibration)**: remove the blocks whose single removal costs least downstream
  score on a labelled calibration split first.
* **Taylor (first order)**: remove the blocks of smallest first-order loss change first.
* **random**: a random order per seed; budget ``k`` removes its first ``k`` blocks.

**Budgets.** A budget is a fraction :math:`p` of the :math:`L` blocks; it removes
:math:`k = \max(1, \lfloor pL + \tfrac12 \rfloor)` blocks (round half up, at least one, at most
:math:`L - 1`). The LRD paper does not say how it rounds; this is our rule.

**Against random.** The tests of a rule against random pruning, with the model as the unit,
and the verdicts on the LRD paper's pruning claims are in :mod:`lrd.verdicts.pruning`.

References
----------
Jiang, Yang, Tam, arXiv:2605.12714 (2026), abstract and Sec. 6 (pruning by the LRD signals).
Men et al., "ShortGPT", arXiv:2403.03853 (2024) (Block Influence).
Gromov et al., "The Unreasonable Ineffectiveness of the Deeper Layers", ICLR 2025 (angular distance).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from lrd.metrics.profile import LRDProfile

__all__ = ["BUDGETS", "PRUNE_RULES", "MEASUREMENT_RULES", "budget_blocks", "measurement_scores", "gromov_block",
           "pruning_sets", "budget_plan", "budgets_of", "plan_changes"]

BUDGETS = (0.05, 0.10, 0.15, 0.20)
MEASUREMENT_RULES = ("Frenet (velocity)", "NRS", "GFMI")
PRUNE_RULES = {
    "Frenet (velocity)": "smallest Grassmann velocity d(l-1, l) into the block first (label-free)",
    "NRS": "highest chance-adjusted neighbourhood retention NRS(l-1, l) across the block first (label-free)",
    "GFMI": "smallest GFMI change |GFMI_l - GFMI_(l-1)| across the block first (label-free)",
    "cosine (BI)": "lowest cosine relevance 1 - cos(h_(l-1), h_l) (Block Influence) first",
    "angular (Gromov)": "the k consecutive blocks whose end states are closest in angular distance",
    "accuracy (calibration)": "smallest loss of downstream score when removed alone, on a labelled calibration split, first",
    "Taylor (first order)": "smallest first-order estimate of the loss change when removed first (decoders)",
    "random": "a random order per seed; a budget of k removes its first k blocks",
}


def budget_blocks(n_blocks: int, fraction: float) -> int:
    r"""Blocks removed at a budget: :math:`k = \max(1, \lfloor pL + \frac12 \rfloor)`, at most :math:`L - 1`.

    >>> [budget_blocks(30, p) for p in (0.05, 0.10, 0.15, 0.20)]
    [2, 3, 5, 6]
    >>> [budget_blocks(6, p) for p in (0.05, 0.10, 0.15, 0.20)]
    [1, 1, 1, 1]
    """
    if not (isinstance(n_blocks, (int, np.integer)) and n_blocks >= 2):
        raise ValueError(f"need a model of at least 2 blocks to prune, got n_blocks={n_blocks!r}")
    if not 0 < fraction < 1:
        raise ValueError(f"a budget is a fraction of the blocks in (0, 1), got {fraction!r}")
    return int(min(n_blocks - 1, max(1, math.floor(fraction * n_blocks + 0.5))))


def measurement_scores(profile: LRDProfile) -> dict[str, np.ndarray]:
    """Importance of blocks 1..L by the three LRD signals (the rule removes the lowest first).

    Frenet: the velocity into block ``l``, ``velocity[l - 1]``; NRS: minus the chance-adjusted
    NRS of the pair ``(l - 1, l)``; GFMI: ``|gfmi[l] - gfmi[l - 1]|``.
    """
    return {"Frenet (velocity)": np.asarray(profile.frenet.velocity, float),
            "NRS": -np.asarray(profile.nrs_adjusted, float),
            "GFMI": np.abs(np.diff(np.asarray(profile.gfmi, float)))}


def angular_distance(last_token: np.ndarray) -> np.ndarray:
    """Gromov et al.'s angular distance between layers, averaged over inputs.

    .. math:: d(l, l+n) = \\frac{1}{N}\\sum_i \\frac{1}{\\pi} \\arccos \\cos(x^{(l)}_i, x^{(l+n)}_i)

    on the last token's states.

    Parameters
    ----------
    last_token : ndarray of shape (L + 1, N, d)

    Returns
    -------
    ndarray of shape (L + 1, L + 1), symmetric, zero diagonal, values in [0, 1].
    """
    x = np.asarray(last_token, dtype=np.float64)
    if x.ndim != 3 or not np.isfinite(x).all():
        raise ValueError(f"last_token must be a finite (L + 1, N, d) array, got shape {x.shape}")
    u = x / np.linalg.norm(x, axis=-1, keepdims=True).clip(1e-30)
    cos = np.einsum("and,bnd->abn", u, u).clip(-1, 1)
    d = (np.arccos(cos) / np.pi).mean(-1)
    np.fill_diagonal(d, 0.0)
    return d


def gromov_block(distance: np.ndarray, k: int) -> list[int]:
    """The ``k`` consecutive blocks Gromov et al. prune: ``l* + 1 .. l* + k``,
    :math:`l^* = \\arg\\min_l d(l, l + k)` (1-based block numbers).

    Parameters
    ----------
    distance : ndarray of shape (L + 1, L + 1)
        Angular distances between layers (:func:`angular_distance`).
    k : int
        Blocks to remove, 0..L.

    >>> d = np.full((5, 5), 0.9); d[2, 4] = d[4, 2] = 0.1
    >>> gromov_block(d, 2)
    [3, 4]
    """
    n = distance.shape[0] - 1
    if not 0 <= k <= n:
        raise ValueError(f"k must be in 0..{n}, got {k}")
    if k == 0:
        return []
    start = int(np.argmin([distance[l, l + k] for l in range(n - k + 1)]))
    return list(range(start + 1, start + k + 1))


def _lowest(scores: np.ndarray, k: int, tiebreak: np.ndarray | None = None) -> list[int]:
    keys = (np.asarray(scores),) if tiebreak is None else (np.asarray(tiebreak), np.asarray(scores))
    return sorted((np.lexsort(keys)[:k] + 1).tolist())


def pruning_sets(scores: dict[str, np.ndarray], ks: list[int], *, distance: np.ndarray | None = None,
                 n_random: int = 5, seed: int = 0, tiebreak: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Which blocks each pruning rule removes for each budget ``k``.

    Parameters
    ----------
    scores : dict of name -> ndarray of shape (L,)
        Importance per block (higher = keep); rule ``name`` removes the ``k`` lowest.
    ks : list of int
        Numbers of blocks to remove.
    distance : ndarray of shape (L + 1, L + 1), optional
        Angular distances; adds the rule ``angular (Gromov)``, which removes the ``k``
        consecutive blocks :math:`l^*+1..l^*+k` minimising :math:`d(l, l+k)` (:func:`gromov_block`).
    n_random : int
        Random rules (one random order per seed; budget ``k`` removes its first ``k`` blocks).
    tiebreak : dict of name -> ndarray, optional
        Secondary key for ties (e.g. log-likelihood drop for accuracy relevance).

    Returns
    -------
    DataFrame with columns ``rule, seed, k, removed`` (tuple of 1-based blocks).
    """
    n = len(next(iter(scores.values())))
    rows = []
    for name, s in scores.items():
        rows += [(name, -1, k, tuple(_lowest(s, k, (tiebreak or {}).get(name)))) for k in ks]
    if distance is not None:
        rows += [("angular (Gromov)", -1, k, tuple(gromov_block(distance, k))) for k in ks]
    for r in range(n_random):
        order = np.random.default_rng(seed + r).permutation(n) + 1
        rows += [("random", r, k, tuple(sorted(order[:k].tolist()))) for k in ks]
    return pd.DataFrame(rows, columns=["rule", "seed", "k", "removed"])


def budget_plan(scores: dict[str, np.ndarray], n_blocks: int, fractions: Sequence[float] = BUDGETS, *,
                distance: np.ndarray | None = None, n_random: int = 5, seed: int = 0,
                tiebreak: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """The blocks each rule removes at each budget.

    Parameters
    ----------
    scores : dict of rule -> ndarray of shape (L,)
        Importance per block (the rule removes the lowest ``k``; see :func:`measurement_scores`).
    n_blocks : int
        L.
    fractions : budgets as fractions of L (rounded by :func:`budget_blocks`).
    distance : ndarray of shape (L + 1, L + 1), optional
        Angular distances between layers: adds ``angular (Gromov)``.
    n_random : int
        Random orders (seeds ``seed .. seed + n_random - 1``).
    tiebreak : dict of rule -> ndarray, optional

    Returns
    -------
    DataFrame ``rule, seed, fraction, k, removed`` (``seed`` -1 for deterministic rules).
    """
    bad = {r: np.shape(s) for r, s in scores.items() if np.shape(s) != (n_blocks,)}
    if bad:
        raise ValueError(f"every score needs one value per block ({n_blocks}), got shapes {bad}")
    ks = {f: budget_blocks(n_blocks, f) for f in fractions}
    base = pruning_sets(scores or {"_": np.zeros(n_blocks)}, sorted(set(ks.values())), distance=distance,
                        n_random=n_random, seed=seed, tiebreak=tiebreak)
    base = base[base["rule"] != "_"]
    budgets = pd.DataFrame({"fraction": list(ks), "k": list(ks.values())})
    plan = budgets.merge(base, on="k")[["rule", "seed", "fraction", "k", "removed"]]
    return plan.sort_values(["rule", "seed", "fraction"], ignore_index=True)


def budgets_of(plan_k: pd.DataFrame, n_blocks: int, fractions: Sequence[float] = BUDGETS) -> pd.DataFrame:
    """A plan listed by number of blocks ``k`` (``rule, seed, k, removed``, e.g. from
    :func:`lrd.methods.relevance.calibration_plan`) listed by budget instead: one row per rule, seed
    and fraction, ``k = budget_blocks(n_blocks, fraction)``."""
    ks = pd.DataFrame({"fraction": list(fractions), "k": [budget_blocks(n_blocks, f) for f in fractions]})
    missing = set(ks["k"]) - set(plan_k["k"])
    if missing:
        raise ValueError(f"the plan has no rows for k = {sorted(missing)}; build it with ks = {sorted(set(ks['k']))}")
    return ks.merge(plan_k, on="k")[["rule", "seed", "fraction", "k", "removed"]]


def plan_changes(plan: pd.DataFrame, scores: dict[tuple, float], intact: float, **labels) -> pd.DataFrame:
    """The plan with each row's downstream ``score`` (looked up by its removed blocks), the
    ``intact`` score, ``change = score - intact`` and constant label columns (model, task, ...)."""
    missing = {tuple(s) for s in plan["removed"]} - set(scores)
    if missing:
        raise ValueError(f"no score for removal sets {sorted(missing)}")
    out = plan.assign(score=[scores[tuple(s)] for s in plan["removed"]], intact=intact, **labels)
    out["change"] = out["score"] - intact
    return out
