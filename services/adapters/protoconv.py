"""Maps the engines' frozen dataclasses onto their protobuf messages, field by field.

The messages are generated from the dataclasses (``services.adapters.protogen``), whose
naming rule is the only one: a game's dataclass ``Moved`` is the message
``tabletop.v1.<Prefix>Moved`` and ``CrashlandView`` is ``tabletop.v1.CrashlandView``
(``<Prefix>`` + the class name without a leading ``<Prefix>``). Actions travel in
``<Prefix>Action`` with a ``oneof action`` named after each action class in snake_case.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
import types
import typing
from typing import Any, Union

from google.protobuf import any_pb2, descriptor_pool, message, message_factory

from services.adapters.protogen import camel_case, message_name, snake_case
from services.games.contract import Game

_PACKAGE = "tabletop.v1"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


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


def _scalar_out(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


# How to copy each field of a dataclass into a message: worked out once per pair of
# (dataclass, message type), since views and events are converted on every command.
_MAP_MESSAGE, _MAP_SCALAR, _LIST_MESSAGE, _LIST_SCALAR, _MESSAGE, _SCALAR = range(6)


@functools.cache
def _fill_plan(cls: Any, descriptor: Any) -> tuple[tuple[str, int], ...]:
    plan = []
    for f in dataclasses.fields(cls):
        fd: Any = descriptor.fields_by_name.get(f.name)
        if fd is None:
            raise TypeError(f"{descriptor.full_name} has no field {f.name!r}")
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            kind = _MAP_MESSAGE if value_fd.message_type is not None else _MAP_SCALAR
        elif fd.is_repeated:
            kind = _LIST_MESSAGE if fd.message_type is not None else _LIST_SCALAR
        else:
            kind = _MESSAGE if fd.message_type is not None else _SCALAR
        plan.append((f.name, kind))
    return tuple(plan)


def fill(msg: message.Message, obj: Any) -> message.Message:
    """Copy the dataclass ``obj`` into ``msg`` (a message of the matching type)."""
    msg.SetInParent()
    cls: Any = type(obj)
    for name, kind in _fill_plan(cls, msg.DESCRIPTOR):
        value = getattr(obj, name)
        if value is None:
            continue
        if kind == _SCALAR:
            setattr(msg, name, _scalar_out(value))
            continue
        target: Any = getattr(msg, name)
        if kind == _MESSAGE:
            fill(target, value)
        elif kind == _LIST_SCALAR:
            target.extend([_scalar_out(v) for v in value])
        elif kind == _LIST_MESSAGE:
            for item in value:
                fill(target.add(), item)
        elif kind == _MAP_SCALAR:
            for k, v in value.items():
                target[k] = _scalar_out(v)
        else:
            for k, v in value.items():
                fill(target[k], v)
    return msg


def read(cls: type, msg: message.Message) -> Any:
    """Build the dataclass ``cls`` from ``msg``."""
    hints = _hints(cls)
    fields = msg.DESCRIPTOR.fields_by_name
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        fd = fields.get(f.name)
        if fd is None:
            raise TypeError(f"{msg.DESCRIPTOR.full_name} has no field {f.name!r}")
        kwargs[f.name] = _read_field(hints[f.name], msg, fd)
    return cls(**kwargs)


def _read_field(tp: Any, msg: message.Message, fd: Any) -> Any:
    inner = _optional_inner(tp)
    if inner is not None:
        if fd.has_presence and not msg.HasField(fd.name):
            return None
        tp = inner
    value = getattr(msg, fd.name)
    origin = typing.get_origin(tp)
    if origin is dict:
        _, v_tp = typing.get_args(tp)
        return {k: _convert(v_tp, v) for k, v in value.items()}
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v) for v in value)
        return tuple(_convert(a, v) for a, v in zip(args, value, strict=True))
    return _convert(tp, value)


def _convert(tp: Any, value: Any) -> Any:
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            return read(tp, value)
        if issubclass(tp, enum.Enum):
            return tp(value)
        if tp is float:
            return float(value)
        if tp in (int, str, bool):
            return tp(value)
    inner = _optional_inner(tp)
    if inner is not None:
        return _convert(inner, value)
    raise TypeError(f"cannot convert a protobuf value to {tp!r}")


class GameMessages:
    """The protobuf face of one game: its events, actions and views."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self.prefix = camel_case(game.name)
        importlib.import_module(f"tabletop.v1.{game.name}_pb2")
        self._events = {self.message_name(c): c for c in game.event_types}
        self._actions = {c.__name__: c for c in game.action_types}

    def message_name(self, cls: type) -> str:
        return f"{_PACKAGE}.{message_name(self.prefix, cls)}"

    def to_message(self, obj: Any) -> message.Message:
        return fill(_message_class(self.message_name(type(obj)))(), obj)

    def class_for(self, full_name: str) -> type | None:
        """The event class whose message is ``full_name`` (None: not this game's event)."""
        return self._events.get(full_name)

    # events ---------------------------------------------------------------------------
    def event_to_any(self, event: Any) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(self.to_message(event))
        return packed

    def is_game_event(self, packed: any_pb2.Any) -> bool:
        return self.class_for(packed.TypeName()) is not None

    def event_from_any(self, packed: any_pb2.Any) -> Any:
        cls = self.class_for(packed.TypeName())
        if cls is None:
            raise TypeError(f"{packed.TypeName()} is not a {self.game.name} event")
        msg = _message_class(packed.TypeName())()
        packed.Unpack(msg)
        return read(cls, msg)

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
        for cls in self._actions.values():
            if snake_case(cls.__name__) == which:
                return read(cls, getattr(wrapper, which))
        raise ValueError(f"unknown {self.game.name} action {which!r}")

    # views ----------------------------------------------------------------------------
    def view_to_message(self, view: Any) -> message.Message:
        return self.to_message(view)
