"""Seeded playouts pinned: the final state and every event of whole matches, as the engine
produced them before it was made faster (fast paths must not change a single fact).

Each case is (seed, bot, players, options); the digest covers ``repr`` of the events and of
the final state. A rule change that alters play legitimately updates these digests."""

from __future__ import annotations

import hashlib

import pytest

from services.games.drillit import GAME
from services.games.drillit.bots import greedy_policy
from services.games.playout import play, random_policy

DIFFICULTIES = ("easy", "medium", "hard")
DISTANCES = ("short", "medium", "long")


def case(seed: int) -> tuple[str, tuple[str, ...], dict[str, str]]:
    players = tuple(f"p{i + 1}" for i in range(2 + seed % 3))
    options = {
        "difficulty": DIFFICULTIES[seed % 3],
        "distance": DISTANCES[seed // 3 % 3],
        "exit": ("1", "2")[seed // 2 % 2],
    }
    return ("random" if seed < 9 else "greedy"), players, options


#: seed -> (events, turns, end reason, digest), from the engine before the fast paths
PINNED = {
    0: (118, 7, "life-track-full", "e560453a4a3c6e15"),
    1: (93, 5, "life-track-full", "d352c775ad387e0d"),
    2: (114, 6, "life-track-full", "cd302bdfc58ef15c"),
    3: (122, 7, "life-track-full", "7d1249879f6f49cf"),
    4: (77, 4, "life-track-full", "6cb4c61c0df7b7e2"),
    5: (105, 6, "life-track-full", "e628177abe4eb7fb"),
    6: (128, 7, "life-track-full", "ab46012ca423ab98"),
    7: (106, 6, "life-track-full", "d4fdfe6fcc804eca"),
    8: (127, 7, "life-track-full", "9c0d098d8409b9e9"),
    9: (115, 6, "exit-reached", "442d497fbd7e27ca"),
    10: (68, 3, "exit-reached", "3feb2653ce620abe"),
    11: (83, 4, "exit-reached", "a1036e39bcfe18b5"),
}


@pytest.mark.parametrize("seed", sorted(PINNED))
def test_seeded_playout_is_unchanged(seed: int) -> None:
    bot, players, options = case(seed)
    make = random_policy if bot == "random" else greedy_policy
    policies = {p: make(seed * 7 + i) for i, p in enumerate(players)}
    done = play(GAME, players, options, policies, seed)
    digest = hashlib.sha256((repr(done.events) + repr(done.state)).encode()).hexdigest()[:16]
    assert (len(done.events), done.state.turn, done.outcome.reason, digest) == PINNED[seed]
