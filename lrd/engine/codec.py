"""A data-only file format for cached results: JSON for the structure, ``.npy`` blocks for arrays.

The result cache (:mod:`lrd.engine.cache`) used to store pickles. A pickle is a program: whoever
can write ``$LRD_HOME/results`` (a shared cache, on a cluster) could make every reader run what
they chose, and a checksum only says the file is whole, not who wrote it. This format cannot
run anything when it is read: its structure is a JSON document, its arrays are ``.npy`` blocks
read with ``allow_pickle=False``, and the only classes it builds are the containers below and
the unit records of :data:`RECORD_MODULES`, looked up by name in that fixed list (their state
is set field by field, as pickle does; no method of theirs runs).

What it stores, exactly as it was (types, dtypes, index, column names, NaN, -0.0):

* ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``; ``list``, ``tuple``,
  ``dict`` (any keys it stores, in order), ``set``, ``frozenset``;
* numpy arrays of every dtype but ``object`` (and numpy's variable-width strings), numpy scalars;
* pandas ``DataFrame``, ``Series`` and ``Index`` (``RangeIndex``, ``MultiIndex``, categorical
  and plain ones) whose columns hold numpy dtypes, ``object`` (values it stores, element by
  element), ``category``, ``str``/``string`` or the nullable ``Int*``/``UInt*``/``Float*``/``boolean``
  dtypes; ``pd.NA``;
* the unit records: frozen dataclasses of the chapters' unit modules (:data:`RECORD_MODULES`)
  and :class:`lrd.units.base.Stored`.

Anything else is a :class:`TypeError` when the value is written, naming its type and where it
sits in the value (``value.rows[2]['x']``): a unit that returns something this format cannot
hold fails where it is stored, never silently as something else.

Layout of a payload (what :func:`dump` writes and :func:`load` reads)::

    b"lrd-data 1\\n"  <8-byte little-endian length of the JSON>  <the JSON, UTF-8>
    <.npy block 0> <.npy block 1> ...     (numpy's own format, no object arrays)

The JSON is the value's tree: JSON's own null, booleans, numbers (with ``NaN``,
``Infinity``, ``-0.0``), strings and lists stand for themselves; every other node is an object
whose ``"$"`` names its kind (``{"$": "dict", "items": [[k, v], ...]}``,
``{"$": "array", "blob": 3}``, ...). Arrays are written block after block, streamed, and read
back the same way (no per-element Python loop for numeric data).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import struct
from typing import Any, BinaryIO

import numpy as np

MAGIC = b"lrd-data 1\n"
_LENGTH = struct.Struct("<Q")

#: The modules whose dataclasses a result may hold: the chapters' unit modules (their records)
#: and the unit machinery (:class:`lrd.units.base.Stored`). A record is rebuilt by looking its
#: module up in this list and its class up by name in that module; nothing else is imported.
RECORD_MODULES = ("lrd.units.base", "lrd.units.models_and_tasks", "lrd.units.lrd_families", "lrd.units.mid_layer",
                  "lrd.units.cosine_vs_ablation", "lrd.units.cayley_aggregation",
                  "lrd.units.selection_and_pruning")

#: Nullable pandas dtypes stored as data and mask (by their name).
_MASKED = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64", "boolean")

_PLAIN = (type(None), bool, int, float, str)

#: Classes registered by :func:`register_record` (tests, and callers outside lrd's chapters).
_REGISTERED: dict[str, type] = {}


class UnsupportedValue(TypeError):
    """A value the format cannot hold, named with its type and where it sits."""


class BadPayload(ValueError):
    """A payload that is not a well-formed ``lrd-data`` document (an old pickle, another file, damage)."""


def register_record(cls: type) -> type:
    """Allow instances of the dataclass ``cls`` in stored values (besides :data:`RECORD_MODULES`);
    returns ``cls``, so it serves as a decorator. For values computed outside lrd's chapters."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"only dataclasses can be registered as records, got {cls!r}")
    _REGISTERED[_type_name(cls)] = cls
    return cls


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _record_class(name: str) -> type:
    """The record class called ``name`` (``module:Class``): a registered one, or a dataclass
    defined in a module of :data:`RECORD_MODULES` under that plain name."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module, _, qualname = name.partition(":")
    if module not in RECORD_MODULES or not qualname.isidentifier():
        raise BadPayload(f"a record of type {name!r}, which is not one lrd stores")
    cls = getattr(importlib.import_module(RECORD_MODULES[RECORD_MODULES.index(module)]), qualname, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module):
        raise BadPayload(f"a record of type {name!r}, which is not one lrd stores")
    return cls


def _allowed_record(cls: type) -> bool:
    return _type_name(cls) in _REGISTERED or (cls.__module__ in RECORD_MODULES and "." not in cls.__qualname__)


# --------------------------------------------------------------------------------------------
# Writing


class _Encoder:
    """Turns a value into its JSON tree, collecting its arrays (in the order they are met)."""

    def __init__(self):
        self.blobs: list[np.ndarray] = []

    def blob(self, array: np.ndarray, where: str) -> int:
        if array.dtype.hasobject or not getattr(type(array.dtype), "_legacy", True):
            raise UnsupportedValue(f"{where}: cannot store a numpy array of dtype {array.dtype} (it holds Python "
                                   "objects); store a list, or an array of numbers or fixed-width strings")
        self.blobs.append(array)
        return len(self.blobs) - 1

    def encode(self, value: Any, where: str = "value") -> Any:
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is list:
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if kind is tuple:
            return {"$": "tuple", "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if kind is dict:
            return {"$": "dict", "items": [[self.encode(k, f"{where} key {k!r}"), self.encode(v, f"{where}[{k!r}]")]
                                           for k, v in value.items()]}
        if kind in (set, frozenset):
            return {"$": kind.__name__, "items": [self.encode(v, f"{where} item") for v in value]}
        if kind is complex:
            return {"$": "complex", "re": value.real, "im": value.imag}
        if kind is bytes:
            return {"$": "bytes", "blob": self.blob(np.frombuffer(value, dtype=np.uint8), where)}
        if kind is np.ndarray:
            return {"$": "array", "blob": self.blob(value, where)}
        if isinstance(value, np.generic):
            return {"$": "scalar", "blob": self.blob(np.asarray(value), where)}
        pd = _pandas()
        if kind is pd.DataFrame:
            return self.frame(value, where)
        if kind is pd.Series:
            return {"$": "series", "name": self.encode(value.name, f"{where}.name"),
                    "index": self.index(value.index, f"{where}.index"),
                    "values": self.values(value, f"{where}.values"), **self.extras(value, where)}
        if isinstance(value, pd.Index):
            return self.index(value, where)
        if value is pd.NA:
            return {"$": "NA"}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self.record(value, where)
        raise UnsupportedValue(f"{where}: cannot store a value of type {kind.__module__}.{kind.__qualname__} in the "
                               "result cache (it holds data only: numbers, strings, lists, tuples, dicts, numpy "
                               "arrays, pandas tables and lrd's unit records)")

    def record(self, value: Any, where: str) -> dict:
        cls = type(value)
        if not _allowed_record(cls):
            raise UnsupportedValue(f"{where}: cannot store a record of type {_type_name(cls)}: the result cache "
                                   f"rebuilds only the records of {', '.join(RECORD_MODULES)} "
                                   "(or classes given to lrd.engine.codec.register_record)")
        state = getattr(value, "__dict__", None)
        if not isinstance(state, dict) or set(state) != {f.name for f in dataclasses.fields(cls)}:
            raise UnsupportedValue(f"{where}: cannot store a record of type {_type_name(cls)} whose attributes are "
                                   "not its fields")
        return {"$": "record", "type": _type_name(cls),
                "state": {k: self.encode(v, f"{where}.{k}") for k, v in state.items()}}

    def extras(self, value: Any, where: str) -> dict:
        """``attrs`` and a refusal of duplicate labels, when a table has them."""
        out = {}
        if value.attrs:
            out["attrs"] = self.encode(dict(value.attrs), f"{where}.attrs")
        if not value.flags.allows_duplicate_labels:
            out["no_duplicates"] = True
        return out

    def frame(self, frame, where: str) -> dict:
        return {"$": "frame", "index": self.index(frame.index, f"{where}.index"),
                "columns": self.index(frame.columns, f"{where}.columns"),
                "data": [self.values(frame.iloc[:, i], f"{where}[{frame.columns[i]!r}]") for i in range(frame.shape[1])],
                **self.extras(frame, where)}

    def index(self, index, where: str) -> dict:
        pd = _pandas()
        name = self.encode(index.name, f"{where}.name") if not isinstance(index, pd.MultiIndex) else None
        if type(index) is pd.RangeIndex:
            return {"$": "range", "start": index.start, "stop": index.stop, "step": index.step, "name": name}
        if isinstance(index, pd.MultiIndex):
            return {"$": "multi", "levels": [self.index(lv, f"{where}.levels[{i}]") for i, lv in enumerate(index.levels)],
                    "codes": [self.blob(np.asarray(c), where) for c in index.codes],
                    "names": [self.encode(n, f"{where}.names") for n in index.names]}
        if type(index) not in (pd.Index, pd.CategoricalIndex, pd.DatetimeIndex, pd.TimedeltaIndex):
            raise UnsupportedValue(f"{where}: cannot store a pandas index of type {type(index).__name__}")
        if getattr(index, "freq", None) is not None:
            raise UnsupportedValue(f"{where}: cannot store a {type(index).__name__} with a frequency ({index.freq})")
        return {"$": "index", "values": self.values(index, where), "name": name}

    def values(self, data, where: str) -> dict:
        """The values of a Series or Index (one dimension), by dtype."""
        pd = _pandas()
        dtype = data.dtype
        if isinstance(dtype, np.dtype) and dtype.kind != "O":
            return {"$": "array", "blob": self.blob(data.to_numpy(copy=False), where)}
        if isinstance(dtype, np.dtype):  # objects: strings as arrow's buffers, other plain values as one list
            items = data.to_numpy(copy=False)
            kinds = set(map(type, items))
            if kinds == {str} and (text := self.text(items, where)) is not None:
                return {"$": "objects", "text": text}
            if kinds <= set(_PLAIN):
                return {"$": "objects", "plain": True, "items": items.tolist()}
            return {"$": "objects", "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(items)]}
        if isinstance(dtype, pd.CategoricalDtype):
            cat = data.array
            return {"$": "categorical", "codes": self.blob(np.asarray(cat.codes), where),
                    "categories": self.index(dtype.categories, f"{where}.categories"), "ordered": bool(dtype.ordered)}
        if isinstance(dtype, pd.StringDtype):
            na = "NA" if dtype.na_value is pd.NA else "nan" if _is_nan(dtype.na_value) else None
            if na is None:
                raise UnsupportedValue(f"{where}: cannot store a string dtype whose missing value is {dtype.na_value!r}")
            text = self.text(data.array, where)  # arrow's own buffers when pandas holds them so
            return {"$": "string", "storage": dtype.storage, "na": na,
                    **({"text": text} if text is not None else
                       {"items": data.to_numpy(dtype=object, na_value=None).tolist()})}
        if str(dtype) in _MASKED and isinstance(data.array, pd.api.extensions.ExtensionArray):
            array = data.array
            mask = np.asarray(array.isna(), dtype=bool)
            raw = array.to_numpy(dtype=dtype.numpy_dtype, na_value=dtype.numpy_dtype.type(0))
            return {"$": "masked", "dtype": str(dtype), "data": self.blob(raw, where), "mask": self.blob(mask, where)}
        raise UnsupportedValue(f"{where}: cannot store pandas values of dtype {dtype} in the result cache")

    def text(self, items, where: str) -> dict | None:
        """Strings (``None`` for missing ones: an object array, or a pandas string array) as three
        arrays, as arrow holds them: the UTF-8 bytes of all, where each ends, which are missing.
        None when arrow cannot hold them (a lone surrogate): a JSON list serves then."""
        import pyarrow as pa

        try:
            array = pa.array(items, type=pa.large_string(), from_pandas=False)
        except (pa.ArrowException, UnicodeError, TypeError, ValueError):
            return None
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        _, offsets, data = array.buffers()
        offsets = np.frombuffer(offsets, dtype=np.int64, count=len(array) + 1, offset=array.offset * 8)
        start, end = int(offsets[0]), int(offsets[-1])
        data = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start) if end > start \
            else np.zeros(0, dtype=np.uint8)
        mask = array.is_null().to_numpy(zero_copy_only=False)
        return {"offsets": self.blob(offsets - start, where), "data": self.blob(data, where),
                "mask": self.blob(mask, where)}


def _is_nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _pandas():
    """pandas, imported when a value needs it (``lrd.engine.cache`` is imported by commands that
    must start fast)."""
    import pandas

    return pandas


def dump(value: Any, f: BinaryIO) -> None:
    """Write ``value`` to the binary file ``f`` (the format of the module docstring).

    Raises
    ------
    UnsupportedValue
        A part of ``value`` the format cannot hold (before anything is written).
    """
    enc = _Encoder()
    tree = enc.encode(value)
    text = json.dumps(tree, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode("ascii")
    f.write(MAGIC)
    f.write(_LENGTH.pack(len(text)))
    f.write(text)
    for array in enc.blobs:
        np.lib.format.write_array(f, array, allow_pickle=False)


# --------------------------------------------------------------------------------------------
# Reading


def load(f: BinaryIO) -> Any:
    """The value stored in ``f`` by :func:`dump`; nothing in it is executed.

    Raises
    ------
    BadPayload
        ``f`` holds no ``lrd-data`` document (an old pickle, another file) or a malformed one.
    """
    head = f.read(len(MAGIC))
    if head != MAGIC:
        hint = " (a pickle, as older lrd versions wrote: never unpickled)" if head[:1] == b"\x80" else ""
        raise BadPayload(f"not an lrd-data document{hint}")
    size = f.read(_LENGTH.size)
    if len(size) != _LENGTH.size:
        raise BadPayload("truncated lrd-data document")
    (length,) = _LENGTH.unpack(size)
    text = f.read(length)
    if len(text) != length:
        raise BadPayload("truncated lrd-data document")
    try:
        tree = json.loads(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise BadPayload(f"its structure is not valid JSON ({type(err).__name__})") from None
    dec = _Decoder(f)
    value = dec.decode(tree)
    if dec.pending:
        raise BadPayload("it lists arrays that its structure does not use")
    if f.read(1):
        raise BadPayload("it has bytes after its last array")
    return value


class _Decoder:
    """Rebuilds a value from its JSON tree, reading its arrays from ``f`` in order."""

    def __init__(self, f: BinaryIO):
        self.f, self.read, self.arrays = f, 0, {}

    @property
    def pending(self) -> bool:
        return bool(self.arrays)

    def blob(self, i: Any) -> np.ndarray:
        if type(i) is not int or i < 0:
            raise BadPayload(f"a bad array reference {i!r}")
        while self.read <= i:  # blocks in the order they were written; those named later are kept
            self.arrays[self.read] = np.lib.format.read_array(self.f, allow_pickle=False)
            self.read += 1
        if i not in self.arrays:
            raise BadPayload(f"array {i} named twice")
        return self.arrays.pop(i)

    def decode(self, node: Any) -> Any:
        kind = type(node)
        if kind in _PLAIN:
            return node
        if kind is list:
            return [self.decode(v) for v in node]
        if kind is not dict:
            raise BadPayload(f"a node of type {kind.__name__}")
        tag = node.get("$")
        method = getattr(self, f"_{tag}", None) if isinstance(tag, str) and tag.isidentifier() else None
        if method is None:
            raise BadPayload(f"a node of unknown kind {tag!r}")
        try:
            return method(node)
        except (KeyError, TypeError, IndexError) as err:
            raise BadPayload(f"a malformed {tag!r} node ({type(err).__name__}: {err})") from None

    def _tuple(self, node):
        return tuple(self.decode(v) for v in node["items"])

    def _dict(self, node):
        return {self.decode(k): self.decode(v) for k, v in node["items"]}

    def _set(self, node):
        return {self.decode(v) for v in node["items"]}

    def _frozenset(self, node):
        return frozenset(self.decode(v) for v in node["items"])

    def _complex(self, node):
        return complex(float(node["re"]), float(node["im"]))

    def _bytes(self, node):
        return self.blob(node["blob"]).tobytes()

    def _array(self, node):
        return self.blob(node["blob"])

    def _scalar(self, node):
        array = self.blob(node["blob"])
        if array.ndim != 0:
            raise BadPayload("a scalar stored as an array")
        return array[()]

    def _NA(self, node):
        return _pandas().NA

    def _record(self, node):
        cls = _record_class(node["type"])
        if type(node["state"]) is not dict or set(node["state"]) != {f.name for f in dataclasses.fields(cls)}:
            raise BadPayload(f"a record of type {node['type']!r} whose fields are not its class's")
        state = {k: self.decode(v) for k, v in node["state"].items()}
        obj = object.__new__(cls)
        obj.__dict__.update(state)  # as pickle restores an object: no __init__, no __post_init__
        return obj

    def _frame(self, node):
        pd = _pandas()
        index, columns = self.decode_index(node["index"]), self.decode_index(node["columns"])
        data = [self.decode_values(v) for v in node["data"]]
        if len(data) != len(columns) or any(len(v) != len(index) for v in data):
            raise BadPayload("a table whose columns do not match its labels")
        # columns as Series of their own dtype (pandas would read strings in an object array as
        # its str dtype), on a range index, then the labels (which may repeat) put in place
        frame = pd.DataFrame({i: pd.Series(v, dtype=v.dtype, copy=False) for i, v in enumerate(data)}
                             if data else None, index=None if data else index)
        frame.index, frame.columns = index, columns
        return self.finish(frame, node)

    def _series(self, node):
        pd = _pandas()
        values, index = self.decode_values(node["values"]), self.decode_index(node["index"])
        if len(values) != len(index):
            raise BadPayload("a series whose values do not match its index")
        name = self.decode(node["name"])
        return self.finish(pd.Series(values, index=index, dtype=values.dtype, name=name, copy=False), node)

    def finish(self, table, node):
        if "attrs" in node:
            table.attrs = self.decode(node["attrs"])
        if node.get("no_duplicates"):
            table = table.set_flags(allows_duplicate_labels=False)
        return table

    def _range(self, node):
        return self.decode_index(node)

    def _multi(self, node):
        return self.decode_index(node)

    def _index(self, node):
        return self.decode_index(node)

    def decode_index(self, node):
        pd = _pandas()
        if type(node) is not dict:
            raise BadPayload("an index that is not an index node")
        tag = node.get("$")
        if tag == "range":
            ints = [node["start"], node["stop"], node["step"]]
            if any(type(x) is not int for x in ints):
                raise BadPayload("a range index of non-integers")
            return pd.RangeIndex(*ints, name=self.decode(node["name"]))
        if tag == "multi":
            levels = [self.decode_index(lv) for lv in node["levels"]]
            codes = [self.blob(c) for c in node["codes"]]
            names = [self.decode(n) for n in node["names"]]
            return pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=True)
        if tag == "index":
            values = self.decode_values(node["values"])
            return pd.Index(values, dtype=values.dtype, name=self.decode(node["name"]), copy=False)
        raise BadPayload(f"an index node of unknown kind {tag!r}")

    def decode_values(self, node):
        """A one-dimensional numpy array or pandas extension array."""
        pd = _pandas()
        if type(node) is not dict:
            raise BadPayload("values that are not a values node")
        tag = node.get("$")
        if tag == "array":
            array = self.blob(node["blob"])
            if array.ndim != 1:
                raise BadPayload("column values that are not one-dimensional")
            return array
        if tag == "objects":
            if "text" in node:
                text = self.decode_text(node["text"])
                if text.null_count:
                    raise BadPayload("strings of an object column with missing ones")
                return text.to_numpy(zero_copy_only=False)
            items = node["items"]
            if type(items) is not list:
                raise BadPayload("object values that are not a list")
            out = np.empty(len(items), dtype=object)
            if node.get("plain"):
                if not set(map(type, items)) <= set(_PLAIN):
                    raise BadPayload("plain object values that are not plain")
                out[:] = items
            else:
                for i, item in enumerate(items):
                    out[i] = self.decode(item)
            return out
        if tag == "categorical":
            categories = self.decode_index(node["categories"])
            codes = self.blob(node["codes"])
            if type(node["ordered"]) is not bool or codes.ndim != 1 or codes.dtype.kind != "i":
                raise BadPayload("a malformed categorical")
            if len(codes) and (codes.min() < -1 or codes.max() >= len(categories)):
                raise BadPayload("categorical codes out of range")
            dtype = pd.CategoricalDtype(categories, ordered=node["ordered"])
            return pd.Categorical.from_codes(codes, dtype=dtype)
        if tag == "string":
            if node["storage"] not in ("python", "pyarrow", "pyarrow_numpy") or node["na"] not in ("NA", "nan"):
                raise BadPayload("a malformed string column")
            if "text" in node:
                items = self.decode_text(node["text"])  # pandas takes arrow's strings as they are
            else:
                items = node["items"]
                if type(items) is not list or not set(map(type, items)) <= {str, type(None)}:
                    raise BadPayload("a string column holding other values")
                items = np.array(items, dtype=object) if items else np.empty(0, dtype=object)
            try:
                dtype = pd.StringDtype(node["storage"], na_value=pd.NA if node["na"] == "NA" else np.nan)
            except TypeError:  # pandas before 2.3: no na_value (its "pyarrow_numpy" storage is NaN's)
                dtype = pd.StringDtype(node["storage"])
            return pd.array(items, dtype=dtype)
        if tag == "masked":
            if node["dtype"] not in _MASKED:
                raise BadPayload(f"an unknown nullable dtype {node['dtype']!r}")
            dtype = pd.api.types.pandas_dtype(node["dtype"])
            data, mask = self.blob(node["data"]), self.blob(node["mask"])
            if data.dtype != dtype.numpy_dtype or mask.dtype != bool or data.shape != mask.shape or data.ndim != 1:
                raise BadPayload("a malformed nullable column")
            return dtype.construct_array_type()(data, mask)
        raise BadPayload(f"values of unknown kind {tag!r}")

    def decode_text(self, node):
        """An arrow array of strings (null where missing) from :meth:`_Encoder.text`'s arrays,
        checked by arrow (offsets in order and in range, valid UTF-8) before any is read."""
        import pyarrow as pa

        offsets, data, mask = self.blob(node["offsets"]), self.blob(node["data"]), self.blob(node["mask"])
        if (offsets.dtype != np.int64 or data.dtype != np.uint8 or mask.dtype != bool or offsets.ndim != 1
                or data.ndim != 1 or mask.ndim != 1 or len(offsets) != len(mask) + 1):
            raise BadPayload("malformed strings")
        validity = pa.array(~mask).buffers()[1] if mask.any() else None
        try:
            array = pa.Array.from_buffers(pa.large_string(), len(mask),
                                          [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
                                          null_count=int(mask.sum()))
            array.validate(full=True)
        except (pa.ArrowException, ValueError) as err:
            raise BadPayload(f"malformed strings ({err})") from None
        return array
