"""Setting the game up: map grid, spaceship, suit at 9, event deck."""

from __future__ import annotations

import pytest

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    DeckShuffled,
    DrawCards,
    MalformedAction,
    RuleViolation,
    ShuffleDeck,
)
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.model import Phase, Position
from tests.unit.games.crashland.crashland_given import GRID, OPENING, PLAYER, SHIP


def test_setup_is_solitaire_one_player_only() -> None:
    with pytest.raises(MalformedAction) as caught:
        GAME.setup(["ann", "bob"], {})
    assert caught.value.code == "PLAYERS"


def test_setup_refuses_unknown_options() -> None:
    with pytest.raises(MalformedAction) as caught:
        GAME.setup([PLAYER], {"difficulty": "easy"})
    assert caught.value.code == "UNKNOWN_OPTION"


def test_setup_shuffle_map_deal_face_down_turn_over_spaceship_then_shuffle_events() -> None:
    state = GAME.fold(GAME.setup([PLAYER], {}))
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and isinstance(step.request, ShuffleDeck)
    assert step.request.deck == "map" and len(step.request.cards) == 30
    new = GAME.resolve(state, DeckShuffled("map", 30))
    state = GAME.fold(new, state)

    assert GAME.next_step(state) == AwaitingChance(DrawCards("map", 30, "deal map"))
    dealt = GAME.resolve(state, CardsDrawn("map", GRID))
    assert dealt == [
        ev.MapDealt(GRID),
        ev.CardRevealed(SHIP, "map-spaceship"),
        ev.AstronautPlaced(SHIP),
    ]
    state = GAME.fold(dealt, state)

    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and isinstance(step.request, ShuffleDeck)
    assert step.request.deck == "events" and len(step.request.cards) == 21
    assert GAME.resolve(state, DeckShuffled("events", 21)) == [
        ev.EventDeckShuffled(21, reshuffle=False),
        ev.PhaseBegan(Phase.MOVEMENT, 1),
    ]
    assert GAME.fold(OPENING) == GAME.fold(GAME.resolve(state, DeckShuffled("events", 21)), state)


def test_setup_grid_is_five_rows_of_six_dealt_row_by_row() -> None:
    state = GAME.fold(OPENING)
    assert state.card_at(Position(0, 5)) == GRID[5]
    assert state.card_at(Position(1, 0)) == GRID[6]
    assert state.card_at(Position(4, 5)) == GRID[29]
    assert state.position_of("map-spaceship") == Position(2, 2)


def test_setup_only_the_spaceship_card_is_face_up() -> None:
    assert GAME.fold(OPENING).explored == frozenset({SHIP})


def test_setup_suit_systems_at_maximum_nine() -> None:
    state = GAME.fold(OPENING)
    assert (state.oxygen, state.battery) == (9, 9)


def test_setup_first_turn_awaits_movement() -> None:
    assert GAME.next_step(GAME.fold(OPENING)) == AwaitingPlayers((PLAYER,), "movement")


def test_setup_resolve_refuses_an_outcome_for_another_request() -> None:
    state = GAME.fold(GAME.setup([PLAYER], {}))
    with pytest.raises(RuleViolation) as caught:
        GAME.resolve(state, CardsDrawn("map", GRID))
    assert caught.value.code == "UNEXPECTED_OUTCOME"
