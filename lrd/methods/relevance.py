"""Layer relevance: cosine relevance from one pass, accuracy relevance by removing each block.

For block :math:`l` with input :math:`h_{l-1}` and output :math:`h_l` (token states),

.. math::

    R^{\\cos}_l = 1 - \\frac{1}{\\sum_i T_i}\\sum_i \\sum_{t \\le T_i} \\cos(h_{l-1,i,t}, h_{l,i,t}),
    \\qquad R^{\\mathrm{acc}}_l = \\mathrm{acc}(\\text{model}) - \\mathrm{acc}(\\text{model} \\setminus l).

**Block influence in ShortGPT's code** (icip-cas/ShortGPT: ``ShortGPT.compute_bi`` in
``shortgpt/shortgpt.py`` over the model's ``hidden_states``, ``block_influence`` in
``shortgpt/metrics.py``) differs twice. (1) Hugging Face's ``hidden_states[-1]`` is the last
block's output *after* the model's final norm, so its last block's score compares the block's
input with the normalised output; lrd's :math:`R^{\cos}_L` compares the block's input with its
own output (the definition above, the same for every block, as Hinostroza et al. define it).
The two differ only through the norm's learned gain (and bias): cosines ignore the per-token
rescaling of an RMSNorm with unit gain.
The ShortGPT value is computed in the same pass and kept in ``SweepResult.extra["cosine, last
block after final norm"]`` and as the ``"cosine relevance (ShortGPT last block)"`` rows of
:func:`relevance_rows` (equal to ``"cosine relevance"`` on blocks 1..L-1), so a chapter can show
both. (2) It sums the cosine over every position of the padded batch, pad tokens included (and
scores a zero vector 0.5), so a prompt's score depends on how long the others in its batch are: a
defect, not a definition; lrd averages over real tokens only and keeps doing so.

Removing a set :math:`S` of blocks leaves blocks :math:`1..\\min S - 1` unchanged, so
:func:`removal_sweep` runs each batch once intact, records every block's output, and resumes
each removal from the recorded input of block :math:`\\min S` (a stand-in module replays it):
the blocks before the first removed one are never recomputed. More generally a set
:math:`S = (s_1 < \\dots < s_k)` resumes from the run of its longest prefix
:math:`(s_1, \\dots, s_j)` that is itself in the sweep (the intact run is the empty prefix; every
single block is in the default sweep), at block :math:`s_{j+1}`, whose input that run recorded:
:math:`(3, 9, 15)` starts at block 9 of the run without block 3. The replayed states are the
very tensors the longer path would compute (same batch, same blocks), so the result is
unchanged, and equals running the model under :func:`lrd.engine.ablation.removed_layers`
(``resume=False``; checked in the tests).

References
----------
Hinostroza et al., arXiv:2605.14075 (2026), Sec. 3 (cosine relevance; relevance as accuracy drop).
Men et al., "ShortGPT", arXiv:2403.03853 (2024): Block Influence = the same cosine score.
Gromov et al., "The Unreasonable Ineffectiveness of the Deeper Layers", ICLR 2025, Sec. 3.2.
"""

from __future__ import annotations

import sys
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from lrd.engine.ablation import anatomy, removed_layers, replaced_blocks
from lrd.engine.models import LoadedModel, _get
from lrd.engine.perturb import perturb
from lrd.engine.pipeline import on_accelerator, prefetch
from lrd.engine.scoring import MCRequests, forward_batches, model_logits, request_logprobs
from lrd.methods.pruning import angular_distance  # noqa: F401  (re-exported: it lived here)

__all__ = ["SweepResult", "removal_sweep", "resume_plan", "angular_distance", "taylor_importance",
           "encoder_removal_states"]


class _Replay(torch.nn.Module):
    """Stand-in for blocks ``1..l``: returns their recorded output, ignoring its input."""

    def __init__(self, output):
        super().__init__()
        self.output = output

    def forward(self, *args, **kwargs):
        return self.output


def _hidden(x):
    return x[0] if isinstance(x, (tuple, list)) else x


