"""The designs the executed chapters ran, read from their results, for the null calibration.

The appendix simulates each claim's verdict at a design (how many models of each kind, how
many tasks). Where a chapter glues its design, :func:`executed_designs` reads it from that
chapter's ``results/<chapter>.json`` (written by :meth:`lrd.book.Glue.save` when it ran), so the
calibration follows the panel the book actually ran, a user's panel included, instead of a
restated default. Claims absent here keep the design restated in their null model
(:attr:`lrd.verdicts.calibration.NullModel.design`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["DESIGN_SOURCES", "executed_designs"]


def _n_listed(name: str) -> Callable[[Mapping[str, Any]], int]:
    """The number of items of a glued ", "-separated list."""
    def count(glued: Mapping[str, Any]) -> int:
        return len([x for x in str(glued[name]).split(", ") if x])
    count.__doc__ = f"len({name})"
    return count


_FAMILIES = {"n_encoders": "n_encoders", "n_decoders": "n_decoders", "n_tasks": "n_tasks"}

#: Claim -> (chapter, {design parameter of its null model: the chapter's glued name, or a function
#: of the chapter's glued values}).
DESIGN_SOURCES: dict[str, tuple[str, dict[str, str | Callable[[Mapping[str, Any]], int]]]] = {
    "lrd.architecture": ("lrd_families", _FAMILIES),
    "lrd.final_layer": ("lrd_families", _FAMILIES),
    "lrd.task": ("lrd_families", {**_FAMILIES, "n_tasks": _n_listed("equal_tasks")}),
    "lrd.complementarity": ("lrd_families", {"n_models": "n_models", "n_tasks": "n_tasks"}),
    "lrd.selection": ("selection_and_pruning", {"n": "n_sel"}),
    "lrd.selection_strongest": ("selection_and_pruning", {"n": "n_sel"}),
    "lrd.selection_llm": ("selection_and_pruning", {"n": "n_dec"}),
}


def executed_designs(results_dir: str | Path = "results",
                     sources: Mapping[str, tuple[str, Mapping[str, Any]]] = DESIGN_SOURCES
                     ) -> dict[str, tuple[dict[str, int], str]]:
    """Per claim, the design its chapter ran and where it was read: ``{claim: (design, source)}``.

    Parameters
    ----------
    results_dir : path
        The folder of the executed chapters' ``<chapter>.json`` (a chapter's ``results_dir``).
    sources : mapping
        :data:`DESIGN_SOURCES` or another of its form.

    Returns
    -------
    dict
        Only the claims whose chapter has results there; the others keep their null model's
        restated design. ``source`` names the chapter, its file and the parameters read:
        "executed lrd_families (results/lrd_families.json): n_encoders, n_decoders, n_tasks".

    Raises
    ------
    ValueError
        A results file that lacks a glued design value (written by an older version of its
        chapter): re-run the chapter, or remove the file to calibrate at the default design.
    """
    folder = Path(results_dir)
    found: dict[str, tuple[dict[str, int], str]] = {}
    for claim, (chapter, fields) in sources.items():
        path = folder / f"{chapter}.json"
        if not path.is_file():
            continue
        glued = {k.removeprefix(f"{chapter}-"): v for k, v in json.loads(path.read_text()).items()}
        design = {}
        for parameter, name in fields.items():
            try:
                value = name(glued) if callable(name) else glued[name]
            except KeyError as missing:
                raise ValueError(f"{path}: no glued {missing} for {claim}'s design; re-run `lrd run {chapter}` "
                                 f"there, or remove the file to calibrate at the default design") from None
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{path}: {parameter} of {claim}'s design must be a count, got {value!r}")
            design[parameter] = value
        found[claim] = (design, f"executed {chapter} ({folder.name}/{path.name}): {', '.join(design)}")
    return found
