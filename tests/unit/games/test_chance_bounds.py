"""Every chance request a game makes is one the dice and decks services accept: their
bounds (how many dice, how many sides, how many cards) hold for every registered game, so
a game cannot work in simulations and fail through the services."""

from __future__ import annotations

from typing import Any

import pytest

from services.decks.service import MAX_CARDS
from services.dice.service import MAX_DICE, MAX_SIDES
from services.games import playout
from services.games.chance import SeededChance
from services.games.contract import ChanceOutcome, ChanceRequest, RollDice, ShuffleDeck
from services.games.playout import play, random_policy
from services.games.registry import all_games


@pytest.mark.parametrize("name", sorted(all_games()))
def test_every_chance_request_fits_the_services_bounds(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[ChanceRequest] = []

    class Recording(SeededChance):
        def resolve(self, request: ChanceRequest) -> ChanceOutcome:
            asked.append(request)
            return super().resolve(request)

    monkeypatch.setattr(playout, "SeededChance", Recording)
    game = all_games()[name]
    for seats in sorted({game.min_players, game.max_players}):
        players = [f"p{i}" for i in range(seats)]
        policies: dict[str, Any] = {p: random_policy(i) for i, p in enumerate(players)}
        play(game, players, {}, policies, seed=seats)
    assert asked, "a game with no chance at all would not exercise the bounds"
    for request in asked:
        if isinstance(request, RollDice):
            assert 1 <= request.count <= MAX_DICE and 2 <= request.sides <= MAX_SIDES, request
        if isinstance(request, ShuffleDeck):
            assert len(request.cards) <= MAX_CARDS, request.deck
