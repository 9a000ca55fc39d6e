"""The Goblin attack that ends each Event card: a d6 for the sector, each 6 raising the
attack one box, a Horde beyond the red box (or when a box shows one)."""

from __future__ import annotations

from typing import Any, Final

from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, HORDE
from services.games.drillit.state import DrillitState

BOXES = 3  # yellow, orange, red
# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_RED_AFTER: Final = CONTENT.red_after_abysses
_ORANGE_AFTER: Final = CONTENT.orange_after_abysses
_CARDS: Final = CONTENT.cards
_HORDE: Final = HORDE


def lightest_box(abysses_found: int) -> int:
    if abysses_found >= _RED_AFTER:
        return 2
    if abysses_found >= _ORANGE_AFTER:
        return 1
    return 0


def attack_box(state: DrillitState) -> str:
    """The attack reached so far: a number of Goblins or "horde"."""
    assert state.current_card is not None
    level = lightest_box(state.abysses_found) + state.attack_sixes
    if level >= BOXES:
        return _HORDE
    return _CARDS[state.current_card].attack[level]


def horde_events() -> list[Any]:
    return [ev.HordeArrived(len(CONTENT.sectors))]


#: events are immutable: one of each die face serves every match
_ROLLED = {value: ev.AttackDieRolled(value) for value in range(1, 7)}


def _arrived(sector: int, count: int) -> ev.GoblinsArrived:
    """(events are immutable: one instance of each serves every match; building a frozen
    event costs several times the cache's look-up)"""
    # (a dict read in compiled code, not an lru_cache: a call through the cache's wrapper
    # builds its key and moves its entry, several times the cost of the look-up)
    key = (sector, count)
    known = _ARRIVED.get(key)
    if known is None:
        if len(_ARRIVED) >= 256:
            _ARRIVED.clear()
        known = _ARRIVED[key] = ev.GoblinsArrived(sector, count)
    return known


_ARRIVED: Final[dict[tuple[int, int], ev.GoblinsArrived]] = {}


def resolve_attack_die(state: DrillitState, value: int) -> list[Any]:
    rolled = _ROLLED.get(value)
    out: list[Any] = [ev.AttackDieRolled(value) if rolled is None else rolled]
    if value == 6:
        return out  # escalated; a Horde, if reached, arrives without more dice
    box = attack_box(state)
    if box == _HORDE:
        return out + horde_events()
    return [*out, _arrived(value, int(box))]
