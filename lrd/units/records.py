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


def relabel(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string equal to a key of ``names`` replaced by its value: in
    DataFrame cells, index and column labels, dict keys and values, list and tuple items and
    dataclass fields (a copy; ``value`` is left as it is).

    What gives a cached record the model name of the request that reads it
    (:func:`lrd.units.base.run_unit`): two folders with the same files share one cache entry,
    computed under the name of one of them.

    Examples
    --------
    >>> relabel({"model": "/a/m", "rows": [("/a/m", 1.0)]}, {"/a/m": "/b/m"})
    {'model': '/b/m', 'rows': [('/b/m', 1.0)]}
    """
    names = {old: new for old, new in names.items() if old != new}
    return _relabel(value, names) if names else value


def _relabel(value: Any, names: dict[str, str]) -> Any:
    import dataclasses

    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, pd.DataFrame):
        out = value.copy()
        for i in range(out.shape[1]):
            if not pd.api.types.is_numeric_dtype(out.dtypes.iloc[i]):
                out.isetitem(i, _relabel(out.iloc[:, i], names))
        label = lambda v: names.get(v, v) if isinstance(v, str) else v  # noqa: E731
        return out.rename(index=label, columns=label)
    if isinstance(value, pd.Series):
        label = lambda v: names.get(v, v) if isinstance(v, str) else v  # noqa: E731
        return value.map(label) if value.isin(list(names)).any() else value
    if isinstance(value, dict):
        return type(value)((_relabel(k, names), _relabel(v, names)) for k, v in value.items())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_relabel(v, names) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        import copy

        out = copy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(out, f.name, _relabel(getattr(value, f.name), names))
        return out
    return value
