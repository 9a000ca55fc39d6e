"""JSON-safe encoding of the engines' frozen dataclasses, driven by their type hints.

States, actions, events and views round-trip through ``to_data``/``from_data`` so they can
be stored (projector tables, exports) and compared, with no per-class code.
Supported: int, float, str, bool, None, str-valued Enum, tuple[X, ...], tuple[X, Y],
frozenset[X], dict[K, V] (any hashable K), X | None, dataclasses and unions of
dataclasses (tagged with their class name).

The data of a value do not depend on how it was built: a frozenset's items and a dict's
``[key, value]`` pairs are sorted (by the repr of the item's, the key's data). Equal
states are equal bytes once encoded, whichever order a dict was filled in: the board's
live state (a dict as the engine decided it) and the projector's (folded from events
read back from protobuf, whose maps keep no order) publish the same update. The views
never read a dict's order (they sort where they list one).

The projector encodes a match's state and every gateway decodes it once per update, so
each dataclass's encoder and each type hint's decoder is compiled once, from the hints,
into one plain Python function (as ``services.adapters.protoconv`` does for messages): a
call then does no type dispatch per field. Where a hint admits values of another type
(a ``str`` field may hold a str-Enum member, a dataclass field a subclass, a union any of
its members), the compiled code checks the exact type and falls back to the generic
``to_data`` dispatch, so the data are the same whatever the value.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import types
import typing
from collections.abc import Callable
from typing import Any, Union

_TAG = "$type"

#: values that are their own data (exact types: a str-valued Enum is not one of them)
_PLAIN = frozenset({int, float, str, bool, type(None)})

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _compile(source: str, namespace: dict[str, Any], name: str) -> Any:
    exec(compile(source, f"<codec {name}>", "exec"), namespace)
    return namespace[name]


def _optional_inner(tp: Any) -> Any | None:
    """``X`` for ``X | None``, else None."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = typing.get_args(tp)
        if len(args) == 2 and type(None) in args:
            return args[0] if args[1] is type(None) else args[1]
    return None


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


# -- encoding ------------------------------------------------------------------------------
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


def _by_key(pair: list[Any]) -> str:
    return repr(pair[0])


def _encoder(kind: type) -> Encoder:
    if issubclass(kind, enum.Enum):
        return lambda value: value.value
    if issubclass(kind, bool | int | float | str):
        return lambda value: value
    if dataclasses.is_dataclass(kind):
        return _dataclass_encoder(kind)
    if issubclass(kind, tuple | list):
        return lambda value: [_item(v) for v in value]
    if issubclass(kind, frozenset | set):
        return lambda value: sorted((_item(v) for v in value), key=repr)
    if issubclass(kind, dict):
        return lambda value: sorted(([_item(k), _item(v)] for k, v in value.items()), key=_by_key)

    def refuse(value: Any) -> Any:
        raise TypeError(f"cannot encode {type(value).__name__}")

    return refuse


