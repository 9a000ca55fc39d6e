"""``decide_folded`` and ``resolve_folded`` hand the command handler the state the turn
flow folded while working out what follows, so it does not fold every event again. That
state must be exactly the fold of the events returned: checked on every decision and
chance outcome of many seeded matches, and for every legal action of every state they pass
through. And the folds copy the state's dict with changes over it (``changed``), which no
type checker reads: every state has exactly the state's fields."""

from __future__ import annotations

from typing import Any

from services.games.contract import ChanceOutcome
from services.games.drillit import GAME, Drillit
from services.games.drillit import events as ev
from services.games.drillit.bots import greedy_policy
from services.games.drillit.events import EVENT_TYPES
from services.games.drillit.state import _FIELDS, DrillitState
from services.games.playout import Policy, play, random_policy

DIFFICULTIES = ("easy", "medium", "hard")
DISTANCES = ("short", "medium", "long")


class FoldChecked(Drillit):
    """Drillit that checks each handed-over state against the plain fold."""

    def __init__(self) -> None:
        self.decisions = 0
        self.resolutions = 0

    def decide_folded(
        self, state: DrillitState, player: str, action: Any
    ) -> tuple[list[Any], DrillitState]:
        if self.decisions % 7 == 0:  # every legal action of some states (they are many)
            for legal in GAME.legal_actions(state, player):
                events, after = super().decide_folded(state, player, legal)
                assert after == GAME.fold(events, state), (state, legal)
        events, after = super().decide_folded(state, player, action)
        assert events == GAME.decide(state, player, action)
        assert after == GAME.fold(events, state), (state, action)
        self.decisions += 1
        return events, after

    def resolve_folded(
        self, state: DrillitState, outcome: ChanceOutcome
    ) -> tuple[list[Any], DrillitState]:
        events, after = super().resolve_folded(state, outcome)
        assert events == GAME.resolve(state, outcome)
        assert after == GAME.fold(events, state), (state, outcome)
        self.resolutions += 1
        return events, after


def _match(seed: int) -> tuple[tuple[str, ...], dict[str, str], dict[str, Policy]]:
    players = tuple(f"p{i + 1}" for i in range(2 + seed % 3))
    options = {"difficulty": DIFFICULTIES[seed % 3], "distance": DISTANCES[seed // 3 % 3]}
    make = greedy_policy if seed % 4 == 0 else random_policy
    return players, options, {p: make(seed * 7 + i) for i, p in enumerate(players)}


def test_the_handed_over_state_is_the_fold_of_the_events_on_every_step_of_many_matches() -> None:
    checked = FoldChecked()
    for seed in range(24):
        players, options, policies = _match(seed)
        match = play(checked, players, options, policies, seed)
        assert match.state == GAME.fold(match.events)
    assert checked.decisions > 500 and checked.resolutions > 500


def test_every_fold_keeps_exactly_the_state_fields() -> None:
    kinds: set[type] = set()
    for seed in range(60):
        players, options, policies = _match(seed)
        state = GAME.initial_state()
        for event in play(GAME, players, options, policies, seed).events:
            state = GAME.evolve(state, event)
            assert state.__dict__.keys() == _FIELDS, (event, set(state.__dict__) ^ _FIELDS)
            kinds.add(type(event))
        # the one event these matches never reach (the Path pile runs out during a Turbo)
        stopped = GAME.evolve(state, ev.TurboStopped("the Path pile is empty"))
        assert stopped.__dict__.keys() == _FIELDS
    assert kinds | {ev.TurboStopped} == set(EVENT_TYPES)  # every fold function ran
