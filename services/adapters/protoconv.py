"""Maps the engines' frozen dataclasses onto their protobuf messages, field by field.

The messages are generated from the dataclasses (``services.adapters.protogen``), whose
naming rule is the only one: a game's dataclass ``Moved`` is the message
``tabletop.v1.<Prefix>Moved`` and ``CrashlandView`` is ``tabletop.v1.CrashlandView``
(``<Prefix>`` + the class name without a leading ``<Prefix>``). Actions travel in
``<Prefix>Action`` with a ``oneof action`` named after each action class in snake_case.

Views and events are converted on every command and every replayed step, so the
conversion of each (dataclass, message type) pair is worked out once, from the field's
type hint (the shapes of docs/CONVENTIONS.md: scalar, str-Enum, dataclass, ``X | None``,
``tuple[X, ...]``, ``dict[str, X]``) and the message's descriptor, and compiled into one
plain Python function per direction: a call then does no type introspection at all.
The hints are trusted: a scalar field not declared ``X | None`` that holds None is a
TypeError, not sent as the field's default. Elements of a repeated field whose class is
marked ``frozen.reused`` (a view's map cells and card faces, made once per content) are
encoded once and kept by identity; the field is then filled by parsing their bytes.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
import types
import typing
from collections.abc import Callable
from typing import Any, Union

from google.protobuf import any_pb2, descriptor_pool, message, message_factory

from services.adapters.protogen import (
    camel_case,
    former_event_messages,
    message_name,
    snake_case,
)
from services.games.contract import Game
from services.games.frozen import is_reused

_PACKAGE = "tabletop.v1"

Filler = Callable[[Any, Any], None]
Reader = Callable[[Any], Any]


@functools.cache
def _message_class(full_name: str) -> type[message.Message]:
    descriptor = descriptor_pool.Default().FindMessageTypeByName(full_name)
    return message_factory.GetMessageClass(descriptor)


def _optional_inner(tp: Any) -> Any | None:
    """``X`` for ``X | None``, else None."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


@dataclasses.dataclass(frozen=True)
class _Field:
    """One dataclass field as the converters see it."""

    name: str
    #: the element type: a dataclass, a str-Enum or a plain scalar type
    value: Any
    #: declared ``X | None``
    optional: bool
    #: "" (one value), "tuple" or "dict"
    container: str
    #: a fixed tuple's length (``tuple[int, int]``: 2), else None
    length: int | None
    descriptor: Any

    @property
    def is_message(self) -> bool:
        return isinstance(self.value, type) and dataclasses.is_dataclass(self.value)

    @property
    def is_enum(self) -> bool:
        return isinstance(self.value, type) and issubclass(self.value, enum.Enum)


def _fields(cls: type, descriptor: Any) -> list[_Field]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        fd = descriptor.fields_by_name.get(f.name)
        if fd is None:
            raise TypeError(f"{descriptor.full_name} has no field {f.name!r}")
        tp = hints[f.name]
        inner = _optional_inner(tp)
        optional = inner is not None
        if inner is not None:
            tp = inner
        origin = typing.get_origin(tp)
        container, length = "", None
        if origin is tuple:
            args = typing.get_args(tp)
            container = "tuple"
            if len(args) == 2 and args[1] is Ellipsis:
                tp = args[0]
            elif args and all(a == args[0] for a in args):
                tp, length = args[0], len(args)
            else:
                raise TypeError(f"{cls.__name__}.{f.name}: tuples must hold one type")
        elif origin is dict:
            container, tp = "dict", typing.get_args(tp)[1]
        out.append(_Field(f.name, tp, optional, container, length, fd))
    return out


def _compile(source: str, namespace: dict[str, Any], name: str) -> Any:
    exec(compile(source, f"<protoconv {name}>", "exec"), namespace)
    return namespace[name]


# dataclass → message -------------------------------------------------------------------
_FILLERS: dict[tuple[type, Any], Filler] = {}


def _filler(cls: type, descriptor: Any) -> Filler:
    """The function that copies a ``cls`` into a message of type ``descriptor``."""
    found = _FILLERS.get((cls, descriptor))
    return found if found is not None else _build_filler(cls, descriptor, set())


