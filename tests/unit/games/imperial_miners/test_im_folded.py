"""``decide_folded`` and ``resolve_folded`` hand the command handler the state the rules
folded while deciding, so it does not fold every event again: that state must be exactly
the fold of the events returned, on every decision and chance outcome of seeded matches.
And ``state.changed`` (the folds' copy, which mypy cannot check) leaves every state with
exactly the state's fields."""

from __future__ import annotations

from typing import Any

from services.games.contract import ChanceOutcome
from services.games.imperial_miners import GAME, ImperialMiners
from services.games.imperial_miners.state import FIELDS, ImperialMinersState
from services.games.playout import play, random_policy


class FoldChecked(ImperialMiners):
    """Imperial Miners checking each handed-over state against the plain fold."""

    def __init__(self) -> None:
        self.checked = 0

    def _check(self, state: ImperialMinersState, events: list[Any], after: Any) -> None:
        folded = state
        for event in events:
            folded = GAME.evolve(folded, event)
            assert set(vars(folded)) == FIELDS, event
        assert after == folded
        self.checked += 1

    def decide_folded(
        self, state: ImperialMinersState, player: str, action: Any
    ) -> tuple[list[Any], ImperialMinersState]:
        events, after = super().decide_folded(state, player, action)
        assert events == GAME.decide(state, player, action)
        self._check(state, events, after)
        return events, after

    def resolve_folded(
        self, state: ImperialMinersState, outcome: ChanceOutcome
    ) -> tuple[list[Any], ImperialMinersState]:
        events, after = super().resolve_folded(state, outcome)
        assert events == GAME.resolve(state, outcome)
        self._check(state, events, after)
        return events, after


def test_the_handed_over_state_is_the_fold_of_the_events_on_every_step() -> None:
    checked = FoldChecked()
    for seed in range(12):
        players = [f"p{i + 1}" for i in range(1 + seed % 5)]
        policies = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}
        options = {"first_game": "true"} if seed % 4 == 3 else {}
        match = play(checked, players, options, policies, seed)
        assert match.state == GAME.fold(match.events)
    assert checked.checked > 1000
