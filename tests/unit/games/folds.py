"""What the folded-decision tests share: an engine's ``decide_folded`` and ``resolve_folded``
hand the command handler the state the rules folded while deciding, so it does not fold
every event again. That state must be exactly the plain fold of the events returned, and
the engine's state copy (``changed``, which mypy cannot check) must leave every state with
exactly the state's fields, on every decision and chance outcome of seeded matches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.games.contract import ChanceOutcome, Game
from services.games.playout import play, random_policy


def checked_matches(
    fresh: Game[Any],
    reference: Game[Any],
    fields: frozenset[str],
    matches: Sequence[tuple[int, int, Mapping[str, str]]],
) -> int:
    """Play ``matches`` (seed, seats, options) with random bots on ``fresh`` (an instance of
    its own: its two methods are wrapped), each handed-over state checked against
    ``reference``'s plain fold; the number of steps checked."""
    checked = 0
    decide_folded, resolve_folded = fresh.decide_folded, fresh.resolve_folded

    def check(state: Any, events: list[Any], after: Any) -> None:
        nonlocal checked
        folded = state
        for event in events:
            folded = reference.evolve(folded, event)
            assert set(vars(folded)) == fields, event
        assert after == folded
        checked += 1

    def decide(state: Any, player: str, action: Any) -> tuple[list[Any], Any]:
        events, after = decide_folded(state, player, action)
        assert events == reference.decide(state, player, action)
        check(state, events, after)
        return events, after

    def resolve(state: Any, outcome: ChanceOutcome) -> tuple[list[Any], Any]:
        events, after = resolve_folded(state, outcome)
        assert events == reference.resolve(state, outcome)
        check(state, events, after)
        return events, after

    fresh.decide_folded = decide  # type: ignore[method-assign]
    fresh.resolve_folded = resolve  # type: ignore[method-assign]
    for seed, seats, options in matches:
        players = [f"p{i + 1}" for i in range(seats)]
        policies = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}
        match = play(fresh, players, options, policies, seed)
        assert match.state == reference.fold(match.events)
    return checked
