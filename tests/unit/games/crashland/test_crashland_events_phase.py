"""Phase 2: draw three, only the highest-numbered event applies, at the end of the phase
keep at most three equipment cards and discard any you do not wish to keep, reshuffling
the discard pile when the draw pile runs out."""

from __future__ import annotations

from typing import Any

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    DeckShuffled,
    DrawCards,
    ShuffleDeck,
)
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import (
    DiscardEquipment,
    EndTurn,
    KeepHand,
    SpendSolarRecharge,
)
from services.games.crashland.model import Phase, Position, System
from services.games.crashland.state import CrashlandState
from tests.unit.games.crashland.crashland_given import (
    PLAYER,
    at,
    given,
    hand,
    levels,
    phase,
    refused,
    when,
)

SYSTEMS = ev.PhaseBegan(Phase.SYSTEMS_CHECK, 1)
HAND_CHECK = ev.HandCheckBegan()


def drawing(*before: Any) -> CrashlandState:
    """Phase 2 of turn 1, waiting for the draw, after ``before``."""
    return given(*before, *at(Position(1, 2)), ev.MovementEnded(1), phase(Phase.EVENTS))


def drawn(state: CrashlandState, *cards: str) -> list[Any]:
    return GAME.resolve(state, CardsDrawn("events", cards))


def test_events_draw_three_cards() -> None:
    assert GAME.next_step(drawing()) == AwaitingChance(DrawCards("events", 3, "events"))


def test_events_only_the_highest_numbered_event_applies_the_others_are_discarded() -> None:
    cards = ("event-02", "event-07", "eq-jetpack-1")
    assert drawn(drawing(), *cards) == [
        ev.EventCardsDrawn(cards, from_uplink=False),
        ev.EventApplied("event-07", 7, System.BATTERY, 2, 7),
        ev.EventsDiscarded(("event-02", "event-07")),
        ev.EquipmentKept(("eq-jetpack-1",)),
        HAND_CHECK,
    ]


def test_events_loss_lowers_the_shown_system_and_stops_at_zero() -> None:
    state = drawing(*levels(1, 9))
    events = drawn(state, "event-05", "event-01", "event-04")
    assert ev.EventApplied("event-05", 5, System.OXYGEN, 3, 0) in events


def test_events_without_an_event_card_nothing_is_lost() -> None:
    cards = ("eq-jetpack-1", "eq-jetpack-2", "eq-solar-recharge-1")
    assert drawn(drawing(), *cards) == [
        ev.EventCardsDrawn(cards, from_uplink=False),
        ev.EquipmentKept(cards),
        HAND_CHECK,
    ]


def test_events_equipment_is_kept_in_hand_from_one_turn_to_the_next() -> None:
    state = drawing(hand("eq-jetpack-1"))
    state = GAME.fold(drawn(state, "eq-jetpack-2", "event-01", "event-02"), state)
    assert state.hand == ("eq-jetpack-1", "eq-jetpack-2")


def checking(held: tuple[str, ...], *cards: str) -> CrashlandState:
    """The end of phase 2 after drawing ``cards`` while holding ``held``."""
    state = drawing(hand(*held)) if held else drawing()
    return GAME.fold(drawn(state, *cards), state)


def test_events_hand_limit_three_at_the_end_of_the_phase() -> None:
    # given two cards in hand and three more equipment cards drawn
    state = checking(
        ("eq-jetpack-1", "eq-jetpack-2"),
        "eq-solar-recharge-1",
        "eq-solar-recharge-2",
        "eq-dome-shelter-1",
    )
    assert GAME.next_step(state) == AwaitingPlayers((PLAYER,), "events")
    # when keeping five cards, then refused: no more than three
    refused(state, KeepHand(), "OVER_HAND_LIMIT")
    assert KeepHand() not in GAME.legal_actions(state, PLAYER)
    # when discarding two, then the phase waits for the player to keep the three left
    first = when(state, DiscardEquipment("eq-jetpack-1"))
    assert first == [ev.EquipmentDiscarded("eq-jetpack-1")]
    state = GAME.fold(first, state)
    second = when(state, DiscardEquipment("eq-solar-recharge-2"))
    assert second == [ev.EquipmentDiscarded("eq-solar-recharge-2")]
    state = GAME.fold(second, state)
    assert when(state, KeepHand()) == [SYSTEMS]


def test_events_hand_limit_pairs_and_systems_check_wait_for_the_discards() -> None:
    state = checking(
        ("eq-solar-recharge-1", "eq-solar-recharge-2"), "eq-jetpack-1", "eq-jetpack-2", "event-01"
    )
    refused(state, SpendSolarRecharge(), "WRONG_PHASE")
    refused(state, EndTurn(), "WRONG_PHASE")


