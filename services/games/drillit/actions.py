"""What a player may ask for. Rooms are 1-5 (0 is the centre); radar space 0 means
"inside the room", 1 the space touching the Armor."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.drillit.hexgrid import Hex
from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class ChooseStartRoom:
    """After rolling a 6 at setup, start in any room with space."""

    room: int


@dataclass(frozen=True)
class ChooseStartingPlayer:
    """Without a Pilot the players decide who starts (the first seat announces it)."""

    player: str


@dataclass(frozen=True)
class Move:
    """Walk to ``room`` (1 AP per step; full rooms may be crossed, not entered)."""

    room: int


@dataclass(frozen=True)
class Carry:
    """Robot: fly to any room for 1 AP with ``passenger`` from the same room (alone: Move)."""

    room: int
    passenger: str


@dataclass(frozen=True)
class Attack:
    """Attack Goblins of the sector the room faces: one space (two for the Soldier)."""

    spaces: tuple[int, ...]


@dataclass(frozen=True)
class Repair:
    """Repair the destroyed Armor of the player's room."""


@dataclass(frozen=True)
class Extinguish:
    """Put out one Fire in the player's room."""


@dataclass(frozen=True)
class Excavate:
    """Place ``owner``'s Path piece on ``cell`` turned ``rotation`` sixths."""

    owner: str
    cell: Hex
    rotation: int


@dataclass(frozen=True)
class UseBlueOnFires:
    """2 blue Crystals: put out every Fire of one room."""

    room: int


@dataclass(frozen=True)
class UseBlueOnArmor:
    """2 blue Crystals: repair every punctured Armor."""


@dataclass(frozen=True)
class UseRedBomb:
    """2 red Crystals: wipe out the Goblins of one radar sector (not inside the Tank)."""

    sector: int


@dataclass(frozen=True)
class UseYellowTurbo:
    """2 yellow Crystals: lay two random Path pieces in a row, mining nothing."""


@dataclass(frozen=True)
class PlaceTurboPiece:
    """Place the Path piece the Turbo drew."""

    cell: Hex
    rotation: int


@dataclass(frozen=True)
class TakePlanB:
    """Plan B: move the Exit piece to the other exit option (once a match, no Action Point)."""


@dataclass(frozen=True)
class EndTurn:
    """Stop spending Action Points."""


DrillitAction = (
    ChooseStartRoom
    | ChooseStartingPlayer
    | Move
    | Carry
    | Attack
    | Repair
    | Extinguish
    | Excavate
    | UseBlueOnFires
    | UseBlueOnArmor
    | UseRedBomb
    | UseYellowTurbo
    | PlaceTurboPiece
    | TakePlanB
    | EndTurn
)

ACTION_TYPES: tuple[type, ...] = (
    ChooseStartRoom,
    ChooseStartingPlayer,
    Move,
    Carry,
    Attack,
    Repair,
    Extinguish,
    Excavate,
    UseBlueOnFires,
    UseBlueOnArmor,
    UseRedBomb,
    UseYellowTurbo,
    PlaceTurboPiece,
    TakePlanB,
    EndTurn,
)

quick_init_all(ACTION_TYPES)
