"""Deciding players' actions: validation and the events they cause (a pillar moved by
hand is simulated here, deterministically; flicks wait for the dice)."""

from __future__ import annotations

from typing import Any, Final

from services.games.contract import ActionTemplate, MalformedAction, ParamRange, RuleViolation
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.loot import Looter, is_treasure, loot_result
from services.games.dungeon_drop.placement import Physics
from services.games.dungeon_drop.rooms import contains_point, is_pillar, open_rooms, pillars_on
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import FULL, place

SOURCES = ("race", "class")


def ability_of(state: DungeonDropState, player: str, source: str) -> tuple[str, int]:
    if source == "race":
        ability = CONTENT.races[state.races[player]].ability
    else:
        ability = CONTENT.classes[state.classes[player]].ability
    return ability.primitive, ability.amount


def flick_template(cube: str) -> ActionTemplate:
    return ActionTemplate(act.Flick(cube, 0.0, 0.5), _FLICK_RANGES)


#: a flick's free parameters (frozen: made once, shared by every flick template)
_FLICK_RANGES: Final = (
    ParamRange("direction", 0.0, 360.0, "degrees"),
    ParamRange("strength", 0.0, 1.0),
)


def _table_ranges() -> tuple[ParamRange, ParamRange]:
    return _TABLE_RANGES


#: a spot on the table (frozen: made once)
_TABLE_RANGES: Final = (
    ParamRange("x", 0.0, CONTENT.table.width, "mm"),
    ParamRange("y", 0.0, CONTENT.table.height, "mm"),
)


def pillar_template(pillar: str) -> ActionTemplate:
    spec = CONTENT.table
    return ActionTemplate(act.MovePillar(pillar, spec.width / 2, spec.height / 2), _table_ranges())


def meeple_template() -> ActionTemplate:
    spec = CONTENT.table
    return ActionTemplate(act.PlaceMeeple(spec.width / 2, spec.height / 2), _table_ranges())