def test_events_place_any_cards_you_do_not_wish_to_keep_even_under_the_hand_limit() -> None:
    # given one card held and one equipment drawn: two cards, under the limit
    state = checking(("eq-jetpack-1",), "eq-solar-recharge-1", "event-01", "event-02")
    assert state.hand == ("eq-jetpack-1", "eq-solar-recharge-1")
    assert DiscardEquipment("eq-jetpack-1") in GAME.legal_actions(state, PLAYER)
    # when the player discards the old card they do not wish to keep
    events = when(state, DiscardEquipment("eq-jetpack-1"))
    # then it goes to the discard pile, and the phase still waits for the player
    assert events == [ev.EquipmentDiscarded("eq-jetpack-1")]
    state = GAME.fold(events, state)
    assert state.hand == ("eq-solar-recharge-1",)
    assert state.discard[-1] == "eq-jetpack-1"
    assert GAME.next_step(state) == AwaitingPlayers((PLAYER,), "events")


def test_events_keeping_every_card_under_the_hand_limit_ends_the_phase() -> None:
    state = checking(("eq-jetpack-1",), "eq-solar-recharge-1", "event-01", "event-02")
    events = when(state, KeepHand())
    assert events == [SYSTEMS]
    assert GAME.fold(events, state).hand == ("eq-jetpack-1", "eq-solar-recharge-1")


def test_events_discarding_the_last_card_ends_the_phase() -> None:
    state = checking((), "eq-jetpack-1", "event-01", "event-02")
    assert when(state, DiscardEquipment("eq-jetpack-1")) == [
        ev.EquipmentDiscarded("eq-jetpack-1"),
        SYSTEMS,
    ]


def test_events_with_no_equipment_in_hand_the_phase_ends_by_itself() -> None:
    cards = ("event-01", "event-02", "event-03")
    assert drawn(drawing(), *cards)[-1] == SYSTEMS


def test_events_old_cards_may_be_discarded_when_only_events_were_drawn() -> None:
    state = checking(("eq-jetpack-1",), "event-01", "event-02", "event-03")
    assert state.checking_hand
    assert when(state, DiscardEquipment("eq-jetpack-1"))[0] == ev.EquipmentDiscarded("eq-jetpack-1")


def test_events_discarding_only_at_the_end_of_the_events_phase() -> None:
    # given a card in hand in phase 1 or phase 3: refused, cards leave only as spent pairs
    for state in (given(hand("eq-jetpack-1")), given(hand("eq-jetpack-1"), phase(SYSTEMS.phase))):
        refused(state, DiscardEquipment("eq-jetpack-1"), "WRONG_PHASE")
        refused(state, KeepHand(), "WRONG_PHASE")
        assert not any(
            isinstance(a, DiscardEquipment | KeepHand) for a in GAME.legal_actions(state, PLAYER)
        )
    # and not while phase 2 still waits for its cards
    refused(drawing(hand("eq-jetpack-1")), DiscardEquipment("eq-jetpack-1"), "AWAITING_CHANCE")


def test_events_discarding_a_card_not_in_hand_is_refused() -> None:
    state = checking(
        ("eq-jetpack-1", "eq-jetpack-2"), "eq-solar-recharge-1", "eq-solar-recharge-2", "event-01"
    )
    refused(state, DiscardEquipment("eq-dome-shelter-1"), "CARD_NOT_IN_HAND")


def test_events_empty_draw_pile_reshuffles_the_discard_pile_mid_draw() -> None:
    state = drawing(
        ev.EventDeckShuffled(1, reshuffle=True),
        ev.EventsDiscarded(("event-03", "event-04", "event-05")),
    )
    assert GAME.next_step(state) == AwaitingChance(DrawCards("events", 1, "events"))
    first = drawn(state, "event-01")
    assert first == [ev.EventCardsDrawn(("event-01",), from_uplink=False)]
    state = GAME.fold(first, state)

    assert GAME.next_step(state) == AwaitingChance(
        ShuffleDeck("events", ("event-03", "event-04", "event-05"), "reshuffle")
    )
    shuffled = GAME.resolve(state, DeckShuffled("events", 3))
    assert shuffled == [ev.EventDeckShuffled(3, reshuffle=True)]
    state = GAME.fold(shuffled, state)
    assert state.discard == () and state.draw_pile == 3

    assert GAME.next_step(state) == AwaitingChance(DrawCards("events", 2, "events"))
    assert drawn(state, "event-05", "event-03") == [
        ev.EventCardsDrawn(("event-05", "event-03"), from_uplink=False),
        ev.EventApplied("event-05", 5, System.OXYGEN, 3, 6),
        ev.EventsDiscarded(("event-01", "event-05", "event-03")),
        SYSTEMS,
    ]


def test_events_reshuffle_first_when_the_draw_pile_is_already_empty() -> None:
    state = drawing(ev.EventDeckShuffled(0, reshuffle=True), ev.EventsDiscarded(("event-09",)))
    assert GAME.next_step(state) == AwaitingChance(
        ShuffleDeck("events", ("event-09",), "reshuffle")
    )
