"""Checks for the units' records: each chapter module defines small frozen dataclasses (as
mteb's ``TaskResult``) that check themselves in ``__post_init__`` with these helpers, so a
unit that returns something malformed fails where it is built, not in a chapter's table."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd


def require(condition: bool, record: object, problem: str) -> None:
    """Raise a ValueError naming the record type and the problem when ``condition`` is false.

    Examples
    --------
    >>> require(False, 1.0, "must be an int")
    Traceback (most recent call last):
    ...
    ValueError: float: must be an int
    """
    if not condition:
        raise ValueError(f"{type(record).__name__}: {problem}")


def require_columns(frame: Any, columns: Sequence[str], record: object, field_name: str) -> None:
    """``frame`` must be a DataFrame holding ``columns`` (an empty DataFrame passes)."""
    require(isinstance(frame, pd.DataFrame), record, f"{field_name} must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    require(frame.empty or not missing, record, f"{field_name} lacks the columns {missing}")


def require_frames(frames: Any, columns: Sequence[str], record: object, field_name: str) -> None:
    """``frames`` must be a list of DataFrames, each holding ``columns``."""
    require(isinstance(frames, list), record, f"{field_name} must be a list of DataFrames, got {type(frames).__name__}")
    for i, frame in enumerate(frames):
        require_columns(frame, columns, record, f"{field_name}[{i}]")
