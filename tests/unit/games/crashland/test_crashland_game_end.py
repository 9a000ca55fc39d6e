"""Phase 3 systems check, the loss, and the win: three tanks and back at the ship in phase 1."""

from __future__ import annotations

from typing import Any

from services.games.contract import Finished
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import EndTurn, Move, SpendJetpack, SpendSolarRecharge
from services.games.crashland.model import Direction, Payment, Phase, Position
from tests.unit.games.crashland.crashland_given import (
    PLAYER,
    SHIP,
    at,
    given,
    hand,
    levels,
    phase,
    refused,
    when,
)

P = Position
TANKS = {1: P(2, 3), 2: P(1, 1), 3: P(4, 3)}
JETPACK = ("eq-jetpack-1", "eq-jetpack-2")
SOLAR = ("eq-solar-recharge-1", "eq-solar-recharge-2")


def tanks(*numbers: int) -> list[Any]:
    out: list[Any] = []
    for n in numbers:
        out += [ev.FuelTankLocated(n, TANKS[n]), ev.FuelTankCollected(n, TANKS[n])]
    return out


# --- systems check ------------------------------------------------------------------------


def test_systems_check_passes_and_the_next_turn_begins_with_movement() -> None:
    state = given(*levels(1, 1), phase(Phase.SYSTEMS_CHECK))
    assert when(state, EndTurn()) == [
        ev.SystemsChecked(1, 1, passed=True),
        ev.PhaseBegan(Phase.MOVEMENT, 2),
    ]


def test_systems_check_oxygen_below_one_loses() -> None:
    state = given(*levels(0, 5), phase(Phase.SYSTEMS_CHECK))
    events = when(state, EndTurn())
    assert events == [
        ev.SystemsChecked(0, 5, passed=False),
        ev.GameLost(1, "systems check failed: out of oxygen"),
    ]
    finished = GAME.next_step(GAME.fold(events, state))
    assert isinstance(finished, Finished)
    assert finished.outcome.results == {PLAYER: "lost"}


def test_systems_check_battery_below_one_loses() -> None:
    state = given(*levels(5, 0), phase(Phase.SYSTEMS_CHECK))
    assert when(state, EndTurn())[-1] == ev.GameLost(
        1, "systems check failed: out of battery power"
    )


def test_systems_check_pairs_may_still_save_the_suit() -> None:
    state = given(*levels(5, 0), hand(*SOLAR), phase(Phase.SYSTEMS_CHECK))
    state = GAME.fold(when(state, SpendSolarRecharge()), state)
    assert when(state, EndTurn())[0] == ev.SystemsChecked(5, 2, passed=True)


def test_systems_check_only_in_phase_three() -> None:
    refused(given(), EndTurn(), "WRONG_PHASE")


def test_game_over_leaves_no_action() -> None:
    # an action after the end is the command handler's to refuse (MATCH_OVER:
    # tests/unit/games/test_handler_refusals.py)
    state = given(*levels(0, 5), phase(Phase.SYSTEMS_CHECK), ev.GameLost(1, "out"))
    assert isinstance(GAME.next_step(state), Finished)
    assert GAME.legal_actions(state, PLAYER) == ()


# --- the win ------------------------------------------------------------------------------


def test_win_three_tanks_and_back_at_the_spaceship_in_phase_one() -> None:
    state = given(*tanks(1, 2, 3), *at(P(2, 3)))
    events = when(state, Move(Direction.WEST, Payment.FREE))
    assert events == [
        ev.AstronautMoved(P(2, 3), SHIP, Direction.WEST, Payment.FREE, 9, 9),
        ev.GameWon(1, "all three fuel tanks aboard: lift-off"),
    ]
    finished = GAME.next_step(GAME.fold(events, state))
    assert isinstance(finished, Finished)
    assert finished.outcome.results == {PLAYER: "won"}


def test_win_not_with_two_tanks() -> None:
    state = given(*tanks(1, 2), *at(P(2, 3)))
    events = when(state, Move(Direction.WEST, Payment.FREE))
    assert not any(isinstance(e, ev.GameWon) for e in events)


def test_win_collecting_the_last_tank_on_the_way_home() -> None:
    state = given(*tanks(2, 3), ev.FuelTankLocated(1, TANKS[1]), *at(P(2, 4)))
    state = GAME.fold(when(state, Move(Direction.WEST, Payment.FREE)), state)
    assert state.collected == (2, 3, 1)
    assert isinstance(when(state, Move(Direction.WEST, Payment.FREE))[-1], ev.GameWon)


def test_win_not_with_an_empty_system_on_arrival() -> None:
    state = given(*levels(0, 9), *tanks(1, 2, 3), *at(P(2, 3)))
    events = when(state, Move(Direction.WEST, Payment.FREE))
    assert not any(isinstance(e, ev.GameWon) for e in events)


def test_win_by_jetpack_home_during_phase_one() -> None:
    state = given(*tanks(1, 2, 3), hand(*JETPACK), *at(P(4, 3)))
    assert isinstance(when(state, SpendJetpack(SHIP))[-1], ev.GameWon)


def test_win_not_in_phase_three_but_when_phase_one_begins() -> None:
    state = given(*tanks(1, 2, 3), hand(*JETPACK), *at(P(4, 3)), phase(Phase.SYSTEMS_CHECK))
    flight = when(state, SpendJetpack(SHIP))
    assert not any(isinstance(e, ev.GameWon) for e in flight)
    state = GAME.fold(flight, state)
    assert when(state, EndTurn()) == [
        ev.SystemsChecked(9, 8, passed=True),
        ev.PhaseBegan(Phase.MOVEMENT, 2),
        ev.GameWon(2, "all three fuel tanks aboard: lift-off"),
    ]
