"""Chapter parameters are checked before anything runs (lrd run / lrd book / plain papermill)."""

from __future__ import annotations

import json

import pytest

from lrd import book
from lrd.cli import main
from lrd.units.registry import CHAPTER_UNITS


@pytest.fixture
def executed(monkeypatch):
    """Record what papermill would be asked to run, without running it."""
    import papermill

    import shutil

    calls = []
    monkeypatch.setattr(papermill, "execute_notebook",  # the source as the "executed" notebook
                        lambda src, out, parameters, **kw: (calls.append(parameters), shutil.copy(src, out)))
    monkeypatch.setattr("lrd.book.run.add_rerun_header", lambda *a, **kw: None)  # nothing was executed
    monkeypatch.setattr("lrd.cli._book_units", lambda chapter, parameters, workers: None)  # no unit computed first
    return calls


def test_default_parameters_come_from_the_parameters_cell():
    defaults = book.default_parameters("lrd_families")
    assert isinstance(defaults["models"], list) and "minilm" in defaults["models"]
    assert isinstance(defaults["n_samples"], int) and defaults["pooling"] == "mean"


@pytest.mark.parametrize("chapter", book.chapters())
def test_papermill_reads_every_parameter_of_every_chapter(chapter):
    """papermill's parameter inspector (``papermill --help-notebook``) skips a line it cannot parse
    with a warning on every run: an ``=`` inside a comment did (``0 = torch default``)."""
    from papermill.translators import PythonTranslator

    cell = next(c for c in book.source_notebook(chapter).cells if "parameters" in c.metadata.get("tags", []))
    assert [p.name for p in PythonTranslator.inspect(cell)] == list(book.default_parameters(chapter))


def test_a_string_for_a_list_parameter_becomes_a_one_item_list(executed, capsys, tmp_path):
    assert main(["run", "lrd_families", "-p", "models", "minilm", "-o", str(tmp_path / "x.ipynb")]) == 0
    assert executed[0]["models"] == ["minilm"]  # not the letters m, i, n, ...
    assert "expects a list; using ['minilm']" in capsys.readouterr().err


@pytest.mark.parametrize("name, value, message", [
    ("n_samples", "abc", "'n_samples' expects an integer"),
    ("n_samples", "1.5", "'n_samples' expects an integer"),
    ("models", "[1, 2]", "'models' expects a list of strings"),
    ("models", "3", "'models' expects a list"),
    ("pooling", "3", "'pooling' expects a string"),
    ("variance", '"high"', "'variance' expects a number"),
])
def test_a_wrong_type_fails_before_any_model_loads(executed, capsys, name, value, message):
    assert main(["run", "lrd_families", "-p", name, value]) == 2
    assert message in capsys.readouterr().err
    assert executed == []


def test_an_unknown_parameter_is_an_error_listing_the_known_ones(executed, capsys):
    assert main(["run", "lrd_families", "-p", "modelz", '["minilm"]']) == 2
    err = capsys.readouterr().err
    assert "unknown parameter 'modelz'" in err and "models" in err and "n_samples" in err
    assert executed == []


def test_run_all_passes_each_chapter_only_what_it_knows(executed, capsys, tmp_path):
    chapters = book.chapters()
    assert main(["run", "all", "-p", "k", "5", "-p", "n_samples", "12", "--output-dir", str(tmp_path)]) == 0
    by_chapter = dict(zip(chapters, executed))
    assert by_chapter["lrd_families"]["k"] == 5 and by_chapter["selection_and_pruning"]["k"] == 5
    assert "k" not in by_chapter["models_and_tasks"] and by_chapter["models_and_tasks"]["n_samples"] == 12
    assert main(["run", "all", "-p", "nope", "1"]) == 2


def test_numbers_accept_null_and_floats_accept_integers():
    checked, notes = book.validate_parameters("lrd_families", {"n_samples": None, "variance": 1})
    assert checked == {"n_samples": None, "variance": 1.0} and notes == []


