"""Whole matches from many seeds: they end, keep the invariants, fold back to the same
state, round-trip through the codec, and never leak hidden information in views."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.games import codec
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.drillit import GAME
from services.games.drillit import events as ev
from services.games.drillit.bots import greedy_policy
from services.games.drillit.content import CONTENT
from services.games.drillit.render import render
from services.games.drillit.state import DrillitState
from services.games.drillit.view import DrillitView
from services.games.playout import Playout, random_policy, seeds_for

PLAYERS = ("p1", "p2", "p3")


def check_invariants(state: DrillitState, goblins: int) -> None:
    """Checked after every decision's or chance outcome's whole batch of events."""
    for room in (0, *CONTENT.rooms):
        assert len(state.occupants(room)) <= CONTENT.room_capacity
    assert all(n >= 0 for n in state.crystals.values())
    assert all(n >= 0 for s in state.radar for n in s.spaces)
    assert sum(sum(s.spaces) for s in state.radar) == goblins
    assert 0 <= state.permanent_damage <= CONTENT.life_track
    assert 0 <= state.temporary_damage <= len(CONTENT.rooms)
    if not state.won and state.end_reason != "life-track-full":
        assert all(0 < n < CONTENT.explosion_fires for n in state.fires.values())
    assert 0 <= state.action_points <= CONTENT.action_points
    assert state.path_pile >= 0


def goblin_delta(event: Any) -> int:
    match event:
        case ev.GoblinsArrived(count=n) | ev.HordeArrived(count=n):
            return n
        case ev.GoblinsDefeated(spaces=spaces):
            return -len(spaces)
        case ev.SectorBombed(goblins=n) | ev.GoblinsReachedCentre(count=n):
            return -n
        case ev.ArmorDestroyed():
            return -1  # the Goblin sacrificed itself
    return 0


def playout(seed: int, bot: str, difficulty: str, distance: str) -> Playout:
    """The playout loop of services.games.playout, checking invariants batch by batch."""
    make = random_policy if bot == "random" else greedy_policy
    policies = {p: make(seed * 7 + i) for i, p in enumerate(PLAYERS)}
    options = {"difficulty": difficulty, "distance": distance}
    chance = SeededChance(f"prop-{seed}", *seeds_for(seed))
    events: list[Any] = []
    state, goblins = GAME.initial_state(), 0

    def apply(batch: list[Any]) -> None:
        nonlocal state, goblins
        for event in batch:
            state = GAME.evolve(state, event)
            goblins += 5 if isinstance(event, ev.MatchSetUp) else goblin_delta(event)
        events.extend(batch)
        check_invariants(state, goblins)

    apply(GAME.setup(PLAYERS, options))
    actions = 0
    while not isinstance(step := GAME.next_step(state), Finished):
        if isinstance(step, AwaitingChance):
            apply(GAME.resolve(state, chance.resolve(step.request)))
            continue
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        legal = GAME.legal_actions(state, player)
        assert legal, f"{player} must act but has no legal action"
        apply(GAME.decide(state, player, policies[player](state, player, legal)))
        actions += 1
        assert actions < 5_000
    return Playout(tuple(events), state, step.outcome, actions)


CASES = [
    (seed, bot, ("easy", "medium", "hard")[seed % 3], ("short", "medium", "long")[seed // 3 % 3])
    for seed in range(30)
    for bot in ("random", "greedy")
]


@pytest.mark.parametrize(("seed", "bot", "difficulty", "distance"), CASES)
def test_random_play_terminates_keeps_invariants_and_folds_back(
    seed: int, bot: str, difficulty: str, distance: str
) -> None:
    result = playout(seed, bot, difficulty, distance)
    assert GAME.fold(result.events) == result.state
    assert result.state.turn <= 19
    encoded = [codec.to_data(e) for e in result.events]
    decoded = [codec.decode_tagged(GAME.event_types, json.loads(json.dumps(e))) for e in encoded]
    assert decoded == list(result.events)
    data = json.loads(json.dumps(codec.to_data(result.state)))
    assert codec.from_data(DrillitState, data) == result.state


def test_views_never_show_the_event_deck_order() -> None:
    result = playout(3, "random", "easy", "short")
    state = GAME.initial_state()
    for event in result.events:
        state = GAME.evolve(state, event)
        if state.event_deck_built and state.current_card is None:
            text = json.dumps(codec.to_data(GAME.view(state, "p1")))
            assert not any(f'"{card}"' in text for card in CONTENT.cards)
    view = GAME.view(result.state, None)
    assert isinstance(view, DrillitView)
    assert codec.from_data(DrillitView, codec.to_data(view)) == view
    text = json.dumps(codec.to_data(view))
    assert "staged" not in text and 'event_deck"' not in text


def test_render_draws_tank_radar_life_track_crystals_and_tunnels() -> None:
    result = playout(5, "greedy", "medium", "medium")
    text = render(GAME.view(result.state, "p1"))
    for heading in ("Life Track", "Crystals", "Tank", "Radar", "Tunnels", "room 5", "sector 5"):
        assert heading in text
    assert "T" in text and "E" in text


def test_statistics_report_turns_damage_goblins_and_crystals() -> None:
    result = playout(4, "greedy", "easy", "short")
    stats = GAME.statistics(result.state)
    assert stats["turns_survived"] == float(result.state.turn)
    assert set(stats) >= {"turns_survived", "damage_taken", "goblins_defeated", "crystals_used"}
    assert all(isinstance(v, float) for v in stats.values())


def test_view_path_pieces_in_hand_are_public_among_the_gnomes() -> None:
    result = playout(2, "random", "easy", "short")
    state = GAME.fold(result.events[:40])
    view = GAME.view(state, "p1")
    pieces = {p.player: p.path_piece.piece if p.path_piece else None for p in view.players}
    assert pieces == {p: state.hands.get(p) for p in PLAYERS}
    assert view.event_deck_size == len(state.event_deck)
