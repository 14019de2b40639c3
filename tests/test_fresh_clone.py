"""benchmarks/fresh_clone.py: the set-up figures of the README come from a script, not prose."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "fresh_clone.py"


@pytest.fixture(scope="module")
def fresh_clone():
    spec = importlib.util.spec_from_file_location("fresh_clone", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fresh_clone"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_steps_run_in_order_after_their_prerequisites(fresh_clone):
    assert [s.name for s in fresh_clone.selected_steps("fetch,install")] == ["clone", "install", "fetch"]
    assert [s.name for s in fresh_clone.selected_steps("all")][-1] == "test"
    with pytest.raises(ValueError, match="step 'fetch' needs 'install'.*--steps install,fetch"):
        fresh_clone.selected_steps("fetch")  # `make fetch` would install first and time both as fetch
    with pytest.raises(ValueError, match="step 'book-warm' needs 'book-cold'"):
        fresh_clone.selected_steps("install,fetch,book-warm")
    with pytest.raises(ValueError, match="unknown step.*book.*steps: clone, install"):
        fresh_clone.selected_steps("install,book")


def test_chapter_times_come_from_lrd_book_s_own_log(fresh_clone):
    log = ("lrd book: running x\nlrd book: executed models_and_tasks (31.5 s)\nnoise\n"
           "lrd book: executed mid_layer (486 s)\nlrd book: /site/_build/html/index.html (900.0 s)\n")
    assert fresh_clone.chapter_seconds(log) == {"models_and_tasks": 31.5, "mid_layer": 486.0}


def test_the_report_adds_up_the_way_to_a_built_book(fresh_clone):
    steps = fresh_clone.BY_NAME
    outcomes = [fresh_clone.Outcome(steps["clone"], 2, 0, 10_000_000, 0),
                fresh_clone.Outcome(steps["install"], 100, 0, 2_000_000_000, 0),
                fresh_clone.Outcome(steps["fetch"], 200, 0, 2_000_000_000, 4_000_000_000),
                fresh_clone.Outcome(steps["book-cold"], 300, 0, 2_100_000_000, 4_500_000_000, {"a": 120.0, "b": 180.0}),
                fresh_clone.Outcome(steps["book-warm"], 30, 0, 2_100_000_000, 4_500_000_000, {"a": 10.0, "b": 20.0})]
    info = {"date": "2026-12-01", "cpu": "Some CPU", "cores": "2", "memory": "24 GB", "gpu": "no GPU",
            "os": "Linux", "load": "0.1, 0.1, 0.1"}
    text = fresh_clone.report(outcomes, info, commit="abc1234", home_note="an empty `LRD_HOME`")
    assert "Measured 2026-12-01 with `python benchmarks/fresh_clone.py` on Some CPU (2 cores, 24 GB RAM" in text
    assert "| install: venv, CPU torch" in text and "| `make install` | 100 s |" in text
    assert "| chapter | book-cold | book-warm |" in text and "| `a` | 120 s (2.0 min) | 10 s |" in text
    assert "From `git clone` to a built book: 602 s (10.0 min), 6.6 GB of disk." in text


def test_folder_bytes_counts_allocated_blocks_once_and_skips_links(fresh_clone, tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 100_000)
    os.link(tmp_path / "a", tmp_path / "b")  # a hard link: the same blocks
    (tmp_path / "c").symlink_to(ROOT)  # a linked folder is not walked
    assert 100_000 <= fresh_clone.folder_bytes(tmp_path) < 200_000


def test_the_clone_step_runs_and_prints_the_table(tmp_path):
    """The cheap step for real: clone this repository, measure, print the markdown."""
    run = subprocess.run([sys.executable, SCRIPT, "--steps", "clone", "--workdir", tmp_path / "w"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    out = run.stdout
    assert f"commit {head.strip()}" in out and datetime.now(timezone.utc).strftime("%Y-%m-%d") in out
    assert f"({os.cpu_count()} cores" in out and "| clone: a fresh clone of the committed HEAD | `git clone` |" in out
    assert (tmp_path / "w" / "lrd" / "Makefile").is_file() and (tmp_path / "w" / "logs" / "clone.log").is_file()
    assert "From `git clone` to a built book" not in out  # no book was built


def test_a_kept_measurement_prints_as_it_was_printed(fresh_clone, tmp_path):
    """--save keeps what the script printed as data; the book's performance page and the README
    render it back."""
    steps = fresh_clone.BY_NAME
    outcomes = [fresh_clone.Outcome(steps["clone"], 1.0, 0, 14_000_000, 0),
                fresh_clone.Outcome(steps["book-cold"], 2312.4, 0, 2_800_000_000, 1_700_000_000, {"a": 749.0}),
                fresh_clone.Outcome(steps["test"], 389.0, 0, 2_800_000_000, 1_700_000_000)]
    info = {"date": "2026-12-02", "cpu": "Some CPU", "cores": "2", "memory": "24 GB", "gpu": "no GPU",
            "os": "Linux", "load": "0.1, 0.1, 0.1"}
    record = fresh_clone.to_record(outcomes, info, commit="abc1234", home_note="an empty `LRD_HOME`")
    (tmp_path / "2026-12-02-abc1234.json").write_text(json.dumps(record))
    again = fresh_clone.from_record(json.loads(json.dumps(record)))
    assert fresh_clone.report(*again[:2], commit=again[2], home_note=again[3]) == fresh_clone.report(
        outcomes, info, commit="abc1234", home_note="an empty `LRD_HOME`")
    older = {**record, "info": {**info, "date": "2026-11-30"}, "commit": "0ld0ld0",
             "outcomes": [o for o in record["outcomes"] if o["step"] != "test"]}
    (tmp_path / "2026-11-30-0ld0ld0.json").write_text(json.dumps(older))
    kept = fresh_clone.records(tmp_path)
    assert [r["commit"] for r in kept] == ["abc1234", "0ld0ld0"]  # newest first
    for name, commit, time in [("2026-12-02-fff0001.json", "fff0001", "09:00"), ("2026-12-02-0000002.json", "0000002",
                                                                                   "17:30")]:
        (tmp_path / name).write_text(json.dumps({**record, "info": {**info, "time": time}, "commit": commit}))
    same_day = [r["commit"] for r in fresh_clone.records(tmp_path)]
    assert same_day[:3] == ["0000002", "fff0001", "abc1234"]  # by start time on a day, not by file name
    for name in ("2026-12-02-fff0001.json", "2026-12-02-0000002.json"):
        (tmp_path / name).unlink()
    block = fresh_clone.readme_block(kept)
    assert "- `make book` (every chapter at its defaults, empty caches): 2312 s (38.5 min) in a fresh clone " \
           "after" in block and "at commit abc1234" in block and "not measured again" not in block


def test_the_readme_quotes_only_a_real_fetch(fresh_clone):
    """Linked packs leave LRD_HOME empty, so a fetch step over them is no measurement of `make fetch`."""
    steps = fresh_clone.BY_NAME
    info = {"date": "2026-12-04", "time": "09:00", "cpu": "Some CPU", "cores": "2", "memory": "24 GB",
            "gpu": "no GPU", "os": "Linux", "load": "0.1, 0.1, 0.1"}
    linked = fresh_clone.to_record([fresh_clone.Outcome(steps["fetch"], 30.0, 0, 2_800_000_000, 0)], info,
                                   commit="1inked0", home_note="linked")
    assert "- `make fetch` (the offline models and data, downloaded and built): not measured yet." in \
        fresh_clone.readme_block([linked])
    real = fresh_clone.to_record([fresh_clone.Outcome(steps["fetch"], 165.0, 0, 2_800_000_000, 4_800_000_000)],
                                 {**info, "date": "2026-12-03"}, commit="fe7c4ed", home_note="an empty `LRD_HOME`")
    block = fresh_clone.readme_block([linked, real])
    assert "165 s (2.8 min), 4.8 GB in `LRD_HOME`, measured 2026-12-03 at commit fe7c4ed" in block
    assert "not measured again since" in block.split("make fetch")[1]  # a newer record, its packs linked


def test_readme_cold_times_are_the_newest_kept_measurements(fresh_clone):
    """The README's block is generated from benchmarks/fresh_clone/ (`python benchmarks/fresh_clone.py --readme`)."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index(fresh_clone.BEGIN):text.index(fresh_clone.END) + len(fresh_clone.END)]
    assert block == fresh_clone.readme_block(fresh_clone.records()), (
        "the README's cold times are stale: run `python benchmarks/fresh_clone.py --readme`")
    assert "/" + "root/" not in json.dumps(fresh_clone.records())  # no build machine's paths in the records


