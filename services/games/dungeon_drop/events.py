"""Facts, in the past tense. Physics results are recorded as placements, so folding
events never simulates."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.spread import TouchingPair
from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class MatchSetUp:
    players: tuple[str, ...]
    variant: str
    rules_version: str


@dataclass(frozen=True)
class PileShuffled:
    deck: str
    size: int


@dataclass(frozen=True)
class RacesDealt:
    """Face up."""

    races: dict[str, str]


@dataclass(frozen=True)
class ClassesDealt:
    """Face up."""

    classes: dict[str, str]


@dataclass(frozen=True)
class QuestsDealt:
    """Face down: each player sees only their own until the end."""

    quests: dict[str, str]


@dataclass(frozen=True)
class TurnStarted:
    player: str
    round: int
    #: cubes this Explore draws from the box
    explore: int


@dataclass(frozen=True)
class CubesExplored:
    """Cubes drawn blind from the box (``box_left`` remain)."""

    player: str
    cubes: tuple[str, ...]
    box_left: int


@dataclass(frozen=True)
class CubesDropped:
    """``cubes`` were dropped from ``height`` inches; every cube on the table rests at
    ``placements``; ``off_table`` fell off and are set aside."""

    player: str
    reason: str
    cubes: tuple[str, ...]
    height: float
    placements: tuple[Placement, ...]
    off_table: tuple[str, ...]


@dataclass(frozen=True)
class SetupDropRedone:
    """The setup drop broke "spread evenly across the table, without more than one or two
    touching each other" (spread.py): the cubes landed at ``placements`` with
    ``off_table`` off the table and the ``touching`` pairs touching, and are picked up to
    be dropped again from new dice. The table stays empty."""

    player: str
    height: float
    placements: tuple[Placement, ...]
    off_table: tuple[str, ...]
    touching: tuple[TouchingPair, ...]


@dataclass(frozen=True)
class AbilityUsed:
    player: str
    source: str
    primitive: str
    amount: int


@dataclass(frozen=True)
class Healed:
    player: str
    amount: int
    health: int


@dataclass(frozen=True)
class FlickAimed:
    player: str
    cube: str
    direction: float
    strength: float


@dataclass(frozen=True)
class CubeFlicked:
    player: str
    cube: str
    #: the direction and strength after the finger's noise
    direction: float
    strength: float
    placements: tuple[Placement, ...]
    off_table: tuple[str, ...]


@dataclass(frozen=True)
class PillarMoved:
    player: str
    pillar: str
    x: float
    y: float
    placements: tuple[Placement, ...]
    off_table: tuple[str, ...]


@dataclass(frozen=True)
class AbilityEnded:
    player: str


@dataclass(frozen=True)
class MeeplePlaced:
    """Teamwork: an opponent's meeple on the table before the room is formed."""

    player: str
    x: float
    y: float


@dataclass(frozen=True)
class RoomLooted:
    player: str
    pillars: tuple[str, ...]
    cubes: tuple[str, ...]
    healed: int
    damage: int
    shields_spent: int
    health: int
    #: Teamwork: meeples inside the room, one point each for their owners
    meeples: tuple[str, ...]


@dataclass(frozen=True)
class LeftEmptyHanded:
    """The player formed no room that collects anything."""

    player: str


@dataclass(frozen=True)
class CubeTaken:
    """An ability's extra cube from outside the room."""

    player: str
    cube: str


@dataclass(frozen=True)
class TakeSkipped:
    player: str


@dataclass(frozen=True)
class TurnEnded:
    player: str


@dataclass(frozen=True)
class RoundEnded:
    round: int
    weights: dict[str, int]
    #: the next round's turn order: lightest first, ties by starting Initiative
    order: tuple[str, ...]


@dataclass(frozen=True)
class QuestsRevealed:
    quests: dict[str, str]


@dataclass(frozen=True)
class ChestRoll:
    player: str
    values: tuple[int, ...]


@dataclass(frozen=True)
class ChestsRolled:
    """Each Key paired with a Chest rolled that Chest (a die, 1-6), hero by hero."""

    rolls: tuple[ChestRoll, ...]


@dataclass(frozen=True)
class MatchEnded:
    scores: dict[str, int]
    winner: str
    reason: str


EVENT_TYPES: tuple[type, ...] = (
    MatchSetUp,
    PileShuffled,
    RacesDealt,
    ClassesDealt,
    QuestsDealt,
    TurnStarted,
    CubesExplored,
    CubesDropped,
    AbilityUsed,
    Healed,
    FlickAimed,
    CubeFlicked,
    PillarMoved,
    AbilityEnded,
    MeeplePlaced,
    RoomLooted,
    LeftEmptyHanded,
    CubeTaken,
    TakeSkipped,
    TurnEnded,
    RoundEnded,
    QuestsRevealed,
    ChestsRolled,
    MatchEnded,
    SetupDropRedone,
)

quick_init_all(EVENT_TYPES)