def _element_descriptor(f: _Field) -> Any:
    if f.container == "dict":
        return f.descriptor.message_type.fields_by_name["value"].message_type
    return f.descriptor.message_type


def _build_filler(cls: type, descriptor: Any, building: set[tuple[type, Any]]) -> Filler:
    key = (cls, descriptor)
    if key in _FILLERS:
        return _FILLERS[key]
    if key in building:  # a dataclass that reaches itself: call its filler once it exists
        return lambda msg, obj: _FILLERS[key](msg, obj)
    building.add(key)
    namespace: dict[str, Any] = {}
    lines = ["def fill(m, o):", "    pass"]
    for i, f in enumerate(_fields(cls, descriptor)):
        n, nested = f.name, f"f{i}"
        if f.is_message:
            namespace[nested] = _build_filler(f.value, _element_descriptor(f), building)
        out = "x._value_" if f.is_enum else "x"  # _value_: Enum's .value without its property
        if not f.container and f.is_message:
            lines += [f"    x = o.{n}", "    if x is not None:"]
            lines += [f"        t = m.{n}", "        t.SetInParent()", f"        {nested}(t, x)"]
        elif not f.container and f.optional:
            lines += [f"    x = o.{n}", f"    if x is not None: m.{n} = {out}"]
        elif not f.container:
            lines.append(f"    x = o.{n}; m.{n} = {out}")
        elif f.container == "tuple" and f.is_message and is_reused(f.value):
            namespace[f"w{i}"] = _joined(_wire(f.descriptor, namespace[nested]))
            lines += [f"    v = o.{n}", "    if v:"]
            lines.append(f"        m.MergeFromString(w{i}(v))")
        elif f.container == "tuple" and f.is_message:
            lines += [f"    v = o.{n}", "    if v:", f"        add = m.{n}.add"]
            lines.append(f"        for x in v: {nested}(add(), x)")
        elif f.container == "tuple":
            items = "[x._value_ for x in v]" if f.is_enum else "v"
            lines += [f"    v = o.{n}", f"    if v: m.{n}.extend({items})"]
        elif f.is_message:
            lines += [f"    v = o.{n}", "    if v:", f"        t = m.{n}"]
            lines.append(f"        for k, x in v.items(): {nested}(t[k], x)")
        else:
            lines += [f"    v = o.{n}", "    if v:", f"        t = m.{n}"]
            lines.append(f"        for k, x in v.items(): t[k] = {out}")
    built: Filler = _compile("\n".join(lines), namespace, "fill")
    _FILLERS[key] = built
    return built


#: entries kept per repeated field by ``_wire`` before it starts afresh
WIRE_KEPT = 4096


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _wire(field: Any, element_filler: Filler) -> Callable[[Any], bytes]:
    """An element's encoding as one entry of the repeated message ``field`` (its tag, its
    length, the element), kept by the element's identity for classes whose instances are
    reused (``frozen.reused``): a view shows the same cells and cards render after render,
    and parsing their kept bytes costs a fraction of filling each anew."""
    tag = _varint(field.number << 3 | 2)  # wire type 2: length-delimited
    element_class = message_factory.GetMessageClass(field.message_type)
    kept: dict[int, tuple[Any, bytes]] = {}

    def wire(obj: Any) -> bytes:
        found = kept.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        element = element_class()
        element_filler(element, obj)
        body = element.SerializeToString()
        entry = tag + _varint(len(body)) + body
        if len(kept) >= WIRE_KEPT:
            kept.clear()
        kept[id(obj)] = (obj, entry)  # the object kept alive with its id
        return entry

    return wire


#: tuples of reused elements whose joined encodings ``_joined`` keeps per field
JOINED_KEPT = 1024


def _joined(wire: Callable[[Any], bytes]) -> Callable[[tuple[Any, ...]], bytes]:
    """The encodings of a tuple's elements joined, kept by the tuple's identity too: a
    view made from the same parts as the one before shows the very tuple again (a map on
    which nothing moved, an unchanged hand), and its bytes are those of last time."""
    kept: dict[int, tuple[tuple[Any, ...], bytes]] = {}

    def joined(items: tuple[Any, ...]) -> bytes:
        found = kept.get(id(items))
        if found is not None and found[0] is items:
            return found[1]
        data = b"".join([wire(x) for x in items])
        if len(kept) >= JOINED_KEPT:
            kept.clear()
        kept[id(items)] = (items, data)  # the tuple kept alive with its id
        return data

    return joined


