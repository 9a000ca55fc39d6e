"""Setup clauses: player count and options, Progress board sides, the decks (Level IV
unshuffled), the Event deck of 10 out of 18, the deal and the keep (first-game variant)."""

from __future__ import annotations

import pytest
from google.protobuf import any_pb2, json_format

from services.adapters.protoconv import GameMessages
from services.games.chance import SeededChance
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    MalformedAction,
    RollDice,
    ShuffleDeck,
)
from services.games.imperial_miners import GAME
from services.games.imperial_miners import actions as act
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.state import Phase
from services.games.playout import seeds_for
from tests.unit.games.imperial_miners.im_given import (
    PLAYERS,
    given,
    play,
    refusal,
    setup_events,
)


@pytest.mark.parametrize("count", [0, 6])
def test_one_to_five_players(count: int) -> None:
    with pytest.raises(MalformedAction) as refused:
        GAME.setup([f"p{i}" for i in range(count)], {})
    assert refused.value.code == "PLAYER_COUNT"


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_every_count_from_one_to_five_sets_up(count: int) -> None:
    players = tuple(f"p{i}" for i in range(count))
    assert GAME.setup(players, {}) == [ev.MatchSetUp(players, False, CONTENT.rules_version)]


def test_options_are_validated() -> None:
    with pytest.raises(MalformedAction):
        GAME.setup(PLAYERS, {"first_game": "maybe"})
    with pytest.raises(MalformedAction):
        GAME.setup(PLAYERS, {"speed": "fast"})
    with pytest.raises(MalformedAction):
        GAME.setup(("ann", "ann"), {})


def test_progress_boards_take_a_random_side_each_from_three_d2() -> None:
    state = GAME.fold(GAME.setup(PLAYERS, {}))
    step = GAME.next_step(state)
    assert step == AwaitingChance(RollDice(3, 2, "Progress board sides"))
    assert GAME.resolve(state, DiceRolled((1, 2, 2))) == [ev.ProgressSidesRolled(("a", "b", "b"))]


def test_event_deck_and_level_one_to_three_are_shuffled_level_four_is_not() -> None:
    state = GAME.fold([*GAME.setup(PLAYERS, {}), ev.ProgressSidesRolled(("a", "a", "a"))])
    shuffled = []
    while isinstance(step := GAME.next_step(state), AwaitingChance) and isinstance(
        step.request, ShuffleDeck
    ):
        shuffled.append((step.request.deck, len(step.request.cards)))
        events = GAME.resolve(state, DeckShuffled(step.request.deck, len(step.request.cards)))
        state = GAME.fold(events, state)
    assert shuffled == [("events", 18), ("level_1", 36), ("level_2", 43), ("level_3", 43)]
    assert state.level_4 == CONTENT.deck(4)  # 14 identical cards, face up, unshuffled


def test_setup_3_ten_of_the_eighteen_event_cards_form_the_event_deck() -> None:
    """Setup 3: "Shuffle the Event cards and draw 10 of them to form the Event deck; return
    the rest to the box." The top 10 of the shuffled 18 are the deck; the 8 below are never
    drawn, so no player sees them."""
    state = GAME.fold([*GAME.setup(PLAYERS, {}), ev.ProgressSidesRolled(("a", "a", "a"))])
    step = GAME.next_step(state)
    assert step == AwaitingChance(ShuffleDeck("events", tuple(CONTENT.events), "shuffle events"))
    out = GAME.resolve(state, DeckShuffled("events", 18))
    assert out == [ev.PileShuffled("events", 18, False), ev.EventDeckFormed(10, 8)]
    state = GAME.fold(out, state)
    assert state.piles["events"] == 10
    for viewer in (*PLAYERS, None):
        view = GAME.view(state, viewer)
        assert view.deck_sizes["events"] == view.rounds_left == 10


def test_the_cards_left_in_the_event_deck_show_the_rounds_that_remain() -> None:
    """Round end: "The number of cards left in the Event deck shows how many rounds remain
    and which round is being played": 9 cards while round 1 is played, 5 in round 5."""
    state = given(ev.RoundStarted(1))
    for round_no, card in enumerate(("EV16", "EV15", "EV14", "EV13", "EV03"), start=1):
        state = GAME.fold(GAME.resolve(state, CardsDrawn("events", (card,))), state)
        view = GAME.view(state, "ann")
        assert view.deck_sizes["events"] == view.rounds_left == 10 - round_no
        state = GAME.fold([ev.RoundStarted(round_no + 1)], state)


