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
from typing import TYPE_CHECKING, Any, Callable, Mapping

from lrd.verdicts.calibration import null_model

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DESIGN_SOURCES", "cosine_panel", "executed_designs", "mid_layer_panel"]


def _items(glued: Mapping[str, Any], name: str) -> list[str]:
    return [x for x in str(glued[name]).split(", ") if x]


def _n_listed(name: str) -> Callable[[Mapping[str, Any]], int]:
    """The number of items of a glued ", "-separated list."""
    def count(glued: Mapping[str, Any]) -> int:
        return len(_items(glued, name))
    return count


def _listed(name: str, item: Callable[[str], Any] = str) -> Callable[[Mapping[str, Any]], tuple]:
    """A glued ", "-separated list, as a tuple of ``item(x)``."""
    def listed(glued: Mapping[str, Any]) -> tuple:
        return tuple(item(x) for x in _items(glued, name))
    return listed


def mid_layer_panel(results: "pd.DataFrame") -> dict[str, str]:
    """What the mid-layer chapter glues of its panel for the appendix: each model's block count
    (its largest layer index) and kind, in the panel's order, as ", "-separated lists."""
    per = results.groupby("model", sort=False).agg(blocks=("layer", "max"), kind=("kind", "first"))
    return {"block_counts": ", ".join(str(int(b)) for b in per["blocks"]), "model_kinds": ", ".join(per["kind"])}


def cosine_panel(correct: Mapping[tuple[str, str], Any]) -> dict[str, str]:
    """What the cosine chapter glues of its panel for the appendix: each decoder's block count,
    in the panel's order, as a ", "-separated list (``correct``: (model, task) -> the (L + 1, items)
    correctness of its removal sweep)."""
    blocks = {model: len(c) - 1 for (model, _), c in correct.items()}
    return {"block_counts": ", ".join(str(b) for b in blocks.values())}


_FAMILIES = {"n_encoders": "n_encoders", "n_decoders": "n_decoders", "n_tasks": "n_tasks"}

#: Claim -> (chapter, {design parameter of its null model: the chapter's glued name, or a function
#: of the chapter's glued values}).
DESIGN_SOURCES: dict[str, tuple[str, dict[str, str | Callable[[Mapping[str, Any]], Any]]]] = {
    "lrd.architecture": ("lrd_families", _FAMILIES),
    "lrd.final_layer": ("lrd_families", _FAMILIES),
    "lrd.task": ("lrd_families", {**_FAMILIES, "n_tasks": _n_listed("equal_tasks")}),
    "lrd.complementarity": ("lrd_families", {"n_models": "n_models", "n_tasks": "n_tasks"}),
    **dict.fromkeys(["skean.gain", "skean.choice", "skean.metrics_track"],
                    ("mid_layer", {"layers": _listed("block_counts", int), "kinds": _listed("model_kinds"),
                                   "n_tasks": "n_tasks"})),
    "lrd.selection": ("selection_and_pruning", {"n": "n_sel"}),
    "lrd.selection_strongest": ("selection_and_pruning", {"n": "n_sel"}),
    "lrd.selection_llm": ("selection_and_pruning", {"n": "n_dec"}),
    **dict.fromkeys(["ilse.fc", "ilse.cayley_performance", "ilse.baselines"],
                    ("cayley_aggregation", {"n_models": "n_models_in_scope", "n_tasks": "n_tasks",
                                            "n_seeds": "n_seeds"})),
    "ilse.few_shot": ("cayley_aggregation", {"n_models": "n_models_in_scope", "n_tasks": "n_few_shot_tasks",
                                             "n_seeds": "n_seeds"}),
    "ilse.mapping": ("cayley_aggregation", {"n_mappings": "n_mappings", "n_seeds": "n_seeds"}),
    "ilse.gain": ("cayley_aggregation", {"n_models": "gain_n_models", "n_tasks": "gain_n_tasks",
                                         "n_seeds": "gain_n_seeds", "n_items": "gain_n_items"}),
    "skean.valley": ("mid_layer", {"layers": _listed("block_counts", int), "kinds": _listed("model_kinds"),
                                   "n_prompts": "n_token_prompts"}),
    **dict.fromkeys(["lrd.pruning_gfmi_only", "lrd.pruning_gfmi_median", "lrd.pruning_frenet", "lrd.pruning_nrs"],
                    ("selection_and_pruning", {"n_models": "n_units"})),
    "cosine.pruning": ("cosine_vs_ablation", {"n_models": "n_pruned"}),
    **dict.fromkeys(["cosine.correlation", "cosine.misestimate", "cosine.dataset"],
                    ("cosine_vs_ablation", {"layers": _listed("block_counts", int), "n_tasks": "n_tasks",
                                            "n_items": "n_items", "n_splits": "n_splits"})),
}


def _like(value: Any, default: Any) -> bool:
    """``value`` of the form of the null model's ``default``: a count, or a non-empty tuple of
    counts or of words."""
    if isinstance(default, tuple):
        return isinstance(value, tuple) and len(value) > 0 and all(_like(v, default[0]) for v in value)
    if isinstance(default, str):
        return isinstance(value, str) and bool(value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _kind_of(default: Any) -> str:
    if isinstance(default, tuple):
        return f"a list of {'words' if isinstance(default[0], str) else 'counts'}"
    return "a word" if isinstance(default, str) else "a count"


def executed_designs(results_dir: str | Path = "results",
                     sources: Mapping[str, tuple[str, Mapping[str, Any]]] = DESIGN_SOURCES
                     ) -> dict[str, tuple[dict[str, Any], str]]:
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
    found: dict[str, tuple[dict[str, Any], str]] = {}
    read: dict[str, dict[str, Any] | None] = {}  # each chapter's glued values, read once
    for claim, (chapter, fields) in sources.items():
        path = folder / f"{chapter}.json"
        if chapter not in read:
            read[chapter] = ({k.removeprefix(f"{chapter}-"): v for k, v in json.loads(path.read_text()).items()}
                             if path.is_file() else None)
        glued = read[chapter]
        if glued is None:
            continue
        defaults = null_model(claim).design
        design = {}
        for parameter, name in fields.items():
            try:
                value = name(glued) if callable(name) else glued[name]
            except KeyError as missing:
                raise ValueError(f"{path}: no glued {missing} for {claim}'s design; re-run `lrd run {chapter}` "
                                 f"there, or remove the file to calibrate at the default design") from None
            if not _like(value, defaults[parameter]):
                raise ValueError(f"{path}: {parameter} of {claim}'s design must be {_kind_of(defaults[parameter])}, "
                                 f"got {value!r}")
            design[parameter] = value
        found[claim] = (design, f"executed {chapter} ({folder.name}/{path.name}): {', '.join(design)}")
    return found
