"""The units the appendix "Where the book follows the authors' code" reads: no new ones.

It reads the records of three chapters' units, declared here from each chapter's own parameters
(so they are the very units the chapters ran, and their cached results are reused): the
mid-layer units (both variants of entropy, curvature and DiME, from the same states), the
cosine-vs-ablation decoder units (lrd's and ShortGPT's last-block relevance, from the same pass)
and the Cayley ablation unit (lrd's and ILSE's graph configurations).
"""

from __future__ import annotations

import inspect
from typing import Callable, Mapping

from lrd.units.base import Unit
from lrd.units.cayley_aggregation import cayley_aggregation_units
from lrd.units.cosine_vs_ablation import cosine_vs_ablation_units
from lrd.units.mid_layer import mid_layer_units

#: chapter -> the function declaring its units from its parameters
DECLARATIONS: dict[str, Callable] = {"mid_layer": mid_layer_units, "cosine_vs_ablation": cosine_vs_ablation_units,
                                     "cayley_aggregation": cayley_aggregation_units}


def _declare(function: Callable, parameters: Mapping) -> dict | list:
    names = inspect.signature(function).parameters
    return function(**{k: v for k, v in parameters.items() if k in names})


def authors_code_units(*, parameters: Mapping[str, Mapping], models: list[str] | None = None) -> dict[str, list[Unit]]:
    """``"mid_layer"``, ``"decoders"`` (cosine_vs_ablation) and ``"ablation"`` (cayley_aggregation)
    units, each declared from ``parameters[chapter]`` (that chapter's parameters, e.g. its
    defaults merged with a profile); ``models`` replaces the mid-layer chapter's models."""
    missing = sorted(set(DECLARATIONS) - set(parameters))
    if missing:
        raise ValueError(f"parameters lack the chapters {missing}; pass each chapter's parameters")
    mid = {**parameters["mid_layer"], **({"models": list(models)} if models is not None else {})}
    return {"mid_layer": _declare(mid_layer_units, mid),
            "decoders": _declare(cosine_vs_ablation_units, parameters["cosine_vs_ablation"])["decoders"],
            "ablation": _declare(cayley_aggregation_units, parameters["cayley_aggregation"])["ablation"]}
