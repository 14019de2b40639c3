"""Issue 46 (hardening, round two): every parameter of every chapter is checked before any work
(its range, the value, an example in the message); a path the user typed names one absolute
folder, the one where it was typed, in the kernel too; user text reaches a page escaped for the
format it lands in; a report's ticks and numbers read at face value."""

from __future__ import annotations

import json
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lrd import book
from lrd.book import markup
from lrd.book.parameters import RULES
from lrd.cli import main
from tests.conftest import _save_bert


class _Calls(list):
    headers: list


@pytest.fixture
def executed(monkeypatch):
    """What papermill would be asked to run (its parameters and options) and what the re-run
    header would show (``.headers``), without running anything."""
    import papermill

    calls, headers = _Calls(), []

    def execute(src, out, parameters, **kw):
        calls.append((parameters, kw))
        shutil.copy(src, out)

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    monkeypatch.setattr("lrd.book.run.add_rerun_header", lambda path, chapter, **kw: headers.append(kw))
    monkeypatch.setattr("lrd.cli._book_units", lambda chapter, parameters, workers: None)
    calls.headers = headers
    return calls


def _run(chapter: str, **parameters) -> list[str]:
    """``lrd run`` arguments: each value as JSON (``NaN``, ``Infinity`` as JSON spells them), a string as typed."""
    return ["run", chapter, *[a for k, v in parameters.items() for a in ("-p", k, v if isinstance(v, str)
                                                                        else json.dumps(v))]]


# ---- every parameter has a declared range ---------------------------------------------------------

@pytest.mark.parametrize("chapter, name", [(c, n) for c in book.chapters() for n in book.default_parameters(c)])
def test_every_parameter_of_every_chapter_has_a_declared_check(chapter, name):
    """A new parameter cannot be added unchecked: its rule in lrd.book.parameters.RULES limits
    its values (bounds, choices, task types, model kinds, membership, a check, or a folder)."""
    rule = RULES.get(chapter, {}).get(name)
    assert rule is not None, f"{chapter}.{name} has no rule in lrd.book.parameters.RULES"
    assert rule.declares(), f"{chapter}.{name}: its rule limits nothing"


def test_every_number_parameter_has_bounds():
    for chapter in book.chapters():
        for name, default in book.default_parameters(chapter).items():
            rule = RULES[chapter][name]
            numbers = default if isinstance(default, list) else [default if default is not None else rule.example]
            if numbers and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers):
                assert any(b is not None for b in (rule.at_least, rule.above)), f"{chapter}.{name}: no lower bound"


