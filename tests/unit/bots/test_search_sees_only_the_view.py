"""A search bot decides from its seat's view alone: given two states that differ only in
what the seat cannot see (the real one, and one its own sampler drew from the seat's view:
other map cards face down, another deck order, other hands), a bot of the same seed makes
the same choice from the same rounds, whatever the hidden part is."""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.bots.levels import settings_for
from services.bots.search.budget import Budget
from services.bots.search.determinization import sampler_for
from services.bots.search.rollouts import Search, SearchSettings
from services.games.registry import get_game
from tests.unit.bots.sampling_kit import Decision, decisions

CASES = {
    "crashland": (1, {}),
    "drillit": (3, {"difficulty": "medium", "distance": "medium"}),
    "imperial_miners": (2, {}),
    "dungeon_drop": (2, {}),
}


def _settings(game: str) -> SearchSettings:
    base = settings_for(game, "medium")
    assert base is not None
    # a fixed number of rounds: a time budget's would vary with the machine's load
    return SearchSettings(**{**base.__dict__, "budget": Budget(iterations=2), "max_candidates": 4})


#: decisions searched per game (a Dungeon Drop playout simulates its flicks: ~80 ms)
DECISIONS = {"dungeon_drop": 1}


def _contested(game: str, seats: int, options: dict[str, str]) -> list[Decision]:
    found = decisions(game, seats, 3, options)
    contested = [d for d in found if len(d.legal) > 1][:: max(1, len(found) // 12)]
    return contested[: DECISIONS.get(game, 3)]


def _hidden_twin(game: str, decision: Decision) -> Any:
    """A state the seat cannot tell from ``decision.state`` that differs from it."""
    engine = get_game(game)
    view = engine.view(decision.state, decision.player)
    rng = random.Random(11)
    for _ in range(20):
        twin = sampler_for(game)(view, decision.player, decision.legal, rng).state
        if twin != decision.state:
            assert engine.view(twin, decision.player) == view
            return twin
    raise AssertionError("the sampler drew the real state 20 times: nothing is hidden")


@pytest.mark.parametrize("game", sorted(CASES))
def test_same_seed_same_choice_whatever_the_hidden_part(game: str) -> None:
    seats, options = CASES[game]
    engine = get_game(game)
    for decision in _contested(game, seats, options):
        twin = _hidden_twin(game, decision)
        picks = []
        for state in (decision.state, twin):
            bot = Search(engine, sampler_for(game), _settings(game), seed=42)
            picks.append(
                (
                    bot(engine.view(state, decision.player), decision.player, decision.legal),
                    [(c.action, c.rounds, c.total) for c in bot.last_candidates],
                )
            )
        assert picks[0] == picks[1]
        assert picks[0][0] in decision.legal or any(
            getattr(e, "admits", lambda a: False)(picks[0][0]) for e in decision.legal
        )


@pytest.mark.parametrize("game", sorted(CASES))
def test_rounds_find_every_sampled_state_consistent(game: str) -> None:
    """No round is lost to a determinization the engine refuses."""
    seats, options = CASES[game]
    engine = get_game(game)
    for decision in _contested(game, seats, options):
        bot = Search(engine, sampler_for(game), _settings(game), seed=1)
        bot(engine.view(decision.state, decision.player), decision.player, decision.legal)
        assert bot.last_inconsistent == 0
        assert bot.last_rounds > 0


def test_a_secret_choice_already_made_by_another_seat_changes_nothing() -> None:
    """Imperial Miners' simultaneous choice: when the other seat has chosen its card in
    secret, states with another card chosen there give the same pick."""
    engine = get_game("imperial_miners")
    found = [
        d
        for seed in range(4)
        for d in decisions("imperial_miners", 3, seed)
        if d.state.phase.value == "choose" and len(d.legal) > 1 and d.state.chosen
    ][:3]
    assert found, "no decision made after the other seat had chosen"
    for decision in found:
        view = engine.view(decision.state, decision.player)
        rng = random.Random(3)
        twins = [
            sampler_for("imperial_miners")(view, decision.player, decision.legal, rng).state
            for _ in range(10)
        ]
        other_choices = {
            tuple(sorted((p, c) for p, c in t.chosen.items() if p != decision.player))
            for t in twins
        }
        assert len(other_choices) > 1  # the secret card does vary among the samples
        picks = set()
        for state in (decision.state, *twins[:2]):
            bot = Search(engine, sampler_for("imperial_miners"), _settings("imperial_miners"), 9)
            picks.add(bot(engine.view(state, decision.player), decision.player, decision.legal))
        assert len(picks) == 1
