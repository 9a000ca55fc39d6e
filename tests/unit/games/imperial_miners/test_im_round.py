"""Round clauses: the Event phase (immediate / this round / end of round), choosing and
paying in secret, the top Level I card for a player who cannot play, and the round end."""

from __future__ import annotations

from dataclasses import replace

from services.games.contract import AwaitingChance, AwaitingPlayers, CardsDrawn, DrawCards
from services.games.imperial_miners import GAME
from services.games.imperial_miners import actions as act
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.flow import automatic
from services.games.imperial_miners.state import PendingDraw, Phase
from tests.unit.games.imperial_miners.im_given import (
    PLAYERS,
    card,
    gain,
    given,
    mine_phase,
    of_type,
    placed,
    play,
    refusal,
)

TUNNELS = {p: (card("Old Tunnel", i),) for i, p in enumerate(PLAYERS)}


def test_event_phase_reveals_one_event_an_immediate_one_resolves_for_everyone() -> None:
    state = given(ev.RoundStarted(1), hands=TUNNELS)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("events", 1, "Event card"))
    out = GAME.resolve(state, CardsDrawn("events", ("EV01",)))  # Royal Grant: 3 coins
    assert out[0] == ev.EventRevealed(1, "EV01", "immediate")
    assert [(e.player, e.coins) for e in of_type(out, ev.EffectResolved)] == [
        (p, 3) for p in PLAYERS
    ]
    assert out[-1] == ev.MinePhaseStarted(1, ())
    state = GAME.fold(out, state)
    assert state.coins == dict.fromkeys(PLAYERS, 3) and state.piles["events"] == 9


def test_an_immediate_draw_is_resolved_before_the_mine_phase() -> None:
    state = given(ev.RoundStarted(1), hands=TUNNELS)
    state = GAME.fold(GAME.resolve(state, CardsDrawn("events", ("EV02",))), state)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("level_1", 1, "Mine cards"))
    assert state.phase == Phase.EVENT


def test_a_this_round_event_changes_costs_in_the_mine_phase() -> None:
    hands = {p: (card("Old Tunnel", i), card("Obelisk Works", i)) for i, p in enumerate(PLAYERS)}
    tunnels = [placed(p, card("Old Tunnel", 3 + i), 1, 0) for i, p in enumerate(PLAYERS)]
    plain = given(*tunnels, *mine_phase(2), hands=hands)
    obelisk = act.ChooseCard(card("Obelisk Works"))
    assert refusal(plain, "ann", obelisk).code == "CANNOT_PLAY"  # 2 coins, ann has 0
    cheap = given(*tunnels, *mine_phase(2, "EV07"), hands=hands)  # Level II costs 2 less
    out = GAME.decide(cheap, "ann", obelisk)
    assert out == [ev.CardChosen("ann", card("Obelisk Works"))]


def test_an_end_of_round_event_resolves_after_everyone_finished_the_mine_phase() -> None:
    state = given(*mine_phase(1, "EV16"), players=("ann",), hands={"ann": TUNNELS["ann"]})
    state, _ = play(state, "ann", act.ChooseCard(TUNNELS["ann"][0]))
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.UseEffect(0))
    state, out = play(state, "ann", act.UseEffect(0))  # the Surface board: 2 coins
    assert out[1:] == [
        ev.ChainFinished("ann"),
        ev.EndOfRoundResolved(1, "EV16"),
        ev.EffectResolved("ann", "event EV16", "vp 2", 0, 2, 0, (), 0, False, (), {}, 0, 0),
        ev.RoundEnded(1),
        ev.RoundStarted(2),
    ]
    assert state.vp["ann"] == 2 and state.round == 2


def test_every_seat_chooses_at_once_in_secret() -> None:
    state = given(*mine_phase(1), hands=TUNNELS)
    assert GAME.next_step(state) == AwaitingPlayers(PLAYERS, "choose")
    state, out = play(state, "bob", act.ChooseCard(TUNNELS["bob"][0]))
    assert out == [ev.CardChosen("bob", TUNNELS["bob"][0])]
    assert GAME.next_step(state) == AwaitingPlayers(("ann", "cid"), "choose")
    assert refusal(state, "bob", act.ChooseCard(TUNNELS["bob"][0])).code == "ALREADY_CHOSEN"
    assert refusal(state, "ann", act.ChooseCard(TUNNELS["bob"][0])).code == "NOT_IN_HAND"