def test_check_parameters_coerces_a_notebook_namespace_in_place(capsys):
    ns = {**book.default_parameters("lrd_families"), "models": "qwen"}
    book.check_parameters("lrd_families", ns)
    assert ns["models"] == ["qwen"]
    assert "using ['qwen']" in capsys.readouterr().err
    ns["n_samples"] = "all"
    with pytest.raises(ValueError, match="'n_samples' expects an integer"):
        book.check_parameters("lrd_families", ns)


def test_check_parameters_rejects_a_name_papermill_injected_that_the_chapter_lacks():
    ns = {**book.default_parameters("lrd_families"),
          "In": ["", "models = ['minilm']\n", "# Parameters\nmodelz = [\"minilm\"]\nn_samples = 8\n"]}
    with pytest.raises(ValueError, match=r"unknown parameter 'modelz'.*models"):
        book.check_parameters("lrd_families", ns)


@pytest.mark.parametrize("chapter", book.chapters())
def test_every_chapter_opens_with_one_call_right_after_its_imports(chapter):
    """The parameter check, threads, Glue, claims and clock are one call (issue 17), the first
    statement after the imports of the first code cell after the parameters."""
    cells = book.source_notebook(chapter).cells
    first = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    code = next(c for c in cells[first + 1:] if c.cell_type == "code")
    body = [line for line in code.source.splitlines()
            if line.strip() and not line.startswith(("import ", "from ", " ", "#", ")"))]
    assert body[0].startswith(f'glue = lrd.book.open_chapter("{chapter}", globals()')
    assert "check_parameters" not in code.source and "Glue(" not in code.source


@pytest.fixture
def checks(monkeypatch):
    """The chapters whose parameters were checked, in order (coerce_parameters, the first step of
    every check: validate_parameters, check_chapters)."""
    from lrd.book import notebooks

    calls = []
    original = notebooks.coerce_parameters

    def counting(chapter, parameters, **kw):
        calls.append(chapter)
        return original(chapter, parameters, **kw)

    monkeypatch.setattr(notebooks, "coerce_parameters", counting)
    return calls


def test_lrd_run_checks_a_chapter_s_parameters_once(executed, checks):
    """Issue 17: `lrd run` checked each chapter's parameters twice before papermill (the CLI,
    then run_chapter); the notebook's own check stays, for plain papermill."""
    assert main(["run", "lrd_families", "--profile", "ci", "-p", "k", "5", "-o", "/tmp/lrd-test-once.ipynb"]) == 0
    assert checks == ["lrd_families"]
    assert executed[-1]["k"] == 5 and executed[-1]["n_samples"] == book.profile("ci", "lrd_families")["n_samples"]


def test_lrd_book_checks_each_chapter_s_parameters_once(executed, checks, monkeypatch, tmp_path):
    """Issue 17: `lrd book` checked every profile in the CLI and again in run_chapter."""
    from lrd.book import run

    monkeypatch.setattr(run, "BOOK", tmp_path)  # the executed notebooks land here, not in book/
    monkeypatch.setattr(book, "build_book", lambda **kw: tmp_path / "index.html")
    assert main(["book", "--profile", "ci"]) == 0
    assert sorted(checks) == sorted(book.chapters())
    assert len(executed) == len(book.chapters())
    assert executed[book.chapters().index("lrd_families")]["n_samples"] == book.profile("ci", "lrd_families")["n_samples"]


def test_open_chapter_checks_glues_the_claims_and_starts_the_clock(capsys):
    from lrd.verdicts import claims_of

    ns = {"models": "minilm"}
    glue = book.open_chapter("mid_layer", ns, claims={"claim_{name}": "text", "paper_{name}": "paper_effect"})
    assert ns["models"] == ["minilm"]  # checked and coerced in place
    assert "expects a list" in capsys.readouterr().err
    claims = claims_of("mid_layer")
    assert glue.chapter == "mid_layer" and len(glue.values) == 2 * len(claims)
    assert all(glue.values[f"mid_layer-claim_{n}"] == c.text for n, c in claims.items())
    assert 0 <= glue.minutes() < 1
    assert not glue.tests_no_claims
    assert book.open_chapter("models_and_tasks", {}).tests_no_claims  # no claim in the claims table
    with pytest.raises(ValueError, match="must be one of"):
        book.open_chapter("mid_layer", {}, claims={"claim_{name}": "txt"})
    with pytest.raises(ValueError, match="must contain"):
        book.open_chapter("mid_layer", {}, claims={"claim": "text"})
    with pytest.raises(ValueError, match="n_views must be at least 2"):
        book.open_chapter("mid_layer", {"n_views": 1})


