"""The search's playout loop (services/bots/search/playout.py): it stops when the decision's
time is up, and a match that does not end is reported stopped, not played forever."""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.bots.search.budget import Budget
from services.bots.search.playout import OutOfTime, SearchChance, Stopped, play_out
from services.bots.search.rollouts import random_policies
from services.games.contract import (
    CardsDrawn,
    DiceRolled,
    DrawCards,
    Game,
    Outcome,
    RollDice,
    ShuffleDeck,
)
from services.games.registry import get_game


def _opening(game: str) -> tuple[Game[Any], Any]:
    engine = get_game(game)
    players = [f"p{i + 1}" for i in range(engine.min_players)]
    return engine, engine.fold(engine.setup(players, {}), engine.initial_state())


def test_a_playout_ends_with_the_matchs_outcome() -> None:
    engine, opening = _opening("crashland")
    rng = random.Random(3)
    ended = play_out(
        engine, opening, SearchChance({}, rng), random_policies(rng), Budget(iterations=1).start()
    )
    assert isinstance(ended, Outcome) and ended.results


def test_a_spent_allowance_stops_the_playout() -> None:
    engine, opening = _opening("crashland")
    rng = random.Random(3)
    spent = Budget(cpu_seconds=1e-9).start()
    with pytest.raises(OutOfTime):
        play_out(engine, opening, SearchChance({}, rng), random_policies(rng), spent)


def test_a_match_too_long_is_stopped_not_at_its_horizon() -> None:
    engine, opening = _opening("drillit")
    rng = random.Random(3)
    allowance = Budget(iterations=1).start()
    ended = play_out(
        engine, opening, SearchChance({}, rng), random_policies(rng), allowance, max_actions=5
    )
    assert isinstance(ended, Stopped) and not ended.at_horizon


def test_search_chance_draws_what_random_draws_from_the_same_seed() -> None:
    """Its own compiled shuffle and dice keep ``random.Random``'s numbers."""
    cards = tuple(f"c{i}" for i in range(40))
    chance, theirs = SearchChance({}, random.Random(8)), random.Random(8)
    chance.resolve(ShuffleDeck("deck", cards, "test"))
    dice = chance.resolve(RollDice(5, 6, "test"))
    drawn = chance.resolve(DrawCards("deck", 40, "test"))
    expected = list(cards)
    theirs.shuffle(expected)
    assert dice == DiceRolled(tuple(theirs.randint(1, 6) for _ in range(5)))
    assert drawn == CardsDrawn("deck", tuple(expected))
