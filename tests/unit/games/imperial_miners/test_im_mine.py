"""Mine clauses: placement in staggered levels, the chain reaction up to the Surface board
(both branches), optional effects, Machinery, Cave-in, Progress boards, Carts, draws and
the reshuffle of an empty deck."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import AwaitingChance, CardsDrawn, DeckShuffled, DrawCards, ShuffleDeck
from services.games.imperial_miners import GAME
from services.games.imperial_miners import actions as act
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import LEVEL_I_REACH, complete_carts, placements
from services.games.imperial_miners.state import ImperialMinersState, Stage
from tests.unit.games.imperial_miners.im_given import (
    card,
    gain,
    given,
    mine_phase,
    of_type,
    placed,
    play,
    refusal,
)

SOLO = ("ann",)


def placing(
    hand_card: str,
    *mine: Any,
    coins: int = 20,
    event: str = "EV16",
    sides: tuple[str, ...] = ("a", "a", "a"),
    extra: tuple[Any, ...] = (),
) -> ImperialMinersState:
    """Solo: ``hand_card`` chosen and revealed, waiting to be placed in ``mine``."""
    state = given(
        *mine,
        *extra,
        gain("ann", coins=coins),
        *mine_phase(2, event),
        players=SOLO,
        hands={"ann": (hand_card,)},
        sides=sides,
    )
    state, _ = play(state, "ann", act.ChooseCard(hand_card))
    assert state.chains["ann"].stage == Stage.PLACE
    return state


def test_the_first_level_one_card_goes_under_the_surface_board() -> None:
    state = placing(card("Old Tunnel"))
    assert GAME.legal_actions(state, "ann") == (act.PlaceCard(0),)


def test_2b_level_one_takes_any_number_of_cards_anywhere() -> None:
    """Mine phase 2b: "On Level I a player may have any number of cards, even where the
    Surface board is not physically right above them." Every free column is offered, near
    the other cards or apart from them, up to LEVEL_I_REACH beyond the outermost card."""
    mine = [placed("ann", card("Old Tunnel", i), 1, c) for i, c in enumerate((0, 1, 2))]
    state = placing(card("Sun Ramp"), *mine)
    offered = [a.column for a in GAME.legal_actions(state, "ann")]
    reach = LEVEL_I_REACH
    assert offered == [*range(-reach, 0), *range(3, 2 + reach + 1)]
    state, out = play(state, "ann", act.PlaceCard(9))  # touching no other card
    assert out[0] == ev.CardPlaced("ann", card("Sun Ramp"), 1, 9)
    state, out = play(state, "ann", act.SkipEffect())
    assert out[1] == ev.ChainClimbed("ann", 0, 0)  # its chain still reaches the Surface board


def test_2b_a_gap_on_level_one_can_be_filled_later() -> None:
    mine = [placed("ann", card("Old Tunnel", 0), 1, 0), placed("ann", card("Old Tunnel", 1), 1, 4)]
    state = placing(card("Sun Ramp"), *mine)
    offered = {a.column for a in GAME.legal_actions(state, "ann")}
    assert {1, 2, 3} <= offered and not {0, 4} & offered


def test_2b_level_one_refuses_a_taken_column_and_names_the_offered_ones() -> None:
    state = placing(card("Sun Ramp"), placed("ann", "Old Tunnel", 1, 0))
    taken = refusal(state, "ann", act.PlaceCard(0))
    assert taken.code == "BAD_PLACE" and "already holds a card" in taken.message
    far = refusal(state, "ann", act.PlaceCard(LEVEL_I_REACH + 1))
    assert far.code == "BAD_PLACE"
    assert f"from {-LEVEL_I_REACH} to {LEVEL_I_REACH}" in far.message
    # farther out plays exactly as the farthest column offered: nothing there to touch
    assert placements(state.mines["ann"], 1)[-1] == LEVEL_I_REACH


def test_a_deeper_card_needs_an_adjacent_card_directly_above() -> None:
    mine = [placed("ann", card("Old Tunnel", 0), 1, 0), placed("ann", card("Old Tunnel", 1), 1, 3)]
    state = placing(card("Supply Lift"), *mine)
    # (2, c) lies under (1, c) and (1, c+1): columns -1, 0 under the first, 2, 3 under the second
    assert [a.column for a in GAME.legal_actions(state, "ann")] == [-1, 0, 2, 3]
    assert refusal(state, "ann", act.PlaceCard(1)).code == "BAD_PLACE"
    state, out = play(state, "ann", act.PlaceCard(2))
    assert out[0] == ev.CardPlaced("ann", card("Supply Lift"), 2, 2)


def test_the_placed_card_activates_first_then_one_card_above_then_the_surface() -> None:
    mine = [placed("ann", "Old Tunnel", 1, 0)]
    state = placing(card("Supply Lift"), *mine)
    state, _ = play(state, "ann", act.PlaceCard(0))
    assert GAME.legal_actions(state, "ann") == (
        act.UseEffect(0),
        act.UseEffect(1),
        act.SkipEffect(),
    )
    state, out = play(state, "ann", act.UseEffect(1))  # Supply Lift: 3 coins
    assert out[0].coins == 3 and out[0].source == f"card {card('Supply Lift')}"
    # only one card lies above: the chain climbs by itself
    assert out[1] == ev.ChainClimbed("ann", 1, 0)
    assert GAME.legal_actions(state, "ann") == (act.UseEffect(0), act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(0))  # Old Tunnel: 2 coins
    assert out[1] == ev.ChainClimbed("ann", 0, 0)  # the Surface board
    assert state.chains["ann"].stage == Stage.SURFACE
    assert GAME.legal_actions(state, "ann") == tuple(act.UseEffect(i) for i in range(3))
    state, out = play(state, "ann", act.UseEffect(0))  # Surface: 2 coins
    assert out[0].source == "surface" and out[1] == ev.ChainFinished("ann")
    assert state.coins["ann"] == 20 - 2 + 3 + 2 + 2  # paid 2 for the Level II card


@pytest.mark.parametrize("branch, gains", [(0, (2, 0)), (1, (0, 1))])
def test_with_two_cards_above_the_player_activates_only_one(
    branch: int, gains: tuple[int, int]
) -> None:
    mine = [placed("ann", "Old Tunnel", 1, 0), placed("ann", card("Highland Diggers"), 1, 1)]
    state = placing(card("Supply Lift"), *mine)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.SkipEffect())
    assert out == [ev.EffectSkipped("ann", 2, 0)]
    assert GAME.legal_actions(state, "ann") == (act.ClimbTo(0), act.ClimbTo(1))
    assert refusal(state, "ann", act.ClimbTo(2)).code == "NOT_ABOVE"
    state, out = play(state, "ann", act.ClimbTo(branch))
    assert out == [ev.ChainClimbed("ann", 1, branch)]
    # Old Tunnel: 2 coins; Highland Diggers' second effect: 1 VP per Scottish card
    state, used = play(state, "ann", act.UseEffect(0 if branch == 0 else 1))
    assert (used[0].coins, used[0].vp) == gains
    state, out = play(state, "ann", act.UseEffect(1))  # the Surface board ends the chain
    assert out[1] == ev.ChainFinished("ann")
    # the other card above was never activated this round
    assert [(e.level, e.column) for e in of_type(used + out, ev.ChainClimbed)] == [(0, 0)]


def test_3c_the_surface_board_effect_is_chosen_and_resolved_never_skipped() -> None:
    """Mine phase 3c: "When the activations reach the Surface board, the player chooses one
    of the 3 available effects and resolves it." Only Mine cards' effects are optional."""
    state = placing(card("Old Tunnel"))
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.SkipEffect())  # the Mine card's effect: optional
    assert out == [ev.EffectSkipped("ann", 1, 0), ev.ChainClimbed("ann", 0, 0)]
    assert GAME.legal_actions(state, "ann") == (
        act.UseEffect(0),
        act.UseEffect(1),
        act.UseEffect(2),
    )
    refused = refusal(state, "ann", act.SkipEffect())
    assert refused.code == "SURFACE_EFFECT" and "choose one of its 3 effects" in refused.message
    # coins 2 | vp 1 | advance 1 (onto space 1 of board 1a, which gives 1 coin)
    for index, gained in enumerate(((2, 0, 0), (0, 1, 0), (1, 0, 1))):
        _, out = play(state, "ann", act.UseEffect(index))
        assert out[0].source == "surface"
        assert (out[0].coins, out[0].vp, out[0].progress) == gained
        assert ev.ChainFinished("ann") in out