@contextmanager
def _recording(blocks: Sequence[torch.nn.Module], outputs: Iterable[int] | None = None) -> Iterator[dict]:
    """Record each block's input hidden state and raw output during forwards in the block; with
    ``outputs``, only the raw outputs of those (0-based) blocks."""
    rec: dict = {"in": {}, "out": {}}
    handles = []
    for i, b in enumerate(blocks):
        def pre(mod, args, kwargs, i=i):
            rec["in"][i] = args[0] if args else kwargs["hidden_states"]

        def post(mod, args, kwargs, output, i=i):
            rec["out"][i] = output
        if outputs is None:
            handles.append(b.register_forward_pre_hook(pre, with_kwargs=True))
        if outputs is None or i in outputs:
            handles.append(b.register_forward_hook(post, with_kwargs=True))
    try:
        yield rec
    finally:
        for h in handles:
            h.remove()


def _resumed(blocks: list, types: list | None, rec_out: dict, first: int, removed: set[int]):
    """Block list (and layer types) resuming at 0-based block ``first`` with ``removed`` skipped."""
    keep = [i for i in range(first, len(blocks)) if i not in removed]
    new = ([_Replay(rec_out[first - 1])] if first > 0 else []) + [blocks[i] for i in keep]
    new_types = None if types is None else ([types[first - 1]] if first > 0 else []) + [types[i] for i in keep]
    return new, new_types


@dataclass
class SweepResult:
    """Output of :func:`removal_sweep`.

    Attributes
    ----------
    sets : list of tuple of int
        The removal sets (1-based blocks); ``()`` is the intact model (always first).
    lls : ndarray of shape (n_sets, n_requests)
        Log-likelihood of every request under every removal set.
    cosine : ndarray of shape (L,)
        Cosine relevance of blocks 1..L from the intact pass.
    last_token : ndarray of shape (L + 1, n_inputs, d)
        States of the last input token at layers 0..L (block outputs, before any final norm).
    block_forwards : float
        Work done, in full-model forward passes over the task's inputs (a set resumed at
        block ``m`` costs ``(L - m + 1 - |S|) / L``).
    seconds : float
    """

    sets: list[tuple[int, ...]]
    lls: np.ndarray
    cosine: np.ndarray
    last_token: np.ndarray
    block_forwards: float
    seconds: float
    n_tokens: int = 0
    extra: dict = field(default_factory=dict)


def resume_plan(sets: Sequence[tuple[int, ...]]) -> list[tuple[int, int]]:
    """Where each removal set of a sweep resumes: ``(parent, block)`` per set.

    ``sets[0]`` is the intact model ``()``; the others are sorted tuples of 1-based blocks. Set
    :math:`S` resumes from the run of ``sets[parent]``, its longest proper prefix
    :math:`(s_1..s_j)` in ``sets`` whose run computes the input of block :math:`s_{j+1}` (block
    :math:`s_{j+1} - 1` is not itself removed there), at that block; ``parent`` 0 (intact) and
    block :math:`s_1` is the plain resumption. The blocks run for :math:`S` are then
    :math:`s_{j+1} + 1 .. L` less the rest of :math:`S`.

    >>> resume_plan([(), (3,), (9,), (3, 9, 15), (3, 4), (9, 10)])
    [(0, 0), (0, 3), (0, 9), (1, 9), (0, 3), (0, 9)]
    """
    where = {s: i for i, s in enumerate(sets)}
    plan = [(0, 0)]
    for s in sets[1:]:
        j = max(j for j in range(len(s)) if s[:j] in where and (j == 0 or s[j] - 1 != s[j - 1]))
        plan.append((where[s[:j]], s[j]))
    return plan


def _check_sets(sets, n_layers: int) -> list[tuple[int, ...]]:
    out = [()]
    for s in sets:
        s = tuple(sorted({int(i) for i in s}))
        if s and not (1 <= s[0] and s[-1] <= n_layers):
            raise ValueError(f"removal set {s} has blocks outside 1..{n_layers}")
        if s not in out:
            out.append(s)
    return out


