"""``lrd report MODEL``: one page that tells a practitioner what the four papers say about their model.

Which layer to embed from, which blocks can go, how the representation moves and what layer
aggregation buys, each with how far to trust it, computed by the book's own chapter units
(:mod:`lrd.report.data`) and written as one self-contained HTML page with its JSON
(:mod:`lrd.report.page`).

Examples
--------
    lrd report minilm                        # report.html and report.json here
    lrd report smollm2 gemma3 -o both.html   # side by side
    lrd report ./my-model -p tasks '["sst2"]' -p device cuda
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from lrd.report.data import (DEFAULT_PROFILE, SECTIONS, compute_report_units, model_report, not_prunable_text,
                             prunable, report_parameters, report_units)

#: Chapter parameters a report sets itself: its models (and the model it prunes) are its MODEL arguments.
OWN_PARAMETERS = ("models", "pruning_models")


def check_models(models: Sequence[str]) -> None:
    """Fail before anything loads when a model cannot be found: an unknown key (with the closest
    one), a folder that does not exist, or a hub id while the hub is unreachable and the model is
    not in the local hub cache (:func:`lrd.engine.models.model_config`); or when a model is named
    twice (two spellings of one folder included: :func:`lrd.book.parameters.model_identity`)."""
    from lrd.book.parameters import duplicate_text, duplicates, model_identity, unique
    from lrd.engine.models import model_config

    if not models:
        from lrd.engine.packs import MODEL_PACKS

        raise ValueError(f"name at least one model: an offline key ({', '.join(MODEL_PACKS)}), "
                         "a local folder or a hub id")
    if groups := duplicates(models, model_identity):
        raise ValueError(f"the models name {duplicate_text(groups)}; a report has one column per model, so "
                         f"name each once: lrd report {' '.join(unique(models, model_identity))}")
    for name in models:
        model_config(name)


def check_parameter_names(models: Sequence[str], parameters: dict) -> None:
    """Fail at once (milliseconds) on a parameter no section's chapter has (with the closest
    known name: :func:`lrd.book.notebooks.check_names`, as ``lrd run``), and on ``models`` or
    ``pruning_models``: the report's models are its MODEL arguments."""
    from lrd.book.notebooks import check_names, default_parameters

    for name in OWN_PARAMETERS:
        if name in parameters:
            given = parameters[name]
            named = " ".join(given) if isinstance(given, list) and given and all(isinstance(g, str) for g in given) \
                else " ".join(models)
            raise ValueError(f"-p {name}: a report's models are its MODEL arguments (each is measured, pruned and "
                             f"reported in its own column), not a parameter; drop -p {name} and name them: "
                             f"lrd report {named}")
    check_names(parameters, {c: default_parameters(c) for c in SECTIONS.values()},
                where=f"the report's chapters {', '.join(SECTIONS.values())}")


def check_parameters(models: Sequence[str], parameters: dict, *, profile: str = DEFAULT_PROFILE,
                     device: str = "cpu") -> tuple[dict[str, dict[str, dict]], list[str]]:
    """The checked chapter parameters of every model's report, before anything loads: the
    checks of ``lrd run`` (:func:`check_parameter_names`; :func:`lrd.book.notebooks.check_chapters`:
    types, values, models, the device), on the parameters each section's chapter runs with.

    Returns
    -------
    (dict, list of str)
        model -> chapter -> parameters (:func:`lrd.report.data.report_parameters`), and notes
        for the user (a string given for a list, ...).

    Raises
    ------
    ValueError
        ``models`` or ``pruning_models`` among ``parameters`` (the report's models are its MODEL
        arguments), an unknown name, or every bad value.
    """
    from lrd.book.notebooks import coerce_parameters, default_parameters

    check_parameter_names(models, parameters)
    defaults = {c: default_parameters(c) for c in SECTIONS.values()}
    notes: list[str] = []
    for chapter, known in defaults.items():
        _, found = coerce_parameters(chapter, {k: v for k, v in parameters.items() if k in known}, defaults=known)
        notes += [n for n in found if n not in notes]
    plans, errors = {}, []
    for m in models:
        try:
            plans[m] = report_parameters(m, profile=profile, parameters=parameters, device=device)
        except ValueError as err:
            errors += [line for line in str(err).split("\n") if line not in errors]
    if errors:
        raise ValueError("\n".join(errors))
    return plans, notes