def test_3c_a_surface_effect_resolves_as_far_as_it_can() -> None:
    """With the Progress marker at the end of the last board, "advance 1" is still the
    player's choice and resolves as far as possible: nothing moves, nothing is gained."""
    at_end = ev.EffectResolved("ann", "t", "", 0, 0, 12, (), 0, False, (), {}, 0, 0)
    state = placing(card("Old Tunnel"), extra=(at_end,))
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(2))
    assert (out[0].progress, out[0].coins, out[0].vp, out[0].rewards) == (0, 0, 0, ())
    assert ev.ChainFinished("ann") in out


def test_a_one_effect_card_offers_no_choice_but_stays_optional() -> None:
    state = placing(card("Old Tunnel"))
    state, _ = play(state, "ann", act.PlaceCard(0))
    assert GAME.legal_actions(state, "ann") == (act.UseEffect(0), act.SkipEffect())
    assert refusal(state, "ann", act.UseEffect(1)).code == "BAD_EFFECT"


def test_each_card_activates_at_most_once_per_round() -> None:
    mine = [placed("ann", "Old Tunnel", 1, 0), placed("ann", "Supply Lift", 2, 0)]
    state = placing(card("Free Vein"), *mine)
    state, _ = play(state, "ann", act.PlaceCard(0))
    climbed: list[tuple[int, int]] = [(3, 0)]
    while legal := GAME.legal_actions(state, "ann"):
        state, out = play(state, "ann", legal[-1])  # skip each card, then a Surface effect
        climbed += [(e.level, e.column) for e in of_type(out, ev.ChainClimbed)]
    assert climbed == [(3, 0), (2, 0), (1, 0), (0, 0)]  # each once, straight up
    assert refusal(state, "ann", act.UseEffect(0)).code == "NOT_YOUR_TURN"


