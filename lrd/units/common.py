"""Helpers that units of several chapters run (their source enters those units' keys)."""

from __future__ import annotations

from lrd.engine.tasks import load_task


def mc_split(name: str, split: str, n: int):
    """The first ``n`` items (seeded subset) of a multiple-choice task's ``split``."""
    return load_task(name).split(split).subset(n, seed=0)