def test_the_history_has_one_line_per_committed_record_newest_first(fresh_clone, tmp_path):
    """The performance page's history ({lrd-fresh-clone-history}) is generated from the records:
    one row per record, newest first; a record added adds its row on top."""
    kept = fresh_clone.records()
    rows = fresh_clone.history_table(kept).splitlines()
    assert rows[0] == "| date | commit | `make book` (cold) | `make test` | `make fetch` | machine |"
    body = rows[2:]
    assert len(body) == len(kept) == len(list(fresh_clone.RECORDS.glob("*.json")))
    assert [row.split(" | ")[1] for row in body] == [r["commit"] for r in kept]
    dates = [row.split(" | ")[0].lstrip("| ") for row in body]
    assert dates == sorted(dates, reverse=True)
    for row, record in zip(body, kept):
        steps = {o["step"]: o for o in record["outcomes"]}
        cells = row.split(" | ")
        if "book-cold" in steps:
            assert cells[2] == fresh_clone._duration(steps["book-cold"]["seconds"])
        else:
            assert cells[2] == ""
        if "fetch" in steps:  # a real fetch gives LRD_HOME's size; over linked packs it says so
            assert (" GB" in cells[4] or " MB" in cells[4]) == (steps["fetch"]["home_bytes"] > 0)
            assert ("packs linked" in cells[4]) == (steps["fetch"]["home_bytes"] == 0)
    for path in fresh_clone.RECORDS.glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    newer = {**json.loads((fresh_clone.RECORDS / kept[0]["file"]).read_text())}
    newer["info"] = {**newer["info"], "date": "2999-01-01", "time": "00:00"}
    newer["commit"] = "feed123"
    (tmp_path / "2999-01-01-feed123.json").write_text(json.dumps(newer))
    again = fresh_clone.history_table(fresh_clone.records(tmp_path)).splitlines()
    assert len(again) == len(rows) + 1 and again[2].startswith("| 2999-01-01 00:00 | feed123 | ")
    assert again[3:] == body


