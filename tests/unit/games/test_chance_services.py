"""Each game declares the chance services it asks (``Game.chance_services``): a match
commits a seed with exactly those, so a game must ask no other and use every one."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.chance import SeededChance
from services.games.contract import ChanceOutcome, ChanceRequest
from services.games.crashland.game import Crashland
from services.games.playout import play, random_policy
from services.games.registry import all_games


@pytest.mark.parametrize("name", sorted(all_games()))
def test_random_playouts_ask_exactly_the_declared_chance_services(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = all_games()[name]
    asked: set[str] = set()
    resolve = SeededChance.resolve

    def noting(self: SeededChance, request: ChanceRequest) -> ChanceOutcome:
        asked.add(request.service)
        return resolve(self, request)

    monkeypatch.setattr(SeededChance, "resolve", noting)
    for seed in range(3 if name == "dungeon_drop" else 12):
        players = [f"p{i + 1}" for i in range(game.min_players + seed % 2)][: game.max_players]
        play(
            game, players, {}, {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}, seed
        )
    assert asked == game.chance_services


class DiceOnlyCrashland(Crashland):
    """Crashland declaring the wrong service: its set-up shuffles decks."""

    chance_services = frozenset({"dice"})


def test_a_game_asking_a_service_it_does_not_declare_is_stopped_before_the_call() -> None:
    asked: list[Any] = []
    resolve = SeededChance.resolve

    def noting(self: SeededChance, request: ChanceRequest) -> ChanceOutcome:
        asked.append(request)
        return resolve(self, request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SeededChance, "resolve", noting)
        with pytest.raises(RuntimeError, match="does not declare"):
            play(DiceOnlyCrashland(), ["p1"], {}, {"p1": random_policy(1)}, 1)
    assert asked == []