@torch.inference_mode()
def removal_sweep(model: LoadedModel, requests: MCRequests, sets: Sequence[Sequence[int]] | None = None, *,
                  resume: bool = True, batch_size: int = 32, progress: bool | None = None) -> SweepResult:
    """Log-likelihoods of a multiple-choice task with each set of blocks removed.

    Parameters
    ----------
    model : LoadedModel
        A decoder (its anatomy from ``lrd.engine.models.ARCHITECTURES`` or derived).
    requests : MCRequests
        From :func:`lrd.engine.scoring.build_requests`.
    sets : sequence of sequences of int, optional
        Blocks (1..L) to remove together; default: each block alone, ``[[1], [2], ..., [L]]``.
        The intact model is always evaluated first.
    resume : bool
        Resume each removal from recorded states (exact): of the intact run, or of the run of the
        set's longest prefix in ``sets`` (:func:`resume_plan`); ``False`` runs every removal from
        the embeddings (the reference).
    batch_size : int
    progress : bool, optional

    Returns
    -------
    SweepResult
    """
    hf, row = anatomy(model)
    blocks = list(_get(hf, row["blocks"]))
    final_norm = _get(hf, row["final_norm"]) if row.get("final_norm") else None
    cos_normed = 0.0  # ShortGPT's last-block score: the block's input against hidden_states[-1] (final norm)
    n = len(blocks)
    sets = _check_sets([[i] for i in range(1, n + 1)] if sets is None else sets, n)
    types = getattr(hf.config, "layer_types", None)
    lls = np.full((len(sets), len(requests.item)), np.nan)
    cos_sum, n_tok = np.zeros(n), 0
    last = np.zeros((n + 1, len(requests.inputs), model.hidden_size), dtype=np.float32)
    plan = resume_plan(sets)
    needed: dict[int, set[int]] = {}  # run -> 0-based blocks whose outputs its children replay
    for parent, block in plan[1:]:
        if parent:
            needed.setdefault(parent, set()).add(block - 2)
    order = sorted(range(1, len(sets)), key=lambda k: len(sets[k]))  # prefixes before the sets they start
    t0 = time.perf_counter()
    work = 0.0
    feed = forward_batches(model, requests, batch_size=batch_size, progress=progress)
    with closing(feed):  # an error stops the encoding thread at once
        for batch, run in feed:
            rows = batch.rows
            with _recording(blocks) as rec:
                reqs, ll = run()
            got = [(0, reqs, ll)]  # every set's log-likelihoods of this batch, still on the device
            mask = batch.token_mask
            n_tok += batch.n_real
            cos, ends = [], []  # per block, on the device: one host copy per batch, not 2 L + 1
            for i in range(n):
                a, b = rec["in"][i].float(), _hidden(rec["out"][i]).float()
                cos.append(torch.nn.functional.cosine_similarity(a, b, dim=-1)[mask].sum())
                ends.append(a[:, -1])  # left padding: the last position is the last token
            ends.append(_hidden(rec["out"][n - 1])[:, -1].float())
            if final_norm is not None:
                normed = final_norm(_hidden(rec["out"][n - 1])).float()
                cos_normed += float(torch.nn.functional.cosine_similarity(
                    rec["in"][n - 1].float(), normed, dim=-1)[mask].sum())
            outs = {0: rec["out"]}  # each run's recorded block outputs that its children resume from
            for k in order:
                s, (parent, block) = sets[k], plan[k]
                first = block - 1 if resume else 0
                new, new_types = _resumed(blocks, types, outs[parent] if resume else {}, first, {i - 1 for i in s})
                with _recording(blocks, needed.get(k, ())) as child:
                    with replaced_blocks(model, new, new_types):
                        got.append((k, *run()))
                if k in needed:
                    outs[k] = child["out"]
                work += (len(new) - (first > 0)) / n * len(rows) / len(requests.inputs)
            del rec, outs
            cos_host, ends_host, lls_host = (torch.stack(x).cpu().numpy() for x in (cos, ends, [ll for *_, ll in got]))
            for i in range(n):
                cos_sum[i] += float(cos_host[i])  # float64 sums of float32 batch sums, in block order
            last[:, rows] = ends_host
            for (k, reqs, _), ll in zip(got, lls_host):
                lls[k, reqs] = ll
    work += 1.0
    cosine = 1.0 - cos_sum / max(n_tok, 1)
    extra = {}
    if final_norm is not None:
        extra["cosine, last block after final norm"] = 1.0 - cos_normed / max(n_tok, 1)
    return SweepResult(sets, perturb(lls, tag="removal_sweep/lls"), perturb(cosine, tag="removal_sweep/cosine"),
                       perturb(last, tag="removal_sweep/last_token"), work, time.perf_counter() - t0, n_tok, extra)



@contextmanager
def _grad_on_embeddings(model: LoadedModel):
    hf, row = anatomy(model)
    params = [(p, p.requires_grad) for p in hf.parameters()]
    emb = _get(hf, row["embeddings"])
    handle = emb.register_forward_hook(lambda m, a, out: out.requires_grad_())
    try:
        for p, _ in params:
            p.requires_grad_(False)
        yield
    finally:
        handle.remove()
        for p, flag in params:
            p.requires_grad_(flag)


