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

from lrd.report.data import DEFAULT_PROFILE, SECTIONS, compute_report_units, model_report, report_units


def check_models(models: Sequence[str]) -> None:
    """Fail before anything loads when a model cannot be found: an unknown key (with the closest
    one), a folder that does not exist, or a hub id while the hub is unreachable and the model is
    not in the local hub cache (:func:`lrd.engine.models.model_config`)."""
    from lrd.engine.models import model_config

    if not models:
        raise ValueError("name at least one model: an offline key (minilm, mpnet, smollm2, gemma3, qwen), "
                         "a local folder or a hub id")
    for name in models:
        model_config(name)


def check_tasks(parameters: dict) -> None:
    """Fail early on a task name lrd cannot evaluate (:func:`lrd.engine.tasks.task_type` names the offline tasks)."""
    from lrd.engine.tasks import task_type

    tasks = parameters.get("tasks")
    if tasks is None:
        return
    if isinstance(tasks, str) or not tasks:
        raise ValueError(f"tasks must be a non-empty list of task names, got {tasks!r}; e.g. -p tasks '[\"sst2\"]'")
    for t in tasks:
        task_type(t)


def build_report(models: Sequence[str], *, output: str | Path = "report.html", profile: str = DEFAULT_PROFILE,
                 parameters: dict | None = None, device: str = "cpu", log: Callable[[str], None] | None = None,
                 command: str = "", root=None) -> tuple[Path, Path]:
    """Compute and write the report of ``models``: ``output`` (HTML) and its JSON beside it
    (``report.html`` -> ``report.json``).

    Every input is checked before the first model loads: the models, the tasks, and each
    chapter's parameters (by the chapters' rules). Returns the two paths.
    """
    from lrd.engine.store import atomic_write
    from lrd.report.page import render_page, to_json

    parameters = dict(parameters or {})
    device = parameters.pop("device", device)
    check_models(models)
    check_tasks(parameters)
    planned = {m: report_units(m, profile=profile, parameters=parameters, device=device) for m in models}
    log = log or (lambda line: print(f"lrd report: {line}", file=sys.stderr, flush=True))
    reports = []
    for m in models:
        t0 = time.perf_counter()
        computed = compute_report_units(m, planned[m], log=lambda line, m=m: log(f"{m}: {line}"), root=root)
        reports.append(model_report(m, computed, profile=profile, parameters=parameters, root=root))
        log(f"{m}: done ({time.perf_counter() - t0:.1f} s)")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    json_path = output.with_suffix(".json")  # report.html -> report.json; two reports in one folder keep apart
    page = render_page(reports, command=command, json_name=json_path.name).encode()
    data = to_json(reports, profile=profile, parameters=parameters, device=device).encode()
    atomic_write(output, lambda f: f.write(page), ".html.tmp")
    atomic_write(json_path, lambda f: f.write(data), ".json.tmp")
    return output, json_path


__all__ = ["SECTIONS", "build_report", "check_models", "check_tasks", "model_report", "report_units"]