#: (chapter, parameters, fragments of the message): the values issue 46 found failing late, or
#: passing with nonsense, and their neighbours. Each message names the parameter, the value,
#: the allowed range and a value that passes.
BAD_VALUES = [
    ("cosine_vs_ablation", {"strong": 5}, ["strong must be above 0 and below 1, got 5", "-p strong 0.7"]),
    ("cosine_vs_ablation", {"strong": 0}, ["strong must be above 0 and below 1, got 0"]),
    ("cosine_vs_ablation", {"n_splits": 0}, ["n_splits must be at least 1, got 0", "-p n_splits 1 or more"]),
    ("cosine_vs_ablation", {"same": 5}, ["same must be above 0 and at most 1, got 5", "-p same 0.9"]),
    ("cosine_vs_ablation", {"same": -0.5}, ["same must be above 0 and at most 1, got -0.5"]),
    ("cosine_vs_ablation", {"min_reliability": 1.5}, ["min_reliability must be at least 0 and below 1, got 1.5",
                                                     "-p min_reliability 0.7"]),
    ("cosine_vs_ablation", {"margin": math.nan}, ["margin must be a finite number (at least 0 and below 1), got nan"]),
    ("cayley_aggregation", {"n_boot": 0}, ["n_boot must be at least 40, got 0", "-p n_boot 40 or more"]),
    ("lrd_families", {"variance": math.nan}, ["variance must be a finite number (above 0 and at most 1), got nan",
                                           "-p variance 0.95"]),
    ("lrd_families", {"variance": math.inf}, ["variance must be a finite number", "got inf"]),
    ("lrd_families", {"task_groups": -1}, ["task_groups must be at least 0, got -1", "-p task_groups 0 or more"]),
    ("lrd_families", {"task_groups": 1}, ["task_groups 1 makes one group", "-p task_groups 0", "2 or more"]),
    ("mid_layer", {"n_permutations": 0}, ["n_permutations must be at least 1, got 0"]),
    ("selection_and_pruning", {"margin": -0.1}, ["margin must be at least 0, got -0.1"]),
    ("selection_and_pruning", {"margin": 1}, ["margin must be at least 0 and below 1, got 1", "-p margin 0.02"]),
    ("selection_and_pruning", {"budgets": [0.1, math.nan]}, ["every item of budgets must be a finite number", "got nan"]),
    ("selection_and_pruning", {"pruning_models": ["mpnet"], "models": ["minilm"]},
     ["pruning_models 'mpnet' is not one of models ['minilm']"]),
    ("cosine_vs_ablation", {"pruning_models": ["qwen"], "models": ["smollm2"]},
     ["pruning_models 'qwen' is not one of models ['smollm2']"]),
    ("cosine_vs_ablation", {"pruning_ks": [2, 40]}, ["pruning_ks 40 removes every block of 'gemma3' (18 blocks)",
                                                    "at most 17", "-p pruning_ks '[2]'"]),
    ("models_and_tasks", {"results_dir": ""}, ["results_dir is empty", "-p results_dir results"]),
    ("null_calibration", {"results_dir": " "}, ["results_dir is empty"]),
]


@pytest.mark.parametrize("chapter, parameters, fragments", BAD_VALUES, ids=lambda v: str(v)[:40])
def test_a_bad_value_is_refused_before_any_kernel_with_its_range_and_a_fix(executed, capsys, chapter, parameters,
                                                                           fragments):
    if "pruning_ks" in parameters and book.parameters.model_blocks("gemma3") is None:
        pytest.skip("the gemma3 pack is not built: its blocks are unknown here")
    assert main(_run(chapter, **parameters)) == 2
    err = capsys.readouterr().err
    assert all(f in err for f in fragments), err
    assert executed == []


@pytest.mark.parametrize("chapter, parameters, fragments", BAD_VALUES, ids=lambda v: str(v)[:40])
def test_the_notebook_s_own_check_refuses_the_same_values(chapter, parameters, fragments):
    if "pruning_ks" in parameters and book.parameters.model_blocks("gemma3") is None:
        pytest.skip("the gemma3 pack is not built: its blocks are unknown here")
    with pytest.raises(ValueError) as err:
        book.check_parameters(chapter, {**book.default_parameters(chapter), **parameters})
    assert fragments[0] in str(err.value)


def test_nan_compares_false_so_it_is_refused_before_the_bounds():
    assert math.isnan(book.parse_parameter("NaN"))
    assert book.parameters.problems("lrd_families", {"variance": float("nan")})


@pytest.mark.parametrize("value, meant", [("1e2", "100"), ("300.0", "300")])
def test_an_integer_written_as_a_float_suggests_that_integer(executed, capsys, value, meant):
    """Issue 46 (15): -p n_samples 1e2 suggested the default (300), not 100."""
    assert main(["run", "models_and_tasks", "-p", "n_samples", value]) == 2
    err = capsys.readouterr().err
    assert "expects an integer" in err and "integers only" in err and f"did you mean -p n_samples {meant}?" in err
    assert main(["run", "cosine_vs_ablation", "-p", "pruning_ks", "[2, 4e0]"]) == 2
    assert "did you mean -p pruning_ks '[2, 4]'?" in capsys.readouterr().err
    assert executed == []


# ---- a relative folder is the one where it was typed ----------------------------------------------

