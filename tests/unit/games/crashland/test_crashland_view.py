"""What viewers see, the text board, action labels and statistics."""

from __future__ import annotations

from services.games.codec import from_data, to_data
from services.games.contract import CardsDrawn
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.crashland.actions import (
    ArrangeUplink,
    DiscardEquipment,
    EndMovement,
    EndTurn,
    Move,
    SpendDomeShelter,
    SpendJetpack,
    SpendSatelliteUplink,
    SpendSolarRecharge,
)
from services.games.crashland.model import Boost, Direction, MapKind, Payment, Phase, Position
from services.games.crashland.render import render
from services.games.crashland.view import CrashlandView
from tests.unit.games.crashland.crashland_given import (
    PLAYER,
    SHIP,
    at,
    given,
    hand,
    levels,
    phase,
    revealed,
)

P = Position
UPLINK = ("eq-satellite-uplink-1", "eq-satellite-uplink-2")


def test_view_shows_only_explored_map_cards() -> None:
    view = GAME.view(given(*revealed(P(0, 3))), PLAYER)
    shown = {c.position: c for c in view.cells if c.explored}
    assert set(shown) == {SHIP, P(0, 3)}
    assert shown[P(0, 3)].beacon_number == 1 and shown[SHIP].kind is MapKind.SPACESHIP
    hidden = [c for c in view.cells if not c.explored]
    assert len(hidden) == 28
    assert all(c.card is None and c.kind is None and c.beacon_number is None for c in hidden)


def test_view_located_tank_on_an_unexplored_card_shows_the_tank_not_the_card() -> None:
    state = given(*revealed(P(0, 3), P(2, 0)), ev.FuelTankLocated(1, P(2, 3)))
    cell = GAME.view(state, None).cells[2 * 6 + 3]
    assert (cell.tank, cell.explored, cell.card) == (1, False, None)


def test_view_player_sees_hand_spectator_only_its_size() -> None:
    state = given(hand("eq-jetpack-1", "eq-solar-recharge-2"))
    mine, theirs = GAME.view(state, PLAYER), GAME.view(state, None)
    assert [c.card for c in mine.hand] == ["eq-jetpack-1", "eq-solar-recharge-2"]
    assert theirs.hand == () and theirs.hand_size == 2


def test_view_uplink_cards_only_for_the_player() -> None:
    six = ("event-01", "event-09", "eq-jetpack-1", "event-04", "event-11", "eq-dome-shelter-3")
    state = given(hand(*UPLINK))
    state = GAME.fold(GAME.decide(state, PLAYER, SpendSatelliteUplink()), state)
    state = GAME.fold(GAME.resolve(state, CardsDrawn("events", six)), state)
    mine, theirs = GAME.view(state, PLAYER), GAME.view(state, None)
    assert [c.card for c in mine.uplink_cards] == list(six)
    assert theirs.uplink_cards == () and theirs.uplink_size == 6 and theirs.arranging == 6
    # the seen cards are still the top of the draw pile
    assert state.draw_pile == 15 and theirs.draw_pile_size == 21
    assert "event-09" not in str(to_data(theirs))


def test_view_spectator_sees_the_drawn_events_but_not_the_kept_equipment() -> None:
    state = given(*at(P(1, 2)), ev.MovementEnded(1), phase(Phase.EVENTS))
    state = GAME.fold(
        GAME.resolve(state, CardsDrawn("events", ("event-02", "eq-jetpack-1", "event-07"))), state
    )
    assert [c.card for c in GAME.view(state, None).last_drawn] == ["event-02", "event-07"]
    assert len(GAME.view(state, PLAYER).last_drawn) == 3
    applied = GAME.view(state, None).applied_event
    assert applied is not None and (applied.number, applied.loss) == (7, 2)


def test_view_round_trips_through_the_codec() -> None:
    view = GAME.view(given(hand("eq-jetpack-1"), *revealed(P(0, 3))), PLAYER)
    assert from_data(CrashlandView, to_data(view)) == view


def test_render_draws_the_board_levels_and_hand() -> None:
    state = given(*levels(7, 4), hand("eq-jetpack-1"), *revealed(P(0, 3)))
    text = render(GAME.view(state, PLAYER))
    assert "@SHP" in text and "B1|" in text and "???" in text
    assert "7/9" in text and "4/9" in text
    assert "Hand: jetpack" in text
    assert "Hand: 1 card(s)" in render(GAME.view(state, None))


def test_describe_action_short_labels() -> None:
    labels = {
        GAME.describe_action(Move(Direction.NORTH, Payment.FREE)): "move north (free)",
        GAME.describe_action(Move(Direction.WEST, Payment.BATTERY)): "move west (battery)",
        GAME.describe_action(SpendJetpack(P(2, 3))): "spend Jetpack pair → (2,3)",
        GAME.describe_action(SpendDomeShelter(Boost.BOTH)): "spend Dome Shelter pair (+2 both)",
    }
    assert all(got == want for got, want in labels.items()), labels
    for action in (
        EndMovement(),
        EndTurn(),
        DiscardEquipment("eq-jetpack-1"),
        SpendSolarRecharge(),
        SpendSatelliteUplink(),
        ArrangeUplink(("event-01",)),
        SpendDomeShelter(Boost.OXYGEN),
    ):
        assert not GAME.describe_action(action).startswith(type(action).__name__)


def test_statistics_turns_levels_tanks_and_explored_cards() -> None:
    state = given(
        *levels(6, 5),
        *revealed(P(0, 3), P(2, 0)),
        ev.FuelTankLocated(1, P(2, 3)),
        ev.FuelTankCollected(1, P(2, 3)),
    )
    assert GAME.statistics(state) == {
        "turns": 1.0,
        "oxygen": 6.0,
        "battery": 5.0,
        "tanks_collected": 1.0,
        "cards_explored": 3.0,
    }
