"""What the player can ask for. Movement is one card per action so legal actions stay finite."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.crashland.model import Boost, Direction, Payment, Position
from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class Move:
    """Phase 1: step one card orthogonally; ``pay`` is free for the turn's first two cards."""

    direction: Direction
    pay: Payment


@dataclass(frozen=True)
class EndMovement:
    """Phase 1 → 2: allowed once the astronaut has moved this turn."""


@dataclass(frozen=True)
class DiscardEquipment:
    """End of phase 2: put one equipment card you do not wish to keep on the discard pile
    (a must while holding more than three)."""

    card: str


@dataclass(frozen=True)
class KeepHand:
    """End of phase 2: keep the equipment in hand (at most three cards) and go on to the
    systems check."""


@dataclass(frozen=True)
class SpendDomeShelter:
    """Phases 1 and 3, standing on a dome card: +3 to one system or +2 to both."""

    boost: Boost


@dataclass(frozen=True)
class SpendJetpack:
    """Phases 1 and 3: fly to any explored map card for 1 battery."""

    destination: Position


@dataclass(frozen=True)
class SpendSolarRecharge:
    """Phases 1 and 3: +2 battery."""


@dataclass(frozen=True)
class SpendSatelliteUplink:
    """Phases 1 and 3: look at the next six cards of the event and equipment deck."""


@dataclass(frozen=True)
class ArrangeUplink:
    """After an uplink: the order (top first) to put the seen cards back in."""

    order: tuple[str, ...]


@dataclass(frozen=True)
class EndTurn:
    """Phase 3: run the systems check."""


Action = (
    Move
    | EndMovement
    | DiscardEquipment
    | KeepHand
    | SpendDomeShelter
    | SpendJetpack
    | SpendSolarRecharge
    | SpendSatelliteUplink
    | ArrangeUplink
    | EndTurn
)

ACTION_TYPES: tuple[type, ...] = (
    Move,
    EndMovement,
    DiscardEquipment,
    KeepHand,
    SpendDomeShelter,
    SpendJetpack,
    SpendSolarRecharge,
    SpendSatelliteUplink,
    ArrangeUplink,
    EndTurn,
)

quick_init_all(ACTION_TYPES)
