"""The book: chapters' sources and parameters, their execution, glued numbers, figures and the
verdict dashboard.

Submodules, one job each: ``notebooks`` (the table of contents, profiles, default parameters
and their checks), ``parameters`` (each chapter's value rules), ``run`` (papermill, the re-run
header, ``jupyter-book build``), ``glue`` (glued numbers, verdict records, result files),
``plots`` (the book's figures), ``opening`` (a chapter's opening call), ``designs`` (the designs the executed chapters ran, for
the null calibration), ``specs`` (the claims' specifications as a page), ``tested`` (what a verdict tests and
whether the book's rules decide it, in its record and a fold), ``robustness`` (the
verdicts judged again under the book's other choices), ``findings`` (what the
book found, for the landing page and the README), ``sphinxext`` (the landing page's findings
and dashboard, the chapters' opening) and ``apiref`` (the API reference's autodoc set-up). The public names below are loaded on first use (PEP 562), so ``import lrd.book`` loads neither papermill nor
matplotlib. The book imports ``verdicts``, ``methods``, ``aggregation``, ``engine``'s packs
and store, and ``tables``; never ``units``.
"""

from __future__ import annotations

from lrd._lazy import lazy_attributes

_SUBMODULES = ("glue", "notebooks", "parameters", "plots", "run", "sphinxext", "opening", "findings", "designs",
               "apiref", "specs", "robustness", "tested")
_EXPORTS = {
    **dict.fromkeys(["ROOT", "NOTEBOOKS", "BOOK", "NBVAL", "chapters", "profile", "source_notebook",
                     "default_parameters", "validate_parameters", "coerce_parameters", "check_parameters",
                     "check_names", "check_chapters", "parse_parameter", "parse_parameters"],
                    "lrd.book.notebooks"),
    **dict.fromkeys(["HEADER_PACKAGES", "rerun_command", "rerun_header", "add_rerun_header", "run_chapter",
                     "build_book", "BuildFailed"], "lrd.book.run"),
    **dict.fromkeys(["Glue", "save_results", "VERDICT_FIELDS"], "lrd.book.glue"),
    "open_chapter": "lrd.book.opening",
    "executed_designs": "lrd.book.designs",
    "sensitivity_table": "lrd.book.robustness",
}

__getattr__, __dir__, __all__ = lazy_attributes(__name__, _SUBMODULES, _EXPORTS)