def taylor_importance(model: LoadedModel, requests: MCRequests, *, batch_size: int = 16) -> np.ndarray:
    """First-order Taylor estimate of the loss change when each block is removed.

    Removing block :math:`l` replaces :math:`h_l` by :math:`h_{l-1}`; to first order the loss
    (negative log-likelihood of the gold choices) changes by

    .. math:: \\Delta \\mathcal L_l \\approx -\\Big\\langle \\frac{\\partial \\mathcal L}{\\partial h_l},
              h_l - h_{l-1} \\Big\\rangle,

    summed over tokens and items; the importance is :math:`|\\Delta \\mathcal L_l|`. A
    reconstruction in the spirit of LLM-Pruner's first-order block importance (Ma et al., 2023),
    taken with respect to the block's output rather than its weights (one backward pass).

    Returns
    -------
    ndarray of shape (L,)
    """
    hf, row = anatomy(model)
    blocks = list(_get(hf, row["blocks"]))
    gold = set(np.flatnonzero(requests.choice == requests.labels[requests.item]).tolist())
    total = np.zeros(len(blocks))
    with _grad_on_embeddings(model):
        feed = forward_batches(model, requests, batch_size=batch_size, progress=False)
        with closing(feed):
            for batch, _ in feed:
                if not gold.intersection(batch.requests):
                    continue
                with _recording(blocks) as rec:
                    logits = model_logits(model, batch)
                    outs = [_hidden(rec["out"][i]) for i in range(len(blocks))]
                    for o in outs:
                        o.retain_grad()
                    ll = request_logprobs(model, batch, requests, logits)
                    loss = -sum(ll[n] for n, j in enumerate(batch.requests) if j in gold)
                    loss.backward()
                    m = batch.token_mask
                    for i, o in enumerate(outs):
                        total[i] += -(o.grad * (o - rec["in"][i]))[m].sum().item()
    return np.abs(perturb(total, tag="taylor_importance"))


