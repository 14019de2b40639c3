"""`lrd report`: a tiny random model's page is built from the chapters' units, its JSON equals
their records, bad input fails before any model loads, and the page reads in a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lrd.report import build_report, check_models, check_parameters
from lrd.report.data import (aggregation_answer, block_answer, chapter_parameters, layer_answer, report_units,
                             summary_lines)

#: Sizes for a tiny model: every section computed in seconds.
TINY = {"tasks": ["sst2", "lee50"], "n_samples": 40, "n_bootstrap": 1, "n_permutations": 1, "n_token_prompts": 8,
        "n_aug_prompts": 4, "n_views": 2, "n_encoder_calibration": 24, "n_random": 2, "seeds": [0],
        "max_epochs": 2, "calibration_task": "sst2"}  # the tiny BERT has 64 positions: MRPC pairs are longer


@pytest.fixture(scope="module")
def tiny_report(tiny_encoder_dir, tmp_path_factory, require_panel):
    require_panel("lee")
    out = tmp_path_factory.mktemp("report")
    lines = []
    page, data = build_report([str(tiny_encoder_dir)], output=out / "report.html", parameters=TINY,
                              log=lines.append, root=out / "results", command="lrd report tiny")
    return page, data, lines, out


def test_the_page_and_its_json_are_written_with_every_section(tiny_report, tiny_encoder_dir):
    page, data, lines, _ = tiny_report
    got = json.loads(data.read_text())
    (report,) = got["models"]
    assert report["model"] == str(tiny_encoder_dir) and report["kind"] == "encoder"
    assert set(report["sections"]) | set(report["missing"]) == {"layers", "blocks", "movement", "aggregation"}
    assert set(report["sections"]) == {"layers", "blocks", "movement", "aggregation"}, report["missing"]
    assert report["summary"] and all(isinstance(s, str) for s in report["summary"])
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "http://" not in text and "https://" not in text  # self-contained
    assert text.count("data:image/png;base64,") >= 3
    assert any("computed" in line for line in lines)  # progress, one line per unit


def test_the_movement_section_names_its_curves_prompt_entropy_included(tiny_report):
    """Issue 28: the README says the movement section gives prompt entropy per layer, and the
    page seemed to have none: it was drawn, but only as pixels of a PNG whose text said "figure"."""
    page, data, _, _ = tiny_report
    (report,) = json.loads(data.read_text())["models"]
    assert list(report["sections"]["movement"]["curves"]) == ["velocity", "NRS (adjusted)", "GFMI", "prompt entropy"]
    text = page.read_text()
    movement = text[text.index('<h2 id="movement">'):text.index('<h2 id="aggregation">')]
    assert 'alt="per-layer curves of velocity, NRS (adjusted), GFMI, prompt entropy"' in movement
    assert "The figure draws the per-layer curves of velocity, NRS (adjusted), GFMI, prompt entropy" in movement


def test_the_json_equals_the_units_records(tiny_report, tiny_encoder_dir):
    """The numbers are the chapters' units' numbers, read back from the cache (no second implementation)."""
    from lrd.units.base import load_result
    from lrd.units.cayley_aggregation import TaskScores
    from lrd.units.mid_layer import mid_layer_tables
    from lrd.verdicts.layer_choice import cross_fitted_gain

    _, data, _, out = tiny_report
    (report,) = json.loads(data.read_text())["models"]
    planned = report_units(str(tiny_encoder_dir), parameters=TINY)
    (mid_unit,) = planned["layers"]
    mid = mid_layer_tables([mid_unit.model], [load_result(mid_unit, mid_unit.key(), out / "results")])
    gains = cross_fitted_gain(mid.results).set_index("task")
    for t in report["sections"]["layers"]["tasks"]:
        assert t["gain"] == pytest.approx(gains.loc[t["task"], "gain"], abs=0, rel=1e-12)
        assert t["last"] == pytest.approx(gains.loc[t["task"], "last"], abs=0, rel=1e-12)
    records = [load_result(u, u.key(), out / "results") for u in planned["aggregation"]]
    scores = pd.concat([r.scores for r in records if isinstance(r, TaskScores)])
    for task, methods in report["sections"]["aggregation"]["tasks"].items():
        for method, v in methods.items():
            want = scores[(scores["task"] == task) & (scores["method"] == method)]["score"].mean()
            assert v["mean"] == pytest.approx(want, rel=1e-12)


def test_a_second_report_reads_every_unit_from_the_cache(tiny_report, tiny_encoder_dir):
    _, _, _, out = tiny_report
    lines = []
    build_report([str(tiny_encoder_dir)], output=out / "again.html", parameters=TINY, log=lines.append,
                 root=out / "results")
    units = [line for line in lines if line.split(": ", 1)[-1].split(" ", 1)[0] in ("layers", "blocks", "movement",
                                                                                   "aggregation")]
    assert units and all("cached" in line for line in units if "FAILED" not in line)


def test_two_models_side_by_side(tiny_report, tiny_encoder_dir, tiny_decoder_dir):
    """An encoder and a decoder on one page: one column per model in every section; the decoder
    is pruned on multiple-choice items, the encoder on its embedding tasks."""
    out = tiny_report[3]
    page, js = build_report([str(tiny_encoder_dir), str(tiny_decoder_dir)], output=out / "two.html",
                            parameters={**TINY, "n_items": 4, "n_calibration": 4}, log=lambda line: None,
                            root=out / "results")
    reports = json.loads(js.read_text())["models"]
    assert [r["kind"] for r in reports] == ["encoder", "decoder"]
    assert all(set(r["sections"]) == {"layers", "blocks", "movement", "aggregation"} for r in reports), \
        [r["missing"] for r in reports]
    assert page.read_text().count('<div class="models">') == 5  # the summary and four sections, two columns each


def test_a_section_that_fails_is_explained_and_the_rest_is_written(tiny_report, tiny_encoder_dir, monkeypatch):
    import lrd.report.data as data

    def broken(*a, **k):
        raise ValueError("the removal table does not cover this model")

    monkeypatch.setattr(data, "block_answer", broken)
    out = tiny_report[3]
    page, js = build_report([str(tiny_encoder_dir)], output=out / "partial.html", parameters=TINY,
                            log=lambda line: None, root=out / "results")
    (report,) = json.loads(js.read_text())["models"]
    assert "does not cover this model" in report["missing"]["blocks"]
    assert set(report["sections"]) == {"layers", "movement", "aggregation"}
    assert 'class="missing">This section is missing: ValueError: the removal table does not cover' in page.read_text()


def test_bad_input_fails_before_any_model_loads(monkeypatch):
    import lrd.engine.models as models

    monkeypatch.setattr(models, "load_model", lambda *a, **k: pytest.fail("a model was loaded"))
    with pytest.raises(ValueError, match="Did you mean 'minilm'"):
        check_models(["minilmm"])
    with pytest.raises(ValueError, match="does not exist"):
        check_models(["./no/such/folder"])
    with pytest.raises(ValueError, match="at least one model"):
        check_models([])
    with pytest.raises(ValueError, match="unknown task 'sst3'"):
        check_parameters(["minilm"], {"tasks": ["sst3"]})
    with pytest.raises(ValueError, match="tasks is empty"):
        check_parameters(["minilm"], {"tasks": []})
    with pytest.raises(ValueError, match="n_samples"):
        report_units("minilm", parameters={"n_samples": "many"})


@pytest.fixture
def no_work(monkeypatch):
    """A report that gets past its checks stops where the work would start."""
    class Started(Exception):
        pass

    def started(*a, **k):
        raise Started("the work started")

    monkeypatch.setattr("lrd.report.compute_report_units", started)
    return Started


@pytest.mark.parametrize("parameters, message", [
    ({"n_sample": 10, "bogus_param": 1}, "unknown parameter 'n_sample' for the report's chapters"),
    ({"bogus_param": 1}, "unknown parameter 'bogus_param'"),
    ({"encoders": ["minilm"]}, "unknown parameter 'encoders'"),  # cosine_vs_ablation's: no section reads it
    ({"models": ["minilm", "mpnet"]}, "a report's models are its MODEL arguments"),
    ({"pruning_models": ["mpnet"]}, "-p pruning_models: a report's models are its MODEL arguments"),
    ({"device": "banana"}, "device 'banana' is not a device torch can parse"),
    ({"seeds": [-1]}, "every item of seeds must be at least 0, got -1"),
    ({"tasks": ["sst2", "sst2"]}, "tasks lists 'sst2' twice"),
])
def test_report_parameters_get_the_checks_of_lrd_run(no_work, parameters, message):
    """Issue 28 (3): -p n_sample 10 -p bogus_param 1 ran minutes at the defaults, and report.json
    listed both as applied; -p models was ignored the same way."""
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        build_report(["minilm"], parameters=parameters)
    if "n_sample" in parameters:
        assert "did you mean 'n_samples'?" in str(err.value)
    if "models" in parameters:
        assert "lrd report minilm mpnet" in str(err.value)  # the fix: name them as MODEL arguments


def test_a_string_for_a_list_is_taken_by_lrd_report_as_by_lrd_run(no_work):
    """One rule for both: lrd run made -p tasks sst2 a one-item list, lrd report rejected it."""
    plans, notes = check_parameters(["minilm"], {"tasks": "sst2"})
    assert all(p["tasks"] == ["sst2"] for p in plans["minilm"].values())
    assert notes == ["parameter 'tasks' expects a list; using ['sst2'] "
                     "(pass several as -p tasks '[\"sst2\", \"sst2\"]')"]
    with pytest.raises(no_work):
        build_report(["minilm"], parameters={"tasks": "sst2"}, log=lambda line: None)


def test_a_model_named_twice_is_an_error_with_the_fix(tiny_encoder_dir, monkeypatch):
    """Issue 28 (6): lrd report minilm minilm drew two identical columns; two spellings of one
    folder are one model too."""
    with pytest.raises(ValueError, match="'minilm' twice") as err:
        check_models(["minilm", "mpnet", "minilm"])
    assert "lrd report minilm mpnet" in str(err.value)
    monkeypatch.chdir(tiny_encoder_dir.parent)
    with pytest.raises(ValueError, match="one model folder"):
        check_models([f"./{tiny_encoder_dir.name}", f"{tiny_encoder_dir.name}/"])


def test_a_parameter_given_twice_to_lrd_report_is_an_error(no_work, capsys):
    from lrd.cli import main

    assert main(["report", "minilm", "-p", "n_samples", "10", "-p", "n_samples", "20"]) == 2
    assert "-p n_samples is given twice (10 and 20); pass it once" in capsys.readouterr().err


def test_the_chapters_parameters_follow_the_report_s_model_and_tasks():
    p = chapter_parameters("mid_layer", "m", parameters={"tasks": ["lee50"], "n_epochs_unknown": 3})
    assert p["models"] == ["m"] and p["tasks"] == ["lee50"] and "n_epochs_unknown" not in p
    assert p["token_task"] == p["aug_task"] == p["norm_task"] == "lee50"  # must be among the tasks
    s = chapter_parameters("selection_and_pruning", "m")
    assert s["pruning_models"] == ["m"] and s["models"] == ["m"]


# --- the sections' reductions, on constructed tables ------------------------------------------------

def _mid(score_h1, score_h2, dime=None):
    rows = []
    for task, (h1, h2) in {"t": (score_h1, score_h2)}.items():
        for layer, (a, b) in enumerate(zip(h1, h2)):
            rows += [{"model": "m", "task": task, "measurement": "score half 1", "layer": layer, "value": a},
                     {"model": "m", "task": task, "measurement": "score half 2", "layer": layer, "value": b},
                     {"model": "m", "task": task, "measurement": "score", "layer": layer, "value": (a + b) / 2}]
            if dime is not None:
                rows.append({"model": "m", "task": task, "measurement": "DiME", "layer": layer, "value": dime[layer]})
    df = pd.DataFrame(rows)
    df["depth"] = df["layer"] / df["layer"].max()
    return df


def test_layer_answer_is_cross_fitted():
    """Half 1 prefers layer 1 and half 2 layer 2: each is scored on the other half."""
    a = layer_answer(_mid([0.5, 0.9, 0.6, 0.7], [0.5, 0.6, 0.8, 0.75], dime=[0, 0, 1, 0]), {"t": "classification"})
    (t,) = a["tasks"]
    assert t["layers chosen (half 1, half 2)"] == [1, 2]
    assert t["best (cross-fitted)"] == pytest.approx((0.6 + 0.6) / 2)  # s2[1], s1[2]
    assert t["last"] == pytest.approx((0.7 + 0.75) / 2)
    assert t["gain"] == pytest.approx(0.6 - 0.725)
    assert t["gain on each half"] == pytest.approx([0.6 - 0.75, 0.6 - 0.7])  # chosen on one half, scored on the other
    assert a["label_free"]["layer"] == 2 and a["label_free"]["agrees on"] == 1
    assert a["types"][0]["interval"] is None  # one task: no interval
    (line, dime) = summary_lines({"layers": a})
    assert "scores -0.125 against the last layer" in line and "-0.150 and -0.100" in line
    assert "DiME picks layer 2" in dime


def test_block_answer_against_random_and_the_overlap_of_removed_blocks():
    rows = []
    for seed in (0, 1):
        rows.append({"model": "m", "kind": "encoder", "task": "t", "rule": "random", "seed": seed, "fraction": 0.1,
                     "change": -0.1 - 0.02 * seed})
    for rule, change in {"accuracy (calibration)": -0.01, "cosine (BI)": -0.05, "GFMI": -0.2, "NRS": -0.03}.items():
        rows.append({"model": "m", "kind": "encoder", "task": "t", "rule": rule, "seed": -1, "fraction": 0.1,
                     "change": change})
    plan = pd.DataFrame([{"rule": "accuracy (calibration)", "seed": -1, "fraction": 0.1, "k": 2, "removed": (3, 4)},
                         {"rule": "cosine (BI)", "seed": -1, "fraction": 0.1, "k": 2, "removed": (4, 5)},
                         {"rule": "NRS", "seed": -1, "fraction": 0.1, "k": 2, "removed": (1, 2)}])
    a = block_answer(pd.DataFrame(rows), plan, 12)
    by = {r["rule"]: r for r in a["rules"]}
    assert by["accuracy (calibration)"]["vs random"] == pytest.approx(-0.01 - (-0.11))
    assert a["best LRD rule"] == "NRS"
    assert a["cosine vs accuracy"] == [{"budget": "10%", "jaccard": pytest.approx(1 / 3)}]
    with pytest.raises(ValueError, match="not pruned"):
        block_answer(pd.DataFrame(columns=rows[0].keys()), None, 12)
    # a decoder: its multiple-choice accuracy with the step of one item and the measured chance
    gold = [0, 1, 0, 1, 1, 0, 1, 0]
    (mc,) = block_answer(pd.DataFrame(rows), plan, 12, {"copa": {"pred": gold, "gold": gold}})["multiple choice"]
    assert mc["task"] == "copa" and mc["accuracy"] == 1.0 and mc["step"] == 1 / 8 and mc["items"] == 8
    assert mc["chance"] == pytest.approx(0.5)  # half the predictions share each gold label


def test_aggregation_answer_gains_are_differences_of_seed_means():
    scores = pd.DataFrame([{"task": "t", "method": m, "seed": s, "score": v + 0.01 * s}
                           for m, v in {"last": 0.6, "best": 0.7, "fc": 0.65, "cayley": 0.75}.items() for s in (0, 1)])
    a = aggregation_answer(scores)
    assert a["gains"]["cayley - last"] == pytest.approx(0.15) and a["gains"]["fc - best"] == pytest.approx(-0.05)
    assert a["tasks"]["t"]["last"]["min"] == pytest.approx(0.6)


@pytest.mark.book
def test_the_report_renders_in_a_headless_browser(tiny_report):
    from tests.test_book import _browser

    sync_playwright, exe = _browser()
    page_path = tiny_report[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # a laptop
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())  # offline: nothing but the page
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(Path(page_path).as_uri(), wait_until="load")
        got = page.evaluate("""() => ({
          images: [...document.images].map(i => i.complete && i.naturalWidth > 0),
          sections: [...document.querySelectorAll('h2')].map(h => h.id),
          overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
          missing: document.querySelectorAll('.missing').length,
        })""")
        browser.close()
    assert not errors
    assert got["images"] and all(got["images"])
    assert got["sections"] == ["summary", "layers", "blocks", "movement", "aggregation"]
    assert not got["overflow"], "the page is wider than a laptop's window"
    assert got["missing"] == 0
