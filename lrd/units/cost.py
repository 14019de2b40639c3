"""What a chapter's units cost: forward-pass FLOPs from each model's size and the design's token
counts, and CPU seconds of fits and training measured on this project's machine.

**Forward passes.** A forward pass costs about ``2 x N`` FLOPs per token, ``N`` the parameters
outside the embedding matrices (an embedding is a lookup; Kaplan et al. 2020, Sec. 2.1), plus
``2 x vocab x hidden`` per token where a decoder's language-model head scores answers (the
multiple-choice units); attention's own ``O(seq^2)`` term is left out (the book's texts are
short: :data:`TASK_TOKENS`). Tokens per unit follow each unit function's own loop over its
parameters (:func:`unit_tokens`): rows x texts per row x tokens per text for embedding tasks;
items x the tokens of all their choices, times the passes (intact, one per removed block, each
pruning plan) for the removal sweeps, a removal resumed from the state below its block
(:func:`lrd.methods.relevance.removal_sweep`: on average half a pass). GPU-hours are those FLOPs at a stated share of a stated
device's peak (:data:`GPU`, :data:`UTILISATION`).

**Fits and training.** The per-layer classifier fits (mid-layer, selection) and the aggregators'
training (Cayley) run on CPUs whatever the device: seconds per unit of work
(:data:`FIT_SECONDS`), measured on this project's 2-core machine from the cold book of
2026-12-05 (``benchmarks/fresh_clone/2026-12-05-894fbb1.json``: each chapter's time less its
forward passes at :data:`CPU_FLOPS`). Against the five most recent measured cold books of the
offline panel (``benchmarks/fresh_clone/2026-12-04*`` and ``2026-12-05*``; tests/test_panels.py),
the chapters run in order sharing their cached states (:func:`book_estimates`), measured /
estimated is 0.56-0.78 for the six chapters together (the estimate is 1.3 to 1.8 times high), and
per chapter from 0.65-1.05 (models and tasks, mid-layer, Cayley: the calibrated ones) down to
0.29-0.57 (selection and pruning, the removal sweeps of the cosine chapter, whose pruning passes
are counted in full): an upper bound for a chapter run cold on a panel, not a prediction to the
minute. Older books (2026-12-02 and 03) ran other code and designs.
Per unit, where a unit records its
own work: the ci reference's removal sweeps on SmolLM2 recorded 3,059 token passes against 3,762
estimated (0.81; ``tests/nbval/cosine_vs_ablation.ipynb``).

Nothing here loads a model or reads a data pack: a dry run costs a panel offline in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lrd.units.panels import MODELS, HubModel

#: Offline tasks: (texts per row, tokens per text, tokens of one multiple-choice item with all its
#: choices) over the first 300 rows, counted with the Qwen2.5 tokenizer of the ``qwen`` pack
#: (benchmarks/task_tokens.py, 2026-12-06). Pair and STS tasks embed each distinct sentence once
#: (lee50: 50 documents for its 1225 pairs); a multiple-choice item is scored with the choices that
#: share its context packed into one row (:func:`lrd.engine.scoring.build_requests`), so its
#: context counts once.
TASK_TOKENS: dict[str, tuple[float, float, float | None]] = {
    "sst2": (1.0, 23.2, None), "tweet_sentiment": (1.0, 29.9, None), "sarcasm": (1.0, 13.4, None),
    "mmlu_subject": (1.0, 61.7, None), "mrpc": (1.98, 26.7, None), "lee50": (0.167, 99.3, None),
    "arc_easy": (1.0, 26.2, 44.5), "arc_challenge": (1.0, 30.7, 53.9), "hellaswag": (1.0, 53.2, 171.6),
    "piqa": (1.0, 12.4, 54.8), "winogrande": (1.0, 16.4, 43.8), "boolq": (1.0, 143.1, 145.1),
    "mmlu": (1.0, 55.4, 85.7), "sciq": (1.0, 105.5, 113.5), "openbookqa": (1.0, 11.9, 26.7),
    "copa": (1.0, 7.6, 20.9),
}
#: A task not measured above (an MTEB task from the hub): an assumption, stated where it is used.
DEFAULT_TOKENS = (1.0, 64.0, 256.0)
#: Rows a task gives when a unit asks for all of them (``n=None``): the book's own full tasks.
FULL_ROWS = 1000

#: The device GPU-hours are stated for, its dense bf16 peak (NVIDIA H100 SXM datasheet: 989 TFLOP/s
#: without sparsity), and the share of it assumed reached (small batches of short texts).
GPU = ("NVIDIA H100 SXM", 989e12)
UTILISATION = 0.40

#: Bytes per second at which a hub model is downloaded and read (an assumption, not measured here:
#: a data-centre link and disk), at 2 bytes per parameter (bf16 weights).
LOAD_BYTES_PER_S = 200e6

#: Effective forward FLOP/s of this project's machine (2 cores, bf16 on CPU, loading included):
#: the ``models_and_tasks`` chapter of the 2026-12-05 cold book (139.4 s for the eight offline
#: models, 300 SST-2 texts each: nearly all forward passes and model loads) over its estimated
#: FLOPs (2.93e13).
CPU_FLOPS = 2.10e11

#: CPU seconds per unit of fit work, by unit function (:func:`fit_work` says what one unit is),
#: from the same cold book: each chapter's time less its forward passes at :data:`CPU_FLOPS`
#: (those its states were not already cached for by an earlier chapter: :func:`book_estimates`),
#: over its fit work: mid-layer (908.5 - 520) s / 1064 = 0.37 s, Cayley (1067.1 - 180) s / 1926 =
#: 0.46 s. The other chapters' measured times were below their forward estimate, so their fits
#: are priced 0.
FIT_SECONDS: dict[str, float] = {"mid_layer_model": 0.37, **dict.fromkeys(
    ["cayley_task_scores", "cayley_ablation", "cayley_mappings", "cayley_few_shot"], 0.46)}

#: Pruning plans per pruned model and removal budget: the book's prune rules
#: (:data:`lrd.methods.pruning.PRUNE_RULES`, 7 besides random) and ``n_random`` random orders.
PRUNE_RULES = 7


@dataclass(frozen=True)
class UnitCost:
    """One unit's estimated cost: ``flops`` of forward passes (None: the model's size is not
    known here) and ``cpu_seconds`` of fits and training on this project's machine."""

    label: str
    model: str
    flops: float | None
    cpu_seconds: float

    @property
    def gpu_hours(self) -> float | None:
        return None if self.flops is None else self.flops / (GPU[1] * UTILISATION) / 3600


