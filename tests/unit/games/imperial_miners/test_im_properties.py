"""Whole matches from many seeds with the random and greedy bots, 1 to 5 seats: they end
after 10 rounds, keep the invariants, fold back to the same state, round-trip through the
codec, and never show a seat another seat's hand or any face-down card."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.games import codec
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.imperial_miners import GAME
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import occupied_above
from services.games.imperial_miners.state import ImperialMinersState, Stage
from services.games.imperial_miners.view import ImperialMinersView
from services.games.playout import Policy, play, random_policy, seeds_for
from tests.unit.games.imperial_miners.im_given import greedy_policy

CASES = [(seed, 1 + seed % 5, "random" if seed % 2 else "greedy") for seed in range(10)]


def policies(bot: str, seed: int, players: tuple[str, ...]) -> dict[str, Policy]:
    make = random_policy if bot == "random" else greedy_policy
    return {p: make(seed * 7 + i) for i, p in enumerate(players)}


def seats(n: int) -> tuple[str, ...]:
    return tuple(f"p{i + 1}" for i in range(n))


def check_invariants(s: ImperialMinersState) -> None:
    assert all(n >= 0 for n in s.coins.values())
    if "events" in s.shuffled:  # a 10-card Event deck, one card a round
        assert s.piles["events"] == CONTENT.event_deck - s.events_revealed >= 0
        assert s.events_revealed == s.round - (s.event is None and s.round > 0)
    assert all(0 <= n <= 12 for n in s.progress.values())
    for level in (1, 2, 3):
        deck = f"level_{level}"
        held = [c for h in s.hands.values() for c in h if CONTENT.cards[c].level == level]
        held += [p.card for m in s.mines.values() for p in m if p.level == level]
        held += [
            c.card
            for c in s.chains.values()
            if c.stage == Stage.PLACE and c.card and CONTENT.cards[c.card].level == level
        ]
        chosen = [
            c
            for p, c in s.chosen.items()
            if not s.revealed and CONTENT.cards[c].level == level and p in s.forced
        ]
        total = s.piles.get(deck, len(CONTENT.deck(level))) + len(s.discards.get(deck, ()))
        assert total + len(held) + len(chosen) == len(CONTENT.deck(level)), deck
    for mine in s.mines.values():
        assert len({(p.level, p.column) for p in mine}) == len(mine)
        for p in mine:
            assert 0 <= p.machinery <= CONTENT.machinery_cap
            assert p.level == CONTENT.cards[p.card].level
            if p.level > 1:
                assert occupied_above(mine, p.level, p.column)


def visible_ids(view: ImperialMinersView) -> set[str]:
    text = json.dumps(codec.to_data(view))
    return {c for c in CONTENT.cards if f'"{c}"' in text}


def check_views(s: ImperialMinersState) -> None:
    public = {p.card for m in s.mines.values() for p in m}
    if s.revealed:
        public |= set(s.chosen.values())
    public |= {c for p, c in s.chosen.items() if p in s.forced}  # drawn face up
    for viewer in (*s.players, None):
        own = set(s.hands.get(viewer, ())) if viewer else set()
        if viewer in s.chosen:
            own.add(s.chosen[viewer])
        assert visible_ids(GAME.view(s, viewer)) <= public | own, viewer


def played(seed: int, n: int, bot: str, watch: bool) -> tuple[list[Any], ImperialMinersState]:
    players = seats(n)
    chooser = policies(bot, seed, players)
    chance = SeededChance(f"prop-{seed}", *seeds_for(seed))
    events: list[Any] = list(GAME.setup(players, {}))
    state = GAME.fold(events)
    while not isinstance(step := GAME.next_step(state), Finished):
        if isinstance(step, AwaitingChance):
            new = GAME.resolve(state, chance.resolve(step.request))
        else:
            assert isinstance(step, AwaitingPlayers) and step.players
            p = step.players[-1 if seed % 3 else 0]  # any awaited seat may act
            new = GAME.decide(state, p, chooser[p](state, p, GAME.legal_actions(state, p)))
        state = GAME.fold(new, state)
        events += new
        check_invariants(state)
        if watch:
            check_views(state)
            assert GAME.render(GAME.view(state, state.players[0]))
    return events, state


def every_chain_resolved_a_surface_effect(events: list[Any]) -> bool:
    """Mine phase 3c: every chain that reached the Surface board resolved one of its
    effects before the player's Mine phase ended."""
    reached: set[str] = set()
    finished = 0
    for e in events:
        if isinstance(e, ev.ChainClimbed) and e.level == 0:
            reached.add(e.player)
        elif isinstance(e, ev.EffectResolved) and e.source == "surface":
            reached.discard(e.player)
        elif isinstance(e, ev.ChainFinished):
            assert e.player not in reached, e
            finished += 1
    return finished > 0


@pytest.mark.parametrize("seed, n, bot", CASES)
def test_matches_end_after_ten_rounds_and_refold(seed: int, n: int, bot: str) -> None:
    events, state = played(seed, n, bot, watch=seed < 4)
    assert sum(isinstance(e, ev.EventRevealed) for e in events) == CONTENT.rounds
    assert sum(isinstance(e, ev.RoundEnded) for e in events) == CONTENT.rounds
    assert state.piles["events"] == 0  # the 10-card Event deck, drawn to the last card
    assert isinstance(events[-1], ev.MatchEnded)
    assert every_chain_resolved_a_surface_effect(events)
    assert GAME.fold(events) == state
    stepped = GAME.initial_state()
    for event in events:  # a replay shows every event, between one command's events too
        stepped = GAME.evolve(stepped, event)
        assert GAME.next_step(stepped) is not None
        assert GAME.view(stepped, stepped.players[0]) is not None
    decoded = [codec.from_data(type(e), json.loads(json.dumps(codec.to_data(e)))) for e in events]
    assert decoded == events
    outcome = GAME.outcome(state)
    assert outcome is not None and set(outcome.results) == set(state.players)


def test_the_platform_playout_loop_finishes_every_seat_count() -> None:
    for n in range(1, 6):
        players = seats(n)
        result = play(GAME, players, {"first_game": "true"}, policies("greedy", n, players), n)
        assert result.state.round == CONTENT.rounds
        assert set(result.outcome.scores) == set(players)
