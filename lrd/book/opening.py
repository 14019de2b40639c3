"""The opening of every chapter, in one call: parameters checked, threads set, the chapter's
:class:`~lrd.book.glue.Glue`, its claims glued for the prose, its clock started."""

from __future__ import annotations

import time
from typing import Mapping

from lrd.book.glue import Glue
from lrd.book.notebooks import check_parameters

#: What a claim template may glue: attributes of :class:`lrd.verdicts.claims.Claim`.
CLAIM_FIELDS = ("text", "source", "paper_effect")


def open_chapter(chapter: str, namespace: dict, *, claims: Mapping[str, str] | None = None) -> Glue:
    """Open a chapter: the first call of its first code cell after the parameters cell.

    1. Checks the notebook's parameters in place (:func:`lrd.book.notebooks.check_parameters`;
       ``lrd run`` checked them already, this is for plain papermill).
    2. Sets torch's CPU threads when the chapter has a ``threads`` parameter that is not 0.
    3. Makes the chapter's :class:`~lrd.book.glue.Glue`; a chapter that judges no claim of the
       claims table (:func:`lrd.verdicts.claims_of`) declares so (:meth:`Glue.no_claims`).
    4. Glues each claim's fields for the prose: ``claims`` maps a key template to a field of
       :data:`CLAIM_FIELDS`, e.g. ``{"claim_{name}": "text", "paper_{name}": "paper_effect"}``
       glues ``<chapter>-claim_gain`` and ``<chapter>-paper_gain`` for the claim ``gain``
       (a missing paper effect as ``""``).
    5. Starts the chapter's clock (:meth:`Glue.minutes`).

    Parameters
    ----------
    chapter : str
    namespace : dict
        The notebook's ``globals()``.
    claims : mapping of str to str, optional
        Key templates (with ``{name}``) and the claim field each glues; none by default.

    Returns
    -------
    Glue

    Examples
    --------
    In the chapter's first code cell, after ``import lrd``::

        glue = lrd.book.open_chapter("mid_layer", globals(), claims={"claim_{name}": "text"})
    """
    from lrd.verdicts import claims_of

    check_parameters(chapter, namespace)
    if namespace.get("threads"):
        import torch

        torch.set_num_threads(namespace["threads"])
    glue = Glue(chapter)
    table = claims_of(chapter)
    if not table:
        glue.no_claims()
    for template, field in (claims or {}).items():
        if field not in CLAIM_FIELDS:
            raise ValueError(f"claims[{template!r}] must be one of {CLAIM_FIELDS}, got {field!r}")
        if "{name}" not in template:
            raise ValueError(f"claim key template {template!r} must contain {{name}}, e.g. 'claim_{{name}}'")
        for name, claim in table.items():
            value = getattr(claim, field)
            glue(template.format(name=name), "" if value is None else value)
    glue.started = time.perf_counter()
    return glue
