"""Spending pairs of equipment in phases 1 and 3: Satellite Uplink, Dome Shelter,
Jetpack, Solar Recharge."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    DrawCards,
    MalformedAction,
)
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import (
    ArrangeUplink,
    EndMovement,
    Move,
    SpendDomeShelter,
    SpendJetpack,
    SpendSatelliteUplink,
    SpendSolarRecharge,
)
from services.games.crashland.model import Boost, Direction, Equipment, Payment, Phase, Position
from services.games.crashland.state import CrashlandState
from tests.unit.games.crashland.crashland_given import (
    PLAYER,
    SHIP,
    at,
    given,
    hand,
    levels,
    phase,
    refused,
    revealed,
    when,
)

P = Position
SOLAR = ("eq-solar-recharge-1", "eq-solar-recharge-2")
DOME = ("eq-dome-shelter-1", "eq-dome-shelter-2")
JETPACK = ("eq-jetpack-1", "eq-jetpack-2")
UPLINK = ("eq-satellite-uplink-1", "eq-satellite-uplink-2")
DOME_CARD = P(1, 1)


def then(state: CrashlandState, events: list[Any]) -> CrashlandState:
    return GAME.fold(events, state)


# --- when pairs may be spent --------------------------------------------------------------


def test_pair_spent_in_phase_one_solar_recharge_two_battery() -> None:
    state = given(*levels(9, 5), hand(*SOLAR))
    assert when(state, SpendSolarRecharge()) == [
        ev.PairSpent(Equipment.SOLAR_RECHARGE, SOLAR),
        ev.SolarRecharged(7),
    ]


def test_pair_spent_in_phase_three() -> None:
    state = given(*levels(9, 5), hand(*SOLAR), phase(Phase.SYSTEMS_CHECK))
    assert when(state, SpendSolarRecharge())[-1] == ev.SolarRecharged(7)


def test_pair_spent_cards_go_to_the_discard_pile() -> None:
    state = given(*levels(9, 5), hand(*SOLAR, "eq-jetpack-1"))
    state = then(state, when(state, SpendSolarRecharge()))
    assert state.hand == ("eq-jetpack-1",)
    assert state.discard[-2:] == SOLAR


def test_pair_solar_recharge_stops_at_nine() -> None:
    state = given(*levels(9, 8), hand(*SOLAR))
    assert when(state, SpendSolarRecharge())[-1] == ev.SolarRecharged(9)


def test_pair_you_do_not_hold_cannot_be_spent() -> None:
    refused(given(), SpendSolarRecharge(), "NO_PAIR")
    refused(given(hand("eq-solar-recharge-1")), SpendSolarRecharge(), "NO_PAIR")
    refused(given(hand("eq-solar-recharge-1", "eq-jetpack-1")), SpendSolarRecharge(), "NO_PAIR")


# --- Dome Shelter -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("boost", "oxygen", "battery"),
    [(Boost.OXYGEN, 7, 4), (Boost.BATTERY, 4, 7), (Boost.BOTH, 6, 6)],
)
def test_dome_shelter_three_to_one_system_or_two_to_both(
    boost: Boost, oxygen: int, battery: int
) -> None:
    state = given(*levels(4, 4), hand(*DOME), *at(DOME_CARD))
    assert when(state, SpendDomeShelter(boost)) == [
        ev.PairSpent(Equipment.DOME_SHELTER, DOME),
        ev.ShelterEntered(boost, oxygen, battery),
    ]


def test_dome_shelter_stops_at_nine() -> None:
    state = given(*levels(8, 8), hand(*DOME), *at(DOME_CARD))
    assert when(state, SpendDomeShelter(Boost.BOTH))[-1] == ev.ShelterEntered(Boost.BOTH, 9, 9)


def test_dome_shelter_only_on_a_dome_card() -> None:
    refused(given(hand(*DOME)), SpendDomeShelter(Boost.OXYGEN), "NOT_ON_DOME")


def test_dome_shelter_unknown_choice_is_malformed() -> None:
    state = given(hand(*DOME), *at(DOME_CARD))
    with pytest.raises(MalformedAction) as caught:
        when(state, SpendDomeShelter("everything"))  # type: ignore[arg-type]
    assert caught.value.code == "UNKNOWN_BOOST"


# --- Jetpack ------------------------------------------------------------------------------


def test_jetpack_to_any_explored_card_for_one_battery() -> None:
    state = given(hand(*JETPACK), *revealed(P(4, 5)))
    assert when(state, SpendJetpack(P(4, 5))) == [
        ev.PairSpent(Equipment.JETPACK, JETPACK),
        ev.JetpackFlown(SHIP, P(4, 5), 8),
    ]


def test_jetpack_not_to_an_unexplored_card() -> None:
    refused(given(hand(*JETPACK)), SpendJetpack(P(4, 5)), "UNEXPLORED_CARD")


def test_jetpack_not_off_the_map() -> None:
    with pytest.raises(MalformedAction) as caught:
        when(given(hand(*JETPACK)), SpendJetpack(P(5, 0)))
    assert caught.value.code == "NO_SUCH_CARD"


def test_jetpack_not_to_the_card_you_stand_on() -> None:
    refused(given(hand(*JETPACK)), SpendJetpack(SHIP), "ALREADY_THERE")


def test_jetpack_needs_a_battery_level_to_fly() -> None:
    state = given(*levels(9, 0), hand(*JETPACK), *revealed(P(4, 5)))
    refused(state, SpendJetpack(P(4, 5)), "SYSTEM_EMPTY")


def test_jetpack_flight_counts_as_moving_but_not_as_free_cards() -> None:
    state = given(hand(*JETPACK), *revealed(P(4, 5)))
    state = then(state, when(state, SpendJetpack(P(4, 5))))
    assert when(state, EndMovement()) == [ev.MovementEnded(0), ev.PhaseBegan(Phase.EVENTS, 1)]
    assert when(state, Move(Direction.NORTH, Payment.FREE))[0] == ev.AstronautMoved(
        P(4, 5), P(3, 5), Direction.NORTH, Payment.FREE, 9, 8
    )


def test_jetpack_landing_on_a_located_tank_collects_it() -> None:
    tank_2 = P(1, 1)
    state = given(
        hand(*JETPACK), *revealed(P(3, 1), P(1, 4), tank_2), ev.FuelTankLocated(2, tank_2)
    )
    assert when(state, SpendJetpack(tank_2))[-1] == ev.FuelTankCollected(2, tank_2)


# --- Satellite Uplink ---------------------------------------------------------------------

SIX = ("event-01", "event-09", "eq-jetpack-1", "event-04", "event-11", "eq-dome-shelter-3")


def uplinked(*before: Any) -> CrashlandState:
    """The uplink has shown SIX (in that order) and waits for the player's order."""
    state = given(*before, hand(*UPLINK))
    state = then(state, when(state, SpendSatelliteUplink()))
    return then(state, GAME.resolve(state, CardsDrawn("events", SIX)))


