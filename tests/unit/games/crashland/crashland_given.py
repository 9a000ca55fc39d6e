"""Given events / when command / then events, for the Crashland tests.

The fixed map below (row 0 is the top row):

        c0       c1       c2       c3       c4       c5
    r0  plain01  plain02  plain03  B1 up/dn plain04  plain05
    r1  plain06  DOME-1   plain07  plain08  B2 l/r   plain09
    r2  B1 l/r   plain10  SHIP     plain11  plain12  DOME-2
    r3  plain13  B2 up/dn plain14  B3 up/dn plain15  plain16
    r4  plain17  plain18  plain19  B3 l/r   DOME-3   DOME-4

Tank 1 is at (2,3) (next to the ship), tank 2 at (1,1) (a dome), tank 3 at (4,3) (on its
own left/right beacon).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import RuleViolation
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.model import Phase, Position, System
from services.games.crashland.state import CrashlandState

PLAYER = "ann"
P = Position


def _plain(n: int) -> str:
    return f"map-plain-{n:02d}"


GRID: tuple[str, ...] = (
    *(_plain(1), _plain(2), _plain(3), "map-beacon-1-vertical", _plain(4), _plain(5)),
    *(_plain(6), "map-dome-1", _plain(7), _plain(8), "map-beacon-2-horizontal", _plain(9)),
    *("map-beacon-1-horizontal", _plain(10), "map-spaceship", _plain(11), _plain(12)),
    "map-dome-2",
    *(_plain(13), "map-beacon-2-vertical", _plain(14), "map-beacon-3-vertical", _plain(15)),
    _plain(16),
    *(_plain(17), _plain(18), _plain(19), "map-beacon-3-horizontal", "map-dome-3"),
    "map-dome-4",
)
SHIP = P(2, 2)

OPENING: list[Any] = [
    ev.MatchSetUp(PLAYER, {}),
    ev.MapShuffled(30),
    ev.MapDealt(GRID),
    ev.CardRevealed(SHIP, "map-spaceship"),
    ev.AstronautPlaced(SHIP),
    ev.EventDeckShuffled(21, reshuffle=False),
    ev.PhaseBegan(Phase.MOVEMENT, 1),
]


def card_at(position: Position) -> str:
    return GRID[position.row * 6 + position.column]


def given(*events: Any) -> CrashlandState:
    """The state after the opening and then ``events``."""
    return GAME.fold([*OPENING, *events])


def when(state: CrashlandState, action: Any, player: str = PLAYER) -> list[Any]:
    return GAME.decide(state, player, action)


def refused(state: CrashlandState, action: Any, code: str, player: str = PLAYER) -> None:
    with pytest.raises(RuleViolation) as caught:
        GAME.decide(state, player, action)
    assert caught.value.code == code


def at(position: Position) -> list[Any]:
    """Events leaving the astronaut on ``position``, face up (a shortcut for a walk)."""
    return [ev.CardRevealed(position, card_at(position)), ev.AstronautPlaced(position)]


def levels(oxygen: int, battery: int) -> list[Any]:
    """Events that brought the suit to these levels."""
    return [
        ev.EventApplied("event-05", 5, System.OXYGEN, 9 - oxygen, oxygen),
        ev.EventApplied("event-10", 10, System.BATTERY, 9 - battery, battery),
    ]


def revealed(*positions: Position) -> list[Any]:
    return [ev.CardRevealed(p, card_at(p)) for p in positions]


def phase(which: Phase, turn: int = 1) -> ev.PhaseBegan:
    return ev.PhaseBegan(which, turn)


def hand(*cards: str) -> ev.EquipmentKept:
    return ev.EquipmentKept(tuple(cards))
