r"""The one rule of every permutation test's tail: the tolerance, the Monte Carlo p-value and the
p-value with its smallest attainable value (:func:`tail_p`), and the result they fill
(:class:`PermutationTest`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TOLERANCE", "tolerance", "monte_carlo_p", "tail_p", "PermutationTest"]

#: The relative tolerance of every tail count (:func:`tolerance`).
TOLERANCE = 1e-12


def tolerance(scale: float | np.ndarray = 1.0) -> float | np.ndarray:
    r"""The one tolerance rule of every tail count: :math:`10^{-12} \max(1, |\text{scale}|)`.

    A relabelled statistic equal to the observed one up to floating-point error counts as
    reaching it; ``scale`` is the largest magnitude among the data the statistic is computed
    from (p-values, correlations and shares have scale 1); an array of scales gives one tolerance
    each (many simulated panels at once).

    >>> tolerance(), tolerance(250.0)
    (1e-12, 2.5e-10)
    """
    if np.ndim(scale):
        return TOLERANCE * np.maximum(1.0, np.abs(scale))
    return TOLERANCE * max(1.0, abs(float(scale)))


def monte_carlo_p(count, n: int):
    r"""The Monte Carlo p-value :math:`(1 + \text{count}) / (1 + n)` of ``n`` random relabellings
    (or bootstrap replicates), ``count`` of which are at least as extreme as the observed
    statistic: the observed data count as one relabelling, so the p-value is never 0 and the
    test is valid at every ``n`` (Phipson and Smyth 2010). ``count`` may be an array (one
    p-value per entry).

    >>> monte_carlo_p(0, 999), monte_carlo_p(49, 999)
    (0.001, 0.05)
    """
    return (1 + count) / (1 + n)


def tail_p(null: np.ndarray, observed: float, *, exact: bool, design_p_min: float, extreme: float | None = None,
           alternative: str = "greater", scale: float = 1.0) -> tuple[float, float]:
    r"""The p-value and smallest attainable p-value of a permutation test, from its null statistics.

    ``count`` is the number of relabellings whose statistic reaches the observed one (at least
    it, ``alternative="greater"``; at most, ``"less"``; up to :func:`tolerance` of ``scale``).

    - Exact (``null`` holds every relabelling): :math:`p = \text{count}/N`; ``p_min`` is the share
      of relabellings reaching ``extreme``, the most extreme statistic the data allow, or the
      design's ``design_p_min`` where ``extreme`` is None.
    - Monte Carlo (``null`` holds :math:`N` random relabellings): :math:`p` is
      :func:`monte_carlo_p`, never below ``p_min`` :math:`= \max(\text{design\_p\_min}, 1/(1 + N))`:
      the estimate cannot fall below what the design allows.

    >>> tail_p(np.array([0., 1, 2, 3]), 2.0, exact=True, design_p_min=0.25, extreme=3.0)
    (0.5, 0.25)
    >>> tail_p(np.array([0., 1, 2, 3]), 2.0, exact=False, design_p_min=0.01)
    (0.6, 0.2)
    """
    null = np.asarray(null)
    tol = tolerance(scale)
    if alternative == "greater":
        count = int((null >= observed - tol).sum())
        top = None if extreme is None else int((null >= extreme - tol).sum())
    elif alternative == "less":
        count = int((null <= observed + tol).sum())
        top = None if extreme is None else int((null <= extreme + tol).sum())
    else:
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    if exact:
        return count / len(null), (design_p_min if top is None else top / len(null))
    p_min = max(float(design_p_min), 1 / (1 + len(null)))
    return max(monte_carlo_p(count, len(null)), p_min), p_min


@dataclass(frozen=True)
class PermutationTest:
    """Result of a permutation test.

    Attributes
    ----------
    statistic : float
        The observed statistic.
    p_value : float
        Share of relabellings whose statistic is at least the observed one (exact), or
        ``(1 + count) / (1 + n)`` over ``n`` random relabellings (Monte Carlo).
    p_min : float
        The smallest p-value this design can give at all.
    n_permutations : int
        Relabellings enumerated or drawn.
    exact : bool
        Whether every relabelling was enumerated.
    n_comparisons : int
        Scores over which the statistic takes the maximum (or minimum).
    """

    statistic: float
    p_value: float
    p_min: float
    n_permutations: int
    exact: bool
    n_comparisons: int = 1

    def describe(self, what: str = "relabellings") -> str:
        kind = "exact" if self.exact else "Monte Carlo"
        more = f", extreme over {self.n_comparisons} scores" if self.n_comparisons > 1 else ""
        return f"{kind} permutation test over {self.n_permutations} {what}{more}"