def test_uplink_looks_at_the_next_six_cards() -> None:
    state = given(hand(*UPLINK))
    spent = when(state, SpendSatelliteUplink())
    assert spent == [
        ev.PairSpent(Equipment.SATELLITE_UPLINK, UPLINK),
        ev.UplinkActivated(6, 6),
    ]
    state = then(state, spent)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("events", 6, "uplink"))
    assert GAME.resolve(state, CardsDrawn("events", SIX)) == [ev.UplinkCardsDrawn(SIX)]


def test_uplink_fewer_than_six_when_the_draw_pile_is_smaller() -> None:
    state = given(ev.EventDeckShuffled(2, reshuffle=True), hand(*UPLINK))
    assert when(state, SpendSatelliteUplink())[-1] == ev.UplinkActivated(2, 2)


def test_uplink_player_must_put_the_cards_back_before_anything_else() -> None:
    state = uplinked()
    assert GAME.next_step(state) == AwaitingPlayers((PLAYER,), "arrange_uplink")
    refused(state, Move(Direction.NORTH, Payment.FREE), "ARRANGE_UPLINK_FIRST")


def test_uplink_order_must_be_exactly_the_seen_cards() -> None:
    state = uplinked()
    refused(state, ArrangeUplink(SIX[:5]), "NOT_THE_SEEN_CARDS")
    refused(state, ArrangeUplink((*SIX[:5], "event-02")), "NOT_THE_SEEN_CARDS")