def size_of(model: str, offline: dict[str, HubModel] | None = None) -> HubModel | None:
    """The published size of ``model``: a hub id of :data:`lrd.units.panels.MODELS`, or an
    offline key of :data:`lrd.units.panels.OFFLINE`; None otherwise."""
    from lrd.units.panels import OFFLINE

    return MODELS.get(model) or (offline or OFFLINE).get(model)


def tokens(task: str, rows: int | None) -> float:
    """Tokens of one pass over ``rows`` rows of ``task``'s texts (all rows: :data:`FULL_ROWS`)."""
    per_row, per_text, _ = TASK_TOKENS.get(task, DEFAULT_TOKENS)
    return (FULL_ROWS if rows is None else rows) * per_row * per_text


def mc_tokens(task: str, items: int) -> float:
    """Tokens of one scoring pass over ``items`` multiple-choice items (every choice)."""
    return items * (TASK_TOKENS.get(task, DEFAULT_TOKENS)[2] or DEFAULT_TOKENS[2])


def unit_passes(name: str, p: dict, m: HubModel) -> list[tuple[tuple | None, float, float]]:
    """The forward passes of a unit: ``(key, embedding tokens, scoring tokens)`` each, the scoring
    tokens through the language-model head too. Follows each unit function's loop over its
    parameters. ``key`` names a pass whose pooled states the hidden-state cache keeps (a task's
    rows with a pooling, or one set of augmented views), which any later unit of the same model
    and dtype finds there (:func:`lrd.engine.extract.extract`); ``None`` for passes that always
    run (token states, removal sweeps, scoring)."""
    L = m.layers
    sweep = 1 + (L + 1) / 2  # intact, then each block removed alone, resumed from the state below it

    def task(t, n, pooling="mean"):
        return (("task", t, n, pooling), tokens(t, n), 0.0)

    def views(q):
        return (("views", q["aug_task"], q["n_aug_prompts"], q["n_views"], q["pooling"]),
                q["n_aug_prompts"] * q["n_views"] * tokens(q["aug_task"], 1), 0.0)

    if name in ("models_and_tasks_probe", "lrd_families_profile"):
        return [task(p["task"], p.get("n_samples"), p.get("pooling", "mean"))]
    if name == "cayley_task_scores":  # every layer mean-pooled (the paper's z_l)
        return [task(p["task"], p.get("n_samples"))]
    if name in ("cayley_ablation", "cayley_mappings", "cayley_few_shot"):
        return []  # the states of cayley_task_scores, cached
    if name == "mid_layer_model":
        token_task = p["token_task"] if p.get("n_token_prompts") else None  # token states are not cached
        return ([(None, tokens(t, p["n_samples"]), 0.0) if t == token_task else task(t, p["n_samples"], p["pooling"])
                 for t in p["tasks"]] + [views(p)])
    if name == "ablation_encoder":
        return [(None, sweep * tokens(p["task"], p["n_encoder"]), 0.0)]
    if name == "ablation_decoder":
        scored = sum(sweep * mc_tokens(t, p["n_items"]) for t in p["tasks"])
        if p.get("pruning"):
            plans = len(p["pruning_ks"]) * (PRUNE_RULES + p["n_random"])
            scored += sum(sweep * mc_tokens(t, p["n_calibration"]) + plans * mc_tokens(t, p["n_items"])
                          for t in p["tasks"])
        return [(None, 0.0, scored)]
    if name == "selection_model":
        out = [task(t, p["n_samples"], p["pooling"]) for t in p["tasks"]] + [views(p)]
        plans = len(p["budgets"]) * (PRUNE_RULES + p["n_random"]) if p.get("prune") else 0
        if m.kind == "decoder":
            out.append((None, 0.0, sum((1 + plans) * mc_tokens(t, p["n_items"]) + sweep * mc_tokens(t, p["n_calibration"])
                                       for t in p["mc_tasks"])))
        else:
            out.append(task(p["calibration_task"], p["n_encoder_calibration"], p["pooling"]))
            removals = (sweep - 1) * tokens(p["calibration_task"], p["n_encoder_calibration"]) if plans else 0.0
            out.append((None, removals + plans * sum(tokens(t, p["n_samples"]) for t in p["tasks"]), 0.0))
        return out
    raise KeyError(name)


