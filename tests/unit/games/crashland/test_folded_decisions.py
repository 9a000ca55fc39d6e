"""``decide_folded`` and ``resolve_folded`` hand the command handler the state the rules
folded while deciding, so it does not fold every event again. That state must be exactly
the fold of the events returned: checked on every decision and chance outcome of many
seeded matches, and for every legal action of every state they pass through."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import ChanceOutcome
from services.games.crashland import GAME, Crashland
from services.games.crashland.bots import greedy_policy
from services.games.crashland.events import EVENT_TYPES
from services.games.crashland.state import _FIELDS, _FOLDS, CrashlandState
from services.games.playout import Policy, play, random_policy

PLAYER = "ann"


class FoldChecked(Crashland):
    """Crashland that checks each handed-over state against the plain fold."""

    def __init__(self) -> None:
        self.decisions = 0
        self.resolutions = 0

    def decide_folded(
        self, state: CrashlandState, player: str, action: Any
    ) -> tuple[list[Any], CrashlandState]:
        for legal in GAME.legal_actions(state, player):
            if not hasattr(legal, "ranges"):
                events, after = super().decide_folded(state, player, legal)
                assert after == GAME.fold(events, state), (state, legal)
        events, after = super().decide_folded(state, player, action)
        assert events == GAME.decide(state, player, action)
        assert after == GAME.fold(events, state), (state, action)
        self.decisions += 1
        return events, after

    def resolve_folded(
        self, state: CrashlandState, outcome: ChanceOutcome
    ) -> tuple[list[Any], CrashlandState]:
        events, after = super().resolve_folded(state, outcome)
        assert events == GAME.resolve(state, outcome)
        assert after == GAME.fold(events, state), (state, outcome)
        self.resolutions += 1
        return events, after


def _policy(seed: int) -> Policy:
    return greedy_policy(seed) if seed % 3 == 0 else random_policy(seed)


def test_the_handed_over_state_is_the_fold_of_the_events_on_every_step_of_many_matches() -> None:
    checked = FoldChecked()
    for seed in range(40):
        match = play(checked, [PLAYER], {}, {PLAYER: _policy(seed)}, seed)
        assert match.state == GAME.fold(match.events)
    assert checked.decisions > 500 and checked.resolutions > 100


def test_evolve_folds_every_event_class_and_refuses_anything_else() -> None:
    assert set(_FOLDS) == set(EVENT_TYPES)
    with pytest.raises(TypeError):
        GAME.evolve(GAME.initial_state(), "not an event")


def test_every_fold_keeps_exactly_the_state_fields() -> None:
    """The folds copy the state's instance dict with changes over it (``_with``), which no
    type checker reads: a misspelt field would add a key. Every event of many matches."""
    kinds: set[type] = set()
    for seed in range(40):
        match = play(GAME, [PLAYER], {}, {PLAYER: _policy(seed)}, seed)
        state = GAME.initial_state()
        for event in match.events:
            state = GAME.evolve(state, event)
            assert state.__dict__.keys() == _FIELDS, (event, set(state.__dict__) ^ _FIELDS)
            kinds.add(type(event))
    assert kinds == set(EVENT_TYPES)  # every fold function ran
