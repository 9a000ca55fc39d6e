"""Seeded playouts pinned to digests taken before the engine was made faster: the same
seed must still give the same events, final state and number of actions, so speed-ups
change no simulation, bench or replay. The digests were computed from commit ee70727;
a rule change that moves them must say so and update them. They were computed again when
the codec began to sort a dict's pairs (for the located beacons of some playouts): the
old codec still gave the old digests for the same playouts, so no event or state moved."""

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
    ("random", 0): "27b922e4d87440de",
    ("greedy", 0): "411de2b1123bdd95",
    ("random", 1): "554a39666b5cbf7b",
    ("greedy", 1): "4b32276cd2db3fbe",
    ("random", 2): "71f32f2c6a1f2b1f",
    ("greedy", 2): "5bdfa4fab5a2ba7f",
    ("random", 3): "1583e8359c4a70dd",
    ("greedy", 3): "32c2ef04e872f8c0",
    ("random", 4): "f8e8675051d19223",
    ("greedy", 4): "7280c14bad82e4b0",
    ("random", 5): "99021424acca8ef9",
    ("greedy", 5): "c0a18a232dc11790",
    ("random", 6): "266945607f38a300",
    ("greedy", 6): "a5b0e9276e8f651b",
    ("random", 7): "fe5d38d0bcb618af",
    ("greedy", 7): "0204fc43ac909262",
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
