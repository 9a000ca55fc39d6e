"""What the view reference tests of every game share: the states of a random playout, one
after each event, and the check that the game's view (which keeps parts from the views it
drew before) equals a plain view drawn afresh, whatever order the states come in."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services.games.contract import Game
from services.games.playout import Policy, play, random_policy


def playout_states(
    game: Game[Any], seats: Sequence[str], seed: int, policies: Mapping[str, Policy] | None = None
) -> list[Any]:
    """The state after each event of a random playout (seat i's bot seeded seed * 7 + i)."""
    chosen = policies or {p: random_policy(seed * 7 + i) for i, p in enumerate(seats)}
    playout = play(game, list(seats), {}, dict(chosen), seed)
    states, state = [], game.initial_state()
    for event in playout.events:
        state = game.evolve(state, event)
        states.append(state)
    return states


def assert_views_equal_the_plain_view(
    game: Game[Any],
    plain_view: Callable[[Any, str | None], Any],
    states: Sequence[Any],
    viewers: Sequence[str | None],
) -> None:
    """In fold order, shuffled and reversed, every viewer's view is the plain one."""
    shuffled = list(states)
    random.Random(7).shuffle(shuffled)
    for order in (states, shuffled, states[::-1]):
        for state in order:
            for viewer in viewers:
                assert game.view(state, viewer) == plain_view(state, viewer)