def fill(msg: message.Message, obj: Any) -> message.Message:
    """Copy the dataclass ``obj`` into ``msg`` (a message of the matching type)."""
    msg.SetInParent()
    _filler(type(obj), msg.DESCRIPTOR)(msg, obj)
    return msg


# message → dataclass -------------------------------------------------------------------
_READERS: dict[tuple[type, Any], Reader] = {}


def _reader(cls: type, descriptor: Any) -> Reader:
    """The function that builds a ``cls`` from a message of type ``descriptor``."""
    found = _READERS.get((cls, descriptor))
    return found if found is not None else _build_reader(cls, descriptor, set())


def _fixed(items: tuple[Any, ...], length: int, where: str) -> tuple[Any, ...]:
    if len(items) != length:
        raise ValueError(f"{where} holds {length} values, not {len(items)}")
    return items


@functools.cache
def _enum_reader(cls: type[enum.Enum]) -> Reader:
    """``cls(value)`` by a dict lookup (calling an Enum class costs ten times more)."""
    members = {member.value: member for member in cls}

    def member(value: Any) -> Any:
        try:
            return members[value]
        except KeyError:
            return cls(value)  # raises ValueError: not a member (a malformed action)

    return member


def _build_reader(cls: type, descriptor: Any, building: set[tuple[type, Any]]) -> Reader:
    key = (cls, descriptor)
    if key in _READERS:
        return _READERS[key]
    if key in building:  # a dataclass that reaches itself: call its reader once it exists
        return lambda msg: _READERS[key](msg)
    building.add(key)
    namespace: dict[str, Any] = {
        "C": cls,
        "_fixed": _fixed,
        "new": object.__new__,
        "setattr": object.__setattr__,
    }
    arguments: list[tuple[str, str]] = []
    for i, f in enumerate(_fields(cls, descriptor)):
        n, convert = f.name, f"c{i}"
        if f.is_message:
            namespace[convert] = _build_reader(f.value, _element_descriptor(f), building)
        elif f.is_enum:
            namespace[convert] = _enum_reader(f.value)
        else:
            convert = ""  # protobuf already gives the int, str, bool or float
        if not f.container:
            value = f"{convert}(m.{n})" if convert else f"m.{n}"
            if f.optional and f.descriptor.has_presence:
                value = f'({value} if m.HasField("{n}") else None)'
        elif f.container == "tuple":
            value = f"tuple([{convert}(x) for x in m.{n}])" if convert else f"tuple(m.{n})"
            if f.length is not None:
                value = f'_fixed({value}, {f.length}, "{cls.__name__}.{n}")'
        else:
            value = f"{{k: {convert}(x) for k, x in m.{n}.items()}}" if convert else f"dict(m.{n})"
        arguments.append((n, value))
    if _plain_init(cls):  # the instance dict written at once, as its __init__ would
        entries = [f'        "{n}": {value},' for n, value in arguments]
        body = ["    o = new(C)", '    setattr(o, "__dict__", {', *entries, "    })"]
        body.append("    return o")
    else:
        body = ["    return C(", *(f"        {n}={value}," for n, value in arguments), "    )"]
    source = "\n".join(["def read(m):", *body])
    built: Reader = _compile(source, namespace, "read")
    _READERS[key] = built
    return built


def _plain_init(cls: type) -> bool:
    """Whether ``cls.__init__`` only stores its arguments: a frozen dataclass's generated
    ``__init__`` (or ``quick_init``'s), without ``__post_init__``, slots or fields outside
    ``__init__``. Its readers then write the instance dict at once (the generated
    ``__init__`` costs ~0.4 µs a field through ``object.__setattr__``)."""
    params: Any = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init:
        return False
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        return False
    if not all(f.init for f in dataclasses.fields(cls)):
        return False
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)  # dataclasses compile theirs from "<string>"
    name = "" if code is None else code.co_filename
    return name == "<string>" or name.startswith("<quick_init ")


