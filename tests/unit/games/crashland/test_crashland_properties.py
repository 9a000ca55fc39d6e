"""Properties over whole matches played by random and greedy policies."""

from __future__ import annotations

import json

from services.games.codec import decode_tagged, from_data, to_data
from services.games.crashland import GAME
from services.games.crashland.bots import greedy_policy
from services.games.crashland.model import Position
from services.games.crashland.state import CrashlandState
from services.games.playout import play, random_policy

PLAYER = "ann"


def test_random_play_always_ends_and_the_log_replays_and_round_trips() -> None:
    outcomes = set()
    for seed in range(300):
        match = play(GAME, [PLAYER], {}, {PLAYER: random_policy(seed)}, seed)
        outcomes.add(match.outcome.results[PLAYER])
        assert match.outcome.results[PLAYER] in {"won", "lost"}
        assert GAME.fold(match.events) == match.state
        for event in match.events:
            assert decode_tagged(GAME.event_types, to_data(event)) == event
        assert from_data(CrashlandState, to_data(match.state)) == match.state
    assert "lost" in outcomes


def test_greedy_play_wins_some_matches() -> None:
    results = [
        play(GAME, [PLAYER], {}, {PLAYER: greedy_policy(seed)}, seed).outcome.results[PLAYER]
        for seed in range(40)
    ]
    assert "won" in results and "lost" in results


def test_view_never_leaks_an_unexplored_card_hand_or_uplink() -> None:
    for seed in range(25):
        policy = greedy_policy(seed) if seed % 2 else random_policy(seed)
        match = play(GAME, [PLAYER], {}, {PLAYER: policy}, seed)
        state = GAME.initial_state()
        for event in match.events:
            state = GAME.evolve(state, event)
            hidden = [c for i, c in enumerate(state.grid) if _pos(i) not in state.explored]
            secret = [*state.hand, *state.known_top]
            mine = json.dumps(to_data(GAME.view(state, PLAYER)))
            theirs = json.dumps(to_data(GAME.view(state, None)))
            for card in hidden:
                assert f'"{card}"' not in mine and f'"{card}"' not in theirs
            for card in secret:
                assert f'"{card}"' not in theirs


def _pos(index: int) -> Position:
    return Position(index // 6, index % 6)
