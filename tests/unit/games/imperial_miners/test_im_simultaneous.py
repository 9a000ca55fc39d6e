"""Simultaneous play with 1 to 5 seats: secret choices hidden from every other viewer until
the reveal, then every seat places and activates on its own, in any interleaving."""

from __future__ import annotations

import itertools

import pytest

from services.games import codec
from services.games.contract import AwaitingPlayers
from services.games.imperial_miners import GAME
from services.games.imperial_miners import actions as act
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.state import ImperialMinersState, Stage
from tests.unit.games.imperial_miners.im_given import card, given, mine_phase, play

SEATS = ("ann", "bob", "cid", "dee", "eve")


def seats(n: int) -> tuple[str, ...]:
    return SEATS[:n]


def choosing(n: int) -> tuple[tuple[str, ...], ImperialMinersState]:
    players = seats(n)
    hands = {p: (card("Old Tunnel", i), card("Sun Ramp", i)) for i, p in enumerate(players)}
    return players, given(*mine_phase(1), players=players, hands=hands)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_all_seats_choose_at_once_and_the_last_choice_reveals(n: int) -> None:
    players, state = choosing(n)
    assert GAME.next_step(state) == AwaitingPlayers(players, "choose")
    for i, p in enumerate(reversed(players)):
        state, out = play(state, p, act.ChooseCard(card("Sun Ramp", n - 1 - i)))
        if i < n - 1:
            assert out == [ev.CardChosen(p, card("Sun Ramp", n - 1 - i))]
            assert not state.revealed
    assert isinstance(out[-1], ev.CardsRevealed)
    assert out[-1].cards == {p: card("Sun Ramp", i) for i, p in enumerate(players)}
    assert GAME.next_step(state) == AwaitingPlayers(players, "mine")


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_others_cannot_see_my_choice_before_the_reveal(n: int) -> None:
    players, state = choosing(n)
    secret = card("Sun Ramp", 0)
    state, _ = play(state, "ann", act.ChooseCard(secret))
    mine = GAME.view(state, "ann")
    assert mine.my_choice == secret
    for viewer in (*players[1:], None):
        view = GAME.view(state, viewer)
        assert secret not in str(codec.to_data(view))
        assert view.seats[0].has_chosen and view.seats[0].played is None
        assert view.seats[0].hand_size == 2
    # after the reveal every viewer sees every played card
    for i, p in enumerate(players[1:], start=1):
        state, _ = play(state, p, act.ChooseCard(card("Old Tunnel", i)))
    for viewer in (*players, None):
        assert GAME.view(state, viewer).seats[0].played == secret


def test_chains_run_in_parallel_in_any_interleaving() -> None:
    players = seats(3)
    hands = {
        p: (card("Supply Lift", 0) if p == "ann" else card("Old Tunnel", i),)
        for i, p in enumerate(players)
    }
    hands["bob"] = (card("Obelisk Works"),)
    mines = [ev.CardPlaced(p, card("Highland Diggers", i), 1, 0) for i, p in enumerate(players)] + [
        ev.CardPlaced(p, card("Old Tunnel", 3 + i), 1, 1) for i, p in enumerate(players)
    ]
    coins = [ev.EffectResolved(p, "t", "", 5, 0, 0, (), 0, False, (), {}, 0, 0) for p in players]
    start = given(*mines, *coins, *mine_phase(2), players=players, hands=hands)
    for p in players:
        start, _ = play(start, p, act.ChooseCard(hands[p][0]))
    finals = []
    # three different interleavings of the same per-seat plans give the same end state
    plans = {
        "ann": [
            act.PlaceCard(0),
            act.UseEffect(1),
            act.ClimbTo(1),
            act.UseEffect(0),
            act.UseEffect(1),
        ],
        "bob": [
            act.PlaceCard(0),
            act.UseEffect(0),
            act.ClimbTo(0),
            act.UseEffect(1),
            act.UseEffect(0),
        ],
        "cid": [act.PlaceCard(-1), act.UseEffect(0), act.UseEffect(2)],
    }
    for order in itertools.islice(itertools.permutations(players), 3):
        state, queues = start, {p: list(plans[p]) for p in players}
        while any(queues.values()):
            for p in order:  # one step per seat in turn: nobody waits for another's chain
                if queues[p]:
                    assert p in GAME.next_step(state).players  # type: ignore[union-attr]
                    state, _ = play(state, p, queues[p].pop(0))
        finals.append((state.coins, state.vp, state.progress, state.mines))
    assert finals[0] == finals[1] == finals[2]
    # ann: Supply Lift 3 coins, Old Tunnel 2; bob: advance 2 (space 2 of board 1a: 1 VP),
    # Diggers 1 VP, Surface 2 coins; cid: Old Tunnel 2, Surface advance 1 (space 1: 1 coin)
    assert finals[0][0] == {"ann": 5 - 2 + 3 + 2, "bob": 5 - 2 + 2, "cid": 5 + 2 + 1}
    jubilee = 2  # the round's end-of-round Event
    assert finals[0][1] == {"ann": 1 + jubilee, "bob": 2 + jubilee, "cid": jubilee}


def test_a_seat_that_finished_waits_for_nobody_and_is_no_longer_awaited() -> None:
    players, state = choosing(2)
    for i, p in enumerate(players):
        state, _ = play(state, p, act.ChooseCard(card("Old Tunnel", i)))
    state, _ = play(state, "bob", act.PlaceCard(0))
    state, _ = play(state, "bob", act.SkipEffect())
    state, _ = play(state, "bob", act.UseEffect(0))  # a Surface board effect
    assert state.chains["bob"].stage == Stage.DONE
    assert GAME.next_step(state) == AwaitingPlayers(("ann",), "mine")
    assert GAME.legal_actions(state, "bob") == ()
