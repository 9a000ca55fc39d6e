"""Beacon pairs locate the fuel tanks; moving onto a located tank's card collects it."""

from __future__ import annotations

from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import Move
from services.games.crashland.model import Direction, Payment, Position
from tests.unit.games.crashland.crashland_given import SHIP, at, given, revealed, when

P = Position
FREE = Payment.FREE
TANK_1 = P(2, 3)


def test_beacon_pair_rulebook_example_up_down_and_left_right_point_at_x() -> None:
    # beacon 1 up/down at (0,3) gives column 3; beacon 1 left/right at (2,0) gives row 2
    state = given(*at(P(0, 3)), *at(P(2, 1)))
    assert when(state, Move(Direction.WEST, FREE)) == [
        ev.AstronautMoved(P(2, 1), P(2, 0), Direction.WEST, FREE, 9, 9),
        ev.CardRevealed(P(2, 0), "map-beacon-1-horizontal"),
        ev.FuelTankLocated(1, TANK_1),
    ]


def test_beacon_pair_found_in_either_order() -> None:
    state = given(*at(P(2, 0)), *at(P(1, 3)))
    events = when(state, Move(Direction.NORTH, FREE))
    assert events[-1] == ev.FuelTankLocated(1, TANK_1)


def test_beacon_single_beacon_locates_nothing() -> None:
    state = given(*at(P(2, 1)))
    events = when(state, Move(Direction.WEST, FREE))
    assert not any(isinstance(e, ev.FuelTankLocated) for e in events)


def test_beacon_numbers_must_match() -> None:
    # beacon 1 up/down and beacon 2 left/right do not make a pair
    state = given(*at(P(0, 3)), *at(P(1, 5)))
    events = when(state, Move(Direction.WEST, FREE))
    assert ev.CardRevealed(P(1, 4), "map-beacon-2-horizontal") in events
    assert not any(isinstance(e, ev.FuelTankLocated) for e in events)


def test_tank_collected_by_moving_onto_the_located_card() -> None:
    state = given(*revealed(P(0, 3), P(2, 0)), ev.FuelTankLocated(1, TANK_1))
    assert when(state, Move(Direction.EAST, FREE)) == [
        ev.AstronautMoved(SHIP, TANK_1, Direction.EAST, FREE, 9, 9),
        ev.CardRevealed(TANK_1, "map-plain-11"),
        ev.FuelTankCollected(1, TANK_1),
    ]


def test_tank_collected_when_passing_through_and_only_once() -> None:
    state = given(*revealed(P(0, 3), P(2, 0)), ev.FuelTankLocated(1, TANK_1))
    events: list[object] = []
    for step, direction in enumerate((Direction.EAST, Direction.EAST, Direction.WEST)):
        pay = FREE if step < 2 else Payment.OXYGEN
        new = when(state, Move(direction, pay))
        state = GAME.fold(new, state)
        events += [e for e in new if isinstance(e, ev.AstronautMoved | ev.FuelTankCollected)]
    collected = [e for e in events if isinstance(e, ev.FuelTankCollected)]
    assert collected == [ev.FuelTankCollected(1, TANK_1)]
    assert state.collected == (1,)


def test_tank_collected_when_standing_on_its_card_as_it_is_located() -> None:
    # beacon 3 up/down at (3,3); its left/right twin at (4,3) is where tank 3 lies
    state = given(*at(P(3, 3)), *at(P(4, 2)))
    assert when(state, Move(Direction.EAST, FREE)) == [
        ev.AstronautMoved(P(4, 2), P(4, 3), Direction.EAST, FREE, 9, 9),
        ev.CardRevealed(P(4, 3), "map-beacon-3-horizontal"),
        ev.FuelTankLocated(3, P(4, 3)),
        ev.FuelTankCollected(3, P(4, 3)),
    ]


def test_tank_not_collected_on_its_card_before_it_is_located() -> None:
    events = when(given(), Move(Direction.EAST, FREE))
    assert not any(isinstance(e, ev.FuelTankCollected) for e in events)
    # locating it later from elsewhere does not collect it either
    state = given(*at(P(0, 3)), *at(P(2, 1)))
    events = when(state, Move(Direction.WEST, FREE))
    assert not any(isinstance(e, ev.FuelTankCollected) for e in events)
