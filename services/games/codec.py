"""JSON-safe encoding of the engines' frozen dataclasses, driven by their type hints.

States, actions, events and views round-trip through ``to_data``/``from_data`` so they can
be stored (projector tables, exports) and compared, with no per-class code.
Supported: int, float, str, bool, None, str-valued Enum, tuple[X, ...], tuple[X, Y],
frozenset[X], dict[K, V] (any hashable K), X | None, dataclasses and unions of
dataclasses (tagged with their class name).

Both directions are worked out once per type (an encoder per class of value, a decoder per
type hint) and kept: the projector encodes a match's state and every gateway decodes it
once per update, so the per-value work is only the copying.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable
from typing import Any, Union

_TAG = "$type"

#: values that are their own data (exact types: a str-valued Enum is not one of them)
_PLAIN = frozenset({int, float, str, bool, type(None)})

Encoder = Callable[[Any], Any]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def to_data(value: Any) -> Any:
    """Encode a value into JSON-compatible data (lists, dicts, scalars)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    encode = _ENCODERS.get(kind)
    if encode is None:
        encode = _ENCODERS[kind] = _encoder(kind)
    return encode(value)


_ENCODERS: dict[type, Encoder] = {}


def _item(value: Any) -> Any:
    return value if type(value) in _PLAIN else to_data(value)


def _encoder(kind: type) -> Encoder:
    if issubclass(kind, enum.Enum):
        return lambda value: value.value
    if issubclass(kind, bool | int | float | str):
        return lambda value: value
    if dataclasses.is_dataclass(kind):
        tag = kind.__name__
        names = tuple(f.name for f in dataclasses.fields(kind))

        def encode_dataclass(value: Any) -> dict[str, Any]:
            out: dict[str, Any] = {_TAG: tag}
            for name in names:
                field = getattr(value, name)
                out[name] = field if type(field) in _PLAIN else to_data(field)
            return out

        return encode_dataclass
    if issubclass(kind, tuple | list):
        return lambda value: [_item(v) for v in value]
    if issubclass(kind, frozenset | set):
        return lambda value: sorted((_item(v) for v in value), key=repr)
    if issubclass(kind, dict):
        return lambda value: [[_item(k), _item(v)] for k, v in value.items()]

    def refuse(value: Any) -> Any:
        raise TypeError(f"cannot encode {type(value).__name__}")

    return refuse


def from_data(tp: Any, data: Any) -> Any:
    """Decode ``data`` produced by ``to_data`` back into a value of type ``tp``."""
    return _decoder(tp)(data)


Decoder = Callable[[Any], Any]


def _same(data: Any) -> Any:
    return data


def _refuse(tp: Any) -> Decoder:
    def refuse(data: Any) -> Any:
        raise TypeError(f"cannot decode {tp!r}")

    return refuse


@functools.cache
def _decoder(tp: Any) -> Decoder:
    origin = typing.get_origin(tp)
    if tp is Any or tp in (int, str, bool):
        return _same
    if origin in (Union, types.UnionType):
        return _union_decoder(typing.get_args(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if tp is float:
        return float
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            if item is _same:
                return tuple
            return lambda data: tuple([item(v) for v in data])
        items = tuple(_decoder(a) for a in args)
        return lambda data: tuple([d(v) for d, v in zip(items, data, strict=True)])
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        item = _decoder(arg)
        return frozenset if item is _same else lambda data: frozenset([item(v) for v in data])
    if origin is dict:
        key, value = (_decoder(a) for a in typing.get_args(tp))
        return lambda data: {key(k): value(v) for k, v in data}
    if tp is type(None):
        return lambda data: None
    return _refuse(tp)


def _dataclass_decoder(cls: type) -> Decoder:
    # Field decoders are looked up on first use, so a dataclass may refer to itself.
    plan: list[tuple[str, Decoder | None]] = []

    def decode(data: Any) -> Any:
        if not plan:
            hints = _hints(cls)
            for f in dataclasses.fields(cls):
                field_decoder = _decoder(hints[f.name])
                plan.append((f.name, None if field_decoder is _same else field_decoder))
        kwargs = {
            name: data[name] if field_decoder is None else field_decoder(data[name])
            for name, field_decoder in plan
            if name in data
        }
        return cls(**kwargs)

    return decode


def _union_decoder(args: tuple[Any, ...]) -> Decoder:
    may_be_none = type(None) in args
    members = [a for a in args if a is not type(None)]
    tagged = {m.__name__: m for m in members if isinstance(m, type)}
    single = _decoder(members[0]) if len(members) == 1 else None
    untagged = [m for m in members if isinstance(m, type) and not dataclasses.is_dataclass(m)]

    def decode(data: Any) -> Any:
        if data is None and may_be_none:
            return None
        if isinstance(data, dict) and _TAG in data:
            member = tagged.get(data[_TAG])
            if member is None:
                raise TypeError(f"{data[_TAG]} is none of {members}")
            return _decoder(member)(data)
        if single is not None:
            return single(data)
        for member in untagged:
            try:
                return _decoder(member)(data)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"cannot decode {data!r} as any of {members}")

    return decode


def decode_tagged(classes: typing.Iterable[type], data: dict[str, Any]) -> Any:
    """Decode a tagged dataclass whose class is one of ``classes`` (e.g. a game's events)."""
    by_name = {c.__name__: c for c in classes}
    return from_data(by_name[data[_TAG]], data)