def _papermill(tmp_path, *args):
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = Path(sys.executable).parent
    src = tmp_path / "models_and_tasks.ipynb"
    if not src.exists():
        subprocess.run([bin_dir / "jupytext", "--to", "ipynb", book.NOTEBOOKS / "models_and_tasks.py", "-o", src],
                       check=True, capture_output=True)
    return subprocess.run([bin_dir / "papermill", src, tmp_path / "out.ipynb", *args, "--cwd", tmp_path],
                          capture_output=True, text=True)


def test_plain_papermill_with_an_unknown_parameter_stops_at_the_check(tmp_path):
    run = _papermill(tmp_path, "-p", "modelz", "minilm")
    assert run.returncode != 0
    assert "unknown parameter 'modelz'" in run.stderr + run.stdout


@pytest.mark.integration
def test_plain_papermill_turns_a_string_into_a_one_item_list(tmp_path, require_panel):
    import json

    require_panel("minilm", "olmo_eval")
    run = _papermill(tmp_path, "-p", "models", "minilm", "-p", "n_samples", "12")
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads((tmp_path / "results" / "models_and_tasks.json").read_text())
    assert "minilm" in json.dumps(results) and "'m'" not in json.dumps(results)


@pytest.mark.parametrize("default, value, expected", [
    (["a", "b"], "c", ["c"]),
    ([1, 2], 6, [6]),  # e.g. a list of layers
    ([0.5, 1], 2, [2]),
    ([], "x", ["x"]),
])
def test_a_scalar_of_the_item_type_becomes_a_one_item_list(default, value, expected):
    checked, notes = book.validate_parameters("demo", {"p": value}, defaults={"p": default})
    assert checked == {"p": expected} and "expects a list" in notes[0]


@pytest.mark.parametrize("default, value", [([1, 2], "six"), ([1, 2], [1, "2"]), (["a"], [True]), ([1], [True])])
def test_a_list_with_items_of_the_wrong_type_is_an_error(default, value):
    with pytest.raises(ValueError, match="expects a list"):
        book.validate_parameters("demo", {"p": value}, defaults={"p": default})


def test_lrd_book_checks_every_profile_before_the_first_chapter_runs(executed, capsys, monkeypatch):
    monkeypatch.setattr(book, "build_book", lambda *a, **k: pytest.fail("built despite a bad profile"))
    last = [ch for ch in book.chapters() if "n_samples" in book.default_parameters(ch)][-1]
    real = book.profile
    monkeypatch.setattr(book, "profile", lambda name, ch: {"n_samples": "many"} if ch == last else real(name, ch))
    assert main(["book", "--profile", "ci"]) == 2
    assert executed == []  # not even the chapters before the bad one
    assert "'n_samples' expects an integer" in capsys.readouterr().err


# ---- values: checked before anything loads (lrd.book.parameters) -----------------------------

