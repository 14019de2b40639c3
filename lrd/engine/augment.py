"""Augmented views of prompts for the invariance metrics (InfoNCE, LiDAR, DiME).

The paper's code perturbs each prompt with nlpaug's ``SplitAug`` (split a word in two),
``RandomCharAug`` (insert / substitute / swap / delete characters) and ``KeyboardAug``
(keyboard-neighbour typos), applied in sequence with their default settings; each view is an
independent draw. nlpaug needs no downloads for these three character/word augmenters.

References
----------
Skean et al., "Layer by Layer", ICML 2025, Section 3 and the code OFSkean/information_flow
(``text_augmentation``); Ma, "NLP Augmentation", https://github.com/makcedward/nlpaug, 2019.
"""

from __future__ import annotations

import random
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np


class _NumpyWithOwnRandom:
    """``numpy`` as an nlpaug module sees it, with ``random`` a private generator."""

    def __init__(self, rng: np.random.RandomState):
        self.random = rng

    def __getattr__(self, name: str):
        return getattr(np, name)


_SEEDED = threading.Lock()


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """nlpaug draws from the ``random`` and ``numpy.random`` modules' global generators, which
    other threads of the process (a Dask worker's event loop, for one) draw from too, so the
    same seed gave other views in a worker than in a plain run. Inside this block nlpaug's
    modules draw from private generators seeded with ``seed`` instead (the same streams as
    ``random.seed(seed)`` and ``numpy.random.seed(seed)`` give), whatever other threads do."""
    import nlpaug.base_augmenter as base
    import nlpaug.model.base_model as model

    own_random, own_numpy = random.Random(seed), _NumpyWithOwnRandom(np.random.RandomState(seed))
    with _SEEDED:
        kept = base.random, base.np, model.np
        base.random, base.np, model.np = own_random, own_numpy, own_numpy
        try:
            yield
        finally:
            base.random, base.np, model.np = kept


def _augmenter():
    import nlpaug.augmenter.char as nac
    import nlpaug.augmenter.word as naw
    import nlpaug.flow as naf

    return naf.Sequential([naw.SplitAug(), nac.RandomCharAug(), nac.KeyboardAug()])


def augment_views(texts: Sequence[str], n_views: int, *, seed: int = 0) -> list[list[str]]:
    """``n_views`` independently augmented versions of every text (split, random char, keyboard).

    Parameters
    ----------
    texts : sequence of str
    n_views : int
        Views per text (2 for InfoNCE and DiME, 16 for LiDAR in the paper).
    seed : int
        The same seed gives the same views.

    Returns
    -------
    list of ``n_views`` lists of ``len(texts)`` strings
        ``views[j][i]`` is view ``j`` of text ``i``; a text that an augmenter cannot change
        (e.g. a single character) is kept as it is.

    Notes
    -----
    nlpaug is single-threaded Python (about 60 ms a view); since the views depend only on
    ``(texts, n_views, seed)``, the last few calls are memoised in the process, so a chapter
    that embeds the same views with every model of its panel augments them once.
    """
    if n_views < 1:
        raise ValueError(f"n_views must be >= 1, got {n_views}")
    if not all(isinstance(t, str) and t for t in texts):
        raise ValueError("every text must be a non-empty string")
    return [list(view) for view in _augment_views(tuple(texts), int(n_views), int(seed))]


@lru_cache(maxsize=8)
def _augment_views(texts: tuple[str, ...], n_views: int, seed: int) -> tuple[tuple[str, ...], ...]:
    aug = _augmenter()
    with seeded(seed):
        return tuple(tuple(_one(aug, t) for t in texts) for _ in range(n_views))


def _one(aug, text: str) -> str:
    out = aug.augment(text)
    out = out[0] if isinstance(out, list) else out
    return out if isinstance(out, str) and out.strip() else text
