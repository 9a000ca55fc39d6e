"""The Event card at the start of a turn: sub-events in order (Goblin Advance, Fire
Intensification, Overheating), then the main event."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, EventCard
from services.games.drillit.end_conditions import permanent_damage
from services.games.drillit.evolve import fold, fold_into, sector_goblins
from services.games.drillit.records import made
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import abyss_cell

# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_EXPLOSION_FIRES: Final = CONTENT.explosion_fires
_GOBLINS_ADVANCED: Final = ev.GoblinsAdvanced
_REACHED_CENTRE: Final = ev.GoblinsReachedCentre

SUB_EVENT_NAMES = {
    "advance": "Goblin Advance",
    "intensify": "Fire Intensification",
    "overheat": "Overheating",
}


# Events are immutable: one instance of each of these serves every match (building a
# frozen event costs several times the cache's look-up).


@functools.lru_cache(maxsize=64)
def _armor_destroyed(room: int) -> ev.ArmorDestroyed:
    return ev.ArmorDestroyed(room)


@functools.lru_cache(maxsize=256)
def _intensified(rooms: tuple[int, ...]) -> ev.FiresIntensified:
    return ev.FiresIntensified(rooms)


@functools.lru_cache(maxsize=16)
def _found(colour: str) -> ev.CrystalFound:
    return ev.CrystalFound(colour)


def goblin_advance(state: DrillitState) -> list[Any]:
    """Every Goblin moves one space in a straight line. At intact Armor one Goblin per
    Armor sacrifices itself; the others go in. Goblins already inside reach the centre."""
    radar, destroyed, reached, armor_destroyed = [], [], 0, state.armor_destroyed
    for sector in state.radar:
        spaces = sector.spaces
        reached += spaces[0]
        at_armor = spaces[1]
        room = sector.sector  # room n faces sector n
        if at_armor and room not in armor_destroyed:
            destroyed.append(_armor_destroyed(room))
            at_armor -= 1
        radar.append(sector_goblins(room, (at_armor, *spaces[2:], 0)))  # at_armor go in
    # ev.GoblinsAdvanced(radar), compiled (records.made)
    out: list[Any] = [made(_GOBLINS_ADVANCED, {"radar": tuple(radar)}), *destroyed]
    if reached:
        out.append(_REACHED_CENTRE(reached))
    return out


def goblin_advance_with_damage(draft: DrillitState) -> list[Any]:
    """The Goblin Advance and the damage of those reaching the centre, each folded into
    ``draft`` (the turn flow's own copy of the state) on the way."""
    facts = goblin_advance(draft)
    fold_into(draft, facts)
    last = facts[-1]  # (those reaching the centre come last, when any do)
    if isinstance(last, ev.GoblinsReachedCentre) and last.count:
        damage = permanent_damage(draft, last.count, "goblins reached the centre")
        facts += damage
        fold_into(draft, damage)
    return facts


def explosion(state: DrillitState, room: int) -> list[Any]:
    return [ev.RoomExploded(room), *permanent_damage(state, 1, f"room {room} exploded")]


def fire_intensification(draft: DrillitState) -> list[Any]:
    """The Fire Intensification and its explosions, folded into ``draft`` on the way."""
    rooms = tuple(sorted(r for r, n in draft.fires.items() if n > 0))
    out: list[Any] = [_intensified(rooms)]
    fold_into(draft, out)
    for room in rooms:
        if draft.fires.get(room, 0) >= _EXPLOSION_FIRES:
            facts = explosion(draft, room)
            fold_into(draft, facts)
            out += facts
    return out


def overheating(draft: DrillitState) -> list[Any]:
    """The Overheating (nothing within the Storage limit), folded into ``draft``."""
    total = 0  # draft.crystal_total, without the uncompiled property (once a turn)
    for count in draft.crystals.values():
        total += count
    if total <= draft.storage_limit:
        return []
    facts = [
        ev.CrystalStorageOverheated(total, draft.storage_limit),
        *permanent_damage(draft, 1, "the Crystal Storage overheated"),
    ]
    fold_into(draft, facts)
    return facts


SUB_EVENTS: tuple[tuple[str, Callable[[DrillitState], list[Any]]], ...] = (
    ("advance", goblin_advance_with_damage),
    ("intensify", fire_intensification),
    ("overheat", overheating),
)
_SUB_EVENT_RULES = dict(SUB_EVENTS)


#: events are immutable: one of each skipped sub-event serves every match
_SWITCHED_OFF = {
    n: ev.SubEventSkipped(title, "switched off") for n, title in SUB_EVENT_NAMES.items()
}
_TOO_FEW_PLAYERS = {
    n: ev.SubEventSkipped(title, "needs 3 or more players") for n, title in SUB_EVENT_NAMES.items()
}


def sub_event(draft: DrillitState, card: EventCard, name: str) -> list[Any]:
    """The sub-event ``name`` of ``card``, its facts folded into ``draft`` (the turn flow's
    own copy of the state: the next sub-event, and the turn flow, go on from it)."""
    mode = card.sub_events[name]
    if mode == "off":
        return [_SWITCHED_OFF[name]]  # (changes nothing)
    # card.sub_event_active(name, players), written out: the card's method is uncompiled
    if not (mode == "on" or (mode == "3+" and len(draft.players) >= 3)):
        return [_TOO_FEW_PLAYERS[name]]
    # the rules by name, called directly (one read from the dict is a call through
    # Python's protocol)
    if name == "advance":
        return goblin_advance_with_damage(draft)
    if name == "intensify":
        return fire_intensification(draft)
    if name == "overheat":
        return overheating(draft)
    return _SUB_EVENT_RULES[name](draft)


def main_event(state: DrillitState, card: EventCard) -> list[Any]:
    """The deterministic main events; Fire waits for its dice."""
    if card.main.startswith("crystal-"):
        return [_found(card.main.removeprefix("crystal-"))]
    if card.main == "abyss":
        return [ev.AbyssOpened(abyss_cell(state))]
    if card.main == "blackout":
        return [ev.BlackoutBegan()]
    if card.main == "trap":
        return [ev.TrapSet()]
    return []


#: events are immutable: one of each die face serves every match
_FIRE_ROLLED = {value: ev.FireDieRolled(value) for value in range(1, 7)}


def resolve_fire_die(state: DrillitState, value: int) -> list[Any]:
    """1-5: Fire in that room (+1 per critical before it); 6: critical, roll again;
    two 6s in a row: explosion, 1 Permanent Damage, the event ends."""
    rolled = _FIRE_ROLLED.get(value)
    out: list[Any] = [ev.FireDieRolled(value) if rolled is None else rolled]
    if value == 6:
        if state.fire_criticals >= 1:
            out.append(ev.CriticalFireExploded())
            out += permanent_damage(state, 1, "critical fire explosion")
        return out
    fires = 1 + state.fire_criticals
    out.append(ev.FireStarted(value, fires))
    if state.fires.get(value, 0) + fires >= _EXPLOSION_FIRES:
        after = fold(state, out)
        out += explosion(after, value)
    return out
