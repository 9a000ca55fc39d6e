"""Facts, in the past tense. ``action_points`` on an event is what the action cost."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import SectorGoblins
from services.games.frozen import quick_init_all

# --- setup ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchSetUp:
    players: tuple[str, ...]
    difficulty: str
    distance: str
    storage_limit: int
    life_track: int
    rules_version: str
    #: the exit option ("1" or "2") the players placed the Exit piece on
    exit: str = "1"
    #: whether the players may still move the Exit piece to the other option once
    plan_b: bool = True


@dataclass(frozen=True)
class PileShuffled:
    deck: str
    size: int


@dataclass(frozen=True)
class PathPiecesDrawn:
    """Players without a Path piece drew one (player -> piece)."""

    pieces: dict[str, str]
    pile_left: int


@dataclass(frozen=True)
class CharactersDealt:
    characters: dict[str, str]


@dataclass(frozen=True)
class EventCardsStaged:
    """Cards drawn while building the Event Deck (hidden from every view)."""

    deck: str
    cards: tuple[str, ...]


@dataclass(frozen=True)
class EventDeckBuilt:
    size: int


@dataclass(frozen=True)
class StartRoomRolled:
    player: str
    value: int


@dataclass(frozen=True)
class GnomePlaced:
    player: str
    room: int


@dataclass(frozen=True)
class StartingPlayerChosen:
    player: str
    reason: str


# --- turn start: sub-events, main event, Goblin attack --------------------------------


@dataclass(frozen=True)
class TurnStarted:
    player: str
    turn: int
    action_points: int


@dataclass(frozen=True)
class EventCardRevealed:
    card: str
    main_event: str
    cards_left: int


@dataclass(frozen=True)
class SubEventSkipped:
    sub_event: str
    reason: str


@dataclass(frozen=True)
class GoblinsAdvanced:
    """Every Goblin moved one space toward the centre; the radar afterwards."""

    radar: tuple[SectorGoblins, ...]


@dataclass(frozen=True)
class ArmorDestroyed:
    room: int


@dataclass(frozen=True)
class GoblinsReachedCentre:
    count: int


@dataclass(frozen=True)
class PermanentDamageTaken:
    amount: int
    cause: str


@dataclass(frozen=True)
class FiresIntensified:
    rooms: tuple[int, ...]


@dataclass(frozen=True)
class RoomExploded:
    room: int


@dataclass(frozen=True)
class CrystalStorageOverheated:
    crystals_lost: int
    limit: int


@dataclass(frozen=True)
class CrystalFound:
    colour: str


@dataclass(frozen=True)
class AbyssOpened:
    """An Abyss was found; ``cell`` is None when there was no free space for it."""

    cell: Hex | None


@dataclass(frozen=True)
class BlackoutBegan:
    pass


@dataclass(frozen=True)
class TrapSet:
    pass


@dataclass(frozen=True)
class FireDieRolled:
    value: int


@dataclass(frozen=True)
class FireStarted:
    room: int
    fires: int


@dataclass(frozen=True)
class CriticalFireExploded:
    pass


@dataclass(frozen=True)
class AttackDieRolled:
    value: int


@dataclass(frozen=True)
class GoblinsArrived:
    sector: int
    count: int


@dataclass(frozen=True)
class HordeArrived:
    count: int


# --- actions --------------------------------------------------------------------------


@dataclass(frozen=True)
class GnomeMoved:
    player: str
    room: int
    action_points: int


@dataclass(frozen=True)
class GnomeCarried:
    robot: str
    passenger: str
    room: int
    action_points: int


@dataclass(frozen=True)
class GoblinsDefeated:
    player: str
    sector: int
    spaces: tuple[int, ...]
    action_points: int


@dataclass(frozen=True)
class ArmorRepaired:
    player: str
    room: int
    action_points: int


@dataclass(frozen=True)
class FireExtinguished:
    player: str
    room: int
    action_points: int


@dataclass(frozen=True)
class PathPiecePlaced:
    player: str
    owner: str
    piece: str
    cell: Hex
    rotation: int
    action_points: int


@dataclass(frozen=True)
class CrystalCollected:
    colour: str


@dataclass(frozen=True)
class CrystalsSpent:
    player: str
    colour: str
    count: int
    action_points: int


@dataclass(frozen=True)
class FiresPutOut:
    room: int
    fires: int


@dataclass(frozen=True)
class ArmorRestored:
    rooms: tuple[int, ...]


@dataclass(frozen=True)
class SectorBombed:
    sector: int
    goblins: int


@dataclass(frozen=True)
class TurboStarted:
    pieces: int


@dataclass(frozen=True)
class TurboPieceDrawn:
    piece: str
    pile_left: int


@dataclass(frozen=True)
class TurboPiecePlaced:
    piece: str
    cell: Hex
    rotation: int


@dataclass(frozen=True)
class TurboPieceDiscarded:
    piece: str
    reason: str


@dataclass(frozen=True)
class TurboStopped:
    reason: str


@dataclass(frozen=True)
class PlanBTaken:
    """The players moved the Exit piece to the other exit option (``exit``)."""

    player: str
    exit: str


@dataclass(frozen=True)
class ActionsEnded:
    player: str


@dataclass(frozen=True)
class TurnEnded:
    turn: int


@dataclass(frozen=True)
class MatchWon:
    reason: str


@dataclass(frozen=True)
class MatchLost:
    reason: str


EVENT_TYPES: tuple[type, ...] = (
    MatchSetUp,
    PileShuffled,
    PathPiecesDrawn,
    CharactersDealt,
    EventCardsStaged,
    EventDeckBuilt,
    StartRoomRolled,
    GnomePlaced,
    StartingPlayerChosen,
    TurnStarted,
    EventCardRevealed,
    SubEventSkipped,
    GoblinsAdvanced,
    ArmorDestroyed,
    GoblinsReachedCentre,
    PermanentDamageTaken,
    FiresIntensified,
    RoomExploded,
    CrystalStorageOverheated,
    CrystalFound,
    AbyssOpened,
    BlackoutBegan,
    TrapSet,
    FireDieRolled,
    FireStarted,
    CriticalFireExploded,
    AttackDieRolled,
    GoblinsArrived,
    HordeArrived,
    GnomeMoved,
    GnomeCarried,
    GoblinsDefeated,
    ArmorRepaired,
    FireExtinguished,
    PathPiecePlaced,
    CrystalCollected,
    CrystalsSpent,
    FiresPutOut,
    ArmorRestored,
    SectorBombed,
    TurboStarted,
    TurboPieceDrawn,
    TurboPiecePlaced,
    TurboPieceDiscarded,
    TurboStopped,
    PlanBTaken,
    ActionsEnded,
    TurnEnded,
    MatchWon,
    MatchLost,
)

quick_init_all(EVENT_TYPES)
