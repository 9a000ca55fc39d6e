"""Playing whole matches in-process: the loop the board service runs, without services.

Used by property tests, ``tabletop simulate`` and the engine benchmarks. Chance comes from
``SeededChance`` with the same derivation as the dice and decks services.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.games.chance import SeededChance
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    Finished,
    Game,
    Outcome,
    concrete,
)

#: chooses an action for ``player`` among ``legal`` in ``state``
Policy = Callable[[Any, str, tuple[Any, ...]], Any]


@dataclass(frozen=True)
class Playout:
    events: tuple[Any, ...]
    state: Any
    outcome: Outcome
    actions: int


def seeds_for(seed: int) -> tuple[bytes, bytes]:
    """The dice and decks seeds a simulation derives from one integer."""
    base = str(seed).encode()
    return (
        hashlib.sha256(b"dice:" + base).digest(),
        hashlib.sha256(b"decks:" + base).digest(),
    )


def random_policy(seed: int) -> Policy:
    rng = random.Random(seed)

    def choose(state: Any, player: str, legal: tuple[Any, ...]) -> Any:
        return concrete(legal[rng.randrange(len(legal))], rng)

    return choose


def play(
    game: Game[Any],
    players: Sequence[str],
    options: Mapping[str, str],
    policies: Mapping[str, Policy],
    seed: int,
    match_id: str = "sim",
    max_actions: int = 100_000,
) -> Playout:
    dice_seed, decks_seed = seeds_for(seed)
    chance = SeededChance(match_id, dice_seed, decks_seed)
    events: list[Any] = []
    state = game.initial_state()

    def apply(new: list[Any]) -> None:
        nonlocal state
        for event in new:
            state = game.evolve(state, event)
            events.append(event)

    apply(game.setup(players, options))
    actions = 0
    while True:
        step = game.next_step(state)
        if isinstance(step, Finished):
            return Playout(tuple(events), state, step.outcome, actions)
        if isinstance(step, AwaitingChance):
            apply(game.resolve(state, chance.resolve(step.request)))
            continue
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        legal = game.legal_actions(state, player)
        if not legal:
            raise RuntimeError(f"{game.name}: {player} must act but has no legal action")
        apply(game.decide(state, player, policies[player](state, player, legal)))
        actions += 1
        if actions > max_actions:
            raise RuntimeError(f"{game.name}: no end after {max_actions} actions")
