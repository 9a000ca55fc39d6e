"""Phase 1, movement: orthogonal steps, two free cards, then 1 oxygen or battery each."""

from __future__ import annotations

import pytest

from services.games.contract import AwaitingChance, DrawCards, MalformedAction
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import EndMovement, EndTurn, Move
from services.games.crashland.model import Direction, Payment, Phase, Position
from tests.unit.games.crashland.crashland_given import (
    SHIP,
    at,
    card_at,
    given,
    levels,
    phase,
    refused,
    when,
)

N, E, S, W = Direction.NORTH, Direction.EAST, Direction.SOUTH, Direction.WEST
FREE, OXYGEN, BATTERY = Payment.FREE, Payment.OXYGEN, Payment.BATTERY


def walk(*steps: tuple[Direction, Payment], before: tuple[object, ...] = ()) -> list[object]:
    """``before`` and then the events of walking ``steps``."""
    state = given(*before)
    out: list[object] = [*before]
    for direction, pay in steps:
        new = when(state, Move(direction, pay))
        state = GAME.fold(new, state)
        out += new
    return out


def test_movement_first_two_cards_are_free() -> None:
    state = given()
    assert when(state, Move(N, FREE)) == [
        ev.AstronautMoved(SHIP, Position(1, 2), N, FREE, 9, 9),
        ev.CardRevealed(Position(1, 2), card_at(Position(1, 2))),
    ]
    second = given(*walk((N, FREE)))
    assert when(second, Move(N, FREE))[0] == ev.AstronautMoved(
        Position(1, 2), Position(0, 2), N, FREE, 9, 9
    )


def test_movement_each_further_card_costs_one_oxygen_if_player_chooses_oxygen() -> None:
    state = given(*walk((W, FREE), (W, FREE)))
    assert when(state, Move(N, OXYGEN))[0] == ev.AstronautMoved(
        Position(2, 0), Position(1, 0), N, OXYGEN, 8, 9
    )


def test_movement_each_further_card_costs_one_battery_if_player_chooses_battery() -> None:
    state = given(*walk((W, FREE), (W, FREE), (N, OXYGEN)))
    assert when(state, Move(N, BATTERY))[0] == ev.AstronautMoved(
        Position(1, 0), Position(0, 0), N, BATTERY, 8, 8
    )


def test_movement_free_card_cannot_be_paid_for() -> None:
    refused(given(), Move(N, OXYGEN), "MOVE_IS_FREE")


def test_movement_third_card_is_not_free() -> None:
    refused(given(*walk((N, FREE), (N, FREE))), Move(S, FREE), "MUST_PAY")


def test_movement_cannot_pay_from_a_system_at_zero() -> None:
    state = given(*walk((N, FREE), (N, FREE), before=(*levels(0, 4),)))
    refused(state, Move(S, OXYGEN), "SYSTEM_EMPTY")
    assert when(state, Move(S, BATTERY))[0].battery == 3


def test_movement_may_bring_a_system_to_zero() -> None:
    state = given(*walk((N, FREE), (N, FREE), before=(*levels(1, 9),)))
    assert when(state, Move(S, OXYGEN))[0].oxygen == 0


def test_movement_off_the_grid_is_refused() -> None:
    refused(given(*at(Position(0, 0))), Move(N, FREE), "OFF_GRID")
    refused(given(*at(Position(4, 5))), Move(E, FREE), "OFF_GRID")


@pytest.mark.parametrize("direction", ["northeast", "up-left", "diagonal"])
def test_movement_never_diagonal(direction: str) -> None:
    with pytest.raises(MalformedAction) as caught:
        when(given(), Move(direction, FREE))  # type: ignore[arg-type]
    assert caught.value.code == "NOT_ORTHOGONAL"


def test_movement_direction_may_change_while_moving() -> None:
    events = walk((W, FREE), (N, FREE), (E, OXYGEN))
    moves = [e for e in events if isinstance(e, ev.AstronautMoved)]
    assert [m.destination for m in moves] == [Position(2, 1), Position(1, 1), Position(1, 2)]


def test_movement_onto_a_face_down_card_turns_it_over() -> None:
    events = when(given(), Move(E, FREE))
    assert ev.CardRevealed(Position(2, 3), "map-plain-11") in events


def test_movement_onto_an_explored_card_turns_nothing_over() -> None:
    state = given(*walk((E, FREE)))
    events = when(state, Move(W, FREE))
    assert not any(isinstance(e, ev.CardRevealed) for e in events)


def test_movement_must_move_before_ending_movement() -> None:
    refused(given(), EndMovement(), "MUST_MOVE")


def test_movement_ends_into_phase_two_which_draws_three_cards() -> None:
    state = given(*walk((N, FREE)))
    events = when(state, EndMovement())
    assert events == [ev.MovementEnded(1), ev.PhaseBegan(Phase.EVENTS, 1)]
    assert GAME.next_step(GAME.fold(events, state)) == AwaitingChance(
        DrawCards("events", 3, "events")
    )


def test_movement_free_cards_start_again_each_turn() -> None:
    state = given(*walk((N, FREE), (N, FREE)), phase(Phase.EVENTS), phase(Phase.SYSTEMS_CHECK))
    state = GAME.fold(when(state, EndTurn()), state)
    assert when(state, Move(S, FREE))[0] == ev.AstronautMoved(
        Position(0, 2), Position(1, 2), S, FREE, 9, 9
    )


def test_movement_only_in_phase_one() -> None:
    refused(given(phase(Phase.SYSTEMS_CHECK)), Move(N, FREE), "WRONG_PHASE")
    refused(given(phase(Phase.SYSTEMS_CHECK)), EndMovement(), "WRONG_PHASE")


def test_movement_refused_while_cards_are_being_drawn() -> None:
    state = given(*walk((N, FREE)), ev.MovementEnded(1), phase(Phase.EVENTS))
    refused(state, Move(N, FREE), "AWAITING_CHANCE")


def test_movement_unknown_payment_is_malformed() -> None:
    state = given(*walk((N, FREE), (N, FREE)))
    with pytest.raises(MalformedAction) as caught:
        when(state, Move(S, "fuel"))  # type: ignore[arg-type]
    assert caught.value.code == "UNKNOWN_PAYMENT"


def test_unknown_action_is_malformed() -> None:
    with pytest.raises(MalformedAction) as caught:
        when(given(), "fly home")
    assert caught.value.code == "UNKNOWN_ACTION"


def test_legal_actions_at_the_start_are_the_four_free_steps() -> None:
    assert set(GAME.legal_actions(given(), "ann")) == {Move(d, FREE) for d in Direction}
    assert GAME.legal_actions(given(), "bob") == ()


def test_legal_actions_after_two_cards_offer_both_payments_and_ending() -> None:
    state = given(*walk((N, FREE), (N, FREE), before=(*levels(0, 9),)))
    assert set(GAME.legal_actions(state, "ann")) == {
        Move(S, BATTERY),
        Move(E, BATTERY),
        Move(W, BATTERY),
        EndMovement(),
    }