def unit_tokens(name: str, p: dict, m: HubModel) -> tuple[float, float]:
    """Tokens a unit passes through the model when nothing is cached: ``(embedding, scoring)``
    (:func:`unit_passes`, summed)."""
    passes = unit_passes(name, p, m)
    return sum(e for _, e, _ in passes), sum(s for _, _, s in passes)


def fit_work(name: str, p: dict, m: HubModel) -> float:
    """Units of CPU fit work of a unit (what :data:`FIT_SECONDS` prices): per-layer fits are
    ``states x tasks x rows / 300`` (twice for a decoder's final-norm variant in the mid-layer
    chapter); an aggregator's training is ``methods x seeds x rows / 300`` (mappings and shots
    counting as methods)."""
    states, rows = m.layers + 1, (p.get("n_samples") or FULL_ROWS) / 300
    if name == "mid_layer_model":
        return states * len(p["tasks"]) * rows * (2 if m.kind == "decoder" else 1)
    if name in ("selection_model", "lrd_families_profile"):
        return states * len(p.get("tasks", [p.get("task")])) * rows
    if name == "cayley_task_scores":
        return len(p["methods"]) * len(p["seeds"]) * rows
    if name in ("cayley_ablation", "cayley_mappings"):
        return p["n_mappings"] * len(p["seeds"]) * rows
    if name == "cayley_few_shot":
        return len(p["methods"]) * len(p["shots"]) * len(p["seeds"])
    return 0.0


