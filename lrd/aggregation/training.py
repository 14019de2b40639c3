"""Training the aggregation methods the same way: Adam, early stopping on a held-out 15%, seeds.

All seeds of one method are trained at once: the seeds' models are stacked
(:func:`torch.func.stack_module_state`) and run with :func:`torch.vmap`; Adam and weight decay
act elementwise, so this is exactly independent training, only vectorised. A seed fixes the
initialisation, the dropout masks, the minibatch order and its own stratified validation split.

References
----------
Ulanovski, Blyachman and Bechler-Speicher, arXiv:2603.22665, section 4 and the ``ilge``
package's training loop (Adam, lr 1e-3, weight decay 1e-4, batch 64, early stopping).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state



@dataclass(frozen=True)
class TrainConfig:
    """Optimiser and stopping rule (the paper's Adam settings; epochs and patience are ours).

    Early stopping watches the validation loss (our validation sets have tens of examples, so
    accuracy moves in coarse steps) and restores each seed's best weights.
    """

    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 64
    max_epochs: int = 40
    patience: int = 5
    val_fraction: float = 0.15
    threads: int | None = 1  # torch CPU threads while training (None: leave as is); see fit
    device: str = "cpu"  # where the seeds' models train: the unit's model's device ("cuda", ...)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run with ``n`` torch CPU threads, restoring the previous number afterwards."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def stratified_holdout(labels: np.ndarray | None, n: int, fraction: float, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``0..n-1`` into (train, validation) with ``round(fraction * n)`` validation items.

    With ``labels``, items are ordered by label and a seeded random key and the validation set
    takes evenly spaced ranks, so every class keeps (within one item) its share even when a
    class has fewer items than 1 / fraction. Without labels the split is uniformly random.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    n_val = max(1, int(round(fraction * n)))
    if n_val >= n:
        raise ValueError(f"{n} items are too few for a {fraction:.0%} validation split")
    rng = np.random.default_rng(seed)
    if labels is None:
        order = rng.permutation(n)
    else:
        labels = np.asarray(labels)
        if len(labels) != n:
            raise ValueError(f"{len(labels)} labels for {n} items")
        order = np.lexsort((rng.random(n), labels))
    ranks = np.floor((np.arange(n_val) + 0.5) * n / n_val).astype(int)
    val = np.sort(order[ranks])
    return np.setdiff1d(np.arange(n), val), val


def few_shot_indices(labels: np.ndarray, per_class: int, *, seed: int) -> np.ndarray:
    """``per_class`` seeded random items of every class (all of a class that has fewer)."""
    if per_class < 1:
        raise ValueError(f"per_class must be positive, got {per_class}")
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    picks = [rng.permutation(np.flatnonzero(labels == c))[:per_class] for c in np.unique(labels)]
    return np.sort(np.concatenate(picks))


# ----------------------------------------------------------------------------- objectives


class Classification:
    """Cross-entropy on ``x`` (N, S, d) with integer labels ``y`` (N,)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor):
        self.x, self.y = x, y

    def to(self, device) -> "Classification":
        """The same objective with its tensors on ``device`` (itself when they are there)."""
        return self if self.x.device == torch.device(device) else Classification(self.x.to(device), self.y.to(device))

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.x[idx], self.y[idx]

    @staticmethod
    def _logits(call: Callable, x: torch.Tensor) -> torch.Tensor:
        out = call(x)  # (b, C) or (b, G, C)
        return out if out.dim() == 3 else out[:, None]

    def loss(self, call: Callable, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = self._logits(call, x)
        target = y[:, None].expand(-1, out.shape[1])
        return F.cross_entropy(out.transpose(1, 2), target, reduction="none").mean(0)  # (G,)

    def predict(self, call: Callable, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self._logits(call, x).argmax(-1)  # (b, G)


class Similarity:
    """Mean squared error between the cosine of two embeddings and a similarity score.

    ``x`` holds one state stack per document (D, S, d); item i is the pair ``pairs[i]`` with
    target ``scores[i]``. Every step embeds all D documents once and reads the pairs off them.
    """

    def __init__(self, x: torch.Tensor, pairs: torch.Tensor, scores: torch.Tensor):
        self.x, self.pairs, self.scores = x, pairs, scores

    def to(self, device) -> "Similarity":
        """The same objective with its tensors on ``device`` (itself when they are there)."""
        if self.x.device == torch.device(device):
            return self
        return Similarity(self.x.to(device), self.pairs.to(device), self.scores.to(device))

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.pairs[idx], self.scores[idx]

    def _cosine(self, call: Callable, pairs: torch.Tensor) -> torch.Tensor:
        emb = call(self.x)
        return F.cosine_similarity(emb[pairs[:, 0]], emb[pairs[:, 1]], dim=-1)

    def loss(self, call: Callable, pairs: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
        return ((self._cosine(call, pairs) - score) ** 2).mean()[None]

    def predict(self, call: Callable, pairs: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
        return self._cosine(call, pairs)[:, None]


# ----------------------------------------------------------------------------- training


@dataclass
class Fitted:
    """Stacked best weights of K seeds (on the training device); ``predict`` runs all of them on
    some items and returns CPU tensors."""

    base: nn.Module
    params: dict
    buffers: dict
    best_val: torch.Tensor  # (K, G) best validation loss, on the CPU
    epochs: int

    def predict(self, objective, idx: np.ndarray) -> torch.Tensor:
        """Predictions of every seed on items ``idx``: shape (K, n, G), on the CPU."""
        self.base.eval()
        device = next(iter(self.params.values())).device
        objective = objective.to(device)  # Similarity embeds its own documents (objective.x) in predict
        batch = objective.batch(torch.as_tensor(idx, dtype=torch.long, device=device))
        with torch.no_grad():
            run = lambda p, b, *data: objective.predict(lambda x: functional_call(self.base, (p, b), (x,)), *data)
            dims = (0, 0) + (None,) * len(batch)
            return torch.vmap(run, in_dims=dims, randomness="different")(self.params, self.buffers, *batch).cpu()


def _mask_like(mask: torch.Tensor, p: torch.Tensor, groups: int) -> torch.Tensor:
    k = mask.shape[0]
    shape = (k, groups) if groups > 1 else (k,)
    return mask.reshape(shape).reshape(*shape, *([1] * (p.dim() - len(shape))))


def fit(build: Callable[[], nn.Module], objective, train: Sequence[np.ndarray], val: Sequence[np.ndarray], *,
        seeds: Sequence[int], config: TrainConfig = TrainConfig()) -> Fitted:
    """Train one model per seed (model k on items ``train[k]``, early-stopped on ``val[k]``).

    Parameters
    ----------
    build : callable
        Returns a fresh model; called once per seed after ``torch.manual_seed(seed)``.
    objective : Classification or Similarity
    train, val : sequences of K index arrays
        Every seed's arrays must have the same lengths (they come from the same split rule).
    seeds : sequence of K ints
    config : TrainConfig
        ``config.threads`` torch threads are used while training (1 by default: the tensors are
        small, and on a shared CPU the synchronisation of a second thread costs more per
        operation than it saves; measured by ``benchmarks/cayley_training.py``). The models
        train on ``config.device``: each seed's model is initialised on the CPU (the same
        weights on every device), then moved there with the data; the batch orders come
        from CPU generators, so only the dropout masks depend on the device.
    """
    with torch_threads(config.threads):
        return _fit(build, objective, train, val, seeds=seeds, config=config)


def _fit(build, objective, train, val, *, seeds, config) -> Fitted:
    if not (len(train) == len(val) == len(seeds)) or len(seeds) == 0:
        raise ValueError("train, val and seeds must have the same positive length")
    if len({len(t) for t in train}) != 1 or len({len(v) for v in val}) != 1:
        raise ValueError("every seed's train (and validation) split must have the same size")
    device = torch.device(config.device)
    models = []
    for s in seeds:
        torch.manual_seed(s)
        models.append(build().to(device))
    groups = getattr(models[0], "groups", 1)
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    objective = objective.to(device)
    K, n_train = len(seeds), len(train[0])
    train_t = torch.as_tensor(np.stack(train), dtype=torch.long, device=device)
    val_t = torch.as_tensor(np.stack(val), dtype=torch.long, device=device)
    member = lambda p, b, *data: objective.loss(lambda x: functional_call(base, (p, b), (x,)), *data)
    losses = torch.vmap(member, randomness="different")
    trainable = [p for p in params.values() if p.requires_grad]
    opt = torch.optim.Adam(trainable, lr=config.lr, weight_decay=config.weight_decay)
    best = {k: v.detach().clone() for k, v in params.items()}
    best_val = torch.full((K, groups), float("inf"), device=device)
    bad = torch.zeros((K, groups), dtype=torch.long, device=device)
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds]  # each seed its own batch order
    torch.manual_seed(int(seeds[0]) + 7919)  # dropout masks
    epoch = 0
    for epoch in range(1, config.max_epochs + 1):
        base.train()
        order = torch.stack([torch.randperm(n_train, generator=g) for g in gens]).to(device)
        order = torch.gather(train_t, 1, order)
        for start in range(0, n_train, config.batch_size):
            opt.zero_grad()
            losses(params, buffers, *objective.batch(order[:, start:start + config.batch_size])).sum().backward()
            opt.step()
        base.eval()
        with torch.no_grad():
            current = losses(params, buffers, *objective.batch(val_t))  # (K, G)
        improved = (current < best_val) & (bad < config.patience)  # a stopped seed stays stopped
        best_val = torch.where(improved, current, best_val)
        bad = torch.where(improved, 0, bad + 1)
        for name, p in params.items():
            best[name] = torch.where(_mask_like(improved, p, groups), p.detach(), best[name])
        if bool((bad >= config.patience).all()):
            break
    return Fitted(base, best, buffers, best_val.cpu(), epoch)
