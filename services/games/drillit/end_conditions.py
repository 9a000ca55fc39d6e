"""Victory and defeat, and the Life Track that measures the Tank's damage."""

from __future__ import annotations

from typing import Any, Final

from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import exit_reachable, placements

LIFE_TRACK_FULL = "life-track-full"
DECK_EXHAUSTED = "event-deck-exhausted"
NO_PATH_PIECES = "no-path-pieces"
EXIT_UNREACHABLE = "exit-unreachable"
EXIT_REACHED = "exit-reached"


#: (Final: compiled, a C static, not ``CONTENT``'s attribute read at every step)
_LIFE_TRACK: Final = CONTENT.life_track


def life_track_full(state: DrillitState) -> bool:
    # state.damage, without its two property calls: the turn flow asks at every step
    return len(state.armor_destroyed) + state.permanent_damage >= _LIFE_TRACK


def permanent_damage(state: DrillitState, amount: int, cause: str) -> list[Any]:
    """Permanent Damage markers, as many as the Life Track still has room for."""
    # (state.damage written out: its properties are uncompiled Python)
    room = _LIFE_TRACK - (len(state.armor_destroyed) + state.permanent_damage)
    amount = min(amount, room)
    return [ev.PermanentDamageTaken(amount, cause)] if amount > 0 else []


def defeat_at_turn_end(state: DrillitState) -> str | None:
    """Defeats checked once a turn is over (the Life Track is checked at every step)."""
    if not state.event_deck:
        return DECK_EXHAUSTED
    if state.path_pile == 0 and not any(placements(state, p) for p in state.hands.values()):
        return NO_PATH_PIECES  # nothing left to draw and nothing in hand fits anywhere
    if not exit_reachable(state):
        return EXIT_UNREACHABLE
    return None
