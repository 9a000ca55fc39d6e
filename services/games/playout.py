"""Playing whole matches in-process: the board service's command handler, without services.

Used by property tests, ``tabletop simulate`` and the engine benchmarks. Chance comes from
``SeededChance`` with the same derivation as the dice and decks services.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from services.games.chance import SeededChance
from services.games.commands import (
    Batch,
    Command,
    CommandHandler,
    Opening,
    Refusal,
)
from services.games.contract import (
    AwaitingPlayers,
    ChanceOutcome,
    ChanceRequest,
    Finished,
    Game,
    Outcome,
    RuleViolation,
    concrete,
)
from services.games.match import Match
from services.games.uniform import below

T = TypeVar("T")

#: chooses an action for ``player`` among ``legal`` in ``state`` (``Game.legal_choices``:
#: the legal actions in order, which a game may build only as they are read)
Policy = Callable[[Any, str, Sequence[Any]], Any]


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
    draw = below(rng)

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        return concrete(legal[draw(len(legal))], rng)

    return choose


class _SeededResolver:
    """SeededChance behind the ChanceResolver protocol (request ids are not needed: a
    playout never retries)."""

    def __init__(self, chance: SeededChance) -> None:
        self._chance = chance

    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        return self._chance.resolve(request)

    async def settle(self, match_id: str, cause: str) -> None:
        """Nothing to do: in-process outcomes are not appended anywhere."""


class _EventList:
    """An EventStore that keeps a playout's game events in a list, unencoded."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.version = 0

    async def append(self, game: Game[Any], batch: Batch) -> int:
        self.events.extend(batch.events)
        self.version += len(batch)
        return self.version


def _run(step: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (the handler's, with seeded chance and a list
    as store) without an event loop, so playouts also run inside one and cost no
    scheduling."""
    try:
        step.send(None)
    except StopIteration as done:
        result: T = done.value  # (typed here: typing.cast is a call)
        return result
    step.close()
    raise RuntimeError("a playout's command handler waited on I/O")


def _rules(refusal: Refusal) -> Exception:
    """The engine's own refusal behind a handler refusal (what a playout caller sees)."""
    cause = refusal.__cause__
    return cause if isinstance(cause, RuleViolation) else refusal


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
    store = _EventList()
    handler = CommandHandler(_SeededResolver(SeededChance(match_id, dice_seed, decks_seed)), store)
    match = Match(match_id, game, tuple(players), game.initial_state())
    # the whole match in one coroutine, run once: the handler's steps are awaited in it
    # (running each on its own ended each in a StopIteration, a few thousand instructions)
    try:
        return _run(_played(handler, match, store, options, policies, max_actions))
    except Refusal as refusal:
        raise _rules(refusal) from None


async def _played(
    handler: CommandHandler,
    match: Match,
    store: _EventList,
    options: Mapping[str, str],
    policies: Mapping[str, Policy],
    max_actions: int,
) -> Playout:
    game = match.game
    opening = Opening(game.name, match.players, options)

    async def open_log() -> Opening:
        return opening

    await handler.create(match, options, "setup", "sim", open_log)
    actions = 0
    while True:
        step = game.next_step(match.state)
        if isinstance(step, Finished):
            return Playout(tuple(store.events), match.state, step.outcome, actions)
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        legal = game.legal_choices(match.state, player)
        if not legal:
            raise RuntimeError(f"{game.name}: {player} must act but has no legal action")
        action = policies[player](match.state, player, legal)
        await handler.submit(match, Command(str(actions), player, action))
        actions += 1
        if actions > max_actions:
            raise RuntimeError(f"{game.name}: no end after {max_actions} actions")