def test_machinery_boosts_the_effect_and_stops_at_three() -> None:
    pump = card("Tide Pump")  # [machinery 1, coins 1] | [vp 1]
    one = ev.EffectResolved("ann", "t", "", 0, 0, 0, (), 2, False, (), {}, 1, 0)
    state = placing(card("Supply Lift"), placed("ann", pump, 1, 0), one)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(0))
    assert (out[0].machinery, out[0].coins) == (1, 1 + 2)  # 2 tokens boost the first gain
    assert state.mines["ann"][0].machinery == 3
    full = ev.EffectResolved("ann", "t", "", 0, 0, 0, (), 3, False, (), {}, 1, 0)
    state = placing(card("Supply Lift"), placed("ann", pump, 1, 0), full)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(0))
    assert (out[0].machinery, out[0].coins) == (0, 1 + 3)  # no room for a fourth token
    state = placing(card("Supply Lift"), placed("ann", pump, 1, 0), full)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(1))
    assert out[0].vp == 1 + 3


def test_a_cave_in_blocks_a_card_activating_it_only_removes_the_token() -> None:
    raiders = card("Raiders' Shaft")  # [coins 4, cave_in] | [coins 1]
    state = placing(raiders)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(0))
    assert (out[0].coins, out[0].cave_in) == (4, True)
    assert state.mines["ann"][0].cave_in
    blocked = ev.EffectResolved("ann", "t", "", 0, 0, 0, (), 0, True, (), {}, 1, 0)
    state = placing(card("Supply Lift"), placed("ann", raiders, 1, 0), blocked)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(1))
    assert out[1:] == [
        ev.ChainClimbed("ann", 1, 0),
        ev.CaveInRemoved("ann", 1, 0),  # no effect: the token goes
        ev.ChainClimbed("ann", 0, 0),
    ]
    assert not state.mines["ann"][0].cave_in
    assert state.chains["ann"].stage == Stage.SURFACE


def test_advancing_grants_the_space_landed_on_and_finishing_a_board_its_final_reward() -> None:
    ramp = card("Sun Ramp")  # [advance 1] | [coins 2]
    state = placing(ramp)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(0))
    assert (out[0].progress, out[0].coins, out[0].rewards) == (1, 1, ("coins 1",))  # 1a space 1
    three = ev.EffectResolved("ann", "t", "", 0, 0, 3, (), 0, False, (), {}, 0, 0)
    state = placing(ramp, extra=(three,))
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(0))
    # space 4 of board 1a (1 VP) ends the board: its final reward (2 VP) too
    assert (out[0].progress, out[0].vp, out[0].rewards) == (1, 3, ("vp 1", "vp 2"))
    assert state.progress["ann"] == 4


