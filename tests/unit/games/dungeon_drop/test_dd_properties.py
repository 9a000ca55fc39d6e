"""Whole matches from seeded bots: they end after 3 rounds (one turn per hero per round),
refold to the same state, round-trip through the codec, and no view leaks another
hero's Quest before the reveal or the box's blind draw before it lands."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from services.games import codec
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.state import DungeonDropState
from services.games.playout import play, seeds_for

CASES = [
    (seed, players, variant, bot)
    for seed, players, variant, bot in (
        (1, 2, "standard", "random"),
        (2, 3, "standard", "random"),
        (3, 4, "standard", "random"),
        (4, 1, "solo", "random"),
        (5, 3, "teamwork", "random"),
        (6, 2, "standard", "greedy"),
        (7, 4, "teamwork", "greedy"),
        (8, 1, "solo", "greedy"),
    )
]


def view_json(state: DungeonDropState, viewer: str | None) -> str:
    return json.dumps(codec.to_data(GAME.view(state, viewer)))


def check_no_leak(state: DungeonDropState, drawn: set[str]) -> None:
    """``drawn``: cubes drawn from the box that have not landed yet."""
    for viewer in (*state.players, None):
        text = view_json(state, viewer)
        if not state.quests_revealed:
            for owner, quest in state.quests.items():
                seen = next(s for s in GAME.view(state, viewer).seats if s.player == owner).quest
                assert seen == (quest if owner == viewer else None)
                if owner != viewer and all(
                    q != quest for p, q in state.quests.items() if p == viewer
                ):
                    assert f'"{quest}"' not in text
        for cube in drawn:
            assert f'"{cube}"' not in text  # drawn blind, not yet landed


def playout(seed: int, players: int, variant: str, bot: str) -> tuple[list[Any], DungeonDropState]:
    names = [f"p{i}" for i in range(players)]
    make = GAME.bots()[bot]
    policies = {p: make(seed * 10 + i) for i, p in enumerate(names)}
    chance = SeededChance(f"prop-{seed}", *seeds_for(seed))
    events: list[Any] = list(GAME.setup(names, {"variant": variant}))
    state = GAME.fold(events)
    drawn: set[str] = set()
    for _ in range(2000):
        step = GAME.next_step(state)
        if isinstance(step, Finished):
            return events, state
        if isinstance(step, AwaitingChance):
            new = GAME.resolve(state, chance.resolve(step.request))
        else:
            assert isinstance(step, AwaitingPlayers) and len(step.players) == 1
            player = step.players[0]
            legal = GAME.legal_actions(state, player)
            assert legal
            new = GAME.decide(
                state, player, policies[player](GAME.view(state, player), player, legal)
            )
        for event in new:
            if isinstance(event, ev.CubesExplored):
                drawn |= set(event.cubes)
            if isinstance(event, ev.CubesDropped):
                drawn -= set(event.cubes)
        state = GAME.fold(new, state)
        events += new
        check_no_leak(state, drawn)
    raise AssertionError("no end")


@pytest.mark.parametrize(("seed", "players", "variant", "bot"), CASES)
def test_whole_matches(seed: int, players: int, variant: str, bot: str) -> None:
    events, state = playout(seed, players, variant, bot)
    # 3 rounds, one turn each per round
    starts = [e for e in events if isinstance(e, ev.TurnStarted)]
    assert [e.round for e in starts] == [r for r in (1, 2, 3) for _ in range(players)]
    for rnd in (1, 2, 3):
        assert sorted(e.player for e in starts if e.round == rnd) == sorted(state.players)
    assert sum(isinstance(e, ev.RoundEnded) for e in events) == CONTENT.rounds
    # refold equals state; events survive the codec
    assert GAME.fold(events) == state
    decoded = [codec.decode_tagged(GAME.event_types, codec.to_data(e)) for e in events]
    assert GAME.fold(decoded) == state
    # every cube is somewhere exactly once
    places = [*state.table, *state.aside, *(c for s in state.stash.values() for c in s)]
    assert len(places) == len(set(places))
    assert all(h >= 1 for h in state.health.values())
    outcome = GAME.outcome(state)
    assert outcome is not None and set(outcome.results) == set(state.players)
    if variant != "solo":
        assert list(outcome.results.values()).count("won") == 1
    assert GAME.seat_summaries(state)[0]["race"] == state.races[state.players[0]]


def test_the_same_seed_replays_the_same_match() -> None:
    assert playout(9, 2, "standard", "random") == playout(9, 2, "standard", "random")


def test_the_greedy_bot_outscores_the_random_bot() -> None:
    greedy, random_ = 0, 0
    for seed in range(4):
        seats = ("greedy", "random") if seed % 2 == 0 else ("random", "greedy")
        names = ("p0", "p1")
        bots = {
            p: GAME.bots()[b](seed * 10 + i)
            for i, (p, b) in enumerate(zip(names, seats, strict=True))
        }

        def policy(state: Any, player: str, legal: Sequence[Any], bots: Any = bots) -> Any:
            return bots[player](GAME.view(state, player), player, legal)

        result = play(GAME, names, {}, dict.fromkeys(names, policy), seed)
        for p, b in zip(names, seats, strict=True):
            if b == "greedy":
                greedy += result.state.scores[p]
            else:
                random_ += result.state.scores[p]
    assert greedy > random_
