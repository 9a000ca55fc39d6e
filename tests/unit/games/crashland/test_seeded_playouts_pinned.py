"""Seeded playouts pinned to digests taken before the engine was made faster: the same
seed must still give the same events, final state and number of actions, so speed-ups
change no simulation, bench or replay. The digests were computed from commit ee70727;
a rule change that moves them must say so and update them."""

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
    ("greedy", 0): "3287b856dcca4c06",
    ("random", 1): "554a39666b5cbf7b",
    ("greedy", 1): "bd46fb817762f6ac",
    ("random", 2): "71f32f2c6a1f2b1f",
    ("greedy", 2): "d8944e85bf1a955b",
    ("random", 3): "1583e8359c4a70dd",
    ("greedy", 3): "cddd2142b6062bba",
    ("random", 4): "f8e8675051d19223",
    ("greedy", 4): "b1007ee00553cf67",
    ("random", 5): "99021424acca8ef9",
    ("greedy", 5): "dfd7cbd03fe77868",
    ("random", 6): "266945607f38a300",
    ("greedy", 6): "28e72b754a657cba",
    ("random", 7): "52040d8e22688a66",
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
