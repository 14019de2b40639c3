"""lrd.engine.augment: nlpaug views for the invariance metrics (seeded, memoised, validated)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lrd.engine.augment import augment_views

TEXTS = ["the movie was a delight from start to finish", "a dull, lifeless and overlong film"]


def test_views_are_seeded_and_differ_from_the_text():
    a = augment_views(TEXTS, 4, seed=0)
    assert len(a) == 4 and all(len(v) == len(TEXTS) for v in a)
    assert a == augment_views(TEXTS, 4, seed=0)
    assert a != augment_views(TEXTS, 4, seed=1)
    assert all(view[i] != TEXTS[i] for view in a for i in range(len(TEXTS)))
    assert len({view[0] for view in a}) > 1  # independent draws per view


def test_memoised_views_are_copies_and_global_generators_are_restored():
    random.seed(123)
    np.random.seed(123)
    expect_py, expect_np = random.random(), np.random.rand()
    random.seed(123)
    np.random.seed(123)
    first = augment_views(TEXTS, 2, seed=5)
    assert (random.random(), np.random.rand()) == (expect_py, expect_np)
    first[0][0] = "changed by the caller"
    assert augment_views(TEXTS, 2, seed=5)[0][0] != "changed by the caller"


def test_bad_input():
    with pytest.raises(ValueError, match="n_views"):
        augment_views(TEXTS, 0)
    with pytest.raises(ValueError, match="non-empty"):
        augment_views(["ok", ""], 2)


def test_views_do_not_depend_on_other_threads_drawing_from_the_global_generators():
    """In a Dask worker the event loop draws from ``random`` while nlpaug augments, so the same
    seed gave other views there than in a plain run (the mid-layer chapter then embedded its
    views twice, and its invariance metrics depended on where the unit ran). The views are now
    drawn from private generators: the same with another thread drawing all the while."""
    import threading

    from lrd.engine.augment import _augment_views

    texts = tuple(f"headline number {i} about a rather long topic" for i in range(12))
    quiet = _augment_views.__wrapped__(texts, 8, 3)
    stop = threading.Event()

    def draw():
        while not stop.is_set():
            random.random()
            np.random.random()

    other = threading.Thread(target=draw)
    other.start()
    try:
        busy = _augment_views.__wrapped__(texts, 8, 3)
    finally:
        stop.set()
        other.join()
    assert busy == quiet
