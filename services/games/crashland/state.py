"""The full (secret) state of a Crashland match (``evolve``, in evolve.py, folds events in)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from services.games.crashland.content import CONTENT
from services.games.crashland.evolve import _FOLDS as _FOLDS  # (the tests read it here)
from services.games.crashland.model import Phase, Position, System

_OXYGEN = System.OXYGEN  # (reading ``System.X`` goes through ``EnumType.__getattr__`` on 3.11)


@dataclass(frozen=True)
class CrashlandState:
    player: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    phase: Phase = Phase.SETUP
    turn: int = 0
    map_shuffled: bool = False
    #: map card ids row by row, top row first (secret until explored)
    grid: tuple[str, ...] = ()
    explored: frozenset[Position] = frozenset()
    astronaut: Position | None = None
    oxygen: int = CONTENT.start_level
    battery: int = CONTENT.start_level
    located: dict[int, Position] = field(default_factory=dict)
    collected: tuple[int, ...] = ()
    hand: tuple[str, ...] = ()
    deck_ready: bool = False
    #: cards left in the decks service's draw pile, below ``known_top``
    draw_pile: int = 0
    #: cards seen by a Satellite Uplink, on top of the draw pile, top first
    known_top: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    cards_moved: int = 0
    flew: bool = False
    #: this turn's (or the last turn's) phase 2 draw
    drawn: tuple[str, ...] = ()
    applied_event: str | None = None
    #: the end of phase 2: keeping or discarding equipment
    checking_hand: bool = False
    #: an uplink in progress: cards to arrange, and how many must still be drawn
    uplink_count: int = 0
    uplink_to_draw: int = 0
    result: str | None = None
    end_reason: str = ""

    def card_at(self, position: Position) -> str:
        return self.grid[position.row * CONTENT.columns + position.column]

    def position_of(self, card: str) -> Position:
        index = self.grid.index(card)
        return Position(index // CONTENT.columns, index % CONTENT.columns)

    def level(self, system: System) -> int:
        return self.oxygen if system is _OXYGEN else self.battery


#: the state's fields: the folds keep exactly these (a test checks every fold's state)
_FIELDS = frozenset(f.name for f in fields(CrashlandState))