@pytest.fixture
def two_berts(tmp_path, monkeypatch):
    """A caller's folder with a 2-block ./bert, and an output folder out/ with a 3-block bert of
    its own (other weights): the folder the kernel runs in."""
    here = tmp_path / "here"
    _save_bert(here / "bert", n_layers=2, seed=0)
    _save_bert(here / "out" / "bert", n_layers=3, seed=1)
    monkeypatch.chdir(here)
    return here


def test_a_relative_model_folder_is_measured_where_it_was_typed(executed, two_berts, monkeypatch):
    """Issue 46 (1): `lrd run models_and_tasks -p models '["./bert"]' -o out/mt.ipynb` checked
    ./bert here, and the kernel, started in out/, measured out/bert under the name ./bert."""
    assert main(["run", "models_and_tasks", "-p", "models", '["./bert"]', "-p", "results_dir", "res",
                 "-o", "out/mt.ipynb"]) == 0
    ((parameters, options),) = executed
    assert parameters["models"] == [str(two_berts / "bert")]
    assert parameters["results_dir"] == str(two_berts / "res")
    assert Path(options["cwd"]).resolve() == two_berts / "out"  # where the kernel runs: the name now means the same
    monkeypatch.chdir(two_berts / "out")
    assert book.parameters.model_blocks(parameters["models"][0]) == 2  # the caller's model, not out/bert's 3
    assert book.parameters.model_blocks("./bert") == 3
    (header,) = executed.headers  # the re-run header shows the folder measured: its command works anywhere
    assert header["parameters"]["models"] == [str(two_berts / "bert")]


def test_two_spellings_resolve_to_one_folder_and_hub_ids_keep_their_name(two_berts):
    from lrd.book.parameters import absolute_folder, absolute_model, resolve_paths

    assert absolute_model("./bert") == absolute_model("bert/") == absolute_model(str(two_berts / "out" / ".." / "bert"))
    assert absolute_model("minilm") == "minilm" and absolute_model("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    assert absolute_folder("res") == str(two_berts / "res")  # a results folder need not exist yet
    (two_berts / "link").symlink_to(two_berts / "out")
    assert Path(absolute_folder("link/../bert")).resolve() == (two_berts / "bert").resolve()  # `..` after a link
    assert resolve_paths("cosine_vs_ablation", {"models": ["smollm2"], "encoders": ["./bert"]})["encoders"] == \
        [str(two_berts / "bert")]
    assert resolve_paths("cayley_aggregation", {"ablation_model": "./bert"})["ablation_model"] == str(two_berts / "bert")


def test_the_notebook_s_own_check_keeps_paths_as_the_kernel_reads_them(two_berts):
    namespace = {**book.default_parameters("models_and_tasks"), "models": ["./bert"]}
    book.check_parameters("models_and_tasks", namespace)
    assert namespace["models"] == ["./bert"] and namespace["results_dir"] == "results"


def test_lrd_report_measures_the_folder_where_it_was_typed(two_berts, monkeypatch):
    from lrd.report import build_report

    measured = []

    def stop(model, planned, **kw):
        measured.append((model, planned))
        raise RuntimeError("the work started")

    monkeypatch.setattr("lrd.report.compute_report_units", stop)
    with pytest.raises(RuntimeError, match="the work started"):
        build_report(["./bert"], output=two_berts / "report.html", log=lambda line: None)
    ((model, planned),) = measured
    assert model == str(two_berts / "bert")
    assert {u.model for units in planned.values() for u in units} == {model}


# ---- a model too small to prune -------------------------------------------------------------------

def test_a_one_block_pruned_model_is_refused_naming_its_blocks(executed, capsys, tmp_path):
    """Issue 46 (13): a 1-block model was silently left unpruned (the report blamed pruning_models)."""
    one = _save_bert(tmp_path / "one", n_layers=1, seed=0)
    assert main(_run("selection_and_pruning", models=[str(one)], pruning_models=[str(one)])) == 2
    err = capsys.readouterr().err
    assert f"pruning_models: {str(one)!r} has 1 block" in err and "needs 2 or more" in err
    assert executed == []


def test_a_one_block_model_s_report_says_early_why_its_blocks_section_does_not_apply(tmp_path, monkeypatch):
    from lrd.report import build_report
    from lrd.report.data import block_answer, chapter_parameters

    one = str(_save_bert(tmp_path / "one", n_layers=1, seed=0))
    assert chapter_parameters("selection_and_pruning", one)["pruning_models"] == []  # the chapter's checks pass
    lines = []
    monkeypatch.setattr("lrd.report.compute_report_units", lambda *a, **k: pytest.fail("no work before the note"))
    monkeypatch.setattr("lrd.report.report_units", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("stop")))
    with pytest.raises(RuntimeError, match="stop"):
        build_report([one], output=tmp_path / "r.html", log=lines.append)
    assert any("blocks: the model has 1 block" in line and "needs 2 or more" in line for line in lines), lines
    import pandas as pd

    with pytest.raises(ValueError, match="the model has 1 block; pruning removes blocks and keeps at least one"):
        block_answer(pd.DataFrame(columns=["rule", "fraction", "change"]), None, 1)


