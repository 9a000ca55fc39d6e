"""Crystal abilities: 1 AP (none for the Inventor) and 2 Crystals of one colour."""

from __future__ import annotations

import functools
from typing import Any, Final

from services.games.contract import RuleViolation
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.characters import crystal_ability_cost
from services.games.drillit.content import CONTENT
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import has_frontier

TURBO_PIECES = 2

CrystalAction = act.UseBlueOnFires | act.UseBlueOnArmor | act.UseRedBomb | act.UseYellowTurbo

COLOUR = {
    act.UseBlueOnFires: "blue",
    act.UseBlueOnArmor: "blue",
    act.UseRedBomb: "red",
    act.UseYellowTurbo: "yellow",
}


def _pay(state: DrillitState, player: str, colour: str) -> ev.CrystalsSpent:
    have = state.crystals[colour]
    if have < CONTENT.crystal_cost:
        raise RuleViolation(
            "NOT_ENOUGH_CRYSTALS",
            f"You need {CONTENT.crystal_cost} {colour} Crystals; the Storage has {have}.",
        )
    cost = crystal_ability_cost(state, player)
    if cost > state.action_points:
        raise RuleViolation("NO_ACTION_POINTS", "You have no Action Points left.")
    return ev.CrystalsSpent(player, colour, CONTENT.crystal_cost, cost)


def radar_goblins(state: DrillitState, sector: int) -> int:
    return sum(state.goblins(sector)[1:])


def use_crystals(state: DrillitState, player: str, action: CrystalAction) -> list[Any]:
    match action:
        case act.UseBlueOnFires(room=room):
            fires = state.fires.get(room, 0)
            if fires == 0:
                raise RuleViolation("NO_FIRE", f"Room {room} is not burning.")
            return [_pay(state, player, "blue"), ev.FiresPutOut(room, fires)]
        case act.UseBlueOnArmor():
            if not state.armor_destroyed:
                raise RuleViolation("NOTHING_TO_REPAIR", "No Armor is punctured.")
            return [_pay(state, player, "blue"), ev.ArmorRestored(state.armor_destroyed)]
        case act.UseRedBomb(sector=sector):
            if sector not in CONTENT.sectors:
                raise RuleViolation("BAD_SECTOR", f"There is no radar sector {sector}.")
            goblins = radar_goblins(state, sector)
            if goblins == 0:
                raise RuleViolation(
                    "NO_GOBLINS",
                    f"Sector {sector} has no Goblins on the radar (Bombs never hit the Tank).",
                )
            return [_pay(state, player, "red"), ev.SectorBombed(sector, goblins)]
        case act.UseYellowTurbo():
            if state.trap:
                raise RuleViolation("TRAP", "A Trap: no Path piece may be placed this turn.")
            if state.path_pile == 0:
                raise RuleViolation("PILE_EMPTY", "The Path pile is empty.")
            if not has_frontier(state):
                raise RuleViolation("NO_ROOM", "No Path piece can be connected anywhere.")
            return [_pay(state, player, "yellow"), ev.TurboStarted(TURBO_PIECES)]
    raise TypeError(action)


def crystal_actions(state: DrillitState, player: str) -> list[Any]:
    """Every crystal ability ``player`` may use now."""
    crystals, cost = state.crystals, _COST
    blue, red, yellow = crystals["blue"], crystals["red"], crystals["yellow"]
    if blue < cost and red < cost and yellow < cost:
        return []  # (most decisions: no ability is affordable, whoever the player is)
    if crystal_ability_cost(state, player) > state.action_points:
        return []
    out: list[Any] = []
    if blue >= cost:
        fires = state.fires
        out += [_put_out(r) for r in sorted(fires) if fires[r] > 0]
        if state.armor_destroyed:
            out.append(_ON_ARMOR)
    if red >= cost:  # radar_goblins of each sector (the radar is in their order)
        radar = state.radar
        if len(radar) != len(_SECTORS):
            raise ValueError("the radar holds each sector once")  # (as zip(strict=True))
        for at in range(len(radar)):  # (a loop: no zip, slice nor sum called per sector)
            spaces, goblins = radar[at].spaces, 0
            for space in range(1, len(spaces)):
                goblins += spaces[space]
            if goblins > 0:
                out.append(_BOMBS[_SECTORS[at]])
    if yellow >= cost and not state.trap and state.path_pile > 0 and has_frontier(state):
        out.append(_TURBO)
    return out


# (Final: compiled, read from C statics, not looked up in the module's dict: the abilities
# are listed at every decision)
_COST: Final = CONTENT.crystal_cost
_SECTORS: Final = CONTENT.sectors
#: the fixed actions, built once (actions are immutable)
_ON_ARMOR: Final = act.UseBlueOnArmor()
_TURBO: Final = act.UseYellowTurbo()
_BOMBS: Final = {s: act.UseRedBomb(s) for s in CONTENT.sectors}


@functools.lru_cache(maxsize=64)
def _put_out(room: int) -> act.UseBlueOnFires:
    """The Blue Crystals on the fires of ``room`` (one action per room: immutable)."""
    return act.UseBlueOnFires(room)
