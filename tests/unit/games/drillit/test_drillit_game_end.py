"""End of game: victory at an exit (either option: Plan B), defeat by the Life Track,
the exhausted Event Deck, or no way left to the exit."""

from __future__ import annotations

from services.games.contract import Finished, Outcome
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


EXIT_A, EXIT_B = CONTENT.layouts["short"].exits["a"], CONTENT.layouts["short"].exits["b"]


def test_victory_a_path_piece_connecting_to_the_exit() -> None:
    # exit a lies straight north-east of the Tank at (d, -d)
    d = EXIT_A.q
    assert Hex(d, -d) == EXIT_A
    board = tunnel(*(Hex(i, -i) for i in range(2, d - 1)))
    state = on_turn("ann", *board)
    last = Hex(d - 1, 1 - d)
    assert act.Excavate("ann", last, NE) in GAME.legal_actions(state, "ann")
    events = GAME.decide(state, "ann", act.Excavate("ann", last, NE))
    assert events == [
        ev.PathPiecePlaced("ann", "ann", "P01", last, NE, 1),
        ev.CrystalCollected("blue"),
        ev.MatchWon("exit-reached"),
    ]
    final = GAME.fold(events, state)
    assert GAME.next_step(final) == Finished(
        Outcome({"ann": "won", "bob": "won", "cid": "won"}, "exit-reached", {"turns": 1})
    )
    assert GAME.legal_actions(final, "ann") == ()


def test_victory_plan_b_the_second_exit_option_also_leads_out() -> None:
    # exit b lies west at (-d, 2): a tunnel west along row 1, then a curve down to it
    assert EXIT_B.r == 2
    last = EXIT_B.neighbour(1)  # the cell north-east of the exit
    board = tunnel(*(Hex(q, 1) for q in range(-2, last.q, -1)), rotation=0)
    state = on_turn("ann", *board, hands={"ann": "P10", "bob": "P02", "cid": "P03"})
    # the wide curve P10 turned 4 opens east (0) into the tunnel and south-west (4)
    events = GAME.decide(state, "ann", act.Excavate("ann", last, 4))
    assert events[-1] == ev.MatchWon("exit-reached")


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


def test_exit_still_reachable_with_a_plan_b() -> None:
    # wall off the north-east: exit b (west) still counts
    wall = [ev.AbyssOpened(c) for c in disc(2) if c.q >= 1 and c not in CONTENT.tank_cells]
    assert exit_reachable(on_turn("ann", *wall))


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