def lootable_rooms(
    state: DungeonDropState, player: str
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Rooms collecting something, no Pillar, and not the hero's last Health point."""
    looter = Looter.of(state, player)
    return [
        (trio, cubes) for trio, cubes in open_rooms(state.table) if cubes and looter.survives(cubes)
    ]


def takeable(state: DungeonDropState) -> tuple[str, ...]:
    return tuple(sorted(c for c in state.table if is_treasure(c)))


def phase_actions(state: DungeonDropState, player: str) -> tuple[Any, ...]:
    match state.phase:
        case Phase.ACT:
            return (*(act.UseAbility(s) for s in SOURCES), act.SkipAbility())
        case Phase.ABILITY if state.ability == "flick":
            return (*(flick_template(c) for c in sorted(state.table)), act.EndAbility())
        case Phase.ABILITY if state.ability == "move_pillar":
            return (*(pillar_template(p) for p in pillars_on(state.table)), act.EndAbility())
        case Phase.MEEPLES:
            return (meeple_template(),)
        case Phase.LOOT:
            rooms = tuple(_loot_room(trio) for trio, _ in lootable_rooms(state, player))
            return (*rooms, act.LeaveEmptyHanded())
        case Phase.TAKE:
            return (*(act.TakeCube(c) for c in takeable(state)), act.SkipTake())
    return ()


def _loot_room(pillars: tuple[str, ...]) -> act.LootRoom:
    """``act.LootRoom(pillars)``, its instance dict stored whole as its quick ``__init__``
    stores it (services/games/frozen.py), without a Python frame for each of the ~100
    rooms a Loot step offers."""
    action: act.LootRoom = _new(act.LootRoom)
    _set(action, "__dict__", {"pillars": pillars})
    return action


_new: Final = object.__new__
_set: Final = object.__setattr__  # past the frozen __setattr__


def _refuse_phase(state: DungeonDropState, wanted: tuple[Phase, ...], what: str) -> None:
    if state.phase not in wanted:
        raise RuleViolation("NOT_NOW", f"You cannot {what} now ({state.phase.value}).")


def _in_range(action: Any, template: ActionTemplate) -> None:
    if not template.admits(action):
        ranges = ", ".join(f"{r.name} in [{r.low:g}, {r.high:g}]" for r in template.ranges)
        raise MalformedAction("OUT_OF_RANGE", f"Choose {ranges}.")


def decide_action(
    state: DungeonDropState, player: str, action: Any, physics: Physics = FULL
) -> list[Any]:
    match action:
        case act.UseAbility(source=source):
            _refuse_phase(state, (Phase.ACT,), "use an ability")
            if source not in SOURCES:
                raise MalformedAction("BAD_SOURCE", "Use your 'race' or your 'class' ability.")
            primitive, amount = ability_of(state, player, source)
            out: list[Any] = [ev.AbilityUsed(player, source, primitive, amount)]
            if primitive == "heal":
                out.append(ev.Healed(player, amount, state.health[player] + amount))
            return out
        case act.SkipAbility():
            _refuse_phase(state, (Phase.ACT,), "skip the Act step")
            return [ev.AbilityEnded(player)]
        case act.Flick(cube=cube, direction=direction, strength=strength):
            if state.phase != Phase.ABILITY or state.ability != "flick":
                raise RuleViolation("NO_FLICK", "You have no flick to make now.")
            if cube not in state.table:
                raise RuleViolation("NOT_ON_TABLE", f"{cube} is not on the table.")
            _in_range(action, flick_template(cube))
            return [ev.FlickAimed(player, cube, float(direction), float(strength))]
        case act.MovePillar(pillar=pillar, x=x, y=y):
            if state.phase != Phase.ABILITY or state.ability != "move_pillar":
                raise RuleViolation("NO_MOVE", "You have no Pillar to move now.")
            if pillar not in state.table or not is_pillar(pillar):
                raise RuleViolation("NOT_A_PILLAR", f"{pillar} is not a Pillar on the table.")
            _in_range(action, pillar_template(pillar))
            settled = place(state.table, pillar, float(x), float(y), physics)
            return [
                ev.PillarMoved(
                    player, pillar, float(x), float(y), settled.placements, settled.off_table
                )
            ]
        case act.EndAbility():
            _refuse_phase(state, (Phase.ABILITY,), "end an ability")
            if state.pending_flick is not None or state.ability not in ("flick", "move_pillar"):
                raise RuleViolation("NOT_NOW", "Wait for the cubes to come to rest.")
            return [ev.AbilityEnded(player)]
        case act.PlaceMeeple(x=x, y=y):
            _refuse_phase(state, (Phase.MEEPLES,), "place a meeple")
            _in_range(action, meeple_template())
            return [ev.MeeplePlaced(player, float(x), float(y))]
        case act.LootRoom(pillars=pillars):
            _refuse_phase(state, (Phase.LOOT,), "loot")
            return [_loot(state, player, pillars)]
        case act.LeaveEmptyHanded():
            _refuse_phase(state, (Phase.LOOT,), "loot")
            return [ev.LeftEmptyHanded(player)]
        case act.TakeCube(cube=cube):
            _refuse_phase(state, (Phase.TAKE,), "take a cube from outside the room")
            if cube not in takeable(state):
                raise RuleViolation("NOT_TAKEABLE", f"{cube} is not a treasure on the table.")
            return [ev.CubeTaken(player, cube)]
        case act.SkipTake():
            _refuse_phase(state, (Phase.TAKE,), "skip taking a cube")
            return [ev.TakeSkipped(player)]
    raise MalformedAction("UNKNOWN_ACTION", f"{action!r} is not a Dungeon Drop action.")


def _loot(state: DungeonDropState, player: str, pillars: tuple[str, ...]) -> ev.RoomLooted:
    trio = tuple(sorted(pillars))
    if len(set(trio)) != 3:
        raise MalformedAction("THREE_PILLARS", "A room is formed by 3 different Pillars.")
    if not all(p in state.table and is_pillar(p) for p in trio):
        raise RuleViolation("NOT_A_PILLAR", "Choose 3 Pillars that are on the table.")
    rooms = {t: cubes for t, cubes in open_rooms(state.table)}
    if trio not in rooms:
        raise RuleViolation(
            "COLLECTS_PILLAR", "That room would collect a Pillar (or its Pillars are in a line)."
        )
    cubes = rooms[trio]
    result = loot_result(state, player, cubes)
    if result.health < 1:
        raise RuleViolation(
            "LAST_HEALTH", "The monsters in that room would take your last Health point."
        )
    meeples = tuple(
        owner
        for owner, (x, y) in sorted(state.meeples.items())
        if contains_point(state.table, trio, x, y)
    )
    return ev.RoomLooted(
        player,
        trio,
        cubes,
        result.healed,
        result.damage,
        result.shields_spent,
        result.health,
        meeples,
    )