class _Source:
    """Generated code's namespace and fresh local names."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"T": to_data, "I": _item, "K": _by_key}
        self._names = itertools.count()

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(self._names)}"

    def bind(self, value: Any) -> str:
        name = self.name("k")
        self.namespace[name] = value
        return name


def _encode_expr(tp: Any, x: str, src: _Source) -> str:
    """An expression giving ``to_data(x)`` for a value ``x`` (a local name or attribute
    access, evaluated more than once) of hinted type ``tp``."""
    if tp in (int, str, float, bool):
        # exact type: a str-Enum member is a str, and a bool an int (plain either way)
        return f"({x} if type({x}) is {tp.__name__} else I({x}))"
    if tp is type(None):
        return "None"
    inner = _optional_inner(tp)
    if inner is not None:
        return f"(None if {x} is None else {_encode_expr(inner, x, src)})"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return f"({x}._value_ if type({x}) is {src.bind(tp)} else T({x}))"
    if _is_dataclass(tp):
        encoder = _ENCODERS.get(tp)
        if encoder is None:
            encoder = _ENCODERS[tp] = _dataclass_encoder(tp)
        return f"({src.bind(encoder)}({x}) if type({x}) is {src.bind(tp)} else T({x}))"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        v = src.name("v")
        return f"[{_encode_expr(args[0], v, src)} for {v} in {x}]"
    if origin is tuple and args and args[-1] is not Ellipsis:
        # a fixed tuple: checked for its length (a wrong one is encoded as it is)
        items = ", ".join(_encode_expr(a, f"{x}[{i}]", src) for i, a in enumerate(args))
        return f"([{items}] if len({x}) == {len(args)} else T({x}))"
    if origin is frozenset and args:
        v = src.name("v")
        return f"sorted([{_encode_expr(args[0], v, src)} for {v} in {x}], key=repr)"
    if origin is dict and args:
        k, v = src.name("k"), src.name("v")
        key, value = _encode_expr(args[0], k, src), _encode_expr(args[1], v, src)
        return f"sorted([[{key}, {value}] for {k}, {v} in {x}.items()], key=K)"
    return f"T({x})"  # unions of dataclasses, Any: by the value's own type


def _dataclass_encoder(kind: type) -> Encoder:
    """One function building ``kind``'s dict in one literal; its fields' encoders are
    compiled from the hints, a field reaching ``kind`` again goes through ``to_data``."""
    _ENCODERS[kind] = lambda value: _ENCODERS[kind](value)  # while compiling: recursion
    try:
        src = _Source()
        try:
            hints = _hints(kind)
        except (NameError, TypeError):  # hints that do not resolve: by the values' types
            hints = {f.name: Any for f in dataclasses.fields(kind)}
        items = [f"{_TAG!r}: {kind.__name__!r}"]
        for f in dataclasses.fields(kind):
            items.append(f"{f.name!r}: {_encode_expr(hints[f.name], 'o.' + f.name, src)}")
        source = "def encode(o):\n    return {" + ", ".join(items) + "}\n"
        encode: Encoder = _compile(source, src.namespace, "encode")
    except BaseException:
        del _ENCODERS[kind]
        raise
    _ENCODERS[kind] = encode
    return encode


# -- decoding ------------------------------------------------------------------------------
def from_data(tp: Any, data: Any) -> Any:
    """Decode ``data`` produced by ``to_data`` back into a value of type ``tp``."""
    return _decoder(tp)(data)


def _same(data: Any) -> Any:
    return data


def _refuse(tp: Any) -> Decoder:
    def refuse(data: Any) -> Any:
        raise TypeError(f"cannot decode {tp!r}")

    return refuse


@functools.cache
def _decoder(tp: Any) -> Decoder:
    if tp is Any or tp in (int, str, bool):
        return _same
    if _is_dataclass(tp):
        return _dataclass_decoder(tp)
    src = _Source()
    source = f"def decode(d):\n    return {_decode_expr(tp, 'd', src)}\n"
    decode: Decoder = _compile(source, src.namespace, "decode")
    return decode


def _decode_expr(tp: Any, d: str, src: _Source) -> str:
    """An expression decoding the data ``d`` (a local name or subscript) as ``tp``."""
    if tp is Any or tp in (int, str, bool):
        return d
    if tp is float:
        return f"float({d})"
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return f"{src.bind(tp)}({d})"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        inner = _optional_inner(tp)
        if inner is not None and not _is_dataclass(inner):
            item = _decode_expr(inner, d, src)
            return d if item == d else f"(None if {d} is None else {item})"
        return f"{src.bind(_union_decoder(args))}({d})"
    if _is_dataclass(tp):
        # a dataclass being compiled (one that reaches itself) is looked up on first call
        late = tp in _BUILDING
        return f"{src.bind(_LateDecoder(tp) if late else _decoder(tp))}({d})"
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        v = src.name("v")
        item = _decode_expr(args[0], v, src)
        return f"tuple({d})" if item == v else f"tuple([{item} for {v} in {d}])"
    if origin is tuple:
        # a wrong length is an error, as ``zip(..., strict=True)`` made it before
        check = src.bind(_fixed_length(len(args)))
        n = src.name("n")
        items = [_decode_expr(a, f"{n}[{i}]", src) for i, a in enumerate(args)]
        if items == [f"{n}[{i}]" for i in range(len(args))]:
            return f"tuple({check}({d}))"
        return f"(lambda {n}: ({', '.join(items)},))({check}({d}))"
    if origin is frozenset and args:
        v = src.name("v")
        item = _decode_expr(args[0], v, src)
        return f"frozenset({d})" if item == v else f"frozenset([{item} for {v} in {d}])"
    if origin is dict and args:
        k, v = src.name("k"), src.name("v")
        key, value = _decode_expr(args[0], k, src), _decode_expr(args[1], v, src)
        return f"{{{key}: {value} for {k}, {v} in {d}}}"
    return f"{src.bind(_refuse(tp))}({d})"


def _fixed_length(n: int) -> Callable[[Any], Any]:
    def check(data: Any) -> Any:
        if len(data) != n:
            raise ValueError(f"expected {n} items, got {len(data)}")
        return data

    return check


#: dataclasses whose decoders are being compiled
_BUILDING: set[type] = set()


class _LateDecoder:
    """A dataclass's decoder looked up on first call, so a dataclass may refer to itself."""

    def __init__(self, cls: type) -> None:
        self._cls = cls
        self._decode: Decoder | None = None

    def __call__(self, data: Any) -> Any:
        if self._decode is None:
            self._decode = _decoder(self._cls)
        return self._decode(data)