def test_the_current_figures_are_the_newest_of_each_step(fresh_clone):
    """{lrd-fresh-clone}: the cold book, the tests and a real fetch each from the newest record
    that has them, and the newest cold book's chapters, as the README's block quotes them."""
    kept = fresh_clone.records()
    text = fresh_clone.current_figures(kept)
    for step, label in (("book-cold", "| `make book`"), ("test", "| `make test`")):
        record, o = fresh_clone.newest(step, kept)
        row = next(line for line in text.splitlines() if line.startswith(label))
        assert f"| {fresh_clone._duration(o['seconds'])} | {record['info']['date']}" in row
        assert f"| {record['commit']} |" in row
    record, o = fresh_clone.newest_real_fetch(kept)
    row = next(line for line in text.splitlines() if line.startswith("| `make fetch`"))
    assert f"{fresh_clone._size(o['home_bytes'])} in `LRD_HOME`" in row and f"| {record['commit']} |" in row
    record, o = fresh_clone.newest("book-cold", kept)
    assert f"Per chapter, in the cold book of {record['commit']}" in text
    assert all(f"| `{c}` | {fresh_clone._duration(s)} |" in text for c, s in o["chapters"].items())
    assert fresh_clone.current_figures([]).startswith("No fresh-clone measurement is kept yet")
    table = fresh_clone.chapter_table(kept).splitlines()
    with_chapters = [r for r in kept for x in r["outcomes"] if x["step"] == "book-cold" and x["chapters"]]
    assert table[0].count("|") == len(with_chapters) + 2 and table[0].split(" | ")[1].startswith(with_chapters[0]["commit"])
