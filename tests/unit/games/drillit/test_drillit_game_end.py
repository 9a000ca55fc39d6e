"""End of game: victory at the exit the players chose at setup, Plan B (moving the Exit
piece once to the second exit option), defeat by the Life Track, the exhausted Event
Deck, or no way left to the exit."""

from __future__ import annotations

import pytest

from services.games.contract import Finished, Outcome, RuleViolation
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex, disc
from services.games.drillit.tunnels import exit_reachable
from tests.unit.games.drillit.drillit_given import card_with, given, on_turn, radar

NE = 1  # a straight piece turned 1 runs north-east / south-west


def tunnel(*cells: Hex, rotation: int = NE) -> list[ev.PathPiecePlaced]:
    pieces = ("P05", "P06", "P07", "P08", "P09")
    return [
        ev.PathPiecePlaced("ann", "earlier", pieces[i], cell, rotation, 0)
        for i, cell in enumerate(cells)
    ]


EXIT_1, EXIT_2 = CONTENT.layouts["short"].exits["1"], CONTENT.layouts["short"].exits["2"]
LAST_1 = Hex(EXIT_1.q - 1, 1 - EXIT_1.q)  # a straight piece here, turned NE, meets exit 1
LAST_2 = EXIT_2.neighbour(1)  # the cell north-east of exit 2


def toward_exit_1() -> list[ev.PathPiecePlaced]:
    """A straight tunnel north-east from the Tank, one piece short of exit option 1."""
    d = EXIT_1.q
    assert Hex(d, -d) == EXIT_1
    return tunnel(*(Hex(i, -i) for i in range(2, d - 1)))


def toward_exit_2() -> list[ev.PathPiecePlaced]:
    """A straight tunnel west along row 1, one curve short of exit option 2 at (-d, 2)."""
    assert EXIT_2.r == 2
    return tunnel(*(Hex(q, 1) for q in range(-2, LAST_2.q, -1)), rotation=0)


# the wide curve P10 turned 4 opens east (0) into the west tunnel and south-west (4)
CURVE_HANDS = {"ann": "P10", "bob": "P02", "cid": "P03"}
INTO_EXIT_2 = act.Excavate("ann", LAST_2, 4)
INTO_EXIT_1 = act.Excavate("ann", LAST_1, NE)


def test_victory_a_path_piece_connecting_to_the_chosen_exit() -> None:
    # given the Exit piece on option 1 (the default) and a tunnel one piece short of it
    state = on_turn("ann", *toward_exit_1())
    assert state.exit == "1"
    assert INTO_EXIT_1 in GAME.legal_actions(state, "ann")
    # when the last piece connects to it
    events = GAME.decide(state, "ann", INTO_EXIT_1)
    # then the players win
    assert events == [
        ev.PathPiecePlaced("ann", "ann", "P01", LAST_1, NE, 1),
        ev.CrystalCollected("blue"),
        ev.MatchWon("exit-reached"),
    ]
    final = GAME.fold(events, state)
    assert GAME.next_step(final) == Finished(
        Outcome({"ann": "won", "bob": "won", "cid": "won"}, "exit-reached", {"turns": 1})
    )
    assert GAME.legal_actions(final, "ann") == ()


def test_victory_only_at_the_exit_determined_at_the_start_not_the_other_option() -> None:
    # given the Exit piece on option 1 and a tunnel reaching the empty option 2
    state = on_turn("ann", *toward_exit_2(), hands=CURVE_HANDS)
    # when a piece connects to exit option 2
    events = GAME.decide(state, "ann", INTO_EXIT_2)
    # then it is only a Path piece: no victory
    assert not any(isinstance(e, ev.MatchWon) for e in events)
    assert GAME.outcome(GAME.fold(events, state)) is None


