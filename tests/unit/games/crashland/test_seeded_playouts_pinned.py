"""Seeded playouts pinned to digests taken before the engine was made faster: the same
seed must still give the same events, final state and number of actions, so speed-ups
change no simulation, bench or replay. The digests were computed from commit ee70727;
a rule change that moves them must say so and update them. They were computed again when
the codec began to sort a dict's pairs (for the located beacons of some playouts): the
old codec still gave the old digests for the same playouts, so no event or state moved.
And again when the first event was renamed MatchSetUp (it was GameStarted, the one name
in which Crashland differed from the other games): with the old name put back in the
encoded events, every playout gave its old digest."""

from __future__ import annotations

import hashlib
import json

import pytest

from services.games.codec import to_data
from services.games.crashland import GAME
from services.games.crashland.bots import greedy_policy
from services.games.playout import Playout, Policy, play, random_policy

PLAYER = "ann"

PINNED = {
    ("random", 0): "29b7c232bbaa4087",
    ("greedy", 0): "1a9d0c5e042a9027",
    ("random", 1): "84cc1ec5dd97acf0",
    ("greedy", 1): "3feda94f51019989",
    ("random", 2): "220ebc52ec26e445",
    ("greedy", 2): "65aefa0031ff42ce",
    ("random", 3): "da4568f03402b80b",
    ("greedy", 3): "053c310c9874f49f",
    ("random", 4): "e7f50a5d7c77e2d7",
    ("greedy", 4): "3debf677a674b625",
    ("random", 5): "f599472ecac5d450",
    ("greedy", 5): "bd65b639ff4fd4f5",
    ("random", 6): "614c6dc346321f0b",
    ("greedy", 6): "19fefeafa4e06371",
    ("random", 7): "7d717ab3b8d25e34",
    ("greedy", 7): "0521419277db7cc2",
}


def digest(playout: Playout) -> str:
    blob = json.dumps(
        [to_data(list(playout.events)), to_data(playout.state), playout.actions], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def policy(kind: str, seed: int) -> Policy:
    return greedy_policy(seed) if kind == "greedy" else random_policy(seed)


@pytest.mark.parametrize(("kind", "seed"), sorted(PINNED))
def test_a_seeded_playout_gives_the_pinned_events_and_final_state(kind: str, seed: int) -> None:
    playout = play(GAME, [PLAYER], {}, {PLAYER: policy(kind, seed)}, seed)
    assert digest(playout) == PINNED[kind, seed]
    assert GAME.fold(playout.events) == playout.state