def test_each_player_draws_two_three_three_and_keeps_four() -> None:
    events = setup_events()[: -len(PLAYERS)]  # dealt, nobody has kept yet
    state = GAME.fold(events)
    assert all(len(state.hands[p]) == 8 for p in PLAYERS)
    assert GAME.next_step(state) == AwaitingPlayers(PLAYERS, "keep")
    hand = state.hands["ann"]
    assert refusal(state, "ann", act.KeepCards(hand[:3])).code == "KEEP_FOUR"
    assert refusal(state, "ann", act.KeepCards((*hand[:3], "IV-01"))).code == "NOT_IN_HAND"
    state, out = play(state, "bob", act.KeepCards(state.hands["bob"][:4]))
    assert GAME.next_step(state) == AwaitingPlayers(("ann", "cid"), "keep")
    assert out[0].discarded == state.discards["level_2"][:1] + state.discards["level_3"]


def deal_resolved(first_game: bool) -> list[object]:
    """The events the last player's last deal draw resolves into."""
    events = setup_events(first_game=first_game)
    last = max(i for i, e in enumerate(events) if isinstance(e, ev.MineCardsDrawn))
    draw = events[last]
    assert isinstance(draw, ev.MineCardsDrawn)
    state = GAME.fold(events[:last])
    return GAME.resolve(state, CardsDrawn(draw.deck, draw.cards))[1:]


def test_setup_6_the_deal_finishes_eight_dealt_four_to_keep() -> None:
    """Setup 6: "Each player draws 8 Mine cards (2 of Level I, 3 of Level II, 3 of Level
    III), keeps 4 and discards the rest." The event says both numbers."""
    assert deal_resolved(first_game=False) == [ev.DealFinished(dealt=8, keep=4)]


def test_setup_6_a_first_game_deals_six_and_keeps_all_six() -> None:
    """Setup 6, first game: "draw 2 of Level I, 2 of Level II, 2 of Level III and keep
    all 6"."""
    out = deal_resolved(first_game=True)
    assert out[0] == ev.DealFinished(dealt=6, keep=6)
    assert out[1] == ev.RoundStarted(1)  # nobody chooses: all 6 are kept


def test_a_stored_rules_1_0_deal_still_reads_and_folds() -> None:
    """Matches stored before DealFinished carry HandsDealt, whose ``keep`` held the number
    dealt (8). Their binary and exported JSON forms still read, and fold as before."""
    new = setup_events()
    old = [ev.HandsDealt(8) if isinstance(e, ev.DealFinished) else e for e in new]
    assert old != new and GAME.fold(old) == GAME.fold(new)
    messages = GameMessages(GAME)
    stored = messages.event_to_any(ev.HandsDealt(8))
    assert messages.event_from_any(stored) == ev.HandsDealt(8)
    exported = json_format.MessageToJson(stored)
    assert '"keep": 8' in exported
    assert messages.event_from_any(json_format.Parse(exported, any_pb2.Any())) == ev.HandsDealt(8)


def test_the_deal_draws_from_each_deck_in_turn() -> None:
    state = GAME.fold([*setup_events()[:7]])  # set up, sides, four shuffles, Event deck
    step = GAME.next_step(state)
    assert step == AwaitingChance(DrawCards("level_1", 2, "Mine cards"))
    events = GAME.resolve(state, CardsDrawn("level_1", ("I-01", "I-02")))
    assert events == [ev.MineCardsDrawn("ann", "level_1", ("I-01", "I-02"), False)]


def test_the_last_keep_starts_round_one_with_an_event() -> None:
    state = GAME.fold(setup_events()[:-1])
    state, out = play(state, "cid", act.KeepCards(state.hands["cid"][:4]))
    assert out[-1] == ev.RoundStarted(1)
    assert GAME.next_step(state) == AwaitingChance(DrawCards("events", 1, "Event card"))


def test_first_game_deals_two_of_each_level_and_keeps_all_six() -> None:
    events = setup_events(first_game=True)
    assert not any(isinstance(e, ev.CardsKept) for e in events)
    drawn = [len(e.cards) for e in events if isinstance(e, ev.MineCardsDrawn)]
    assert drawn == [2, 2, 2] * len(PLAYERS)
    state = GAME.fold(events)
    assert state.phase == Phase.KEEP and state.kept == frozenset(PLAYERS)
    assert all(len(state.hands[p]) == 6 for p in PLAYERS)


def test_a_served_first_game_skips_the_keep() -> None:
    state = GAME.fold(GAME.setup(PLAYERS, {"first_game": "true"}))
    chance = SeededChance("m", *seeds_for(1))
    while isinstance(step := GAME.next_step(state), AwaitingChance) and state.round == 0:
        state = GAME.fold(GAME.resolve(state, chance.resolve(step.request)), state)
    assert state.round == 1 and all(len(h) == 6 for h in state.hands.values())


def test_everyone_starts_with_no_coins_no_vp_below_the_boards() -> None:
    state = given()
    assert state.coins == state.vp == state.progress == dict.fromkeys(PLAYERS, 0)