def read(cls: type, msg: message.Message) -> Any:
    """Build the dataclass ``cls`` from ``msg``."""
    return _reader(cls, msg.DESCRIPTOR)(msg)


class GameMessages:
    """The protobuf face of one game: its events, actions and views."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self.prefix = camel_case(game.name)
        importlib.import_module(f"tabletop.v1.{game.name}_pb2")
        self._events = {self.message_name(c): c for c in game.event_types}
        # events of older logs, under the names their classes had then
        for name, cls in former_event_messages(game).items():
            self._events[f"{_PACKAGE}.{name}"] = cls
        self._actions = {snake_case(c.__name__): c for c in game.action_types}
        #: per dataclass: its message class and filler (worked out on first use)
        self._out: dict[type, tuple[type[message.Message], Filler]] = {}
        #: per event message name: its message class and reader
        self._in: dict[str, tuple[type[message.Message], Reader]] = {}
        #: per ``Any.type_url`` seen: its message class and reader, None for no game event
        #: (a fold asks of every envelope; ``TypeName`` splits the URL in Python each time)
        self._urls: dict[str, tuple[type[message.Message], Reader] | None] = {}

    def message_name(self, cls: type) -> str:
        return f"{_PACKAGE}.{message_name(self.prefix, cls)}"

    def to_message(self, obj: Any) -> message.Message:
        cls = type(obj)
        found = self._out.get(cls)
        if found is None:
            message_class = _message_class(self.message_name(cls))
            found = self._out[cls] = (message_class, _filler(cls, message_class.DESCRIPTOR))
        message_class, filler = found
        msg = message_class()
        filler(msg, obj)
        return msg

    def class_for(self, full_name: str) -> type | None:
        """The event class whose message is ``full_name`` (None: not this game's event)."""
        return self._events.get(full_name)

    # events ---------------------------------------------------------------------------
    def event_to_any(self, event: Any) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(self.to_message(event))
        return packed

    def is_game_event(self, packed: any_pb2.Any) -> bool:
        url = packed.type_url
        found = self._urls.get(url)
        if found is None and url not in self._urls:
            found = self._url(url, packed.TypeName())
        return found is not None

    def event_from_any(self, packed: any_pb2.Any) -> Any:
        url = packed.type_url
        found = self._urls.get(url)
        if found is None:
            name = packed.TypeName()
            found = self._url(url, name)
            if found is None:
                raise TypeError(f"{name} is not a {self.game.name} event")
        message_class, reader = found
        return reader(message_class.FromString(packed.value))

    def _url(self, url: str, name: str) -> tuple[type[message.Message], Reader] | None:
        cls = self.class_for(name)
        found = None
        if cls is not None:
            found = self._in.get(name)
            if found is None:
                message_class = _message_class(name)
                found = self._in[name] = (message_class, _reader(cls, message_class.DESCRIPTOR))
        if len(self._urls) < 4096:  # URLs come from stored events: a bound against odd ones
            self._urls[url] = found
        return found

    # actions --------------------------------------------------------------------------
    def action_wrapper(self) -> message.Message:
        return _message_class(f"{_PACKAGE}.{self.prefix}Action")()

    def action_to_message(self, action: Any) -> message.Message:
        return self.fill_action(self.action_wrapper(), action)

    def fill_action(self, wrapper: message.Message, action: Any) -> message.Message:
        """Set ``action`` in ``wrapper`` (a ``<Prefix>Action``, e.g. inside a GameAction)."""
        fill(getattr(wrapper, snake_case(type(action).__name__)), action)
        return wrapper

    def action_from_message(self, wrapper: message.Message) -> Any:
        which = wrapper.WhichOneof("action")
        if which is None:
            raise ValueError("the action is empty")
        cls = self._actions.get(which)
        if cls is None:
            raise ValueError(f"unknown {self.game.name} action {which!r}")
        return read(cls, getattr(wrapper, which))

    # views ----------------------------------------------------------------------------
    def view_to_message(self, view: Any) -> message.Message:
        return self.to_message(view)
