"""Events of Imperial Miners: facts folded by evolve.py (types limited to docs/CONVENTIONS.md)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class MatchSetUp:
    players: tuple[str, ...]
    first_game: bool
    rules_version: str


@dataclass(frozen=True)
class ProgressSidesRolled:
    """A d2 per board: 1 → side a, 2 → side b."""

    sides: tuple[str, ...]


@dataclass(frozen=True)
class PileShuffled:
    deck: str
    size: int
    from_discard: bool


@dataclass(frozen=True)
class MineCardsDrawn:
    player: str
    deck: str
    cards: tuple[str, ...]
    #: the top Level I card played by a player who could play nothing
    to_play: bool


@dataclass(frozen=True)
class DrawCutShort:
    """The deck and its discard pile ran dry: the draw is resolved as far as possible."""

    player: str
    deck: str
    missing: int


@dataclass(frozen=True)
class CardsKept:
    player: str
    kept: tuple[str, ...]
    discarded: tuple[str, ...]


@dataclass(frozen=True)
class HandsDealt:
    """Legacy (rules 1.0), folded but no longer written: every player holds the dealt Mine
    cards and choosing which to keep begins. Despite its name ``keep`` holds the number of
    cards *dealt* to each player; ``DealFinished`` replaces this event."""

    keep: int


@dataclass(frozen=True)
class RoundStarted:
    round: int


@dataclass(frozen=True)
class EventRevealed:
    round: int
    card: str
    kind: str


@dataclass(frozen=True)
class MinePos:
    level: int
    column: int


@dataclass(frozen=True)
class EffectResolved:
    """One effect resolved for ``player``: the gains of the effect and of any Progress
    spaces it reached. ``level``/``column`` name the Mine card it sits on (0: none)."""

    player: str
    source: str
    effect: str
    coins: int
    vp: int
    progress: int
    rewards: tuple[str, ...]
    machinery: int
    cave_in: bool
    cleared: tuple[MinePos, ...]
    draws: dict[str, int]
    level: int
    column: int


@dataclass(frozen=True)
class MinePhaseStarted:
    round: int
    forced: tuple[str, ...]


@dataclass(frozen=True)
class CardChosen:
    """Secret until CardsRevealed: views show other seats only that a card was chosen."""

    player: str
    card: str


@dataclass(frozen=True)
class CardsRevealed:
    cards: dict[str, str]
    costs: dict[str, int]


@dataclass(frozen=True)
class CardPlaced:
    player: str
    card: str
    level: int
    column: int


@dataclass(frozen=True)
class EffectSkipped:
    player: str
    level: int
    column: int


@dataclass(frozen=True)
class CaveInRemoved:
    """Activating a caved-in card only removes its token."""

    player: str
    level: int
    column: int


@dataclass(frozen=True)
class ChainClimbed:
    """The chain moves up to (level, column); level 0 is the Surface board."""

    player: str
    level: int
    column: int


@dataclass(frozen=True)
class ChainFinished:
    player: str


@dataclass(frozen=True)
class EndOfRoundResolved:
    round: int
    card: str


@dataclass(frozen=True)
class RoundEnded:
    round: int


@dataclass(frozen=True)
class EventDeckFormed:
    """Setup 3: the top ``cards`` of the shuffled Event cards form the Event deck; the other
    ``returned`` go back to the box unseen. (They stay under the deck in the decks
    service's pile, which is never drawn below its top ``cards``.)"""

    cards: int
    returned: int


@dataclass(frozen=True)
class DealFinished:
    """Setup 6: every player holds the ``dealt`` Mine cards drawn and keeps ``keep`` of them
    (8 and 4; in a first game 6 and 6: all are kept, no choice is made)."""

    dealt: int
    keep: int


@dataclass(frozen=True)
class MatchEnded:
    scores: dict[str, int]
    carts: dict[str, int]
    results: dict[str, str]
    reason: str


EVENT_TYPES: tuple[type, ...] = (
    MatchSetUp,
    ProgressSidesRolled,
    PileShuffled,
    MineCardsDrawn,
    DrawCutShort,
    CardsKept,
    HandsDealt,
    RoundStarted,
    EventRevealed,
    EffectResolved,
    MinePhaseStarted,
    CardChosen,
    CardsRevealed,
    CardPlaced,
    EffectSkipped,
    CaveInRemoved,
    ChainClimbed,
    ChainFinished,
    EndOfRoundResolved,
    RoundEnded,
    MatchEnded,
    EventDeckFormed,
    DealFinished,
)

quick_init_all(EVENT_TYPES)
