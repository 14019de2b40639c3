"""The chapters' expensive work as cached units: one function call per model (and task).

``base`` holds the machinery (:class:`~lrd.units.base.Unit`, keys, the model slot,
:func:`~lrd.units.base.run_unit`, :func:`~lrd.units.base.compute`), ``registry`` which function
declares each chapter's units, ``sweep`` the Dask runner of ``lrd sweep``, ``panels`` the
named panels of hub models and ``cost`` their estimated cost (``lrd sweep --panel``), and one module per
chapter its unit functions, their frozen records and the function that turns the records
into the chapter's tables. A chapter's unit module imports neither ``lrd.verdicts`` nor
``lrd.book``, so rewording a claim, a plot or a glued sentence never invalidates a cached unit.

The names below are loaded on first use (PEP 562): ``import lrd.units`` loads no torch.
"""

from __future__ import annotations

from lrd._lazy import lazy_attributes

_CHAPTERS = ("models_and_tasks", "lrd_families", "mid_layer", "cosine_vs_ablation", "cayley_aggregation",
             "selection_and_pruning")
_SUBMODULES = ("base", "common", "records", "registry", "sweep", "panels", "cost", *_CHAPTERS)
_EXPORTS = {
    **dict.fromkeys(["Unit", "ModelSlot", "run_unit", "compute", "unit_code", "unit_modules", "unit_code_digest",
                     "COMMON_MODULES"], "lrd.units.base"),
    **dict.fromkeys(["CHAPTER_UNITS", "declaration", "units"], "lrd.units.registry"),
    **dict.fromkeys(["models_and_tasks_units", "models_and_tasks_probe", "panel_tables"], "lrd.units.models_and_tasks"),
    **dict.fromkeys(["lrd_families_units", "lrd_families_profile", "family_tables"], "lrd.units.lrd_families"),
    **dict.fromkeys(["mid_layer_units", "mid_layer_model", "mid_layer_tables"], "lrd.units.mid_layer"),
    **dict.fromkeys(["cosine_vs_ablation_units", "ablation_decoder", "ablation_encoder", "collect_decoders",
                     "pruning_curves_table", "encoder_tables"], "lrd.units.cosine_vs_ablation"),
    **dict.fromkeys(["cayley_aggregation_units", "cayley_task_scores", "cayley_ablation", "cayley_few_shot",
                     "cayley_tables"], "lrd.units.cayley_aggregation"),
    **dict.fromkeys(["selection_and_pruning_units", "selection_model", "selection_tables"],
                    "lrd.units.selection_and_pruning"),
}

__getattr__, __dir__, __all__ = lazy_attributes(__name__, _SUBMODULES, _EXPORTS)