#: (chapter, parameters, a fragment of the error): the values issue 20 found failing late or
#: unclearly inside the kernel, and their neighbours.
BAD_VALUES = [
    ("lrd_families", {"models": []}, "models is empty"),
    ("lrd_families", {"tasks": []}, "tasks is empty"),
    ("mid_layer", {"models": []}, "models is empty"),
    ("mid_layer", {"n_views": 1}, "n_views must be at least 2, got 1"),
    ("mid_layer", {"n_bootstrap": 0}, "n_bootstrap must be at least 1, got 0"),
    ("mid_layer", {"tasks": ["sst2", "lee50"]}, "token_task 'sarcasm' is not one of tasks ['sst2', 'lee50']"),
    ("mid_layer", {"n_views": None}, "n_views must be a number, not null"),
    ("mid_layer", {"tasks": ["sst2", "sarcasm", "copa"]}, "'copa' is of type multiple choice"),
    ("cosine_vs_ablation", {"tasks": ["sst2"]}, "task 'sst2' is of type classification, but tasks takes tasks of "
                                                "type multiple choice"),
    ("cosine_vs_ablation", {"encoders": ["smollm2"]}, "'smollm2' is a decoder, but encoders takes encoders"),
    ("cosine_vs_ablation", {"models": ["minilm"]}, "'minilm' is an encoder, but models takes decoders"),
    ("cosine_vs_ablation", {"models": []}, "models is empty: the chapter needs at least one decoder"),
    ("cosine_vs_ablation", {"encoders": []}, "encoders is empty: the chapter needs at least one encoder"),
    ("cosine_vs_ablation", {"n_boot": 0}, "n_boot must be at least 40, got 0"),
    ("cosine_vs_ablation", {"encoder_scorer": "svm"}, "'svm' is not one of mteb, probe"),
    ("cosine_vs_ablation", {"encoder_scorer": "probe", "encoder_task": "lee50"}, "encoder_scorer 'probe' trains"),
    ("cosine_vs_ablation", {"margin": 1}, "margin must be at least 0 and below 1, got 1"),
    ("cayley_aggregation", {"max_epochs": 0}, "max_epochs must be at least 1, got 0"),
    ("cayley_aggregation", {"tasks": ["sst2", "copa"]}, "task 'copa' is of type multiple choice, but tasks takes"),
    ("cayley_aggregation", {"methods": ["last", "gat"]}, "methods: 'gat' is not one of last, best"),
    ("cayley_aggregation", {"few_shot": [0, 8]}, "every item of few_shot must be at least 1, got 0"),
    ("lrd_families", {"n_samples": 8}, "n_samples 8 is too small for k = 10"),
    ("lrd_families", {"variance": 0}, "variance must be above 0 and at most 1, got 0.0"),
    ("lrd_families", {"pooling": "max"}, "pooling: 'max' is not one of mean, last, cls"),
    ("lrd_families", {"models": ["./no/such/model"]}, "model folder './no/such/model' does not exist"),
    ("selection_and_pruning", {"budgets": [0.1, 1.0]}, "every item of budgets must be above 0 and below 1"),
    ("selection_and_pruning", {"mc_tasks": ["sst2"]}, "'sst2' is of type classification, but mc_tasks takes"),
    ("models_and_tasks", {"n_samples": 1}, "n_samples must be at least 2, got 1"),
]


