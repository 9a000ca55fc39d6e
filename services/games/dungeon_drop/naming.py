"""Dungeon Drop's legal actions as the player names them and picks them on the picture
(``Game.describe``): a flick is a drag from the cube (its direction and length set the
flick's), a Pillar moved is dragged to its place, a meeple is put down on the table, a
room is its three Pillars (the cubes it would collect shown), a cube taken is the cube.
Ids are the picture's own (``picture.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from services.games.contract import Described, PictureAxis
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.picture import TABLE_ID, cube_id, table_y
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.rooms import open_rooms
from services.games.dungeon_drop.view import DungeonDropView

#: a drag this long (picture units, table millimetres) flicks at full strength
FULL_FLICK_DRAG = 240.0

#: a point picked on the picture, as table coordinates
POINT_AXES = {
    "x": PictureAxis("x"),
    "y": PictureAxis("y", scale=-1.0, offset=table_y(0.0)),
}
FLICK_AXES = {
    "direction": PictureAxis("angle"),
    "strength": PictureAxis("length", scale=1.0 / FULL_FLICK_DRAG),
}

_ABILITY = {
    "flick": "flick {n} cube(s)",
    "extra_drop": "drop {n} more cube(s)",
    "move_pillar": "move {n} Pillar(s)",
    "take_outside": "take {n} treasure(s) from outside the room",
    "heal": "heal {n}",
    "ward": "ward off the monsters this turn",
}


def cube_name(cube: str) -> str:
    """``gold03`` is "gold 3": its kind and its number on the table."""
    kind = CONTENT.cubes[cube]
    number = cube.removeprefix(kind).lstrip("0")
    return f"{kind} {number}" if number.isdigit() else cube


def _pillars(pillars: tuple[str, ...]) -> str:
    numbers = [cube_name(p).removeprefix("pillar ") for p in pillars]
    return "Pillars " + ", ".join(numbers[:-1]) + " and " + numbers[-1]


def _counted(cubes: tuple[str, ...]) -> str:
    kinds = Counter(CONTENT.cubes[c] for c in cubes)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "nothing"


def _ability(view: DungeonDropView, source: str) -> str:
    seat = next((s for s in view.seats if s.player == view.viewer), None)
    if seat is None:
        return f"use your {source} ability"
    if source == "race":
        name, ability = CONTENT.races[seat.race].name, CONTENT.races[seat.race].ability
    else:
        name, ability = (
            CONTENT.classes[seat.hero_class].name,
            CONTENT.classes[seat.hero_class].ability,
        )
    does = _ABILITY[ability.primitive].format(n=ability.amount)
    return f"use your {source} ability ({name}): {does}"


#: the last view's rooms (a loot step describes up to a hundred rooms of one view)
_last_rooms: tuple[DungeonDropView | None, dict[tuple[str, ...], tuple[str, ...]]] = (None, {})


def _rooms(view: DungeonDropView) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Every room of the table the view shows, with the cubes it would collect."""
    global _last_rooms
    if _last_rooms[0] is not view:
        table = {c.cube: Placement(c.cube, c.x, c.y, c.angle) for c in view.table}
        _last_rooms = (view, dict(open_rooms(table)))
    return _last_rooms[1]


def describe(view: DungeonDropView, action: Any) -> Described:
    match action:
        case act.UseAbility(source=source):
            return Described(_ability(view, source))
        case act.SkipAbility():
            return Described("use no ability this turn")
        case act.Flick(cube=cube):
            return Described(f"flick {cube_name(cube)}", (cube_id(cube),), axes=FLICK_AXES)
        case act.MovePillar(pillar=pillar):
            return Described(
                f"move {cube_name(pillar).capitalize()} to a place on the table",
                (cube_id(pillar),),
                axes=POINT_AXES,
            )
        case act.EndAbility():
            return Described("stop using the ability")
        case act.PlaceMeeple():
            return Described("put your meeple on the table", (TABLE_ID,), axes=POINT_AXES)
        case act.LootRoom(pillars=pillars):
            inside = _rooms(view).get(tuple(pillars), ())
            return Described(
                f"loot the room of {_pillars(pillars)}: {_counted(inside)}",
                tuple(cube_id(p) for p in pillars),
                tuple(cube_id(c) for c in inside),
            )
        case act.LeaveEmptyHanded():
            return Described("leave empty-handed")
        case act.TakeCube(cube=cube):
            return Described(f"take {cube_name(cube)}", (cube_id(cube),))
        case act.SkipTake():
            return Described("take nothing")
    return Described(repr(action))