def _plain_init(cls: type) -> bool:
    """True when ``cls(**fields)`` only stores its fields: it may be built without
    ``__init__`` (a frozen dataclass's sets each field through ``object.__setattr__``)."""
    return (
        not hasattr(cls, "__post_init__")
        and "__slots__" not in cls.__dict__
        and hasattr(cls, "__dict__")
        and all(f.init for f in dataclasses.fields(cls))
        and _generated_init(cls)
    )


def _generated_init(cls: type) -> bool:
    """``cls`` has the ``__init__`` its ``@dataclass`` wrote (not inherited, not its own
    code: dataclass leaves a class's own ``__init__`` in place, and writes from text)."""
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    params = getattr(cls, "__dataclass_params__", None)
    return (
        params is not None and params.init and code is not None and code.co_filename == "<string>"
    )


def _dataclass_decoder(cls: type) -> Decoder:
    """``cls`` from its data: every field read from a key of that name; data missing a
    field (written before the field existed) take the field's default, as ``cls(**…)``."""
    hints = _hints(cls)
    src = _Source()
    names = [f.name for f in dataclasses.fields(cls)]
    _BUILDING.add(cls)
    try:
        values = {name: _decode_expr(hints[name], f"d[{name!r}]", src) for name in names}
    finally:
        _BUILDING.discard(cls)
    cls_name = src.bind(cls)
    src.namespace["slow"] = _keyword_decoder(cls, hints)
    if _plain_init(cls):
        src.namespace["new"] = object.__new__
        src.namespace["setattr"] = object.__setattr__
        pairs = ", ".join(f"{name!r}: {value}" for name, value in values.items())
        build = [
            f"    o = new({cls_name})",
            f"    setattr(o, '__dict__', {{{pairs}}})",
            "    return o",
        ]
    else:
        kwargs = ", ".join(f"{name}={value}" for name, value in values.items())
        build = [f"    return {cls_name}({kwargs})"]
    src.namespace["fields"] = frozenset(names)
    source = "\n".join(
        [
            "def decode(d):",
            "    if not d.keys() >= fields:",
            "        return slow(d)",
            *build,
            "",
        ]
    )
    decode: Decoder = _compile(source, src.namespace, "decode")
    return decode


def from_data_reusing(cls: type, data: Any, before_data: Any, before: Any) -> Any:
    """``from_data(cls, data)`` for a dataclass ``cls``, given ``before`` decoded from
    ``before_data``: a field whose data equals its data there is ``before``'s own value
    (the same object), not a copy decoded again. Successive states of a match share what
    a command did not change, as their folds made them; caches keyed by identity then
    serve each state as they serve a replay's."""
    return _reusing_decoder(cls)(data, before_data, before)


@functools.cache
def _reusing_decoder(cls: type) -> Callable[[Any, Any, Any], Any]:
    plain = _decoder(cls)
    if not _plain_init(cls):
        return lambda data, before_data, before: plain(data)
    hints = _hints(cls)
    src = _Source()
    names = [f.name for f in dataclasses.fields(cls)]
    pairs = []
    for name in names:
        value = _decode_expr(hints[name], f"d[{name!r}]", src)
        if value != f"d[{name!r}]":  # a scalar is its data: nothing to reuse
            value = f"(p.{name} if d[{name!r}] == q[{name!r}] else {value})"
        pairs.append(f"{name!r}: {value}")
    src.namespace.update(
        new=object.__new__, setattr=object.__setattr__, plain=plain, fields=frozenset(names)
    )
    source = "\n".join(
        [
            "def decode(d, q, p):",
            "    if not (d.keys() >= fields and q.keys() >= fields"
            f" and type(p) is {src.bind(cls)}):",
            "        return plain(d)",
            f"    o = new({src.bind(cls)})",
            f"    setattr(o, '__dict__', {{{', '.join(pairs)}}})",
            "    return o",
            "",
        ]
    )
    decode: Callable[[Any, Any, Any], Any] = _compile(source, src.namespace, "decode")
    return decode


def _keyword_decoder(cls: type, hints: dict[str, Any]) -> Decoder:
    """The fields present, by keyword: the others keep their defaults."""
    plan: list[tuple[str, Decoder]] = []

    def decode(data: Any) -> Any:
        if not plan:
            plan.extend((f.name, _decoder(hints[f.name])) for f in dataclasses.fields(cls))
        return cls(**{name: decode(data[name]) for name, decode in plan if name in data})

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