def unit_cost(unit, offline: dict[str, HubModel] | None = None, cached: set | None = None) -> UnitCost:
    """:class:`UnitCost` of one :class:`lrd.units.base.Unit` (its model's size from the panels'
    data, never from its files). ``cached``: the keys of passes already made (by earlier units of
    the same estimate), which this unit finds in the hidden-state cache; its own are added."""
    m = size_of(unit.model, offline)
    if m is None:
        return UnitCost(unit.label, unit.model, None, 0.0)
    cached = set() if cached is None else cached
    embed = scored = 0.0
    for key, e, sc in unit_passes(unit.name, unit.params, m):
        if key is not None:
            key = (unit.model, unit.dtype, *key)
            if key in cached:
                continue
            cached.add(key)
        embed, scored = embed + e, scored + sc
    per_token = 2 * (m.params - m.embedding_params)
    flops = per_token * (embed + scored) + 2 * m.lm_head_params * scored
    return UnitCost(unit.label, unit.model, flops, FIT_SECONDS.get(unit.name, 0.0) * fit_work(unit.name, unit.params, m))


@dataclass(frozen=True)
class Estimate:
    """A set of units' estimated cost: per unit, and in total."""

    units: list[UnitCost]

    @property
    def flops(self) -> float:
        return sum(u.flops or 0.0 for u in self.units)

    @property
    def gpu_hours(self) -> float:
        return sum(u.gpu_hours or 0.0 for u in self.units)

    @property
    def cpu_hours(self) -> float:
        return sum(u.cpu_seconds for u in self.units) / 3600

    @property
    def unknown(self) -> list[str]:
        """Models whose size is not in the panels' data (their forward passes are not counted)."""
        return list(dict.fromkeys(u.model for u in self.units if u.flops is None))

    @property
    def load_hours(self) -> float:
        """Hours to download and read each hub model once (bf16, :data:`LOAD_BYTES_PER_S`)."""
        models = dict.fromkeys(u.model for u in self.units if u.model in MODELS)
        return sum(2 * MODELS[m].params for m in models) / LOAD_BYTES_PER_S / 3600

    def this_machine_seconds(self) -> float:
        """The same work on this project's 2-core machine: forward passes at :data:`CPU_FLOPS`
        plus the fits."""
        return self.flops / CPU_FLOPS + sum(u.cpu_seconds for u in self.units)

    def summary(self) -> str:
        """One paragraph: FLOPs, GPU-hours (with the device and utilisation), CPU-hours."""
        text = (f"forward passes {self.flops:.3g} FLOPs = {self.gpu_hours:.3g} GPU-hours on an {GPU[0]} at "
                f"{UTILISATION:.0%} of its bf16 peak ({GPU[1] / 1e12:.0f} TFLOP/s, an assumption); downloading and "
                f"reading the hub models {self.load_hours:.2g} hours (bf16 at an assumed "
                f"{LOAD_BYTES_PER_S / 1e6:.0f} MB/s); fits and training {self.cpu_hours:.3g} CPU-hours (measured on "
                f"this project's 2-core machine; they run on CPU cores beside the GPU)")
        if self.unknown:
            text += f"; not counted (size unknown here): {', '.join(self.unknown)}"
        return text


def estimate(units: Sequence, offline: dict[str, HubModel] | None = None, cached: set | None = None) -> Estimate:
    """:class:`Estimate` of ``units`` (:class:`lrd.units.base.Unit`) run in order from an empty
    hidden-state cache (``cached``: the passes made before them, updated)."""
    cached = set() if cached is None else cached
    return Estimate([unit_cost(u, offline, cached) for u in units])


def book_estimates(chapters: Sequence[str], parameters: dict | None = None) -> dict[str, Estimate]:
    """Each chapter's :class:`Estimate` when ``chapters`` run in order, cold, sharing one
    hidden-state cache as ``lrd book`` does (``parameters``: chapter -> overrides of its defaults)."""
    from lrd.book.notebooks import default_parameters
    from lrd.units.registry import declared

    cached: set = set()
    return {c: estimate(declared(c, {**default_parameters(c), **(parameters or {}).get(c, {})}), cached=cached)
            for c in chapters}


def chapter_estimate(chapter: str, parameters: dict | None = None) -> Estimate:
    """:class:`Estimate` of ``chapter`` run with ``parameters`` over its notebook's defaults
    (unchecked: a planner varies the design, e.g. ``{"models": [...], "n_samples": 600}``);
    reads no model and no data."""
    from lrd.book.notebooks import default_parameters
    from lrd.units.registry import declared

    return estimate(declared(chapter, {**default_parameters(chapter), **(parameters or {})}))