def test_victory_exit_option_2_chosen_at_setup_wins_and_option_1_does_not() -> None:
    # given the players placed the Exit piece on option 2
    at_2 = on_turn("ann", *toward_exit_2(), hands=CURVE_HANDS, exit="2")
    # when a piece connects to option 2, then they win
    assert GAME.decide(at_2, "ann", INTO_EXIT_2)[-1] == ev.MatchWon("exit-reached")
    # when a piece connects to option 1 instead, then nothing is won
    at_1 = on_turn("ann", *toward_exit_1(), exit="2")
    assert ev.MatchWon("exit-reached") not in GAME.decide(at_1, "ann", INTO_EXIT_1)


def test_plan_b_moves_the_exit_piece_to_the_second_exit_option_for_no_action_point() -> None:
    # given the first escape route (option 1) and a tunnel toward option 2
    state = on_turn("ann", *toward_exit_2(), hands=CURVE_HANDS)
    assert act.TakePlanB() in GAME.legal_actions(state, "ann")
    # when the active player takes Plan B
    events = GAME.decide(state, "ann", act.TakePlanB())
    # then the Exit piece stands on option 2, no Action Point spent, Plan B used up
    assert events == [ev.PlanBTaken("ann", "2")]
    state = GAME.fold(events, state)
    assert (state.exit, state.plan_b, state.action_points) == ("2", False, 4)
    view = GAME.view(state, "bob")
    assert (view.exit_piece, view.exit_option, view.plan_b_option) == (EXIT_2, "2", None)
    # and the excavation along the second exit option now wins
    assert GAME.decide(state, "ann", INTO_EXIT_2)[-1] == ev.MatchWon("exit-reached")


def test_plan_b_the_first_exit_no_longer_wins_after_the_exit_piece_moved() -> None:
    state = on_turn("ann", *toward_exit_1(), ev.PlanBTaken("ann", "2"))
    assert ev.MatchWon("exit-reached") not in GAME.decide(state, "ann", INTO_EXIT_1)


def test_plan_b_only_once_a_match() -> None:
    state = on_turn("ann", ev.PlanBTaken("cid", "2"))
    assert act.TakePlanB() not in GAME.legal_actions(state, "ann")
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "ann", act.TakePlanB())
    assert refused.value.code == "NO_PLAN_B"


def test_plan_b_from_option_2_goes_back_to_option_1() -> None:
    state = on_turn("ann", exit="2")
    assert GAME.decide(state, "ann", act.TakePlanB()) == [ev.PlanBTaken("ann", "1")]


def test_plan_b_only_by_the_active_player_during_their_actions() -> None:
    state = on_turn("ann")
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "bob", act.TakePlanB())
    assert refused.value.code == "NOT_YOUR_TURN"


def test_plan_b_off_house_variant_keeps_the_exit_piece_where_it_was_placed() -> None:
    state = on_turn("ann", plan_b=False)
    assert GAME.view(state, "ann").plan_b_option is None
    assert act.TakePlanB() not in GAME.legal_actions(state, "ann")
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "ann", act.TakePlanB())
    assert refused.value.code == "NO_PLAN_B"


def test_defeat_when_the_life_track_is_full() -> None:
    full = CONTENT.life_track
    card = card_with(advance="on", intensify="off", main="fire")
    state = given(
        ev.PermanentDamageTaken(full - 1, "test"),
        radar({1: (0, 1, 0, 0)}),
        ev.TurnStarted("ann", 1, 4),
        top=(card,),
    )
    events = GAME.decide(state, "ann", act.EndTurn())
    assert events[-3:] == [radar({}), ev.ArmorDestroyed(1), ev.MatchLost("life-track-full")]
    assert GAME.fold(events, state).damage == full


def test_defeat_permanent_damage_never_overfills_the_life_track() -> None:
    full = CONTENT.life_track
    card = card_with(advance="on", intensify="off", main="fire")
    state = given(
        ev.PermanentDamageTaken(full - 1, "test"),
        radar({1: (3, 0, 0, 0)}),
        ev.TurnStarted("ann", 1, 4),
        top=(card,),
    )
    events = GAME.decide(state, "ann", act.EndTurn())
    assert ev.PermanentDamageTaken(1, "goblins reached the centre") in events
    assert GAME.fold(events, state).damage == full