@pytest.mark.parametrize("chapter, parameters, message", BAD_VALUES, ids=lambda v: str(v)[:40])
def test_a_bad_value_fails_before_any_kernel_starts_saying_what_to_pass(executed, capsys, chapter, parameters,
                                                                        message):
    import json

    args = [a for k, v in parameters.items() for a in ("-p", k, json.dumps(v))]
    assert main(["run", chapter, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and f"chapter {chapter!r}" in err
    assert executed == []


@pytest.mark.parametrize("chapter, parameters, message", BAD_VALUES, ids=lambda v: str(v)[:40])
def test_the_notebook_check_gives_the_same_error_for_plain_papermill(chapter, parameters, message):
    namespace = {**book.default_parameters(chapter), **parameters}
    with pytest.raises(ValueError) as err:
        book.check_parameters(chapter, namespace)
    assert message in str(err.value)


def test_every_bad_value_is_reported_at_once_with_its_fix():
    with pytest.raises(ValueError) as err:
        book.validate_parameters("mid_layer", {"n_views": 1, "n_bootstrap": 0, "tasks": ["sst2"]})
    text = str(err.value)
    assert "mid_layer' has 5 bad parameter values" in text
    assert "pass -p n_views 2 or more" in text and "pass -p n_bootstrap 1 or more" in text
    assert "-p norm_task '\"\"' to skip it" in text  # norm_task may be empty; token_task and aug_task may not


def test_run_all_reports_the_bad_values_of_every_chapter(executed, capsys):
    assert main(["run", "all", "-p", "tasks", '["sst2"]']) == 2  # embedding tasks, but cosine_vs_ablation needs MC
    err = capsys.readouterr().err
    assert "chapter 'cosine_vs_ablation': tasks: task 'sst2' is of type classification" in err
    assert "chapter 'mid_layer' has 3 bad parameter values" in err
    assert executed == []


def test_an_unknown_task_name_is_an_error_naming_the_closest_offline_task(executed, capsys):
    assert main(["run", "models_and_tasks", "-p", "task", "sst3"]) == 2  # neither offline nor MTEB (its metadata)
    assert "unknown task 'sst3'" in (err := capsys.readouterr().err) and "Did you mean 'sst2'?" in err


@pytest.mark.parametrize("chapter", book.chapters())
@pytest.mark.parametrize("profile_name", ["default", "ci"])
def test_the_defaults_and_declared_profiles_satisfy_the_rules(chapter, profile_name):
    from lrd.book import parameters as parameter_rules

    defaults = book.default_parameters(chapter)
    values = {**defaults, **book.profile(profile_name, chapter)}
    assert parameter_rules.problems(chapter, values) == []  # without the defaults' shortcut: every lookup made


def test_every_rule_names_a_parameter_of_its_chapter():
    from lrd.book.parameters import RULES

    assert set(RULES) == set(book.chapters())
    for chapter, rules in RULES.items():
        assert set(rules) <= set(book.default_parameters(chapter)), chapter


@pytest.mark.parametrize("rule, good, bad", [
    (dict(at_least=2), [2, 3, 2.5], [1, 1.99, -1]),
    (dict(above=0, at_most=1), [1e-9, 0.5, 1], [0, -0.1, 1.01]),
    (dict(at_least=0, below=1), [0, 0.999], [1, 1.5, -0.5]),
    (dict(at_least=1, none_ok=True), [None, 1], [0]),
    (dict(at_least=1), [1], [None]),
])
def test_number_bounds_are_inclusive_or_exclusive_as_declared(monkeypatch, rule, good, bad):
    from lrd.book import parameters as parameter_rules
    from lrd.book.parameters import Rule

    monkeypatch.setitem(parameter_rules.RULES, "demo", {"p": Rule(**rule)})
    assert all(parameter_rules.problems("demo", {"p": v}) == [] for v in good)
    assert all(len(parameter_rules.problems("demo", {"p": v})) == 1 for v in bad)


def test_model_kind_is_read_without_loading_weights(tiny_encoder_dir, tiny_decoder_dir, executed, capsys):
    from lrd.book.parameters import model_kind

    assert (model_kind("minilm"), model_kind("qwen")) == ("encoder", "decoder")
    assert (model_kind(str(tiny_encoder_dir)), model_kind(str(tiny_decoder_dir))) == ("encoder", "decoder")
    assert model_kind("some-org/not-cached-anywhere") is None  # only the hub could say: not checked
    assert main(["run", "cosine_vs_ablation", "-p", "encoders", f'["{tiny_decoder_dir}"]']) == 2
    assert "is a decoder, but encoders takes encoders" in capsys.readouterr().err


def test_lrd_run_with_a_bad_value_fails_in_seconds_without_loading_torch():
    """About a second of CPU (the wall time grows with the machine's load, so CPU time is checked)."""
    import resource
    import subprocess
    import sys

    code = ("import sys, papermill; papermill.execute_notebook = lambda *a, **k: sys.exit('a kernel would start'); "
            "from lrd.cli import main; rc = main(['run', 'mid_layer', '-p', 'n_views', '1']); "
            "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded'); sys.exit(rc)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert run.returncode == 2 and "n_views must be at least 2" in run.stderr
    assert "torch not loaded" in run.stdout  # no model, no kernel: only the notebook's parameters cell was read
    assert cpu < 5, f"lrd run used {cpu:.1f} s of CPU to reject a bad value"


def test_plain_papermill_with_a_bad_value_stops_at_the_check(tmp_path):
    run = _papermill(tmp_path, "-y", "models: [minilm]", "-p", "n_samples", "1")
    assert run.returncode != 0
    assert "n_samples must be at least 2, got 1" in run.stderr + run.stdout


# ---- lrd sweep's own options ---------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "argument --workers: must be at least 1"),
    (["--workers", "-1"], "argument --workers: must be at least 1"),  # hung a LocalCluster before
    (["--threads", "0"], "argument --threads: must be at least 1"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "not allowed with argument"),
])
def test_sweep_rejects_worker_and_thread_counts_below_one(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", "lrd_families", *args, "--dry-run"])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_an_unreachable_scheduler_fails_in_seconds(capsys):
    import socket
    import time

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    assert main(["sweep", "lrd_families", "--scheduler", f"tcp://127.0.0.1:{port}", "--dry-run"]) == 2
    assert time.perf_counter() - t0 < 5  # Dask's own connection retries took 30 s
    assert f"no Dask scheduler answers at tcp://127.0.0.1:{port}" in capsys.readouterr().err
    assert main(["sweep", "lrd_families", "--scheduler", "my-laptop", "--dry-run"]) == 2
    assert "is not a scheduler address; pass tcp://HOST:PORT" in capsys.readouterr().err


def test_declaring_a_chapter_s_units_checks_the_values_too():
    from lrd import units

    with pytest.raises(ValueError, match="n_views must be at least 2"):
        units.units("mid_layer", {"n_views": 1})
    with pytest.raises(ValueError, match="max_epochs must be at least 1"):
        units.units("cayley_aggregation", {"max_epochs": 0})


@pytest.mark.parametrize("chapter", list(CHAPTER_UNITS))
def test_unit_declarations_take_keywords_with_the_notebook_s_defaults(chapter):
    """Issue 47 (6): a chapter's unit declaration takes its parameters by name only, and each
    default it declares is the one the chapter's parameters cell sets (``dtype`` defaulted to
    float32 in the declarations and bfloat16 in every notebook); a parameter the chapter lacks
    (cosine_vs_ablation's ``n_chance``) has a default of its own, so the registry can declare the
    units from the chapter's parameters alone."""
    import inspect

    from lrd.units.registry import declaration

    notebook = book.default_parameters(chapter)
    for name, p in inspect.signature(declaration(chapter)).parameters.items():
        assert p.kind is p.KEYWORD_ONLY, f"{chapter}: {name} is not keyword-only"
        if name in notebook and p.default is not p.empty:
            assert p.default == notebook[name], f"{chapter}.{name}: {p.default!r} here, {notebook[name]!r} in the notebook"
        elif name not in notebook:
            assert p.default is not p.empty, f"{chapter}.{name} is no parameter of the chapter and has no default"


# ---- issue 28: every parameter typed, duplicates, the device, seeds, -p twice ---------------------

def _wrong_values(chapter: str, name: str) -> list:
    """Values of the wrong type for a parameter: by its default's type, or, for a ``None``
    default, by its rule's example (none declared: the test fails, naming the parameter)."""
    from lrd.book import parameters as parameter_rules

    default = book.default_parameters(chapter)[name]
    if default is None:
        rule = parameter_rules.RULES.get(chapter, {}).get(name)
        assert rule is not None and rule.example is not None, (
            f"{chapter}.{name} defaults to None: declare its rule in lrd/book/parameters.py with an example "
            "(the type every other value must have)")
        default = rule.example
    if isinstance(default, bool):
        return ["yes", 1]
    if isinstance(default, int):
        return ["ten", 10.5, True, [1]]
    if isinstance(default, float):
        return ["high", True, [0.5]]
    if isinstance(default, str):
        return [3, ["a", "b"], {"a": 1}]
    if isinstance(default, list):
        return [{"a": 1}, [{"a": 1}]]
    pytest.fail(f"{chapter}.{name}: no wrong values known for a default of type {type(default).__name__}")


@pytest.mark.parametrize("chapter, name", [(c, n) for c in book.chapters() for n in book.default_parameters(c)])
def test_every_parameter_of_every_chapter_rejects_a_wrong_type(chapter, name):
    """Issue 28 (8): models_and_tasks' n_samples (default None) took 'ten', 10.5 and true, which
    failed in the kernel seconds later; a None default now needs a declared example."""
    for value in _wrong_values(chapter, name):
        with pytest.raises(ValueError, match=f"parameter {name!r} expects"):
            book.validate_parameters(chapter, {name: value})


@pytest.mark.parametrize("value", ["ten", 10.5, True])
def test_models_and_tasks_n_samples_is_type_checked(executed, capsys, value):
    import json

    assert main(["run", "models_and_tasks", "-p", "n_samples", json.dumps(value) if value != "ten" else value]) == 2
    assert f"'n_samples' expects an integer (default {book.default_parameters('models_and_tasks')['n_samples']})" in capsys.readouterr().err
    assert executed == []
    assert book.validate_parameters("models_and_tasks", {"n_samples": None})[0] == {"n_samples": None}  # the whole task


@pytest.mark.parametrize("chapter, name, value, fix", [
    ("lrd_families", "models", ["minilm", "mpnet", "minilm"], '-p models \'["minilm", "mpnet"]\''),
    ("lrd_families", "tasks", ["sst2", "sst2"], '-p tasks \'["sst2"]\''),
    ("cayley_aggregation", "seeds", [0, 1, 0], "-p seeds '[0, 1]'"),
    ("cayley_aggregation", "methods", ["last", "cayley", "last"], '-p methods \'["last", "cayley"]\''),
    ("selection_and_pruning", "budgets", [0.1, 0.10], "-p budgets '[0.1]'"),
    ("cosine_vs_ablation", "pruning_ks", [2, 2], "-p pruning_ks '[2]'"),
])
def test_a_list_that_names_an_item_twice_is_an_error_with_the_fix(executed, capsys, chapter, name, value, fix):
    """Issue 28 (6): -p models '["minilm","minilm"]' gave "2 encoders" (lrd_families failed 12 s
    later in cell 11); every list parameter's items must be distinct."""
    import json

    assert main(["run", chapter, "-p", name, json.dumps(value)]) == 2
    err = capsys.readouterr().err
    assert f"{name} lists" in err and "twice" in err and fix in err
    assert executed == []


def test_two_spellings_of_one_model_folder_are_duplicates(tiny_encoder_dir, tmp_path, monkeypatch):
    """./x, x/ and a symlink to x are one model: compared by resolved path."""
    monkeypatch.chdir(tiny_encoder_dir.parent)
    (tmp_path / "link").symlink_to(tiny_encoder_dir)
    here = tiny_encoder_dir.name
    for a, b in [(f"./{here}", f"{here}/"), (str(tiny_encoder_dir), str(tmp_path / "link"))]:
        with pytest.raises(ValueError, match="one model folder") as err:
            book.validate_parameters("lrd_families", {"models": [a, "minilm", b]})
        assert f"-p models '{json.dumps([a, 'minilm'])}'" in str(err.value)


def test_a_device_torch_cannot_parse_is_an_error_before_any_kernel(executed, capsys):
    """Issue 28 (7): -p device banana succeeded on a warm cache and failed cold after 11-12 s."""
    assert main(["run", "models_and_tasks", "-p", "device", "banana"]) == 2
    err = capsys.readouterr().err
    assert "device 'banana' is not a device torch can parse" in err and "pass -p device cpu" in err
    assert executed == []
    assert main(["run", "lrd_families", "-p", "device", "meta"]) == 2
    assert "not on meta" in capsys.readouterr().err


def test_a_device_this_machine_lacks_is_an_error(monkeypatch):
    import torch

    from lrd.book.parameters import problems

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    (problem,) = problems("lrd_families", {"device": "cuda"})
    assert "device 'cuda': no CUDA device is available on this machine" in problem and "pass -p device cpu" in problem
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert problems("lrd_families", {"device": "cuda"}) == problems("lrd_families", {"device": "cuda:1"}) == []
    (problem,) = problems("lrd_families", {"device": "cuda:2"})
    assert "this machine has 2 CUDA devices (cuda:0 to cuda:1)" in problem
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    (problem,) = problems("mid_layer", {"device": "mps"})
    assert "no MPS (Apple GPU) device is available" in problem


def test_the_cpu_device_is_checked_without_importing_torch():
    """torch's import (a second or two) is paid only when a device other than the cpu is asked."""
    import subprocess
    import sys

    code = ("import sys; from lrd.book.parameters import problems; "
            "assert problems('lrd_families', {'device': 'cpu', 'models': ['minilm', 'mpnet']}) == []; "
            "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "torch not loaded"


@pytest.mark.parametrize("chapter, parameters, message", [
    ("cayley_aggregation", {"seeds": [-1]}, "every item of seeds must be at least 0, got -1"),
    ("cayley_aggregation", {"seeds": [0, 2 ** 32]}, "every item of seeds must be at least 0 and below 4294967296"),
    ("null_calibration", {"seed": 2 ** 32}, "seed must be at least 0 and below 4294967296"),
])
def test_seeds_are_numpy_seeds(executed, capsys, chapter, parameters, message):
    """Issue 28 (13): seeds '[-1]' passed the check and failed after 12 s in numpy."""
    import json

    args = [a for k, v in parameters.items() for a in ("-p", k, json.dumps(v))]
    assert main(["run", chapter, *args]) == 2
    assert message in capsys.readouterr().err
    assert book.validate_parameters("cayley_aggregation", {"seeds": [0, 2 ** 32 - 1]})[0] == {"seeds": [0, 2 ** 32 - 1]}


def test_a_parameter_given_twice_is_an_error_naming_both_values(executed, capsys):
    assert main(["run", "lrd_families", "-p", "k", "5", "-p", "n_samples", "40", "-p", "k", "6"]) == 2
    assert "-p k is given twice (5 and 6); pass it once" in capsys.readouterr().err
    assert executed == []
    assert book.parse_parameters([("k", "5"), ("tasks", '["sst2"]')]) == {"k": 5, "tasks": ["sst2"]}


def test_a_list_for_a_string_parameter_suggests_its_one_string(executed, capsys):
    assert main(["run", "models_and_tasks", "-p", "task", '["sst2"]']) == 2
    err = capsys.readouterr().err
    assert "pass it as -p task sst2" in err and "['sst2']\"" not in err  # not -p task '"['sst2']"'
    assert main(["run", "models_and_tasks", "-p", "pooling", "3"]) == 2
    assert "-p pooling '\"3\"' (quoted" in capsys.readouterr().err  # a number meant as text: quoted


def test_an_unknown_name_or_profile_names_the_closest_without_stray_quotes(executed, capsys):
    assert main(["run", "lrd_families", "-p", "n_sample", "10"]) == 2
    err = capsys.readouterr().err
    assert "unknown parameter 'n_sample' for chapter 'lrd_families' (did you mean 'n_samples'?)" in err
    assert main(["run", "lrd_families", "--profile", "cii"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lrd run: error: unknown profile 'cii'")  # not a KeyError's quotes around it
    assert "did you mean 'ci'?" in err


def test_a_model_given_as_a_file_is_named_a_file(executed, capsys, tiny_encoder_dir):
    weights = next(tiny_encoder_dir.glob("*.safetensors"))
    assert main(["run", "lrd_families", "-p", "models", json.dumps([str(weights)])]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a model folder" in err and repr(str(tiny_encoder_dir)) in err and "does not exist" not in err


def test_a_model_folder_without_weights_is_refused_before_any_kernel(executed, capsys, tiny_encoder_dir, tmp_path):
    """Before: the chapter started and failed in its third cell with transformers' OSError."""
    folder = tmp_path / "no-weights"
    folder.mkdir()
    for f in tiny_encoder_dir.iterdir():
        if f.suffix != ".safetensors":
            (folder / f.name).write_bytes(f.read_bytes())
    assert main(["run", "lrd_families", "-p", "models", json.dumps([str(folder)])]) == 2
    err = capsys.readouterr().err
    assert "holds no weights" in err and "save_pretrained" in err
    assert executed == []


def test_an_unknown_model_name_offline_is_an_error_with_the_closest_key(executed, capsys, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    assert main(["run", "lrd_families", "-p", "models", '["minilmm"]']) == 2
    err = capsys.readouterr().err
    assert "cannot find model 'minilmm'" in err and "Did you mean 'minilm'?" in err
    assert executed == []
