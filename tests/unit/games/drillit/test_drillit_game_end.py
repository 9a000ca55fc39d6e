"""End of game: victory at an exit (either option: Plan B), defeat by the Life Track,
the exhausted Event Deck, or no way left to the exit."""

from __future__ import annotations

from drillit_given import card_with, given, on_turn, radar

from services.games.contract import Finished, Outcome
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex, disc
from services.games.drillit.tunnels import exit_reachable

NE = 1  # a straight piece turned 1 runs north-east / south-west


def tunnel(*cells: Hex, rotation: int = NE) -> list[ev.PathPiecePlaced]:
    pieces = ("P05", "P06", "P07", "P08", "P09")
    return [
        ev.PathPiecePlaced("ann", "earlier", pieces[i], cell, rotation, 0)
        for i, cell in enumerate(cells)
    ]


def test_victory_a_path_piece_connecting_to_the_exit() -> None:
    # exit a of the short distance is at (6, -6)
    board = tunnel(Hex(2, -2), Hex(3, -3), Hex(4, -4))
    state = on_turn("ann", *board)
    events = GAME.decide(state, "ann", act.Excavate("ann", Hex(5, -5), NE))
    assert events == [
        ev.PathPiecePlaced("ann", "ann", "P01", Hex(5, -5), NE, 1),
        ev.CrystalCollected("blue"),
        ev.MatchWon("exit-reached"),
    ]
    final = GAME.fold(events, state)
    assert GAME.next_step(final) == Finished(
        Outcome({"ann": "won", "bob": "won", "cid": "won"}, "exit-reached", {"turns": 1})
    )
    assert GAME.legal_actions(final, "ann") == ()


def test_victory_plan_b_the_second_exit_option_also_leads_out() -> None:
    # exit b of the short distance is at (-6, 2): a tunnel west along row 1
    lay = CONTENT.layouts["short"]
    assert lay.exits["b"] == Hex(-6, 2)
    board = tunnel(Hex(-2, 1), Hex(-3, 1), Hex(-4, 1), rotation=0)
    state = on_turn("ann", *board, hands={"ann": "P10", "bob": "P02", "cid": "P03"})
    # the wide curve P10 turned 4 opens east (0) into the tunnel and south-west (4)
    events = GAME.decide(state, "ann", act.Excavate("ann", Hex(-5, 1), 4))
    assert events[-1] == ev.MatchWon("exit-reached")


def test_defeat_when_the_life_track_is_full() -> None:
    full = CONTENT.life_track
    card = card_with(advance="on", intensify="off", overheat="off", main="fire")
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
    card = card_with(advance="on", intensify="off", overheat="off", main="fire")
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