def test_defeat_when_the_event_deck_is_exhausted_after_19_turns() -> None:
    state = given()
    reveals = [ev.EventCardRevealed(c, "trap", 17 - i) for i, c in enumerate(state.event_deck)]
    state = given(*reveals, ev.TurnStarted("ann", 19, 4))
    state = GAME.fold([ev.GoblinsArrived(1, 0)], state)  # the last attack resolved
    events = GAME.decide(state, "ann", act.EndTurn())
    assert events == [
        ev.ActionsEnded("ann"),
        ev.TurnEnded(19),
        ev.MatchLost("event-deck-exhausted"),
    ]


def test_defeat_when_no_path_piece_can_be_placed_any_more() -> None:
    board = [
        ev.PathPiecesDrawn({}, 0),
        *tunnel(Hex(2, -2)),
        ev.PathPiecePlaced("ann", "bob", "P02", Hex(-2, 0), 0, 0),
        ev.PathPiecePlaced("ann", "cid", "P03", Hex(2, 0), 0, 0),
        ev.PathPiecePlaced("ann", "ann", "P01", Hex(0, 2), 2, 0),
    ]
    state = on_turn("ann", *board)
    assert GAME.decide(state, "ann", act.EndTurn())[-1] == ev.MatchLost("no-path-pieces")


def test_defeat_when_the_exit_cannot_be_reached_any_more() -> None:
    ring = [ev.AbyssOpened(c) for c in disc(2) if c not in CONTENT.tank_cells]
    state = on_turn("ann", *ring)
    assert not exit_reachable(state)
    assert GAME.decide(state, "ann", act.EndTurn())[-1] == ev.MatchLost("exit-unreachable")


# Abysses on every map space around exit option 1 (a corner of the map)
AROUND_EXIT_1 = [
    ev.AbyssOpened(c) for c in EXIT_1.neighbours() if c in CONTENT.layouts["short"].cells
]


def test_defeat_when_the_chosen_exit_is_cut_off_and_plan_b_was_not_taken() -> None:
    # given Abysses all around the Exit piece (option 1)
    state = on_turn("ann", *AROUND_EXIT_1)
    assert not exit_reachable(state)
    # when the turn ends without Plan B, then "impossible to reach the Exit piece"
    assert GAME.decide(state, "ann", act.EndTurn())[-1] == ev.MatchLost("exit-unreachable")


def test_plan_b_saves_the_mission_when_the_first_escape_route_is_cut_off() -> None:
    # given the same Abysses; when the players take Plan B, then option 2 is reachable
    state = on_turn("ann", *AROUND_EXIT_1)
    state = GAME.fold(GAME.decide(state, "ann", act.TakePlanB()), state)
    assert exit_reachable(state)
    events = GAME.decide(state, "ann", act.EndTurn())
    assert not any(isinstance(e, ev.MatchLost) for e in events)


def test_defeat_when_the_pile_is_empty_and_no_piece_in_hand_fits() -> None:
    # the only free cell next to the tunnels is (2, 0), where two tunnels end: a piece
    # there needs two openings, and the last piece in hand is a dead end
    ring = [ev.AbyssOpened(c) for c in disc(2) if c not in CONTENT.tank_cells and c != Hex(2, 0)]
    ends = [
        ev.PathPiecePlaced("ann", "earlier", "P05", Hex(2, 1), 2, 0),  # opens north (2)
        ev.PathPiecePlaced("ann", "earlier", "P06", Hex(3, -1), 1, 0),  # opens south-west (4)
        ev.AbyssOpened(Hex(2, 2)),
        ev.AbyssOpened(Hex(4, -2)),
    ]
    state = on_turn("ann", ev.PathPiecesDrawn({}, 0), *ring, *ends, hands={"ann": "P34"})
    assert not any(isinstance(a, act.Excavate) for a in GAME.legal_actions(state, "ann"))
    assert GAME.decide(state, "ann", act.EndTurn())[-1] == ev.MatchLost("no-path-pieces")
