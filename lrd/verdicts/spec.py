r"""What a claim *is* in this book, as data: the specification a referee reads top to bottom.

A :class:`Specification` puts side by side, for one claim of :data:`lrd.verdicts.claims.CLAIMS`:

- the paper's words and where they are (its :class:`~lrd.verdicts.claims.Claim`);
- the scope the paper states, quoted with its location (:attr:`Specification.scope`);
- the book's operationalisation: the estimand, the unit of analysis, the test and its alpha;
- every number or choice the judge uses, as a :class:`Rule`: either the **paper's** (quoted,
  with its location) or the **book's** (with the reason the book chose it, and the values a
  referee could reasonably choose instead, :attr:`Rule.alternatives`);
- the tables the judge reads, in the chapter's tidy format (:class:`Table`);
- the judge itself, and its null and effect models for the appendix (:class:`NullModel`).

The specifications live in :mod:`lrd.verdicts.specifications`, one module per paper;
:func:`lrd.verdicts.specifications.judge` and :func:`~lrd.verdicts.specifications.simulate`
are the entry points. This module holds the records only (no claim, no judge).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

import numpy as np

from lrd.verdicts.claims import Claim
from lrd.verdicts.record import ALPHA

if TYPE_CHECKING:
    from lrd.verdicts.record import Verdict

__all__ = ["NullModel", "Rule", "Table", "Specification", "bind_design", "level_rule"]


@dataclass(frozen=True)
class NullModel:
    """How to simulate one claim's inputs under its null, and how the claim is judged.

    Attributes
    ----------
    simulate : callable
        ``simulate(rng) -> dict`` of keyword arguments for ``judge``: the claim's input tables
        drawn under the null (``rng`` a ``numpy.random.Generator``).
    judge : callable
        The function the chapter calls, returning a :class:`lrd.verdicts.Verdict`.
    panel : str
        The simulated design, in words ("8 models x 4 tasks, 13 layers, scores i.i.d. across layers").
    effect : callable, optional
        ``effect(rng) -> dict``: the inputs drawn where the paper's claim holds as the paper
        states it, at its edge (the least favourable point for "contradicted"); None where not
        yet simulated.
    effect_panel : str, optional
        That design, in words.
    power_effect : callable, optional
        ``power_effect(rng) -> dict``: the inputs drawn at the paper's effect as the paper states
        it (for a range, its lower end), at the chapter's design: the share of "reproduced" on
        them is the test's power (:func:`lrd.verdicts.calibration.power`); None where not simulated.
    power_panel : str, optional
        That design and effect, in words; where the paper states no size, the effect assumed
        (a labelled reconstruction). Defaults to ``effect_panel`` when ``power_effect`` is ``effect``.
    design : mapping, optional
        The simulated design's size (``{"n_encoders": 3, "n_decoders": 5, "n_tasks": 4}``): passed
        as keywords to ``simulate``, ``effect`` and ``power_effect`` and formatted into the three
        panel texts (``"{n_encoders} encoders"``). Its values are the default panel's, restated;
        :meth:`at` sets them to the design an executed chapter ran (``lrd.book.designs``).
        Empty for a model whose design is fixed.
    design_label : str, optional
        What the appendix's "design" column says of a fixed design (default "fixed"), or of a
        restated :attr:`design` that no executed chapter replaced: where it differs from the
        book's, how.
    describe_design : callable, optional
        ``describe_design(**design) -> str``: the design in words, available to the panel texts
        as ``{design}`` (for a design whose parameters read badly as they are, block counts).
    """

    simulate: Callable[[np.random.Generator], dict]
    judge: Callable[..., Verdict]
    panel: str
    effect: Callable[[np.random.Generator], dict] | None = None
    effect_panel: str | None = None
    power_effect: Callable[[np.random.Generator], dict] | None = None
    power_panel: str | None = None
    design: Mapping[str, Any] = field(default_factory=dict)
    design_label: str | None = None
    describe_design: Callable[..., str] | None = None

    def __post_init__(self):
        if self.power_effect is not None and self.power_panel is None:
            if self.power_effect is not self.effect:
                raise ValueError("a power simulation needs its power_panel: the design and the effect, in words")
            object.__setattr__(self, "power_panel", self.effect_panel)
        object.__setattr__(self, "design", dict(self.design))

    def at(self, **design: Any) -> "NullModel":
        """The same null model at another design (only the parameters of :attr:`design`)."""
        unknown = sorted(set(design) - set(self.design))
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not a parameter of this null model's design "
                             f"({', '.join(self.design) or 'its design is fixed'})")
        return dataclasses.replace(self, design={**self.design, **design})

    def draw(self, which: str = "simulate") -> Callable[[np.random.Generator], dict] | None:
        """``simulate``, ``effect`` or ``power_effect`` at :attr:`design` (None where not registered)."""
        if which not in ("simulate", "effect", "power_effect"):
            raise ValueError(f"which must be 'simulate', 'effect' or 'power_effect', got {which!r}")
        return bind_design(getattr(self, which), self.design)

    def describe(self, which: str = "panel") -> str | None:
        """``panel``, ``effect_panel`` or ``power_panel`` in words, at :attr:`design`."""
        if which not in ("panel", "effect_panel", "power_panel"):
            raise ValueError(f"which must be 'panel', 'effect_panel' or 'power_panel', got {which!r}")
        text = getattr(self, which)
        if text is None or not self.design:
            return text
        words = {"design": self.describe_design(**self.design)} if self.describe_design else {}
        return text.format(**self.design, **words)



def bind_design(simulate: Callable | None, design: Mapping[str, Any]) -> Callable | None:
    """``simulate`` with ``design``'s parameters bound (itself where there are none)."""
    return functools.partial(simulate, **design) if simulate is not None and design else simulate