def test_uplink_arrange_refused_without_an_uplink() -> None:
    refused(given(), ArrangeUplink(SIX), "NO_UPLINK")


def test_uplink_chosen_order_is_drawn_next_without_the_decks_service() -> None:
    state = uplinked()
    order = tuple(reversed(SIX))
    assert when(state, ArrangeUplink(order)) == [ev.UplinkArranged(order)]
    state = then(state, when(state, ArrangeUplink(order)))
    state = then(state, when(state, Move(Direction.NORTH, Payment.FREE)))
    events = when(state, EndMovement())
    assert events[2] == ev.EventCardsDrawn(order[:3], from_uplink=True)
    assert events[3].card == "event-11"
    state = then(state, events)
    assert state.known_top == order[3:]
    # drawn without a chance node: the phase goes straight on to the hand check
    assert GAME.next_step(state) == AwaitingPlayers((PLAYER,), "events")
    assert state.checking_hand


@pytest.mark.parametrize(
    ("order", "applied"),
    [
        (("event-01", "eq-jetpack-1", "event-04", "event-09", "event-11", "eq-dome-shelter-3"), 4),
        (("event-09", "event-11", "event-01", "event-04", "eq-jetpack-1", "eq-dome-shelter-3"), 11),
    ],
)
def test_uplink_reordering_decides_which_event_applies(
    order: tuple[str, ...], applied: int
) -> None:
    state = uplinked()
    state = then(state, when(state, ArrangeUplink(order)))
    state = then(state, when(state, Move(Direction.NORTH, Payment.FREE)))
    applied_events = [e for e in when(state, EndMovement()) if isinstance(e, ev.EventApplied)]
    assert [e.number for e in applied_events] == [applied]


def test_uplink_known_cards_first_then_the_draw_pile_then_a_reshuffle() -> None:
    state = given(
        ev.EventDeckShuffled(2, reshuffle=True),
        ev.EventsDiscarded(("event-03", "event-06")),
        hand(*UPLINK),
    )
    state = then(state, when(state, SpendSatelliteUplink()))
    state = then(state, GAME.resolve(state, CardsDrawn("events", ("event-01", "event-02"))))
    state = then(state, when(state, ArrangeUplink(("event-02", "event-01"))))
    state = then(state, when(state, Move(Direction.NORTH, Payment.FREE)))
    events = when(state, EndMovement())
    assert events[-1] == ev.EventCardsDrawn(("event-02", "event-01"), from_uplink=True)
    state = then(state, events)
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance)
    assert step.request.purpose == "reshuffle"
    assert sorted(step.request.cards) == sorted(("event-03", "event-06", *UPLINK))  # type: ignore[union-attr]


def test_uplink_already_known_cards_need_no_draw() -> None:
    state = given(
        ev.UplinkActivated(6, 6),
        ev.UplinkCardsDrawn(SIX),
        ev.UplinkArranged(SIX),
        hand(*UPLINK),
    )
    state = then(state, when(state, SpendSatelliteUplink()))
    assert (state.uplink_count, state.uplink_to_draw) == (6, 0)
    assert GAME.next_step(state) == AwaitingPlayers((PLAYER,), "arrange_uplink")
