"""A tiny two-player race for testing the command handler without a real engine.

Setup rolls a d2 for the first player; on your turn you ``Step`` 1–3 spaces, then a d6 is
rolled and added too; the first to 10 wins. ``evolve`` counts its calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    ChanceOutcome,
    DiceRolled,
    Finished,
    Game,
    MalformedAction,
    Outcome,
    RollDice,
    RuleViolation,
    Step,
)

GOAL = 10


@dataclass(frozen=True)
class Stride:
    spaces: int


@dataclass(frozen=True)
class Started:
    players: tuple[str, ...]


@dataclass(frozen=True)
class FirstPlayerChosen:
    index: int


@dataclass(frozen=True)
class Strode:
    player: str
    spaces: int


@dataclass(frozen=True)
class Pushed:
    player: str
    spaces: int


@dataclass(frozen=True)
class RaceState:
    players: tuple[str, ...] = ()
    turn: int | None = None
    positions: tuple[int, ...] = ()
    #: the player whose stride awaits its d6
    pushing: str | None = None


@dataclass(frozen=True)
class RaceView:
    positions: tuple[int, ...]


class Race(Game[RaceState]):
    name = "race"
    title = "Race"
    rules_version = "1"
    min_players = 2
    max_players = 2
    action_types = (Stride,)
    event_types = (Started, FirstPlayerChosen, Strode, Pushed)
    view_type = RaceView

    def __init__(self) -> None:
        self.evolved = 0

    def initial_state(self) -> RaceState:
        return RaceState()

    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        if len(players) != 2:
            raise MalformedAction("PLAYERS", "A race needs two players.")
        return [Started(tuple(players))]

    def evolve(self, state: RaceState, event: Any) -> RaceState:
        self.evolved += 1
        match event:
            case Started(players=players):
                return RaceState(players, None, (0,) * len(players))
            case FirstPlayerChosen(index=index):
                return dataclasses.replace(state, turn=index)
            case Strode(player=player, spaces=spaces):
                return dataclasses.replace(_advance(state, player, spaces), pushing=player)
            case Pushed(player=player, spaces=spaces):
                assert state.turn is not None
                moved = _advance(state, player, spaces)
                return dataclasses.replace(
                    moved, pushing=None, turn=(state.turn + 1) % len(state.players)
                )
        raise TypeError(event)

    def next_step(self, state: RaceState) -> Step:
        for player, position in zip(state.players, state.positions, strict=True):
            if position >= GOAL:
                results = {p: "won" if p == player else "lost" for p in state.players}
                return Finished(Outcome(results, "reached the goal"))
        if state.turn is None:
            return AwaitingChance(RollDice(1, 2, "first player"))
        if state.pushing is not None:
            return AwaitingChance(RollDice(1, 6, "push"))
        return AwaitingPlayers((state.players[state.turn],), "stride")

    def decide(self, state: RaceState, player: str, action: Any) -> list[Any]:
        if not isinstance(action, Stride) or not 1 <= action.spaces <= 3:
            raise MalformedAction("BAD_STRIDE", "Stride 1, 2 or 3 spaces.")
        step = self.next_step(state)
        if not isinstance(step, AwaitingPlayers) or player not in step.players:
            raise RuleViolation("NOT_YOUR_TURN", "It is not your turn.")
        return [Strode(player, action.spaces)]

    def resolve(self, state: RaceState, outcome: ChanceOutcome) -> list[Any]:
        assert isinstance(outcome, DiceRolled)
        if state.turn is None:
            return [FirstPlayerChosen(outcome.values[0] - 1)]
        assert state.pushing is not None
        return [Pushed(state.pushing, outcome.values[0])]

    def legal_actions(self, state: RaceState, player: str) -> tuple[Any, ...]:
        step = self.next_step(state)
        if isinstance(step, AwaitingPlayers) and player in step.players:
            return (Stride(1), Stride(2), Stride(3))
        return ()

    def view(self, state: RaceState, viewer: str | None) -> RaceView:
        return RaceView(state.positions)


def _advance(state: RaceState, player: str, spaces: int) -> RaceState:
    index = state.players.index(player)
    positions = list(state.positions)
    positions[index] += spaces
    return dataclasses.replace(state, positions=tuple(positions))
