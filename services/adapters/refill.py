"""A message kept in step with a dataclass that changes a little at a time.

A replay draws a view after every event, and one event changes few of a view's parts (a
Crashland move: the astronaut, one or two of 30 cells, a counter). Filling the whole message
afresh (``protoconv.fill``) each step walks every part; ``Refill`` compares the new
dataclass with the one it last filled and fills again only the top-level fields that
differ, and of a list of dataclasses that kept its length only the elements that differ.
The message it keeps equals what ``fill`` makes of the same dataclass.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any

from google.protobuf import message

from services.adapters.protoconv import fill


@functools.cache
def _names(cls: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _scalar(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


class Refill:
    """``message`` as ``fill`` makes it of the dataclass last given to ``update``."""

    def __init__(self, msg: message.Message) -> None:
        self.message = msg
        self._last: Any = None

    def update(self, obj: Any) -> message.Message:
        last, self._last = self._last, obj
        if last is None or type(last) is not type(obj):
            self.message.Clear()
            return fill(self.message, obj)
        cls: Any = type(obj)
        for name in _names(cls):
            new, old = getattr(obj, name), getattr(last, name)
            if new is not old and new != old:
                self._field(name, new, old)
        return self.message

    def _field(self, name: str, new: Any, old: Any) -> None:
        msg: Any = self.message
        if new is None:
            msg.ClearField(name)
        elif dataclasses.is_dataclass(new):
            msg.ClearField(name)
            fill(getattr(msg, name), new)
        elif isinstance(new, tuple):
            target = getattr(msg, name)
            if new and dataclasses.is_dataclass(new[0]) and len(new) == len(old):
                for index, (item, was) in enumerate(zip(new, old, strict=True)):
                    if item is not was and item != was:
                        target[index].Clear()
                        fill(target[index], item)
                return
            msg.ClearField(name)
            target = getattr(msg, name)
            for item in new:
                if dataclasses.is_dataclass(item):
                    fill(target.add(), item)
                else:
                    target.append(_scalar(item))
        elif isinstance(new, dict):
            msg.ClearField(name)
            target = getattr(msg, name)
            for key, value in new.items():
                if dataclasses.is_dataclass(value):
                    fill(target[key], value)
                else:
                    target[key] = _scalar(value)
        else:
            setattr(msg, name, _scalar(new))
