"""Resolving chance nodes: the logic shared by the dice and decks services and by
in-process simulations, so a simulated match and a served one derive the same outcomes
from the same seeds."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from services.games.contract import (
    CardsDrawn,
    ChanceOutcome,
    ChanceRequest,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    RollDice,
    RuleViolation,
    ShuffleDeck,
)
from services.games.randomness import DerivedRandom


@dataclass
class DeckPiles:
    """The face-down draw piles of one match, top card first. Owned by the decks service."""

    piles: dict[str, list[str]] = field(default_factory=dict)

    def shuffle(self, deck: str, cards: tuple[str, ...], rng: DerivedRandom) -> int:
        self.piles[deck] = rng.shuffled(cards)
        return len(cards)

    def peek(self, deck: str, count: int) -> tuple[str, ...]:
        """The top ``count`` cards, left in place; refused if the pile is too small."""
        pile = self.piles.get(deck)
        if pile is None:
            raise RuleViolation("UNKNOWN_DECK", f"There is no deck named {deck!r}.")
        if count < 0 or count > len(pile):
            raise RuleViolation(
                "DECK_TOO_SMALL", f"Deck {deck!r} has {len(pile)} cards; cannot draw {count}."
            )
        return tuple(pile[:count])

    def draw(self, deck: str, count: int) -> tuple[str, ...]:
        drawn = self.peek(deck, count)
        self.piles[deck] = self.piles[deck][count:]
        return drawn

    def size(self, deck: str) -> int:
        return len(self.piles.get(deck, ()))


class SeededChance:
    """Resolves chance requests in-process from two seeds, with the services' derivation."""

    def __init__(self, match_id: str, dice_seed: bytes, decks_seed: bytes) -> None:
        self.dice = DerivedRandom(dice_seed, match_id)
        self.decks_rng = DerivedRandom(decks_seed, match_id)
        self.decks = DeckPiles()

    def resolve(self, request: ChanceRequest) -> ChanceOutcome:
        # isinstance tests, not ``match``: its class patterns read each field through a
        # keyword lookup, at every chance node of every playout
        if isinstance(request, DrawCards):
            return CardsDrawn(request.deck, self.decks.draw(request.deck, request.count))
        if isinstance(request, RollDice):
            return _dice_rolled(self.dice.roll(request.count, request.sides))
        if isinstance(request, ShuffleDeck):
            deck = request.deck
            return _deck_shuffled(deck, self.decks.shuffle(deck, request.cards, self.decks_rng))
        raise TypeError(f"unknown chance request {request!r}")


# Outcomes are immutable: one instance of each of these few serves every match (building a
# frozen dataclass costs several times the cache's look-up, at most chance nodes).


@functools.lru_cache(maxsize=1024)
def _dice_rolled(values: tuple[int, ...]) -> DiceRolled:
    return DiceRolled(values)


@functools.lru_cache(maxsize=1024)
def _deck_shuffled(deck: str, size: int) -> DeckShuffled:
    return DeckShuffled(deck, size)
