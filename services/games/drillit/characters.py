"""Character abilities, as costs and permissions the action rules ask about."""

from __future__ import annotations

import functools
from collections import deque
from typing import Final

from services.games.drillit.content import CONTENT
from services.games.drillit.state import DrillitState

# (Final: compiled, the rules read them as constants, not from the module's dict)
# The rules below ask ``state.characters.get(player) == X``, ``state.is_`` written out: a
# method of the uncompiled state is a Python call, and moves and repairs ask after every
# action.
PILOT: Final = "pilot"
INVENTOR: Final = "inventor"
SOLDIER: Final = "soldier"
MECHANIC: Final = "mechanic"
ROBOT: Final = "robot"


@functools.cache  # six rooms: listing moves asks it for every room after every action
def walking_distance(start: int, goal: int) -> int:
    """Moves between rooms through the Tank (the centre is the shortcut)."""
    seen, queue = {start: 0}, deque([start])
    while queue:
        room = queue.popleft()
        if room == goal:
            return seen[room]
        for nxt in CONTENT.adjacency[room]:
            if nxt not in seen:
                seen[nxt] = seen[room] + 1
                queue.append(nxt)
    raise ValueError(f"room {goal} cannot be reached from {start}")


def move_cost(state: DrillitState, player: str, goal: int) -> int:
    """The Robot flies anywhere for 1 AP; the others walk, 1 AP a step."""
    if state.characters.get(player) == ROBOT:
        return 1
    start = state.rooms[player]
    walks = _WALKS.get(start)  # (the table below: a call of the cache's wrapper costs more)
    if walks is not None:
        walk = walks.get(goal)
        if walk is not None:
            return walk
    return walking_distance(start, goal)


#: room -> room -> ``walking_distance``, worked out once for the Tank's rooms
_WALKS: Final = {
    start: {goal: walking_distance(start, goal) for goal in CONTENT.adjacency}
    for start in CONTENT.adjacency
}


def repair_cost(state: DrillitState, player: str) -> int:
    """The Mechanic's first repair of each turn costs nothing."""
    if state.characters.get(player) == MECHANIC and not state.mechanic_free_repair_used:
        return 0
    return 1


def crystal_ability_cost(state: DrillitState, player: str) -> int:
    return 0 if state.characters.get(player) == INVENTOR else 1


def attack_targets(state: DrillitState, player: str) -> int:
    """Goblins one attack removes: up to 2 of one sector for the Soldier."""
    return 2 if state.characters.get(player) == SOLDIER else 1


def may_place_for(state: DrillitState, player: str, owner: str) -> bool:
    """Own piece anywhere; a colleague's from the same room (the Pilot from any room)."""
    if owner == player or state.characters.get(player) == PILOT:
        return True
    return state.rooms.get(owner) == state.rooms.get(player)