@torch.inference_mode()
def encoder_removal_states(model: LoadedModel, texts: Sequence[str], *, sets: Sequence[Sequence[int]] | None = None,
                           batch_size: int = 32, max_length: int | None = None,
                           progress: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean-pooled final-layer states with blocks removed, resumed from the intact pass.

    Each removal set :math:`S` is resumed from the intact pass's recorded output of block
    :math:`\\min S - 1`, so blocks before the first removed one are not recomputed; the result
    equals running the model under :func:`lrd.engine.ablation.removed_layers` (checked in the tests).

    Parameters
    ----------
    sets : sequence of sequences of int, optional
        Blocks (1..L) removed together, one entry per output row after the intact one;
        default: each block alone, ``[[1], ..., [L]]``.
    max_length : int, optional
        Texts are truncated to this many tokens; default as :func:`lrd.engine.extract.extract`:
        512, or fewer when the model's position table is shorter.

    Returns
    -------
    pooled : ndarray of shape (1 + len(sets), n_texts, d)
        Row 0 intact, row ``i`` with ``sets[i - 1]`` removed (default: row ``l`` without block ``l``).
    cosine : ndarray of shape (L,)
        Cosine relevance of each block (over real tokens).
    """
    from lrd.engine.extract import batch_token_limit, model_batches, pool, resolve_max_length

    hf, row = anatomy(model)
    blocks = list(_get(hf, row["blocks"]))
    n = len(blocks)
    sets = [[l] for l in range(1, n + 1)] if sets is None else [sorted({int(i) for i in s}) for s in sets]
    bad = [s for s in sets if s and not (1 <= s[0] and s[-1] <= n)]
    if bad:
        raise ValueError(f"removal sets {bad} have blocks outside 1..{n}")
    pooled = np.zeros((len(sets) + 1, len(texts), model.hidden_size), dtype=np.float32)
    cos_sum, n_tok = np.zeros(n), 0
    progress = sys.stderr.isatty() if progress is None else progress
    # as extraction truncates and batches: at most 512 tokens, no more than the model's position table takes
    batches = model_batches(model, texts, batch_size=batch_size, max_batch_tokens=batch_token_limit(model, None),
                            max_length=resolve_max_length(model, max_length), padding_side="right")
    bar = tqdm(total=len(texts), disable=not progress, desc=f"ablate {model.name}", unit="text")
    with closing(prefetch(batches, background=on_accelerator(model.device))) as feed:  # an error stops the producer thread at once
        for idx, input_ids, attention_mask in feed:
            n_tok += int(attention_mask.sum())  # on the host
            enc = {"input_ids": input_ids.to(model.device, non_blocking=True),
                   "attention_mask": attention_mask.to(model.device, non_blocking=True)}
            with _recording(blocks) as rec:
                out = hf(**enc).last_hidden_state
            rows = [pool(out, enc["attention_mask"], "mean").float()]
            m = enc["attention_mask"].bool()
            cos = [torch.nn.functional.cosine_similarity(rec["in"][i].float(), _hidden(rec["out"][i]).float(),
                                                         dim=-1)[m].sum() for i in range(n)]
            for s in sets:
                if not s:
                    rows.append(rows[0])
                    continue
                new, _ = _resumed(blocks, None, rec["out"], s[0] - 1, {i - 1 for i in s})
                with replaced_blocks(model, new):
                    out = hf(**enc).last_hidden_state
                rows.append(pool(out, enc["attention_mask"], "mean").float())
            del rec, out
            pooled[:, idx] = torch.stack(rows).cpu().numpy()  # one host copy per batch
            for i, c in enumerate(torch.stack(cos).cpu().numpy()):
                cos_sum[i] += float(c)  # float64 sums of float32 batch sums, in block order
            bar.update(len(idx))
    bar.close()
    cosine = 1.0 - cos_sum / max(n_tok, 1)
    return perturb(pooled, tag="encoder_removal/pooled"), perturb(cosine, tag="encoder_removal/cosine")


def naive_removal_lls(model: LoadedModel, requests: MCRequests, sets: Sequence[Sequence[int]], *,
                      batch_size: int = 32) -> np.ndarray:
    """Reference for :func:`removal_sweep`: every set run from the embeddings (no reuse)."""
    from lrd.engine.scoring import loglikelihoods

    out = [loglikelihoods(model, requests, batch_size=batch_size, progress=False)]
    for s in sets:
        with removed_layers(model, s):
            out.append(loglikelihoods(model, requests, batch_size=batch_size, progress=False))
    return np.stack(out)



def probe_accuracy(states: np.ndarray, task, *, C: float = 1.0) -> float:
    """Test accuracy of a logistic-regression probe trained on the task's train split.

    Parameters
    ----------
    states : ndarray of shape (n_texts, d)
        One pooled state per row of ``task.frame`` (its ``split`` column picks train/test).
    task : lrd.Task
        A classification task.
    C : float
        Inverse L2 strength (scikit-learn's default); features are standardised first.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.asarray(states, dtype=np.float64)
    if x.shape[0] != len(task.frame) or not np.isfinite(x).all():
        raise ValueError(f"states must be finite with one row per task row ({len(task.frame)}), got {x.shape}")
    train = (task.frame["split"] == "train").to_numpy()
    y = task.labels
    if len(np.unique(y[train])) < 2 or (~train).sum() == 0:
        raise ValueError(f"task {task.name} needs two classes in its train split and a test split")
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))
    clf.fit(x[train], y[train])
    return float(clf.score(x[~train], y[~train]))


def mteb_score(states: np.ndarray, task) -> float:
    """The MTEB main score of one layer's pooled states, by the mid-layer chapter's protocol.

    ``states`` of shape (len(task.texts), d); :func:`lrd.methods.evaluate.evaluate_layers` on it alone
    (classification: logistic regression on 8 examples per label, 10 experiments, accuracy).
    """
    from lrd.methods.evaluate import evaluate_layers

    return float(evaluate_layers(np.asarray(states)[None], task)[0])


# Encoder scores (higher = better) by name, so that a chapter parameter can choose one, with the
# sentence a chapter prints for each.
ENCODER_SCORERS = {"mteb": mteb_score, "probe": probe_accuracy}
ENCODER_SCORER_DESCRIPTIONS = {
    "mteb": "the task's MTEB main score by the protocol of the mid-layer chapter (lrd.methods.evaluate)",
    "probe": "the test accuracy of a logistic-regression probe on the task's train/test split",
}


