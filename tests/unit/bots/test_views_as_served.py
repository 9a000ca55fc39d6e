"""A search bot plays from the view as the gateway serves it: the view and legal actions
through their protobuf messages and back (what a networked bot reads, like ``tabletop
play``'s) sample to states that show the seat that same view and offer it those actions."""

from __future__ import annotations

import random

import pytest

from services.adapters.game_adapter import fill_game_view, legal_action_message, legal_entry
from services.adapters.protoconv import read
from services.bots.search.determinization import sampler_for
from services.games.registry import get_game
from tabletop.v1 import games_pb2
from tests.unit.bots.sampling_kit import decisions

CASES = {
    "crashland": (1, {}),
    "drillit": (3, {"difficulty": "medium", "distance": "medium"}),
    "imperial_miners": (3, {}),
    "dungeon_drop": (2, {}),
}


@pytest.mark.parametrize("game_name", sorted(CASES))
def test_a_view_read_back_from_its_message_samples_consistent_states(game_name: str) -> None:
    seats, options = CASES[game_name]
    game = get_game(game_name)
    found = decisions(game_name, seats, 1, options)
    rng = random.Random(5)
    for decision in found[:: max(1, len(found) // 8)]:
        view = game.view(decision.state, decision.player)
        sent = fill_game_view(games_pb2.GameView(), game_name, view).SerializeToString()
        wrapper = games_pb2.GameView.FromString(sent)
        served = read(game.view_type, getattr(wrapper, game_name))
        legal = tuple(
            legal_entry(game_name, legal_action_message(game, entry)) for entry in decision.legal
        )
        assert served == view and legal == decision.legal
        sampled = sampler_for(game_name)(served, decision.player, legal, rng).state
        assert game.view(sampled, decision.player) == view