# ---- user text reaching a page --------------------------------------------------------------------

class _Tags(HTMLParser):
    """The elements of an HTML page with their attributes, its text, and the text of each literal
    (``<pre>``, ``<code>``, docutils' ``<span class="docutils literal">``), whole."""

    def __init__(self) -> None:
        super().__init__()
        self.tags, self.literal, self.text, self._open = [], [], "", []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        starts = tag in ("code", "pre") or "literal" in (attrs.get("class") or "").split()
        if starts and not any(self._open):
            self.literal.append("")
        self._open.append(starts)

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        self.text += data
        if any(self._open):
            self.literal[-1] += data


def _render(markdown: str) -> _Tags:
    """``markdown`` rendered to HTML by MyST (the parser of the book's pages, with Jupyter Book's
    default extensions), parsed into its elements."""
    import jupyter_book
    import yaml
    from docutils.core import publish_string
    from myst_parser.parsers.docutils_ import Parser

    parse = yaml.safe_load((Path(jupyter_book.__file__).parent / "default_config.yml").read_text())["parse"]
    html = publish_string(markdown, parser=Parser(), writer_name="html5", settings_overrides={
        "report_level": 5, "halt_level": 5, "myst_enable_extensions": parse["myst_enable_extensions"],
        "myst_dmath_double_inline": True}).decode()
    tags = _Tags()
    tags.feed(html[html.index("<body>"):])
    return tags


#: Names a user may give a model folder or a task: HTML with a script, backticks, a pipe, MyST roles and maths.
HOSTILE = ["x<img src=1 onerror=alert(1)>", "a`b``c", "```", "````", "`edge`", "t|u", "{doc}`intro` $x$ &lt;b&gt;",
           "line\n````\nbreak", "<script>alert(2)</script>"]


def test_the_rerun_header_shows_hostile_names_literally():
    """Issue 46 (3): a folder named with an HTML tag that carries an event handler ran its script
    in the built chapter, and a backtick broke the header's code spans and fence."""
    text = book.rerun_header("models_and_tasks", parameters={"models": HOSTILE, "task": "sst2",
                                                             "results_dir": "r`<b>bold</b>"})
    page = _render(text)
    names = {tag for tag, _ in page.tags}
    assert not names & {"img", "script", "b"}, names  # no tag of the user's text reached the page
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert [tag for tag, attrs in page.tags if "admonition" in attrs.get("class", "").split()] == ["aside"]  # one box
    (command,) = [t for t in page.literal if t.startswith("lrd run models_and_tasks")]
    assert command.strip() == book.rerun_command("models_and_tasks", {"models": HOSTILE, "task": "sst2",
                                                                      "results_dir": "r`<b>bold</b>"})
    table = [t for t in page.literal if t.startswith('["x<img')]
    assert table == [json.dumps(HOSTILE)]  # the cell of this run's models, whole
    assert [tag for tag, _ in page.tags].count("table") == 1
    assert "Ran on models: " + ", ".join(n.replace("\n", " ") for n in HOSTILE) + "; task: sst2." in \
        " ".join(page.text.split("\n"))


