"""The full state of a match (the engine's side; views hide what a seat may not see)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum

from services.games.frozen import quick_init_all


class Phase(StrEnum):
    SETUP = "setup"
    KEEP = "keep"
    EVENT = "event"
    CHOOSE = "choose"
    MINE = "mine"
    OVER = "over"


class Stage(StrEnum):
    """Where one player's placement and chain reaction stands in the Mine phase."""

    PLACE = "place"
    EFFECT = "effect"  # choose an effect of the card at (level, column), or skip it
    CLIMB = "climb"  # move up: automatic unless two cards lie above
    SURFACE = "surface"  # choose one of the Surface board's 3 effects and resolve it
    FINISHING = "finishing"  # the Event's on-surface bonus, then done
    DONE = "done"


# A card in a player's Mine (mine.py: where it may go, what it touches). Here, not in mine.py,
# which is compiled: the codec reads this class's annotations, and states are deep-copied.
@dataclass(frozen=True)
class PlacedCard:
    card: str
    level: int
    column: int
    machinery: int = 0
    cave_in: bool = False


Mine = tuple[PlacedCard, ...]


@dataclass(frozen=True)
class PendingDraw:
    player: str
    deck: str
    count: int
    #: the "top Level I card" a player who cannot play anything plays at once
    to_play: bool = False


@dataclass(frozen=True)
class Chain:
    card: str
    stage: Stage
    level: int = 0
    column: int = 0


@dataclass(frozen=True)
class ImperialMinersState:
    players: tuple[str, ...] = ()
    first_game: bool = False
    phase: Phase = Phase.SETUP
    #: the side ("a"/"b") up on Progress boards 1..3
    sides: tuple[str, ...] = ()
    shuffled: frozenset[str] = frozenset()
    #: sizes of the face-down draw piles (events, level_1..level_3); order is the decks
    #: service's secret
    piles: dict[str, int] = field(default_factory=dict)
    #: the identical Level IV cards lie face up: no shuffling needed
    level_4: tuple[str, ...] = ()
    discards: dict[str, tuple[str, ...]] = field(default_factory=dict)
    draws: tuple[PendingDraw, ...] = ()
    hands: dict[str, tuple[str, ...]] = field(default_factory=dict)
    kept: frozenset[str] = frozenset()
    coins: dict[str, int] = field(default_factory=dict)
    vp: dict[str, int] = field(default_factory=dict)
    progress: dict[str, int] = field(default_factory=dict)
    mines: dict[str, Mine] = field(default_factory=dict)
    round: int = 0
    event: str | None = None
    #: Event cards revealed so far (the Event deck's count shows the rounds that remain)
    events_revealed: int = 0
    #: players who could play no card this round and play the top Level I card
    forced: tuple[str, ...] = ()
    chosen: dict[str, str] = field(default_factory=dict)
    revealed: bool = False
    chains: dict[str, Chain] = field(default_factory=dict)
    end_resolved: bool = False
    scores: dict[str, int] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    end_reason: str = ""

    def mine(self, player: str) -> Mine:
        return self.mines.get(player, ())


FIELDS = frozenset(f.name for f in fields(ImperialMinersState))

# the parts the folds make anew at most events (a chain's every step, a card placed, a draw)
quick_init_all((PlacedCard, PendingDraw, Chain))