def output_paths(output: str | Path) -> tuple[Path, Path]:
    """The page and its JSON that ``output`` names: ``output`` itself and ``output`` with the
    suffix ``.json`` (``report.html`` -> ``report.json``). A name ending in ``.json`` is refused
    (ValueError with the fix): page and JSON would be one file, the JSON written over the page.

    Examples
    --------
    >>> [p.name for p in output_paths("out/both.html")]
    ['both.html', 'both.json']
    """
    page = Path(output)
    if page.suffix.lower() == ".json":
        html = page.with_suffix(".html")
        raise ValueError(f"-o {page} names the page, and the JSON goes beside it with the suffix .json: both would "
                         f"be {page}; name the page, e.g. -o {html} (writes {html.name} and {page.name})")
    return page, page.with_suffix(".json")


def build_report(models: Sequence[str], *, output: str | Path = "report.html", profile: str = DEFAULT_PROFILE,
                 parameters: dict | None = None, device: str = "cpu", log: Callable[[str], None] | None = None,
                 command: str = "", root=None,
                 check_planned: Callable[[dict[str, dict[str, list]]], None] | None = None) -> tuple[Path, Path]:
    """Compute and write the report of ``models``: ``output`` (HTML) and its JSON beside it
    (:func:`output_paths`: ``report.html`` -> ``report.json``).

    Every input is checked before the first model loads: the output's name, the models
    (:func:`check_models`) and each chapter's parameters, as ``lrd run`` checks them
    (:func:`check_parameters`); then ``check_planned``, when given, with every model's units by
    section (``lrd report`` refuses there a read-only ``$LRD_HOME`` that lacks some). A model that
    is a folder is named by its absolute path from then on (:func:`lrd.book.parameters.absolute_model`),
    in the page and the JSON too. A model with too few blocks to prune is said so before any work
    (its blocks section then says why it does not apply). Returns the two paths.
    """
    from lrd.book.parameters import absolute_model, model_blocks
    from lrd.engine.store import atomic_write
    from lrd.report.page import render_page, to_json

    output, json_path = output_paths(output)
    parameters = dict(parameters or {})
    device = parameters.pop("device", device)
    log = log or (lambda line: print(f"lrd report: {line}", file=sys.stderr, flush=True))
    check_parameter_names(models, parameters)  # milliseconds, before the models' configs (seconds)
    check_models(models)
    models = [absolute_model(m) for m in models]  # a folder named once, as the folder it is here
    plans, notes = check_parameters(models, parameters, profile=profile, device=device)
    notes += [f"{m}: blocks: {not_prunable_text(model_blocks(m))}" for m in models if not prunable(m)]
    for note in notes:
        log(f"note: {note}")
    parameters = _applied(parameters, plans[models[0]])
    planned = {m: report_units(m, plan=plans[m]) for m in models}
    if check_planned is not None:
        check_planned(planned)
    reports = []
    for m in models:
        t0 = time.perf_counter()
        computed = compute_report_units(m, planned[m], log=lambda line, m=m: log(f"{m}: {line}"), root=root)
        reports.append(model_report(m, computed, profile=profile, parameters=parameters, root=root))
        log(f"{m}: done ({time.perf_counter() - t0:.1f} s)")
    output.parent.mkdir(parents=True, exist_ok=True)
    page = render_page(reports, command=command, json_name=json_path.name).encode()
    data = to_json(reports, profile=profile, parameters=parameters, device=device).encode()
    atomic_write(output, lambda f: f.write(page), ".html.tmp")
    atomic_write(json_path, lambda f: f.write(data), ".json.tmp")
    return output, json_path


def _applied(parameters: dict, plan: dict[str, dict]) -> dict:
    """The given parameters as the chapters took them (a string for a list is a one-item list)."""
    return {k: next((p[k] for p in plan.values() if k in p), v) for k, v in parameters.items()}


__all__ = ["OWN_PARAMETERS", "SECTIONS", "build_report", "check_models", "check_parameter_names", "check_parameters",
           "model_report", "output_paths", "report_units"]