def relevance_rows(sweep: SweepResult, requests: MCRequests, *, model: str, task: str,
                   metric: str = "acc") -> tuple[pd.DataFrame, np.ndarray]:
    """Tidy relevance rows of a single-block sweep, and the per-item correctness behind them.

    Returns
    -------
    rows : DataFrame
        ``model, task, measurement, layer, depth, value`` for ``cosine relevance`` and
        ``accuracy relevance`` (full ``metric`` minus ``metric`` with the block removed),
        blocks 1..L.
    correct : ndarray of shape (L + 1, n_items)
        0/1 correctness (row 0 intact, row ``l`` without block ``l``).
    """
    from lrd.tables import per_layer
    from lrd.engine.scoring import mc_accuracy

    n = len(sweep.cosine)
    where = {s: i for i, s in enumerate(sweep.sets)}
    missing = [l for l in range(1, n + 1) if (l,) not in where]
    if missing:
        raise ValueError(f"the sweep lacks single-block removals {missing}; include every [l] in its sets")
    correct = mc_accuracy(sweep.lls[[0] + [where[(l,)] for l in range(1, n + 1)]], requests)[metric]
    acc = correct.mean(1)
    layers = np.arange(1, n + 1)
    frames = []
    if "cosine, last block after final norm" in sweep.extra:  # ShortGPT's block influence (module docstring)
        shortgpt = np.array(sweep.cosine, dtype=float)
        shortgpt[-1] = sweep.extra["cosine, last block after final norm"]
        frames.append(per_layer(shortgpt, model=model, task=task, measurement="cosine relevance (ShortGPT last block)",
                                layers=layers, n_layers=n))
    rows = pd.concat([per_layer(sweep.cosine, model=model, task=task, measurement="cosine relevance",
                                layers=layers, n_layers=n), *frames,
                      per_layer(acc[0] - acc[1:], model=model, task=task, measurement="accuracy relevance",
                                layers=layers, n_layers=n)], ignore_index=True)
    return rows, correct


def pruning_correct(sweep: SweepResult, requests: MCRequests, plan: pd.DataFrame, *,
                    metric: str = "acc") -> np.ndarray:
    """Per-item 0/1 ``metric`` of each row of a :func:`lrd.methods.pruning.pruning_sets` plan, from
    a sweep run with ``sets = plan["removed"]``; shape (len(plan), n_items)."""
    from lrd.engine.scoring import mc_accuracy

    where = {s: i for i, s in enumerate(sweep.sets)}
    per_item = mc_accuracy(sweep.lls, requests)[metric]
    return np.stack([per_item[where[tuple(s)]] for s in plan["removed"]])


def calibration_plan(model: LoadedModel, calibration: dict[str, MCRequests], ks: Sequence[int], *,
                     n_random: int = 5, batch_size: int = 32) -> tuple[pd.DataFrame, list[SweepResult]]:
    """Rank blocks on calibration items with every rule and list the blocks each rule prunes.

    Rules (see :func:`lrd.methods.pruning.pruning_sets`): cosine relevance (Block Influence),
    accuracy relevance (ties broken by the mean log-likelihood drop), first-order Taylor
    importance, Gromov's angular distance, and ``n_random`` random orders. Scores are averaged
    (Taylor: summed) over the calibration tasks.

    Returns
    -------
    plan : DataFrame ``rule, seed, k, removed``
    sweeps : the single-block calibration sweeps (for counting work)
    """
    from lrd.methods.pruning import pruning_sets

    sweeps = {t: removal_sweep(model, r, batch_size=batch_size) for t, r in calibration.items()}
    acc = np.mean([relevance_rows(s, calibration[t], model=model.name, task=t)[0].query(
        "measurement == 'accuracy relevance'")["value"].to_numpy() for t, s in sweeps.items()], axis=0)
    ll_drop = np.mean([(s.lls[0] - s.lls[1:]).mean(1) for s in sweeps.values()], axis=0)
    scores = {"cosine (BI)": np.mean([s.cosine for s in sweeps.values()], axis=0),
              "accuracy (calibration)": acc,
              "Taylor (first order)": np.sum([taylor_importance(model, r) for r in calibration.values()], axis=0)}
    dist = np.mean([angular_distance(s.last_token) for s in sweeps.values()], axis=0)
    plan = pruning_sets(scores, list(ks), distance=dist, n_random=n_random,
                        tiebreak={"accuracy (calibration)": ll_drop})
    return plan, list(sweeps.values())


def pruning_table(plan: pd.DataFrame, intact: float, tasks: Sequence[str]) -> pd.DataFrame:
    """Pruning curves: the plan with ``acc`` = mean over ``tasks`` columns, plus ``k = 0`` rows
    (the intact accuracy) for every rule and seed."""
    curves = plan.assign(acc=plan[list(tasks)].mean(axis=1))
    start = curves[["rule", "seed"]].drop_duplicates().assign(k=0, acc=intact)
    start["removed"] = [()] * len(start)
    return pd.concat([start, curves], ignore_index=True).sort_values(["rule", "seed", "k"], ignore_index=True)
