"""A residual network in which cosine relevance and removal accuracy disagree completely.

Inputs are :math:`x = M e_0 + s\\,a\\,e_1 + \\varepsilon` with label :math:`s \\in \\{-1, +1\\}`
(a large shared component of norm :math:`M`, a small label-carrying one of size :math:`a`).
Three residual blocks :math:`h \\mapsto h + f_l(h)`:

* block 1 adds a large, label-independent vector :math:`B e_2` (a big change of direction);
* block 2 writes the label into a fresh coordinate, :math:`f_2(h) = c \\tanh(k\\, h_1)\\, e_3`,
  with a small :math:`c`;
* block 3 adds another large label-independent vector :math:`B e_4`.

The classifier reads only coordinate 3: :math:`\\hat s = \\operatorname{sign}(h_3)` (ties to -1).
Block 2 changes the state by at most :math:`c \\ll \\|h\\|`, so its cosine relevance is about
:math:`c^2 / (2\\|h\\|^2)`; yet without it :math:`h_3 = 0` for every input, every prediction is
the same class, and accuracy falls from 1 to the share of that class (0.5: chance). Blocks 1 and
3 have large cosine relevance and removing either changes no prediction. The network is our
construction, an illustration of the paper's theoretical point (a layer's cosine relevance can
be arbitrarily small while the layer is indispensable), not the paper's proof: it holds by
design, so the book records it as a demonstration (:func:`lrd.verdicts.agreement.judge_theory`).

References
----------
Hinostroza et al., arXiv:2605.14075 (2026), abstract and Introduction (the theoretical analysis;
the digest we have stops before its section).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["ResidualToy", "counterexample"]


class _Block(torch.nn.Module):
    def __init__(self, d: int, kind: str, *, big: float, c: float, k: float):
        super().__init__()
        self.kind, self.big, self.c, self.k = kind, big, c, k
        self.d = d

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        delta = torch.zeros_like(h)
        if self.kind == "write":
            delta[:, 3] = self.c * torch.tanh(self.k * h[:, 1])
        else:
            delta[:, 2 if self.kind == "big1" else 4] = self.big
        return h + delta


class ResidualToy(torch.nn.Module):
    """Three residual blocks and a linear read-out of coordinate 3 (see module docstring)."""

    def __init__(self, *, big: float = 50.0, c: float = 1.0, k: float = 10.0, d: int = 8):
        super().__init__()
        self.blocks = torch.nn.ModuleList([_Block(d, kind, big=big, c=c, k=k) for kind in ("big1", "write", "big2")])

    def states(self, x: torch.Tensor, removed: tuple[int, ...] = ()) -> list[torch.Tensor]:
        """Hidden states ``[h_0, h_1, h_2, h_3]``; a removed block passes its input through."""
        hs = [x]
        for l, block in enumerate(self.blocks, start=1):
            hs.append(hs[-1] if l in removed else block(hs[-1]))
        return hs

    def predict(self, x: torch.Tensor, removed: tuple[int, ...] = ()) -> torch.Tensor:
        return torch.where(self.states(x, removed)[-1][:, 3] > 0, 1, -1)


@dataclass(frozen=True)
class CounterexampleResult:
    cosine_relevance: np.ndarray  # (3,) 1 - mean cos(h_{l-1}, h_l)
    accuracy: float  # intact
    accuracy_without: np.ndarray  # (3,) with block l removed
    chance: float  # share of the majority class

    @property
    def accuracy_relevance(self) -> np.ndarray:
        return self.accuracy - self.accuracy_without


def counterexample(n: int = 1000, *, scale: float = 100.0, signal: float = 1.0, noise: float = 0.1,
                   big: float = 50.0, c: float = 1.0, seed: int = 0) -> CounterexampleResult:
    """Build the toy network, run it on ``n`` balanced inputs, and measure both relevances.

    Parameters
    ----------
    n : int
        Number of inputs (half of each class).
    scale : float
        :math:`M`, the norm of the shared component.
    signal, noise : float
        :math:`a` and the standard deviation of :math:`\\varepsilon` (on coordinates 5..7).
    big, c : float
        Size of the label-independent writes of blocks 1 and 3, and of block 2's write.
    seed : int

    Examples
    --------
    >>> r = counterexample()
    >>> bool(r.cosine_relevance[1] < 1e-3), r.accuracy, float(r.accuracy_without[1])
    (True, 1.0, 0.5)
    """
    if n < 2 or n % 2:
        raise ValueError(f"n must be an even number >= 2, got {n}")
    g = torch.Generator().manual_seed(seed)
    s = torch.cat([torch.ones(n // 2), -torch.ones(n // 2)])
    x = torch.zeros(n, 8, dtype=torch.float64)
    x[:, 0] = scale
    x[:, 1] = s * signal
    x[:, 5:] = noise * torch.randn(n, 3, generator=g, dtype=torch.float64)
    net = ResidualToy(big=big, c=c)
    hs = net.states(x)
    cos = np.array([1 - torch.cosine_similarity(hs[l - 1], hs[l], dim=-1).mean().item() for l in (1, 2, 3)])
    acc = lambda removed: float((net.predict(x, removed) == s).double().mean())  # noqa: E731
    return CounterexampleResult(cos, acc(()), np.array([acc((l,)) for l in (1, 2, 3)]), 0.5)