def test_choices_are_revealed_together_when_the_last_seat_chooses() -> None:
    state = given(*mine_phase(1), hands=TUNNELS)
    state, _ = play(state, "ann", act.ChooseCard(TUNNELS["ann"][0]))
    state, _ = play(state, "cid", act.ChooseCard(TUNNELS["cid"][0]))
    assert not state.revealed
    state, out = play(state, "bob", act.ChooseCard(TUNNELS["bob"][0]))
    cards = {p: TUNNELS[p][0] for p in PLAYERS}
    assert out[-1] == ev.CardsRevealed(cards, dict.fromkeys(PLAYERS, 0))
    assert state.phase == Phase.MINE and all(state.hands[p] == () for p in PLAYERS)


def test_level_two_costs_two_coins_level_three_its_printed_cost_level_one_and_four_free() -> None:
    hand = (card("Old Tunnel"), card("Supply Lift"), card("Sphinx Gallery"))
    mine = [placed("ann", card("Old Tunnel", 1), 1, 0), placed("ann", "Supply Lift", 2, 0)]
    mine += [placed("ann", "Sphinx Gallery", 3, 0)]
    deep_heart = [  # a Level IV card drawn into the hand
        ev.EffectResolved("ann", "test", "", 0, 0, 0, (), 0, False, (), {"level_4": 1}, 0, 0),
        ev.MineCardsDrawn("ann", "level_4", ("IV-01",), False),
    ]
    for choice, cost in [(hand[0], 0), (hand[1], 2), (hand[2], 4), ("IV-01", 0)]:
        state = given(
            *mine,
            *deep_heart,
            gain("ann", coins=10),
            *mine_phase(3),
            players=("ann",),
            hands={"ann": hand},
        )
        state, out = play(state, "ann", act.ChooseCard(choice))
        assert out[-1].costs == {"ann": cost}
        assert state.coins["ann"] == 10 - cost


def test_scots_cost_one_less_per_other_scottish_card_never_below_zero() -> None:
    vault = card("Distillery Vault")  # Level II, 2 coins
    cathedral = card("Whisky Cathedral")  # Level III, 8 coins
    scots = [placed("ann", card("Highland Diggers", i), 1, i) for i in range(3)]
    scots += [placed("ann", card("Clan Hall"), 2, 0)]
    state = given(
        *scots,
        gain("ann", coins=4),
        *mine_phase(5),
        players=("ann",),
        hands={"ann": (vault, cathedral)},
    )
    assert {a.card for a in GAME.legal_actions(state, "ann")} == {vault, cathedral}
    state, out = play(state, "ann", act.ChooseCard(cathedral))
    assert out[-1].costs == {"ann": 4}  # 8 - 4 Scottish cards
    state = given(*scots, *mine_phase(5), players=("ann",), hands={"ann": (vault,)})
    state, out = play(state, "ann", act.ChooseCard(vault))
    assert out[-1].costs == {"ann": 0}  # 2 - 4, never below 0


def test_a_player_who_cannot_play_plays_the_top_level_one_card() -> None:
    hands = {"ann": (card("Supply Lift"),), "bob": TUNNELS["bob"]}
    state = given(ev.RoundStarted(1), players=("ann", "bob"), hands=hands)
    out = GAME.resolve(state, CardsDrawn("events", ("EV16",)))
    assert out[-1] == ev.MinePhaseStarted(1, ("ann",))  # 0 coins and no Level I card
    state = GAME.fold(out, state)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("level_1", 1, "Mine cards"))
    top = card("Old Tunnel", 5)
    state = GAME.fold(GAME.resolve(state, CardsDrawn("level_1", (top,))), state)
    assert GAME.next_step(state) == AwaitingPlayers(("bob",), "choose")
    assert GAME.legal_actions(state, "ann") == ()
    state, out = play(state, "bob", act.ChooseCard(TUNNELS["bob"][0]))
    assert out[-1] == ev.CardsRevealed({"ann": top, "bob": TUNNELS["bob"][0]}, {"bob": 0})
    assert state.hands["ann"] == (card("Supply Lift"),)
    assert state.chains["ann"].card == top


