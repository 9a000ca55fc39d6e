"""What every game does alike: its first event is ``MatchSetUp``."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import Game
from services.games.registry import all_games

GAMES = sorted(all_games())


def _players(game: Game[Any]) -> tuple[str, ...]:
    return tuple(
        f"seat{i + 1}" for i in range(max(game.min_players, 2 if game.max_players > 1 else 1))
    )


@pytest.mark.parametrize("name", GAMES)
def test_the_first_event_is_match_set_up(name: str) -> None:
    game = all_games()[name]
    first = game.setup(_players(game), {})[0]
    assert type(first).__name__ == "MatchSetUp"
    assert type(first) in game.event_types
