"""What every game does alike: its first event is ``MatchSetUp``, and the refusals the
command handler owns (docs/CONVENTIONS.md, "Who refuses what") reach a player in the
handler's words whatever the game, without the game being asked."""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.games.chance import SeededChance
from services.games.commands import (
    Batch,
    Command,
    CommandHandler,
    Opening,
    Refusal,
    RefusalKind,
)
from services.games.contract import (
    AwaitingPlayers,
    ChanceOutcome,
    ChanceRequest,
    Finished,
    Game,
    concrete,
)
from services.games.match import Match
from services.games.playout import random_policy, seeds_for
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


class _Seeded:
    def __init__(self, match_id: str) -> None:
        self._chance = SeededChance(match_id, *seeds_for(7))

    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        return self._chance.resolve(request)

    async def settle(self, match_id: str, cause: str) -> None:
        pass


class _Appended:
    def __init__(self) -> None:
        self.version = 0

    async def append(self, game: Game[Any], batch: Batch) -> int:
        self.version += len(batch)
        return self.version


async def _created(game: Game[Any]) -> tuple[CommandHandler, Match]:
    handler = CommandHandler(_Seeded("m"), _Appended())
    match = Match("m", game, _players(game), game.initial_state())

    async def opening() -> Opening:
        return Opening(game.name, match.players, {})

    await handler.create(match, {}, "setup", "creator", opening)
    return handler, match


def _an_action(game: Game[Any], match: Match, rng: random.Random) -> tuple[str, Any]:
    step = game.next_step(match.state)
    assert isinstance(step, AwaitingPlayers)
    player = step.players[0]
    return player, concrete(rng.choice(list(game.legal_actions(match.state, player))), rng)


def _game_not_asked(game: Game[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    def asked(*args: Any) -> Any:
        raise AssertionError(f"{game.name} was asked to decide")

    monkeypatch.setattr(type(game), "decide_folded", staticmethod(asked))


async def _refused(handler: CommandHandler, match: Match, command: Command) -> Refusal:
    with pytest.raises(Refusal) as refused:
        await handler.submit(match, command)
    return refused.value


@pytest.mark.parametrize("name", GAMES)
async def test_a_stranger_is_refused_by_the_handler(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = all_games()[name]
    handler, match = await _created(game)
    _, action = _an_action(game, match, random.Random(1))
    _game_not_asked(game, monkeypatch)
    refusal = await _refused(handler, match, Command("c1", "zed", action))
    assert (refusal.kind, refusal.code, refusal.message) == (
        RefusalKind.PERMISSION_DENIED,
        "NOT_A_PLAYER",
        "zed does not play in this match",
    )


@pytest.mark.parametrize("name", GAMES)
async def test_an_action_after_the_end_is_refused_by_the_handler(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = all_games()[name]
    handler, match = await _created(game)
    players = {p: random_policy(i) for i, p in enumerate(match.players)}
    last: tuple[str, Any] = ("", None)
    for number in range(100_000):
        step = game.next_step(match.state)
        if isinstance(step, Finished):
            break
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        action = players[player](match.state, player, game.legal_choices(match.state, player))
        await handler.submit(match, Command(f"c{number}", player, action))
        last = (player, action)
    assert match.finished
    _game_not_asked(game, monkeypatch)
    refusal = await _refused(handler, match, Command("after", *last))
    assert (refusal.kind, refusal.code, refusal.message) == (
        RefusalKind.FAILED_PRECONDITION,
        "MATCH_OVER",
        "the match is over",
    )
