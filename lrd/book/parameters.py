"""What values each chapter's parameters may take, checked before anything loads.

:func:`lrd.book.validate_parameters` checks a parameter's *type* against the notebook's
default; this module declares its *values*: ranges, non-empty lists, the kinds of task and of
model a chapter can use, and parameters that must name an item of another (``token_task`` one
of ``tasks``). One table, :data:`RULES` (chapter -> parameter -> :class:`Rule`), and a few
checks of several parameters together (:data:`RELATIONS`); :func:`check_values` applies both
to the values a chapter would run with (defaults, profile and overrides merged) and raises one
``ValueError`` naming every problem and the ``-p`` that fixes it (papermill spells ``-p`` the
same way).

Nothing here loads a model or a data set: a task's type comes from :func:`task_type` (the
offline table, or MTEB's metadata), a model's kind from :func:`model_kind` (the offline table,
or the ``config.json`` of a local folder or of a hub model in the local Hugging Face cache; a
model whose kind cannot be known so is not checked). Values equal to the notebook's defaults
are valid by construction (``tests/test_parameters.py`` checks every chapter's defaults and
profiles), so their task types, model kinds and choices are not looked up.

Examples
--------
>>> check_values("mid_layer", {"n_views": 1})
Traceback (most recent call last):
...
ValueError: chapter 'mid_layer': n_views must be at least 2, got 1 (LiDAR, InfoNCE and DiME compare two or more views of each prompt); pass -p n_views 2 or more
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

#: Task types whose texts have a per-layer embedding score (:func:`lrd.methods.evaluate.evaluate_layers`).
EMBEDDING_TASKS = ("classification", "clustering", "pair_classification", "sts")
#: Task types with one label per text (a classifier, or k examples per class, can be trained on them).
LABELLED_TEXTS = ("classification", "clustering")
MULTIPLE_CHOICE = ("multiple_choice",)
ANY_TASK = EMBEDDING_TASKS + MULTIPLE_CHOICE
#: How the messages name the task types.
TYPE_NAMES = {"classification": "classification", "clustering": "clustering",
              "pair_classification": "pair classification", "sts": "STS", "multiple_choice": "multiple choice"}


@dataclass(frozen=True)
class Rule:
    """The values one parameter may take; for a list, what every item may be.

    Attributes
    ----------
    why : str
        What the chapter does with the value, shown in the message.
    at_least, at_most : float, optional
        Inclusive bounds of a number.
    above, below : float, optional
        Exclusive bounds of a number (``variance`` in (0, 1]).
    none_ok : bool
        ``None`` is meaningful (``n_samples=None``: the whole task); otherwise a number rule
        rejects it.
    non_empty : bool
        A list must hold at least one item.
    choices : callable, optional
        Returns the allowed strings (read from the module that defines them, when needed).
    task_types : tuple of str, optional
        Each value names a task of one of these types (:data:`lrd.engine.tasks.TASK_TYPES`).
    model_kind : {"encoder", "decoder", "any"}, optional
        Each value names a model (an offline key, an existing folder or a hub id) of this kind;
        a local folder must also load as it is (:func:`lrd.engine.models.checkpoint_problem`:
        valid config, no custom code, every weight of the architecture in the checkpoint).
    lm_head : bool
        A decoder among the values is scored with its language-model head, so its checkpoint
        must have one (a base model saved without ``lm_head.weight`` is refused).
    one_of : str, optional
        Each value must be an item of this other (list) parameter.
    empty_ok : bool
        The empty string means "skip" and is allowed (``norm_task=""``).
    distinct : bool
        A list may not name an item twice (a second model, task, seed or budget would repeat
        the same work and, in the tables, the same rows); models are compared by what they
        load (two spellings of one folder are the same model).
    check : callable, optional
        ``check(name, value) -> problem or None`` for a value or list item, after the bounds
        (``device``: one that torch knows and this machine has; ``task_groups``: not 1).
    example : optional
        For a parameter whose default is ``None``: a typical value, whose type every other
        value must have (``None`` aside); what the type error suggests.
    path : bool
        The value is a folder (``results_dir``): not empty, not an existing file, and, as a
        model name that is a folder, made absolute where the user typed it
        (:func:`resolve_paths`), since the chapter's kernel runs in the output folder.
    """

    why: str = ""
    at_least: float | None = None
    at_most: float | None = None
    above: float | None = None
    below: float | None = None
    none_ok: bool = False
    non_empty: bool = False
    choices: Callable[[], Sequence[str]] | None = None
    task_types: tuple[str, ...] | None = None
    model_kind: str | None = None
    lm_head: bool = False
    one_of: str | None = None
    empty_ok: bool = False
    distinct: bool = True
    check: Callable[[str, Any], str | None] | None = None
    example: Any = None
    path: bool = False

    def declares(self) -> bool:
        """Whether the rule limits the values at all (``tests/test_parameters_hardening.py``:
        every parameter of every chapter has a rule that does)."""
        return any(x is not None for x in (self.at_least, self.at_most, self.above, self.below, self.choices,
                                           self.task_types, self.model_kind, self.one_of, self.check)) or self.path


def _poolings() -> Sequence[str]:
    from lrd.engine.extract import POOLINGS

    return POOLINGS


def _methods() -> Sequence[str]:
    from lrd.aggregation.encoders import METHODS

    return METHODS


def _encoder_scorers() -> Sequence[str]:
    from lrd.methods.relevance import ENCODER_SCORERS

    return list(ENCODER_SCORERS)


def _profiles() -> Sequence[str]:
    """The declared profiles (notebooks/profiles.yml, read here: lrd.book.notebooks imports this module)."""
    import yaml
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "notebooks" / "profiles.yml"
    return ["default", *yaml.safe_load(path.read_text())]


def _device_problem(name: str, device: str) -> str | None:
    """Why ``device`` cannot compute here, or ``None``: a name torch cannot parse, a kind lrd
    does not run on, or a device this machine lacks (no CUDA, an index past the last GPU).
    ``"cpu"`` is answered without importing torch (about a second otherwise)."""
    if device == "cpu":
        return None
    from lrd.engine.models import device_problem  # load_model's own check

    return device_problem(device, name=name, fix=f"pass -p {name} {{}}")


# ---- rules shared by several chapters --------------------------------------------------------

MODELS = Rule("the chapter measures each model", non_empty=True, model_kind="any")
ONE_MODEL = Rule(model_kind="any")
POOLING = Rule("how token states become one vector per text", choices=_poolings)
EMBEDDING_TEXTS = Rule("rows per task, split into train and test halves; null takes the whole task",
                       at_least=8, none_ok=True)
K = Rule("NRS compares each text's k nearest neighbours", at_least=1)
VARIANCE = Rule("the share of variance that fixes the Frenet rank", above=0, at_most=1)
N_BOOTSTRAP = Rule("a clustering score is the mean of n_bootstrap k-means runs", at_least=1)
N_VIEWS = Rule("LiDAR, InfoNCE and DiME compare two or more views of each prompt", at_least=2)
N_AUG_PROMPTS = Rule("InfoNCE, LiDAR and DiME contrast two or more prompts", at_least=2)
BATCH_SIZE = Rule("sequences per forward pass", at_least=1)
THREADS = Rule("torch CPU threads; 0 keeps torch's default", at_least=0)
#: What a model may compute in (:func:`lrd.engine.models.load_model`'s ``dtype``).
DTYPES = ("float32", "bfloat16", "float16")
DTYPE = Rule("the models' weights and activations; pooled states and scores stay float32", choices=lambda: DTYPES)
N_RANDOM = Rule("random pruning orders, the baseline of every rule", at_least=1)
N_CALIBRATION = Rule("calibration items per multiple-choice task rank the blocks", at_least=1)
DEVICE = Rule("where the models compute", check=_device_problem)
#: numpy's seeds (``np.random.seed``, ``RandomState``): 0 <= seed < 2**32.
SEED_BELOW = 2 ** 32
EMBEDDING_TASK_LIST = Rule("every layer is scored by the task type's MTEB protocol", non_empty=True,
                           task_types=EMBEDDING_TASKS)
RESULTS_DIR = Rule("the folder of the chapter's tables and glued values; a relative path is taken from the "
                   "folder the command runs in, the default beside the executed notebook", path=True)
#: A 95% percentile interval needs a resample beyond each 2.5% end.
PERCENTILE_RESAMPLES = 40


def _not_one_group(name: str, value: Any) -> str | None:
    if value == 1:
        return (f"{name} 1 makes one group of each task's texts, which no other group can be compared with (the "
                f"split-group test and reliability need 2 or more); pass -p {name} 0 to turn the groups off, or "
                f"-p {name} 2 or more")
    return None


#: chapter -> parameter -> rule: every parameter of every chapter (a test checks that each has a
#: rule that limits its values, :meth:`Rule.declares`).
RULES: dict[str, dict[str, Rule]] = {
    "models_and_tasks": {
        "device": DEVICE,
        "dtype": DTYPE,
        "models": MODELS,
        "task": Rule("its texts feed the per-layer figure", task_types=ANY_TASK),
        "n_samples": Rule("the mean pairwise cosine needs two texts; null takes the whole task",
                          at_least=2, none_ok=True, example=300),
        "pooling": POOLING,
        "results_dir": RESULTS_DIR,
    },
    "lrd_families": {
        "device": DEVICE,
        "dtype": DTYPE,
        "models": MODELS,
        "tasks": Rule("each task is one panel of every figure", non_empty=True, task_types=ANY_TASK),
        "n_samples": Rule("GFMI clusters three or more texts; null takes the whole task", at_least=3, none_ok=True),
        "pooling": POOLING,
        "k": K,
        "variance": VARIANCE,
        "task_groups": Rule("disjoint groups of each task's texts, scored apart; 0 turns them off", at_least=0,
                            check=_not_one_group),
        "results_dir": RESULTS_DIR,
    },
    "mid_layer": {
        "device": DEVICE,
        "dtype": DTYPE,
        "models": MODELS,
        "tasks": EMBEDDING_TASK_LIST,
        "n_samples": EMBEDDING_TEXTS,
        "n_bootstrap": N_BOOTSTRAP,
        "pooling": POOLING,
        "token_task": Rule("its forward pass also keeps the token states", one_of="tasks"),
        "n_token_prompts": Rule("prompt entropy and curvature average over these prompts", at_least=1),
        "aug_task": Rule("its texts are augmented", one_of="tasks"),
        "n_aug_prompts": N_AUG_PROMPTS,
        "n_views": N_VIEWS,
        "norm_task": Rule("its forward pass also gives the final-norm variant", one_of="tasks", empty_ok=True),
        "n_permutations": Rule("the measured chance is the mean over label permutations", at_least=1),
        "results_dir": RESULTS_DIR,
    },
    "cosine_vs_ablation": {
        "device": DEVICE,
        "dtype": DTYPE,
        "models": Rule("accuracy relevance scores answer continuations with a language-model head",
                       non_empty=True, model_kind="decoder", lm_head=True),
        "tasks": Rule("accuracy relevance is multiple-choice accuracy", non_empty=True, task_types=MULTIPLE_CHOICE),
        "n_items": Rule("the bootstrap resamples the evaluation items", at_least=2),
        "n_calibration": N_CALIBRATION,
        "pruning_models": Rule("the decoders pruned by every relevance score (may be empty)", model_kind="decoder",
                               lm_head=True, one_of="models"),
        "pruning_ks": Rule("numbers of blocks removed together", non_empty=True, at_least=1),
        "n_random": N_RANDOM,
        "encoders": Rule("the encoder section scores sentence embeddings", non_empty=True, model_kind="encoder"),
        "encoder_task": Rule("the encoders' embedding score is measured on it", task_types=EMBEDDING_TASKS),
        "n_encoder": EMBEDDING_TEXTS,
        "encoder_scorer": Rule("the encoders' embedding score", choices=_encoder_scorers),
        "n_boot": Rule("a 95% percentile interval needs a resample beyond each 2.5% end: 1 / 0.025 = 40",
                       at_least=PERCENTILE_RESAMPLES),
        "n_splits": Rule("the split-half reliability is a mean over random half splits", at_least=1),
        "strong": Rule("a correlation, the equivalence margin of \"weak or moderate\"", above=0, below=1),
        "margin": Rule("a share of the percentile-rank range", at_least=0, below=1),
        "min_reliability": Rule("a ranking reliability below which a model's share does not count", at_least=0,
                                below=1),
        "same": Rule("a corrected between-task correlation above which two tasks' relevance is the same", above=0,
                     at_most=1),
        "batch_size": BATCH_SIZE,
        "threads": THREADS,
        "results_dir": RESULTS_DIR,
    },
    "cayley_aggregation": {
        "device": DEVICE,
        "dtype": DTYPE,
        "ablation_dtype": DTYPE,
        "models": MODELS,
        "tasks": Rule("the aggregators are trained on labelled texts or, for STS, scored pairs", non_empty=True,
                      task_types=LABELLED_TEXTS + ("sts",)),
        "n_samples": EMBEDDING_TEXTS,
        "methods": Rule("every method is trained on every model and task", non_empty=True, choices=_methods),
        "seeds": Rule("scores are the mean and spread over seeds; numpy takes seeds 0 to 2**32 - 1", non_empty=True,
                      at_least=0, below=SEED_BELOW),
        "gnn_layers": Rule("GIN layers of the graph encoders", at_least=1),
        "max_epochs": Rule("with 0 epochs nothing is trained", at_least=1),
        "patience": Rule("epochs without improvement before a seed stops", at_least=1),
        "sts_folds": Rule("document-disjoint cross-validation folds", at_least=2),
        "ablation_model": ONE_MODEL,
        "ablation_task": Rule("the ablations train the Cayley encoder on it", task_types=LABELLED_TEXTS + ("sts",)),
        "n_mappings": Rule("the random-mapping ablation is a mean over mappings", at_least=1),
        "per_model_mappings": Rule("random mappings per model for the mapping claim's per-model evidence (0: none; "
                                   "a spread needs 2)", at_least=0),
        "few_shot": Rule("training examples per class", non_empty=True, at_least=1),
        "few_shot_tasks": Rule("few-shot training draws examples per class", task_types=LABELLED_TEXTS),
        "few_shot_methods": Rule("the methods trained few-shot", choices=_methods),
        "memory_tokens": Rule("sequence lengths of the token-level graph", non_empty=True, at_least=1),
        "train_threads": Rule("torch threads while training; null leaves torch's setting", at_least=1,
                              none_ok=True),
        "n_boot": Rule("the gain's 95% interval needs a resample beyond each 2.5% end: 1 / 0.025 = 40",
                       at_least=PERCENTILE_RESAMPLES),
        "results_dir": RESULTS_DIR,
    },
    "selection_and_pruning": {
        "device": DEVICE,
        "dtype": DTYPE,
        "models": Rule("the chapter measures each model; a decoder's downstream score is multiple-choice accuracy, "
                       "read from its language-model head", non_empty=True, model_kind="any", lm_head=True),
        "tasks": EMBEDDING_TASK_LIST,
        "n_samples": EMBEDDING_TEXTS,
        "pooling": POOLING,
        "k": K,
        "variance": VARIANCE,
        "n_bootstrap": N_BOOTSTRAP,
        "aug_task": Rule("DiME augments its prompts", task_types=ANY_TASK),
        "n_aug_prompts": N_AUG_PROMPTS,
        "n_views": N_VIEWS,
        "mc_tasks": Rule("the decoders' downstream score is multiple-choice accuracy", non_empty=True,
                         task_types=MULTIPLE_CHOICE),
        "n_items": Rule("evaluation items per multiple-choice task", at_least=1),
        "n_calibration": N_CALIBRATION,
        "calibration_task": Rule("the encoders' labelled prune rules rank blocks by its MTEB score",
                                 task_types=EMBEDDING_TASKS),
        "pruning_models": Rule("the models pruned, each one of models, of 2 blocks or more; a pruned decoder is "
                               "scored by multiple-choice accuracy, read from its language-model head",
                               model_kind="any", lm_head=True, one_of="models"),
        "n_encoder_calibration": Rule("rows of calibration_task, split into train and test halves", at_least=8),
        "budgets": Rule("shares of the blocks removed", non_empty=True, above=0, below=1),
        "n_random": N_RANDOM,
        "margin": Rule("the non-superiority margin, in points of a score on the 0-1 scale", at_least=0, below=1),
        "batch_size": BATCH_SIZE,
        "threads": THREADS,
        "results_dir": RESULTS_DIR,
    },
    "authors_code": {
        "models": MODELS,
        "chapter_profile": Rule("the other chapters' parameters (and cached units) are read under this profile",
                                choices=_profiles),
        "results_dir": RESULTS_DIR,
    },
    "null_calibration": {
        "n_simulations": Rule("null panels per claim; the Monte Carlo bound needs some", at_least=10),
        "n_power_simulations": Rule("panels of a power simulation of its own (at most n_simulations are used)",
                                    at_least=1),
        "seed": Rule("seed of the simulated null panels; numpy takes seeds 0 to 2**32 - 1", at_least=0,
                     below=SEED_BELOW),
        "workers": Rule("processes sharing the simulations; 0 for one per core", at_least=0),
        "results_dir": Rule("the folder of the executed chapters' results, read, and of this appendix's, written; "
                            "a relative path is taken from the folder the command runs in", path=True),
    },
}


# ---- what a task or model is, without loading it -----------------------------------------------

def task_type(name: str) -> str:
    """The type of task ``name`` without loading its data (:func:`lrd.engine.tasks.task_type`)."""
    from lrd.engine.tasks import task_type as of_task

    return of_task(name)



def model_kind(name: str) -> str | None:
    """``"encoder"`` or ``"decoder"``, as :func:`lrd.engine.models.load_model` would choose, without
    loading weights; ``None`` when only the hub could say (a hub id not in the local cache).

    An offline key's kind is declared in :data:`lrd.engine.packs.MODEL_PACKS`; a local folder's, or a
    cached hub model's, is read from its ``config.json`` by the loader's own rule.
    """
    from lrd.engine.packs import MODEL_PACKS

    if name in MODEL_PACKS:
        return MODEL_PACKS[name].info.get("kind")
    data = _config_data(name)
    if data is None:
        return None
    from types import SimpleNamespace

    from lrd.engine.models import _is_decoder  # the loader's rule (config architectures and model type)

    spec = SimpleNamespace(architectures=data.get("architectures"), model_type=data.get("model_type"),
                           use_bidirectional_attention=data.get("use_bidirectional_attention", False))
    return "decoder" if _is_decoder(spec) else "encoder"


def model_blocks(name: str) -> int | None:
    """The number of transformer blocks of a model, read from its ``config.json`` (an offline
    key's built pack, a local folder, a hub model in the local cache) by the loader's keys
    (:data:`lrd.engine.models.LAYER_COUNT_KEYS`); ``None`` when no config says."""
    from lrd.engine.models import LAYER_COUNT_KEYS

    data = _config_data(name)
    if data is None:
        return None
    data = data.get("text_config") or data
    for key in LAYER_COUNT_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _config_data(name: str) -> dict | None:
    """The ``config.json`` of what ``name`` loads, as a dict, without loading anything else:
    an offline key's pack (when built), a local folder's, or a cached hub model's."""
    from lrd.engine.packs import MODEL_PACKS

    folder = MODEL_PACKS[name].path if name in MODEL_PACKS else Path(name).expanduser()
    config = folder / "config.json" if folder.is_dir() else _cached_hub_config(name)
    if config is None or not config.is_file():
        return None
    try:
        data = json.loads(config.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _cached_hub_config(repo_id: str) -> Path | None:
    if repo_id.count("/") != 1 or repo_id.startswith((".", "/", "~")):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an id the hub client rejects: not cached, so unknown here
        return None
    return Path(found) if isinstance(found, str) else None


# ---- duplicates ---------------------------------------------------------------------------------

def model_identity(name: str) -> str:
    """What a model name loads, for comparing names: an offline key's pack folder, an existing
    folder's resolved path (``./x``, ``x/`` and a symlink to it are one model), else the name."""
    from lrd.engine.packs import MODEL_PACKS

    if name in MODEL_PACKS:
        return str(MODEL_PACKS[name].path.resolve())
    folder = Path(name).expanduser()
    return str(folder.resolve()) if folder.is_dir() else name


# ---- paths: resolved once, where the user typed them -------------------------------------------

def absolute_folder(path: str) -> str:
    """``path`` (``~`` expanded) as an absolute path that names the same folder from anywhere:
    normalised (``a/../b`` -> ``b``) unless a symbolic link makes that name another folder, then
    as the operating system resolves it."""
    given = Path(path).expanduser()
    exact = given.absolute()  # the same path, from the root: what the OS opens from here
    plain = Path(os.path.abspath(given))
    return str(plain if os.path.realpath(plain) == os.path.realpath(exact) else Path(os.path.realpath(exact)))


def absolute_model(name: str) -> str:
    """What ``name`` loads, named so that it loads the same from any folder: an existing folder
    (``./bert``, ``bert/``, ``~/m``) as its absolute path (:func:`absolute_folder`); an offline
    key, a hub id or anything else (refused by the checks) unchanged. The loader tries an offline
    key first, then a folder, then the hub (:func:`lrd.engine.models.load_model`)."""
    from lrd.engine.packs import MODEL_PACKS

    if name in MODEL_PACKS or not Path(name).expanduser().is_dir():
        return name
    return absolute_folder(name)


def shadowed_models(chapter: str, values: dict, folder: str | Path) -> list[str]:
    """The models of ``values`` that a kernel running in ``folder`` would load from there instead
    of from where they were typed: a name that is neither an offline key nor an absolute path (a
    hub id, since :func:`resolve_paths` made every folder the user meant absolute) while
    ``folder`` holds a folder of that name. Each as a message naming the parameter and the fix.

    Examples
    --------
    >>> import tempfile, os
    >>> out = tempfile.mkdtemp(); os.makedirs(os.path.join(out, "org", "bert"))
    >>> shadowed_models("models_and_tasks", {"models": ["minilm", "org/bert"]}, out)[0][:48]
    "models: 'org/bert' is a Hugging Face hub id here"
    """
    from lrd.engine.packs import MODEL_PACKS

    found = []
    for name, value in values.items():
        rule = RULES.get(chapter, {}).get(name)
        if rule is None or not rule.model_kind:
            continue
        for model in [value] if isinstance(value, str) else list(value or ()):
            if not isinstance(model, str) or model in MODEL_PACKS or Path(model).expanduser().is_absolute():
                continue
            if (Path(folder) / model).is_dir():
                found.append(f"{name}: {model!r} is a Hugging Face hub id here (no such folder where the command "
                             f"runs), but the output folder {folder} holds a folder of that name, which the chapter's "
                             f"kernel (running there) would load instead; pass the folder you mean by its path "
                             f"(e.g. {Path(folder) / model}), or write the notebook elsewhere")
    return found


def resolve_paths(chapter: str, values: dict) -> dict:
    """``values`` with every path a chapter's rules declare (a model that is a folder, a
    :attr:`Rule.path` such as ``results_dir``) made absolute here, where the user typed it.

    ``lrd run`` executes a chapter with its output folder as working directory, so a relative
    ``./bert`` that was checked here would be loaded there: another model under the same name,
    or none. Call it on the values the user gave (not on the notebook's defaults: the default
    ``results_dir`` is meant beside the executed notebook), after they are checked (the messages
    name what the user typed).

    Examples
    --------
    >>> resolve_paths("models_and_tasks", {"models": ["minilm"], "results_dir": "/tmp/out"})
    {'models': ['minilm'], 'results_dir': '/tmp/out'}
    """
    rules = RULES.get(chapter, {})
    out = dict(values)
    for name, value in values.items():
        rule = rules.get(name)
        if rule is None or not (rule.path or rule.model_kind):
            continue
        resolve = absolute_folder if rule.path else absolute_model
        if isinstance(value, str):
            out[name] = resolve(value)
        elif isinstance(value, (list, tuple)):
            out[name] = [resolve(v) if isinstance(v, str) else v for v in value]
    return out


def duplicates(items: Sequence, identity: Callable[[Any], Any] = lambda x: x) -> list[list]:
    """The groups of ``items`` with the same ``identity``, for each identity met more than once
    (in order of first appearance); ``[]`` when every item is distinct."""
    groups: dict[Any, list] = {}
    for item in items:
        groups.setdefault(identity(item), []).append(item)
    return [g for g in groups.values() if len(g) > 1]


def duplicate_text(groups: list[list]) -> str:
    """``"'minilm' twice"``, ``"'./x' and 'x/' (one model folder)"``: the groups of :func:`duplicates` in words."""
    def one(group: list) -> str:
        if len(set(map(json.dumps, group))) == 1:
            return f"{group[0]!r} {'twice' if len(group) == 2 else f'{len(group)} times'}"
        return f"{' and '.join(repr(g) for g in group)} (one model folder)"

    return "; ".join(one(g) for g in groups)


def unique(items: Sequence, identity: Callable[[Any], Any] = lambda x: x) -> list:
    """``items`` without repeats (by ``identity``), first occurrences kept, in order."""
    seen: set = set()
    return [x for x in items if not ((key := identity(x)) in seen or seen.add(key))]


def _identity(rule: Rule) -> Callable[[Any], str]:
    """How the items of a list under ``rule`` are compared: models by what they load, anything
    else by its JSON (so ``0.1`` and ``0.10`` are one budget)."""
    if rule.model_kind is None:
        return json.dumps
    return lambda x: model_identity(x) if isinstance(x, str) else json.dumps(x)


def _duplicate_problem(name: str, value: list, rule: Rule) -> str | None:
    identity = _identity(rule)
    if not (groups := duplicates(value, identity)):
        return None
    return (f"{name} lists {duplicate_text(groups)}; a repeat only repeats the work (and its rows in the tables), "
            f"so pass each once: -p {name} '{json.dumps(unique(value, identity))}'")


# ---- checks of several parameters together ---------------------------------------------------

def _k_below_samples(v: dict) -> str | None:
    n, k = v.get("n_samples"), v.get("k")
    if isinstance(n, int) and isinstance(k, int) and 1 <= k and n < k + 2:
        return (f"n_samples {n} is too small for k = {k} (chance-adjusted NRS needs k + 2 texts or more); "
                f"pass -p n_samples {k + 2} or more, or a smaller k")
    return None


def _prunable(v: dict) -> str | None:
    """Pruning removes blocks and keeps at least one: every model of ``pruning_models`` whose
    config gives its blocks has 2 or more (a 1-block model was silently left unpruned), and no
    number of ``pruning_ks`` removes them all."""
    blocks = {m: n for m in v.get("pruning_models") or [] if isinstance(m, str) and (n := model_blocks(m)) is not None}
    ks = [k for k in v.get("pruning_ks") or [] if isinstance(k, int) and not isinstance(k, bool)]
    found = [f"pruning_models: {m!r} has {n} block; pruning removes blocks and keeps at least one, so a pruned model "
             f"needs 2 or more: drop it from pruning_models" for m, n in blocks.items() if n < 2]
    fewest = min(((n, m) for m, n in blocks.items() if n >= 2), default=None)
    if fewest and ks and max(ks) >= fewest[0]:
        n, m = fewest
        keep = [k for k in ks if k < n]
        found.append(f"pruning_ks {max(ks)} removes every block of {m!r} ({n} blocks), and a pruned model keeps at "
                     f"least one: pass numbers of at most {n - 1}" + (f", e.g. -p pruning_ks '{json.dumps(keep)}'"
                                                                     if keep else ""))
    return "; ".join(found) or None


def _probe_needs_labels(v: dict) -> str | None:
    task = v.get("encoder_task")
    if v.get("encoder_scorer") != "probe" or not isinstance(task, str):
        return None
    try:
        kind = task_type(task)
    except ValueError:
        return None  # encoder_task's own rule reports it
    if kind not in LABELLED_TEXTS:
        return (f"encoder_scorer 'probe' trains a classifier on one label per text, but encoder_task {task!r} "
                f"is of type {TYPE_NAMES[kind]}; pass -p encoder_scorer mteb, or a classification task as encoder_task")
    return None


def _half_on_an_accelerator(v: dict) -> str | None:
    device, dtype = v.get("device", "cpu"), v.get("dtype", "float32")
    if dtype == "float16" and isinstance(device, str) and device.split(":")[0] == "cpu":
        return ("dtype 'float16' needs an accelerator (-p device cuda): a CPU lacks fast float16 kernels; "
                "pass -p dtype bfloat16 (CPUs with AVX512-BF16 have it) or leave the default float32")
    return None


#: chapter -> checks of several parameters together, each returning a problem or None.
RELATIONS: dict[str, list[Callable[[dict], str | None]]] = {
    "lrd_families": [_k_below_samples],
    "selection_and_pruning": [_k_below_samples, _prunable],
    "cosine_vs_ablation": [_probe_needs_labels, _prunable],
}
#: Checks of every chapter (each returns None where its parameters are absent).
EVERY_CHAPTER: list[Callable[[dict], str | None]] = [_half_on_an_accelerator]


# ---- checking ---------------------------------------------------------------------------------

def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _because(rule: Rule) -> str:
    return f" ({rule.why})" if rule.why else ""


def _range_text(rule: Rule) -> str:
    """``"at least 2"``, ``"above 0 and at most 1"``: the bounds of a number rule in words."""
    low = f"above {_fmt(rule.above)}" if rule.above is not None else (
        f"at least {_fmt(rule.at_least)}" if rule.at_least is not None else "")
    high = f"at most {_fmt(rule.at_most)}" if rule.at_most is not None else (
        f"below {_fmt(rule.below)}" if rule.below is not None else "")
    return " and ".join(b for b in (low, high) if b)


def _number_problem(name: str, value: float, rule: Rule, in_list: bool, example: str = "") -> str | None:
    """What is wrong with one number under ``rule``: not finite (``NaN``, ``Infinity``: JSON
    parses both, and every comparison with NaN is false), or out of its bounds; ``example``:
    a ``-p`` that passes, for the message."""
    what = f"every item of {name}" if in_list else name
    got = f", got {value!r}{_because(rule)}"
    fix = f"; pass e.g. {example}" if example else ""
    if not math.isfinite(value):
        bounds = _range_text(rule)
        return f"{what} must be a finite number{f' ({bounds})' if bounds else ''}{got}{fix}"
    if rule.at_least is not None and value < rule.at_least:
        more = f"pass -p {name} {_fmt(rule.at_least)} or more" if not in_list else \
            f"pass items of {_fmt(rule.at_least)} or more"
        return f"{what} must be at least {_fmt(rule.at_least)}{got}; {more}"
    bad = ((rule.above is not None and value <= rule.above) or (rule.at_most is not None and value > rule.at_most)
           or (rule.below is not None and value >= rule.below))
    if bad:
        return f"{what} must be {_range_text(rule)}{got}{fix}"
    return None


def _example(name: str, default: Any, rule: Rule) -> str:
    """A ``-p`` for the messages: the notebook's default, or the rule's example value."""
    value = default if default is not None else rule.example
    if value is None:
        return ""
    return f"-p {name} '{json.dumps(value)}'" if isinstance(value, (list, tuple)) else f"-p {name} {json.dumps(value)}"


def _folder_problem(name: str, folder: str) -> str | None:
    """Why ``folder`` cannot be a folder the chapter writes into, or ``None``."""
    if not folder.strip():
        return f"{name} is empty; pass a folder, e.g. -p {name} results"
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        return f"{name} {folder!r} is a file, not a folder; pass a folder (it is made when missing)"
    return None


def _task_problem(name: str, task: str, rule: Rule) -> str | None:
    from lrd.engine.tasks import OFFLINE_TASKS

    try:
        kind = task_type(task)
    except ValueError as err:
        return f"{name}: {err}"
    if kind in rule.task_types:
        return None
    wanted = ", ".join(TYPE_NAMES[t] for t in rule.task_types)
    offline = [t for t, spec in OFFLINE_TASKS.items() if spec.type in rule.task_types]
    return (f"{name}: task {task!r} is of type {TYPE_NAMES[kind]}, but {name} takes tasks of type {wanted}"
            f"{_because(rule)}; offline ones: {', '.join(offline)}")


#: Weight files ``from_pretrained`` reads from a folder (by suffix), and sharded checkpoints' indexes.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".h5", ".msgpack")


def _has_weights(folder: Path) -> bool:
    """Whether a model folder holds weights that ``from_pretrained`` could read."""
    return any(p.is_file() and (p.suffix in WEIGHT_SUFFIXES or p.name.endswith(".index.json"))
               for p in folder.iterdir())


def _model_problem(name: str, model: str, rule: Rule) -> str | None:
    from lrd.engine.packs import MODEL_PACKS

    folder = Path(model).expanduser()
    instead = f"pass an offline key ({', '.join(MODEL_PACKS)}), a folder written by save_pretrained, or a hub id"
    if model not in MODEL_PACKS and folder.is_file():
        return (f"{name}: {model!r} is a file, not a model folder; pass the folder that holds config.json, the "
                f"weights and the tokenizer (e.g. {str(folder.parent)!r}), or {instead.removeprefix('pass ')}")
    if model not in MODEL_PACKS and model.startswith((".", "/", "~")) and not folder.is_dir():
        return f"{name}: model folder {model!r} does not exist; {instead}"
    if model not in MODEL_PACKS and folder.is_dir() and not (folder / "config.json").is_file():
        return f"{name}: model folder {model!r} has no config.json; {instead}"
    if model not in MODEL_PACKS and folder.is_dir() and not _has_weights(folder):
        return (f"{name}: model folder {model!r} holds no weights (no *.safetensors, *.bin or *.gguf file, and no "
                f"sharded index); save them beside its config with model.save_pretrained(folder), or {instead.removeprefix('pass ')}")
    if model not in MODEL_PACKS and not folder.exists() and _cached_hub_config(model) is None:
        from lrd.engine.models import hub_reachable, suggest

        if not hub_reachable():  # what load_model would find: nothing (the hub is probed once, in milliseconds to 3 s)
            return (f"{name}: cannot find model {model!r}: it is not an offline key, not a local folder, and not in "
                    f"the local Hugging Face cache while the hub is unreachable.{suggest(model, list(MODEL_PACKS))} "
                    f"Offline, pass an offline key ({', '.join(MODEL_PACKS)}) or a folder written by save_pretrained")
    if model not in MODEL_PACKS and folder.is_dir():  # loads as it is? (packs are pinned and tested)
        from lrd.engine.models import checkpoint_problem

        if problem := checkpoint_problem(model, lm_head=rule.lm_head):
            return f"{name}: {problem}"
    kind = model_kind(model)
    if rule.model_kind == "any" or kind is None or kind == rule.model_kind:
        return None
    offline = [k for k, p in MODEL_PACKS.items() if p.info.get("kind") == rule.model_kind]
    article = {"encoder": "an", "decoder": "a"}
    return (f"{name}: {model!r} is {article[kind]} {kind}, but {name} takes {rule.model_kind}s{_because(rule)}; "
            f"offline {rule.model_kind}s: {', '.join(offline)}")


def _item_problems(name: str, item: Any, rule: Rule, values: dict, in_list: bool, default_items: list,
                   example: str = "") -> list[str]:
    if isinstance(item, bool):
        return []
    if isinstance(item, (int, float)):
        problem = _number_problem(name, item, rule, in_list, example)
        if problem is None and rule.check is not None:
            problem = rule.check(name, item)
        return [problem] if problem else []
    if not isinstance(item, str) or (item == "" and rule.empty_ok):
        return []
    if rule.one_of is not None:
        among = list(values.get(rule.one_of) or [])
        identity = _identity(rule)
        if identity(item) not in {identity(x) for x in among}:
            skip = f", or -p {name} '\"\"' to skip it" if rule.empty_ok else ""
            return [f"{name} {item!r} is not one of {rule.one_of} {among}{_because(rule)}; add it to "
                    f"{rule.one_of}, or pass one of them (e.g. -p {name} {among[0] if among else '...'}){skip}"]
    if item in default_items:
        return []  # the notebook's defaults are valid (tested); no need to look them up
    if rule.path and (problem := _folder_problem(name, item)):
        return [problem]
    if rule.check is not None and (problem := rule.check(name, item)):
        return [problem]
    if rule.choices is not None and item not in (choices := list(rule.choices())):
        return [f"{name}: {item!r} is not one of {', '.join(choices)}{_because(rule)}; pass one of them"]
    if rule.task_types is not None and (problem := _task_problem(name, item, rule)):
        return [problem]
    if rule.model_kind is not None and (problem := _model_problem(name, item, rule)):
        return [problem]
    return []


def _problems_of(name: str, value: Any, rule: Rule, values: dict, default: Any) -> list[str]:
    if value is None:
        numeric = any(b is not None for b in (rule.at_least, rule.at_most, rule.above, rule.below))
        if rule.none_ok or not numeric:
            return []
        return [f"{name} must be a number, not null{_because(rule)}; pass e.g. -p {name} {json.dumps(default)}"]
    in_list = isinstance(value, (list, tuple))
    if in_list and rule.non_empty and not value:
        example = json.dumps(default[:1]) if isinstance(default, list) and default else "[...]"
        needs = f": the chapter needs at least one {rule.model_kind}" if rule.model_kind in ("encoder", "decoder") else ""
        return [f"{name} is empty{needs}{_because(rule)}; pass at least one, e.g. -p {name} '{example}'"]
    if in_list and rule.distinct and (problem := _duplicate_problem(name, list(value), rule)):
        return [problem]
    default_items = list(default) if isinstance(default, (list, tuple)) else [default]
    example = _example(name, default, rule)
    out: list[str] = []
    for item in value if in_list else [value]:
        found = _item_problems(name, item, rule, values, in_list, default_items, example)
        out += [p for p in found if p not in out]
    return out


def problems(chapter: str, values: dict, defaults: dict | None = None) -> list[str]:
    """Every problem of ``values`` (a chapter's parameters) by :data:`RULES` and
    :data:`RELATIONS`; ``[]`` when there is none.

    Parameters
    ----------
    chapter : str
    values : dict
        The parameters the chapter would run with (defaults, profile and overrides merged).
    defaults : dict, optional
        The notebook's defaults: their task names, model names and choices are not looked up,
        and they give the examples in the messages.
    """
    defaults = defaults or {}
    found: list[str] = []
    unruled = {n: Rule() for n, v in values.items() if isinstance(v, (list, tuple))}  # no duplicates either
    for name, rule in {**unruled, **RULES.get(chapter, {})}.items():
        if name in values:
            found += _problems_of(name, values[name], rule, values, defaults.get(name))
    found += [p for check in RELATIONS.get(chapter, []) + EVERY_CHAPTER if (p := check(values)) is not None]
    return found


def check_values(chapter: str, values: dict, defaults: dict | None = None) -> None:
    """Raise one ``ValueError`` naming every problem of ``values`` (:func:`problems`)."""
    if found := problems(chapter, values, defaults):
        raise ValueError(problems_text(chapter, found))


def problems_text(chapter: str, found: list[str]) -> str:
    """The message of :func:`check_values` for ``found`` problems of ``chapter``."""
    if len(found) == 1:
        return f"chapter {chapter!r}: {found[0]}"
    return f"chapter {chapter!r} has {len(found)} bad parameter values:\n" + "\n".join(f"  - {p}" for p in found)


def chapters_problems_text(found: dict[str, list[str]]) -> str:
    """The problems of several chapters (chapter -> its problems) in one message: a problem
    that several chapters share (a bad ``device``) once, naming them, then each chapter's own
    (:func:`problems_text`)."""
    chapters_of: dict[str, list[str]] = {}
    for chapter, ps in found.items():
        for p in ps:
            chapters_of.setdefault(p, []).append(chapter)
    own = {c: [p for p in ps if len(chapters_of[p]) == 1] for c, ps in found.items()}
    lines = [problems_text(c, ps) for c, ps in own.items() if ps]
    shared = [f"chapters {', '.join(map(repr, cs))}: {p}" for p, cs in chapters_of.items() if len(cs) > 1]
    return "\n".join(shared + lines)