def test_the_marker_stops_at_the_end_of_the_last_board() -> None:
    near_end = ev.EffectResolved("ann", "t", "", 0, 0, 11, (), 0, False, (), {}, 0, 0)
    state = placing(card("Obelisk Works"), placed("ann", "Old Tunnel", 1, 0), extra=(near_end,))
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(0))  # advance 2 from 11
    assert out[0].progress == 1 and state.progress["ann"] == 12
    assert out[0].rewards == ("vp 2", "vp 5")  # board 3a space 4, then its final reward


def test_a_complete_cart_is_an_r_half_beside_an_l_half() -> None:
    diggers, tunnel = card("Highland Diggers"), card("Old Tunnel")  # R half, L half
    state = given(placed("ann", diggers, 1, 0), placed("ann", tunnel, 1, 1), players=SOLO)
    assert complete_carts(state.mines["ann"]) == 1
    state = given(placed("ann", tunnel, 1, 0), placed("ann", diggers, 1, 1), players=SOLO)
    assert complete_carts(state.mines["ann"]) == 0  # adjacent, halves apart


def drained(state: ImperialMinersState, deck: str) -> list[Any]:
    """Events that draw every card left in ``deck``'s pile into ann's hand."""
    seen = {c for h in state.hands.values() for c in h} | set(state.discards[deck])
    seen |= {p.card for m in state.mines.values() for p in m} | set(state.chosen.values())
    left = tuple(c for c in CONTENT.deck(int(deck[-1])) if c not in seen)
    assert len(left) == state.piles[deck]
    return [
        ev.EffectResolved("ann", "t", "", 0, 0, 0, (), 0, False, (), {deck: len(left)}, 0, 0),
        ev.MineCardsDrawn("ann", deck, left, False),
    ]


def test_drawing_from_an_empty_deck_reshuffles_its_discard_pile() -> None:
    state = placing(card("Supply Lift"), placed("ann", "Old Tunnel", 1, 0))  # [draw_2 1] | …
    state = GAME.fold(drained(state, "level_2"), state)
    discarded = state.discards["level_2"]  # set aside when ann kept her hand
    assert state.piles["level_2"] == 0 and discarded
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.UseEffect(0))
    step = GAME.next_step(state)
    assert step == AwaitingChance(ShuffleDeck("level_2", discarded, "reshuffle"))
    state = GAME.fold(GAME.resolve(state, DeckShuffled("level_2", len(discarded))), state)
    assert state.discards["level_2"] == () and state.piles["level_2"] == len(discarded)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("level_2", 1, "Mine cards"))
    state = GAME.fold(GAME.resolve(state, CardsDrawn("level_2", discarded[:1])), state)
    assert discarded[0] in state.hands["ann"]


def test_with_deck_and_discards_empty_a_draw_is_cut_short() -> None:
    state = placing(card("Supply Lift"), placed("ann", "Old Tunnel", 1, 0))
    state = GAME.fold(drained(state, "level_2"), state)
    reshuffled = ev.PileShuffled("level_2", len(state.discards["level_2"]), True)
    state = GAME.fold([reshuffled], state)
    state = GAME.fold(drained(state, "level_2"), state)
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(0))
    assert ev.DrawCutShort("ann", "level_2", 1) in out
    assert state.draws == ()


def test_level_four_cards_are_drawn_face_up_without_a_shuffle() -> None:
    mine = [placed("ann", "Old Tunnel", 1, 0), placed("ann", "Supply Lift", 2, 0)]
    state = placing(card("Free Vein"), *mine)  # [coins 3] | [draw_4 1]
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, out = play(state, "ann", act.UseEffect(1))
    assert ev.MineCardsDrawn("ann", "level_4", ("IV-01",), False) in out
    assert state.hands["ann"] == ("IV-01",) and len(state.level_4) == 13


def test_this_round_events_reward_placing_and_reaching_the_surface() -> None:
    state = placing(card("Old Tunnel"), event="EV12")  # Scouts: placing a card, advance 1
    state, out = play(state, "ann", act.PlaceCard(0))
    assert out[1].source == "event EV12" and out[1].progress == 1
    state = placing(card("Old Tunnel"), event="EV10")  # Patronage: reaching the Surface, 1 VP
    state, _ = play(state, "ann", act.PlaceCard(0))
    state, _ = play(state, "ann", act.SkipEffect())
    state, out = play(state, "ann", act.UseEffect(0))
    assert out[1].source == "event EV10" and out[1].vp == 1