@pytest.mark.parametrize("text", HOSTILE + ["", " ", " a ", "`", "a|b`|"])
def test_a_code_span_shows_any_text_literally(text):
    shown = text.replace("\n", " ")
    assert _render(f"before {markup.code(text)} after").literal == [shown if shown.strip() else " "]
    assert _render(f"| a |\n|---|\n| {markup.cell(text)} |\n").literal == [shown if shown.strip() else " "]


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_running_text_shows_any_text_literally(text):
    page = _render(f"Ran on {markup.text(text)}.")
    assert [tag for tag, _ in page.tags] == ["body", "main", "p"]  # the paragraph alone: no link, role, maths or tag
    assert page.text.strip() == f"Ran on {text.replace(chr(10), ' ')}."


def test_figures_draw_names_with_dollars_as_text(tmp_path):
    """Two $ in a model name were read as mathtext, and a malformed one failed the figure."""
    import pandas as pd

    from lrd.book.plots import layer_curves

    name = "a$\\frac{$b"
    rows = [{"model": name, "task": "t", "measurement": "m", "layer": layer, "depth": layer / 2, "value": v}
            for layer, v in enumerate([0.1, 0.3, 0.2])]
    fig = layer_curves(pd.DataFrame(rows), "m", kinds={name: "encoder"}, title=f"{name} title")
    fig.savefig(tmp_path / "f.png")
    assert any(name in t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text")))


# ---- a report's ticks and numbers -----------------------------------------------------------------

def test_a_two_block_report_ticks_whole_layers_and_prints_no_negative_zero(monkeypatch):
    """Issue 46 (15): a 2-block model's report had ticks at half layers and "-0.000"."""
    from lrd.report import page

    figures = []
    monkeypatch.setattr(page, "_png", lambda fig, alt="figure": figures.append(fig) or "<img>")
    html = page._layers({"curves": {"sst2": [0.5, 0.6, 0.55]}, "label_free": None,
                         "tasks": [{"task": "sst2", "type": "classification", "layers chosen (half 1, half 2)": [1, 1],
                                    "best (cross-fitted)": 0.6, "last": 0.6000001, "gain": -0.0000001,
                                    "gain on each half": [-0.0002, 0.0001], "chance": 0.5}]})
    page._movement({"curves": {"velocity": {"layers": [1, 2], "values": [0.3, 0.3 + 1e-17]}},
                    "scores": {"velocity": -0.0001}, "panel position": {}})
    assert "-0.000" not in html and "+0.000" in html
    for fig in figures:
        (ax,) = fig.axes
        fig.canvas.draw()
        low, high = ax.get_xlim()
        assert all(float(t).is_integer() for t in ax.get_xticks() if low <= t <= high)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert not any(re.fullmatch("[-\u2212]0(\\.0*)?", t) for t in labels), labels
        assert ax.yaxis.get_offset_text().get_text() == ""


def test_a_hub_id_shadowed_by_a_folder_in_the_output_folder_is_refused_before_a_kernel(tmp_path, monkeypatch):
    """The kernel runs in the output folder: a hub id ``org/bert`` (no such folder where the
    command runs) would load ``out/org/bert`` there instead. Refused, naming the fix, before
    papermill starts; a folder typed by its path is absolute by then and never shadowed."""
    import papermill

    from lrd.book.parameters import shadowed_models
    from lrd.book.run import run_chapter

    (tmp_path / "out" / "org" / "bert").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: pytest.fail("papermill started"))
    with pytest.raises(ValueError, match=r"models: 'org/bert' is a Hugging Face hub id here.*output folder"):
        run_chapter("models_and_tasks", parameters={"models": ["org/bert"]}, output=tmp_path / "out" / "mt.ipynb",
                    checked=True)
    assert shadowed_models("models_and_tasks", {"models": [str(tmp_path / "out" / "org" / "bert"), "minilm"]},
                           tmp_path / "out") == []
    assert shadowed_models("models_and_tasks", {"models": ["org/bert"]}, tmp_path) == []  # nothing there
