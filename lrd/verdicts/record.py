"""The verdict record: what the book says about one claim, and why.

A verdict is either a **test** (a statistical test with its p-value) or a **demonstration** (a
construction or arithmetic that holds by design: never called "reproduced"). Its outcome is
never written by hand: :func:`decide` computes it from the test's numbers, and
:class:`Verdict` exposes it as a read-only property.

==================  ===============================================================================
outcome             when
==================  ===============================================================================
reproduced          test: p <= alpha in the paper's direction
contradicted        test: significant the other way, or an equivalence test shows the effect is
                    smaller than the paper's (``p_against <= alpha``, margin stated in ``against``),
                    on a panel that could also have said "reproduced" (``p_min <= alpha``);
                    demonstration: the construction or arithmetic does not hold
inconclusive        test: neither, on a panel that could have reached alpha
not testable        test: the smallest p-value this panel can reach in the paper's direction is
                    above alpha (whatever the test against the claim says), or the test could not
                    be run (e.g. the paper's model is not in the panel)
demonstrated        demonstration: it holds
==================  ===============================================================================
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Literal

from lrd.verdicts.claims import CLAIM_GROUPINGS, CLAIMS
from lrd.verdicts.stats import holm

__all__ = ["ALPHA", "OUTCOMES", "OUTCOME_RULES", "Verdict", "adjusted_outcomes", "decide", "holm_over", "multiplicity", "per_model_count"]

ALPHA = 0.05
OUTCOMES = ("reproduced", "contradicted", "inconclusive", "not testable", "demonstrated")

#: What each outcome means, in the words the book prints (its introduction renders them with the
#: ``{lrd-outcomes}`` directive): :func:`decide` applies exactly these rules, in this order, and
#: ``tests/test_verdicts.py`` checks one case of each against it.
OUTCOME_RULES = {
    "reproduced": f"a test whose one-sided p-value in the paper's direction is at most {ALPHA:g}",
    "contradicted": (f"a test not reproduced whose test *against* the claim has p at most {ALPHA:g}: the effect "
                     "significantly the other way, or an equivalence (non-superiority) test showing it smaller "
                     "than the paper's, the margin stated in the chapter; only on a panel that could also have "
                     f"said reproduced (its smallest attainable p in the paper's direction at most {ALPHA:g}), so "
                     "that both outcomes were open. Also a demonstration whose construction or arithmetic does not "
                     "hold"),
    "inconclusive": f"a test that is neither, on a panel whose smallest attainable p is at most {ALPHA:g}",
    "not testable": (f"a test not reproduced on a panel whose smallest attainable p in the paper's direction "
                     f"(\"best\") is above {ALPHA:g}, even where its test against the claim reaches "
                     f"{ALPHA:g} (the panel could never have said reproduced), or a test that could not be run (the paper's model is not in the panel, or no "
                     "model or cell is in the claim's scope)"),
    "demonstrated": "a construction or arithmetic that holds by design (never called reproduced)",
}


def _probability(name: str, value: float | None) -> None:
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1):
        raise ValueError(f"{name} must be a probability in [0, 1] or None, got {value!r}")


def decide(kind: str, *, p_value: float | None = None, p_against: float | None = None, p_min: float | None = None,
           holds: bool | None = None, alpha: float = ALPHA) -> str:
    """The outcome of a verdict, from its numbers alone (the only place outcomes are made).

    Parameters
    ----------
    kind : {"test", "demonstration"}
    p_value : float, optional
        One-sided p-value in the paper's direction (for a claim of no effect: the equivalence
        test's p-value). None: the test could not be run.
    p_against : float, optional
        p-value of the opposite conclusion: the effect significantly the other way, or an
        equivalence test showing it is smaller than the paper's (for a claim of no effect: a
        test that it exceeds the margin).
    p_min : float, optional
        The smallest p-value this panel can give the test at all. Above ``alpha``, the outcome
        is "not testable" whatever ``p_against`` says: "contradicted" needs a panel on which
        "reproduced" was attainable too.
    holds : bool, optional
        Demonstrations only: whether the construction or arithmetic holds.

    Examples
    --------
    >>> decide("test", p_value=1 / 32, p_min=1 / 32)
    'reproduced'
    >>> decide("test", p_value=0.5, p_against=0.01, p_min=1 / 32)
    'contradicted'
    >>> decide("test", p_value=0.5, p_against=0.01, p_min=1 / 16)  # "reproduced" was never attainable
    'not testable'
    >>> decide("test", p_value=0.2, p_min=1 / 10), decide("test", p_value=0.2, p_min=1 / 32)
    ('not testable', 'inconclusive')
    >>> decide("demonstration", holds=True)
    'demonstrated'
    """
    for name, p in (("p_value", p_value), ("p_against", p_against), ("p_min", p_min)):
        _probability(name, p)
    if kind == "demonstration":
        if holds is None or any(p is not None for p in (p_value, p_against, p_min)):
            raise ValueError("a demonstration is decided by `holds` alone (no p-values)")
        return "demonstrated" if holds else "contradicted"
    if kind != "test":
        raise ValueError(f"kind must be 'test' or 'demonstration', got {kind!r}")
    if holds is not None:
        raise ValueError("a test is decided by its p-values; `holds` is for demonstrations")
    if p_value is None:
        return "not testable"
    if p_min is None:
        raise ValueError("a test verdict needs p_min, the smallest p-value its panel can reach")
    if p_value < p_min - 1e-12:
        raise ValueError(f"p_value {p_value} is below p_min {p_min}: the test's numbers are inconsistent")
    if p_value <= alpha:
        return "reproduced"
    if p_min > alpha:
        # "reproduced" was never attainable on this panel, so neither is its opposite (issue 48):
        # a test against the claim that reaches alpha where the claim's own test cannot would
        # decide only against the paper
        return "not testable"
    if p_against is not None and p_against <= alpha:
        return "contradicted"
    return "inconclusive"


@dataclass(frozen=True)
class Verdict:
    """What the book says about one claim of :data:`lrd.verdicts.claims.CLAIMS`.

    Build it with the numbers of a test (or ``holds`` for a demonstration); :attr:`outcome`
    follows from them (:func:`decide`).

    Attributes
    ----------
    claim : str
        The claim's id (``"skean.gain"``).
    kind : {"test", "demonstration"}
        Must match the claim's kind in the claims table.
    evidence : str
        One sentence of what was observed, with the numbers.
    test : str, optional
        The test's name and unit ("exact sign-flip test over 5 models").
    statistic, p_value, p_against, p_min : float, optional
        See :func:`decide`.
    against : str, optional
        What ``p_against`` tests ("effect below the paper's 2% (equivalence margin)").
    effect : float, optional
        Our effect, in the unit of ``effect_label``; ``ci`` its 95% interval.
    effect_label : str, optional
        What ``effect`` measures ("mean relative gain over models").
    effect_format : str
        Format of ``effect`` and ``ci`` for display (``"{:+.1%}"``).
    paper_effect : str, optional
        The paper's number, quoted (defaults to the claim's).
    holds : bool, optional
        Demonstrations only.
    reconstruction : str, optional
        Where the method is our reconstruction of something the paper leaves unspecified, what.
    note : str, optional
        What the reader must know to read it (e.g. the panel's decoders are instruct models).
    power : float, optional
        The probability that this test says "reproduced" at the paper's effect on this panel's
        design (``power_label`` says at which effect and with which noise); None where not
        computed. It says how strong a test an "inconclusive" was. A test whose smallest
        attainable p (``p_min``) is above ``alpha`` has power 0 at any effect: set so when not given.
    power_label : str, optional
        How ``power`` was computed ("the paper's 2% in every model, spread across models as
        observed, 4000 simulated panels").
    per_model : tuple of (int, int), optional
        Evidence per model, beside the cross-model verdict: (k, M), the phenomenon shown in k of
        the M models tested one by one, items (prompts, rows) as the unit, Holm-adjusted over
        the M; ``per_model_label`` says which test and which models ("shown in 3 of 4 decoders
        (Holm; prompts as the unit)"). None for population claims.
    per_model_label : str, optional
        With ``per_model`` None, why a per-model phenomenon has no per-model test.

    Examples
    --------
    >>> v = Verdict("skean.gain", "test", "gain in 5 of 5 models", test="exact sign-flip test over 5 models",
    ...             statistic=0.04, p_value=1 / 32, p_min=1 / 32)
    >>> v.outcome
    'reproduced'
    >>> Verdict("ilse.parameters", "demonstration", "0.4% of the model", holds=False).outcome
    'contradicted'
    """

    claim: str
    kind: Literal["test", "demonstration"]
    evidence: str
    test: str | None = None
    statistic: float | None = None
    p_value: float | None = None
    p_against: float | None = None
    against: str | None = None
    p_min: float | None = None
    effect: float | None = None
    ci: tuple[float, float] | None = None
    effect_label: str | None = None
    effect_format: str = "{:.3g}"
    paper_effect: str | None = None
    holds: bool | None = None
    reconstruction: str | None = None
    note: str | None = None
    power: float | None = None
    power_label: str | None = None
    per_model: tuple[int, int] | None = None
    per_model_label: str | None = None
    alpha: float = field(default=ALPHA)

    def __post_init__(self):
        if self.claim not in CLAIMS:
            raise KeyError(f"unknown claim {self.claim!r}; claims: {', '.join(CLAIMS)}")
        expected = CLAIMS[self.claim].kind
        if self.kind != expected:
            raise ValueError(f"claim {self.claim!r} is judged by a {expected}, not a {self.kind}")
        if not str(self.evidence).strip():
            raise ValueError("a verdict needs its evidence (one sentence saying what was observed)")
        if self.kind == "test" and self.p_value is not None and not self.test:
            raise ValueError("a test verdict names its test")
        _probability("power", self.power)
        if self.kind == "test" and self.power is None and self.p_min is not None and self.p_min > self.alpha:
            # exact, whatever the effect: no outcome of this design gives p <= alpha
            object.__setattr__(self, "power", 0.0)
            object.__setattr__(self, "power_label", f"none at any effect: the smallest p this design can reach is "
                                                    f"{self.p_min:.3g}, above alpha = {self.alpha:g}")
        if self.power is not None and not self.power_label:
            raise ValueError("power needs `power_label`, saying at which effect and noise it was computed")
        if self.per_model is not None:
            k, m = self.per_model
            if not (0 <= int(k) <= int(m)) or not self.per_model_label:
                raise ValueError(f"per_model must be (k, M) with 0 <= k <= M and a per_model_label, got {self.per_model}")
            object.__setattr__(self, "per_model", (int(k), int(m)))
        if self.p_against is not None and not self.against:
            raise ValueError("p_against needs `against`, saying what it tests")
        if self.ci is not None:
            lo, hi = self.ci
            if not (lo <= hi):
                raise ValueError(f"ci must be (low, high) with low <= high, got {self.ci}")
            object.__setattr__(self, "ci", (float(lo), float(hi)))
        decide(self.kind, p_value=self.p_value, p_against=self.p_against, p_min=self.p_min, holds=self.holds,
               alpha=self.alpha)  # raises on inconsistent numbers

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES`, computed from the numbers (:func:`decide`)."""
        return decide(self.kind, p_value=self.p_value, p_against=self.p_against, p_min=self.p_min,
                      holds=self.holds, alpha=self.alpha)

    @classmethod
    def untestable(cls, claim: str, why: str, **fields) -> "Verdict":
        """A test that could not be run on this panel (``why``: what is missing)."""
        return cls(claim, "test", why, **fields)

    def __str__(self) -> str:
        return f"{self.outcome}: {self.evidence}"

    def record(self) -> dict:
        """The JSON record (every field, plus ``outcome`` and the claim's table entries)."""
        c = CLAIMS[self.claim]
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        out["per_model"] = list(self.per_model) if self.per_model is not None else None
        out.update(outcome=self.outcome, paper=c.paper.key, label=c.label, claim_text=c.text,
                   claim_source=c.source, paper_effect=self.paper_effect or c.paper_effect,
                   panel=c.panel, sweep=c.sweep, grouping=CLAIM_GROUPINGS[self.claim],
                   scope=c.scope.text if c.scope else None)
        return out


def per_model_count(p_holm, label: str, *, alpha: float = ALPHA) -> dict:
    """A verdict's ``per_model`` and ``per_model_label`` fields: the k of M models whose
    Holm-adjusted p-value (one per model, ``p_holm``) is at most ``alpha``; nothing without models.

    Examples
    --------
    >>> per_model_count([0.01, 0.2, 0.04], "models where it shows (Holm)")["per_model"]
    (2, 3)
    >>> per_model_count([], "none")
    {}
    """
    p = [float(x) for x in p_holm]
    if not p:
        return {}
    return {"per_model": (sum(x <= alpha for x in p), len(p)), "per_model_label": label}


def holm_over(n: int, noun: str = "model", qualifier: str = "") -> str:
    """How a per-model label names its multiplicity adjustment: Holm over ``n`` units, or none for one.

    Examples
    --------
    >>> holm_over(3, "decoder")
    'Holm over the 3 decoders'
    >>> holm_over(1, "model", " whose encoder learns the task")
    'one model whose encoder learns the task, so no Holm adjustment'
    """
    if n == 1:
        return f"one {noun}{qualifier}, so no Holm adjustment"
    return f"Holm over the {n} {noun}s{qualifier}"


def multiplicity(records, *, alpha: float = ALPHA) -> dict:
    r"""What testing many claims at once does to the dashboard's decisions.

    Each verdict is a test at level ``alpha`` of its own claim. Over the :math:`T` claims whose
    panel can reach ``alpha`` (``p_min <= alpha``), if every null were true the expected number
    of false "reproduced" is at most :math:`T\alpha` (each test's size is at most ``alpha``:
    the null-calibration appendix), and the chance of at least one is at most
    :math:`\min(1, T\alpha)` (Bonferroni; :math:`1 - (1-\alpha)^T` were they independent).
    Holm's adjustment (:func:`lrd.verdicts.stats.holm`) over those :math:`T` p-values in the
    paper's direction, and separately over the same tests' p against the claim (only they can say
    "contradicted", :func:`decide`), says which decisions survive a family-wise error of ``alpha``.

    Parameters
    ----------
    records : sequence of dict
        Verdict records (:meth:`Verdict.record`), e.g. the dashboard's rows.

    Returns
    -------
    dict with ``n_tested`` (T), ``expected_false`` (:math:`T\alpha`), ``any_false_independent``,
    ``p_holm`` and ``p_against_holm`` (claim -> adjusted p), ``reproduced`` and
    ``contradicted`` (claims with that outcome, in order) and ``reproduced_holm`` and
    ``contradicted_holm`` (those whose adjusted p is at most ``alpha``).

    Examples
    --------
    >>> rows = [Verdict("skean.gain", "test", "x", test="t", p_value=0.01, p_min=0.004).record(),
    ...         Verdict("skean.choice", "test", "x", test="t", p_value=0.04, p_min=0.004).record(),
    ...         Verdict("skean.valley", "test", "x", test="t", p_value=0.5, p_min=0.004).record(),
    ...         Verdict("ilse.parameters", "demonstration", "x", holds=True).record()]
    >>> m = multiplicity(rows)
    >>> m["n_tested"], round(m["expected_false"], 3), m["reproduced"], m["reproduced_holm"]
    (3, 0.15, ['skean.gain', 'skean.choice'], ['skean.gain'])
    >>> [round(m["p_holm"][c], 2) for c in ("skean.gain", "skean.choice", "skean.valley")]
    [0.03, 0.08, 0.5]
    """
    rows = [r for r in records if r.get("kind") == "test" and r.get("p_value") is not None]
    tested = [r for r in rows if r.get("p_min") is not None and r["p_min"] <= alpha]
    # a test against the claim decides only where "reproduced" was attainable too (decide)
    against = [r for r in tested if r.get("p_against") is not None]
    p_holm = dict(zip((r["claim"] for r in tested), holm([r["p_value"] for r in tested]).tolist()))
    p_against_holm = dict(zip((r["claim"] for r in against), holm([r["p_against"] for r in against]).tolist()))
    reproduced = [r["claim"] for r in rows if r.get("outcome") == "reproduced"]
    contradicted = [r["claim"] for r in rows if r.get("outcome") == "contradicted"]
    n = len(tested)
    return {"n_tested": n, "alpha": alpha, "expected_false": n * alpha,
            "any_false_independent": 1 - (1 - alpha) ** n, "p_holm": p_holm, "p_against_holm": p_against_holm,
            "reproduced": reproduced, "contradicted": contradicted,
            "reproduced_holm": [c for c in reproduced if p_holm.get(c, 1.0) <= alpha],
            "contradicted_holm": [c for c in contradicted if p_against_holm.get(c, 1.0) <= alpha]}


def adjusted_outcomes(records, *, alpha: float = ALPHA) -> dict[str, str]:
    r"""Each verdict's outcome once the claims tested at once are adjusted for multiplicity.

    A "reproduced" stays so only when its p in the paper's direction, Holm-adjusted over the
    claims tested on a panel that could reach ``alpha``, is at most ``alpha`` (``p_holm`` of
    :func:`multiplicity`); a "contradicted" only when its p against the claim, Holm-adjusted over
    every test's p against its claim, is (``p_against_holm``). A decision that does not survive
    becomes "inconclusive"; every other outcome is kept, and a demonstration's (no test, so no
    multiplicity: a construction or arithmetic that fails reads "contradicted" and stays so). The
    headline (README, landing page, per-paper tallies) counts these, the unadjusted outcomes beside them.

    Returns
    -------
    dict
        claim -> outcome after the adjustment, for every record with a claim and an outcome.

    Examples
    --------
    >>> rows = [Verdict("skean.gain", "test", "x", test="t", p_value=0.01, p_min=0.004).record(),
    ...         Verdict("skean.choice", "test", "x", test="t", p_value=0.04, p_min=0.004).record(),
    ...         Verdict("skean.valley", "test", "x", test="t", p_value=0.5, p_min=0.004).record(),
    ...         Verdict("ilse.parameters", "demonstration", "x", holds=True).record(),
    ...         Verdict("cosine.theory", "demonstration", "x", holds=False).record()]
    >>> adjusted_outcomes(rows)  # Holm over three: 0.03, 0.08, 0.5; demonstrations as they are
    {'skean.gain': 'reproduced', 'skean.choice': 'inconclusive', 'skean.valley': 'inconclusive', 'ilse.parameters': 'demonstrated', 'cosine.theory': 'contradicted'}
    """
    m = multiplicity(records, alpha=alpha)
    kept = set(m["reproduced_holm"]) | set(m["contradicted_holm"])
    return {r["claim"]: ("inconclusive" if r.get("kind", "test") == "test" and r["outcome"] in ("reproduced", "contradicted")
                         and r["claim"] not in kept else r["outcome"])
            for r in records if r.get("claim") and r.get("outcome")}
