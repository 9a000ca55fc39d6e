"""Every dataclass reachable from the actions, events and view uses only the field types
docs/CONVENTIONS.md maps onto protobuf, so the generator can derive the messages."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Union

from services.games.imperial_miners import GAME

SCALARS = (int, str, bool, float)


def allowed(tp: Any, found: set[type]) -> bool:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp in SCALARS:
        return True
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return issubclass(tp, str)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        found.add(tp)
        return True
    if origin is tuple:
        return len(args) == 2 and args[1] is Ellipsis and allowed(args[0], found)
    if origin is dict:
        return args[0] is str and allowed(args[1], found) and typing.get_origin(args[1]) is None
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return (
            len(args) == 2
            and len(rest) == 1
            and typing.get_origin(rest[0]) is None
            and (allowed(rest[0], found))
        )
    return False


def test_actions_events_and_view_use_only_wire_types() -> None:
    todo: list[type] = [*GAME.action_types, *GAME.event_types, GAME.view_type]
    seen: set[type] = set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        found: set[type] = set()
        for name, hint in typing.get_type_hints(cls).items():
            assert allowed(hint, found), f"{cls.__name__}.{name}: {hint}"
        todo += found - seen
    names = {cls.__name__ for cls in seen}
    assert {"PlacedCard", "MinePos", "ImperialMinersSeatView"} <= names
