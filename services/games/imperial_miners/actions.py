"""What a player may do (types limited to docs/CONVENTIONS.md)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class KeepCards:
    """Setup: keep 4 of the 8 Mine cards drawn (not in a first game: all 6 are kept)."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class ChooseCard:
    """Mine phase: the card played this round, chosen in secret."""

    card: str


@dataclass(frozen=True)
class PlaceCard:
    """Put the revealed card into a free column of its level."""

    column: int


@dataclass(frozen=True)
class UseEffect:
    """Resolve effect ``effect`` (0-based) of the card the chain is on, or of the Surface
    board when the chain has reached it."""

    effect: int


@dataclass(frozen=True)
class SkipEffect:
    """Mine cards' effects are optional: activate the card without resolving any. (The
    Surface board's effect is not: one of its 3 is always chosen and resolved.)"""


@dataclass(frozen=True)
class ClimbTo:
    """With two cards above, activate the one in ``column`` of the level above."""

    column: int


ACTION_TYPES: tuple[type, ...] = (KeepCards, ChooseCard, PlaceCard, UseEffect, SkipEffect, ClimbTo)

quick_init_all(ACTION_TYPES)
