"""What happened in a Crashland match: facts in the past tense.

Events that change a suit level carry the level it ended at, so folding never recomputes
a rule. ``MapDealt`` and the uplink events hold hidden cards: the log is private to the
engine and the views decide what anyone sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.games.crashland.model import (
    Boost,
    Direction,
    Equipment,
    Payment,
    Phase,
    Position,
    System,
)
from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class MatchSetUp:
    """The match's first event: its one player and its options (logs written before the
    games shared this name call it GameStarted)."""

    player: str
    options: dict[str, str]


@dataclass(frozen=True)
class MapShuffled:
    size: int


@dataclass(frozen=True)
class MapDealt:
    """The shuffled map deck dealt face down, row by row (top row first)."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class CardRevealed:
    position: Position
    card: str


@dataclass(frozen=True)
class AstronautPlaced:
    position: Position


@dataclass(frozen=True)
class EventDeckShuffled:
    """A new draw pile: the whole deck at setup, the discard pile when reshuffling."""

    size: int
    reshuffle: bool


@dataclass(frozen=True)
class PhaseBegan:
    phase: Phase
    turn: int


@dataclass(frozen=True)
class AstronautMoved:
    origin: Position
    destination: Position
    direction: Direction
    pay: Payment
    oxygen: int
    battery: int


@dataclass(frozen=True)
class FuelTankLocated:
    number: int
    position: Position


@dataclass(frozen=True)
class FuelTankCollected:
    number: int
    position: Position


@dataclass(frozen=True)
class MovementEnded:
    cards_moved: int


@dataclass(frozen=True)
class EventCardsDrawn:
    """Cards drawn in phase 2; ``from_uplink`` when taken from the known top of the deck."""

    cards: tuple[str, ...]
    from_uplink: bool


@dataclass(frozen=True)
class EventApplied:
    """The highest-numbered event drawn this turn took effect; ``level`` is the result."""

    card: str
    number: int
    system: System
    loss: int
    level: int


@dataclass(frozen=True)
class EventsDiscarded:
    """Event cards drawn this turn (the applied one included) went to the discard pile."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class EquipmentKept:
    cards: tuple[str, ...]


@dataclass(frozen=True)
class HandCheckBegan:
    """The end of phase 2 with equipment in hand: the player keeps at most three cards and
    may place any they do not wish to keep on the discard pile."""


@dataclass(frozen=True)
class EquipmentDiscarded:
    card: str


@dataclass(frozen=True)
class PairSpent:
    equipment: Equipment
    cards: tuple[str, ...]


@dataclass(frozen=True)
class ShelterEntered:
    boost: Boost
    oxygen: int
    battery: int


@dataclass(frozen=True)
class JetpackFlown:
    origin: Position
    destination: Position
    battery: int


@dataclass(frozen=True)
class SolarRecharged:
    battery: int


@dataclass(frozen=True)
class UplinkActivated:
    """The next ``count`` cards will be seen; ``from_deck`` of them still have to be drawn."""

    count: int
    from_deck: int


@dataclass(frozen=True)
class UplinkCardsDrawn:
    cards: tuple[str, ...]


@dataclass(frozen=True)
class UplinkArranged:
    order: tuple[str, ...]


@dataclass(frozen=True)
class SystemsChecked:
    oxygen: int
    battery: int
    passed: bool


@dataclass(frozen=True)
class GameWon:
    turn: int
    reason: str


@dataclass(frozen=True)
class GameLost:
    turn: int
    reason: str


EVENT_TYPES: tuple[type, ...] = (
    MatchSetUp,
    MapShuffled,
    MapDealt,
    CardRevealed,
    AstronautPlaced,
    EventDeckShuffled,
    PhaseBegan,
    AstronautMoved,
    FuelTankLocated,
    FuelTankCollected,
    MovementEnded,
    EventCardsDrawn,
    EventApplied,
    EventsDiscarded,
    EquipmentKept,
    HandCheckBegan,
    EquipmentDiscarded,
    PairSpent,
    ShelterEntered,
    JetpackFlown,
    SolarRecharged,
    UplinkActivated,
    UplinkCardsDrawn,
    UplinkArranged,
    SystemsChecked,
    GameWon,
    GameLost,
)

quick_init_all(EVENT_TYPES)