def test_a_level_three_card_without_level_two_above_cannot_be_played() -> None:
    treasure = card("Free Vein")  # Level III, free
    hands = {"ann": (treasure, card("Old Tunnel"))}
    state = given(*mine_phase(1), players=("ann",), hands=hands)
    assert GAME.legal_actions(state, "ann") == (act.ChooseCard(card("Old Tunnel")),)
    assert refusal(state, "ann", act.ChooseCard(treasure)).code == "CANNOT_PLAY"


def test_after_ten_rounds_the_match_ends() -> None:
    state = given(
        *mine_phase(10, "EV15"),
        players=("ann", "bob"),
        hands={"ann": TUNNELS["ann"], "bob": TUNNELS["bob"]},
    )
    for p in ("ann", "bob"):
        state, _ = play(state, p, act.ChooseCard(TUNNELS[p][0]))
    for p in ("ann", "bob"):
        state, _ = play(state, p, act.PlaceCard(0))
        state, _ = play(state, p, act.SkipEffect())
    state, _ = play(state, "ann", act.UseEffect(0))  # Surface: 2 coins
    state, out = play(state, "bob", act.UseEffect(1))  # Surface: 1 VP
    assert out[-2] == ev.RoundEnded(10)
    assert out[-1] == ev.MatchEnded(
        {"ann": 0, "bob": 1},
        {"ann": 0, "bob": 0},
        {"ann": "lost", "bob": "won"},
        "most VP after 10 rounds",
    )
    assert GAME.outcome(state) is not None and state.phase == Phase.OVER


def test_actions_out_of_their_phase_are_refused() -> None:
    hands = {"ann": (card("Old Tunnel"), card("Sun Ramp"))}
    state = given(*mine_phase(1), players=("ann",), hands=hands)
    assert refusal(state, "ann", act.PlaceCard(0)).code == "NOT_NOW"
    assert refusal(state, "ann", act.UseEffect(0)).code == "NOT_NOW"
    state, _ = play(state, "ann", act.ChooseCard(card("Old Tunnel")))
    assert refusal(state, "ann", act.ChooseCard(card("Sun Ramp"))).code == "NOT_NOW"
    assert refusal(state, "ann", act.ClimbTo(0)).code == "NOT_NOW"


def test_worked_example_with_no_coins_round_one_must_be_a_level_one_card() -> None:
    hands = {p: (card("Old Tunnel", i), card("Obelisk Works", i)) for i, p in enumerate(PLAYERS)}
    state = given(ev.RoundStarted(1), hands=hands)
    state = GAME.fold(GAME.resolve(state, CardsDrawn("events", ("EV16",))), state)
    for i, p in enumerate(PLAYERS):
        assert GAME.legal_actions(state, p) == (act.ChooseCard(card("Old Tunnel", i)),)


def test_the_supply_is_unlimited() -> None:
    # 60 coin tokens and 60 VP markers are printed; a substitute covers any shortage
    state = given(gain("ann", coins=100, vp=250), players=("ann",))
    assert (state.coins["ann"], state.vp["ann"]) == (100, 250)


def test_between_an_effect_and_its_level_four_draw_no_chance_is_awaited() -> None:
    """Level IV cards lie face up: a replay's step between an effect and the Level IV draw
    it causes awaits no shuffle (there is no Level IV pile), nor does a draw from a deck
    whose pile and discards are both empty (it is cut short); each follows by itself."""
    draw_iv = ev.EffectResolved("ann", "test", "", 0, 0, 0, (), 0, False, (), {"level_4": 1}, 0, 0)
    state = given(draw_iv, players=("ann",), hands={"ann": TUNNELS["ann"]})
    assert GAME.next_step(state) == AwaitingPlayers((), "draw")
    assert GAME.view(state, "ann").deck_sizes["level_4"] == len(state.level_4)
    assert automatic(state) == [ev.MineCardsDrawn("ann", "level_4", state.level_4[:1], False)]

    emptied = replace(
        state,
        draws=(PendingDraw("ann", "level_2", 1),),
        piles={**state.piles, "level_2": 0},
        discards={**state.discards, "level_2": ()},
    )
    assert GAME.next_step(emptied) == AwaitingPlayers((), "draw")
    assert automatic(emptied) == [ev.DrawCutShort("ann", "level_2", 1)]
