"""JSON-safe encoding of the engines' frozen dataclasses, driven by their type hints.

States, actions, events and views round-trip through ``to_data``/``from_data`` so they can
be stored (projector tables, exports) and compared, with no per-class code.
Supported: int, float, str, bool, None, str-valued Enum, tuple[X, ...], tuple[X, Y],
frozenset[X], dict[K, V] (any hashable K), X | None, dataclasses and unions of
dataclasses (tagged with their class name).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from typing import Any, Union

_TAG = "$type"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def to_data(value: Any) -> Any:
    """Encode a value into JSON-compatible data (lists, dicts, scalars)."""
    if value is None or (
        isinstance(value, bool | int | float | str) and not isinstance(value, enum.Enum)
    ):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {_TAG: type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = to_data(getattr(value, f.name))
        return out
    if isinstance(value, tuple | list):
        return [to_data(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted((to_data(v) for v in value), key=repr)
    if isinstance(value, dict):
        return [[to_data(k), to_data(v)] for k, v in value.items()]
    raise TypeError(f"cannot encode {type(value).__name__}")


def from_data(tp: Any, data: Any) -> Any:
    """Decode ``data`` produced by ``to_data`` back into a value of type ``tp``."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin in (Union, types.UnionType):
        return _from_union(typing.get_args(tp), data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {
            f.name: from_data(hints[f.name], data[f.name])
            for f in dataclasses.fields(tp)
            if f.name in data
        }
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp in (int, str, bool):
        return data
    if tp is float:
        return float(data)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(args[0], v) for v in data)
        return tuple(from_data(a, v) for a, v in zip(args, data, strict=True))
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        return frozenset(from_data(arg, v) for v in data)
    if origin is dict:
        k_tp, v_tp = typing.get_args(tp)
        return {from_data(k_tp, k): from_data(v_tp, v) for k, v in data}
    if tp is type(None):
        return None
    raise TypeError(f"cannot decode {tp!r}")


def _from_union(args: tuple[Any, ...], data: Any) -> Any:
    if data is None and type(None) in args:
        return None
    members = [a for a in args if a is not type(None)]
    if isinstance(data, dict) and _TAG in data:
        for member in members:
            if isinstance(member, type) and member.__name__ == data[_TAG]:
                return from_data(member, data)
        raise TypeError(f"{data[_TAG]} is none of {members}")
    if len(members) == 1:
        return from_data(members[0], data)
    for member in members:
        if isinstance(member, type) and not dataclasses.is_dataclass(member):
            try:
                return from_data(member, data)
            except (TypeError, ValueError):
                continue
    raise TypeError(f"cannot decode {data!r} as any of {members}")


def decode_tagged(classes: typing.Iterable[type], data: dict[str, Any]) -> Any:
    """Decode a tagged dataclass whose class is one of ``classes`` (e.g. a game's events)."""
    by_name = {c.__name__: c for c in classes}
    return from_data(by_name[data[_TAG]], data)