@dataclass(frozen=True)
class Rule:
    """One number or choice a judge uses: the paper's (quoted) or the book's (with its reason).

    Attributes
    ----------
    name : str
        The judge's keyword that takes it (``judge(claim_id, tables, **{name: value})`` overrides it).
    value : object
        Its value in the book; equal to the judge's default (a test checks).
    origin : {"paper", "book"}
        ``"paper"``: the paper's own number or choice, and :attr:`reason` quotes it with its
        location. ``"book"``: the paper leaves it open (or says nothing), and the book chose it.
    reason : str
        For the book's rules, why this value; for the paper's, the quote and where it is.
    alternatives : tuple
        Other values a referee could reasonably choose (the book's rules only). A verdict that
        flips under one of them is not decided by the book's choice alone.
    label : str, optional
        How the rule reads in a table ("equivalence margin"); defaults to :attr:`name`.
    """

    name: str
    value: Any
    origin: Literal["paper", "book"]
    reason: str
    alternatives: tuple = ()
    label: str | None = None

    def __post_init__(self):
        if self.origin not in ("paper", "book"):
            raise ValueError(f"rule {self.name!r}: origin must be 'paper' or 'book', got {self.origin!r}")
        if not self.reason.strip():
            raise ValueError(f"rule {self.name!r}: give the reason (book) or the quote and its location (paper)")
        if self.origin == "paper" and self.alternatives:
            raise ValueError(f"rule {self.name!r}: the paper's own value has no alternatives; "
                             "a value the book reads into the paper is a book's rule")
        object.__setattr__(self, "alternatives", tuple(self.alternatives))


@dataclass(frozen=True)
class Table:
    """One input of a judge, in the chapter's tidy format.

    Attributes
    ----------
    name : str
        The judge's parameter that takes it.
    description : str
        One row per what, and its columns.
    required : bool
        False for a table the judge can do without (it then says what it could not show).
    """

    name: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class Specification:
    """One claim as the book judges it: the paper's words and scope, the book's operationalisation,
    its rules, the judge, and the null and effect models.

    Attributes
    ----------
    claim : Claim
        The paper's words, location and kind (:data:`lrd.verdicts.claims.CLAIMS`).
    judge : callable
        ``judge(**tables, **rules) -> Verdict`` on the chapter's tables.
    tables : tuple of Table
        What the judge reads.
    scope : str
        The scope the paper states for the claim, quoted with its location; where the paper
        states none, says so (the book then judges every model, or its rule is a :class:`Rule`).
    estimand : str
        What is estimated, in words and symbols.
    unit : str
        The unit of analysis: what varies independently (a model, not a model's tasks).
    test : str
        The test (or, for a demonstration, the construction or arithmetic checked).
    rules : tuple of Rule
        Every number or choice the judge uses, the paper's and the book's.
    null : NullModel, optional
        The null and effect models of the appendix (tests only; None for demonstrations and for
        tests no panel of the book can run).
    alpha : float
        The test's level.
    """

    claim: Claim
    judge: Callable[..., "Verdict"]
    tables: tuple[Table, ...]
    scope: str
    estimand: str
    unit: str
    test: str
    rules: tuple[Rule, ...] = ()
    null: NullModel | None = None
    alpha: float = 0.05

    def __post_init__(self):
        object.__setattr__(self, "tables", tuple(self.tables))
        object.__setattr__(self, "rules", tuple(self.rules))
        names = [r.name for r in self.rules]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.claim.id}: a rule is declared twice ({', '.join(sorted(names))})")
        if self.claim.kind == "demonstration" and self.null is not None:
            raise ValueError(f"{self.claim.id}: a demonstration has no null model")
        parameters = inspect.signature(self.judge).parameters
        takes = {n for n, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        unknown = [n for n in (*names, *(t.name for t in self.tables)) if n not in takes]
        if unknown:
            raise ValueError(f"{self.claim.id}: {', '.join(unknown)} not a parameter of {self.judge.__qualname__}")

    @property
    def id(self) -> str:
        return self.claim.id

    def rule(self, name: str) -> Rule:
        """The rule called ``name``."""
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(f"{self.claim.id} has no rule {name!r}; its rules: {', '.join(r.name for r in self.rules) or 'none'}")

    @property
    def book_rules(self) -> tuple[Rule, ...]:
        """The rules the book chose (the paper leaves them open)."""
        return tuple(r for r in self.rules if r.origin == "book")


def level_rule(reason: str) -> Rule:
    """The test's level ``alpha`` as one of the book's rules: the book's conventional
    :data:`lrd.verdicts.record.ALPHA`, with 0.01 and 0.1 as its alternatives. ``reason`` says what
    the level decides in this judge and why the paper fixes none."""
    return Rule("alpha", ALPHA, "book", reason, alternatives=(0.01, 0.1), label="level alpha")
